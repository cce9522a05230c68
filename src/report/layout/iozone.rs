//! IOzone's report, rendered from a run's details: the text IOzone prints
//! (preamble, the two-line column header, one row per file size and record
//! size, "iozone test complete."), its `-R` Excel-style report, and the
//! throughput-mode blocks (`-t`), laid out as IOzone 3.471 prints them so a
//! script that parses IOzone's output parses fsbench's. Then, after a line
//! "fsbench:", what IOzone does not give: latency percentiles and the CPU
//! share of every pass.
//!
//! Written from IOzone's documented and observed behaviour (the notes in
//! `shared/reference`, and the output of runs of the binary), never from its
//! code. Widths as IOzone prints them: kB in 16 columns, reclen in 8, then
//! per column 9, except record rewrite and stride read (10) and pread (8); a
//! test that did not run leaves blanks as wide as its columns, except fread
//! and freread, whose blanks are one narrower (17), and pread and repread,
//! whose blanks are one wider (18). A test that ran without its second pass
//! (`-+n`) prints 0 in the re- column, as IOzone does.
//!
//! Left out of the preamble: IOzone's banner (version, contributors, "Run
//! began"), the "Using minimum/maximum ... size" lines, and the processor
//! cache size and cache-line lines (IOzone prints fixed values there, not
//! the machine's; a layout renders from the result alone). The `-E` columns
//! are shown when the run had a pread/pwrite test (the plan does not keep
//! `-E` itself); pwritev/preadv have no text column (IOzone's Linux build
//! prints none) but have their `-R` blocks and fsbench rows.

use super::Layout;
use crate::model::iozone::{Column, Test, Units};
use crate::report::format::us;
use crate::result::iozone::{CellFigure, IozoneDetails, ThroughputFigure};
use crate::result::{JobResult, RunResult};
use std::fmt::Write;

pub const LAYOUT: Layout = Layout {
    name: "iozone",
    about: "IOzone's text (auto-mode table, -R Excel report, -t throughput blocks) as IOzone prints it, then latency percentiles and CPU per pass",
    render: run,
    files: side_files,
    charts: crate::report::heatmap::iozone_heatmaps_mean,
};

/// IOzone's `-b FILE`: the report written as tab-separated text.
fn side_files(r: &RunResult) -> Vec<(std::path::PathBuf, String)> {
    let file = details(r).and_then(|d| d.settings.excel_file.clone());
    file.into_iter().filter_map(|f| Some((f, excel_tsv(r)?))).collect()
}

/// The run's IOzone details: those of the first job that has them, with
/// the cells and throughput figures other jobs carry (and the first lacks)
/// added in job order.
pub fn details(r: &RunResult) -> Option<IozoneDetails> {
    let mut all = r.jobs.iter().filter_map(JobResult::details_as::<IozoneDetails>);
    let mut d = all.next()?;
    for o in all {
        for c in o.cells {
            if !d.cells.iter().any(|x| (x.file_kb, x.rec_kb, x.column) == (c.file_kb, c.rec_kb, c.column)) {
                d.cells.push(c);
            }
        }
        for t in o.throughput {
            if !d.throughput.iter().any(|x| (x.children, x.column) == (t.children, t.column)) {
                d.throughput.push(t);
            }
        }
    }
    Some(d)
}

fn run(r: &RunResult) -> String {
    let Some(d) = details(r) else {
        return super::by_group(r, super::fio::job);
    };
    let mut s = String::new();
    if let Some(e) = &r.failed {
        let _ = writeln!(s, "*** FAILED: {e}; the figures below show what ran and are not a result ***\n");
    }
    if r.partial {
        let _ = writeln!(s, "*** PARTIAL RESULTS: the run was interrupted; figures cover what ran ***\n");
    }
    s.push_str(&iozone_part(&d));
    s.push('\n');
    s.push_str(&fsbench_part(r, &d));
    s
}

/// Only what IOzone itself prints.
pub fn iozone_part(d: &IozoneDetails) -> String {
    let mut s = preamble(d);
    if d.throughput.is_empty() {
        s.push_str(&table(d));
        s.push_str("\niozone test complete.\n");
        if d.settings.excel {
            s.push_str("Excel output is below:\n");
            s.push_str(&excel(d));
        }
    } else {
        s.push_str(&throughput(d));
        s.push_str("iozone test complete.\n");
    }
    s
}

/// The tab-indented lines before the table.
pub fn preamble(d: &IozoneDetails) -> String {
    let p = &d.settings;
    let mut s = String::new();
    let mut line = |t: &str| {
        s.push('\t');
        s.push_str(t);
        s.push('\n');
    };
    if p.auto {
        line("Auto Mode");
    } else if let Some(&(file, rec)) = p.cells.first() {
        line(&format!("File size set to {file} kB"));
        line(&format!("Record Size {rec} kB"));
    }
    match p.units {
        Units::KbPerSec => {}
        Units::OpsPerSec => line("OPS Mode. Output is in operations per second."),
        Units::UsPerOp => line("Microseconds/op Mode. Output is in microseconds per operation."),
    }
    if p.excel {
        line("Excel chart generation enabled");
    }
    if p.cpu {
        line("CPU utilization Resolution = 0.000 seconds.");
        if p.excel {
            line("CPU utilization Excel chart enabled");
        }
    }
    line(&format!("Command line used: {}", p.command_line));
    if p.units == Units::KbPerSec {
        line("Output is in kBytes/sec");
    }
    line("Time Resolution = 0.000001 seconds.");
    line(&format!("File stride size set to {} * record size.", p.stride));
    s
}

/// The tests of the text table in IOzone's order: their columns with their
/// widths, and the width of the blank a test that did not run leaves.
type TextTest = (Test, &'static [(Column, usize)], usize);

const TEXT: &[TextTest] = &[
    (Test::Write, &[(Column::Write, 9), (Column::Rewrite, 9)], 18),
    (Test::Read, &[(Column::Read, 9), (Column::Reread, 9)], 18),
    (Test::Random, &[(Column::RandomRead, 9), (Column::RandomWrite, 9)], 18),
    (Test::Backward, &[(Column::BkwdRead, 9)], 9),
    (Test::RecordRewrite, &[(Column::RecordRewrite, 10)], 10),
    (Test::Stride, &[(Column::StrideRead, 10)], 10),
    (Test::Fwrite, &[(Column::Fwrite, 9), (Column::Frewrite, 9)], 18),
    (Test::Fread, &[(Column::Fread, 9), (Column::Freread, 9)], 17),
];

/// The `-E` tests that have text columns.
const TEXT_E: &[TextTest] =
    &[(Test::Pwrite, &[(Column::Pwrite, 9), (Column::RePwrite, 9)], 18), (Test::Pread, &[(Column::Pread, 8), (Column::RePread, 9)], 18)];

const HEADER1: &str = "                                                              random    random     bkwd    record    stride                                    ";
const HEADER2: &str = "              kB  reclen    write  rewrite    read    reread    read     write     read   rewrite      read   fwrite frewrite    fread  freread";
const HEADER2_E: &str = "  pwrite repwrite   pread   repread";

/// The run had an `-E` test.
fn extended(d: &IozoneDetails) -> bool {
    d.settings.tests.iter().any(|t| matches!(t, Test::Pwrite | Test::Pread | Test::Pwritev | Test::Preadv))
}

/// A figure in the unit in force, as IOzone prints it (a whole number,
/// truncated).
pub fn value(c: &CellFigure, u: Units) -> f64 {
    match u {
        Units::KbPerSec => c.kb_per_s(),
        Units::OpsPerSec => c.ops_per_s(),
        Units::UsPerOp => c.us_per_op(),
    }
}

fn int(v: f64) -> u64 {
    if v.is_finite() && v > 0.0 {
        v as u64
    } else {
        0
    }
}

/// The cells run, in run order.
pub fn cell_order(d: &IozoneDetails) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for c in &d.cells {
        if !out.contains(&(c.file_kb, c.rec_kb)) {
            out.push((c.file_kb, c.rec_kb));
        }
    }
    out
}

fn figure(d: &IozoneDetails, file: u64, rec: u64, col: Column) -> Option<&CellFigure> {
    d.cells.iter().find(|c| c.file_kb == file && c.rec_kb == rec && c.column == col)
}

/// The column header and one row per cell.
pub fn table(d: &IozoneDetails) -> String {
    let mut s = header(d);
    for (file, rec) in cell_order(d) {
        s.push_str(&row(d, file, rec));
    }
    s
}

/// What IOzone prints before its first row: the preamble and the two-line
/// column header (what `fsbench iozone` streams before it measures).
pub fn head(d: &IozoneDetails) -> String {
    let mut s = preamble(d);
    s.push_str(&header(d));
    s
}

/// The two-line column header.
fn header(d: &IozoneDetails) -> String {
    let e = extended(d);
    let mut s = String::new();
    s.push_str(HEADER1);
    if e {
        s.push_str(&" ".repeat(HEADER2_E.len()));
    }
    s.push('\n');
    s.push_str(HEADER2);
    if e {
        s.push_str(HEADER2_E);
    }
    s.push('\n');
    s
}

/// One cell's row, from the figures measured so far.
pub fn row(d: &IozoneDetails, file: u64, rec: u64) -> String {
    let tests = TEXT.iter().chain(if extended(d) { TEXT_E } else { &[] });
    let mut s = format!("{file:>16}{rec:>8}");
    for (test, cols, blank) in tests {
        if d.settings.tests.contains(test) {
            for &(col, w) in cols.iter() {
                let v = figure(d, file, rec, col).map(|c| int(value(c, d.settings.units))).unwrap_or(0);
                let _ = write!(s, "{v:>w$}");
            }
        } else {
            s.push_str(&" ".repeat(*blank));
        }
    }
    s.push('\n');
    s
}

/// The columns of the `-R` report: every column of every test run (both
/// passes, even under `-+n`, whose second pass reads 0), in IOzone's order;
/// the mixed workload has none outside throughput mode.
pub fn report_columns(d: &IozoneDetails) -> Vec<Column> {
    let mut cols: Vec<Column> = d.settings.tests.iter().flat_map(|t| t.columns().iter().copied()).filter(|c| *c != Column::Mixed).collect();
    for c in &d.cells {
        if !cols.contains(&c.column) && c.column != Column::Mixed {
            cols.push(c.column);
        }
    }
    cols.sort();
    cols.dedup();
    cols
}

/// File sizes run, in run order.
fn file_sizes(d: &IozoneDetails) -> Vec<u64> {
    let mut out: Vec<u64> = Vec::new();
    for (f, _) in cell_order(d) {
        if !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// The record sizes of the report's axis (the plan's, or those run when the
/// plan has none).
fn record_axis(d: &IozoneDetails) -> Vec<u64> {
    if d.settings.record_axis_kb.is_empty() {
        let mut r: Vec<u64> = d.cells.iter().map(|c| c.rec_kb).collect();
        r.sort();
        r.dedup();
        r
    } else {
        d.settings.record_axis_kb.clone()
    }
}

/// One `-R` matrix: per file size, the figure of every axis record size up
/// to the largest that fits the file (0 where it did not run: the
/// crossover, `-+n`).
fn matrix(d: &IozoneDetails, col: Column, f: impl Fn(&CellFigure) -> f64) -> Vec<(u64, Vec<f64>)> {
    let axis = record_axis(d);
    file_sizes(d)
        .into_iter()
        .map(|file| {
            let row = axis.iter().filter(|r| **r <= file).map(|&rec| figure(d, file, rec, col).map(&f).unwrap_or(0.0)).collect();
            (file, row)
        })
        .collect()
}

fn axis_header(d: &IozoneDetails) -> String {
    let recs: Vec<String> = record_axis(d).iter().map(|r| format!("\"{r}\"")).collect();
    format!("        {}\n", recs.join("  "))
}

/// The `-R` report after "Excel output is below:": a block per column,
/// then with `-+u` a CPU utilisation block per column.
pub fn excel(d: &IozoneDetails) -> String {
    let mut s = String::new();
    let u = d.settings.units;
    for col in report_columns(d) {
        let _ = write!(s, "\n\"{}\"\n{}", col.report_title(), axis_header(d));
        for (file, row) in matrix(d, col, |c| value(c, u)) {
            let vals: Vec<String> = row.iter().map(|v| int(*v).to_string()).collect();
            let _ = writeln!(s, "\"{file}\"   {} ", vals.join("  "));
        }
    }
    if d.settings.cpu {
        for col in report_columns(d) {
            let title = col.report_title().trim_end_matches(" report");
            let _ = write!(s, "\n\"{title} CPU utilization report (Zero values should be ignored)\"\n{}", axis_header(d));
            for (file, row) in matrix(d, col, CellFigure::cpu_pct) {
                let vals: Vec<String> = row.iter().map(|v| format!("{v:6.2}")).collect();
                let _ = writeln!(s, "\"{file}\"   {}", vals.join(" "));
            }
        }
    }
    s
}

/// `-b FILE`: the `-R` report as tab-separated text, one block per column
/// (its title, a header row of an empty cell and every record size of the
/// axis, one row per file size with 0 where a cell did not run), blocks
/// separated by an empty line; in throughput mode the throughput report
/// (one row per test, one value per child count). IOzone writes a binary
/// BIFF `.xls` worksheet there; fsbench writes this text form instead, which
/// spreadsheets open the same way. None when the run has no IOzone details.
/// Writing it to `settings.excel_file` is the caller's job.
pub fn excel_tsv(r: &RunResult) -> Option<String> {
    let d = details(r)?;
    let mut s = String::new();
    if !d.throughput.is_empty() {
        let _ = writeln!(s, "Throughput report Y-axis is type of test X-axis is number of processes");
        let _ = writeln!(s, "Record size = {} kBytes", d.throughput[0].rec_kb);
        let _ = writeln!(s, "Output is in {}", if d.settings.units == Units::OpsPerSec { "ops/sec" } else { "kBytes/sec" });
        let counts = child_counts(&d);
        let heads: Vec<String> = counts.iter().map(|c| c.to_string()).collect();
        let _ = writeln!(s, "\t{}", heads.join("\t"));
        for (col, _, _, _, _, label) in THROUGHPUT {
            let row: Vec<String> = counts
                .iter()
                .map(|n| {
                    d.throughput
                        .iter()
                        .find(|t| t.children == *n && t.column == *col)
                        .map(|t| format!("{:.2}", t_value(t, d.settings.units)))
                        .unwrap_or_default()
                })
                .collect();
            if row.iter().any(|v| !v.is_empty()) {
                let _ = writeln!(s, "{}\t{}", label.trim(), row.join("\t"));
            }
        }
        return Some(s);
    }
    let u = d.settings.units;
    for (i, col) in report_columns(&d).into_iter().enumerate() {
        if i > 0 {
            s.push('\n');
        }
        let _ = writeln!(s, "{}", col.report_title());
        let recs: Vec<String> = record_axis(&d).iter().map(u64::to_string).collect();
        let _ = writeln!(s, "\t{}", recs.join("\t"));
        for (file, row) in matrix(&d, col, |c| value(c, u)) {
            let vals: Vec<String> = row.iter().map(|v| int(*v).to_string()).collect();
            let _ = writeln!(s, "{file}\t{}", vals.join("\t"));
        }
    }
    Some(s)
}

/// Throughput mode's tests in IOzone's order: the column, how the children
/// and parent lines name it (with their count printed 2 wide or not) and
/// the tabs before their "=", and the row label of the `-R` report.
const THROUGHPUT: &[(Column, &str, bool, &str, &str, &str)] = &[
    (Column::Write, "initial writers", true, " \t", " \t", "  Initial write "),
    (Column::Rewrite, "rewriters", true, " \t", " \t", "        Rewrite "),
    (Column::Read, "readers", true, " \t\t", " \t\t", "           Read "),
    (Column::Reread, "re-readers", false, " \t", " \t", "        Re-read "),
    (Column::BkwdRead, "reverse readers", false, " \t", " \t", "   Reverse Read "),
    (Column::StrideRead, "stride readers", false, " \t", " \t", "    Stride read "),
    (Column::RandomRead, "random readers", false, " \t", " \t", "    Random read "),
    (Column::Mixed, "mixed workload", false, " \t", " \t", " Mixed workload "),
    (Column::RandomWrite, "random writers", false, " \t", " \t", "   Random write "),
    (Column::Pwrite, "pwrite writers", false, " \t", " \t", "         Pwrite "),
    (Column::Pread, "pread readers", false, " \t", " \t", "          Pread "),
    (Column::Fwrite, "fwriters", true, " \t", " \t\t", "         Fwrite "),
    (Column::Fread, "freaders", true, " \t", " \t\t", "          Fread "),
];

fn child_counts(d: &IozoneDetails) -> Vec<u32> {
    let mut out: Vec<u32> = Vec::new();
    for t in &d.throughput {
        if !out.contains(&t.children) {
            out.push(t.children);
        }
    }
    out
}

/// A throughput figure in the unit in force (IOzone has no µs/op form in
/// throughput mode; kB/s is shown then).
fn t_value(t: &ThroughputFigure, u: Units) -> f64 {
    t_scale(t, u) * t.children_kb_s()
}

/// kB to the unit in force: records under `-O`.
fn t_scale(t: &ThroughputFigure, u: Units) -> f64 {
    if u == Units::OpsPerSec {
        1.0 / t.rec_kb.max(1) as f64
    } else {
        1.0
    }
}

/// Throughput mode: per child count, a block per test, then with `-R` the
/// throughput report (and with `-+u` the CPU one).
pub fn throughput(d: &IozoneDetails) -> String {
    let p = &d.settings;
    let threads = p.throughput.as_ref().is_some_and(|t| t.threads);
    let who = if threads { "thread" } else { "process" };
    let ops = p.units == Units::OpsPerSec;
    let (rate, amount) = if ops { ("ops/sec", "ops") } else { ("kB/sec", "kB") };
    let counts = child_counts(d);
    let mut s = String::new();
    if counts.len() > 1 {
        let _ = writeln!(s, "\tMin process = {} ", counts.iter().min().unwrap_or(&0));
        let _ = writeln!(s, "\tMax process = {} ", counts.iter().max().unwrap_or(&0));
    }
    for (i, n) in counts.iter().enumerate() {
        let figs: Vec<&ThroughputFigure> = d.throughput.iter().filter(|t| t.children == *n).collect();
        let (file, rec) = figs.first().map(|t| (t.file_kb, t.rec_kb)).unwrap_or((0, 0));
        if i == 0 {
            let plural = if *n == 1 {
                ""
            } else if threads {
                "s"
            } else {
                "es"
            };
            let _ = writeln!(s, "\tThroughput test with {n} {who}{plural}");
        } else {
            s.push('\n');
        }
        let _ = writeln!(s, "\tEach {who} writes a {file} kByte file in {rec} kByte records\n");
        for (col, name, wide, ctab, ptab, _) in THROUGHPUT {
            let Some(t) = figs.iter().find(|t| t.column == *col) else { continue };
            let k = t_scale(t, p.units);
            let count = if *wide { format!("{n:2}") } else { n.to_string() };
            let _ = writeln!(s, "\tChildren see throughput for {count} {name}{ctab}= {:10.2} {rate}", t.children_kb_s() * k);
            let _ = writeln!(s, "\tParent sees throughput for {count} {name}{ptab}= {:10.2} {rate}", t.parent_kb_s * k);
            let _ = writeln!(s, "\tMin throughput per {who} \t\t\t= {:10.2} {rate} ", finite(t.min_kb_s()) * k);
            let _ = writeln!(s, "\tMax throughput per {who} \t\t\t= {:10.2} {rate}", t.max_kb_s() * k);
            let _ = writeln!(s, "\tAvg throughput per {who} \t\t\t= {:10.2} {rate}", t.avg_kb_s() * k);
            let _ = writeln!(s, "\tMin xfer \t\t\t\t\t= {:10.2} {amount}", finite(t.min_xfer_kb()) * k);
            if p.cpu {
                let cap = if *col == Column::Write { "Utilization" } else { "utilization" };
                let _ = writeln!(
                    s,
                    "\tCPU {cap}: Wall time {:8.3}    CPU time {:8.3}    CPU utilization {:6.2} %\n",
                    t.wall_s,
                    t.cpu_s,
                    t_cpu_pct(t)
                );
            }
            s.push('\n');
        }
    }
    s.push_str("\n\n");
    if p.excel {
        let rec = d.throughput.first().map(|t| t.rec_kb).unwrap_or(0);
        let report = |s: &mut String, what: &str, unit: &str, f: &dyn Fn(&ThroughputFigure) -> f64| {
            let _ = writeln!(s, "\"{what} report Y-axis is type of test X-axis is number of processes\"");
            let _ = writeln!(s, "\"Record size = {rec} kBytes \"");
            let _ = writeln!(s, "\"Output is in {unit}\"\n");
            for (col, _, _, _, _, label) in THROUGHPUT {
                if !d.throughput.iter().any(|t| t.column == *col) {
                    continue;
                }
                let _ = write!(s, "\"{label}\"");
                for n in &counts {
                    if let Some(t) = d.throughput.iter().find(|t| t.children == *n && t.column == *col) {
                        let _ = write!(s, "{:11.2} ", f(t));
                    }
                }
                s.push_str("\n\n");
            }
            s.push('\n');
        };
        report(&mut s, "Throughput", if ops { "ops/sec" } else { "kBytes/sec" }, &|t| t_value(t, p.units));
        if p.cpu {
            report(&mut s, "CPU utilization", "CPU%", &t_cpu_pct);
        }
    }
    s
}

fn t_cpu_pct(t: &ThroughputFigure) -> f64 {
    if t.wall_s > 0.0 {
        t.cpu_s / t.wall_s * 100.0
    } else {
        0.0
    }
}

fn finite(v: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        0.0
    }
}

const LAT_PCTS: &[(f64, &str)] = &[(50.0, "p50"), (99.0, "p99"), (99.9, "p99.9")];

/// fsbench's figures: per cell and column the operations, latency
/// percentiles (µs) and the CPU busy share of the pass (a job that is not
/// a `<kB>k/<kB>k` cell, e.g. one per child count, shows its name); the throughput
/// tests IOzone's throughput report has no line for; then the process,
/// I/O and device lines of each group. A layout shows one run: the spread
/// over repeats (`--repeat`) is in the repeated-run report, per metric.
pub fn fsbench_part(r: &RunResult, d: &IozoneDetails) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "fsbench: (not in IOzone's output; latency of each I/O call in µs, CPU = user+system CPU over the pass's time)");
    if r.jobs.len() > PER_CELL_MAX {
        per_column(&mut s, r, d);
    } else {
        per_cell(&mut s, r, d);
    }
    let missing: Vec<&ThroughputFigure> = d.throughput.iter().filter(|t| !THROUGHPUT.iter().any(|x| x.0 == t.column)).collect();
    if !missing.is_empty() {
        let _ = writeln!(s, "throughput tests IOzone's throughput report has no line for (kB/s, children / parent):");
        for t in missing {
            let _ = writeln!(s, "\t{} children, {}: {:.2} / {:.2}", t.children, t.column.name(), t.children_kb_s(), t.parent_kb_s);
        }
    }
    let _ = writeln!(s, "spread: one run shown; run with --repeat N for mean ± sd and confidence intervals per cell and column");
    for g in &r.groups {
        let members: Vec<&JobResult> = r.jobs.iter().filter(|j| j.group == g.group).collect();
        super::group(&mut s, g, &members);
    }
    s
}

/// Up to this many cells the latency lines are one per cell and column;
/// beyond it (an auto run: hundreds of cells, thousands of lines) one line
/// per column, every cell's figures staying in the JSON result and the
/// `--charts` heat maps.
const PER_CELL_MAX: usize = 8;

fn lat_header(s: &mut String, first: &str, second: &str) {
    let _ = write!(s, "{first:>16} {second:>8}  {:<14} {:>10}", "column", "ops");
    for (_, name) in LAT_PCTS {
        let _ = write!(s, " {name:>9}");
    }
    let _ = writeln!(s, " {:>9} {:>7}", "max", "CPU%");
}

fn lat_figures(s: &mut String, lat: &crate::measure::hist::LatencyHist) {
    for (p, _) in LAT_PCTS {
        let v = if lat.count() == 0 { "-".to_string() } else { us(lat.percentile(*p) as f64) };
        let _ = write!(s, " {v:>9}");
    }
    let v = if lat.count() == 0 { "-".to_string() } else { us(lat.max() as f64) };
    let _ = write!(s, " {v:>9}");
}

/// One line per cell and column.
fn per_cell(s: &mut String, r: &RunResult, d: &IozoneDetails) {
    lat_header(s, "kB", "reclen");
    for j in &r.jobs {
        let cell = parse_cell(&j.name);
        for o in &j.ops {
            let _ = write!(
                s,
                "{:>16} {:>8}  {:<14} {:>10}",
                cell.map(|c| c.0.to_string()).unwrap_or_else(|| j.name.clone()),
                cell.map(|c| c.1.to_string()).unwrap_or_default(),
                o.name,
                o.ops
            );
            lat_figures(s, &o.lat);
            let cpu = cell
                .and_then(|(f, rc)| Column::from_name(&o.name).and_then(|col| figure(d, f, rc, col)))
                .map(|c| format!("{:.2}", c.cpu_pct()))
                .unwrap_or_else(|| "-".into());
            let _ = writeln!(s, " {cpu:>7}");
        }
    }
}

/// One line per column over every cell: the calls' latency merged, the
/// median CPU share of its passes, and the cell with the slowest p99.
fn per_column(s: &mut String, r: &RunResult, d: &IozoneDetails) {
    let _ = writeln!(
        s,
        "per column over its {} cells (each cell's line: --output-format json, jobs[].ops[].lat; heat maps: --charts DIR)",
        r.jobs.len()
    );
    lat_header(s, "cells", "");
    let mut names: Vec<&str> = Vec::new();
    for o in r.jobs.iter().flat_map(|j| &j.ops) {
        if !names.contains(&o.name.as_str()) {
            names.push(&o.name);
        }
    }
    let mut worst_lines = Vec::new();
    for name in names {
        let mut lat = crate::measure::hist::LatencyHist::default();
        let (mut cells, mut ops, mut cpu) = (0, 0, Vec::new());
        let mut worst: Option<(u64, &str)> = None;
        for j in &r.jobs {
            for o in j.ops.iter().filter(|o| o.name == name) {
                cells += 1;
                ops += o.ops;
                lat.merge(&o.lat);
                if o.lat.count() > 0 && worst.is_none_or(|w| o.lat.percentile(99.0) > w.0) {
                    worst = Some((o.lat.percentile(99.0), &j.name));
                }
                let fig = parse_cell(&j.name).and_then(|(f, rc)| Column::from_name(name).and_then(|c| figure(d, f, rc, c)));
                cpu.extend(fig.map(CellFigure::cpu_pct));
            }
        }
        let _ = write!(s, "{cells:>16} {:>8}  {name:<14} {ops:>10}", "");
        lat_figures(s, &lat);
        cpu.sort_by(f64::total_cmp);
        let cpu = cpu.get(cpu.len() / 2).map(|c| format!("{c:.2}")).unwrap_or_else(|| "-".into());
        let _ = writeln!(s, " {cpu:>7}");
        if let Some((p99, cell)) = worst {
            worst_lines.push(format!("{name} {} ({cell})", us(p99 as f64)));
        }
    }
    if !worst_lines.is_empty() {
        let _ = writeln!(s, "slowest cell's p99 (µs, kB/reclen): {}", worst_lines.join(", "));
    }
}

/// `<file kB>k/<record kB>k` to its sizes.
pub fn parse_cell(name: &str) -> Option<(u64, u64)> {
    let (f, r) = name.split_once('/')?;
    Some((f.strip_suffix('k')?.parse().ok()?, r.strip_suffix('k')?.parse().ok()?))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::model::iozone::IozonePlan;
    use crate::result::testutil::{job, op, run as mkrun};

    /// A figure of `kbs` kB/s: `file_kb` kB over the time that gives it.
    pub(crate) fn fig(file_kb: u64, rec_kb: u64, column: Column, kbs: u64) -> CellFigure {
        CellFigure { file_kb, rec_kb, column, elapsed_ns: 1_000_000_000, bytes: kbs * 1024, ops: kbs / rec_kb, cpu_s: 0.0 }
    }

    /// A 2×2 auto run of tests 0 and 1 (64 and 128 kB files, 4 and 8 kB records).
    pub(crate) fn auto_2x2() -> IozoneDetails {
        let settings = IozonePlan {
            tests: vec![Test::Write, Test::Read],
            cells: vec![(64, 4), (64, 8), (128, 4), (128, 8)],
            record_axis_kb: vec![4, 8],
            auto: true,
            command_line: "iozone -a -n 64k -g 128k -y 4k -q 8k -i 0 -i 1".into(),
            ..Default::default()
        };
        let mut cells = Vec::new();
        for (i, &(f, r)) in settings.cells.iter().enumerate() {
            for (j, c) in [Column::Write, Column::Rewrite, Column::Read, Column::Reread].into_iter().enumerate() {
                cells.push(fig(f, r, c, 1_000_000 + (i as u64) * 100_000 + (j as u64) * 1_000_000));
            }
        }
        IozoneDetails { settings, cells, throughput: Vec::new() }
    }

    pub(crate) fn as_run(d: &IozoneDetails) -> RunResult {
        let jobs: Vec<JobResult> = d
            .settings
            .cells
            .iter()
            .map(|&(f, r)| {
                let ops: Vec<_> = d
                    .cells
                    .iter()
                    .filter(|c| (c.file_kb, c.rec_kb) == (f, r))
                    .map(|c| crate::result::OpStats { ops: c.ops, ..op(c.column.name(), 100, c.bytes, 10_000) })
                    .collect();
                let mut j = job(&format!("{f}k/{r}k"), 1_000_000_000, &ops);
                j.details = Some(serde_json::to_value(d).unwrap());
                j
            })
            .collect();
        let mut r = mkrun(&jobs, &[]);
        r.layout = "iozone".into();
        r
    }

    #[test]
    fn auto_table_matches_iozone_byte_for_byte() {
        let d = auto_2x2();
        let want = "\tAuto Mode\n\
            \tCommand line used: iozone -a -n 64k -g 128k -y 4k -q 8k -i 0 -i 1\n\
            \tOutput is in kBytes/sec\n\
            \tTime Resolution = 0.000001 seconds.\n\
            \tFile stride size set to 17 * record size.\n\
            \x20                                                             random    random     bkwd    record    stride                                    \n\
            \x20             kB  reclen    write  rewrite    read    reread    read     write     read   rewrite      read   fwrite frewrite    fread  freread\n\
            \x20             64       4  1000000  2000000  3000000  4000000                                                                                  \n\
            \x20             64       8  1100000  2100000  3100000  4100000                                                                                  \n\
            \x20            128       4  1200000  2200000  3200000  4200000                                                                                  \n\
            \x20            128       8  1300000  2300000  3300000  4300000                                                                                  \n\
            \n\
            iozone test complete.\n";
        assert_eq!(iozone_part(&d), want);
        for l in iozone_part(&d).lines().filter(|l| l.starts_with("    ")) {
            assert_eq!(l.len(), if l.contains("reclen") || l.contains("random") { 143 } else { 142 }, "{l:?}");
        }
    }

    #[test]
    fn blanks_keep_each_tests_width_and_e_columns_follow() {
        let mut d = auto_2x2();
        d.settings.tests = vec![Test::Write, Test::Random, Test::Stride];
        d.cells = [Column::Write, Column::Rewrite, Column::RandomRead, Column::RandomWrite, Column::StrideRead]
            .iter()
            .map(|c| fig(64, 4, *c, 2_000_000))
            .collect();
        let t = table(&d);
        let row = t.lines().nth(2).unwrap();
        let ends: Vec<usize> = row
            .char_indices()
            .filter(|(i, c)| c.is_ascii_digit() && row.as_bytes().get(i + 1).is_none_or(|b| *b == b' '))
            .map(|(i, _)| i + 1)
            .collect();
        // As IOzone 3.471 prints `-i 0 -i 2 -i 5`.
        assert_eq!(ends, [16, 24, 33, 42, 69, 78, 107], "{row:?}");
        assert_eq!(row.len(), 142);
        // -E: pwrite only; the pread blank is 18 wide.
        d.settings.tests = vec![Test::Write, Test::Pwrite];
        d.cells = [Column::Write, Column::Rewrite, Column::Pwrite, Column::RePwrite].iter().map(|c| fig(64, 4, *c, 2_000_000)).collect();
        let t = table(&d);
        assert!(t.lines().nth(1).unwrap().ends_with("freread  pwrite repwrite   pread   repread"));
        let row = t.lines().nth(2).unwrap();
        assert_eq!(row.len(), 178, "{row:?}");
        assert_eq!(&row[142..160], "  2000000  2000000");
        // -+n: the second pass prints 0.
        d.settings.tests = vec![Test::Write];
        d.cells = vec![fig(64, 4, Column::Write, 2_000_000)];
        assert!(table(&d).lines().nth(2).unwrap().starts_with("              64       4  2000000        0    "));
    }

    #[test]
    fn excel_report_lists_the_axis_and_stops_at_the_file() {
        let mut d = auto_2x2();
        d.settings.excel = true;
        d.settings.tests = vec![Test::Write];
        d.settings.record_axis_kb = vec![4, 8, 16, 32, 64, 128];
        // The crossover: the 128 kB file ran from 16 kB records up only.
        d.settings.cells = vec![(16, 4), (16, 8), (16, 16), (128, 16), (128, 32), (128, 64), (128, 128)];
        d.cells = d
            .settings
            .cells
            .iter()
            .flat_map(|&(f, r)| [fig(f, r, Column::Write, 1000 * r), fig(f, r, Column::Rewrite, 2000 * r)])
            .collect();
        let out = iozone_part(&d);
        let (_, x) = out.split_once("iozone test complete.\nExcel output is below:\n").expect("after the table");
        let want = "\n\"Writer report\"\n        \"4\"  \"8\"  \"16\"  \"32\"  \"64\"  \"128\"\n\
            \"16\"   4000  8000  16000 \n\
            \"128\"   0  0  16000  32000  64000  128000 \n\
            \n\"Re-writer report\"\n        \"4\"  \"8\"  \"16\"  \"32\"  \"64\"  \"128\"\n\
            \"16\"   8000  16000  32000 \n\
            \"128\"   0  0  32000  64000  128000  256000 \n";
        assert_eq!(x, want);
        assert!(out.contains("\tExcel chart generation enabled\n"));
        // -+u adds the CPU blocks.
        d.settings.cpu = true;
        for c in &mut d.cells {
            c.cpu_s = c.elapsed_ns as f64 / 1e9 * 0.4662;
        }
        let x = excel(&d);
        assert!(x.contains("\n\"Writer CPU utilization report (Zero values should be ignored)\"\n        \"4\"  \"8\""), "{x}");
        assert!(x.contains("\n\"16\"    46.62  46.62  46.62\n"), "{x}");
        let r = as_run(&d);
        let tsv = excel_tsv(&r).unwrap();
        assert!(tsv.starts_with("Writer report\n\t4\t8\t16\t32\t64\t128\n16\t4000\t8000\t16000\n128\t0\t0\t16000\t32000\t64000\t128000\n\nRe-writer report\n"), "{tsv}");
    }

    #[test]
    fn units_change_the_preamble_and_the_figures() {
        let mut d = auto_2x2();
        d.settings.units = Units::OpsPerSec;
        let t = iozone_part(&d);
        assert!(t.starts_with("\tAuto Mode\n\tOPS Mode. Output is in operations per second.\n\tCommand line used: "), "{t}");
        assert!(!t.contains("kBytes/sec"));
        // 64 kB in 4 kB records at 1,000,000 kB/s: 250,000 ops/s.
        assert!(t.contains("              64       4   250000"), "{t}");
        d.settings.units = Units::UsPerOp;
        let t = iozone_part(&d);
        assert!(t.contains("\tMicroseconds/op Mode. Output is in microseconds per operation.\n"));
        assert!(t.contains("              64       4        4"), "{t}");
    }

    fn tput(children: u32, column: Column, per_child: &[f64]) -> ThroughputFigure {
        ThroughputFigure {
            children,
            file_kb: 1024,
            rec_kb: 64,
            column,
            per_child_kb_s: per_child.to_vec(),
            per_child_kb: vec![1024.0, 960.0][..per_child.len()].to_vec(),
            parent_kb_s: 550227.29,
            wall_s: 0.0004,
            cpu_s: 0.000772,
        }
    }

    #[test]
    fn throughput_blocks_as_iozone_prints_them() {
        let mut d = auto_2x2();
        d.settings.auto = false;
        d.settings.cells = vec![(1024, 64)];
        d.settings.command_line = "iozone -t 2 -s 1m -r 64k -i 0 -i 1 -R -+u".into();
        d.settings.excel = true;
        d.settings.cpu = true;
        d.settings.throughput = Some(crate::model::iozone::Throughput {
            children: vec![2],
            threads: false,
            stonewall: true,
            mixed_read_pct: None,
            mixed_sequential: false,
            files: Vec::new(),
        });
        d.cells.clear();
        d.throughput = vec![tput(2, Column::Write, &[1174254.75, 1174254.75]), tput(2, Column::Reread, &[2834575.5, 2916180.5])];
        let t = iozone_part(&d);
        let want = "\tThroughput test with 2 processes\n\
            \tEach process writes a 1024 kByte file in 64 kByte records\n\n\
            \tChildren see throughput for  2 initial writers \t= 2348509.50 kB/sec\n\
            \tParent sees throughput for  2 initial writers \t=  550227.29 kB/sec\n\
            \tMin throughput per process \t\t\t= 1174254.75 kB/sec \n\
            \tMax throughput per process \t\t\t= 1174254.75 kB/sec\n\
            \tAvg throughput per process \t\t\t= 1174254.75 kB/sec\n\
            \tMin xfer \t\t\t\t\t=     960.00 kB\n\
            \tCPU Utilization: Wall time    0.000    CPU time    0.001    CPU utilization 193.00 %\n\n\n\
            \tChildren see throughput for 2 re-readers \t= 5750756.00 kB/sec\n";
        assert!(t.contains(want), "{t}");
        assert!(t.starts_with("\tFile size set to 1024 kB\n\tRecord Size 64 kB\n\tExcel chart generation enabled\n\tCPU utilization Resolution = 0.000 seconds.\n\tCPU utilization Excel chart enabled\n\tCommand line used: "), "{t}");
        assert!(t.contains("\tCPU utilization: Wall time"), "{t}");
        let tail = "\n\n\n\n\"Throughput report Y-axis is type of test X-axis is number of processes\"\n\
            \"Record size = 64 kBytes \"\n\"Output is in kBytes/sec\"\n\n\
            \"  Initial write \" 2348509.50 \n\n\"        Re-read \" 5750756.00 \n\n\n\
            \"CPU utilization report Y-axis is type of test X-axis is number of processes\"\n\
            \"Record size = 64 kBytes \"\n\"Output is in CPU%\"\n\n\
            \"  Initial write \"     193.00 \n\n\"        Re-read \"     193.00 \n\n\n\
            iozone test complete.\n";
        assert!(t.ends_with(tail), "{t}");
        // A sweep of child counts: one value per count in the -R rows.
        d.settings.cpu = false;
        d.throughput = vec![tput(1, Column::Write, &[1828508.5]), tput(2, Column::Write, &[1722886.0, 0.0])];
        let t = iozone_part(&d);
        assert!(t.contains("\tMin process = 1 \n\tMax process = 2 \n\tThroughput test with 1 process\n"), "{t}");
        assert!(
            t.contains("\n\n\tEach process writes a 1024 kByte file in 64 kByte records\n\n\tChildren see throughput for  2 initial"),
            "{t}"
        );
        assert!(t.contains("\"  Initial write \" 1828508.50  1722886.00 \n"), "{t}");
        assert!(t.contains("\tMin throughput per process \t\t\t=       0.00 kB/sec \n"), "{t}");
    }

    #[test]
    fn fsbench_part_follows_with_latency_and_cpu() {
        let mut d = auto_2x2();
        for c in &mut d.cells {
            c.cpu_s = c.elapsed_ns as f64 / 1e9 / 2.0;
        }
        let r = as_run(&d);
        let out = run(&r);
        let (io, fsb) = out.split_once("\nfsbench:").expect("separated");
        assert_eq!(format!("{io}"), iozone_part(&d));
        let row = fsb.lines().find(|l| l.split_whitespace().take(3).eq(["128", "8", "reread"])).expect("a row per cell and column");
        let f: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(f[3], "537500", "{row}");
        assert_eq!(f[8], "50.00", "{row}");
        assert!(fsb.contains("--repeat"), "{fsb}");
    }
}
