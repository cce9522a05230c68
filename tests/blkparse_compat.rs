//! fsbench's blktrace files and blkparse summary against the real tools:
//! synthetic traces written with `TraceWriter` are read by Debian's
//! `blkparse`, and its summary block must equal fsbench's rendering line
//! for line; `btt` must accept the same trace dumped by `blkparse -d`.

mod common;

use fsbench::observe::trace::files::{read_trace, Trace, TraceWriter};
use fsbench::observe::trace::record::{act, cat, notify, Header, Record, RecordSink, MAGIC, VERSION};
use fsbench::observe::trace::summary::summarize;
use fsbench::report::blkparse::{render, Grouping};
use fsbench::result::trace::summary::{Mode, Summary};
use std::path::Path;
use std::process::{Command, Stdio};

const DEV: u32 = 7 << 20 | 3;

/// Builds a trace: records per CPU on one clock that moves forward 1 µs
/// per record unless told otherwise.
struct Build {
    recs: Vec<(Header, Vec<u8>)>,
    now: u64,
}

impl Build {
    fn new() -> Build {
        Build { recs: Vec::new(), now: 1_000_000 }
    }

    fn at(&mut self, ns: u64) -> &mut Self {
        self.now = ns;
        self
    }

    fn full(&mut self, cpu: u16, code: u16, category: u16, sector: u64, bytes: u32, pdu: &[u8]) -> &mut Self {
        let h = Header {
            magic: MAGIC | VERSION,
            sequence: 0,
            time: self.now,
            sector,
            bytes,
            action: (category as u32) << 16 | code as u32,
            pid: 4242,
            device: DEV,
            cpu,
            error: 0,
            pdu_len: pdu.len() as u16,
        };
        self.recs.push((h, pdu.to_vec()));
        self.now += 1_000;
        self
    }

    fn ev(&mut self, cpu: u16, code: u16, category: u16, sector: u64, bytes: u32) -> &mut Self {
        self.full(cpu, code, category, sector, bytes, b"")
    }

    /// Gives the last record an error code.
    fn failed(&mut self, error: u16) -> &mut Self {
        if let Some(last) = self.recs.last_mut() {
            last.0.error = error;
        }
        self
    }

    /// One whole request: Q G I D C, the way the block layer reports it.
    fn io(&mut self, cpu: u16, write: bool, sector: u64, bytes: u32) -> &mut Self {
        let d = if write { cat::WRITE } else { cat::READ };
        self.ev(cpu, act::QUEUE, d | cat::QUEUE, sector, bytes)
            .ev(cpu, act::GETRQ, d | cat::QUEUE, sector, bytes)
            .ev(cpu, act::INSERT, d | cat::QUEUE, sector, bytes)
            .ev(cpu, act::ISSUE, d | cat::ISSUE, sector, bytes)
            .ev(cpu, act::COMPLETE, d | cat::COMPLETE, sector, bytes)
    }

    fn write_files(&self, base: &Path) {
        let mut w = TraceWriter::create(base).unwrap();
        for (h, pdu) in &self.recs {
            w.push(&Record { h: *h, pdu }).unwrap();
        }
        w.finish().unwrap();
    }
}

/// The summary block of blkparse's output: from the first `CPUn (` line
/// through the last `Skips:` line.
fn summary_block(stdout: &str) -> String {
    let lines: Vec<&str> = stdout.split_inclusive('\n').collect();
    let first = lines.iter().position(|l| l.starts_with("CPU")).unwrap_or_else(|| panic!("no summary in blkparse's output:\n{stdout}"));
    let last =
        lines.iter().rposition(|l| l.starts_with("Skips:")).unwrap_or_else(|| panic!("no Skips line in blkparse's output:\n{stdout}"));
    lines[first..=last].concat()
}

fn blkparse_files(base: &Path, locpath: Option<&Path>) -> String {
    let mut cmd = Command::new("blkparse");
    cmd.arg("-i").arg(base);
    if let Some(p) = locpath {
        cmd.env("LOCPATH", p);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "blkparse failed: {}", String::from_utf8_lossy(&out.stderr));
    summary_block(&String::from_utf8(out.stdout).unwrap())
}

fn ours(base: &Path, g: Grouping) -> (Summary, String) {
    let t = read_trace(base).unwrap();
    let s = summarize(t.merged(), Mode::Files { name: t.name().to_string() });
    let text = render(&s, g);
    (s, text)
}

fn assert_same(theirs: &str, ours: &str) {
    if theirs != ours {
        let diff: Vec<String> =
            theirs.lines().zip(ours.lines()).filter(|(a, b)| a != b).map(|(a, b)| format!("blkparse: {a:?}\nfsbench:  {b:?}")).collect();
        panic!(
            "summaries differ ({} vs {} lines):\n{}\n--- blkparse:\n{theirs}--- fsbench:\n{ours}",
            theirs.lines().count(),
            ours.lines().count(),
            diff.join("\n")
        );
    }
}

fn no_blkparse() -> bool {
    !common::have("blkparse") && common::skip("blkparse is not installed (scripts/setup-peers.sh installs the blktrace package)")
}

/// Compares in the grouping this machine's blkparse uses.
fn check_files(b: &Build, name: &str) -> Summary {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join(name);
    b.write_files(&base);
    let theirs = blkparse_files(&base, None);
    let (s, text) = ours(&base, Grouping::of_this_machine());
    assert_same(&theirs, &text);
    s
}

#[test]
fn one_cpu_reads_writes_merges_requeues_unplugs() {
    if no_blkparse() {
        return;
    }
    let mut b = Build::new();
    for i in 0..20u64 {
        b.io(0, i % 3 != 0, i * 64, 4096 * (1 + (i as u32 % 4)));
    }
    let w = cat::WRITE;
    b.ev(0, act::QUEUE, w | cat::QUEUE, 5000, 4096)
        .ev(0, act::BACKMERGE, w | cat::QUEUE, 5008, 4096)
        .ev(0, act::FRONTMERGE, w | cat::QUEUE, 4992, 512)
        .ev(0, act::PLUG, cat::QUEUE, 0, 0)
        .ev(0, act::UNPLUG_IO, cat::QUEUE, 0, 0)
        .ev(0, act::UNPLUG_TIMER, cat::QUEUE, 0, 0)
        .ev(0, act::ISSUE, w | cat::ISSUE, 4992, 8704)
        .ev(0, act::REQUEUE, w | cat::REQUEUE, 4992, 8704)
        .ev(0, act::ISSUE, w | cat::ISSUE, 4992, 8704)
        .ev(0, act::COMPLETE, w | cat::COMPLETE, 4992, 8704)
        .failed(5);
    // Reads: two in flight at once, a 1.5 s span so throughput is not 0.
    b.ev(0, act::ISSUE, cat::READ | cat::ISSUE, 90_000, 1 << 20).ev(0, act::ISSUE, cat::READ | cat::ISSUE, 100_000, 1 << 20);
    b.at(1_500_000_000);
    b.ev(0, act::COMPLETE, cat::READ | cat::COMPLETE, 90_000, 1 << 20).ev(0, act::COMPLETE, cat::READ | cat::COMPLETE, 100_000, 1 << 20);
    let s = check_files(&b, "one");
    let d = &s.devices[0];
    assert_eq!(d.cpus.len(), 1);
    assert_eq!((d.depth.read, d.total.requeued.write, d.total.io_unplugs, d.total.timer_unplugs), (2, 1, 1, 1));
    assert!(d.throughput_kib_s.read > 0);
}

#[test]
fn several_cpus_with_pc_notes_and_an_idle_cpu() {
    if no_blkparse() {
        return;
    }
    let mut b = Build::new();
    for i in 0..40u64 {
        let cpu = [0u16, 1, 3][i as usize % 3];
        b.io(cpu, i % 2 == 0, 1000 + i * 8, 512 * (1 + i as u32 % 9));
    }
    let (r, w) = (cat::READ, cat::WRITE);
    b.ev(1, act::QUEUE, r | cat::QUEUE | cat::PC, 0, 4096)
        .ev(1, act::ISSUE, r | cat::ISSUE | cat::PC, 0, 4096)
        .ev(1, act::REQUEUE, r | cat::REQUEUE | cat::PC, 0, 4096)
        .ev(1, act::ISSUE, r | cat::ISSUE | cat::PC, 0, 4096)
        .ev(1, act::COMPLETE, r | cat::COMPLETE | cat::PC, 0, 4096)
        .ev(3, act::QUEUE, w | cat::QUEUE | cat::PC, 0, 1536)
        .ev(3, act::ISSUE, w | cat::ISSUE | cat::PC, 0, 1536);
    // A message is an event; a process name is not; a record without a
    // category gives its CPU a block but counts nowhere.
    b.full(0, notify::MESSAGE, cat::NOTIFY, 0, 0, b"fsbench mark")
        .full(0, notify::PROCESS, cat::NOTIFY, 0, 0, b"fio\0\0\0\0\0\0\0\0\0\0\0\0\0")
        .full(4, act::PLUG, 0, 0, 0, b"")
        .full(3, act::SPLIT, w, 1000, 8192, &1016u64.to_be_bytes());
    b.at(3_000_000_000).ev(0, act::COMPLETE, w | cat::COMPLETE, 7, 3 << 20);
    let s = check_files(&b, "multi");
    let d = &s.devices[0];
    let cpus: Vec<u32> = d.cpus.iter().map(|c| c.cpu).collect();
    assert_eq!(cpus, vec![0, 1, 3, 4], "cpu 2 had no records and gets no block");
    assert!(d.total.has_pc());
}

#[test]
fn large_counts_take_k_m_g_suffixes() {
    if no_blkparse() {
        return;
    }
    let mut b = Build::new();
    // 1,000,001 queued writes: the count goes past 10^6 and prints as "1000K".
    b.recs.reserve(1_000_010);
    for i in 0..1_000_001u64 {
        b.ev(0, act::QUEUE, cat::WRITE | cat::QUEUE, i * 8, 4096);
    }
    // Sizes past 10^6 KiB (MiB) and 10^9 KiB (GiB).
    b.ev(0, act::COMPLETE, cat::READ | cat::COMPLETE, 0, 2_000_000_000);
    for _ in 0..300 {
        b.ev(0, act::ISSUE, cat::WRITE | cat::ISSUE, 0, u32::MAX);
    }
    let s = check_files(&b, "big");
    let text = render(&s, Grouping::Plain);
    assert!(text.contains("1000K,"), "{text}");
    assert!(text.contains("1953MiB") && text.contains("1258GiB"), "{text}");
}

#[test]
fn thousands_separators_when_en_us_exists() {
    if no_blkparse() {
        return;
    }
    if !common::have("localedef") && common::skip("localedef is not installed, cannot build an en_US locale to compare with") {
        return;
    }
    let loc = tempfile::tempdir().unwrap();
    let made =
        Command::new("localedef").args(["-i", "en_US", "-f", "ISO-8859-1"]).arg(loc.path().join("en_US")).stderr(Stdio::null()).status();
    if !loc.path().join("en_US").is_dir() && common::skip(&format!("localedef could not build en_US ({made:?})")) {
        return;
    }
    let mut b = Build::new();
    for i in 0..1500u64 {
        b.io(0, true, i * 8, 4096);
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("grouped");
    b.write_files(&base);
    let theirs = blkparse_files(&base, Some(loc.path()));
    let (_, text) = ours(&base, Grouping::Thousands);
    assert_same(&theirs, &text);
    assert!(text.contains("1,500,"), "{text}");
}

/// Per-CPU files written byte for byte (no renumbering), fed to blkparse
/// as one stream (`-i -`), the way it counts sequence gaps.
fn check_stream(per_cpu: &[(u16, Vec<(u32, Header)>)]) -> Summary {
    let mut bufs = Vec::new();
    let mut all = Vec::new();
    for (cpu, recs) in per_cpu {
        let mut buf = Vec::new();
        for (seq, h) in recs {
            let mut h = *h;
            h.sequence = *seq;
            h.cpu = *cpu;
            buf.extend_from_slice(&h.encode());
        }
        all.extend_from_slice(&buf);
        bufs.push((u32::from(*cpu), buf));
    }
    let mut child =
        Command::new("blkparse").args(["-i", "-"]).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || std::io::Write::write_all(&mut stdin, &all));
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let theirs = summary_block(&String::from_utf8(out.stdout).unwrap());
    let t = Trace::from_buffers("stream", bufs).unwrap();
    let s = summarize(t.merged(), Mode::Stream);
    assert_same(&theirs, &render(&s, Grouping::of_this_machine()));
    s
}

fn q(time: u64, write: bool) -> Header {
    Header {
        magic: MAGIC | VERSION,
        time,
        sector: time / 8,
        bytes: 4096,
        action: ((if write { cat::WRITE } else { cat::READ } | cat::QUEUE) as u32) << 16 | act::QUEUE as u32,
        pid: 1,
        device: DEV,
        ..Header::default()
    }
}

#[test]
fn sequence_gaps_are_skips_in_a_stream() {
    if no_blkparse() {
        return;
    }
    // cpu 0: 2 arrives late and fills its gap, but 4 then follows 2;
    // 5-7 and 10-11 are missing. cpu 1: a gap of 1000.
    let seq0 = [1u32, 3, 2, 4, 8, 9, 12];
    let cpu0: Vec<(u32, Header)> = seq0.iter().enumerate().map(|(i, &s)| (s, q(1_000 + i as u64 * 10, true))).collect();
    let cpu1: Vec<(u32, Header)> =
        [(1u32, 5u64), (2, 15), (1003, 25), (1004, 2_000_000_035)].iter().map(|&(s, t)| (s, q(t, false))).collect();
    let s = check_stream(&[(0, cpu0), (1, cpu1)]);
    let d = &s.devices[0];
    assert_eq!((d.skips, d.skipped_records), (4, 1006));
    assert_eq!(d.label, "7,3");
}

#[test]
fn a_gap_is_not_a_skip_when_blkparse_reads_the_files() {
    if no_blkparse() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("gappy");
    let mut buf = Vec::new();
    for (seq, t) in [(1u32, 10u64), (5, 20)] {
        let mut h = q(t, true);
        h.sequence = seq;
        buf.extend_from_slice(&h.encode());
    }
    std::fs::write(dir.path().join("gappy.blktrace.0"), &buf).unwrap();
    let theirs = blkparse_files(&base, None);
    let (s, text) = ours(&base, Grouping::of_this_machine());
    assert_same(&theirs, &text);
    // The gap is still in the data, only the text follows blkparse.
    assert_eq!(s.devices[0].skipped_records, 3);
    assert!(text.contains("Skips: 0 forward (0 -   0.0%)"), "{text}");
}

#[test]
fn btt_reads_what_blkparse_dumps_of_our_files() {
    if no_blkparse() {
        return;
    }
    if !common::have("btt") && common::skip("btt is not installed") {
        return;
    }
    let mut b = Build::new();
    let mut completed = 0;
    for i in 0..300u64 {
        b.io((i % 2) as u16, i % 5 != 0, i * 64, 4096);
        completed += 1;
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("bttin");
    b.write_files(&base);
    let bin = dir.path().join("bttin.bin");
    let dump = Command::new("blkparse").arg("-i").arg(&base).arg("-d").arg(&bin).arg("-O").output().unwrap();
    assert!(dump.status.success(), "blkparse -d failed: {}", String::from_utf8_lossy(&dump.stderr));
    // btt writes .dat files into its working directory.
    let out = Command::new("btt").arg("-i").arg(&bin).current_dir(dir.path()).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "btt failed: {}\n{text}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("# Total System"), "{text}");
    let q2c = text.lines().find(|l| l.starts_with("Q2C")).unwrap_or_else(|| panic!("no Q2C line:\n{text}"));
    let n: u64 = q2c.split_whitespace().last().unwrap().parse().unwrap();
    assert_eq!(n, completed, "btt's Q2C count: {q2c}");
    assert!(text.lines().any(|l| l.trim_start().starts_with("ALL")), "{text}");
}

#[test]
fn two_devices_in_a_stream_get_a_block_each() {
    if no_blkparse() {
        return;
    }
    // Sequence numbers are counted per device and CPU: device 8,16 sees
    // 1 then 3 on cpu 0, a skip; 7,3 sees 2 then 4, a skip too.
    let other = 8 << 20 | 16;
    let recs: Vec<(u32, Header)> =
        [(1u32, other, 1_000u64, true), (2, DEV, 2_000, true), (3, other, 3_000, false), (4, DEV, 2_000_004_000, false)]
            .iter()
            .map(|&(seq, dev, t, w)| {
                let mut h = q(t, w);
                h.device = dev;
                (seq, h)
            })
            .collect();
    let s = check_stream(&[(0, recs)]);
    let labels: Vec<&str> = s.devices.iter().map(|d| d.label.as_str()).collect();
    assert_eq!(labels, vec!["8,16", "7,3"]);
    assert!(s.devices.iter().all(|d| d.skips == 1));
}

#[test]
fn iowatcher_draws_our_files() {
    if no_blkparse() {
        return;
    }
    if !common::have("iowatcher") && common::skip("iowatcher is not installed") {
        return;
    }
    let mut b = Build::new();
    for i in 0..200u64 {
        b.io((i % 2) as u16, i % 4 != 0, i * 8, 4096);
    }
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("watched");
    b.write_files(&base);
    let svg = dir.path().join("watched.svg");
    let out = Command::new("iowatcher").arg("-t").arg(&base).arg("-o").arg(&svg).current_dir(dir.path()).output().unwrap();
    assert!(out.status.success(), "iowatcher failed: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.len() > 10_000, "iowatcher drew {} bytes", text.len());
}
