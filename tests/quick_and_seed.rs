//! The main job (`fsbench quick`) and the seed paper's job file, end to end.

mod common;
use common::*;

#[test]
fn quick_prints_every_test_with_units_and_removes_its_files() {
    let dir = disk_tempdir();
    let out = fsbench().args(["quick", dir.path().to_str().unwrap(), "--size=16m", "--runtime=2", "--no-progress"]).output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    for row in ["SEQ 1MiB Q8 read", "SEQ 1MiB Q8 write", "RND 4KiB Q1 read", "RND 4KiB Q32 write", "4KiB write+fsync", "of which fsync"] {
        assert!(stdout.contains(row), "missing row {row}:\n{stdout}");
    }
    assert!(stdout.contains("MiB/s") && stdout.contains("IOPS") && stdout.contains("µs"));
    assert!(stdout.contains("O_DIRECT"), "says whether the page cache was bypassed:\n{stdout}");
    assert!(!stdout.contains("error"), "{stdout}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "quick left files behind: {left:?}");
}

#[test]
fn quick_json_is_the_fsbench_schema() {
    let dir = disk_tempdir();
    let out = fsbench().args(["quick", dir.path().to_str().unwrap(), "--size=8m", "--runtime=1", "--output-format=json"]).output().unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"].as_array().unwrap().len(), 7);
    let fsync_job = &v["jobs"][6];
    let sync = fsync_job["ops"].as_array().unwrap().iter().find(|o| o["name"] == "sync").unwrap();
    let write = fsync_job["ops"].as_array().unwrap().iter().find(|o| o["name"] == "write").unwrap();
    assert_eq!(sync["ops"], write["ops"], "one fsync per write");
}

#[test]
fn seed_job_file_runs_unchanged_with_command_line_overrides() {
    let dir = disk_tempdir();
    let seed = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/fio/seed-002-delalloc.fio");
    let file = dir.path().join("seedfile");
    // The two sections the paper prints (the file adds the seed's other patterns after them).
    let (read, write) = ("--section=read-4k-para", "--section=write-4k-para");
    let v = fio_json(&[seed, read, write, "--size=16m", "--runtime=1", "--ramp_time=0", &format!("--filename={}", file.display())]);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2, "two sections, stonewalled, group_reporting");
    assert_eq!(jobs[0]["name"], "read-4k-para");
    assert_eq!(jobs[1]["name"], "write-4k-para");
    assert_ne!(jobs[0]["group"], jobs[1]["group"], "stonewall puts them in separate groups");
    assert_eq!(jobs[0]["engine"], "libaio");
    let reads = op(&v, 0, "read")["ops"].as_u64().unwrap();
    let writes = op(&v, 1, "write")["ops"].as_u64().unwrap();
    assert!(reads > 4096, "time_based read wraps the 16 MiB file: {reads}");
    assert!(writes > 100);
    let secs = jobs[1]["elapsed_ns"].as_f64().unwrap() / 1e9;
    assert!((0.9..1.6).contains(&secs), "runtime override took effect: {secs}");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 16 << 20);
}
