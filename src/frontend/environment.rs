//! The environment as the user writes it: cache scenarios (`cold`,
//! `polluted:64m`, ...) and background loads (`files:fsync,rate=200`), parsed
//! into the plain specs of `crate::model::environment`. Used by the
//! experiment file and by `--cache`/`--background`.

use crate::model::environment::{BackgroundSpec, CacheScenario};
use crate::units::clip;
use crate::units::{parse_bool, parse_size, parse_uint};
use std::path::PathBuf;

const EXPECTED: &str = "expected warm, cold, fresh-mount or polluted:SIZE (e.g. polluted:512m, polluted:2g)";

/// Parse `warm`, `cold`, `fresh-mount` or `polluted:SIZE` (k/m/g are
/// powers of 1024).
pub fn parse_cache(s: &str) -> Result<CacheScenario, String> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    match lower.as_str() {
        "warm" => return Ok(CacheScenario::Warm),
        "cold" => return Ok(CacheScenario::Cold),
        "fresh-mount" => return Ok(CacheScenario::FreshMount),
        _ => {}
    }
    if let Some(size) = lower.strip_prefix("polluted:") {
        if size.trim().is_empty() {
            return Err(format!("cache scenario '{t}' has no size; expected polluted:SIZE such as polluted:512m"));
        }
        let n = parse_size(size, 1024).map_err(|e| format!("cache scenario '{t}': bad size: {e}"))?;
        if n == 0 {
            return Err(format!("cache scenario '{t}': the size must be above 0"));
        }
        return Ok(CacheScenario::Polluted(n));
    }
    if lower == "polluted" {
        return Err("cache scenario 'polluted' needs a size; expected polluted:SIZE such as polluted:512m".to_string());
    }
    Err(format!("unknown cache scenario '{}': {EXPECTED}", clip(t)))
}

impl std::str::FromStr for CacheScenario {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        parse_cache(s)
    }
}

/// A background load as written, its directory chosen later (the target's
/// or the workload's) unless the text names one with `dir=`.
pub fn parse_background_choice(s: &str) -> Result<crate::model::experiment::BackgroundChoice, String> {
    let placeholder = PathBuf::from("/nonexistent/fsbench-background");
    let spec = parse_background(s, placeholder.clone())?;
    let dir_given = spec.dir != placeholder;
    Ok(crate::model::experiment::BackgroundChoice { label: s.trim().replace([':', ',', '='], "-"), spec, dir_given })
}

/// The option names `parse_background` accepts, for error messages.
const VALID_OPTIONS: &str = "size=SIZE, fsync[=BOOL], rate=FILES_PER_S, max=FILES, dir=PATH";

/// Parse a background load as the user writes it: `files`, `files:fsync`,
/// `files:size=100k,fsync,rate=200,max=500`. `none` is the caller's.
pub fn parse_background(s: &str, dir: impl Into<PathBuf>) -> Result<BackgroundSpec, String> {
    let s = s.trim();
    let (kind, opts) = match s.split_once(':') {
        Some((k, o)) => (k.trim(), Some(o)),
        None => (s, None),
    };
    if kind != "files" {
        return Err(format!(
            "unknown background load '{}' in '{}': expected 'none' or 'files[:OPTIONS]' \
             with OPTIONS a comma-separated list of {VALID_OPTIONS}",
            clip(kind),
            clip(s)
        ));
    }
    let mut spec = BackgroundSpec::seed(dir);
    let Some(opts) = opts else { return Ok(spec) };
    let mut seen: Vec<&str> = Vec::new();
    for item in opts.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("empty option in background load '{s}'; valid options: {VALID_OPTIONS}"));
        }
        let (key, value) = match item.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (item, None),
        };
        let bad = |why: String| format!("background load '{s}': option '{key}': {why}");
        match (key, value) {
            ("size", Some(v)) => spec.file_size = parse_size(v, 1024).map_err(bad)?,
            ("fsync", None) => spec.fsync = true,
            ("fsync", Some(v)) => spec.fsync = parse_bool(v).map_err(bad)?,
            ("rate", Some(v)) => spec.rate = Some(parse_uint(v, 1, 1_000_000).map_err(bad)?),
            ("max", Some(v)) => spec.max_files = parse_uint(v, 1, u64::MAX).map_err(bad)?,
            ("dir", Some(v)) if !v.is_empty() => spec.dir = PathBuf::from(v),
            ("size" | "rate" | "max" | "dir", None) => {
                return Err(bad(format!("needs a value ({key}=...); valid options: {VALID_OPTIONS}")))
            }
            _ => return Err(format!("unknown option '{}' in background load '{}'; valid options: {VALID_OPTIONS}", clip(key), clip(s))),
        }
        if seen.contains(&key) {
            return Err(format!("option '{key}' given twice in background load '{s}'"));
        }
        seen.push(key);
    }
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_label() {
        for (s, want) in [
            ("warm", CacheScenario::Warm),
            ("cold", CacheScenario::Cold),
            (" Cold ", CacheScenario::Cold),
            ("fresh-mount", CacheScenario::FreshMount),
            ("polluted:512m", CacheScenario::Polluted(512 << 20)),
            ("polluted:2g", CacheScenario::Polluted(2 << 30)),
            ("polluted:64k", CacheScenario::Polluted(64 << 10)),
            ("polluted:1000", CacheScenario::Polluted(1000)),
        ] {
            let got = parse_cache(s).unwrap();
            assert_eq!(got, want, "{s}");
            assert_eq!(parse_cache(&got.to_string()).unwrap(), got, "round trip of {s}");
        }
        assert_eq!(CacheScenario::Polluted(512 << 20).label(), "polluted:512m");
        assert_eq!(CacheScenario::Polluted(2 << 30).to_string(), "polluted:2g");
        assert_eq!(CacheScenario::Polluted(1536 << 20).to_string(), "polluted:1536m");
        assert_eq!(CacheScenario::FreshMount.to_string(), "fresh-mount");
        assert_eq!("warm".parse::<CacheScenario>(), Ok(CacheScenario::Warm));
    }

    #[test]
    fn parse_errors() {
        let e = parse_cache("hot").unwrap_err();
        assert!(e.contains("unknown cache scenario 'hot'") && e.contains("fresh-mount") && e.contains("polluted:SIZE"), "{e}");
        let e = parse_cache("polluted").unwrap_err();
        assert!(e.contains("needs a size"), "{e}");
        let e = parse_cache("polluted:").unwrap_err();
        assert!(e.contains("no size"), "{e}");
        let e = parse_cache("polluted:12q").unwrap_err();
        assert!(e.contains("bad size"), "{e}");
        let e = parse_cache("polluted:0").unwrap_err();
        assert!(e.contains("above 0"), "{e}");
        assert!(parse_cache("").is_err());
        assert!(parse_cache("freshmount").is_err());
    }

    fn p(s: &str) -> Result<BackgroundSpec, String> {
        parse_background(s, "/tmp/x")
    }

    #[test]
    fn parse_plain_and_fsync() {
        assert_eq!(p("files").unwrap(), BackgroundSpec::seed("/tmp/x"));
        let s = p("files:fsync").unwrap();
        assert!(s.fsync);
        assert_eq!(s.file_size, 102_400);
        assert!(!p("files:fsync=0").unwrap().fsync);
        assert!(p(" files:fsync=yes ").unwrap().fsync);
    }

    #[test]
    fn parse_all_options() {
        let s = p("files:size=100k,fsync,rate=200,max=500").unwrap();
        assert_eq!(s, BackgroundSpec { dir: "/tmp/x".into(), file_size: 102_400, fsync: true, rate: Some(200), max_files: 500 });
        let s = p("files:size=1m, max=3").unwrap();
        assert_eq!((s.file_size, s.max_files, s.fsync), (1 << 20, 3, false));
        assert_eq!(p("files:size=0").unwrap().file_size, 0);
        assert_eq!(parse_background("files:max=2", PathBuf::from("/d")).unwrap().max_files, 2);
        assert_eq!(p("files:dir=/var/tmp/bg").unwrap().dir, PathBuf::from("/var/tmp/bg"));
    }

    #[test]
    fn parse_errors_name_the_key_and_the_valid_ones() {
        let e = p("files:bogus=1").unwrap_err();
        assert!(e.contains("'bogus'") && e.contains("size=SIZE") && e.contains("rate="), "{e}");
        let e = p("files:size=huge").unwrap_err();
        assert!(e.contains("'size'") && e.contains("huge"), "{e}");
        let e = p("files:rate=0").unwrap_err();
        assert!(e.contains("'rate'"), "{e}");
        let e = p("files:max=0").unwrap_err();
        assert!(e.contains("'max'"), "{e}");
        let e = p("files:rate").unwrap_err();
        assert!(e.contains("'rate'") && e.contains("needs a value"), "{e}");
        let e = p("files:fsync=maybe").unwrap_err();
        assert!(e.contains("'fsync'"), "{e}");
        let e = p("files:max=3,max=4").unwrap_err();
        assert!(e.contains("twice"), "{e}");
        let e = p("files:,fsync").unwrap_err();
        assert!(e.contains("empty option"), "{e}");
        let e = p("dirs").unwrap_err();
        assert!(e.contains("'dirs'") && e.contains("'none'") && e.contains("files"), "{e}");
        let e = p("").unwrap_err();
        assert!(e.contains("expected"), "{e}");
    }
}
