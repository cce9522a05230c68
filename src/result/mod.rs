//! The typed result of a run. Every report is rendered from this; nothing in
//! it is specific to fio: operation types are names ("read", "write", "sync"
//! here; flowops, YCSB operations or Bonnie++ phases elsewhere).

pub use crate::host::proc_io::ProcessIo;
pub use crate::measure::usage::CpuUsage;

use crate::environment::system::SystemInfo;
use crate::measure::hist::LatencyHist;
use crate::observe::blockdev::DeviceReport;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped whenever a field changes meaning or disappears.
pub const SCHEMA: &str = "fsbench-result/1";

/// One operation type of one result (e.g. "read").
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OpStats {
    pub name: String,
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
}

impl OpStats {
    pub fn new(name: &str, with_submit: bool) -> Self {
        OpStats {
            name: name.to_string(),
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
    }

    /// Operations per second over `elapsed_ns`.
    pub fn iops(&self, elapsed_ns: u64) -> f64 {
        rate(self.ops, elapsed_ns)
    }
    /// Bytes per second over `elapsed_ns`.
    pub fn bytes_per_sec(&self, elapsed_ns: u64) -> f64 {
        rate(self.bytes, elapsed_ns)
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
    /// Filebench-style runs: flowop classes, shortages, filesets, intervals.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub flow: Option<flow::FlowReport>,
}

impl JobResult {
    pub fn op(&self, name: &str) -> Option<&OpStats> {
        self.ops.iter().find(|o| o.name == name)
    }
    pub fn total_ops(&self) -> u64 {
        self.ops.iter().map(|o| o.ops).sum()
    }

    /// The operations CPU per op is divided by: every op of a fio-style
    /// job; only the IO Summary's ops of a Filebench-style one (hog, delay,
    /// semaphores and limits are not I/O).
    pub fn counted_ops(&self) -> u64 {
        match &self.flow {
            Some(f) => f.io_summary(self).ops,
            None => self.total_ops(),
        }
    }

    /// (ops, bytes) read and written: the `read`/`write` operations of a
    /// fio-style job, the read- and write-attributed flowops of a
    /// Filebench-style one.
    pub fn issued(&self) -> ((u64, u64), (u64, u64)) {
        let sum = |pick: &dyn Fn(&OpStats) -> bool| self.ops.iter().filter(|o| pick(o)).fold((0, 0), |(n, b), o| (n + o.ops, b + o.bytes));
        match &self.flow {
            Some(f) => {
                let dir = |o: &OpStats| f.flowops.iter().find(|i| i.name == o.name).map(|i| i.direction);
                (
                    sum(&|o| dir(o) == Some(crate::model::flow::Direction::Read)),
                    sum(&|o| dir(o) == Some(crate::model::flow::Direction::Write)),
                )
            }
            None => (sum(&|o| o.name == "read"), sum(&|o| o.name == "write")),
        }
    }
}

/// What happened around one group of concurrently running jobs: the whole
/// process's CPU and I/O, and what reached the devices holding the files.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GroupResult {
    pub group: u32,
    /// From the group's start (after start delays) to its last worker's end.
    pub elapsed_ns: u64,
    pub cpu: CpuUsage,
    pub process_io: ProcessIo,
    pub devices: Vec<DeviceReport>,
}

/// Everything one invocation measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub fsbench_version: String,
    /// Seconds since the Unix epoch when the run started.
    pub started_unix: u64,
    pub command: Vec<String>,
    pub jobs: Vec<JobResult>,
    /// One entry per group of jobs that ran together (fio's stonewall).
    pub groups: Vec<GroupResult>,
    pub system: SystemInfo,
    pub warnings: Vec<String>,
    pub partial: bool,
}

pub mod experiment;
pub mod flow;
