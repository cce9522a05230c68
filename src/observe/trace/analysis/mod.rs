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

mod table;
#[cfg(test)]
mod tests;

use super::record::{act, cat, Record};
use crate::result::trace::analysis::{DepthPoint, IoCounts, LbaPoint, Role, RoleIo, Roles, TraceAnalysis};
use table::{Bio, Bios, Requests, NONE};

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

/// btt's interval between two events: a later event stamped no later than
/// the earlier one counts as 1 ns, as btt's `tdelta` does.
#[inline]
fn delta(from: u64, to: u64) -> u64 {
    if from < to {
        to - from
    } else {
        1
    }
}

// The counting stays with the analyser; the figures are the result's.
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

impl Roles {
    fn get(&mut self, r: Role) -> &mut RoleIo {
        match r {
            Role::Benchmark => &mut self.benchmark,
            Role::Background => &mut self.background,
            Role::Other => &mut self.other,
        }
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
