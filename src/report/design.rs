//! The `## Design and drift` section of an experiment's report: the order
//! the runs were done in and how to run that order again, the machine's
//! load over the experiment, each workload's baseline trend, and every
//! difference the drift checks kept from being called significant.

use super::format::p_value;
use crate::model::experiment::Order;
use crate::stats::design::baseline_trend;
use crate::stats::experiment::ExperimentSummary;
use crate::stats::factors::Levels;
use std::fmt::Write;

pub fn section(s: &ExperimentSummary) -> String {
    let d = &s.design;
    let mut t = String::new();
    let _ = writeln!(t, "\n## Design and drift\n");
    match (d.order, d.seed) {
        (Some(Order::Interleaved), Some(seed)) => {
            let _ = writeln!(
                t,
                "Order: interleaved, seed {seed}: round r ran repeat r of every cell, each workload's cells in an order shuffled per round \
                 ({} rounds); the same order again: `--seed {seed}`. Comparisons are paired by round (the per-round ratio B/A, a t-test on its logs).",
                d.rounds
            );
        }
        (Some(Order::Sequential), _) => {
            let _ = writeln!(
                t,
                "Order: sequential: every run of one target, then the next ({} rounds). A load that changed between the targets' runs shows as a difference; \
                 comparisons use Welch's test, and a drifting baseline keeps a difference from being called significant. \
                 `order = \"interleaved\"` (the default) runs the cells side by side.",
                d.rounds
            );
        }
        _ => {
            let _ = writeln!(t, "Order: not recorded (runs from before orders existed); comparisons use Welch's test.");
        }
    }
    match (d.load1, d.others_cpu_pct) {
        (Some((lo, hi)), cpu) => {
            let cpu = cpu.map_or(String::new(), |(a, b)| format!("; other processes' share of the CPUs during a run {a:.0}–{b:.0}%"));
            let runnable = d.runnable.map_or(String::new(), |(a, b)| format!("; runnable tasks, mean over a run, {a:.1}–{b:.1}"));
            let _ = writeln!(t, "\nLoad over the experiment: 1-minute loadavg {lo:.2}–{hi:.2}{cpu}{runnable}.");
        }
        (None, _) => {
            let _ = writeln!(t, "\nLoad over the experiment: not recorded.");
        }
    }
    let levels = if s.factors.levels == Levels::default() { Levels::of_cells(&s.cells) } else { s.factors.levels.clone() };
    let mut trends = Vec::new();
    for w in &levels.workload {
        // The baseline cell: the first level of every factor.
        let Some(base) = s.cells.iter().filter(|c| &c.cell.workload == w).min_by_key(|c| levels.rank(&c.cell)) else { continue };
        let Some((metric, _)) = base.headline_in_order().into_iter().next() else { continue };
        if let Some((slope, p)) = baseline_trend(base, metric) {
            let flag = if p < 0.05 { " — drifts" } else { "" };
            trends.push(format!("- {w}: {} {metric}: {:+.2}% per run of the schedule, p {p:.2}{flag}", base.cell.key(), slope * 100.0));
        }
    }
    if !trends.is_empty() {
        let _ = writeln!(t, "\nBaseline trend (each workload's first cell, its lead figure against its runs' places in the schedule):\n");
        for l in trends {
            let _ = writeln!(t, "{l}");
        }
    }
    let vetoed: Vec<_> = s.factors.comparisons.iter().filter_map(|f| f.drift_veto.as_ref().map(|why| (f, why))).collect();
    if vetoed.is_empty() {
        let _ = writeln!(t, "\nNo difference was set aside for drift.");
    } else {
        let _ = writeln!(t, "\nNot called significant, though p (Holm) < 0.05, because drift explains it:\n");
        for (f, why) in vetoed {
            let _ = writeln!(
                t,
                "- {} {}: {} against {} on {}, Δ {:+.1}%, p (Holm) {}: {why}",
                f.workload,
                f.factor,
                f.level,
                f.baseline,
                f.comparison.metric,
                f.comparison.rel_diff * 100.0,
                p_value(f.comparison.p_adjusted)
            );
        }
    }
    t
}
