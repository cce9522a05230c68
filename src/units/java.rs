//! Numbers as Java prints them, for layouts that reproduce a Java tool's
//! output (YCSB): `Double.toString` and `DecimalFormat("#.##")`.

/// Java's `Double.toString`: the shortest digits that read back as the
/// same double; `1.0E7`-style scientific notation below 10^-3 and from
/// 10^7 up; a whole number keeps its `.0`.
pub fn double(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0.0".into() } else { "0.0".into() };
    }
    let a = v.abs();
    if (1e-3..1e7).contains(&a) {
        let s = format!("{v}");
        return if s.contains('.') { s } else { format!("{s}.0") };
    }
    // Rust's `{:e}` gives the shortest round-trip digits as `d.ddde-n`.
    let s = format!("{v:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let mantissa = if mantissa.contains('.') { mantissa.to_string() } else { format!("{mantissa}.0") };
    format!("{mantissa}E{exp}")
}

/// `DecimalFormat("#.##")`: at most two decimals, rounded half-even, no
/// trailing zeros, no decimal point for a whole number.
pub fn decimal2(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = if s.contains('.') { s.trim_end_matches('0').trim_end_matches('.').to_string() } else { s };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_as_java_prints_them() {
        assert_eq!(double(2314.814814814815), "2314.814814814815");
        assert_eq!(double(4470.0), "4470.0");
        assert_eq!(double(0.0), "0.0");
        assert_eq!(double(12_345_678.0), "1.2345678E7");
        assert_eq!(double(1.0e7), "1.0E7");
        assert_eq!(double(0.0005), "5.0E-4");
        assert_eq!(double(109.079), "109.079");
    }

    #[test]
    fn two_decimals_as_decimal_format_prints_them() {
        assert_eq!(decimal2(109.079), "109.08");
        assert_eq!(decimal2(4470.0), "4470");
        assert_eq!(decimal2(2314.814814814815), "2314.81");
        assert_eq!(decimal2(0.0), "0");
        assert_eq!(decimal2(80.5), "80.5");
    }
}
