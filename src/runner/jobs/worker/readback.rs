//! Verification's read side: fio's write-then-check rounds, the read-back
//! of what was written (all of it, or the backlog's next batch), and the
//! check of each block as it arrives.

use super::submit::Slot;
use super::{Worker, WorkerInput};
use crate::ioengine::{IoOp, IoUnit};
use crate::model::job::{READ, WRITE};
use crate::runner::jobs::verify::Expect;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

impl Worker<'_> {
    /// A job that reads back what it wrote runs as fio's rounds: each writes
    /// at most the file size (io_size when smaller; random norandommap jobs
    /// up to io_size) and then checks it; rounds go on for `loops`, then
    /// while the bytes written and read stay below io_size.
    pub(super) fn rounds(&mut self, input: &WorkerInput, depth: usize, region_total: u64, io_limit: u64) -> bool {
        let spec = self.spec;
        let cap = if spec.rw.is_random() && spec.norandommap { region_total.max(io_limit) } else { region_total };
        let per_round = cap.min(io_limit);
        let end_time = spec.runtime.map(|r| self.window_start + r);
        let mut loops_left = spec.loops;
        loop {
            if loops_left > 0 {
                loops_left -= 1;
            } else {
                let done = self.progress_base;
                if done >= io_limit || io_limit - done < spec.max_bs() {
                    return false;
                }
            }
            let t = Instant::now();
            let stopped = self.main_loop(&input.files, &input.halt, &input.progress, depth, per_round);
            let d = self.measured_since(t);
            self.phase_ns[WRITE] += d;
            if spec.rw.reads() || spec.verify.backlog > 0 {
                self.phase_ns[READ] += d;
            }
            if stopped {
                return true;
            }
            if self.error.is_some() || self.ended || self.halted() {
                return false;
            }
            let t = Instant::now();
            let stopped = self.read_back(&input.halt, depth, false);
            self.phase_ns[READ] += self.measured_since(t);
            if stopped {
                return true;
            }
            if self.error.is_some() || end_time.is_some_and(|e| Instant::now() >= e) {
                return false;
            }
        }
    }

    /// Nanoseconds of the measured window since `t`.
    fn measured_since(&self, t: Instant) -> u64 {
        Instant::now().saturating_duration_since(t.max(self.window_start)).as_nanos() as u64
    }

    /// Read back and check what was written: the backlog's next batch, or
    /// every block not yet checked. Stops at the runtime's end, like fio.
    /// Returns true when stopped (by the user or another job's exitall).
    pub(super) fn read_back(&mut self, stop: &AtomicBool, depth: usize, backlog: bool) -> bool {
        let end_time = self.spec.runtime.map(|r| self.window_start + r);
        let batch = self.verifier.as_ref().map_or(0, |v| v.batch);
        let mut cursor = (0u32, 0usize);
        let mut n = 0u64;
        let mut done = false;
        let mut partial = false;
        loop {
            while !done && self.inflight < depth {
                let now = Instant::now();
                if !self.ramp_over && now >= self.window_start {
                    self.start_window();
                }
                if stop.load(Ordering::Relaxed) {
                    partial = true;
                    done = true;
                    break;
                }
                if self.error.is_some() || end_time.is_some_and(|e| now >= e) || (backlog && n >= batch) {
                    done = true;
                    break;
                }
                let Some(v) = self.verifier.as_mut() else { break };
                let next = if backlog { v.next_backlog() } else { v.next_pending(&mut cursor) };
                let Some(x) = next else {
                    done = true;
                    break;
                };
                n += 1;
                self.progress_base += x.len as u64;
                self.issue_check(&x, now);
            }
            if !self.batch.is_empty() {
                self.commit();
            }
            if self.inflight > 0 && (self.inflight == depth || done) {
                self.reap(self.inflight.min(depth));
            }
            if (done || self.verifier.is_none()) && self.inflight == 0 {
                break;
            }
        }
        partial
    }

    /// Issue the read of a block to check.
    fn issue_check(&mut self, x: &Expect, start: Instant) {
        let slot = self.free.pop().expect("a free slot whenever inflight < depth");
        let buf = self.bufs.slot(slot as usize);
        if let Some(v) = self.verifier.as_mut() {
            v.dirty(slot as usize);
        }
        self.slots[slot as usize] = Slot {
            start,
            submitted: start,
            dir: READ as u8,
            len: x.len,
            file: x.file,
            offset: x.offset,
            numberio: 0,
            check: true,
            expect_numberio: x.numberio,
            expect_seed: x.seed,
            prio: self.default_prio,
        };
        let io = IoUnit { op: IoOp::Read, file: x.file, offset: x.offset, len: x.len, buf, slot, prio: 0 };
        self.queue_io(slot, &io);
    }

    /// A read to check has arrived: check it, tell each failure.
    #[cold]
    pub(super) fn check_read(&mut self, slot: u32, s: &Slot) {
        let Some(v) = self.verifier.as_mut() else { return };
        // SAFETY: the slot's read has completed, so no engine uses its
        // buffer; it holds `len` (<= the slot size) bytes, and nothing else
        // refers to the slot until it is pushed back on the free list.
        let buf = unsafe { std::slice::from_raw_parts_mut(self.bufs.slot(slot as usize), s.len as usize) };
        let x = Expect { file: s.file, offset: s.offset, len: s.len, numberio: s.expect_numberio, seed: s.expect_seed };
        self.failures.clear();
        v.check(buf, &x, &mut self.failures);
        v.dirty(slot as usize);
        if self.failures.is_empty() {
            return;
        }
        for f in &self.failures {
            self.events.note(f);
        }
        let first = v.first_failure.clone().unwrap_or_else(|| "verify failed".into());
        self.set_error(first);
    }
}
