//! fio jobs in fsbench's text: one block per reported job. Latencies are
//! always in µs, rates always carry their unit, spreads are over 1-second
//! intervals.

use super::{by_group, Layout};
use crate::measure::hist::LatencyHist;
use crate::report::format::{bandwidth, bytes, mean_sd, thousands, us};
use crate::result::{JobResult, OpStats};
use std::fmt::Write;

const SHOWN_PCTS: &[(f64, &str)] =
    &[(1.0, "p1"), (10.0, "p10"), (50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9"), (99.99, "p99.99")];

/// fsbench's text for fio jobs.
pub const LAYOUT: Layout = Layout {
    name: "fio",
    about:
        "per job: each operation's ops, IOPS with its spread, bandwidth, latency percentiles; then CPU, process I/O and devices per group",
    render: |r| by_group(r, job),
    files: super::no_files,
    charts: super::no_charts,
};

pub fn job(s: &mut String, j: &JobResult) {
    let secs = j.elapsed_ns as f64 / 1e9;
    let _ = writeln!(
        s,
        "{}: {} thread{}, ioengine={}, {:.2} s measured{}",
        j.name,
        j.threads,
        if j.threads == 1 { "" } else { "s" },
        j.engine,
        secs,
        if j.partial { " (PARTIAL)" } else { "" }
    );
    if let Some(e) = &j.error {
        let _ = writeln!(s, "  ERROR: {e}");
    }
    for op in &j.ops {
        op_block(s, j, op);
    }
    goal_lines(s, j);
    if let Some(v) = crate::result::verify::VerifyStats::of(j) {
        let _ = writeln!(
            s,
            "  verify {}: {} block{} ({}) checked, {} mismatch{}",
            v.method,
            thousands(v.blocks),
            if v.blocks == 1 { "" } else { "s" },
            bytes(v.bytes),
            thousands(v.mismatches),
            if v.mismatches == 1 { "" } else { "es" }
        );
    }
    s.push('\n');
}

/// What fio's steady-state detection and latency-target search found.
fn goal_lines(s: &mut String, j: &JobResult) {
    if let Some(ss) = crate::result::steady::SteadyReport::of(j) {
        let what = if ss.iops_metric { "IOPS" } else { "bandwidth" };
        let how = if ss.slope_mode { "slope" } else { "largest deviation from the mean" };
        let unit = |x: f64| match (ss.percent, ss.iops_metric) {
            (true, _) => format!("{x:.3}%"),
            (false, true) => format!("{x:.3} IOPS"),
            (false, false) => format!("{x:.0} B/s"),
        };
        let verdict = if ss.attained {
            format!("attained: {what} {how} {} < {}", unit(ss.criterion), unit(ss.limit))
        } else if ss.samples < u64::from(ss.duration) {
            format!("not attained: {} of the {} s window sampled", ss.samples, ss.duration)
        } else {
            format!("not attained: {what} {how} {} at the last check, limit {}", unit(ss.criterion), unit(ss.limit))
        };
        let _ = writeln!(
            s,
            "  steady state ({}, {} s window): {verdict}; window mean {} IOPS, {}",
            ss.ss,
            ss.duration,
            thousands(ss.iops_mean()),
            bandwidth(ss.bw_mean() as f64)
        );
    }
    if let Some(depth) = crate::result::steady::latency_depth(j) {
        let lat = j.resolved.get("misc").and_then(|m| m.get("latency"));
        let num = |k: &str| lat.and_then(|l| l.get(k)).and_then(serde_json::Value::as_f64).unwrap_or(0.0);
        let _ = writeln!(
            s,
            "  latency target: {:.2}% of I/Os within {} µs per {} ms window: queue depth {} (iodepth {})",
            num("percentile"),
            us(num("target_ns")),
            num("window_us") / 1000.0,
            depth,
            j.resolved.get("iodepth").and_then(serde_json::Value::as_u64).unwrap_or(1)
        );
    }
}

fn op_block(s: &mut String, j: &JobResult, op: &OpStats) {
    let iops = op.iops(j.elapsed_ns);
    let series: Vec<f64> = j.timeline.ops.get(&op.name).map(|v| v.iter().map(|&x| x as f64).collect()).unwrap_or_default();
    let spread = if series.len() >= 2 {
        let (_, sd) = mean_sd(&series);
        format!(" ± {} (sd of {} 1-s intervals)", thousands(sd.round() as u64), series.len())
    } else {
        String::new()
    };
    let _ = write!(s, "  {:<5} {} ops, {} IOPS{spread}", op.name, thousands(op.ops), thousands(iops.round() as u64));
    if op.bytes > 0 {
        let _ = write!(s, ", {} in all, {}", bytes(op.bytes), bandwidth(op.bytes_per_sec(j.elapsed_ns)));
    }
    if op.errors > 0 {
        let _ = write!(s, ", {} errors", op.errors);
    }
    s.push('\n');
    if op.ops == 0 {
        return;
    }
    lat_lines(s, "lat", &op.lat);
    if let (Some(sl), Some(cl)) = (&op.slat, &op.clat) {
        let _ = writeln!(
            s,
            "        slat µs: mean {} max {}   clat µs: mean {} p99 {}",
            us(sl.mean()),
            us(sl.max() as f64),
            us(cl.mean()),
            us(cl.percentile(99.0) as f64)
        );
    }
    let d = ["read", "write"].iter().position(|n| *n == op.name);
    if let (Some(d), Some(c)) = (d, crate::result::cmdprio::CmdPrioStats::of(j)) {
        let what = if c.total_latency { "lat" } else { "clat" };
        for p in c.shown(d) {
            let share = p.ios as f64 * 100.0 / op.ops as f64;
            lat_lines(s, &format!("{what} prio {}/{} ({share:.2}% of I/Os)", p.prioclass, p.prio), &p.lat);
        }
    }
}

fn lat_lines(s: &mut String, what: &str, h: &LatencyHist) {
    let _ = writeln!(
        s,
        "        {what} µs: min {}  mean {}  sd {}  max {}",
        us(h.min() as f64),
        us(h.mean()),
        us(h.stddev()),
        us(h.max() as f64)
    );
    let pcts: Vec<String> = SHOWN_PCTS.iter().map(|(p, n)| format!("{n} {}", us(h.percentile(*p) as f64))).collect();
    let _ = writeln!(s, "        {what} µs: {}", pcts.join("  "));
}
