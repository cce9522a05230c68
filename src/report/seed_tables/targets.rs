//! Seed 002's table: every level of the target (delalloc against
//! nodelalloc) against the first, per workload, on each job's lead figure,
//! with the stats module's Δ and Holm-adjusted p, and with a block trace
//! the read and write dispatches as blkparse names them.

use super::{levels_of, Ctx};
use crate::report::compare::delta;
use crate::report::export::markdown::table_padded;
use crate::report::format::{num, p_value};
use crate::stats::experiment::CellSummary;
use crate::stats::factors::FactorComparison;
use crate::units::thousands;
use std::fmt::Write;

pub(super) fn table(x: &Ctx) -> Option<String> {
    let targets = x.levels.get("target");
    if targets.len() < 2 {
        return None;
    }
    let comps: Vec<&FactorComparison> = x.s.factors.comparisons.iter().filter(|f| f.factor == "target" && lead(&x.cells, f)).collect();
    if comps.is_empty() {
        return None;
    }
    let cell = |c: &crate::result::experiment::Cell| x.cells.iter().copied().find(|s| &s.cell == c);
    let traced = x.cells.iter().any(|c| c.metrics.contains_key("trace/write_dispatches"));
    let others = x.varying(&["cache", "background"]);
    // Each workload's baseline is the first target it runs on: one for the
    // whole table unless some workloads run on some targets only.
    let mut bases: Vec<&str> = comps.iter().map(|f| f.baseline.as_str()).collect();
    bases.sort_unstable();
    bases.dedup();
    let one_base = (bases.len() == 1).then(|| bases[0]);
    let a = one_base.map_or_else(|| "baseline (mean)".to_string(), |b| format!("{b} (mean)"));
    let b = "level (mean)".to_string();
    let mut header: Vec<&str> = vec!["workload"];
    header.extend(others.iter().copied());
    if one_base.is_none() {
        header.push("baseline");
    }
    header.extend(["target", "metric", &a, &b, "Δ% [95% CI]", "p (Holm)", ""]);
    if traced {
        header.extend(["Read Dispatches", "Write Dispatches"]);
    }
    let right: Vec<bool> =
        header.iter().map(|h| !matches!(*h, "workload" | "baseline" | "target" | "metric" | "") && !others.contains(h)).collect();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut ordered = comps.clone();
    ordered.sort_by_key(|f| (x.levels.rank(&f.cell), x.levels.get("target").iter().position(|t| *t == f.level)));
    for f in ordered {
        let c = &f.comparison;
        let verdict = if c.significant {
            "significant"
        } else if c.tested() {
            "–"
        } else {
            "not tested"
        };
        let mut row = vec![f.workload.clone()];
        row.extend(cell(&f.cell).map(|s| levels_of(s, &others)).unwrap_or_default());
        if one_base.is_none() {
            row.push(f.baseline.clone());
        }
        row.extend([
            f.level.clone(),
            format!("{} ({})", c.metric, f.unit),
            num(c.a.mean),
            num(c.b.mean),
            delta(c),
            p_value(c.p_adjusted),
            verdict.into(),
        ]);
        if traced {
            let (base, this) = (cell(&f.baseline_cell), cell(&f.cell));
            row.push(format!("{} → {}", dispatches(base, "read"), dispatches(this, "read")));
            row.push(format!("{} → {}", dispatches(base, "write"), dispatches(this, "write")));
        }
        rows.push(row);
    }
    let base = one_base.unwrap_or("the first target the workload runs on");
    let mut t = String::new();
    let _ = writeln!(t, "\n## Targets against {} (seed 002)\n", one_base.unwrap_or("each workload's first target"));
    let _ = writeln!(
        t,
        "Per workload and job, its lead figure on each target against {base}: the means over the repeats, Δ% = level / baseline − 1 \
         with Fieller's 95% interval, p from the stats module's test, Holm-adjusted over every test of this report.{}\n",
        if traced {
            " Read Dispatches and Write Dispatches as blkparse's summary names them (requests, KiB dispatched to the device; \
             the mean per run), baseline → this target."
        } else {
            ""
        }
    );
    t += &table_padded(&header, &right, &rows, true);
    Some(t)
}

/// Whether `f` is on the first headline of its job and operation (`JOB/OP/iops`
/// of `JOB/OP/…`, `JOB/io_summary/ops_s`) in its baseline cell's declared
/// order; the attribution and trace figures every cell has are not.
fn lead(cells: &[&CellSummary], f: &FactorComparison) -> bool {
    let m = &f.comparison.metric;
    if m.starts_with("attribution/") || m.starts_with("trace/") {
        return false;
    }
    let group = |name: &str| name.rsplit_once('/').map(|(g, _)| g.to_string());
    let Some(base) = cells.iter().find(|c| c.cell == f.baseline_cell) else { return false };
    base.headline_order.iter().find(|h| group(h) == group(m)).is_some_and(|h| h == m)
}

/// blkparse's "Read Dispatches: N, KKiB" of a cell: its mean per run.
fn dispatches(c: Option<&CellSummary>, dir: &str) -> String {
    let Some(c) = c else { return "–".into() };
    match (c.metrics.get(&format!("trace/{dir}_dispatches")), c.metrics.get(&format!("trace/{dir}_dispatched_MiB"))) {
        (Some(n), Some(m)) => format!("{}, {}KiB", thousands(n.mean.round() as u64), thousands((m.mean * 1024.0).round() as u64)),
        _ => "–".into(),
    }
}
