//! Malformed job files and flags: every one is an error on stderr that names
//! where and what, exit status 2, no panic, and on stdout (JSON asked for)
//! only the error object with the same message.

mod common;
use common::*;

/// Write `text` as a job file, run it, and return stderr.
fn run_bad_file(text: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("bad.fio");
    std::fs::write(&job, text).unwrap();
    let out = fsbench()
        .args(["fio", job.to_str().unwrap(), "--output-format=json", "--no-progress"])
        .env("FSBENCH_TEST_DIR", dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "expected a usage error, got {:?}: {err}", out.status.code());
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is the JSON error object");
    assert_eq!(doc["schema"], "fsbench-error/1");
    assert!(doc["error"].as_str().is_some_and(|e| err.contains(e)), "the object carries stderr's error: {doc}");
    assert!(!err.contains("panicked"), "panic: {err}");
    (err, job.display().to_string())
}

fn expect(text: &str, line: u32, must: &[&str]) {
    let (err, path) = run_bad_file(text);
    let loc = format!("{path}:{line}");
    assert!(err.contains(&loc), "error should name {loc}: {err}");
    for m in must {
        assert!(err.contains(m), "error should mention '{m}': {err}");
    }
}

#[test]
fn unknown_option_is_named_with_a_suggestion() {
    expect("[job]\nrw=read\nblocksise=4k\n", 3, &["[job]", "blocksise", "blocksize"]);
}

#[test]
fn bad_size_says_what_a_size_looks_like() {
    expect("[job]\nrw=read\nsize=lots\n", 3, &["size", "lots"]);
}

#[test]
fn trailing_garbage_after_a_size() {
    expect("[job]\nbs=4kx\n", 2, &["bs", "4kx"]);
}

#[test]
fn bad_rw_lists_the_choices() {
    expect("[job]\nrw=sideways\n", 2, &["rw", "sideways", "randread"]);
}

#[test]
fn rwmix_over_100() {
    expect("[job]\nrw=randrw\nrwmixread=150\n", 3, &["rwmixread", "150"]);
}

#[test]
fn bssplit_must_sum_to_100() {
    expect("[job]\nbssplit=4k/10:64k/50\n", 2, &["bssplit"]);
}

#[test]
fn unknown_engine_lists_the_engines() {
    expect("[job]\nioengine=warp\n", 2, &["ioengine", "warp", "io_uring", "libaio"]);
}

#[test]
fn iodepth_zero() {
    expect("[job]\niodepth=0\n", 2, &["iodepth"]);
}

#[test]
fn key_outside_a_section() {
    expect("bs=4k\n[job]\n", 1, &["bs"]);
}

#[test]
fn unterminated_section_header() {
    expect("[global\nbs=4k\n", 1, &["]"]);
}

#[test]
fn undefined_environment_variable() {
    expect("[job]\ndirectory=${FSBENCH_SURELY_UNDEFINED_VAR}\n", 2, &["FSBENCH_SURELY_UNDEFINED_VAR"]);
}

#[test]
fn bad_boolean() {
    expect("[job]\ndirect=maybe\n", 2, &["direct", "maybe"]);
}

#[test]
fn include_of_a_missing_file() {
    expect("[global]\ninclude no-such-file.fio\n[job]\n", 2, &["no-such-file.fio"]);
}

#[test]
fn time_based_without_runtime() {
    let (err, path) = run_bad_file("[job]\nrw=read\ntime_based\n");
    assert!(err.contains(&path) && err.contains("runtime"), "{err}");
}

#[test]
fn missing_job_file_is_named() {
    let out = fsbench().args(["fio", "/nonexistent/job.fio", "--no-progress"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/job.fio"));
}

#[test]
fn bad_command_line_option_names_the_flag() {
    let out = fsbench().args(["fio", "--name=x", "--bs=huge", "--no-progress"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("command line") && err.contains("bs") && err.contains("huge"), "{err}");
}

#[test]
fn bad_output_format_is_rejected() {
    let out = fsbench().args(["fio", "--name=x", "--output-format=xml"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("xml"));
}

#[test]
fn read_job_on_a_missing_file_without_size_says_so() {
    let out = fsbench().args(["fio", "--name=x", "--rw=read", "--filename=/nonexistent-dir/f", "--no-progress"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent-dir/f") && err.contains("size"), "{err}");
}

#[test]
fn quick_on_a_missing_directory() {
    let out = fsbench().args(["quick", "/nonexistent-dir"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent-dir"));
}

/// Input files are bounded regular files: a device or a huge file named by
/// mistake is refused with what it is, before anything is read into memory.
#[test]
fn devices_and_huge_files_are_refused_as_input() {
    use std::os::unix::fs::FileTypeExt;
    let d = tempfile::tempdir().unwrap();
    let cases: Vec<Vec<String>> = vec![
        vec!["fio".into(), "/dev/zero".into()],
        vec!["filebench".into(), "-f".into(), "/dev/zero".into()],
        vec!["postmark".into(), "/dev/zero".into()],
        vec!["experiment".into(), "/dev/zero".into()],
        vec!["compare".into(), "/dev/zero".into(), "/dev/zero".into()],
    ];
    for args in &cases {
        let t = std::time::Instant::now();
        let out = fsbench().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("/dev/zero") && err.contains("character device"), "{args:?}: {err}");
        assert!(t.elapsed() < std::time::Duration::from_secs(10), "{args:?} read the device");
    }
    let big = d.path().join("big.fio");
    std::fs::File::create(&big).unwrap().set_len((16 << 20) + 1).unwrap();
    let out = fsbench().arg("fio").arg(&big).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("at most 16 MiB"), "{}", String::from_utf8_lossy(&out.stderr));
    // A block device given as a job file: only its metadata is looked at.
    let dev = std::path::Path::new("/dev/loop0");
    if std::fs::metadata(dev).is_ok_and(|m| m.file_type().is_block_device()) {
        let out = fsbench().args(["fio", "/dev/loop0"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2));
        assert!(err.contains("block device, not a job file") && err.contains("--filename=DEV --allow-device"), "{err}");
    } else {
        eprintln!("SKIPPED: block-device case: no /dev/loop0 node");
    }
}
