//! blkparse's end-of-run summary, computed from records with blkparse's
//! own rules (blktrace 1.2.0, found by feeding it synthetic traces):
//!
//! - Only Q counts as Queued; M and F count as Merges with the merged
//!   bio's size; D as Dispatches; C as Completed with its own size; R
//!   counts a requeue and takes its size off Dispatches (which can go below
//!   zero: the counters are unsigned and wrap, and blkparse prints the
//!   wrapped value).
//! - KiB are `bytes >> 10` summed, plus the summed `bytes & 1023` shifted
//!   at print time.
//! - Depth is one pair of counters per device, not per CPU (every CPU block
//!   prints the device's figure): +1 on D, -1 on C and R (never below 0),
//!   the maximum kept. PC requests move the same counters.
//! - A PC read's Queued KiB go to the plain Reads Queued KiB (blkparse adds
//!   them to the wrong counter); its count goes to PC Reads Queued.
//! - Records with no category bit are not events and count nowhere, but
//!   they give their CPU a block and move the end time. Notify records other
//!   than messages (process names, timestamps) are not part of the stream
//!   at all; messages are events.
//! - Throughput is `(1000 * KiB + rest bytes) / ms` between the first event
//!   and the last record, in integers.
//! - Sequence gaps ("Skips") are counted only when blkparse reads a stream
//!   (`-i -`), never when it reads the per-CPU files; both are computed
//!   here (`DeviceSummary::skips`), and the text shows what blkparse would.

use super::record::{act, cat, notify, Record};
use crate::result::trace::summary::{CpuSummary, DeviceSummary, Flow, IoStats, Mode, Pair, Summary};

// The counting stays with the rules above; the summary's types are the result's.
impl<T> Pair<T> {
    fn get(&mut self, write: bool) -> &mut T {
        if write {
            &mut self.write
        } else {
            &mut self.read
        }
    }
}

impl Flow {
    fn add(&mut self, bytes: u32) {
        self.count += 1;
        self.add_size(bytes);
    }
    fn add_size(&mut self, bytes: u32) {
        self.kib = self.kib.wrapping_add(u64::from(bytes >> 10));
        self.rest = self.rest.wrapping_add(u64::from(bytes & 1023));
    }
    fn sub_size(&mut self, bytes: u32) {
        self.kib = self.kib.wrapping_sub(u64::from(bytes >> 10));
        self.rest = self.rest.wrapping_sub(u64::from(bytes & 1023));
    }
    fn sum(&mut self, o: &Flow) {
        self.count = self.count.wrapping_add(o.count);
        self.kib = self.kib.wrapping_add(o.kib);
        self.rest = self.rest.wrapping_add(o.rest);
    }
}

impl IoStats {
    fn sum(&mut self, o: &IoStats) {
        for (a, b) in [
            (&mut self.queued, &o.queued),
            (&mut self.dispatched, &o.dispatched),
            (&mut self.completed, &o.completed),
            (&mut self.merged, &o.merged),
            (&mut self.pc_queued, &o.pc_queued),
            (&mut self.pc_dispatched, &o.pc_dispatched),
        ] {
            a.read.sum(&b.read);
            a.write.sum(&b.write);
        }
        for (a, b) in
            [(&mut self.requeued, &o.requeued), (&mut self.pc_requeued, &o.pc_requeued), (&mut self.pc_completed, &o.pc_completed)]
        {
            a.read = a.read.wrapping_add(b.read);
            a.write = a.write.wrapping_add(b.write);
        }
        self.io_unplugs = self.io_unplugs.wrapping_add(o.io_unplugs);
        self.timer_unplugs = self.timer_unplugs.wrapping_add(o.timer_unplugs);
    }
}

/// A run of missing sequence numbers, both ends included; `end < start`
/// happens (see `fill`) and then counts as -1, as in blkparse.
#[derive(Clone, Copy)]
struct Gap {
    start: u64,
    end: u64,
}

/// How many of the newest gaps a late or new record is compared with.
/// blkparse compares with all of them, which is quadratic in the number
/// of gaps; a trace would need more than this many open at once to count
/// differently.
const GAP_SCAN: usize = 1024;

/// One CPU's state while counting.
struct CpuState {
    cpu: u32,
    records: u64,
    stats: IoStats,
    last_seq: Option<u64>,
    gaps: Vec<Gap>,
}

impl CpuState {
    fn new(cpu: u32) -> CpuState {
        CpuState { cpu, records: 0, stats: IoStats::default(), last_seq: None, gaps: Vec::new() }
    }

    /// Records a gap, growing a neighbouring one when it touches it.
    fn insert_gap(&mut self, start: u64, end: u64) {
        for g in self.gaps.iter_mut().rev().take(GAP_SCAN) {
            if end == g.start.wrapping_sub(1) {
                g.start = start;
                return;
            } else if start == g.end.wrapping_add(1) {
                g.end = end;
                return;
            }
        }
        self.gaps.push(Gap { start, end });
    }

    /// A late record filling a gap. Filling one in its middle leaves, as
    /// blkparse does, the gap's first part and a reversed second part.
    fn fill(&mut self, seq: u64) -> bool {
        for i in (0..self.gaps.len()).rev().take(GAP_SCAN) {
            let g = self.gaps[i];
            if g.start <= seq && seq <= g.end {
                if g.start == seq {
                    if g.end == seq {
                        self.gaps.remove(i);
                    } else {
                        self.gaps[i].start += 1;
                    }
                } else if g.end == seq {
                    self.gaps[i].end -= 1;
                } else {
                    self.gaps[i].end = seq - 1;
                    self.insert_gap(seq + 1, seq - 1);
                }
                return true;
            }
        }
        false
    }

    fn sequence(&mut self, seq: u64) {
        if let Some(last) = self.last_seq {
            let expected = last.wrapping_add(1);
            if seq != expected && !self.fill(seq) && expected < seq {
                self.insert_gap(expected, seq - 1);
            }
        }
        self.last_seq = Some(seq);
    }
}

struct DeviceState {
    device: u32,
    cpus: Vec<CpuState>,
    cur_depth: Pair<u64>,
    max_depth: Pair<u64>,
    events: u64,
    first: u64,
    last: u64,
}

impl DeviceState {
    fn new(device: u32) -> DeviceState {
        DeviceState { device, cpus: Vec::new(), cur_depth: Pair::default(), max_depth: Pair::default(), events: 0, first: 0, last: 0 }
    }

    fn cpu(&mut self, cpu: u32) -> &mut CpuState {
        let at = match self.cpus.iter().position(|c| c.cpu == cpu) {
            Some(i) => i,
            None => {
                self.cpus.push(CpuState::new(cpu));
                self.cpus.len() - 1
            }
        };
        &mut self.cpus[at]
    }

    fn issue(&mut self, w: bool) {
        let cur = self.cur_depth.get(w);
        *cur += 1;
        let now = *cur;
        let max = self.max_depth.get(w);
        *max = (*max).max(now);
    }

    fn retire(&mut self, w: bool) {
        let cur = self.cur_depth.get(w);
        *cur = cur.saturating_sub(1);
    }

    fn record(&mut self, r: &Record<'_>) {
        let h = &r.h;
        let message = h.action & !(act::CGROUP_FLAG as u32) == (u32::from(cat::NOTIFY) << 16 | u32::from(notify::MESSAGE));
        let w = h.is_write();
        self.last = h.time;
        let cpu = self.cpu(u32::from(h.cpu));
        cpu.records += 1;
        if !message {
            cpu.sequence(u64::from(h.sequence));
        }
        if h.category() == 0 {
            return;
        }
        if !message {
            if h.is_pc() {
                self.pc(h.action_code(), w, h.bytes, u32::from(h.cpu));
            } else {
                self.fs(h.action_code(), w, h.bytes, u32::from(h.cpu));
            }
        }
        if self.events == 0 {
            self.first = h.time;
        }
        self.events += 1;
    }

    fn pc(&mut self, code: u16, w: bool, bytes: u32, cpu: u32) {
        match code {
            act::QUEUE => {
                let s = &mut self.cpu(cpu).stats;
                let q = s.pc_queued.get(w);
                q.count += 1;
                q.rest = q.rest.wrapping_add(u64::from(bytes & 1023));
                // blkparse's slip: a PC read's KiB land in the plain read counter.
                let kib = if w { &mut s.pc_queued.write.kib } else { &mut s.queued.read.kib };
                *kib = kib.wrapping_add(u64::from(bytes >> 10));
            }
            act::REQUEUE => {
                self.retire(w);
                let s = &mut self.cpu(cpu).stats;
                *s.pc_requeued.get(w) += 1;
                s.pc_dispatched.get(w).sub_size(bytes);
            }
            act::ISSUE => {
                self.cpu(cpu).stats.pc_dispatched.get(w).add(bytes);
                self.issue(w);
            }
            act::COMPLETE => {
                self.retire(w);
                *self.cpu(cpu).stats.pc_completed.get(w) += 1;
            }
            _ => {}
        }
    }

    fn fs(&mut self, code: u16, w: bool, bytes: u32, cpu: u32) {
        match code {
            act::QUEUE => self.cpu(cpu).stats.queued.get(w).add(bytes),
            act::BACKMERGE | act::FRONTMERGE => self.cpu(cpu).stats.merged.get(w).add(bytes),
            act::REQUEUE => {
                self.retire(w);
                let s = &mut self.cpu(cpu).stats;
                *s.requeued.get(w) += 1;
                s.dispatched.get(w).sub_size(bytes);
            }
            act::ISSUE => {
                self.cpu(cpu).stats.dispatched.get(w).add(bytes);
                self.issue(w);
            }
            act::COMPLETE => {
                self.retire(w);
                self.cpu(cpu).stats.completed.get(w).add(bytes);
            }
            act::UNPLUG_IO => self.cpu(cpu).stats.io_unplugs += 1,
            act::UNPLUG_TIMER => self.cpu(cpu).stats.timer_unplugs += 1,
            _ => {}
        }
    }

    fn finish(mut self, label: String) -> DeviceSummary {
        self.cpus.sort_by_key(|c| c.cpu);
        let mut total = IoStats::default();
        let (mut skips, mut skipped) = (0u64, 0u64);
        let mut cpus = Vec::new();
        for c in self.cpus {
            if c.records == 0 {
                continue;
            }
            total.sum(&c.stats);
            for g in &c.gaps {
                skips += 1;
                skipped = skipped.wrapping_add(g.end.wrapping_sub(g.start).wrapping_add(1));
            }
            cpus.push(CpuSummary { cpu: c.cpu, stats: c.stats });
        }
        let ms = self.last.wrapping_sub(self.first) / 1_000_000;
        let rate = |f: &Flow| f.kib.wrapping_mul(1000).wrapping_add(f.rest).checked_div(ms).unwrap_or(0);
        let throughput_kib_s = Pair { read: rate(&total.completed.read), write: rate(&total.completed.write) };
        DeviceSummary {
            label,
            major: self.device >> 20,
            minor: self.device & 0xfffff,
            cpus,
            total,
            depth: self.max_depth,
            events: self.events,
            first_ns: self.first,
            last_ns: self.last,
            throughput_kib_s,
            skips,
            skipped_records: skipped,
        }
    }
}

/// Whether blkparse drops a record before it reaches the stream: notify
/// records other than messages are read for their payload and let go.
fn out_of_stream(r: &Record<'_>) -> bool {
    let message = u32::from(cat::NOTIFY) << 16 | u32::from(notify::MESSAGE);
    r.h.is_notify() && r.h.action & !(act::CGROUP_FLAG as u32) != message
}

/// The summary of `records`, given in the order blkparse handles them (a
/// trace's `merged()` order).
pub fn summarize<'a>(records: impl IntoIterator<Item = Record<'a>>, mode: Mode) -> Summary {
    let mut devices: Vec<DeviceState> = Vec::new();
    let mut one: Option<DeviceState> = None;
    for r in records {
        if out_of_stream(&r) {
            continue;
        }
        let dev = match &mode {
            // blkparse takes the device number of the first record it sees.
            Mode::Files { .. } => one.get_or_insert_with(|| DeviceState::new(r.h.device)),
            Mode::Stream => match devices.iter().position(|d| d.device == r.h.device) {
                Some(i) => &mut devices[i],
                None => {
                    devices.push(DeviceState::new(r.h.device));
                    devices.last_mut().expect("just pushed")
                }
            },
        };
        dev.record(&r);
    }
    let devices = match &mode {
        Mode::Files { name } => vec![one.unwrap_or_else(|| DeviceState::new(0)).finish(name.clone())],
        Mode::Stream => devices
            .into_iter()
            .map(|d| {
                let label = format!("{},{}", d.device >> 20, d.device & 0xfffff);
                d.finish(label)
            })
            .collect(),
    };
    Summary { mode, devices }
}

#[cfg(test)]
mod tests {
    use super::super::record::{Header, MAGIC, VERSION};
    use super::*;

    fn h(seq: u32, time: u64, bytes: u32, code: u16, category: u16, cpu: u16) -> Header {
        Header {
            magic: MAGIC | VERSION,
            sequence: seq,
            time,
            sector: 0,
            bytes,
            action: (category as u32) << 16 | code as u32,
            pid: 1,
            device: 8 << 20 | 16,
            cpu,
            error: 0,
            pdu_len: 0,
        }
    }

    fn run(hs: &[Header], mode: Mode) -> Summary {
        summarize(hs.iter().map(|h| Record { h: *h, pdu: b"" }), mode)
    }

    #[test]
    fn counts_as_blkparse_does() {
        let w = cat::WRITE;
        let hs = [
            h(1, 1_000, 512, act::QUEUE, w | cat::QUEUE, 0),
            h(2, 2_000, 512, act::QUEUE, w | cat::QUEUE, 0),
            h(3, 3_000, 1024, act::ISSUE, w | cat::ISSUE, 0),
            h(1, 3_500, 4096, act::ISSUE, w | cat::ISSUE, 1),
            h(4, 4_000, 1024, act::COMPLETE, w | cat::COMPLETE, 0),
            h(5, 5_000, 8192, act::BACKMERGE, w | cat::QUEUE, 0),
            h(6, 6_000, 0, act::PLUG, 0, 0),
            h(7, 2_000_001_000, 0, act::UNPLUG_IO, cat::QUEUE, 0),
        ];
        let s = run(&hs, Mode::Files { name: "t".into() });
        let d = &s.devices[0];
        assert_eq!(d.label, "t");
        assert_eq!((d.major, d.minor), (8, 16));
        let c0 = &d.cpus[0].stats;
        assert_eq!(c0.queued.write, Flow { count: 2, kib: 0, rest: 1024 });
        assert_eq!(c0.queued.write.shown_kib(), 1);
        assert_eq!(c0.merged.write.shown_kib(), 8);
        assert_eq!(c0.io_unplugs, 1);
        assert_eq!(d.total.dispatched.write.count, 2);
        assert_eq!(d.depth, Pair { read: 0, write: 2 });
        // The plug has no category: no event, but it is cpu 0's record.
        assert_eq!(d.events, 7);
        // 1 KiB completed over 2000 ms.
        assert_eq!(d.throughput_kib_s.write, 0);
        assert_eq!(d.last_ns - d.first_ns, 2_000_000_000);
    }

    #[test]
    fn requeue_before_dispatch_wraps() {
        let hs = [h(1, 1, 2048, act::REQUEUE, cat::WRITE | cat::REQUEUE, 0)];
        let s = run(&hs, Mode::Stream);
        let d = &s.devices[0].total.dispatched.write;
        assert_eq!(d.shown_kib(), 0u64.wrapping_sub(2));
        assert_eq!(s.devices[0].label, "8,16");
    }

    #[test]
    fn gaps_are_counted_and_filled() {
        let q = cat::QUEUE | cat::WRITE;
        let seqs = [1, 3, 2, 4, 8, 9, 12];
        let hs: Vec<Header> = seqs.iter().enumerate().map(|(i, &s)| h(s, i as u64, 4096, act::QUEUE, q, 0)).collect();
        let d = &run(&hs, Mode::Stream).devices[0];
        // 2 comes late and fills its gap, but then 4 follows 2, so 3 counts
        // as missing (blkparse compares with the last record seen); 5-7 and
        // 10-11 are gaps too.
        assert_eq!((d.skips, d.skipped_records), (3, 6));
    }
}
