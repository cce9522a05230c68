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

use crate::environment::identity::{self, Identity, MountRef, Owned, Remount};
use crate::environment::state;
use crate::host::blockdev::{loop_attached, loop_backing_file};
use crate::host::zram;
use serde::{Deserialize, Serialize};
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard, Once};
use std::time::Duration;

/// One undo step. Files, directories and mounts carry what they were when
/// fsbench made them (`environment::identity`): undoing one first checks
/// that what is there now is still that, and refuses anything else.
///
/// On record (JSON, one object per action):
/// `{"remove_file": {"path": "/abs/f", "dev": 2049, "ino": 12, "born_ns": 1700000000000000000}}`
/// (no `dev`/`ino` yet: registered before it was created, never removed on
/// its name alone), `{"remove_dir": {...the same...}}`,
/// `{"unmount": {"point": "/tmp/fsbench-mnt-x", "source": "/dev/loop5", "fstype": "ext4"}}`,
/// `{"remount": {"source": "/dev/loop7", "point": "/mnt/x", "fstype": "ext4", "options": "rw,noatime"}}`,
/// `{"detach_loop": {"device": "/dev/loop5", "backing": "/abs/img"}}`,
/// `{"reset_zram": 3}`, `{"trace": ...}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Unmount this mount (retried on EBUSY, then detached lazily), if it
    /// is still the recorded source and type.
    Unmount(MountRef),
    /// Remove this directory and what is in it, without crossing into other
    /// file systems (a mount point that is still mounted is left alone).
    RemoveDir(Owned),
    /// `losetup -d` this loop device, if `backing` is still the file behind it.
    DetachLoop { device: PathBuf, backing: PathBuf },
    /// Reset zram device N and hot-remove it.
    ResetZram(u32),
    /// Remove this file.
    RemoveFile(Owned),
    /// Mount this again as it was (a mount taken down for a while: IOzone's `-U`).
    Remount(Remount),
    /// Put back what a block trace capture changed (tracer, instance, device trace).
    Trace(crate::observe::trace::capture::Undo),
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Unmount(m) => {
                write!(f, "unmount {}", m.point.display())?;
                match (&m.source, &m.fstype) {
                    (Some(s), Some(t)) => write!(f, " ({}, {t})", s.display()),
                    _ => Ok(()),
                }
            }
            Action::RemoveDir(o) => write!(f, "remove directory {}", o.path.display()),
            Action::DetachLoop { device, backing } => write!(f, "detach loop device {} (over {})", device.display(), backing.display()),
            Action::ResetZram(n) => write!(f, "reset and remove /dev/zram{n}"),
            Action::RemoveFile(o) => write!(f, "remove file {}", o.path.display()),
            Action::Remount(r) => write!(f, "mount {} ({}, -o {}) on {} again", r.source.display(), r.fstype, r.options, r.point.display()),
            Action::Trace(u) => write!(f, "{u}"),
        }
    }
}

impl Action {
    /// A file about to be created at `path`: removed only once its
    /// identity is recorded ([`Token::set_identity`], [`Token::created_fd`]).
    pub fn file_to_create(path: &Path) -> Action {
        Action::RemoveFile(Owned::to_create(path))
    }

    /// A file the caller has just created at `path` (identity taken now).
    pub fn made_file(path: &Path) -> Action {
        Action::RemoveFile(Owned::made(path))
    }

    /// A directory the caller has just created at `path` (identity taken now).
    pub fn made_dir(path: &Path) -> Action {
        Action::RemoveDir(Owned::made(path))
    }

    /// What the action is about, for telling two records of one thing apart
    /// from two things: its kind and its path (or device).
    pub fn same_subject(&self, other: &Action) -> bool {
        match (self, other) {
            (Action::Unmount(a), Action::Unmount(b)) => a.point == b.point,
            (Action::RemoveDir(a), Action::RemoveDir(b)) | (Action::RemoveFile(a), Action::RemoveFile(b)) => a.path == b.path,
            (Action::DetachLoop { device: a, .. }, Action::DetachLoop { device: b, .. }) => a == b,
            (Action::Remount(a), Action::Remount(b)) => a.point == b.point,
            (a, b) => a == b,
        }
    }

    /// Every path made absolute (a relative one would name something else
    /// when `fsbench cleanup` reads the record from another directory).
    fn absolute(mut self) -> Action {
        match &mut self {
            Action::RemoveDir(o) | Action::RemoveFile(o) if !o.path.is_absolute() => o.path = identity::absolute(&o.path),
            Action::Unmount(m) if !m.point.is_absolute() => m.point = identity::absolute(&m.point),
            _ => {}
        }
        self
    }
}

/// What undoing an action came to.
#[derive(Debug, PartialEq, Eq)]
pub enum Undone {
    /// Done, or there was nothing left to do.
    Done,
    /// What is there is not what fsbench made: left alone, and no longer
    /// fsbench's to undo.
    Refused(String),
    /// It is fsbench's, but undoing it failed: it stays on record.
    Failed(String),
}

/// A list of undo actions; the process-wide one is behind [`register`] and
/// [`run_all`]. Separate instances exist for tests.
#[derive(Debug, Default)]
pub struct Registry {
    entries: Mutex<Vec<(u64, Action)>>,
    /// Actions that ran and failed: never run again by this process, kept
    /// on record for `fsbench cleanup`.
    failed: Mutex<Vec<Action>>,
    /// Kept on disk as this process's state record.
    journaled: bool,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static GLOBAL: Registry = Registry { entries: Mutex::new(Vec::new()), failed: Mutex::new(Vec::new()), journaled: true };

impl Registry {
    pub const fn new() -> Registry {
        Registry { entries: Mutex::new(Vec::new()), failed: Mutex::new(Vec::new()), journaled: false }
    }

    /// Write the registered actions (and the failed ones) to this process's
    /// state record.
    fn journal(&self, v: &[(u64, Action)]) {
        if self.journaled {
            let mut all: Vec<Action> = self.failed.lock().unwrap_or_else(|e| e.into_inner()).clone();
            all.extend(v.iter().map(|(_, a)| a.clone()));
            state::save(&all);
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
        let id = self.push(action.absolute());
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

    /// Undo `a` (taken out of the list); a failure stays on record.
    fn run(&self, a: Action) -> Undone {
        let r = undo(&a);
        if matches!(r, Undone::Failed(_)) {
            self.failed.lock().unwrap_or_else(|e| e.into_inner()).push(a);
        }
        self.journal_now();
        r
    }

    /// Record the identity of what `id`'s action made, once it exists
    /// (rewriting the record only when it changed).
    fn set_identity(&self, id: u64, now: Identity) {
        let mut v = self.lock();
        let Some((_, a)) = v.iter_mut().find(|(x, _)| *x == id) else { return };
        match a {
            Action::RemoveFile(o) | Action::RemoveDir(o) if o.id != Some(now) => o.id = Some(now),
            _ => return,
        }
        self.journal(&v);
    }

    /// The actions still registered, oldest first.
    pub fn pending(&self) -> Vec<Action> {
        self.lock().iter().map(|(_, a)| a.clone()).collect()
    }

    /// Run every registered action, newest first; each is removed before it
    /// runs. Refusals and failures are printed to stderr. Returns how many
    /// actions ran.
    pub fn run_all(&self) -> usize {
        let mut n = 0;
        // One at a time, so the lock is never held while an action runs and
        // a concurrent `done()` or `run_all()` cannot run the same action.
        while let Some(a) = self.pop() {
            n += 1;
            let shown = a.to_string();
            match self.run(a) {
                Undone::Done => {}
                Undone::Refused(why) => eprintln!("fsbench cleanup: left alone: {shown} ({why})"),
                Undone::Failed(e) => eprintln!("fsbench cleanup: could not {shown}: {e} (kept on record for `fsbench cleanup`)"),
            }
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

    /// Record what the file or directory this token removes is, now that it
    /// exists (or exists anew: a file that is recreated gets a new inode).
    pub fn set_identity(&self, id: Identity) {
        self.registry.set_identity(self.id, id);
    }

    /// [`Token::set_identity`] from the descriptor the file was created
    /// with (one statx; the record is rewritten only when it changed). A
    /// file whose identity cannot be read stays unrecorded, and is then
    /// left alone by `fsbench cleanup`.
    pub fn created_fd(&self, fd: RawFd) {
        if let Ok(id) = Identity::of_fd(fd) {
            self.set_identity(id);
        }
    }

    /// Run the action now and unregister it. Ok when it already ran (for
    /// instance through `run_all`).
    pub fn done(self) -> Result<(), String> {
        match self.registry.take(self.id) {
            Some(a) => {
                let shown = a.to_string();
                match self.registry.run(a) {
                    Undone::Done => Ok(()),
                    Undone::Refused(why) => Err(format!("left alone: {shown} ({why})")),
                    Undone::Failed(e) => Err(format!("could not {shown}: {e}")),
                }
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

/// Register the removal of a file about to be created at `path`; give the
/// token its identity once it exists ([`Token::created_fd`]). Until then
/// nothing at `path` is removed, by the run or by `fsbench cleanup`.
pub fn file_to_create(path: &Path) -> Token {
    register(Action::file_to_create(path))
}

/// Register the removal of a file the caller has just created.
pub fn made_file(path: &Path) -> Token {
    register(Action::made_file(path))
}

/// Register the removal of a directory (and what will be in it) the caller
/// has just created.
pub fn made_dir(path: &Path) -> Token {
    register(Action::made_dir(path))
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

/// Whether what `a` undoes is still what fsbench made. Ok(false): there is
/// nothing left to undo; Err: something else is there now (the reason).
/// The one set of identity checks for a live run's own undo and for
/// `fsbench cleanup` (`state::verdict` adds what only matters for a record
/// of a dead process).
pub fn still_ours(a: &Action) -> Result<bool, String> {
    match a {
        Action::Unmount(m) => identity::check_mounted(m),
        Action::RemoveDir(o) => identity::check_dir(o),
        Action::RemoveFile(o) => identity::check_file(o),
        Action::Remount(r) => identity::check_remount(r),
        Action::DetachLoop { device, backing } => {
            let name = device.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            if !name.starts_with("loop") || device.parent() != Some(Path::new("/dev")) {
                return Err("not a loop device".into());
            }
            if !loop_attached(&name) {
                return Ok(false);
            }
            // The kernel shows a removed backing file as "PATH (deleted)".
            let now = loop_backing_file(&name).unwrap_or_default();
            if Path::new(now.strip_suffix(" (deleted)").unwrap_or(&now)) != backing {
                return Err(format!("it is backed by '{now}' now, not by {}", backing.display()));
            }
            Ok(true)
        }
        Action::ResetZram(0) => Err("zram0 is the system's; fsbench never makes it".into()),
        Action::ResetZram(n) => Ok(zram::exists(*n)),
        Action::Trace(_) => Ok(true),
    }
}

/// Undo one action, after [`still_ours`].
pub fn undo(a: &Action) -> Undone {
    match still_ours(a) {
        Err(why) => Undone::Refused(why),
        Ok(false) => Undone::Done,
        Ok(true) => match act(a) {
            Ok(()) => Undone::Done,
            Err(e) => Undone::Failed(e),
        },
    }
}

/// Run one action (its identity checked first); Err says why it was
/// refused or failed.
pub fn perform(a: &Action) -> Result<(), String> {
    match undo(a) {
        Undone::Done => Ok(()),
        Undone::Refused(why) => Err(format!("left alone: {why}")),
        Undone::Failed(e) => Err(e),
    }
}

fn act(a: &Action) -> Result<(), String> {
    match a {
        Action::Unmount(m) => unmount(&m.point, true),
        Action::RemoveDir(o) => remove_tree(&o.path),
        Action::DetachLoop { device, backing } => detach_loop(device, backing),
        Action::ResetZram(n) => reset_zram(*n),
        Action::RemoveFile(o) => match std::fs::remove_file(&o.path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(e.to_string()),
        },
        Action::Remount(r) => crate::environment::mkfs::mount(&r.source, &r.point, &r.fstype, &r.options),
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

/// `losetup -d`, once [`still_ours`] has checked the backing file.
fn detach_loop(dev: &Path, _backing: &Path) -> Result<(), String> {
    let name = dev.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
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
        let _t1 = R.register(Action::made_file(&f1));
        let _t2 = R.register(Action::made_dir(&sub));
        let t3 = R.register(Action::made_file(&f2));
        assert_eq!(R.pending().len(), 3);
        assert_eq!(t3.action(), Some(Action::made_file(&f2)));
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
        let td = R.register(Action::made_dir(&d));
        let tf = R.register(Action::made_file(&f));
        assert_eq!(R.pending(), vec![Action::made_dir(&d), Action::made_file(&f)]);
        assert_eq!(tf.done(), Ok(()));
        assert!(!f.exists() && d.exists());
        assert_eq!(R.pending(), vec![Action::made_dir(&d)]);
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
        let t = made_file(&f);
        assert!(pending().contains(&Action::made_file(&f)));
        assert!(format!("{t:?}").contains("remove file"));
        t.done().unwrap();
        assert!(!f.exists());
        assert!(!pending().iter().any(|a| a.same_subject(&Action::made_file(&f))));
    }

    #[test]
    fn undo_of_missing_things_is_ok() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(perform(&Action::made_file(&dir.path().join("nope"))), Ok(()));
        assert_eq!(perform(&Action::made_dir(&dir.path().join("nope"))), Ok(()));
        // A plain directory is not a mount point: unmount is a no-op.
        assert_eq!(perform(&Action::Unmount(MountRef::new(dir.path(), Path::new("/dev/loop9"), "ext4"))), Ok(()));
        let not_loop = Action::DetachLoop { device: PathBuf::from("/dev/vda"), backing: dir.path().join("img") };
        assert!(perform(&not_loop).is_err());
        assert!(perform(&Action::ResetZram(0)).is_err(), "zram0 is never touched");
    }

    #[test]
    fn a_file_made_later_is_removed_only_once_its_identity_is_known() {
        static R: Registry = Registry::new();
        let dir = tempfile::tempdir().unwrap();
        // Relative paths are recorded absolute, against the directory now.
        let rel = PathBuf::from(format!("fsbench-unit-{}.tmp", std::process::id()));
        let t = R.register(Action::file_to_create(&rel));
        match t.action() {
            Some(Action::RemoveFile(o)) => assert!(o.path.is_absolute() && o.id.is_none(), "{o:?}"),
            other => panic!("{other:?}"),
        }
        t.forget();
        let f = dir.path().join("later");
        let t = R.register(Action::file_to_create(&f));
        // Someone else's file at the name before ours: never removed.
        std::fs::write(&f, b"theirs").unwrap();
        let e = R.register(Action::file_to_create(&f)).done().unwrap_err();
        assert!(e.contains("never recorded") && f.exists(), "{e}");
        std::fs::remove_file(&f).unwrap();
        // Ours, created and then recorded: removed.
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(&f).unwrap();
        t.created_fd(std::os::fd::AsRawFd::as_raw_fd(&file));
        assert!(matches!(t.action(), Some(Action::RemoveFile(Owned { id: Some(_), .. }))));
        assert_eq!(t.done(), Ok(()));
        assert!(!f.exists());
    }

    #[test]
    fn a_failed_step_stays_on_record_and_a_refused_one_does_not() {
        static R: Registry = Registry::new();
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let mine = Action::made_file(&f);
        std::fs::remove_file(&f).unwrap();
        std::fs::write(dir.path().join("spacer"), b"").unwrap();
        std::fs::write(&f, b"theirs").unwrap();
        assert!(R.register(mine).done().unwrap_err().contains("someone else's file"));
        assert!(f.exists());
        assert!(R.failed.lock().unwrap().is_empty(), "a refusal is not kept");
        // A directory that cannot be removed (a read-only parent is not
        // enough for root, so: a directory that is a file now is refused;
        // a remount of a missing device fails at its check, refused too).
        let r =
            Remount { source: "/dev/nonexistent-fsbench".into(), point: dir.path().into(), fstype: "ext4".into(), options: String::new() };
        assert!(matches!(undo(&Action::Remount(r)), Undone::Refused(_)));
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
