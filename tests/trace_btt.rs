//! The trace analysis against the real `btt` (Debian's blktrace package):
//! a synthetic trace with merges, requeues, inserts skipped and unplugs,
//! and, as root, a real trace of fio on a loop device captured with the
//! ftrace `blk` tracer. For each, btt's average and count per phase must
//! equal the analysis's exact mean and count, and btt's #Q, #D and I/Os
//! per unplug the analysis's. Skipped without blkparse and btt.

mod common;

use fsbench::observe::trace::analysis::{analyse, Context};
use fsbench::observe::trace::record::{act, cat, Header, Record, MAGIC, VERSION};
use fsbench::result::trace::analysis::{Role, TraceAnalysis};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::process::Command;

/// Counts this thread's allocations, so a test can show a code path makes none.
struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards every call to the system allocator unchanged; the count
// is a const-initialised thread-local without a destructor, which needs no
// allocation itself.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `alloc` above with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.with(|c| c.set(c.get() + 1));
        // SAFETY: as for `dealloc`, and `n` is the caller's new size.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static A: Counting = Counting;

type Event = (Header, Vec<u8>);

fn header(t: u64, a: u16, c: u16, sector: u64, bytes: u32, pid: u32, cpu: u16) -> Header {
    Header {
        magic: MAGIC | VERSION,
        sequence: 0,
        time: t,
        sector,
        bytes,
        action: (c as u32) << 16 | a as u32,
        pid,
        device: 7 << 20 | 3,
        cpu,
        error: 0,
        pdu_len: 0,
    }
}

/// A small deterministic generator (64-bit LCG, high bits).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// 400 I/Os overlapping in time, each in its own 256-sector region: plain
/// ones (Q G I D C), back and front merges of two bios, requeues, ones
/// without an I (as blk-mq without a scheduler traces them), and unplugs.
fn synthetic() -> Vec<Event> {
    let mut g = Lcg(14);
    let mut ev: Vec<Event> = Vec::new();
    for i in 0..400u64 {
        let cpu = (i % 2) as u16;
        let pid = 1000 + (i % 3) as u32;
        let c = if g.next(3) == 0 { cat::READ } else { cat::WRITE };
        let s = i * 256 + g.next(4) * 16;
        let n = 8 * (1 + g.next(4)) as u32;
        let mut t = 1_000_000 + i * 3_000 + g.next(1000);
        let t0 = t;
        let mut at = |g: &mut Lcg, lo: u64, hi: u64| {
            t += lo + g.next(hi - lo);
            t
        };
        let mut e =
            |t: u64, a: u16, sector: u64, sectors: u32, pid: u32| ev.push((header(t, a, c, sector, sectors * 512, pid, cpu), vec![]));
        let kind = g.next(5);
        match kind {
            1 | 4 => {
                let m = 8 * (1 + g.next(2)) as u32;
                // Back merge: the second bio follows the first; front: precedes it.
                let (first, second, merge) = if kind == 1 { (s, s + n as u64, act::BACKMERGE) } else { (s + m as u64, s, act::FRONTMERGE) };
                e(t0, act::QUEUE, first, n, pid);
                e(at(&mut g, 100, 900), act::GETRQ, first, n, pid);
                e(at(&mut g, 100, 900), act::QUEUE, second, m, pid + 10);
                e(at(&mut g, 50, 300), merge, second, m, pid + 10);
                e(at(&mut g, 100, 2000), act::INSERT, s, n + m, pid);
                e(at(&mut g, 100, 5000), act::ISSUE, s, n + m, 0);
                e(at(&mut g, 2000, 60_000), act::COMPLETE, s, n + m, 0);
            }
            2 => {
                e(t0, act::QUEUE, s, n, pid);
                e(at(&mut g, 100, 900), act::GETRQ, s, n, pid);
                e(at(&mut g, 100, 900), act::INSERT, s, n, pid);
                e(at(&mut g, 100, 5000), act::ISSUE, s, n, 0);
                e(at(&mut g, 100, 3000), act::REQUEUE, s, n, 0);
                e(at(&mut g, 100, 900), act::INSERT, s, n, 0);
                e(at(&mut g, 100, 5000), act::ISSUE, s, n, 0);
                e(at(&mut g, 2000, 60_000), act::COMPLETE, s, n, 0);
            }
            _ => {
                e(t0, act::QUEUE, s, n, pid);
                e(at(&mut g, 100, 900), act::GETRQ, s, n, pid);
                if kind == 0 {
                    e(at(&mut g, 100, 900), act::INSERT, s, n, pid);
                }
                e(at(&mut g, 100, 5000), act::ISSUE, s, n, 0);
                e(at(&mut g, 2000, 60_000), act::COMPLETE, s, n, 0);
            }
        }
        if i % 5 == 0 {
            let a = if i % 20 == 0 { act::UNPLUG_TIMER } else { act::UNPLUG_IO };
            // btt counts an unplug only after a plug.
            let t = 1_000_000 + i * 3_000 + 1_500;
            ev.push((header(t - 1, act::PLUG, cat::QUEUE, 0, 0, pid, cpu), vec![]));
            let mut h = header(t, a, cat::QUEUE, 0, 0, pid, cpu);
            h.pdu_len = 8;
            ev.push((h, (1 + g.next(4)).to_be_bytes().to_vec()));
        }
    }
    ev.sort_by_key(|(h, _)| h.time);
    ev
}

/// Writes `NAME.blktrace.CPU` files, each CPU's records numbered from 1.
fn write_blktrace(dir: &Path, name: &str, ev: &[Event]) {
    let mut files: std::collections::BTreeMap<u16, (u32, Vec<u8>)> = Default::default();
    for (h, pdu) in ev {
        let (seq, buf) = files.entry(h.cpu).or_default();
        *seq += 1;
        let mut h = *h;
        h.sequence = *seq;
        buf.extend_from_slice(&h.encode());
        buf.extend_from_slice(pdu);
    }
    // blkparse stops at the first CPU without a file: the idle ones get an empty one.
    let last = files.keys().next_back().copied().unwrap_or(0);
    for cpu in 0..=last {
        let buf = files.get(&cpu).map(|(_, b)| b.as_slice()).unwrap_or_default();
        std::fs::write(dir.join(format!("{name}.blktrace.{cpu}")), buf).unwrap();
    }
}

/// btt's per-phase (average s, N), its #Q and #D, and IOs/Unp.
#[derive(Debug)]
struct Btt {
    phases: Vec<(String, f64, u64)>,
    q: u64,
    d: u64,
    ios_per_unplug: f64,
    text: String,
}

fn run_btt(dir: &Path, name: &str) -> Btt {
    let bin = format!("{name}.bin");
    let out = Command::new("blkparse").current_dir(dir).args(["-i", name, "-d", &bin, "-q", "-o", "/dev/null"]).output().unwrap();
    assert!(out.status.success(), "blkparse: {}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new("btt").current_dir(dir).args(["-i", &bin]).output().unwrap();
    assert!(out.status.success(), "btt: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let all = text.split("==================== Device Overhead").next().unwrap();
    let phases = all
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[0].len() == 3 && f[0].as_bytes()[1] == b'2')
                .then(|| (f[0].to_string(), f[2].parse().unwrap(), f[4].parse().unwrap()))
        })
        .collect();
    let row_after = |header: &str| -> Vec<String> {
        let (_, sec) = text.split_once(header).unwrap_or_else(|| panic!("no {header:?} in btt's output:\n{text}"));
        let line = sec.lines().find(|l| l.trim_start().starts_with('(')).unwrap_or_else(|| panic!("no row after {header:?}:\n{text}"));
        line.split('|').skip(1).flat_map(|p| p.split_whitespace().map(str::to_string).collect::<Vec<_>>()).collect()
    };
    let merge = row_after("Device Merge Information");
    let unplug = row_after("IOs/Unp");
    Btt { phases, q: merge[0].parse().unwrap(), d: merge[1].parse().unwrap(), ios_per_unplug: unplug[0].parse().unwrap(), text }
}

/// Every phase btt prints has our count and our mean within its rounding
/// (9 decimals of a second); every phase it leaves out we found none of.
fn assert_agrees(a: &TraceAnalysis, b: &Btt) {
    let ours: Vec<(&str, u64, f64)> = a.phases.named().iter().map(|(n, p)| (*n, p.count, p.mean_ns())).collect();
    for (name, count, mean) in &ours {
        match b.phases.iter().find(|(n, _, _)| n == name) {
            Some((_, avg_s, n)) => {
                assert_eq!(count, n, "{name} N: ours {count}, btt {n}\n{}", b.text);
                assert!((mean - avg_s * 1e9).abs() <= 0.51, "{name} mean: ours {mean} ns, btt {avg_s} s\n{}", b.text);
            }
            None => assert_eq!(*count, 0, "{name}: btt printed no line, we counted {count}\n{}", b.text),
        }
    }
    assert!(b.phases.iter().any(|(n, _, _)| n == "D2C"), "{}", b.text);
    assert_eq!((a.btt_q, a.btt_d), (b.q, b.d), "#Q, #D\n{}", b.text);
    assert!(
        (a.unplugs.ios_per_unplug() - b.ios_per_unplug).abs() < 0.051,
        "IOs/Unp {} vs {}",
        a.unplugs.ios_per_unplug(),
        b.ios_per_unplug
    );
    eprintln!("btt agrees: {:?}", ours);
}

fn tools() -> bool {
    common::have("blkparse") && common::have("btt")
}

fn analyse_events(ev: &[Event]) -> TraceAnalysis {
    let t0 = ev.first().map(|(h, _)| h.time).unwrap_or(0);
    let recs = ev.iter().map(|(h, p)| {
        let mut h = *h;
        h.time -= t0;
        Record { h, pdu: p }
    });
    analyse(recs, &Context::new(Box::new(|pid| if (1000..1010).contains(&pid) { Role::Benchmark } else { Role::Other })))
}

#[test]
fn synthetic_trace_agrees_with_btt() {
    if !tools() && common::skip("blkparse or btt not installed") {
        return;
    }
    let ev = synthetic();
    let dir = tempfile::tempdir().unwrap();
    write_blktrace(dir.path(), "syn", &ev);
    let a = analyse_events(&ev);
    let b = run_btt(dir.path(), "syn");
    assert_agrees(&a, &b);
    // The trace has every kind: merges, requeues, I-less requests.
    for name in ["Q2G", "G2I", "Q2M", "I2D", "M2D", "D2C", "Q2C"] {
        assert!(b.phases.iter().any(|(n, _, c)| n == name && *c > 0), "btt saw no {name}\n{}", b.text);
    }
    assert!(a.requeues > 0 && a.merges > 0 && a.unplugs.io > 0);
    assert!(a.depth_max > 1, "I/Os overlap");
}

#[test]
fn analysing_a_record_does_not_allocate() {
    let ev = synthetic();
    let mut ctx = Context::new(Box::new(|_| Role::Benchmark));
    ctx.series_step_ns = 1_000_000;
    let mut an = fsbench::observe::trace::analysis::Analyser::new(&ctx);
    // The first record meets the device (one entry in a small list).
    an.push(&Record { h: ev[0].0, pdu: &ev[0].1 });
    let before = ALLOCS.with(Cell::get);
    for (h, p) in &ev[1..] {
        an.push(&Record { h: *h, pdu: p });
    }
    let during = ALLOCS.with(Cell::get) - before;
    let a = an.finish();
    assert!(a.phases.q2c.count > 300);
    assert_eq!(during, 0, "allocations while analysing {} records", ev.len() - 1);
}

/// Restores the top-level tracer and detaches the loop device, also when
/// the test fails half way.
struct Capture {
    tracing: std::path::PathBuf,
    loop_dev: Option<String>,
}

impl Drop for Capture {
    fn drop(&mut self) {
        if let Some(dev) = &self.loop_dev {
            let name = dev.trim_start_matches("/dev/");
            let _ = std::fs::write(format!("/sys/block/{name}/trace/enable"), "0");
        }
        let _ = std::fs::write(self.tracing.join("options/bin"), "0");
        let _ = std::fs::write(self.tracing.join("current_tracer"), "nop");
        if let Some(dev) = &self.loop_dev {
            let _ = Command::new("losetup").args(["-d", dev]).status();
        }
    }
}

/// Splits what trace_pipe gave (a 16-byte ftrace prefix before each
/// blk_io_trace) into records, numbering them per CPU.
fn from_pipe(raw: &[u8]) -> Vec<Event> {
    let mut ev = Vec::new();
    let mut seq: std::collections::HashMap<u16, u32> = Default::default();
    let mut pos = 0;
    while pos + 16 + 48 <= raw.len() {
        let mut h = Header::decode(raw[pos + 16..pos + 64].try_into().unwrap());
        assert_eq!(h.magic, MAGIC | VERSION, "record at byte {pos} of the pipe");
        let end = pos + 16 + h.record_len();
        assert!(end <= raw.len(), "record at byte {pos} cut short");
        let n = seq.entry(h.cpu).or_default();
        *n += 1;
        h.sequence = *n;
        ev.push((h, raw[pos + 64..end].to_vec()));
        pos = end;
    }
    assert_eq!(pos, raw.len(), "trailing bytes in the pipe's output");
    ev
}

#[test]
fn real_trace_of_fio_agrees_with_btt() {
    if !tools() && common::skip("blkparse or btt not installed") {
        return;
    }
    if !common::is_root() && common::skip("needs root (loop device, tracefs)") {
        return;
    }
    if !common::have("fio") && common::skip("fio not installed") {
        return;
    }
    let Some(tfs) = common::Tracefs::get() else {
        common::skip("no tracefs");
        return;
    };
    let tracing = tfs.path.clone();
    let tracers = std::fs::read_to_string(tracing.join("available_tracers")).unwrap_or_default();
    if !tracers.split_whitespace().any(|t| t == "blk") && common::skip("the kernel has no blk tracer") {
        return;
    }
    let current = std::fs::read_to_string(tracing.join("current_tracer")).unwrap_or_default();
    if current.trim() != "nop" && common::skip(&format!("the top-level tracer is in use ({})", current.trim())) {
        return;
    }
    let dir = tempfile::Builder::new().prefix("fsbench-trace-btt").tempdir_in("/dev/shm").unwrap();
    let img = dir.path().join("img");
    std::fs::File::create(&img).unwrap().set_len(64 << 20).unwrap();
    let mut cap = Capture { tracing: tracing.clone(), loop_dev: None };
    let out = Command::new("losetup").args(["--find", "--show"]).arg(&img).output().unwrap();
    assert!(out.status.success(), "losetup: {}", String::from_utf8_lossy(&out.stderr));
    let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    cap.loop_dev = Some(dev.clone());
    let name = dev.trim_start_matches("/dev/").to_string();

    std::fs::write(tracing.join("current_tracer"), "blk").unwrap();
    std::fs::write(tracing.join("options/bin"), "1").unwrap();
    std::fs::write(format!("/sys/block/{name}/trace/enable"), "1").unwrap();

    let pipe = tracing.join("trace_pipe");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop2 = stop.clone();
    let reader = std::thread::spawn(move || {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let mut f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(pipe).unwrap();
        let (mut raw, mut buf) = (Vec::new(), vec![0u8; 1 << 16]);
        loop {
            match f.read(&mut buf) {
                Ok(n) if n > 0 => raw.extend_from_slice(&buf[..n]),
                _ if stop2.load(std::sync::atomic::Ordering::Relaxed) => return raw,
                _ => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
    });
    let fio = Command::new("fio")
        .args(["--name=t", "--rw=randrw", "--bs=4k", "--iodepth=8", "--ioengine=libaio", "--direct=1", "--size=16M"])
        .args(["--runtime=1", "--time_based", "--output=/dev/null"])
        .arg(format!("--filename={dev}"))
        .status()
        .unwrap();
    std::fs::write(format!("/sys/block/{name}/trace/enable"), "0").unwrap();
    // What is still in the ring buffer is read before the reader stops.
    std::thread::sleep(std::time::Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let raw = reader.join().unwrap();
    drop(cap);
    assert!(fio.success(), "fio failed");

    let ev = from_pipe(&raw);
    assert!(ev.len() > 1000, "only {} records captured", ev.len());
    let out = tempfile::tempdir().unwrap();
    write_blktrace(out.path(), "real", &ev);
    let a = analyse_events(&ev);
    let b = run_btt(out.path(), "real");
    assert_agrees(&a, &b);
    assert!(a.dispatched.read_ops > 100 && a.dispatched.write_ops > 100, "{:?}", a.dispatched);
    assert_eq!(a.dispatched.read_ops + a.dispatched.write_ops, a.btt_d);
    assert!(a.depth_max >= 2 && a.depth_max <= 8, "QD8: depth {}", a.depth_max);
    // Every request is charged to exactly one role.
    let by_role: u64 = a.roles.all().iter().map(|(_, io)| io.dispatched.read_ops + io.dispatched.write_ops).sum();
    assert_eq!(by_role, a.dispatched.read_ops + a.dispatched.write_ops);
    let table = fsbench::report::trace::render(&a);
    assert!(table.contains("D2C/request"), "{table}");
    eprintln!("{table}");
    // The charts a report writes for it, kept when asked for (to look at).
    if let Some(dir) = std::env::var_os("FSBENCH_KEEP_TRACE_CHARTS") {
        for (name, svg) in fsbench::report::trace_charts::charts(&a) {
            std::fs::write(Path::new(&dir).join(name), svg).unwrap();
        }
    }
}
