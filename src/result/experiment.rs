//! One run of an experiment cell: the workload's `RunResult` plus the
//! environment it ran in, and who wrote what to the device.

use super::RunResult;
use crate::model::environment::{BackgroundSpec, CacheScenario, TargetSpec};
use crate::model::experiment::Order;
use crate::result::background::BackgroundReport;
use crate::result::cache::CacheReport;
use crate::result::target::TargetRecord;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub const RUN_SCHEMA: &str = "fsbench-experiment-run/1";
pub const PLAN_SCHEMA: &str = "fsbench-experiment-plan/1";

/// The name of the plan in an experiment's directory, beside
/// `experiment.toml` (the experiment file as it was read).
pub const PLAN_FILE: &str = "plan.json";
pub const EXPERIMENT_COPY: &str = "experiment.toml";

/// What an experiment's directory records before its first run: the
/// configuration every run in it shares and the runs it is to hold.
/// `--resume` reloads the experiment from `experiment.toml` and the
/// recorded `--set`, and refuses anything that would change this.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExperimentPlan {
    pub schema: String,
    pub experiment: String,
    /// The experiment file it was started from (absolute): relative paths
    /// in it (job files, personalities) start at its directory.
    pub file: PathBuf,
    /// The `--set NAME=VALUE` in force: one per parameter set, with the
    /// value that won when it was set twice.
    pub sets: Vec<String>,
    /// `[params]` after `--set`.
    pub params: BTreeMap<String, String>,
    pub repeat: u32,
    pub targets: Vec<PlannedTarget>,
    pub workloads: Vec<PlannedWorkload>,
    pub caches: Vec<CacheScenario>,
    pub backgrounds: Vec<PlannedBackground>,
    /// Every run of the matrix, in the order they run.
    pub runs: Vec<PlannedRun>,
    /// How the runs are ordered; a plan from before orders existed ran
    /// target after target.
    #[serde(default = "sequential")]
    pub order: Order,
    /// What the interleaved order was shuffled from (`--seed` reruns it).
    #[serde(default)]
    pub seed: u64,
}

fn sequential() -> Order {
    Order::Sequential
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedTarget {
    pub label: String,
    /// With every size and path expanded (a loop device's size in bytes).
    pub spec: TargetSpec,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedWorkload {
    pub label: String,
    pub family: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedBackground {
    pub label: String,
    /// `None` for no load. Its `dir` is `${target}` when the load writes
    /// beside the target's files (the target's path is known once it is up).
    pub load: Option<BackgroundSpec>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedRun {
    pub cell: Cell,
    pub repeat: u32,
}

/// A cell of the matrix: one value of every axis but the repeat.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Cell {
    pub target: String,
    pub workload: String,
    pub cache: String,
    pub background: String,
}

impl Cell {
    /// File-name form: `target__workload__cache__background`.
    pub fn key(&self) -> String {
        format!("{}__{}__{}__{}", self.target, self.workload, self.cache, self.background).replace([':', '/', ' '], "-")
    }
}

/// Who wrote and read what during the measured run (seed 000, Tables 2-3).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Attribution {
    /// Bytes the workload's operations transferred (what it issued).
    pub benchmark_read_bytes: u64,
    pub benchmark_write_bytes: u64,
    /// Bytes fsbench's own process caused to be written to storage during
    /// the run (/proc/self/io write_bytes): the benchmark's writes after the
    /// page cache absorbed rewrites, before the journal's.
    #[serde(default)]
    pub benchmark_storage_write_bytes: u64,
    /// Bytes the background process wrote (its own count).
    pub background_write_bytes: u64,
    /// What reached the target's device (block counters), if it has one.
    pub device_read_bytes: Option<u64>,
    pub device_write_bytes: Option<u64>,
    /// benchmark_storage_write_bytes / device_write_bytes, at most 1: the
    /// fraction of the bytes the device wrote that /proc/self/io attributes
    /// to the benchmark (the rest: journal and metadata, the background
    /// load, other processes). Not the write share: that counts operations.
    #[serde(alias = "benchmark_share_of_device_writes")]
    pub benchmark_attributed_write_bytes_fraction: Option<f64>,
    /// The write operations the benchmark issued (its operations of class
    /// data write: Filebench's write and append flowops, fio's writes).
    #[serde(default)]
    pub benchmark_write_ops: u64,
    /// Write requests the target's device completed during the run (its
    /// block counters' `write_ios`), if it has one.
    #[serde(default)]
    pub device_write_requests: Option<u64>,
    /// The write share, seed 000's Tables 2-3: benchmark_write_ops /
    /// device_write_requests (Webproxy on HDD: 21,657 of 103,517 = 20.92%).
    /// Above 1 when the page cache absorbed writes or the block layer merged
    /// them. Absent from records made before it existed.
    #[serde(default)]
    pub write_share: Option<f64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExperimentRun {
    pub schema: String,
    pub experiment: String,
    pub cell: Cell,
    /// 1-based repeat number.
    pub repeat: u32,
    pub target: TargetRecord,
    pub cache: CacheReport,
    pub background: Option<BackgroundReport>,
    pub attribution: Attribution,
    pub result: RunResult,
    /// When in the experiment it ran and how loaded the machine was;
    /// absent from runs recorded before it existed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub order: Option<RunOrder>,
}

/// A run's place in the experiment's schedule and the machine's load
/// around it: what the drift checks (`stats::design`) read.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOrder {
    /// The round (repeat r of every cell runs in round r).
    pub round: u32,
    /// 0-based index in the experiment's schedule (plan.json `runs`).
    pub position: usize,
    pub started_unix_ms: u64,
    pub load_start: HostLoad,
    pub load_end: HostLoad,
    /// The CPU time processes other than fsbench used during the run, % of
    /// all the machine's CPUs (/proc/stat busy time less fsbench's own);
    /// `None` when /proc could not be read.
    pub others_cpu_pct: Option<f64>,
    /// The mean number of runnable tasks on the machine during the run
    /// (/proc/stat procs_running every 100 ms, fsbench's own included):
    /// unlike the CPU share, it keeps growing with the competition.
    #[serde(default)]
    pub runnable: Option<f64>,
}

/// /proc/loadavg's 1- and 5-minute averages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostLoad {
    pub load1: f64,
    pub load5: f64,
}

impl Attribution {
    /// What the run's devices saw (the target's `device` when it has one,
    /// else every device not underlying another), next to what the workload
    /// and the background load issued.
    pub fn of(r: &RunResult, device: Option<&std::path::Path>, background_write_bytes: u64) -> Attribution {
        let want = device.and_then(|d| d.file_name()).map(|n| n.to_string_lossy().to_string());
        let mut dev_read = None;
        let mut dev_write = None;
        let mut dev_write_ios = None;
        for g in &r.groups {
            let underlying: Vec<&String> = g.devices.iter().flat_map(|d| d.underlying.iter()).collect();
            for d in &g.devices {
                let is_target = match &want {
                    Some(w) => &d.name == w,
                    None => !underlying.contains(&&d.name),
                };
                if is_target {
                    *dev_read.get_or_insert(0) += d.delta.read_sectors * 512;
                    *dev_write.get_or_insert(0) += d.delta.write_sectors * 512;
                    *dev_write_ios.get_or_insert(0) += d.delta.write_ios;
                }
            }
        }
        let ((_, read), (_, write)) =
            r.jobs.iter().map(|j| j.issued()).fold(((0, 0), (0, 0)), |((a, b), (c, d)), ((e, f), (g, h))| ((a + e, b + f), (c + g, d + h)));
        let storage: u64 = r.groups.iter().map(|g| g.process_io.write_bytes).sum();
        let write_ops: u64 =
            r.jobs.iter().flat_map(|j| &j.ops).filter(|o| o.class == crate::result::OpClass::DataWrite).map(|o| o.ops).sum();
        Attribution {
            benchmark_read_bytes: read,
            benchmark_write_bytes: write,
            benchmark_storage_write_bytes: storage,
            background_write_bytes,
            device_read_bytes: dev_read,
            device_write_bytes: dev_write,
            // Capped at 1: buffered data the benchmark dirtied but the kernel had
            // not written back by the end of the run never reached the device.
            benchmark_attributed_write_bytes_fraction: dev_write.filter(|&d| d > 0).map(|d| storage.min(d) as f64 / d as f64),
            benchmark_write_ops: write_ops,
            device_write_requests: dev_write_ios,
            write_share: dev_write_ios.filter(|&d| d > 0).map(|d| write_ops as f64 / d as f64),
        }
    }
}
