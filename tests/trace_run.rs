//! `--trace` on a workload command: a fio job of known I/O on a loop device
//! this test makes over a sparse file. The trace in the result holds exactly
//! that I/O, charged to the benchmark; the files it wrote are read by the
//! real blkparse, whose totals equal fsbench's summary; the tracer is put
//! back. Needs root and tracefs; SKIPPED otherwise.

mod common;

use common::{fsbench, is_root, skip};
use std::path::Path;

/// Tracing state is global: one traced run of this file at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Loop {
    dev: String,
    dir: tempfile::TempDir,
    _serial: std::sync::MutexGuard<'static, ()>,
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn setup() -> Option<Loop> {
    if !is_root() {
        skip("not root: block tracing needs root");
        return None;
    }
    if !common::ensure_tracefs() {
        skip("tracefs cannot be mounted at /sys/kernel/tracing");
        return None;
    }
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
    let img = dir.path().join("img");
    std::fs::File::create(&img).and_then(|f| f.set_len(64 << 20)).unwrap();
    let out = std::process::Command::new("losetup").args(["--find", "--show"]).arg(&img).output().unwrap();
    if !out.status.success() {
        skip("no loop device could be made");
        return None;
    }
    Some(Loop { dev: String::from_utf8_lossy(&out.stdout).trim().to_string(), dir, _serial: serial })
}

/// A number after `label` in blkparse's Total block: "Write Dispatches:   1,024, ..."
fn total_figure(text: &str, label: &str) -> u64 {
    let total = text.split("Total (").nth(1).unwrap_or(text);
    let line = total.lines().find(|l| l.contains(label)).unwrap_or_else(|| panic!("no '{label}' in:\n{text}"));
    let after = &line[line.find(label).unwrap() + label.len()..];
    after.trim_start_matches(':').split(',').next().unwrap().trim().replace('\'', "").parse().unwrap()
}

/// A traced fio job of direct 4 KiB writes, one at a time, over `size` of
/// the loop device: its JSON result and its stderr.
fn traced_writes(l: &Loop, base: &Path, size: &str, extra: &[&str]) -> (serde_json::Value, String) {
    let out = fsbench()
        .args(["fio", "--name=w", "--rw=write", "--bs=4k", "--direct=1", "--ioengine=psync", "--allow-device"])
        .arg(format!("--size={size}"))
        .arg(format!("--filename={}", l.dev))
        .arg("--trace")
        .args(extra)
        .arg(format!("--trace-output={}", base.display()))
        .args(["--output-format=json", "--no-progress"])
        .env("FSBENCH_STATE_DIR", l.dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{err}");
    (serde_json::from_slice(&out.stdout).expect("JSON on stdout alone"), err)
}

#[test]
fn traced_fio_job_is_all_in_its_trace() {
    let Some(l) = setup() else { return };
    let base = l.dir.path().join("t");
    let (v, err) = traced_writes(&l, &base, "4m", &[]);
    let t = &v["trace"];
    assert_eq!(t["capture"]["lost_events"], 0, "{err}");
    let a = &t["analysis"];
    // 1,024 writes of 4 KiB, one at a time: each its own request, all the benchmark's.
    let bench = &a["roles"]["benchmark"]["dispatched"];
    assert_eq!(bench["write_ops"], 1024, "{}", a["roles"]);
    assert_eq!(bench["write_bytes"], 4u64 << 20);
    assert_eq!(a["roles"]["other"]["dispatched"]["write_ops"], 0, "nothing else writes to a raw loop device");
    // Written as much as the workload wrote: amplification 1.
    assert_eq!(a["workload_bytes_written"], 4u64 << 20);

    // The real blkparse reads fsbench's files and counts what fsbench's summary counts.
    if which("blkparse") {
        let bp = std::process::Command::new("blkparse").arg("-i").arg(&base).output().unwrap();
        assert!(bp.status.success(), "{}", String::from_utf8_lossy(&bp.stderr));
        let text = String::from_utf8_lossy(&bp.stdout);
        assert_eq!(total_figure(&text, "Write Dispatches"), 1024, "{text}");
        let ours = &t["summary"]["devices"][0]["total"];
        assert_eq!(ours["dispatched"]["write"]["count"], 1024, "{ours}");
        assert_eq!(total_figure(&text, "Writes Completed"), ours["completed"]["write"]["count"].as_u64().unwrap());
    } else {
        skip("blkparse is not installed: the files were not checked with it");
    }
    let tracer = std::fs::read_to_string("/sys/kernel/tracing/current_tracer").unwrap();
    assert_eq!(tracer.trim(), "nop", "the tracer is put back");
    let name = Path::new(&l.dev).file_name().unwrap().to_string_lossy().to_string();
    let enable = std::fs::read_to_string(format!("/sys/block/{name}/trace/enable")).unwrap_or_default();
    assert_ne!(enable.trim(), "1", "the device's trace is disabled");
}

/// `--trace-mask=issue,complete` (blktrace's `-a issue -a complete`): the
/// kernel keeps only dispatches and completions, and the analysis still
/// charges every write to the benchmark.
#[test]
fn trace_mask_keeps_only_the_categories_named() {
    let Some(l) = setup() else { return };
    let base = l.dir.path().join("t");
    let (v, _) = traced_writes(&l, &base, "2m", &["--trace-mask=issue,complete"]);
    let t = &v["trace"];
    assert_eq!(t["capture"]["act_mask"], "issue,complete", "{}", t["capture"]);
    assert_eq!(t["capture"]["lost_events"], 0);
    let total = &t["summary"]["devices"][0]["total"];
    assert_eq!(total["queued"]["write"]["count"], 0, "no Q records: {total}");
    assert_eq!(total["dispatched"]["write"]["count"], 512, "{total}");
    // blkparse counts the cache flush at close as a 0-KiB write completion.
    assert_eq!(total["completed"]["write"]["kib"], 2048, "{total}");
    // 512 writes plus the cache flush at close, each a dispatch and a completion.
    let records = t["capture"]["records"].as_u64().unwrap();
    assert!((1024..=1030).contains(&records), "{records} records");
    let a = &t["analysis"];
    assert_eq!(a["roles"]["benchmark"]["dispatched"]["write_ops"], 512, "{}", a["roles"]);
    assert_eq!(a["phases"]["d2c_request"]["count"], 512, "D2C per request without Qs: {}", a["phases"]["d2c_request"]);

    let bad = fsbench()
        .args(["fio", "--name=w", "--rw=write", "--bs=4k", "--size=1m", "--allow-device", "--trace", "--trace-mask=issue,dispatch"])
        .arg(format!("--filename={}", l.dev))
        .env("FSBENCH_STATE_DIR", l.dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{err}");
    assert!(err.contains("--trace-mask") && err.contains("'dispatch'") && err.contains("complete"), "{err}");
}

#[test]
fn text_report_ends_with_the_trace() {
    let Some(l) = setup() else { return };
    let base = l.dir.path().join("t");
    let out = fsbench()
        .args(["fio", "--name=r", "--rw=randread", "--bs=4k", "--size=8m", "--direct=1", "--number_ios=500", "--allow-device"])
        .arg(format!("--filename={}", l.dev))
        .arg("--trace")
        .arg(format!("--trace-output={}", base.display()))
        .arg("--no-progress")
        .env("FSBENCH_STATE_DIR", l.dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("Block trace of"), "{text}");
    // The reads' bios; the device's cache flush at close is a write Q of 0 KiB.
    assert_eq!(total_figure(&text, "Reads Queued"), 500, "{text}");
    assert!(text.contains("D2C"), "btt's phases are shown: {text}");
}

#[test]
fn trace_of_tmpfs_is_refused_with_the_flag_named() {
    if !is_root() {
        skip("not root");
        return;
    }
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let out = fsbench()
        .args(["fio", "--name=w", "--rw=write", "--bs=4k", "--size=1m", "--trace", "--no-progress"])
        .arg(format!("--directory={}", dir.path().display()))
        .current_dir(dir.path())
        .env("FSBENCH_STATE_DIR", dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--trace") && err.contains("no block device"), "{err}");
}

/// `--trace` takes a device only after `=`: in `--trace --trace-output
/// BASE` (a space) the next flag is a flag, in every family whose tool's
/// options come mixed with fsbench's. On tmpfs the run gets as far as
/// looking for the device under its files, which is what this checks.
#[test]
fn trace_leaves_the_next_flag_alone() {
    let Ok(dir) = tempfile::tempdir_in("/dev/shm") else {
        skip("no /dev/shm");
        return;
    };
    let out_dir = tempfile::tempdir().unwrap();
    let base = out_dir.path().join("t").display().to_string();
    let d = dir.path().display().to_string();
    let cases: [Vec<String>; 4] = [
        ["fio", "--name=w", "--rw=write", "--size=64k", &format!("--directory={d}")].map(String::from).to_vec(),
        ["iozone", "-i", "0", "-s", "64k", "-r", "4k", "-f", &format!("{d}/f")].map(String::from).to_vec(),
        ["bonnie", "-d", &d, "-s", "16", "-r", "8", "-n", "0", "-u", "root"].map(String::from).to_vec(),
        ["ycsb", "load", "rocksdb", "-P", "workloada", "-p", "recordcount=10", "-p", &format!("rocksdb.dir={d}/db")]
            .map(String::from)
            .to_vec(),
    ];
    let state = tempfile::tempdir().unwrap();
    // Bonnie++ as root needs `-u`, which only root may give.
    for args in cases.into_iter().filter(|a| a[0] != "bonnie" || is_root()) {
        for tail in [vec!["--trace", "--trace-output", &base], vec!["--trace", "--trace-mask", "issue,complete", "--trace-output", &base]] {
            let out = fsbench()
                .args(&args)
                .args(&tail)
                .arg("--no-progress")
                .current_dir(dir.path())
                .env("FSBENCH_STATE_DIR", state.path())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!err.contains("a value is required") && !err.contains("unexpected argument"), "{args:?} {tail:?}: {err}");
            assert!(err.contains("--trace: no block device under") && err.contains("tmpfs has none"), "{args:?} {tail:?}: {err}");
        }
    }
}

/// The same with a device to trace: the files go to the base named after
/// the space.
#[test]
fn trace_then_a_spaced_trace_output_traces_into_it() {
    let Some(l) = setup() else { return };
    let base = l.dir.path().join("spaced");
    let out = fsbench()
        .args(["fio", "--name=w", "--rw=write", "--bs=4k", "--size=1m", "--direct=1", "--allow-device", "--no-progress"])
        .arg(format!("--filename={}", l.dev))
        .args(["--trace", "--trace-output"])
        .arg(&base)
        .env("FSBENCH_STATE_DIR", l.dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let first = std::path::PathBuf::from(format!("{}.blktrace.0", base.display()));
    assert!(first.exists(), "{} was written: {err}", first.display());
    assert!(String::from_utf8_lossy(&out.stdout).contains("Block trace of"));
}

fn which(tool: &str) -> bool {
    std::process::Command::new("sh").arg("-c").arg(format!("command -v {tool}")).output().is_ok_and(|o| o.status.success())
}
