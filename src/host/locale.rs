//! Which C locales this machine has: tools such as blkparse ask for one by
//! name and format their numbers differently when it is missing.

use std::ffi::CString;

/// Whether glibc can load the locale `name` (exactly that name: `en_US`
/// is not found through `en_US.UTF-8`) for number formatting. `LOCPATH`
/// in the environment is honoured, as it is for the tools.
pub fn has_numeric_locale(name: &str) -> bool {
    let Ok(c) = CString::new(name) else {
        return false;
    };
    // SAFETY: newlocale reads the NUL-terminated name and returns either
    // null or a locale object that we release at once.
    unsafe {
        let loc = libc::newlocale(libc::LC_NUMERIC_MASK, c.as_ptr(), std::ptr::null_mut());
        if loc.is_null() {
            return false;
        }
        libc::freelocale(loc);
    }
    true
}

#[cfg(test)]
mod tests {
    #[test]
    fn c_exists_and_nonsense_does_not() {
        assert!(super::has_numeric_locale("C"));
        assert!(!super::has_numeric_locale("xx_NOWHERE"));
        assert!(!super::has_numeric_locale("a\0b"));
    }
}
