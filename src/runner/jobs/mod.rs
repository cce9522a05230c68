//! Executes fio-model jobs: groups (stonewall, new_group), clones (numjobs),
//! files, worker threads, and the accounting around each group.

mod checksum;
pub mod cmdprio;
pub mod files;
pub mod logs;
pub mod offsets;
pub mod progress;
mod roster;
pub mod steady;
pub mod verify;
pub mod worker;

use crate::host::proc_io::process_io;
use crate::measure::usage::{CpuUsage, UsageMark};
use crate::model::engine;
use crate::model::job::JobSpec;
use crate::observe::blockdev::DeviceWatch;
use crate::result::cmdprio::CmdPrioStats;
use crate::result::warning::{few, Code, Warning};
use crate::result::{GroupResult, JobResult, RunResult, Timeline};
use crate::runner::events::{Meter, Warnings};
use crate::runner::{envelope, unix_now, Measured, RunError, RunOptions};
use files::Ledger;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
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

/// fio's two groupings of jobs.
pub struct Groups {
    /// Jobs that run together, in file order: a job with `stonewall` waits
    /// for every job before it.
    pub run: Vec<Vec<usize>>,
    /// Per job, its reporting group (fio's groupid): `stonewall` or
    /// `new_group` starts the next one. It only decides how results are
    /// labelled and summed and which jobs exit_what=group stops: the
    /// reporting groups of one run group run at the same time.
    pub gid: Vec<u32>,
}

/// The jobs of each reporting group, from each job's group id.
fn reporting_groups(gid: &[u32]) -> Vec<Vec<usize>> {
    let mut by: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
    for (j, &g) in gid.iter().enumerate() {
        by.entry(g).or_default().push(j);
    }
    by.into_values().collect()
}

/// The groups of `jobs`. As in fio, a first job's `stonewall` or
/// `new_group` starts no empty group.
pub fn groups(jobs: &[JobSpec]) -> Groups {
    let mut run: Vec<Vec<usize>> = Vec::new();
    let mut gid = Vec::with_capacity(jobs.len());
    for (i, j) in jobs.iter().enumerate() {
        let next = if i > 0 && (j.stonewall || j.new_group) { 1 } else { 0 };
        gid.push(gid.last().map_or(0, |g| g + next));
        if run.is_empty() || j.stonewall {
            run.push(Vec::new());
        }
        if let Some(g) = run.last_mut() {
            g.push(i);
        }
    }
    Groups { run, gid }
}

/// Settings that silently do nothing in fio get a warning that says why.
pub fn warnings_for(spec: &JobSpec) -> Vec<Warning> {
    let mut w = Vec::new();
    let Some(info) = engine::find(&spec.ioengine) else { return w };
    let name = &spec.name;
    if spec.iodepth > 1 && !info.caps.is_async {
        w.push(Warning::new(
            Code::IodepthNoEffect,
            format!(
            "job '{name}': iodepth={} has no effect with ioengine={}: a synchronous engine keeps one I/O in flight per thread; use libaio or io_uring (with direct=1) for a deeper queue",
            spec.iodepth, info.name
            ),
        ));
    }
    if spec.iodepth > 1 && info.caps.is_async && !spec.direct && info.caps.inline_when_buffered {
        w.push(Warning::new(
            Code::IodepthNoEffect,
            format!(
            "job '{name}': ioengine={} completes buffered I/O inside the submit call, so iodepth={} behaves like iodepth=1; add direct=1",
            info.name, spec.iodepth
            ),
        ));
    }
    if info.name == "io_uring" && !spec.direct {
        w.push(Warning::new(
            Code::DiffersFromTool,
            format!(
            "job '{name}': buffered io_uring is served by kernel io-wq worker threads; their CPU is counted in fsbench's CPU figures (fio leaves it out)"
            ),
        ));
    }
    let e = &spec.engine;
    let own = |set: bool, opt: &str, engine: &str| {
        (set && info.name != engine).then(|| {
            Warning::new(
                Code::IgnoredOption,
                format!("job '{name}': {opt} only applies to ioengine={engine}; ioengine={} ignores it", info.name),
            )
        })
    };
    w.extend(own(e.hipri, "hipri", "pvsync2"));
    w.extend(own(e.nowait, "nowait", "pvsync2"));
    w.extend(own(e.donorname.is_some(), "donorname", "e4defrag"));
    w.extend(own(e.inplace, "inplace", "e4defrag"));
    if info.caps.mapped && (spec.direct || spec.sync != crate::model::job::SyncMode::None) {
        w.push(Warning::new(
            Code::IgnoredOption,
            format!("job '{name}': direct= and sync= do not apply to ioengine=mmap, which copies through a memory mapping"),
        ));
    }
    if spec.rw.reads() && !spec.direct && !info.caps.diskless && !info.caps.mapped {
        let paths = spec.file_paths(0);
        // A device node lives on devtmpfs, but its data is the device's,
        // and invalidation drops a block device's cached pages like a file's.
        let node = |p: &std::path::Path| files::is_char_device(p) || crate::environment::safety::is_block_device(p);
        if let Some(fs) = paths.iter().filter(|p| !node(p)).find_map(|p| in_memory_fs(p)) {
            w.push(Warning::new(
                Code::ReadsFromMemory,
                format!(
                "job '{name}': its files are on {fs}, which keeps them in memory: fio's cache invalidation (invalidate, fadvise_hint) cannot drop them, so reads measure memory"
                ),
            ));
        } else if !spec.invalidate {
            w.push(Warning::new(
                Code::ReadsFromMemory,
                format!("job '{name}': invalidate=0 keeps the files' cached pages, so reads may be served from memory"),
            ));
        }
    }
    w.extend(verify_warnings(spec, info.name));
    w.extend(steady::warnings(spec, info.name, info.caps.is_async));
    w
}

/// What fio's verification options do differently here, said once.
fn verify_warnings(spec: &JobSpec, engine: &str) -> Vec<Warning> {
    let v = &spec.verify;
    let name = &spec.name;
    let mut w = Vec::new();
    let Some(method) = v.method else {
        if v.only || v.backlog > 0 || v.pattern.is_some() {
            w.push(Warning::new(Code::IgnoredOption, format!("job '{name}': verify options without verify= do nothing")));
        }
        return w;
    };
    if v.async_threads > 0 {
        w.push(Warning::new(
            Code::DiffersFromTool,
            format!("job '{name}': verify_async={} runs synchronously: fsbench checks blocks in the job's own thread", v.async_threads),
        ));
    }
    if spec.options.iter().any(|(k, val)| k == "verify_state_save" && !matches!(val.as_str(), "0" | "false" | "no" | "off")) {
        w.push(Warning::new(
            Code::IgnoredOption,
            format!("job '{name}': verify_state_save is accepted but writes nothing: fsbench keeps no verify state files"),
        ));
    }
    if spec.rw.writes() && v.do_verify && spec.numjobs > 1 && !spec.filenames.is_empty() {
        w.push(Warning::new(
            Code::VerifyLimited,
            format!(
            "job '{name}': its {} clones write the same file(s), so one may overwrite another's blocks and fail their verification (fio warns alike)",
            spec.numjobs
            ),
        ));
    }
    if v.state_load {
        w.push(Warning::new(
            Code::IgnoredOption,
            format!("job '{name}': verify_state_load is ignored: fsbench keeps no verify state files; verify_only checks every block the job writes"),
        ));
    }
    if spec.rw.writes() && v.do_verify && spec.time_based && spec.runtime.is_some() && v.backlog == 0 && !spec.rw.reads() {
        w.push(Warning::new(
            Code::VerifyLimited,
            format!("job '{name}': the verification read phase will never start because the write phase uses all of runtime (as in fio); add verify_backlog"),
        ));
    }
    if engine == "null" {
        w.push(Warning::new(
            Code::VerifyLimited,
            format!("job '{name}': ioengine=null moves no data, so verify={} only pretends to check (as in fio)", method.name()),
        ));
    }
    if spec.rw.writes() && (spec.buffer.refill || v.pattern.as_ref().is_some_and(|p| !p.offset_at.is_empty())) && method.checksum_len() > 0
    {
        w.push(Warning::new(
            Code::DiffersFromTool,
            format!(
                "job '{name}': {} makes each write's content new, so its {} checksum is computed in the write path, as fio does",
                if spec.buffer.refill { "refill_buffers" } else { "verify_pattern with %o" },
                method.name()
            ),
        ));
    }
    w
}

/// The in-memory file system type holding `path`, if it is one.
fn in_memory_fs(path: &Path) -> Option<String> {
    let m = crate::host::mountinfo::mount_for_path(path)?;
    crate::host::mountinfo::lives_in_memory(&m.fs_type).then_some(m.fs_type)
}

/// Buffered I/O over a working set that fits in RAM, with nothing done about
/// the page cache, measures memory as much as storage.
fn cache_warning(jobs: &[JobSpec]) -> Option<String> {
    let on_disk =
        |j: &JobSpec| !files::diskless(j) && files::file_use(j).opened() && !j.file_paths(0).iter().all(|p| files::is_char_device(p));
    let buffered: Vec<&JobSpec> = jobs.iter().filter(|j| !j.direct && on_disk(j)).collect();
    if buffered.is_empty() {
        return None;
    }
    let set: u64 = buffered.iter().map(|j| j.size.unwrap_or(0) * j.numjobs as u64).sum();
    crate::environment::cache::memory_speed_warning(
        "buffered I/O over a working set of",
        set,
        "with the page cache not controlled",
        "direct=1, --cache=cold, or a larger size",
    )
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
            warnings.warn(Warning::new(Code::WorkingSetFitsInRam, w));
        }
    }
    for j in &jobs {
        if let Some(info) = engine::find(&j.ioengine) {
            if let Some(m) = info.caps.dirs.refuses(info.name, j.rw.reads(), j.rw.writes(), j.rw.trims()) {
                return Err(format!("job '{}': rw={} with {m}", j.name, j.rw.fio_name()).into());
            }
        }
    }
    steady::check_groups(&jobs, &reporting_groups(&groups(&jobs).gid)).map_err(RunError::Workload)?;
    crate::environment::space::check(&files::space_needs(&jobs), opts.allow_fill, "reduce size/numjobs/nrfiles")?;
    let mut ledger = Ledger::default();
    let mut results = Vec::new();
    let mut group_results = Vec::new();
    let mut targets: Vec<PathBuf> = Vec::new();
    let mut failure = None;
    // Set by a job's exitall with exit_what=all: later groups do not run.
    let end_run = Arc::new(AtomicBool::new(false));
    let all_groups = groups(&jobs);
    for (k, members) in all_groups.run.iter().enumerate() {
        if opts.stop.load(Ordering::Relaxed) {
            break;
        }
        if end_run.load(Ordering::Relaxed) {
            let names: Vec<&str> = all_groups.run[k..].iter().flatten().map(|&j| jobs[j].name.as_str()).collect();
            let message = format!(
                "exitall with exit_what=all ended the run after group {}: job(s) {} did not run (as in fio)",
                all_groups.gid[members[0]].saturating_sub(1),
                few(&names)
            );
            warnings.warn(Warning::new(Code::JobsNotRun, message).with_details(names.iter().map(|n| n.to_string()).collect()));
            break;
        }
        match run_group(members, &all_groups.gid, &jobs, opts, &end_run, &mut ledger, &mut targets) {
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
        warnings.warn(Warning::new(Code::CleanupFailed, e));
    }
    ledger.hand_over();
    if let Some(e) = failure {
        return Err(e);
    }
    let measured = Measured { jobs: results, groups: group_results, targets, warnings: warnings.list, partial };
    Ok(envelope(opts, layout, started_unix, measured))
}

fn job_paths(spec: &JobSpec) -> Vec<PathBuf> {
    (0..spec.numjobs).flat_map(|c| spec.file_paths(c)).collect()
}

/// A thread's place among those sharing a global dedupe working set, over
/// the whole invocation (fio deals the set out over them): (index, count),
/// or (0, 0) for a thread outside it.
fn dedupe_rank(jobs: &[JobSpec], j: usize, clone: u32) -> (u32, u32) {
    let shares = |s: &JobSpec| s.buffer.dedupe_global && s.buffer.dedupe_working_set && s.buffer.dedupe_percentage > 0;
    if !shares(&jobs[j]) {
        return (0, 0);
    }
    let before: u32 = jobs[..j].iter().filter(|s| shares(s)).map(|s| s.numjobs).sum();
    let all: u32 = jobs.iter().filter(|s| shares(s)).map(|s| s.numjobs).sum();
    (before + clone, all)
}

struct Clone {
    job: usize,
    input: WorkerInput,
}

/// Run the jobs `members` together; `gids` holds every job's reporting group.
fn run_group(
    members: &[usize],
    gids: &[u32],
    jobs: &[JobSpec],
    opts: &RunOptions,
    end_run: &Arc<AtomicBool>,
    ledger: &mut Ledger,
    targets: &mut Vec<PathBuf>,
) -> Result<(Vec<JobResult>, GroupResult), RunError> {
    let mut clones = Vec::new();
    // Only the jobs of this run group can be running: they are all
    // exit_what=stonewall and =all can stop.
    let roster = roster::Roster::new(members.iter().flat_map(|&j| std::iter::repeat_n(gids[j], jobs[j].numjobs as usize)));
    let flows = flows(members, jobs);
    let group_steady = group_steady(members, gids, jobs);
    let running: Vec<Arc<AtomicU64>> = members.iter().map(|&j| Arc::new(AtomicU64::new(u64::from(jobs[j].numjobs)))).collect();
    for (k, &j) in members.iter().enumerate() {
        let spec = Arc::new(jobs[j].clone());
        logs::truncate_shared(&spec).map_err(RunError::Workload)?;
        // fio numbers threads across the whole invocation; log files carry it.
        let first_thread: u32 = jobs[..j].iter().map(|s| s.numjobs).sum::<u32>() + 1;
        // A job waited for in an earlier group has finished already.
        let wait = spec
            .misc
            .wait_for
            .as_ref()
            .and_then(|name| members[..k].iter().position(|&m| &jobs[m].name == name).map(|i| running[i].clone()));
        for c in 0..spec.numjobs {
            let prepared = clone_files(&spec, c, opts, ledger, targets)?;
            let seat = roster.seat(clones.len());
            clones.push(Clone {
                job: j,
                input: WorkerInput {
                    spec: spec.clone(),
                    clone: c,
                    thread_number: first_thread + c,
                    files: prepared,
                    stop: opts.stop.clone(),
                    halt: seat.halt(),
                    seat,
                    end_run: end_run.clone(),
                    progress: Arc::new(ProgressCell::default()),
                    wait: wait.clone(),
                    running: running[k].clone(),
                    flow: (spec.misc.flow > 0).then(|| flows[&spec.misc.flow_id].clone()),
                    events: opts.events.clone(),
                    steady: match group_steady.get(&gids[j]) {
                        Some(g) => Some(g.clone()),
                        None => spec.misc.steady.enabled().then(|| steady::Steady::new(&spec.misc.steady, 1)),
                    },
                    dedupe_rank: dedupe_rank(jobs, j, c),
                },
            });
        }
    }
    let (outputs, group) = measure_group(clones, members, gids, jobs, &roster, opts);
    Ok((collect_results(gids, jobs, outputs), group))
}

/// fio's flows: the jobs of one flow_id share a count of I/Os.
fn flows(members: &[usize], jobs: &[JobSpec]) -> BTreeMap<u32, Arc<worker::Flow>> {
    let mut weights: BTreeMap<u32, u64> = BTreeMap::new();
    for &j in members.iter().filter(|&&j| jobs[j].misc.flow > 0) {
        *weights.entry(jobs[j].misc.flow_id).or_default() += u64::from(jobs[j].misc.flow) * u64::from(jobs[j].numjobs);
    }
    weights
        .into_iter()
        .map(|(id, weight)| (id, Arc::new(worker::Flow { ios: AtomicU64::new(0), weight: AtomicU64::new(weight) })))
        .collect()
}

/// With group_reporting fio judges the steady state of the whole reporting
/// group: one judgement per such group, by its reporting group id.
fn group_steady(members: &[usize], gids: &[u32], jobs: &[JobSpec]) -> BTreeMap<u32, Arc<steady::Steady>> {
    let mut group_steady = BTreeMap::new();
    for g in reporting_groups(gids) {
        let here: Vec<usize> = g.into_iter().filter(|j| members.contains(j)).collect();
        if !here.iter().any(|&j| jobs[j].group_reporting) {
            continue;
        }
        if let Some(&j) = here.iter().find(|&&j| jobs[j].misc.steady.enabled()) {
            let threads = here.iter().map(|&m| jobs[m].numjobs).sum();
            group_steady.insert(gids[j], steady::Steady::new(&jobs[j].misc.steady, threads));
        }
    }
    group_steady
}

/// One clone's files, prepared (and invalidated when the job asks); the
/// places they live in join `targets`.
fn clone_files(
    spec: &JobSpec,
    clone: u32,
    opts: &RunOptions,
    ledger: &mut Ledger,
    targets: &mut Vec<PathBuf>,
) -> Result<Vec<files::PreparedFile>, RunError> {
    let prepared = files::prepare(spec, clone, opts.allow_device, ledger)?;
    let uses = files::file_use(spec);
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
    Ok(prepared)
}

/// Run the clones on their threads and measure the group around them:
/// devices, process I/O and CPU (without the ramps'), the progress shown.
fn measure_group(
    clones: Vec<Clone>,
    members: &[usize],
    gids: &[u32],
    jobs: &[JobSpec],
    roster: &roster::Roster,
    opts: &RunOptions,
) -> (Vec<(usize, WorkerOutput)>, GroupResult) {
    let watch_paths: Vec<PathBuf> = clones.iter().flat_map(|c| c.input.files.iter().map(|f| f.path.clone())).collect();
    let refs: Vec<&Path> = watch_paths.iter().map(|p| p.as_path()).collect();
    let cells: Vec<Arc<ProgressCell>> = clones.iter().map(|c| c.input.progress.clone()).collect();
    let expected = progress::expected(members.iter().map(|&j| &jobs[j]));
    let mut reporting: Vec<u32> = members.iter().map(|&j| gids[j]).collect();
    reporting.dedup();

    let watch = DeviceWatch::start(&refs);
    let io_before = process_io();
    let usage_before = UsageMark::now();
    let outputs: Vec<(usize, WorkerOutput)> = std::thread::scope(|s| {
        let handles: Vec<_> = clones
            .into_iter()
            .map(|c| {
                let job = c.job;
                let name = format!("fsb-{}", c.input.spec.name);
                let h = crate::runner::workers::spawn_scoped(s, name, move || worker::run(c.input));
                (job, h)
            })
            .collect();
        let meter = Arc::new(Meter::default());
        opts.events.measuring(&format!("group {}", label(&reporting)), &expected, meter.clone());
        progress::follow(&cells, &meter, &opts.stop, roster);
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
    let group = GroupResult {
        group: reporting.first().copied().unwrap_or(0),
        ran_with: reporting.get(1..).unwrap_or_default().to_vec(),
        elapsed_ns,
        started_unix_ns: None,
        process_io: process_io().since(&io_before),
        devices: watch.finish(elapsed_ns),
        cpu: usage,
    };
    (outputs, group)
}

/// Reporting groups that run together, as the progress line names them: `2` or `2-4`.
fn label(reporting: &[u32]) -> String {
    match reporting {
        [first, .., last] => format!("{first}-{last}"),
        [one] => one.to_string(),
        [] => String::new(),
    }
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

/// Merge worker outputs (in file order) into reported units: one per clone,
/// or one per reporting group with group_reporting. fio's rule (stat.c): a
/// thread joins the unit before it when its job has group_reporting and the
/// same reporting group, else it starts a unit.
fn collect_results(gids: &[u32], jobs: &[JobSpec], outputs: Vec<(usize, WorkerOutput)>) -> Vec<JobResult> {
    let mut out: Vec<JobResult> = Vec::new();
    let mut depths: Vec<worker::Depths> = Vec::new();
    let mut last_gid = None;
    for (job, w) in outputs {
        let spec = &jobs[job];
        let gid = gids[job];
        let fresh = || JobResult {
            name: spec.name.clone(),
            group: gid,
            threads: 0,
            engine: spec.ioengine.clone(),
            elapsed_ns: 0,
            ops: Vec::new(),
            timeline: Timeline::default(),
            options: options_map(&spec.options),
            resolved: serde_json::to_value(spec).unwrap_or_default(),
            partial: false,
            error: None,
            headline: Vec::new(),
            // fio's JSON lists the [global] section's options apart.
            details: Some(serde_json::json!({ "global_options": options_map(&spec.options[..spec.global_options]) })),
        };
        if !(spec.group_reporting && last_gid == Some(gid)) {
            out.push(fresh());
            depths.push(worker::Depths::default());
        }
        last_gid = Some(gid);
        if let Some(d) = depths.last_mut() {
            d.merge(&w.depths);
        }
        let r = out.last_mut().expect("a result");
        // Every worker has ended, so a group's shared verdict is final.
        let found = w.steady.as_ref().and_then(|s| s.report());
        store_detail(r, "steadystate", found.map(|f| serde_json::to_value(f).unwrap_or_default()));
        // fio reports the depth of the last clone.
        store_detail(r, "latency_depth", w.latency_depth.map(|d| serde_json::json!(d)));
        if let Some(c) = &w.cmdprio {
            let mut all = CmdPrioStats::of(r).unwrap_or_default();
            all.merge(c);
            all.store(r);
        }
        r.threads += 1;
        r.elapsed_ns = r.elapsed_ns.max(w.elapsed_ns);
        r.partial |= w.partial;
        if r.error.is_none() {
            r.error = w.error;
        }
        r.timeline.merge(&w.timeline);
        if let Some(v) = &w.verify {
            let mut all = crate::result::verify::VerifyStats::of(r)
                .unwrap_or_else(|| crate::result::verify::VerifyStats { method: v.method.clone(), ..Default::default() });
            all.merge(v);
            all.store(r);
        }
        for op in w.ops {
            match r.ops.iter_mut().find(|o| o.name == op.name) {
                Some(o) => o.merge(&op),
                None => r.ops.push(op),
            }
        }
    }
    for (r, d) in out.iter_mut().zip(&depths) {
        // fio's queue-depth figures, read by the fio-json exporters.
        // Added to what is there (verification keeps its figures in details too).
        let details = r.details.get_or_insert_with(|| serde_json::json!({}));
        if let Some(m) = details.as_object_mut() {
            m.insert("iodepth_level".into(), serde_json::json!(d.level));
            m.insert("iodepth_submit".into(), serde_json::json!(d.submit));
            m.insert("iodepth_complete".into(), serde_json::json!(d.complete));
        }
        r.ops.sort_by_key(|o| worker::OP_NAMES.iter().position(|n| *n == o.name));
        r.headline = r.op_headline();
    }
    out
}

fn store_detail(r: &mut JobResult, key: &str, v: Option<serde_json::Value>) {
    if let Some(v) = v {
        r.set_detail(key, v);
    }
}

fn options_map(options: &[(String, String)]) -> BTreeMap<String, String> {
    options.iter().cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stonewall_makes_run_groups_new_group_only_reporting_ones() {
        // (stonewall, new_group) per job, as fio's init.c counts groupids.
        let flags = [(true, true), (false, false), (false, true), (false, false), (true, false), (false, true), (true, true)];
        let jobs: Vec<JobSpec> =
            flags.iter().map(|&(stonewall, new_group)| JobSpec { stonewall, new_group, ..JobSpec::new("j") }).collect();
        let g = groups(&jobs);
        assert_eq!(g.run, vec![vec![0, 1, 2, 3], vec![4, 5], vec![6]]);
        assert_eq!(g.gid, vec![0, 0, 1, 1, 2, 3, 4]);
    }

    #[test]
    fn buffered_reads_of_a_block_device_are_not_memory_though_its_node_is_on_devtmpfs() {
        let reads = |p: &Path| JobSpec { rw: crate::model::job::RwKind::Read, filenames: vec![p.into()], ..JobSpec::new("r") };
        let in_memory = |w: Vec<Warning>| w.iter().any(|w| w.code == Code::ReadsFromMemory && w.message.contains("keeps them in memory"));
        if Path::new("/dev/shm").is_dir() {
            assert!(in_memory(warnings_for(&reads(Path::new("/dev/shm/fsbench-no-such-file")))), "a file on tmpfs is memory");
        }
        if !crate::host::is_root() {
            println!("SKIPPED: the block device half needs root for a loop device");
            return;
        }
        let Some(lo) = crate::host::testutil::LoopDev::attach(4 << 20) else { return };
        let w = warnings_for(&reads(lo.path()));
        assert!(!in_memory(w.clone()), "{w:?}");
    }
}
