//! What a Filebench-style run adds to its `JobResult`: which flowops count
//! as I/O and on which side of rd/wr, what ran short, the filesets as built,
//! and psrun's interval statistics. The per-flowop counts and latency
//! histograms themselves are ordinary `OpStats` in `JobResult::ops`, one per
//! flowop name (same-named flowops of all threads merged, as Filebench does).

use crate::model::flow::{Direction, FlowopKind};
use crate::result::{rate, Headline, JobResult, OpClass};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FlowReport {
    /// One entry per distinct flowop name, in definition order; the same
    /// order as `JobResult::ops`.
    pub flowops: Vec<FlowopInfo>,
    pub filesets: Vec<FilesetReport>,
    /// psrun: one entry per printed interval.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<IntervalStats>,
    /// "duration", "firstdone", "alldone", "finishon" (a 1.4 script's finishon* in
    /// timeout mode), "error" or "interrupted".
    pub ended_by: String,
    pub seed: u64,
    /// Thread instances that ran.
    pub threads: u32,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FlowopInfo {
    pub name: String,
    /// WML type name ("readwholefile", ...).
    pub kind: String,
    /// Counted in the IO Summary.
    pub io: bool,
    pub direction: Direction,
    /// Calls that found no free (createfile) or no existing (open, delete,
    /// stat, ...) file and did nothing; Filebench's NORSC.
    pub out_of_files: u64,
    /// deletefile calls that skipped a file another thread had open
    /// (Filebench skips these silently and records no op).
    pub busy_skips: u64,
}

impl FlowopInfo {
    /// The class of a flowop's operations: data by direction, fsyncs as
    /// sync, aiowait as other I/O, the rest of the I/O-type flowops as
    /// metadata, everything else (hog, delay, semaphores, limits) idle.
    pub fn class(&self) -> OpClass {
        if !self.io {
            return OpClass::Idle;
        }
        match (self.direction, self.kind.as_str()) {
            (Direction::Read, _) => OpClass::DataRead,
            (Direction::Write, _) => OpClass::DataWrite,
            (_, "fsync" | "fsyncset") => OpClass::Sync,
            (_, "aiowait") => OpClass::Other,
            _ => OpClass::Metadata,
        }
    }

    pub fn new(name: &str, kind: FlowopKind) -> FlowopInfo {
        FlowopInfo {
            name: name.to_string(),
            kind: kind.wml_name().to_string(),
            io: kind.is_io(),
            direction: kind.direction(),
            out_of_files: 0,
            busy_skips: 0,
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct FilesetReport {
    pub name: String,
    pub path: String,
    /// Entries defined (files) and how many existed when the run started.
    pub entries: u64,
    pub existing_at_start: u64,
    pub leafdirs: u64,
    pub directories: u64,
    /// Mean of the drawn sizes over all entries, in bytes.
    pub mean_size_bytes: f64,
    /// Mean number of directories between the fileset root and a file.
    pub mean_depth: f64,
    /// Bytes written while preallocating, and how long it took.
    pub preallocated_bytes: u64,
    pub populate_s: f64,
}

/// psrun statistics of one interval (since the previous print when reset,
/// since the start otherwise).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct IntervalStats {
    /// Seconds from the start of the measured window to this print.
    pub at_s: f64,
    /// Length of the window the figures cover, in seconds.
    pub span_s: f64,
    /// Per flowop, in `FlowReport::flowops` order.
    pub ops: Vec<u64>,
    pub bytes: Vec<u64>,
    pub lat_sum_ns: Vec<u64>,
}

/// Filebench's `IO Summary` line, computed from the per-flowop results.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct IoSummary {
    /// I/O-type flowop calls.
    pub ops: u64,
    pub ops_per_s: f64,
    /// Read-attributed and write-attributed calls per second.
    pub reads_per_s: f64,
    pub writes_per_s: f64,
    /// MiB per second over all I/O-type flowops.
    pub mib_per_s: f64,
    /// Op-weighted mean latency over all I/O-type flowops, in ms: not a
    /// request latency.
    pub ms_per_op: f64,
}

impl IoSummary {
    /// The IO Summary as the unit's headline metrics (names kept from
    /// fsbench-result/1, so results of both versions compare).
    pub fn headline(&self) -> Vec<Headline> {
        vec![
            Headline::new("io_summary/ops_s", "ops/s", self.ops_per_s),
            Headline::new("io_summary/rd_s", "ops/s", self.reads_per_s),
            Headline::new("io_summary/wr_s", "ops/s", self.writes_per_s),
            Headline::new("io_summary/MiB_s", "MiB/s", self.mib_per_s),
            Headline::new("io_summary/ms_op", "ms", self.ms_per_op),
        ]
    }
}

impl FlowReport {
    /// Filebench's definition: ops of I/O-type flowops; rd/wr by direction;
    /// ms/op = total latency / ops over those flowops.
    pub fn io_summary(&self, job: &JobResult) -> IoSummary {
        let (mut ops, mut rd, mut wr, mut bytes, mut lat_ns) = (0u64, 0u64, 0u64, 0u64, 0f64);
        for info in self.flowops.iter().filter(|f| f.io) {
            let Some(s) = job.op(&info.name) else { continue };
            ops += s.ops;
            bytes += s.bytes;
            lat_ns += s.lat.mean() * s.lat.count() as f64;
            match info.direction {
                Direction::Read => rd += s.ops,
                Direction::Write => wr += s.ops,
                Direction::None => {}
            }
        }
        let t = job.elapsed_ns;
        IoSummary {
            ops,
            ops_per_s: rate(ops, t),
            reads_per_s: rate(rd, t),
            writes_per_s: rate(wr, t),
            mib_per_s: rate(bytes, t) / 1048576.0,
            ms_per_op: if ops == 0 { 0.0 } else { lat_ns / ops as f64 / 1e6 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testutil::{job, op};

    #[test]
    fn io_summary_counts_only_io_flowops_and_splits_rd_wr() {
        // 2 s window: readfile 100 ops of 1 KiB, writefile 50 ops, closefile 30 (I/O, neither
        // side), hog 1000 (not I/O).
        let j0 = job(
            "w",
            2_000_000_000,
            &[
                op("readfile", 100, 102_400, 1_000_000),
                op("writefile", 50, 51_200, 3_000_000),
                op("closefile", 30, 0, 10_000),
                op("hog", 1000, 0, 5_000_000),
            ],
        );
        let f = FlowReport {
            flowops: vec![
                FlowopInfo::new("readfile", FlowopKind::ReadWholeFile),
                FlowopInfo::new("writefile", FlowopKind::WriteWholeFile),
                FlowopInfo::new("closefile", FlowopKind::CloseFile),
                FlowopInfo::new("hog", FlowopKind::Hog),
            ],
            ..Default::default()
        };
        let s = f.io_summary(&j0);
        assert_eq!(s.ops, 180);
        assert!((s.ops_per_s - 90.0).abs() < 1e-9);
        assert!((s.reads_per_s - 50.0).abs() < 1e-9);
        assert!((s.writes_per_s - 25.0).abs() < 1e-9);
        assert!((s.mib_per_s - 153_600.0 / 2.0 / 1048576.0).abs() < 1e-9);
        // Op-weighted mean of the three I/O flowops' mean latencies, hog left out.
        let lat = |o: &str| j0.op(o).unwrap().lat.mean() * j0.op(o).unwrap().ops as f64;
        let want = (lat("readfile") + lat("writefile") + lat("closefile")) / 180.0 / 1e6;
        assert!((s.ms_per_op - want).abs() < 1e-9, "{} vs {want}", s.ms_per_op);
        assert!(s.ms_per_op > 1.0 && s.ms_per_op < 3.0);
    }
}
