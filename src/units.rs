//! Values with units, the crate's leaf: parsing sizes, durations, booleans
//! and whole numbers (fio's spellings, including its `kb_base` rule) and
//! formatting byte counts and numbers (thousands, significant figures) for people.
//!
//! What belongs here: pure text <-> number conversions with no knowledge of
//! jobs, files or the system. It imports nothing from the crate, so every
//! module (frontends, environment, runner, reports, the CLI) may use it.
//!
//! Every numeric parser takes a number or an arithmetic expression (see
//! `expr`) followed by an optional unit suffix; the suffix applies to the
//! whole expression (`(2*4)k` = 8 KiB). Errors are complete sentences of
//! the form "expected FORM, got 'VALUE'" so callers only add the location.

mod expr;
pub mod java;

use expr::Num;
use std::time::Duration;

const SIZE_FORM: &str = "a size such as 4096, 4k, 1.5g or (2*4)k (suffixes k, m, g, t, p)";
const TIME_FORM: &str = "a time such as 30, 500ms or 2m (suffixes us, ms, s, m, h, d)";
const BOOL_FORM: &str = "a boolean (0/1, true/false, yes/no, on/off)";

/// `expected FORM, got 'VALUE'` plus an optional reason in parentheses.
fn expected(form: &str, value: &str, why: &str) -> String {
    let value = clip(value);
    if why.is_empty() {
        format!("expected {form}, got '{value}'")
    } else {
        format!("expected {form}, got '{value}' ({why})")
    }
}

/// Input quoted in a message, cut after 60 characters: a job file's line
/// or a command-line value can be megabytes long (a binary file named by
/// mistake), and the error must stay one readable line.
pub fn clip(s: &str) -> String {
    clip_at(s, 60)
}

/// `s` cut after `max` characters, saying how long it was.
pub fn clip_at(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}... ({} bytes)", &s[..i], s.len()),
        None => s.to_string(),
    }
}

/// Split a value into its number (literal or expression) and unit suffix.
/// The suffix is the run of trailing ASCII letters.
fn number_and_suffix(s: &str) -> Result<(Num, &str), String> {
    if s.is_empty() {
        return Err("empty value".into());
    }
    if s.starts_with("0x") || s.starts_with("0X") {
        return expr::literal(s).map(|n| (n, "")).ok_or_else(|| "bad hex number".into());
    }
    let split = s.trim_end_matches(|c: char| c.is_ascii_alphabetic()).len();
    let (num, suffix) = s.split_at(split);
    let num = num.trim_end();
    if num.is_empty() {
        return Err("no number".into());
    }
    let n = match expr::literal(num) {
        Some(n) => n,
        None => expr::eval(num)?,
    };
    Ok((n, suffix))
}

/// `n * mult` as a whole non-negative number (decimals are rounded).
fn scale(n: Num, mult: u64) -> Result<u64, String> {
    let too_large = || "too large".to_string();
    match n {
        Num::Int(i) if i < 0 => Err("negative".into()),
        Num::Int(i) => {
            let v = i.checked_mul(mult as i128).ok_or_else(too_large)?;
            u64::try_from(v).map_err(|_| too_large())
        }
        Num::Float(f) if f < 0.0 => Err("negative".into()),
        Num::Float(f) => {
            let v = (f * mult as f64).round();
            // `as` saturates, so compare in floating point first.
            if v >= u64::MAX as f64 {
                return Err(too_large());
            }
            Ok(v as u64)
        }
    }
}

/// Bytes per unit for a lower-case size suffix.
///
/// fio's default `kb_base=1024` makes `k`/`kb` powers of 1024 and — a fio
/// compatibility quirk — the IEC spellings `kib`/`mib`/... powers of 1000.
/// `kb_base=1000` swaps the two.
fn size_multiplier(suffix: &str, kb_base: u64) -> Option<u64> {
    let (plain, iec) = if kb_base == 1000 { (1000u64, 1024u64) } else { (1024, 1000) };
    if suffix.is_empty() || suffix == "b" {
        return Some(1);
    }
    let power = match suffix.as_bytes()[0] {
        b'k' => 1,
        b'm' => 2,
        b'g' => 3,
        b't' => 4,
        b'p' => 5,
        _ => return None,
    };
    let base = match &suffix[1..] {
        "" | "b" => plain,
        "ib" => iec,
        _ => return None,
    };
    base.checked_pow(power)
}

/// Parse a size (`4k`, `1.5g`, `(1024*2)m`, `4096`) into bytes.
/// `kb_base` is 1024 (fio's default) or 1000, see `size_multiplier`.
pub fn parse_size(s: &str, kb_base: u64) -> Result<u64, String> {
    let s = s.trim();
    if s.ends_with('%') {
        return Err(format!("percent sizes are not supported, got '{}'; give a size such as 4k or 1g", clip(s)));
    }
    let (n, suffix) = number_and_suffix(s).map_err(|why| expected(SIZE_FORM, s, &why))?;
    let Some(mult) = size_multiplier(&suffix.to_ascii_lowercase(), kb_base) else {
        return Err(expected(SIZE_FORM, s, &format!("unknown unit '{suffix}'")));
    };
    scale(n, mult).map_err(|why| expected(SIZE_FORM, s, &why))
}

/// Parse a duration (`60`, `10s`, `500ms`, `2m`, `1h`, `1d`, `1.5s`).
/// A bare number is in `default_unit` (seconds for runtime, microseconds
/// for thinktime, as in fio).
pub fn parse_duration(s: &str, default_unit: Duration) -> Result<Duration, String> {
    let s = s.trim();
    let (n, suffix) = number_and_suffix(s).map_err(|why| expected(TIME_FORM, s, &why))?;
    let ns: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" => u64::try_from(default_unit.as_nanos()).unwrap_or(u64::MAX),
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" => 86_400_000_000_000,
        _ => return Err(expected(TIME_FORM, s, &format!("unknown unit '{suffix}'"))),
    };
    scale(n, ns).map(Duration::from_nanos).map_err(|why| expected(TIME_FORM, s, &why))
}

/// Parse fio's boolean spellings.
pub fn parse_bool(s: &str) -> Result<bool, String> {
    let s = s.trim();
    match s.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(expected(BOOL_FORM, s, "")),
    }
}

/// Parse a whole number in `min..=max` (an expression is fine, a unit is not).
pub fn parse_uint(s: &str, min: u64, max: u64) -> Result<u64, String> {
    let s = s.trim();
    let form = if max == u64::MAX { format!("a whole number >= {min}") } else { format!("a whole number from {min} to {max}") };
    let (n, suffix) = number_and_suffix(s).map_err(|why| expected(&form, s, &why))?;
    if !suffix.is_empty() {
        return Err(expected(&form, s, &format!("unexpected '{suffix}'")));
    }
    let v = match n {
        Num::Float(_) => return Err(expected(&form, s, "not whole")),
        n => scale(n, 1).map_err(|why| expected(&form, s, &why))?,
    };
    if v < min || v > max {
        return Err(expected(&form, s, "out of range"));
    }
    Ok(v)
}

/// Parse a `u32` in `min..=max`.
pub fn parse_u32(s: &str, min: u32, max: u32) -> Result<u32, String> {
    parse_uint(s, min.into(), max.into()).map(|v| v as u32)
}

/// 1234567 → "1,234,567".
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `v` with `decimals` digits after the point (a negative count rounds to
/// tens, hundreds, ...), thousands separated: `fixed(1234.567, 1)` =
/// "1,234.6", `fixed(16853.0, -2)` = "16,900". Never "-0", never an exponent;
/// a value that is not finite prints as "n/a".
pub fn fixed(v: f64, decimals: i32) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let d = decimals.clamp(-300, 17);
    let scale = 10f64.powi(-d.min(0));
    let rounded = if d < 0 { (v / scale).round() * scale } else { v };
    let text = format!("{:.*}", d.max(0) as usize, rounded.abs());
    let (int, frac) = text.split_once('.').map_or((text.as_str(), None), |(i, f)| (i, Some(f)));
    let mut out = String::new();
    if rounded < 0.0 && text.bytes().any(|b| b.is_ascii_digit() && b != b'0') {
        out.push('-');
    }
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    if let Some(f) = frac {
        out.push('.');
        out.push_str(f);
    }
    out
}

/// The number of decimals that keeps `digits` significant figures of `v`
/// (negative for large values): 2 for 0.0123 at 2 figures, −2 for 12,345 at
/// 3. For 0 (which has no significant figure) it is `digits − 1`.
pub fn sig_decimals(v: f64, digits: u32) -> i32 {
    let a = v.abs();
    let digits = digits.max(1) as i32;
    if !a.is_finite() || a == 0.0 {
        return digits - 1;
    }
    let mut d = digits - 1 - a.log10().floor() as i32;
    // Rounding can carry into a new leading digit (9.96 at 2 figures is 10).
    if (a * 10f64.powi(d)).round() >= 10f64.powi(digits) {
        d -= 1;
    }
    d
}

/// `v` to `digits` significant figures: `sig(0.07312, 2)` = "0.073",
/// `sig(1146169.0, 3)` = "1,150,000", `sig(1.2, 3)` = "1.20".
pub fn sig(v: f64, digits: u32) -> String {
    fixed(v, sig_decimals(v, digits))
}

/// A mean and its spread (a standard deviation, a half interval) as people
/// read them: the spread to two significant figures and the mean to the
/// same decimal place, so neither claims digits the other does not support
/// ("16,850 ± 1,200", "1.150 ± 0.073"). Without a spread (0, one run) the
/// mean gets four significant figures and the spread prints as "0".
pub fn mean_pm(mean: f64, spread: f64) -> (String, String) {
    if !(spread.is_finite() && spread > 0.0) {
        return (sig(mean, 4), "0".into());
    }
    let d = sig_decimals(spread, 2);
    (fixed(mean, d), fixed(spread, d))
}

/// Bytes as a binary size: "4.0 KiB", "1.5 GiB".
pub fn bytes(n: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", U[i])
    }
}

/// Seconds since the Unix epoch as local time, "2026-11-22 04:15:00".
pub fn local_time(unix: u64) -> String {
    let t = unix as libc::time_t;
    // SAFETY: libc::tm is integers plus (on glibc) a nullable tm_zone pointer, for all of which all-zero bytes is a
    // valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: localtime_r reads the live local `t` and writes only into the live local `tm`; being the re-entrant
    // variant, it keeps no pointer to either.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return format!("{unix} s after the epoch");
    }
    format!("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)
}

/// Now as local time with milliseconds, as Java's "yyyy-MM-dd HH:mm:ss:SSS"
/// (YCSB's status lines).
pub fn local_time_ms() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    format!("{}:{:03}", local_time(now.as_secs()), now.subsec_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_figures() {
        assert_eq!(fixed(1234.567, 1), "1,234.6");
        assert_eq!(fixed(16853.0, -2), "16,900");
        assert_eq!(fixed(-0.0004, 2), "0.00");
        assert_eq!(fixed(-2500.0, 0), "-2,500");
        assert_eq!(fixed(f64::NAN, 2), "n/a");
        assert_eq!(sig(0.07312, 2), "0.073");
        assert_eq!(sig(1146169.0, 3), "1,150,000");
        assert_eq!(sig(1.2, 3), "1.20");
        assert_eq!(sig(9.96, 2), "10");
        assert_eq!(sig(0.0, 3), "0.00");
        assert_eq!(sig(123.45, 4), "123.5");
        assert_eq!(mean_pm(16853.2, 1223.0), ("16,900".to_string(), "1,200".to_string()));
        assert_eq!(mean_pm(1.15, 0.073), ("1.150".to_string(), "0.073".to_string()));
        assert_eq!(mean_pm(1.0, 0.0), ("1.000".to_string(), "0".to_string()));
        assert_eq!(mean_pm(1042728.0, 6640.0), ("1,042,700".to_string(), "6,600".to_string()));
    }

    #[test]
    fn sizes_with_default_kb_base() {
        assert_eq!(parse_size("4096", 1024), Ok(4096));
        assert_eq!(parse_size("4k", 1024), Ok(4096));
        assert_eq!(parse_size("4K", 1024), Ok(4096));
        assert_eq!(parse_size("4KB", 1024), Ok(4096));
        assert_eq!(parse_size("1m", 1024), Ok(1 << 20));
        assert_eq!(parse_size("40G", 1024), Ok(40 << 30));
        assert_eq!(parse_size("1t", 1024), Ok(1 << 40));
        assert_eq!(parse_size("2p", 1024), Ok(2 << 50));
        assert_eq!(parse_size("1.5g", 1024), Ok(3 << 29));
        assert_eq!(parse_size("(1024*2)m", 1024), Ok(2048 << 20));
        assert_eq!(parse_size("(2*4)k", 1024), Ok(8192));
        assert_eq!(parse_size("8*100", 1024), Ok(800));
        assert_eq!(parse_size("512b", 1024), Ok(512));
        assert_eq!(parse_size(" 4k ", 1024), Ok(4096));
        assert_eq!(parse_size("0x1000", 1024), Ok(4096));
    }

    #[test]
    fn kb_base_quirk() {
        assert_eq!(parse_size("1kib", 1024), Ok(1000));
        assert_eq!(parse_size("1MiB", 1024), Ok(1_000_000));
        assert_eq!(parse_size("1k", 1000), Ok(1000));
        assert_eq!(parse_size("1KB", 1000), Ok(1000));
        assert_eq!(parse_size("1kib", 1000), Ok(1024));
        assert_eq!(parse_size("1gib", 1000), Ok(1 << 30));
    }

    #[test]
    fn size_errors_say_what_was_expected() {
        let e = parse_size("4kx", 1024).unwrap_err();
        assert!(e.starts_with("expected a size") && e.contains("got '4kx' (unknown unit 'kx')"), "{e}");
        assert!(parse_size("50%", 1024).unwrap_err().contains("percent sizes are not supported"));
        assert!(parse_size("", 1024).unwrap_err().contains("got '' (empty value)"));
        assert!(parse_size("-4k", 1024).unwrap_err().contains("negative"));
        assert!(parse_size("k", 1024).is_err());
        assert!(parse_size("4k5", 1024).is_err());
        assert!(parse_size("99999999p", 1024).unwrap_err().contains("too large"));
        assert!(parse_size("1e400", 1024).is_err());
    }

    #[test]
    fn durations() {
        let s = Duration::from_secs(1);
        assert_eq!(parse_duration("60", s), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("10s", s), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("10sec", s), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("500ms", s), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("500msec", s), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m", s), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("2min", s), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h", s), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_duration("1D", s), Ok(Duration::from_secs(86400)));
        assert_eq!(parse_duration("5us", s), Ok(Duration::from_micros(5)));
        assert_eq!(parse_duration("5usec", s), Ok(Duration::from_micros(5)));
        assert_eq!(parse_duration("1.5s", s), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("100", Duration::from_micros(1)), Ok(Duration::from_micros(100)));
        assert!(parse_duration("5x", s).unwrap_err().contains("unknown unit 'x'"));
        assert!(parse_duration("99999999999999d", s).unwrap_err().contains("too large"));
    }

    #[test]
    fn bools_and_ints() {
        for t in ["1", "true", "YES", "on"] {
            assert_eq!(parse_bool(t), Ok(true));
        }
        for f in ["0", "false", "no", "Off"] {
            assert_eq!(parse_bool(f), Ok(false));
        }
        assert!(parse_bool("2").unwrap_err().contains("expected a boolean"));
        assert_eq!(parse_uint("18446744073709551615", 0, u64::MAX), Ok(u64::MAX));
        assert_eq!(parse_uint("4*4", 0, u64::MAX), Ok(16));
        assert!(parse_uint("4k", 0, u64::MAX).is_err());
        assert!(parse_uint("1.5", 0, u64::MAX).is_err());
        assert_eq!(parse_u32("100", 0, 100), Ok(100));
        assert!(parse_u32("101", 0, 100).unwrap_err().contains("from 0 to 100"));
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn bytes_carry_binary_units() {
        assert_eq!(bytes(512), "512 B");
        assert_eq!(bytes(4096), "4.0 KiB");
        assert_eq!(bytes(3 << 29), "1.5 GiB");
    }
}
