//! What an experiment's reader came for: for each workload and each factor
//! the matrix varies (target, cache scenario, background load), every other
//! level of the factor against its first (the baseline, in the experiment
//! file's order; for a workload that runs on some targets only, the first
//! of those), the other factors held fixed, on each headline metric:
//! the relative difference of the means with its 95% interval (Fieller),
//! Welch's p-value, and that p-value adjusted (Holm) over every comparison
//! of the experiment. Workloads are not compared with each other: their
//! metrics differ.
//!
//! A metric that is 0 in every run of both cells is not compared. Only cell
//! summaries are needed (counts, means, standard deviations), so
//! the comparisons can be redone from `summary.json` alone.

use super::compare::{adjust, welch_summaries, Comparison, CORRECTION};
use super::design::{drift, pair, veto_reason, Drift, PAIRED, WELCH};
use super::experiment::CellSummary;
use crate::model::experiment::Experiment;
use crate::model::experiment::Order;
use crate::result::experiment::Cell;
use serde::{Deserialize, Serialize};

/// The factors compared level by level (the workload is not one of them).
pub const FACTORS: [&str; 3] = ["target", "cache", "background"];

/// How the interval of a relative difference is computed, for the reports.
pub const INTERVAL: &str = "fieller";

/// Each factor's levels in the experiment file's order; the first is the
/// baseline the others are compared with.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Levels {
    pub target: Vec<String>,
    pub workload: Vec<String>,
    pub cache: Vec<String>,
    pub background: Vec<String>,
}

impl Levels {
    /// The levels as the experiment lists them (the cell labels the runner
    /// gives them: a cache scenario's label, "none" for no background load).
    pub fn of(exp: &Experiment) -> Levels {
        Levels {
            target: exp.targets.iter().map(|t| t.label.clone()).collect(),
            workload: exp.workloads.iter().map(|w| w.label.clone()).collect(),
            cache: exp.caches.iter().map(|c| c.label()).collect(),
            background: exp.backgrounds.iter().map(|b| b.as_ref().map_or_else(|| "none".to_string(), |b| b.label.clone())).collect(),
        }
    }

    /// The levels present in `cells`, sorted: for summaries read without
    /// their experiment file.
    pub fn of_cells(cells: &[CellSummary]) -> Levels {
        let sorted = |f: &dyn Fn(&Cell) -> &String| {
            let mut v: Vec<String> = cells.iter().map(|c| f(&c.cell).clone()).collect();
            v.sort();
            v.dedup();
            v
        };
        Levels {
            target: sorted(&|c| &c.target),
            workload: sorted(&|c| &c.workload),
            cache: sorted(&|c| &c.cache),
            background: sorted(&|c| &c.background),
        }
    }

    /// Only the levels some cell has (an interrupted experiment may lack some).
    fn present(mut self, cells: &[CellSummary]) -> Levels {
        for f in ["target", "workload", "cache", "background"] {
            let v = self.get_mut(f);
            v.retain(|l| cells.iter().any(|c| level(&c.cell, f) == l));
        }
        self
    }

    pub fn get(&self, factor: &str) -> &[String] {
        match factor {
            "target" => &self.target,
            "workload" => &self.workload,
            "cache" => &self.cache,
            _ => &self.background,
        }
    }

    fn get_mut(&mut self, factor: &str) -> &mut Vec<String> {
        match factor {
            "target" => &mut self.target,
            "workload" => &mut self.workload,
            "cache" => &mut self.cache,
            _ => &mut self.background,
        }
    }

    /// A cell's position in the experiment's order (workload first).
    pub fn rank(&self, c: &Cell) -> [usize; 4] {
        let at = |f: &str| self.get(f).iter().position(|l| *l == level(c, f)).unwrap_or(usize::MAX);
        [at("workload"), at("target"), at("cache"), at("background")]
    }
}

/// A cell's level of `factor`.
pub fn level<'a>(c: &'a Cell, factor: &str) -> &'a str {
    match factor {
        "target" => &c.target,
        "workload" => &c.workload,
        "cache" => &c.cache,
        _ => &c.background,
    }
}

/// `c` with its level of `factor` replaced.
fn with_level(c: &Cell, factor: &str, l: &str) -> Cell {
    let mut c = c.clone();
    match factor {
        "target" => c.target = l.into(),
        "workload" => c.workload = l.into(),
        "cache" => c.cache = l.into(),
        _ => c.background = l.into(),
    }
    c
}

/// One level of a factor against the baseline level, in one context (the
/// other factors' levels), on one headline metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactorComparison {
    pub workload: String,
    pub factor: String,
    pub baseline: String,
    pub level: String,
    /// The baseline's cell (A) and the compared cell (B): they differ in
    /// `factor` only.
    pub baseline_cell: Cell,
    pub cell: Cell,
    pub unit: String,
    /// B against A: `comparison.a` is the baseline.
    pub comparison: Comparison,
    /// `paired by round` (interleaved runs, per-round log ratios) or
    /// `welch` (independent sides).
    #[serde(default = "welch_method")]
    pub method: String,
    /// The drift checks; absent from older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift: Option<Drift>,
    /// Why a difference whose p-value is below 0.05 after Holm is not
    /// called significant: drift explains it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_veto: Option<String>,
}

fn welch_method() -> String {
    WELCH.into()
}

/// Every comparison of an experiment, adjusted together.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FactorReport {
    /// The levels in the order used; the first of each is the baseline.
    pub levels: Levels,
    /// Comparisons tested (two or more runs on each side): the family the
    /// p-values are adjusted over.
    pub tests: usize,
    /// `holm`.
    pub correction: String,
    /// How the interval of the relative difference is computed (`fieller`).
    pub interval: String,
    pub comparisons: Vec<FactorComparison>,
}

/// Compare the levels of every factor that varies, per workload, on the
/// baseline cell's headline metrics.
pub fn compare_factors(cells: &[CellSummary], levels: Levels, order: Option<Order>) -> FactorReport {
    let levels = levels.present(cells);
    let mut ordered: Vec<&CellSummary> = cells.iter().collect();
    ordered.sort_by_key(|c| levels.rank(&c.cell));
    let mut out = Vec::new();
    for factor in FACTORS {
        let lv = levels.get(factor);
        for c in ordered.iter() {
            // The baseline is the first level this context has: a workload
            // that runs on some targets only (`targets = [...]`) is compared
            // on those, against the first of them, and a cell the matrix
            // does not have is neither a baseline nor missing.
            let here: Vec<&String> = lv.iter().filter(|l| cells.iter().any(|x| x.cell == with_level(&c.cell, factor, l))).collect();
            let Some((base, rest)) = here.split_first() else { continue };
            if level(&c.cell, factor) != base.as_str() {
                continue;
            }
            for l in rest {
                let want = with_level(&c.cell, factor, l);
                let Some(o) = cells.iter().find(|x| x.cell == want) else { continue };
                for (metric, unit) in c.headline_in_order() {
                    let (Some(sa), Some(sb)) = (c.metrics.get(metric), o.metrics.get(metric)) else { continue };
                    if [sa, sb].iter().all(|x| x.mean == 0.0 && x.sd == 0.0) {
                        // 0 against 0 (a write figure of a job that only reads): nothing to test.
                        continue;
                    }
                    let welch = welch_summaries(metric, sa, sb);
                    let paired = pair(&welch, c, o, order);
                    out.push(FactorComparison {
                        method: if paired.is_some() { PAIRED } else { WELCH }.into(),
                        drift: Some(drift(c, o, metric)),
                        drift_veto: None,
                        workload: c.cell.workload.clone(),
                        factor: factor.into(),
                        baseline: (*base).clone(),
                        level: (*l).clone(),
                        baseline_cell: c.cell.clone(),
                        cell: o.cell.clone(),
                        unit: unit.to_string(),
                        comparison: paired.unwrap_or(welch),
                    });
                }
            }
        }
    }
    // Per workload, then factor, in the experiment's order.
    out.sort_by_key(|f| levels.rank(&f.baseline_cell)[0]);
    let tests = adjust(out.iter_mut().map(|f| &mut f.comparison));
    for f in out.iter_mut().filter(|f| f.comparison.significant) {
        if let Some(why) = f.drift.as_ref().and_then(|d| veto_reason(d, order, &f.factor)) {
            f.comparison.significant = false;
            f.drift_veto = Some(why);
        }
    }
    FactorReport { levels, tests, correction: CORRECTION.into(), interval: INTERVAL.into(), comparisons: out }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::summary::summarize;
    use std::collections::BTreeMap;

    fn cell(target: &str, background: &str, ops: &[f64]) -> CellSummary {
        let c = Cell { target: target.into(), workload: "w".into(), cache: "warm".into(), background: background.into() };
        let metrics = BTreeMap::from([("w/ops_s".to_string(), summarize(ops)), ("w/other".to_string(), summarize(ops))]);
        let headline = BTreeMap::from([("w/ops_s".to_string(), "ops/s".to_string())]);
        CellSummary {
            cell: c,
            runs: ops.len(),
            failed: 0,
            metrics,
            headline,
            headline_order: vec!["w/ops_s".into()],
            by_round: Default::default(),
            loads: Vec::new(),
        }
    }

    #[test]
    fn each_level_against_the_first_with_the_others_fixed() {
        let cells = vec![
            cell("ext4", "none", &[100.0, 101.0, 99.0]),
            cell("ext4", "files", &[80.0, 81.0, 79.0]),
            cell("xfs", "none", &[100.0, 102.0, 98.0]),
            cell("xfs", "files", &[100.0, 101.0, 99.0]),
        ];
        let levels = Levels {
            target: vec!["xfs".into(), "ext4".into()],
            workload: vec!["w".into()],
            cache: vec!["warm".into(), "cold".into()],
            background: vec!["none".into(), "files".into()],
        };
        let r = compare_factors(&cells, levels, None);
        assert_eq!(r.levels.cache, ["warm"], "levels no cell has are dropped");
        // target: ext4 vs xfs under none and under files; background: files vs none on xfs and on ext4.
        let got: Vec<(String, String, String, String)> =
            r.comparisons.iter().map(|f| (f.factor.clone(), f.level.clone(), f.baseline.clone(), f.cell.key())).collect();
        assert_eq!(
            got,
            [
                ("target".into(), "ext4".into(), "xfs".into(), "ext4__w__warm__none".into()),
                ("target".into(), "ext4".into(), "xfs".into(), "ext4__w__warm__files".into()),
                ("background".into(), "files".into(), "none".into(), "xfs__w__warm__files".into()),
                ("background".into(), "files".into(), "none".into(), "ext4__w__warm__files".into()),
            ]
        );
        assert_eq!(r.tests, 4, "headline metrics only");
        assert_eq!(r.correction, "holm");
        let slower = &r.comparisons[3].comparison;
        assert!((slower.rel_diff + 0.2).abs() < 1e-9 && slower.significant, "{slower:?}");
        assert!(slower.p_adjusted > slower.p_value);
        let same = &r.comparisons[2].comparison;
        assert!(!same.significant);
    }

    #[test]
    fn a_workload_on_some_targets_is_compared_against_the_first_it_runs_on() {
        let on = |target: &str, workload: &str, ops: &[f64]| {
            let mut c = cell(target, "none", ops);
            c.cell.workload = workload.into();
            c
        };
        // "sweep" runs on raw and ext2, "survey" on ext2 and xfs only.
        let cells = vec![
            on("raw", "sweep", &[100.0, 101.0, 99.0]),
            on("ext2", "sweep", &[90.0, 91.0, 89.0]),
            on("ext2", "survey", &[50.0, 51.0, 49.0]),
            on("xfs", "survey", &[60.0, 61.0, 59.0]),
        ];
        let levels = Levels {
            target: vec!["raw".into(), "ext2".into(), "xfs".into()],
            workload: vec!["sweep".into(), "survey".into()],
            cache: vec!["warm".into()],
            background: vec!["none".into()],
        };
        let r = compare_factors(&cells, levels, None);
        let got: Vec<(&str, &str, &str)> =
            r.comparisons.iter().map(|f| (f.workload.as_str(), f.baseline.as_str(), f.level.as_str())).collect();
        assert_eq!(got, [("sweep", "raw", "ext2"), ("survey", "ext2", "xfs")]);
        assert_eq!(r.tests, 2);
    }

    #[test]
    fn without_the_experiment_levels_are_sorted() {
        let cells = vec![cell("b", "none", &[1.0, 2.0]), cell("a", "none", &[1.0, 2.0])];
        let r = compare_factors(&cells, Levels::of_cells(&cells), None);
        assert_eq!(r.levels.target, ["a", "b"]);
        assert_eq!(r.comparisons.len(), 1);
        assert_eq!(r.comparisons[0].baseline, "a");
    }
}
