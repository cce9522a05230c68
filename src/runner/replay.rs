//! Re-issues a plan's I/Os (a captured trace, or a surface scan's chunks)
//! against one target through an asynchronous engine, keeping at most
//! `depth` in flight and, as recorded, each at its trace time.
//!
//! Everything is allocated before the first I/O: slots, completions and
//! buffers sized for the plan's largest I/O, so the loop allocates nothing
//! per I/O.

use crate::environment::safety::check_device_usable;
use crate::host::blockdev::addressable_bytes as target_bytes;
use crate::ioengine::{Completion, EngineBuf, EngineConfig, EngineFile, IoEngine, IoOp, IoUnit, Queued};
use crate::model::job::EngineOptions;
use crate::model::replay::{check_fits, Dir, ReplayPlan, Speed, TraceIo};
use crate::result::replay::{ReplayDetails, SurfaceDetails, ZoneStat};
use crate::result::warning::{Code, Warning};
use crate::result::{GroupResult, JobResult, OpClass, OpStats, RunResult, Timeline};
use crate::runner::buffers::Buffers;
use crate::runner::events::{Expected, Meter, Warnings};
use crate::runner::lifecycle::{self, Finished, OneGroup};
use crate::runner::{RunError, RunOptions};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An I/O issued later than this after its recorded time counts as late.
const LATE: Duration = Duration::from_millis(1);
/// While I/Os are in flight and the next is not due, completions are
/// looked for this often: their latencies are that coarse then.
const POLL: Duration = Duration::from_micros(20);

/// Run the plan through the one-group lifecycle.
pub(crate) fn run_plan(
    plan: &ReplayPlan,
    opts: &RunOptions,
    layout: &str,
    before_measure: &mut dyn FnMut(&[PathBuf]),
) -> Result<RunResult, RunError> {
    let replay = Replay { plan, size: 0, file: None, direct: false, engine: None, bufs: None };
    lifecycle::drive(replay, opts, layout, before_measure)
}

/// A replay's stages: the target opened, the engine started and every
/// buffer allocated before the cache scenario; nothing is made, so there
/// is nothing to remove.
struct Replay<'a> {
    plan: &'a ReplayPlan,
    /// What the target can address.
    size: u64,
    file: Option<File>,
    /// The target took O_DIRECT.
    direct: bool,
    engine: Option<Box<dyn IoEngine>>,
    bufs: Option<Buffers>,
}

/// What the replayer did, taken out of it once it stops.
struct Replayed {
    /// The next I/O of the trace to issue: how many were issued.
    next: usize,
    elapsed: Duration,
    stats: Vec<OpStats>,
    timeline: Timeline,
    /// A surface scan's latency per I/O (ns; 0 until it completes).
    lat_of: Vec<u64>,
    max_inflight: u32,
    late: u64,
    max_lag_ns: u64,
    error: Option<String>,
}

/// What the run is called: a surface scan is a replay of its chunks.
fn label_of(plan: &ReplayPlan) -> &'static str {
    if plan.surface.is_some() {
        "surface"
    } else {
        "replay"
    }
}

impl OneGroup for Replay<'_> {
    type Ran = Replayed;

    fn label(&self) -> String {
        label_of(self.plan).into()
    }

    fn places(&self) -> Vec<PathBuf> {
        vec![self.plan.target.clone()]
    }

    fn expected(&self) -> Expected {
        let plan = self.plan;
        let total: u64 = plan.ios.iter().map(|i| i.len as u64).sum();
        let time = (plan.speed == Speed::AsRecorded).then(|| Duration::from_nanos(plan.duration_ns()));
        Expected { time, bytes: total, ops: 0 }
    }

    fn check(&mut self, opts: &RunOptions) -> Result<(), RunError> {
        let plan = self.plan;
        let t = plan.target.display();
        if plan.ios.is_empty() {
            return Err(format!("{}: no I/O to issue", plan.source).into());
        }
        if plan.depth == 0 {
            return Err("--depth must be at least 1".to_string().into());
        }
        let modifies = plan.modifies();
        if modifies && !plan.write {
            let [_, w, d] = plan.counts();
            return Err(format!(
                "the plan writes ({} writes, {} trims) and would destroy data on {t}; pass --write to confirm (nothing was issued)",
                w.0, d.0
            )
            .into());
        }
        self.size = target_bytes(&plan.target).map_err(|e| format!("--target {e}"))?;
        if modifies {
            check_device_usable(&plan.target, opts.allow_device)?;
        }
        check_fits(&plan.ios, self.size, &plan.target)?;
        Ok(())
    }

    fn set_up(&mut self, _opts: &RunOptions, warnings: &mut Warnings) -> Result<(), RunError> {
        let plan = self.plan;
        let t = plan.target.display();
        let modifies = plan.modifies();
        let (file, direct) = open_target(&plan.target, modifies)?;
        if !direct {
            // Into the result only: the CLI prints it with the result's warnings.
            warnings.list.push(Warning::new(
                Code::NoODirect,
                format!("{t} refuses O_DIRECT: I/O is buffered, and reads may come from the page cache"),
            ));
        }
        self.direct = direct;
        let depth = plan.depth as usize;
        let Some(imp) = crate::ioengine::find(&plan.engine) else {
            return Err(format!("unknown engine '{}'", plan.engine).into());
        };
        let options = EngineOptions::default();
        let mut engine = (imp.make)(&EngineConfig { iodepth: plan.depth, options: &options })
            .map_err(|e| format!("{}: cannot start: {e}", plan.engine))?;
        let max_len = plan.ios.iter().map(|i| i.len as usize).max().unwrap_or(4096);
        let mut bufs = Buffers::new(depth, max_len);
        if modifies {
            // Random, so a compressing or deduplicating device sees what a real
            // workload's data would give it, not zeros.
            let mut rng = crate::runner::rng::Rng::new(0x7265_706c_6179);
            for i in 0..depth {
                rng.fill(bufs.slot_mut(i));
            }
        }
        let slots: Vec<EngineBuf> = (0..depth).map(|i| EngineBuf { ptr: bufs.slot(i), len: bufs.len }).collect();
        let files = [EngineFile { fd: file.as_raw_fd(), size: self.size, writable: modifies }];
        engine.setup(&files, &slots).map_err(|e| format!("{}: setup on {t}: {e}", plan.engine))?;
        self.file = Some(file);
        self.engine = Some(engine);
        self.bufs = Some(bufs);
        Ok(())
    }

    fn run(&mut self, opts: &RunOptions, meter: &Arc<Meter>, _warnings: &mut Warnings) -> Result<Replayed, RunError> {
        let (Some(engine), Some(bufs)) = (self.engine.take(), self.bufs.as_ref()) else {
            return Err(RunError::Workload("replay: the run started before its engine".into()));
        };
        let mut r = Replayer::new(self.plan, engine, bufs, meter.clone());
        r.run(opts);
        let Replayer { engine, done, .. } = r;
        // The engine is stopped at teardown, outside the window.
        self.engine = Some(engine);
        Ok(done)
    }

    fn tear_down(&mut self, _opts: &RunOptions, _ran: Option<&Replayed>) -> Result<(), RunError> {
        self.file = None;
        self.engine = None;
        Ok(())
    }

    fn finish(self, r: Replayed, _: &mut GroupResult, opts: &RunOptions, _: &mut Warnings) -> Result<Finished, RunError> {
        let plan = self.plan;
        let label = label_of(plan);
        let partial = opts.stop.load(Ordering::Relaxed) && r.next < plan.ios.len();
        let surface = plan.surface.map(|s| zones(plan, &r.lat_of, s));
        let direct = self.direct;
        let details = ReplayDetails {
            source: plan.source.clone(),
            target: plan.target.display().to_string(),
            speed: plan.speed.name().into(),
            depth: plan.depth,
            trace_ios: plan.ios.len() as u64,
            trace_span_ns: plan.duration_ns(),
            issued: r.next as u64,
            max_inflight: r.max_inflight,
            late_ios: r.late,
            max_lag_ns: r.max_lag_ns,
            direct,
            notes: plan.notes.clone(),
            surface,
        };
        let elapsed_ns = r.elapsed.as_nanos() as u64;
        let used: Vec<OpStats> = r.stats.into_iter().filter(|s| s.ops > 0 || s.errors > 0 || s.name == "read").collect();
        let mut job = JobResult {
            name: label.into(),
            group: 0,
            threads: 1,
            engine: plan.engine.clone(),
            elapsed_ns,
            ops: used,
            timeline: r.timeline,
            options: Default::default(),
            resolved: serde_json::json!({
                "target": plan.target, "speed": plan.speed.name(), "depth": plan.depth, "engine": plan.engine,
                "direct": direct, "write": plan.write, "surface": plan.surface,
            }),
            partial,
            error: r.error,
            headline: Vec::new(),
            details: Some(serde_json::to_value(&details).map_err(|e| e.to_string())?),
        };
        job.headline = job.op_headline();
        Ok(Finished { jobs: vec![job], partial })
    }
}

/// Opens for O_DIRECT I/O when the target allows it (a block device always
/// does; tmpfs does not), saying which it got.
fn open_target(path: &Path, write: bool) -> Result<(File, bool), String> {
    let open = |flags: i32| OpenOptions::new().read(true).write(write).custom_flags(flags | libc::O_CLOEXEC).open(path);
    match open(libc::O_DIRECT) {
        Ok(f) => Ok((f, true)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            open(0).map(|f| (f, false)).map_err(|e| format!("--target {}: {e}", path.display()))
        }
        Err(e) => Err(format!("--target {}: {e}", path.display())),
    }
}

#[derive(Clone, Copy)]
struct Slot {
    start: Instant,
    submitted: Instant,
    idx: u32,
}

struct Replayer<'a> {
    ios: &'a [TraceIo],
    speed: Speed,
    depth: usize,
    engine: Box<dyn IoEngine>,
    bufs: &'a Buffers,
    slots: Vec<Slot>,
    free: Vec<u32>,
    batch: Vec<u32>,
    comps: Vec<Completion>,
    inflight: usize,
    t0: Instant,
    /// What it has done so far, handed out whole when it stops.
    done: Replayed,
    meter: std::sync::Arc<crate::runner::events::Meter>,
}

impl<'a> Replayer<'a> {
    fn new(
        plan: &'a ReplayPlan,
        engine: Box<dyn IoEngine>,
        bufs: &'a Buffers,
        meter: std::sync::Arc<crate::runner::events::Meter>,
    ) -> Replayer<'a> {
        let depth = plan.depth as usize;
        let now = Instant::now();
        let stats = [Dir::Read, Dir::Write, Dir::Trim]
            .iter()
            .map(|d| {
                OpStats::new(
                    d.name(),
                    if *d == Dir::Trim {
                        OpClass::Other
                    } else if *d == Dir::Write {
                        OpClass::DataWrite
                    } else {
                        OpClass::DataRead
                    },
                    true,
                )
            })
            .collect();
        let mut timeline = Timeline { interval_ms: 1000, ..Default::default() };
        for d in [Dir::Read, Dir::Write, Dir::Trim] {
            timeline.ops.insert(d.name().into(), Vec::new());
            timeline.bytes.insert(d.name().into(), Vec::new());
        }
        Replayer {
            ios: &plan.ios,
            speed: plan.speed,
            depth,
            engine,
            bufs,
            slots: vec![Slot { start: now, submitted: now, idx: 0 }; depth],
            free: (0..depth as u32).rev().collect(),
            batch: Vec::with_capacity(depth),
            comps: vec![Completion::default(); depth],
            inflight: 0,
            t0: now,
            done: Replayed {
                next: 0,
                elapsed: Duration::ZERO,
                stats,
                timeline,
                lat_of: if plan.surface.is_some() { vec![0; plan.ios.len()] } else { Vec::new() },
                max_inflight: 0,
                late: 0,
                max_lag_ns: 0,
                error: None,
            },
            meter,
        }
    }

    fn run(&mut self, opts: &RunOptions) {
        // Short sleeps while waiting for an I/O's time: the default 50 µs
        // timer slack would make them late by that much.
        // SAFETY: prctl with PR_SET_TIMERSLACK takes an integer and touches no memory of ours.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0) };
        self.t0 = Instant::now();
        let mut last_meter = self.t0;
        loop {
            let stopping = opts.stop.load(Ordering::Relaxed) || self.done.error.is_some();
            if !stopping {
                self.issue_due();
            }
            if self.inflight == 0 && (stopping || self.done.next == self.ios.len()) {
                break;
            }
            let room = self.inflight < self.depth;
            if self.inflight > 0 && (stopping || !room || self.done.next == self.ios.len() || self.speed == Speed::Max) {
                self.reap(1);
            } else {
                // As recorded, room to issue, the next I/O not yet due.
                let due = self.t0 + Duration::from_nanos(self.ios[self.done.next].at_ns);
                let wait = due.saturating_duration_since(Instant::now());
                if self.inflight > 0 {
                    if self.reap(0) == 0 {
                        std::thread::sleep(wait.min(POLL));
                    }
                } else {
                    std::thread::sleep(wait.min(Duration::from_millis(50)));
                }
            }
            if last_meter.elapsed() > Duration::from_millis(200) {
                last_meter = Instant::now();
                let (ops, bytes) = self.done.stats.iter().fold((0, 0), |(o, b), s| (o + s.ops, b + s.bytes));
                self.meter.ops.store(ops, Ordering::Relaxed);
                self.meter.bytes.store(bytes, Ordering::Relaxed);
            }
        }
        self.done.elapsed = self.t0.elapsed();
    }

    /// Hands the engine every I/O that is due while there is room, then submits them.
    fn issue_due(&mut self) {
        while self.done.next < self.ios.len() && self.inflight + self.batch.len() < self.depth && self.done.error.is_none() {
            let io = self.ios[self.done.next];
            let now = Instant::now();
            if self.speed == Speed::AsRecorded {
                let due = self.t0 + Duration::from_nanos(io.at_ns);
                if now < due {
                    break;
                }
                let lag = now - due;
                if lag > LATE {
                    self.done.late += 1;
                }
                self.done.max_lag_ns = self.done.max_lag_ns.max(lag.as_nanos() as u64);
            }
            let slot = self.free.pop().expect("a free slot while fewer than depth are in flight");
            self.slots[slot as usize] = Slot { start: now, submitted: now, idx: self.done.next as u32 };
            let op = match io.dir {
                Dir::Read => IoOp::Read,
                Dir::Write => IoOp::Write,
                Dir::Trim => IoOp::Trim,
            };
            let unit = IoUnit { op, file: 0, offset: io.offset, len: io.len, buf: self.bufs.slot(slot as usize), slot, prio: 0 };
            self.done.next += 1;
            match self.engine.queue(&unit) {
                Ok(Queued::Done(res)) => {
                    self.done.max_inflight = self.done.max_inflight.max(1);
                    self.complete(slot, res, Instant::now());
                }
                Ok(Queued::Pending) => self.batch.push(slot),
                Err(e) => {
                    self.done.error = Some(format!("queue: {e}"));
                    self.free.push(slot);
                }
            }
        }
        if !self.batch.is_empty() {
            if let Err(e) = self.engine.commit() {
                self.done.error = Some(format!("submit: {e}"));
            }
            let t = Instant::now();
            for &s in &self.batch {
                self.slots[s as usize].submitted = t;
            }
            self.inflight += self.batch.len();
            self.done.max_inflight = self.done.max_inflight.max(self.inflight as u32);
            self.batch.clear();
        }
    }

    fn reap(&mut self, min: usize) -> usize {
        let mut comps = std::mem::take(&mut self.comps);
        let n = match self.engine.reap(min, &mut comps) {
            Ok(n) => {
                let t = Instant::now();
                for c in &comps[..n] {
                    self.inflight -= 1;
                    self.complete(c.slot, c.res, t);
                }
                n
            }
            Err(e) => {
                // What is in flight can no longer be accounted for: stop.
                self.done.error = Some(format!("reap: {e}"));
                self.inflight = 0;
                0
            }
        };
        self.comps = comps;
        n
    }

    fn complete(&mut self, slot: u32, res: i64, t: Instant) {
        let s = self.slots[slot as usize];
        self.free.push(slot);
        let io = self.ios[s.idx as usize];
        let st = &mut self.done.stats[io.dir as usize];
        if res != io.len as i64 {
            st.errors += 1;
            if self.done.error.is_none() {
                let what =
                    if res < 0 { std::io::Error::from_raw_os_error(-res as i32).to_string() } else { format!("{res} bytes transferred") };
                self.done.error = Some(format!("I/O #{} ({} of {} bytes at byte {}): {what}", s.idx + 1, io.dir.name(), io.len, io.offset));
            }
            return;
        }
        let lat = t.duration_since(s.start).as_nanos() as u64;
        st.ops += 1;
        st.bytes += io.len as u64;
        st.lat.record(lat);
        if let (Some(sl), Some(cl)) = (st.slat.as_mut(), st.clat.as_mut()) {
            sl.record(s.submitted.duration_since(s.start).as_nanos() as u64);
            cl.record(t.duration_since(s.submitted).as_nanos() as u64);
        }
        if let Some(l) = self.done.lat_of.get_mut(s.idx as usize) {
            *l = lat.max(1);
        }
        let sec = t.duration_since(self.t0).as_secs() as usize;
        let name = io.dir.name();
        for (series, v) in [(&mut self.done.timeline.ops, 1), (&mut self.done.timeline.bytes, io.len as u64)] {
            if let Some(x) = series.get_mut(name) {
                if x.len() <= sec {
                    x.resize(sec + 1, 0);
                }
                x[sec] += v;
            }
        }
    }
}

/// A surface scan's figures per zone from each chunk's latency.
fn zones(plan: &ReplayPlan, lat_of: &[u64], s: crate::model::replay::Surface) -> SurfaceDetails {
    let k = s.chunks_per_zone.max(1) as usize;
    let mib_s = |bytes: u64, ns: u64| if ns == 0 { 0.0 } else { bytes as f64 / 1048576.0 / (ns as f64 / 1e9) };
    let zones = plan
        .ios
        .chunks(k)
        .zip(lat_of.chunks(k))
        .map(|(ios, lats)| {
            let done: Vec<(u64, u64)> = ios.iter().zip(lats).filter(|(_, &l)| l > 0).map(|(io, &l)| (io.len as u64, l)).collect();
            let bytes: u64 = done.iter().map(|d| d.0).sum();
            let ns: u64 = done.iter().map(|d| d.1).sum();
            let each: Vec<f64> = done.iter().map(|&(b, l)| mib_s(b, l)).collect();
            ZoneStat {
                offset: ios[0].offset,
                bytes,
                mib_s: mib_s(bytes, ns),
                min_mib_s: if each.is_empty() { 0.0 } else { each.iter().copied().fold(f64::INFINITY, f64::min) },
                max_mib_s: each.iter().copied().fold(0.0, f64::max),
                lat_mean_us: if done.is_empty() { 0.0 } else { ns as f64 / done.len() as f64 / 1000.0 },
                lat_max_us: done.iter().map(|d| d.1).max().unwrap_or(0) as f64 / 1000.0,
            }
        })
        .collect();
    SurfaceDetails { device_bytes: s.device_bytes, chunk: s.chunk, chunks_per_zone: s.chunks_per_zone, zones }
}
