//! What each fsbench process has created and not yet undone, kept on disk,
//! so a run that dies without its cleanup (SIGKILL, a crash, power loss)
//! leaves a list `fsbench cleanup` can act on, and the next run can say so.
//!
//! One record per process, `PID-STARTTICKS.json` in the state directory,
//! rewritten (atomically) whenever the process-wide undo registry changes
//! (`environment::cleanup`) and removed when nothing is left to undo. A
//! record's owner is dead when its pid is gone, started at another time
//! (the pid was reused) or belongs to another boot.
//!
//! The state directory is `$FSBENCH_STATE_DIR` when set, else
//! `/var/lib/fsbench` for root, else `$XDG_STATE_HOME/fsbench` or
//! `~/.local/state/fsbench`. It is kept across reboots on purpose: mounts
//! and devices go away with a reboot, image files and directories do not.
//!
//! Undoing a dead record touches only what it lists, and only while that
//! is still what fsbench made (`cleanup::still_ours`: a file or directory
//! with the recorded device, inode and birth time, a mount of the recorded
//! source and type, a loop device over the recorded image), kernel objects
//! (mounts, loop and zram devices) only in the boot that made them, a zram
//! device only when nothing uses it, nothing a live fsbench now holds (its
//! own record lists the same thing, or a `.fsbench-*` lock file inside the
//! directory is locked).

use crate::environment::cleanup::{self, Action, Undone};
use crate::environment::lock::{self, LockError};
use crate::environment::safety::check_device_usable;
use crate::host::is_root;
use crate::host::process::{self, ProcessId};
use crate::units::local_time;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

/// Overrides where records are kept (tests use one per test).
pub const ENV: &str = "FSBENCH_STATE_DIR";
/// 2: paths are absolute and files, directories and mounts carry their
/// identity (`cleanup::Action`); records of 1 are still read, and what
/// they name without identity is left alone.
pub const SCHEMA: &str = "fsbench-state/2";

/// One process's record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    pub schema: String,
    pub pid: u32,
    pub start_ticks: u64,
    pub boot_id: String,
    /// Seconds since the Unix epoch.
    pub started_unix: u64,
    pub command: Vec<String>,
    /// What the process works for: an experiment's results directory.
    #[serde(default)]
    pub owner: Option<PathBuf>,
    /// Oldest first; undone newest first.
    pub actions: Vec<Action>,
}

impl Record {
    fn id(&self) -> ProcessId {
        ProcessId { pid: self.pid, start_ticks: self.start_ticks }
    }

    fn alive(&self, boot: &str) -> bool {
        self.boot_id == boot && self.id().alive()
    }

    fn describe(&self) -> String {
        let owner = self.owner.as_ref().map(|o| format!(", for {}", o.display())).unwrap_or_default();
        format!("fsbench pid {} (`{}`, started {}{owner})", self.pid, self.command.join(" "), local_time(self.started_unix))
    }
}

/// The state directory (see the module's documentation).
pub fn dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os(ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d));
    }
    if is_root() {
        return Some(PathBuf::from("/var/lib/fsbench"));
    }
    if let Some(d) = std::env::var_os("XDG_STATE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("fsbench"));
    }
    std::env::var_os("HOME").filter(|d| !d.is_empty()).map(|h| PathBuf::from(h).join(".local/state/fsbench"))
}

/// This process's record file and what stays the same in it.
struct Journal {
    file: PathBuf,
    record: Record,
}

static OWNER: Mutex<Option<PathBuf>> = Mutex::new(None);

fn journal() -> Option<&'static Journal> {
    static J: OnceLock<Option<Journal>> = OnceLock::new();
    J.get_or_init(|| {
        // Unit tests register actions of their own in the process-wide
        // registry; they leave no records on the machine.
        if cfg!(test) {
            return None;
        }
        let me = ProcessId::this();
        let record = Record {
            schema: SCHEMA.into(),
            pid: me.pid,
            start_ticks: me.start_ticks,
            boot_id: process::boot_id(),
            started_unix: me.started_unix().unwrap_or(0),
            command: std::env::args().collect(),
            owner: None,
            actions: Vec::new(),
        };
        Some(Journal { file: dir()?.join(format!("{}-{}.json", me.pid, me.start_ticks)), record })
    })
    .as_ref()
}

/// Say what this process works for (an experiment's results directory), so
/// `--resume` of it can undo what a killed run of it left.
pub fn set_owner(owner: &Path) {
    *OWNER.lock().unwrap_or_else(|e| e.into_inner()) = Some(owner.to_path_buf());
    cleanup::journal_again();
}

/// Rewrite this process's record with `actions` (or remove it when there
/// are none). Failures are reported once, and the run goes on: its own
/// cleanup does not need the record.
pub(crate) fn save(actions: &[Action]) {
    let Some(j) = journal() else { return };
    // Removing the record needs the process's ids as much as writing it.
    let _ids = OwnIds::take();
    let r = if actions.is_empty() {
        match std::fs::remove_file(&j.file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.to_string()),
            _ => Ok(()),
        }
    } else {
        let owner = OWNER.lock().unwrap_or_else(|e| e.into_inner()).clone();
        write(&j.file, &Record { owner, actions: actions.to_vec(), ..j.record.clone() })
    };
    if let Err(e) = r {
        static WARNED: AtomicBool = AtomicBool::new(false);
        if !WARNED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "fsbench: warning: cannot keep a record of what this run creates in {}: {e}; if it is killed, `fsbench cleanup` will not know what it left (set {ENV} to a writable directory)",
                j.file.display()
            );
        }
    }
}

fn write(file: &Path, r: &Record) -> Result<(), String> {
    // A benchmark thread may run with a user's file-system ids (Bonnie++'s
    // `-u`); the record is the process's, written with its own ids.
    let _ids = OwnIds::take();
    if let Some(d) = file.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    }
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = file.with_file_name(format!(".{name}.tmp"));
    let text = serde_json::to_string_pretty(r).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, file).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))
}

/// This thread's file-system ids set to the process's effective ones
/// until dropped (a no-op when they are the same).
struct OwnIds {
    fsuid: Option<u32>,
    fsgid: Option<u32>,
}

impl OwnIds {
    fn take() -> OwnIds {
        // SAFETY: these calls change only this thread's file-system ids and
        // take plain integers; each returns the previous id.
        unsafe {
            let (uid, gid) = (libc::geteuid(), libc::getegid());
            let fsgid = libc::setfsgid(gid) as u32;
            let fsuid = libc::setfsuid(uid) as u32;
            OwnIds { fsuid: (fsuid != uid).then_some(fsuid), fsgid: (fsgid != gid).then_some(fsgid) }
        }
    }
}

impl Drop for OwnIds {
    fn drop(&mut self) {
        // SAFETY: as in take(); back to the ids the thread had.
        unsafe {
            if let Some(u) = self.fsuid {
                libc::setfsuid(u);
            }
            if let Some(g) = self.fsgid {
                libc::setfsgid(g);
            }
        }
    }
}

/// A record found in the state directory.
#[derive(Debug)]
pub struct Found {
    pub file: PathBuf,
    pub record: Record,
}

/// Every record in `dir`, split into those of live and of dead processes,
/// and the files that are not readable records.
#[derive(Debug, Default)]
pub struct Records {
    pub dir: PathBuf,
    pub live: Vec<Found>,
    pub dead: Vec<Found>,
    pub unreadable: Vec<String>,
}

impl Records {
    /// Read `dir` (a missing directory holds no records).
    pub fn read(dir: &Path) -> Records {
        let boot = process::boot_id();
        let mut out = Records { dir: dir.to_path_buf(), ..Records::default() };
        let Ok(rd) = std::fs::read_dir(dir) else { return out };
        let mut files: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json") && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
            .collect();
        files.sort();
        for file in files {
            let parsed = crate::input::read_text(&file, "fsbench state record")
                .and_then(|t| serde_json::from_str::<Record>(&t).map_err(|e| e.to_string()));
            match parsed {
                Ok(record) if record.alive(&boot) => out.live.push(Found { file, record }),
                Ok(record) => out.dead.push(Found { file, record }),
                Err(e) => out.unreadable.push(format!("{}: {e}", file.display())),
            }
        }
        // Newest first: a later run may have been built on an earlier one's leftovers.
        out.dead.sort_by_key(|f| std::cmp::Reverse((f.record.started_unix, f.record.start_ticks)));
        out
    }

    /// The one line a run prints at its start when dead processes left
    /// something behind.
    pub fn warning(&self) -> Option<String> {
        let actions: Vec<&Action> = self.dead.iter().flat_map(|f| &f.record.actions).collect();
        if actions.is_empty() {
            return None;
        }
        let runs = self.dead.iter().filter(|f| !f.record.actions.is_empty()).count();
        let pids: Vec<String> = self.dead.iter().map(|f| f.record.pid.to_string()).collect();
        // A file system a run took down and did not mount again is the
        // user's, not a leftover: say which, and that cleanup mounts it.
        let unmounted: Vec<String> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Remount(r) => Some(format!("{} ({}) is no longer mounted on {}", r.source.display(), r.fstype, r.point.display())),
                _ => None,
            })
            .collect();
        let them = if actions.len() == 1 { "it" } else { "them" };
        let does = if unmounted.is_empty() { format!("removes {them}") } else { format!("undoes {them} and mounts it again") };
        Some(format!(
            "{} fsbench run{} that died (pid {}) left {} behind{}; `fsbench cleanup` {does} (`--dry-run` lists {them}; records in {})",
            runs,
            if runs == 1 { "" } else { "s" },
            pids.join(", "),
            kinds(&actions),
            unmounted.iter().map(|u| format!(": {u}")).collect::<String>(),
            self.dir.display()
        ))
    }

    /// Undo the dead records `wanted` picks, newest record first and each
    /// one's actions newest first; report every step through `say`.
    /// Returns how many actions failed (they stay on record).
    pub fn undo(&self, wanted: impl Fn(&Record) -> bool, dry_run: bool, say: &mut dyn FnMut(String)) -> usize {
        let boot = process::boot_id();
        let mut failed = 0;
        for f in self.dead.iter().filter(|f| wanted(&f.record)) {
            // Two `fsbench cleanup` at once do not undo the same record.
            let _held = match lock::lock_path(&f.file) {
                Ok(l) => Some(l),
                Err(LockError::InUse(u)) => {
                    say(format!("{}: being cleaned up by pid {}", f.file.display(), u.pid.map(|p| p.to_string()).unwrap_or("?".into())));
                    continue;
                }
                Err(LockError::Other(_)) => None,
            };
            say(format!("{} is gone; it left {}:", f.record.describe(), kinds(&f.record.actions.iter().collect::<Vec<_>>())));
            let mut left = Vec::new();
            for a in f.record.actions.iter().rev() {
                match verdict(a, f.record.boot_id == boot, &self.live) {
                    Err(why) => say(format!("  left alone: {a} ({why})")),
                    Ok(()) if dry_run => {
                        say(format!("  would {a}"));
                        left.push(a.clone());
                    }
                    Ok(()) => match cleanup::undo(a) {
                        Undone::Done => say(format!("  done: {a}")),
                        Undone::Refused(why) => say(format!("  left alone: {a} ({why})")),
                        Undone::Failed(e) => {
                            say(format!("  FAILED: {a}: {e}"));
                            failed += 1;
                            left.push(a.clone());
                        }
                    },
                }
            }
            if dry_run {
                continue;
            }
            left.reverse();
            let r = if left.is_empty() {
                std::fs::remove_file(&f.file).map_err(|e| e.to_string())
            } else {
                write(&f.file, &Record { actions: left, ..f.record.clone() })
            };
            if let Err(e) = r {
                say(format!("  cannot update {}: {e}", f.file.display()));
                failed += 1;
            }
        }
        failed
    }
}

/// Whether a dead process's action may be undone now; Err says why not
/// (the action is then dropped from the record: it is no longer fsbench's
/// to undo). The identity checks are `cleanup::still_ours`, the same a live
/// run's own undo makes; this adds what only a dead record needs.
fn verdict(a: &Action, same_boot: bool, live: &[Found]) -> Result<(), String> {
    if let Some(l) = live.iter().find(|l| l.record.actions.iter().any(|b| b.same_subject(a))) {
        return Err(format!("fsbench pid {} uses it now", l.record.pid));
    }
    let kernel = matches!(a, Action::Unmount(_) | Action::DetachLoop { .. } | Action::ResetZram(_) | Action::Trace(_) | Action::Remount(_));
    if kernel && !same_boot {
        return Err("made in an earlier boot, so it is gone".into());
    }
    cleanup::still_ours(a)?;
    match a {
        Action::ResetZram(n) => {
            let dev = PathBuf::from(format!("/dev/zram{n}"));
            if !dev.exists() {
                return Ok(());
            }
            check_device_usable(&dev, true).map_err(|e| format!("in use: {e}"))
        }
        Action::RemoveDir(d) => match lock::held_inside(&d.path) {
            Some(pid) => Err(format!("pid {pid} holds its lock")),
            None => Ok(()),
        },
        Action::Trace(u) => crate::environment::trace::verdict(u),
        _ => Ok(()),
    }
}

/// "2 mounts, 1 loop device and 3 directories".
fn kinds(actions: &[&Action]) -> String {
    let names: [(&str, &str); 7] = [
        ("mount", "mounts"),
        ("loop device", "loop devices"),
        ("zram device", "zram devices"),
        ("file", "files"),
        ("directory", "directories"),
        ("block trace setting", "block trace settings"),
        ("unmounted file system", "unmounted file systems"),
    ];
    let mut counts = [0usize; 7];
    for a in actions {
        counts[match a {
            Action::Unmount(_) => 0,
            Action::DetachLoop { .. } => 1,
            Action::ResetZram(_) => 2,
            Action::RemoveFile(_) => 3,
            Action::RemoveDir(_) => 4,
            Action::Trace(_) => 5,
            Action::Remount(_) => 6,
        }] += 1;
    }
    let parts: Vec<String> = counts
        .iter()
        .zip(names)
        .filter(|(n, _)| **n > 0)
        .map(|(n, (one, many))| format!("{n} {}", if *n == 1 { one } else { many }))
        .collect();
    match parts.split_last() {
        None => "nothing".into(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

/// Put back the block trace settings of fsbench processes that died (the
/// next capture needs the tracer free); their other leftovers stay for
/// `fsbench cleanup`. Returns what was done, one line each.
pub fn undo_dead_traces() -> Vec<String> {
    let Some(dir) = dir() else { return Vec::new() };
    let recs = Records::read(&dir);
    let boot = process::boot_id();
    let mut lines = Vec::new();
    for f in recs.dead.iter().filter(|f| f.record.actions.iter().any(|a| matches!(a, Action::Trace(_)))) {
        let Ok(_held) = lock::lock_path(&f.file) else { continue };
        let mut left = Vec::new();
        for a in f.record.actions.iter().rev() {
            if !matches!(a, Action::Trace(_)) {
                left.push(a.clone());
                continue;
            }
            match verdict(a, f.record.boot_id == boot, &recs.live) {
                Err(why) => lines.push(format!("left alone: {a} ({why})")),
                Ok(()) => match cleanup::undo(a) {
                    Undone::Done => lines.push(format!("done: {a} (left by fsbench pid {})", f.record.pid)),
                    Undone::Refused(why) => lines.push(format!("left alone: {a} ({why})")),
                    Undone::Failed(e) => {
                        lines.push(format!("FAILED: {a}: {e}"));
                        left.push(a.clone());
                    }
                },
            }
        }
        left.reverse();
        let _ = if left.is_empty() {
            std::fs::remove_file(&f.file).map_err(|e| e.to_string())
        } else {
            write(&f.file, &Record { actions: left, ..f.record.clone() })
        };
    }
    lines
}

/// Whether a run that died lists `path` as a file it made, and the file
/// there is still that one (for a refusal to say how to get rid of it).
pub fn left_by_dead_run(path: &Path) -> bool {
    let Some(dir) = dir() else { return false };
    let p = crate::environment::identity::absolute(path);
    Records::read(&dir)
        .dead
        .iter()
        .flat_map(|f| &f.record.actions)
        .any(|a| matches!(a, Action::RemoveFile(o) if o.path == p && cleanup::still_ours(a) == Ok(true)))
}

/// The warning line for a run that is starting, if dead processes left
/// something in the state directory.
pub fn leftovers_warning() -> Option<String> {
    Records::read(&dir()?).warning()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::identity::MountRef;

    fn record(pid: u32, start_ticks: u64, boot: &str, actions: Vec<Action>) -> Record {
        Record {
            schema: SCHEMA.into(),
            pid,
            start_ticks,
            boot_id: boot.into(),
            started_unix: 1_700_000_000,
            command: vec!["fsbench".into(), "experiment".into(), "x.toml".into()],
            owner: None,
            actions,
        }
    }

    #[test]
    fn records_of_dead_processes_are_undone_newest_first_and_removed() {
        let state = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let d = work.path().join("fsbench-abc");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        let img = work.path().join("fsbench-loop-1.img");
        std::fs::write(&img, b"x").unwrap();
        let boot = process::boot_id();
        let me = ProcessId::this();
        // A dead one: our pid with another start time.
        let dead = record(me.pid, me.start_ticks + 1, &boot, vec![Action::made_file(&img), Action::made_dir(&d)]);
        write(&state.path().join("dead.json"), &dead).unwrap();
        let live = record(me.pid, me.start_ticks, &boot, vec![Action::made_dir(&work.path().join("live"))]);
        write(&state.path().join("live.json"), &live).unwrap();
        std::fs::write(state.path().join("junk.json"), b"{").unwrap();

        let recs = Records::read(state.path());
        assert_eq!((recs.live.len(), recs.dead.len(), recs.unreadable.len()), (1, 1, 1), "{recs:?}");
        let w = recs.warning().unwrap();
        assert!(w.starts_with(&format!("1 fsbench run that died (pid {}) left 1 file and 1 directory behind", me.pid)), "{w}");

        let mut lines = Vec::new();
        assert_eq!(recs.undo(|_| true, true, &mut |l| lines.push(l)), 0);
        assert!(img.exists() && d.exists(), "a dry run touches nothing");
        assert!(lines[1].contains("would remove directory") && lines[2].contains("would remove file"), "{lines:?}");

        lines.clear();
        assert_eq!(recs.undo(|_| true, false, &mut |l| lines.push(l)), 0, "{lines:?}");
        assert!(!img.exists() && !d.exists(), "{lines:?}");
        assert!(!state.path().join("dead.json").exists(), "an undone record is removed");
        assert!(state.path().join("live.json").exists(), "a live process's record is not touched");
        assert_eq!(Records::read(state.path()).warning(), None);
    }

    #[test]
    fn what_a_live_run_uses_now_or_another_boot_made_is_left_alone() {
        let state = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let shared = work.path().join("taken-over");
        std::fs::create_dir(&shared).unwrap();
        let locked = work.path().join("locked");
        std::fs::create_dir(&locked).unwrap();
        let _lock = lock::lock_file(&locked.join(".fsbench-fileset"), &locked, "fileset").unwrap();
        let me = ProcessId::this();
        let boot = process::boot_id();
        let mount = PathBuf::from("/nonexistent/fsbench-mnt-x");
        let dead = record(
            me.pid,
            me.start_ticks + 1,
            "another-boot",
            vec![
                Action::made_dir(&shared),
                Action::made_dir(&locked),
                Action::Unmount(MountRef::new(&mount, Path::new("/dev/loop9"), "ext4")),
            ],
        );
        write(&state.path().join("dead.json"), &dead).unwrap();
        write(&state.path().join("live.json"), &record(me.pid, me.start_ticks, &boot, vec![Action::made_dir(&shared)])).unwrap();
        let mut lines = Vec::new();
        assert_eq!(Records::read(state.path()).undo(|_| true, false, &mut |l| lines.push(l)), 0);
        let text = lines.join("\n");
        assert!(text.contains("earlier boot") && text.contains("holds its lock") && text.contains("uses it now"), "{text}");
        assert!(shared.exists() && locked.exists(), "{text}");
        assert!(!state.path().join("dead.json").exists(), "nothing in it was fsbench's any more");
    }

    #[test]
    fn records_of_an_older_fsbench_are_read_and_what_they_name_without_identity_is_left_alone() {
        let state = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let dir = work.path().join("bigfileset");
        std::fs::create_dir(&dir).unwrap();
        let me = ProcessId::this();
        let text = format!(
            r#"{{"schema": "fsbench-state/1", "pid": {}, "start_ticks": {}, "boot_id": "{}", "started_unix": 1, "command": ["fsbench"],
                "actions": [{{"remove_file": "iozone.tmp"}}, {{"remove_dir": "{}"}}, {{"unmount": "/nonexistent/fsbench-mnt-x"}}]}}"#,
            me.pid,
            me.start_ticks + 1,
            process::boot_id(),
            dir.display()
        );
        std::fs::write(state.path().join("old.json"), text).unwrap();
        let recs = Records::read(state.path());
        assert_eq!(recs.dead.len(), 1, "{:?}", recs.unreadable);
        let mut lines = Vec::new();
        assert_eq!(recs.undo(|_| true, false, &mut |l| lines.push(l)), 0);
        let text = lines.join("\n");
        assert!(text.contains("left alone: remove file iozone.tmp (recorded as a relative path"), "{text}");
        assert!(text.contains(&format!("left alone: remove directory {} (its identity", dir.display())), "{text}");
        assert!(text.contains("done: unmount /nonexistent/fsbench-mnt-x"), "nothing mounted there: nothing to do: {text}");
        assert!(dir.exists());
        assert!(!state.path().join("old.json").exists());
    }

    #[test]
    fn kinds_are_counted_in_words() {
        let a = [
            Action::Unmount(MountRef::new(Path::new("/m"), Path::new("/dev/loop1"), "ext4")),
            Action::made_dir(Path::new("/d")),
            Action::made_dir(Path::new("/e")),
        ];
        assert_eq!(kinds(&a.iter().collect::<Vec<_>>()), "1 mount and 2 directories");
        assert_eq!(kinds(&[]), "nothing");
    }
}
