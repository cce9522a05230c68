//! A cache scenario acts before a run. IOzone, Bonnie++ and Postmark write,
//! inside the measured run, the files their reads then read, so a cold
//! cache before the run cannot make those reads cold (issue 31, defect 10):
//! the scenario is recorded as applied before the run only, and IOzone's
//! and Bonnie++'s buffered passes get the memory-speed warning fio and
//! Filebench get when the file fits in RAM, naming each tool's own answers.

mod common;

use common::{fsbench, is_root, skip};
use serde_json::Value;

/// `fsbench FAMILY ARGS --cache cold --repeat 2 --output-format json`:
/// the document and stderr.
fn cold_twice(family: &str, args: &[&str]) -> (Value, String) {
    let out = fsbench()
        .arg(family)
        .args(args)
        .args(["--cache", "cold", "--repeat", "2", "--output-format", "json", "--no-progress"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    (serde_json::from_slice(&out.stdout).unwrap(), err)
}

/// Each run's cache report says "before the run only", and each run carries
/// the memory-speed warning with `answers` in it.
fn check(doc: &Value, err: &str, tool: &str, answers: &[&str]) {
    let reports = doc["cache_reports"].as_array().unwrap();
    assert_eq!(reports.len(), 2, "{doc}");
    for r in reports {
        assert_eq!(r["scenario"], "cold");
        assert_eq!(r["scope"], "before-run-only", "{r}");
        assert!(r["note"].as_str().unwrap_or_default().contains("not to its read passes"), "{r}");
    }
    for run in doc["runs"].as_array().unwrap() {
        let w: Vec<&str> = run["warnings"].as_array().unwrap().iter().filter_map(|w| w["message"].as_str()).collect();
        // A message longer than a line is cut; its details hold it whole.
        let whole: Vec<&str> =
            run["warnings"].as_array().unwrap().iter().filter_map(|w| w["details"][0].as_str().or(w["message"].as_str())).collect();
        let speed = whole.iter().find(|w| w.contains("fits in RAM")).unwrap_or_else(|| panic!("no memory-speed warning: {whole:?}"));
        assert!(speed.starts_with(tool) && speed.contains("results may show memory speed"), "{speed}");
        for a in answers {
            assert!(speed.contains(a), "{a} missing from: {speed}");
        }
        assert!(w.iter().any(|w| w.starts_with("cache scenario 'cold' applies before the run only")), "{w:?}");
    }
    assert!(err.contains("fsbench: warning[cache-before-run-only]: cache scenario 'cold' applies before the run only"), "{err}");
    assert!(err.contains("which fits in RAM"), "{err}");
}

#[test]
fn iozone_reads_what_it_wrote_whatever_the_scenario() {
    if !is_root() {
        skip("--cache cold needs root to drop the page cache");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("iozone.tmp");
    let (doc, err) = cold_twice("iozone", &["-s", "1m", "-r", "64k", "-i", "0", "-i", "1", "-f", f.to_str().unwrap()]);
    check(&doc, &err, "IOzone's file holds 1.0 MiB", &["-I (O_DIRECT)", "-U MOUNTPOINT", "-e "]);
    // O_DIRECT passes meet no page cache: nothing to warn about, and the
    // scenario holds for the whole run.
    let (doc, _) = cold_twice("iozone", &["-s", "1m", "-r", "64k", "-i", "0", "-i", "1", "-I", "-f", f.to_str().unwrap()]);
    assert_eq!(doc["cache_reports"][0]["scope"], "whole-run", "{}", doc["cache_reports"][0]);
    assert!(!doc["runs"][0]["warnings"].to_string().contains("fits in RAM"), "{}", doc["runs"][0]["warnings"]);
}

#[test]
fn bonnie_reads_what_it_wrote_whatever_the_scenario() {
    if !is_root() {
        skip("--cache cold needs root to drop the page cache");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let (doc, err) = cold_twice("bonnie", &["-d", d.path().to_str().unwrap(), "-s", "4", "-f1", "-n", "0", "-r", "0", "-u", "root"]);
    check(&doc, &err, "Bonnie++'s file holds 4.0 MiB", &["-s of at least twice the RAM", "-D does not help", "-b"]);
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn postmark_reads_the_pool_it_created_whatever_the_scenario() {
    if !is_root() {
        skip("--cache cold needs root to drop the page cache");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let loc = format!("set location {}", d.path().display());
    let out = fsbench()
        .args(["postmark", "-c", &loc, "-c", "set number 50", "-c", "set transactions 100", "-c", "run", "-c", "quit"])
        .args(["--cache", "cold", "--repeat", "2", "--output-format", "json", "--no-progress"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    for r in doc["cache_reports"].as_array().unwrap() {
        assert_eq!(r["scope"], "before-run-only", "{r}");
        assert!(r["note"].as_str().unwrap_or_default().contains("Postmark's transactions read the files"), "{r}");
    }
    assert!(err.contains("cache scenario 'cold' applies before the run only"), "{err}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}
