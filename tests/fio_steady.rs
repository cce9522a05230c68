//! fio's steady-state detection (`ss`, `ss_dur`, `ss_ramp`) and
//! latency-target depth search (`latency_target` and companions): the job
//! really stops, and fio-json says what fio 3.33 says.

mod common;

use common::{disk_tempdir, fsbench, have, skip};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

/// Run `fsbench fio ARGS --output-format=fio-json`; the document, stderr
/// and the wall time.
fn fio_json(args: &[&str]) -> (Value, String, Duration) {
    let t = Instant::now();
    let out = fsbench().arg("fio").args(args).args(["--output-format=fio-json", "--no-progress"]).output().expect("fsbench runs");
    let took = t.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}\nstderr: {stderr}", String::from_utf8_lossy(&out.stdout)));
    (v, stderr, took)
}

/// A write job at a steady 1000 IOPS to /dev/null.
fn steady_job(extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> =
        ["--name=ss", "--filename=/dev/null", "--rw=write", "--bs=4k", "--size=1g", "--rate_iops=1000", "--time_based"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn a_steady_rate_stops_the_job_once_the_window_is_steady() {
    let args = steady_job(&["--runtime=30", "--ss=iops:5%", "--ss_dur=3s", "--ss_ramp=1s"]);
    let (v, _, took) = fio_json(&refs(&args));
    let j = &v["jobs"][0];
    let ss = &j["steadystate"];
    assert_eq!(ss["attained"], 1, "{ss}");
    assert_eq!(ss["ss"], "iops:5.000000%");
    assert_eq!(ss["duration"], 3);
    let iops: Vec<u64> = ss["data"]["iops"].as_array().expect("iops").iter().filter_map(Value::as_u64).collect();
    assert_eq!(iops.len(), 3, "{ss}");
    assert!(iops.iter().all(|&x| (900..=1100).contains(&x)), "{iops:?}");
    // ss_ramp (1 s) + ss_dur (3 s), far from the 30 s runtime.
    let ms = j["job_runtime"].as_u64().expect("job_runtime");
    assert!((3500..=7000).contains(&ms), "job_runtime {ms} ms");
    assert!(took < Duration::from_secs(12), "took {took:?}");
    assert!(ss["criterion"].as_str().is_some_and(|c| c.ends_with('%')), "{ss}");
}

#[test]
fn an_impossible_criterion_runs_the_whole_runtime() {
    // No deviation is below 0%.
    let args = steady_job(&["--runtime=3", "--ss=iops:0%", "--ss_dur=2"]);
    let (v, _, _) = fio_json(&refs(&args));
    let j = &v["jobs"][0];
    assert_eq!(j["steadystate"]["attained"], 0, "{}", j["steadystate"]);
    let ms = j["job_runtime"].as_u64().expect("job_runtime");
    assert!(ms >= 2900, "job_runtime {ms} ms: the job stopped early");
}

#[test]
fn slope_and_bandwidth_criteria_are_judged_and_spelled_as_fio_does() {
    let args = steady_job(&["--runtime=20", "--ss=bw_slope:2%", "--ss_dur=2"]);
    let (v, _, _) = fio_json(&refs(&args));
    let ss = &v["jobs"][0]["steadystate"];
    assert_eq!(ss["ss"], "bw_slope:2.000000%");
    assert_eq!(ss["attained"], 1, "{ss}");
    assert_eq!(ss["max_deviation"].as_f64(), Some(0.0), "slope mode leaves the deviation at 0: {ss}");
    assert!(v["jobs"][0]["job_runtime"].as_u64().is_some_and(|ms| ms < 6000), "{}", v["jobs"][0]["job_runtime"]);
}

#[test]
fn group_reporting_judges_and_stops_the_whole_group() {
    let args = steady_job(&["--runtime=30", "--numjobs=2", "--group_reporting", "--ss=iops:10%", "--ss_dur=2"]);
    let (v, _, took) = fio_json(&refs(&args));
    let jobs = v["jobs"].as_array().expect("jobs");
    assert_eq!(jobs.len(), 1);
    let ss = &jobs[0]["steadystate"];
    assert_eq!(ss["attained"], 1, "{ss}");
    // Both clones' seconds are summed, as fio's helper thread sums them.
    let mean = ss["data"]["iops_mean"].as_u64().expect("iops_mean");
    assert!((1800..=2200).contains(&mean), "iops_mean {mean}");
    assert!(took < Duration::from_secs(10), "took {took:?}: the clones were not stopped");
}

#[test]
fn steadystate_keys_match_a_real_fio_run() {
    if !have("fio") {
        skip("fio is not installed: cannot compare the steadystate object with fio's");
        return;
    }
    let args = steady_job(&["--runtime=4", "--ss=iops:50%", "--ss_dur=2"]);
    let (ours, _, _) = fio_json(&refs(&args));
    let out = std::process::Command::new("fio").args(refs(&args)).arg("--output-format=json").output().expect("fio runs");
    let theirs: Value = match serde_json::from_slice(&out.stdout) {
        Ok(v) => v,
        Err(e) => {
            skip(&format!("fio's output is not JSON ({e}): {}", String::from_utf8_lossy(&out.stderr)));
            return;
        }
    };
    let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<BTreeSet<String>>()).unwrap_or_default();
    let (a, b) = (&ours["jobs"][0], &theirs["jobs"][0]);
    assert_eq!(keys(&a["steadystate"]), keys(&b["steadystate"]));
    assert_eq!(keys(&a["steadystate"]["data"]), keys(&b["steadystate"]["data"]));
    for k in ["ss", "duration", "attained"] {
        assert_eq!(a["steadystate"][k], b["steadystate"][k], "{k}");
    }
    for k in ["latency_depth", "latency_target", "latency_percentile", "latency_window"] {
        assert_eq!(a[k], b[k], "{k}");
    }
}

#[test]
fn bad_steadystate_values_name_the_option() {
    for bad in ["--ss=iops", "--ss=speed:5%", "--ss=iops:x%", "--ss=bw:-3", "--ss_dur=abc"] {
        let out = fsbench().arg("fio").args(steady_job(&["--runtime=1", bad])).arg("--no-progress").output().expect("runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{bad} was accepted");
        let name = if bad.starts_with("--ss_dur") { "ss_dur" } else { "ss" };
        assert!(err.contains(name) && err.contains("expected"), "{bad}: {err}");
    }
}

/// A 64 MiB file on a disk file system for O_DIRECT I/O, or a reason why not.
/// A file for O_DIRECT reads and an asynchronous engine that runs them, or
/// `None` after printing why the test is skipped.
fn direct_async_file(dir: &Path) -> Option<(String, &'static str)> {
    let file = direct_file(dir).map_err(|e| skip(&e)).ok()?;
    let Some(engine) = async_engine(&file) else {
        skip("neither libaio nor io_uring runs O_DIRECT reads here");
        return None;
    };
    Some((file, engine))
}

fn direct_file(dir: &Path) -> Result<String, String> {
    let path = dir.join("lat.dat");
    let f = std::fs::File::create(&path).map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    f.set_len(64 << 20).map_err(|e| format!("cannot size {}: {e}", path.display()))?;
    Ok(path.display().to_string())
}

/// The first of libaio and io_uring that runs a direct read here.
fn async_engine(file: &str) -> Option<&'static str> {
    ["libaio", "io_uring"].into_iter().find(|e| {
        fsbench()
            .arg("fio")
            .args(["--name=probe", "--rw=randread", "--direct=1", "--iodepth=2", "--io_size=64k", "--no-progress"])
            .arg(format!("--ioengine={e}"))
            .arg(format!("--filename={file}"))
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn latency_job(file: &str, engine: &str, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> =
        ["--name=lt", "--rw=randread", "--bs=4k", "--direct=1", "--iodepth=8", "--time_based", "--latency_window=100ms"]
            .iter()
            .map(|s| s.to_string())
            .collect();
    a.push(format!("--filename={file}"));
    a.push(format!("--ioengine={engine}"));
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

#[test]
fn an_easy_latency_target_reaches_the_iodepth_and_ends_the_job() {
    let dir = disk_tempdir();
    let Some((file, engine)) = direct_async_file(dir.path()) else { return };
    let args = latency_job(&file, engine, &["--runtime=20", "--latency_target=2s", "--latency_percentile=99"]);
    let (v, _, took) = fio_json(&refs(&args));
    let j = &v["jobs"][0];
    assert_eq!(j["latency_depth"], 8, "{engine}: {j}");
    assert_eq!(j["latency_target"], 2_000_000_000u64);
    assert_eq!(j["latency_window"], 100_000);
    assert_eq!(j["latency_percentile"].as_f64(), Some(99.0));
    // 1, 2, 4, 8, then the final window at 8: only that window is reported.
    let ms = j["job_runtime"].as_u64().expect("job_runtime");
    assert!(ms <= 1000, "job_runtime {ms} ms: the statistics were not reset for the final window");
    assert!(took < Duration::from_secs(10), "took {took:?}: the job did not end once the depth settled");
}

#[test]
fn an_impossible_latency_target_keeps_depth_1_or_fails_at_percentile_100() {
    let dir = disk_tempdir();
    let Some((file, engine)) = direct_async_file(dir.path()) else { return };
    // No disk read takes under a nanosecond... below 1 µs is enough.
    let args = latency_job(&file, engine, &["--runtime=2", "--latency_target=1us", "--latency_percentile=99"]);
    let (v, _, _) = fio_json(&refs(&args));
    let j = &v["jobs"][0];
    assert_eq!(j["latency_depth"], 1, "{j}");
    assert_eq!(j["error"], 0);
    assert_eq!(j["iodepth_level"]["1"].as_f64(), Some(100.0), "{}", j["iodepth_level"]);
    assert!(j["job_runtime"].as_u64().is_some_and(|ms| ms >= 1900), "the job stopped early: {}", j["job_runtime"]);
    // At percentile 100 fio fails the job with ETIMEDOUT.
    let args = latency_job(&file, engine, &["--runtime=2", "--latency_target=1us"]);
    let out = fsbench().arg("fio").args(refs(&args)).args(["--output-format=fio-json", "--no-progress"]).output().expect("runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("latency_target") && err.contains("depth 1"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["jobs"][0]["error"], 110, "{}", v["jobs"][0]);
}

#[test]
fn a_sync_engine_says_its_depth_is_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("s.dat").display().to_string();
    let (v, stderr, _) = fio_json(&[
        "--name=s",
        "--ioengine=psync",
        "--rw=randread",
        "--size=1m",
        &format!("--filename={file}"),
        "--runtime=1",
        "--time_based",
        "--latency_target=10s",
        "--latency_window=100ms",
    ]);
    assert!(stderr.contains("synchronous engine") && stderr.contains("depth 1"), "{stderr}");
    assert_eq!(v["jobs"][0]["latency_depth"], 1);
}
