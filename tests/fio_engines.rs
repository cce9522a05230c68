//! The engines of issue 10 and the trim workloads through the CLI, against
//! the real fio on the same job (bytes and I/O counts per direction) and
//! against the file system (a trim must free blocks).

mod common;
use common::*;
use serde_json::Value;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// `[(io_bytes, total_ios)]` for read, write, trim, and whether the job failed.
type Counts = ([(u64, u64); 3], bool);

fn counts(v: &Value) -> Counts {
    let j = &v["jobs"][0];
    let dir = |d: &str| (j[d]["io_bytes"].as_u64().unwrap(), j[d]["total_ios"].as_u64().unwrap());
    ([dir("read"), dir("write"), dir("trim")], j["error"].as_u64().unwrap() != 0)
}

/// fsbench's fio-json for a job given as options.
fn fsbench_counts(args: &[&str]) -> Counts {
    let out = fsbench().arg("fio").args(args).args(["--output-format=fio-json", "--no-progress"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("fsbench {args:?}: not JSON ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr)));
    counts(&v)
}

/// The real fio's counts for the same options (run in `dir`), or None when fio is not installed.
fn fio_counts(args: &[&str], dir: &Path) -> Option<Counts> {
    let out = std::process::Command::new("fio").args(args).arg("--output-format=json").current_dir(dir).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // fio prints its error lines before the JSON document.
    let at = text.find('{').unwrap_or_else(|| panic!("fio {args:?} printed no JSON: {text} {}", String::from_utf8_lossy(&out.stderr)));
    Some(counts(&serde_json::from_str(&text[at..]).unwrap()))
}

/// Run one job with fsbench and with fio, each in a fresh directory, and
/// compare. `fio_only` are options only fio needs (fsbench has no `filesize`).
fn same_as_fio(job: &[&str], fio_only: &[&str]) -> Counts {
    let a = disk_tempdir();
    let b = disk_tempdir();
    let with = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = job.iter().map(|s| s.to_string()).collect();
        v.push(format!("--directory={}", d.display()));
        v
    };
    let fa = with(a.path());
    let ours = fsbench_counts(&fa.iter().map(String::as_str).collect::<Vec<_>>());
    let mut fb = with(b.path());
    fb.extend(fio_only.iter().map(|s| s.to_string()));
    let Some(theirs) = fio_counts(&fb.iter().map(String::as_str).collect::<Vec<_>>(), b.path()) else {
        skip("fio is not installed: fsbench's counts are not compared");
        return ours;
    };
    assert_eq!(ours, theirs, "fsbench vs fio for {job:?} (read, write, trim as (bytes, ios); failed)");
    ours
}

#[test]
fn new_engines_move_what_fio_moves() {
    let cases: &[&[&str]] = &[
        &["--ioengine=pvsync", "--rw=write"],
        &["--ioengine=pvsync", "--rw=randread"],
        &["--ioengine=pvsync2", "--rw=randwrite"],
        &["--ioengine=pvsync2", "--rw=read", "--hipri=1", "--direct=1"],
        &["--ioengine=vsync", "--rw=randwrite"],
        &["--ioengine=vsync", "--rw=read"],
        &["--ioengine=posixaio", "--rw=randwrite", "--iodepth=8"],
        &["--ioengine=posixaio", "--rw=read", "--iodepth=4", "--direct=1"],
        &["--ioengine=splice", "--rw=write", "--bs=64k"],
        &["--ioengine=splice", "--rw=randread"],
        &["--ioengine=falloc", "--rw=randwrite"],
        &["--ioengine=falloc", "--rw=read"],
        &["--ioengine=falloc", "--rw=randtrim"],
        &["--ioengine=ftruncate", "--rw=write"],
        &["--ioengine=ftruncate", "--rw=randwrite", "--norandommap"],
    ];
    for c in cases {
        let mut job = vec!["--name=x", "--bs=4k", "--size=256k"];
        job.extend_from_slice(c);
        let (dirs, failed) = same_as_fio(&job, &[]);
        assert!(!failed, "{c:?} failed");
        assert_eq!(dirs.iter().map(|d| d.0).sum::<u64>(), 256 << 10, "{c:?} moved the job's size");
    }
}

#[test]
fn e4defrag_moves_what_fio_moves_or_fails_as_fio_does() {
    // fio's donor is fallocated over `filesize`, which it needs given.
    let job = ["--name=e", "--ioengine=e4defrag", "--rw=write", "--bs=32k", "--size=1m", "--donorname=file.def"];
    for inplace in ["--inplace=0", "--inplace=1"] {
        let mut j = job.to_vec();
        j.push(inplace);
        let (dirs, failed) = same_as_fio(&j, &["--filesize=1m"]);
        if !failed {
            assert_eq!(dirs[1], (1 << 20, 32), "{inplace}");
        }
    }
    // Not ext4: the ioctl fails, and the job reports it.
    let shm = Path::new("/dev/shm");
    if !shm.is_dir() {
        skip("no /dev/shm (tmpfs) to try e4defrag off ext4");
        return;
    }
    let d = tempfile::tempdir_in(shm).unwrap();
    let out = fsbench()
        .args(["fio", "--name=e", "--ioengine=e4defrag", "--rw=write", "--bs=32k", "--size=256k", "--donorname=d", "--no-progress"])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "e4defrag on tmpfs must fail");
    assert!(err.contains("write of 32768 bytes at offset 0") && err.contains("os error"), "{err}");
    assert!(!d.path().join("d").exists(), "the donor fsbench created is removed");
}

/// Random data over `size` bytes, synced: every block allocated.
fn full_file(path: &Path, size: usize) -> u64 {
    let data: Vec<u8> = (0..size).map(|i| (i as u32).wrapping_mul(2654435761).to_le_bytes()[3] | 1).collect();
    std::fs::write(path, &data).unwrap();
    std::fs::File::open(path).unwrap().sync_all().unwrap();
    std::fs::metadata(path).unwrap().blocks()
}

#[test]
fn trim_on_a_file_punches_holes_with_every_engine_that_trims() {
    let dir = disk_tempdir();
    let path = dir.path().join("t");
    let f = format!("--filename={}", path.display());
    for engine in ["sync", "psync", "pvsync", "pvsync2", "vsync", "libaio", "io_uring", "posixaio", "mmap", "splice", "falloc"] {
        for rw in ["trim", "randtrim"] {
            let before = full_file(&path, 1 << 20);
            assert!(before >= 2048, "1 MiB of data holds at least 2048 sectors, got {before}");
            // The first half only: the second keeps its blocks and data.
            let e = format!("--ioengine={engine}");
            let r = format!("--rw={rw}");
            let v = fio_json(&["--name=t", &e, &r, "--bs=4k", "--size=512k", &f]);
            let t = op(&v, 0, "trim");
            assert_eq!((t["ops"].as_u64(), t["bytes"].as_u64()), (Some(128), Some(512 << 10)), "{engine} {rw}");
            let m = std::fs::metadata(&path).unwrap();
            assert_eq!(m.len(), 1 << 20, "{engine} {rw}: a trim keeps the size");
            // 1024 sectors freed, less a few for the extent blocks a random pattern of holes needs.
            assert!(m.blocks() <= before - 960, "{engine} {rw}: st_blocks {} of {before} after trimming half", m.blocks());
            let data = std::fs::read(&path).unwrap();
            assert!(data[..512 << 10].iter().all(|&b| b == 0), "{engine} {rw}: trimmed half reads zeros");
            assert!(data[512 << 10..].iter().all(|&b| b & 1 == 1), "{engine} {rw}: the other half is intact");
        }
    }
}

#[test]
fn trimwrite_trims_then_writes_every_block() {
    let dir = disk_tempdir();
    let path = dir.path().join("tw");
    let f = format!("--filename={}", path.display());
    for rw in ["trimwrite", "randtrimwrite"] {
        full_file(&path, 1 << 20);
        let r = format!("--rw={rw}");
        let v = fio_json(&["--name=tw", "--ioengine=psync", &r, "--bs=4k", "--size=1m", "--zero_buffers=0", &f]);
        for d in ["trim", "write"] {
            let o = op(&v, 0, d);
            assert_eq!((o["ops"].as_u64(), o["bytes"].as_u64()), (Some(256), Some(1 << 20)), "{rw} {d}");
        }
        let m = std::fs::metadata(&path).unwrap();
        assert!(m.blocks() >= 2048, "{rw}: every trimmed block was written again ({} sectors)", m.blocks());
        let data = std::fs::read(&path).unwrap();
        // fsbench's write buffers are random: the old pattern (odd bytes only) is gone.
        let even = data.iter().filter(|&&b| b & 1 == 0).count();
        assert!(even > data.len() / 4, "{rw}: the blocks hold the new data ({even} even bytes)");
    }
}

#[test]
fn engines_that_cannot_trim_are_refused_before_the_run() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", dir.path().display());
    let out = fsbench().args(["fio", "--name=n", "--ioengine=ftruncate", "--rw=trim", "--size=64k", "--no-progress", &d]).output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("option 'rw'") && err.contains("ioengine=ftruncate cannot trim; it can only write"), "{err}");
    assert!(!dir.path().join("n.0.0").exists(), "nothing was laid out");
}

#[test]
fn trim_on_a_loop_device_counts_as_fio_counts() {
    if !is_root() {
        skip("needs root to attach a loop device");
        return;
    }
    let dir = disk_tempdir();
    let backing = dir.path().join("loop.img");
    std::fs::File::create(&backing).unwrap().set_len(64 << 20).unwrap();
    let Some(dev) = Loop::attach(&backing) else {
        skip("losetup could not attach a loop device");
        return;
    };
    let f = format!("--filename={}", dev.0);
    for engine in ["sync", "psync", "pvsync2", "libaio", "io_uring"] {
        for rw in ["trim", "randtrim", "trimwrite"] {
            let e = format!("--ioengine={engine}");
            let r = format!("--rw={rw}");
            let job = ["--name=t", &e, &r, "--bs=4k", "--size=1m", &f];
            let mut ours = job.to_vec();
            ours.push("--allow-device");
            let a = fsbench_counts(&ours);
            let Some(b) = fio_counts(&job, dir.path()) else {
                skip("fio is not installed");
                return;
            };
            assert_eq!(a, b, "{engine} {rw} on {}", dev.0);
            assert_eq!(a.0[2], (1 << 20, 256), "{engine} {rw}: 1 MiB trimmed");
        }
    }
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

#[test]
fn engine_options_of_another_engine_are_warned_about() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", dir.path().display());
    let out = fsbench()
        .args(["fio", "--name=w", "--ioengine=pvsync", "--hipri=1", "--donorname=x", "--rw=write", "--size=64k", "--no-progress", &d])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("hipri only applies to ioengine=pvsync2; ioengine=pvsync ignores it"), "{err}");
    assert!(err.contains("donorname only applies to ioengine=e4defrag"), "{err}");
}

/// A tracefs whose block_rq_issue event carries `ioprio`, if any.
fn tracefs_with_rq_ioprio() -> Option<Tracefs> {
    Tracefs::get().filter(|t| {
        std::fs::read_to_string(t.path.join("events/block/block_rq_issue/format")).is_ok_and(|f| f.contains("field:unsigned short ioprio"))
    })
}

/// cmdprio reaches the block layer: the requests issued with the chosen
/// priority (best effort, level 1: a value nothing else here uses) are as
/// many as fsbench reports in its details, about the percentage asked.
#[test]
fn cmdprio_reaches_the_block_layer() {
    if !is_root() {
        skip("not root: tracefs is not readable");
        return;
    }
    let Some(tracing) = tracefs_with_rq_ioprio() else {
        skip("no tracefs (or it cannot be mounted) with block:block_rq_issue's ioprio field");
        return;
    };
    for engine in ["io_uring", "libaio"] {
        // A trace instance of its own: other tracing is left alone.
        let inst = tracing.path.join(format!("instances/fsbench-cmdprio-{}-{engine}", std::process::id()));
        if std::fs::create_dir(&inst).is_err() {
            skip("cannot create a trace instance");
            return;
        }
        let ev = inst.join("events/block/block_rq_issue");
        let high = (2 << 13) | 1;
        std::fs::write(ev.join("filter"), format!("ioprio == {high}")).unwrap();
        std::fs::write(ev.join("enable"), "1").unwrap();
        let dir = disk_tempdir();
        let d = format!("--directory={}", dir.path().display());
        let e = format!("--ioengine={engine}");
        let out = fsbench()
            .arg("fio")
            .args(["--name=p", &e, "--rw=randread", "--bs=4k", "--size=4m", "--direct=1", "--iodepth=8", &d])
            .args(["--cmdprio_percentage=50", "--cmdprio_class=2", "--cmdprio=1", "--output-format=json", "--no-progress"])
            .output()
            .unwrap();
        let _ = std::fs::write(ev.join("enable"), "0");
        let trace = std::fs::read_to_string(inst.join("trace")).unwrap_or_default();
        let _ = std::fs::remove_dir(&inst);
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            skip(&format!("{engine} did not run here: {err}"));
            continue;
        }
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let reads = &v["jobs"][0]["details"]["cmdprio"]["read"];
        let ours = reads.as_array().unwrap().iter().find(|p| p["prioclass"] == 2 && p["prio"] == 1).unwrap()["ios"].as_u64().unwrap();
        let seen = trace.lines().filter(|l| l.contains("block_rq_issue")).count() as u64;
        assert!((1024 * 35 / 100..1024 * 65 / 100).contains(&ours), "{engine}: {ours} of 1024 I/Os prioritised");
        // Direct 4 KiB reads at random offsets are one request each; a rare
        // merge (fewer) or requeue, which issues a request again (more), is allowed.
        assert!(seen.abs_diff(ours) <= ours / 50, "{engine}: the block layer saw {seen} requests at be/1, fsbench issued {ours}");
    }
}

/// `iodepth_batch_submit` > 1: the batch goes out in the runner's combined
/// submit-and-wait step (`commit_and_reap`, one io_uring_enter for
/// io_uring), and the job still moves what fio moves, with its batches
/// counted as batches of up to 8.
#[test]
fn batched_submit_moves_what_fio_moves() {
    for engine in ["io_uring", "libaio"] {
        let e = format!("--ioengine={engine}");
        let job = [
            "--name=batch",
            e.as_str(),
            "--rw=randread",
            "--bs=4k",
            "--size=2m",
            "--direct=1",
            "--iodepth=16",
            "--iodepth_batch_submit=8",
            "--iodepth_batch_complete_min=4",
        ];
        let d = disk_tempdir();
        let dir = format!("--directory={}", d.path().display());
        let mut args: Vec<&str> = job.to_vec();
        args.push(&dir);
        let out = fsbench().arg("fio").args(&args).args(["--output-format=fio-json", "--no-progress"]).output().unwrap();
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{engine}: not JSON ({e}); stderr: {}", String::from_utf8_lossy(&out.stderr)));
        if v["jobs"][0]["error"].as_u64() != Some(0) {
            skip(&format!("{engine} cannot run direct I/O here: {}", String::from_utf8_lossy(&out.stderr)));
            continue;
        }
        let submit = &v["jobs"][0]["iodepth_submit"];
        let batched: f64 = ["8", "16"].iter().map(|k| submit[*k].as_f64().unwrap_or(0.0)).sum();
        assert!(batched > 0.0, "{engine}: no submit batch of 5-16 I/Os: {submit}");
        let (c, failed) = same_as_fio(&job, &[]);
        assert!(!failed);
        assert_eq!(c[0], (2 << 20, 512), "{engine}: reads (bytes, ios)");
    }
}
