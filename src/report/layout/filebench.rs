//! Filebench-style runs in the layout Filebench users read (one line per
//! flowop, last-defined first, then the `IO Summary` line), followed by what
//! Filebench cannot show: latency percentiles, shortages and the filesets as
//! they were built.

use super::{by_group, Layout};
use crate::report::format::{bytes, thousands};
use crate::result::flow::FlowReport;
use crate::result::JobResult;
use std::fmt::Write;

/// Filebench's per-flowop lines and IO Summary, then fsbench's additions.
pub const LAYOUT: Layout = Layout {
    name: "filebench",
    about: "Filebench's per-flowop lines and IO Summary, then latency percentiles per flowop, shortages, filesets and psrun intervals",
    render: |r| by_group(r, job),
    files: super::no_files,
    charts: super::no_charts,
};

const MIB: f64 = 1048576.0;
const PCTS: &[(f64, &str)] = &[(50.0, "p50"), (95.0, "p95"), (99.0, "p99"), (99.9, "p99.9")];

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

pub fn job(s: &mut String, j: &JobResult) {
    let Some(f) = j.details_as::<FlowReport>() else {
        // Not a Filebench unit after all: show what every unit has.
        return super::fio::job(s, j);
    };
    let f = &f;
    let secs = j.elapsed_ns as f64 / 1e9;
    let _ = writeln!(
        s,
        "{}: {} thread{}, {:.2} s measured, ended by {}, seed {}{}",
        j.name,
        f.threads,
        if f.threads == 1 { "" } else { "s" },
        secs,
        f.ended_by,
        f.seed,
        if j.partial { " (PARTIAL)" } else { "" }
    );
    if let Some(e) = &j.error {
        let _ = writeln!(s, "  ERROR: {e}");
    }
    let width = j.ops.iter().map(|o| o.name.len()).max().unwrap_or(0).max(20);
    for op in j.ops.iter().rev() {
        let (min, max) = if op.ops > 0 { (op.lat.min() as f64, op.lat.max() as f64) } else { (0.0, 0.0) };
        let _ = writeln!(
            s,
            "{:<width$} {}ops {:8.0}ops/s {:5.1}mb/s {:8.3}ms/op [{:.3}ms - {:.3}ms]",
            op.name,
            op.ops,
            op.iops(j.elapsed_ns),
            op.bytes_per_sec(j.elapsed_ns) / MIB,
            if op.ops > 0 { ms(op.lat.mean()) } else { 0.0 },
            ms(min),
            ms(max),
        );
    }
    let io = f.io_summary(j);
    let _ = writeln!(
        s,
        "IO Summary: {} ops {:.3} ops/s {:.0}/{:.0} rd/wr {:.1}mb/s {:.3}ms/op",
        io.ops, io.ops_per_s, io.reads_per_s, io.writes_per_s, io.mib_per_s, io.ms_per_op
    );
    let _ = writeln!(s, "  (mb/s is MiB/s; ms/op is Filebench's op-weighted mean over all I/O flowops, not a request latency)");

    let _ = writeln!(s, "\n  latency per flowop, ms (monotonic clock, histogram):");
    let _ = writeln!(s, "  {:<width$} {:>10} {:>9} {:>9} {:>9} {:>9} {:>9}", "flowop", "ops", "mean", "p50", "p95", "p99", "p99.9");
    for op in j.ops.iter().filter(|o| o.ops > 0) {
        let p: Vec<String> = PCTS.iter().map(|(q, _)| format!("{:>9.3}", ms(op.lat.percentile(*q) as f64))).collect();
        let _ = writeln!(s, "  {:<width$} {:>10} {:>9.3} {}", op.name, thousands(op.ops), ms(op.lat.mean()), p.join(" "));
    }

    for info in f.flowops.iter().filter(|i| i.out_of_files > 0 || i.busy_skips > 0) {
        if info.out_of_files > 0 {
            let what = if info.kind == "createfile" || info.kind == "makedir" { "no free entry" } else { "no existing entry" };
            let _ = writeln!(
                s,
                "  {}: {} calls found {what} and did nothing (Filebench would abort the run)",
                info.name,
                thousands(info.out_of_files)
            );
        }
        if info.busy_skips > 0 {
            let _ = writeln!(s, "  {}: passed over {} files another thread had open", info.name, thousands(info.busy_skips));
        }
    }
    for fs in &f.filesets {
        let _ = writeln!(
            s,
            "  fileset {} ({}): {} entries ({} existing at start), {} leaf dirs, {} dirs, mean size {}, mean depth {:.2}; {} preallocated in {:.2} s",
            fs.name,
            fs.path,
            thousands(fs.entries),
            thousands(fs.existing_at_start),
            thousands(fs.leafdirs),
            thousands(fs.directories),
            bytes(fs.mean_size_bytes.round() as u64),
            fs.mean_depth,
            bytes(fs.preallocated_bytes),
            fs.populate_s
        );
    }
    if !f.intervals.is_empty() {
        let _ = writeln!(s, "  intervals (psrun): at s, span s, ops/s of I/O flowops");
        for iv in &f.intervals {
            let ops: u64 = iv.ops.iter().zip(&f.flowops).filter(|(_, i)| i.io).map(|(n, _)| *n).sum();
            let rate = if iv.span_s > 0.0 { ops as f64 / iv.span_s } else { 0.0 };
            let _ = writeln!(s, "  {:>8.1} {:>8.1} {:>12.1}", iv.at_s, iv.span_s, rate);
        }
    }
    s.push('\n');
}
