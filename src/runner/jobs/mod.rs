//! Executes fio-model jobs: groups (stonewall), clones (numjobs), files,
//! worker threads, and the accounting around each group.

pub mod files;
pub mod offsets;
pub mod progress;
pub mod worker;

use crate::host::proc_io::process_io;
use crate::measure::usage::{CpuUsage, UsageMark};
use crate::model::engine;
use crate::model::job::JobSpec;
use crate::observe::blockdev::DeviceWatch;
use crate::result::{GroupResult, JobResult, RunResult, Timeline};
use crate::runner::events::{Meter, Warnings};
use crate::runner::{envelope, unix_now, RunError, RunOptions};
use files::Ledger;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use worker::{ProgressCell, WorkerInput, WorkerOutput};

/// Run the jobs once `before_measure` has seen their files (every file of
/// every job and clone; some may not exist yet).
pub(crate) fn run_with(
    jobs: &[JobSpec],
    opts: &RunOptions,
    layout: &str,
    before_measure: &mut dyn FnMut(&[PathBuf]),
) -> Result<RunResult, RunError> {
    let files: Vec<PathBuf> = jobs.iter().flat_map(job_paths).collect();
    before_measure(&files);
    run(jobs.to_vec(), opts, layout)
}

/// Groups of jobs that run together: a job with `stonewall` or `new_group`
/// waits for everything before it.
pub fn groups(jobs: &[JobSpec]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, j) in jobs.iter().enumerate() {
        if out.is_empty() || j.stonewall || j.new_group {
            out.push(Vec::new());
        }
        out.last_mut().expect("a group").push(i);
    }
    out
}

/// Settings that silently do nothing in fio get a warning that says why.
pub fn warnings_for(spec: &JobSpec) -> Vec<String> {
    let mut w = Vec::new();
    let Some(info) = engine::find(&spec.ioengine) else { return w };
    let name = &spec.name;
    if spec.iodepth > 1 && !info.caps.is_async {
        w.push(format!(
            "job '{name}': iodepth={} has no effect with ioengine={}: a synchronous engine keeps one I/O in flight per thread; use libaio or io_uring (with direct=1) for a deeper queue",
            spec.iodepth, info.name
        ));
    }
    if spec.iodepth > 1 && info.caps.is_async && !spec.direct && info.caps.inline_when_buffered {
        w.push(format!(
            "job '{name}': ioengine={} completes buffered I/O inside the submit call, so iodepth={} behaves like iodepth=1; add direct=1",
            info.name, spec.iodepth
        ));
    }
    if info.name == "io_uring" && !spec.direct {
        w.push(format!(
            "job '{name}': buffered io_uring is served by kernel io-wq worker threads; their CPU is counted in fsbench's CPU figures (fio leaves it out)"
        ));
    }
    if info.caps.mapped && (spec.direct || spec.sync != crate::model::job::SyncMode::None) {
        w.push(format!("job '{name}': direct= and sync= do not apply to ioengine=mmap, which copies through a memory mapping"));
    }
    if spec.rw.is_random() && !spec.norandommap && !(spec.bs[0].is_fixed() && spec.bs[1].is_fixed()) {
        w.push(format!("job '{name}': variable block sizes use uniform random offsets (as with norandommap)"));
    }
    w
}

/// Buffered I/O over a working set that fits in RAM, with nothing done about
/// the page cache, measures memory as much as storage.
fn cache_warning(jobs: &[JobSpec]) -> Option<String> {
    let buffered: Vec<&JobSpec> = jobs.iter().filter(|j| !j.direct && j.ioengine != "null" && files::file_use(j).opened()).collect();
    if buffered.is_empty() {
        return None;
    }
    let set: u64 = buffered.iter().map(|j| j.size.unwrap_or(0) * j.numjobs as u64).sum();
    let ram = crate::host::meminfo::read_meminfo().total;
    (set > 0 && ram > 0 && set < ram).then(|| {
        format!(
            "buffered I/O over a {} working set, which fits in RAM ({}), with the page cache not controlled: results may show memory speed; use direct=1, --cache=cold, or a larger size",
            crate::units::bytes(set),
            crate::units::bytes(ram)
        )
    })
}

/// Run every job; interrupted runs come back marked partial. `layout`
/// names the renderer of the result (`fio`, or the layout of a frontend
/// that lowers into jobs).
pub(crate) fn run(jobs: Vec<JobSpec>, opts: &RunOptions, layout: &str) -> Result<RunResult, RunError> {
    let started_unix = unix_now();
    let mut warnings = Warnings::new(&*opts.events);
    for w in jobs.iter().flat_map(warnings_for) {
        warnings.warn(w);
    }
    if !opts.cache_controlled {
        if let Some(w) = cache_warning(&jobs) {
            warnings.warn(w);
        }
    }
    crate::environment::space::check(&files::space_needs(&jobs), opts.allow_fill)?;
    let mut ledger = Ledger::default();
    let mut results = Vec::new();
    let mut group_results = Vec::new();
    let mut targets: Vec<PathBuf> = Vec::new();
    let mut failure = None;
    for (gid, members) in groups(&jobs).into_iter().enumerate() {
        if opts.stop.load(Ordering::Relaxed) {
            break;
        }
        match run_group(gid as u32, &members, &jobs, opts, &mut ledger, &mut targets) {
            Ok((mut jr, gr)) => {
                results.append(&mut jr);
                group_results.push(gr);
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    let partial = opts.stop.load(Ordering::Relaxed);
    let cleanup_all = (partial || failure.is_some()) && !opts.keep_files;
    let unlink: Vec<PathBuf> = if opts.keep_files { Vec::new() } else { jobs.iter().filter(|j| j.unlink).flat_map(job_paths).collect() };
    for e in ledger.remove_where(|p| cleanup_all || unlink.iter().any(|u| u == p)) {
        warnings.warn(e);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    Ok(envelope(opts, layout, started_unix, results, group_results, &targets, warnings.list, partial))
}

fn job_paths(spec: &JobSpec) -> Vec<PathBuf> {
    (0..spec.numjobs).flat_map(|c| files::paths(spec, c)).collect()
}

struct Clone {
    job: usize,
    input: WorkerInput,
}

fn run_group(
    gid: u32,
    members: &[usize],
    jobs: &[JobSpec],
    opts: &RunOptions,
    ledger: &mut Ledger,
    targets: &mut Vec<PathBuf>,
) -> Result<(Vec<JobResult>, GroupResult), RunError> {
    let mut clones = Vec::new();
    for &j in members {
        let spec = Arc::new(jobs[j].clone());
        for c in 0..spec.numjobs {
            let prepared = files::prepare(&spec, c, opts.allow_device, ledger)?;
            let uses = files::file_use(&spec);
            if spec.invalidate && uses.opened() {
                for f in &prepared {
                    files::invalidate(f)?;
                }
            }
            for f in prepared.iter().filter(|_| uses != engine::FileUse::None) {
                let t = target_of(&f.path);
                if !targets.contains(&t) {
                    targets.push(t);
                }
            }
            clones.push(Clone {
                job: j,
                input: WorkerInput {
                    spec: spec.clone(),
                    clone: c,
                    files: prepared,
                    stop: opts.stop.clone(),
                    progress: Arc::new(ProgressCell::default()),
                },
            });
        }
    }
    let watch_paths: Vec<PathBuf> = clones.iter().flat_map(|c| c.input.files.iter().map(|f| f.path.clone())).collect();
    let refs: Vec<&Path> = watch_paths.iter().map(|p| p.as_path()).collect();
    let cells: Vec<Arc<ProgressCell>> = clones.iter().map(|c| c.input.progress.clone()).collect();
    let expected = progress::expected(members.iter().map(|&j| &jobs[j]));

    let watch = DeviceWatch::start(&refs);
    let io_before = process_io();
    let usage_before = UsageMark::now();
    let outputs: Vec<(usize, WorkerOutput)> = std::thread::scope(|s| {
        let handles: Vec<_> = clones
            .into_iter()
            .map(|c| {
                let job = c.job;
                let name = format!("fsb-{}", c.input.spec.name);
                let h = std::thread::Builder::new().name(name).spawn_scoped(s, move || worker::run(c.input));
                (job, h)
            })
            .collect();
        let meter = Arc::new(Meter::default());
        opts.events.measuring(&format!("group {gid}"), &expected, meter.clone());
        progress::follow(&cells, &meter, &opts.stop);
        opts.events.measured();
        handles
            .into_iter()
            .map(|(job, h)| {
                let out = match h {
                    Ok(h) => h.join().unwrap_or_else(|_| failed("worker thread panicked")),
                    Err(e) => failed(&format!("cannot start a worker thread: {e}")),
                };
                (job, out)
            })
            .collect()
    });
    let usage = usage_before.until(&UsageMark::now());
    let elapsed_ns = (usage.wall_s * 1e9) as u64;
    let ramps: Vec<CpuUsage> = outputs.iter().filter_map(|(_, w)| w.ramp_cpu.clone()).collect();
    let usage = usage.without(&ramps);
    let group =
        GroupResult { group: gid, elapsed_ns, process_io: process_io().since(&io_before), devices: watch.finish(elapsed_ns), cpu: usage };
    Ok((collect_results(gid, members, jobs, outputs), group))
}

fn failed(msg: &str) -> WorkerOutput {
    WorkerOutput { error: Some(msg.to_string()), ..WorkerOutput::default() }
}

/// The directory (or device) a file lives in, for the system snapshot.
fn target_of(path: &Path) -> PathBuf {
    if crate::environment::safety::is_block_device(path) {
        return path.to_path_buf();
    }
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Merge worker outputs into reported units: one per clone, or one per group
/// with group_reporting (fio's rules).
fn collect_results(gid: u32, members: &[usize], jobs: &[JobSpec], outputs: Vec<(usize, WorkerOutput)>) -> Vec<JobResult> {
    let group_reporting = members.iter().any(|&j| jobs[j].group_reporting);
    let mut out: Vec<JobResult> = Vec::new();
    for (job, w) in outputs {
        let spec = &jobs[job];
        let fresh = || JobResult {
            name: spec.name.clone(),
            group: gid,
            threads: 0,
            engine: spec.ioengine.clone(),
            elapsed_ns: 0,
            ops: Vec::new(),
            timeline: Timeline::default(),
            options: options_map(spec),
            resolved: serde_json::to_value(spec).unwrap_or_default(),
            partial: false,
            error: None,
            headline: Vec::new(),
            details: None,
        };
        if !group_reporting || out.is_empty() {
            out.push(fresh());
        }
        let r = out.last_mut().expect("a result");
        r.threads += 1;
        r.elapsed_ns = r.elapsed_ns.max(w.elapsed_ns);
        r.partial |= w.partial;
        if r.error.is_none() {
            r.error = w.error;
        }
        r.timeline.merge(&w.timeline);
        for op in w.ops {
            match r.ops.iter_mut().find(|o| o.name == op.name) {
                Some(o) => o.merge(&op),
                None => r.ops.push(op),
            }
        }
    }
    for r in &mut out {
        r.ops.sort_by_key(|o| worker::OP_NAMES.iter().position(|n| *n == o.name));
        r.headline = r.op_headline();
    }
    out
}

fn options_map(spec: &JobSpec) -> BTreeMap<String, String> {
    spec.options.iter().cloned().collect()
}
