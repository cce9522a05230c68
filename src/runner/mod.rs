//! Executes plans. One folder per shape of workload (`jobs/` for fio-style
//! jobs, `flow/` for Filebench-style flows), the same envelope around every
//! result, and `cell` for a run inside its environment (cache scenario,
//! background load, attribution). Runners never parse a peer's syntax and
//! never print: they report through `events`.

pub mod bonnie;
pub mod buffers;
pub mod cell;
pub mod events;
pub mod experiment;
pub mod experiment_space;
pub mod flow;
pub mod host_load;
pub mod iozone;
pub mod jobs;
pub(crate) mod lifecycle;
pub mod order;
pub mod postmark;
pub mod replay;
pub mod rng;
pub mod trace;
pub(crate) mod window;
pub mod workers;
pub mod ycsb;

use crate::environment::system;
use crate::model::{Plan, Workload};
use crate::result::{GroupResult, JobResult, RunResult, SCHEMA};
use events::Events;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How a run behaves around its workload.
#[derive(Clone)]
pub struct RunOptions {
    /// The user confirmed that named block devices may be written.
    pub allow_device: bool,
    /// Keep created files even when interrupted or when unlink=1.
    pub keep_files: bool,
    /// Lay out even when the plan needs more than the free space.
    pub allow_fill: bool,
    /// Set by Ctrl-C/SIGTERM: workers stop, partial results are reported.
    pub stop: Arc<AtomicBool>,
    /// Where warnings, notes and progress go.
    pub events: Arc<dyn Events>,
    /// A cache scenario (cold, fresh mount, polluted) was applied before the
    /// run, so a buffered working set that fits in RAM is not a surprise.
    pub cache_controlled: bool,
    pub command: Vec<String>,
}

/// Why a run produced no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// The workload could not be prepared or run (files, devices, filesets,
    /// threads): nothing was measured.
    Workload(String),
    /// The environment around it could not be set up (a background load
    /// that does not start).
    Environment(String),
    /// What the run would own or use (a fileset tree, a Postmark location,
    /// a job's file) is in use by another run: refused before anything was
    /// written.
    InUse(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Workload(m) | RunError::InUse(m) => f.write_str(m),
            RunError::Environment(m) => write!(f, "environment: {m}"),
        }
    }
}

impl From<String> for RunError {
    fn from(m: String) -> RunError {
        RunError::Workload(m)
    }
}

impl std::error::Error for RunError {}

/// Sleep `d`, waking every 50 ms to end early once `stop` is set.
pub(crate) fn sleep_unless_stopped(d: std::time::Duration, stop: &AtomicBool) {
    let end = std::time::Instant::now() + d;
    while !stop.load(Ordering::Relaxed) {
        let now = std::time::Instant::now();
        if now >= end {
            break;
        }
        std::thread::sleep((end - now).min(std::time::Duration::from_millis(50)));
    }
}

/// Seconds since the Unix epoch, for a result's `started_unix`.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// What a run measured, before the envelope: its reported units, the
/// groups they ran in, where its files were, what it warned of.
pub(crate) struct Measured {
    pub jobs: Vec<JobResult>,
    pub groups: Vec<GroupResult>,
    /// The places whose mounts and devices the system snapshot describes.
    pub targets: Vec<PathBuf>,
    pub warnings: Vec<crate::result::warning::Warning>,
    pub partial: bool,
}

/// What every runner wraps its units in: versions, command, layout, the
/// system snapshot of the places the files were.
pub(crate) fn envelope(opts: &RunOptions, layout: &str, started_unix: u64, m: Measured) -> RunResult {
    let refs: Vec<&Path> = m.targets.iter().map(|p| p.as_path()).collect();
    let failed = m.jobs.iter().find_map(|j| j.error.as_ref().map(|e| format!("job '{}': {e}", j.name)));
    RunResult {
        schema: SCHEMA.to_string(),
        fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        started_unix,
        command: opts.command.clone(),
        layout: layout.to_string(),
        jobs: m.jobs,
        groups: m.groups,
        system: system::snapshot(&refs),
        warnings: m.warnings,
        partial: m.partial,
        failed,
        trace: None,
    }
}

/// Run a plan by its shape. `before_measure` runs when the workload's
/// files are in place and nothing is measured yet (a cache scenario goes
/// there): before fio jobs, whose files persist between runs; after a
/// Filebench workload has built its filesets, which it does anew each run.
/// It gets the workload's data files, for checking what is cached.
pub fn execute(plan: &Plan, opts: &RunOptions, before_measure: &mut dyn FnMut(&[PathBuf])) -> Result<RunResult, RunError> {
    match &plan.workload {
        Workload::Jobs(j) => jobs::run_with(j, opts, plan.layout, before_measure),
        Workload::Flow(f) => flow::run_with(f, opts, plan.layout, before_measure),
        Workload::Postmark(p) => postmark::run_plan(p, opts, plan.layout, before_measure),
        Workload::Iozone(p) => iozone::run_plan(p, opts, plan.layout, before_measure),
        Workload::Bonnie(p) => bonnie::run_plan(p, opts, plan.layout, before_measure),
        Workload::Ycsb(p) => ycsb::run_plan(p, opts, plan.layout, before_measure),
        Workload::Replay(p) => replay::run_plan(p, opts, plan.layout, before_measure),
    }
}
