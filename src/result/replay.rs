//! What a replay or a surface scan found besides its operations: how
//! faithfully the trace's timing was kept, and a scan's figures per zone.

use crate::result::JobResult;
use serde::{Deserialize, Serialize};

/// A replay's own figures (`JobResult::details`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ReplayDetails {
    /// What the I/Os came from.
    pub source: String,
    pub target: String,
    /// `as-recorded` or `max`.
    pub speed: String,
    pub depth: u32,
    /// The trace's I/Os and the time from its first to its last issue.
    pub trace_ios: u64,
    pub trace_span_ns: u64,
    /// I/Os handed to the engine (less than `trace_ios` when interrupted or failed).
    pub issued: u64,
    /// Most I/Os in flight at once.
    pub max_inflight: u32,
    /// As recorded: I/Os issued more than 1 ms after their recorded time
    /// (the depth limit or the target held them back), and the largest lag.
    pub late_ios: u64,
    pub max_lag_ns: u64,
    /// The target was opened with O_DIRECT (else buffered: a file system
    /// that refuses O_DIRECT, said in the warnings).
    pub direct: bool,
    /// What was done to the trace on the way (wrapped or skipped I/Os).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// A surface scan's zones, in the order of their offsets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub surface: Option<SurfaceDetails>,
}

impl ReplayDetails {
    pub fn of(j: &JobResult) -> Option<ReplayDetails> {
        j.details_as()
    }
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SurfaceDetails {
    pub device_bytes: u64,
    pub chunk: u64,
    pub chunks_per_zone: u32,
    pub zones: Vec<ZoneStat>,
}

/// One zone: its chunks, each timed alone (one I/O in flight).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ZoneStat {
    /// Byte offset of the zone's first chunk.
    pub offset: u64,
    /// Bytes transferred in the zone.
    pub bytes: u64,
    /// Bytes over the sum of the chunks' latencies, in MiB/s; the slowest
    /// and fastest single chunk.
    pub mib_s: f64,
    pub min_mib_s: f64,
    pub max_mib_s: f64,
    /// Per-chunk latency, µs.
    pub lat_mean_us: f64,
    pub lat_max_us: f64,
}
