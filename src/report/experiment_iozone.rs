//! An experiment's IOzone workloads as IOzone's users read them, leading
//! the report: a workload of one cell (one file size, one record size, as
//! seed 004 runs it) gives IOzone's columns in KB/s per target, with the
//! ratio to the first target; an auto sweep (`-a`, seed 001) gives per
//! target and column a table of MB/s per record size (rows) and file size
//! (columns), whose heat maps are in charts/. Figures are medians over the
//! valid runs of a cell, with the min–max spread, computed from the runs'
//! records (`IozoneDetails`), KB = 1024 bytes as IOzone counts; rows and
//! bars follow the experiment file's order of targets and workloads.

use super::chart::{bar_chart, Bar, BarGroup};
use super::export::markdown::table_padded;
use crate::model::iozone::Column;
use crate::result::experiment::{Cell, ExperimentRun};
use crate::result::iozone::IozoneDetails;
use crate::stats::experiment::{CellSummary, ExperimentSummary};
use crate::stats::factors::{level, Levels, FACTORS};
use std::fmt::Write;

/// The seed's columns in its order (seed 004: write, re-write, read,
/// random read, record re-write (test 4), fwrite, fread), then the other
/// columns IOzone prints, in its order.
const COLUMNS: &[Column] = &[
    Column::Write,
    Column::Rewrite,
    Column::Read,
    Column::RandomRead,
    Column::RecordRewrite,
    Column::Fwrite,
    Column::Fread,
    Column::Reread,
    Column::RandomWrite,
    Column::BkwdRead,
    Column::StrideRead,
    Column::Frewrite,
    Column::Freread,
];

/// IOzone's name of a column, as its text header spells it.
fn title(c: Column) -> &'static str {
    match c {
        Column::Write => "write",
        Column::Rewrite => "re-write",
        Column::Read => "read",
        Column::RandomRead => "random read",
        Column::RecordRewrite => "record re-write",
        Column::Fwrite => "fwrite",
        Column::Fread => "fread",
        Column::Reread => "re-read",
        Column::RandomWrite => "random write",
        Column::BkwdRead => "bkwd read",
        Column::StrideRead => "stride read",
        Column::Frewrite => "frewrite",
        Column::Freread => "freread",
        other => other.name(),
    }
}

/// The IOzone details of every valid run of a cell.
fn details(runs: &[ExperimentRun], cell: &Cell) -> Vec<IozoneDetails> {
    runs.iter()
        .filter(|r| &r.cell == cell && r.result.layout == "iozone" && r.result.is_valid())
        .filter_map(|r| super::layout::iozone::details(&r.result))
        .filter(|d| d.throughput.is_empty())
        .collect()
}

/// Median, min and max.
fn spread(mut v: Vec<f64>) -> Option<(f64, f64, f64)> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
    Some((median, v[0], v[n - 1]))
}

/// A cell's figure over its runs, KB/s.
fn kb_s(ds: &[IozoneDetails], file: u64, rec: u64, col: Column) -> Option<(f64, f64, f64)> {
    let v = ds.iter().filter_map(|d| d.cells.iter().find(|c| (c.file_kb, c.rec_kb, c.column) == (file, rec, col))).map(|c| c.kb_per_s());
    spread(v.collect())
}

/// The (file, record) sizes the runs measured, in run order.
fn sizes(ds: &[IozoneDetails]) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for d in ds {
        for c in super::layout::iozone::cell_order(d) {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    out
}

fn columns(ds: &[IozoneDetails]) -> Vec<Column> {
    COLUMNS.iter().copied().filter(|c| ds.iter().any(|d| d.cells.iter().any(|x| x.column == *c))).collect()
}

/// The experiment's levels in the file's order, and its cells of
/// `workload` in that order.
fn ordered<'a>(s: &'a ExperimentSummary, workload: &str) -> (Levels, Vec<&'a CellSummary>) {
    let levels = if s.factors.levels == Levels::default() { Levels::of_cells(&s.cells) } else { s.factors.levels.clone() };
    let mut cells: Vec<&CellSummary> = s.cells.iter().filter(|c| c.cell.workload == workload).collect();
    cells.sort_by_key(|c| levels.rank(&c.cell));
    (levels, cells)
}

/// A row's name: the target, and the cache scenario and background load
/// where the experiment varies them.
fn row_name(levels: &Levels, c: &Cell) -> String {
    let mut name = c.target.clone();
    for f in FACTORS.into_iter().filter(|f| !matches!(*f, "target" | "workload")) {
        if levels.get(f).len() > 1 {
            let _ = write!(name, " / {}", level(c, f));
        }
    }
    name
}

/// Whether a workload's runs are IOzone sweeps of more than one cell.
fn is_sweep(s: &ExperimentSummary, runs: &[ExperimentRun], workload: &str) -> bool {
    s.cells
        .iter()
        .filter(|c| c.cell.workload == workload)
        .any(|c| details(runs, &c.cell).iter().any(|d| sizes(std::slice::from_ref(d)).len() > 1))
}

/// The IOzone sections, put before the report's first workload section
/// (IOzone experiments lead with IOzone's columns); the report unchanged
/// when no workload is IOzone's.
/// Drop the metrics of single IOzone cells (`64k/4k/write_kB_s`) from a
/// workload's list when it has more than one cell (an auto sweep): a column
/// each would make a row of dozens; the sweep's tables show them. Whether
/// any was dropped.
pub fn drop_sweep_cells(metrics: &mut Vec<(&str, &str)>) -> bool {
    let cell = |m: &str| -> Option<(u64, u64)> {
        let mut p = m.splitn(3, '/');
        let (f, r, _) = (p.next()?, p.next()?, p.next()?);
        super::layout::iozone::parse_cell(&format!("{f}/{r}"))
    };
    let mut cells: Vec<(u64, u64)> = metrics.iter().filter_map(|(m, _)| cell(m)).collect();
    cells.sort();
    cells.dedup();
    if cells.len() < 2 {
        return false;
    }
    metrics.retain(|(m, _)| cell(m).is_none());
    true
}

pub fn lead(report: String, s: &ExperimentSummary, runs: &[ExperimentRun]) -> String {
    let mut part = String::new();
    let workloads = ordered(s, "").0.workload;
    for w in &workloads {
        let (levels, cells) = ordered(s, w);
        let per: Vec<(&CellSummary, Vec<IozoneDetails>)> =
            cells.into_iter().map(|c| (c, details(runs, &c.cell))).filter(|(_, d)| !d.is_empty()).collect();
        if per.is_empty() {
            continue;
        }
        if per.iter().any(|(_, d)| sizes(d).len() > 1) {
            sweep(&mut part, w, &levels, &per);
        } else {
            columns_table(&mut part, w, &levels, &per);
        }
    }
    if part.is_empty() {
        return report;
    }
    match report.find("\n## ") {
        Some(at) => format!("{}\n{}{}", &report[..at], part, &report[at..]),
        None => report + "\n" + &part,
    }
}

/// One cell per run: the seed's columns per target in KB/s with the
/// ratios, then IOzone's other columns the runs have.
fn columns_table(t: &mut String, w: &str, levels: &Levels, per: &[(&CellSummary, Vec<IozoneDetails>)]) {
    let all: Vec<IozoneDetails> = per.iter().flat_map(|(_, d)| d.iter().cloned()).collect();
    let Some(&(file, rec)) = sizes(&all).first() else { return };
    let _ = writeln!(t, "## IOzone: {w} ({file} KB file, {rec} KB records)\n");
    let (seven, others): (Vec<Column>, Vec<Column>) = columns(&all).into_iter().partition(|c| COLUMNS[..SEED].contains(c));
    for (cols, what) in [(seven, "the seed's columns"), (others, "IOzone's other columns")] {
        if !cols.is_empty() {
            let _ = writeln!(t, "{what}, KB/s (KB = 1024 bytes, as IOzone prints), median [min–max] over the runs:\n");
            kb_table(t, levels, per, &cols, (file, rec));
        }
    }
}

/// How many of `COLUMNS` are seed 004's.
const SEED: usize = 7;

fn kb_table(t: &mut String, levels: &Levels, per: &[(&CellSummary, Vec<IozoneDetails>)], cols: &[Column], (file, rec): (u64, u64)) {
    let heads: Vec<&str> = ["target", "n"].into_iter().chain(cols.iter().map(|c| title(*c))).collect();
    let right: Vec<bool> = heads.iter().enumerate().map(|(i, _)| i > 0).collect();
    let mut medians: Vec<Vec<Option<f64>>> = Vec::new();
    let rows: Vec<Vec<String>> = per
        .iter()
        .map(|(c, ds)| {
            let figs: Vec<Option<(f64, f64, f64)>> = cols.iter().map(|col| kb_s(ds, file, rec, *col)).collect();
            medians.push(figs.iter().map(|f| f.map(|x| x.0)).collect());
            [row_name(levels, &c.cell), ds.len().to_string()]
                .into_iter()
                .chain(figs.iter().map(|f| match f {
                    None => "–".to_string(),
                    Some((m, lo, hi)) => format!("{m:.0} [{lo:.0}–{hi:.0}]"),
                }))
                .collect()
        })
        .collect();
    *t += &table_padded(&heads, &right, &rows, true);
    if per.len() < 2 {
        t.push('\n');
        return;
    }
    let first = row_name(levels, &per[0].0.cell);
    let _ = writeln!(t, "\nratio of the medians to {first}:\n");
    let heads: Vec<&str> = ["target"].into_iter().chain(cols.iter().map(|c| title(*c))).collect();
    let right: Vec<bool> = heads.iter().enumerate().map(|(i, _)| i > 0).collect();
    let rows: Vec<Vec<String>> = per
        .iter()
        .zip(&medians)
        .map(|((c, _), m)| {
            let ratios = m.iter().zip(&medians[0]).map(|(v, base)| match (v, base) {
                (Some(v), Some(b)) if *b > 0.0 => format!("{:.2}", v / b),
                _ => "–".into(),
            });
            [row_name(levels, &c.cell)].into_iter().chain(ratios).collect()
        })
        .collect();
    *t += &table_padded(&heads, &right, &rows, true);
    t.push('\n');
}

/// An auto sweep: per target and column, MB/s per record size (rows) and
/// file size (columns).
fn sweep(t: &mut String, w: &str, levels: &Levels, per: &[(&CellSummary, Vec<IozoneDetails>)]) {
    let _ = writeln!(
        t,
        "## IOzone: {w}\n\nMB/s (MB = 1024 KB), median over the runs, per record size (rows, KB) and file size (columns, KB); \
         heat maps: charts/<cell>__iozone-<column>.svg.\n"
    );
    for (c, ds) in per {
        let cells = sizes(ds);
        let mut files: Vec<u64> = cells.iter().map(|x| x.0).collect();
        files.sort();
        files.dedup();
        let mut recs: Vec<u64> = cells.iter().map(|x| x.1).collect();
        recs.sort();
        recs.dedup();
        let file_heads: Vec<String> = files.iter().map(u64::to_string).collect();
        let heads: Vec<&str> = ["record KB"].into_iter().chain(file_heads.iter().map(String::as_str)).collect();
        let right = vec![true; heads.len()];
        for col in columns(ds) {
            let _ = writeln!(t, "### {} on {}, {} ({} runs)\n", w, row_name(levels, &c.cell), title(col), ds.len());
            let rows: Vec<Vec<String>> = recs
                .iter()
                .map(|&r| {
                    let figs = files.iter().map(|&f| match kb_s(ds, f, r, col) {
                        Some((m, _, _)) => format!("{:.1}", m / 1024.0),
                        None => String::new(),
                    });
                    [r.to_string()].into_iter().chain(figs).collect()
                })
                .collect();
            *t += &table_padded(&heads, &right, &rows, true);
            t.push('\n');
        }
    }
}

/// Which metrics are one IOzone cell's figure in a sweep (`64k/4k/...`):
/// charts of one bar each, which the sweep's tables and heat maps show.
/// The runs are read once, here.
pub fn per_cell_metric<'a>(s: &'a ExperimentSummary, runs: &[ExperimentRun]) -> impl Fn(&str) -> bool + 'a {
    let mut sweeps: Vec<String> = s.cells.iter().map(|c| c.cell.workload.clone()).collect();
    sweeps.sort();
    sweeps.dedup();
    sweeps.retain(|w| is_sweep(s, runs, w));
    move |metric: &str| {
        let mut parts = metric.splitn(3, '/');
        let (Some(f), Some(r), Some(_)) = (parts.next(), parts.next(), parts.next()) else { return false };
        super::layout::iozone::parse_cell(&format!("{f}/{r}")).is_some()
            && s.cells.iter().any(|c| sweeps.contains(&c.cell.workload) && c.metrics.contains_key(metric))
    }
}

/// For one-cell IOzone workloads, a bar chart per column: a group per
/// workload, a bar per target in the file's order, the median with its
/// min–max.
pub fn charts(s: &ExperimentSummary, runs: &[ExperimentRun]) -> Vec<(String, String)> {
    // Each cell's runs, read once: (workload, [(bar, details, sizes)]).
    let mut one_cell = Vec::new();
    for w in &ordered(s, "").0.workload {
        let (levels, cells) = ordered(s, w);
        let bars: Vec<(String, Vec<IozoneDetails>, (u64, u64))> = cells
            .into_iter()
            .filter_map(|c| {
                let ds = details(runs, &c.cell);
                match sizes(&ds)[..] {
                    [one] => Some((row_name(&levels, &c.cell), ds, one)),
                    _ => None,
                }
            })
            .collect();
        one_cell.push((w.clone(), bars));
    }
    let mut out = Vec::new();
    for col in COLUMNS {
        let groups: Vec<BarGroup> = one_cell
            .iter()
            .map(|(w, cells)| BarGroup {
                label: w.clone(),
                bars: cells
                    .iter()
                    .filter_map(|(name, ds, (file, rec))| {
                        kb_s(ds, *file, *rec, *col).map(|(m, lo, hi)| Bar { series: name.clone(), mean: m, ci_low: lo, ci_high: hi })
                    })
                    .collect(),
            })
            .filter(|g| !g.bars.is_empty())
            .collect();
        if !groups.is_empty() {
            out.push((
                format!("iozone_{}_KB_s.svg", col.name()),
                bar_chart(&format!("IOzone {} ({}): median, min–max", title(*col), s.experiment), "KB/s", &groups),
            ));
        }
    }
    out
}
