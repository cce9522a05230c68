//! Seed 000's table: Filebench's ops/s per personality × cache scenario ×
//! background load, the spread over the repeats, and the write share as
//! the seed defines it (Tables 2-3): the write operations the benchmark
//! issued against the write requests the device completed.

use super::{levels_of, spread, total, Ctx};
use crate::report::export::markdown::table_padded;
use crate::report::format::num;
use crate::stats::experiment::CellSummary;
use crate::stats::experiment::{BENCHMARK_WRITE_OPS, DEVICE_WRITE_REQUESTS};
use crate::stats::factors::level;
use crate::stats::summary::Summary;
use crate::units::thousands;
use std::fmt::Write;

/// The headline Filebench's own summary leads with.
const OPS: &str = "/io_summary/ops_s";

pub(super) fn table(x: &Ctx) -> Option<String> {
    let rows: Vec<_> = x
        .cells
        .iter()
        .filter_map(|c| c.headline_order.iter().find(|m| m.ends_with(OPS)).and_then(|m| c.metrics.get(m)).map(|ops| (*c, ops)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut t = String::new();
    let _ = writeln!(t, "\n## Filebench: ops/s and write share (seed 000)\n");
    let _ = writeln!(
        t,
        "ops/s: Filebench's IO Summary, median over the repeats with the smallest and largest; range = (max − min) / median. \
         Write share, the seed's Tables 2-3: the write operations the benchmark issued (its write and append flowops) against \
         the write requests the target's device completed during the runs (its block counters), both summed over the repeats \
         (per run: `attribution/write_share_pct` in summary.csv). Above 100% when the page cache absorbed or the block layer \
         merged writes; on a directory target the device is whatever holds it, with every other writer on it.\n"
    );
    t += &pivot(x, &rows);
    let _ = writeln!(t, "\n### Filebench per cell: the spread and the counts behind the write share\n");
    t += &per_cell(x, &rows);
    Some(t)
}

/// The seed's layout: a row per personality (and target), a column per
/// scenario × background load, in the file's order; ops/s and, below, the
/// write share. Without varying scenario or load, one column each.
fn pivot(x: &Ctx, rows: &[(&CellSummary, &Summary)]) -> String {
    let rows_by: Vec<&str> = ["workload"].into_iter().chain(x.varying(&["target"])).collect();
    let cols_by = x.varying(&["cache", "background"]);
    let columns: Vec<Vec<&str>> = cols_by.iter().fold(vec![Vec::new()], |acc, f| {
        acc.iter().flat_map(|prefix| x.levels.get(f).iter().map(move |l| [prefix.as_slice(), &[l.as_str()]].concat())).collect()
    });
    let mut keys: Vec<Vec<String>> = Vec::new();
    for (c, _) in rows {
        let key = levels_of(c, &rows_by);
        if !keys.contains(&key) {
            keys.push(key);
        }
    }
    let find = |key: &[String], col: &[&str]| {
        rows.iter().find(|(c, _)| levels_of(c, &rows_by) == key && cols_by.iter().zip(col).all(|(f, l)| level(&c.cell, f) == *l))
    };
    let names: Vec<String> = columns.iter().map(|c| if c.is_empty() { String::new() } else { c.join(" / ") }).collect();
    let table = |what: &str, value: &dyn Fn(&CellSummary, &Summary) -> String| {
        let mut header: Vec<String> = rows_by.iter().map(|f| f.to_string()).collect();
        header.extend(names.iter().map(|n| if n.is_empty() { what.to_string() } else { format!("{what}: {n}") }));
        let header: Vec<&str> = header.iter().map(String::as_str).collect();
        let right: Vec<bool> = (0..header.len()).map(|i| i >= rows_by.len()).collect();
        let body: Vec<Vec<String>> = keys
            .iter()
            .map(|k| {
                let values = columns.iter().map(|col| find(k, col).map_or_else(|| "–".into(), |(c, ops)| value(c, ops)));
                k.iter().cloned().chain(values).collect()
            })
            .collect();
        table_padded(&header, &right, &body, true)
    };
    let mut t = table("ops/s (range)", &|_, ops| match range(ops) {
        Some(r) => format!("{} ({r})", num(ops.median)),
        None => format!("{} (n=1)", num(ops.median)),
    });
    t += "\n";
    t += &table("write share", &|c, _| {
        let (issued, device) = counts(c);
        share(issued, device)
    });
    if cols_by.is_empty() {
        return t;
    }
    let cols: Vec<String> = cols_by.iter().map(|f| format!("{f} ({})", x.levels.get(f).join(", "))).collect();
    format!("Columns: {}.\n\n{t}", cols.join(" / "))
}

/// One row per cell: the spread over the repeats and the write share's two counts.
fn per_cell(x: &Ctx, rows: &[(&CellSummary, &Summary)]) -> String {
    let factors: Vec<&str> = ["workload"].into_iter().chain(x.varying(&["target", "cache", "background"])).collect();
    let mut header: Vec<&str> = factors.clone();
    header.extend(["n", "ops/s median [min–max]", "range", "write ops issued", "device write requests", "write share"]);
    let right: Vec<bool> = (0..header.len()).map(|i| i >= factors.len()).collect();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|(c, ops)| {
            let (issued, device) = counts(c);
            let count = |v: Option<u64>| v.map_or_else(|| "–".into(), thousands);
            let range = range(ops).unwrap_or_else(|| "–".into());
            levels_of(c, &factors)
                .into_iter()
                .chain([ops.n.to_string(), spread(ops), range, count(issued), count(device), share(issued, device)])
                .collect()
        })
        .collect();
    table_padded(&header, &right, &body, true)
}

/// (max − min) / median over the repeats, the seed's spread; none for one repeat.
fn range(ops: &Summary) -> Option<String> {
    (ops.n >= 2 && ops.median > 0.0).then(|| format!("{:.1}%", (ops.max - ops.min) / ops.median * 100.0))
}

/// The write operations issued and the device's write requests, summed over the repeats.
fn counts(c: &CellSummary) -> (Option<u64>, Option<u64>) {
    (c.metrics.get(BENCHMARK_WRITE_OPS).map(total), c.metrics.get(DEVICE_WRITE_REQUESTS).map(total))
}

fn share(issued: Option<u64>, device: Option<u64>) -> String {
    match (issued, device) {
        (Some(i), Some(d)) if d > 0 => format!("{:.2}%", i as f64 * 100.0 / d as f64),
        _ => "–".into(),
    }
}
