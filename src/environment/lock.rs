//! Locks on what one run owns or uses: a Filebench fileset tree (its
//! marker), an experiment's results directory (`.fsbench-lock` in it), a
//! Postmark location, a fio job's files, a device a managed target formats.
//! A second run that wants the
//! same thing is refused with who holds it, instead of adopting it and
//! mixing two runs' files and numbers.
//!
//! A lock is `flock(LOCK_EX | LOCK_NB)` held for as long as the [`Lock`]
//! lives (its descriptor stays open; close-on-exec, so child processes do
//! not inherit it). The kernel drops it when the process dies, however it
//! dies, so a lock file left by a killed run is simply taken over. A lock
//! file also names its holder (pid, start time) for the refusal message;
//! for a directory or device locked as itself, the holder comes from
//! /proc/locks.
//!
//! Inside a directory this process made for itself alone (a target's fresh
//! subdirectory or mount point, see [`private`]) nothing is locked: nobody
//! else can be there, and a lock's open descriptor would keep the
//! fresh-mount cache scenario from unmounting the target.

use crate::host::mountinfo::canonical_or_nearest;
use crate::host::process::{self, ProcessId};
use crate::units::local_time;
use std::fmt;
use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A held lock; dropping it releases it.
#[derive(Debug)]
pub struct Lock {
    /// None inside a private directory: nothing to hold there.
    _file: Option<File>,
    path: PathBuf,
}

static PRIVATE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A directory this process made for itself alone, while this lives.
#[derive(Debug)]
pub struct Private {
    root: PathBuf,
}

/// Mark `root` (a fresh directory or mount point of this process) as
/// private until the returned guard is dropped.
pub fn private(root: &Path) -> Private {
    let root = canonical_or_nearest(root);
    PRIVATE.lock().unwrap_or_else(|e| e.into_inner()).push(root.clone());
    Private { root }
}

impl Drop for Private {
    fn drop(&mut self) {
        let mut v = PRIVATE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = v.iter().position(|r| *r == self.root) {
            v.remove(i);
        }
    }
}

fn is_private(p: &Path) -> bool {
    let v = PRIVATE.lock().unwrap_or_else(|e| e.into_inner());
    !v.is_empty() && {
        let c = canonical_or_nearest(p);
        v.iter().any(|r| c.starts_with(r))
    }
}

impl Lock {
    /// The file (or directory) whose flock this is.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Who holds what another run wanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InUse {
    /// What was wanted, as the user knows it (a directory, a device).
    pub what: PathBuf,
    pub pid: Option<u32>,
    /// The holder's command name, when it is not fsbench (a data file may
    /// be locked by the program it belongs to).
    pub program: Option<String>,
    /// When the holder started, seconds since the Unix epoch.
    pub since_unix: Option<u64>,
}

impl fmt::Display for InUse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} is in use by ", self.what.display())?;
        let Some(pid) = self.pid else { return write!(f, "another fsbench run") };
        match &self.program {
            Some(p) => write!(f, "pid {pid} ({p})")?,
            None => write!(f, "fsbench pid {pid}")?,
        }
        match self.since_unix {
            Some(t) => write!(f, " since {}", local_time(t)),
            None => Ok(()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LockError {
    /// Another live process holds it.
    InUse(InUse),
    /// It could not be opened or locked.
    Other(String),
}

impl fmt::Display for LockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LockError::InUse(u) => u.fmt(f),
            LockError::Other(m) => f.write_str(m),
        }
    }
}

impl From<LockError> for String {
    fn from(e: LockError) -> String {
        e.to_string()
    }
}

/// Lock `file` (created if missing) on behalf of `what`, and write into it
/// `note` and who holds it (pid, start time), for the next run's refusal
/// and for people reading it.
pub fn lock_file(file: &Path, what: &Path, note: &str) -> Result<Lock, LockError> {
    let open = || OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o644).open(file);
    let private = is_private(file);
    let f = if private { open().map_err(|e| cannot_open(file, e))? } else { acquire(file, what, open)? };
    let me = ProcessId::this();
    let started = me.started_unix().map(|t| format!(" ({})", local_time(t))).unwrap_or_default();
    let text = format!("{note}\npid {}\nstart_ticks {}\nstarted{started}\n", me.pid, me.start_ticks);
    f.set_len(0)
        .and_then(|_| f.write_all_at(text.as_bytes(), 0))
        .map_err(|e| LockError::Other(format!("cannot write {}: {e}", file.display())))?;
    Ok(Lock { _file: (!private).then_some(f), path: file.to_path_buf() })
}

fn cannot_open(path: &Path, e: io::Error) -> LockError {
    LockError::Other(format!("cannot open {} to lock it: {e}", path.display()))
}

/// Lock a directory or device node itself; nothing is written into it.
pub fn lock_path(path: &Path) -> Result<Lock, LockError> {
    if is_private(path) {
        return Ok(Lock { _file: None, path: path.to_path_buf() });
    }
    let open = || {
        let dir = if std::fs::metadata(path)?.is_dir() { libc::O_DIRECTORY } else { 0 };
        OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | dir).open(path)
    };
    Ok(Lock { _file: Some(acquire(path, path, open)?), path: path.to_path_buf() })
}

/// Lock a file this process has open (a workload's data file) as itself;
/// the lock lasts as long as this descriptor (or a duplicate) is open.
pub fn lock_open(file: File, path: &Path) -> Result<Lock, LockError> {
    if is_private(path) {
        return Ok(Lock { _file: None, path: path.to_path_buf() });
    }
    try_flock(&file, path, path)?;
    Ok(Lock { _file: Some(file), path: path.to_path_buf() })
}

/// A lock this process has just dropped can stay held for a moment: a
/// child that another of its threads forked meanwhile shares the lock's
/// open file until it execs (close-on-exec is not close-on-fork). One run
/// after another in one process (`--repeat`, experiments, tests) met that
/// as "in use by another fsbench run"; a real holder keeps it far longer.
const GRACE_TRIES: u32 = 20;
const GRACE_STEP: std::time::Duration = std::time::Duration::from_millis(5);

/// `flock(LOCK_EX | LOCK_NB)`, with the holder when another process has it
/// after the grace above.
fn try_flock(f: &File, path: &Path, what: &Path) -> Result<(), LockError> {
    for attempt in 1..=GRACE_TRIES {
        // SAFETY: flock takes the descriptor of `f`, open for the whole call.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(LockError::Other(format!("cannot lock {}: {e}", path.display())));
        }
        if attempt < GRACE_TRIES {
            std::thread::sleep(GRACE_STEP);
        }
    }
    Err(LockError::InUse(holder(path, what)))
}

/// The pid holding a lock file directly inside `dir` (`.fsbench-*`, such as
/// a fileset's marker or an experiment's `.fsbench-lock`), if any.
pub fn held_inside(dir: &Path) -> Option<u32> {
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(".fsbench-"))
        .find_map(|e| process::flock_holder(&e.path()))
}

/// Open and flock `path`; refuse when another process holds it. A file
/// replaced between open and flock (its holder removed the tree) is
/// opened again, so the lock is always on what `path` names now.
fn acquire(path: &Path, what: &Path, open: impl Fn() -> io::Result<File>) -> Result<File, LockError> {
    for _ in 0..10 {
        let f = open().map_err(|e| cannot_open(path, e))?;
        try_flock(&f, path, what)?;
        let same = match (f.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        };
        if same {
            return Ok(f);
        }
    }
    Err(LockError::Other(format!("{} keeps being replaced while fsbench tries to lock it", path.display())))
}

/// The holder as its lock file names it, else as /proc/locks does.
fn holder(path: &Path, what: &Path) -> InUse {
    let from_file = std::fs::read_to_string(path).ok().and_then(|t| {
        let field = |k: &str| t.lines().find_map(|l| l.strip_prefix(k)?.split_whitespace().next()?.parse::<u64>().ok());
        Some(ProcessId { pid: u32::try_from(field("pid ")?).ok()?, start_ticks: field("start_ticks ")? })
    });
    let id = from_file
        .filter(ProcessId::alive)
        .or_else(|| process::flock_holder(path).map(|pid| ProcessId { pid, start_ticks: process::start_ticks(pid).unwrap_or(0) }));
    InUse {
        what: what.to_path_buf(),
        pid: id.map(|i| i.pid),
        program: id.and_then(|i| process::command_name(i.pid)).filter(|c| !c.starts_with("fsbench")),
        since_unix: id.filter(|i| i.start_ticks > 0).and_then(|i| i.started_unix()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_with_the_holder_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join(".fsbench-lock");
        let first = lock_file(&f, dir.path(), "results of x").unwrap();
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(text.starts_with("results of x\npid ") && text.contains("start_ticks "), "{text}");
        // flock is per open file: a second open in this process conflicts too.
        let e = lock_file(&f, dir.path(), "again").unwrap_err();
        let LockError::InUse(u) = &e else { panic!("{e:?}") };
        assert_eq!(u.pid, Some(std::process::id()));
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("{} is in use by fsbench pid {} since 20", dir.path().display(), std::process::id())), "{msg}");
        assert_eq!(std::fs::read_to_string(&f).unwrap(), text, "a refused lock leaves the holder's file alone");
        drop(first);
        let again = lock_file(&f, dir.path(), "taken over").unwrap();
        assert!(std::fs::read_to_string(&f).unwrap().starts_with("taken over\n"));
        assert_eq!(again.path(), f);
    }

    #[test]
    fn a_lock_held_on_for_a_moment_by_a_forked_childs_copy_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join(".fsbench-lock");
        let first = lock_file(&f, dir.path(), "one run").unwrap();
        // What a child forked before its exec holds: the same open file.
        // SAFETY: dup of an open descriptor of ours.
        let copy = unsafe { libc::dup(first._file.as_ref().unwrap().as_raw_fd()) };
        assert!(copy >= 0);
        drop(first);
        let child = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(30));
            // SAFETY: our own duplicate, closed once.
            unsafe { libc::close(copy) };
        });
        let t0 = std::time::Instant::now();
        let next = lock_file(&f, dir.path(), "the next run");
        child.join().unwrap();
        assert!(next.is_ok(), "{:?}", next.err());
        assert!(t0.elapsed() >= std::time::Duration::from_millis(25), "it was held until the copy closed");
    }

    #[test]
    fn directories_are_locked_as_themselves_and_holders_come_from_proc_locks() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock_path(dir.path()).unwrap();
        let e = lock_path(dir.path()).unwrap_err();
        assert!(matches!(&e, LockError::InUse(u) if u.pid == Some(std::process::id()) && u.since_unix.is_some()), "{e:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing written into the directory");
        drop(held);
        lock_path(dir.path()).unwrap();
        let e = lock_path(&dir.path().join("missing")).unwrap_err();
        assert!(matches!(&e, LockError::Other(m) if m.contains("missing")), "{e:?}");
    }

    #[test]
    fn nothing_inside_a_private_directory_is_held_open() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("set");
        std::fs::create_dir(&inner).unwrap();
        let guard = private(dir.path());
        let marker = inner.join(".fsbench-fileset");
        let a = lock_file(&marker, &inner, "fileset").unwrap();
        assert!(std::fs::read_to_string(&marker).unwrap().starts_with("fileset\npid "), "the marker is still written");
        let _b = lock_file(&marker, &inner, "fileset").unwrap();
        let _c = lock_path(&inner).unwrap();
        drop(guard);
        drop(a);
        let _held = lock_path(&inner).unwrap();
        assert!(matches!(lock_path(&inner), Err(LockError::InUse(_))), "outside a private directory, locks hold again");
    }
}
