//! `fsbench replay` and `fsbench surface` on a loop device this test makes
//! over a sparse file (root only; SKIPPED otherwise): the device counters
//! move by exactly the trace's I/Os, timing and depth are kept, fio replays
//! the iologs fsbench writes and fsbench replays the ones fio writes, and
//! bad input is refused naming the flag.

mod common;
use common::{fsbench, have, is_root, skip};
use fsbench::observe::trace::record::{act, cat, Header, MAGIC, VERSION};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A loop device over a sparse file in its own temporary directory;
/// detached on drop, even after a failed assertion.
struct Loop {
    dev: String,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn attach(bytes: u64) -> Option<Loop> {
        let dir = tempfile::tempdir().ok()?;
        let img = dir.path().join("img");
        std::fs::File::create(&img).ok()?.set_len(bytes).ok()?;
        let out = std::process::Command::new("losetup").args(["--find", "--show"]).arg(&img).output().ok()?;
        if !out.status.success() {
            return None;
        }
        let lo = Loop { dev: String::from_utf8_lossy(&out.stdout).trim().to_string(), _dir: dir };
        // udev probes a new device once; let that finish before counting.
        let _ = std::process::Command::new("udevadm").arg("settle").status();
        Some(lo)
    }
    fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn setup(bytes: u64) -> Option<Loop> {
    if !is_root() {
        skip("needs root to attach a loop device");
        return None;
    }
    let lo = Loop::attach(bytes);
    if lo.is_none() {
        skip("losetup could not attach a loop device");
    }
    lo
}

/// (time ns, sector, bytes, write?) as D events on CPU `i % 2`, with a Q
/// before each (which replay must not count twice), in two per-CPU files.
fn write_trace(dir: &Path, ios: &[(u64, u64, u32, bool)]) -> PathBuf {
    let mut files = [Vec::new(), Vec::new()];
    for (i, &(t, sector, bytes, write)) in ios.iter().enumerate() {
        let dir_cat = if write { cat::WRITE } else { cat::READ };
        for (code, c, dt) in [(act::QUEUE, cat::QUEUE, 0), (act::ISSUE, cat::ISSUE, 1000)] {
            let h = Header {
                magic: MAGIC | VERSION,
                sequence: i as u32,
                time: t + dt,
                sector,
                bytes,
                action: ((dir_cat | c) as u32) << 16 | code as u32,
                pid: 1,
                device: 7 << 20,
                cpu: (i % 2) as u16,
                error: 0,
                pdu_len: 0,
            };
            files[i % 2].extend_from_slice(&h.encode());
        }
    }
    for (cpu, f) in files.iter().enumerate() {
        std::fs::write(dir.join(format!("t.blktrace.{cpu}")), f).unwrap();
    }
    dir.join("t")
}

/// Reads then writes, never adjacent (no merges), over `span_ns`.
fn mixed(reads: u64, writes: u64, span_ns: u64) -> Vec<(u64, u64, u32, bool)> {
    let n = reads + writes;
    (0..n).map(|i| (i * span_ns / n.max(1), (i * 7919 % 4000) * 32, if i < reads { 4096 } else { 8192 }, i >= reads)).collect()
}

fn run_json(args: &[&str]) -> Value {
    let out = fsbench().args(args).args(["--output-format=json", "--no-progress"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fsbench {args:?} failed: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {stderr}"))
}

fn fails(args: &[&str]) -> String {
    let out = fsbench().args(args).arg("--no-progress").output().unwrap();
    assert!(!out.status.success(), "fsbench {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).to_string()
}

/// The loop device's counter delta over the measured window.
fn delta<'a>(v: &'a Value, lo: &Loop) -> &'a Value {
    let devs = v["groups"][0]["devices"].as_array().unwrap();
    &devs.iter().find(|d| d["name"] == lo.name()).unwrap_or_else(|| panic!("no {} in {devs:?}", lo.name()))["delta"]
}

fn op(v: &Value, name: &str) -> u64 {
    v["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["name"] == name).map(|o| o["ops"].as_u64().unwrap()).unwrap_or(0)
}

#[test]
fn replay_moves_the_device_counters_by_the_trace() {
    let Some(lo) = setup(64 << 20) else { return };
    let d = tempfile::tempdir().unwrap();
    let t = write_trace(d.path(), &mixed(200, 100, 200_000_000));
    let tr = t.to_str().unwrap();
    let v = run_json(&["replay", tr, "--target", &lo.dev, "--write", "--allow-device", "--speed", "max", "--depth", "8"]);
    let x = delta(&v, &lo);
    assert_eq!((x["read_ios"].as_u64(), x["read_sectors"].as_u64()), (Some(200), Some(200 * 8)), "{x}");
    assert_eq!((x["write_ios"].as_u64(), x["write_sectors"].as_u64()), (Some(100), Some(100 * 16)), "{x}");
    assert_eq!((op(&v, "read"), op(&v, "write")), (200, 100));
    let det = &v["jobs"][0]["details"];
    assert_eq!(det["trace_ios"], 300);
    assert!(det["source"].as_str().unwrap().contains("D (issue)"), "{det}");
}

#[test]
fn as_recorded_keeps_the_trace_time_and_max_is_faster() {
    let Some(lo) = setup(64 << 20) else { return };
    let d = tempfile::tempdir().unwrap();
    let t = write_trace(d.path(), &mixed(400, 0, 1_000_000_000));
    let tr = t.to_str().unwrap();
    let secs = |v: &Value| v["jobs"][0]["elapsed_ns"].as_f64().unwrap() / 1e9;
    let rec = run_json(&["replay", tr, "--target", &lo.dev]);
    let span = rec["jobs"][0]["details"]["trace_span_ns"].as_f64().unwrap() / 1e9;
    assert!((0.99..1.0).contains(&span), "span {span}");
    assert!(secs(&rec) >= span && secs(&rec) < span + 0.4, "as recorded took {} s for a {span} s trace", secs(&rec));
    let max = run_json(&["replay", tr, "--target", &lo.dev, "--speed", "max"]);
    assert!(secs(&max) < secs(&rec) / 2.0, "max {} s, as recorded {} s", secs(&max), secs(&rec));
    assert_eq!(op(&max, "read"), 400);
}

#[test]
fn the_depth_limit_holds() {
    let Some(lo) = setup(64 << 20) else { return };
    let d = tempfile::tempdir().unwrap();
    // All at once: only the limit keeps them from all being in flight.
    let ios: Vec<_> = (0..2000u64).map(|i| (0, (i * 7919 % 4000) * 32, 4096u32, false)).collect();
    let t = write_trace(d.path(), &ios);
    let stat = format!("/sys/block/{}/inflight", lo.name());
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (flag, path) = (done.clone(), stat.clone());
    let sampler = std::thread::spawn(move || {
        let mut most = 0u64;
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            let s = std::fs::read_to_string(&path).unwrap_or_default();
            most = most.max(s.split_whitespace().filter_map(|x| x.parse::<u64>().ok()).sum());
        }
        most
    });
    let v = run_json(&["replay", t.to_str().unwrap(), "--target", &lo.dev, "--speed", "max", "--depth", "4"]);
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let seen = sampler.join().unwrap();
    assert_eq!(v["jobs"][0]["details"]["max_inflight"], 4, "{}", v["jobs"][0]["details"]);
    assert!(seen <= 4, "{stat} showed {seen} in flight with --depth 4");
    assert_eq!(op(&v, "read"), 2000);
}

#[test]
fn writes_and_bad_input_are_refused_before_any_io() {
    let Some(lo) = setup(64 << 20) else { return };
    let d = tempfile::tempdir().unwrap();
    let t = write_trace(d.path(), &mixed(10, 5, 1_000_000));
    let tr = t.to_str().unwrap();
    let before = std::fs::read_to_string(format!("/sys/block/{}/stat", lo.name())).unwrap();
    let e = fails(&["replay", tr, "--target", &lo.dev]);
    assert!(e.contains("--write") && e.contains("5 writes"), "{e}");
    let e = fails(&["replay", tr, "--target", &lo.dev, "--write"]);
    assert!(e.contains("--allow-device"), "{e}");
    let far = write_trace(d.path(), &[(0, (64 << 20) / 512, 4096, false)]);
    let e = fails(&["replay", far.to_str().unwrap(), "--target", &lo.dev]);
    assert!(e.contains("past the end") && e.contains("--beyond-end"), "{e}");
    let after = std::fs::read_to_string(format!("/sys/block/{}/stat", lo.name())).unwrap();
    assert_eq!(before, after, "a refused replay issued I/O");
    let v = run_json(&["replay", far.to_str().unwrap(), "--target", &lo.dev, "--beyond-end", "wrap"]);
    assert_eq!(op(&v, "read"), 1);
    let e = fails(&["replay", tr, "--target", &lo.dev, "--depth", "0"]);
    assert!(e.contains("--depth"), "{e}");
    let e = fails(&["replay", &d.path().join("missing").display().to_string(), "--target", &lo.dev]);
    assert!(e.contains("missing") && e.contains("no trace files") && e.contains("fio iolog"), "{e}");
    let e = fails(&["replay", tr]);
    assert!(e.contains("--target"), "{e}");
    let e = fails(&["replay", tr, "--target", &lo.dev, "--reads-only", "--engine", "psync"]);
    assert!(e.contains("--engine psync"), "{e}");
    let file = d.path().join("t.blktrace.0");
    let e = fails(&["surface", file.to_str().unwrap()]);
    assert!(e.contains("DEVICE") && e.contains("regular file"), "{e}");
    let e = fails(&["surface", &lo.dev, "--chunk", "1000"]);
    assert!(e.contains("--chunk"), "{e}");
    let e = fails(&["surface", &lo.dev, "--zones", "100", "--chunk", "1m"]);
    assert!(e.contains("--zones") && e.contains("--chunk"), "{e}");
    let e = fails(&["surface", &lo.dev, "--write"]);
    assert!(e.contains("--allow-device"), "{e}");
}

#[test]
fn iologs_round_trip_through_the_real_fio() {
    let Some(lo) = setup(64 << 20) else { return };
    if !have("fio") {
        skip("fio is not installed");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let t = write_trace(d.path(), &mixed(120, 60, 50_000_000));
    for v in ["2", "3"] {
        let log = d.path().join(format!("v{v}.log"));
        let out = fsbench()
            .args(["replay", t.to_str().unwrap(), "--to-iolog", log.to_str().unwrap(), "--iolog-version", v, "--target", &lo.dev])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let r = format!("--read_iolog={}", log.display());
        let out = std::process::Command::new("fio").args(["--name=r", &r, "--direct=1", "--output-format=json"]).output().unwrap();
        assert!(out.status.success(), "fio: {}{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
        let j: Value = serde_json::from_slice(&out.stdout).unwrap();
        let ios = |d: &str| j["jobs"][0][d]["total_ios"].as_u64().unwrap();
        assert_eq!((ios("read"), ios("write")), (120, 60), "fio replayed the v{v} log with other counts");
    }
    // And what fio writes, fsbench replays.
    let log = d.path().join("fio.log");
    let w = format!("--write_iolog={}", log.display());
    let f = format!("--filename={}", lo.dev);
    let out = std::process::Command::new("fio")
        .args(["--name=w", &f, "--rw=randrw", "--bs=4k", "--size=8m", "--direct=1", "--number_ios=150", &w, "--output-format=json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&log).unwrap();
    let count = |a: &str| text.lines().filter(|l| l.split_whitespace().nth(2) == Some(a)).count() as u64;
    let v = run_json(&["replay", log.to_str().unwrap(), "--target", &lo.dev, "--write", "--allow-device"]);
    assert_eq!((op(&v, "read"), op(&v, "write")), (count("read"), count("write")));
    assert_eq!(count("read") + count("write"), 150);
    let x = delta(&v, &lo);
    assert_eq!((x["read_ios"].as_u64(), x["write_ios"].as_u64()), (Some(count("read")), Some(count("write"))), "{x}");
}

#[test]
fn surface_scan_reads_every_zone() {
    let Some(lo) = setup(64 << 20) else { return };
    let charts = tempfile::tempdir().unwrap();
    let v = run_json(&[
        "surface",
        &lo.dev,
        "--zones",
        "8",
        "--chunks-per-zone",
        "2",
        "--chunk",
        "1m",
        "--charts",
        charts.path().to_str().unwrap(),
    ]);
    let zones = v["jobs"][0]["details"]["surface"]["zones"].as_array().unwrap();
    assert_eq!(zones.len(), 8);
    assert_eq!(zones[7]["offset"], 56 << 20);
    assert!(zones.iter().all(|z| z["mib_s"].as_f64().unwrap() > 0.0 && z["bytes"] == 2 << 20), "{zones:?}");
    let x = delta(&v, &lo);
    assert_eq!(x["read_sectors"].as_u64().unwrap() * 512, 16u64 << 20, "{x}");
    for f in ["surface-throughput.svg", "surface-latency.svg"] {
        let svg = std::fs::read_to_string(charts.path().join(f)).unwrap();
        assert!(svg.starts_with("<svg") && svg.contains("polyline"), "{f}");
    }
    let out = fsbench().args(["surface", &lo.dev, "--zones", "4", "--chunks-per-zone", "1", "--no-progress"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("MiB/s") && text.contains("slowest zones: zone"), "{text}");
}
