//! The typed result of a run. Every report is rendered from this, and
//! nothing that reads it needs to know which tool produced it:
//! - each operation type carries its class (data read, data write,
//!   metadata, sync, other I/O, or not I/O) and the bytes it moved, which is
//!   all attribution, CPU per op and the generic reports need;
//! - each reported unit declares its headline metrics (what a summary table
//!   and a chart lead with) and carries its tool's own figures opaquely in
//!   `details`, read only by the run's `layout` (a registered renderer).

pub use crate::measure::usage::CpuUsage;
pub use process_io::ProcessIo;

use crate::measure::hist::LatencyHist;
use crate::result::device::DeviceReport;
use crate::result::system::SystemInfo;
use crate::result::warning::Warning;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped whenever a field changes meaning or disappears. Files of the
/// previous version are upgraded when loaded (`load`).
pub const SCHEMA: &str = "fsbench-result/2";

/// Schema of the document `--repeat` writes: its runs and their summary.
pub const REPEATED_SCHEMA: &str = "fsbench-repeated/1";

/// What an operation does, as far as attribution and CPU per op care.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpClass {
    /// Reads file or device data; its bytes are data read.
    DataRead,
    /// Writes file or device data (creating a file with content counts);
    /// its bytes are data written.
    DataWrite,
    /// Creates, opens, closes, stats, deletes, lists: no data moved.
    Metadata,
    /// fsync, fdatasync, sync_file_range and the like.
    Sync,
    /// I/O of none of the kinds above (fio's trim, Filebench's aiowait).
    #[default]
    Other,
    /// Not I/O at all: think time, CPU burn, semaphores, rate limits. Left
    /// out of the operations that CPU per op is divided by.
    Idle,
}

impl OpClass {
    /// Counted as an I/O operation (everything but `Idle`).
    pub fn is_io(self) -> bool {
        self != OpClass::Idle
    }

    /// The name JSON uses.
    pub fn name(self) -> &'static str {
        match self {
            OpClass::DataRead => "data_read",
            OpClass::DataWrite => "data_write",
            OpClass::Metadata => "metadata",
            OpClass::Sync => "sync",
            OpClass::Other => "other",
            OpClass::Idle => "idle",
        }
    }
}

/// A figure a unit leads with: summary tables and charts show these first.
/// `name` is the metric's name below the unit (`read/iops`,
/// `io_summary/ops_s`), with its unit in it as every metric name has.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Headline {
    pub name: String,
    /// Unit for axes and table headers ("IOPS", "MiB/s", "µs", "ops/s").
    pub unit: String,
    pub value: f64,
}

impl Headline {
    pub fn new(name: impl Into<String>, unit: &str, value: f64) -> Headline {
        Headline { name: name.into(), unit: unit.to_string(), value }
    }
}

/// One operation type of one result (e.g. "read").
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpStats {
    pub name: String,
    #[serde(default)]
    pub class: OpClass,
    /// Completed operations.
    pub ops: u64,
    /// Bytes transferred by those operations.
    pub bytes: u64,
    /// Operations that returned an error or a short transfer.
    pub errors: u64,
    /// Total latency per operation: from handing it to the engine to its
    /// completion (fio's `lat`). For synchronous engines this equals `clat`.
    pub lat: LatencyHist,
    /// Asynchronous engines only: queue until submitted (fio's `slat`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub slat: Option<LatencyHist>,
    /// Asynchronous engines only: submitted until completed (fio's `clat`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub clat: Option<LatencyHist>,
    /// Time this operation ran when that is not the job's whole window
    /// (a verifying job reads back after it writes): its rates are over this.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub active_ns: Option<u64>,
}

impl OpStats {
    pub fn new(name: &str, class: OpClass, with_submit: bool) -> Self {
        // Full-range histograms: these are recorded into per operation.
        OpStats {
            name: name.to_string(),
            class,
            lat: LatencyHist::new(),
            slat: with_submit.then(LatencyHist::new),
            clat: with_submit.then(LatencyHist::new),
            ..Default::default()
        }
    }

    /// Zero the counts and empty the histograms, keeping their allocations.
    pub fn reset(&mut self) {
        self.ops = 0;
        self.bytes = 0;
        self.errors = 0;
        for h in [Some(&mut self.lat), self.slat.as_mut(), self.clat.as_mut()].into_iter().flatten() {
            h.reset();
        }
    }

    pub fn merge(&mut self, o: &OpStats) {
        self.ops += o.ops;
        self.bytes += o.bytes;
        self.errors += o.errors;
        self.lat.merge(&o.lat);
        merge_opt(&mut self.slat, &o.slat);
        merge_opt(&mut self.clat, &o.clat);
        // Threads run side by side: the longest one is the operation's time.
        self.active_ns = match (self.active_ns, o.active_ns) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Operations per second over `elapsed_ns` (or the operation's own time).
    pub fn iops(&self, elapsed_ns: u64) -> f64 {
        rate(self.ops, self.active_ns.unwrap_or(elapsed_ns))
    }
    /// Bytes per second over `elapsed_ns` (or the operation's own time).
    pub fn bytes_per_sec(&self, elapsed_ns: u64) -> f64 {
        rate(self.bytes, self.active_ns.unwrap_or(elapsed_ns))
    }
}

fn merge_opt(a: &mut Option<LatencyHist>, b: &Option<LatencyHist>) {
    match (a.as_mut(), b) {
        (Some(x), Some(y)) => x.merge(y),
        (None, Some(y)) => *a = Some(y.clone()),
        _ => {}
    }
}

pub fn rate(count: u64, elapsed_ns: u64) -> f64 {
    if elapsed_ns == 0 {
        0.0
    } else {
        count as f64 * 1e9 / elapsed_ns as f64
    }
}

/// Per-interval counts, one series per operation type: each entry is the
/// delta of that interval, not a running total.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Timeline {
    pub interval_ms: u64,
    pub ops: BTreeMap<String, Vec<u64>>,
    pub bytes: BTreeMap<String, Vec<u64>>,
}

impl Timeline {
    /// Add another timeline sample by sample (threads of one job line up
    /// because they share the start of the measured window).
    pub fn merge(&mut self, o: &Timeline) {
        if self.interval_ms == 0 {
            self.interval_ms = o.interval_ms;
        }
        for (dst, src) in [(&mut self.ops, &o.ops), (&mut self.bytes, &o.bytes)] {
            for (name, series) in src {
                let d = dst.entry(name.clone()).or_default();
                if d.len() < series.len() {
                    d.resize(series.len(), 0);
                }
                for (i, v) in series.iter().enumerate() {
                    d[i] += v;
                }
            }
        }
    }
}

/// One reported unit: a job (or one clone of it), or a whole group with
/// group_reporting.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobResult {
    pub name: String,
    /// Its reporting group (fio's groupid: `stonewall` or `new_group`
    /// starts the next).
    pub group: u32,
    /// Worker threads merged into this result.
    pub threads: u32,
    pub engine: String,
    /// The measured window (after ramp time), in ns.
    pub elapsed_ns: u64,
    pub ops: Vec<OpStats>,
    pub timeline: Timeline,
    /// Options as the user gave them, `name=value`.
    pub options: BTreeMap<String, String>,
    /// Every setting the job ran with, defaults included, as the frontend
    /// resolved it (for fio jobs: the checked `JobSpec`).
    #[serde(default)]
    pub resolved: serde_json::Value,
    /// Interrupted before it finished: the figures cover what ran.
    pub partial: bool,
    /// Per-job error text (the job stopped on an I/O error).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub error: Option<String>,
    /// What summaries and charts lead with for this unit.
    #[serde(default)]
    pub headline: Vec<Headline>,
    /// The tool's own figures (Filebench's flowops and filesets, Postmark's
    /// phases, ...), read only by the run's layout.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub details: Option<serde_json::Value>,
}

impl JobResult {
    pub fn op(&self, name: &str) -> Option<&OpStats> {
        self.ops.iter().find(|o| o.name == name)
    }
    pub fn total_ops(&self) -> u64 {
        self.ops.iter().map(|o| o.ops).sum()
    }

    /// The operations CPU per op is divided by: every I/O operation (hog,
    /// delay, semaphores and rate limits are not I/O).
    pub fn counted_ops(&self) -> u64 {
        self.ops.iter().filter(|o| o.class.is_io()).map(|o| o.ops).sum()
    }

    /// (ops, bytes) of the data-read and the data-write operations.
    pub fn issued(&self) -> ((u64, u64), (u64, u64)) {
        let sum = |class: OpClass| self.ops.iter().filter(|o| o.class == class).fold((0, 0), |(n, b), o| (n + o.ops, b + o.bytes));
        (sum(OpClass::DataRead), sum(OpClass::DataWrite))
    }

    /// The headline of a unit whose operations are its figures (fio jobs):
    /// each operation's IOPS and bandwidth, and its p99 latency when it
    /// completed anything.
    pub fn op_headline(&self) -> Vec<Headline> {
        let mut h = Vec::new();
        for op in &self.ops {
            h.push(Headline::new(format!("{}/iops", op.name), "IOPS", op.iops(self.elapsed_ns)));
            h.push(Headline::new(format!("{}/bw_MiB_s", op.name), "MiB/s", op.bytes_per_sec(self.elapsed_ns) / 1048576.0));
            if op.lat.count() > 0 {
                h.push(Headline::new(format!("{}/lat_p99_us", op.name), "µs", op.lat.percentile(99.0) as f64 / 1000.0));
            }
        }
        h
    }

    /// Put `v` under `key` in the details, next to what is there.
    pub fn set_detail(&mut self, key: &str, v: serde_json::Value) {
        if let Some(m) = self.details.get_or_insert_with(|| serde_json::json!({})).as_object_mut() {
            m.insert(key.into(), v);
        }
    }

    /// The unit's tool-specific figures as the type its layout reads.
    pub fn details_as<T: serde::de::DeserializeOwned>(&self) -> Option<T> {
        self.details.as_ref().and_then(|d| T::deserialize(d).ok())
    }
}

/// What happened around one group of concurrently running jobs: the whole
/// process's CPU and I/O, and what reached the devices holding the files.
/// fio's reporting groups (`new_group`) that ran at the same time share
/// one: these figures cannot be split between them.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GroupResult {
    /// The first reporting group that ran in this window.
    pub group: u32,
    /// The later reporting groups that ran alongside `group` (fio's
    /// `new_group` without `stonewall`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ran_with: Vec<u32>,
    /// From the group's start (after start delays) to its last worker's end.
    pub elapsed_ns: u64,
    /// When the window opened, in ns since the Unix epoch: where the ranks
    /// of one run line up when their results are merged (`merge`). Set by
    /// the one-group runners' window; absent elsewhere and in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_unix_ns: Option<u64>,
    pub cpu: CpuUsage,
    pub process_io: ProcessIo,
    pub devices: Vec<DeviceReport>,
}

impl GroupResult {
    /// The reporting groups measured in this window, in order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::once(self.group).chain(self.ran_with.iter().copied())
    }

    /// Whether reporting group `gid` ran in this window.
    pub fn holds(&self, gid: u32) -> bool {
        self.group == gid || self.ran_with.contains(&gid)
    }
}

/// Everything one invocation measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub fsbench_version: String,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix: u64,
    pub command: Vec<String>,
    /// The registered renderer that shows this run in its tool's layout
    /// (`fio`, `filebench`, `quick`, ...; see `report::layout`). Absent
    /// from version 1 files, whose upgrade sets it.
    #[serde(default)]
    pub layout: String,
    pub jobs: Vec<JobResult>,
    /// One entry per group of jobs that ran together (between fio's
    /// stonewalls), each holding one or more reporting groups.
    pub groups: Vec<GroupResult>,
    pub system: SystemInfo,
    pub warnings: Vec<Warning>,
    pub partial: bool,
    /// The workload failed (an I/O error stopped a job, a flow hit an
    /// error): what it did is kept for inspection, but it is not a result
    /// and no statistic uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
    /// The block trace taken around the run (`--trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<trace::TraceReport>,
}

impl RunResult {
    /// Complete and not failed: a run statistics may use.
    pub fn is_valid(&self) -> bool {
        !self.partial && self.failed.is_none()
    }
}

pub mod background;
pub mod bonnie;
pub mod cache;
pub mod cmdprio;
pub mod device;
pub mod experiment;
pub mod flow;
pub mod iozone;
pub mod load;
pub mod merge;
pub mod postmark;
pub mod process_io;
pub mod replay;
pub mod steady;
pub mod system;
pub mod target;
#[cfg(test)]
pub(crate) mod testutil;
pub mod trace;
pub mod verify;
pub mod warning;
pub mod ycsb;
