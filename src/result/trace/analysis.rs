//! What a block trace says about a run: the figures
//! `observe::trace::analysis` computes in one pass over the records (the
//! rules it follows are there), and the flat metrics drawn from them.

use super::hist::{Log2Hist, Phase};
use serde::{Deserialize, Serialize};

/// Who caused an I/O, by the pid of its Q.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Benchmark,
    Background,
    Other,
}

/// Operations and bytes by direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoCounts {
    pub read_ops: u64,
    pub read_bytes: u64,
    pub write_ops: u64,
    pub write_bytes: u64,
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

/// btt's phases; `observe::trace::analysis` says what pairs with what.
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
