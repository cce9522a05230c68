//! Undo actions (unmount, detach loop, reset zram, remove files) registered
//! while a target is built, run on success, error, panic and Ctrl-C.
//!
//! Every step that creates something registers the action that undoes it
//! and keeps the [`Token`]. The owner runs its actions with
//! [`Token::done`] when it tears down normally; whatever is still
//! registered when the process is about to die (panic hook, signal
//! handler, early exit) is run by [`run_all`], newest first. An action is
//! taken out of the registry before it runs, so it runs at most once no
//! matter who gets to it first or from which thread.
//!
//! Undo steps never panic: failures are returned by `done()` and printed to
//! stderr by `run_all()`. Something that is already gone (a file removed,
//! a directory that is no longer a mount point) counts as undone.
//!
//! The process-wide registry is also kept on disk (`environment::state`):
//! each change rewrites this process's record, and an action leaves the
//! record only once it has run, so a process killed with SIGKILL leaves a
//! list of what it created for `fsbench cleanup`.

use crate::environment::state;
use crate::host::blockdev::{loop_attached, loop_backing_file};
use crate::host::zram;
use serde::{Deserialize, Serialize};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::Duration;

/// One undo step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Unmount this mount point (retried on EBUSY, then detached lazily).
    Unmount(PathBuf),
    /// Remove this directory and what is in it, without crossing into other
    /// file systems (a mount point that is still mounted is left alone).
    RemoveDir(PathBuf),
    /// `losetup -d` this loop device, if `backing` is still the file behind it.
    DetachLoop { device: PathBuf, backing: PathBuf },
    /// Reset zram device N and hot-remove it.
    ResetZram(u32),
    /// Remove this file.
    RemoveFile(PathBuf),
    /// Put back what a block trace capture changed (tracer, instance, device trace).
    Trace(crate::observe::trace::capture::Undo),
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Unmount(p) => write!(f, "unmount {}", p.display()),
            Action::RemoveDir(p) => write!(f, "remove directory {}", p.display()),
            Action::DetachLoop { device, backing } => write!(f, "detach loop device {} (over {})", device.display(), backing.display()),
            Action::ResetZram(n) => write!(f, "reset and remove /dev/zram{n}"),
            Action::RemoveFile(p) => write!(f, "remove file {}", p.display()),
            Action::Trace(u) => write!(f, "{u}"),
        }
    }
}

/// A list of undo actions; the process-wide one is behind [`register`] and
/// [`run_all`]. Separate instances exist for tests.
#[derive(Debug, Default)]
pub struct Registry {
    entries: Mutex<Vec<(u64, Action)>>,
    /// Kept on disk as this process's state record.
    journaled: bool,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static GLOBAL: Registry = Registry { entries: Mutex::new(Vec::new()), journaled: true };

impl Registry {
    pub const fn new() -> Registry {
        Registry { entries: Mutex::new(Vec::new()), journaled: false }
    }

    /// Write the registered actions to this process's state record.
    fn journal(&self, v: &[(u64, Action)]) {
        if self.journaled {
            state::save(&v.iter().map(|(_, a)| a.clone()).collect::<Vec<_>>());
        }
    }

    /// Journal what is registered now (after an action ran: until then it
    /// stays on record, in case the process dies while undoing it).
    fn journal_now(&self) {
        if self.journaled {
            let v = self.lock();
            self.journal(&v);
        }
    }

    /// The list, even if a thread panicked while holding the lock (nothing
    /// panics while holding it, but undo must work regardless).
    fn lock(&self) -> MutexGuard<'_, Vec<(u64, Action)>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Register an undo action; the token runs or forgets it.
    pub fn register(&'static self, action: Action) -> Token {
        let id = self.push(action);
        Token { id, registry: self }
    }

    fn push(&self, action: Action) -> u64 {
        let mut v = self.lock();
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        v.push((id, action));
        self.journal(&v);
        id
    }

    fn take(&self, id: u64) -> Option<Action> {
        let mut v = self.lock();
        let i = v.iter().position(|(x, _)| *x == id)?;
        Some(v.remove(i).1)
    }

    fn pop(&self) -> Option<Action> {
        self.lock().pop().map(|(_, a)| a)
    }

    /// The actions still registered, oldest first.
    pub fn pending(&self) -> Vec<Action> {
        self.lock().iter().map(|(_, a)| a.clone()).collect()
    }

    /// Run every registered action, newest first; each is removed before it
    /// runs. Failures are printed to stderr. Returns how many actions ran.
    pub fn run_all(&self) -> usize {
        let mut n = 0;
        // One at a time, so the lock is never held while an action runs and
        // a concurrent `done()` or `run_all()` cannot run the same action.
        while let Some(a) = self.pop() {
            n += 1;
            if let Err(e) = perform(&a) {
                eprintln!("fsbench cleanup: could not {a}: {e}");
            }
            self.journal_now();
        }
        n
    }
}

/// Proof that an action is registered; run it with [`Token::done`].
/// Dropping a token leaves the action registered for [`run_all`].
#[must_use = "keep the token to undo the action, or the action only runs at exit"]
pub struct Token {
    id: u64,
    registry: &'static Registry,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let action = self.registry.lock().iter().find(|(x, _)| *x == self.id).map(|(_, a)| a.to_string());
        f.debug_struct("Token").field("id", &self.id).field("action", &action).finish()
    }
}

impl Token {
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The action, if it has not run yet.
    pub fn action(&self) -> Option<Action> {
        self.registry.lock().iter().find(|(x, _)| *x == self.id).map(|(_, a)| a.clone())
    }

    /// Run the action now and unregister it. Ok when it already ran (for
    /// instance through `run_all`).
    pub fn done(self) -> Result<(), String> {
        match self.registry.take(self.id) {
            Some(a) => {
                let r = perform(&a).map_err(|e| format!("could not {a}: {e}"));
                self.registry.journal_now();
                r
            }
            None => Ok(()),
        }
    }

    /// Unregister the action without running it (what it undoes is gone or
    /// was handed over to someone else).
    pub fn forget(self) {
        if self.registry.take(self.id).is_some() {
            self.registry.journal_now();
        }
    }
}

/// Register an undo action in the process-wide registry.
pub fn register(action: Action) -> Token {
    GLOBAL.register(action)
}

/// The actions still registered process-wide, oldest first.
pub fn pending() -> Vec<Action> {
    GLOBAL.pending()
}

/// Run every registered undo action, newest first. Safe to call twice and
/// from any thread (not from a signal handler: set a flag there and call
/// this from a normal thread).
pub fn run_all() {
    GLOBAL.run_all();
}

/// Rewrite this process's state record (after what it belongs to changed).
pub(crate) fn journal_again() {
    GLOBAL.journal_now();
}

/// After the default panic message, run every registered undo action so a
/// panic does not leave mounts, loop and zram devices behind. Installing
/// twice is harmless.
pub fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            run_all();
        }));
    });
}

/// Run one action.
pub fn perform(a: &Action) -> Result<(), String> {
    match a {
        Action::Unmount(p) => unmount(p, true),
        Action::RemoveDir(p) => remove_tree(p),
        Action::DetachLoop { device, backing } => detach_loop(device, backing),
        Action::ResetZram(n) => reset_zram(*n),
        Action::RemoveFile(p) => match std::fs::remove_file(p) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.to_string()),
        },
        Action::Trace(u) => crate::environment::trace::undo(u),
    }
}

fn sync_all() {
    // SAFETY: sync has no preconditions.
    unsafe { libc::sync() };
}

fn umount2(p: &Path, flags: libc::c_int) -> io::Result<()> {
    let c = std::ffi::CString::new(p.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    // SAFETY: c is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::umount2(c.as_ptr(), flags) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Unmount `p`. EBUSY is retried a few times (after a sync, with growing
/// pauses); then, when `lazy_fallback`, the mount is detached lazily
/// (MNT_DETACH) with a warning, else EBUSY is returned. A path that is not
/// (or no longer) a mount point counts as unmounted.
pub fn unmount(p: &Path, lazy_fallback: bool) -> Result<(), String> {
    const TRIES: u32 = 5;
    for attempt in 0..TRIES {
        if attempt == 0 {
            sync_all();
        }
        match umount2(p, 0) {
            Ok(()) => return Ok(()),
            // EINVAL: not a mount point; ENOENT: gone.
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOENT)) => return Ok(()),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                sync_all();
                std::thread::sleep(Duration::from_millis(100 * (attempt as u64 + 1)));
            }
            Err(e) => return Err(format!("umount: {e}")),
        }
    }
    if !lazy_fallback {
        return Err(format!("umount {}: still busy after {TRIES} attempts (a process has files open there)", p.display()));
    }
    match umount2(p, libc::MNT_DETACH) {
        Ok(()) => {
            eprintln!("fsbench cleanup: WARNING: {} was busy; detached it lazily (it goes away when the last user closes it)", p.display());
            Ok(())
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOENT)) => Ok(()),
        Err(e) => Err(format!("umount (lazy): {e}")),
    }
}

/// Remove a directory tree fsbench created. Never follows symbolic links and
/// never crosses into another file system: a directory that is still a
/// mount point (or has one below it) is left and reported.
pub fn remove_tree(p: &Path) -> Result<(), String> {
    let meta = match std::fs::symlink_metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    if !meta.is_dir() {
        return Err("not a directory".into());
    }
    if let Some(parent) = p.parent() {
        if let Ok(pm) = std::fs::metadata(parent) {
            if pm.dev() != meta.dev() {
                return Err("it is still a mount point; left in place".into());
            }
        }
    }
    remove_within(p, meta.dev())
}

/// Empty a directory tree fsbench created, keeping `keep` (a lock file
/// held in it) and the directory itself; the rules of [`remove_tree`].
pub fn empty_tree(p: &Path, keep: &str) -> Result<(), String> {
    let meta = std::fs::symlink_metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
    if !meta.is_dir() {
        return Err("not a directory".into());
    }
    remove_children(p, meta.dev(), Some(keep))
}

fn remove_within(dir: &Path, dev: u64) -> Result<(), String> {
    remove_children(dir, dev, None)?;
    std::fs::remove_dir(dir).or_else(not_found_ok).map_err(|e| format!("{}: {e}", dir.display()))
}

fn remove_children(dir: &Path, dev: u64, keep: Option<&str>) -> Result<(), String> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("{}: {e}", dir.display())),
    };
    let mut first_err: Option<String> = None;
    for e in rd {
        let e = match e {
            Ok(e) => e,
            Err(err) => {
                first_err.get_or_insert(format!("{}: {err}", dir.display()));
                continue;
            }
        };
        if keep.is_some_and(|k| e.file_name() == k) {
            continue;
        }
        let path = e.path();
        let r = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() && m.dev() != dev => Err(format!("{} is a mount point; left in place", path.display())),
            Ok(m) if m.is_dir() => remove_within(&path, dev),
            Ok(_) => std::fs::remove_file(&path).or_else(not_found_ok).map_err(|err| format!("{}: {err}", path.display())),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(err) => Err(format!("{}: {err}", path.display())),
        };
        if let Err(err) = r {
            first_err.get_or_insert(err);
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn not_found_ok(e: io::Error) -> io::Result<()> {
    if e.kind() == io::ErrorKind::NotFound {
        Ok(())
    } else {
        Err(e)
    }
}

fn detach_loop(dev: &Path, backing: &Path) -> Result<(), String> {
    let name = dev.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if !name.starts_with("loop") {
        return Err("not a loop device; refusing".into());
    }
    // Already detached: nothing backs it any more.
    if !loop_attached(&name) {
        return Ok(());
    }
    // The kernel shows a removed backing file as "PATH (deleted)".
    let now = loop_backing_file(&name).unwrap_or_default();
    if Path::new(now.strip_suffix(" (deleted)").unwrap_or(&now)) != backing {
        return Err(format!("it is backed by '{now}' now, not by {}; left alone", backing.display()));
    }
    let out = Command::new("losetup").arg("-d").arg(dev).output().map_err(|e| format!("cannot run losetup: {e}"))?;
    if !out.status.success() && loop_attached(&name) {
        return Err(format!("losetup -d: {}", String::from_utf8_lossy(&out.stderr).trim()));
    }
    // While something (udev's probe after the unmount) still holds the
    // device, the kernel only marks it for auto-clear; wait until it is free
    // so "torn down" means gone.
    for _ in 0..50 {
        if !loop_attached(&name) {
            return Ok(());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    Err(format!("{} is still attached 5 s after losetup -d (something holds it open)", dev.display()))
}

fn reset_zram(n: u32) -> Result<(), String> {
    if n == 0 {
        // zram0 is the system's (often swap); fsbench never hot-adds it.
        return Err("refusing to reset zram0".into());
    }
    if !zram::exists(n) {
        return Ok(());
    }
    let mut last = String::new();
    // The reset fails with EBUSY while something still has the device open
    // (for example a lazily detached mount that is going away).
    for attempt in 0..5u64 {
        match zram::reset(n) {
            Ok(()) => {
                last.clear();
                break;
            }
            Err(e) => {
                last = format!("reset: {e}");
                std::thread::sleep(Duration::from_millis(100 * (attempt + 1)));
            }
        }
    }
    if !last.is_empty() {
        return Err(last);
    }
    match zram::hot_remove(n) {
        Ok(()) => Ok(()),
        Err(_) if !zram::exists(n) => Ok(()),
        Err(e) => Err(format!("hot_remove: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_all_twice_runs_each_action_once() {
        static R: Registry = Registry::new();
        let dir = tempfile::tempdir().unwrap();
        let f1 = dir.path().join("a");
        let f2 = dir.path().join("b");
        let sub = dir.path().join("sub");
        std::fs::write(&f1, b"x").unwrap();
        std::fs::write(&f2, b"y").unwrap();
        std::fs::create_dir_all(sub.join("deeper")).unwrap();
        std::fs::write(sub.join("deeper/file"), b"z").unwrap();
        let _t1 = R.register(Action::RemoveFile(f1.clone()));
        let _t2 = R.register(Action::RemoveDir(sub.clone()));
        let t3 = R.register(Action::RemoveFile(f2.clone()));
        assert_eq!(R.pending().len(), 3);
        assert_eq!(t3.action(), Some(Action::RemoveFile(f2.clone())));
        assert_eq!(R.run_all(), 3);
        assert!(!f1.exists() && !f2.exists() && !sub.exists());
        assert!(R.pending().is_empty());
        assert_eq!(R.run_all(), 0, "second run_all runs nothing");
        // A token whose action already ran is fine.
        assert_eq!(t3.done(), Ok(()));
    }

    #[test]
    fn newest_first_and_done_removes() {
        static R: Registry = Registry::new();
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("d");
        std::fs::create_dir(&d).unwrap();
        let f = d.join("f");
        std::fs::write(&f, b"x").unwrap();
        // Registered in creation order: the directory, then the file in it.
        // Oldest-first would fail to remove a non-empty directory with
        // remove_dir; RemoveDir is recursive, so check order via pending.
        let td = R.register(Action::RemoveDir(d.clone()));
        let tf = R.register(Action::RemoveFile(f.clone()));
        assert_eq!(R.pending(), vec![Action::RemoveDir(d.clone()), Action::RemoveFile(f.clone())]);
        assert_eq!(tf.done(), Ok(()));
        assert!(!f.exists() && d.exists());
        assert_eq!(R.pending(), vec![Action::RemoveDir(d.clone())]);
        let id = td.id();
        td.forget();
        assert!(R.pending().is_empty(), "forgotten {id}");
        assert!(d.exists());
        assert_eq!(R.run_all(), 0);
    }

    #[test]
    fn global_registry_token() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("g");
        std::fs::write(&f, b"x").unwrap();
        let t = register(Action::RemoveFile(f.clone()));
        assert!(pending().contains(&Action::RemoveFile(f.clone())));
        assert!(format!("{t:?}").contains("remove file"));
        t.done().unwrap();
        assert!(!f.exists());
        assert!(!pending().contains(&Action::RemoveFile(f)));
    }

    #[test]
    fn undo_of_missing_things_is_ok() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(perform(&Action::RemoveFile(dir.path().join("nope"))), Ok(()));
        assert_eq!(perform(&Action::RemoveDir(dir.path().join("nope"))), Ok(()));
        // A plain directory is not a mount point: unmount is a no-op.
        assert_eq!(perform(&Action::Unmount(dir.path().to_path_buf())), Ok(()));
        let not_loop = Action::DetachLoop { device: PathBuf::from("/dev/vda"), backing: dir.path().join("img") };
        assert!(perform(&not_loop).is_err());
        assert!(perform(&Action::ResetZram(0)).is_err(), "zram0 is never touched");
    }

    #[test]
    fn remove_tree_does_not_follow_symlinks() {
        let outside = tempfile::tempdir().unwrap();
        let keep = outside.path().join("keep");
        std::fs::write(&keep, b"k").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("t");
        std::fs::create_dir(&t).unwrap();
        std::os::unix::fs::symlink(outside.path(), t.join("link")).unwrap();
        remove_tree(&t).unwrap();
        assert!(!t.exists());
        assert!(keep.exists());
    }
}
