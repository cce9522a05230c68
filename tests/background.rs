//! The background load as a process: `fsbench background-load` started and
//! stopped through `BackgroundLoad`, its counts, its own /proc/self/io, the
//! `max_files` bound, pacing, and cleanup (no files, no process left).

use fsbench::environment::background::BackgroundLoad;
use fsbench::model::environment::BackgroundSpec;
use fsbench::result::background::BackgroundReport;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn exe() -> PathBuf {
    assert_cmd::cargo::cargo_bin("fsbench")
}

/// A temporary directory on disk (not tmpfs), and the load's subdirectory
/// inside it (which the child creates).
fn scratch() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::Builder::new().prefix("bgload").tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir under CARGO_TARGET_TMPDIR");
    let dir = t.path().join("load");
    (t, dir)
}

fn load_files(dir: &Path) -> usize {
    match std::fs::read_dir(dir) {
        Ok(rd) => rd.flatten().filter(|e| e.file_name().to_string_lossy().starts_with("bg-")).count(),
        Err(_) => 0,
    }
}

fn run_for(spec: &BackgroundSpec, d: Duration) -> BackgroundReport {
    let load = BackgroundLoad::start_with_exe(&exe(), spec).expect("load starts");
    std::thread::sleep(d);
    load.stop().expect("load stops with a report")
}

fn proc_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[test]
fn fsync_run_counts_match_and_reach_storage() {
    let (_t, dir) = scratch();
    let mut spec = BackgroundSpec::seed(&dir);
    spec.fsync = true;
    let r = run_for(&spec, Duration::from_millis(1500));
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.stopped_by, "signal");
    assert!(r.files_created > 0, "{r:?}");
    assert_eq!(r.fsyncs, r.files_created);
    assert_eq!(r.bytes_written, r.files_created * spec.file_size);
    assert_eq!(r.files_created, r.files_deleted + r.files_cleaned_up);
    assert!(r.elapsed_s >= 1.4, "elapsed {}", r.elapsed_s);
    assert!(r.pid > 0);
    assert_eq!(r.create_latency.as_ref().map(|l| l.count), Some(r.files_created));
    if r.io.syscw == 0 && r.io.write_bytes == 0 {
        eprintln!("no task I/O accounting in this kernel; skipping the /proc/PID/io check");
    } else {
        assert!(r.io.write_bytes as f64 >= 0.8 * r.bytes_written as f64, "write_bytes {} < 80% of {}", r.io.write_bytes, r.bytes_written);
    }
    assert_eq!(load_files(&dir), 0);
    assert!(!dir.exists(), "the directory the load created is removed");
}

#[test]
fn without_fsync_there_are_no_fsyncs() {
    let (_t, dir) = scratch();
    let mut spec = BackgroundSpec::seed(&dir);
    spec.file_size = 8192;
    let r = run_for(&spec, Duration::from_millis(500));
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!(r.files_created > 0);
    assert_eq!(r.fsyncs, 0);
    assert_eq!(r.bytes_written, r.files_created * 8192);
    assert_eq!(load_files(&dir), 0);
    assert!(!dir.exists());
}

#[test]
fn max_files_bounds_the_live_files() {
    let (_t, dir) = scratch();
    let mut spec = BackgroundSpec::seed(&dir);
    spec.file_size = 4096;
    spec.max_files = 5;
    let load = BackgroundLoad::start_with_exe(&exe(), &spec).expect("load starts");
    let until = Instant::now() + Duration::from_secs(1);
    let mut most = 0;
    while Instant::now() < until {
        most = most.max(load_files(&dir));
        std::thread::sleep(Duration::from_millis(2));
    }
    let r = load.stop().expect("report");
    assert!(most <= 5, "saw {most} files with max_files=5");
    assert!(most >= 1);
    assert!(r.files_created > 5, "{r:?}");
    assert!(r.peak_live_files <= 5);
    assert_eq!(r.files_deleted, r.files_created - r.files_cleaned_up);
    assert!(r.files_cleaned_up <= 5);
    assert_eq!(load_files(&dir), 0);
}

#[test]
fn rate_paces_the_load() {
    let (_t, dir) = scratch();
    let mut spec = BackgroundSpec::seed(&dir);
    spec.rate = Some(50);
    let r = run_for(&spec, Duration::from_secs(2));
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!((80..=120).contains(&r.files_created), "{} files at 50/s for 2 s", r.files_created);
}

#[test]
fn dropping_without_stop_leaves_no_process_and_no_files() {
    let (_t, dir) = scratch();
    let spec = BackgroundSpec::seed(&dir);
    let load = BackgroundLoad::start_with_exe(&exe(), &spec).expect("load starts");
    let pid = load.pid();
    assert!(proc_exists(pid));
    std::thread::sleep(Duration::from_millis(200));
    assert!(load_files(&dir) > 0, "the load is running");
    drop(load);
    assert!(!proc_exists(pid), "process {pid} still exists after drop");
    assert_eq!(load_files(&dir), 0);
    assert!(!dir.exists());
}

#[test]
fn drop_during_a_panic_still_stops_the_load() {
    let (_t, dir) = scratch();
    let spec = BackgroundSpec::seed(&dir);
    let d = dir.clone();
    let pid = std::thread::spawn(move || {
        let load = BackgroundLoad::start_with_exe(&exe(), &spec).expect("load starts");
        let pid = load.pid();
        std::panic::panic_any(pid);
    })
    .join()
    .expect_err("the thread panics");
    let pid = *pid.downcast::<u32>().expect("pid as payload");
    assert!(!proc_exists(pid), "process {pid} outlived the panic");
    assert_eq!(load_files(&d), 0);
}

#[test]
fn an_existing_directory_is_used_and_kept() {
    let (_t, dir) = scratch();
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("keep.txt"), b"mine").unwrap();
    let mut spec = BackgroundSpec::seed(&dir);
    spec.file_size = 4096;
    let r = run_for(&spec, Duration::from_millis(300));
    assert!(r.error.is_none(), "{:?}", r.error);
    assert!(r.files_created > 0);
    assert_eq!(load_files(&dir), 0);
    assert!(dir.join("keep.txt").exists(), "files the load did not create are kept");
}

#[test]
fn a_missing_parent_fails_at_start_with_the_reason() {
    let (_t, dir) = scratch();
    let spec = BackgroundSpec::seed(dir.join("no/such"));
    let e = BackgroundLoad::start_with_exe(&exe(), &spec).err().expect("start fails");
    assert!(e.contains("parent directory does not exist"), "{e}");
    assert!(!dir.exists());
}

#[test]
fn the_subcommand_reports_errors_as_json_with_status_1() {
    let (_t, dir) = scratch();
    let out = std::process::Command::new(exe())
        .args(["background-load", "--dir"])
        .arg(dir.join("a/b"))
        .args(["--file-size", "4096"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    let r: BackgroundReport = serde_json::from_str(&stdout).unwrap();
    assert!(r.error.as_deref().unwrap_or("").contains("does not exist"), "{r:?}");
    assert_eq!(r.stopped_by, "error");
}

#[test]
fn the_subcommand_rejects_bad_flags_and_is_hidden() {
    let out = std::process::Command::new(exe()).args(["background-load", "--dir", "/tmp/x", "--file-size", "lots"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--file-size"));
    assert!(out.stdout.is_empty());
    let out = std::process::Command::new(exe()).args(["background-load", "--dir", "/tmp/x", "--max-files", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let help = std::process::Command::new(exe()).arg("--help").output().unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("background-load"));
}

#[test]
fn sigint_stops_the_subcommand_cleanly() {
    let (_t, dir) = scratch();
    let child = std::process::Command::new(exe())
        .args(["background-load", "--file-size", "4096", "--dir"])
        .arg(&dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while load_files(&dir) == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill takes plain integers and touches no memory; `child` has not been waited for, so its pid still names
    // that process.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let r: BackgroundReport = serde_json::from_slice(&out.stdout).unwrap();
    assert!(r.files_created > 0);
    assert!(r.error.is_none());
    assert!(!dir.exists());
}
