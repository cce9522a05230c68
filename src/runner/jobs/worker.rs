//! One worker thread: issues a job's I/O through its engine and times it.
//!
//! The loop is the measurement path. Per I/O it reads the clock twice
//! (issue, completion), records into thread-local histograms and counters,
//! and makes the engine's own call(s); no allocation, lock or formatting
//! (the optional I/O log is the user's explicit exception; the bw/lat/iops
//! logs copy a sample into a preallocated chunk, see `logs`).

use super::cmdprio::{thread_ioprio, Picker};
use super::files::{self, PreparedFile};
use super::logs::{Recorder, Sample};
use super::offsets::{OffsetGen, Shape, Skew};
use super::roster::Seat;
use super::steady::{LatSearch, LatStep, LeaveGuard, Steady};
use super::verify::{Expect, Stamp, Verifier, VerifyStats};
use crate::ioengine::{self, Completion, EngineBuf, EngineConfig, EngineFile, EnginePath, IoEngine, IoOp, IoUnit, Queued};
use crate::measure::usage::{CpuUsage, UsageMark};
use crate::model::job::{BlockSize, JobSpec, READ, TRIM, WRITE};
use crate::model::job_misc::{ExitWhat, RateProcess, Sequencer};
use crate::result::{OpClass, OpStats, Timeline};
use crate::runner::buffers::{self, Buffers, Dedupe};
use crate::runner::events::Events;
use crate::runner::rng::Rng;
use crate::runner::sleep_unless_stopped;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Operation types a fio-style job reports, in result order; the first
/// three are fio's directions, indexed by `READ`, `WRITE`, `TRIM`.
pub const OP_NAMES: [&str; 4] = ["read", "write", "trim", "sync"];
const SYNC: usize = 3;
const KINDS: usize = OP_NAMES.len();
const TICK: Duration = Duration::from_secs(1);
const MIN_RATE_SETTLE: Duration = Duration::from_secs(2);

/// A counter the progress display reads; one cache line per worker, written
/// with plain stores so workers never contend.
#[repr(align(64))]
#[derive(Default)]
pub struct ProgressCell {
    pub bytes: AtomicU64,
    pub done: AtomicBool,
}

pub struct WorkerInput {
    pub spec: Arc<JobSpec>,
    pub clone: u32,
    /// This thread's number among all threads of the invocation, from 1
    /// (fio's, which names its log files).
    pub thread_number: u32,
    pub files: Vec<PreparedFile>,
    /// Set by Ctrl-C: what the job did is reported as partial.
    pub stop: Arc<AtomicBool>,
    /// This worker's stop: set by a job's exitall (fio's terminate, which
    /// is no failure) and by Ctrl-C, forwarded by the group's follower. The
    /// only flag the I/O loop reads.
    pub halt: Arc<AtomicBool>,
    /// Its place among the workers running with it, which exitall reaches.
    pub seat: Seat,
    /// exitall with exit_what=all: the groups after this one do not run.
    pub end_run: Arc<AtomicBool>,
    pub progress: Arc<ProgressCell>,
    /// Clones of the job this one waits for (`wait_for`) still running.
    pub wait: Option<Arc<AtomicU64>>,
    /// This job's own count of clones still running, for its waiters.
    pub running: Arc<AtomicU64>,
    /// The job's flow (fio `flow`): I/Os issued by all its jobs, and their weights.
    pub flow: Option<Arc<Flow>>,
    /// Verification failures are told here as they happen.
    pub events: Arc<dyn Events>,
    /// The steady-state judgement this clone takes part in (fio `ss_dur`).
    pub steady: Option<Arc<Steady>>,
    /// This thread's index and the count of threads sharing a global dedupe
    /// working set (fio `dedupe_global`); (0, 0) outside one.
    pub dedupe_rank: (u32, u32),
}

#[derive(Default)]
pub struct WorkerOutput {
    pub ops: Vec<OpStats>,
    pub timeline: Timeline,
    pub elapsed_ns: u64,
    pub partial: bool,
    pub error: Option<String>,
    /// This thread's CPU during its ramp, which the group's CPU leaves out
    /// (CPU per op is over the measured ops only).
    pub ramp_cpu: Option<CpuUsage>,
    pub depths: Depths,
    pub verify: Option<VerifyStats>,
    /// Handed back so the group reads the verdict once every clone has ended.
    pub steady: Option<Arc<Steady>>,
    /// The depth the latency-target search ended at.
    pub latency_depth: Option<u32>,
    /// With cmdprio: measured reads and writes per priority.
    pub cmdprio: Option<crate::result::cmdprio::CmdPrioStats>,
}

/// fio's queue-depth distributions (`iodepth_level`, `iodepth_submit`,
/// `iodepth_complete`) as counts: I/Os by the depth they were issued at
/// (1, 2, 4, 8, 16, 32, >=64), and submit and reap calls by how many I/Os
/// they carried (0, 1-4, 5-8, 9-16, 17-32, 33-64, >64).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Depths {
    pub level: [u64; 7],
    pub submit: [u64; 7],
    pub complete: [u64; 7],
}

impl Depths {
    #[inline]
    fn level_bucket(depth: usize) -> usize {
        match depth {
            0..=1 => 0,
            2..=3 => 1,
            4..=7 => 2,
            8..=15 => 3,
            16..=31 => 4,
            32..=63 => 5,
            _ => 6,
        }
    }
    #[inline]
    fn batch_bucket(n: usize) -> usize {
        match n {
            0 => 0,
            1..=4 => 1,
            5..=8 => 2,
            9..=16 => 3,
            17..=32 => 4,
            33..=64 => 5,
            _ => 6,
        }
    }
    pub fn merge(&mut self, o: &Depths) {
        for (a, b) in [(&mut self.level, &o.level), (&mut self.submit, &o.submit), (&mut self.complete, &o.complete)] {
            for (x, y) in a.iter_mut().zip(b) {
                *x += y;
            }
        }
    }
}

#[derive(Clone, Copy)]
struct Slot {
    start: Instant,
    submitted: Instant,
    dir: u8,
    len: u32,
    file: u32,
    offset: u64,
    /// Writes: the job's write count at issue (the header's sequence number).
    numberio: u16,
    /// Reads: check the data when it arrives (read-back or a verifying read job).
    check: bool,
    expect_numberio: Option<u16>,
    expect_seed: Option<u64>,
    /// The ioprio value it was issued with (the logs' priority column).
    prio: u16,
}

/// Per-interval counters, pushed into preallocated series once a second.
struct Ticker {
    next: Instant,
    cur_ops: [u64; KINDS],
    cur_bytes: [u64; KINDS],
    ops: [Vec<u64>; KINDS],
    bytes: [Vec<u64>; KINDS],
    /// Told each closed second: the steady-state check costs nothing per I/O.
    steady: Option<Arc<Steady>>,
}

impl Ticker {
    fn new(start: Instant, capacity: usize, steady: Option<Arc<Steady>>) -> Ticker {
        let v = || Vec::with_capacity(capacity);
        Ticker {
            next: start + TICK,
            cur_ops: [0; KINDS],
            cur_bytes: [0; KINDS],
            ops: std::array::from_fn(|_| v()),
            bytes: std::array::from_fn(|_| v()),
            steady,
        }
    }

    /// Measurement starts again at `now` (the latency search's final run).
    fn restart(&mut self, now: Instant) {
        self.cur_ops = [0; KINDS];
        self.cur_bytes = [0; KINDS];
        self.ops.iter_mut().chain(self.bytes.iter_mut()).for_each(Vec::clear);
        self.next = now + TICK;
    }

    #[inline]
    fn add(&mut self, t: Instant, dir: usize, bytes: u64) {
        while t >= self.next {
            self.roll();
        }
        self.cur_ops[dir] += 1;
        self.cur_bytes[dir] += bytes;
    }

    fn roll(&mut self) {
        if let Some(s) = &self.steady {
            // fio's steady state counts reads, writes and trims, not syncs.
            let sec = self.ops[0].len() as u64;
            s.second(sec, self.cur_ops[..SYNC].iter().sum(), self.cur_bytes[..SYNC].iter().sum());
        }
        for d in 0..KINDS {
            self.ops[d].push(self.cur_ops[d]);
            self.bytes[d].push(self.cur_bytes[d]);
        }
        self.cur_ops = [0; KINDS];
        self.cur_bytes = [0; KINDS];
        self.next += TICK;
    }

    fn forget_bytes(&mut self) {
        self.cur_bytes = [0; KINDS];
        for b in self.bytes.iter_mut() {
            b.iter_mut().for_each(|x| *x = 0);
        }
    }

    /// Complete intervals only; the partial tail would read as a dip. An
    /// interval that ended before `end` is complete even when no I/O
    /// finished after its boundary.
    fn into_timeline(mut self, used: [bool; KINDS], end: Instant) -> Timeline {
        // The job is over; its trailing idle seconds are no rate to judge.
        self.steady = None;
        while end >= self.next {
            self.roll();
        }
        let mut tl = Timeline { interval_ms: TICK.as_millis() as u64, ..Default::default() };
        for d in 0..KINDS {
            if used[d] {
                tl.ops.insert(OP_NAMES[d].to_string(), self.ops[d].clone());
                tl.bytes.insert(OP_NAMES[d].to_string(), self.bytes[d].clone());
            }
        }
        tl
    }
}

struct Worker<'a> {
    spec: &'a JobSpec,
    engine: Box<dyn IoEngine>,
    rng: Rng,
    slots: Vec<Slot>,
    free: Vec<u32>,
    batch: Vec<u32>,
    completions: Vec<Completion>,
    bufs: Buffers,
    stats: [OpStats; KINDS],
    ticker: Ticker,
    window_start: Instant,
    /// The ramp has ended (or there is none). Completions are recorded from
    /// the start and reset when the ramp ends.
    ramp_over: bool,
    /// Taken when the ramp starts; turned into `ramp_cpu` when it ends.
    ramp_mark: Option<UsageMark>,
    ramp_cpu: Option<CpuUsage>,
    with_submit: bool,
    /// fsync/fdatasync apply (the engine has descriptors).
    syncs: bool,
    /// The engine moves no bytes (cpuio, exec): only the run time ends the job.
    no_data: bool,
    flow: Option<Arc<Flow>>,
    /// I/Os this clone issued, against its flow's total.
    flow_own: u64,
    /// The engine's peer finished (`IoEngine::finished`): the job is over.
    ended: bool,
    inflight: usize,
    error: Option<String>,
    paths: Vec<String>,
    fds: Vec<i32>,
    iolog: Option<BufWriter<File>>,
    logs: Option<Recorder>,
    /// cmdprio's choice per I/O; `None` without cmdprio.
    cmdprio: Option<Picker>,
    /// The thread's priority, which the I/Os cmdprio leaves are logged with.
    default_prio: u16,
    depths: Depths,
    /// A read returned 0 bytes (end of a character device): the job ends, as in fio.
    eof: bool,
    /// fill_device: ENOSPC ends the job instead of failing it.
    enospc_ends: bool,
    verifier: Option<Verifier>,
    /// Seeds of refilled content when some writes copy earlier ones.
    dedupe: Option<Dedupe>,
    /// Scrambled writes carry their issue time since this instant.
    epoch: Instant,
    /// verify_only: the write workload runs without I/O, only recording
    /// what it would have written.
    dry_run: bool,
    writes_issued: u64,
    /// Bytes issued by earlier rounds and read-backs (fio's io_bytes sum).
    progress_base: u64,
    /// Measured time of the write rounds and of the read-backs, per direction.
    phase_ns: [u64; 2],
    events: Arc<dyn Events>,
    seat: &'a Seat,
    failures: Vec<String>,
    /// ratemin/rate_iops_min: when the rates are looked at next (None: no
    /// minimum), and per direction the last look's time, bytes and I/Os.
    rate_check_at: Option<Instant>,
    rate_marks: [Option<(Instant, u64, u64)>; 2],
    /// fio's latency-target depth search, when the job sets latency_target.
    lat: Option<LatSearch>,
    /// Taken at the start for a latency search: its final run leaves the
    /// search's CPU out, as the ramp's is.
    search_mark: Option<UsageMark>,
}

/// The jobs of one `flow_id` in a group: their I/Os so far and the sum of
/// their weights (each clone counts), so each keeps its share.
#[derive(Debug, Default)]
pub struct Flow {
    pub ios: AtomicU64,
    /// A clone takes its weight out when it ends, so the others never wait
    /// for a job that is gone (as fio does).
    pub weight: AtomicU64,
}

/// Counts a job's running clones down when the worker ends, however it ends.
struct RunningGuard(Arc<AtomicU64>);

impl Drop for RunningGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Release);
    }
}

/// cpus_allowed / cpumask (split: one CPU per clone) and prio / prioclass,
/// applied to this thread before any I/O.
fn place_thread(spec: &JobSpec, clone: u32) -> Result<(), String> {
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

pub fn run(input: WorkerInput) -> WorkerOutput {
    let spec = input.spec.clone();
    let reads_back = spec.verify.enabled() && spec.rw.writes() && (spec.verify.do_verify || spec.verify.only);
    let fail = |e: String| WorkerOutput { error: Some(e), ..WorkerOutput::default() };
    let (Some(info), Some(imp)) = (crate::model::engine::find(&spec.ioengine), ioengine::find(&spec.ioengine)) else {
        return fail(format!("unknown ioengine '{}'", spec.ioengine));
    };
    // A table of its own before the worker opens its files: with the
    // process's table shared, every pread/pwrite takes and drops a file
    // reference (see `host::private_fd_table`); fio's jobs are processes
    // and never pay that. Sockets stay (a network job's may come from outside).
    crate::host::private_fd_table(true);
    let _running = RunningGuard(input.running.clone());
    let _leave = LeaveGuard(input.steady.clone());
    if let Err(e) = place_thread(&spec, input.clone) {
        return fail(e);
    }
    if let Some(w) = &input.wait {
        while w.load(Ordering::Acquire) > 0 && !input.halt.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    // Engines that do no data I/O have no descriptors to sync.
    let opened = info.caps.files.opened();
    let syncs = opened && (spec.fsync > 0 || spec.fdatasync > 0 || spec.end_fsync);
    let used = [spec.rw.reads() || reads_back, spec.rw.writes(), spec.rw.trims(), syncs];
    let mut open = Vec::with_capacity(input.files.len());
    for f in input.files.iter().filter(|_| opened) {
        if f.diskless {
            open.push(None);
            continue;
        }
        match files::open(&spec, f, &info.caps) {
            Ok(file) => {
                files::advise(&spec, &file, f);
                open.push(Some(file));
            }
            Err(e) => return fail(e),
        }
    }
    // Before the engine is set up: a network sender connects after its
    // delay, as in fio, not before the listener's clock has started.
    if !spec.startdelay.is_zero() {
        sleep_unless_stopped(spec.startdelay, &input.halt);
    }
    if spec.ramp_time.is_zero() {
        input.seat.running();
    }
    let mut eopts = spec.engine.clone();
    eopts.map_advice = files::map_advice(&spec);
    let engine = match (imp.make)(&EngineConfig { iodepth: spec.iodepth, options: &eopts }) {
        Ok(e) => e,
        Err(e) => return fail(format!("ioengine {}: {e}", info.name)),
    };
    let depth = if info.caps.is_async { spec.iodepth.max(1) as usize } else { 1 };
    let seed = if spec.randrepeat { spec.randseed } else { seed_from_clock() }.wrapping_add(input.clone as u64);
    let mut rng = Rng::new(seed);
    let mut bufs = Buffers::new(depth, spec.max_bs() as usize);
    bufs.fill_all(&spec.buffer, &mut rng);
    let job_bytes = spec.size.unwrap_or_else(|| input.files.iter().map(|f| f.region.end - f.region.start).sum());
    let dedupe = Dedupe::new(
        &spec.buffer,
        spec.randseed.wrapping_add(u64::from(input.thread_number) << 48),
        input.dedupe_rank,
        job_bytes,
        spec.bs[WRITE].min(),
    );

    let efiles: Vec<EngineFile> = if opened {
        open.iter()
            .zip(&input.files)
            .map(|(f, p)| EngineFile { fd: f.as_ref().map_or(-1, |f| f.as_raw_fd()), size: p.region.end, writable: spec.modifies_files() })
            .collect()
    } else {
        input.files.iter().map(|p| EngineFile { fd: -1, size: p.region.end, writable: spec.rw.writes() }).collect()
    };
    let ebufs: Vec<EngineBuf> = (0..depth).map(|i| EngineBuf { ptr: bufs.slot(i), len: bufs.len }).collect();
    let verifier = spec.verify.enabled().then(|| {
        let paths = input.files.iter().map(|f| f.path.clone()).collect();
        let regions: Vec<(u64, u64)> = input.files.iter().map(|f| (f.region.start, f.region.end)).collect();
        let mut v = Verifier::new(&spec, input.clone, depth, paths, &regions, info.name == "null");
        let ptrs: Vec<*mut u8> = (0..depth).map(|i| bufs.slot(i)).collect();
        v.prepare(&ptrs, bufs.len);
        v
    });
    let mut engine = engine;
    if !opened {
        let paths: Vec<EnginePath> =
            input.files.iter().map(|p| EnginePath { path: &p.path, bytes: p.region.end - p.region.start }).collect();
        if let Err(e) = engine.setup_paths(&paths) {
            return fail(format!("ioengine {}: setup: {e}", info.name));
        }
    }
    if let Err(e) = engine.setup(&efiles, &ebufs) {
        return fail(format!("ioengine {}: setup: {e}", info.name));
    }
    let iolog = match open_iolog(&spec, input.clone, &input.files) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };

    let logs = match Recorder::start(&spec, input.thread_number, info.caps.is_async) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let t0 = Instant::now();
    let window_start = t0 + spec.ramp_time;
    let capacity = spec.runtime.map(|r| r.as_secs() as usize + 2).unwrap_or(64);
    let now = t0;
    let blank = Slot {
        start: now,
        submitted: now,
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
    let mut w = Worker {
        spec: &spec,
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
        fds: efiles.iter().map(|f| f.fd).collect(),
        iolog,
        logs,
        cmdprio: Picker::new(&spec, seed),
        default_prio: thread_ioprio(&spec),
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
        // fio lets a job settle for 2 s after its ramp before the first look.
        rate_check_at: spec.misc.checks_min_rate().then(|| window_start + MIN_RATE_SETTLE),
        rate_marks: [None, None],
        lat: spec.misc.latency.enabled().then(|| LatSearch::new(&spec.misc.latency, depth, t0)),
        search_mark: spec.misc.latency.enabled().then(UsageMark::thread_now),
    };
    let region_total: u64 = input.files.iter().map(|f| f.region.end - f.region.start).sum();
    // With filesize, size only sets how much I/O a loop does, and no
    // more than the files hold (fio: filesize=2m nrfiles=3 size=8m reads 6m).
    let sized = if spec.misc.filesize.is_some() { spec.size.map(|s| s.min(region_total)) } else { None };
    let io_limit = spec.io_size.or(sized).unwrap_or(region_total);
    let halted = if reads_back {
        w.rounds(&input, depth, region_total, io_limit)
    } else {
        w.main_loop(&input.files, &input.halt, &input.progress, depth, io_limit.saturating_mul(spec.loops as u64))
    };
    // Stopped by another job's exitall, the job ends as fio's do: synced,
    // complete, not partial.
    let partial = halted && input.stop.load(Ordering::Relaxed);
    if let Some(f) = &w.flow {
        f.weight.fetch_sub(u64::from(spec.misc.flow), Ordering::Relaxed);
    }
    if w.error.is_none() && spec.end_fsync && syncs && !partial {
        for file in 0..efiles.len() as u32 {
            w.sync_now(file, IoOp::Fsync);
        }
    }
    let end = Instant::now();
    input.progress.done.store(true, Ordering::Relaxed);
    if let Some(log) = w.iolog.as_mut() {
        for p in &w.paths {
            let _ = writeln!(log, "{p} close");
        }
        let _ = log.flush();
    }
    // A job that ended inside its ramp reports all it did, as fio does
    // (its statistics are only reset when the ramp ends).
    let from = if w.ramp_over { w.window_start } else { t0 };
    let elapsed_ns = end.saturating_duration_since(from).as_nanos() as u64;
    if let Some(l) = w.logs.take() {
        if let Err(e) = l.finish(elapsed_ns) {
            w.set_error(e);
        }
    }
    if reads_back {
        for d in [READ, WRITE] {
            w.stats[d].active_ns = Some(w.phase_ns[d]);
        }
    }
    drop(open);
    let latency_depth = w.lat.as_ref().map(|l| l.qd as u32);
    let cmdprio = w.cmdprio.as_ref().map(Picker::stats);
    let Worker { mut stats, mut ticker, mut error, ramp_cpu, depths, verifier, .. } = w;
    if info.caps.moves_no_data {
        // The engine's operations carry a block size but no bytes (fio
        // reports them the same way).
        for s in stats.iter_mut() {
            s.bytes = 0;
        }
        ticker.forget_bytes();
    }
    let verify = verifier.map(|v| {
        if error.is_none() && v.stats.mismatches > 0 {
            error = v.first_failure.clone();
        }
        v.stats
    });
    if spec.misc.exitall || (spec.misc.exitall_on_error && error.is_some()) {
        input.seat.exit(spec.misc.exit_what);
        if spec.misc.exit_what == ExitWhat::All {
            input.end_run.store(true, Ordering::Relaxed);
        }
    }
    let ops = stats.into_iter().zip(used).filter(|(_, u)| *u).map(|(s, _)| s).collect();
    WorkerOutput {
        ops,
        timeline: ticker.into_timeline(used, end),
        elapsed_ns,
        partial,
        error,
        ramp_cpu,
        depths,
        verify,
        steady: input.steady.clone(),
        latency_depth,
        cmdprio,
    }
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

/// Remaining work of the worker, decided at issue time.
struct Budget {
    end_time: Option<Instant>,
    bytes: u64,
    issued: u64,
    time_based: bool,
    ios: u64,
    max_ios: u64,
}

impl Budget {
    #[inline]
    fn exhausted(&self, now: Instant) -> bool {
        if let Some(e) = self.end_time {
            if now >= e {
                return true;
            }
        }
        self.ios >= self.max_ios || (!self.time_based && self.issued >= self.bytes)
    }
}

/// Keeps a direction's I/O under its rate (bytes/s or IOPS) by sleeping.
/// Each I/O has a due time from the start, so a late one is followed at
/// once by the next (the mean rate holds).
struct Pacer {
    start: Instant,
    bytes_per_s: [Option<u64>; 2],
    iops: [Option<u64>; 2],
    sent_bytes: [u64; 2],
    sent_ios: [u64; 2],
    /// rate_process=poisson: the mean gap between I/Os per direction (ns);
    /// the gaps are drawn from an exponential with that mean.
    poisson_mean_ns: Option<[f64; 2]>,
    /// Poisson: the next I/O's due time from `start` (ns), per direction.
    next_ns: [f64; 2],
}

impl Pacer {
    fn new(spec: &JobSpec) -> Pacer {
        // fio's Poisson mean: a rate in bytes counts as that many smallest
        // blocks per second; a job with both caps keeps the slower.
        let mean = |d: usize| {
            let by_bytes = spec.rate[d].map_or(0.0, |r| 1e9 * spec.bs[d].min() as f64 / r.max(1) as f64);
            let by_ios = spec.rate_iops[d].map_or(0.0, |r| 1e9 / r.max(1) as f64);
            by_bytes.max(by_ios)
        };
        let poisson = spec.misc.rate_process == RateProcess::Poisson;
        Pacer {
            start: Instant::now(),
            bytes_per_s: spec.rate,
            iops: spec.rate_iops,
            sent_bytes: [0; 2],
            sent_ios: [0; 2],
            poisson_mean_ns: poisson.then(|| [mean(READ), mean(WRITE)]),
            next_ns: [0.0; 2],
        }
    }
    fn active(&self) -> bool {
        self.bytes_per_s.iter().chain(&self.iops).any(|r| r.is_some())
    }
    /// Sleep until this I/O is due, but not past `deadline` (the runtime's
    /// end): as fio, a job whose next I/O is due after its runtime ends
    /// with it rather than sleeping on.
    fn wait(&mut self, dir: usize, len: u64, now: Instant, deadline: Option<Instant>, stop: &AtomicBool, rng: &mut Rng) {
        let mut due_ns = 0u128;
        if let Some(mean) = self.poisson_mean_ns.map(|m| m[dir]).filter(|m| *m > 0.0) {
            due_ns = self.next_ns[dir] as u128;
            // 1 - [0, 1) is in (0, 1], whose log is finite.
            let u = 1.0 - (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            self.next_ns[dir] += -u.ln() * mean;
        } else {
            if let Some(r) = self.bytes_per_s[dir] {
                due_ns = due_ns.max(self.sent_bytes[dir] as u128 * 1_000_000_000 / r.max(1) as u128);
            }
            if let Some(r) = self.iops[dir] {
                due_ns = due_ns.max(self.sent_ios[dir] as u128 * 1_000_000_000 / r.max(1) as u128);
            }
        }
        let mut due = self.start + Duration::from_nanos(due_ns.min(u64::MAX as u128) as u64);
        if let Some(d) = deadline {
            due = due.min(d);
        }
        if due > now {
            sleep_unless_stopped(due - now, stop);
        }
        self.sent_bytes[dir] += len;
        self.sent_ios[dir] += 1;
    }
}

impl<'a> Worker<'a> {
    /// A job that reads back what it wrote runs as fio's rounds: each writes
    /// at most the file size (io_size when smaller; random norandommap jobs
    /// up to io_size) and then checks it; rounds go on for `loops`, then
    /// while the bytes written and read stay below io_size.
    fn rounds(&mut self, input: &WorkerInput, depth: usize, region_total: u64, io_limit: u64) -> bool {
        let spec = self.spec;
        let cap = if spec.rw.is_random() && spec.norandommap { region_total.max(io_limit) } else { region_total };
        let per_round = cap.min(io_limit);
        let end_time = spec.runtime.map(|r| self.window_start + r);
        let mut loops_left = spec.loops;
        loop {
            if loops_left > 0 {
                loops_left -= 1;
            } else {
                let done = self.progress_base;
                if done >= io_limit || io_limit - done < spec.max_bs() {
                    return false;
                }
            }
            let t = Instant::now();
            let stopped = self.main_loop(&input.files, &input.halt, &input.progress, depth, per_round);
            let d = self.measured_since(t);
            self.phase_ns[WRITE] += d;
            if spec.rw.reads() || spec.verify.backlog > 0 {
                self.phase_ns[READ] += d;
            }
            if stopped {
                return true;
            }
            if self.error.is_some() || self.ended || self.halted() {
                return false;
            }
            let t = Instant::now();
            let stopped = self.read_back(&input.halt, depth, false);
            self.phase_ns[READ] += self.measured_since(t);
            if stopped {
                return true;
            }
            if self.error.is_some() || end_time.is_some_and(|e| Instant::now() >= e) {
                return false;
            }
        }
    }

    /// Nanoseconds of the measured window since `t`.
    fn measured_since(&self, t: Instant) -> u64 {
        Instant::now().saturating_duration_since(t.max(self.window_start)).as_nanos() as u64
    }

    fn main_loop(&mut self, files: &[PreparedFile], stop: &AtomicBool, progress: &ProgressCell, depth: usize, bytes: u64) -> bool {
        let spec = self.spec;
        let random = spec.rw.is_random();
        let variable = !(spec.bs[READ].is_fixed() && spec.bs[WRITE].is_fixed());
        let m = &spec.misc;
        let align = |d: usize| m.blockalign[d].unwrap_or_else(|| spec.bs[d].min());
        let shared_gen = random && align(READ) == align(WRITE) && m.distribution[READ] == m.distribution[WRITE];
        let zones = m.strided();
        // Built once per file size: a zipf's normalising sum is costly on big files.
        let mut skews: Vec<(u64, usize, Option<Skew>)> = Vec::new();
        let mut gens: Vec<[OffsetGen; 2]> = Vec::with_capacity(files.len());
        for f in files {
            let mut mk = |d: usize, rng: &mut Rng| {
                let a = align(d);
                let n = (f.region.end - f.region.start).saturating_sub(spec.bs[d].min()) / a + 1;
                let skew = match skews.iter().find(|s| s.0 == n && s.1 == d) {
                    Some(s) => s.2.clone(),
                    None => {
                        let s = if random { Skew::new(&m.distribution[d], n, a, rng) } else { None };
                        skews.push((n, d, s.clone()));
                        s
                    }
                };
                let shape = Shape {
                    random,
                    map: !spec.norandommap,
                    variable,
                    align: if random { a } else { spec.bs[d].min() },
                    min_len: spec.bs[d].min(),
                    skew,
                    skip: m.seq_skip,
                    every: m.rand_every,
                    identical: m.sequencer == Sequencer::Identical,
                    zones,
                };
                OffsetGen::new(f.region, shape, rng)
            };
            gens.push([mk(READ, &mut self.rng), mk(WRITE, &mut self.rng)]);
        }
        let mut budget = Budget {
            end_time: spec.runtime.map(|r| self.window_start + r),
            bytes,
            issued: 0,
            // fill_device runs until ENOSPC, unless a size bounds it (as in fio).
            time_based: spec.time_based || (m.fill_device && spec.size.is_none()) || self.no_data,
            ios: 0,
            max_ios: m.number_ios.unwrap_or(u64::MAX),
        };
        let drop_cache_on_wrap = spec.time_based && spec.invalidate && !spec.direct;
        // Rates hold from the first I/O on, ramp included.
        let mut pacer = Pacer::new(spec);
        let pacing = pacer.active() && !self.dry_run;
        let mixed = spec.rw.reads() && spec.rw.writes();
        let only = if spec.rw.reads() {
            READ
        } else if spec.rw.trims() {
            TRIM
        } else {
            WRITE
        };
        // trimwrite: every trimmed block is written next, outside the budget
        // (fio reports size bytes trimmed and size bytes written).
        let trim_then_write = spec.rw.trims() && spec.rw.writes();
        let mut rewrite: Option<(u32, u64, u64)> = None;
        let sync_every = if !self.syncs {
            0
        } else if spec.fsync > 0 {
            spec.fsync
        } else {
            spec.fdatasync
        };
        let sync_op = if spec.fsync > 0 { IoOp::Fsync } else { IoOp::Fdatasync };
        let batch_submit = spec.engine.iodepth_batch_submit as usize;
        let reap_min = (spec.engine.iodepth_batch_complete_min as usize).clamp(1, depth);
        // I/Os in flight at most: the iodepth, or the latency search's depth.
        let mut limit = self.lat.as_ref().map_or(depth, |l| l.qd.min(depth));
        let nfiles = files.len() as u32;
        let mut next_file = 0u32;
        let mut writes = 0u64;
        let mut sync_due: Option<u32> = None;
        let mut done = false;
        let mut partial = false;

        loop {
            while !done && self.inflight < limit {
                if let Some(file) = sync_due {
                    if self.inflight > 0 {
                        break;
                    }
                    self.sync_now(file, sync_op);
                    sync_due = None;
                    continue;
                }
                let mut now = Instant::now();
                if !self.ramp_over && now >= self.window_start {
                    self.start_window();
                    budget.issued = 0;
                    budget.ios = 0;
                    limit = self.lat.as_ref().map_or(depth, |l| l.qd.min(depth));
                }
                // fio judges the depth outside the ramp only.
                if self.ramp_over && self.lat.as_ref().is_some_and(|l| now >= l.due) {
                    // A lower depth has drained the queue, so issuing on is right.
                    limit = self.latency_step(depth);
                    // Draining took time that is no part of the next I/O.
                    now = Instant::now();
                }
                // One relaxed load of a flag nobody writes until Ctrl-C or
                // an exitall: it stays in this core's cache and costs ~1 ns.
                if stop.load(Ordering::Relaxed) {
                    partial = true;
                    done = true;
                    break;
                }
                if let Some((file, offset, len)) = rewrite.take() {
                    if self.error.is_some() {
                        done = true;
                        break;
                    }
                    self.issue(WRITE, file, offset, len as u32, now);
                    if sync_every > 0 {
                        writes += 1;
                        if writes % sync_every as u64 == 0 {
                            sync_due = Some(file);
                        }
                    }
                    continue;
                }
                if self.rate_check_at.is_some_and(|t| now >= t) {
                    self.check_min_rate(now);
                }
                if budget.exhausted(now) || self.error.is_some() || self.eof || self.ended || self.halted() {
                    done = true;
                    break;
                }
                if self.verifier.as_ref().is_some_and(|v| v.backlog_due()) {
                    // Check the oldest completed writes before writing on.
                    while self.inflight > 0 {
                        self.reap(self.inflight);
                    }
                    if self.read_back(stop, depth, true) {
                        partial = true;
                        done = true;
                        break;
                    }
                    continue;
                }
                let dir = if mixed {
                    if self.rng.below(100) < spec.rwmixread as u64 {
                        READ
                    } else {
                        WRITE
                    }
                } else {
                    only
                };
                let file = next_file;
                next_file = if next_file + 1 == nfiles { 0 } else { next_file + 1 };
                // Trims share the write side: its block size, its offsets.
                let gi = if shared_gen { READ } else { dir.min(WRITE) };
                let g = &mut gens[file as usize][gi];
                let offset = g.offset(&mut self.rng);
                if g.wrapped {
                    g.wrapped = false;
                    if drop_cache_on_wrap {
                        files::drop_cache(self.fds[file as usize]);
                    }
                }
                let room = g.room(offset);
                let mut len = self.block_len(dir);
                if len > room {
                    // As fio: draw again until the I/O fits before the end.
                    len = (0..16).map(|_| self.block_len(dir)).find(|&l| l <= room).unwrap_or_else(|| spec.bs[dir].min());
                }
                let len = gens[file as usize][gi].commit(offset, len);
                let mut start = now;
                if pacing && dir != TRIM {
                    pacer.wait(dir, len, now, budget.end_time, stop, &mut self.rng);
                    start = Instant::now();
                    // As fio: an I/O whose wait ran into a stop or the
                    // runtime's end is not issued.
                    if stop.load(Ordering::Relaxed) {
                        partial = true;
                        done = true;
                        break;
                    }
                    if budget.exhausted(start) {
                        done = true;
                        break;
                    }
                }
                if !spec.thinktime.is_zero() && !self.dry_run {
                    sleep_unless_stopped(spec.thinktime, stop);
                    start = Instant::now();
                }
                budget.issued += len;
                budget.ios += 1;
                progress.bytes.store(self.progress_base + budget.issued, Ordering::Relaxed);
                if self.flow.is_some() && self.flow_wait(stop) {
                    start = Instant::now();
                }
                self.issue(dir, file, offset, len as u32, start);
                if trim_then_write {
                    rewrite = Some((file, offset, len));
                }
                if dir == WRITE && sync_every > 0 {
                    writes += 1;
                    if writes % sync_every as u64 == 0 {
                        sync_due = Some(file);
                    }
                }
                if batch_submit > 0 && self.batch.len() >= batch_submit {
                    self.commit();
                }
            }
            let must_reap = self.inflight > 0 && (self.inflight >= limit || done || sync_due.is_some());
            if must_reap && !self.batch.is_empty() {
                // The queue is full: submit the batch and wait in one go.
                self.commit_and_reap(reap_min.min(self.inflight));
            } else {
                if !self.batch.is_empty() {
                    self.commit();
                }
                if must_reap {
                    self.reap(reap_min.min(self.inflight));
                }
            }
            if done && self.inflight == 0 {
                break;
            }
        }
        self.progress_base += budget.issued;
        partial
    }

    /// Read back and check what was written: the backlog's next batch, or
    /// every block not yet checked. Stops at the runtime's end, like fio.
    /// Returns true when stopped (by the user or another job's exitall).
    fn read_back(&mut self, stop: &AtomicBool, depth: usize, backlog: bool) -> bool {
        let end_time = self.spec.runtime.map(|r| self.window_start + r);
        let batch = self.verifier.as_ref().map_or(0, |v| v.batch);
        let mut cursor = (0u32, 0usize);
        let mut n = 0u64;
        let mut done = false;
        let mut partial = false;
        loop {
            while !done && self.inflight < depth {
                let now = Instant::now();
                if !self.ramp_over && now >= self.window_start {
                    self.start_window();
                }
                if stop.load(Ordering::Relaxed) {
                    partial = true;
                    done = true;
                    break;
                }
                if self.error.is_some() || end_time.is_some_and(|e| now >= e) || (backlog && n >= batch) {
                    done = true;
                    break;
                }
                let Some(v) = self.verifier.as_mut() else { break };
                let next = if backlog { v.next_backlog() } else { v.next_pending(&mut cursor) };
                let Some(x) = next else {
                    done = true;
                    break;
                };
                n += 1;
                self.progress_base += x.len as u64;
                self.issue_check(&x, now);
            }
            if !self.batch.is_empty() {
                self.commit();
            }
            if self.inflight > 0 && (self.inflight == depth || done) {
                self.reap(self.inflight.min(depth));
            }
            if (done || self.verifier.is_none()) && self.inflight == 0 {
                break;
            }
        }
        partial
    }

    /// Issue the read of a block to check.
    fn issue_check(&mut self, x: &Expect, start: Instant) {
        let slot = self.free.pop().expect("a free slot whenever inflight < depth");
        let buf = self.bufs.slot(slot as usize);
        if let Some(v) = self.verifier.as_mut() {
            v.dirty(slot as usize);
        }
        self.slots[slot as usize] = Slot {
            start,
            submitted: start,
            dir: READ as u8,
            len: x.len,
            file: x.file,
            offset: x.offset,
            numberio: 0,
            check: true,
            expect_numberio: x.numberio,
            expect_seed: x.seed,
            prio: self.default_prio,
        };
        let io = IoUnit { op: IoOp::Read, file: x.file, offset: x.offset, len: x.len, buf, slot, prio: 0 };
        self.queue_io(slot, &io);
    }

    #[inline]
    fn queue_io(&mut self, slot: u32, io: &IoUnit) {
        match self.engine.queue(io) {
            Ok(Queued::Done(res)) => {
                if self.ramp_over {
                    // A synchronous engine submits and completes one I/O per call.
                    self.depths.submit[1] += 1;
                    self.depths.complete[1] += 1;
                }
                self.complete(slot, res, Instant::now());
                self.free.push(slot);
            }
            Ok(Queued::Pending) => {
                self.inflight += 1;
                self.batch.push(slot);
            }
            Err(e) => {
                self.set_error(format!("{}: queue: {e}", self.spec.ioengine));
                self.free.push(slot);
            }
        }
    }

    /// A read to check has arrived: check it, tell each failure.
    #[cold]
    fn check_read(&mut self, slot: u32, s: &Slot) {
        let Some(v) = self.verifier.as_mut() else { return };
        // SAFETY: the slot's read has completed, so no engine uses its
        // buffer; it holds `len` (<= the slot size) bytes, and nothing else
        // refers to the slot until it is pushed back on the free list.
        let buf = unsafe { std::slice::from_raw_parts_mut(self.bufs.slot(slot as usize), s.len as usize) };
        let x = Expect { file: s.file, offset: s.offset, len: s.len, numberio: s.expect_numberio, seed: s.expect_seed };
        self.failures.clear();
        v.check(buf, &x, &mut self.failures);
        v.dirty(slot as usize);
        if self.failures.is_empty() {
            return;
        }
        for f in &self.failures {
            self.events.note(f);
        }
        let first = v.first_failure.clone().unwrap_or_else(|| "verify failed".into());
        self.set_error(first);
    }

    /// The ramp is over: forget what it recorded.
    fn start_window(&mut self) {
        self.ramp_over = true;
        self.seat.running();
        self.ticker.cur_ops = [0; KINDS];
        self.ticker.cur_bytes = [0; KINDS];
        if let Some(m) = self.ramp_mark.take() {
            self.ramp_cpu = Some(m.until(&UsageMark::thread_now()));
        }
        for s in self.stats.iter_mut() {
            s.reset();
        }
        if let Some(p) = self.cmdprio.as_mut() {
            p.reset();
        }
        if let Some(l) = self.lat.as_mut() {
            l.restart(Instant::now());
        }
    }

    /// The steady-state criterion was met (by this clone, or by its group).
    #[inline]
    fn halted(&self) -> bool {
        self.ticker.steady.as_ref().is_some_and(|s| s.halted())
    }

    /// Drain every I/O in flight (fio's quiesce).
    fn quiesce(&mut self) {
        while self.inflight > 0 {
            self.reap(self.inflight);
        }
    }

    /// A latency window has passed (or, at latency_percentile=100, an I/O
    /// missed the target): apply fio's verdict. Returns the new depth limit.
    #[cold]
    fn latency_step(&mut self, depth: usize) -> usize {
        let Some(l) = self.lat.as_mut() else { return depth };
        let step = l.verdict();
        match step {
            LatStep::Next => l.new_cycle(Instant::now()),
            // fio keeps counting into the failed window; it is judged again
            // at the next I/O.
            LatStep::Stuck => {}
            LatStep::Done => self.ended = true,
            LatStep::Fatal => {
                let msg = format!(
                    "latency_target: an I/O took {} ns, over the {} ns target at queue depth 1 with latency_percentile=100 (fio fails the job: max latency exceeded)",
                    l.worst_ns,
                    l.target_ns()
                );
                self.set_error(msg);
            }
            LatStep::Lower | LatStep::FinalRun => {
                self.quiesce();
                let now = Instant::now();
                if step == LatStep::FinalRun {
                    self.restart_measure(now);
                }
                if let Some(l) = self.lat.as_mut() {
                    l.new_cycle(now);
                }
            }
        }
        self.lat.as_ref().map_or(depth, |l| l.qd.min(depth))
    }

    /// The latency search has settled: what it measured on the way is
    /// forgotten, as fio resets its statistics for the final window.
    fn restart_measure(&mut self, now: Instant) {
        for s in self.stats.iter_mut() {
            s.reset();
        }
        self.depths = Depths::default();
        self.ticker.restart(now);
        self.window_start = now;
        if let Some(m) = self.search_mark.take() {
            self.ramp_cpu = Some(m.until(&UsageMark::thread_now()));
        }
    }

    #[inline]
    fn block_len(&mut self, dir: usize) -> u64 {
        match &self.spec.bs[dir.min(WRITE)] {
            BlockSize::Fixed(b) => *b,
            BlockSize::Range { min, max } => min + self.rng.below((max - min) / min + 1) * min,
            BlockSize::Split(v) => {
                let mut p = self.rng.below(100) as u32;
                for &(b, pct) in v {
                    if p < pct {
                        return b;
                    }
                    p -= pct;
                }
                v.last().map(|x| x.0).unwrap_or(4096)
            }
        }
    }

    #[inline]
    fn issue(&mut self, dir: usize, file: u32, offset: u64, len: u32, start: Instant) {
        let slot = self.free.pop().expect("a free slot whenever inflight < depth");
        let buf = self.bufs.slot(slot as usize);
        // With verification the verifier fills (it must know the seed).
        if dir == WRITE && (self.spec.buffer.refill || self.spec.buffer.scramble) && self.verifier.is_none() {
            // SAFETY: `buf` is a free slot (just popped from `free`, so no engine
            // uses it) of the zero-initialised Buffers of `spec.max_bs()` bytes
            // per slot, and `len` never exceeds the job's largest block size;
            // nothing else refers to the slot while `b` lives.
            let b = unsafe { std::slice::from_raw_parts_mut(buf, len as usize) };
            if !self.spec.buffer.refill {
                let t = start.saturating_duration_since(self.epoch);
                buffers::scramble(b, offset, t.as_secs(), t.subsec_nanos());
            } else if let Some(d) = self.dedupe.as_mut() {
                // A copy must regenerate the same bytes: its own generator from its seed.
                buffers::fill(b, &self.spec.buffer, &mut Rng::new(d.next_seed()));
            } else {
                buffers::fill(b, &self.spec.buffer, &mut self.rng);
            }
        }
        let mut numberio = 0;
        let mut check = false;
        if dir == WRITE {
            numberio = self.writes_issued as u16;
            self.writes_issued += 1;
        }
        if let Some(v) = self.verifier.as_mut() {
            if self.dry_run {
                if dir == WRITE {
                    v.logged(file, offset, len as u64, numberio, slot as usize);
                }
                self.free.push(slot);
                return;
            }
            if dir == WRITE {
                // SAFETY: as for the refill above: a free slot of the job's
                // largest block size, referred to by nothing else.
                let whole = unsafe { std::slice::from_raw_parts_mut(buf, self.bufs.len) };
                let w = Stamp { offset, len: len as usize, numberio, now: start };
                v.stamp(slot as usize, whole, &w);
            } else {
                v.dirty(slot as usize);
                check = !self.spec.rw.writes();
            }
        }
        if let Some(log) = self.iolog.as_mut() {
            let _ = writeln!(log, "{} {} {} {}", self.paths[file as usize], OP_NAMES[dir], offset, len);
        }
        let prio = match self.cmdprio.as_mut() {
            Some(p) if dir <= WRITE => p.pick(dir, len),
            _ => self.default_prio,
        };
        self.slots[slot as usize] = Slot {
            start,
            submitted: start,
            dir: dir as u8,
            len,
            file,
            offset,
            numberio,
            check,
            expect_numberio: None,
            expect_seed: None,
            prio,
        };
        let op = match dir {
            READ => IoOp::Read,
            WRITE => IoOp::Write,
            _ => IoOp::Trim,
        };
        // Without cmdprio the I/O carries no priority of its own: the thread's applies.
        let io = IoUnit { op, file, offset, len, buf, slot, prio: if self.cmdprio.is_some() { prio } else { 0 } };
        if self.ramp_over {
            self.depths.level[Depths::level_bucket(self.inflight + 1)] += 1;
        }
        self.queue_io(slot, &io);
    }

    fn commit(&mut self) {
        if let Err(e) = self.engine.commit() {
            self.set_error(format!("{}: submit: {e}", self.spec.ioengine));
        }
        self.mark_submitted(Instant::now());
    }

    /// The batch was handed to the engine at `t`: its slat ends there.
    #[inline]
    fn mark_submitted(&mut self, t: Instant) {
        if self.ramp_over {
            self.depths.submit[Depths::batch_bucket(self.batch.len())] += 1;
        }
        for &s in &self.batch {
            self.slots[s as usize].submitted = t;
        }
        self.batch.clear();
    }

    fn reap(&mut self, min: usize) {
        let mut comps = std::mem::take(&mut self.completions);
        let got = self.engine.reap(min, &mut comps);
        self.reaped(got, &comps, "reap");
        self.completions = comps;
    }

    /// `commit` and `reap(min)` in one call to the engine (one system call
    /// for io_uring). The batch's submission time is taken before the call,
    /// since the call returns only after the wait: its slat ends where the
    /// system call starts, and the kernel's part of the submission is in
    /// its clat (lat, from the I/O's start, is the same either way).
    fn commit_and_reap(&mut self, min: usize) {
        self.mark_submitted(Instant::now());
        let mut comps = std::mem::take(&mut self.completions);
        let got = self.engine.commit_and_reap(min, &mut comps).map(|(_, n)| n);
        self.reaped(got, &comps, "submit and reap");
        self.completions = comps;
    }

    /// Account what a reap returned: its completions, or the error that
    /// ends the job.
    #[inline]
    fn reaped(&mut self, got: io::Result<usize>, comps: &[Completion], what: &str) {
        match got {
            Ok(n) => {
                let t = Instant::now();
                if self.ramp_over {
                    self.depths.complete[Depths::batch_bucket(n)] += 1;
                }
                for c in &comps[..n] {
                    self.inflight -= 1;
                    self.complete(c.slot, c.res, t);
                    self.free.push(c.slot);
                }
            }
            Err(e) => {
                // In-flight I/O can no longer be accounted; stop the job.
                self.set_error(format!("{}: {what}: {e}", self.spec.ioengine));
                self.inflight = 0;
                self.free = (0..self.slots.len() as u32).collect();
            }
        }
    }

    #[inline]
    fn complete(&mut self, slot: u32, res: i64, t: Instant) {
        let s = self.slots[slot as usize];
        if res != s.len as i64 {
            if res == 0 && s.dir as usize == READ {
                // End of a character device (/dev/null): the job ends, and
                // fio counts the empty read.
                self.eof = true;
            } else if res == -(libc::ENOSPC as i64) && self.enospc_ends && s.dir as usize == WRITE {
                self.eof = true;
                return;
            } else {
                // A failed or short transfer is an error, never an operation:
                // it stays out of the counts, the bytes and the latencies.
                self.io_error(&s, res);
                return;
            }
        }
        if let Some(v) = self.verifier.as_mut() {
            if s.dir as usize == WRITE {
                v.logged(s.file, s.offset, s.len as u64, s.numberio, slot as usize);
            }
        }
        if s.check {
            self.check_read(slot, &s);
        }
        if self.ramp_over && s.start < self.window_start {
            return;
        }
        let d = s.dir as usize;
        if let (Some(p), true) = (self.cmdprio.as_mut(), d <= WRITE) {
            let from = if p.total_latency() || !self.with_submit { s.start } else { s.submitted };
            p.record(d, s.prio, t.duration_since(from).as_nanos() as u64);
        }
        let st = &mut self.stats[d];
        let bytes = res.max(0) as u64;
        st.ops += 1;
        st.bytes += bytes;
        let lat_ns = t.duration_since(s.start).as_nanos() as u64;
        st.lat.record(lat_ns);
        if d != SYNC {
            if let Some(l) = self.lat.as_mut() {
                l.record(lat_ns, t);
            }
        }
        if self.with_submit {
            if let (Some(sl), Some(cl)) = (st.slat.as_mut(), st.clat.as_mut()) {
                sl.record(s.submitted.duration_since(s.start).as_nanos() as u64);
                cl.record(t.duration_since(s.submitted).as_nanos() as u64);
            }
        }
        self.ticker.add(t, d, bytes);
        if d != SYNC {
            if let Some(l) = self.logs.as_mut() {
                let lat = t.duration_since(s.start).as_nanos() as u64;
                let (slat, clat) = if self.with_submit {
                    (s.submitted.duration_since(s.start).as_nanos() as u64, t.duration_since(s.submitted).as_nanos() as u64)
                } else {
                    (0, lat)
                };
                let t_ns = t.duration_since(self.window_start).as_nanos() as u64;
                l.push(Sample { t_ns, lat, clat, slat, offset: s.offset, len: s.len, dir: s.dir, prio: s.prio });
            }
        }
    }

    /// fio's ratemin/rate_iops_min: over each ratecycle, a direction that has
    /// moved data must keep its minimum, or the job fails with fio's words.
    /// The first look after the settling time only takes the marks.
    #[cold]
    fn check_min_rate(&mut self, now: Instant) {
        let spec = self.spec;
        let m = &spec.misc;
        let cycle = Duration::from_millis(m.ratecycle_ms);
        let mut next = now + cycle;
        for d in [READ, WRITE] {
            if m.ratemin[d].is_none() && m.rate_iops_min[d].is_none() {
                continue;
            }
            let (bytes, ios) = (self.stats[d].bytes, self.stats[d].ops);
            if bytes == 0 {
                // As fio: a direction is judged once it has moved something.
                next = next.min(now + Duration::from_millis(10));
                continue;
            }
            let Some((t, b0, n0)) = self.rate_marks[d] else {
                self.rate_marks[d] = Some((now, bytes, ios));
                continue;
            };
            let spent_ms = now.saturating_duration_since(t).as_millis() as u64;
            if spent_ms == 0 || spent_ms < m.ratecycle_ms {
                next = next.min(t + cycle);
                continue;
            }
            if let Some(min) = m.ratemin[d] {
                let got = bytes.saturating_sub(b0).saturating_mul(1000) / spent_ms;
                if got < min {
                    self.set_error(format!("rate_min={min}B/s not met, got {got}B/s"));
                    return;
                }
            } else if let Some(min) = m.rate_iops_min[d] {
                let got = ios.saturating_sub(n0).saturating_mul(1000) / spent_ms;
                if got < min {
                    self.set_error(format!("rate_iops_min={min} not met, got {got} IOPS"));
                    return;
                }
            }
            self.rate_marks[d] = Some((now, bytes, ios));
        }
        self.rate_check_at = Some(next);
    }

    /// fio's flow control: while this clone is ahead of its weight's share
    /// of its flow's I/Os, pause. An atomic load and add per I/O, for the
    /// jobs that ask for a flow only. Returns whether it paused.
    fn flow_wait(&mut self, stop: &AtomicBool) -> bool {
        let Some(f) = self.flow.as_ref() else { return false };
        let weight = u64::from(self.spec.misc.flow);
        let pause = Duration::from_micros(self.spec.misc.flow_sleep_us.max(10));
        let mut paused = false;
        while self.flow_own * f.weight.load(Ordering::Relaxed) > f.ios.load(Ordering::Relaxed) * weight && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(pause);
            paused = true;
        }
        self.flow_own += 1;
        f.ios.fetch_add(1, Ordering::Relaxed);
        paused
    }

    #[cold]
    fn io_error(&mut self, s: &Slot, res: i64) {
        if res >= 0 && self.engine.finished() {
            self.ended = true;
            return;
        }
        self.stats[s.dir as usize].errors += 1;
        let dir = s.dir as usize;
        if res < 0 && dir < SYNC && self.spec.misc.continues_after(dir, -res as i32) {
            // continue_on_error: counted, and the job goes on, as fio does.
            return;
        }
        let what = OP_NAMES[s.dir as usize];
        let path = &self.paths[s.file as usize];
        let msg = if res < 0 {
            format!("{what} of {} bytes at offset {} of {path}: {}", s.len, s.offset, std::io::Error::from_raw_os_error(-res as i32))
        } else {
            format!("short {what}: {res} of {} bytes at offset {} of {path}", s.len, s.offset)
        };
        self.set_error(msg);
    }

    fn set_error(&mut self, msg: String) {
        if self.error.is_none() {
            self.error = Some(msg);
        }
    }

    /// Issue one fsync/fdatasync with nothing else in flight and wait for it.
    fn sync_now(&mut self, file: u32, op: IoOp) {
        let slot = self.free.pop().expect("no I/O in flight during a sync");
        let start = Instant::now();
        self.slots[slot as usize] = Slot {
            start,
            submitted: start,
            dir: SYNC as u8,
            len: 0,
            file,
            offset: 0,
            numberio: 0,
            check: false,
            expect_numberio: None,
            expect_seed: None,
            prio: self.default_prio,
        };
        let io = IoUnit { op, file, offset: 0, len: 0, buf: self.bufs.slot(slot as usize), slot, prio: 0 };
        let res = match self.engine.queue(&io) {
            Ok(Queued::Done(r)) => r,
            Ok(Queued::Pending) => {
                let _ = self.engine.commit();
                let mut one = [Completion::default()];
                match self.engine.reap(1, &mut one) {
                    Ok(1) => one[0].res,
                    _ => -(libc::EIO as i64),
                }
            }
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        self.complete(slot, res, Instant::now());
        self.free.push(slot);
    }
}
