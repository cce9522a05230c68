//! What a block trace says about a run, computed in one pass over its
//! records: btt's phases, blkparse's counts, and the IPEAK-style figures
//! (sizes, seeks, queue depth, idle time) per run, with each request
//! charged to the process role that caused it.
//!
//! Rules, where the tools leave a choice:
//! - **Counting.** Queued figures count Q events (bios), dispatch figures D
//!   events (requests sent to the driver; a requeued request that is sent
//!   again counts twice, as blkparse's "Read/Write Dispatches" do). The
//!   direction is the record's WRITE category bit, as blkparse reads it;
//!   discards are counted apart and left out of the read and write figures.
//!   Zero-byte dispatches (flushes) count as dispatches (and as `flushes`)
//!   but not in sizes, seeks or latencies.
//! - **Roles.** A bio's role is `Context::role` of its Q's pid. A request's
//!   role is that of its earliest-queued bio, found by walking the pending
//!   bios laid back to back from the request's start sector (its first bio
//!   is the one that allocated it; merged bios came later). The D's own pid
//!   is only the dispatching context (often a kworker), so it is used only
//!   when no queued bio is known (`untracked_dispatches`).
//! - **btt's phases** follow btt 1.2.0: every interval belongs to a bio (Q)
//!   on one device. G, I and M find the pending Q starting at their sector;
//!   Q2G = G − Q, G2I = I − G (when a G was seen), Q2M = M − Q. A D covers
//!   the pending Qs inside its sector range: I2D = D − I for each that saw
//!   an I, else M2D = D − M. A C covers them likewise: Q2C = C − Q, D2C =
//!   C − D for each that was dispatched, and the Q is done. So N counts
//!   bios, not requests. Requeues change no phase (btt's neither): the
//!   re-dispatch sets a new D time, and a new I adds another I2D. A later
//!   event stamped no later than the earlier one counts 1 ns. Events of a
//!   device before its first Q are ignored for the phases and for btt's
//!   #Q and #D, and zero-byte G, I, M, D and C never pair.
//! - **Merge ratio** is btt's #Q / #D: (Qs + requeues) ÷ dispatches with
//!   data, both counted from the device's first Q.
//! - **Sequential:** a dispatch with data that starts at the sector where
//!   the previous one in the same direction on the same device ended.
//!   Seek distance = this start − that end, in sectors, on D; the first
//!   dispatch per direction has no distance.
//! - **Queue depth** = requests dispatched and not yet completed or
//!   requeued (blkparse's depth), matched by (device, sector); completions
//!   of requests dispatched before the trace began are not counted.
//!   **Idle** = a span with depth 0 between a completion that emptied the
//!   device and the next dispatch (the trace's head and tail are not idle
//!   periods: what happened there is unknown).
//! - **Unplugs:** the U/UT payload's last 8 bytes are the number of
//!   requests released, big-endian (the kernel's `blk_add_trace_unplug`).
//!
//! State between events is bounded (`Context::max_tracked`) and allocated
//! up front, so a record costs no allocation; bios or requests left
//! pending longer than `Context::stale_after_ns` (their completion was
//! lost) are dropped when the tables fill, and counted.

mod hist;
mod table;
#[cfg(test)]
mod tests;

pub use hist::{delta, Bucket, Log2Hist, Phase};

use super::record::{act, cat, Record};
use serde::{Deserialize, Serialize};
use table::{Bio, Bios, Requests, NONE};

/// Who caused an I/O, by the pid of its Q.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Benchmark,
    Background,
    Other,
}

/// What the analysis needs besides the records.
pub struct Context {
    pub role: Box<dyn Fn(u32) -> Role>,
    /// Bytes the workload itself wrote, for the write amplification.
    pub workload_bytes_written: Option<u64>,
    /// Width of one queue-depth bucket.
    pub series_step_ns: u64,
    /// Most bios, and most requests, tracked at once.
    pub max_tracked: usize,
    /// A bio or request pending this long may be dropped when the tables fill.
    pub stale_after_ns: u64,
    /// Most dispatches kept for the LBA-over-time chart.
    pub lba_points: usize,
}

impl Context {
    /// Every pid `Other`, 100 ms buckets, 64 Ki bios tracked.
    pub fn new(role: Box<dyn Fn(u32) -> Role>) -> Context {
        Context {
            role,
            workload_bytes_written: None,
            series_step_ns: 100_000_000,
            max_tracked: 65_536,
            stale_after_ns: 10_000_000_000,
            lba_points: 2_000,
        }
    }
}

/// Operations and bytes by direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCounts {
    pub read_ops: u64,
    pub read_bytes: u64,
    pub write_ops: u64,
    pub write_bytes: u64,
}

impl IoCounts {
    fn add(&mut self, write: bool, bytes: u32) {
        if write {
            self.write_ops += 1;
            self.write_bytes += bytes as u64;
        } else {
            self.read_ops += 1;
            self.read_bytes += bytes as u64;
        }
    }
}

/// One role's I/O: bios queued (Q) and requests dispatched (D).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoleIo {
    pub queued: IoCounts,
    pub dispatched: IoCounts,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Roles {
    pub benchmark: RoleIo,
    pub background: RoleIo,
    pub other: RoleIo,
}

impl Roles {
    fn get(&mut self, r: Role) -> &mut RoleIo {
        match r {
            Role::Benchmark => &mut self.benchmark,
            Role::Background => &mut self.background,
            Role::Other => &mut self.other,
        }
    }
    pub fn all(&self) -> [(Role, &RoleIo); 3] {
        [(Role::Benchmark, &self.benchmark), (Role::Background, &self.background), (Role::Other, &self.other)]
    }
}

/// Sizes and seeks of the dispatches with data in one direction.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Pattern {
    /// Request sizes in bytes.
    pub sizes: Log2Hist,
    /// Dispatches that started where the previous one ended.
    pub sequential: u64,
    /// Dispatches that did not (the first one per device is neither).
    pub random: u64,
    /// Seek distances in sectors, forward (start after the previous end).
    pub seek_forward: Log2Hist,
    /// Backward seeks, by their size in sectors.
    pub seek_backward: Log2Hist,
}

impl Pattern {
    /// Share of sequential dispatches, % (NaN without any with a predecessor).
    pub fn sequential_pct(&self) -> f64 {
        100.0 * self.sequential as f64 / (self.sequential + self.random) as f64
    }
}

/// The queue depth in one `series_step_ns` bucket starting at `t_ns`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DepthPoint {
    pub t_ns: u64,
    /// Time-weighted mean over the bucket.
    pub mean: f64,
    pub max: u32,
}

/// Spans with nothing on the device.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Idle {
    pub count: u64,
    pub total_ns: u64,
    pub longest_ns: u64,
    pub hist: Phase,
}

/// btt's phases; see the module's comment for what pairs with what.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Phases {
    pub q2g: Phase,
    pub g2i: Phase,
    pub q2m: Phase,
    pub i2d: Phase,
    pub m2d: Phase,
    pub d2c: Phase,
    pub q2c: Phase,
    /// D to C per request (not per bio, unlike btt's D2C): the device's
    /// service time as the percentiles should show it.
    pub d2c_request: Phase,
}

impl Phases {
    /// btt's names and the phases, in btt's order.
    pub fn named(&self) -> [(&'static str, &Phase); 7] {
        [
            ("Q2G", &self.q2g),
            ("G2I", &self.g2i),
            ("Q2M", &self.q2m),
            ("I2D", &self.i2d),
            ("M2D", &self.m2d),
            ("D2C", &self.d2c),
            ("Q2C", &self.q2c),
        ]
    }
}

/// Plugs released by I/O (U) and by the timer (UT), and the requests they
/// released.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unplugs {
    pub io: u64,
    pub io_requests: u64,
    pub timer: u64,
    pub timer_requests: u64,
}

impl Unplugs {
    /// btt's "IOs/Unp" (0 without unplugs, as btt prints it).
    pub fn ios_per_unplug(&self) -> f64 {
        if self.io == 0 {
            0.0
        } else {
            self.io_requests as f64 / self.io as f64
        }
    }
}

/// One dispatch on the LBA-over-time chart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LbaPoint {
    pub t_ns: u64,
    pub sector: u64,
    pub sectors: u32,
    pub write: bool,
}

/// What the analysis could not pair, and why figures may miss some I/O.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Untracked {
    /// Dispatches with data whose bios were not seen (queued before the
    /// trace began, lost events, or split bios): charged to the D's pid.
    pub dispatches: u64,
    /// Bios not tracked because the table was full.
    pub bios_dropped: u64,
    /// Bios dropped as stale (pending longer than `stale_after_ns`).
    pub bios_stale: u64,
    /// Requests dropped from the depth count as stale or for a full table.
    pub requests_dropped: u64,
}

/// Everything the analysis found in one trace.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TraceAnalysis {
    /// Records read (notify and passthrough ones included).
    pub records: u64,
    pub first_ns: u64,
    pub last_ns: u64,
    /// Q events by direction (blkparse's "Reads/Writes Queued").
    pub queued: IoCounts,
    /// D events by direction (blkparse's "Read/Write Dispatches").
    pub dispatched: IoCounts,
    /// C events by direction.
    pub completed: IoCounts,
    pub discards: u64,
    pub discard_bytes: u64,
    pub flushes: u64,
    /// M and F events.
    pub merges: u64,
    pub requeues: u64,
    pub roles: Roles,
    pub read: Pattern,
    pub write: Pattern,
    pub series_step_ns: u64,
    pub depth: Vec<DepthPoint>,
    pub depth_max: u32,
    /// Time-weighted over the trace, first to last event.
    pub depth_mean: f64,
    pub idle: Idle,
    pub phases: Phases,
    /// btt's #Q and #D.
    pub btt_q: u64,
    pub btt_d: u64,
    pub unplugs: Unplugs,
    pub workload_bytes_written: Option<u64>,
    pub untracked: Untracked,
    /// Every `lba_stride`-th dispatch with data.
    pub lba: Vec<LbaPoint>,
    pub lba_stride: u64,
}

impl TraceAnalysis {
    /// btt's #Q / #D (0 without dispatches).
    pub fn merge_ratio(&self) -> f64 {
        if self.btt_d == 0 {
            0.0
        } else {
            self.btt_q as f64 / self.btt_d as f64
        }
    }

    /// Device bytes written ÷ workload bytes written.
    pub fn write_amplification(&self) -> Option<f64> {
        self.workload_bytes_written.filter(|w| *w > 0).map(|w| self.dispatched.write_bytes as f64 / w as f64)
    }

    /// A role's share of the device's dispatched bytes, % (NaN when none).
    pub fn share_pct(&self, role: Role, write: bool) -> f64 {
        let mine = self.roles.all().iter().find(|(r, _)| *r == role).map(|(_, io)| io.dispatched).unwrap_or_default();
        let all: u64 =
            self.roles.all().iter().map(|(_, io)| if write { io.dispatched.write_bytes } else { io.dispatched.read_bytes }).sum();
        100.0 * if write { mine.write_bytes } else { mine.read_bytes } as f64 / all as f64
    }

    pub fn duration_ns(&self) -> u64 {
        self.last_ns.saturating_sub(self.first_ns)
    }
}

/// Analyses records in time order.
pub fn analyse<'a>(records: impl Iterator<Item = Record<'a>>, ctx: &Context) -> TraceAnalysis {
    let mut a = Analyser::new(ctx);
    for r in records {
        a.push(&r);
    }
    a.finish()
}

/// Per direction and device: where the last dispatch ended.
#[derive(Clone, Copy)]
struct DevState {
    dev: u32,
    seen_q: bool,
    last_end: [Option<u64>; 2],
}

/// The analysis as a sink, for records that arrive one by one (capture).
pub struct Analyser<'c> {
    ctx: &'c Context,
    out: TraceAnalysis,
    bios: Bios,
    requests: Requests,
    devs: Vec<DevState>,
    depth: u32,
    /// Depth integral over the current bucket (request·ns) and the whole trace.
    area: f64,
    area_all: f64,
    bucket_start: u64,
    bucket_max: u32,
    last_t: u64,
    started: bool,
    idle_since: Option<u64>,
    lba_skip: u64,
    last_sweep: u64,
}

impl<'c> Analyser<'c> {
    pub fn new(ctx: &'c Context) -> Analyser<'c> {
        let lba_points = ctx.lba_points.max(2);
        Analyser {
            ctx,
            out: TraceAnalysis {
                series_step_ns: ctx.series_step_ns.max(1),
                workload_bytes_written: ctx.workload_bytes_written,
                lba: Vec::with_capacity(lba_points),
                depth: Vec::with_capacity(1024),
                lba_stride: 1,
                ..TraceAnalysis::default()
            },
            bios: Bios::with_capacity(ctx.max_tracked),
            requests: Requests::with_capacity(ctx.max_tracked),
            devs: Vec::with_capacity(16),
            depth: 0,
            area: 0.0,
            area_all: 0.0,
            bucket_start: 0,
            bucket_max: 0,
            last_t: 0,
            started: false,
            idle_since: None,
            lba_skip: 0,
            last_sweep: 0,
        }
    }

    fn dev(&mut self, dev: u32) -> &mut DevState {
        let i = match self.devs.iter().position(|d| d.dev == dev) {
            Some(i) => i,
            None => {
                self.devs.push(DevState { dev, seen_q: false, last_end: [None; 2] });
                self.devs.len() - 1
            }
        };
        &mut self.devs[i]
    }

    /// Moves the depth integral up to `t`, closing the buckets it passes.
    fn advance(&mut self, t: u64) {
        let step = self.out.series_step_ns;
        let t = t.max(self.last_t);
        while t >= self.bucket_start + step {
            let end = self.bucket_start + step;
            self.area += self.depth as f64 * (end - self.last_t) as f64;
            self.out.depth.push(DepthPoint { t_ns: self.bucket_start, mean: self.area / step as f64, max: self.bucket_max });
            self.area_all += self.area;
            self.area = 0.0;
            self.bucket_start = end;
            self.bucket_max = self.depth;
            self.last_t = end;
        }
        self.area += self.depth as f64 * (t - self.last_t) as f64;
        self.last_t = t;
    }

    fn set_depth(&mut self, depth: u32, t: u64) {
        self.depth = depth;
        self.bucket_max = self.bucket_max.max(depth);
        self.out.depth_max = self.out.depth_max.max(depth);
        if depth == 0 {
            self.idle_since = Some(t);
        }
    }

    pub fn push(&mut self, r: &Record<'_>) {
        let h = &r.h;
        self.out.records += 1;
        if h.is_notify() || h.is_pc() {
            return;
        }
        let t = h.time;
        if !self.started {
            self.started = true;
            self.out.first_ns = t;
            self.bucket_start = t;
            self.last_t = t;
        }
        self.advance(t);
        self.out.last_ns = self.out.last_ns.max(t);
        let c = h.category();
        let discard = c & cat::DISCARD != 0;
        let write = c & cat::WRITE != 0;
        let dir = write as usize;
        let sectors = (h.bytes >> 9) as u64;
        let dev = h.device;
        match h.action_code() {
            act::QUEUE => self.queue(r, write, discard),
            act::GETRQ if h.bytes > 0 && self.dev(dev).seen_q => {
                let phase = &mut self.out.phases.q2g;
                if let Some(b) = self.bios.find(dev, h.sector, |b| b.g_ns == NONE) {
                    b.g_ns = t;
                    phase.record(delta(b.q_ns, t));
                }
            }
            act::INSERT if h.bytes > 0 && self.dev(dev).seen_q => {
                let phase = &mut self.out.phases.g2i;
                if let Some(b) = self.bios.find(dev, h.sector, |b| b.d_ns == NONE) {
                    b.i_ns = t;
                    if b.g_ns != NONE {
                        phase.record(delta(b.g_ns, t));
                    }
                }
            }
            act::BACKMERGE | act::FRONTMERGE => {
                self.out.merges += 1;
                if h.bytes > 0 && self.dev(dev).seen_q {
                    let phase = &mut self.out.phases.q2m;
                    if let Some(b) = self.bios.find(dev, h.sector, |b| b.m_ns == NONE) {
                        b.m_ns = t;
                        phase.record(delta(b.q_ns, t));
                    }
                }
            }
            act::REQUEUE => {
                self.out.requeues += 1;
                if self.dev(dev).seen_q {
                    self.out.btt_q += 1;
                }
                if self.requests.retire(dev, h.sector).is_some() {
                    self.set_depth(self.depth.saturating_sub(1), t);
                }
            }
            act::ISSUE => self.dispatch(r, write, discard, dir, sectors),
            act::COMPLETE => {
                if !discard {
                    self.out.completed.add(write, h.bytes);
                }
                if let Some(d_ns) = self.requests.retire(dev, h.sector) {
                    if h.bytes > 0 {
                        self.out.phases.d2c_request.record(delta(d_ns, t));
                    }
                    self.set_depth(self.depth.saturating_sub(1), t);
                }
                if h.bytes > 0 {
                    let ph = &mut self.out.phases;
                    self.bios.cover(dev, h.sector, h.sector + sectors, |b| {
                        ph.q2c.record(delta(b.q_ns, t));
                        if b.d_ns != NONE {
                            ph.d2c.record(delta(b.d_ns, t));
                        }
                        true
                    });
                }
            }
            act::UNPLUG_IO | act::UNPLUG_TIMER => {
                let n = r.pdu.len().checked_sub(8).map(|s| u64::from_be_bytes(r.pdu[s..].try_into().unwrap())).unwrap_or(0);
                let u = &mut self.out.unplugs;
                if h.action_code() == act::UNPLUG_IO {
                    u.io += 1;
                    u.io_requests += n;
                } else {
                    u.timer += 1;
                    u.timer_requests += n;
                }
            }
            _ => {}
        }
    }

    fn queue(&mut self, r: &Record<'_>, write: bool, discard: bool) {
        let h = &r.h;
        let role = (self.ctx.role)(h.pid);
        if !discard {
            self.out.queued.add(write, h.bytes);
            self.out.roles.get(role).queued.add(write, h.bytes);
        }
        self.dev(h.device).seen_q = true;
        self.out.btt_q += 1;
        if h.bytes == 0 {
            return;
        }
        if self.bios.is_full() {
            self.sweep(h.time);
        }
        if !self.bios.insert(h.device, Bio::new(h.sector, (h.bytes >> 9) as u64, h.time, role)) {
            self.out.untracked.bios_dropped += 1;
        }
    }

    /// Drops stale entries when a table is full, at most once a second of
    /// trace time (a table full of live entries would otherwise be swept
    /// on every record).
    fn sweep(&mut self, now: u64) {
        if now.saturating_sub(self.last_sweep) < 1_000_000_000 && self.last_sweep != 0 {
            return;
        }
        self.last_sweep = now.max(1);
        let before = now.saturating_sub(self.ctx.stale_after_ns);
        self.out.untracked.bios_stale += self.bios.evict_older(before);
        let gone = self.requests.evict_older(before);
        self.out.untracked.requests_dropped += gone;
        self.set_depth(self.depth.saturating_sub(gone as u32), now);
    }

    fn dispatch(&mut self, r: &Record<'_>, write: bool, discard: bool, dir: usize, sectors: u64) {
        let h = &r.h;
        let (t, dev) = (h.time, h.device);
        if discard {
            self.out.discards += 1;
            self.out.discard_bytes += h.bytes as u64;
        } else {
            self.out.dispatched.add(write, h.bytes);
            if h.bytes == 0 {
                self.out.flushes += 1;
            }
        }
        // Queue depth and idle time.
        if self.requests.is_full() {
            self.sweep(t);
        }
        if self.requests.dispatch(dev, h.sector, t) {
            if self.depth == 0 {
                if let Some(s) = self.idle_since.take() {
                    let idle = &mut self.out.idle;
                    let d = t.saturating_sub(s);
                    idle.count += 1;
                    idle.total_ns += d;
                    idle.longest_ns = idle.longest_ns.max(d);
                    idle.hist.record(d);
                }
            }
            self.set_depth(self.depth + 1, t);
        } else {
            self.out.untracked.requests_dropped += 1;
        }
        if h.bytes == 0 {
            return;
        }
        let seen_q = self.dev(dev).seen_q;
        if seen_q {
            self.out.btt_d += 1;
        }
        // btt's phases, and the request's role from its first bio.
        let mut first: Option<(u64, Role)> = None;
        let ph = &mut self.out.phases;
        self.bios.cover(dev, h.sector, h.sector + sectors, |b| {
            if b.i_ns != NONE {
                ph.i2d.record(delta(b.i_ns, t));
            } else if b.m_ns != NONE {
                ph.m2d.record(delta(b.m_ns, t));
            }
            b.d_ns = t;
            if first.is_none_or(|(q, _)| b.q_ns < q) {
                first = Some((b.q_ns, b.role));
            }
            false
        });
        if discard {
            return;
        }
        let role = match first {
            Some((_, role)) => role,
            None => {
                self.out.untracked.dispatches += 1;
                (self.ctx.role)(h.pid)
            }
        };
        self.out.roles.get(role).dispatched.add(write, h.bytes);
        // Size, seek and position.
        let p = if write { &mut self.out.write } else { &mut self.out.read };
        p.sizes.record(h.bytes as u64);
        let ds = self.dev(dev);
        let prev = ds.last_end[dir].replace(h.sector + sectors);
        let p = if write { &mut self.out.write } else { &mut self.out.read };
        if let Some(prev) = prev {
            if h.sector == prev {
                p.sequential += 1;
            } else {
                p.random += 1;
                if h.sector > prev {
                    p.seek_forward.record(h.sector - prev);
                } else {
                    p.seek_backward.record(prev - h.sector);
                }
            }
        }
        self.sample_lba(LbaPoint { t_ns: t, sector: h.sector, sectors: sectors as u32, write });
    }

    /// Keeps every stride-th dispatch; when the buffer fills, every other
    /// kept one goes and the stride doubles, so the points stay evenly
    /// spread over the trace without growing.
    fn sample_lba(&mut self, p: LbaPoint) {
        if self.lba_skip > 0 {
            self.lba_skip -= 1;
            return;
        }
        let lba = &mut self.out.lba;
        if lba.len() == lba.capacity() {
            let mut i = 0;
            lba.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.out.lba_stride *= 2;
        }
        self.out.lba.push(p);
        self.lba_skip = self.out.lba_stride - 1;
    }

    pub fn finish(mut self) -> TraceAnalysis {
        if self.started {
            let t = self.out.last_ns;
            self.advance(t);
            // The last bucket, partial: its mean over the part the trace covers.
            let span = (self.last_t - self.bucket_start).max(1);
            if self.last_t > self.bucket_start || self.out.depth.is_empty() {
                self.out.depth.push(DepthPoint { t_ns: self.bucket_start, mean: self.area / span as f64, max: self.bucket_max });
            }
            self.area_all += self.area;
            let whole = self.out.duration_ns();
            self.out.depth_mean = if whole == 0 { 0.0 } else { self.area_all / whole as f64 };
        }
        self.out
    }
}

impl TraceAnalysis {
    /// Flat named figures for `compare` and experiment summaries: (name,
    /// unit, value). Figures with nothing to measure (no dispatches, no
    /// workload bytes) are left out rather than given as 0.
    pub fn metrics(&self) -> Vec<(String, &'static str, f64)> {
        let mut m: Vec<(String, &'static str, f64)> = Vec::with_capacity(64);
        let mut put = |name: &str, unit: &'static str, v: f64| {
            if v.is_finite() {
                m.push((format!("trace.{name}"), unit, v));
            }
        };
        let (q, d) = (&self.queued, &self.dispatched);
        put("reads_queued", "count", q.read_ops as f64);
        put("writes_queued", "count", q.write_ops as f64);
        put("read_dispatches", "count", d.read_ops as f64);
        put("write_dispatches", "count", d.write_ops as f64);
        put("read_dispatched_MiB", "MiB", d.read_bytes as f64 / MIB);
        put("write_dispatched_MiB", "MiB", d.write_bytes as f64 / MIB);
        put("merges", "count", self.merges as f64);
        put("requeues", "count", self.requeues as f64);
        if self.btt_d > 0 {
            put("merge_ratio", "Q/D", self.merge_ratio());
        }
        if self.unplugs.io > 0 {
            put("ios_per_unplug", "requests", self.unplugs.ios_per_unplug());
        }
        if let Some(wa) = self.write_amplification() {
            put("write_amplification", "ratio", wa);
        }
        for (role, io) in self.roles.all() {
            let r = role_name(role);
            put(&format!("{r}_write_dispatches"), "count", io.dispatched.write_ops as f64);
            put(&format!("{r}_write_MiB"), "MiB", io.dispatched.write_bytes as f64 / MIB);
            put(&format!("{r}_read_MiB"), "MiB", io.dispatched.read_bytes as f64 / MIB);
            put(&format!("{r}_pct_of_traced_write_bytes"), "%", self.share_pct(role, true));
            put(&format!("{r}_pct_of_traced_read_bytes"), "%", self.share_pct(role, false));
        }
        for (dir, p) in [("read", &self.read), ("write", &self.write)] {
            put(&format!("{dir}_sequential_pct"), "%", p.sequential_pct());
            let n = p.sizes.count();
            if n > 0 {
                let bytes = if dir == "read" { d.read_bytes } else { d.write_bytes };
                put(&format!("{dir}_mean_size_KiB"), "KiB", bytes as f64 / n as f64 / 1024.0);
            }
        }
        if d.read_ops + d.write_ops > 0 {
            put("queue_depth_mean", "requests", self.depth_mean);
            put("queue_depth_max", "requests", self.depth_max as f64);
            put("idle_periods", "count", self.idle.count as f64);
            put("idle_total_ms", "ms", self.idle.total_ns as f64 / 1e6);
            put("idle_longest_ms", "ms", self.idle.longest_ns as f64 / 1e6);
        }
        let phases = self.phases.named();
        for (name, ph) in phases.iter().chain([("D2C_request", &self.phases.d2c_request)].iter()) {
            if ph.count == 0 {
                continue;
            }
            let n = name.to_lowercase();
            put(&format!("{n}_mean_us"), "µs", ph.mean_ns() / 1e3);
            put(&format!("{n}_p50_us"), "µs", ph.percentile_ns(50.0) as f64 / 1e3);
            put(&format!("{n}_p99_us"), "µs", ph.percentile_ns(99.0) as f64 / 1e3);
        }
        m
    }
}

const MIB: f64 = 1048576.0;

/// A role's name as metrics and tables print it.
pub fn role_name(r: Role) -> &'static str {
    match r {
        Role::Benchmark => "benchmark",
        Role::Background => "background",
        Role::Other => "other",
    }
}
