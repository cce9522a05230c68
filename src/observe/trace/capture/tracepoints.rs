//! Method (b): the `block:*` tracepoints in a private tracefs instance
//! (`instances/fsbench-PID`, removed at the end), filtered to the device
//! in the kernel where the event has a `dev` field, each event turned into
//! the blktrace record the `blk` tracer would have written for it. The
//! field offsets come from each event's `format` file, not from a fixed
//! layout.
//!
//! Differences from the `blk` tracer, which the tracepoints cannot carry:
//! an unplug is always `U` (the tracepoint does not say whether a timer
//! caused it), a split (`X`) has no size, and plugs and unplugs (which name
//! no device) are kept only for a task whose plug held I/O for this device.

use super::reader::{Convert, Readers};
use super::tracefs::{self, CpuStats, Tracefs, Undo, INSTANCE_PREFIX};
use super::{note_step, undo_all, undo_failed_start, Hooks, Running, Started, Stopped, Target, TraceRequest};
use crate::observe::trace::record::{act, cat, Header, RecordSink, MAGIC, VERSION};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

/// The tracepoints used, and the record each becomes.
const EVENTS: [(&str, Kind); 16] = [
    ("block_bio_queue", Kind::Bio(act::QUEUE)),
    ("block_getrq", Kind::Bio(act::GETRQ)),
    ("block_bio_backmerge", Kind::Bio(act::BACKMERGE)),
    ("block_bio_frontmerge", Kind::Bio(act::FRONTMERGE)),
    ("block_bio_bounce", Kind::Bio(act::BOUNCE)),
    ("block_bio_complete", Kind::Bio(act::COMPLETE)),
    ("block_rq_insert", Kind::Rq(act::INSERT)),
    ("block_rq_issue", Kind::Rq(act::ISSUE)),
    ("block_rq_merge", Kind::Rq(act::BACKMERGE)),
    ("block_rq_requeue", Kind::Rq(act::REQUEUE)),
    ("block_rq_complete", Kind::Rq(act::COMPLETE)),
    ("block_plug", Kind::Plug),
    ("block_unplug", Kind::Unplug),
    ("block_split", Kind::Split),
    ("block_bio_remap", Kind::Remap),
    ("block_rq_remap", Kind::Remap),
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A bio event: the action, no FS bit.
    Bio(u16),
    /// A request event: the action, with the FS bit.
    Rq(u16),
    Plug,
    Unplug,
    Split,
    Remap,
}

impl Kind {
    /// The action category the event's records carry.
    fn category(&self) -> u16 {
        match self {
            Kind::Bio(a) | Kind::Rq(a) => match *a {
                act::COMPLETE => cat::COMPLETE,
                act::ISSUE => cat::ISSUE,
                act::REQUEUE => cat::REQUEUE,
                _ => cat::QUEUE,
            },
            Kind::Plug | Kind::Unplug | Kind::Split | Kind::Remap => cat::QUEUE,
        }
    }
}

/// Byte offset and size of a field in an event's data.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Field {
    offset: usize,
    size: usize,
}

/// An event's layout: the fields the conversion reads.
#[derive(Clone, Debug, Default)]
struct Format {
    id: u16,
    fields: HashMap<String, Field>,
}

impl Format {
    /// Parse a tracefs `format` file; the error names what is missing.
    fn parse(text: &str) -> Result<Format, String> {
        let id = text.lines().find_map(|l| l.strip_prefix("ID:")).and_then(|v| v.trim().parse().ok()).ok_or("no ID line")?;
        let mut fields = HashMap::new();
        for l in text.lines() {
            let l = l.trim();
            let Some(rest) = l.strip_prefix("field:") else { continue };
            let mut parts = rest.split(';').map(str::trim);
            let decl = parts.next().unwrap_or("");
            let get = |k: &str| -> Option<usize> { parts.clone().find_map(|p| p.strip_prefix(k)).and_then(|v| v.trim().parse().ok()) };
            let (Some(offset), Some(size)) = (get("offset:"), get("size:")) else { continue };
            // The name is the declaration's last word, without an array suffix.
            let name = decl.split_whitespace().last().unwrap_or("").split('[').next().unwrap_or("").to_string();
            fields.insert(name, Field { offset, size });
        }
        Ok(Format { id, fields })
    }

    fn field(&self, name: &str) -> Option<Field> {
        self.fields.get(name).copied()
    }
}

/// A converter's view of one event type.
#[derive(Clone, Debug)]
struct Layout {
    kind: Kind,
    dev: Option<Field>,
    sector: Option<Field>,
    nr_sector: Option<Field>,
    bytes: Option<Field>,
    error: Option<Field>,
    rwbs: Option<Field>,
    comm: Option<Field>,
    nr_rq: Option<Field>,
    new_sector: Option<Field>,
    old_dev: Option<Field>,
    old_sector: Option<Field>,
}

impl Layout {
    fn new(kind: Kind, f: &Format) -> Layout {
        Layout {
            kind,
            dev: f.field("dev"),
            sector: f.field("sector"),
            nr_sector: f.field("nr_sector"),
            bytes: f.field("bytes"),
            error: f.field("error"),
            rwbs: f.field("rwbs"),
            comm: f.field("comm"),
            nr_rq: f.field("nr_rq"),
            new_sector: f.field("new_sector"),
            old_dev: f.field("old_dev"),
            old_sector: f.field("old_sector"),
        }
    }
}

fn uint(data: &[u8], f: Option<Field>) -> Option<u64> {
    let f = f?;
    let b = data.get(f.offset..f.offset + f.size)?;
    Some(match f.size {
        1 => b[0] as u64,
        2 => u16::from_le_bytes([b[0], b[1]]) as u64,
        4 => u32::from_le_bytes(b.try_into().ok()?) as u64,
        8 => u64::from_le_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

fn text(data: &[u8], f: Option<Field>) -> Option<&[u8]> {
    let f = f?;
    let b = data.get(f.offset..f.offset + f.size)?;
    Some(&b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())])
}

/// Category bits from the kernel's `rwbs` text ([F]{W,R,D,DE,F,N}[F][A][S][M]),
/// as `__blk_add_trace` sets them from the request's flags.
pub fn rwbs_category(rwbs: &[u8]) -> u16 {
    let mut c = 0u16;
    let mut i = 0;
    if rwbs.len() >= 2 && rwbs[0] == b'F' && matches!(rwbs[1], b'W' | b'R' | b'D' | b'F' | b'N') {
        c |= cat::FLUSH;
        i = 1;
    }
    match rwbs.get(i) {
        Some(b'W') => c |= cat::WRITE,
        Some(b'D') => {
            c |= cat::WRITE | cat::DISCARD;
            if rwbs.get(i + 1) == Some(&b'E') {
                i += 1;
            }
        }
        Some(b'F') => c |= cat::READ | cat::FLUSH,
        _ => c |= cat::READ,
    }
    for &b in rwbs.get(i + 1..).unwrap_or(&[]) {
        c |= match b {
            b'F' => cat::FUA,
            b'A' => cat::AHEAD,
            b'S' => cat::SYNC,
            b'M' => cat::META,
            _ => 0,
        };
    }
    c
}

static INSTANCES: AtomicU32 = AtomicU32::new(0);

/// This process's instance name: `fsbench-PID`, then `fsbench-PID-N` for more at once.
fn instance_name() -> String {
    match INSTANCES.fetch_add(1, Ordering::Relaxed) {
        0 => format!("{INSTANCE_PREFIX}{}", std::process::id()),
        n => format!("{INSTANCE_PREFIX}{}-{n}", std::process::id()),
    }
}

pub(crate) fn start(req: &TraceRequest, t: &Target, sink: Box<dyn RecordSink>, start_ns: u64, hooks: &mut dyn Hooks) -> Started {
    let mut steps: Vec<Undo> = Vec::new();
    let fail = |e: String, steps: &mut Vec<Undo>, sink| Err((undo_failed_start(e, steps), sink));
    let prepared = match prepare(req, t, hooks, &mut steps) {
        Ok(p) => p,
        Err(e) => return fail(e, &mut steps, sink),
    };
    let layouts = Arc::new(prepared.layouts.clone());
    let (range, kdev) = (t.range, t.kdev);
    let readers = Readers::start(&prepared.dir, &prepared.cpus, sink, prepared.page, |cpu| {
        Box::new(TpConvert {
            cpu: cpu as u16,
            seq: 0,
            start_ns,
            layouts: layouts.clone(),
            range,
            kdev,
            pending_plug: None,
            plugged: HashSet::new(),
            last_ours: None,
            act_mask: req.act_mask,
        })
    });
    let readers = match readers {
        Ok(r) => r,
        Err((e, sink)) => return fail(e, &mut steps, sink),
    };
    for name in &prepared.enabled {
        if let Err(e) = tracefs::write(&prepared.dir.join(format!("events/block/{name}/enable")), "1") {
            let _ = tracefs::write(&prepared.dir.join("events/block/enable"), "0");
            return match readers.finish() {
                Ok(d) => fail(e, &mut steps, d.sink),
                Err(e2) => fail(format!("{e}; {e2}"), &mut steps, Box::<Vec<u8>>::default()),
            };
        }
    }
    let running = TpRunning { steps, readers: Some(readers), dir: prepared.dir, before: prepared.before, tracefs: prepared.tracefs };
    Ok((Box::new(running), prepared.notes))
}

struct Prepared {
    tracefs: Tracefs,
    dir: PathBuf,
    layouts: HashMap<u16, Layout>,
    enabled: Vec<&'static str>,
    cpus: Vec<u32>,
    before: Vec<CpuStats>,
    page: usize,
    notes: Vec<String>,
}

fn prepare(req: &TraceRequest, t: &Target, hooks: &mut dyn Hooks, steps: &mut Vec<Undo>) -> Result<Prepared, String> {
    let (tfs, mut notes) = Tracefs::open(hooks, steps)?;
    let instances = tfs.path("instances");
    if !instances.is_dir() {
        return Err(format!("{} does not exist: this kernel has no trace instances", instances.display()));
    }
    let name = instance_name();
    let dir = instances.join(&name);
    note_step(hooks, steps, Undo::Instance { tracefs: tfs.root.clone(), name: name.clone() })?;
    std::fs::create_dir(&dir).map_err(|e| format!("cannot create trace instance {}: {e}", dir.display()))?;
    tracefs::write(&dir.join("buffer_size_kb"), &req.buffer_kb_per_cpu.to_string())?;
    tracefs::write(&dir.join("trace_clock"), "mono")?;
    let mut layouts = HashMap::new();
    let mut enabled = Vec::new();
    let mut missing = Vec::new();
    // Only the action categories asked for need their events; a mask with
    // any other category (read, write, sync, ...) may keep any action.
    let action_only = req.act_mask & !(cat::QUEUE | cat::REQUEUE | cat::ISSUE | cat::COMPLETE) == 0;
    for (event, kind) in EVENTS {
        if action_only && kind.category() & req.act_mask == 0 {
            continue;
        }
        let ev = dir.join(format!("events/block/{event}"));
        let Ok(text) = std::fs::read_to_string(ev.join("format")) else {
            missing.push(event);
            continue;
        };
        let fmt = Format::parse(&text).map_err(|e| format!("{}: {e}", ev.join("format").display()))?;
        let layout = Layout::new(kind, &fmt);
        if layout.dev.is_some() {
            tracefs::write(&ev.join("filter"), &format!("dev == {}", t.disk_kdev))?;
        }
        layouts.insert(fmt.id, layout);
        enabled.push(event);
    }
    for (must, category) in [("block_bio_queue", cat::QUEUE), ("block_rq_issue", cat::ISSUE), ("block_rq_complete", cat::COMPLETE)] {
        let wanted = !action_only || req.act_mask & category != 0;
        if wanted && !enabled.contains(&must) {
            return Err(format!("the kernel has no block:{must} tracepoint ({} missing)", dir.join("events/block").display()));
        }
    }
    if !missing.is_empty() {
        notes.push(format!("tracepoints this kernel lacks, not traced: {}", missing.join(", ")));
    }
    if t.range.is_some() {
        notes.push(format!(
            "{} is a partition: its disk {} is traced and records outside the partition's sectors are dropped",
            t.dev.name, t.disk.name
        ));
    }
    let cpus = tfs.cpus(&dir)?;
    let before = cpus.iter().map(|&c| CpuStats::read(&dir, c)).collect::<Result<Vec<_>, _>>()?;
    let page = super::blk_tracer::page_size(&dir);
    Ok(Prepared { tracefs: tfs, dir, layouts, enabled, cpus, before, page, notes })
}

struct TpConvert {
    /// The categories kept (`TraceRequest::act_mask`).
    act_mask: u16,
    cpu: u16,
    seq: u32,
    start_ns: u64,
    layouts: Arc<HashMap<u16, Layout>>,
    range: Option<(u64, u64)>,
    kdev: u32,
    /// A plug not yet known to hold I/O for this device: (pid, time).
    pending_plug: Option<(u32, u64)>,
    /// Tasks whose plug was recorded; their unplug is recorded too.
    plugged: HashSet<u32>,
    /// The task of the last record for this device on this CPU: a plug
    /// right after it (the kernel plugs after getting the first request)
    /// is for this device.
    last_ours: Option<u32>,
}

impl TpConvert {
    /// Append `h` (its action, sector, bytes, pid, error and ring time)
    /// with the fields every record of this capture shares filled in.
    fn emit(&mut self, out: &mut Vec<u8>, mut h: Header, pdu: &[u8]) {
        // The kernel's act_mask rule: kept when any category bit is asked for.
        if h.category() & self.act_mask == 0 {
            return;
        }
        self.seq = self.seq.wrapping_add(1);
        h.magic = MAGIC | VERSION;
        h.sequence = self.seq;
        h.time = h.time.saturating_sub(self.start_ns);
        h.device = self.kdev;
        h.cpu = self.cpu;
        h.pdu_len = pdu.len() as u16;
        out.extend_from_slice(&h.encode());
        out.extend_from_slice(pdu);
    }
}

/// A record's own fields; `emit` adds the rest.
fn rec(time: u64, pid: u32, sector: u64, bytes: u32, action: u32, error: u16) -> Header {
    Header { time, pid, sector, bytes, action, error, ..Header::default() }
}

fn action(code: u16, category: u16) -> u32 {
    ((category as u32) << 16) | code as u32
}

impl Convert for TpConvert {
    fn comm_of(&self, data: &[u8]) -> Option<String> {
        let (id, _) = super::ringbuf::entry_type_pid(data)?;
        let l = self.layouts.get(&id)?;
        text(data, l.comm).filter(|c| !c.is_empty()).map(|c| String::from_utf8_lossy(c).into_owned())
    }

    fn convert(&mut self, ts: u64, data: &[u8], out: &mut Vec<u8>) {
        let Some((id, pid)) = super::ringbuf::entry_type_pid(data) else { return };
        let Some(l) = self.layouts.get(&id).cloned() else { return };
        let sector = uint(data, l.sector).unwrap_or(0);
        if l.dev.is_some() {
            if let Some((first, last)) = self.range {
                if sector != 0 && (sector < first || sector > last) {
                    return;
                }
            }
        }
        let rw = text(data, l.rwbs).map(rwbs_category).unwrap_or(cat::READ);
        let nr_bytes = uint(data, l.nr_sector).map(|n| (n * 512) as u32).unwrap_or(0);
        let error = uint(data, l.error).map(|e| e as u16).unwrap_or(0);
        // The first record of a task inside a plug makes its plug ours.
        if l.dev.is_some() {
            if let Some((ppid, pts)) = self.pending_plug {
                if ppid == pid {
                    self.pending_plug = None;
                    self.plugged.insert(pid);
                    self.emit(out, rec(pts, pid, 0, 0, action(act::PLUG, cat::READ | cat::QUEUE), 0), &[]);
                }
            }
        }
        if l.dev.is_some() {
            self.last_ours = Some(pid);
        }
        match l.kind {
            Kind::Bio(code) => {
                let c = if code == act::BOUNCE { rw } else { rw | base_category(code) };
                self.emit(out, rec(ts, pid, sector, nr_bytes, action(code, c), error), &[]);
            }
            Kind::Rq(code) => {
                let bytes = uint(data, l.bytes).map(|b| b as u32).unwrap_or(nr_bytes);
                self.emit(out, rec(ts, pid, sector, bytes, action(code, rw | base_category(code) | cat::FS), error), &[]);
            }
            Kind::Plug if self.last_ours == Some(pid) => {
                self.plugged.insert(pid);
                self.emit(out, rec(ts, pid, 0, 0, action(act::PLUG, cat::READ | cat::QUEUE), 0), &[]);
            }
            Kind::Plug => self.pending_plug = Some((pid, ts)),
            Kind::Unplug => {
                if self.plugged.remove(&pid) {
                    let depth = uint(data, l.nr_rq).unwrap_or(0) as u32 as u64;
                    self.emit(out, rec(ts, pid, 0, 0, action(act::UNPLUG_IO, cat::READ | cat::QUEUE), 0), &depth.to_be_bytes());
                }
                if self.pending_plug.is_some_and(|(p, _)| p == pid) {
                    self.pending_plug = None;
                }
            }
            Kind::Split => {
                let new_sector = uint(data, l.new_sector).unwrap_or(0);
                self.emit(out, rec(ts, pid, sector, 0, action(act::SPLIT, rw), 0), &new_sector.to_be_bytes());
            }
            Kind::Remap => {
                let mut pdu = [0u8; 16];
                let old_dev = uint(data, l.old_dev).unwrap_or(0) as u32;
                let new_dev = uint(data, l.dev).unwrap_or(0) as u32;
                pdu[0..4].copy_from_slice(&old_dev.to_be_bytes());
                pdu[4..8].copy_from_slice(&new_dev.to_be_bytes());
                pdu[8..16].copy_from_slice(&uint(data, l.old_sector).unwrap_or(0).to_be_bytes());
                self.emit(out, rec(ts, pid, sector, nr_bytes, action(act::REMAP, rw | cat::QUEUE), 0), &pdu);
            }
        }
    }
}

/// The category an action always carries (`BLK_TA_*` in the kernel).
fn base_category(code: u16) -> u16 {
    match code {
        act::REQUEUE => cat::REQUEUE,
        act::ISSUE => cat::ISSUE,
        act::COMPLETE => cat::COMPLETE,
        act::SPLIT | act::BOUNCE => 0,
        _ => cat::QUEUE,
    }
}

struct TpRunning {
    steps: Vec<Undo>,
    readers: Option<Readers>,
    dir: PathBuf,
    before: Vec<CpuStats>,
    tracefs: Tracefs,
}

impl Running for TpRunning {
    fn stop(mut self: Box<Self>) -> Result<Stopped, (String, Option<Box<dyn RecordSink>>)> {
        let mut errors = Vec::new();
        if let Err(e) = tracefs::write(&self.dir.join("events/block/enable"), "0") {
            errors.push(e);
        }
        let drained = self.readers.take().map(|r| r.finish());
        let cpus = self.tracefs.cpus(&self.dir).unwrap_or_default();
        let lost: Vec<Result<u64, String>> = cpus
            .iter()
            .enumerate()
            .map(|(i, &c)| CpuStats::read(&self.dir, c).map(|a| a.since(&self.before.get(i).copied().unwrap_or_default()).lost()))
            .collect();
        let cmdlines = self.tracefs.saved_cmdlines();
        let undo_failed = undo_all(&mut self.steps);
        let failed_text = || undo_failed.iter().map(|(u, e)| format!("could not {u}: {e}")).collect::<Vec<_>>();
        let d = match drained {
            Some(Ok(d)) => d,
            Some(Err(e)) => {
                errors.push(e);
                errors.extend(failed_text());
                return Err((errors.join("; "), None));
            }
            None => return Err(("the capture had no readers".into(), None)),
        };
        let lost: Vec<u64> = lost.into_iter().filter_map(|r| r.map_err(|e| errors.push(e)).ok()).collect();
        if !errors.is_empty() {
            errors.extend(failed_text());
            return Err((errors.join("; "), Some(d.sink)));
        }
        let pids = super::blk_tracer::fill_comms(d.pids, &cmdlines);
        let ring_events = d.per_cpu.iter().map(|(_, c)| c.events).sum();
        let notes = Vec::new();
        Ok(Stopped { sink: d.sink, records: d.records, lost_per_cpu: lost, pids, counters: None, notes, ring_events, undo_failed })
    }
}

/// The instance directory a capture of this process would use first (tests).
pub fn first_instance_dir(tracefs: &Path) -> PathBuf {
    tracefs.join("instances").join(format!("{INSTANCE_PREFIX}{}", std::process::id()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rwbs_becomes_categories() {
        assert_eq!(rwbs_category(b"WS"), cat::WRITE | cat::SYNC);
        assert_eq!(rwbs_category(b"R"), cat::READ);
        assert_eq!(rwbs_category(b"RA"), cat::READ | cat::AHEAD);
        assert_eq!(rwbs_category(b"FWFS"), cat::FLUSH | cat::WRITE | cat::FUA | cat::SYNC);
        assert_eq!(rwbs_category(b"F"), cat::READ | cat::FLUSH);
        assert_eq!(rwbs_category(b"DE"), cat::WRITE | cat::DISCARD);
        assert_eq!(rwbs_category(b"WM"), cat::WRITE | cat::META);
        assert_eq!(rwbs_category(b"N"), cat::READ);
    }

    #[test]
    fn format_files_give_offsets() {
        let text = "name: block_rq_issue\nID: 2104\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:sector_t sector;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:char rwbs[10];\toffset:34;\tsize:10;\tsigned:0;\n";
        let f = Format::parse(text).unwrap();
        assert_eq!(f.id, 2104);
        assert_eq!(f.field("dev"), Some(Field { offset: 8, size: 4 }));
        assert_eq!(f.field("rwbs"), Some(Field { offset: 34, size: 10 }));
        assert!(Format::parse("name: x\n").is_err());
    }

    #[test]
    fn an_issue_event_becomes_a_d_record() {
        let mut fields = HashMap::new();
        for (n, o, s) in [("dev", 8, 4), ("sector", 16, 8), ("nr_sector", 24, 4), ("bytes", 28, 4), ("rwbs", 34, 10), ("comm", 44, 16)] {
            fields.insert(n.to_string(), Field { offset: o, size: s });
        }
        let fmt = Format { id: 7, fields };
        let layouts = Arc::new(HashMap::from([(7u16, Layout::new(Kind::Rq(act::ISSUE), &fmt))]));
        let mut c = TpConvert {
            cpu: 1,
            seq: 0,
            start_ns: 100,
            layouts,
            range: None,
            kdev: 7 << 20 | 3,
            pending_plug: None,
            plugged: HashSet::new(),
            last_ours: None,
            act_mask: cat::ALL,
        };
        let mut data = vec![0u8; 60];
        data[0..2].copy_from_slice(&7u16.to_le_bytes());
        data[4..8].copy_from_slice(&4242u32.to_le_bytes());
        data[8..12].copy_from_slice(&(7u32 << 20 | 3).to_le_bytes());
        data[16..24].copy_from_slice(&80u64.to_le_bytes());
        data[24..28].copy_from_slice(&8u32.to_le_bytes());
        data[28..32].copy_from_slice(&4096u32.to_le_bytes());
        data[34..36].copy_from_slice(b"WS");
        data[44..47].copy_from_slice(b"dd\0");
        let mut out = Vec::new();
        c.convert(1100, &data, &mut out);
        let r = crate::observe::trace::record::Records::new(&out, 0).next().unwrap().unwrap();
        assert_eq!((r.h.time, r.h.sector, r.h.bytes, r.h.pid, r.h.cpu, r.h.sequence), (1000, 80, 4096, 4242, 1, 1));
        assert_eq!(r.h.action_code(), act::ISSUE);
        assert_eq!(r.h.category(), cat::WRITE | cat::SYNC | cat::ISSUE | cat::FS);
        assert_eq!(c.comm_of(&data).as_deref(), Some("dd"));
    }
}
