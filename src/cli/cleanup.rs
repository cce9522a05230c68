//! `fsbench cleanup [--dry-run]`: undo what fsbench runs that died (SIGKILL,
//! a crash, power loss) left behind, from their records in the state
//! directory (`environment::state`).

use crate::environment::state::{self, Records};
use clap::Args;

#[derive(Args, Debug)]
pub struct CleanupArgs {
    /// List what would be undone; change nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(a: CleanupArgs) -> i32 {
    let Some(dir) = state::dir() else {
        eprintln!("fsbench cleanup: no state directory: set {} or HOME", state::ENV);
        return 2;
    };
    // The top-level tracer's record is machine-wide, whatever the state directory.
    let (tracer_failed, else_) = match crate::environment::trace::recover_dead_claim(a.dry_run) {
        Ok(lines) if lines.is_empty() => (0usize, ""),
        Ok(lines) => {
            println!("an fsbench run that is gone left the top-level tracer changed:");
            lines.iter().for_each(|l| println!("  {l}"));
            (0, " else")
        }
        Err(e) => {
            println!("an fsbench run that is gone left the top-level tracer changed:\n  FAILED: {e}");
            (1, " else")
        }
    };
    let records = Records::read(&dir);
    for u in &records.unreadable {
        eprintln!("fsbench cleanup: warning: not a state record, left alone: {u}");
    }
    for f in &records.live {
        println!("fsbench pid {} is running; what it made is its own to undo ({})", f.record.pid, f.file.display());
    }
    if records.dead.is_empty() {
        println!("nothing{else_} left behind by fsbench runs that died (records in {})", dir.display());
        return tracer_failed.min(1) as i32;
    }
    let failed = tracer_failed + records.undo(|_| true, a.dry_run, &mut |line| println!("{line}"));
    if failed > 0 {
        eprintln!("fsbench cleanup: {failed} step(s) failed; they stay on record for the next `fsbench cleanup`");
        return 1;
    }
    0
}

/// Before a run: one line on stderr when runs that died left something.
pub fn warn_leftovers() {
    if let Some(w) = state::leftovers_warning() {
        eprintln!("fsbench: warning: {w}");
    }
}

/// The lock file in an experiment's results directory, and what it says.
pub const RESULTS_LOCK: &str = ".fsbench-lock";
pub const RESULTS_LOCK_NOTE: &str = "Results of an fsbench experiment; the run writing them holds this lock.";

/// An experiment's results directory, claimed for this run: created,
/// locked for as long as the lock lives, named as what this process works
/// for; on `--resume`, first what a killed run of it left is undone.
/// Refused (exit status 2) while another fsbench uses it.
pub fn claim_results_dir(out: &std::path::Path, resume: bool) -> Result<crate::environment::lock::Lock, i32> {
    use crate::environment::lock::{lock_file, LockError};
    if let Err(e) = std::fs::create_dir_all(out) {
        eprintln!("fsbench: error: cannot create {}: {e}", out.display());
        return Err(2);
    }
    let lock = lock_file(&out.join(RESULTS_LOCK), out, RESULTS_LOCK_NOTE).map_err(|e| {
        eprintln!("fsbench: error: {e}");
        if matches!(e, LockError::InUse(_)) {
            2
        } else {
            1
        }
    })?;
    let owner = out.canonicalize().unwrap_or_else(|_| out.to_path_buf());
    if resume {
        if let Some(dir) = state::dir() {
            let failed = Records::read(&dir).undo(|r| r.owner.as_deref() == Some(&owner), false, &mut |line| eprintln!("fsbench: {line}"));
            if failed > 0 {
                eprintln!("fsbench: warning: {failed} step(s) of undoing what the killed run left failed; see `fsbench cleanup`");
            }
        }
    }
    warn_leftovers();
    state::set_owner(&owner);
    Ok(lock)
}
