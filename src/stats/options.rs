//! What two sets of runs ran with, beyond what they measured: the jobs on
//! one side only, and the resolved settings (every option with its
//! default, as the frontend checked it: runtime, size, block size, the
//! directory, ...) that differ between them. A comparison of runs that
//! differ in more than the one thing under study mixes the effects, so
//! `compare` says which settings differ.

use crate::result::warning::{few_of, Code, Warning};
use crate::result::RunResult;
use std::collections::BTreeMap;

/// At most this many differing settings are named per job; the rest are counted.
const SHOWN: usize = 6;

/// A warning names this many jobs' differences, each cut to `WIDTH`
/// characters; its details hold every job's.
const JOBS_SHOWN: usize = 2;
const WIDTH: usize = 60;

/// Warnings for `compare`: how A's runs differ from B's (the first run of
/// each side stands for it), and runs of one side that differ from that
/// side's first.
pub fn differences(a: &[RunResult], b: &[RunResult]) -> Vec<Warning> {
    let mut out = Vec::new();
    let listed = |d: &[String]| few_of(d, JOBS_SHOWN, WIDTH, "; ");
    if let (Some(x), Some(y)) = (a.first(), b.first()) {
        let d = differ(x, y, ("A", "B"));
        if !d.is_empty() {
            let message =
                format!("A and B did not run the same settings ({}): a difference in the figures may come from these", listed(&d));
            out.push(Warning::new(Code::SettingsDiffer, message).with_details(d));
        }
    }
    for (label, side) in [("A", a), ("B", b)] {
        let Some(first) = side.first() else { continue };
        let odd: Vec<Vec<String>> =
            side.iter().skip(1).map(|r| differ(first, r, ("the first", "another"))).filter(|d| !d.is_empty()).collect();
        if let Some(d) = odd.first() {
            let message = format!(
                "{} of {label}'s runs did not run the same settings as its first ({}): the side mixes setups",
                odd.len(),
                listed(d)
            );
            out.push(Warning::new(Code::SettingsDiffer, message).with_details(d.clone()));
        }
    }
    out
}

/// The differences between two runs, one entry per job: jobs only in one
/// of them, and per shared job the settings that differ (`x: runtime_s 1
/// vs 5, size 1048576 vs 4194304`). Jobs without resolved settings (results
/// of the first schema) are matched by name only.
fn differ(x: &RunResult, y: &RunResult, names: (&str, &str)) -> Vec<String> {
    let units = |r: &RunResult| -> BTreeMap<String, serde_json::Value> {
        crate::stats::metrics::unit_names(r).into_iter().map(|(n, j)| (n, j.resolved.clone())).collect()
    };
    let (ux, uy) = (units(x), units(y));
    let mut out = Vec::new();
    for (name, rx) in &ux {
        let Some(ry) = uy.get(name) else {
            out.push(format!("job '{name}' only in {}", names.0));
            continue;
        };
        if rx.is_null() || ry.is_null() {
            continue;
        }
        let (fx, fy) = (flatten(rx), flatten(ry));
        let keys: Vec<&String> = {
            let mut k: Vec<&String> = fx.keys().chain(fy.keys()).collect();
            k.sort();
            k.dedup();
            k.into_iter().filter(|k| fx.get(*k) != fy.get(*k)).collect()
        };
        if keys.is_empty() {
            continue;
        }
        let mut shown: Vec<String> =
            keys.iter().take(SHOWN).map(|k| format!("{k} {} vs {}", value(fx.get(*k)), value(fy.get(*k)))).collect();
        if keys.len() > SHOWN {
            shown.push(format!("and {} more", keys.len() - SHOWN));
        }
        out.push(format!("{name}: {}", shown.join(", ")));
    }
    out.extend(uy.keys().filter(|n| !ux.contains_key(*n)).map(|n| format!("job '{n}' only in {}", names.1)));
    out
}

/// Leaves of a JSON value by path: `bs[0].fixed`, `filesets[0].entries`.
fn flatten(v: &serde_json::Value) -> BTreeMap<String, String> {
    fn walk(v: &serde_json::Value, path: String, out: &mut BTreeMap<String, String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    walk(x, if path.is_empty() { k.clone() } else { format!("{path}.{k}") }, out);
                }
            }
            serde_json::Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, format!("{path}[{i}]"), out);
                }
            }
            leaf => {
                out.insert(path, leaf.to_string());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(v, String::new(), &mut out);
    out
}

/// A setting's value for a message: short, "unset" when absent, "none"
/// for JSON's null.
fn value(v: Option<&String>) -> String {
    match v {
        None => "unset".into(),
        Some(s) if s == "null" => "none".into(),
        Some(s) if s.chars().count() > 40 => format!("{}…", s.chars().take(39).collect::<String>()),
        Some(s) => s.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testutil::simple;

    fn with(resolved: serde_json::Value) -> RunResult {
        let mut r = simple(100);
        r.jobs[0].resolved = resolved;
        r
    }

    #[test]
    fn names_the_settings_that_differ() {
        let a = with(serde_json::json!({"runtime_s": 1.0, "size": 1048576, "bs": [{"fixed": 4096}], "rw": "read"}));
        let b = with(serde_json::json!({"runtime_s": 5.0, "size": 1048576, "bs": [{"fixed": 65536}], "rw": "read"}));
        let w = differences(&[a.clone(), a.clone()], std::slice::from_ref(&b));
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].message.contains("x: bs[0].fixed 4096 vs 65536, runtime_s 1.0 vs 5.0"), "{w:?}");
        assert!(!w[0].message.contains("size"), "{w:?}");
        assert!(differences(std::slice::from_ref(&a), std::slice::from_ref(&a)).is_empty());
        // A side whose runs differ among themselves.
        let w = differences(&[a.clone(), b], std::slice::from_ref(&a));
        assert!(w.iter().any(|l| l.message.starts_with("1 of A's runs did not run the same settings")), "{w:?}");
    }

    #[test]
    fn jobs_on_one_side_and_old_results() {
        let mut other = simple(100);
        other.jobs[0].name = "y".into();
        let w = differences(&[simple(100)], &[other]);
        assert!(w[0].message.contains("job 'x' only in A; job 'y' only in B"), "{w:?}");
        // No resolved settings (schema 1): nothing to say about a shared job.
        assert!(differences(&[simple(100)], &[with(serde_json::json!({"size": 1}))]).is_empty());
    }

    #[test]
    fn many_differing_jobs_make_a_short_warning() {
        // Every one of 300 jobs differs: the line used to list them all.
        let side = |runtime: f64| {
            let mut r = simple(100);
            let job = r.jobs[0].clone();
            r.jobs = (0..300)
                .map(|i| {
                    let mut j = job.clone();
                    j.name = format!("job{i}");
                    j.resolved = serde_json::json!({"runtime_s": runtime, "directory": format!("/mnt/a-long-directory-name/{i}")});
                    j
                })
                .collect();
            r
        };
        let w = differences(&[side(1.0)], &[side(5.0)]);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].message.chars().count() <= 240, "{}", w[0].message);
        assert!(w[0].message.contains("and 298 more"), "{}", w[0].message);
        assert_eq!(w[0].details.len(), 300);
    }
}
