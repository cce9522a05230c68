//! The worker's set-up, before its first I/O: the thread placed, the jobs
//! it waits for awaited, its files opened, its engine, buffers, verifier and
//! logs made ready.

use super::submit::Slot;
use super::ticker::Ticker;
use super::{Depths, Worker, WorkerInput, OP_NAMES};
use crate::ioengine::{Completion, EngineBuf, EngineConfig, EngineFile, EngineImpl, EnginePath, IoEngine};
use crate::measure::usage::UsageMark;
use crate::model::engine::EngineInfo;
use crate::model::job::{JobSpec, WRITE};
use crate::result::{OpClass, OpStats};
use crate::runner::buffers::{Buffers, Dedupe};
use crate::runner::jobs::cmdprio::{thread_ioprio, Picker};
use crate::runner::jobs::files::{self, PreparedFile};
use crate::runner::jobs::logs::Recorder;
use crate::runner::jobs::steady::LatSearch;
use crate::runner::jobs::verify::Verifier;
use crate::runner::rng::Rng;
use crate::runner::sleep_unless_stopped;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// fio lets a job settle for 2 s after its ramp before it first looks at
/// ratemin.
const MIN_RATE_SETTLE: Duration = Duration::from_secs(2);

/// Counts a job's running clones down when the worker ends, however it ends.
pub(super) struct RunningGuard(pub(super) Arc<AtomicU64>);

impl Drop for RunningGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

/// cpus_allowed / cpumask (split: one CPU per clone) and prio / prioclass,
/// applied to this thread before any I/O.
pub(super) fn place_thread(spec: &JobSpec, clone: u32) -> Result<(), String> {
    if let Some(cpus) = &spec.misc.cpus {
        let chosen: Vec<usize> = if spec.misc.cpus_split { vec![cpus[clone as usize % cpus.len()]] } else { cpus.clone() };
        // SAFETY: cpu_set_t is plain data (zeroed is the empty set); CPU_SET
        // only writes bits below CPU_SETSIZE, which the check keeps; the
        // call reads the set we own for its duration.
        let r = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &c in chosen.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
                libc::CPU_SET(c, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
        };
        if r != 0 {
            return Err(format!("job '{}': cpus_allowed {chosen:?}: {}", spec.name, std::io::Error::last_os_error()));
        }
    }
    if let Some((class, level)) = spec.misc.ioprio {
        const IOPRIO_WHO_PROCESS: libc::c_int = 1;
        // SAFETY: ioprio_set takes three integers; 0 means the calling thread.
        let r = unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, ((class << 13) | level) as libc::c_int) };
        if r != 0 {
            return Err(format!("job '{}': prioclass={class} prio={level}: {}", spec.name, std::io::Error::last_os_error()));
        }
    }
    Ok(())
}

/// fio's wait_for: the job starts once the clones of the job it waits for
/// have ended, or when it is stopped.
pub(super) fn wait_for(input: &WorkerInput) {
    if let Some(w) = &input.wait {
        while w.load(Ordering::Acquire) > 0 && !input.halt.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

/// What set-up makes for the worker to own.
struct Made {
    engine: Box<dyn IoEngine>,
    depth: usize,
    seed: u64,
    rng: Rng,
    bufs: Buffers,
    dedupe: Option<Dedupe>,
    verifier: Option<Verifier>,
    fds: Vec<i32>,
    iolog: Option<BufWriter<File>>,
    logs: Option<Recorder>,
    syncs: bool,
}

impl<'a> Worker<'a> {
    /// Set the job up in fio's order: its files opened, its startdelay
    /// slept, the engine made and set up over the files and buffers, its
    /// logs opened. The open files come back beside the worker: they close
    /// after the run.
    pub(super) fn start(
        spec: &'a JobSpec,
        input: &'a WorkerInput,
        info: &EngineInfo,
        imp: &EngineImpl,
    ) -> Result<(Worker<'a>, Vec<Option<File>>), String> {
        // Engines that do no data I/O have no descriptors to sync.
        let opened = info.caps.files.opened();
        let syncs = opened && (spec.fsync > 0 || spec.fdatasync > 0 || spec.end_fsync);
        let open = open_files(spec, &input.files, info, opened)?;
        // Before the engine is set up: a network sender connects after its
        // delay, as in fio, not before the listener's clock has started.
        if !spec.startdelay.is_zero() {
            sleep_unless_stopped(spec.startdelay, &input.halt);
        }
        if spec.ramp_time.is_zero() {
            input.seat.running();
        }
        let mut eopts = spec.engine.clone();
        eopts.map_advice = files::map_advice(spec);
        let engine =
            (imp.make)(&EngineConfig { iodepth: spec.iodepth, options: &eopts }).map_err(|e| format!("ioengine {}: {e}", info.name))?;
        let depth = if info.caps.is_async { spec.iodepth.max(1) as usize } else { 1 };
        let seed = if spec.randrepeat { spec.randseed } else { seed_from_clock() }.wrapping_add(input.clone as u64);
        let mut rng = Rng::new(seed);
        let mut bufs = Buffers::new(depth, spec.max_bs() as usize);
        bufs.fill_all(&spec.buffer, &mut rng);
        let dedupe = dedupe_for(spec, input);
        let efiles = engine_files(spec, &input.files, &open, opened);
        let ebufs: Vec<EngineBuf> = (0..depth).map(|i| EngineBuf { ptr: bufs.slot(i), len: bufs.len }).collect();
        let verifier = spec.verify.enabled().then(|| verifier_for(spec, input, depth, &bufs, info.name == "null"));
        // Bound after the buffers and the verifier, so that a failed set-up
        // drops the engine before the memory it was handed.
        let mut engine = engine;
        let setup_failed = |e: std::io::Error| format!("ioengine {}: setup: {e}", info.name);
        if !opened {
            let paths: Vec<EnginePath> =
                input.files.iter().map(|p| EnginePath { path: &p.path, bytes: p.region.end - p.region.start }).collect();
            engine.setup_paths(&paths).map_err(setup_failed)?;
        }
        engine.setup(&efiles, &ebufs).map_err(setup_failed)?;
        let iolog = open_iolog(spec, input.clone, &input.files)?;
        let logs = Recorder::start(spec, input.thread_number, info.caps.is_async)?;
        let fds = efiles.iter().map(|f| f.fd).collect();
        let made = Made { engine, depth, seed, rng, bufs, dedupe, verifier, fds, iolog, logs, syncs };
        Ok((Worker::assemble(spec, input, info, made), open))
    }

    /// The worker as its first I/O finds it: nothing in flight, nothing
    /// counted, its clock started.
    fn assemble(spec: &'a JobSpec, input: &'a WorkerInput, info: &EngineInfo, made: Made) -> Worker<'a> {
        let Made { engine, depth, seed, rng, bufs, dedupe, verifier, fds, iolog, logs, syncs } = made;
        let t0 = Instant::now();
        let window_start = t0 + spec.ramp_time;
        let capacity = spec.runtime.map(|r| r.as_secs() as usize + 2).unwrap_or(64);
        let blank = Slot {
            start: t0,
            submitted: t0,
            dir: 0,
            len: 0,
            file: 0,
            offset: 0,
            numberio: 0,
            check: false,
            expect_numberio: None,
            expect_seed: None,
            prio: 0,
        };
        Worker {
            spec,
            engine,
            rng,
            slots: vec![blank; depth],
            free: (0..depth as u32).rev().collect(),
            batch: Vec::with_capacity(depth),
            completions: vec![Completion::default(); depth],
            bufs,
            stats: [
                OpStats::new(OP_NAMES[0], OpClass::DataRead, info.caps.is_async),
                OpStats::new(OP_NAMES[1], OpClass::DataWrite, info.caps.is_async),
                OpStats::new(OP_NAMES[2], OpClass::Other, info.caps.is_async),
                OpStats::new(OP_NAMES[3], OpClass::Sync, false),
            ],
            ticker: Ticker::new(window_start, capacity, input.steady.clone()),
            window_start,
            ramp_over: spec.ramp_time.is_zero(),
            ramp_mark: (!spec.ramp_time.is_zero()).then(UsageMark::thread_now),
            ramp_cpu: None,
            with_submit: info.caps.is_async,
            syncs,
            ended: false,
            no_data: info.caps.moves_no_data,
            flow: input.flow.clone(),
            flow_own: 0,
            inflight: 0,
            error: None,
            paths: input.files.iter().map(|f| f.path.display().to_string()).collect(),
            fds,
            iolog,
            logs,
            cmdprio: Picker::new(spec, seed),
            default_prio: thread_ioprio(spec),
            depths: Depths::default(),
            eof: false,
            enospc_ends: spec.misc.fill_device,
            verifier,
            dedupe,
            epoch: t0,
            dry_run: spec.verify.only && spec.verify.enabled() && spec.rw.writes(),
            writes_issued: 0,
            progress_base: 0,
            phase_ns: [0; 2],
            events: input.events.clone(),
            seat: &input.seat,
            failures: Vec::with_capacity(8),
            rate_check_at: spec.misc.checks_min_rate().then(|| window_start + MIN_RATE_SETTLE),
            rate_marks: [None, None],
            lat: spec.misc.latency.enabled().then(|| LatSearch::new(&spec.misc.latency, depth, t0)),
            search_mark: spec.misc.latency.enabled().then(UsageMark::thread_now),
        }
    }
}

/// The job's files, opened and advised; `None` for a diskless one. An
/// engine that opens nothing itself gets none.
fn open_files(spec: &JobSpec, prepared: &[PreparedFile], info: &EngineInfo, opened: bool) -> Result<Vec<Option<File>>, String> {
    let mut open = Vec::with_capacity(prepared.len());
    for f in prepared.iter().filter(|_| opened) {
        if f.diskless {
            open.push(None);
            continue;
        }
        let file = files::open(spec, f, &info.caps)?;
        files::advise(spec, &file, f);
        open.push(Some(file));
    }
    Ok(open)
}

/// The files as the engine sees them: a descriptor (or -1), the size, and
/// whether it may write.
fn engine_files(spec: &JobSpec, prepared: &[PreparedFile], open: &[Option<File>], opened: bool) -> Vec<EngineFile> {
    if opened {
        open.iter()
            .zip(prepared)
            .map(|(f, p)| EngineFile { fd: f.as_ref().map_or(-1, |f| f.as_raw_fd()), size: p.region.end, writable: spec.modifies_files() })
            .collect()
    } else {
        prepared.iter().map(|p| EngineFile { fd: -1, size: p.region.end, writable: spec.rw.writes() }).collect()
    }
}

/// The seeds of dedupe_percentage's copies, drawn over the job's bytes.
fn dedupe_for(spec: &JobSpec, input: &WorkerInput) -> Option<Dedupe> {
    let job_bytes = spec.size.unwrap_or_else(|| input.files.iter().map(|f| f.region.end - f.region.start).sum());
    Dedupe::new(
        &spec.buffer,
        spec.randseed.wrapping_add(u64::from(input.thread_number) << 48),
        input.dedupe_rank,
        job_bytes,
        spec.bs[WRITE].min(),
    )
}

/// The verifier over the job's files, its headers laid into each slot.
fn verifier_for(spec: &JobSpec, input: &WorkerInput, depth: usize, bufs: &Buffers, fake_io: bool) -> Verifier {
    let paths = input.files.iter().map(|f| f.path.clone()).collect();
    let regions: Vec<(u64, u64)> = input.files.iter().map(|f| (f.region.start, f.region.end)).collect();
    let mut v = Verifier::new(spec, input.clone, depth, paths, &regions, fake_io);
    let ptrs: Vec<*mut u8> = (0..depth).map(|i| bufs.slot(i)).collect();
    v.prepare(&ptrs, bufs.len);
    v
}

fn seed_from_clock() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

fn open_iolog(spec: &JobSpec, clone: u32, files: &[PreparedFile]) -> Result<Option<BufWriter<File>>, String> {
    let Some(path) = &spec.write_iolog else { return Ok(None) };
    let path = if spec.numjobs > 1 { path.with_extension(format!("{clone}")) } else { path.clone() };
    let f = crate::environment::safety::create_output("write_iolog", &path, false)?;
    let mut w = BufWriter::with_capacity(1 << 20, f);
    let _ = writeln!(w, "fio version 2 iolog");
    for f in files {
        let _ = writeln!(w, "{} add", f.path.display());
        let _ = writeln!(w, "{} open", f.path.display());
    }
    Ok(Some(w))
}
