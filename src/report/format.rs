//! Number formatting shared by the text reports: fixed units, thousands
//! separators, significant figures (the plain size and number formats live
//! in `crate::units`). Every statistic a report prints goes through `num`,
//! `pm`, `interval`, `pct_ci` or `p_value`, so a table never rounds a 1.15 µs latency
//! to "1 ± 0"; CSV and JSON keep full precision.

use crate::stats::Summary;
pub use crate::units::{bytes, thousands};
use crate::units::{fixed, mean_pm, sig_decimals};

/// A single value with the precision its size suits: whole numbers from
/// 1,000 up, four significant figures below ("1,146,169", "123.5", "0.07312").
pub fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    fixed(v, sig_decimals(v, 4).max(0))
}

/// "mean ± sd": the spread to two significant figures, the mean to match.
pub fn pm(mean: f64, spread: f64) -> String {
    let (m, s) = mean_pm(mean, spread);
    format!("{m} ± {s}")
}

/// A relative difference (0.5 = 50%) as a signed percentage, without the
/// sign: "+50.0", "-98.4", "+0.041".
pub fn pct(v: f64) -> String {
    signed(v * 100.0, sig_decimals(v * 100.0, 2).clamp(1, 4))
}

/// A relative difference and its interval, with as many decimals as the
/// interval's width supports: "-30.0% [-36.1%, -23.5%]".
pub fn pct_ci(v: f64, low: f64, high: f64) -> String {
    let d = sig_decimals((high - low) * 50.0, 2).clamp(1, 4);
    format!("{}% [{}%, {}%]", signed(v * 100.0, d), signed(low * 100.0, d), signed(high * 100.0, d))
}

fn signed(v: f64, decimals: i32) -> String {
    let s = fixed(v, decimals);
    if s.starts_with('-') || s.trim_start_matches(['0', '.', ',']).is_empty() {
        s
    } else {
        format!("+{s}")
    }
}

/// A p-value: three decimals, or "<0.001".
pub fn p_value(p: f64) -> String {
    if p < 0.001 {
        "<0.001".into()
    } else {
        format!("{p:.3}")
    }
}

/// A 95% interval of the mean with the precision its width supports,
/// marked when its lower end was cut at 0.
pub fn interval(s: &Summary) -> String {
    if !s.ci_defined {
        return "none (n < 2)".into();
    }
    let d = sig_decimals(s.ci95_high - s.mean, 2);
    let t = format!("[{} … {}]", fixed(s.ci95_low, d), fixed(s.ci95_high, d));
    if s.ci95_clamped {
        t + " (cut at 0)"
    } else {
        t
    }
}

/// Nanoseconds as microseconds with sensible precision.
pub fn us(ns: f64) -> String {
    let v = ns / 1000.0;
    if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Bytes per second as "X MiB/s (Y MB/s)".
pub fn bandwidth(bytes_per_s: f64) -> String {
    format!("{:.1} MiB/s ({:.1} MB/s)", bytes_per_s / 1048576.0, bytes_per_s / 1e6)
}

/// Mean and sample standard deviation.
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_carry_units() {
        assert_eq!(bandwidth(1048576.0), "1.0 MiB/s (1.0 MB/s)");
        assert_eq!(us(1500.0), "1.50");
    }

    #[test]
    fn numbers_are_readable() {
        assert_eq!(num(152345.4), "152,345");
        assert_eq!(num(-2500.0), "-2,500");
        assert_eq!(num(123.45), "123.5");
        assert_eq!(num(12.345), "12.35");
        assert_eq!(num(0.01234), "0.01234");
        assert_eq!(num(1.15), "1.150");
        assert_eq!(num(0.0), "0");
        assert_eq!(pm(1.15, 0.073), "1.150 ± 0.073");
        assert_eq!(pct(-0.98412), "-98.4");
        assert_eq!(pct(0.5), "+50.0");
        assert_eq!(pct(0.000412), "+0.041");
        assert_eq!(pct(0.0), "0.0");
        assert_eq!(pct_ci(-0.3, -0.3612, -0.2351), "-30.0% [-36.1%, -23.5%]");
        assert_eq!(pct_ci(0.0004, -0.005, 0.006), "+0.04% [-0.50%, +0.60%]");
        assert_eq!(p_value(0.0004), "<0.001");
        assert_eq!(p_value(0.0412), "0.041");
    }

    #[test]
    fn sample_sd() {
        let (m, s) = mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert!((m - 5.0).abs() < 1e-9);
        assert!((s - 2.138).abs() < 1e-3);
    }
}
