//! `quick` and `replay` as workloads of an experiment, end to end: the
//! examples of docs/quick.md and docs/replay.md ("In an experiment") pass
//! `fsbench experiment --check`, and run (quick smaller) through `fsbench
//! experiment`, with the jobs and operations each family's command gives.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// The TOML example under "## In an experiment" in `doc`.
fn doc_example(doc: &str) -> String {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs").join(doc)).unwrap();
    let section = text.split("## In an experiment").nth(1).unwrap_or_else(|| panic!("{doc} has no 'In an experiment' section"));
    let block = section.split("```toml\n").nth(1).unwrap_or_else(|| panic!("{doc}: no toml example"));
    block.split("```").next().unwrap().to_string()
}

/// `text` with `from` (which must be there) replaced by `to`.
fn with(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "the example no longer has {from:?}:\n{text}");
    text.replace(from, to)
}

/// The example saved at the top of a copy of the repository's tree (the
/// trace at its path there), with its target in `work`.
fn save(work: &Path, text: &str) -> std::path::PathBuf {
    let traces = work.join("tests/data/replay");
    std::fs::create_dir_all(&traces).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/replay/small.iolog");
    std::fs::copy(fixture, traces.join("small.iolog")).unwrap();
    let target = work.join("target");
    std::fs::create_dir_all(&target).unwrap();
    write_exp(work, &with(text, "directory = \"/var/tmp\"", &format!("directory = \"{}\"", target.display())))
}

fn check(exp: &Path) {
    let o = fsbench().args(["experiment", "--check", exp.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// Run the experiment; each run's result, by workload label.
fn run(work: &Path, exp: &Path) -> Vec<(String, Value)> {
    let out = work.join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    run_files(&out)
        .iter()
        .map(|f| {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(out.join("runs").join(f)).unwrap()).unwrap();
            (v["cell"]["workload"].as_str().unwrap_or_default().to_string(), v["result"].clone())
        })
        .collect()
}

fn ops(job: &Value, name: &str) -> u64 {
    job["ops"].as_array().unwrap().iter().find(|o| o["name"] == name).map(|o| o["ops"].as_u64().unwrap()).unwrap_or(0)
}

#[test]
fn a_quick_workload_runs_the_seven_tests_in_the_target() {
    let work = disk_tempdir();
    let example = doc_example("quick.md");
    check(&save(work.path(), &example));
    let tiny = with(&example, "quick = { size = \"64m\", runtime = 2 }", "quick = { size = \"4m\", runtime = 1 }");
    let runs = run(work.path(), &save(work.path(), &tiny));
    assert_eq!(runs.len(), 1, "one target, one workload, one repeat");
    let (label, r) = &runs[0];
    assert_eq!(label, "quick");
    assert!(r["failed"].is_null(), "{}", r["failed"]);
    assert_eq!(r["layout"], "quick");
    let jobs = r["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs.iter().map(|j| j["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "SEQ 1MiB Q8 read",
            "SEQ 1MiB Q8 write",
            "RND 4KiB Q1 read",
            "RND 4KiB Q1 write",
            "RND 4KiB Q32 read",
            "RND 4KiB Q32 write",
            "4KiB write+fsync"
        ]
    );
    assert!(jobs.iter().all(|j| j["resolved"]["direct"] == true), "O_DIRECT in an experiment");
    assert!(ops(&jobs[0], "read") > 0 && ops(&jobs[1], "write") > 0);
    assert_eq!(ops(&jobs[6], "sync"), ops(&jobs[6], "write"), "one fsync per write");
}

#[test]
fn a_replay_workload_reads_the_traces_reads_from_a_file_in_the_target() {
    let work = disk_tempdir();
    let exp = save(work.path(), &doc_example("replay.md"));
    check(&exp);
    let runs = run(work.path(), &exp);
    assert_eq!(runs.len(), 2, "the lay-out and the replay: {:?}", runs.iter().map(|r| &r.0).collect::<Vec<_>>());
    let (_, r) = runs.iter().find(|(l, _)| l == "replay").expect("the replay's run");
    assert!(r["failed"].is_null(), "{}", r["failed"]);
    assert_eq!(r["layout"], "replay");
    let trace = std::fs::read_to_string(work.path().join("tests/data/replay/small.iolog")).unwrap();
    let count = |a: &str| trace.lines().filter(|l| l.split_whitespace().nth(2) == Some(a)).count() as u64;
    assert!(count("write") > 0, "the fixture has writes to leave out");
    let job = &r["jobs"][0];
    assert_eq!((ops(job, "read"), ops(job, "write")), (count("read"), 0));
    let det = &job["details"];
    assert_eq!(det["trace_ios"].as_u64(), Some(count("read")));
    assert!(det["target"].as_str().unwrap().ends_with("/disk.img"), "{det}");
    let left_out = format!("reads_only: {} writes and trims left out", count("write"));
    assert!(det["notes"].as_array().unwrap().iter().any(|n| n == left_out.as_str()), "{det}");
}

#[test]
fn a_bad_key_stops_the_experiment_naming_its_place() {
    let work = disk_tempdir();
    let bad = with(&doc_example("replay.md"), "speed = \"max\"", "speed = \"fast\"");
    let exp = save(work.path(), &bad);
    let line = bad.lines().position(|l| l.starts_with("speed")).unwrap() + 1;
    let o = fsbench().args(["experiment", "--check", exp.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(&format!("exp.toml:{line}:9: key 'speed': expected as-recorded or max, got 'fast'")), "{stderr}");
}
