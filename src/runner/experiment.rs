//! Runs an experiment matrix: for each target (set up once, torn down after
//! its cells), every workload × cache scenario × background load × repeat.
//! Each finished run is written at once (atomically), so an interrupted
//! experiment loses at most the run in progress and `--resume` skips the rest.
//! Workloads come as recipes: this module plans them per target without
//! knowing which tool's syntax they were written in.

use crate::environment::target::ActiveTarget;
use crate::model::environment::TargetSpec;
use crate::model::experiment::Experiment;
use crate::model::recipe::{Placement, RecipeError};
use crate::result::experiment::{Cell, ExperimentRun, RUN_SCHEMA};
use crate::result::OpClass;
use crate::runner::cell::{run_cell, Environment};
use crate::runner::events::{Events, Expected, Meter};
use crate::runner::{RunError, RunOptions};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct ExperimentOptions {
    pub out: PathBuf,
    pub resume: bool,
    pub allow_device: bool,
    pub allow_fill: bool,
    pub stop: Arc<AtomicBool>,
    /// The experiment's progress (runs done of all), and every run's
    /// warnings, prefixed with its cell.
    pub events: Arc<dyn Events>,
}

/// Why an experiment stopped before its matrix was done.
#[derive(Debug)]
pub enum ExperimentRunError {
    Target { label: String, message: String },
    Plan(RecipeError),
    Run { cell: String, error: RunError },
    Write(String),
}

impl fmt::Display for ExperimentRunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExperimentRunError::Target { label, message } => write!(f, "target '{label}': {message}"),
            ExperimentRunError::Plan(e) => write!(f, "{e}"),
            ExperimentRunError::Run { cell, error } => write!(f, "{cell}: {error}"),
            ExperimentRunError::Write(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ExperimentRunError {}

/// One run to do: a cell and a repeat number, with the indexes of its axes.
pub struct Planned {
    pub cell: Cell,
    pub workload: usize,
    pub cache: usize,
    pub background: usize,
    pub repeat: u32,
}

/// The runs of one target, in the order they run.
pub fn matrix(exp: &Experiment, target: &str) -> Vec<Planned> {
    let mut v = Vec::new();
    for (wi, w) in exp.workloads.iter().enumerate() {
        for (ci, c) in exp.caches.iter().enumerate() {
            for (bi, b) in exp.backgrounds.iter().enumerate() {
                for repeat in 1..=exp.repeat {
                    let cell = Cell {
                        target: target.to_string(),
                        workload: w.label.clone(),
                        cache: c.label(),
                        background: b.as_ref().map(|b| b.label.clone()).unwrap_or_else(|| "none".into()),
                    };
                    v.push(Planned { cell, workload: wi, cache: ci, background: bi, repeat });
                }
            }
        }
    }
    v
}

pub fn run_file_name(cell: &Cell, repeat: u32) -> String {
    format!("{}__r{repeat}.json", cell.key())
}

/// Run every cell not yet on disk. Returns the number of runs done now.
pub fn run(exp: &Experiment, opts: &ExperimentOptions) -> Result<usize, ExperimentRunError> {
    let runs_dir = opts.out.join("runs");
    std::fs::create_dir_all(&runs_dir).map_err(|e| ExperimentRunError::Write(format!("cannot create {}: {e}", runs_dir.display())))?;
    let _ = std::fs::copy(&exp.file, opts.out.join("experiment.toml"));
    let total: usize = exp.targets.len() * matrix(exp, "x").len();
    let meter = Arc::new(Meter::default());
    opts.events.measuring("experiment", &Expected { ops: total as u64, ..Default::default() }, meter.clone());
    let outcome = run_targets(exp, opts, &runs_dir, total, &meter);
    opts.events.measured();
    outcome
}

fn run_targets(
    exp: &Experiment,
    opts: &ExperimentOptions,
    runs_dir: &Path,
    total: usize,
    meter: &Meter,
) -> Result<usize, ExperimentRunError> {
    let mut done_now = 0;
    let mut index = 0;
    for t in &exp.targets {
        let (todo, done): (Vec<Planned>, Vec<Planned>) =
            matrix(exp, &t.label).into_iter().partition(|p| !(opts.resume && completed(&runs_dir.join(run_file_name(&p.cell, p.repeat)))));
        index += done.len();
        meter.ops.store(index as u64, Ordering::Relaxed);
        if todo.is_empty() {
            continue;
        }
        if opts.stop.load(Ordering::Relaxed) {
            break;
        }
        let mut active = ActiveTarget::setup(&t.label, &t.spec, opts.allow_device)
            .map_err(|message| ExperimentRunError::Target { label: t.label.clone(), message })?;
        for p in todo {
            if opts.stop.load(Ordering::Relaxed) {
                break;
            }
            index += 1;
            let record = run_one(exp, &t.spec, &mut active, &p, opts)?;
            let mut line = one_line(&record);
            if let Some(e) = &record.result.failed {
                line = format!("{line} — FAILED: {e}");
            }
            if record.result.partial {
                opts.events.note(&format!("[{index}/{total}] {line} — interrupted, not saved"));
                break;
            }
            write_atomically(&runs_dir.join(run_file_name(&p.cell, p.repeat)), &record).map_err(ExperimentRunError::Write)?;
            done_now += 1;
            meter.ops.store(index as u64, Ordering::Relaxed);
            opts.events.note(&format!("[{index}/{total}] {line}"));
        }
        // Dropping the target unmounts and detaches what setup created.
        drop(active);
    }
    Ok(done_now)
}

/// A run's warnings and notes, prefixed with its cell; its own measured
/// windows are not shown (the experiment's progress is).
struct CellEvents {
    inner: Arc<dyn Events>,
    prefix: String,
}

impl Events for CellEvents {
    fn warning(&self, text: &str) {
        self.inner.warning(&format!("{}: {text}", self.prefix));
    }
    fn note(&self, text: &str) {
        self.inner.note(text);
    }
    fn measuring(&self, _: &str, _: &Expected, _: Arc<Meter>) {}
    fn measured(&self) {}
}

fn run_one(
    exp: &Experiment,
    spec: &TargetSpec,
    active: &mut ActiveTarget,
    p: &Planned,
    opts: &ExperimentOptions,
) -> Result<ExperimentRun, ExperimentRunError> {
    let w = &exp.workloads[p.workload];
    let at = Placement { target: active.path.clone(), is_device: matches!(spec, TargetSpec::Device(_)), params: &exp.params };
    let lowered = w.recipe.plan(&at).map_err(ExperimentRunError::Plan)?;
    let events: Arc<dyn Events> = Arc::new(CellEvents { inner: opts.events.clone(), prefix: p.cell.key() });
    for warning in &lowered.warnings {
        events.warning(warning);
    }
    let plan = lowered.plan;
    let run_opts = RunOptions {
        cache_controlled: false,
        allow_device: opts.allow_device,
        allow_fill: opts.allow_fill,
        keep_files: plan.workload.shape().keeps_files_between_runs(),
        stop: opts.stop.clone(),
        events,
        command: vec![exp.file.display().to_string(), p.cell.key()],
    };
    let background = exp.backgrounds[p.background].as_ref().map(|b| b.spec_in(&background_dir(spec, &active.path)));
    let env = Environment { cache: Some(&exp.caches[p.cache]), background: background.as_ref(), target: Some(&mut *active) };
    let cell = run_cell(&plan, env, &run_opts).map_err(|error| ExperimentRunError::Run { cell: p.cell.key(), error })?;
    Ok(ExperimentRun {
        schema: RUN_SCHEMA.to_string(),
        experiment: exp.name.clone(),
        cell: p.cell.clone(),
        repeat: p.repeat,
        target: active.info.clone(),
        cache: cell.cache.unwrap_or_default(),
        background: cell.background,
        attribution: cell.attribution,
        result: cell.result,
    })
}

/// Mount options that only change block allocation.
const ALLOCATION_OPTIONS: &[&str] = &["delalloc", "nodelalloc"];

/// When targets differ in allocation settings, say which workloads cannot
/// show a difference: they only read, or only overwrite blocks that were
/// allocated before the run (O_DIRECT into a laid-out or preallocated file).
pub fn allocation_warnings(exp: &Experiment) -> Vec<String> {
    let alloc_opts = |spec: &TargetSpec| -> Vec<String> {
        match spec {
            TargetSpec::Managed { mount_options, .. } => {
                mount_options.split(',').filter(|o| ALLOCATION_OPTIONS.contains(o)).map(str::to_string).collect()
            }
            _ => Vec::new(),
        }
    };
    let mut settings: Vec<Vec<String>> = exp.targets.iter().map(|t| alloc_opts(&t.spec)).collect();
    settings.sort();
    settings.dedup();
    if settings.len() < 2 {
        return Vec::new();
    }
    let at = Placement { target: PathBuf::from("/nonexistent/fsbench-check"), is_device: false, params: &exp.params };
    let mut out = Vec::new();
    for w in &exp.workloads {
        let Ok(lowered) = w.recipe.plan(&at) else { continue };
        if !lowered.plan.workload.shape().allocates() {
            out.push(format!(
                "workload '{}' cannot show an allocation effect: it only reads, or its writes are O_DIRECT overwrites of files laid out before the run, which never allocate; compare buffered writes to new, growing or sparse files",
                w.label
            ));
        }
    }
    out
}

/// Background files go where the workload's files go, so their writes hit
/// the same device (the seed's setting); a raw device has no file system, so
/// its background load runs in the system's temporary directory.
fn background_dir(spec: &TargetSpec, target: &Path) -> PathBuf {
    match spec {
        TargetSpec::Device(_) => std::env::temp_dir().join("fsbench-background"),
        _ => target.join("fsbench-background"),
    }
}

/// The progress line of a finished run: each unit's leading headline
/// figure, and the IOPS of each of its other non-sync operations.
fn one_line(r: &ExperimentRun) -> String {
    let c = &r.cell;
    let mut figures: Vec<String> = Vec::new();
    for j in &r.result.jobs {
        for (i, h) in j.headline.iter().enumerate() {
            let op_class = h.name.split('/').next().and_then(|op| j.op(op)).map(|o| o.class);
            let lead = i == 0 || (h.unit == "IOPS" && op_class.is_some_and(|k| k != OpClass::Sync));
            if lead && !figures.iter().any(|f| f.starts_with(&format!("{} {} ", j.name, h.name))) {
                figures.push(format!("{} {} {:.0} {}", j.name, h.name, h.value, h.unit));
            }
        }
    }
    format!("{} / {} / {} / {} / r{}: {}", c.target, c.workload, c.cache, c.background, r.repeat, figures.join(", "))
}

/// A run on disk that `--resume` need not redo: it loads and did not fail.
fn completed(path: &Path) -> bool {
    path.exists() && crate::result::load::load_file(path).is_ok_and(|runs| runs.iter().all(|r| r.failed.is_none()))
}

fn write_atomically(path: &Path, record: &ExperimentRun) -> Result<(), String> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(record).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))
}
