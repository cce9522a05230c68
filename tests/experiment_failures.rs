//! Errors surface early, and one failing run does not end an experiment
//! (issue 9, defect 7): every workload, target and parameter is checked
//! before anything is set up or the results directory exists; a run that
//! fails is recorded failed and the rest run (`--fail-fast` stops instead);
//! summary.json counts planned, done and failed runs, and the text output of
//! an incomplete experiment ends with INCOMPLETE.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Two good workloads, then `last` (the args of the last workload).
fn experiment(target: &Path, last: &str) -> String {
    format!(
        r#"
name = "errors"
[params]
size = "256k"
[[target]]
label = "dir"
directory = "{}"
[[workload]]
label = "first"
args = ["--name=first", "--rw=write", "--bs=64k", "--size=256k"]
[[workload]]
label = "second"
args = ["--name=second", "--rw=write", "--bs=64k", "--size=256k"]
[[workload]]
label = "last"
args = [{last}]
"#,
        target.display()
    )
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_mistake_in_the_last_workload_or_target_is_found_before_anything_runs() {
    let work = disk_tempdir();
    let good = r#""--name=last", "--rw=write", "--bs=64k", "--size=${size}""#;
    let cases: [(String, &[&str], &str); 4] = [
        (experiment(work.path(), r#""--name=last", "--rw=write", "--bs=banana", "--size=256k""#), &[], "banana"),
        (experiment(work.path(), r#""--name=last", "--rw=write", "--bs=64k", "--size=${x}""#), &[], "${x}"),
        (experiment(work.path(), good), &["--set", "size=banana"], "banana"),
        (
            format!(
                "{}[[target]]\nlabel = \"typo\"\ndirectory = \"{}/no-such-dir\"\n",
                experiment(work.path(), good),
                work.path().display()
            ),
            &[],
            "no-such-dir",
        ),
    ];
    for (i, (text, extra, what)) in cases.iter().enumerate() {
        let exp = write_exp(work.path(), text);
        let out = work.path().join(format!("out{i}"));
        let o = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out).args(*extra).output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "case {i}: {err}");
        assert!(err.contains(what), "case {i}: the error names {what}: {err}");
        assert!(i == 3 || err.contains("workload 'last'"), "case {i}: the error names the workload: {err}");
        assert!(!err.lines().any(|l| l.starts_with('[')), "case {i}: no run ran: {err}");
        assert!(!out.exists(), "case {i}: the output directory is not created");
    }
}

fn counts(summary: &Value) -> (u64, u64, u64) {
    let n = |k: &str| summary[k].as_u64().unwrap_or_else(|| panic!("no {k} in summary.json"));
    (n("planned"), n("done"), n("failed"))
}

#[test]
fn a_failing_run_is_recorded_and_the_rest_run_unless_fail_fast() {
    let work = disk_tempdir();
    // `second` cannot create its file: the runner fails it after `first` ran.
    let text = experiment(work.path(), r#""--name=last", "--rw=write", "--bs=64k", "--size=256k""#)
        .replace("\"--name=second\",", "\"--name=second\", \"--filename=${target}/no-such-dir/f\",");
    let exp = write_exp(work.path(), &text);

    let out = work.path().join("out");
    let o = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out).arg("--no-progress").output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(run_files(&out).len(), 3, "the run after the failed one ran too: {err}");
    let failed: Value = serde_json::from_str(&std::fs::read_to_string(out.join("runs/dir__second__warm__none__r1.json")).unwrap()).unwrap();
    assert!(failed["result"]["failed"].as_str().is_some_and(|e| e.contains("no-such-dir")), "{}", failed["result"]["failed"]);
    let last: Value = serde_json::from_str(&std::fs::read_to_string(out.join("runs/dir__last__warm__none__r1.json")).unwrap()).unwrap();
    assert!(last["result"]["failed"].is_null(), "{}", last["result"]["failed"]);
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(counts(&summary), (3, 2, 1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(stdout.lines().last(), Some("INCOMPLETE: 2 of 3 planned runs done, 1 failed, 0 not run"), "{stdout}");
    assert!(err.contains("--resume"), "says how to finish: {err}");

    let out = work.path().join("fast");
    let o = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out).args(["--no-progress", "--fail-fast"]).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(run_files(&out), ["dir__first__warm__none__r1.json", "dir__second__warm__none__r1.json"], "stopped at the failure");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(counts(&summary), (3, 1, 1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(stdout.lines().last(), Some("INCOMPLETE: 1 of 3 planned runs done, 1 failed, 1 not run"), "{stdout}");
}

#[test]
fn a_complete_experiment_counts_every_run_done_and_says_nothing_of_incomplete() {
    let work = disk_tempdir();
    let exp = write_exp(work.path(), &experiment(work.path(), r#""--name=last", "--rw=write", "--bs=64k", "--size=256k""#));
    let out = work.path().join("out");
    let o = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out).arg("--no-progress").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(counts(&summary), (3, 3, 0));
    assert!(!String::from_utf8_lossy(&o.stdout).contains("INCOMPLETE"));
}
