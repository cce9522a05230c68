//! Method (a): the ftrace `blk` tracer. It exists only in the top-level
//! tracefs instance, so it is taken only when nobody else uses the top
//! level (`current_tracer` is `nop`), and every setting changed is put
//! back. Its ring-buffer events are `struct blk_io_trace` whose first 16
//! bytes (magic, sequence, time) are overlaid by ftrace's own entry header;
//! those are re-made here (the time from the ring buffer's clock, `mono`).

use super::reader::{Convert, Readers};
use super::tracefs::{self, CpuStats, TopLevelSaved, Tracefs, Undo};
use super::{failed_start, note_step, undo_all, Hooks, Running, Started, Stopped, Target, TraceRequest};
use crate::observe::trace::record::{cat, Header, RecordSink, HEADER_LEN, MAGIC, VERSION};
use crate::result::trace::capture::PidInfo;
use std::collections::BTreeMap;
use std::path::Path;

/// The ftrace entry type of blk tracer events when `events/ftrace` does not
/// say otherwise (`TRACE_BLK` in the kernel's `enum trace_type`).
const DEFAULT_BLK_TYPE: u16 = 14;

pub(crate) fn start(req: &TraceRequest, t: &Target, sink: Box<dyn RecordSink>, start_ns: u64, hooks: &mut dyn Hooks) -> Started {
    let mut steps: Vec<Undo> = Vec::new();
    // Undone, and the claim on the top level given up (kept on record when
    // a step of it could not be undone).
    let give_up = |e: String, steps: &mut Vec<Undo>, hooks: &mut dyn Hooks| {
        let failed = undo_all(steps);
        hooks.release_top_level(failed.is_empty());
        failed_start(e, &failed)
    };
    let s = match setup(req, t, hooks, &mut steps) {
        Ok(s) => s,
        Err(e) => return Err((give_up(e, &mut steps, hooks), sink)),
    };
    match s.begin(sink, t, start_ns, hooks, &mut steps) {
        Ok(readers) => Ok((Box::new(BlkRunning { steps, readers: Some(readers), before: s.before, tracefs: s.tracefs }), s.notes)),
        Err((e, sink)) => Err((give_up(e, &mut steps, hooks), sink)),
    }
}

struct Setup {
    tracefs: Tracefs,
    blk_type: u16,
    page: usize,
    cpus: Vec<u32>,
    before: Vec<CpuStats>,
    notes: Vec<String>,
    act_mask: u16,
}

fn setup(req: &TraceRequest, t: &Target, hooks: &mut dyn Hooks, steps: &mut Vec<Undo>) -> Result<Setup, String> {
    let (tfs, mut notes) = Tracefs::open(hooks, steps)?;
    let available = tracefs::read(&tfs.path("available_tracers"))?;
    if !available.split_whitespace().any(|x| x == "blk") {
        return Err(format!("the kernel has no blk tracer (available_tracers: {available}; it needs CONFIG_BLK_DEV_IO_TRACE)"));
    }
    // Before anything is read: another capture may be changing it now.
    notes.extend(hooks.claim_top_level(&tfs.root)?);
    let current = tracefs::read(&tfs.path("current_tracer"))?;
    if current != "nop" {
        return Err(format!("the top-level tracer is '{current}', not nop: someone else is tracing; left alone"));
    }
    if tracefs::read(&tfs.path("tracing_on"))? != "1" {
        return Err("tracing_on is 0 in the top-level instance: someone paused tracing; left alone".into());
    }
    let trace_dir = super::sysfs_trace_dir(t);
    let enable = trace_dir.join("enable");
    match tracefs::read(&enable) {
        Ok(v) if v == "0" => {}
        Ok(_) => {
            return Err(format!(
                "{} is already 1: the device is being traced (blktrace, or a killed fsbench: `fsbench cleanup`)",
                enable.display()
            ))
        }
        Err(e) => return Err(format!("{e} (the kernel has no blk tracing for this device)")),
    }
    let blk_type = blk_event_type(&tfs.root)?;
    let saved = TopLevelSaved {
        trace_clock: tracefs::selected(&tracefs::read(&tfs.path("trace_clock"))?).unwrap_or_else(|| "local".into()),
        buffer_size_kb: tracefs::buffer_kb(&tracefs::read(&tfs.path("buffer_size_kb"))?)
            .map(|k| k.to_string())
            .ok_or("buffer_size_kb differs between CPUs (someone sized them one by one); left alone")?,
        bin: tracefs::read(&tfs.path("options/bin"))?,
    };
    note_step(hooks, steps, Undo::TopLevel { tracefs: tfs.root.clone(), saved })?;
    tracefs::write(&tfs.path("buffer_size_kb"), &req.buffer_kb_per_cpu.to_string())?;
    tracefs::write(&tfs.path("trace_clock"), "mono")?;
    tracefs::write(&tfs.path("options/bin"), "1")?;
    tracefs::write(&tfs.path("current_tracer"), "blk")?;
    let page = page_size(&tfs.root);
    let cpus = tfs.cpus(&tfs.root)?;
    let before = cpus.iter().map(|&c| CpuStats::read(&tfs.root, c)).collect::<Result<Vec<_>, _>>()?;
    if t.range.is_some() {
        notes.push(format!("{} is a partition: the kernel keeps to its sectors (its trace/start_lba and end_lba)", t.dev.name));
    }
    Ok(Setup { tracefs: tfs, blk_type, page, cpus, before, notes, act_mask: req.act_mask })
}

impl Setup {
    fn begin(
        &self,
        sink: Box<dyn RecordSink>,
        t: &Target,
        start_ns: u64,
        hooks: &mut dyn Hooks,
        steps: &mut Vec<Undo>,
    ) -> Result<Readers, (String, Box<dyn RecordSink>)> {
        let (blk_type, kdev, act_mask) = (self.blk_type, t.kdev, self.act_mask);
        // The readers own the sink from here; a failure below hands it back.
        let readers = Readers::start(&self.tracefs.root, &self.cpus, sink, self.page, |cpu| {
            Box::new(BlkConvert { cpu: cpu as u16, seq: 0, start_ns, blk_type, kdev })
        });
        let readers = readers?;
        let trace_dir = super::sysfs_trace_dir(t);
        // Writing act_mask sets the device's trace up already (enable then
        // changes nothing), so it comes after the undo step is registered.
        let noted = note_step(hooks, steps, Undo::DeviceTrace { sysfs_trace: trace_dir.clone() });
        let mask = (act_mask != cat::ALL).then(|| tracefs::write(&trace_dir.join("act_mask"), &format!("{act_mask:#x}")));
        let enabled = noted.and_then(|()| mask.unwrap_or(Ok(()))).and_then(|()| tracefs::write(&trace_dir.join("enable"), "1"));
        if let Err(e) = enabled {
            return Err(match readers.finish() {
                Ok(d) => (e, d.sink),
                Err(e2) => (format!("{e}; {e2}"), Box::<Vec<u8>>::default()),
            });
        }
        Ok(readers)
    }
}

/// The ring buffer's sub-buffer size: what one read of trace_pipe_raw returns at most.
pub(crate) fn page_size(dir: &Path) -> usize {
    tracefs::read(&dir.join("buffer_subbuf_size_kb")).ok().and_then(|s| s.parse::<usize>().ok()).map(|k| k * 1024).unwrap_or(4096)
}

/// The entry type of blk tracer events: not listed in `events/ftrace` (the
/// formats of ftrace's own entries), so the one `TRACE_BLK` number, checked
/// to be free there.
fn blk_event_type(root: &Path) -> Result<u16, String> {
    let dir = root.join("events/ftrace");
    let mut used = Vec::new();
    if let Ok(rd) = std::fs::read_dir(&dir) {
        for e in rd.filter_map(|e| e.ok()) {
            let fmt = std::fs::read_to_string(e.path().join("format")).unwrap_or_default();
            if let Some(id) = fmt.lines().find_map(|l| l.strip_prefix("ID:")).and_then(|v| v.trim().parse::<u16>().ok()) {
                used.push(id);
            }
        }
    }
    if used.contains(&DEFAULT_BLK_TYPE) {
        return Err(format!(
            "ftrace entry type {DEFAULT_BLK_TYPE} belongs to another entry in {}: this kernel numbers its blk tracer events differently",
            dir.display()
        ));
    }
    Ok(DEFAULT_BLK_TYPE)
}

struct BlkConvert {
    cpu: u16,
    seq: u32,
    start_ns: u64,
    blk_type: u16,
    kdev: u32,
}

impl Convert for BlkConvert {
    fn convert(&mut self, ts: u64, data: &[u8], out: &mut Vec<u8>) {
        if data.len() < HEADER_LEN || u16::from_le_bytes([data[0], data[1]]) != self.blk_type {
            return;
        }
        let mut raw = [0u8; HEADER_LEN];
        raw.copy_from_slice(&data[..HEADER_LEN]);
        let mut h = Header::decode(&raw);
        let pdu_end = HEADER_LEN + h.pdu_len as usize;
        if h.device != self.kdev || pdu_end > data.len() {
            return;
        }
        self.seq = self.seq.wrapping_add(1);
        h.magic = MAGIC | VERSION;
        h.sequence = self.seq;
        h.time = ts.saturating_sub(self.start_ns);
        h.cpu = self.cpu;
        out.extend_from_slice(&h.encode());
        out.extend_from_slice(&data[HEADER_LEN..pdu_end]);
    }
}

struct BlkRunning {
    steps: Vec<Undo>,
    readers: Option<Readers>,
    before: Vec<CpuStats>,
    tracefs: Tracefs,
}

impl Running for BlkRunning {
    fn stop(mut self: Box<Self>) -> Result<Stopped, (String, Option<Box<dyn RecordSink>>)> {
        // Stop new events first, so the readers can drain to the end. A
        // device still traced then is put back with the rest, and what
        // cannot be put back is the caller's to report.
        let mut errors = Vec::new();
        let mut stopped_first = Vec::new();
        if let Some(i) = self.steps.iter().position(|u| matches!(u, Undo::DeviceTrace { .. })) {
            let u = self.steps.remove(i);
            if let Err(e) = u.perform() {
                stopped_first.push((u, e));
            }
        }
        let drained = self.readers.take().map(|r| r.finish());
        let cpus: Vec<u32> = self.tracefs.cpus(&self.tracefs.root).unwrap_or_default();
        let after: Vec<Result<CpuStats, String>> = cpus.iter().map(|&c| CpuStats::read(&self.tracefs.root, c)).collect();
        let cmdlines = self.tracefs.saved_cmdlines();
        let mut undo_failed = undo_all(&mut self.steps);
        undo_failed.extend(stopped_first);
        let drained = match drained {
            Some(Ok(d)) => d,
            Some(Err(e)) => {
                errors.push(e);
                errors.extend(undo_failed.iter().map(|(u, e)| format!("could not {u}: {e}")));
                return Err((errors.join("; "), None));
            }
            None => return Err(("the capture had no readers".into(), None)),
        };
        let mut lost = Vec::new();
        for (i, a) in after.into_iter().enumerate() {
            match a {
                Ok(a) => lost.push(a.since(self.before.get(i).copied().as_ref().unwrap_or(&CpuStats::default())).lost()),
                Err(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            errors.extend(undo_failed.iter().map(|(u, e)| format!("could not {u}: {e}")));
            return Err((errors.join("; "), Some(drained.sink)));
        }
        let ring_events = drained.per_cpu.iter().map(|(_, c)| c.events).sum();
        Ok(Stopped {
            sink: drained.sink,
            records: drained.records,
            lost_per_cpu: lost,
            pids: fill_comms(drained.pids, &cmdlines),
            counters: None,
            notes: Vec::new(),
            ring_events,
            undo_failed,
        })
    }
}

/// Names the kernel cached for pids that were gone before they could be looked up.
pub(crate) fn fill_comms(mut pids: BTreeMap<u32, PidInfo>, cmdlines: &BTreeMap<u32, String>) -> BTreeMap<u32, PidInfo> {
    for (pid, info) in pids.iter_mut() {
        if info.comm.is_empty() {
            if let Some(c) = cmdlines.get(pid) {
                info.comm = c.clone();
            }
        }
    }
    pids
}
