//! Bonnie++ 2.00a's report: its text tables and its CSV line (format 1.98)
//! as Bonnie++ prints them, so `bon_csv2txt` and `bon_csv2html` read the
//! line; then fsbench's own section: every phase's figure even under half
//! a second (Bonnie++ prints `+++++`), its latency percentiles (Bonnie++
//! gives the slowest operation only) and its CPU.
//!
//! Bonnie++'s quirks, kept because its users' scripts read them: the text's
//! file-test rates show the number of files, not files per second (the CSV
//! has the rates); the CSV leaves io_chunk_size and file_chunk_size empty
//! and writes num_dirs where its header says file_chunk_size; with `-q`
//! only the CSV line is printed (Bonnie++ sends the text to stderr), and
//! with `-x N` the CSV header and one line per run.

use super::Layout;
use crate::model::bonnie::{FileKind, Test};
use crate::report::format::us;
use crate::result::bonnie::{BonnieDetails, PhaseFigure};
use crate::result::{OpStats, RunResult};
use std::fmt::Write;

pub const LAYOUT: Layout = Layout {
    name: "bonnie",
    about: "Bonnie++'s text report and CSV line (format 1.98) exactly as Bonnie++ 2.00a prints them, then every phase's real rate, latency percentiles and CPU",
    render: run,
    files: super::no_files,
    charts: super::no_charts,
};

/// The CSV header line Bonnie++ prints before its lines with `-x`.
pub const CSV_HEADER: &str = "format_version,bonnie_version,name,concurrency,seed,file_size,io_chunk_size,putc,putc_cpu,put_block,put_block_cpu,rewrite,rewrite_cpu,getc,getc_cpu,get_block,get_block_cpu,seeks,seeks_cpu,num_files,max_size,min_size,num_dirs,file_chunk_size,seq_create,seq_create_cpu,seq_stat,seq_stat_cpu,seq_del,seq_del_cpu,ran_create,ran_create_cpu,ran_stat,ran_stat_cpu,ran_del,ran_del_cpu,putc_latency,put_block_latency,rewrite_latency,getc_latency,get_block_latency,seeks_latency,seq_create_latency,seq_stat_latency,seq_del_latency,ran_create_latency,ran_stat_latency,ran_del_latency";

const VERSION: &str = "2.00a";

fn run(r: &RunResult) -> String {
    let mut out = String::new();
    if let Some(e) = &r.failed {
        let _ = writeln!(out, "*** FAILED: {e}; the figures below show what ran and are not a result ***");
    }
    for j in &r.jobs {
        let Some(d) = j.details_as::<BonnieDetails>() else {
            return super::by_group(r, super::fio::job);
        };
        let s = &d.settings;
        let csv_only = s.quiet || s.runs > 1;
        if !csv_only {
            out.push_str(&text(&d));
        }
        if s.runs > 1 && s.run_index == 0 {
            out.push_str(CSV_HEADER);
            out.push('\n');
        }
        out.push_str(&csv_line(&d));
        out.push('\n');
        if !csv_only {
            out.push('\n');
            out.push_str(&fsbench_part(&d, &j.ops));
            for g in r.groups.iter().filter(|g| g.group == j.group) {
                super::group(&mut out, g, &[j]);
            }
        }
    }
    if r.partial {
        out.push_str("*** PARTIAL RESULTS: the run was interrupted; figures cover what ran ***\n");
    }
    out
}

/// An IO rate (KiB/s) as the text shows it: `601k`, `12.3m`, `654m`, `1.1g`.
fn io_rate(kib: f64) -> String {
    if kib < 10000.0 {
        return format!("{}k", kib as u64);
    }
    let mib = kib / 1024.0;
    if mib < 100.0 {
        format!("{mib:.1}m")
    } else if mib < 1000.0 {
        format!("{mib:.0}m")
    } else {
        format!("{:.1}g", mib / 1024.0)
    }
}

/// The slowest operation as Bonnie++ writes it: `Nus`, `Nms` from 0.1 s,
/// `Ns` past 99.99 s.
pub fn latency(ns: u64) -> String {
    // Whole units by integer division: floating point would turn 4049 µs
    // into 4048.999.
    if ns > 99_990_000_000 {
        format!("{}s", ns / 1_000_000_000)
    } else if ns > 99_900_000 {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}us", ns / 1000)
    }
}

/// The (rate, %CPU) cells of a test for the text, or None when it did not run.
fn text_cells(d: &BonnieDetails, t: Test) -> Option<(String, String)> {
    let p = d.phase(t)?;
    if p.too_short() {
        return Some(("+++++".into(), "+++".into()));
    }
    let rate = match t {
        Test::Seeks if p.rate() >= 1000.0 => format!("{:.0}", p.rate()),
        Test::Seeks => format!("{:.1}", p.rate()),
        t if t.is_io() => io_rate(p.rate()),
        // Bonnie++ 2.00a's text shows the file count here, not the rate.
        _ => p.amount.to_string(),
    };
    Some((rate, p.cpu_pct().to_string()))
}

fn row(out: &mut String, d: &BonnieDetails, tests: &[Test]) {
    for &t in tests {
        match text_cells(d, t) {
            Some((rate, cpu)) => {
                let _ = write!(out, " {rate:>5} {cpu:>3}");
            }
            None => out.push_str("          "),
        }
    }
    out.push('\n');
}

fn latency_row(out: &mut String, d: &BonnieDetails, tests: &[Test]) {
    out.push_str("Latency          ");
    for &t in tests {
        match d.phase(t) {
            Some(p) => {
                let _ = write!(out, " {:>9}", latency(p.max_latency_ns));
            }
            None => out.push_str("          "),
        }
    }
    out.push('\n');
}

/// `size[:chunk[:concurrency[:seeks]]]` with parts at their default empty
/// and trailing colons dropped.
fn size_cell(d: &BonnieDetails) -> String {
    let s = &d.settings;
    let chunk = if s.chunk == 8192 {
        String::new()
    } else if s.chunk % 1024 == 0 {
        format!("{}k", s.chunk / 1024)
    } else {
        s.chunk.to_string()
    };
    let conc = if s.concurrency == 1 { String::new() } else { s.concurrency.to_string() };
    let seeks = if s.seeks == 8192 { String::new() } else { s.seeks.to_string() };
    let mut cell = format!("{}:{chunk}:{conc}:{seeks}", s.size_text);
    while cell.ends_with(':') {
        cell.pop();
    }
    cell
}

/// `files[:max[:min]][/dirs]`.
fn files_cell(d: &BonnieDetails) -> String {
    let Some(t) = &d.settings.files else { return String::new() };
    let mut cell = t.num_k.to_string();
    match t.kind {
        FileKind::HardLinks => cell.push_str(":link"),
        FileKind::SymLinks => cell.push_str(":symlink"),
        FileKind::Files if t.max_size > 0 => {
            let _ = write!(cell, ":{}:{}", t.max_size, t.min_size);
        }
        FileKind::Files => {}
    }
    if t.dirs > 1 {
        let _ = write!(cell, "/{}", t.dirs);
    }
    cell
}

const IO_TESTS: [Test; 6] = [Test::Putc, Test::PutBlock, Test::Rewrite, Test::Getc, Test::GetBlock, Test::Seeks];
const FILE_TESTS: [Test; 6] = [Test::SeqCreate, Test::SeqStat, Test::SeqDel, Test::RanCreate, Test::RanStat, Test::RanDel];

/// Bonnie++'s text tables.
pub fn text(d: &BonnieDetails) -> String {
    let s = &d.settings;
    let mut out = String::new();
    let io_ran = IO_TESTS.iter().any(|&t| d.phase(t).is_some());
    let files_ran = FILE_TESTS.iter().any(|&t| d.phase(t).is_some());
    if io_ran {
        let _ = writeln!(out, "Version {VERSION:<12}------Sequential Output------ --Sequential Input- --Random-");
        out.push_str("                    -Per Chr- --Block-- -Rewrite- -Per Chr- --Block-- --Seeks--\n");
        out.push_str("Name:Size etc        /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP\n");
        let cell = size_cell(d);
        let width = 19usize.saturating_sub(cell.len() + 1);
        let name: String = s.machine.chars().take(width).collect();
        let _ = write!(out, "{name:<width$} {cell}");
        row(&mut out, d, &IO_TESTS);
        latency_row(&mut out, d, &IO_TESTS);
        if !files_ran {
            out.push('\n');
        }
    }
    if files_ran {
        let _ = writeln!(out, "Version {VERSION:<12}------Sequential Create------ --------Random Create--------");
        let name: String = s.machine.chars().take(19).collect();
        let _ = writeln!(out, "{name:<20}-Create-- --Read--- -Delete-- -Create-- --Read--- -Delete--");
        let label = match &s.files {
            Some(t) if t.kind != FileKind::Files || (t.max_size > 0 && t.min_size == 0) => format!("{:<19}", "files:max"),
            Some(t) if t.max_size > 0 => format!("{:<19}", "files:max:min"),
            _ => format!("{:>19}", "files"),
        };
        let _ = writeln!(out, "{label}  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP  /sec %CP");
        let _ = write!(out, "{:>19}", files_cell(d));
        row(&mut out, d, &FILE_TESTS);
        latency_row(&mut out, d, &FILE_TESTS);
    }
    out
}

/// (rate, cpu, latency) CSV fields of a test; empty when it did not run.
fn csv_fields(d: &BonnieDetails, t: Test) -> (String, String, String) {
    match d.phase(t) {
        None => (String::new(), String::new(), String::new()),
        Some(p) if p.too_short() => ("+++++".into(), "+++".into(), latency(p.max_latency_ns)),
        Some(p) => ((p.rate() as u64).to_string(), p.cpu_pct().to_string(), latency(p.max_latency_ns)),
    }
}

/// Bonnie++'s CSV line, format 1.98: 50 fields.
pub fn csv_line(d: &BonnieDetails) -> String {
    let s = &d.settings;
    let mut f: Vec<String> = vec!["1.98".into(), VERSION.into(), s.machine.clone(), s.concurrency.to_string(), d.seed_text.clone()];
    let io_ran = IO_TESTS.iter().any(|&t| d.phase(t).is_some());
    if io_ran {
        f.extend([s.size_text.clone(), String::new(), s.seeks.to_string(), s.seek_procs.to_string()]);
    } else {
        f.extend(std::iter::repeat_n(String::new(), 4));
    }
    let mut lat = Vec::new();
    for t in IO_TESTS {
        let (r, c, l) = csv_fields(d, t);
        f.extend([r, c]);
        lat.push(l);
    }
    match &s.files {
        Some(t) if FILE_TESTS.iter().any(|&x| d.phase(x).is_some()) => {
            f.push(t.num_k.to_string());
            f.push(match t.kind {
                FileKind::HardLinks => "link".into(),
                FileKind::SymLinks => "symlink".into(),
                FileKind::Files if t.max_size > 0 => t.max_size.to_string(),
                FileKind::Files => String::new(),
            });
            f.push(if t.kind == FileKind::Files && t.min_size > 0 { t.min_size.to_string() } else { String::new() });
            // The writer puts the (always empty) chunk before num_dirs.
            f.push(String::new());
            f.push(if t.dirs > 1 { t.dirs.to_string() } else { String::new() });
        }
        _ => f.extend(std::iter::repeat_n(String::new(), 5)),
    }
    for t in FILE_TESTS {
        let (r, c, l) = csv_fields(d, t);
        f.extend([r, c]);
        lat.push(l);
    }
    f.extend(lat);
    f.join(",")
}

/// fsbench's section: what Bonnie++ hides or does not measure.
pub fn fsbench_part(d: &BonnieDetails, ops: &[OpStats]) -> String {
    let mut out = String::new();
    out.push_str("fsbench: every phase (Bonnie++ shows +++++ under 0.5 s), latency per operation (µs) and CPU of the whole process\n");
    let _ = writeln!(
        out,
        "{:<11} {:>14} {:>10} {:>5} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "test", "rate", "elapsed", "CPU", "ops", "p50", "p99", "p99.9", "max"
    );
    for p in &d.phases {
        let unit = match p.test {
            Test::Seeks => "seeks/s",
            t if t.is_io() => "KiB/s",
            _ => "files/s",
        };
        let (count, p50, p99, p999) = match ops.iter().find(|o| o.name == p.test.name()) {
            Some(o) => {
                (o.ops.to_string(), us(o.lat.percentile(50.0) as f64), us(o.lat.percentile(99.0) as f64), us(o.lat.percentile(99.9) as f64))
            }
            None => Default::default(),
        };
        let _ = writeln!(
            out,
            "{:<11} {:>14} {:>8.3} s {:>4}% {:>10} {:>10} {:>10} {:>10} {:>10}{}",
            p.test.name(),
            format!("{:.0} {unit}", p.rate()),
            p.elapsed_ns as f64 / 1e9,
            p.cpu_pct(),
            count,
            p50,
            p99,
            p999,
            us(p.max_latency_ns as f64),
            note(p)
        );
    }
    out
}

fn note(p: &PhaseFigure) -> &'static str {
    if p.elapsed_ns < 100_000_000 {
        "  (under 0.1 s: timer and start-up dominate; grow -s or -n)"
    } else if p.too_short() {
        "  (under 0.5 s: Bonnie++ would show +++++)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests;
