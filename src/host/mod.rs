//! The machine as the kernel shows it: every read and write of /proc and
//! /sys in fsbench goes through here, one small file per source.
//!
//! What belongs here: reading (and, for drop_caches and zram control,
//! writing) kernel files and the few syscalls that answer "what is this
//! machine" (uname, geteuid), parsed into plain data. No policy: deciding
//! whether a device may be written, whether a cache scenario took effect or
//! what goes into a result is for `environment`, `observe` and `runner`.
//!
//! `host` imports nothing from the crate, so every module may use it.

pub mod blockdev;
pub mod cpufreq;
pub mod cpuinfo;
pub mod filesystems;
pub mod kernel;
pub mod load;
pub mod locale;
pub mod meminfo;
pub mod mountinfo;
pub mod proc_io;
pub mod process;
pub mod semaphore;
pub mod swaps;
#[cfg(test)]
pub(crate) mod testutil;
pub mod users;
pub mod vm;
pub mod zram;

use std::path::Path;

/// Whether this process runs with effective uid 0.
pub fn is_root() -> bool {
    // SAFETY: geteuid takes no arguments, cannot fail and touches no memory of ours.
    unsafe { libc::geteuid() == 0 }
}

/// RLIMIT_NOFILE's soft limit (unlimited reads as u64::MAX).
pub fn open_files_limit() -> u64 {
    // SAFETY: getrlimit writes only into the live local struct.
    let mut r: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } != 0 {
        return 1024;
    }
    r.rlim_cur
}

/// Give the calling helper thread (signal watcher, progress drawer) a
/// descriptor table of its own, holding only stdin, stdout, stderr and
/// (with `keep_sockets`) the sockets open now. While the table is shared by
/// two threads the kernel takes and drops a reference on the file at every
/// read, write and lseek (`fdget` has a fast path only for an unshared
/// table): IOzone's single-process passes, which run on the main thread
/// alone, measured 10-15% slower at 4 kB records with one idle helper
/// thread beside them.
///
/// The copy is emptied at once: a copy that kept, say, the write end of a
/// pipe the main thread was reading from a child (`losetup`) would keep that
/// pipe open, and the main thread would wait for its end forever. Best
/// effort: if unshare fails the table stays shared, which is slower, not
/// wrong.
pub fn private_fd_table(keep_sockets: bool) {
    // SAFETY: unshare takes a flag and changes only this thread's table.
    if unsafe { libc::unshare(libc::CLONE_FILES) } != 0 {
        return;
    }
    // The table is this thread's alone now: no other thread can open or
    // close a descriptor in it while it is listed and emptied.
    let Ok(dir) = std::fs::read_dir("/proc/thread-self/fd") else { return };
    let fds: Vec<libc::c_int> = dir.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
    for fd in fds.into_iter().filter(|&fd| fd > 2) {
        // SAFETY: fstat writes into a stat of ours; fd is a number from this
        // thread's own table (the listing's own descriptor is closed by now,
        // and fstat then fails, which closes nothing that matters).
        let socket = unsafe {
            let mut st: libc::stat = std::mem::zeroed();
            libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFSOCK
        };
        if !(keep_sockets && socket) {
            // SAFETY: closes a descriptor of this thread's private copy only.
            unsafe {
                libc::close(fd);
            }
        }
    }
}

/// `/proc/self/exe`, when there is one: it still executes this very binary
/// when the file on disk was replaced (a rebuild during a long experiment).
pub fn self_exe() -> Option<&'static Path> {
    let p = Path::new("/proc/self/exe");
    p.exists().then_some(p)
}

/// A /proc or /sys file's text without surrounding white space; None when
/// it cannot be read.
pub(crate) fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The bracketed choice in a sysfs selector (`none [mq-deadline] kyber`),
/// or the whole text when there are no brackets.
pub fn bracketed(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    match (t.find('['), t.find(']')) {
        (Some(a), Some(b)) if a < b => Some(t[a + 1..b].to_string()),
        _ => Some(t.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors() {
        assert_eq!(bracketed("none [mq-deadline] kyber bfq \n").as_deref(), Some("mq-deadline"));
        assert_eq!(bracketed("always [madvise] never").as_deref(), Some("madvise"));
        assert_eq!(bracketed("none").as_deref(), Some("none"));
        assert_eq!(bracketed("  "), None);
    }
}
