//! Runs an experiment matrix: every target × workload × cache scenario ×
//! background load × repeat, in the order `order::schedule` gives (each
//! target set up at its first run and torn down after its last), each run's
//! place and the machine's load around it recorded (`host_load`).
//! Before anything is set up, `preflight` checks every target and plans
//! every workload for every target it runs on, and `write_record` puts the experiment
//! file and its plan in the results directory. Each finished run is written
//! at once (atomically), so an interrupted experiment loses at most the run
//! in progress and `--resume` skips the rest. A run that cannot be planned
//! or run, or whose target cannot be set up, is recorded as failed and the
//! rest go on (unless `fail_fast`). Workloads come as recipes: this module
//! plans them per target without knowing which tool's syntax they were
//! written in.

use crate::environment::target::{self, ActiveTarget};
use crate::model::environment::TargetSpec;
use crate::model::experiment::{Experiment, MatrixWorkload, Target};
use crate::model::recipe::Placement;
use crate::result::cache::CacheReport;
use crate::result::experiment::{
    Attribution, Cell, ExperimentPlan, ExperimentRun, PlannedBackground, PlannedRun, PlannedTarget, PlannedWorkload, RunOrder,
    EXPERIMENT_COPY, PLAN_FILE, PLAN_SCHEMA, RUN_SCHEMA,
};
use crate::result::target::TargetRecord;
use crate::result::warning::{Code, Warning};
use crate::result::{OpClass, RunResult};
use crate::runner::cell::{run_cell, CellRun, Environment};
use crate::runner::events::{Events, Expected, Meter};
use crate::runner::host_load::LoadWatch;
use crate::runner::order::schedule;
use crate::runner::RunOptions;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct ExperimentOptions {
    pub out: PathBuf,
    pub resume: bool,
    pub allow_device: bool,
    pub allow_fill: bool,
    /// Stop at the first failed run instead of going on with the rest.
    pub fail_fast: bool,
    pub stop: Arc<AtomicBool>,
    /// The experiment's progress (runs done of all), and every run's
    /// warnings, prefixed with its cell.
    pub events: Arc<dyn Events>,
}

/// Why an experiment stopped before its matrix was done: its results could
/// not be written. (A run that fails is a failed run, not this.)
#[derive(Debug)]
pub struct WriteError(pub String);

impl fmt::Display for WriteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for WriteError {}

/// One run to do: a cell and a repeat number, with the indexes of its axes.
#[derive(Clone, Debug)]
pub struct Planned {
    pub cell: Cell,
    pub workload: usize,
    pub cache: usize,
    pub background: usize,
    pub repeat: u32,
}

/// The runs of one target, in the order they run: a workload restricted
/// to other targets (`targets = [...]`) has none here.
pub fn matrix(exp: &Experiment, target: &str) -> Vec<Planned> {
    let mut v = Vec::new();
    for (wi, w) in exp.workloads.iter().enumerate().filter(|(_, w)| w.runs_on(target)) {
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

/// Where run `p` comes in the experiment's `schedule`.
fn position(schedule: &[Planned], p: &Planned) -> usize {
    schedule.iter().position(|q| q.cell == p.cell && q.repeat == p.repeat).unwrap_or(usize::MAX)
}

pub fn run_file_name(cell: &Cell, repeat: u32) -> String {
    format!("{}__r{repeat}.json", cell.key())
}

/// The record of `exp` started with `sets`: what its directory keeps so that
/// `--resume` runs the same experiment.
pub fn record(exp: &Experiment, sets: &[String]) -> ExperimentPlan {
    let file = std::path::absolute(&exp.file).unwrap_or_else(|_| exp.file.clone());
    let beside_target = Path::new("${target}");
    ExperimentPlan {
        schema: PLAN_SCHEMA.into(),
        experiment: exp.name.clone(),
        file,
        sets: sets.to_vec(),
        params: exp.params.clone(),
        repeat: exp.repeat,
        targets: exp.targets.iter().map(|t| PlannedTarget { label: t.label.clone(), spec: t.spec.clone() }).collect(),
        workloads: exp.workloads.iter().map(|w| PlannedWorkload { label: w.label.clone(), family: w.family.to_string() }).collect(),
        caches: exp.caches.clone(),
        backgrounds: exp
            .backgrounds
            .iter()
            .map(|b| PlannedBackground {
                label: b.as_ref().map(|b| b.label.clone()).unwrap_or_else(|| "none".into()),
                load: b.as_ref().map(|b| b.spec_in(beside_target)),
            })
            .collect(),
        runs: schedule(exp).into_iter().map(|p| PlannedRun { cell: p.cell, repeat: p.repeat }).collect(),
        order: exp.order,
        seed: exp.seed,
    }
}

/// Create the results directory and record in it the experiment file as
/// it was read (`text`) and its plan, before the first run.
pub fn write_record(out: &Path, text: &str, plan: &ExperimentPlan) -> Result<(), WriteError> {
    std::fs::create_dir_all(out).map_err(|e| WriteError(format!("cannot create {}: {e}", out.display())))?;
    let json = serde_json::to_string_pretty(plan).map_err(|e| WriteError(e.to_string()))?;
    write_atomically(&out.join(EXPERIMENT_COPY), text).map_err(WriteError)?;
    write_atomically(&out.join(PLAN_FILE), &json).map_err(WriteError)
}

/// Every check that needs no set-up, for every target and workload, so that
/// a typo in the last of them does not wait for the others to run: each
/// target's own checks, and each workload planned for each target (with its
/// `[params]` expanded). A target not yet set up has no path; the check
/// plans for a fresh empty directory instead, which is what a directory or
/// managed target gives a run. A cache scenario that cannot take effect on
/// a target is a problem unless `allow_uncontrolled`. Returns every problem
/// found.
pub fn preflight(exp: &Experiment, allow_device: bool, allow_uncontrolled: bool) -> Result<(), Vec<String>> {
    let mut problems = crate::runner::order::device_conflicts(exp);
    for t in &exp.targets {
        if let Err(e) = target::check(&t.spec, allow_device) {
            problems.push(format!("target '{}': {e}", t.label));
        }
        let managed = matches!(t.spec, TargetSpec::Managed { .. });
        for why in exp.caches.iter().filter_map(|c| crate::environment::cache::cannot_apply(c, managed)) {
            if !allow_uncontrolled {
                problems
                    .push(format!("target '{}': {why}; or pass --allow-uncontrolled to run it anyway, recorded as not applied", t.label));
            }
        }
    }
    let fresh = match tempfile::Builder::new().prefix("fsbench-check-").tempdir() {
        Ok(d) => d,
        Err(e) => return Err(vec![format!("cannot create a temporary directory to check the workloads in: {e}")]),
    };
    let placeholder = fresh.path().display().to_string();
    // The same error on several targets is one problem.
    let mut by_error: BTreeMap<(usize, String), Vec<&str>> = BTreeMap::new();
    for t in &exp.targets {
        // A device fsbench will create has no path yet: the stand-in
        // directory takes its place, planned as a device.
        let (path, is_device) = match &t.spec {
            TargetSpec::Device(dev) => (dev.clone(), true),
            TargetSpec::ManagedDevice(_) => (fresh.path().to_path_buf(), true),
            _ => (fresh.path().to_path_buf(), false),
        };
        let at = Placement { target: path, is_device, params: &exp.params };
        for (wi, w) in exp.workloads.iter().enumerate().filter(|(_, w)| w.runs_on(&t.label)) {
            // The files a workload writes besides its data (fio's logs,
            // IOzone's -b, ...) are outputs: never a device or under /dev.
            let outputs = |l: crate::model::recipe::Lowered| {
                crate::environment::safety::check_output_paths(&crate::environment::safety::plan_outputs(&l.plan))
            };
            if let Err(message) = w.recipe.plan(&at).map_err(|e| e.message).and_then(outputs) {
                by_error.entry((wi, message.replace(&placeholder, "${target}"))).or_default().push(&t.label);
            }
        }
    }
    for ((wi, message), targets) in by_error {
        let runs_on = exp.targets.iter().filter(|t| exp.workloads[wi].runs_on(&t.label)).count();
        let on = if targets.len() == runs_on && targets.len() > 1 {
            if runs_on == exp.targets.len() { "every target" } else { "every target it runs on" }.to_string()
        } else {
            let quoted: Vec<String> = targets.iter().map(|t| format!("'{t}'")).collect();
            format!("target {}", quoted.join(", "))
        };
        problems.push(format!("workload '{}' on {on}: {message}", exp.workloads[wi].label));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// What running the matrix did.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Runs written now, failed ones included.
    pub written: usize,
    /// Runs that had failed before this `--resume` and failed again (cell
    /// and repeat, and the error): resuming once more would only repeat them.
    pub failed_again: Vec<(String, String)>,
}

/// Run every run not yet on disk (with `resume`, failed ones again).
pub fn run(exp: &Experiment, opts: &ExperimentOptions) -> Result<Outcome, WriteError> {
    let runs_dir = opts.out.join("runs");
    std::fs::create_dir_all(&runs_dir).map_err(|e| WriteError(format!("cannot create {}: {e}", runs_dir.display())))?;
    let schedule = schedule(exp);
    let total = schedule.len();
    let meter = Arc::new(Meter::default());
    opts.events.measuring("experiment", &Expected { ops: total as u64, ..Default::default() }, meter.clone());
    let mut progress = Progress { exp, opts, runs_dir, total, meter, index: 0, outcome: Outcome::default(), failed: false, schedule };
    let result = progress.run_schedule();
    opts.events.measured();
    result.map(|_| progress.outcome)
}

/// Where the experiment is: runs counted so far (done ones included), what
/// was done now, and whether a run failed.
struct Progress<'a> {
    exp: &'a Experiment,
    opts: &'a ExperimentOptions,
    runs_dir: PathBuf,
    total: usize,
    meter: Arc<Meter>,
    index: usize,
    outcome: Outcome,
    failed: bool,
    /// Every run of the experiment, in the order they run.
    schedule: Vec<Planned>,
}

/// A run with its place in the schedule.
type Placed<'a> = (usize, &'a Planned);

/// A target of the experiment once its first run came: up (with the data
/// its runs left), or failed to set up (its runs fail with this).
enum Up {
    Active(Box<ActiveTarget>, DataOnTarget),
    Failed(String),
}

/// A run's place in the schedule and the machine's load around it.
fn run_order(p: &Planned, position: usize, started_unix_ms: u64, watch: &mut LoadWatch) -> RunOrder {
    let (load_end, others_cpu_pct) = watch.end();
    let runnable = watch.runnable();
    RunOrder { round: p.repeat, position, started_unix_ms, load_start: watch.load_start(), load_end, others_cpu_pct, runnable }
}

fn unix_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The data one set-up of a target holds for later workloads (a YCSB
/// load's store), by directory: what runs on it have left, and what was
/// rebuilt for a resumed experiment (or why the rebuild failed, which the
/// runs that read it fail with).
#[derive(Default)]
struct DataOnTarget {
    left: Vec<PathBuf>,
    rebuilt: Vec<(PathBuf, Result<Rebuilt, String>)>,
}

/// A run made again to rebuild data: which, and where its record is.
struct Rebuilt {
    run: Planned,
    file: String,
}

impl Rebuilt {
    /// What a run `p` that reads the rebuilt data `dir` says about it.
    fn note(&self, schedule: &[Planned], exp: &Experiment, dir: &Path, p: &Planned) -> String {
        let load = &exp.workloads[self.run.workload].label;
        // Runs between them on this target: what ran on other targets did not touch its data.
        let (from, to) = (position(schedule, &self.run), position(schedule, p));
        let between = schedule.get(from.saturating_add(1)..to).map_or(0, |s| s.iter().filter(|q| q.cell.target == p.cell.target).count());
        let not_redone = match between {
            0 => String::new(),
            n => format!("; what the {n} runs between them in the experiment's order changed in it (updates, inserts) was not redone"),
        };
        format!(
            "resumed on a new set-up of the target: the data in {} was rebuilt by running workload '{load}' again \
             ({} r{}, kept in rebuilds/{}, in no statistic){not_redone}",
            dir.display(),
            self.run.cell.key(),
            self.run.repeat,
            self.file
        )
    }
}

/// Whether the run that needed data can go on after `rebuild_for`.
enum Rebuild {
    /// Its data is there (or it reads none, or nothing earlier makes it).
    Ready,
    /// The run that rebuilds it failed: the dependent run fails with this.
    Failed(String),
    /// Stopped while rebuilding.
    Interrupted,
}

impl Progress<'_> {
    /// Stop before the next run: interrupted, or a run failed with `fail_fast`.
    fn stopping(&self) -> bool {
        self.opts.stop.load(Ordering::Relaxed) || (self.opts.fail_fast && self.failed)
    }

    fn run_schedule(&mut self) -> Result<(), WriteError> {
        let (exp, opts) = (self.exp, self.opts);
        let schedule = std::mem::take(&mut self.schedule);
        let (todo, done): (Vec<Placed>, Vec<Placed>) = schedule
            .iter()
            .enumerate()
            .partition(|(_, p)| !(opts.resume && completed(&self.runs_dir.join(run_file_name(&p.cell, p.repeat)))));
        self.index += done.len();
        self.meter.ops.store(self.index as u64, Ordering::Relaxed);
        // A target is set up at its first run to do and torn down after its last.
        let mut last: BTreeMap<&str, usize> = BTreeMap::new();
        for (k, (_, p)) in todo.iter().enumerate() {
            last.insert(&p.cell.target, k);
        }
        let mut up: BTreeMap<&str, Up> = BTreeMap::new();
        let result = (|| {
            for (k, &(position, p)) in todo.iter().enumerate() {
                if self.stopping() {
                    break;
                }
                let Some(t) = exp.targets.iter().find(|t| t.label == p.cell.target) else { continue };
                let state = up.entry(&t.label).or_insert_with(|| match ActiveTarget::setup(&t.label, &t.spec, opts.allow_device) {
                    Ok(a) => Up::Active(Box::new(a), DataOnTarget::default()),
                    // Every run of the target fails with it; --resume tries the target again.
                    Err(message) => Up::Failed(format!("target '{}' could not be set up: {message}", t.label)),
                });
                let record = match state {
                    Up::Failed(error) => {
                        let (mut watch, started_unix_ms) = (LoadWatch::start(), unix_ms());
                        let mut record = failed_run(exp, p, TargetRecord { label: t.label.clone(), ..TargetRecord::default() }, error);
                        record.order = Some(run_order(p, position, started_unix_ms, &mut watch));
                        record
                    }
                    Up::Active(active, data) => {
                        let (reads, leaves) = data_use(exp, t, active, p.workload);
                        let ready = self.rebuild_for(&schedule, t, active, p, reads.as_deref(), data)?;
                        let mut watch = LoadWatch::start();
                        let started_unix_ms = unix_ms();
                        let mut record = match ready {
                            Rebuild::Interrupted => break,
                            Rebuild::Failed(error) => failed_run(exp, p, active.info.clone(), &error),
                            Rebuild::Ready => run_one(exp, t, active, p, opts),
                        };
                        data.left.extend(leaves);
                        if record.result.partial || (record.result.failed.is_some() && opts.stop.load(Ordering::Relaxed)) {
                            // An interrupted run is not a result, nor a failure.
                            opts.events.note(&format!(
                                "[{}/{}] {} — interrupted, not saved",
                                self.index + 1,
                                self.total,
                                one_line(&record)
                            ));
                            break;
                        }
                        if let Some((dir, Ok(rebuilt))) = data.rebuilt.iter().find(|(d, _)| Some(d) == reads.as_ref()) {
                            record.result.warnings.push(Warning::new(Code::DataRebuilt, rebuilt.note(&schedule, exp, dir, p)));
                        }
                        record.order = Some(run_order(p, position, started_unix_ms, &mut watch));
                        record
                    }
                };
                // Only a failed run of an earlier attempt is on disk among the runs to do.
                let failed_before = self.runs_dir.join(run_file_name(&p.cell, p.repeat)).exists();
                if let (true, Some(e)) = (failed_before, &record.result.failed) {
                    self.outcome.failed_again.push((format!("{} r{}", p.cell.key(), p.repeat), e.clone()));
                }
                self.save(&p.cell, p.repeat, record)?;
                if last.get(t.label.as_str()) == Some(&k) {
                    // Dropping the target unmounts and detaches what setup created.
                    up.remove(t.label.as_str());
                }
            }
            Ok(())
        })();
        // The targets still up (stopped early) are torn down here.
        drop(up);
        result
    }

    /// Before run `p`, which reads the data in `reads` that an earlier
    /// workload leaves (a YCSB run phase reads its load's records): when no
    /// run on this set-up of the target has left it, which happens when
    /// `--resume` sets a target up anew after its load ran on the file
    /// system (or directory) that was torn down, run the nearest earlier
    /// workload that leaves it again first (once per set-up and data).
    ///
    /// Re-running the load is the honest way to get the data back, rather
    /// than keeping the image of a killed run for the next one: a file
    /// system or store killed mid-run holds whatever reached the disk by
    /// then (a store without synced writes loses its last ones, a file
    /// system replays its journal), which no one measured and nothing
    /// records; a load run again writes a known data set the same way the
    /// first did. The re-run is not one of the experiment's runs: it is
    /// written to `rebuilds/` (for inspection), no statistic includes it,
    /// and every run that reads the rebuilt data says so in its warnings,
    /// since what workloads between the load and it changed in the data
    /// (updates, inserts) is not redone.
    fn rebuild_for(
        &mut self,
        schedule: &[Planned],
        t: &Target,
        active: &mut ActiveTarget,
        p: &Planned,
        reads: Option<&Path>,
        data: &mut DataOnTarget,
    ) -> Result<Rebuild, WriteError> {
        let exp = self.exp;
        let Some(dir) = reads else { return Ok(Rebuild::Ready) };
        match data.rebuilt.iter().find(|(d, _)| d == dir) {
            Some((_, Err(e))) => return Ok(Rebuild::Failed(e.clone())),
            Some((_, Ok(_))) => return Ok(Rebuild::Ready),
            None if data.left.iter().any(|l| l == dir) => return Ok(Rebuild::Ready),
            None => {}
        }
        let maker =
            (0..p.workload).rev().find(|&wi| exp.workloads[wi].runs_on(&t.label) && data_use(exp, t, active, wi).1.as_deref() == Some(dir));
        // Its last run before `p` in the schedule on this target with the same
        // cache and background: the one whose data the uninterrupted
        // experiment would have read.
        let before = &schedule[..position(schedule, p).min(schedule.len())];
        let Some(load) = maker.and_then(|wi| {
            before
                .iter()
                .rev()
                .find(|q| q.cell.target == t.label && q.workload == wi && q.cache == p.cache && q.background == p.background)
                .cloned()
        }) else {
            return Ok(Rebuild::Ready);
        };
        let record = run_one(exp, t, active, &load, self.opts);
        if record.result.partial || (record.result.failed.is_some() && self.opts.stop.load(Ordering::Relaxed)) {
            self.opts.events.note(&format!("{} — rebuilding {}, interrupted", one_line(&record), dir.display()));
            return Ok(Rebuild::Interrupted);
        }
        let dir_out = self.opts.out.join("rebuilds");
        std::fs::create_dir_all(&dir_out).map_err(|e| WriteError(format!("cannot create {}: {e}", dir_out.display())))?;
        let name = format!("{}__r{}-{}.json", load.cell.key(), load.repeat, record.result.started_unix);
        let text = serde_json::to_string_pretty(&record).map_err(|e| WriteError(e.to_string()))?;
        write_atomically(&dir_out.join(&name), &text).map_err(WriteError)?;
        let load_label = &exp.workloads[load.workload].label;
        if let Some(e) = &record.result.failed {
            self.opts.events.note(&format!("{} — rebuilding {} FAILED: {e}", one_line(&record), dir.display()));
            let why = format!(
                "it reads the data workload '{load_label}' leaves in {}, which this set-up of the target did not have (resumed); \
                 running '{load_label}' again to rebuild it failed (rebuilds/{name}): {e}",
                dir.display()
            );
            data.rebuilt.push((dir.to_path_buf(), Err(why.clone())));
            return Ok(Rebuild::Failed(why));
        }
        self.opts.events.note(&format!(
            "{} — run again, not counted: it rebuilds {} for the runs that read it",
            one_line(&record),
            dir.display()
        ));
        data.rebuilt.push((dir.to_path_buf(), Ok(Rebuilt { run: load, file: name })));
        Ok(Rebuild::Ready)
    }

    /// Write a finished (or failed) run and show it.
    fn save(&mut self, cell: &Cell, repeat: u32, record: ExperimentRun) -> Result<(), WriteError> {
        self.index += 1;
        let mut line = one_line(&record);
        if let Some(e) = &record.result.failed {
            line = format!("{line} — FAILED: {e}");
            self.failed = true;
        }
        let text = serde_json::to_string_pretty(&record).map_err(|e| WriteError(e.to_string()))?;
        write_atomically(&self.runs_dir.join(run_file_name(cell, repeat)), &text).map_err(WriteError)?;
        self.outcome.written += 1;
        self.meter.ops.store(self.index as u64, Ordering::Relaxed);
        self.opts.events.note(&format!("[{}/{}] {line}", self.index, self.total));
        Ok(())
    }
}

/// A run's warnings and notes, prefixed with its cell (the display may
/// show a warning once for the experiment, at the first cell that says it); its own measured
/// windows are not shown (the experiment's progress is).
struct CellEvents {
    inner: Arc<dyn Events>,
    prefix: String,
}

impl Events for CellEvents {
    fn warning(&self, w: &Warning) {
        self.inner.warning_at(&self.prefix, w);
    }
    fn note(&self, text: &str) {
        self.inner.note(text);
    }
    fn measuring(&self, _: &str, _: &Expected, _: Arc<Meter>) {}
    fn measured(&self) {}
    fn wait_for_user(&self, prompt: &str) -> Result<(), String> {
        self.inner.wait_for_user(prompt)
    }
}

/// One run; one that cannot be planned or run is a failed run.
fn run_one(exp: &Experiment, t: &Target, active: &mut ActiveTarget, p: &Planned, opts: &ExperimentOptions) -> ExperimentRun {
    let w = &exp.workloads[p.workload];
    let at = Placement { target: active.path.clone(), is_device: is_raw(&t.spec), params: &exp.params };
    let lowered = match w.recipe.plan(&at) {
        Ok(l) => l,
        Err(e) => return failed_run(exp, p, active.info.clone(), &e.to_string()),
    };
    let events: Arc<dyn Events> = Arc::new(CellEvents { inner: opts.events.clone(), prefix: p.cell.key() });
    for warning in &lowered.warnings {
        events.warning(warning);
    }
    let plan = lowered.plan;
    let run_opts = RunOptions {
        cache_controlled: false,
        // The refusal guards the user's devices, not the scratch device
        // this target created (its other checks still apply).
        allow_device: opts.allow_device || active.owns_device(),
        allow_fill: opts.allow_fill,
        keep_files: plan.workload.shape().keeps_files_between_runs(),
        stop: opts.stop.clone(),
        events,
        command: command(exp, p),
    };
    let background = exp.backgrounds[p.background].as_ref().map(|b| b.spec_in(&background_dir(&t.spec, &active.path)));
    // A cell's trace sits next to its run file: traces/CELL-rN.blktrace.*.
    let trace_base = opts.out.join("traces").join(format!("{}-r{}", p.cell.key(), p.repeat));
    let trace = exp.trace.as_ref().map(|t| (t, t.output.clone().unwrap_or(trace_base)));
    let env = Environment { cache: Some(&exp.caches[p.cache]), background: background.as_ref(), target: Some(&mut *active), trace };
    let mut record = match run_cell(&plan, env, &run_opts) {
        Ok(cell) => saved_run(exp, p, active.info.clone(), cell),
        Err(e) => failed_run(exp, p, active.info.clone(), &e.to_string()),
    };
    super::experiment_space::explain_enospc(&mut record.result.failed);
    record
}

/// What workload `wi` reads that an earlier one leaves, and what it leaves
/// for later ones (see `Shape::reads_earlier_data`), as planned on `active`;
/// nothing when it cannot be planned (its run fails and says why).
fn data_use(exp: &Experiment, t: &Target, active: &ActiveTarget, wi: usize) -> (Option<PathBuf>, Option<PathBuf>) {
    let at = Placement { target: active.path.clone(), is_device: is_raw(&t.spec), params: &exp.params };
    match exp.workloads[wi].recipe.plan(&at) {
        Ok(l) => (l.plan.workload.shape().reads_earlier_data(), l.plan.workload.shape().leaves_data()),
        Err(_) => (None, None),
    }
}

fn command(exp: &Experiment, p: &Planned) -> Vec<String> {
    vec![exp.file.display().to_string(), p.cell.key()]
}

/// A run as its file in `runs/` holds it.
fn saved_run(exp: &Experiment, p: &Planned, target: TargetRecord, cell: CellRun) -> ExperimentRun {
    ExperimentRun {
        schema: RUN_SCHEMA.to_string(),
        experiment: exp.name.clone(),
        cell: p.cell.clone(),
        repeat: p.repeat,
        target,
        cache: cell.cache.unwrap_or_default(),
        background: cell.background,
        attribution: cell.attribution,
        result: cell.result,
        order: None,
    }
}

/// The record of a run that produced no result: nothing measured, its
/// error kept, so statistics leave it out and `--resume` redoes it.
fn failed_run(exp: &Experiment, p: &Planned, target: TargetRecord, error: &str) -> ExperimentRun {
    let cache =
        CacheReport { scenario: exp.caches[p.cache].label(), note: Some("not applied: the run failed".into()), ..Default::default() };
    let result = RunResult {
        schema: crate::result::SCHEMA.to_string(),
        fsbench_version: env!("CARGO_PKG_VERSION").to_string(),
        started_unix: crate::runner::unix_now(),
        command: command(exp, p),
        layout: exp.workloads[p.workload].family.to_string(),
        jobs: Vec::new(),
        groups: Vec::new(),
        system: crate::environment::system::snapshot(&[]),
        warnings: Vec::new(),
        partial: false,
        failed: Some(error.to_string()),
        trace: None,
    };
    saved_run(exp, p, target, CellRun { result, cache: Some(cache), background: None, attribution: Attribution::default() })
}

/// Mount options that only change block allocation.
const ALLOCATION_OPTIONS: &[&str] = &["delalloc", "nodelalloc"];

/// When targets differ in allocation settings, say which workloads cannot
/// show a difference: they only read, or only overwrite blocks that were
/// allocated before the run (O_DIRECT into a laid-out or preallocated file).
pub fn allocation_warnings(exp: &Experiment) -> Vec<Warning> {
    let alloc_opts = |spec: &TargetSpec| -> Vec<String> {
        match spec {
            TargetSpec::Managed { mount_options, .. } => {
                mount_options.split(',').filter(|o| ALLOCATION_OPTIONS.contains(o)).map(str::to_string).collect()
            }
            _ => Vec::new(),
        }
    };
    // Only the targets a workload runs on can show it an effect.
    let differ = |w: &MatrixWorkload| {
        let mut settings: Vec<Vec<String>> = exp.targets.iter().filter(|t| w.runs_on(&t.label)).map(|t| alloc_opts(&t.spec)).collect();
        settings.sort();
        settings.dedup();
        settings.len() >= 2
    };
    let at = Placement { target: PathBuf::from("/nonexistent/fsbench-check"), is_device: false, params: &exp.params };
    let mut out = Vec::new();
    for w in exp.workloads.iter().filter(|w| differ(w)) {
        let Ok(lowered) = w.recipe.plan(&at) else { continue };
        if !lowered.plan.workload.shape().allocates() {
            out.push(Warning::new(
                Code::NoAllocationEffect,
                format!(
                    "workload '{}' cannot show an allocation effect: it only reads, or its writes are O_DIRECT overwrites of files laid out before the run, which never allocate; compare buffered writes to new, growing or sparse files",
                    w.label
                ),
            ));
        }
    }
    out
}

/// Background files go where the workload's files go, so their writes hit
/// the same device (the seed's setting); a raw device has no file system, so
/// its background load runs in the system's temporary directory.
fn background_dir(spec: &TargetSpec, target: &Path) -> PathBuf {
    if is_raw(spec) {
        std::env::temp_dir().join("fsbench-background")
    } else {
        target.join("fsbench-background")
    }
}

/// The target is a block device written directly, not a directory.
fn is_raw(spec: &TargetSpec) -> bool {
    matches!(spec, TargetSpec::Device(_) | TargetSpec::ManagedDevice(_))
}

/// Longest progress line a run's figures make it (an 80-column terminal
/// wraps the rest once, not fifteen times).
const LINE_MAX: usize = 120;

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
    let run = format!("{} / {} / {} / {} / r{}", c.target, c.workload, c.cache, c.background, r.repeat);
    if figures.is_empty() {
        return run;
    }
    // One terminal line: an IOzone sweep has a figure per cell (dozens);
    // all of them are in the run's record and the report.
    let mut line = format!("{run}: {}", figures[0]);
    let mut shown = 1;
    for f in &figures[1..] {
        if line.chars().count() + f.len() + 16 > LINE_MAX {
            break;
        }
        line = format!("{line}, {f}");
        shown += 1;
    }
    if shown < figures.len() {
        let _ = std::fmt::Write::write_fmt(&mut line, format_args!(", +{} more", figures.len() - shown));
    }
    line
}

/// A run on disk that `--resume` need not redo: it loads and did not fail.
fn completed(path: &Path) -> bool {
    path.exists() && crate::result::load::load_file(path).is_ok_and(|runs| runs.iter().all(|r| r.failed.is_none()))
}

/// Write `text` to a temporary file beside `path`, then rename it there.
fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))
}
