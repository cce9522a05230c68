//! What a YCSB phase adds to its operation statistics: YCSB's own figures
//! (runtime, throughput, per metric the `Return=` counts and, with
//! `measurementtype=timeseries`, the average latency per time unit), the
//! store's own counters, and the bytes the client handed the store, which
//! with the device's bytes give the write amplification. Latency
//! histograms are the `OpStats` of the job, one per YCSB metric (`READ`,
//! `READ-FAILED`, `Intended-READ`, ...), in nanoseconds.

use crate::model::ycsb::YcsbPlan;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `Return=` names in the order they are printed (the store
/// statuses' order).
pub const STATUS_ORDER: &[&str] = &["OK", "NOT_FOUND", "ERROR", "NOT_IMPLEMENTED", "BAD_REQUEST", "UNEXPECTED_STATE"];

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct YcsbDetails {
    pub settings: YcsbPlan,
    /// From the threads' start to the last thread's end, as YCSB's
    /// `[OVERALL], RunTime(ms)`.
    pub runtime_ms: u64,
    /// The same span in nanoseconds, which the throughput is taken over (a
    /// run shorter than a millisecond has a rate too). Absent (0) from
    /// results written before it was kept.
    #[serde(default)]
    pub runtime_ns: u64,
    /// Operations the threads completed (YCSB's `opsDone`).
    pub operations: u64,
    /// Per metric, its `Return=` counts by status name.
    pub returns: BTreeMap<String, BTreeMap<String, u64>>,
    /// Per metric, with `measurementtype=timeseries`: (start of the unit
    /// in ms, operations, summed latency in ns) per time unit.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub timeseries: BTreeMap<String, Vec<(u64, u64, u64)>>,
    /// Metrics in the order YCSB would print them.
    pub order: Vec<String>,
    /// Keys and values the client handed the store in writes, bytes.
    pub client_bytes_written: u64,
    /// The store's own counters after the phase (RocksDB's statistics, ...).
    #[serde(default)]
    pub store_counters: BTreeMap<String, u64>,
    /// Why the device under the store's directory is not the run's alone
    /// (`environment::safety::shared_device`), if it is not: its counters
    /// then count other writers' I/O too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_device: Option<String>,
}

impl YcsbDetails {
    /// `[OVERALL], Throughput(ops/sec)`: YCSB divides by the whole
    /// milliseconds, fsbench by the span's nanoseconds, so a short run's rate
    /// is neither rounded up by a millisecond nor 0.
    pub fn throughput(&self) -> f64 {
        match (self.runtime_ns, self.runtime_ms) {
            (0, 0) => 0.0,
            (0, ms) => 1000.0 * self.operations as f64 / ms as f64,
            (ns, _) => 1e9 * self.operations as f64 / ns as f64,
        }
    }
}
