//! blkparse's end-of-run summary of a trace, as `observe::trace::summary`
//! computes it (the rules it follows are there) and `report::blkparse`
//! prints it.

use serde::{Deserialize, Serialize};

/// How blkparse is taken to read the trace: it changes the device label,
/// how devices are grouped and whether sequence gaps are reported.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// `blkparse -i NAME`: the per-CPU files, every record counted under
    /// the one label NAME (the base name's file-name part).
    Files { name: String },
    /// `blkparse -i -`: one stream, a block per device labelled `maj,min`.
    Stream,
}

/// A read and a write figure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pair<T> {
    pub read: T,
    pub write: T,
}

/// A count of I/Os and their size as blkparse keeps it: `kib` sums each
/// I/O's whole KiB, `rest` the bytes left over, both wrapping.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flow {
    pub count: u64,
    pub kib: u64,
    pub rest: u64,
}

impl Flow {
    /// The KiB blkparse prints.
    pub fn shown_kib(&self) -> u64 {
        self.kib.wrapping_add(self.rest >> 10)
    }
}

/// The counters of one summary block (a CPU of a device, or its total).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IoStats {
    pub queued: Pair<Flow>,
    pub dispatched: Pair<Flow>,
    pub requeued: Pair<u64>,
    pub completed: Pair<Flow>,
    pub merged: Pair<Flow>,
    pub pc_queued: Pair<Flow>,
    pub pc_dispatched: Pair<Flow>,
    pub pc_requeued: Pair<u64>,
    pub pc_completed: Pair<u64>,
    pub io_unplugs: u64,
    pub timer_unplugs: u64,
}

impl IoStats {
    /// blkparse prints the PC lines only when one of these counts is not 0.
    pub fn has_pc(&self) -> bool {
        let p = [&self.pc_queued, &self.pc_dispatched];
        p.iter().any(|x| x.read.count != 0 || x.write.count != 0)
            || self.pc_requeued.read != 0
            || self.pc_requeued.write != 0
            || self.pc_completed.read != 0
            || self.pc_completed.write != 0
    }
}

/// One CPU's block.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuSummary {
    pub cpu: u32,
    pub stats: IoStats,
}

/// One device's part of the summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceSummary {
    /// What blkparse names the device: the trace's name, or `maj,min`.
    pub label: String,
    pub major: u32,
    pub minor: u32,
    /// Only the CPUs that had records, lowest first.
    pub cpus: Vec<CpuSummary>,
    /// The CPU blocks summed (blkparse prints it when there are two or more).
    pub total: IoStats,
    /// The most requests dispatched and not yet completed at once.
    pub depth: Pair<u64>,
    /// Records blkparse counts as events.
    pub events: u64,
    /// Time of the first event and of the last record, in trace ns.
    pub first_ns: u64,
    pub last_ns: u64,
    /// Completed KiB per second over that span, as blkparse computes it.
    pub throughput_kib_s: Pair<u64>,
    /// Runs of missing sequence numbers per CPU, and the records missing,
    /// as blkparse counts them on a stream (wrapping, as its counter does).
    pub skips: u64,
    pub skipped_records: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub mode: Mode,
    pub devices: Vec<DeviceSummary>,
}
