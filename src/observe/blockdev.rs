//! Block device counters. (stub, being written)
use serde::{Deserialize, Serialize};
use std::path::Path;

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
    pub discard_ios: u64,
    pub discard_merges: u64,
    pub discard_sectors: u64,
    pub discard_ticks_ms: u64,
    pub flush_ios: u64,
    pub flush_ticks_ms: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceReport {
    pub name: String,
    pub kind: String,
    pub backing_file: Option<String>,
    pub underlying: Vec<String>,
    pub before: DiskStat,
    pub after: DiskStat,
    pub delta: DiskStat,
    pub util_pct: Option<f64>,
    pub note: Option<String>,
}

pub struct DeviceWatch {}

impl DeviceWatch {
    pub fn start(_paths: &[&Path]) -> DeviceWatch {
        DeviceWatch {}
    }
    pub fn finish(self, _elapsed_ns: u64) -> Vec<DeviceReport> {
        Vec::new()
    }
}
