//! fio-style jobs through the CLI, checked against real effects: bytes on
//! disk, offsets actually touched, fsync calls counted by strace, pages in
//! the page cache.

mod common;
use common::*;
use std::collections::HashSet;
use std::path::Path;

fn s(p: &Path) -> String {
    p.display().to_string()
}

#[test]
fn size_based_write_writes_exactly_size_bytes() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let v = fio_json(&["--name=w", "--rw=write", "--bs=4k", "--size=1m", &d]);
    let w = op(&v, 0, "write");
    assert_eq!(w["bytes"], 1 << 20);
    assert_eq!(w["ops"], 256);
    assert_eq!(w["errors"], 0);
    let file = dir.path().join("w.0.0");
    let data = std::fs::read(&file).unwrap();
    assert_eq!(data.len(), 1 << 20, "file holds exactly size bytes");
    // Random by default, as fio's: fio 3.33's own file of this job is
    // 11.4% zero bytes (its random fill, and the offset and time its
    // scramble_buffers stamps into each 512 bytes), not zero-filled.
    let zeros = data.iter().filter(|&&b| b == 0).count();
    assert!(zeros < data.len() / 6, "written data is random by default, found {zeros} zero bytes");
    let distinct: HashSet<u8> = data.iter().copied().collect();
    assert_eq!(distinct.len(), 256, "every byte value occurs in random data");
    assert_eq!(v["jobs"][0]["partial"], false);
}

#[test]
fn zero_buffers_writes_zeros_and_compress_percentage_writes_that_share() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    fio_json(&["--name=z", "--rw=write", "--bs=64k", "--size=1m", "--zero_buffers", &d]);
    let data = std::fs::read(dir.path().join("z.0.0")).unwrap();
    assert!(data.iter().all(|&b| b == 0));
    fio_json(&["--name=c", "--rw=write", "--bs=64k", "--size=1m", "--buffer_compress_percentage=50", &d]);
    let data = std::fs::read(dir.path().join("c.0.0")).unwrap();
    let zeros = data.iter().filter(|&&b| b == 0).count() as f64 / data.len() as f64;
    assert!((0.48..0.53).contains(&zeros), "zero share {zeros}");
}

fn iolog_offsets(path: &Path, what: &str) -> Vec<u64> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 4 && f[1] == what).then(|| f[2].parse().unwrap())
        })
        .collect()
}

#[test]
fn randread_with_random_map_reads_every_block_exactly_once() {
    let dir = disk_tempdir();
    let log = dir.path().join("io.log");
    let d = format!("--directory={}", s(dir.path()));
    let l = format!("--write_iolog={}", s(&log));
    let v = fio_json(&["--name=r", "--rw=randread", "--bs=4k", "--size=4m", &d, &l]);
    assert_eq!(op(&v, 0, "read")["ops"], 1024);
    let offs = iolog_offsets(&log, "read");
    assert_eq!(offs.len(), 1024);
    let unique: HashSet<u64> = offs.iter().copied().collect();
    assert_eq!(unique.len(), 1024, "every block once");
    assert!(offs.iter().all(|o| o % 4096 == 0 && *o < 4 << 20));
    let sorted = offs.windows(2).all(|w| w[0] < w[1]);
    assert!(!sorted, "offsets are random, not sequential");

    // Without the map, blocks repeat (birthday paradox: ~37% of 1024 draws).
    let l2 = format!("--write_iolog={}", s(&dir.path().join("io2.log")));
    fio_json(&["--name=r", "--rw=randread", "--bs=4k", "--size=4m", "--norandommap", &d, &l2]);
    let offs = iolog_offsets(&dir.path().join("io2.log"), "read");
    let unique: HashSet<u64> = offs.iter().copied().collect();
    assert!(unique.len() < 900, "norandommap repeats blocks: {} unique of {}", unique.len(), offs.len());
}

#[test]
fn randrepeat_gives_the_same_sequence_and_randseed_changes_it() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let run = |log: &str, extra: &[&str]| {
        let l = format!("--write_iolog={}", s(&dir.path().join(log)));
        let mut a = vec!["--name=r", "--rw=randread", "--bs=4k", "--size=1m", "--norandommap", &d, &l];
        a.extend_from_slice(extra);
        fio_json(&a);
        iolog_offsets(&dir.path().join(log), "read")
    };
    let a = run("a.log", &[]);
    let b = run("b.log", &[]);
    let c = run("c.log", &["--randseed=12345"]);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn fsync_every_n_writes_is_counted_by_strace() {
    if !have("strace") {
        skip("strace is not installed (scripts/setup-peers.sh installs it)");
        return;
    }
    let dir = disk_tempdir();
    let trace = dir.path().join("strace.out");
    let bin = assert_cmd::cargo::cargo_bin("fsbench");
    let out = std::process::Command::new("strace")
        .args(["-f", "-c", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&trace)
        .arg(&bin)
        .args(["fio", "--name=f", "--rw=write", "--bs=4k", "--size=400k", "--fsync=10", "--ioengine=psync"])
        .arg(format!("--directory={}", s(dir.path())))
        .args(["--output-format=json", "--no-progress"])
        .output()
        .unwrap();
    if !out.status.success() && String::from_utf8_lossy(&out.stderr).contains("ptrace") {
        skip("ptrace is not permitted here");
        return;
    }
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(op(&v, 0, "write")["ops"], 100);
    assert_eq!(op(&v, 0, "sync")["ops"], 10, "100 writes / fsync=10");
    let summary = std::fs::read_to_string(&trace).unwrap();
    let calls = |name: &str| -> u64 {
        summary
            .lines()
            .find(|l| l.split_whitespace().last() == Some(name))
            .and_then(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                // % time, seconds, usecs/call, calls, [errors], syscall
                f.get(3).and_then(|c| c.parse().ok())
            })
            .unwrap_or(0)
    };
    assert_eq!(calls("fsync"), 10, "strace summary:\n{summary}");
}

#[test]
fn direct_io_bypasses_the_page_cache_and_buffered_does_not() {
    let dir = disk_tempdir();
    let file = dir.path().join("d.dat");
    let f = format!("--filename={}", s(&file));
    // Writes: with direct=1 nothing of the file stays cached.
    fio_json(&["--name=dw", "--rw=write", "--bs=64k", "--size=8m", "--direct=1", &f]);
    assert_eq!(resident_pages(&file), 0, "direct writes left pages in the page cache");
    fio_json(&["--name=bw", "--rw=write", "--bs=64k", "--size=8m", "--direct=0", &f]);
    let cached = resident_pages(&file);
    assert!(cached > 1000, "buffered writes should leave the file cached, found {cached} pages");
    // Reads: invalidate=1 starts cold; direct reads bring nothing in.
    drop_cache(&file);
    fio_json(&["--name=dr", "--rw=read", "--bs=64k", "--size=8m", "--direct=1", &f]);
    assert_eq!(resident_pages(&file), 0, "direct reads filled the page cache");
    fio_json(&["--name=br", "--rw=read", "--bs=64k", "--size=8m", "--direct=0", &f]);
    assert!(resident_pages(&file) > 1000);
}

#[test]
fn numjobs_clones_are_reported_separately_or_merged_with_group_reporting() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let v = fio_json(&["--name=n", "--rw=write", "--bs=4k", "--size=256k", "--numjobs=3", &d]);
    assert_eq!(v["jobs"].as_array().unwrap().len(), 3);
    for i in 0..3 {
        assert!(dir.path().join(format!("n.{i}.0")).exists(), "clone {i} has its own file");
        assert_eq!(op(&v, i, "write")["bytes"], 256 * 1024);
    }
    let v = fio_json(&["--name=n", "--rw=write", "--bs=4k", "--size=256k", "--numjobs=3", "--group_reporting", &d]);
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(v["jobs"][0]["threads"], 3);
    assert_eq!(op(&v, 0, "write")["bytes"], 3 * 256 * 1024);
}

#[test]
fn stonewall_runs_jobs_one_after_another() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let v = fio_json(&[
        "--name=a",
        "--rw=write",
        "--bs=4k",
        "--size=64k",
        &d,
        "--name=b",
        "--rw=read",
        "--bs=4k",
        "--size=64k",
        "--stonewall",
        &d,
        "--name=c",
        "--rw=read",
        "--bs=4k",
        "--size=64k",
        &d,
    ]);
    let groups: Vec<u64> = v["jobs"].as_array().unwrap().iter().map(|j| j["group"].as_u64().unwrap()).collect();
    assert_eq!(groups, vec![0, 1, 1]);
    assert_eq!(v["groups"].as_array().unwrap().len(), 2);
}

#[test]
fn time_based_runs_for_runtime_and_ramp_is_excluded() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let v = fio_json(&["--name=t", "--rw=randread", "--bs=4k", "--size=1m", "--time_based", "--runtime=2", "--ramp_time=1", &d]);
    let secs = v["jobs"][0]["elapsed_ns"].as_f64().unwrap() / 1e9;
    assert!((1.9..2.6).contains(&secs), "measured window {secs} s should be the 2 s runtime, not ramp + runtime");
    let ops = op(&v, 0, "read")["ops"].as_u64().unwrap();
    assert!(ops > 1024, "time_based wraps around the 256-block file: {ops} reads");
    let tl = v["jobs"][0]["timeline"]["ops"]["read"].as_array().unwrap();
    assert_eq!(tl.len(), 2, "one sample per full second");
    let sum: u64 = tl.iter().map(|x| x.as_u64().unwrap()).sum();
    assert!(sum <= ops && sum * 10 >= ops * 9, "timeline {sum} vs ops {ops}");
}

#[test]
fn rate_iops_limits_the_rate() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let v = fio_json(&["--name=r", "--rw=randread", "--bs=4k", "--size=1m", "--rate_iops=200", "--time_based", "--runtime=2", &d]);
    let iops = op(&v, 0, "read")["ops"].as_f64().unwrap() / 2.0;
    assert!((170.0..=215.0).contains(&iops), "rate_iops=200 gave {iops}");
}

#[test]
fn null_engine_does_no_io() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let v = fio_json(&["--name=n", "--rw=randread", "--bs=4k", "--size=1m", "--ioengine=null", "--time_based", "--runtime=1", &d]);
    let reads = op(&v, 0, "read")["ops"].as_u64().unwrap();
    assert!(reads > 100_000, "null engine should reach far beyond disk speed: {reads}");
    let io = &v["groups"][0]["process_io"];
    assert!(io["syscr"].as_u64().unwrap() < 1000, "null engine made read syscalls: {io}");
}

#[test]
fn unlink_removes_created_files_and_default_keeps_them() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    fio_json(&["--name=k", "--rw=write", "--bs=4k", "--size=64k", &d]);
    assert!(dir.path().join("k.0.0").exists());
    fio_json(&["--name=u", "--rw=write", "--bs=4k", "--size=64k", "--unlink=1", &d]);
    assert!(!dir.path().join("u.0.0").exists());
}

#[test]
fn unlink_never_deletes_a_file_fsbench_did_not_create() {
    let dir = disk_tempdir();
    let file = dir.path().join("precious.dat");
    std::fs::write(&file, vec![7u8; 64 * 1024]).unwrap();
    fio_json(&["--name=u", "--rw=read", "--bs=4k", &format!("--filename={}", s(&file)), "--unlink=1"]);
    assert!(file.exists(), "a pre-existing file was deleted");
}

#[test]
fn json_stays_valid_when_there_are_warnings() {
    let dir = disk_tempdir();
    let out = fsbench()
        .args(["fio", "--name=q", "--rw=randread", "--bs=4k", "--size=64k", "--iodepth=16", "--ioengine=psync"])
        .arg(format!("--directory={}", s(dir.path())))
        .args(["--output-format=json", "--no-progress"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("iodepth=16 has no effect"), "warning on stderr: {err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is pure JSON");
    assert_eq!(v["schema"], "fsbench-result/2");
    assert_eq!(v["layout"], "fio");
    assert_eq!(v["jobs"][0]["ops"][0]["class"], "data_read");
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["code"] == "iodepth-no-effect" && w["message"].as_str().unwrap().contains("iodepth")));
    assert!(v["system"]["kernel"].as_str().unwrap().len() > 3);
}

#[test]
fn a_warning_every_repeat_gives_is_printed_once() {
    // Each of the three runs warns that iodepth does nothing with psync,
    // and the 64 KiB working set fits in RAM: each warning once on stderr,
    // with its code, and in every run's JSON.
    let dir = disk_tempdir();
    let out = fsbench()
        .args(["fio", "--name=q", "--rw=randread", "--bs=4k", "--size=64k", "--iodepth=16", "--ioengine=psync", "--repeat=3"])
        .arg(format!("--directory={}", s(dir.path())))
        .args(["--output-format=json", "--no-progress"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let lines = |code: &str| err.lines().filter(|l| l.starts_with(&format!("fsbench: warning[{code}]: "))).count();
    assert_eq!(lines("iodepth-no-effect"), 1, "{err}");
    assert!(lines("working-set-fits-in-ram") <= 1, "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is pure JSON");
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "{v}");
    for r in runs {
        assert!(r["warnings"].as_array().unwrap().iter().any(|w| w["code"] == "iodepth-no-effect"), "{}", r["warnings"]);
    }
    // No line of the warnings is long.
    for l in err.lines().filter(|l| l.starts_with("fsbench: warning[")) {
        assert!(l.chars().count() <= 300, "{} chars: {l}", l.chars().count());
    }
}

#[test]
fn fio_json_layout_has_the_fields_fio_tools_read() {
    let dir = disk_tempdir();
    let out = fsbench()
        .args(["fio", "--name=x", "--rw=randrw", "--bs=4k", "--size=1m", "--output-format=fio-json", "--no-progress"])
        .arg(format!("--directory={}", s(dir.path())))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let j = &v["jobs"][0];
    assert_eq!(j["jobname"], "x");
    let (r, w) = (&j["read"], &j["write"]);
    let total = r["total_ios"].as_u64().unwrap() + w["total_ios"].as_u64().unwrap();
    assert_eq!(total, 256);
    assert_eq!(r["io_bytes"].as_u64().unwrap() + w["io_bytes"].as_u64().unwrap(), 1 << 20);
    assert!(r["iops"].as_f64().unwrap() > 0.0);
    assert_eq!(r["clat_ns"]["N"], r["total_ios"]);
    assert!(r["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap() > 0);
    assert!(r["lat_ns"]["mean"].as_f64().unwrap() > 0.0);
    assert!(j["usr_cpu"].is_number() && j["sys_cpu"].is_number());
    assert!(v["disk_util"].is_array(), "files on a block device get disk_util");
}

#[test]
fn ctrl_c_prints_partial_results_and_removes_created_files() {
    let dir = disk_tempdir();
    let bin = assert_cmd::cargo::cargo_bin("fsbench");
    let child = std::process::Command::new(bin)
        .args(["fio", "--name=long", "--rw=randwrite", "--bs=4k", "--size=4m", "--time_based", "--runtime=60"])
        .arg(format!("--directory={}", s(dir.path())))
        .args(["--output-format=json", "--no-progress"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(dir.path().join("long.0.0").exists(), "the job file exists while running");
    // SAFETY: kill takes plain integers and touches no memory; `child` has not been waited for, so its pid still names
    // that process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("partial JSON on stdout");
    assert_eq!(v["partial"], true);
    assert_eq!(v["jobs"][0]["partial"], true);
    assert!(op(&v, 0, "write")["ops"].as_u64().unwrap() > 0);
    assert!(!dir.path().join("long.0.0").exists(), "created file removed after Ctrl-C");
}

#[test]
fn block_device_needs_allow_device_and_then_works() {
    if !is_root() {
        skip("needs root to attach a loop device");
        return;
    }
    let dir = disk_tempdir();
    let backing = dir.path().join("loop.img");
    std::fs::File::create(&backing).unwrap().set_len(64 << 20).unwrap();
    let loopdev = match Loop::attach(&backing) {
        Some(l) => l,
        None => {
            skip("losetup could not attach a loop device");
            return;
        }
    };
    let f = format!("--filename={}", loopdev.0);
    let out =
        fsbench().args(["fio", "--name=dev", "--rw=write", "--bs=64k", "--size=4m", "--direct=1", "--no-progress", &f]).output().unwrap();
    assert!(!out.status.success(), "writing a device without --allow-device must fail");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--allow-device"));
    let v = fio_json(&["--name=dev", "--rw=write", "--bs=64k", "--size=4m", "--direct=1", "--allow-device", &f]);
    assert_eq!(op(&v, 0, "write")["bytes"], 4 << 20);
    let dev = &v["groups"][0]["devices"][0];
    assert!(dev["name"].as_str().unwrap().starts_with("loop"), "{dev}");
    let sectors = dev["delta"]["write_sectors"].as_u64().unwrap();
    assert!(sectors >= 8192, "the device saw the 4 MiB: {sectors} sectors");
}

/// A loop device this test attached; detached on drop, even after a failure.
struct Loop(String);

impl Loop {
    fn attach(file: &Path) -> Option<Loop> {
        let out = std::process::Command::new("losetup").args(["--find", "--show"]).arg(file).output().ok()?;
        out.status.success().then(|| Loop(String::from_utf8_lossy(&out.stdout).trim().to_string()))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").args(["-d", &self.0]).status();
    }
}
