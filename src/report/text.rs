//! The human summary: one block per reported job, then what the process and
//! the devices did during each group. Latencies are always in µs, rates
//! always carry their unit, spreads are over 1-second intervals.

use super::format::{bandwidth, bytes, mean_sd, thousands, us};
use crate::measure::hist::LatencyHist;
use crate::result::{GroupResult, JobResult, OpStats, RunResult};
use std::fmt::Write;

const SHOWN_PCTS: &[(f64, &str)] =
    &[(1.0, "p1"), (10.0, "p10"), (50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9"), (99.99, "p99.99")];

pub fn render(r: &RunResult) -> String {
    let mut s = String::new();
    if r.partial {
        let _ = writeln!(s, "*** PARTIAL RESULTS: the run was interrupted; figures cover what ran ***\n");
    }
    for g in &r.groups {
        for j in r.jobs.iter().filter(|j| j.group == g.group) {
            match &j.flow {
                Some(f) => super::filebench::job(&mut s, j, f),
                None => job(&mut s, j),
            }
        }
        let members: Vec<&JobResult> = r.jobs.iter().filter(|j| j.group == g.group).collect();
        group(&mut s, g, &members);
    }
    s
}

fn job(s: &mut String, j: &JobResult) {
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
    s.push('\n');
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

fn group(s: &mut String, g: &GroupResult, jobs: &[&JobResult]) {
    let ops: u64 = jobs.iter().map(|j| j.counted_ops()).sum();
    let c = &g.cpu;
    let _ = writeln!(
        s,
        "group {}: {:.2} s wall; fsbench CPU (whole process, incl. kernel I/O worker threads): user {:.2} s, system {:.2} s{}; context switches {} voluntary, {} involuntary",
        g.group,
        g.elapsed_ns as f64 / 1e9,
        c.user_s,
        c.system_s,
        if ops > 0 { format!(" = {:.2} µs CPU per op", c.us_per_op(ops)) } else { String::new() },
        thousands(c.voluntary_ctx_switches),
        thousands(c.involuntary_ctx_switches)
    );
    let ((rn, rb), (wn, wb)) = jobs.iter().fold(((0, 0), (0, 0)), |((rn, rb), (wn, wb)), j| {
        let ((a, b), (c, d)) = j.issued();
        ((rn + a, rb + b), (wn + c, wb + d))
    });
    let _ = writeln!(
        s,
        "  issued by the jobs (measured window): read {} ios {}, write {} ios {}",
        thousands(rn),
        bytes(rb),
        thousands(wn),
        bytes(wb)
    );
    let io = &g.process_io;
    let _ = writeln!(
        s,
        "  process I/O (/proc/self/io): {} read from storage, {} written to storage",
        bytes(io.read_bytes),
        bytes(io.write_bytes)
    );
    if g.devices.is_empty() {
        let _ = writeln!(s, "  device: none (the files are not on a block device, e.g. tmpfs)");
    }
    for d in &g.devices {
        let x = &d.delta;
        let util = d.util_pct.map(|u| format!(", util {u:.1}%")).unwrap_or_default();
        let _ = writeln!(
            s,
            "  device {} ({}): read {} ios {} ({} merged), write {} ios {} ({} merged), flush {}{util}",
            d.name,
            d.kind,
            thousands(x.read_ios),
            bytes(x.read_sectors * 512),
            thousands(x.read_merges),
            thousands(x.write_ios),
            bytes(x.write_sectors * 512),
            thousands(x.write_merges),
            thousands(x.flush_ios)
        );
        if let Some(n) = &d.note {
            let _ = writeln!(s, "    note: {n}");
        }
    }
    s.push('\n');
}
