//! User and group names as the system's databases resolve them (NSS, via
//! libc's reentrant lookups).

use std::ffi::CString;

/// A user's (uid, primary gid), or None when there is no such user.
pub fn user_ids(name: &str) -> Option<(u32, u32)> {
    let c = CString::new(name).ok()?;
    let mut buf = vec![0u8; 16384];
    // SAFETY: zeroed passwd is a valid out-parameter; all-zero pointers are overwritten on success.
    let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer refers to live memory of the stated size for the duration of the call.
    let r = unsafe { libc::getpwnam_r(c.as_ptr(), &mut pw, buf.as_mut_ptr() as *mut libc::c_char, buf.len(), &mut out) };
    (r == 0 && !out.is_null()).then_some((pw.pw_uid, pw.pw_gid))
}

/// A group's gid, or None when there is no such group.
pub fn group_id(name: &str) -> Option<u32> {
    let c = CString::new(name).ok()?;
    let mut buf = vec![0u8; 16384];
    // SAFETY: zeroed group is a valid out-parameter; all-zero pointers are overwritten on success.
    let mut gr: libc::group = unsafe { std::mem::zeroed() };
    let mut out: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer refers to live memory of the stated size for the duration of the call.
    let r = unsafe { libc::getgrnam_r(c.as_ptr(), &mut gr, buf.as_mut_ptr() as *mut libc::c_char, buf.len(), &mut out) };
    (r == 0 && !out.is_null()).then_some(gr.gr_gid)
}

#[cfg(test)]
mod tests {
    #[test]
    fn root_resolves_and_a_made_up_name_does_not() {
        assert_eq!(super::user_ids("root"), Some((0, 0)));
        assert_eq!(super::group_id("root"), Some(0));
        assert_eq!(super::user_ids("no-such-user-fsbench"), None);
        assert_eq!(super::group_id("no-such-group-fsbench"), None);
    }
}
