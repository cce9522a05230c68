//! `fsbench compare` on real results: repeats of two workloads written by
//! `fsbench fio --output-format=json`, then compared; and unusable inputs.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fsbench() -> Command {
    Command::new(assert_cmd::cargo::cargo_bin("fsbench"))
}

/// Run one fio-style job in `work` and save its JSON result as `out`.
fn fio_run(work: &Path, extra: &[&str], out: &Path) {
    let dir = format!("--directory={}", work.display());
    // --invalidate=0: read the file from the page cache. With the default
    // (drop the cache before each run) a 1 MiB sequential read is a handful
    // of disk requests whose time varies by 3x or more between runs, and
    // three repeats of that cannot show anything reliably.
    let out_run = fsbench()
        .args(["fio", "--name=x", "--bs=4k", "--size=1m", "--invalidate=0", &dir])
        .args(extra)
        .args(["--output-format=json", "--no-progress"])
        .output()
        .expect("fsbench runs");
    assert!(out_run.status.success(), "fsbench fio failed: {}", String::from_utf8_lossy(&out_run.stderr));
    serde_json::from_slice::<Value>(&out_run.stdout).expect("fio output is JSON");
    std::fs::write(out, &out_run.stdout).unwrap();
}

fn compare(a: &Path, b: &Path, extra: &[&str]) -> Output {
    fsbench().arg("compare").arg(a).arg(b).args(extra).output().expect("fsbench runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Three repeats of a sequential read (A) and three of a random read that
/// sleeps 200 µs between I/Os (B), in two directories.
fn two_cells() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let root = tempfile::tempdir().unwrap();
    let (work, a, b) = (root.path().join("work"), root.path().join("A"), root.path().join("B"));
    for d in [&work, &a, &b] {
        std::fs::create_dir(d).unwrap();
    }
    for i in 0..3 {
        // One second of cached reads: a 1 MiB pass alone lasts well under a
        // millisecond, short enough for one descheduling on a busy machine
        // to swing its IOPS by half.
        fio_run(&work, &["--rw=read", "--time_based", "--runtime=1"], &a.join(format!("run{i}.json")));
        fio_run(&work, &["--rw=randread", "--thinktime=200"], &b.join(format!("run{i}.json")));
    }
    (root, a, b)
}

fn find<'a>(cs: &'a [Value], metric: &str) -> &'a Value {
    cs.iter().find(|c| c["metric"] == metric).unwrap_or_else(|| panic!("no {metric} in {cs:?}"))
}

#[test]
fn thinktime_lowers_iops_significantly() {
    let (_root, a, b) = two_cells();

    let out = compare(&a, &b, &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("compare prints JSON");
    assert_eq!(v["schema"], "fsbench-comparison/1");
    let cs = v["comparisons"].as_array().expect("the comparisons");
    // Every metric is a test, and every p-value is adjusted for all of them (Holm).
    assert_eq!(v["tests"].as_u64().unwrap() as usize, cs.len());
    assert_eq!(v["correction"], "holm");
    for c in cs {
        let (p, adj) = (c["p_value"].as_f64().unwrap(), c["p_adjusted"].as_f64().unwrap());
        assert!(adj >= p && adj <= 1.0, "{c}");
        assert_eq!(c["significant"], adj < 0.05, "{c}");
    }
    let iops = find(cs, "x/read/iops");
    assert_eq!(iops["a"]["n"], 3);
    assert_eq!(iops["b"]["n"], 3);
    let (ma, mb) = (iops["a"]["mean"].as_f64().unwrap(), iops["b"]["mean"].as_f64().unwrap());
    assert!(mb < ma, "B ({mb}) should be slower than A ({ma})");
    assert!(iops["rel_diff"].as_f64().unwrap() < 0.0);
    assert!(iops["rel_ci_high"].as_f64().unwrap() < 0.0, "CI should exclude 0: {iops}");
    // Alone (below, --metric iops) it is significant; among the five tests
    // here its adjusted p may not be, on a busy machine.
    assert!(iops["p_value"].as_f64().unwrap() < 0.05, "{iops}");
    // Every metric is there for both sides, and nothing is null (NaN).
    for m in ["x/read/bw_MiB_s", "x/read/lat_mean_us", "x/read/lat_p99_us", "cpu/us_per_op"] {
        find(cs, m);
    }
    assert!(!String::from_utf8_lossy(&out.stdout).contains("null"));

    // The filter and the table.
    let out = compare(&a, &b, &["--metric", "iops"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("x/")).collect();
    assert_eq!(rows.len(), 1, "{text}");
    assert!(rows[0].starts_with("x/read/iops") && rows[0].ends_with("significant"), "{text}");
    assert!(text.contains("(3 runs)"), "{text}");
    assert!(text.contains("1 test (Welch's t); p (Holm) is adjusted for all of them"), "{text}");
    // The two sides ran different jobs' settings (rw, thinktime, ...): said, on stderr and in the JSON.
    assert!(stderr(&out).contains("warning[settings-differ]: A and B did not run the same settings (x: "), "{}", stderr(&out));
    let warned = v["warnings"].as_array().unwrap();
    assert!(
        warned
            .iter()
            .any(|w| w["code"] == "settings-differ" && w["message"].as_str().unwrap().starts_with("A and B did not run the same settings")),
        "{warned:?}"
    );

    // One file against a directory: no spread, nothing significant.
    let one = a.join("run0.json");
    let out = compare(&one, &b, &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["comparisons"].as_array().unwrap().iter().all(|c| c["significant"] == false));
    assert_eq!(v["tests"], 0, "a single run is no test");
    assert!(stderr(&out).contains("no spread"), "{}", stderr(&out));
    let out = compare(&one, &b, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("single run: the comparison has no spread"));
}

#[test]
fn unusable_inputs_exit_2_naming_the_file() {
    let root = tempfile::tempdir().unwrap();
    let good = root.path().join("good");
    std::fs::create_dir(&good).unwrap();
    fio_run(root.path(), &["--rw=read"], &good.join("r.json"));
    let good_file = good.join("r.json");

    let expect = |a: &Path, b: &Path, name: &str, what: &str| {
        let out = compare(a, b, &[]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(out.stdout.is_empty(), "nothing on stdout for {name}");
        assert!(err.contains(name), "error should name {name}: {err}");
        assert!(err.contains(what), "error should say '{what}': {err}");
        assert!(!err.contains("panicked"), "{err}");
    };

    let missing = root.path().join("missing.json");
    expect(&missing, &good, "missing.json", "no such file");
    expect(&good, &missing, "missing.json", "no such file");

    let text = root.path().join("text.json");
    std::fs::write(&text, "fio-3.36\nread: IOPS=1000\n").unwrap();
    expect(&good_file, &text, "text.json", "not JSON");

    let other = root.path().join("other.json");
    std::fs::write(&other, r#"{"name": "not a result"}"#).unwrap();
    expect(&other, &good_file, "other.json", "not an fsbench result");

    let wrong = root.path().join("wrong.json");
    std::fs::write(&wrong, r#"{"schema": "fsbench-result/1", "jobs": "none"}"#).unwrap();
    expect(&good_file, &wrong, "wrong.json", "not a valid");

    // One bad file in a directory of results.
    let mixed = root.path().join("mixed");
    std::fs::create_dir(&mixed).unwrap();
    std::fs::copy(&good_file, mixed.join("a.json")).unwrap();
    std::fs::write(mixed.join("b.json"), "{").unwrap();
    expect(&good, &mixed, "b.json", "not JSON");

    let empty = root.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    expect(&good, &empty, "empty", "no *.json result files");

    let out = compare(&good, &good, &["--metric", "no-such-metric"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no metric matches"), "{}", stderr(&out));
}

/// A copy of the result `from` whose job ran `factor` times as long: the
/// same operations, 1/factor of the IOPS and bandwidth.
fn stretched(from: &Path, factor: u64, to: &Path) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(from).unwrap()).unwrap();
    let e = v["jobs"][0]["elapsed_ns"].as_u64().unwrap();
    v["jobs"][0]["elapsed_ns"] = (e * factor).into();
    std::fs::write(to, serde_json::to_string(&v).unwrap()).unwrap();
}

#[test]
fn settings_that_differ_and_unsteady_metrics_are_said_once() {
    let root = tempfile::tempdir().unwrap();
    let (work, a, b) = (root.path().join("work"), root.path().join("A"), root.path().join("B"));
    for d in [&work, &a, &b] {
        std::fs::create_dir(d).unwrap();
    }
    fio_run(&work, &["--rw=read"], &a.join("r0.json"));
    fio_run(&work, &["--rw=read", "--bs=64k"], &b.join("r0.json"));
    // Three runs per side whose IOPS and bandwidth spread by 2x (CV far above 5%).
    for (side, f) in [(&a, 2), (&a, 3), (&b, 2), (&b, 3)] {
        stretched(&side.join("r0.json"), f, &side.join(format!("r{f}.json")));
    }
    let out = compare(&a, &b, &["--output-format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let settings: Vec<&str> = err.lines().filter(|l| l.contains("did not run the same settings")).collect();
    assert_eq!(settings.len(), 1, "{err}");
    assert!(settings[0].contains("x: bs[0].fixed 4096 vs 65536, bs[1].fixed 4096 vs 65536"), "{err}");
    // The unsteady metrics of both sides, on one line.
    let cv: Vec<&str> = err.lines().filter(|l| l.contains("CV above 5%")).collect();
    assert_eq!(cv.len(), 1, "one line: {err}");
    assert!(cv[0].contains("A: x/read/iops ") && cv[0].contains("B: x/read/iops "), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["warnings"].as_array().unwrap().len(), 2, "{}", v["warnings"]);
    // The line names a few; the JSON's details hold every unsteady metric.
    let unsteady = v["warnings"].as_array().unwrap().iter().find(|w| w["code"] == "unsteady").expect("an unsteady warning");
    assert!(unsteady["details"].as_array().unwrap().iter().any(|d| d.as_str().unwrap().contains("x/read/bw_MiB_s")), "{unsteady}");

    // Different jobs: only the CPU figures are shared, and that is said.
    let c = root.path().join("C");
    std::fs::create_dir(&c).unwrap();
    let dir = format!("--directory={}", work.display());
    let o = fsbench()
        .args(["fio", "--name=y", "--rw=write", "--bs=4k", "--size=1m", &dir, "--output-format=json", "--no-progress"])
        .output()
        .unwrap();
    std::fs::write(c.join("y.json"), &o.stdout).unwrap();
    let out = compare(&a.join("r0.json"), &c.join("y.json"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("A and B share no workload metric") && err.contains("job 'x' only in A; job 'y' only in B"), "{err}");
}
