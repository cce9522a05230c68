//! Two sets of repetitions of one metric compared: the relative difference
//! of the means with its 95% confidence interval, and Welch's t-test (which
//! does not assume equal variances); and many such comparisons made at once,
//! with their p-values adjusted for the number of tests (Holm).
//!
//! With `v_a = s_a²/n_a`, `v_b = s_b²/n_b` and `se = √(v_a + v_b)`:
//!
//! * `welch_t = (mean_a − mean_b) / se`
//! * `df = se⁴ / (v_a²/(n_a−1) + v_b²/(n_b−1))` (Welch–Satterthwaite)
//! * `p_value = 2·(1 − F_t(|welch_t|; df))`, two-sided
//! * `rel_diff = mean_b/mean_a − 1`, and its interval from Fieller's
//!   interval of the ratio `mean_b/mean_a` with `t = t(0.975, df)` and
//!   `g = t²·v_a/mean_a²`: `(r ± (t/mean_a)·√(v_b + r²·v_a − g·v_b)) / (1 − g)`
//!   with `r = mean_b/mean_a`. Unlike dividing the interval of the difference
//!   by `mean_a`, this counts A's own uncertainty. When `g ≥ 1` (A's mean is
//!   not clearly away from 0) Fieller's interval is unbounded; then the
//!   difference's interval over `mean_a` is given instead, with a note. When
//!   every value is non-negative (all the metrics fsbench produces) the lower
//!   end stops at −100%, since B's mean cannot be below 0.
//! * `p_adjusted`: Holm's step-down adjustment over the comparisons tested
//!   together (those with at least two values per side); `significant` is
//!   `p_adjusted < 0.05`. One comparison alone keeps its p-value.
//!
//! Degenerate cases never produce NaN or infinity (so the JSON stays plain
//! numbers); `note` says what happened:
//!
//! * a side with fewer than 2 values has no spread: `welch_t = 0`, `df = 0`,
//!   `p_value = 1`, not tested, not significant, and the interval is just `[rel_diff, rel_diff]`;
//! * both sides without variance (every value equal on each side): if the means are
//!   equal, `p_value = 1`; if they differ, the difference is exact: `p_value = 0`,
//!   significant, `welch_t = 0` (it would be infinite), `df = n_a + n_b − 2`;
//! * `mean_a = 0`: the relative figures are undefined and reported as 0
//!   (the absolute difference `diff` is still there).

use super::metrics::{collect, CV_WARN};
use super::summary::{summarize, t_crit_95, t_two_sided_p, Summary};
use crate::result::warning::{few, Code, Warning};
use crate::result::RunResult;
use serde::{Deserialize, Serialize};

/// Level below which an (adjusted) p-value is called significant.
pub const ALPHA: f64 = 0.05;

/// Schema of the document `fsbench compare --output-format=json` writes.
pub const COMPARISON_SCHEMA: &str = "fsbench-comparison/1";

/// The multiple-testing correction applied to `p_adjusted`.
pub const CORRECTION: &str = "holm";

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub metric: String,
    pub a: Summary,
    pub b: Summary,
    /// `mean_b − mean_a`, in the metric's unit.
    pub diff: f64,
    /// `mean_b / mean_a − 1` (0.1 is 10% more in B).
    pub rel_diff: f64,
    /// 95% confidence interval of `rel_diff` (Fieller).
    pub rel_ci_low: f64,
    pub rel_ci_high: f64,
    pub welch_t: f64,
    /// Welch–Satterthwaite degrees of freedom (fractional).
    pub df: f64,
    /// Two-sided p-value of Welch's t-test, of this comparison alone.
    pub p_value: f64,
    /// `p_value` adjusted (Holm) for every test made together with this
    /// one; 1 when not tested.
    #[serde(default = "one")]
    pub p_adjusted: f64,
    /// `p_adjusted < 0.05`.
    pub significant: bool,
    /// Why the test is degenerate, when it is.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
}

fn one() -> f64 {
    1.0
}

impl Comparison {
    /// Both sides have a spread: a test was made.
    pub fn tested(&self) -> bool {
        self.a.n >= 2 && self.b.n >= 2
    }

    /// `mean_b / mean_a` (0 when `mean_a` is 0).
    pub fn ratio(&self) -> f64 {
        1.0 + self.rel_diff
    }

    /// The ratio's standard deviation propagated from the two sides' (as
    /// hyperfine gives it): `ratio · √((sd_a/mean_a)² + (sd_b/mean_b)²)`.
    pub fn ratio_sd(&self) -> f64 {
        let rel = |s: &Summary| if s.mean == 0.0 { 0.0 } else { s.sd / s.mean };
        (self.ratio() * (rel(&self.a).powi(2) + rel(&self.b).powi(2)).sqrt()).abs()
    }
}

/// One side of a comparison, as the reports name it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SideInfo {
    /// The file, directory or experiment cell the runs came from.
    pub path: String,
    pub runs: usize,
}

/// What `fsbench compare` reports: B against the baseline A, per metric.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ComparisonDoc {
    pub schema: String,
    pub a: SideInfo,
    pub b: SideInfo,
    /// Tests made (comparisons with at least two runs per side): the family
    /// the p-values are adjusted over.
    pub tests: usize,
    /// How `p_adjusted` was computed (`holm`).
    pub correction: String,
    pub comparisons: Vec<Comparison>,
    /// What a reader must know before trusting the figures: failed or
    /// interrupted runs, sides that ran different settings, unsteady metrics.
    pub warnings: Vec<Warning>,
}

impl ComparisonDoc {
    /// Sides of a single run cannot show a significant difference: say so.
    pub fn no_spread_notice(&self) -> Vec<Warning> {
        [("A", &self.a), ("B", &self.b)]
            .iter()
            .filter(|(_, s)| s.runs < 2)
            .map(|(l, s)| {
                Warning::new(
                    Code::NoSpread,
                    format!(
                        "{l} ({}) is a single run: the comparison has no spread, so nothing is marked significant; \
                 compare directories of repeated runs to test differences",
                        s.path
                    ),
                )
            })
            .collect()
    }
}

/// Metrics of the workload itself, not of the system around it (CPU,
/// devices): two sides that share none of these ran different jobs.
fn is_workload_metric(name: &str) -> bool {
    !name.starts_with("cpu/") && !name.starts_with("device/")
}

/// Compare every metric present in all runs of both sides (in A's order),
/// optionally only those whose name contains `filter`, adjust the p-values
/// for the number of tests, and gather the warnings: settings that differ
/// between the sides, no workload metric in common, unsteady metrics.
pub fn compare_sides(a: (SideInfo, &[RunResult]), b: (SideInfo, &[RunResult]), filter: Option<&str>) -> Result<ComparisonDoc, String> {
    let (ma, mb) = (collect(a.1), collect(b.1));
    let common: Vec<Comparison> =
        ma.iter().filter_map(|(name, va)| mb.iter().find(|(n, _)| n == name).map(|(_, vb)| welch(name, va, vb))).collect();
    let names = |m: &[(String, Vec<f64>)]| {
        m.iter().map(|(n, _)| n.as_str()).filter(|n| is_workload_metric(n)).take(8).collect::<Vec<_>>().join(", ")
    };
    if common.is_empty() {
        return Err(format!(
            "no metric is present on both sides (A has: {}; B has: {}); are they the same jobs?",
            or_none(names(&ma)),
            or_none(names(&mb))
        ));
    }
    let mut warnings = super::options::differences(a.1, b.1);
    if !common.iter().any(|c| is_workload_metric(&c.metric)) {
        let shared: Vec<&str> = common.iter().map(|c| c.metric.as_str()).collect();
        let message = format!(
            "A and B share no workload metric (A has: {}; B has: {}): they ran different jobs, and only {} can be compared",
            or_none(names(&ma)),
            or_none(names(&mb)),
            few(&shared)
        );
        warnings.push(Warning::new(Code::NoSharedWorkloadMetric, message).with_details(shared.iter().map(|m| m.to_string()).collect()));
    }
    let mut comparisons = match filter {
        None => common,
        Some(f) => {
            let picked: Vec<Comparison> = common.iter().filter(|c| c.metric.contains(f)).cloned().collect();
            if picked.is_empty() {
                let all: Vec<&str> = common.iter().map(|c| c.metric.as_str()).collect();
                return Err(format!("no metric matches '{f}'; the metrics are: {}", all.join(", ")));
            }
            picked
        }
    };
    let tests = adjust(comparisons.iter_mut());
    let unsteady: Vec<(String, Vec<(String, f64)>)> = [("A", true), ("B", false)]
        .into_iter()
        .map(|(side, is_a)| {
            let cvs =
                comparisons.iter().map(|c| (c.metric.clone(), if is_a { &c.a } else { &c.b })).filter(|(_, s)| s.n >= 2 && s.cv > CV_WARN);
            (side.to_string(), cvs.map(|(m, s)| (m, s.cv)).collect())
        })
        .collect();
    warnings.extend(super::metrics::cv_warning(&unsteady));
    Ok(ComparisonDoc { schema: COMPARISON_SCHEMA.into(), a: a.0, b: b.0, tests, correction: CORRECTION.into(), comparisons, warnings })
}

fn or_none(s: String) -> String {
    if s.is_empty() {
        "none".into()
    } else {
        s
    }
}

/// Holm's step-down adjustment of `p`: the i-th smallest becomes
/// `max over j ≤ i of min(1, (m − j + 1)·p_(j))`. Controls the chance of any
/// false positive among the m tests at the nominal level, without assuming
/// the tests are independent (metrics of one run are not).
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&x, &y| p[x].total_cmp(&p[y]));
    let mut out = vec![1.0; m];
    let mut running = 0.0f64;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max(((m - rank) as f64 * p[i]).min(1.0));
        out[i] = running;
    }
    out
}

/// Adjust the p-values of comparisons made together (Holm over those that
/// were tested) and mark what stays significant. Returns the number of tests.
pub fn adjust<'a>(cs: impl IntoIterator<Item = &'a mut Comparison>) -> usize {
    let mut tested: Vec<&mut Comparison> = Vec::new();
    for c in cs {
        if c.tested() {
            tested.push(c);
        } else {
            c.p_adjusted = 1.0;
            c.significant = false;
        }
    }
    let adjusted = holm(&tested.iter().map(|c| c.p_value).collect::<Vec<_>>());
    for (c, p) in tested.iter_mut().zip(&adjusted) {
        c.p_adjusted = *p;
        c.significant = *p < ALPHA;
    }
    tested.len()
}

/// Compare the values `a` (baseline) with `b`.
pub fn welch(metric: &str, a: &[f64], b: &[f64]) -> Comparison {
    welch_summaries(metric, &summarize(a), &summarize(b))
}

/// Fieller's 95% interval of `mean_b / mean_a` for independent means with
/// squared standard errors `va`, `vb`; `None` when it is unbounded.
fn fieller(ma: f64, va: f64, mb: f64, vb: f64, t: f64) -> Option<(f64, f64)> {
    if ma == 0.0 {
        return None;
    }
    let g = t * t * va / (ma * ma);
    if g >= 1.0 {
        return None;
    }
    let r = mb / ma;
    let half = t / ma * (vb + r * r * va - g * vb).max(0.0).sqrt();
    let (x, y) = ((r - half) / (1.0 - g), (r + half) / (1.0 - g));
    Some((x.min(y), x.max(y)))
}

/// Compare two summaries: `sa` (baseline) with `sb`. Only their counts,
/// means, standard deviations and minima are used.
pub fn welch_summaries(metric: &str, sa: &Summary, sb: &Summary) -> Comparison {
    let diff = sb.mean - sa.mean;
    let rel = |x: f64| if sa.mean == 0.0 { 0.0 } else { x / sa.mean };
    let mut notes: Vec<String> = Vec::new();
    if sa.mean == 0.0 && sb.mean != 0.0 {
        notes.push("mean of A is 0: relative difference undefined (reported as 0)".into());
    }
    let base = |notes: Vec<String>| Comparison {
        metric: metric.to_string(),
        a: sa.clone(),
        b: sb.clone(),
        diff,
        rel_diff: rel(diff),
        rel_ci_low: rel(diff),
        rel_ci_high: rel(diff),
        welch_t: 0.0,
        df: 0.0,
        p_value: 1.0,
        p_adjusted: 1.0,
        significant: false,
        note: if notes.is_empty() { None } else { Some(notes.join("; ")) },
    };

    if sa.n < 2 || sb.n < 2 {
        let sides: Vec<String> = [("A", sa.n), ("B", sb.n)]
            .iter()
            .filter(|(_, n)| *n < 2)
            .map(|(s, n)| format!("{s} has {n} value{}", if *n == 1 { "" } else { "s" }))
            .collect();
        notes.insert(0, format!("no spread ({}): not tested", sides.join(", ")));
        return base(notes);
    }

    let (na, nb) = (sa.n as f64, sb.n as f64);
    let (va, vb) = (sa.sd * sa.sd / na, sb.sd * sb.sd / nb);
    let se2 = va + vb;
    if se2 == 0.0 {
        let mut c = base(Vec::new());
        c.df = na + nb - 2.0;
        if diff != 0.0 {
            notes.insert(0, "no variance on either side: the difference is exact (p = 0, t infinite, reported as 0)".into());
            c.p_value = 0.0;
            c.p_adjusted = 0.0;
            c.significant = true;
        } else {
            notes.insert(0, "no variance on either side and equal means".into());
        }
        c.note = Some(notes.join("; "));
        return c;
    }
    let se = se2.sqrt();
    let t = (sa.mean - sb.mean) / se;
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let p = t_two_sided_p(t, df).unwrap_or(1.0);
    let tc = t_crit_95(df).unwrap_or(0.0);
    let (low, high) = match fieller(sa.mean, va, sb.mean, vb, tc) {
        Some((lo, hi)) => (lo - 1.0, hi - 1.0),
        None => {
            if sa.mean != 0.0 {
                notes.push("A's mean is not clearly away from 0, so the ratio's interval is unbounded; the one shown treats A's mean as exact and is too narrow".into());
            }
            let (x, y) = (rel(diff - tc * se), rel(diff + tc * se));
            (x.min(y), x.max(y))
        }
    };
    let mut c = base(notes);
    c.welch_t = t;
    c.df = df;
    c.p_value = p;
    c.p_adjusted = p;
    c.significant = p < ALPHA;
    c.rel_ci_low = low;
    c.rel_ci_high = high;
    if sa.mean > 0.0 && sa.min >= 0.0 && sb.min >= 0.0 {
        // B's mean cannot fall below 0: no more than −100%.
        c.rel_ci_low = c.rel_ci_low.max(-1.0);
    }
    c
}

#[cfg(test)]
mod tests {
    use crate::result::testutil::simple;
    use crate::result::warning::Code;

    fn sides(a: &[RunResult], b: &[RunResult], filter: Option<&str>) -> Result<ComparisonDoc, String> {
        let info = |p: &str, r: &[RunResult]| SideInfo { path: p.into(), runs: r.len() };
        compare_sides((info("a", a), a), (info("b", b), b), filter)
    }

    #[test]
    fn compares_metrics_on_both_sides() {
        let a = [simple(1000), simple(1010), simple(990)];
        let b = [simple(500), simple(505), simple(495)];
        let doc = sides(&a, &b, None).unwrap();
        assert_eq!((doc.schema.as_str(), doc.correction.as_str()), ("fsbench-comparison/1", "holm"));
        assert_eq!(doc.tests, doc.comparisons.len());
        let iops = doc.comparisons.iter().find(|c| c.metric == "x/read/iops").unwrap();
        assert!(iops.significant && (iops.rel_diff + 0.5).abs() < 1e-9);
        assert!(iops.p_adjusted >= iops.p_value);
        let only = sides(&a, &b, Some("bw_")).unwrap();
        assert_eq!((only.comparisons.len(), only.tests), (1, 1));
        assert_eq!(only.comparisons[0].metric, "x/read/bw_MiB_s");
        assert_eq!(only.comparisons[0].p_adjusted, only.comparisons[0].p_value, "one test alone is not adjusted");
        let e = sides(&a, &b, Some("nope")).unwrap_err();
        assert!(e.contains("no metric matches 'nope'") && e.contains("x/read/iops"), "{e}");
    }

    #[test]
    fn different_jobs_have_nothing_in_common() {
        let mut other = simple(10);
        other.jobs[0].name = "y".into();
        other.groups.clear();
        let e = sides(&[simple(10)], &[other], None).unwrap_err();
        assert!(e.contains("no metric is present on both sides"), "{e}");
        // With CPU figures on both sides, only those are shared: said so.
        let mut other = simple(10);
        other.jobs[0].name = "y".into();
        let doc = sides(&[simple(10)], &[other], None).unwrap();
        assert_eq!(doc.comparisons.iter().map(|c| c.metric.as_str()).collect::<Vec<_>>(), ["cpu/us_per_op"]);
        assert!(
            doc.warnings.iter().any(|w| w.code == Code::NoSharedWorkloadMetric && w.message.contains("share no workload metric")),
            "{:?}",
            doc.warnings
        );
    }

    #[test]
    fn holm_steps_down() {
        // m = 4: 0.01·4, 0.02·3, 0.03·2 → 0.06 kept monotone, 0.5·1.
        let adj = holm(&[0.03, 0.01, 0.5, 0.02]);
        let want = [0.06, 0.04, 0.5, 0.06];
        for (x, y) in adj.iter().zip(want) {
            assert!((x - y).abs() < 1e-12, "{adj:?}");
        }
        assert_eq!(holm(&[0.9, 0.8]), vec![1.0, 1.0]);
        assert_eq!(holm(&[0.04, 0.3]), vec![0.08, 0.3]);
        assert!(holm(&[]).is_empty());
        let mut cs = [welch("m", &[1.0, 2.0, 3.0], &[10.0, 11.0, 12.0]), welch("n", &[1.0], &[2.0])];
        assert_eq!(adjust(cs.iter_mut()), 1, "the single-value comparison is not a test");
        assert_eq!(cs[1].p_adjusted, 1.0);
    }

    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    /// Serialises to plain numbers (serde_json writes NaN and infinity as
    /// null) and reads back.
    fn no_nan(c: &Comparison) {
        fn walk(v: &serde_json::Value) {
            match v {
                serde_json::Value::Null => panic!("null in the JSON"),
                serde_json::Value::Array(a) => a.iter().for_each(walk),
                serde_json::Value::Object(o) => o.values().for_each(walk),
                _ => {}
            }
        }
        let json = serde_json::to_string(c).unwrap();
        walk(&serde_json::from_str(&json).unwrap());
        let back: Comparison = serde_json::from_str(&json).unwrap();
        assert_eq!(back.significant, c.significant);
        assert!((back.p_value - c.p_value).abs() <= 1e-15);
    }

    #[test]
    fn hand_computed_example() {
        // means 12 and 14, variances 2.5 and 2.5: se = √(0.5 + 0.5) = 1,
        // t = −2, df = 1 / (0.25/4 + 0.25/4) = 8, p = 0.0805.
        let c = welch("m", &[10.0, 11.0, 12.0, 13.0, 14.0], &[12.0, 13.0, 14.0, 15.0, 16.0]);
        assert!(close(c.welch_t, -2.0, 1e-12), "{}", c.welch_t);
        assert!(close(c.df, 8.0, 1e-9), "{}", c.df);
        assert!(close(c.p_value, 0.0805, 1e-4), "{}", c.p_value);
        assert!(!c.significant);
        assert!(close(c.diff, 2.0, 1e-12));
        assert!(close(c.rel_diff, 2.0 / 12.0, 1e-12));
        // Fieller, t = 2.306004, v_a = v_b = 0.5: g = t²·0.5/144 = 0.018465,
        // r = 14/12, (r ± (t/12)·√(0.5 + r²·0.5 − g·0.5)) / (1 − g).
        let (t, r): (f64, f64) = (2.306004, 14.0 / 12.0);
        let g = t * t * 0.5 / 144.0;
        let half = t / 12.0 * (0.5 + r * r * 0.5 - g * 0.5).sqrt();
        assert!(close(c.rel_ci_low, (r - half) / (1.0 - g) - 1.0, 1e-6), "{}", c.rel_ci_low);
        assert!(close(c.rel_ci_high, (r + half) / (1.0 - g) - 1.0, 1e-6), "{}", c.rel_ci_high);
        assert!(close(c.rel_ci_low, -0.02327, 1e-4) && close(c.rel_ci_high, 0.40051, 1e-4), "{} {}", c.rel_ci_low, c.rel_ci_high);
        assert!(c.rel_ci_low < 0.0 && c.rel_ci_high > 0.0, "not significant: CI covers 0");
        assert!(c.note.is_none());
        no_nan(&c);
    }

    #[test]
    fn unequal_variances_and_sizes() {
        // Reference computed by hand:
        // a: n 4, mean 20, var 10/3; b: n 6, mean 30.5, var 29.9:
        // t = −4.3536, df = 6.5087.
        let a = [18.0, 19.0, 21.0, 22.0];
        let b = [24.0, 26.0, 29.0, 31.0, 34.0, 39.0];
        let c = welch("m", &a, &b);
        let (va, vb): (f64, f64) = (10.0 / 3.0 / 4.0, 29.9 / 6.0);
        let se = (va + vb).sqrt();
        assert!(close(c.welch_t, (20.0 - 30.5) / se, 1e-9));
        let df = (va + vb).powi(2) / (va * va / 3.0 + vb * vb / 5.0);
        assert!(close(c.df, df, 1e-9));
        assert!(close(c.welch_t, -4.3536, 1e-4), "{}", c.welch_t);
        assert!(close(c.df, 6.5087, 1e-4), "{}", c.df);
        assert!(c.p_value < 0.01 && c.p_value > 0.0001, "{}", c.p_value);
        assert!(c.significant);
        assert!(c.rel_ci_low > 0.0 && c.rel_ci_low < c.rel_diff && c.rel_diff < c.rel_ci_high);
    }

    #[test]
    fn symmetric_in_sign() {
        let a = [1.0, 2.0, 3.0];
        let b = [2.0, 4.0, 5.0];
        let ab = welch("m", &a, &b);
        let ba = welch("m", &b, &a);
        assert!(close(ab.welch_t, -ba.welch_t, 1e-12));
        assert!(close(ab.p_value, ba.p_value, 1e-12));
        assert!(close(ab.df, ba.df, 1e-12));
    }

    #[test]
    fn single_values_are_not_tested() {
        let c = welch("m", &[10.0], &[20.0, 21.0, 22.0]);
        assert_eq!((c.welch_t, c.df, c.p_value, c.significant), (0.0, 0.0, 1.0, false));
        assert!(close(c.rel_diff, 1.1, 1e-12));
        assert_eq!((c.rel_ci_low, c.rel_ci_high), (c.rel_diff, c.rel_diff));
        assert!(c.note.as_deref().unwrap().contains("A has 1 value"), "{:?}", c.note);
        no_nan(&c);
        let c = welch("m", &[], &[]);
        assert!(c.note.as_deref().unwrap().contains("A has 0 values, B has 0 values"));
        no_nan(&c);
    }

    #[test]
    fn constant_sides() {
        let c = welch("m", &[5.0, 5.0, 5.0], &[5.0, 5.0]);
        assert_eq!((c.p_value, c.significant, c.rel_diff), (1.0, false, 0.0));
        no_nan(&c);
        let c = welch("m", &[5.0, 5.0, 5.0], &[6.0, 6.0]);
        assert_eq!((c.p_value, c.significant, c.df), (0.0, true, 3.0));
        assert!(close(c.rel_diff, 0.2, 1e-12));
        assert!(c.note.as_deref().unwrap().contains("exact"));
        no_nan(&c);
        // One side constant: an ordinary test with df from the other side.
        let c = welch("m", &[5.0, 5.0, 5.0], &[6.0, 7.0, 8.0]);
        assert!(close(c.df, 2.0, 1e-12));
        assert!(c.note.is_none());
        no_nan(&c);
    }

    #[test]
    fn relative_interval_stops_at_minus_100_percent() {
        // B is near 0 and spreads widely: the raw interval reaches below −100%.
        let c = welch("iops", &[1000.0, 1010.0, 990.0], &[0.0, 10.0, 500.0]);
        assert_eq!(c.rel_ci_low, -1.0);
        assert!(c.rel_ci_high < 0.0 && c.rel_ci_high > -1.0);
        // Signed metrics keep the raw interval.
        let c = welch("m", &[10.0, 20.0, 30.0], &[-5.0, 0.0, 5.0]);
        assert!(c.rel_ci_low < -1.0, "{}", c.rel_ci_low);
    }

    #[test]
    fn a_baseline_near_zero_falls_back_with_a_note() {
        // A's own interval reaches 0 (g ≥ 1): Fieller's interval is unbounded.
        let c = welch("m", &[0.1, 10.0, 20.0], &[10.0, 11.0, 12.0]);
        assert!(c.note.as_deref().unwrap().contains("unbounded"), "{:?}", c.note);
        assert!(c.rel_ci_low <= c.rel_diff && c.rel_diff <= c.rel_ci_high);
        no_nan(&c);
    }

    #[test]
    fn zero_baseline() {
        let c = welch("m", &[0.0, 0.0], &[1.0, 2.0]);
        assert_eq!((c.rel_diff, c.rel_ci_low, c.rel_ci_high), (0.0, 0.0, 0.0));
        assert_eq!(c.diff, 1.5);
        assert!(c.note.as_deref().unwrap().contains("mean of A is 0"));
        no_nan(&c);
    }

    #[test]
    fn large_difference_has_tiny_p() {
        let c = welch("m", &[100.0, 101.0, 99.0], &[10.0, 11.0, 9.0]);
        assert!(c.p_value < 1e-4 && c.p_value >= 0.0, "{}", c.p_value);
        assert!(c.significant);
        assert!(c.rel_ci_high < 0.0);
        no_nan(&c);
    }
}
