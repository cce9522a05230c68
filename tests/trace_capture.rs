//! Block trace capture on a loop device this test makes over a sparse file:
//! each method of the chain sees exactly the I/O a known workload issued,
//! puts back every tracing setting, counts lost events exactly, and what a
//! killed `fsbench trace` left is undone by `fsbench cleanup` and by the
//! next capture. Needs root and tracefs; SKIPPED otherwise.

mod common;

use common::{fsbench, is_root, skip};
use fsbench::observe::trace::capture::{self, tracepoints, CaptureError, TraceRequest};
use fsbench::observe::trace::record::{act, cat, Records};
use fsbench::result::trace::capture::{Captured, Method};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

const TRACEFS: &str = "/sys/kernel/tracing";

/// Tracing state is global: one test of this file at a time.
static SERIAL: Mutex<()> = Mutex::new(());

struct Loop {
    name: String,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn new(size: u64) -> Result<Loop, String> {
        let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).map_err(|e| e.to_string())?;
        let img = dir.path().join("img");
        std::fs::File::create(&img).and_then(|f| f.set_len(size)).map_err(|e| e.to_string())?;
        let out = std::process::Command::new("losetup").args(["--find", "--show"]).arg(&img).output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("losetup: {}", String::from_utf8_lossy(&out.stderr).trim()));
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        Ok(Loop { name: dev.trim_start_matches("/dev/").to_string(), _dir: dir })
    }
    fn path(&self) -> String {
        format!("/dev/{}", self.name)
    }
    /// Where `fsbench trace` writes its files in a test (its default is
    /// the current directory, as blktrace's).
    fn base(&self) -> String {
        self._dir.path().join("trace").display().to_string()
    }
    fn trace_enable(&self) -> String {
        read(&format!("/sys/block/{}/trace/enable", self.name))
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").args(["-d", &self.path()]).status();
    }
}

fn read(p: &str) -> String {
    std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default()
}

/// Root, tracefs at the usual place, and a loop device; else why not.
fn setup() -> Option<(std::sync::MutexGuard<'static, ()>, Loop)> {
    if !is_root() {
        skip("not root: block tracing needs root");
        return None;
    }
    let guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !common::ensure_tracefs() {
        skip("tracefs cannot be mounted at /sys/kernel/tracing");
        return None;
    }
    match Loop::new(64 << 20) {
        Ok(l) => Some((guard, l)),
        Err(e) => {
            skip(&format!("cannot make a loop device: {e}"));
            None
        }
    }
}

/// The top-level tracer is free (another program's tracing is left alone).
fn top_level_free() -> bool {
    read(&format!("{TRACEFS}/current_tracer")) == "nop"
}

/// 100 direct 4 KiB writes at every third 4 KiB block, from one thread
/// that then lives a little longer; returns its thread id.
fn hundred_writes(dev: &str) -> u32 {
    let dev = dev.to_string();
    std::thread::spawn(move || {
        let f = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_DIRECT).open(&dev).unwrap();
        let layout = std::alloc::Layout::from_size_align(4096, 4096).unwrap();
        // SAFETY: a 4096-byte block with the alignment O_DIRECT needs, freed below.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        // SAFETY: p points to 4096 initialised bytes.
        let buf = unsafe { std::slice::from_raw_parts(p, 4096) };
        for i in 0..100u64 {
            f.write_all_at(buf, i * 3 * 4096).unwrap();
        }
        // SAFETY: allocated above with this layout.
        unsafe { std::alloc::dealloc(p, layout) };
        // A benchmark's threads outlive their first I/O by more than the
        // readers' wake-up: the pid map looks them up while they run.
        std::thread::sleep(std::time::Duration::from_millis(300));
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() as u32 }
    })
    .join()
    .unwrap()
}

fn capture(l: &Loop, method: Method, buffer_kb: u64, work: impl FnOnce()) -> Result<(Captured, Vec<u8>), CaptureError> {
    capture_of(&l.path(), method, buffer_kb, cat::ALL, work)
}

fn capture_of(dev: &str, method: Method, buffer_kb: u64, act_mask: u16, work: impl FnOnce()) -> Result<(Captured, Vec<u8>), CaptureError> {
    let req = TraceRequest { device: dev.to_string(), buffer_kb_per_cpu: buffer_kb, method: Some(method), act_mask };
    let shared = std::sync::Arc::new(Mutex::new(Vec::new()));
    let c = capture::start(&req, Box::new(Shared(shared.clone())))?;
    work();
    let (captured, sink) = c.stop().map_err(|(e, _)| e)?;
    drop(sink);
    let bytes = std::mem::take(&mut *shared.lock().unwrap());
    Ok((captured, bytes))
}

/// A sink the test can read after the capture gave it back.
struct Shared(std::sync::Arc<Mutex<Vec<u8>>>);

impl fsbench::observe::trace::record::RecordSink for Shared {
    fn push(&mut self, rec: &fsbench::observe::trace::record::Record<'_>) -> std::io::Result<()> {
        let mut v = self.0.lock().unwrap();
        v.extend_from_slice(&rec.h.encode());
        v.extend_from_slice(rec.pdu);
        Ok(())
    }
}

/// Exactly the 100 writes as D and C records, from the writer's thread.
fn check_hundred(captured: &Captured, bytes: &[u8], tid: u32) {
    let recs: Vec<_> = Records::new(bytes, 0).collect::<Result<_, _>>().expect("a well-formed record stream");
    assert_eq!(recs.len() as u64, captured.records);
    let want: Vec<u64> = (0..100).map(|i| i * 24).collect();
    for (code, name) in [(act::ISSUE, "D"), (act::COMPLETE, "C"), (act::QUEUE, "Q")] {
        let mut sectors: Vec<u64> = recs.iter().filter(|r| r.h.action_code() == code).map(|r| r.h.sector).collect();
        sectors.sort_unstable();
        assert_eq!(sectors, want, "{name} records at the written sectors, once each");
        for r in recs.iter().filter(|r| r.h.action_code() == code) {
            assert_eq!(r.h.bytes, 4096, "{name} of 4 KiB");
            assert!(r.h.is_write() && r.h.category() & cat::READ == 0, "{name} is a write");
        }
    }
    for r in recs.iter().filter(|r| matches!(r.h.action_code(), act::QUEUE | act::ISSUE)) {
        assert_eq!(r.h.pid, tid, "Q and D are issued by the writer thread");
    }
    let me = captured.pids.get(&tid).unwrap_or_else(|| panic!("the writer {tid} in the pid map {:?}", captured.pids));
    assert_eq!(me.tgid, Some(std::process::id()), "the writer belongs to this process");
    assert_eq!(captured.lost_events, 0, "nothing lost at this rate");
    assert!(recs.windows(2).all(|w| w[0].h.cpu != w[1].h.cpu || w[0].h.time <= w[1].h.time), "times grow per CPU");
    assert!(recs.iter().all(|r| r.h.time < captured.duration_ns), "times count from the start");
}

#[test]
fn blk_tracer_captures_exactly_the_writes_and_restores_the_tracer() {
    let Some((_g, l)) = setup() else { return };
    if !top_level_free() {
        skip("the top-level tracer is in use by someone else");
        return;
    }
    let clock = read(&format!("{TRACEFS}/trace_clock"));
    let kb = read(&format!("{TRACEFS}/buffer_size_kb"));
    let mut tid = 0;
    let (c, bytes) = capture(&l, Method::BlkTracer, 1024, || tid = hundred_writes(&l.path())).expect("blk tracer capture");
    assert_eq!(c.method, Method::BlkTracer);
    assert!(c.reasons.is_empty());
    check_hundred(&c, &bytes, tid);
    assert_eq!(read(&format!("{TRACEFS}/current_tracer")), "nop");
    assert_eq!(read(&format!("{TRACEFS}/trace_clock")), clock, "trace_clock put back");
    assert_eq!(read(&format!("{TRACEFS}/options/bin")), "0");
    if !kb.contains("expanded") {
        assert_eq!(read(&format!("{TRACEFS}/buffer_size_kb")), kb, "buffer size put back");
    }
    assert_eq!(l.trace_enable(), "0");
}

#[test]
fn tracepoints_capture_exactly_the_writes_and_remove_their_instance() {
    let Some((_g, l)) = setup() else { return };
    let mut tid = 0;
    let (c, bytes) = capture(&l, Method::Tracepoints, 1024, || tid = hundred_writes(&l.path())).expect("tracepoint capture");
    assert_eq!(c.method, Method::Tracepoints);
    check_hundred(&c, &bytes, tid);
    assert!(!tracepoints::first_instance_dir(Path::new(TRACEFS)).exists(), "the private instance is removed");
    assert!(!c.pids[&tid].comm.is_empty());
}

/// The actions in a record stream, as (action code, sector) pairs sorted.
fn actions(bytes: &[u8]) -> Vec<(u16, u64)> {
    let mut v: Vec<(u16, u64)> =
        Records::new(bytes, 0).map(|r| r.expect("a well-formed record stream")).map(|r| (r.h.action_code(), r.h.sector)).collect();
    v.sort_unstable();
    v
}

/// blktrace's `-a issue -a complete`, by each tracefs method: the 100
/// writes as D and C records, and nothing else.
#[test]
fn act_mask_keeps_only_the_categories_asked_for() {
    let Some((_g, l)) = setup() else { return };
    for method in [Method::BlkTracer, Method::Tracepoints] {
        if method == Method::BlkTracer && !top_level_free() {
            skip("the top-level tracer is in use by someone else: blk tracer not checked");
            continue;
        }
        let (c, bytes) = capture_of(&l.path(), method, 1024, cat::ISSUE | cat::COMPLETE, || {
            hundred_writes(&l.path());
        })
        .unwrap_or_else(|e| panic!("{method}: {e}"));
        assert_eq!(c.act_mask.as_deref(), Some("issue,complete"));
        let want: Vec<(u16, u64)> = [act::ISSUE, act::COMPLETE].iter().flat_map(|&a| (0..100).map(move |i| (a, i * 24))).collect();
        let mut want = want;
        want.sort_unstable();
        assert_eq!(actions(&bytes), want, "{method}: only the writes' D and C records");
        assert_eq!(l.trace_enable(), "0", "{method}: the device's trace (and its mask) is gone");
    }
}

/// An MBR with one partition from sector `start` of `sectors` sectors.
fn mbr(start: u32, sectors: u32) -> [u8; 512] {
    let mut m = [0u8; 512];
    let e = &mut m[446..462];
    e[4] = 0x83;
    e[8..12].copy_from_slice(&start.to_le_bytes());
    e[12..16].copy_from_slice(&sectors.to_le_bytes());
    m[510] = 0x55;
    m[511] = 0xaa;
    m
}

/// A partition is traced on its disk, kept to its sectors: writes to the
/// disk outside the partition are not in the trace, writes inside are, at
/// their sectors on the disk.
#[test]
fn a_partition_keeps_to_its_sectors() {
    let Some((_g, _l)) = setup() else { return };
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let img = dir.path().join("img");
    let (start, sectors) = (8192u32, 65536u32);
    let f = std::fs::File::create(&img).unwrap();
    f.set_len(64 << 20).unwrap();
    f.write_all_at(&mbr(start, sectors), 0).unwrap();
    drop(f);
    let out = std::process::Command::new("losetup").args(["--find", "--show", "--partscan"]).arg(&img).output().unwrap();
    if !out.status.success() {
        skip("cannot make a partitioned loop device");
        return;
    }
    let disk = String::from_utf8_lossy(&out.stdout).trim().to_string();
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = std::process::Command::new("losetup").args(["-d", &self.0]).status();
        }
    }
    let _detach = Detach(disk.clone());
    let part = format!("{disk}p1");
    for _ in 0..50 {
        if Path::new(&part).exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    if !Path::new(&part).exists() {
        skip("the kernel made no partition node for the loop device");
        return;
    }
    for method in [Method::BlkTracer, Method::Tracepoints] {
        if method == Method::BlkTracer && !top_level_free() {
            continue;
        }
        let (c, bytes) = capture_of(&part, method, 1024, cat::ALL, || {
            // Outside the partition (the disk's first 1.2 MB), then inside.
            hundred_writes(&disk);
            hundred_writes(&part);
        })
        .unwrap_or_else(|e| panic!("{method}: {e}"));
        assert_eq!(c.sectors, Some((start as u64, (start + sectors - 1) as u64)), "{method}");
        let got = actions(&bytes);
        let inside = |s: u64| (start as u64..(start + sectors) as u64).contains(&s);
        for code in [act::ISSUE, act::COMPLETE] {
            let at: Vec<u64> = got.iter().filter(|(a, _)| *a == code).map(|(_, s)| *s).collect();
            let want: Vec<u64> = (0..100).map(|i| start as u64 + i * 24).collect();
            assert_eq!(at, want, "{method}: action {code} at the partition's writes only, as disk sectors");
        }
        assert!(got.iter().all(|(_, s)| *s == 0 || inside(*s)), "{method}: nothing outside the partition: {got:?}");
    }
}

#[test]
fn ioctl_reports_the_kernels_refusal_or_captures() {
    let Some((_g, l)) = setup() else { return };
    let mut tid = 0;
    match capture(&l, Method::Ioctl, 1024, || tid = hundred_writes(&l.path())) {
        Err(CaptureError::Unavailable(r)) => {
            assert_eq!(r.len(), 1);
            assert!(r[0].starts_with("ioctl: "), "{r:?}");
            eprintln!("ioctl refused here: {}", r[0]);
        }
        Ok((c, bytes)) => check_hundred(&c, &bytes, tid),
        Err(e) => panic!("{e}"),
    }
    assert_eq!(l.trace_enable(), "0", "no blktrace left set up on the device");
    let dbg = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .any(|e| e.file_name().to_string_lossy() == format!("fsbench-debugfs-{}", std::process::id()));
    assert!(!dbg, "the private debugfs mount point is gone");
}

#[test]
fn counters_only_counts_the_writes() {
    let Some((_g, l)) = setup() else { return };
    let (c, bytes) = capture(&l, Method::Counters, 1024, || {
        hundred_writes(&l.path());
    })
    .expect("counters");
    assert_eq!((c.method, c.records, bytes.len()), (Method::Counters, 0, 0));
    let d = c.counters.expect("the counters moved");
    assert_eq!((d.write_ios, d.write_bytes()), (100, 409_600));
    assert!(c.notes.iter().any(|n| n.contains("no records")), "{:?}", c.notes);
}

/// A tiny buffer at a high rate loses events, and the count is exact: each
/// direct 512-byte write of dd is Q, G, P, U, D and C, so what was read and
/// what was lost add up to six events a write.
///
/// The readers only copy pages during a capture, so on a quiet machine they
/// keep up even with an 8 KiB buffer. They are made to fall behind: they
/// are started at idle priority on CPU 0 (threads inherit both), where a
/// busy loop of this test's runs until the writes are done.
#[test]
fn a_tiny_buffer_loses_events_and_counts_them_exactly() {
    let Some((_g, l)) = setup() else { return };
    if !top_level_free() {
        skip("the top-level tracer is in use by someone else");
        return;
    }
    let writes = 100_000u64;
    let req =
        TraceRequest { device: l.path(), buffer_kb_per_cpu: capture::MIN_BUFFER_KB, method: Some(Method::BlkTracer), act_mask: cat::ALL };
    let shared = std::sync::Arc::new(Mutex::new(Vec::new()));
    let c = {
        let _starved = StarvedThreads::on_cpu0();
        capture::start(&req, Box::new(Shared(shared.clone()))).expect("capture")
    };
    let mut hog =
        std::process::Command::new("taskset").args(["-c", "0", "sh", "-c", "while :; do :; done"]).spawn().expect("a busy loop on CPU 0");
    let st = std::process::Command::new("dd")
        .args(["if=/dev/zero", &format!("of={}", l.path()), "bs=512", &format!("count={writes}"), "oflag=direct", "status=none"])
        .status()
        .unwrap();
    let _ = hog.kill();
    let _ = hog.wait();
    assert!(st.success());
    let (c, _) = c.stop().map_err(|(e, _)| e).expect("stop");
    assert_eq!(c.lost_events, c.lost_per_cpu.iter().sum::<u64>());
    assert_eq!(c.kernel_events_read, c.records, "every event read was a record of the device");
    assert_eq!(c.records + c.lost_events, 6 * writes, "read + lost = what the kernel wrote");
    assert!(c.lost_events > 0, "a {} KiB buffer whose readers were starved lost nothing", capture::MIN_BUFFER_KB);
}

/// While alive, threads this thread starts run at idle priority on CPU 0;
/// dropping it puts this thread back (the started threads keep it).
struct StarvedThreads {
    mask: libc::cpu_set_t,
}

impl StarvedThreads {
    fn on_cpu0() -> StarvedThreads {
        // SAFETY: plain calls on the calling thread (pid 0) with sets and params of ours.
        unsafe {
            let mut mask: libc::cpu_set_t = std::mem::zeroed();
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut mask);
            let mut cpu0: libc::cpu_set_t = std::mem::zeroed();
            libc::CPU_SET(0, &mut cpu0);
            assert_eq!(libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &cpu0), 0);
            let p = libc::sched_param { sched_priority: 0 };
            assert_eq!(libc::sched_setscheduler(0, libc::SCHED_IDLE, &p), 0);
            StarvedThreads { mask }
        }
    }
}

impl Drop for StarvedThreads {
    fn drop(&mut self) {
        // SAFETY: as above.
        unsafe {
            let p = libc::sched_param { sched_priority: 0 };
            libc::sched_setscheduler(0, libc::SCHED_OTHER, &p);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.mask);
        }
    }
}

fn state_dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

/// `fsbench trace` started and tracing (its stderr said so); the child and its stderr.
fn spawn_trace(l: &Loop, state: &Path, extra: &[&str]) -> std::process::Child {
    let bin = assert_cmd::cargo::cargo_bin("fsbench");
    let mut child = std::process::Command::new(bin)
        .args(["trace", "-d", &l.name, "-w", "60", "-o", &l.base()])
        .args(extra)
        .env("FSBENCH_STATE_DIR", state)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while err.read_line(&mut line).unwrap() > 0 {
        if line.contains("tracing ") {
            return child;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("fsbench trace did not start: {line}");
}

fn kill9(child: &mut std::process::Child) {
    // SAFETY: kill with the pid of our own child, not yet reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
}

#[test]
fn a_killed_blk_trace_is_undone_by_cleanup_and_by_the_next_start() {
    let Some((_g, l)) = setup() else { return };
    if !top_level_free() {
        skip("the top-level tracer is in use by someone else");
        return;
    }
    let clock = read(&format!("{TRACEFS}/trace_clock"));
    let state = state_dir();
    let mut child = spawn_trace(&l, state.path(), &[]);
    kill9(&mut child);
    assert_eq!(read(&format!("{TRACEFS}/current_tracer")), "blk", "the killed run left its tracer");
    assert_eq!(l.trace_enable(), "1");
    let out = fsbench().arg("cleanup").env("FSBENCH_STATE_DIR", state.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("done: restore the tracer") && text.contains("done: disable block tracing"), "{text}");
    assert_eq!(read(&format!("{TRACEFS}/current_tracer")), "nop");
    assert_eq!(read(&format!("{TRACEFS}/trace_clock")), clock);
    assert_eq!(l.trace_enable(), "0");

    // Killed again: the next capture puts it back itself and traces.
    let mut child = spawn_trace(&l, state.path(), &[]);
    kill9(&mut child);
    let out =
        fsbench().args(["trace", "-d", &l.name, "-w", "0.2", "-o", &l.base()]).env("FSBENCH_STATE_DIR", state.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("what a killed fsbench left: done: restore the tracer"), "{err}");
    assert!(err.contains("blk-tracer on"), "the tracer was free again: {err}");
    assert_eq!(read(&format!("{TRACEFS}/current_tracer")), "nop");
    assert_eq!(l.trace_enable(), "0");
}

#[test]
fn a_killed_tracepoint_trace_leaves_an_instance_cleanup_removes() {
    let Some((_g, l)) = setup() else { return };
    let state = state_dir();
    let mut child = spawn_trace(&l, state.path(), &["--method", "tracepoints"]);
    let inst = PathBuf::from(TRACEFS).join(format!("instances/fsbench-{}", child.id()));
    kill9(&mut child);
    assert!(inst.exists(), "the killed run left {}", inst.display());
    let out = fsbench().arg("cleanup").env("FSBENCH_STATE_DIR", state.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("done: remove trace instance"), "{text}");
    assert!(!inst.exists());
}

#[test]
fn ctrl_c_stops_the_trace_and_the_command() {
    let Some((_g, l)) = setup() else { return };
    let bin = assert_cmd::cargo::cargo_bin("fsbench");
    let child = std::process::Command::new(bin)
        .args(["trace", "-d", &l.name, "--method", "tracepoints", "-o", &l.base(), "--", "sleep", "30"])
        .env("FSBENCH_STATE_DIR", l._dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let inst = PathBuf::from(TRACEFS).join(format!("instances/fsbench-{}", child.id()));
    for _ in 0..100 {
        if inst.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let t0 = std::time::Instant::now();
    // SAFETY: our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert!(t0.elapsed().as_secs() < 10, "the command was stopped too");
    assert_eq!(out.status.code(), Some(130));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("tracepoints on") && err.contains("'sleep 30' exited"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Block trace of"), "the summary is printed");
    assert!(Path::new(&format!("{}.blktrace.0", l.base())).exists(), "the trace files are written");
    assert!(!inst.exists(), "the instance is removed");
}

#[test]
fn bad_input_is_named() {
    let out = fsbench().args(["trace", "-d", "no-such-disk9", "-w", "1"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("'no-such-disk9'") && err.contains("no such block device"), "{err}");
    let out = fsbench().args(["trace", "-d", "/etc/passwd", "-w", "1"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("'/etc/passwd'") && err.contains("not a block device"), "{err}");
    let out = fsbench().args(["trace", "-d", "loop0", "--method", "perf", "-w", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown trace method 'perf'"));
    let out = fsbench().args(["trace", "-d", "loop0", "-w", "0"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-w 0: expected a number of seconds greater than 0"));
}

#[test]
fn without_root_the_error_says_so() {
    if !is_root() {
        let out = fsbench().args(["trace", "-d", "/dev/loop0", "-w", "1"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&out.stderr).contains("needs root"));
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("fsbench");
    let out = std::process::Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(&bin)
        .args(["trace", "-d", "/dev/loop0", "-w", "1"])
        .output();
    let Ok(out) = out else {
        skip("no setpriv to drop root");
        return;
    };
    let err = String::from_utf8_lossy(&out.stderr);
    if err.contains("Permission denied") && !err.contains("fsbench") {
        skip(&format!("nobody cannot run the test binary: {err}"));
        return;
    }
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("/dev/loop0") && err.contains("needs root"), "{err}");
}
