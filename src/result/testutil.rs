//! Builders of small `RunResult`s for the tests of the modules that read
//! results (statistics, reports, loading).

use crate::measure::hist::LatencyHist;
use crate::result::device::{DeviceReport, DiskStat};
use crate::result::{CpuUsage, GroupResult, JobResult, OpStats, RunResult, Timeline, SCHEMA};

/// `ops` operations of `bytes` in total, latencies `lat0_ns`, `lat0_ns + 1 µs`, ...
pub fn op(name: &str, ops: u64, bytes: u64, lat0_ns: u64) -> OpStats {
    let mut lat = LatencyHist::new();
    for i in 0..ops {
        lat.record(lat0_ns + i * 1000);
    }
    let class = crate::result::load::fio_class(name);
    OpStats { name: name.into(), class, ops, bytes, errors: 0, lat, slat: None, clat: None, active_ns: None }
}

pub fn job(name: &str, elapsed_ns: u64, ops: &[OpStats]) -> JobResult {
    JobResult {
        name: name.into(),
        group: 0,
        threads: 1,
        engine: "psync".into(),
        elapsed_ns,
        ops: ops.to_vec(),
        timeline: Timeline::default(),
        options: Default::default(),
        resolved: serde_json::Value::Null,
        partial: false,
        error: None,
        headline: Vec::new(),
        details: None,
    }
}

/// A device that read and wrote so many 512-byte sectors.
pub fn dev(name: &str, underlying: &[&str], read_sectors: u64, write_sectors: u64) -> DeviceReport {
    let delta = DiskStat { read_sectors, write_sectors, ..Default::default() };
    DeviceReport {
        name: name.into(),
        kind: "disk".into(),
        backing_file: None,
        underlying: underlying.iter().map(|s| s.to_string()).collect(),
        before: DiskStat::default(),
        after: delta.clone(),
        delta,
        util_pct: None,
        note: None,
    }
}

/// One group, 0.3 s user + 0.2 s system CPU.
pub fn run(jobs: &[JobResult], devices: &[DeviceReport]) -> RunResult {
    RunResult {
        schema: SCHEMA.into(),
        fsbench_version: "test".into(),
        started_unix: 0,
        command: vec!["fsbench".into()],
        layout: "fio".into(),
        jobs: jobs.to_vec(),
        groups: vec![GroupResult {
            group: 0,
            ran_with: Vec::new(),
            elapsed_ns: 1_000_000_000,
            started_unix_ns: None,
            cpu: CpuUsage { user_s: 0.3, system_s: 0.2, wall_s: 1.0, ..Default::default() },
            process_io: Default::default(),
            devices: devices.to_vec(),
        }],
        system: Default::default(),
        warnings: Vec::new(),
        partial: false,
        failed: None,
        trace: None,
    }
}

/// A run of one job "x" doing `ops` reads of 4 KiB in one second.
pub fn simple(ops: u64) -> RunResult {
    run(&[job("x", 1_000_000_000, &[op("read", ops, ops * 4096, 50_000)])], &[])
}
