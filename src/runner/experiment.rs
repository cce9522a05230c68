//! Runs an experiment matrix: for each target (set up once, torn down after
//! its cells), every workload × cache scenario × background load × repeat.
//! Each finished run is written at once (atomically), so an interrupted
//! experiment loses at most the run in progress and `--resume` skips the rest.

use crate::environment::background::BackgroundLoad;
use crate::environment::cache;
use crate::environment::target::ActiveTarget;
use crate::frontend::experiment::{expand, runtime_seconds, Experiment, FilebenchSource, Workload};
use crate::frontend::fio::{self, ParseOptions};
use crate::frontend::personalities;
use crate::frontend::wml::{self, WmlOptions};
use crate::model::environment::{CacheScenario, TargetSpec};
use crate::model::flow::FlowPlan;
use crate::model::job::JobSpec;
use crate::model::Plan;
use crate::result::experiment::{Attribution, Cell, ExperimentRun, RUN_SCHEMA};
use crate::result::RunResult;
use crate::runner::{self, RunOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct ExperimentOptions {
    pub out: PathBuf,
    pub resume: bool,
    pub allow_device: bool,
    pub stop: Arc<AtomicBool>,
    pub progress: bool,
}

/// One run to do: a cell and a repeat number.
struct Planned {
    cell: Cell,
    workload: usize,
    cache: usize,
    background: usize,
    repeat: u32,
}

fn plan(exp: &Experiment, target: &str) -> Vec<Planned> {
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
pub fn run(exp: &Experiment, opts: &ExperimentOptions) -> Result<usize, String> {
    let runs_dir = opts.out.join("runs");
    std::fs::create_dir_all(&runs_dir).map_err(|e| format!("cannot create {}: {e}", runs_dir.display()))?;
    let _ = std::fs::copy(&exp.file, opts.out.join("experiment.toml"));
    let total: usize = exp.targets.len() * plan(exp, "x").len();
    let mut done_before = 0;
    let bar = progress_bar(opts.progress, total as u64);
    let mut done_now = 0;
    let mut index = 0;
    for t in &exp.targets {
        let todo: Vec<Planned> = plan(exp, &t.label)
            .into_iter()
            .filter(|p| {
                let exists = runs_dir.join(run_file_name(&p.cell, p.repeat)).exists();
                if exists && opts.resume {
                    done_before += 1;
                }
                !(exists && opts.resume)
            })
            .collect();
        index += done_before;
        bar.set_position(index as u64);
        done_before = 0;
        if todo.is_empty() {
            continue;
        }
        if opts.stop.load(Ordering::Relaxed) {
            break;
        }
        let mut active = ActiveTarget::setup(&t.label, &t.spec, opts.allow_device).map_err(|e| format!("target '{}': {e}", t.label))?;
        for p in todo {
            if opts.stop.load(Ordering::Relaxed) {
                break;
            }
            index += 1;
            let record = run_one(exp, &t.spec, &mut active, &p, opts)?;
            let partial = record.result.partial;
            let line = one_line(&record);
            if partial {
                eprintln!("[{index}/{total}] {line} — interrupted, not saved");
                break;
            }
            write_atomically(&runs_dir.join(run_file_name(&p.cell, p.repeat)), &record)?;
            done_now += 1;
            bar.set_position(index as u64);
            bar.suspend(|| eprintln!("[{index}/{total}] {line}"));
        }
        // Dropping the target unmounts and detaches what setup created.
        drop(active);
    }
    bar.finish_and_clear();
    Ok(done_now)
}

fn progress_bar(show: bool, total: u64) -> indicatif::ProgressBar {
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template("experiment [{bar:30}] {pos}/{len} runs, ETA {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar
}

fn run_one(
    exp: &Experiment,
    spec: &TargetSpec,
    active: &mut ActiveTarget,
    p: &Planned,
    opts: &ExperimentOptions,
) -> Result<ExperimentRun, String> {
    let w = &exp.workloads[p.workload];
    let plan = plan_for(exp, w, spec, &active.path)?;
    let run_opts = RunOptions {
        cache_controlled: exp.caches[p.cache] != CacheScenario::Warm,
        allow_device: opts.allow_device,
        keep_files: plan_keeps_files(&plan),
        stop: opts.stop.clone(),
        progress: false,
        command: vec![exp.file.display().to_string(), p.cell.key()],
    };
    let bg_dir = background_dir(spec, &active.path);
    // Once the files are in place: the cache scenario (its guard keeps a
    // polluted scenario's file and cached pages for the run), then the
    // background load, so a fresh mount never finds the load's files open.
    let (mut cache_step, mut load) = (None, Ok(None));
    let result = runner::execute(&plan, &run_opts, &mut |files| {
        let (report, guard) = cache::apply_guarded(&exp.caches[p.cache], Some(&mut *active), files);
        if !report.applied {
            eprintln!(
                "fsbench: warning: cache scenario '{}' did not take effect: {}",
                p.cell.cache,
                report.note.as_deref().unwrap_or("no reason given")
            );
        }
        cache_step = Some((report, guard));
        load = match &exp.backgrounds[p.background] {
            Some(b) => {
                b.spec(&bg_dir).and_then(|s| BackgroundLoad::start(&s).map_err(|e| format!("background load '{}': {e}", b.label))).map(Some)
            }
            None => Ok(None),
        };
    });
    let Some((cache_report, cache_guard)) = cache_step else {
        return Err(result.err().unwrap_or_else(|| "the run ended before its cache scenario was applied".into()));
    };
    drop(cache_guard);
    let load = load?;
    let bg_report = match load {
        Some(l) => Some(l.stop()?),
        None => None,
    };
    if let Some(e) = bg_report.as_ref().and_then(|b| b.error.as_ref()) {
        eprintln!("fsbench: warning: {}: the background load failed during the run: {e}", p.cell.key());
    }
    let result = result?;
    let attribution = attribute(&result, active, bg_report.as_ref().map(|b| b.bytes_written).unwrap_or(0));
    Ok(ExperimentRun {
        schema: RUN_SCHEMA.to_string(),
        experiment: exp.name.clone(),
        cell: p.cell.clone(),
        repeat: p.repeat,
        target: active.info.clone(),
        cache: cache_report,
        background: bg_report,
        attribution,
        result,
    })
}

/// fio jobs keep their laid-out files from one run to the next (each run
/// would otherwise start by writing them); a Filebench workload builds its
/// filesets in every run, so they go when the run ends.
fn plan_keeps_files(plan: &Plan) -> bool {
    matches!(plan, Plan::Jobs(_))
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
    let placeholder = Path::new("/nonexistent/fsbench-check");
    let mut out = Vec::new();
    for w in &exp.workloads {
        let Ok(plan) = plan_for(exp, w, &exp.targets[0].spec, placeholder) else { continue };
        let allocates =
            |j: &JobSpec| j.rw.writes() && (!j.direct || j.fallocate == crate::model::job::Fallocate::None || j.create_on_open || j.unlink);
        let any_allocates = match &plan {
            Plan::Jobs(jobs) => jobs.iter().any(allocates),
            // Creating, appending and writing whole files allocate; assume a
            // Filebench workload that writes at all does.
            Plan::Flow(f) => f.processes.iter().flat_map(|p| &p.threads).flat_map(|t| &t.flowops).any(|o| {
                o.kind.direction() == crate::model::flow::Direction::Write || o.kind == crate::model::flow::FlowopKind::CreateFile
            }),
        };
        if !any_allocates {
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

/// The workload's plan with `${…}` expanded; the target directory (or
/// device) is supplied unless the workload places its files itself.
fn plan_for(exp: &Experiment, w: &Workload, spec: &TargetSpec, target: &Path) -> Result<Plan, String> {
    match &w.filebench {
        Some(source) => flow_for(exp, w, source, spec, target).map(Plan::Flow),
        None => jobs_for(exp, w, spec, target).map(Plan::Jobs),
    }
}

/// A Filebench workload: `$dir` is the target unless `set` names it.
fn flow_for(exp: &Experiment, w: &Workload, source: &FilebenchSource, spec: &TargetSpec, target: &Path) -> Result<FlowPlan, String> {
    let what = |e: String| format!("workload '{}': {e}", w.label);
    if matches!(spec, TargetSpec::Device(_)) {
        return Err(what("a Filebench workload needs a directory or a managed file system, not a raw device".into()));
    }
    let mut sets = Vec::with_capacity(w.sets.len() + 1);
    for (k, v) in &w.sets {
        sets.push((k.clone(), expand(v, &exp.params, Some(target)).map_err(what)?));
    }
    if !sets.iter().any(|(k, _)| k == "dir") {
        sets.push(("dir".into(), target.display().to_string()));
    }
    let (text, origin, name) = match source {
        FilebenchSource::Personality(n) => {
            let p = personalities::find(n).ok_or_else(|| what(format!("no personality named '{n}'")))?;
            (p.text.to_string(), format!("builtin:{n}"), n.clone())
        }
        FilebenchSource::File(f) => {
            let t = std::fs::read_to_string(f).map_err(|e| what(format!("cannot read {}: {e}", f.display())))?;
            let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| w.label.clone());
            (t, f.display().to_string(), stem)
        }
    };
    let runtime_s = match &w.runtime {
        Some(r) => Some(runtime_seconds(&expand(r, &exp.params, Some(target)).map_err(what)?).map_err(what)?),
        None => None,
    };
    let opts = WmlOptions { sets, runtime_s, ..Default::default() };
    let parsed = wml::parse(&text, &origin, &name, &opts).map_err(|e| what(e.to_string()))?;
    for warning in parsed.warnings {
        eprintln!("fsbench: warning: {warning}");
    }
    Ok(parsed.plan)
}

/// A fio workload's jobs.
fn jobs_for(exp: &Experiment, w: &Workload, spec: &TargetSpec, target: &Path) -> Result<Vec<JobSpec>, String> {
    let mut args = Vec::with_capacity(w.args.len() + 1);
    for a in &w.args {
        args.push(expand(a, &exp.params, Some(target)).map_err(|e| format!("workload '{}': {e}", w.label))?);
    }
    let places_files = args.iter().any(|a| a.starts_with("--directory=") || a.starts_with("--filename="));
    if !places_files {
        args.push(match spec {
            TargetSpec::Device(d) => format!("--filename={}", d.display()),
            _ => format!("--directory={}", target.display()),
        });
    }
    let files: Vec<PathBuf> = w.fio_file.iter().cloned().collect();
    let parsed = fio::parse(&files, &args, &ParseOptions::default()).map_err(|e| format!("workload '{}': {e}", w.label))?;
    for warning in parsed.warnings {
        eprintln!("fsbench: warning: {warning}");
    }
    Ok(parsed.jobs)
}

/// Device bytes for the target's device, next to what the workload and the
/// background load issued.
fn attribute(r: &RunResult, target: &ActiveTarget, background_write_bytes: u64) -> Attribution {
    let want = target.info.device.as_ref().and_then(|d| d.file_name()).map(|n| n.to_string_lossy().to_string());
    let mut dev_read = None;
    let mut dev_write = None;
    for g in &r.groups {
        let underlying: Vec<&String> = g.devices.iter().flat_map(|d| d.underlying.iter()).collect();
        for d in &g.devices {
            let is_target = match &want {
                Some(w) => &d.name == w,
                None => !underlying.contains(&&d.name),
            };
            if is_target {
                *dev_read.get_or_insert(0) += d.delta.read_sectors * 512;
                *dev_write.get_or_insert(0) += d.delta.write_sectors * 512;
            }
        }
    }
    let ((_, read), (_, write)) =
        r.jobs.iter().map(|j| j.issued()).fold(((0, 0), (0, 0)), |((a, b), (c, d)), ((e, f), (g, h))| ((a + e, b + f), (c + g, d + h)));
    let storage: u64 = r.groups.iter().map(|g| g.process_io.write_bytes).sum();
    Attribution {
        benchmark_read_bytes: read,
        benchmark_write_bytes: write,
        benchmark_storage_write_bytes: storage,
        background_write_bytes,
        device_read_bytes: dev_read,
        device_write_bytes: dev_write,
        // Capped at 1: buffered data the benchmark dirtied but the kernel had
        // not written back by the end of the run never reached the device.
        benchmark_share_of_device_writes: dev_write.filter(|&d| d > 0).map(|d| storage.min(d) as f64 / d as f64),
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
            let lead = i == 0 || (h.unit == "IOPS" && op_class.is_some_and(|k| k != crate::result::OpClass::Sync));
            if lead && !figures.iter().any(|f| f.starts_with(&format!("{} {} ", j.name, h.name))) {
                figures.push(format!("{} {} {:.0} {}", j.name, h.name, h.value, h.unit));
            }
        }
    }
    format!("{} / {} / {} / {} / r{}: {}", c.target, c.workload, c.cache, c.background, r.repeat, figures.join(", "))
}

fn write_atomically(path: &Path, record: &ExperimentRun) -> Result<(), String> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(record).map_err(|e| e.to_string())?;
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot rename {}: {e}", tmp.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delalloc_study_flags_only_the_non_allocating_workloads() {
        let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments/delalloc.toml");
        let exp = crate::frontend::experiment::load(&f, &[]).unwrap();
        let w = allocation_warnings(&exp);
        let flagged: Vec<&str> =
            exp.workloads.iter().map(|w| w.label.as_str()).filter(|l| w.iter().any(|x| x.contains(&format!("'{l}'")))).collect();
        assert_eq!(flagged, vec!["seed-job", "seed-write-fsync1"], "{w:?}");
    }

    #[test]
    fn no_allocation_warning_without_differing_allocation_settings() {
        let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments/environment.toml");
        let exp = crate::frontend::experiment::load(&f, &[]).unwrap();
        assert!(allocation_warnings(&exp).is_empty());
    }

    #[test]
    fn every_cell_and_repeat_is_planned_once() {
        let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments/environment.toml");
        let exp = crate::frontend::experiment::load(&f, &[]).unwrap();
        let p = plan(&exp, "t");
        assert_eq!(p.len(), exp.workloads.len() * 3 * 3 * 3);
        assert_eq!(exp.workloads.len(), 4);
        let names: std::collections::HashSet<String> = p.iter().map(|x| run_file_name(&x.cell, x.repeat)).collect();
        assert_eq!(names.len(), p.len());
    }
}
