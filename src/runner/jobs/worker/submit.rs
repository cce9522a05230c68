//! The issue and completion path: an I/O handed to the engine, batches
//! submitted and reaped, each completion counted and timed.

use super::{Depths, Worker, OP_NAMES, SYNC};
use crate::ioengine::{Completion, IoOp, IoUnit, Queued};
use crate::model::job::{READ, WRITE};
use crate::runner::buffers;
use crate::runner::jobs::logs::Sample;
use crate::runner::jobs::verify::Stamp;
use crate::runner::rng::Rng;
use std::io;
use std::io::Write;
use std::time::Instant;

/// What the completion path needs of an I/O in flight, kept per slot.
#[derive(Clone, Copy)]
pub(super) struct Slot {
    pub(super) start: Instant,
    pub(super) submitted: Instant,
    pub(super) dir: u8,
    pub(super) len: u32,
    pub(super) file: u32,
    pub(super) offset: u64,
    /// Writes: the job's write count at issue (the header's sequence number).
    pub(super) numberio: u16,
    /// Reads: check the data when it arrives (read-back or a verifying read job).
    pub(super) check: bool,
    pub(super) expect_numberio: Option<u16>,
    pub(super) expect_seed: Option<u64>,
    /// The ioprio value it was issued with (the logs' priority column).
    pub(super) prio: u16,
}

impl Worker<'_> {
    #[inline]
    pub(super) fn issue(&mut self, dir: usize, file: u32, offset: u64, len: u32, start: Instant) {
        let slot = self.free.pop().expect("a free slot whenever inflight < depth");
        let buf = self.bufs.slot(slot as usize);
        // With verification the verifier fills (it must know the seed).
        if dir == WRITE && (self.spec.buffer.refill || self.spec.buffer.scramble) && self.verifier.is_none() {
            self.fill_write(buf, len, offset, start);
        }
        let mut numberio = 0;
        let mut check = false;
        if dir == WRITE {
            numberio = self.writes_issued as u16;
            self.writes_issued += 1;
        }
        if let Some(v) = self.verifier.as_mut() {
            if self.dry_run {
                if dir == WRITE {
                    v.logged(file, offset, len as u64, numberio, slot as usize);
                }
                self.free.push(slot);
                return;
            }
            if dir == WRITE {
                // SAFETY: as in `fill_write`: a free slot of the job's
                // largest block size, referred to by nothing else.
                let whole = unsafe { std::slice::from_raw_parts_mut(buf, self.bufs.len) };
                let w = Stamp { offset, len: len as usize, numberio, now: start };
                v.stamp(slot as usize, whole, &w);
            } else {
                v.dirty(slot as usize);
                check = !self.spec.rw.writes();
            }
        }
        if let Some(log) = self.iolog.as_mut() {
            let _ = writeln!(log, "{} {} {} {}", self.paths[file as usize], OP_NAMES[dir], offset, len);
        }
        let prio = match self.cmdprio.as_mut() {
            Some(p) if dir <= WRITE => p.pick(dir, len),
            _ => self.default_prio,
        };
        self.slots[slot as usize] = Slot {
            start,
            submitted: start,
            dir: dir as u8,
            len,
            file,
            offset,
            numberio,
            check,
            expect_numberio: None,
            expect_seed: None,
            prio,
        };
        let op = match dir {
            READ => IoOp::Read,
            WRITE => IoOp::Write,
            _ => IoOp::Trim,
        };
        // Without cmdprio the I/O carries no priority of its own: the thread's applies.
        let io = IoUnit { op, file, offset, len, buf, slot, prio: if self.cmdprio.is_some() { prio } else { 0 } };
        if self.ramp_over {
            self.depths.level[Depths::level_bucket(self.inflight + 1)] += 1;
        }
        self.queue_io(slot, &io);
    }

    /// New bytes for a write (refill_buffers, scramble_buffers) in the free
    /// slot `buf` it was just given.
    #[inline]
    fn fill_write(&mut self, buf: *mut u8, len: u32, offset: u64, start: Instant) {
        // SAFETY: `buf` is a free slot (just popped from `free`, so no engine
        // uses it) of the zero-initialised Buffers of `spec.max_bs()` bytes
        // per slot, and `len` never exceeds the job's largest block size;
        // nothing else refers to the slot while `b` lives.
        let b = unsafe { std::slice::from_raw_parts_mut(buf, len as usize) };
        if !self.spec.buffer.refill {
            let t = start.saturating_duration_since(self.epoch);
            buffers::scramble(b, offset, t.as_secs(), t.subsec_nanos());
        } else if let Some(d) = self.dedupe.as_mut() {
            // A copy must regenerate the same bytes: its own generator from its seed.
            buffers::fill(b, &self.spec.buffer, &mut Rng::new(d.next_seed()));
        } else {
            buffers::fill(b, &self.spec.buffer, &mut self.rng);
        }
    }

    #[inline]
    pub(super) fn commit(&mut self) {
        if let Err(e) = self.engine.commit() {
            self.set_error(format!("{}: submit: {e}", self.spec.ioengine));
        }
        self.mark_submitted(Instant::now());
    }

    /// The batch was handed to the engine at `t`: its slat ends there.
    #[inline]
    fn mark_submitted(&mut self, t: Instant) {
        if self.ramp_over {
            self.depths.submit[Depths::batch_bucket(self.batch.len())] += 1;
        }
        for &s in &self.batch {
            self.slots[s as usize].submitted = t;
        }
        self.batch.clear();
    }

    #[inline]
    pub(super) fn reap(&mut self, min: usize) {
        let mut comps = std::mem::take(&mut self.completions);
        let got = self.engine.reap(min, &mut comps);
        self.reaped(got, &comps, "reap");
        self.completions = comps;
    }

    /// `commit` and `reap(min)` in one call to the engine (one system call
    /// for io_uring). The batch's submission time is taken before the call,
    /// since the call returns only after the wait: its slat ends where the
    /// system call starts, and the kernel's part of the submission is in
    /// its clat (lat, from the I/O's start, is the same either way).
    #[inline]
    pub(super) fn commit_and_reap(&mut self, min: usize) {
        self.mark_submitted(Instant::now());
        let mut comps = std::mem::take(&mut self.completions);
        let got = self.engine.commit_and_reap(min, &mut comps).map(|(_, n)| n);
        self.reaped(got, &comps, "submit and reap");
        self.completions = comps;
    }

    /// Account what a reap returned: its completions, or the error that
    /// ends the job.
    #[inline]
    fn reaped(&mut self, got: io::Result<usize>, comps: &[Completion], what: &str) {
        match got {
            Ok(n) => {
                let t = Instant::now();
                if self.ramp_over {
                    self.depths.complete[Depths::batch_bucket(n)] += 1;
                }
                for c in &comps[..n] {
                    self.inflight -= 1;
                    self.complete(c.slot, c.res, t);
                    self.free.push(c.slot);
                }
            }
            Err(e) => {
                // In-flight I/O can no longer be accounted; stop the job.
                self.set_error(format!("{}: {what}: {e}", self.spec.ioengine));
                self.inflight = 0;
                self.free = (0..self.slots.len() as u32).collect();
            }
        }
    }

    #[inline]
    fn complete(&mut self, slot: u32, res: i64, t: Instant) {
        let s = self.slots[slot as usize];
        if res != s.len as i64 {
            if res == 0 && s.dir as usize == READ {
                // End of a character device (/dev/null): the job ends, and
                // fio counts the empty read.
                self.eof = true;
            } else if res == -(libc::ENOSPC as i64) && self.enospc_ends && s.dir as usize == WRITE {
                self.eof = true;
                return;
            } else {
                // A failed or short transfer is an error, never an operation:
                // it stays out of the counts, the bytes and the latencies.
                self.io_error(&s, res);
                return;
            }
        }
        if let Some(v) = self.verifier.as_mut() {
            if s.dir as usize == WRITE {
                v.logged(s.file, s.offset, s.len as u64, s.numberio, slot as usize);
            }
        }
        if s.check {
            self.check_read(slot, &s);
        }
        if self.ramp_over && s.start < self.window_start {
            return;
        }
        let d = s.dir as usize;
        if let (Some(p), true) = (self.cmdprio.as_mut(), d <= WRITE) {
            let from = if p.total_latency() || !self.with_submit { s.start } else { s.submitted };
            p.record(d, s.prio, t.duration_since(from).as_nanos() as u64);
        }
        let st = &mut self.stats[d];
        let bytes = res.max(0) as u64;
        st.ops += 1;
        st.bytes += bytes;
        let lat_ns = t.duration_since(s.start).as_nanos() as u64;
        st.lat.record(lat_ns);
        if d != SYNC {
            if let Some(l) = self.lat.as_mut() {
                l.record(lat_ns, t);
            }
        }
        if self.with_submit {
            if let (Some(sl), Some(cl)) = (st.slat.as_mut(), st.clat.as_mut()) {
                sl.record(s.submitted.duration_since(s.start).as_nanos() as u64);
                cl.record(t.duration_since(s.submitted).as_nanos() as u64);
            }
        }
        self.ticker.add(t, d, bytes);
        if d != SYNC {
            if let Some(l) = self.logs.as_mut() {
                let lat = t.duration_since(s.start).as_nanos() as u64;
                let (slat, clat) = if self.with_submit {
                    (s.submitted.duration_since(s.start).as_nanos() as u64, t.duration_since(s.submitted).as_nanos() as u64)
                } else {
                    (0, lat)
                };
                let t_ns = t.duration_since(self.window_start).as_nanos() as u64;
                l.push(Sample { t_ns, lat, clat, slat, offset: s.offset, len: s.len, dir: s.dir, prio: s.prio });
            }
        }
    }

    #[inline]
    pub(super) fn queue_io(&mut self, slot: u32, io: &IoUnit) {
        match self.engine.queue(io) {
            Ok(Queued::Done(res)) => {
                if self.ramp_over {
                    // A synchronous engine submits and completes one I/O per call.
                    self.depths.submit[1] += 1;
                    self.depths.complete[1] += 1;
                }
                self.complete(slot, res, Instant::now());
                self.free.push(slot);
            }
            Ok(Queued::Pending) => {
                self.inflight += 1;
                self.batch.push(slot);
            }
            Err(e) => {
                self.set_error(format!("{}: queue: {e}", self.spec.ioengine));
                self.free.push(slot);
            }
        }
    }

    #[cold]
    fn io_error(&mut self, s: &Slot, res: i64) {
        if res >= 0 && self.engine.finished() {
            self.ended = true;
            return;
        }
        self.stats[s.dir as usize].errors += 1;
        let dir = s.dir as usize;
        if res < 0 && dir < SYNC && self.spec.misc.continues_after(dir, -res as i32) {
            // continue_on_error: counted, and the job goes on, as fio does.
            return;
        }
        let what = OP_NAMES[s.dir as usize];
        let path = &self.paths[s.file as usize];
        let msg = if res < 0 {
            format!("{what} of {} bytes at offset {} of {path}: {}", s.len, s.offset, std::io::Error::from_raw_os_error(-res as i32))
        } else {
            format!("short {what}: {res} of {} bytes at offset {} of {path}", s.len, s.offset)
        };
        self.set_error(msg);
    }

    /// Issue one fsync/fdatasync with nothing else in flight and wait for it.
    pub(super) fn sync_now(&mut self, file: u32, op: IoOp) {
        let slot = self.free.pop().expect("no I/O in flight during a sync");
        let start = Instant::now();
        self.slots[slot as usize] = Slot {
            start,
            submitted: start,
            dir: SYNC as u8,
            len: 0,
            file,
            offset: 0,
            numberio: 0,
            check: false,
            expect_numberio: None,
            expect_seed: None,
            prio: self.default_prio,
        };
        let io = IoUnit { op, file, offset: 0, len: 0, buf: self.bufs.slot(slot as usize), slot, prio: 0 };
        let res = match self.engine.queue(&io) {
            Ok(Queued::Done(r)) => r,
            Ok(Queued::Pending) => {
                let _ = self.engine.commit();
                let mut one = [Completion::default()];
                match self.engine.reap(1, &mut one) {
                    Ok(1) => one[0].res,
                    _ => -(libc::EIO as i64),
                }
            }
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
        };
        self.complete(slot, res, Instant::now());
        self.free.push(slot);
    }
}
