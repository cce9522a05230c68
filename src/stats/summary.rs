//! Descriptive statistics of repeated measurements of one metric, with a
//! Student-t 95% confidence interval of the mean.

use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Summary of `n` repetitions of one metric.
///
/// Always finite (no NaN, no infinity), so it serialises to plain JSON
/// numbers: with `n == 0` every figure is 0; with `n == 1` the standard
/// deviation is 0 and the interval collapses to `[mean, mean]`, and
/// `ci_defined` is false to say that this interval is not an estimate.
/// `Summary::default()` is the summary of nothing (`summarize(&[])`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub n: usize,
    pub mean: f64,
    /// Sample standard deviation (divisor n - 1); 0 when n < 2.
    pub sd: f64,
    /// Coefficient of variation: sd / |mean|, 0 when the mean is 0.
    pub cv: f64,
    pub min: f64,
    pub max: f64,
    pub median: f64,
    /// 95% confidence interval of the mean: mean ± t(0.975, n-1)·sd/√n,
    /// its lower end cut at 0 when no value is negative (see `ci95_clamped`).
    pub ci95_low: f64,
    pub ci95_high: f64,
    /// True when the interval is an estimate (n ≥ 2); false when there is
    /// no spread to estimate it from and it is just `[mean, mean]`.
    /// Absent from older files: read as false.
    #[serde(default)]
    pub ci_defined: bool,
    /// The quantity is never negative (every value ≥ 0) and the interval's
    /// lower end, mean − t·sd/√n, fell below 0: `ci95_low` is 0 instead.
    /// Such an interval comes from too few or too scattered repeats; the
    /// reports mark it rather than print a negative IOPS or latency.
    #[serde(default)]
    pub ci95_clamped: bool,
}

impl Summary {
    /// Half the width of the confidence interval.
    pub fn ci95_half_width(&self) -> f64 {
        (self.ci95_high - self.ci95_low) / 2.0
    }
}

/// The two-sided 95% critical value of Student's t with `df` degrees of
/// freedom (`df` may be fractional, as Welch's is). `None` when `df` is not
/// a positive finite number.
pub fn t_crit_95(df: f64) -> Option<f64> {
    t_quantile(0.975, df)
}

/// Degrees of freedom above which the quantile comes from the normal
/// distribution with a Cornish–Fisher correction instead of statrs's
/// `StudentsT::inverse_cdf`, which loses accuracy there (1.95985 instead of
/// 1.95996 at 10^6) and does not return at all for 10^8.
const LARGE_DF: f64 = 1000.0;

/// Quantile `p` (0 < p < 1) of Student's t with `df` degrees of freedom.
pub fn t_quantile(p: f64, df: f64) -> Option<f64> {
    if !(df.is_finite() && df > 0.0 && p > 0.0 && p < 1.0) {
        return None;
    }
    let q = if df > LARGE_DF {
        // Abramowitz & Stegun 26.7.5; the next term is below 1e-11 here.
        let z = Normal::new(0.0, 1.0).ok()?.inverse_cdf(p);
        let (z2, v) = (z * z, df);
        let g1 = (z2 + 1.0) * z / 4.0;
        let g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0;
        let g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0;
        let g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0;
        z + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v)
    } else {
        StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(p)
    };
    q.is_finite().then_some(q)
}

/// Two-sided p-value of `t` under Student's t with `df` degrees of freedom:
/// `2·(1 − F(|t|))`, in [0, 1]. `None` when `df` or `t` is not usable.
pub fn t_two_sided_p(t: f64, df: f64) -> Option<f64> {
    if !(df.is_finite() && df > 0.0 && t.is_finite()) {
        return None;
    }
    // Upper tail through the symmetric lower one: no cancellation in 1 − F.
    let lower = if df > 1e7 { Normal::new(0.0, 1.0).ok()?.cdf(-t.abs()) } else { StudentsT::new(0.0, 1.0, df).ok()?.cdf(-t.abs()) };
    let p = 2.0 * lower;
    p.is_finite().then_some(p.clamp(0.0, 1.0))
}

/// Summarise `xs`. Values are expected to be finite; non-finite values are
/// ignored so that one broken measurement cannot poison the summary.
pub fn summarize(xs: &[f64]) -> Summary {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    let n = v.len();
    if n == 0 {
        return Summary {
            n: 0,
            mean: 0.0,
            sd: 0.0,
            cv: 0.0,
            min: 0.0,
            max: 0.0,
            median: 0.0,
            ci95_low: 0.0,
            ci95_high: 0.0,
            ci_defined: false,
            ci95_clamped: false,
        };
    }
    v.sort_by(f64::total_cmp);
    let nf = n as f64;
    let mean = v.iter().sum::<f64>() / nf;
    let median = if n % 2 == 1 { v[n / 2] } else { (v[n / 2 - 1] + v[n / 2]) / 2.0 };
    let sd = if n >= 2 { (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0)).sqrt() } else { 0.0 };
    let cv = if mean == 0.0 { 0.0 } else { sd / mean.abs() };
    let (mut ci95_low, ci95_high, ci_defined) = match (n >= 2).then(|| t_crit_95(nf - 1.0)).flatten() {
        Some(t) => {
            let h = t * sd / nf.sqrt();
            (mean - h, mean + h, true)
        }
        None => (mean, mean, false),
    };
    let ci95_clamped = v[0] >= 0.0 && ci95_low < 0.0;
    if ci95_clamped {
        ci95_low = 0.0;
    }
    Summary { n, mean, sd, cv, min: v[0], max: v[n - 1], median, ci95_low, ci95_high, ci_defined, ci95_clamped }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn t_critical_values_match_tables() {
        assert!(close(t_crit_95(9.0).unwrap(), 2.2622, 1e-4));
        assert!(close(t_crit_95(1.0).unwrap(), 12.7062, 1e-3));
        assert!(close(t_crit_95(7.0).unwrap(), 2.3646, 1e-4));
        assert!(close(t_crit_95(30.0).unwrap(), 2.0423, 1e-4));
        assert!(close(t_crit_95(1e6).unwrap(), 1.95996, 1e-4));
        // Around the switch to the Cornish–Fisher expansion, and far beyond.
        assert!(close(t_crit_95(999.0).unwrap(), t_crit_95(1001.0).unwrap(), 1e-5));
        assert!(close(t_crit_95(1000.0).unwrap(), 1.962339, 1e-6));
        assert!(close(t_crit_95(1e8).unwrap(), 1.959964, 1e-6));
        assert!(close(t_quantile(0.025, 9.0).unwrap(), -2.2622, 1e-4));
        assert!(t_crit_95(0.0).is_none());
        assert!(t_crit_95(f64::NAN).is_none());
    }

    #[test]
    fn two_sided_p_values() {
        // t = 2.306 with 8 df is the 95% point; t = 2 gives 0.0805.
        assert!(close(t_two_sided_p(2.306004, 8.0).unwrap(), 0.05, 1e-6));
        assert!(close(t_two_sided_p(-2.0, 8.0).unwrap(), 0.0805, 1e-4));
        assert_eq!(t_two_sided_p(0.0, 3.0).unwrap(), 1.0);
        assert!(close(t_two_sided_p(1.959964, 1e9).unwrap(), 0.05, 1e-6));
        let tiny = t_two_sided_p(200.0, 4.0).unwrap();
        assert!(tiny > 0.0 && tiny < 1e-7, "{tiny}");
        for df in [1e3, 1e4, 1e5, 1e6, 5e6, 1e7, 2e7] {
            assert!(close(t_two_sided_p(t_crit_95(df).unwrap(), df).unwrap(), 0.05, 1e-6), "{df}");
        }
        assert!(t_two_sided_p(f64::INFINITY, 3.0).is_none());
    }

    #[test]
    fn textbook_sample() {
        let s = summarize(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.n, 8);
        assert!(close(s.mean, 5.0, 1e-12));
        // Sample sd: sqrt(32 / 7).
        assert!(close(s.sd, (32.0f64 / 7.0).sqrt(), 1e-12));
        assert!(close(s.sd, 2.138, 1e-3));
        assert!(close(s.cv, s.sd / 5.0, 1e-12));
        assert_eq!((s.min, s.max, s.median), (2.0, 9.0, 4.5));
        // 5 ± 2.364624 · 2.13809 / √8 = 5 ± 1.78749
        assert!(close(s.ci95_low, 3.2125, 1e-4), "{}", s.ci95_low);
        assert!(close(s.ci95_high, 6.7875, 1e-4), "{}", s.ci95_high);
        assert!(s.ci_defined);
        assert!(close(s.ci95_half_width(), 1.7875, 1e-4));
    }

    #[test]
    fn intervals_of_non_negative_values_stop_at_zero() {
        // 1 ± 12.706 · 1.414 / √2: the raw lower end is −11.7.
        let s = summarize(&[0.0, 2.0]);
        assert_eq!((s.ci95_low, s.ci95_clamped), (0.0, true));
        assert!(close(s.ci95_high, 1.0 + 12.7062, 1e-3), "{}", s.ci95_high);
        // Signed values keep the raw interval.
        let s = summarize(&[-1.0, 2.0]);
        assert!(s.ci95_low < -1.0 && !s.ci95_clamped, "{s:?}");
        assert!(!summarize(&[10.0, 11.0, 12.0]).ci95_clamped);
    }

    #[test]
    fn odd_count_median_and_unsorted_input() {
        let s = summarize(&[9.0, 1.0, 5.0]);
        assert_eq!(s.median, 5.0);
        assert_eq!((s.min, s.max), (1.0, 9.0));
    }

    #[test]
    fn single_value_has_no_spread() {
        let s = summarize(&[42.0]);
        assert_eq!(s.n, 1);
        assert_eq!((s.mean, s.sd, s.cv, s.median), (42.0, 0.0, 0.0, 42.0));
        assert_eq!((s.ci95_low, s.ci95_high), (42.0, 42.0));
        assert!(!s.ci_defined);
        let json = serde_json::to_string(&s).unwrap();
        assert!(!json.contains("null") && !json.contains("NaN"), "{json}");
    }

    #[test]
    fn empty_is_all_zeros() {
        let s = summarize(&[]);
        assert_eq!(s.n, 0);
        assert_eq!((s.mean, s.sd, s.cv, s.min, s.max, s.median, s.ci95_low, s.ci95_high), (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0));
        assert!(!s.ci_defined);
        assert_eq!(s, Summary::default());
    }

    #[test]
    fn zero_mean_gives_zero_cv() {
        let s = summarize(&[0.0, 0.0, 0.0]);
        assert_eq!(s.cv, 0.0);
        assert_eq!((s.ci95_low, s.ci95_high), (0.0, 0.0));
        assert!(s.ci_defined);
        let s = summarize(&[-1.0, 1.0]);
        assert_eq!(s.cv, 0.0);
    }

    #[test]
    fn non_finite_values_are_ignored() {
        let s = summarize(&[1.0, f64::NAN, 3.0, f64::INFINITY]);
        assert_eq!(s.n, 2);
        assert_eq!(s.mean, 2.0);
    }

    #[test]
    fn serde_round_trip() {
        let s = summarize(&[1.0, 2.0, 3.0, 4.0]);
        let back: Summary = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        assert_eq!(s, back);
    }
}
