//! blktrace's per-CPU files as a replay's I/Os: every file's records,
//! merged by time, and of them the issues (D) — or the queue events (Q)
//! when the trace has no issue at all, as a bio-based device (zram) gives.
//! Reads and writes are kept, discards become trims; flushes without data,
//! passthrough requests and notes are left out.

use super::Trace;
use crate::model::replay::{Dir, TraceIo};
use crate::observe::trace::files::{read_trace, TraceFileError};
use crate::observe::trace::record::{act, cat};
use std::path::Path;

/// The I/Os of the trace named `arg` (`NAME`, as blkparse takes it, or one
/// of its `NAME.blktrace.N` files), in time order.
pub fn read(arg: &Path) -> Result<Trace, String> {
    let trace = read_trace(arg).map_err(|e| match e {
        TraceFileError::NoFiles { .. } => {
            format!("{e}; or a fio iolog (first line \"fio version 2 iolog\" or \"fio version 3 iolog\")")
        }
        e => e.to_string(),
    })?;
    let files: Vec<&Path> = trace.files().collect();
    let mut events: Vec<(bool, TraceIo, u32)> = Vec::new();
    let (mut flushes, mut passthrough) = (0u64, 0u64);
    for r in trace.merged() {
        let h = r.h;
        let code = h.action_code();
        if h.is_notify() || (code != act::ISSUE && code != act::QUEUE) {
            continue;
        }
        if h.is_pc() {
            passthrough += 1;
            continue;
        }
        if h.bytes == 0 {
            flushes += 1;
            continue;
        }
        let c = h.category();
        let dir = if c & cat::DISCARD != 0 {
            Dir::Trim
        } else if c & cat::WRITE != 0 {
            Dir::Write
        } else {
            Dir::Read
        };
        events.push((code == act::ISSUE, TraceIo { at_ns: h.time, offset: h.sector * 512, len: h.bytes, dir }, h.device));
    }
    let names: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
    let has_issues = events.iter().any(|e| e.0);
    events.retain(|e| e.0 == has_issues);
    let mut devices: Vec<u32> = events.iter().map(|e| e.2).collect();
    devices.sort_unstable();
    devices.dedup();
    if devices.len() > 1 {
        let list: Vec<String> = devices.iter().map(|d| format!("{}:{}", d >> 20, d & 0xfffff)).collect();
        return Err(format!(
            "{}: the trace holds I/O of {} devices ({}); replay takes a trace of one",
            names.join(", "),
            devices.len(),
            list.join(", ")
        ));
    }
    let t0 = events.first().map(|e| e.1.at_ns).unwrap_or(0);
    let ios: Vec<TraceIo> = events.iter().map(|e| TraceIo { at_ns: e.1.at_ns - t0, ..e.1 }).collect();
    let mut notes = Vec::new();
    if !has_issues && !ios.is_empty() {
        notes.push("the trace has no D (issue) events (a bio-based device?): its Q (queue) events are replayed".to_string());
    }
    if flushes > 0 {
        notes.push(format!("{flushes} flush events without data left out"));
    }
    if passthrough > 0 {
        notes.push(format!("{passthrough} passthrough (SCSI/NVMe command) events left out"));
    }
    let used = if has_issues { "D (issue)" } else { "Q (queue)" };
    Ok(Trace {
        source: format!(
            "blktrace {} ({} files, {} events)",
            files.first().map(|f| f.display().to_string()).unwrap_or_default(),
            files.len(),
            used
        ),
        device: devices.first().map(|d| (d >> 20, d & 0xfffff)),
        ios,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::trace::record::{Header, MAGIC, VERSION};

    fn rec(time: u64, sector: u64, bytes: u32, action: u16, cats: u16, cpu: u16) -> Vec<u8> {
        let h = Header {
            magic: MAGIC | VERSION,
            sequence: time as u32,
            time,
            sector,
            bytes,
            action: (cats as u32) << 16 | action as u32,
            pid: 1,
            device: 7 << 20 | 3,
            cpu,
            error: 0,
            pdu_len: 0,
        };
        h.encode().to_vec()
    }

    #[test]
    fn issues_merged_by_time_across_cpus() {
        let d = tempfile::tempdir().unwrap();
        let base = d.path().join("t");
        let mut c0 = rec(100, 8, 4096, act::QUEUE, cat::WRITE | cat::QUEUE, 0);
        c0.extend(rec(300, 8, 4096, act::ISSUE, cat::WRITE | cat::ISSUE, 0));
        c0.extend(rec(500, 0, 0, act::ISSUE, cat::FLUSH | cat::WRITE | cat::ISSUE, 0));
        let mut c1 = rec(200, 16, 8192, act::ISSUE, cat::READ | cat::ISSUE, 1);
        c1.extend(rec(400, 64, 1 << 20, act::ISSUE, cat::WRITE | cat::DISCARD | cat::ISSUE, 1));
        std::fs::write(d.path().join("t.blktrace.0"), c0).unwrap();
        std::fs::write(d.path().join("t.blktrace.1"), c1).unwrap();
        assert_eq!(read(&d.path().join("t.blktrace.1")).unwrap().ios.len(), 3, "one file's name stands for all");
        let t = read(&base).unwrap();
        let got: Vec<(u64, u64, Dir)> = t.ios.iter().map(|i| (i.at_ns, i.offset, i.dir)).collect();
        assert_eq!(got, vec![(0, 16 * 512, Dir::Read), (100, 8 * 512, Dir::Write), (200, 64 * 512, Dir::Trim)]);
        assert_eq!(t.device, Some((7, 3)));
        assert!(t.notes.iter().any(|n| n.contains("1 flush")), "{:?}", t.notes);
    }

    #[test]
    fn queue_events_when_no_issue_and_errors_name_the_byte() {
        let d = tempfile::tempdir().unwrap();
        let mut c0 = rec(10, 8, 4096, act::QUEUE, cat::READ | cat::QUEUE, 0);
        c0.extend(rec(20, 16, 4096, act::COMPLETE, cat::READ | cat::COMPLETE, 0));
        std::fs::write(d.path().join("z.blktrace.0"), &c0).unwrap();
        let t = read(&d.path().join("z")).unwrap();
        assert_eq!(t.ios.len(), 1);
        assert!(t.source.contains("Q (queue)") && t.notes[0].contains("no D"), "{t:?}");
        c0.truncate(70);
        std::fs::write(d.path().join("z.blktrace.0"), &c0).unwrap();
        let e = read(&d.path().join("z")).unwrap_err();
        assert!(e.contains("z.blktrace.0") && e.contains("at byte 48") && e.contains("truncated"), "{e}");
        let e = read(&d.path().join("none")).unwrap_err();
        assert!(e.contains("no trace files") && e.contains("none.blktrace.0") && e.contains("fio iolog"), "{e}");
    }
}
