//! Executes a Filebench workload (`FlowPlan`) with Filebench's semantics:
//! the prelude (create files, system, echo, sleep), fileset population,
//! one OS thread per thread instance looping over its flowops, an optional
//! event generator, the measured window with psrun intervals, and cleanup of
//! the trees fsbench created.
//!
//! Random streams: thread `i` (all instances in definition order, from 0)
//! draws from `Rng::new(seed + i + 1)`; a randvar with its own `seed=` gets a
//! stream per thread from `Rng::new(seed ^ i.rotate_left(32))`; fileset `j`
//! lays out and preallocates from `Rng::new(seed ^ (j << 32))`.
//!
//! Where fsbench differs from Filebench on purpose (each also in the code):
//! - Running out of files (NORSC) in timeout mode is counted and the thread
//!   starts its flowop list again; Filebench aborts the whole run.
//! - deletefile skips files another thread has open (counted as busy
//!   skips) and deletes the next one, so creates and deletes balance;
//!   Filebench picks such a file and then silently does nothing.
//! - finishon* in timeout mode ends the whole run, as in Filebench 1.4;
//!   Filebench 1.5 treats it as an error there, and so does the WML
//!   frontend for a script that is not in the 1.4 dialect.
//! - iopslimit/opslimit/bwlimit counting a shared counter (the process, or
//!   a target in other threads) share one bucket per limit flowop, so the
//!   threads together run at the event rate; in Filebench every thread's
//!   bucket pays for all of the process's I/O, giving 1/threads of it.
//! - `eventgen rate=0` throttles nothing and costs nothing; Filebench
//!   busy-spins its generator thread.
//! - Implicit opens (an I/O flowop on an empty fd slot) are not recorded as
//!   an op; createfile/openfile on an occupied slot close it first (untimed)
//!   where Filebench stops with an error.
//! - readwholefile reads with pread from offset 0 until a short read and
//!   leaves the file offset alone (one call fewer per file than Filebench).
//! - Write data is the plan's content (random unless asked otherwise), from
//!   one shared buffer, not per-thread zeroed `memsize` buffers.
//!
//! Kept quirks: appendfilerand writes uniform [0, iosize-1] bytes (mean
//! iosize/2); implicitly opened files stay open; sequential writes never
//! wrap; sequential reads wrap to offset 0 at the end of the file.

pub mod buf;
mod data;
pub mod dist;
pub mod fileset;
pub mod growth;
pub mod hist;
mod namespace;
pub mod program;
pub mod report;
pub mod sync;
#[cfg(test)]
pub mod testkit;
#[cfg(test)]
mod tests;
pub mod thread;

use crate::host::proc_io::process_io;
use crate::measure::usage::UsageMark;
use crate::model::flow::{FlowPlan, Step};
use crate::observe::blockdev::DeviceWatch;
use crate::result::flow::FlowReport;
use crate::result::warning::{Code, Warning};
use crate::result::{GroupResult, JobResult, RunResult, Timeline};
use crate::runner::events::{Expected, Meter, Warnings};
use crate::runner::{sleep_unless_stopped, Measured, RunError, RunOptions};
use buf::MapBuf;
use fileset::Fileset;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use sync::{BlockCv, EventGen, Gate, ProcCounters, PubSlot, Reason, RunCtl, Sem};
use thread::{Shared, ThreadOut};

/// `system "cmd"`: through sh, its stdout sent to our stderr (stdout carries
/// the report).
fn run_system(cmd: &str, warnings: &mut Warnings) {
    use std::os::fd::AsFd;
    let out = std::io::stderr().as_fd().try_clone_to_owned().map(std::process::Stdio::from);
    let mut c = std::process::Command::new("sh");
    c.arg("-c").arg(cmd).stdin(std::process::Stdio::null());
    if let Ok(o) = out {
        c.stdout(o);
    }
    match c.status() {
        Ok(s) if s.success() => {}
        Ok(s) => warnings.warn(Warning::new(Code::SystemCommandFailed, format!("system \"{cmd}\" exited with {s}"))),
        Err(e) => warnings.warn(Warning::new(Code::SystemCommandFailed, format!("system \"{cmd}\" could not run: {e}"))),
    }
}

fn populate_missing(plan: &FlowPlan, sets: &mut [Option<Fileset>], opts: &RunOptions) -> Result<(), RunError> {
    for (j, slot) in sets.iter_mut().enumerate() {
        if slot.is_none() {
            let fs = fileset::populate(plan, j, opts.allow_device)?;
            let r = &fs.report;
            opts.events.note(&format!(
                "fsbench: fileset {}: {} entries ({} preallocated, {} leaf dirs, {} directories), {:.1} MiB in {:.2} s",
                r.name,
                r.entries,
                r.existing_at_start,
                r.leafdirs,
                r.directories,
                r.preallocated_bytes as f64 / 1048576.0,
                r.populate_s
            ));
            *slot = Some(fs);
        }
    }
    Ok(())
}

/// Run the workload (the tests' entry); an interrupted run comes back
/// partial, its files removed (unless kept).
#[cfg(test)]
pub(crate) fn run(plan: &FlowPlan, opts: &RunOptions) -> Result<RunResult, String> {
    run_with(plan, opts, "filebench", &mut |_| {}).map_err(|e| e.to_string())
}

/// Files of each fileset `before_measure` gets to check the cache with.
const CACHE_SAMPLE: usize = 64;

/// `run`, calling `before_measure` once the filesets exist and before any
/// thread starts: the place for a cache scenario, so "cold" means the
/// preallocated files are not cached when the measured window opens. It
/// gets up to 64 existing files of each fileset, spread over the fileset.
pub(crate) fn run_with(
    plan: &FlowPlan,
    opts: &RunOptions,
    layout: &str,
    before_measure: &mut dyn FnMut(&[PathBuf]),
) -> Result<RunResult, RunError> {
    let started_unix = crate::runner::unix_now();
    let prog = program::build(plan)?;
    crate::environment::space::check(&fileset::space_needs(plan), opts.allow_fill, "reduce the filesets' entries or file sizes")?;
    let mut warnings = Warnings::new(&*opts.events);
    let mut sets: Vec<Option<Fileset>> = plan.filesets.iter().map(|_| None).collect();
    let outcome = prelude_and_run(plan, &prog, opts, &mut sets, &mut warnings, before_measure);
    for fs in sets.iter_mut().flatten() {
        match fs.cleanup(opts.keep_files) {
            Ok(Some(note)) => opts.events.note(&format!("fsbench: {note}")),
            Ok(None) => {}
            Err(e) => warnings.warn(Warning::new(Code::CleanupFailed, format!("cleanup of fileset '{}': {e}", fs.name))),
        }
    }
    let (job, group, roots) = outcome?;
    let partial = job.partial;
    let measured = Measured { jobs: vec![job], groups: vec![group], targets: roots, warnings: warnings.list, partial };
    Ok(crate::runner::envelope(opts, layout, started_unix, measured))
}

type Parts = (JobResult, GroupResult, Vec<PathBuf>);

fn prelude_and_run(
    plan: &FlowPlan,
    prog: &program::Program,
    opts: &RunOptions,
    sets: &mut [Option<Fileset>],
    warnings: &mut Warnings,
    before_measure: &mut dyn FnMut(&[PathBuf]),
) -> Result<Parts, RunError> {
    for step in &plan.prelude {
        if opts.stop.load(Ordering::Relaxed) {
            break;
        }
        match step {
            Step::CreateFiles => populate_missing(plan, sets, opts)?,
            Step::System(cmd) => run_system(cmd, warnings),
            Step::Echo(text) => opts.events.note(text),
            Step::Sleep(s) => sleep_unless_stopped(Duration::from_secs(*s), &opts.stop),
        }
    }
    if opts.stop.load(Ordering::Relaxed) {
        return Err(RunError::Workload("interrupted before the measured run started".into()));
    }
    populate_missing(plan, sets, opts)?;
    let sample: Vec<PathBuf> = sets.iter().flatten().flat_map(|fs| fs.sample_existing(CACHE_SAMPLE)).collect();
    before_measure(&sample);
    // Threads borrow one slice of filesets: move them out for the run.
    let owned: Vec<Fileset> = sets.iter_mut().filter_map(|s| s.take()).collect();
    let r = execute(plan, prog, opts, &owned, warnings);
    for (slot, fs) in sets.iter_mut().zip(owned) {
        *slot = Some(fs);
    }
    Ok(r?)
}

fn setup_warnings(plan: &FlowPlan, prog: &program::Program, filesets: &[Fileset], opts: &RunOptions, warnings: &mut Warnings) {
    if plan.eventgen_rate == Some(0) {
        warnings.warn(Warning::new(
            Code::FlowopNoEffect,
            "eventgen rate=0: the *limit flowops do not throttle at all (fsbench treats rate 0 as unthrottled; Filebench busy-spins a CPU)",
        ));
    }
    for name in &prog.idle_limits {
        if plan.eventgen_rate.is_none() {
            warnings.warn(Warning::new(
                Code::FlowopNoEffect,
                format!("flowop {name}: no eventgen, so it limits nothing and records no ops (as in Filebench)"),
            ));
        }
    }
    if !opts.cache_controlled {
        let all_direct =
            plan.processes.iter().flat_map(|p| &p.threads).flat_map(|t| &t.flowops).filter(|f| f.kind.opens_file()).all(|f| f.directio);
        let set: u64 = filesets.iter().filter(|f| !f.device).map(|f| f.dataset_bytes).sum();
        let w = crate::environment::cache::memory_speed_warning(
            "the filesets' nominal size is",
            set,
            "and the page cache is not controlled",
            "--cache=cold, directio, or larger filesets",
        );
        if let Some(w) = w.filter(|_| !all_direct) {
            warnings.warn(Warning::new(Code::WorkingSetFitsInRam, w));
        }
    }
}

fn execute(
    plan: &FlowPlan,
    prog: &program::Program,
    opts: &RunOptions,
    filesets: &[Fileset],
    warnings: &mut Warnings,
) -> Result<Parts, String> {
    setup_warnings(plan, prog, filesets, opts, warnings);
    let mut src = MapBuf::new(prog.src_len + 4096)?;
    let mut rng = crate::runner::rng::Rng::new(plan.seed ^ 0x5EED_DA7A);
    crate::runner::buffers::fill(src.as_mut_slice(), &plan.content, &mut rng);
    let sh = Shared {
        plan,
        filesets,
        ctl: RunCtl::default(),
        gate: Gate::default(),
        events: plan.eventgen_rate.filter(|&r| r > 0).map(EventGen::new),
        blocks: (0..prog.blocks).map(|_| BlockCv::default()).collect(),
        sems: prog.sems.iter().map(|&h| Sem::new(h)).collect(),
        procs: (0..prog.procs).map(|_| ProcCounters::default()).collect(),
        buckets: (0..prog.buckets).map(|_| Default::default()).collect(),
        pubs: prog.threads.iter().map(|t| t.slots.iter().map(|_| PubSlot::default()).collect()).collect(),
        holders: prog.holders.clone(),
        src,
        report: &*opts.events,
    };
    let roots: Vec<PathBuf> = filesets.iter().map(|f| f.root.clone()).collect();
    let root_refs: Vec<&Path> = roots.iter().map(|p| p.as_path()).collect();
    let duration = Duration::from_secs(plan.run.duration_s);
    let warmup = Duration::from_secs(plan.run.warmup_s);

    let (outs, win): (Vec<ThreadOut>, Window) = std::thread::scope(|s| {
        let sh = &sh;
        let mut handles = Vec::with_capacity(prog.threads.len());
        for def in &prog.threads {
            sh.ctl.running.fetch_add(1, Ordering::SeqCst);
            let h = crate::runner::workers::spawn_scoped(s, format!("fsb-{}", def.name), move || thread::run(sh, def));
            match h {
                Ok(h) => handles.push(Some(h)),
                Err(e) => {
                    sh.ctl.running.fetch_sub(1, Ordering::SeqCst);
                    sh.ctl.fail(format!("cannot start thread {}: {e}", def.name));
                    handles.push(None);
                }
            }
        }
        let spawned = handles.iter().filter(|h| h.is_some()).count();
        sh.gate.wait_ready(spawned, &sh.ctl, &opts.stop);
        let gen = sh.events.as_ref().map(|ev| s.spawn(move || ev.run(&sh.ctl)));
        let win = control(sh, prog, plan, opts, warmup, duration, &root_refs);
        sh.ctl.end();
        let outs: Vec<ThreadOut> = handles
            .into_iter()
            .map(|h| match h.map(|h| h.join()) {
                Some(Ok(o)) => o,
                _ => ThreadOut { stats: Vec::new(), notes: vec!["a worker thread did not finish normally".into()] },
            })
            .collect();
        if let Some(g) = gen {
            let _ = g.join();
        }
        (outs, win)
    });

    let (ops, infos) = report::merge(prog, &outs);
    for w in report::thread_notes(&outs) {
        warnings.warn(w);
    }
    for w in report::shortage_warnings(&infos, plan.mode) {
        warnings.warn(Warning::new(Code::OutOfFiles, w));
    }
    let error = sh.ctl.error();
    if let Some(e) = &error {
        warnings.warn(Warning::new(Code::RunStoppedOnError, format!("the run stopped on an error: {e}")));
    }
    let partial = opts.stop.load(Ordering::Relaxed);
    let mut timeline = Timeline { interval_ms: 1000, ..Default::default() };
    for (i, (name, _)) in prog.names.iter().enumerate() {
        timeline.ops.insert(name.clone(), win.sampler.ops[i].clone());
        timeline.bytes.insert(name.clone(), win.sampler.bytes[i].clone());
    }
    let flow = FlowReport {
        flowops: infos,
        filesets: filesets.iter().map(|f| f.report.clone()).collect(),
        intervals: win.sampler.intervals,
        ended_by: win.ended_by.to_string(),
        seed: plan.seed,
        threads: prog.threads.len() as u32,
    };
    let mut job = JobResult {
        name: plan.name.clone(),
        group: 0,
        threads: prog.threads.len() as u32,
        engine: "filebench".into(),
        elapsed_ns: win.elapsed_ns,
        ops,
        timeline,
        options: plan.vars.iter().cloned().collect(),
        resolved: serde_json::to_value(plan).unwrap_or_default(),
        partial,
        error,
        headline: Vec::new(),
        details: None,
    };
    job.headline = flow.io_summary(&job).headline();
    job.details = Some(serde_json::to_value(&flow).unwrap_or_default());
    let group = GroupResult {
        group: 0,
        ran_with: Vec::new(),
        elapsed_ns: win.elapsed_ns,
        started_unix_ns: None,
        cpu: win.usage,
        process_io: win.io,
        devices: win.devices,
    };
    Ok((job, group, roots))
}

struct Window {
    sampler: report::Sampler,
    usage: crate::result::CpuUsage,
    io: crate::result::ProcessIo,
    devices: Vec<crate::result::device::DeviceReport>,
    elapsed_ns: u64,
    ended_by: &'static str,
}

// The controller: warm-up, then the measured window in steps of at most
// 100 ms, sampling the timeline every second and psrun every period.
fn control(
    sh: &Shared,
    prog: &program::Program,
    plan: &FlowPlan,
    opts: &RunOptions,
    warmup: Duration,
    duration: Duration,
    roots: &[&Path],
) -> Window {
    let ctl = &sh.ctl;
    if !warmup.is_zero() {
        sh.gate.open();
        let until = Instant::now() + warmup;
        while Instant::now() < until && !ctl.ended() && !opts.stop.load(Ordering::Relaxed) {
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(100)));
        }
        ctl.generation.fetch_add(1, Ordering::SeqCst);
    }
    let watch = DeviceWatch::start(roots);
    let io0 = process_io();
    let u0 = UsageMark::now();
    let mut sampler = report::Sampler::start(sh);
    let meter = std::sync::Arc::new(Meter::default());
    opts.events.measuring(&plan.name, &Expected { time: Some(duration), ..Default::default() }, meter.clone());
    let start = Instant::now();
    // Without a warm-up the window opens with the gate, so nothing a fast
    // thread does falls before it.
    sh.gate.open();
    let deadline = start + duration;
    let mut next_tick = start + Duration::from_secs(1);
    let period = plan.run.interval.filter(|i| i.period_s > 0).map(|i| (Duration::from_secs(i.period_s), i.reset));
    let mut next_print = period.map(|(p, _)| start + p);
    let ended_by = loop {
        let now = Instant::now();
        if opts.stop.load(Ordering::Relaxed) {
            break "interrupted";
        }
        if ctl.ended() {
            break match ctl.reason() {
                Reason::FirstDone => "firstdone",
                Reason::Error => "error",
                Reason::FinishOn => "finishon",
                Reason::None => "duration",
            };
        }
        if ctl.running.load(Ordering::SeqCst) == 0 {
            break "alldone";
        }
        if now >= deadline {
            break "duration";
        }
        while now >= next_tick {
            sampler.tick(sh);
            next_tick += Duration::from_secs(1);
        }
        if let (Some(at), Some((p, reset))) = (next_print, period) {
            if now >= at {
                sampler.interval(sh, at.duration_since(start).as_secs_f64(), reset, &prog.names);
                next_print = Some(at + p);
            }
        }
        let totals = report::snapshot(sh);
        meter.ops.store(totals.iter().map(|t| t[0]).sum(), Ordering::Relaxed);
        meter.bytes.store(totals.iter().map(|t| t[1]).sum(), Ordering::Relaxed);
        let mut wake = deadline.min(next_tick);
        if let Some(at) = next_print {
            wake = wake.min(at);
        }
        std::thread::sleep(wake.saturating_duration_since(now).clamp(Duration::from_millis(1), Duration::from_millis(100)));
    };
    ctl.end();
    let end = Instant::now();
    opts.events.measured();
    let usage = u0.until(&UsageMark::now());
    let elapsed_ns = end.duration_since(start).as_nanos() as u64;
    Window { sampler, usage, io: process_io().since(&io0), devices: watch.finish(elapsed_ns), elapsed_ns, ended_by }
}
