//! Number formatting shared by the text reports: fixed units, thousands
//! separators (the plain size and number formats live in `crate::units`).

pub use crate::units::{bytes, thousands};

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
    fn sample_sd() {
        let (m, s) = mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert!((m - 5.0).abs() < 1e-9);
        assert!((s - 2.138).abs() < 1e-3);
    }
}
