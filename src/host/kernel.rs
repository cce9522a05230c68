//! The running kernel: uname(2) (hostname, release, version), the
//! clock source in use, and whether it lets this process use io_uring.

use super::read_trim;

fn cstr_field(f: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = f.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// (hostname, "release version") from uname(2); the hostname from
/// /proc/sys/kernel/hostname when uname fails.
pub fn uname() -> (String, String) {
    // SAFETY: utsname is a struct of C char arrays, for which all zero bytes is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a live, writable utsname that uname fills; it keeps no pointer to it.
    if unsafe { libc::uname(&mut u) } != 0 {
        return (read_trim("/proc/sys/kernel/hostname").unwrap_or_default(), String::new());
    }
    (cstr_field(&u.nodename), format!("{} {}", cstr_field(&u.release), cstr_field(&u.version)))
}

/// The clock source the kernel's timekeeping uses (`tsc`, `kvm-clock`, ...);
/// empty when it cannot be read.
pub fn clocksource() -> String {
    read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource").unwrap_or_default()
}

/// Whether this process may set up an io_uring: the kernel may lack it,
/// disable it (`kernel.io_uring_disabled`) or a seccomp filter refuse it,
/// so it is tried rather than read from a setting.
pub fn io_uring_allowed() -> bool {
    io_uring::IoUring::new(2).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uname_names_the_kernel() {
        let (host, kernel) = uname();
        assert!(!host.is_empty());
        assert!(!kernel.is_empty());
    }
}
