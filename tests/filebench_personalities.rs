//! fsbench's Filebench personalities through the CLI: every one runs to
//! completion, shrunk, on tmpfs and on ext4; the workloads keep the shape
//! their definitions promise (fileset size and layout, read:write mixes,
//! balanced creates and deletes, one fsync per append, non-zero data); bad
//! input is reported with a name and a place.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// How a shrunk personality must end.
enum Expect {
    /// Runs for its duration; every I/O flowop did work, except these
    /// (which may legitimately wait the whole run).
    Timed { may_idle: &'static [&'static str] },
    /// Ends on its own (`firstdone`) with these per-flowop op counts,
    /// inclusive ranges.
    Done { ops: &'static [(&'static str, u64, u64)] },
    /// Like `Done`, but bounds the bytes of one flowop (finishonbytes).
    DoneBytes { flowop: &'static str, min: u64, max: u64 },
}

struct Case {
    name: &'static str,
    sets: &'static [&'static str],
    expect: Expect,
}

impl Case {
    fn direct(&self) -> bool {
        self.name.ends_with("direct")
    }
}

const T: Expect = Expect::Timed { may_idle: &[] };

/// Every personality, shrunk to a few files, small sizes and few threads.
/// Write sizes of the unbounded writers stay small so a second of writing
/// fits in RAM and in the ext4 image.
const CASES: &[Case] = &[
    Case { name: "fileserver", sets: &["nfiles=200", "filesize=16k", "nthreads=4"], expect: T },
    Case { name: "varmail", sets: &["nfiles=200", "filesize=16k", "nthreads=4"], expect: T },
    Case { name: "webserver", sets: &["nfiles=100", "filesize=16k", "nthreads=4"], expect: T },
    Case { name: "webproxy", sets: &["nfiles=200", "meanfilesize=16k", "nthreads=4"], expect: T },
    Case {
        name: "oltp",
        sets: &["nshadows=4", "ndbwriters=2", "nfiles=2", "filesize=1m", "logfilesize=1m", "logiosize=64k", "usermode=2000"],
        // The writers block on semaphores the shadows fill, so their reaping
        // may not come round within a second.
        expect: Expect::Timed { may_idle: &["dbwr-aiowait"] },
    },
    Case { name: "videoserver", sets: &["filesize=1m", "nthreads=2", "numactivevids=4", "numpassivevids=20", "repintval=1"], expect: T },
    Case { name: "randomrw", sets: &["filesize=16m"], expect: T },
    Case { name: "randomread", sets: &["filesize=16m"], expect: T },
    Case { name: "randomwrite", sets: &["filesize=16m"], expect: T },
    Case { name: "singlestreamread", sets: &["filesize=16m"], expect: T },
    Case { name: "singlestreamwrite", sets: &["iosize=4k"], expect: T },
    Case { name: "singlestreamreaddirect", sets: &["filesize=16m"], expect: T },
    Case { name: "singlestreamwritedirect", sets: &["iosize=4k"], expect: T },
    Case { name: "fivestreamread", sets: &["filesize=8m"], expect: T },
    Case { name: "fivestreamwrite", sets: &["filesize=1m", "iosize=4k"], expect: T },
    Case { name: "fivestreamreaddirect", sets: &["filesize=8m"], expect: T },
    Case { name: "fivestreamwritedirect", sets: &["filesize=1m", "iosize=4k"], expect: T },
    Case {
        name: "createfiles",
        sets: &["nfiles=200", "meandirwidth=20", "meanfilesize=4k", "nthreads=4"],
        expect: Expect::Done { ops: &[("createfile1", 200, 200)] },
    },
    Case {
        name: "copyfiles",
        sets: &["nfiles=100", "meanfilesize=4k"],
        expect: Expect::Done { ops: &[("createfile2", 100, 100), ("writefile2", 100, 100)] },
    },
    Case { name: "mongo", sets: &["nfiles=100"], expect: Expect::Done { ops: &[("deletefile1", 100, 100)] } },
    Case { name: "netsfs", sets: &["nfiles=200", "nthreads=2", "eventrate=1000"], expect: T },
    Case { name: "makedirs", sets: &["ndirs=100", "meandirwidth=10", "nthreads=4"], expect: Expect::Done { ops: &[("mkdir1", 100, 100)] } },
    Case {
        name: "removedirs",
        sets: &["ndirs=100", "meandirwidth=10", "nthreads=4"],
        expect: Expect::Done { ops: &[("dirremover", 100, 100)] },
    },
    Case { name: "listdirs", sets: &["nfiles=200", "nthreads=2"], expect: T },
    Case { name: "openfiles", sets: &["nfiles=200", "nthreads=2"], expect: T },
    Case { name: "filemicro_create", sets: &["count=16", "iosize=64k"], expect: Expect::Done { ops: &[("append-file", 16, 16)] } },
    // finishoncount counts the process's create, write and close: 30 ops
    // are 10 loops.
    Case {
        name: "filemicro_createfiles",
        sets: &["count=30", "nfiles=100", "iosize=64k"],
        expect: Expect::Done { ops: &[("createfile1", 10, 10)] },
    },
    // Appends average 32 KiB; the run stops at the first check past 1 MiB,
    // so at most one loop of 10 appends overshoots.
    Case {
        name: "filemicro_createrand",
        sets: &["bytes=1m", "iosize=64k"],
        expect: Expect::DoneBytes { flowop: "append-file", min: 1 << 20, max: (1 << 20) + 10 * (64 << 10) },
    },
    Case {
        name: "filemicro_delete",
        sets: &["count=40", "nfiles=100", "nthreads=4", "filesize=4k"],
        expect: Expect::Done { ops: &[("deletefile1", 40, 43)] },
    },
    Case {
        name: "filemicro_rread",
        sets: &["bytes=1m", "filesize=4m", "iosize=4k"],
        expect: Expect::DoneBytes { flowop: "read-file", min: 1 << 20, max: 1 << 20 },
    },
    Case {
        name: "filemicro_rwrite",
        sets: &["bytes=1m", "filesize=4m", "iosize=4k"],
        expect: Expect::DoneBytes { flowop: "write-file", min: 1 << 20, max: 1 << 20 },
    },
    Case { name: "filemicro_rwritedsync", sets: &["count=32", "filesize=4m"], expect: Expect::Done { ops: &[("write-file", 32, 32)] } },
    Case {
        name: "filemicro_rwritefsync",
        sets: &["iters=64", "filesize=4m"],
        expect: Expect::Done { ops: &[("write-file", 64, 64), ("sync-file", 1, 1)] },
    },
    Case { name: "filemicro_seqread", sets: &["filesize=4m"], expect: T },
    Case { name: "filemicro_seqwrite", sets: &["count=16", "iosize=64k"], expect: Expect::Done { ops: &[("write-file", 16, 16)] } },
    Case {
        name: "filemicro_seqwriterand",
        sets: &["count=50"],
        expect: Expect::Done { ops: &[("open-file", 1, 1), ("appendrand-file", 50, 50)] },
    },
    Case {
        name: "filemicro_seqwriterandvargam",
        sets: &["count=50"],
        expect: Expect::Done { ops: &[("open-file", 1, 1), ("write-file", 50, 50)] },
    },
    Case {
        name: "filemicro_seqwriterandvartab",
        sets: &["count=50"],
        expect: Expect::Done { ops: &[("open-file", 1, 1), ("write-file", 50, 50)] },
    },
    Case { name: "filemicro_statfile", sets: &["nfiles=100", "filesize=4k", "nthreads=2"], expect: T },
    Case {
        name: "filemicro_writefsync",
        sets: &["writeiters=8", "fsynccount=4", "iosize=4k"],
        expect: Expect::Done { ops: &[("sync-file", 4, 4), ("append-file", 32, 32)] },
    },
];

/// Seconds a self-ending personality may take before the test calls it hung.
const DONE_CAP_S: &str = "30";

/// `fsbench filebench NAME --set dir=DIR --set ... --runtime R` with JSON out.
fn run_personality(name: &str, dir: &Path, sets: &[&str], runtime: &str, extra: &[&str]) -> Result<Value, String> {
    let mut args: Vec<String> = vec!["filebench".into(), name.into(), "--set".into(), format!("dir={}", dir.display())];
    for s in sets {
        args.push("--set".into());
        args.push(s.to_string());
    }
    args.extend(["--runtime".into(), runtime.into(), "--output-format=json".into(), "--no-progress".into()]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let out = fsbench().args(&args).output().map_err(|e| format!("cannot start fsbench: {e}"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("exit {:?}: {stderr}", out.status.code()));
    }
    let v: Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("stdout is not JSON ({e}): {}\nstderr: {stderr}", String::from_utf8_lossy(&out.stdout)))?;
    if v["partial"] != false || v["jobs"][0]["partial"] != false {
        return Err(format!("partial result; warnings {}", v["warnings"]));
    }
    if !v["jobs"][0]["details"].is_object() {
        return Err("jobs[0].details missing".into());
    }
    Ok(v)
}

fn flow(v: &Value) -> &Value {
    &v["jobs"][0]["details"]
}

fn flowops(v: &Value) -> &[Value] {
    flow(v)["flowops"].as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// Ops (or bytes, with `field = "bytes"`) of the named flowop.
fn stat(v: &Value, name: &str, field: &str) -> Option<u64> {
    v["jobs"][0]["ops"].as_array()?.iter().find(|o| o["name"] == name)?[field].as_u64()
}

/// Sum of `field` over the flowops of a WML kind ("createfile", ...).
fn sum_kind(v: &Value, kind: &str, field: &str) -> u64 {
    flowops(v).iter().filter(|f| f["kind"] == kind).filter_map(|f| stat(v, f["name"].as_str()?, field)).sum()
}

/// Sum of ops over the flowops with this rd/wr direction.
fn sum_direction(v: &Value, direction: &str) -> u64 {
    flowops(v).iter().filter(|f| f["direction"] == direction).filter_map(|f| stat(v, f["name"].as_str()?, "ops")).sum()
}

/// What a run's result says against what the case expects.
fn check(case: &Case, v: &Value) -> Result<(), String> {
    let ended = flow(v)["ended_by"].as_str().unwrap_or("?");
    match &case.expect {
        Expect::Timed { may_idle } => {
            if ended != "duration" {
                return Err(format!("ended by {ended}, expected duration"));
            }
            let io: Vec<&Value> = flowops(v).iter().filter(|f| f["io"] == true).collect();
            if io.is_empty() {
                return Err("no I/O flowops reported".into());
            }
            let idle: Vec<String> = io
                .iter()
                .filter_map(|f| f["name"].as_str())
                .filter(|n| !may_idle.contains(n) && stat(v, n, "ops").unwrap_or(0) == 0)
                .map(str::to_string)
                .collect();
            if !idle.is_empty() {
                return Err(format!("I/O flowops that never ran: {idle:?}; flowops: {}", flow(v)["flowops"]));
            }
        }
        Expect::Done { ops } => {
            if ended != "firstdone" {
                return Err(format!("ended by {ended}, expected firstdone"));
            }
            for (name, lo, hi) in ops.iter() {
                let n = stat(v, name, "ops").ok_or(format!("no flowop {name}"))?;
                if n < *lo || n > *hi {
                    return Err(format!("{name}: {n} ops, expected {lo}..={hi}"));
                }
            }
        }
        Expect::DoneBytes { flowop, min, max } => {
            if ended != "firstdone" {
                return Err(format!("ended by {ended}, expected firstdone"));
            }
            let b = stat(v, flowop, "bytes").ok_or(format!("no flowop {flowop}"))?;
            if b < *min || b > *max {
                return Err(format!("{flowop}: {b} bytes, expected {min}..={max}"));
            }
        }
    }
    Ok(())
}

/// Whether O_DIRECT opens work in `dir` (tmpfs gained it only in Linux 6.6).
fn supports_direct(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join(".direct-probe");
    let ok = std::fs::OpenOptions::new().write(true).create(true).custom_flags(libc::O_DIRECT).open(&probe).is_ok();
    let _ = std::fs::remove_file(&probe);
    ok
}

/// Run every case in its own fresh subdirectory of `base`; return the failures.
fn sweep(base: &Path, label: &str) -> Vec<String> {
    let direct = supports_direct(base);
    if !direct {
        eprintln!("SKIPPED on {label}: the *direct personalities (no O_DIRECT here)");
    }
    let mut failures = Vec::new();
    for case in CASES {
        if case.direct() && !direct {
            continue;
        }
        let dir = base.join(case.name);
        std::fs::create_dir(&dir).unwrap();
        let runtime = if matches!(case.expect, Expect::Timed { .. }) { "1" } else { DONE_CAP_S };
        let started = std::time::Instant::now();
        let result = run_personality(case.name, &dir, case.sets, runtime, &[]).and_then(|v| check(case, &v));
        eprintln!("{label} {}: {:.1} s", case.name, started.elapsed().as_secs_f64());
        if let Err(e) = result {
            failures.push(format!("{label} {}: {e}", case.name));
        }
        match std::fs::read_dir(&dir).map(|d| d.count()) {
            Ok(0) => {}
            Ok(n) => failures.push(format!("{label} {}: {n} entries left behind in {}", case.name, dir.display())),
            Err(e) => failures.push(format!("{label} {}: {}: {e}", case.name, dir.display())),
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    failures
}

fn assert_no_failures(failures: Vec<String>) {
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

fn shm_tempdir() -> Option<tempfile::TempDir> {
    tempfile::tempdir_in("/dev/shm").ok()
}

#[test]
fn every_personality_runs_on_tmpfs() {
    let Some(base) = shm_tempdir() else {
        skip("no writable /dev/shm");
        return;
    };
    assert_no_failures(sweep(base.path(), "tmpfs"));
}

/// The loop-mount tests must not overlap each other.
static LOOP: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// An ext4 file system on a loop device over a sparse file, unmounted and
/// detached on drop, also when a test fails.
struct Ext4 {
    mnt: PathBuf,
    dev: String,
    mounted: bool,
    // Dropped after the unmount and detach in `drop`: holds image and mount point.
    _work: tempfile::TempDir,
}

impl Ext4 {
    fn new(size: u64) -> Result<Ext4, String> {
        let work = disk_tempdir();
        let image = work.path().join("personalities-ext4.img");
        std::fs::File::create(&image).and_then(|f| f.set_len(size)).map_err(|e| format!("image: {e}"))?;
        let out = std::process::Command::new("losetup").args(["--find", "--show"]).arg(&image).output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("losetup: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let mnt = work.path().join("mnt");
        let mut fs = Ext4 { mnt, dev, mounted: false, _work: work };
        std::fs::create_dir(&fs.mnt).map_err(|e| e.to_string())?;
        let mkfs = std::process::Command::new("mkfs.ext4").args(["-q", "-F", &fs.dev]).output().map_err(|e| e.to_string())?;
        if !mkfs.status.success() {
            return Err(format!("mkfs.ext4: {}", String::from_utf8_lossy(&mkfs.stderr)));
        }
        let mount = std::process::Command::new("mount").arg(&fs.dev).arg(&fs.mnt).output().map_err(|e| e.to_string())?;
        if !mount.status.success() {
            return Err(format!("mount: {}", String::from_utf8_lossy(&mount.stderr)));
        }
        fs.mounted = true;
        Ok(fs)
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        if self.mounted {
            let ok = std::process::Command::new("umount").arg(&self.mnt).status().map(|s| s.success()).unwrap_or(false);
            if !ok {
                let _ = std::process::Command::new("umount").arg("-l").arg(&self.mnt).status();
            }
        }
        let _ = std::process::Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn every_personality_runs_on_ext4() {
    if !is_root() {
        skip("needs root for a loop device, mkfs.ext4 and mount");
        return;
    }
    if !have("mkfs.ext4") || !have("losetup") {
        skip("mkfs.ext4 or losetup missing");
        return;
    }
    let _serial = LOOP.lock().unwrap_or_else(|e| e.into_inner());
    let fs = match Ext4::new(4 << 30) {
        Ok(fs) => fs,
        Err(e) => {
            skip(&format!("cannot set up ext4 on a loop device: {e}"));
            return;
        }
    };
    assert_no_failures(sweep(&fs.mnt, "ext4"));
}

// ---- Fidelity: the workloads keep the shape their definitions promise ----

fn fileset<'a>(v: &'a Value, name: &str) -> &'a Value {
    flow(v)["filesets"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["name"] == name))
        .unwrap_or_else(|| panic!("no fileset {name}: {}", flow(v)["filesets"]))
}

fn num(v: &Value, field: &str) -> f64 {
    v[field].as_f64().unwrap_or_else(|| panic!("{field} missing in {v}"))
}

/// Regular files under `root` with their depth (directories between `root`
/// and the file) and size.
fn walk(root: &Path) -> Vec<(PathBuf, usize, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let e = e.unwrap();
            let md = e.metadata().unwrap();
            if md.is_dir() {
                stack.push(e.path());
            } else if md.is_file() && !e.file_name().to_string_lossy().starts_with(".fsbench") {
                let depth = e.path().strip_prefix(root).unwrap().components().count() - 1;
                out.push((e.path(), depth, md.len()));
            }
        }
    }
    out
}

fn has_nonzero_byte(path: &Path) -> bool {
    std::fs::read(path).unwrap().iter().any(|&b| b != 0)
}

/// Filebench's expected mean depth of a fileset tree.
fn expected_depth(entries: f64, width: f64) -> f64 {
    entries.ln() / width.ln()
}

#[test]
fn fileset_count_size_and_depth_match_the_definition() {
    let Some(base) = shm_tempdir() else {
        skip("no writable /dev/shm");
        return;
    };
    // webserver's pages are preallocated in full and only ever read, so the
    // tree on disk after the run is the tree as populated.
    let (n, width, mean) = (5000u64, 20u64, 16384.0);
    let sets = [format!("nfiles={n}"), format!("meandirwidth={width}"), "nthreads=2".into()];
    let sets: Vec<&str> = sets.iter().map(String::as_str).collect();
    let v = run_personality("webserver", base.path(), &sets, "1", &["--keep-files"]).unwrap();
    let fs = fileset(&v, "bigfileset");
    assert_eq!(fs["entries"], n, "{fs}");
    assert_eq!(fs["existing_at_start"], n, "prealloc=100: {fs}");
    // Gamma sizes with shape 1.5 have a CV of 0.82; over 5000 files the
    // sample mean is within 1.2% (one sd) of the definition.
    let reported_mean = num(fs, "mean_size_bytes");
    assert!((reported_mean / mean - 1.0).abs() <= 0.05, "mean size {reported_mean} vs {mean}");
    let want_depth = expected_depth(n as f64, width as f64);
    let reported_depth = num(fs, "mean_depth");
    assert!(
        (reported_depth - want_depth).abs() <= (0.25 * want_depth).max(0.5),
        "mean depth {reported_depth} vs ln(n)/ln(width) = {want_depth:.2}"
    );

    let files = walk(&base.path().join("bigfileset"));
    assert_eq!(files.len() as u64, n, "files on disk");
    let walked_mean = files.iter().map(|f| f.2 as f64).sum::<f64>() / n as f64;
    assert!((walked_mean / mean - 1.0).abs() <= 0.05, "mean size on disk {walked_mean} vs {mean}");
    assert!((walked_mean / reported_mean - 1.0).abs() <= 0.001, "on disk {walked_mean} vs reported {reported_mean}");
    let walked_depth = files.iter().map(|f| f.1 as f64).sum::<f64>() / n as f64;
    assert!((walked_depth - reported_depth).abs() <= 0.01, "depth on disk {walked_depth} vs reported {reported_depth}");
    assert!(
        (walked_depth - want_depth).abs() <= (0.25 * want_depth).max(0.5),
        "depth on disk {walked_depth} vs ln(n)/ln(width) = {want_depth:.2}"
    );
    let dirs = num(fs, "directories");
    assert!(dirs >= (n / width) as f64 * 0.5, "{dirs} directories for {n} files of width {width}");

    // Preallocated data is not zeros.
    let sample: Vec<&PathBuf> = files.iter().filter(|f| f.2 > 0).map(|f| &f.0).take(5).collect();
    assert!(!sample.is_empty());
    for p in sample {
        assert!(has_nonzero_byte(p), "preallocated {} is all zeros", p.display());
    }
}

#[test]
fn preallocation_share_follows_prealloc() {
    let Some(base) = shm_tempdir() else {
        skip("no writable /dev/shm");
        return;
    };
    // fileserver preallocates 80%: a binomial share, sd 0.6% at 5000 files.
    let v = run_personality("fileserver", base.path(), &["nfiles=5000", "filesize=4k", "nthreads=2"], "1", &[]).unwrap();
    let fs = fileset(&v, "bigfileset");
    assert_eq!(fs["entries"], 5000);
    let share = num(fs, "existing_at_start") / 5000.0;
    assert!((share - 0.8).abs() <= 0.03, "{:.1}% existed at the start, prealloc=80", share * 100.0);
    assert!((num(fs, "mean_size_bytes") - 4096.0).abs() < 1.0, "fixed size 4k: {fs}");
}

#[test]
fn written_data_is_not_all_zeros() {
    let Some(base) = shm_tempdir() else {
        skip("no writable /dev/shm");
        return;
    };
    // createfiles starts from an empty tree, so every byte is written by the run.
    let sets = ["nfiles=50", "meanfilesize=16k", "nthreads=2"];
    let v = run_personality("createfiles", base.path(), &sets, DONE_CAP_S, &["--keep-files"]).unwrap();
    assert_eq!(stat(&v, "createfile1", "ops"), Some(50));
    let files = walk(&base.path().join("bigfileset"));
    assert_eq!(files.len(), 50, "every entry was created");
    // `mode quit firstdone`: the first thread to find no free entry ends
    // the run, so another may have created its last file and not yet
    // written it (at most one per other thread).
    let empty = files.iter().filter(|(_, _, len)| *len == 0).count();
    assert!(empty < 2, "{empty} files were created but never written");
    for (p, _, len) in files.iter().filter(|(_, _, len)| *len > 0) {
        assert_eq!(*len, 16384, "{} written whole", p.display());
        assert!(has_nonzero_byte(p), "{} is all zeros", p.display());
    }
}

/// Run a personality with 4 threads on tmpfs for one second.
fn mix_run(name: &str, sets: &[&str]) -> Value {
    let base = shm_tempdir().expect("/dev/shm");
    let mut all = vec!["nthreads=4"];
    all.extend_from_slice(sets);
    let v = run_personality(name, base.path(), &all, "1", &[]).unwrap_or_else(|e| panic!("{name}: {e}"));
    let left = std::fs::read_dir(base.path()).unwrap().count();
    assert_eq!(left, 0, "{name} left files behind");
    v
}

fn assert_ratio(name: &str, v: &Value, want: f64) {
    let (rd, wr) = (sum_direction(v, "read"), sum_direction(v, "write"));
    assert!(rd > 0 && wr > 0, "{name}: {rd} reads, {wr} writes");
    let got = rd as f64 / wr as f64;
    assert!((got / want - 1.0).abs() <= 0.15, "{name}: read:write = {got:.3}, expected {want} ±15% ({rd} reads, {wr} writes)");
}

/// Creates and deletes go together in the loop, so over a run they differ by
/// at most one per thread; a runner that skips deletes drains the fileset.
fn assert_balanced(name: &str, v: &Value, threads: u64) {
    let (c, d) = (sum_kind(v, "createfile", "ops"), sum_kind(v, "deletefile", "ops"));
    let skips: u64 = flowops(v).iter().filter_map(|f| f["busy_skips"].as_u64()).sum();
    let short: u64 = flowops(v).iter().filter_map(|f| f["out_of_files"].as_u64()).sum();
    assert!(c > 0, "{name}: no creates");
    assert!(c.abs_diff(d) <= threads, "{name}: {c} creates vs {d} deletes (busy skips {skips}, out of files {short})");
}

#[test]
fn fileserver_mix_is_one_read_to_two_writes_with_balanced_creates() {
    if shm_tempdir().is_none() {
        skip("no writable /dev/shm");
        return;
    }
    let v = mix_run("fileserver", &["nfiles=500", "filesize=16k"]);
    assert_ratio("fileserver", &v, 0.5);
    assert_balanced("fileserver", &v, 4);
}

#[test]
fn varmail_mix_is_one_to_one_with_an_fsync_per_append() {
    if shm_tempdir().is_none() {
        skip("no writable /dev/shm");
        return;
    }
    let v = mix_run("varmail", &["nfiles=500", "filesize=16k"]);
    assert_ratio("varmail", &v, 1.0);
    assert_balanced("varmail", &v, 4);
    let (fsyncs, appends) = (sum_kind(&v, "fsync", "ops"), sum_kind(&v, "appendfilerand", "ops"));
    assert!(appends > 0 && fsyncs.abs_diff(appends) <= 4, "{fsyncs} fsyncs vs {appends} appends");
}

#[test]
fn webserver_mix_is_ten_reads_per_write() {
    if shm_tempdir().is_none() {
        skip("no writable /dev/shm");
        return;
    }
    let v = mix_run("webserver", &["nfiles=200", "filesize=16k"]);
    assert_ratio("webserver", &v, 10.0);
}

#[test]
fn webproxy_mix_is_five_reads_per_write_with_balanced_creates() {
    if shm_tempdir().is_none() {
        skip("no writable /dev/shm");
        return;
    }
    let v = mix_run("webproxy", &["nfiles=500", "meanfilesize=16k"]);
    assert_ratio("webproxy", &v, 5.0);
    assert_balanced("webproxy", &v, 4);
}

// ---- Bad input ----

fn expect_error(args: &[&str]) -> String {
    let out = fsbench().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(2), "expected a usage error from {args:?}, got {:?}: {err}", out.status.code());
    assert_no_document(&out);
    assert!(!err.contains("panicked"), "panic: {err}");
    err
}

#[test]
fn unknown_personality_is_named_with_the_closest_one() {
    let err = expect_error(&["filebench", "fileservr", "--runtime", "1", "--output-format=json"]);
    assert!(err.contains("fileservr"), "names the unknown personality: {err}");
    assert!(err.contains("fileserver"), "suggests the closest: {err}");
}

#[test]
fn syntax_error_in_a_workload_file_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("broken.f");
    std::fs::write(&f, "# a workload with a mistake on line 3\nset $dir=/tmp\nset $nfiles 100\n").unwrap();
    let err = expect_error(&["filebench", "-f", f.to_str().unwrap(), "--runtime", "1"]);
    let at = format!("{}:3:", f.display());
    let col = err.find(&at).map(|i| &err[i + at.len()..]);
    assert!(col.is_some_and(|c| c.starts_with(|ch: char| ch.is_ascii_digit())), "error should name {at}COLUMN: {err}");
}

#[test]
fn setting_an_unknown_variable_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = format!("dir={}", dir.path().display());
    let err = expect_error(&["filebench", "varmail", "--set", &d, "--set", "nosuchvar=5", "--runtime", "1"]);
    assert!(err.contains("nosuchvar"), "names the variable: {err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing was created");
}
