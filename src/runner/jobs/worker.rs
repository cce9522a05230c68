//! One worker thread: issues a job's I/O through its engine and times it.
//!
//! The loop is the measurement path. Per I/O it reads the clock twice
//! (issue, completion), records into thread-local histograms and counters,
//! and makes the engine's own call(s); no allocation, lock or formatting
//! (the optional I/O log is the user's explicit exception).

use super::files::{self, PreparedFile};
use super::offsets::OffsetGen;
use crate::ioengine::{self, Completion, EngineBuf, EngineConfig, EngineFile, EnginePath, IoEngine, IoOp, IoUnit, Queued};
use crate::measure::usage::{CpuUsage, UsageMark};
use crate::model::job::{BlockSize, JobSpec, READ, WRITE};
use crate::result::{OpClass, OpStats, Timeline};
use crate::runner::buffers::{self, Buffers};
use crate::runner::rng::Rng;
use crate::runner::sleep_unless_stopped;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Operation types a fio-style job reports, in result order.
pub const OP_NAMES: [&str; 3] = ["read", "write", "sync"];
const SYNC: usize = 2;
const TICK: Duration = Duration::from_secs(1);

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
    pub files: Vec<PreparedFile>,
    pub stop: Arc<AtomicBool>,
    pub progress: Arc<ProgressCell>,
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
}

#[derive(Clone, Copy)]
struct Slot {
    start: Instant,
    submitted: Instant,
    dir: u8,
    len: u32,
    file: u32,
    offset: u64,
}

/// Per-interval counters, pushed into preallocated series once a second.
struct Ticker {
    next: Instant,
    cur_ops: [u64; 3],
    cur_bytes: [u64; 3],
    ops: [Vec<u64>; 3],
    bytes: [Vec<u64>; 3],
}

impl Ticker {
    fn new(start: Instant, capacity: usize) -> Ticker {
        let v = || Vec::with_capacity(capacity);
        Ticker { next: start + TICK, cur_ops: [0; 3], cur_bytes: [0; 3], ops: [v(), v(), v()], bytes: [v(), v(), v()] }
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
        for d in 0..3 {
            self.ops[d].push(self.cur_ops[d]);
            self.bytes[d].push(self.cur_bytes[d]);
        }
        self.cur_ops = [0; 3];
        self.cur_bytes = [0; 3];
        self.next += TICK;
    }

    fn forget_bytes(&mut self) {
        self.cur_bytes = [0; 3];
        for b in self.bytes.iter_mut() {
            b.iter_mut().for_each(|x| *x = 0);
        }
    }

    /// Complete intervals only; the partial tail would read as a dip. An
    /// interval that ended before `end` is complete even when no I/O
    /// finished after its boundary.
    fn into_timeline(mut self, used: [bool; 3], end: Instant) -> Timeline {
        while end >= self.next {
            self.roll();
        }
        let mut tl = Timeline { interval_ms: TICK.as_millis() as u64, ..Default::default() };
        for d in 0..3 {
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
    stats: [OpStats; 3],
    ticker: Ticker,
    window_start: Instant,
    measuring: bool,
    /// Taken when the ramp starts; turned into `ramp_cpu` when it ends.
    ramp_mark: Option<UsageMark>,
    ramp_cpu: Option<CpuUsage>,
    with_submit: bool,
    /// fsync/fdatasync apply (the engine has descriptors).
    syncs: bool,
    /// The engine's peer finished (`IoEngine::finished`): the job is over.
    ended: bool,
    inflight: usize,
    error: Option<String>,
    paths: Vec<String>,
    iolog: Option<BufWriter<File>>,
}

pub fn run(input: WorkerInput) -> WorkerOutput {
    let spec = input.spec.clone();
    let fail = |e: String| WorkerOutput { error: Some(e), ..WorkerOutput::default() };
    let (Some(info), Some(imp)) = (crate::model::engine::find(&spec.ioengine), ioengine::find(&spec.ioengine)) else {
        return fail(format!("unknown ioengine '{}'", spec.ioengine));
    };
    // Engines that do no data I/O have no descriptors to sync.
    let opened = info.caps.files.opened();
    let syncs = opened && (spec.fsync > 0 || spec.fdatasync > 0 || spec.end_fsync);
    let used = [spec.rw.reads(), spec.rw.writes(), syncs];
    let mut open = Vec::with_capacity(input.files.len());
    for f in input.files.iter().filter(|_| opened) {
        match files::open(&spec, f, info.caps.mapped) {
            Ok(file) => open.push(file),
            Err(e) => return fail(e),
        }
    }
    // Before the engine is set up: a network sender connects after its
    // delay, as in fio, not before the listener's clock has started.
    if !spec.startdelay.is_zero() {
        sleep_unless_stopped(spec.startdelay, &input.stop);
    }
    let engine = match (imp.make)(&EngineConfig { iodepth: spec.iodepth, options: &spec.engine }) {
        Ok(e) => e,
        Err(e) => return fail(format!("ioengine {}: {e}", info.name)),
    };
    let depth = if info.caps.is_async { spec.iodepth.max(1) as usize } else { 1 };
    let mut rng = Rng::new(if spec.randrepeat { spec.randseed } else { seed_from_clock() }.wrapping_add(input.clone as u64));
    let mut bufs = Buffers::new(depth, spec.max_bs() as usize);
    bufs.fill_all(&spec.buffer, &mut rng);

    let efiles: Vec<EngineFile> = if opened {
        open.iter()
            .zip(&input.files)
            .map(|(f, p)| EngineFile { fd: f.as_raw_fd(), size: p.region.end, writable: spec.rw.writes() })
            .collect()
    } else {
        input.files.iter().map(|p| EngineFile { fd: -1, size: p.region.end, writable: spec.rw.writes() }).collect()
    };
    let ebufs: Vec<EngineBuf> = (0..depth).map(|i| EngineBuf { ptr: bufs.slot(i), len: bufs.len }).collect();
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

    let t0 = Instant::now();
    let window_start = t0 + spec.ramp_time;
    let capacity = spec.runtime.map(|r| r.as_secs() as usize + 2).unwrap_or(64);
    let now = t0;
    let blank = Slot { start: now, submitted: now, dir: 0, len: 0, file: 0, offset: 0 };
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
            OpStats::new(OP_NAMES[2], OpClass::Sync, false),
        ],
        ticker: Ticker::new(window_start, capacity),
        window_start,
        measuring: spec.ramp_time.is_zero(),
        ramp_mark: (!spec.ramp_time.is_zero()).then(UsageMark::thread_now),
        ramp_cpu: None,
        with_submit: info.caps.is_async,
        syncs,
        ended: false,
        inflight: 0,
        error: None,
        paths: input.files.iter().map(|f| f.path.display().to_string()).collect(),
        iolog,
    };
    let partial = w.main_loop(&input.files, &input.stop, &input.progress, depth, info.caps.moves_no_data);
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
    let elapsed_ns = if w.measuring { end.saturating_duration_since(window_start).as_nanos() as u64 } else { 0 };
    drop(open);
    let Worker { mut stats, mut ticker, error, mut ramp_cpu, ramp_mark, .. } = w;
    if info.caps.moves_no_data {
        // The engine's operations carry a block size but no bytes (fio
        // reports them the same way).
        for s in stats.iter_mut() {
            s.bytes = 0;
        }
        ticker.forget_bytes();
    }
    if let Some(m) = ramp_mark {
        // Stopped or finished before the ramp ended: all of it was ramp.
        ramp_cpu = Some(m.until(&UsageMark::thread_now()));
    }
    let ops = stats.into_iter().zip(used).filter(|(_, u)| *u).map(|(s, _)| s).collect();
    WorkerOutput { ops, timeline: ticker.into_timeline(used, end), elapsed_ns, partial, error, ramp_cpu }
}

fn seed_from_clock() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
}

fn open_iolog(spec: &JobSpec, clone: u32, files: &[PreparedFile]) -> Result<Option<BufWriter<File>>, String> {
    let Some(path) = &spec.write_iolog else { return Ok(None) };
    let path = if spec.numjobs > 1 { path.with_extension(format!("{clone}")) } else { path.clone() };
    let f = File::create(&path).map_err(|e| format!("write_iolog {}: {e}", path.display()))?;
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
}

impl Budget {
    #[inline]
    fn exhausted(&self, now: Instant) -> bool {
        if let Some(e) = self.end_time {
            if now >= e {
                return true;
            }
        }
        !self.time_based && self.issued >= self.bytes
    }
}

/// Keeps a direction's I/O under its rate (bytes/s or IOPS) by sleeping.
struct Pacer {
    start: Instant,
    bytes_per_s: [Option<u64>; 2],
    iops: [Option<u64>; 2],
    sent_bytes: [u64; 2],
    sent_ios: [u64; 2],
}

impl Pacer {
    fn active(&self) -> bool {
        self.bytes_per_s.iter().chain(&self.iops).any(|r| r.is_some())
    }
    fn wait(&mut self, dir: usize, len: u64, now: Instant, stop: &AtomicBool) {
        let mut due_ns = 0u128;
        if let Some(r) = self.bytes_per_s[dir] {
            due_ns = due_ns.max(self.sent_bytes[dir] as u128 * 1_000_000_000 / r.max(1) as u128);
        }
        if let Some(r) = self.iops[dir] {
            due_ns = due_ns.max(self.sent_ios[dir] as u128 * 1_000_000_000 / r.max(1) as u128);
        }
        let due = self.start + Duration::from_nanos(due_ns as u64);
        if due > now {
            sleep_unless_stopped(due - now, stop);
        }
        self.sent_bytes[dir] += len;
        self.sent_ios[dir] += 1;
    }
}

impl<'a> Worker<'a> {
    fn main_loop(&mut self, files: &[PreparedFile], stop: &AtomicBool, progress: &ProgressCell, depth: usize, no_data: bool) -> bool {
        let spec = self.spec;
        let random = spec.rw.is_random();
        let fixed_bs = spec.bs[READ].is_fixed() && spec.bs[WRITE].is_fixed();
        let map = random && !spec.norandommap && fixed_bs;
        let shared_gen = random && spec.bs[READ].min() == spec.bs[WRITE].min();
        let mut gens: Vec<[OffsetGen; 2]> = files
            .iter()
            .map(|f| {
                let mk = |d: usize, rng: &mut Rng| OffsetGen::new(f.region, spec.bs[d].min(), random, map, rng);
                [mk(READ, &mut self.rng), mk(WRITE, &mut self.rng)]
            })
            .collect();
        let per_loop: u64 = spec.io_size.unwrap_or_else(|| {
            let all: u64 = files.iter().map(|f| f.region.end - f.region.start).sum();
            // With filesize, size still caps a loop (fio's rule).
            spec.filesize.and(spec.size).map_or(all, |s| s.min(all))
        });
        let mut budget = Budget {
            end_time: spec.runtime.map(|r| self.window_start + r),
            bytes: per_loop.saturating_mul(spec.loops as u64),
            issued: 0,
            // Operations without bytes never use up a byte budget.
            time_based: spec.time_based || no_data,
        };
        // Rates hold from the first I/O on, ramp included.
        let mut pacer = Pacer { start: Instant::now(), bytes_per_s: spec.rate, iops: spec.rate_iops, sent_bytes: [0; 2], sent_ios: [0; 2] };
        let pacing = pacer.active();
        let mixed = spec.rw.reads() && spec.rw.writes();
        let only = if spec.rw.reads() { READ } else { WRITE };
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
        let nfiles = files.len() as u32;
        let mut next_file = 0u32;
        let mut writes = 0u64;
        let mut sync_due: Option<u32> = None;
        let mut done = false;
        let mut partial = false;

        loop {
            while !done && self.inflight < depth {
                if let Some(file) = sync_due {
                    if self.inflight > 0 {
                        break;
                    }
                    self.sync_now(file, sync_op);
                    sync_due = None;
                    continue;
                }
                let now = Instant::now();
                if !self.measuring && now >= self.window_start {
                    self.start_window();
                    budget.issued = 0;
                }
                // One relaxed load of a flag nobody writes until Ctrl-C:
                // it stays in this core's cache and costs ~1 ns.
                if stop.load(Ordering::Relaxed) {
                    partial = true;
                    done = true;
                    break;
                }
                if budget.exhausted(now) || self.error.is_some() || self.ended {
                    done = true;
                    break;
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
                let len = self.block_len(dir);
                let file = next_file;
                next_file = if next_file + 1 == nfiles { 0 } else { next_file + 1 };
                let gi = if shared_gen { READ } else { dir };
                let offset = gens[file as usize][gi].next(len, &mut self.rng);
                let mut start = now;
                if pacing {
                    pacer.wait(dir, len, now, stop);
                    start = Instant::now();
                }
                if !spec.thinktime.is_zero() {
                    std::thread::sleep(spec.thinktime);
                    start = Instant::now();
                }
                budget.issued += len;
                progress.bytes.store(budget.issued, Ordering::Relaxed);
                self.issue(dir, file, offset, len as u32, start);
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
            if !self.batch.is_empty() {
                self.commit();
            }
            if self.inflight > 0 && (self.inflight == depth || done || sync_due.is_some()) {
                self.reap(reap_min.min(self.inflight));
            }
            if done && self.inflight == 0 {
                break;
            }
        }
        partial
    }

    /// The ramp is over: forget what it recorded.
    fn start_window(&mut self) {
        self.measuring = true;
        if let Some(m) = self.ramp_mark.take() {
            self.ramp_cpu = Some(m.until(&UsageMark::thread_now()));
        }
        for s in self.stats.iter_mut() {
            s.reset();
        }
    }

    #[inline]
    fn block_len(&mut self, dir: usize) -> u64 {
        match &self.spec.bs[dir] {
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
        if dir == WRITE && self.spec.buffer.refill {
            // SAFETY: `buf` is a free slot (just popped from `free`, so no engine
            // uses it) of the zero-initialised Buffers of `spec.max_bs()` bytes
            // per slot, and `len` never exceeds the job's largest block size;
            // nothing else refers to the slot while `b` lives.
            let b = unsafe { std::slice::from_raw_parts_mut(buf, len as usize) };
            buffers::fill(b, &self.spec.buffer, &mut self.rng);
        }
        if let Some(log) = self.iolog.as_mut() {
            let _ = writeln!(log, "{} {} {} {}", self.paths[file as usize], OP_NAMES[dir], offset, len);
        }
        self.slots[slot as usize] = Slot { start, submitted: start, dir: dir as u8, len, file, offset };
        let op = if dir == READ { IoOp::Read } else { IoOp::Write };
        let io = IoUnit { op, file, offset, len, buf, slot };
        match self.engine.queue(&io) {
            Ok(Queued::Done(res)) => {
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

    fn commit(&mut self) {
        if let Err(e) = self.engine.commit() {
            self.set_error(format!("{}: submit: {e}", self.spec.ioengine));
        }
        let t = Instant::now();
        for &s in &self.batch {
            self.slots[s as usize].submitted = t;
        }
        self.batch.clear();
    }

    fn reap(&mut self, min: usize) {
        let mut comps = std::mem::take(&mut self.completions);
        match self.engine.reap(min, &mut comps) {
            Ok(n) => {
                let t = Instant::now();
                for c in &comps[..n] {
                    self.inflight -= 1;
                    self.complete(c.slot, c.res, t);
                    self.free.push(c.slot);
                }
            }
            Err(e) => {
                // In-flight I/O can no longer be accounted; stop the job.
                self.set_error(format!("{}: reap: {e}", self.spec.ioengine));
                self.inflight = 0;
                self.free = (0..self.slots.len() as u32).collect();
            }
        }
        self.completions = comps;
    }

    #[inline]
    fn complete(&mut self, slot: u32, res: i64, t: Instant) {
        let s = self.slots[slot as usize];
        if res != s.len as i64 {
            // A failed or short transfer is an error, never an operation:
            // it stays out of the counts, the bytes and the latencies.
            self.io_error(&s, res);
            return;
        }
        if !self.measuring || s.start < self.window_start {
            return;
        }
        let d = s.dir as usize;
        let st = &mut self.stats[d];
        let bytes = res.max(0) as u64;
        st.ops += 1;
        st.bytes += bytes;
        st.lat.record(t.duration_since(s.start).as_nanos() as u64);
        if self.with_submit {
            if let (Some(sl), Some(cl)) = (st.slat.as_mut(), st.clat.as_mut()) {
                sl.record(s.submitted.duration_since(s.start).as_nanos() as u64);
                cl.record(t.duration_since(s.submitted).as_nanos() as u64);
            }
        }
        self.ticker.add(t, d, bytes);
    }

    #[cold]
    fn io_error(&mut self, s: &Slot, res: i64) {
        if res >= 0 && self.engine.finished() {
            self.ended = true;
            return;
        }
        let what = OP_NAMES[s.dir as usize];
        let path = &self.paths[s.file as usize];
        let msg = if res < 0 {
            format!("{what} of {} bytes at offset {} of {path}: {}", s.len, s.offset, std::io::Error::from_raw_os_error(-res as i32))
        } else {
            format!("short {what}: {res} of {} bytes at offset {} of {path}", s.len, s.offset)
        };
        self.stats[s.dir as usize].errors += 1;
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
        self.slots[slot as usize] = Slot { start, submitted: start, dir: SYNC as u8, len: 0, file, offset: 0 };
        let io = IoUnit { op, file, offset: 0, len: 0, buf: self.bufs.slot(slot as usize), slot };
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
