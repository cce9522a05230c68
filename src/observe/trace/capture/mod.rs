//! Capturing what reaches one block device as blktrace records.
//!
//! [`start`] tries, in order, the ftrace `blk` tracer (top-level tracefs
//! instance, binary records read from the per-CPU ring buffers), the
//! `block:*` tracepoints in a private instance (converted to the same
//! records), the kernel's blktrace ioctls (relay files in debugfs), and
//! last the device's counters alone (no records). Each method it passes
//! over leaves its reason in [`Captured::reasons`].
//!
//! Every global change is announced to the caller's [`Hooks`] before it is
//! made (see [`tracefs::Undo`]), so a killed process's changes can be put
//! back by the next one; [`Capture::stop`] puts them back itself, and what
//! it cannot put back is a warning of the finished capture, not a failure.
//! The top-level tracer is one per machine: the hooks are asked for it
//! before it is touched, and a capture that cannot have it falls back to
//! the next method.

pub mod blk_tracer;
pub mod counters;
pub mod ioctl;
mod reader;
pub mod ringbuf;
pub mod tracefs;
pub mod tracepoints;

use crate::host::blockdev::BlockDev;
use crate::model::warning::{Code, Warning};
use crate::observe::trace::record::{cat, RecordSink};
use crate::result::device::DiskStat;
use crate::result::trace::capture::{Captured, Method, PidInfo};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
pub use tracefs::Undo;

/// Per-CPU ring buffer size when none is asked for: 32 MiB holds about
/// 400 ms of events at 300,000 I/Os per second. 8 MiB (about 100 ms) lost
/// events in one of five `bench/trace-overhead` runs under a load of 2.4
/// on two cores, most likely while the readers waited for a CPU.
pub const DEFAULT_BUFFER_KB: u64 = 32_768;
/// Bounds of the per-CPU buffer: a few pages, and not more than a capture needs.
pub const MIN_BUFFER_KB: u64 = 8;
pub const MAX_BUFFER_KB: u64 = 262_144;

/// What to trace and how.
#[derive(Clone, Debug)]
pub struct TraceRequest {
    /// A device name (`loop3`, `vda1`) or its node (`/dev/loop3`).
    pub device: String,
    /// Ring buffer per CPU, in KiB (within MIN_BUFFER_KB..=MAX_BUFFER_KB).
    pub buffer_kb_per_cpu: u64,
    /// Use only this method (no fallback).
    pub method: Option<Method>,
    /// The blktrace categories to keep (`cat::*` bits; blktrace's `-a`): a
    /// record is kept when any of its category bits is in the mask.
    pub act_mask: u16,
}

impl TraceRequest {
    pub fn new(device: &str) -> TraceRequest {
        TraceRequest { device: device.to_string(), buffer_kb_per_cpu: DEFAULT_BUFFER_KB, method: None, act_mask: cat::ALL }
    }
}

// Beside the capture, not the record: it reads /proc.
impl PidInfo {
    /// Looked up in /proc while the thread (most likely) still runs.
    pub fn lookup(pid: u32, comm: String) -> PidInfo {
        let (tgid, parent) = crate::host::process::tgid_and_parent(pid);
        PidInfo { tgid, parent, comm }
    }
}

/// Why no capture could start or finish.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaptureError {
    /// The device named is not something that can be traced.
    BadDevice(String),
    /// Tracing needs root.
    NotRoot(String),
    /// The forced method (or every method) failed; the reasons, in order.
    Unavailable(Vec<String>),
    /// Something failed during or at the end of a capture.
    Failed(String),
}

impl std::fmt::Display for CaptureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaptureError::BadDevice(s) | CaptureError::NotRoot(s) | CaptureError::Failed(s) => f.write_str(s),
            CaptureError::Unavailable(r) => write!(f, "no trace method works here: {}", r.join("; ")),
        }
    }
}

impl std::error::Error for CaptureError {}

/// The device a request names, resolved.
#[derive(Clone, Debug)]
pub struct Target {
    pub dev: BlockDev,
    /// The whole disk whose queue is traced.
    pub disk: BlockDev,
    /// A partition's first and last sector on its disk.
    pub range: Option<(u64, u64)>,
    /// The kernel's internal device number records carry (`major << 20 | minor`).
    pub kdev: u32,
    pub disk_kdev: u32,
}

/// Resolve `device` (name or /dev path) to a block device; errors say what was expected.
pub fn resolve(device: &str) -> Result<Target, CaptureError> {
    let bad = |why: String| CaptureError::BadDevice(format!("cannot trace '{device}': {why}"));
    if device.is_empty() {
        return Err(bad("expected a block device name (loop3) or node (/dev/loop3)".into()));
    }
    let dev = if device.contains('/') {
        let p = Path::new(device);
        let meta = std::fs::metadata(p).map_err(|e| bad(format!("{e}; expected a block device node such as /dev/loop3")))?;
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        if !meta.file_type().is_block_device() {
            return Err(bad("it is not a block device (expected a node such as /dev/loop3)".into()));
        }
        let rdev = meta.rdev();
        let (maj, min) = (crate::host::blockdev::dev_major(rdev), crate::host::blockdev::dev_minor(rdev));
        BlockDev::from_devnum(maj, min).ok_or_else(|| bad(format!("block device {maj}:{min} is not in /sys/dev/block")))?
    } else {
        BlockDev::from_name(device)
            .ok_or_else(|| bad("no such block device in /sys/class/block (expected a name such as loop3 or /dev/loop3)".into()))?
    };
    let disk = dev.whole_disk();
    let range = if dev.is_partition() {
        let start = crate::host::read_trim(dev.sysfs_dir.join("start")).and_then(|s| s.parse::<u64>().ok());
        let size = crate::host::read_trim(dev.sysfs_dir.join("size")).and_then(|s| s.parse::<u64>().ok());
        match (start, size) {
            (Some(s), Some(n)) if n > 0 => Some((s, s + n - 1)),
            _ => return Err(bad(format!("partition {} has no readable start/size in {}", dev.name, dev.sysfs_dir.display()))),
        }
    } else {
        None
    };
    let kdev = (dev.major << 20) | dev.minor;
    let disk_kdev = (disk.major << 20) | disk.minor;
    Ok(Target { dev, disk, range, kdev, disk_kdev })
}

/// CLOCK_MONOTONIC now, in ns (what trace_clock `mono` counts).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What a capture asks of whoever runs it before it changes the machine.
pub trait Hooks {
    /// `u` undoes the change about to be made. An error (it could not be
    /// recorded) means the change is not made.
    fn undo_step(&mut self, u: &Undo) -> Result<(), String>;
    /// The `blk` tracer is about to be set up in the top-level instance of
    /// the tracefs at `root`, of which a machine has one: have it for this
    /// capture alone, or say why not (another capture has it). Returns
    /// notes (what a capture that died had left there and was put back).
    fn claim_top_level(&mut self, root: &Path) -> Result<Vec<String>, String>;
    /// A start that claimed the top-level tracer failed and has undone
    /// its steps (`put_back`: all of them): the claim is given up. (A
    /// capture that started is given up by its caller once it stops.)
    fn release_top_level(&mut self, put_back: bool);
}

/// Hooks that record nothing and claim nothing, for a caller that keeps
/// no records and knows nothing else traces (the capture tests).
pub struct NoHooks;

impl Hooks for NoHooks {
    fn undo_step(&mut self, _: &Undo) -> Result<(), String> {
        Ok(())
    }
    fn claim_top_level(&mut self, _: &Path) -> Result<Vec<String>, String> {
        Ok(Vec::new())
    }
    fn release_top_level(&mut self, _: bool) {}
}

/// Announce `u` to the hooks, then keep it in `steps` (undone newest first).
pub(crate) fn note_step(hooks: &mut dyn Hooks, steps: &mut Vec<Undo>, u: Undo) -> Result<(), String> {
    hooks.undo_step(&u)?;
    steps.push(u);
    Ok(())
}

/// A running capture of one method.
pub(crate) trait Running: Send {
    /// Stop the events, read what is left, put back what was changed.
    fn stop(self: Box<Self>) -> Result<Stopped, (String, Option<Box<dyn RecordSink>>)>;
}

/// What a method hands back when it stops.
pub(crate) struct Stopped {
    pub sink: Box<dyn RecordSink>,
    pub records: u64,
    pub lost_per_cpu: Vec<u64>,
    pub pids: BTreeMap<u32, PidInfo>,
    pub counters: Option<DiskStat>,
    pub notes: Vec<String>,
    pub ring_events: u64,
    /// The undo steps that failed and why (the records are complete).
    pub undo_failed: Vec<(Undo, String)>,
}

/// What stopping gives: what was captured and the sink, or why not and
/// the sink when it could be recovered.
pub type StopResult = Result<(Captured, Box<dyn RecordSink>), (CaptureError, Option<Box<dyn RecordSink>>)>;

/// [`StopResult`] with the undo steps that failed, for the caller to try
/// again or keep on record (they act on the machine, so the record
/// `Captured` does not hold them; its warnings say what they were).
pub type StopUndoResult = Result<(Captured, Box<dyn RecordSink>, Vec<Undo>), (CaptureError, Option<Box<dyn RecordSink>>)>;

/// A capture in progress.
pub struct Capture {
    running: Box<dyn Running>,
    method: Method,
    reasons: Vec<String>,
    target: Target,
    start_ns: u64,
    notes: Vec<String>,
    act_mask: u16,
}

impl Capture {
    pub fn method(&self) -> Method {
        self.method
    }
    pub fn reasons(&self) -> &[String] {
        &self.reasons
    }
    pub fn start_monotonic_ns(&self) -> u64 {
        self.start_ns
    }

    /// Stop, read the rest, put back every setting; the sink comes back
    /// for the caller to finish. On failure the sink is returned when it
    /// could be recovered.
    pub fn stop(self) -> StopResult {
        self.stop_with_undo().map(|(captured, sink, _)| (captured, sink))
    }

    /// [`Capture::stop`], handing back the undo steps that failed as well.
    pub fn stop_with_undo(self) -> StopUndoResult {
        let end = monotonic_ns();
        let s = self.running.stop().map_err(|(e, sink)| (CaptureError::Failed(e), sink))?;
        let mut notes = self.notes;
        notes.extend(s.notes);
        let captured = Captured {
            method: self.method,
            reasons: self.reasons,
            device: self.target.dev.name.clone(),
            traced_disk: self.target.disk.name.clone(),
            sectors: self.target.range,
            records: s.records,
            lost_events: s.lost_per_cpu.iter().sum(),
            lost_per_cpu: s.lost_per_cpu,
            act_mask: (self.act_mask != cat::ALL).then(|| cat::mask_names(self.act_mask)),
            start_monotonic_ns: self.start_ns,
            duration_ns: end.saturating_sub(self.start_ns),
            pids: s.pids,
            counters: s.counters,
            kernel_events_read: s.ring_events,
            notes,
            warnings: s
                .undo_failed
                .iter()
                .map(|(u, e)| Warning::new(Code::TraceNotRestored, format!("trace: the capture is complete, but could not {u}: {e}")))
                .collect(),
        };
        Ok((captured, s.sink, s.undo_failed.into_iter().map(|(u, _)| u).collect()))
    }
}

/// Start capturing `req.device` into `sink` (see the module's
/// documentation), with no records kept and no claim on the top-level
/// tracer ([`NoHooks`]).
pub fn start(req: &TraceRequest, sink: Box<dyn RecordSink>) -> Result<Capture, CaptureError> {
    start_with(req, sink, &mut NoHooks)
}

/// [`start`], announcing each change to `hooks` before it is made and
/// asking them for the top-level tracer.
pub fn start_with(req: &TraceRequest, sink: Box<dyn RecordSink>, hooks: &mut dyn Hooks) -> Result<Capture, CaptureError> {
    if req.act_mask == 0 {
        return Err(CaptureError::BadDevice("an empty category mask keeps nothing: name at least one category".into()));
    }
    if !(MIN_BUFFER_KB..=MAX_BUFFER_KB).contains(&req.buffer_kb_per_cpu) {
        return Err(CaptureError::BadDevice(format!(
            "trace buffer of {} KiB per CPU: expected {MIN_BUFFER_KB} to {MAX_BUFFER_KB} KiB",
            req.buffer_kb_per_cpu
        )));
    }
    let target = resolve(&req.device)?;
    if !crate::host::is_root() {
        return Err(CaptureError::NotRoot(format!(
            "cannot trace {}: block tracing needs root (tracefs and the device's trace settings)",
            target.dev.dev_path().display()
        )));
    }
    let methods: Vec<Method> = match req.method {
        Some(m) => vec![m],
        None => Method::ALL.to_vec(),
    };
    let mut reasons = Vec::new();
    let mut sink = Some(sink);
    for m in methods {
        let start_ns = monotonic_ns();
        let s = sink.take().expect("the sink is handed back by every failed method");
        let attempt = match m {
            Method::BlkTracer => blk_tracer::start(req, &target, s, start_ns, hooks),
            Method::Tracepoints => tracepoints::start(req, &target, s, start_ns, hooks),
            Method::Ioctl => ioctl::start(req, &target, s, start_ns, hooks),
            Method::Counters => counters::start(&target, s),
        };
        match attempt {
            Ok((running, notes)) => return Ok(Capture { running, method: m, reasons, target, start_ns, notes, act_mask: req.act_mask }),
            Err((why, back)) => {
                reasons.push(format!("{m}: {why}"));
                sink = Some(back);
            }
        }
    }
    Err(CaptureError::Unavailable(reasons))
}

/// What a method's `start` returns: the running capture and its notes, or
/// why not and the sink back.
pub(crate) type Started = Result<(Box<dyn Running>, Vec<String>), (String, Box<dyn RecordSink>)>;

/// Undo `steps` newest first; every step that failed comes back with why.
pub(crate) fn undo_all(steps: &mut Vec<Undo>) -> Vec<(Undo, String)> {
    let mut failed = Vec::new();
    while let Some(u) = steps.pop() {
        if let Err(e) = u.perform() {
            failed.push((u, e));
        }
    }
    failed
}

/// A start that failed after changing something: its steps undone, and
/// what could not be, added to why it failed.
pub(crate) fn undo_failed_start(e: String, steps: &mut Vec<Undo>) -> String {
    failed_start(e, &undo_all(steps))
}

/// Why a start failed, with the steps that could not be undone after it.
pub(crate) fn failed_start(e: String, failed: &[(Undo, String)]) -> String {
    if failed.is_empty() {
        return e;
    }
    let what: Vec<String> = failed.iter().map(|(u, why)| format!("could not {u}: {why}")).collect();
    format!("{e} (and {})", what.join("; "))
}

/// The `trace` directory in sysfs for the device (a partition's own, so
/// the kernel keeps to its sectors).
pub(crate) fn sysfs_trace_dir(t: &Target) -> PathBuf {
    t.dev.sysfs_dir.join("trace")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_devices_are_named() {
        let e = resolve("no-such-dev0").unwrap_err().to_string();
        assert!(e.contains("'no-such-dev0'") && e.contains("no such block device"), "{e}");
        let e = resolve("/etc/passwd").unwrap_err().to_string();
        assert!(e.contains("not a block device"), "{e}");
        let e = resolve("/nonexistent/dev").unwrap_err().to_string();
        assert!(e.contains("No such file"), "{e}");
    }
}
