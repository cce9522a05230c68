//! What an IOzone run adds to its operation statistics: the settings it ran
//! with and IOzone's own figure for every (file size, record size, column),
//! timed as IOzone times it, plus the throughput-mode figures. The
//! operation statistics themselves (one `JobResult` per cell, named
//! `<file kB>k/<record kB>k`, one `OpStats` per column, named by
//! `Column::name`, with its latency histogram) are what repeats, compare
//! and the exporters read.

use crate::model::iozone::{Column, IozonePlan};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IozoneDetails {
    /// The configuration the run used.
    pub settings: IozonePlan,
    /// Every pass run, in run order.
    pub cells: Vec<CellFigure>,
    /// Throughput mode: one entry per (child count, column).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throughput: Vec<ThroughputFigure>,
}

/// One pass of one test on one file size and record size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CellFigure {
    pub file_kb: u64,
    pub rec_kb: u64,
    pub column: Column,
    /// The timed span (from before the open to after the last I/O, with the
    /// fsync and close inside when `-e`/`-c` ask), monotonic nanoseconds.
    pub elapsed_ns: u64,
    pub bytes: u64,
    /// I/O calls (records, or stdio calls for fwrite/fread).
    pub ops: u64,
    /// User + system CPU seconds of the pass.
    pub cpu_s: f64,
}

impl CellFigure {
    fn secs(&self) -> f64 {
        (self.elapsed_ns as f64 / 1e9).max(1e-9)
    }
    /// IOzone's figure: kB (1024 bytes) per second.
    pub fn kb_per_s(&self) -> f64 {
        self.bytes as f64 / 1024.0 / self.secs()
    }
    pub fn ops_per_s(&self) -> f64 {
        self.ops as f64 / self.secs()
    }
    pub fn us_per_op(&self) -> f64 {
        self.secs() * 1e6 / (self.ops.max(1) as f64)
    }
    /// CPU busy share of the pass, in percent (`-+u`).
    pub fn cpu_pct(&self) -> f64 {
        self.cpu_s / self.secs() * 100.0
    }
}

/// Throughput mode: one test run by `children` children at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThroughputFigure {
    pub children: u32,
    pub file_kb: u64,
    pub rec_kb: u64,
    pub column: Column,
    /// Each child's kB/s over its own time (up to the stonewall).
    pub per_child_kb_s: Vec<f64>,
    /// kB each child moved (all of its file without stonewalling).
    pub per_child_kb: Vec<f64>,
    /// All children's bytes over the time from the first start to the last
    /// end, as the parent sees it.
    pub parent_kb_s: f64,
    /// Wall and CPU seconds of the test (`-+u`).
    pub wall_s: f64,
    pub cpu_s: f64,
}

impl ThroughputFigure {
    /// "Children see throughput": the sum of the children's rates.
    pub fn children_kb_s(&self) -> f64 {
        self.per_child_kb_s.iter().sum()
    }
    pub fn min_kb_s(&self) -> f64 {
        self.per_child_kb_s.iter().copied().fold(f64::INFINITY, f64::min)
    }
    pub fn max_kb_s(&self) -> f64 {
        self.per_child_kb_s.iter().copied().fold(0.0, f64::max)
    }
    pub fn avg_kb_s(&self) -> f64 {
        self.children_kb_s() / self.per_child_kb_s.len().max(1) as f64
    }
    /// "Min xfer": the least any child moved, kB.
    pub fn min_xfer_kb(&self) -> f64 {
        self.per_child_kb.iter().copied().fold(f64::INFINITY, f64::min)
    }
}
