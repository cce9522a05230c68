//! What an experiment leaves in its directory besides `runs/`: per-cell
//! statistics (summary.json, summary.csv), SVG charts and a terminal table.

use super::chart::{bar_chart, percentile_chart, Bar, BarGroup};
use super::format::thousands;
use crate::measure::hist::LatencyHist;
use crate::result::experiment::{Cell, CellSummary, ExperimentRun, ExperimentSummary, SUMMARY_SCHEMA};
use crate::stats::metrics::{summarize_runs, warnings as cv_warnings};
use crate::stats::summary::summarize;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// Group runs by cell and summarise every metric over the repeats.
pub fn summarize_experiment(name: &str, runs: &[ExperimentRun]) -> ExperimentSummary {
    let mut by_cell: BTreeMap<Cell, Vec<&ExperimentRun>> = BTreeMap::new();
    for r in runs {
        by_cell.entry(r.cell.clone()).or_default().push(r);
    }
    let mut warnings = Vec::new();
    let mut cells = Vec::new();
    for (cell, rs) in by_cell {
        let results: Vec<_> = rs.iter().map(|r| r.result.clone()).collect();
        let summaries = summarize_runs(&results);
        // One line per cell: the count of unsteady metrics and the worst one.
        let unsteady = cv_warnings(&summaries);
        if !unsteady.is_empty() {
            let worst = summaries.iter().filter(|m| m.summary.n > 1).max_by(|a, b| a.summary.cv.total_cmp(&b.summary.cv));
            if let Some(w) = worst {
                warnings.push(format!(
                    "{}: CV above 5% for {} metrics (worst: {} at {:.1}%): the repeats disagree; add repeats or control the environment",
                    cell.key(),
                    unsteady.len(),
                    w.metric,
                    w.summary.cv * 100.0
                ));
            }
        }
        let mut metrics: BTreeMap<_, _> = summaries.into_iter().map(|m| (m.metric, m.summary)).collect();
        let extra = |f: &dyn Fn(&ExperimentRun) -> Option<f64>| -> Option<crate::stats::summary::Summary> {
            let xs: Vec<f64> = rs.iter().filter_map(|r| f(r)).collect();
            (xs.len() == rs.len()).then(|| summarize(&xs))
        };
        let mib = |b: u64| b as f64 / 1048576.0;
        let share = |r: &ExperimentRun| {
            let a = &r.attribution;
            a.device_write_bytes.filter(|&d| d > 0).map(|d| a.benchmark_storage_write_bytes.min(d) as f64 * 100.0 / d as f64)
        };
        if let Some(s) = extra(&share) {
            metrics.insert("attribution/benchmark_share_of_device_writes_pct".into(), s);
        }
        if let Some(s) = extra(&|r| r.attribution.device_write_bytes.map(mib)) {
            metrics.insert("attribution/device_write_MiB".into(), s);
        }
        if let Some(s) = extra(&|r| Some(mib(r.attribution.benchmark_write_bytes))) {
            metrics.insert("attribution/benchmark_write_MiB".into(), s);
        }
        if let Some(s) = extra(&|r| r.background.as_ref().map(|b| mib(b.bytes_written))) {
            metrics.insert("attribution/background_write_MiB".into(), s);
        }
        for r in &rs {
            if !r.cache.applied {
                warnings.push(format!(
                    "{} r{}: cache scenario did not take effect: {}",
                    cell.key(),
                    r.repeat,
                    r.cache.note.clone().unwrap_or_default()
                ));
            }
            if let Some(n) = r.cache.note.as_ref().filter(|n| n.contains("dirty pages pending")) {
                warnings.push(format!("{} r{}: {n}", cell.key(), r.repeat));
            }
            if let Some(e) = r.background.as_ref().and_then(|b| b.error.as_ref()) {
                warnings.push(format!("{} r{}: the background load failed during the run: {e}", cell.key(), r.repeat));
            }
            if r.result.partial {
                warnings.push(format!("{} r{}: partial run", cell.key(), r.repeat));
            }
        }
        let unwritten = rs.iter().filter(|r| {
            let a = &r.attribution;
            a.device_write_bytes.is_some_and(|d| a.benchmark_storage_write_bytes > 2 * d.max(1 << 20))
        });
        if unwritten.count() > 0 {
            warnings.push(format!(
                "{}: most of the benchmark's buffered writes were still in the page cache when the run ended (dirtied far more than reached the device): the result measures memory; run longer, add fsync, or use direct=1",
                cell.key()
            ));
        }
        if let (Some(dev), Some(bench)) =
            (metrics.get("attribution/device_write_MiB").map(|s| s.mean), metrics.get("attribution/benchmark_write_MiB").map(|s| s.mean))
        {
            if dev > bench * 1.5 + 1.0 {
                warnings.push(format!(
                    "{}: the device saw {dev:.1} MiB of writes, the benchmark issued {bench:.1} MiB: other I/O (journal, background load, other processes) reached the device",
                    cell.key()
                ));
            }
        }
        cells.push(CellSummary { cell, runs: rs.len(), metrics });
    }
    warnings.dedup();
    ExperimentSummary { schema: SUMMARY_SCHEMA.into(), experiment: name.into(), cells, warnings }
}

/// One row per cell and metric, the columns the issue names.
pub fn csv(s: &ExperimentSummary) -> String {
    let mut out = String::from("target,workload,cache,background,metric,n,mean,sd,cv,min,max,median,ci95_low,ci95_high\n");
    for c in &s.cells {
        for (m, x) in &c.metrics {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                field(&c.cell.target),
                field(&c.cell.workload),
                field(&c.cell.cache),
                field(&c.cell.background),
                field(m),
                x.n,
                x.mean,
                x.sd,
                x.cv,
                x.min,
                x.max,
                x.median,
                x.ci95_low,
                x.ci95_high
            );
        }
    }
    out
}

/// RFC 4180 quoting where needed.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The metrics worth a chart: throughput and tail latency of each job/op,
/// and the benchmark's share of device writes.
fn charted(metric: &str) -> Option<&'static str> {
    if metric.ends_with("/iops") {
        Some("IOPS")
    } else if metric.ends_with("/bw_MiB_s") {
        Some("MiB/s")
    } else if metric.ends_with("/lat_p99_us") {
        Some("µs")
    } else if metric == "attribution/benchmark_share_of_device_writes_pct" {
        Some("%")
    } else {
        None
    }
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
        let Some(unit) = charted(m) else { continue };
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

/// The table printed at the end: per cell, each job/op's IOPS and p99 with spread.
pub fn table(s: &ExperimentSummary) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "experiment {}: mean ± sd over n repeats [95% CI]; CV in %", s.experiment);
    for c in &s.cells {
        let _ = writeln!(t, "{} / {} / {} / {} (n={})", c.cell.target, c.cell.workload, c.cell.cache, c.cell.background, c.runs);
        for (m, x) in &c.metrics {
            if charted(m).is_none() {
                continue;
            }
            let _ = writeln!(
                t,
                "  {:<48} {:>12} ± {:<10} [{} … {}]  CV {:.1}%",
                m,
                thousands(x.mean.round().max(0.0) as u64),
                thousands(x.sd.round().max(0.0) as u64),
                thousands(x.ci95_low.round().max(0.0) as u64),
                thousands(x.ci95_high.round().max(0.0) as u64),
                x.cv * 100.0
            );
        }
    }
    for w in &s.warnings {
        let _ = writeln!(t, "warning: {w}");
    }
    t
}

/// Write summary.json, summary.csv and charts/ into `out`.
pub fn write_all(out: &Path, s: &ExperimentSummary, runs: &[ExperimentRun]) -> Result<(), String> {
    let w = |p: &Path, text: &str| std::fs::write(p, text).map_err(|e| format!("cannot write {}: {e}", p.display()));
    w(&out.join("summary.json"), &serde_json::to_string_pretty(s).map_err(|e| e.to_string())?)?;
    w(&out.join("summary.csv"), &csv(s))?;
    let dir = out.join("charts");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, svg) in charts(s, runs) {
        w(&dir.join(name), &svg)?;
    }
    Ok(())
}
