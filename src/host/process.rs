//! Processes as /proc shows them: whether a pid still names the process
//! that once had it (its start time, /proc/PID/stat field 22), when the
//! machine booted, which boot this is, and who holds a flock
//! (/proc/locks).

use std::path::Path;

/// A process by pid and start time: a pid alone is reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProcessId {
    pub pid: u32,
    /// Clock ticks after boot (/proc/PID/stat field 22).
    pub start_ticks: u64,
}

impl ProcessId {
    /// This process.
    pub fn this() -> ProcessId {
        let pid = std::process::id();
        ProcessId { pid, start_ticks: start_ticks(pid).unwrap_or(0) }
    }

    /// The process still runs: its pid exists, started when it did, and
    /// is not a zombie (killed, waiting for its parent to reap it: it
    /// holds nothing any more, and its record is for `fsbench cleanup`).
    pub fn alive(&self) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) else { return false };
        parse_start_ticks(&stat) == Some(self.start_ticks) && !matches!(parse_state(&stat), Some('Z' | 'X' | 'x'))
    }

    /// When it started, in seconds since the Unix epoch.
    pub fn started_unix(&self) -> Option<u64> {
        started_unix(self.start_ticks)
    }
}

/// Field 22 of /proc/PID/stat; None when the process does not exist.
pub fn start_ticks(pid: u32) -> Option<u64> {
    parse_start_ticks(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Field 3 of /proc/PID/stat: R, S, D, Z (zombie), X (dead), ...
fn parse_state(stat: &str) -> Option<char> {
    stat[stat.rfind(')')? + 1..].split_whitespace().next()?.chars().next()
}

/// The command name (field 2) may hold blanks and parentheses: fields are
/// counted after its last ')'.
fn parse_start_ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    // Fields 3, 4, ... follow; 22 is the 20th of them.
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// The process's command name (/proc/PID/comm).
pub fn command_name(pid: u32) -> Option<String> {
    super::read_trim(format!("/proc/{pid}/comm"))
}

/// The thread group (process) a thread id belongs to.
pub fn tgid(pid: u32) -> Option<u32> {
    tgid_and_parent(pid).0
}

/// The thread group a thread id belongs to, and that process's parent.
pub fn tgid_and_parent(pid: u32) -> (Option<u32>, Option<u32>) {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return (None, None) };
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.trim().parse().ok());
    (field("Tgid:"), field("PPid:"))
}

/// Clock ticks after boot as seconds since the Unix epoch.
pub fn started_unix(start_ticks: u64) -> Option<u64> {
    // SAFETY: sysconf only reads the constant it is given.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = u64::try_from(hz).ok().filter(|h| *h > 0)?;
    Some(boot_time_unix()? + start_ticks / hz)
}

/// `btime` of /proc/stat: when the machine booted.
pub fn boot_time_unix() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines().find_map(|l| l.strip_prefix("btime ")).and_then(|v| v.trim().parse().ok())
}

/// The kernel's id of this boot: mounts and devices of another boot are gone.
pub fn boot_id() -> String {
    super::read_trim("/proc/sys/kernel/random/boot_id").unwrap_or_default()
}

/// The pid holding a flock on `path`, from /proc/locks (device numbers in
/// hex, inode in decimal); None when nobody does or it cannot be told.
pub fn flock_holder(path: &Path) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    let key = format!("{:02x}:{:02x}:{}", libc::major(m.dev()), libc::minor(m.dev()), m.ino());
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    parse_flock_holder(&locks, &key)
}

fn parse_flock_holder(locks: &str, key: &str) -> Option<u32> {
    locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; waiters carry "->".
        match f.as_slice() {
            [_, "FLOCK", _, _, pid, dev_ino, ..] if *dev_ino == key => pid.parse().ok(),
            _ => None,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_time_is_field_22_after_the_command_name() {
        let stat = "1234 (a (b) c) S 1 1234 1234 0 -1 4194560 100 0 0 0 5 6 0 0 20 0 1 0 987654 1000 200 18446744073709551615";
        assert_eq!(parse_start_ticks(stat), Some(987654));
        assert_eq!(parse_start_ticks("1234 (x) S 1"), None);
        assert_eq!((parse_state(stat), parse_state("9 (z) Z 1")), (Some('S'), Some('Z')));
        let me = ProcessId::this();
        assert!(me.start_ticks > 0 && me.alive());
        assert!(!ProcessId { start_ticks: me.start_ticks + 1, ..me }.alive(), "same pid, other start: another process");
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
        let started = me.started_unix().unwrap();
        assert!(started <= now + 1 && started + 3600 * 24 * 365 > now, "{started} vs {now}");
        assert!(!boot_id().is_empty());
        assert!(command_name(me.pid).is_some_and(|c| !c.is_empty()));
    }

    #[test]
    fn flock_holders_are_found_by_device_and_inode() {
        let locks = "1: FLOCK  ADVISORY  WRITE 4321 fd:01:77 0 EOF\n1: -> FLOCK  ADVISORY  WRITE 99 fd:01:77 0 EOF\n2: POSIX  ADVISORY  WRITE 5 fd:01:78 0 EOF\n";
        assert_eq!(parse_flock_holder(locks, "fd:01:77"), Some(4321));
        assert_eq!(parse_flock_holder(locks, "fd:01:78"), None, "POSIX locks are not flocks");
        assert_eq!(parse_flock_holder(locks, "fd:01:79"), None);
    }
}
