//! What a block trace capture got: the method that worked and why the
//! ones before it did not, the device, the records and events lost, the
//! tasks behind the pids. `observe::trace::capture` captures and fills it in.

use crate::result::device::DiskStat;
use crate::result::warning::Warning;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How records are captured, in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// The ftrace `blk` tracer, binary records from the ring buffer.
    BlkTracer,
    /// The `block:*` tracepoints in a private tracefs instance.
    Tracepoints,
    /// BLKTRACESETUP/START and debugfs relay files (what `blktrace` uses).
    Ioctl,
    /// The device's I/O counters only: no records.
    Counters,
}

impl Method {
    pub const ALL: [Method; 4] = [Method::BlkTracer, Method::Tracepoints, Method::Ioctl, Method::Counters];

    pub fn name(self) -> &'static str {
        match self {
            Method::BlkTracer => "blk-tracer",
            Method::Tracepoints => "tracepoints",
            Method::Ioctl => "ioctl",
            Method::Counters => "counters",
        }
    }

    pub fn parse(s: &str) -> Result<Method, String> {
        Method::ALL.into_iter().find(|m| m.name() == s).ok_or_else(|| {
            let names: Vec<&str> = Method::ALL.iter().map(|m| m.name()).collect();
            format!("unknown trace method '{s}': expected one of {}", names.join(", "))
        })
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The task behind a pid in the records.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PidInfo {
    /// The process (thread group) the thread belongs to, when it could be
    /// looked up while it ran.
    pub tgid: Option<u32>,
    /// That process's parent (a command's children are its I/O too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    pub comm: String,
}

/// What a capture got.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Captured {
    pub method: Method,
    /// Why each method before `method` was not used.
    pub reasons: Vec<String>,
    /// The device traced (`loop3`) and, for a partition, its disk.
    pub device: String,
    pub traced_disk: String,
    /// Sector range kept (a partition's), first and last included.
    pub sectors: Option<(u64, u64)>,
    pub records: u64,
    /// Events the kernel could not keep (ring buffer overruns and drops).
    pub lost_events: u64,
    pub lost_per_cpu: Vec<u64>,
    /// The categories kept (blktrace's `-a` names), when not all were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act_mask: Option<String>,
    /// CLOCK_MONOTONIC at the start; record times count from here.
    pub start_monotonic_ns: u64,
    pub duration_ns: u64,
    pub pids: BTreeMap<u32, PidInfo>,
    /// Counters-only captures: what the device's counters moved by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<DiskStat>,
    /// Events read from the kernel's buffers (with those not turned into
    /// records); with `lost_events`, what the kernel wrote.
    #[serde(default)]
    pub kernel_events_read: u64,
    /// Things worth knowing about this capture (how a partition was filtered, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// What could not be put back when the capture ended (the records
    /// are complete; the machine's tracing settings are not as they were).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_parse_by_name() {
        for m in Method::ALL {
            assert_eq!(Method::parse(m.name()), Ok(m));
        }
        let e = Method::parse("perf").unwrap_err();
        assert!(e.contains("blk-tracer, tracepoints, ioctl, counters"), "{e}");
    }
}
