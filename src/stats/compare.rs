//! Two sets of repetitions of one metric compared: the relative difference
//! of the means with its 95% confidence interval, and Welch's t-test (which
//! does not assume equal variances).
//!
//! With `se = √(s_a²/n_a + s_b²/n_b)`:
//!
//! * `welch_t = (mean_a − mean_b) / se`
//! * `df = se⁴ / ((s_a²/n_a)²/(n_a−1) + (s_b²/n_b)²/(n_b−1))` (Welch–Satterthwaite)
//! * `p_value = 2·(1 − F_t(|welch_t|; df))`, two-sided
//! * the difference `mean_b − mean_a ± t(0.975, df)·se`, divided by `mean_a`,
//!   gives `rel_ci_low ..= rel_ci_high` around `rel_diff = mean_b/mean_a − 1`.
//!   This treats `mean_a` as exact, so the relative interval is too narrow
//!   when A's own spread is large; and when every value is non-negative
//!   (all the metrics fsbench produces) its lower end is cut at −100%,
//!   since B's mean cannot be below 0.
//!
//! Degenerate cases never produce NaN or infinity (so the JSON stays plain
//! numbers); `note` says what happened:
//!
//! * a side with fewer than 2 values has no spread: `welch_t = 0`, `df = 0`,
//!   `p_value = 1`, not significant, and the interval is just `[rel_diff, rel_diff]`;
//! * both sides without variance (every value equal on each side): if the means are
//!   equal, `p_value = 1`; if they differ, the difference is exact: `p_value = 0`,
//!   significant, `welch_t = 0` (it would be infinite), `df = n_a + n_b − 2`;
//! * `mean_a = 0`: the relative figures are undefined and reported as 0
//!   (the absolute difference `diff` is still there).

use super::summary::{summarize, t_crit_95, t_two_sided_p, Summary};
use crate::result::RunResult;
use serde::{Deserialize, Serialize};

/// Level below which a difference is called significant.
pub const ALPHA: f64 = 0.05;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    pub metric: String,
    pub a: Summary,
    pub b: Summary,
    /// `mean_b − mean_a`, in the metric's unit.
    pub diff: f64,
    /// `mean_b / mean_a − 1` (0.1 is 10% more in B).
    pub rel_diff: f64,
    /// 95% confidence interval of `rel_diff`.
    pub rel_ci_low: f64,
    pub rel_ci_high: f64,
    pub welch_t: f64,
    /// Welch–Satterthwaite degrees of freedom (fractional).
    pub df: f64,
    /// Two-sided p-value of Welch's t-test.
    pub p_value: f64,
    /// `p_value < 0.05`.
    pub significant: bool,
    /// Why the test is degenerate, when it is.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub note: Option<String>,
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
    pub a: SideInfo,
    pub b: SideInfo,
    pub comparisons: Vec<Comparison>,
}

impl ComparisonDoc {
    /// Sides of a single run cannot show a significant difference: say so.
    pub fn no_spread_notice(&self) -> Vec<String> {
        [("A", &self.a), ("B", &self.b)]
            .iter()
            .filter(|(_, s)| s.runs < 2)
            .map(|(l, s)| {
                format!(
                    "{l} ({}) is a single run: the comparison has no spread, so nothing is marked significant; \
                 compare directories of repeated runs to test differences",
                    s.path
                )
            })
            .collect()
    }
}

/// Compare every metric present in all runs of both sides (in A's order),
/// optionally only those whose name contains `filter`.
pub fn compare_runs(a: &[RunResult], b: &[RunResult], filter: Option<&str>) -> Result<Vec<Comparison>, String> {
    let ma = super::metrics::collect(a);
    let mb = super::metrics::collect(b);
    let common: Vec<Comparison> =
        ma.iter().filter_map(|(name, va)| mb.iter().find(|(n, _)| n == name).map(|(_, vb)| welch(name, va, vb))).collect();
    if common.is_empty() {
        let names = |m: &[(String, Vec<f64>)]| m.iter().map(|(n, _)| n.as_str()).take(8).collect::<Vec<_>>().join(", ");
        return Err(format!(
            "no metric is present on both sides (A has: {}; B has: {}); are they the same jobs?",
            or_none(names(&ma)),
            or_none(names(&mb))
        ));
    }
    let Some(f) = filter else { return Ok(common) };
    let picked: Vec<Comparison> = common.iter().filter(|c| c.metric.contains(f)).cloned().collect();
    if picked.is_empty() {
        let all: Vec<&str> = common.iter().map(|c| c.metric.as_str()).collect();
        return Err(format!("no metric matches '{f}'; the metrics are: {}", all.join(", ")));
    }
    Ok(picked)
}

fn or_none(s: String) -> String {
    if s.is_empty() {
        "none".into()
    } else {
        s
    }
}

/// Compare the values `a` (baseline) with `b`.
pub fn welch(metric: &str, a: &[f64], b: &[f64]) -> Comparison {
    let sa = summarize(a);
    let sb = summarize(b);
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
    let half = t_crit_95(df).unwrap_or(0.0) * se;
    let mut c = base(notes);
    c.welch_t = t;
    c.df = df;
    c.p_value = p;
    c.significant = p < ALPHA;
    c.rel_ci_low = rel(diff - half);
    c.rel_ci_high = rel(diff + half);
    if c.rel_ci_low > c.rel_ci_high {
        // mean_a < 0 flips the interval.
        std::mem::swap(&mut c.rel_ci_low, &mut c.rel_ci_high);
    }
    if sa.mean > 0.0 && a.iter().chain(b).all(|x| *x >= 0.0) {
        // B's mean cannot fall below 0: no more than −100%.
        c.rel_ci_low = c.rel_ci_low.max(-1.0);
    }
    c
}

#[cfg(test)]
mod tests {
    use crate::result::testutil::simple;

    #[test]
    fn compares_metrics_on_both_sides() {
        let a = [simple(1000), simple(1010), simple(990)];
        let b = [simple(500), simple(505), simple(495)];
        let cs = compare_runs(&a, &b, None).unwrap();
        let iops = cs.iter().find(|c| c.metric == "x/read/iops").unwrap();
        assert!(iops.significant && (iops.rel_diff + 0.5).abs() < 1e-9);
        let only = compare_runs(&a, &b, Some("bw_")).unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].metric, "x/read/bw_MiB_s");
        let e = compare_runs(&a, &b, Some("nope")).unwrap_err();
        assert!(e.contains("no metric matches 'nope'") && e.contains("x/read/iops"), "{e}");
    }

    #[test]
    fn different_jobs_have_nothing_in_common() {
        let mut other = simple(10);
        other.jobs[0].name = "y".into();
        other.groups.clear();
        let e = compare_runs(&[simple(10)], &[other], None).unwrap_err();
        assert!(e.contains("no metric is present on both sides"), "{e}");
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
        // 2 ± 2.306004 · 1, over 12.
        assert!(close(c.rel_ci_low, (2.0 - 2.306004) / 12.0, 1e-5), "{}", c.rel_ci_low);
        assert!(close(c.rel_ci_high, (2.0 + 2.306004) / 12.0, 1e-5), "{}", c.rel_ci_high);
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
        // A spreads widely; B is near 0: the raw interval reaches below −100%.
        let c = welch("iops", &[460_000.0, 500_000.0, 530_000.0], &[3_200.0, 3_300.0, 3_250.0]);
        assert_eq!(c.rel_ci_low, -1.0);
        assert!(c.rel_ci_high < 0.0 && c.rel_ci_high > -1.0);
        // Signed metrics keep the raw interval.
        let c = welch("m", &[10.0, 20.0, 30.0], &[-5.0, 0.0, 5.0]);
        assert!(c.rel_ci_low < -1.0, "{}", c.rel_ci_low);
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
