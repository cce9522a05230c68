//! A block trace capture whose global changes are in the cleanup registry:
//! undone on Ctrl-C, panic and early exit, and on record for `fsbench
//! cleanup` if the process is killed. What killed runs left is put back
//! first, so their tracer does not block this capture.
//!
//! The top-level tracer (the only home of the `blk` tracer) is one per
//! machine. A capture that wants it takes a machine-wide lock first
//! (`/run/lock/fsbench-top-level-tracer.lock`, flock, naming its holder),
//! whatever its state directory; a second capture meanwhile falls back to a
//! private trace instance instead of changing settings the first is using.
//! While it holds the lock, the steps that put the top level back are also
//! kept next to it (`fsbench-top-level-tracer.json`), written before the
//! change each undoes and removed once they have run. Whoever takes the
//! lock next (a later capture, `fsbench cleanup`) finds there what a holder
//! that died left changed and puts it back before reading anything, so no
//! capture saves another's changed values as the originals.

use crate::environment::cleanup::{self, Action, Token};
use crate::environment::lock::{self, Lock, LockError};
use crate::environment::state;
use crate::host::process::{self, ProcessId};
use crate::observe::trace::capture::tracefs::{Tracefs, Undo};
use crate::observe::trace::capture::{self, Capture, CaptureError, Hooks, NoHooks, StopResult, TraceRequest};
use crate::observe::trace::record::RecordSink;
use crate::result::trace::capture::Method;
use crate::result::warning::{Code, Warning};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A capture and the registry entries that undo it.
pub struct TraceSession {
    capture: Capture,
    tokens: Vec<Token>,
    /// What was put back from killed runs before starting.
    pub recovered: Vec<String>,
}

/// Start a capture (see `observe::trace::capture::start`).
pub fn start(req: &TraceRequest, sink: Box<dyn RecordSink>) -> Result<TraceSession, CaptureError> {
    let recovered = state::undo_dead_traces();
    let mut hooks = SessionHooks { tokens: Vec::new() };
    let started = capture::start_with(req, sink, &mut hooks);
    match started {
        Ok(capture) => Ok(TraceSession { capture, tokens: hooks.tokens, recovered }),
        Err(e) => {
            // A failed start has put back what it changed.
            hooks.tokens.into_iter().for_each(Token::forget);
            Err(e)
        }
    }
}

/// Every change a capture makes goes into this process's record, and the
/// top-level tracer's also into the machine-wide one.
struct SessionHooks {
    tokens: Vec<Token>,
}

impl Hooks for SessionHooks {
    fn undo_step(&mut self, u: &Undo) -> Result<(), String> {
        if held_here() && matches!(u, Undo::TopLevel { .. } | Undo::DeviceTrace { .. }) {
            record_step(u)?;
        }
        self.tokens.push(cleanup::register(Action::Trace(u.clone())));
        Ok(())
    }

    fn claim_top_level(&mut self, root: &Path) -> Result<Vec<String>, String> {
        claim(root)
    }

    fn release_top_level(&mut self, put_back: bool) {
        release(put_back);
    }
}

impl TraceSession {
    pub fn capture(&self) -> &Capture {
        &self.capture
    }

    /// Stop the capture; the sink comes back to be finished. A setting the
    /// capture could not put back is tried once more; what still fails is
    /// a warning of the finished capture (its records are complete), and
    /// the top-level tracer's stays on the machine-wide record for the next
    /// capture or `fsbench cleanup`.
    pub fn stop(self) -> StopResult {
        let claimed = self.capture.method() == Method::BlkTracer && held_here();
        let r = self.capture.stop_with_undo();
        let mut still = Vec::new();
        let r = match r {
            Ok((mut captured, sink, failed)) => {
                for t in self.tokens {
                    match t.action() {
                        Some(Action::Trace(u)) if failed.contains(&u) => {
                            if let Err(e) = t.done() {
                                still.push((u, e));
                            }
                        }
                        _ => t.forget(),
                    }
                }
                captured.warnings = still.iter().map(|(u, e)| Warning::new(Code::TraceNotRestored, restore_warning(u, e))).collect();
                Ok((captured, sink))
            }
            // Try each step again; what still fails is printed.
            Err(e) => {
                for t in self.tokens.into_iter().rev() {
                    let u = t.action();
                    if let Err(err) = t.done() {
                        eprintln!("fsbench: {err}");
                        if let Some(Action::Trace(u)) = u {
                            still.push((u, err));
                        }
                    }
                }
                Err(e)
            }
        };
        if claimed {
            release(!still.iter().any(|(u, _)| is_top_level(u)));
        }
        r
    }
}

fn restore_warning(u: &Undo, e: &str) -> String {
    let later = if is_top_level(u) { "; the next block trace or `fsbench cleanup` puts it back" } else { "" };
    format!("trace: the capture is complete, but {e}{later}")
}

/// The steps the machine-wide record keeps: the top-level tracer's and the
/// device trace that writes into it.
fn is_top_level(u: &Undo) -> bool {
    matches!(u, Undo::TopLevel { .. } | Undo::DeviceTrace { .. })
}

/// Where the machine-wide lock and record live: /run (a tmpfs, empty at
/// boot, as the tracer's settings are).
fn claim_dir() -> PathBuf {
    ["/run/lock", "/run"].iter().map(PathBuf::from).find(|d| d.is_dir()).unwrap_or_else(std::env::temp_dir)
}

const CLAIM: &str = "fsbench-top-level-tracer";
const RECORD_SCHEMA: &str = "fsbench-top-level-tracer/1";

fn lock_file() -> PathBuf {
    claim_dir().join(format!("{CLAIM}.lock"))
}

fn record_file() -> PathBuf {
    claim_dir().join(format!("{CLAIM}.json"))
}

/// The machine-wide record of a holder's changes to the top level.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct ClaimRecord {
    schema: String,
    pid: u32,
    start_ticks: u64,
    boot_id: String,
    /// Oldest first; undone newest first.
    steps: Vec<Undo>,
}

/// This process's claim: the lock and the steps recorded under it.
struct Held {
    _lock: Lock,
    steps: Vec<Undo>,
}

static HELD: Mutex<Option<Held>> = Mutex::new(None);

fn held() -> std::sync::MutexGuard<'static, Option<Held>> {
    HELD.lock().unwrap_or_else(|e| e.into_inner())
}

fn held_here() -> bool {
    held().is_some()
}

/// What the lock says of the top-level tracer of `root`.
fn what(root: &Path) -> PathBuf {
    PathBuf::from(format!("the top-level tracer of {}", root.display()))
}

fn take_lock(root: &Path) -> Result<Lock, LockError> {
    lock::lock_file(&lock_file(), &what(root), "The top-level tracer (the blk tracer) is used by the fsbench run named here.")
}

/// Take the top-level tracer for this process, after putting back what a
/// holder that died had left changed. Err says why not.
fn claim(root: &Path) -> Result<Vec<String>, String> {
    if held_here() {
        return Err("another capture of this run uses the top-level tracer".into());
    }
    let lock = take_lock(root).map_err(|e| match e {
        LockError::InUse(u) => format!("{u}: left to it"),
        LockError::Other(m) => format!("cannot take the machine-wide lock on the top-level tracer: {m}"),
    })?;
    let notes = recover_locked(root, false)?;
    *held() = Some(Held { _lock: lock, steps: Vec::new() });
    Ok(notes)
}

/// Give the top-level tracer up; its record goes when everything it lists
/// was put back, else it stays for whoever takes the lock next.
fn release(put_back: bool) {
    if let Some(h) = held().take() {
        if put_back {
            let _ = std::fs::remove_file(record_file());
        }
        unlock(h._lock);
    }
}

/// Drop the lock and its file (safe: a waiter that locked the old file
/// finds its name gone and locks the new one, see `lock::lock_file`).
fn unlock(lock: Lock) {
    let _ = std::fs::remove_file(lock_file());
    drop(lock);
}

/// Add `u` to the machine-wide record, before its change is made.
fn record_step(u: &Undo) -> Result<(), String> {
    let mut g = held();
    let Some(h) = g.as_mut() else { return Ok(()) };
    h.steps.push(u.clone());
    save_record(&h.steps).map_err(|e| {
        h.steps.pop();
        format!("cannot record the top-level tracer's settings before changing them: {e}")
    })
}

/// `u` was put back by this process (at its exit, after a signal or a
/// panic): the machine-wide record keeps only what is left.
fn forget_step(u: &Undo) {
    let mut g = held();
    let Some(h) = g.as_mut() else { return };
    if let Some(i) = h.steps.iter().position(|s| s == u) {
        h.steps.remove(i);
    }
    let _ = save_record(&h.steps);
}

/// This process's record of `steps` (atomically replaced), none when empty.
fn save_record(steps: &[Undo]) -> Result<(), String> {
    let file = record_file();
    if steps.is_empty() {
        return std::fs::remove_file(&file)
            .or_else(|e| if e.kind() == std::io::ErrorKind::NotFound { Ok(()) } else { Err(e) })
            .map_err(|e| e.to_string());
    }
    let me = ProcessId::this();
    let r = ClaimRecord {
        schema: RECORD_SCHEMA.into(),
        pid: me.pid,
        start_ticks: me.start_ticks,
        boot_id: process::boot_id(),
        steps: steps.to_vec(),
    };
    let tmp = file.with_extension(format!("json.{}", std::process::id()));
    let text = serde_json::to_string_pretty(&r).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &file).map_err(|e| format!("{}: {e}", file.display()))
}

/// The machine-wide record, if there is one of this boot (a record of an
/// earlier boot, or one that cannot be read, lists nothing to put back).
fn read_record() -> Option<ClaimRecord> {
    let text = crate::input::read_text(&record_file(), "fsbench top-level tracer record").ok()?;
    serde_json::from_str::<ClaimRecord>(&text).ok().filter(|r| r.boot_id == process::boot_id())
}

/// With the lock held: put back what the record lists (newest first, the
/// top level's steps at `root`, the tracefs mounted now) and remove it.
/// Returns one line per step; with `dry_run` only says what it would do.
fn recover_locked(root: &Path, dry_run: bool) -> Result<Vec<String>, String> {
    let Some(r) = read_record() else {
        if !dry_run {
            let _ = std::fs::remove_file(record_file());
        }
        return Ok(Vec::new());
    };
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for u in r.steps.iter().rev() {
        let u = match u {
            Undo::TopLevel { saved, .. } => Undo::TopLevel { tracefs: root.to_path_buf(), saved: saved.clone() },
            other => other.clone(),
        };
        if dry_run {
            lines.push(format!("would {u} (left by fsbench pid {})", r.pid));
            continue;
        }
        match u.perform() {
            Ok(()) => lines.push(format!("done: {u} (left by fsbench pid {})", r.pid)),
            Err(e) => errors.push(format!("could not {u} (left by fsbench pid {}): {e}", r.pid)),
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("; "));
    }
    if !dry_run {
        let _ = std::fs::remove_file(record_file());
    }
    Ok(lines)
}

/// Run `f` with the mounted tracefs's root, mounting it for the call when
/// it is not mounted (the tracer's settings outlive an unmount).
fn with_tracefs<R>(f: impl FnOnce(&Path) -> R) -> Result<R, String> {
    let mut steps = Vec::new();
    let tfs = Tracefs::find_or_mount(&mut NoHooks, &mut steps)?;
    let out = f(&tfs.root);
    for u in steps.iter().rev() {
        let _ = u.perform();
    }
    Ok(out)
}

/// `fsbench cleanup`: put back what a holder of the top-level tracer that
/// died left changed, whatever state directory it kept its records in.
/// Nothing while a live process holds it (it did that when it took it).
pub fn recover_dead_claim(dry_run: bool) -> Result<Vec<String>, String> {
    if read_record().is_none() || held_here() {
        return Ok(Vec::new());
    }
    with_tracefs(|root| match take_lock(root) {
        Ok(lock) => {
            let r = recover_locked(root, dry_run);
            unlock(lock);
            r
        }
        Err(LockError::InUse(_)) => Ok(Vec::new()),
        Err(LockError::Other(m)) => Err(format!("cannot take the machine-wide lock on the top-level tracer: {m}")),
    })?
}

/// Whether a dead process's trace step may be undone now: not while a live
/// process holds the top-level tracer and the step is one of the top
/// level's (the holder put back what was left when it took it, or, for a
/// device it traces, uses it now).
pub fn verdict(u: &Undo) -> Result<(), String> {
    if !is_top_level(u) || held_here() {
        return Ok(());
    }
    match process::flock_holder(&lock_file()) {
        Some(pid) => Err(format!("fsbench pid {pid} holds the top-level tracer now; it put back what was left when it took it")),
        None => Ok(()),
    }
}

/// Undo one recorded step (`environment::cleanup::perform`). This
/// process's own are done at once; a dead process's top-level steps under
/// the machine-wide lock, from the machine-wide record when there is one
/// (the true originals), else as recorded while the `blk` tracer it set
/// is still on.
pub fn undo(u: &Undo) -> Result<(), String> {
    if !is_top_level(u) {
        return u.perform();
    }
    if held_here() {
        u.perform()?;
        forget_step(u);
        return Ok(());
    }
    let root = match u {
        Undo::TopLevel { tracefs, .. } => tracefs.clone(),
        _ => PathBuf::from(crate::observe::trace::capture::tracefs::DEFAULT_DIR),
    };
    let lock = take_lock(&root).map_err(|e| match e {
        LockError::InUse(inuse) => format!("{inuse}, which put back what was left when it took it"),
        LockError::Other(m) => format!("cannot take the machine-wide lock on the top-level tracer: {m}"),
    })?;
    let r = undo_locked(u);
    unlock(lock);
    r
}

fn undo_locked(u: &Undo) -> Result<(), String> {
    if read_record().is_some() {
        return with_tracefs(|root| recover_locked(root, false).map(|_| ()))?;
    }
    match u {
        Undo::TopLevel { saved, .. } => with_tracefs(|root| {
            let blk = crate::observe::trace::capture::tracefs::read(&root.join("current_tracer")).is_ok_and(|t| t == "blk");
            if blk {
                Undo::TopLevel { tracefs: root.to_path_buf(), saved: saved.clone() }.perform()
            } else {
                Ok(())
            }
        })?,
        _ => u.perform(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::trace::capture::tracefs::TopLevelSaved;

    #[test]
    fn the_claim_record_round_trips_and_another_boots_lists_nothing() {
        let r = ClaimRecord {
            schema: RECORD_SCHEMA.into(),
            pid: 1,
            start_ticks: 2,
            boot_id: "b".into(),
            steps: vec![
                Undo::TopLevel {
                    tracefs: "/sys/kernel/tracing".into(),
                    saved: TopLevelSaved { trace_clock: "local".into(), buffer_size_kb: "1410".into(), bin: "0".into() },
                },
                Undo::DeviceTrace { sysfs_trace: "/sys/block/loop9/trace".into() },
            ],
        };
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(serde_json::from_str::<ClaimRecord>(&text).unwrap(), r);
        assert!(r.steps.iter().all(is_top_level));
        assert!(!is_top_level(&Undo::Instance { tracefs: "/t".into(), name: "fsbench-1".into() }));
        assert!(restore_warning(&r.steps[0], "could not x").contains("`fsbench cleanup` puts it back"));
    }
}
