//! What an experiment leaves in its directory besides `runs/`: per-cell
//! statistics (summary.json, summary.csv), SVG charts and a terminal table.

use super::chart::{bar_chart, percentile_chart, Bar, BarGroup};
use super::format::num;
use crate::measure::hist::LatencyHist;
use crate::result::experiment::ExperimentRun;
use crate::stats::experiment::ExperimentSummary;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// The unit of a metric some cell leads with (its results' headline, and
/// the benchmark's share of device writes): those are charted and tabled.
fn charted<'a>(s: &'a ExperimentSummary, metric: &str) -> Option<&'a str> {
    s.cells.iter().find_map(|c| c.headline.get(metric)).map(String::as_str)
}

/// One line of a percentile chart: its name and (percentile, µs) points.
type PercentileSeries = (String, Vec<(f64, f64)>);

/// Bar charts (groups = target / workload, bars = cache / background, error
/// bars = 95% CI) and one latency-percentile chart per job/op.
pub fn charts(s: &ExperimentSummary, runs: &[ExperimentRun]) -> Vec<(String, String)> {
    let mut metrics: Vec<&String> = s.cells.iter().flat_map(|c| c.metrics.keys()).collect();
    metrics.sort();
    metrics.dedup();
    let mut out = Vec::new();
    for m in metrics {
        let Some(unit) = charted(s, m) else { continue };
        let mut groups: Vec<BarGroup> = Vec::new();
        for c in &s.cells {
            let Some(x) = c.metrics.get(m) else { continue };
            let label = format!("{} / {}", c.cell.target, c.cell.workload);
            let bar =
                Bar { series: format!("{} / {}", c.cell.cache, c.cell.background), mean: x.mean, ci_low: x.ci95_low, ci_high: x.ci95_high };
            match groups.iter_mut().find(|g| g.label == label) {
                Some(g) => g.bars.push(bar),
                None => groups.push(BarGroup { label, bars: vec![bar] }),
            }
        }
        out.push((format!("{}.svg", m.replace('/', "_")), bar_chart(&format!("{} ({s_name})", m, s_name = s.experiment), unit, &groups)));
    }
    // Latency percentiles from the histograms merged over the repeats.
    let mut by_op: BTreeMap<String, Vec<PercentileSeries>> = BTreeMap::new();
    for c in &s.cells {
        let mut merged: BTreeMap<String, LatencyHist> = BTreeMap::new();
        for r in runs.iter().filter(|r| r.cell == c.cell) {
            for j in &r.result.jobs {
                for o in &j.ops {
                    merged.entry(format!("{}/{}", j.name, o.name)).or_default().merge(&o.lat);
                }
            }
        }
        for (op, h) in merged {
            if h.count() == 0 {
                continue;
            }
            let points = [50.0, 90.0, 99.0, 99.9, 99.99].iter().map(|&p| (p, h.percentile(p) as f64 / 1000.0)).collect();
            by_op.entry(op).or_default().push((c.cell.key(), points));
        }
    }
    for (op, series) in by_op {
        out.push((
            format!("{}_latency_percentiles.svg", op.replace('/', "_")),
            percentile_chart(&format!("{op} latency (µs) by percentile"), &series),
        ));
    }
    out
}

/// The table printed at the end: per cell, the headline metrics with their spread.
pub fn table(s: &ExperimentSummary) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "experiment {}: mean ± sd over n repeats [95% CI]; CV in %", s.experiment);
    for c in &s.cells {
        let failed = if c.failed > 0 { format!(", {} FAILED", c.failed) } else { String::new() };
        let _ = writeln!(t, "{} / {} / {} / {} (n={}{failed})", c.cell.target, c.cell.workload, c.cell.cache, c.cell.background, c.runs);
        for (m, x) in c.metrics.iter().filter(|(m, _)| c.headline.contains_key(*m)) {
            if x.n < 2 {
                let _ = writeln!(t, "  {:<48} {:>12} (n=1: no spread or interval)", m, num(x.mean));
                continue;
            }
            let _ = writeln!(
                t,
                "  {:<48} {:>12} ± {:<10} [{} … {}]  CV {:.1}%",
                m,
                num(x.mean),
                num(x.sd),
                num(x.ci95_low),
                num(x.ci95_high),
                x.cv * 100.0
            );
        }
    }
    for w in &s.warnings {
        let _ = writeln!(t, "warning: {w}");
    }
    if let Some(line) = incomplete(s) {
        let _ = writeln!(t, "{line}");
    }
    t
}

/// The last line of an experiment that did not finish every planned run
/// successfully; its statistics are over fewer runs than planned.
pub fn incomplete(s: &ExperimentSummary) -> Option<String> {
    (!s.complete())
        .then(|| format!("INCOMPLETE: {} of {} planned runs done, {} failed, {} not run", s.done, s.planned, s.failed, s.not_run()))
}

/// Write summary.json, summary.csv and charts/ into `out`.
pub fn write_all(out: &Path, s: &ExperimentSummary, runs: &[ExperimentRun]) -> Result<(), String> {
    let w = |p: &Path, text: &str| std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()));
    w(&out.join("summary.json"), &serde_json::to_string_pretty(s).map_err(|e| e.to_string())?)?;
    w(&out.join("summary.csv"), &crate::report::export::csv::experiment(s))?;
    let dir = out.join("charts");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, svg) in charts(s, runs) {
        w(&dir.join(name), &svg)?;
    }
    Ok(())
}
