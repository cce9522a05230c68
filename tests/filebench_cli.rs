//! `fsbench filebench` beyond single runs: Ctrl-C, seeds, psrun intervals,
//! the 1.4 dialect, repeats, experiments and compare on Filebench workloads,
//! and the text report's layout.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

fn run(args: &[&str]) -> Output {
    fsbench().arg("filebench").args(args).arg("--no-progress").output().expect("fsbench runs")
}

fn json_of(o: &Output) -> Value {
    assert!(o.status.success(), "fsbench failed: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&o.stdout)))
}

fn dir_set(dir: &Path) -> String {
    format!("dir={}", dir.display())
}

fn io_ops(v: &Value) -> u64 {
    let job = &v["jobs"][0];
    let io: Vec<&str> =
        job["details"]["flowops"].as_array().unwrap().iter().filter(|f| f["io"] == true).map(|f| f["name"].as_str().unwrap()).collect();
    job["ops"].as_array().unwrap().iter().filter(|o| io.contains(&o["name"].as_str().unwrap())).map(|o| o["ops"].as_u64().unwrap()).sum()
}

#[test]
fn ctrl_c_reports_partial_results_and_removes_the_filesets() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("fsbench"))
        .args(["filebench", "fileserver", "--set", &dir_set(dir.path()), "--set", "nfiles=300", "--set", "nthreads=4"])
        .args(["--runtime", "60", "--output-format", "json", "--no-progress"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the fileset exists and the run has had a second.
    let t = Instant::now();
    while !dir.path().join("bigfileset").exists() && t.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let t_kill = Instant::now();
    // SAFETY: kill takes plain integers and touches no memory; `child` has not been waited for, so its pid still names
    // that process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert!(t_kill.elapsed() < Duration::from_secs(10), "stopping took {:?}", t_kill.elapsed());
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).expect("partial results are still JSON");
    assert_eq!(v["partial"], true);
    assert_eq!(v["jobs"][0]["details"]["ended_by"], "interrupted");
    assert!(io_ops(&v) > 0, "some work was measured before the signal");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the fileset was removed");
}

#[test]
fn the_seed_is_recorded_and_decides_the_fileset() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let sizes = |seed: &str| -> (f64, u64) {
        let v = json_of(&run(&[
            "webserver",
            "--set",
            &dir_set(dir.path()),
            "--set",
            "nfiles=200",
            "--set",
            "nthreads=2",
            "--runtime",
            "1",
            "--seed",
            seed,
            "--output-format",
            "json",
        ]));
        let f = &v["jobs"][0]["details"];
        assert_eq!(f["seed"].as_u64().unwrap().to_string(), seed);
        let fs = &f["filesets"].as_array().unwrap().iter().find(|s| s["name"] == "bigfileset").unwrap().clone();
        (fs["mean_size_bytes"].as_f64().unwrap(), fs["directories"].as_u64().unwrap())
    };
    let a = sizes("7");
    let b = sizes("7");
    let c = sizes("8");
    assert_eq!(a, b, "same seed, same fileset");
    assert_ne!(a.0, c.0, "another seed draws other sizes");
}

#[test]
fn psrun_with_a_negative_period_gives_interval_statistics() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = dir.path().join("ps.f");
    std::fs::write(
        &f,
        format!(
            "set $dir={}\ndefine fileset name=fs1,path=$dir,size=4k,entries=20,dirwidth=5,prealloc\n\
             define process name=p {{ thread name=t,instances=2 {{\n  flowop openfile name=open1,filesetname=fs1,fd=1\n  flowop readwholefile name=read1,fd=1\n  flowop closefile name=close1,fd=1\n}} }}\npsrun -1 3\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let o = run(&["-f", f.to_str().unwrap(), "--output-format", "json"]);
    let v = json_of(&o);
    let iv = v["jobs"][0]["details"]["intervals"].as_array().expect("intervals");
    assert!(iv.len() >= 2, "{iv:?}");
    for i in iv {
        let span = i["span_s"].as_f64().unwrap();
        assert!((0.5..1.6).contains(&span), "reset intervals cover one period: {span}");
    }
    // Interval counts add up to (at most) the run's totals: they are deltas.
    let read_total = v["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["name"] == "read1").unwrap()["ops"].as_u64().unwrap();
    let idx = v["jobs"][0]["details"]["flowops"].as_array().unwrap().iter().position(|f| f["name"] == "read1").unwrap();
    let summed: u64 = iv.iter().map(|i| i["ops"][idx].as_u64().unwrap()).sum();
    assert!(summed > 0 && summed <= read_total, "{summed} of {read_total}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("read1"), "interval lines go to stderr");
}

#[test]
fn a_filebench_1_4_script_runs() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = dir.path().join("old.f");
    std::fs::write(
        &f,
        format!(
            "set $dir={}\nset $n=10\nset $files=$n * 3\nusage \"a 1.4 script\"\n\
             define randvar name=$io, type=uniform, min=1k, mean=4k\n\
             define fileset name=old,path=$dir,size=8k,entries=$files,dirwidth=4,prealloc,cached=false\n\
             define process name=p {{ thread name=t {{\n  flowop openfile name=open1,filesetname=old,fd=1\n  flowop read name=rd,fd=1,iosize=$io\n  flowop closefile name=close1,fd=1\n}} }}\nwarmup 1\nrun 1\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let o = run(&["-f", f.to_str().unwrap(), "--output-format", "json"]);
    let v = json_of(&o);
    let fs = &v["jobs"][0]["details"]["filesets"][0];
    assert_eq!(fs["entries"], 30, "arithmetic in set");
    let rd = v["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["name"] == "rd").unwrap();
    let per_op = rd["bytes"].as_f64().unwrap() / rd["ops"].as_f64().unwrap();
    assert!((1024.0..=7168.0).contains(&per_op), "uniform randvar iosize, mean 4k: {per_op}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("1.4"), "the dialect is named");
}

#[test]
fn text_report_has_filebench_lines_io_summary_and_percentiles() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let o = run(&["varmail", "--set", &dir_set(dir.path()), "--set", "nfiles=100", "--set", "nthreads=2", "--runtime", "1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    let summary = text.lines().find(|l| l.starts_with("IO Summary: ")).expect("IO Summary line");
    for unit in ["ops/s", "rd/wr", "mb/s", "ms/op"] {
        assert!(summary.contains(unit), "{summary}");
    }
    // Filebench lists the last-defined flowop first.
    let first = text.lines().nth(1).unwrap();
    assert!(first.starts_with("closefile4 "), "{text}");
    assert!(text.contains("p99.9"), "{text}");
    assert!(!String::from_utf8_lossy(&o.stderr).contains("IO Summary"), "the report goes to stdout only");
}

#[test]
fn repeats_and_compare_work_on_filebench_metrics() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (name, threads) in [("a", "1"), ("b", "4")] {
        let o = run(&[
            "webproxy",
            "--set",
            &dir_set(dir.path()),
            "--set",
            "nfiles=200",
            "--set",
            &format!("nthreads={threads}"),
            "--runtime",
            "1",
            "--repeat",
            "2",
            "--output-format",
            "json",
        ]);
        let v = json_of(&o);
        let m = v["summary"].as_array().unwrap().iter().find(|m| m["metric"] == "webproxy/io_summary/ops_s").expect("IO Summary metric");
        assert_eq!(m["summary"]["n"], 2);
        let p = out.path().join(format!("{name}.json"));
        std::fs::write(&p, &o.stdout).unwrap();
        files.push(p);
    }
    let o = fsbench().args(["compare", "--output-format", "json", "--metric", "io_summary/ops_s"]).args(&files).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let c: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(c["comparisons"].as_array().unwrap().iter().any(|x| x["metric"] == "webproxy/io_summary/ops_s"), "{c}");
}

#[test]
fn an_experiment_runs_filebench_personalities() {
    let work = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = work.path().join("t");
    std::fs::create_dir(&target).unwrap();
    let exp = work.path().join("exp.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"fb\"\nrepeat = 2\ncache = [\"warm\"]\n[params]\nfiles = \"100\"\n[[target]]\nlabel = \"shm\"\ndirectory = \"{}\"\n\
             [[workload]]\nlabel = \"mail\"\nfilebench = \"varmail\"\nset = {{ nfiles = \"${{files}}\", nthreads = 2 }}\nruntime = 1\n",
            target.display()
        ),
    )
    .unwrap();
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(csv.lines().any(|l| l.starts_with("shm,mail,warm,none,varmail/io_summary/ops_s,2,")), "{csv}");
    assert!(csv.lines().any(|l| l.contains("varmail/fsyncfile2/lat_p99_us")), "{csv}");
    assert_eq!(std::fs::read_dir(&target).unwrap().count(), 0, "the fileset went away after each run");
}

#[test]
fn eventgen_paces_without_spinning() {
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let f = dir.path().join("ev.f");
    // Filebench's generator spins a core (10.7 s CPU in a 12 s idle run);
    // fsbench's sleeps between refills.
    std::fs::write(
        &f,
        format!(
            "set $dir={}\ndefine fileset name=fs1,path=$dir,size=1k,entries=4,dirwidth=4,prealloc\neventgen rate=20\n\
             define process name=p {{ thread name=t,instances=4 {{\n  flowop statfile name=stat1,filesetname=fs1\n  flowop eventlimit name=ev\n}} }}\nrun 3\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let v = json_of(&run(&["-f", f.to_str().unwrap(), "--output-format", "json"]));
    let stat = v["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["name"] == "stat1").unwrap()["ops"].as_u64().unwrap();
    assert!((40..=80).contains(&stat), "20 events/s for 3 s pace the stats: {stat}");
    let cpu = &v["groups"][0]["cpu"];
    let used = cpu["user_s"].as_f64().unwrap() + cpu["system_s"].as_f64().unwrap();
    assert!(used < 0.3, "{used} CPU seconds in a 3 s paced run");
}

#[test]
fn cold_cache_applies_after_the_filesets_are_built() {
    if !is_root() && skip("cold_cache_applies_after_the_filesets_are_built: dropping caches needs root") {
        return;
    }
    // On a disk-backed directory: with the cache dropped after preallocation,
    // the first whole-file reads must come from the device. Applied before
    // population (as it would be for fio jobs) it would change nothing.
    let dir = disk_tempdir();
    let o = run(&[
        "webserver",
        "--set",
        &dir_set(dir.path()),
        "--set",
        "nfiles=400",
        "--set",
        "nthreads=4",
        "--runtime",
        "1",
        "--cache",
        "cold",
        "--output-format",
        "json",
    ]);
    let v = json_of(&o);
    let run0 = &v["runs"][0];
    let fs = run0["jobs"][0]["details"]["filesets"].as_array().unwrap().iter().find(|f| f["name"] == "bigfileset").unwrap().clone();
    let dataset = fs["mean_size_bytes"].as_f64().unwrap() * fs["entries"].as_f64().unwrap();
    let devices = run0["groups"][0]["devices"].as_array().unwrap();
    if devices.is_empty() {
        skip("cold_cache_applies_after_the_filesets_are_built: the temporary directory is not on a block device");
        return;
    }
    let read: f64 = devices.iter().map(|d| d["delta"]["read_sectors"].as_f64().unwrap() * 512.0).fold(0.0, f64::max);
    assert!(read >= dataset * 0.5, "device read {read} bytes of a {dataset}-byte dataset after a cold start");
    assert_eq!(v["cache_reports"][0]["applied"], true, "{}", v["cache_reports"]);
    let pages = &v["cache_reports"][0]["workload_pages"];
    assert!(pages["files"].as_u64().unwrap() > 0 && pages["resident"] == 0, "a sample of the fileset's files, none cached: {pages}");
}
