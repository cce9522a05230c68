//! `fsbench quick`: one table row per test, the figure a disk check leads
//! with (MiB/s for sequential tests, IOPS for random ones) and its spread
//! over 1-s intervals, then latency percentiles.

use super::Layout;
use crate::report::format::{mean_sd, thousands, us};
use crate::result::RunResult;
use std::fmt::Write;

pub const LAYOUT: Layout = Layout {
    name: "quick",
    about: "fsbench quick's table: one row per test with its headline figure, spread and latency percentiles",
    render: table,
    files: super::no_files,
    charts: super::no_charts,
};

/// One row per test: the headline figure with its spread over 1-s
/// intervals, then latency percentiles.
fn table(r: &RunResult) -> String {
    // The tests all ran with the same settings: read them from the first.
    let first = r.jobs.first().map(|j| &j.resolved);
    let runtime = first.and_then(|v| v["runtime_s"].as_f64()).unwrap_or(0.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "fsbench quick — {}, {runtime} s per test; ± is the sd over 1-s intervals; latency per I/O in µs",
        what_was_measured(r)
    );
    let _ = writeln!(s, "{:<20} {:>22} {:>18} {:>9} {:>9} {:>9} {:>9}", "test", "result", "± sd", "p50", "p99", "p99.9", "max");
    for j in &r.jobs {
        let op = if j.name.contains("read") { j.op("read") } else { j.op("write") };
        let Some(op) = op else { continue };
        let seq = j.name.starts_with("SEQ");
        let (series, scale) = if seq { (j.timeline.bytes.get(&op.name), 1048576.0) } else { (j.timeline.ops.get(&op.name), 1.0) };
        let xs: Vec<f64> = series.map(|v| v.iter().map(|&x| x as f64 / scale).collect()).unwrap_or_default();
        let (_, sd) = mean_sd(&xs);
        let (headline, spread) = if seq {
            (format!("{:.1} MiB/s", op.bytes_per_sec(j.elapsed_ns) / 1048576.0), format!("{sd:.1} MiB/s"))
        } else {
            (format!("{} IOPS", thousands(op.iops(j.elapsed_ns).round() as u64)), format!("{} IOPS", thousands(sd.round() as u64)))
        };
        let h = &op.lat;
        let _ = writeln!(
            s,
            "{:<20} {:>22} {:>18} {:>9} {:>9} {:>9} {:>9}",
            j.name,
            headline,
            if xs.len() >= 2 { spread } else { "n/a".into() },
            us(h.percentile(50.0) as f64),
            us(h.percentile(99.0) as f64),
            us(h.percentile(99.9) as f64),
            us(h.max() as f64)
        );
        if let Some(e) = &j.error {
            let _ = writeln!(s, "  error: {e}");
        }
        if !seq && j.name.contains("fsync") {
            if let Some(sync) = j.op("sync") {
                let _ = writeln!(
                    s,
                    "{:<20} {:>22} {:>18} {:>9} {:>9} {:>9} {:>9}",
                    "  of which fsync",
                    format!("{} fsyncs/s", thousands(sync.iops(j.elapsed_ns).round() as u64)),
                    "",
                    us(sync.lat.percentile(50.0) as f64),
                    us(sync.lat.percentile(99.0) as f64),
                    us(sync.lat.percentile(99.9) as f64),
                    us(sync.lat.max() as f64)
                );
            }
        }
    }
    let cpu_s: f64 = r.groups.iter().map(|g| g.cpu.user_s + g.cpu.system_s).sum();
    let ops: u64 = r.jobs.iter().map(|j| j.total_ops()).sum();
    let _ = writeln!(s, "fsbench CPU: {cpu_s:.2} s for {} I/Os; device: {}", thousands(ops), device_line(r));
    if r.partial {
        let _ = writeln!(s, "*** PARTIAL: interrupted ***");
    }
    s
}

/// What the figures measure, from what the tests really did: O_DIRECT only
/// when every test ran with it through read/write calls, and never "disk"
/// on a file system that lives in memory.
fn what_was_measured(r: &RunResult) -> String {
    let direct = r.jobs.iter().all(|j| j.resolved["direct"].as_bool().unwrap_or(false));
    let mapped: Vec<&str> =
        r.jobs.iter().filter(|j| crate::model::engine::find(&j.engine).is_some_and(|e| e.caps.mapped)).map(|j| j.name.as_str()).collect();
    let mut what = if !direct {
        "BUFFERED I/O (no O_DIRECT: page cache in play)".to_string()
    } else if !mapped.is_empty() {
        format!("O_DIRECT I/O, except {} through a memory mapping (page cache in play)", mapped.join(", "))
    } else {
        "O_DIRECT I/O (page cache bypassed)".to_string()
    };
    if let Some(t) = r.system.targets.first().filter(|t| crate::host::mountinfo::lives_in_memory(&t.fs_type)) {
        what.push_str(&format!(" on {}, which lives in memory: no disk was measured", t.fs_type));
    }
    what
}

fn device_line(r: &RunResult) -> String {
    let mut names: Vec<String> = r.groups.iter().flat_map(|g| g.devices.iter().map(|d| d.name.clone())).collect();
    names.dedup();
    let t = r.system.targets.first();
    let fs = t.map(|t| format!("{} on {}", t.fs_type, t.mount_point.display())).unwrap_or_default();
    if names.is_empty() {
        format!("no block device ({fs})")
    } else {
        format!("{} ({fs})", names.join(", "))
    }
}
