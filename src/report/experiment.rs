//! What an experiment leaves in its directory besides `runs/`: report.md
//! (what the terminal shows too: the headline metrics per cell, the
//! comparisons of the factors' levels, the warnings), every metric's
//! statistics (summary.json, summary.csv) and SVG charts of the headline
//! metrics.

use super::chart::{bar_chart, percentile_chart, size_chart, Bar, BarGroup, Line, Point};
use super::compare::{delta, p_columns};
use super::export::markdown::table_padded;
use super::format::{num, p_value, pm};
use crate::measure::hist::LatencyHist;
use crate::result::experiment::ExperimentRun;
use crate::stats::design::PAIRED;
use crate::stats::experiment::{CellSummary, ExperimentSummary};
use crate::stats::factors::{level, FactorComparison, Levels, FACTORS};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// The unit of a metric some cell leads with (its results' headline, and
/// the write share): those are charted and tabled.
fn charted<'a>(s: &'a ExperimentSummary, metric: &str) -> Option<&'a str> {
    s.cells.iter().find_map(|c| c.headline.get(metric)).map(String::as_str)
}

/// One line of a percentile chart: its name and (percentile, µs) points.
type PercentileSeries = (String, Vec<(f64, f64)>);

/// A bar chart per headline metric (groups = target / workload, bars =
/// cache / background, error bars = 95% CI) unless every bar is 0, a
/// latency-percentile chart per job/op whose p99 latency is a headline,
/// throughput against I/O size when workloads sweep it (`by_io_size`), and
/// for each cell of IOzone runs a heat map per IOzone column
/// (`<cell key>__iozone-<column>.svg`, the mean kB/s over its repeats).
pub fn charts(s: &ExperimentSummary, runs: &[ExperimentRun]) -> Vec<(String, String)> {
    let mut metrics: Vec<&String> = s.cells.iter().flat_map(|c| c.metrics.keys()).collect();
    metrics.sort();
    metrics.dedup();
    let cells = in_file_order(s);
    let mut out = Vec::new();
    let one_cell_of_a_sweep = super::experiment_iozone::per_cell_metric(s, runs);
    for m in metrics {
        let Some(unit) = charted(s, m) else { continue };
        if one_cell_of_a_sweep(m) {
            continue;
        }
        let mut groups: Vec<BarGroup> = Vec::new();
        for c in &cells {
            let Some(x) = c.metrics.get(m) else { continue };
            let label = format!("{} / {}", c.cell.target, c.cell.workload);
            let bar =
                Bar { series: format!("{} / {}", c.cell.cache, c.cell.background), mean: x.mean, ci_low: x.ci95_low, ci_high: x.ci95_high };
            match groups.iter_mut().find(|g| g.label == label) {
                Some(g) => g.bars.push(bar),
                None => groups.push(BarGroup { label, bars: vec![bar] }),
            }
        }
        if groups.iter().flat_map(|g| &g.bars).all(|b| b.mean == 0.0 && b.ci_high == 0.0) {
            continue;
        }
        out.push((format!("{}.svg", m.replace('/', "_")), bar_chart(&format!("{} ({s_name})", m, s_name = s.experiment), unit, &groups)));
    }
    // Latency percentiles from the histograms merged over the repeats.
    let mut by_op: BTreeMap<String, Vec<PercentileSeries>> = BTreeMap::new();
    for c in &cells {
        let mut merged: BTreeMap<String, LatencyHist> = BTreeMap::new();
        for r in runs.iter().filter(|r| r.cell == c.cell) {
            for j in &r.result.jobs {
                for o in &j.ops {
                    merged.entry(format!("{}/{}", j.name, o.name)).or_default().merge(&o.lat);
                }
            }
        }
        for (op, h) in merged {
            if h.count() == 0 || charted(s, &format!("{op}/lat_p99_us")).is_none() {
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
    if let Some(svg) = by_io_size(s, runs) {
        out.push((format!("{BW}_by_io_size.svg"), svg));
    }
    out.extend(super::experiment_iozone::charts(s, runs));
    // IOzone's matrix: a heat map per column of each cell, over its repeats.
    for c in &s.cells {
        let rs: Vec<_> = runs.iter().filter(|r| r.cell == c.cell && r.result.layout == "iozone").map(|r| &r.result).collect();
        // A workload of one cell has no matrix to draw: its bars are above.
        if rs.first().and_then(|r| super::layout::iozone::details(r)).is_some_and(|d| super::layout::iozone::cell_order(&d).len() < 2) {
            continue;
        }
        for (name, svg) in super::heatmap::iozone_heatmaps_mean(&rs) {
            out.push((format!("{}__{name}", c.cell.key()), svg));
        }
    }
    out
}

/// The cells in the experiment file's order (workload, target, cache,
/// background), or sorted for a summary read without its file: bars and
/// lines follow it, so `none` does not sort after `files`.
pub fn in_file_order(s: &ExperimentSummary) -> Vec<&CellSummary> {
    let levels = if s.factors.levels == Levels::default() { Levels::of_cells(&s.cells) } else { s.factors.levels.clone() };
    let mut cells: Vec<&CellSummary> = s.cells.iter().collect();
    cells.sort_by_key(|c| levels.rank(&c.cell));
    cells
}

/// The per-operation bandwidth metric (`JOB/OP/bw_MiB_s`).
const BW: &str = "bw_MiB_s";

/// Throughput against the size of the operations, as seed 003 draws block
/// device against file system over block sizes: one line per target and
/// job/operation (and cache scenario and background load where they vary),
/// a point per workload at the mean size of that operation's I/Os over the
/// cell's runs (bytes / operations, so what was done, whatever the tool
/// calls its block size), y = the cell's mean MiB/s with its 95% interval.
/// Only operations whose bandwidth is a headline. Drawn when a line has two
/// or more sizes; a line on which two workloads share a size is left out,
/// since the axis could not tell them apart.
fn by_io_size(s: &ExperimentSummary, runs: &[ExperimentRun]) -> Option<String> {
    // Lines in the experiment file's order of targets and workloads.
    let levels = if s.factors.levels == Levels::default() { Levels::of_cells(&s.cells) } else { s.factors.levels.clone() };
    let cells = in_file_order(s);
    let mut lines: Vec<Line> = Vec::new();
    for c in cells {
        let valid: Vec<&ExperimentRun> = runs.iter().filter(|r| r.cell == c.cell && r.result.is_valid()).collect();
        let Some(first) = valid.first() else { continue };
        for (job, unit) in crate::stats::metrics::unit_names(&first.result) {
            for op in &unit.ops {
                let metric = format!("{job}/{}/{BW}", op.name);
                let (Some(m), true) = (c.metrics.get(&metric), c.headline.contains_key(&metric)) else { continue };
                let sizes: Vec<f64> = valid
                    .iter()
                    .filter_map(|r| {
                        let (_, u) = crate::stats::metrics::unit_names(&r.result).into_iter().find(|(n, _)| *n == job)?;
                        let o = u.op(&op.name).filter(|o| o.ops > 0)?;
                        Some(o.bytes as f64 / o.ops as f64)
                    })
                    .collect();
                if sizes.is_empty() {
                    continue;
                }
                let x = (sizes.iter().sum::<f64>() / sizes.len() as f64).round();
                let what = if job == op.name { job.clone() } else { format!("{job}/{}", op.name) };
                let mut name = format!("{} / {what}", c.cell.target);
                for (factor, level) in [("cache", &c.cell.cache), ("background", &c.cell.background)] {
                    if levels.get(factor).len() > 1 {
                        name = format!("{name} / {level}");
                    }
                }
                let point = Point { x, mean: m.mean, ci_low: m.ci95_low, ci_high: m.ci95_high };
                match lines.iter_mut().find(|l| l.name == name) {
                    Some(l) => l.points.push(point),
                    None => lines.push(Line { name, points: vec![point] }),
                }
            }
        }
    }
    lines.retain(|l| {
        let mut xs: Vec<f64> = l.points.iter().map(|p| p.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs.len() >= 2 && xs.len() == l.points.len()
    });
    if lines.is_empty() {
        return None;
    }
    Some(size_chart(&format!("{BW} by I/O size ({})", s.experiment), "MiB/s", "I/O size", &lines, io_size_label))
}

/// A size in bytes as an axis label: 512, 4k, 64k, 1M, 16M, 2G.
fn io_size_label(b: f64) -> String {
    let b = b.round() as u64;
    for (unit, m) in [("G", 1u64 << 30), ("M", 1 << 20), ("k", 1 << 10)] {
        if b >= m && b % m == 0 {
            return format!("{}{unit}", b / m);
        }
    }
    if b >= 1024 {
        format!("{:.1}k", b as f64 / 1024.0)
    } else {
        b.to_string()
    }
}

/// Which way a metric is better, from its unit: rates up, times down.
#[derive(Clone, Copy, PartialEq)]
enum Better {
    Higher,
    Lower,
    Neither,
}

fn better(unit: &str) -> Better {
    if unit.ends_with("/s") || unit == "IOPS" {
        Better::Higher
    } else if matches!(unit, "ns" | "µs" | "us" | "ms" | "s") {
        Better::Lower
    } else {
        Better::Neither
    }
}

/// hyperfine's sentence for one comparison: "`a` ran 1.43 ± 0.08 times
/// faster than `b`" (1 + Δ: the ratio of the means, or for a paired test
/// the geometric mean of the per-round ratios; ± its standard deviation
/// propagated from the cells'), with Δ%, its interval and the verdict.
fn sentence(f: &FactorComparison) -> Option<String> {
    let c = &f.comparison;
    if c.a.mean == 0.0 || c.b.mean == 0.0 {
        return None;
    }
    let (r, rel_sd) = (c.ratio(), c.ratio_sd() / c.ratio());
    let (a, b) = (format!("`{}`", f.baseline), format!("`{}`", f.level));
    let claim = match better(&f.unit) {
        Better::Neither => format!("{b} had {} times the {} of {a}", pm(r, r * rel_sd), c.metric),
        way => {
            let b_better = (r > 1.0) == (way == Better::Higher);
            let k = if r >= 1.0 { r } else { 1.0 / r };
            let (fast, slow) = if b_better { (&b, &a) } else { (&a, &b) };
            format!("{fast} ran {} times faster than {slow}", pm(k, k * rel_sd))
        }
    };
    let verdict = if !c.tested() {
        "not tested: a side has one run".to_string()
    } else if f.drift_veto.is_some() {
        format!("p (Holm) {}: not called significant, drift explains it (Design and drift)", p_value(c.p_adjusted))
    } else if c.significant {
        format!("p (Holm) {}: significant", p_value(c.p_adjusted))
    } else {
        format!("p (Holm) {}: not significant", p_value(c.p_adjusted))
    };
    Some(format!("{claim} ({} of {b} {}; {verdict})", c.metric, delta(c)))
}

/// The factors (besides the workload) with two or more levels.
fn varying(levels: &Levels) -> Vec<&'static str> {
    FACTORS.into_iter().filter(|f| levels.get(f).len() >= 2).collect()
}

/// The report of an experiment (report.md, and what the terminal shows):
/// per workload, its headline metrics for every cell (mean ± sd, CV, n),
/// then for each factor that varies every level against the first with
/// Δ%, its 95% interval and the Holm-adjusted p, then the warnings.
pub fn report(s: &ExperimentSummary) -> String {
    let f = &s.factors;
    let levels = if f.levels == Levels::default() { Levels::of_cells(&s.cells) } else { f.levels.clone() };
    let vary = varying(&levels);
    let mut t = String::new();
    let _ = writeln!(t, "# Experiment {}\n", s.experiment);
    // Older summaries have no planned/done/failed: count the cells' runs.
    let (done, failed) = s.cells.iter().fold((0, 0), |(d, x), c| (d + c.runs, x + c.failed));
    let (done, failed, planned) = if s.planned > 0 { (s.done, s.failed, s.planned) } else { (done, failed, done + failed) };
    let repeats = s.cells.iter().map(|c| c.runs + c.failed).max().unwrap_or(0);
    let count = |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
    let missing = planned.saturating_sub(done + failed);
    let full = [levels.target.len(), levels.workload.len(), levels.cache.len(), levels.background.len(), repeats].iter().product::<usize>();
    // Workloads restricted to some targets (`targets = [...]`) leave cells out of the product.
    let sparse = if planned < full { ", each workload on the targets it runs on" } else { "" };
    let _ = writeln!(
        t,
        "{done} of {} in the statistics{}: {} × {} × {} × {} × up to {}{sparse}.",
        count(planned, "planned run"),
        if failed + missing > 0 { format!(" ({failed} FAILED and left out, {missing} not run)") } else { String::new() },
        count(levels.target.len(), "target"),
        count(levels.workload.len(), "workload"),
        count(levels.cache.len(), "cache scenario"),
        count(levels.background.len(), "background load"),
        count(repeats, "repeat")
    );
    let _ = writeln!(
        t,
        "Each cell: mean ± sd over its repeats (sd to two significant figures), CV = sd / mean, n = runs in the statistics. \
         Each factor that varies: every level against the first in the experiment file that the cell's workload has (the baseline), the other factors held fixed; \
         Δ% = level / baseline − 1 with Fieller's 95% interval (paired: from the per-round ratios); p from Welch's t-test, or \
         paired by round where the cells ran side by side in rounds (interleaved order; test column), adjusted by Holm's method over all {} \
         in this report, significant below 0.05; \"ran k ± sd times faster\" is 1 + Δ (the ratio of the means; paired by round, the geometric mean of the per-round ratios) with the sd propagated from the cells' (as hyperfine prints it). \
         Every metric of every cell is in summary.csv and summary.json; charts/ has the headline metrics.",
        count(f.tests, "test")
    );
    // The seeds' own tables lead; the per-metric tables follow.
    t += &super::seed_tables::tables(s);
    t += &super::gaps::section(&s.gaps);
    for w in &levels.workload {
        let mut cells: Vec<&CellSummary> = s.cells.iter().filter(|c| &c.cell.workload == w).collect();
        cells.sort_by_key(|c| levels.rank(&c.cell));
        let _ = writeln!(t, "\n## Workload {w}\n");
        let mut metrics: Vec<(&str, &str)> = Vec::new();
        for c in &cells {
            for m in c.headline_in_order() {
                if !metrics.contains(&m) {
                    metrics.push(m);
                }
            }
        }
        // A figure that is 0 everywhere (writes of a job that only reads) gets a line, not a column.
        let zero = |m: &str| cells.iter().all(|c| c.metrics.get(m).is_none_or(|x| x.mean == 0.0 && x.sd == 0.0));
        let zeros: Vec<&str> = metrics.iter().map(|(m, _)| *m).filter(|m| zero(m)).collect();
        metrics.retain(|(m, _)| !zeros.contains(m));
        let swept = super::experiment_iozone::drop_sweep_cells(&mut metrics);
        let heads: Vec<String> = metrics.iter().map(|(m, u)| format!("{m} ({u})")).collect();
        let header: Vec<&str> = vary.iter().copied().chain(["n"]).chain(heads.iter().map(String::as_str)).collect();
        let right: Vec<bool> = header.iter().enumerate().map(|(i, _)| i >= vary.len()).collect();
        let rows: Vec<Vec<String>> = cells
            .iter()
            .map(|c| {
                let n = if c.failed > 0 { format!("{} ({} FAILED)", c.runs, c.failed) } else { c.runs.to_string() };
                let figures = metrics.iter().map(|(m, _)| match c.metrics.get(*m) {
                    None => "–".to_string(),
                    Some(x) if x.n < 2 => format!("{} (n=1)", num(x.mean)),
                    Some(x) => format!("{} ({:.1}%)", pm(x.mean, x.sd), x.cv * 100.0),
                });
                vary.iter().map(|f| level(&c.cell, f).to_string()).chain([n]).chain(figures).collect()
            })
            .collect();
        let _ = writeln!(t, "mean ± sd (CV) per cell:\n");
        t += &table_padded(&header, &right, &rows, true);
        if !zeros.is_empty() {
            let _ = writeln!(t, "\n0 in every run: {}.", zeros.join(", "));
        }
        if swept {
            let _ = writeln!(t, "\nEach IOzone cell's figures: the IOzone tables above.");
        }
        for factor in &vary {
            let comps: Vec<&FactorComparison> = f.comparisons.iter().filter(|x| &x.workload == w && x.factor == *factor).collect();
            let Some(first) = comps.first() else { continue };
            let others: Vec<&str> = vary.iter().copied().filter(|x| x != factor).collect();
            let _ = writeln!(t, "\n### {factor}: against {}\n", first.baseline);
            let header: Vec<&str> = others.iter().copied().chain([*factor, "metric", "Δ% [95% CI]", "p", "p (Holm)", "test", ""]).collect();
            let right: Vec<bool> = header.iter().enumerate().map(|(i, _)| i > others.len() + 1 && i + 2 < header.len()).collect();
            let rows: Vec<Vec<String>> = comps
                .iter()
                .map(|x| {
                    let c = &x.comparison;
                    let [p, adj] = p_columns(c);
                    let verdict = match (&x.drift_veto, c.significant) {
                        (Some(_), _) => "drift: not significant",
                        (None, true) => "significant",
                        (None, false) => "–",
                    };
                    let test = if x.method == PAIRED { "paired by round" } else { "Welch" };
                    others
                        .iter()
                        .map(|o| level(&x.cell, o).to_string())
                        .chain([x.level.clone(), c.metric.clone(), delta(c), p, adj, test.into(), verdict.into()])
                        .collect()
                })
                .collect();
            t += &table_padded(&header, &right, &rows, true);
            // One sentence per context and level, on the lead metric.
            let lead = first.comparison.metric.clone();
            let _ = writeln!(t);
            for x in comps.iter().filter(|x| x.comparison.metric == lead) {
                let Some(line) = sentence(x) else { continue };
                let context: Vec<String> = others.iter().map(|o| format!("{o} {}", level(&x.cell, o))).collect();
                if context.is_empty() {
                    let _ = writeln!(t, "- {line}");
                } else {
                    let _ = writeln!(t, "- {}: {line}", context.join(", "));
                }
            }
        }
    }
    t += &super::design::section(s);
    if !s.warnings.is_empty() {
        let _ = writeln!(t, "\n## Warnings\n");
        for w in &s.warnings {
            let _ = writeln!(t, "- {w}");
        }
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

/// Write report.md, summary.json, summary.csv and charts/ into `out`.
pub fn write_all(out: &Path, s: &ExperimentSummary, runs: &[ExperimentRun]) -> Result<(), String> {
    let w = |p: &Path, text: &str| crate::environment::safety::write_output("the results directory's file", p, text.as_bytes());
    w(&out.join("report.md"), &super::experiment_iozone::lead(report(s), s, runs))?;
    w(&out.join("summary.json"), &serde_json::to_string_pretty(s).map_err(|e| e.to_string())?)?;
    w(&out.join("summary.csv"), &crate::report::export::csv::experiment(s))?;
    let dir = out.join("charts");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (name, svg) in charts(s, runs) {
        w(&dir.join(name), &svg)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::experiment::Cell;
    use crate::result::testutil::{job, op, run};

    /// A run of `[target, workload]` whose `[job, operation]` did `ops`
    /// operations of `bs` bytes each in `secs` seconds.
    fn sized([target, workload]: [&str; 2], repeat: u32, [name, dir]: [&str; 2], bs: u64, ops: u64, secs: f64) -> ExperimentRun {
        let mut j = job(name, (secs * 1e9) as u64, &[op(dir, ops, ops * bs, 1000)]);
        j.headline = j.op_headline();
        let cell = Cell { target: target.into(), workload: workload.into(), cache: "cold".into(), background: "none".into() };
        ExperimentRun {
            schema: crate::result::experiment::RUN_SCHEMA.into(),
            experiment: "bvf".into(),
            cell,
            repeat,
            target: Default::default(),
            cache: Default::default(),
            background: None,
            attribution: Default::default(),
            result: run(&[j], &[]),
            order: None,
        }
    }

    #[test]
    fn a_block_size_sweep_is_charted_as_one_line_per_target_and_direction() {
        let mut runs = Vec::new();
        for (target, speed) in [("raw", 1.0), ("ext2", 0.9)] {
            for (i, bs) in [4096u64, 65536, 1 << 20].into_iter().enumerate() {
                for repeat in 1..=2 {
                    let secs = (1.0 + i as f64) / speed * (1.0 + repeat as f64 / 100.0);
                    runs.push(sized([target, &format!("write-{bs}")], repeat, ["write", "write"], bs, (32 << 20) / bs, secs));
                    runs.push(sized([target, &format!("read-{bs}")], repeat, ["read", "read"], bs, (128 << 20) / bs, secs / 4.0));
                }
            }
            // One size only, of a job no other workload has: not a line.
            runs.push(sized([target, "fill"], 1, ["fill", "write"], 1 << 20, 128, 1.0));
        }
        let mut s = crate::stats::experiment::summarize_experiment("bvf", &runs, runs.len());
        let mut workloads = vec!["fill".to_string()];
        for dir in ["write", "read"] {
            workloads.extend([4096u64, 65536, 1 << 20].iter().map(|bs| format!("{dir}-{bs}")));
        }
        s.order_levels(Levels {
            target: vec!["raw".into(), "ext2".into()],
            workload: workloads,
            cache: vec!["cold".into()],
            background: vec!["none".into()],
        });
        let svg = by_io_size(&s, &runs).expect("a sweep is charted");
        crate::report::chart::tests::check_xml(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        assert_eq!(svg.matches("<polyline").count(), 4, "raw and ext2, write and read");
        // The legend in the file's order: targets within workloads, writes first.
        let at = |name: &str| svg.find(&format!(">{name}</text>")).unwrap_or_else(|| panic!("no line {name}"));
        assert!(at("raw / write") < at("ext2 / write") && at("ext2 / write") < at("raw / read") && at("raw / read") < at("ext2 / read"));
        assert!(!svg.contains("/ fill<"), "a single size is no line");
        for label in [">4k<", ">64k<", ">1M<"] {
            assert!(svg.contains(label), "no tick {label}");
        }
        assert_eq!(svg.matches("<circle").count(), 12);
        assert!(charts(&s, &runs).iter().any(|(name, _)| name == "bw_MiB_s_by_io_size.svg"));

        // Two workloads of one line at one size cannot both be placed: that line is left out.
        let mut twice = runs.clone();
        twice.push(sized(["raw", "write-4096-again"], 1, ["write", "write"], 4096, 8192, 2.0));
        let s = crate::stats::experiment::summarize_experiment("bvf", &twice, twice.len());
        let svg = by_io_size(&s, &twice).unwrap();
        assert_eq!(svg.matches("<polyline").count(), 3);
        assert!(!svg.contains(">raw / write</text>"));
    }

    #[test]
    fn workloads_that_do_not_sweep_a_size_get_no_size_chart() {
        let runs: Vec<ExperimentRun> = ["a", "b"]
            .iter()
            .map(|t| sized([t, "w"], 1, ["w", "write"], 4096, 100, 1.0))
            .chain([sized(["a", "r"], 1, ["r", "read"], 65536, 10, 1.0)])
            .collect();
        let s = crate::stats::experiment::summarize_experiment("x", &runs, runs.len());
        assert!(by_io_size(&s, &runs).is_none());
        assert_eq!(io_size_label(512.0), "512");
        assert_eq!(io_size_label(1536.0), "1.5k");
        assert_eq!(io_size_label(16.0 * 1048576.0), "16M");
        assert_eq!(io_size_label(2.0 * 1073741824.0), "2G");
    }
}
