//! What the experiment's design means for its comparisons. Interleaved
//! runs pair: round r ran repeat r of both cells of a comparison close
//! together, so the per-round log ratio B/A takes out whatever drifted
//! between rounds, and a one-sample t-test on those logs is the test
//! (`pair`). Then the drift checks (`veto`): a trend of the baseline cell's
//! figure over its runs' positions (least squares, t-test on the slope),
//! and the two sides' runs seeing a different machine load (other
//! processes' CPU share, Welch; or a 1-minute loadavg half again higher).
//! A difference called significant is not, when the load differed between
//! its sides, or when the baseline drifted in a sequential design (where
//! the sides ran at different times): the report says why.

use super::compare::{welch, Comparison, ALPHA};
use super::experiment::CellSummary;
use super::summary::{summarize, t_crit_95, t_two_sided_p};
use crate::model::experiment::Order;
use crate::result::experiment::{ExperimentRun, RunOrder};
use serde::{Deserialize, Serialize};

/// A headline figure of one run, with its place in the schedule.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoundValue {
    pub round: u32,
    /// Index in the schedule; `None` for a run recorded before orders existed.
    pub position: Option<usize>,
    pub value: f64,
}

/// The machine's load during one run of a cell.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunLoad {
    pub round: u32,
    pub position: usize,
    pub load1_start: f64,
    pub load1_end: f64,
    pub others_cpu_pct: Option<f64>,
    /// Mean runnable tasks on the machine during the run.
    #[serde(default)]
    pub runnable: Option<f64>,
}

/// The design of the experiment and the load it ran under.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Design {
    /// `None` when not known (a summary made without its experiment).
    pub order: Option<Order>,
    pub seed: Option<u64>,
    /// The largest round with a run.
    pub rounds: u32,
    /// Over every run: the 1-minute loadavg at its start and end, and
    /// others' CPU share, lowest and highest.
    pub load1: Option<(f64, f64)>,
    pub others_cpu_pct: Option<(f64, f64)>,
    /// Mean runnable tasks during a run, lowest and highest.
    #[serde(default)]
    pub runnable: Option<(f64, f64)>,
}

impl Design {
    /// Rounds and load range of `runs` (failed ones included: they ran
    /// under the same load); the order is the caller's (`set_design`).
    pub fn of_runs(runs: &[ExperimentRun]) -> Design {
        let orders: Vec<&RunOrder> = runs.iter().filter_map(|r| r.order.as_ref()).collect();
        let range = |v: Vec<f64>| -> Option<(f64, f64)> {
            (!v.is_empty()).then(|| (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max)))
        };
        Design {
            order: None,
            seed: None,
            rounds: orders.iter().map(|o| o.round).max().unwrap_or(0),
            load1: range(orders.iter().flat_map(|o| [o.load_start.load1, o.load_end.load1]).collect()),
            others_cpu_pct: range(orders.iter().filter_map(|o| o.others_cpu_pct).collect()),
            runnable: range(orders.iter().filter_map(|o| o.runnable).collect()),
        }
    }
}

/// The drift checks of one comparison.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Drift {
    /// The baseline cell's figure against its runs' positions: slope per
    /// run of the schedule, relative to its mean, and the slope's p-value.
    pub trend_rel_per_run: Option<f64>,
    pub trend_p: Option<f64>,
    /// Mean others' CPU share (%) during A's and B's runs, and Welch's p.
    pub others_cpu_a: Option<f64>,
    pub others_cpu_b: Option<f64>,
    pub others_cpu_p: Option<f64>,
    /// Mean runnable tasks during A's and B's runs, and Welch's p.
    #[serde(default)]
    pub runnable_a: Option<f64>,
    #[serde(default)]
    pub runnable_b: Option<f64>,
    #[serde(default)]
    pub runnable_p: Option<f64>,
    /// Mean 1-minute loadavg at the start of A's and B's runs.
    pub load1_a: Option<f64>,
    pub load1_b: Option<f64>,
}

/// The method of a paired comparison, as the reports name it.
pub const PAIRED: &str = "paired by round";
pub const WELCH: &str = "welch";

/// Others' CPU share differs between the sides by at least this many
/// percentage points (and significantly) for the load to count as changed.
const CPU_POINTS: f64 = 5.0;

/// The mean runnable tasks differ between the sides by at least this many
/// (and significantly) for the load to count as changed.
const RUNNABLE_TASKS: f64 = 1.0;

/// The paired test of `metric` between `a` and `b`, when the design is
/// interleaved and both have positive values in two or more common
/// rounds; `welch` (the unpaired test) keeps its summaries and difference.
pub fn pair(welch: &Comparison, a: &CellSummary, b: &CellSummary, order: Option<Order>) -> Option<Comparison> {
    if order != Some(Order::Interleaved) {
        return None;
    }
    let (va, vb) = (a.by_round.get(&welch.metric)?, b.by_round.get(&welch.metric)?);
    let logs: Vec<f64> = va
        .iter()
        .filter_map(|x| vb.iter().find(|y| y.round == x.round).map(|y| (x.value, y.value)))
        .filter(|(x, y)| *x > 0.0 && *y > 0.0)
        .map(|(x, y)| (y / x).ln())
        .collect();
    if logs.len() < 2 {
        return None;
    }
    let s = summarize(&logs);
    let n = logs.len() as f64;
    let se = s.sd / n.sqrt();
    let mut c = welch.clone();
    c.df = n - 1.0;
    c.rel_diff = s.mean.exp() - 1.0;
    if se == 0.0 {
        c.welch_t = 0.0;
        c.p_value = if s.mean == 0.0 { 1.0 } else { 0.0 };
        c.rel_ci_low = c.rel_diff;
        c.rel_ci_high = c.rel_diff;
    } else {
        // Signed as Welch's (A − B): positive when B is lower.
        let t = s.mean / se;
        c.welch_t = -t;
        c.p_value = t_two_sided_p(t, c.df).unwrap_or(1.0);
        let tc = t_crit_95(c.df).unwrap_or(0.0);
        c.rel_ci_low = (s.mean - tc * se).exp() - 1.0;
        c.rel_ci_high = (s.mean + tc * se).exp() - 1.0;
    }
    c.p_adjusted = c.p_value;
    c.significant = c.p_value < ALPHA;
    c.note = Some(format!("paired by round over {} rounds (log ratio B/A)", logs.len()));
    Some(c)
}

/// Least-squares slope of `(x, y)` and its two-sided p-value; `None` with
/// fewer than 3 points or no spread in x.
pub fn trend(points: &[(f64, f64)]) -> Option<(f64, f64)> {
    let n = points.len() as f64;
    if points.len() < 3 {
        return None;
    }
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if sxx == 0.0 {
        return None;
    }
    let slope = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / sxx;
    let rss: f64 = points.iter().map(|p| (p.1 - my - slope * (p.0 - mx)).powi(2)).sum();
    let se = (rss / (n - 2.0) / sxx).sqrt();
    let p = if se == 0.0 {
        if slope == 0.0 {
            1.0
        } else {
            0.0
        }
    } else {
        t_two_sided_p(slope / se, n - 2.0).unwrap_or(1.0)
    };
    Some((slope, p))
}

/// The baseline cell's trend of `metric` over its runs' positions:
/// (slope relative to the mean per run, p).
pub fn baseline_trend(a: &CellSummary, metric: &str) -> Option<(f64, f64)> {
    let points: Vec<(f64, f64)> = a.by_round.get(metric)?.iter().filter_map(|v| v.position.map(|p| (p as f64, v.value))).collect();
    let mean = points.iter().map(|p| p.1).sum::<f64>() / points.len().max(1) as f64;
    let (slope, p) = trend(&points)?;
    Some((if mean == 0.0 { 0.0 } else { slope / mean }, p))
}

/// The drift checks of a comparison of `metric` between cells `a` and `b`.
pub fn drift(a: &CellSummary, b: &CellSummary, metric: &str) -> Drift {
    let (trend_rel_per_run, trend_p) = baseline_trend(a, metric).map_or((None, None), |(s, p)| (Some(s), Some(p)));
    let every = |c: &CellSummary, f: fn(&RunLoad) -> Option<f64>| -> Option<Vec<f64>> {
        let v: Vec<f64> = c.loads.iter().filter_map(f).collect();
        (!v.is_empty() && v.len() == c.loads.len()).then_some(v)
    };
    let cpu = |c: &CellSummary| every(c, |l| l.others_cpu_pct);
    let runnable = |c: &CellSummary| every(c, |l| l.runnable);
    let welch_p = |x: &Option<Vec<f64>>, y: &Option<Vec<f64>>| match (x, y) {
        (Some(x), Some(y)) if x.len() >= 2 && y.len() >= 2 => Some(welch("load", x, y).p_value),
        _ => None,
    };
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let load1 = |c: &CellSummary| (!c.loads.is_empty()).then(|| mean(&c.loads.iter().map(|l| l.load1_start).collect::<Vec<_>>()));
    let (ca, cb) = (cpu(a), cpu(b));
    let (ra, rb) = (runnable(a), runnable(b));
    Drift {
        trend_rel_per_run,
        trend_p,
        others_cpu_a: ca.as_deref().map(mean),
        others_cpu_b: cb.as_deref().map(mean),
        others_cpu_p: welch_p(&ca, &cb),
        runnable_a: ra.as_deref().map(mean),
        runnable_b: rb.as_deref().map(mean),
        runnable_p: welch_p(&ra, &rb),
        load1_a: load1(a),
        load1_b: load1(b),
    }
}

/// Why a significant difference is not called one, if drift explains it.
/// `background` comparisons leave the load check out: the background load
/// is itself load on the machine.
pub fn veto_reason(d: &Drift, order: Option<Order>, factor: &str) -> Option<String> {
    if factor != "background" {
        if let (Some(a), Some(b), Some(p)) = (d.runnable_a, d.runnable_b, d.runnable_p) {
            if p < ALPHA && (a - b).abs() >= RUNNABLE_TASKS {
                return Some(format!(
                    "the machine's load differed between the sides: {a:.1} tasks were runnable on average during A's runs, {b:.1} during B's (Welch p {p:.1e})"
                ));
            }
        }
        if let (Some(a), Some(b), Some(p)) = (d.others_cpu_a, d.others_cpu_b, d.others_cpu_p) {
            if p < ALPHA && (a - b).abs() >= CPU_POINTS {
                return Some(format!(
                    "the machine's load differed between the sides: other processes used {a:.0}% of the CPUs during A's runs, {b:.0}% during B's (Welch p {p:.1e})"
                ));
            }
        }
        if let (Some(a), Some(b)) = (d.load1_a, d.load1_b) {
            if a.max(b) >= 1.0 && a.max(b) > 1.5 * a.min(b) {
                return Some(format!("the machine's load differed between the sides: loadavg {a:.2} at A's runs, {b:.2} at B's"));
            }
        }
    }
    if order != Some(Order::Interleaved) {
        if let (Some(s), Some(p)) = (d.trend_rel_per_run, d.trend_p) {
            if p < ALPHA {
                return Some(format!(
                    "the baseline drifted over the experiment ({:+.1}% per run, p {p:.1e}) and the design is sequential: the sides ran at different times",
                    s * 100.0
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::experiment::Cell;
    use std::collections::BTreeMap;

    fn cell(target: &str, values: &[f64], cpu: &[f64], first_position: usize) -> CellSummary {
        let m = "w/read/iops".to_string();
        let by_round = values
            .iter()
            .enumerate()
            .map(|(i, v)| RoundValue { round: i as u32 + 1, position: Some(first_position + 2 * i), value: *v })
            .collect();
        let loads = cpu
            .iter()
            .enumerate()
            .map(|(i, c)| RunLoad {
                round: i as u32 + 1,
                position: first_position + 2 * i,
                load1_start: 1.0,
                load1_end: 1.0,
                others_cpu_pct: Some(*c),
                runnable: Some(2.0),
            })
            .collect();
        CellSummary {
            cell: Cell { target: target.into(), workload: "w".into(), cache: "warm".into(), background: "none".into() },
            runs: values.len(),
            failed: 0,
            metrics: BTreeMap::from([(m.clone(), summarize(values))]),
            headline: BTreeMap::from([(m.clone(), "IOPS".into())]),
            headline_order: vec![m.clone()],
            by_round: BTreeMap::from([(m, by_round)]),
            loads,
        }
    }

    #[test]
    fn pairing_by_round_takes_out_what_drifted_between_rounds() {
        // Both cells fall by half over the rounds; B is 2% above A in every round.
        let a = [1000.0, 800.0, 600.0, 500.0];
        let b: Vec<f64> = a.iter().zip([1.021, 1.019, 1.020, 1.02]).map(|(x, f)| x * f).collect();
        let (ca, cb) = (cell("a", &a, &[5.0; 4], 0), cell("b", &b, &[5.0; 4], 1));
        let w = welch("w/read/iops", &a, &b);
        assert!(w.p_value > 0.5, "unpaired, the drift hides it: {w:?}");
        let p = pair(&w, &ca, &cb, Some(Order::Interleaved)).expect("paired");
        assert!(p.p_value < 0.001 && (p.rel_diff - 0.02).abs() < 0.001, "{p:?}");
        assert!(p.rel_ci_low < 0.02 && p.rel_ci_high > 0.02);
        assert!(pair(&w, &ca, &cb, Some(Order::Sequential)).is_none(), "sequential rounds do not pair");
    }

    #[test]
    fn trend_finds_a_slope_and_not_noise() {
        let (s, p) = trend(&[(0.0, 10.0), (1.0, 12.1), (2.0, 13.9), (3.0, 16.0), (4.0, 18.1)]).unwrap();
        assert!((s - 2.0).abs() < 0.1 && p < 0.001, "{s} {p}");
        let (_, p) = trend(&[(0.0, 10.0), (1.0, 11.0), (2.0, 9.0), (3.0, 10.5), (4.0, 9.5)]).unwrap();
        assert!(p > 0.3, "{p}");
        assert!(trend(&[(0.0, 1.0), (1.0, 2.0)]).is_none());
    }

    #[test]
    fn a_load_that_differs_between_the_sides_vetoes_and_the_background_factor_is_exempt() {
        let a = cell("a", &[500.0, 510.0, 490.0, 505.0], &[80.0, 82.0, 79.0, 81.0], 0);
        let b = cell("b", &[1000.0, 1010.0, 990.0, 1005.0], &[3.0, 5.0, 2.0, 4.0], 4);
        let d = drift(&a, &b, "w/read/iops");
        let why = veto_reason(&d, Some(Order::Sequential), "target").expect("vetoed");
        assert!(why.contains("load differed") && why.contains("80%"), "{why}");
        assert!(veto_reason(&d, Some(Order::Sequential), "background").is_none());
        let mut busy = cell("b", &[1000.0, 1010.0, 990.0, 1005.0], &[80.0, 79.0, 81.0, 82.0], 4);
        for (l, r) in a.loads.clone().iter().zip(&mut busy.loads) {
            r.runnable = Some(l.runnable.unwrap() + 3.0 + r.position as f64 * 0.01);
        }
        let why = veto_reason(&drift(&a, &busy, "w/read/iops"), Some(Order::Interleaved), "target").expect("runnable tasks differ");
        assert!(why.contains("tasks were runnable"), "{why}");
        let calm = cell("b", &[1000.0, 1010.0, 990.0, 1005.0], &[80.0, 79.0, 81.0, 82.0], 4);
        assert!(veto_reason(&drift(&a, &calm, "w/read/iops"), Some(Order::Sequential), "target").is_none());
    }

    #[test]
    fn a_drifting_baseline_vetoes_only_a_sequential_design() {
        let a = cell("a", &[1000.0, 900.0, 800.0, 700.0, 600.0], &[5.0; 5], 0);
        let b = cell("b", &[500.0, 505.0, 495.0, 500.0, 502.0], &[5.0; 5], 5);
        let d = drift(&a, &b, "w/read/iops");
        assert!(d.trend_p.unwrap() < 0.01 && d.trend_rel_per_run.unwrap() < 0.0, "{d:?}");
        assert!(veto_reason(&d, Some(Order::Sequential), "target").unwrap().contains("sequential"));
        assert!(veto_reason(&d, Some(Order::Interleaved), "target").is_none());
    }
}
