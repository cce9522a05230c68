//! The I/O main loop: which I/O comes next (direction, file, offset,
//! length), when it may go (rate, thinktime, flow), when the job's work is
//! done, and when to submit and reap.

use super::pacing::Pacer;
use super::{ProgressCell, Worker};
use crate::ioengine::IoOp;
use crate::model::job::{BlockSize, JobSpec, READ, TRIM, WRITE};
use crate::model::job_misc::Sequencer;
use crate::runner::jobs::files::{self, PreparedFile};
use crate::runner::jobs::offsets::{OffsetGen, Shape, Skew};
use crate::runner::rng::Rng;
use crate::runner::sleep_unless_stopped;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Remaining work of the worker, decided at issue time.
struct Budget {
    end_time: Option<Instant>,
    bytes: u64,
    issued: u64,
    time_based: bool,
    ios: u64,
    max_ios: u64,
}

impl Budget {
    #[inline]
    fn exhausted(&self, now: Instant) -> bool {
        if let Some(e) = self.end_time {
            if now >= e {
                return true;
            }
        }
        self.ios >= self.max_ios || (!self.time_based && self.issued >= self.bytes)
    }
}

/// What one run of the loop keeps fixed, worked out from the job once.
struct Plan {
    depth: usize,
    /// Reads and writes draw their offsets from one generator.
    shared_gen: bool,
    drop_cache_on_wrap: bool,
    pacing: bool,
    mixed: bool,
    /// The direction of a job that does one thing.
    only: usize,
    /// trimwrite: every trimmed block is written next, outside the budget
    /// (fio reports size bytes trimmed and size bytes written).
    trim_then_write: bool,
    /// Writes between syncs (fsync=, fdatasync=); 0: none.
    sync_every: u32,
    sync_op: IoOp,
    batch_submit: usize,
    reap_min: usize,
    nfiles: u32,
}

impl Plan {
    fn new(spec: &JobSpec, syncs: bool, pacing: bool, nfiles: usize, depth: usize) -> Plan {
        let only = if spec.rw.reads() {
            READ
        } else if spec.rw.trims() {
            TRIM
        } else {
            WRITE
        };
        let sync_every = if !syncs {
            0
        } else if spec.fsync > 0 {
            spec.fsync
        } else {
            spec.fdatasync
        };
        let m = &spec.misc;
        Plan {
            depth,
            shared_gen: spec.rw.is_random() && align(spec, READ) == align(spec, WRITE) && m.distribution[READ] == m.distribution[WRITE],
            drop_cache_on_wrap: spec.time_based && spec.invalidate && !spec.direct,
            pacing,
            mixed: spec.rw.reads() && spec.rw.writes(),
            only,
            trim_then_write: spec.rw.trims() && spec.rw.writes(),
            sync_every,
            sync_op: if spec.fsync > 0 { IoOp::Fsync } else { IoOp::Fdatasync },
            batch_submit: spec.engine.iodepth_batch_submit as usize,
            reap_min: (spec.engine.iodepth_batch_complete_min as usize).clamp(1, depth),
            nfiles: nfiles as u32,
        }
    }
}

/// Where the loop stands.
struct Pass {
    /// Per file, the read side's and the write side's offsets.
    gens: Vec<[OffsetGen; 2]>,
    budget: Budget,
    pacer: Pacer,
    /// I/Os in flight at most: the iodepth, or the latency search's depth.
    limit: usize,
    next_file: u32,
    writes: u64,
    /// A sync to issue on this file once nothing is in flight.
    sync_due: Option<u32>,
    /// trimwrite: the block just trimmed, to write next.
    rewrite: Option<(u32, u64, u64)>,
}

impl Pass {
    /// A write went to `file`: a sync falls due every `sync_every` writes.
    #[inline]
    fn wrote(&mut self, plan: &Plan, file: u32) {
        if plan.sync_every > 0 {
            self.writes += 1;
            if self.writes % plan.sync_every as u64 == 0 {
                self.sync_due = Some(file);
            }
        }
    }
}

/// What the loop does after one turn of issuing.
enum Turn {
    /// Issue on while the queue has room.
    Next,
    /// A sync waits for the I/O in flight: reap first.
    Wait,
    /// The job's work is over: drain and return.
    Done,
    /// Stopped (Ctrl-C or another job's exitall): drain and return partial.
    Stopped,
}

/// The offsets' alignment in direction `d`: blockalign, or the smallest block.
fn align(spec: &JobSpec, d: usize) -> u64 {
    spec.misc.blockalign[d].unwrap_or_else(|| spec.bs[d].min())
}

impl Worker<'_> {
    /// Issue I/O until `bytes` are issued (or the job's other limits end it)
    /// and drain. Returns true when stopped by the user or another job's
    /// exitall.
    pub(super) fn main_loop(
        &mut self,
        files: &[PreparedFile],
        stop: &AtomicBool,
        progress: &ProgressCell,
        depth: usize,
        bytes: u64,
    ) -> bool {
        let mut pass = Pass {
            gens: self.offset_gens(files),
            budget: self.budget(bytes),
            // Rates hold from the first I/O on, ramp included.
            pacer: Pacer::new(self.spec),
            limit: self.depth_limit(depth),
            next_file: 0,
            writes: 0,
            sync_due: None,
            rewrite: None,
        };
        let plan = Plan::new(self.spec, self.syncs, pass.pacer.active() && !self.dry_run, files.len(), depth);
        let mut done = false;
        let mut partial = false;
        loop {
            while !done && self.inflight < pass.limit {
                match self.turn(&plan, &mut pass, stop, progress) {
                    Turn::Next => {}
                    Turn::Wait => break,
                    Turn::Done => done = true,
                    Turn::Stopped => {
                        partial = true;
                        done = true;
                    }
                }
            }
            let must_reap = self.inflight > 0 && (self.inflight >= pass.limit || done || pass.sync_due.is_some());
            if must_reap && !self.batch.is_empty() {
                // The queue is full: submit the batch and wait in one go.
                self.commit_and_reap(plan.reap_min.min(self.inflight));
            } else {
                if !self.batch.is_empty() {
                    self.commit();
                }
                if must_reap {
                    self.reap(plan.reap_min.min(self.inflight));
                }
            }
            if done && self.inflight == 0 {
                break;
            }
        }
        self.progress_base += pass.budget.issued;
        partial
    }

    /// Per file, an offset generator for each side. Built once per file
    /// size: a zipf's normalising sum is costly on big files.
    fn offset_gens(&mut self, files: &[PreparedFile]) -> Vec<[OffsetGen; 2]> {
        let spec = self.spec;
        let random = spec.rw.is_random();
        let variable = !(spec.bs[READ].is_fixed() && spec.bs[WRITE].is_fixed());
        let m = &spec.misc;
        let zones = m.strided();
        let mut skews: Vec<(u64, usize, Option<Skew>)> = Vec::new();
        let mut gens: Vec<[OffsetGen; 2]> = Vec::with_capacity(files.len());
        for f in files {
            let mut mk = |d: usize, rng: &mut Rng| {
                let a = align(spec, d);
                let n = (f.region.end - f.region.start).saturating_sub(spec.bs[d].min()) / a + 1;
                let skew = match skews.iter().find(|s| s.0 == n && s.1 == d) {
                    Some(s) => s.2.clone(),
                    None => {
                        let s = if random { Skew::new(&m.distribution[d], n, a, rng) } else { None };
                        skews.push((n, d, s.clone()));
                        s
                    }
                };
                let shape = Shape {
                    random,
                    map: !spec.norandommap,
                    variable,
                    align: if random { a } else { spec.bs[d].min() },
                    min_len: spec.bs[d].min(),
                    skew,
                    skip: m.seq_skip,
                    every: m.rand_every,
                    identical: m.sequencer == Sequencer::Identical,
                    zones,
                };
                OffsetGen::new(f.region, shape, rng)
            };
            gens.push([mk(READ, &mut self.rng), mk(WRITE, &mut self.rng)]);
        }
        gens
    }

    fn budget(&self, bytes: u64) -> Budget {
        let spec = self.spec;
        Budget {
            end_time: spec.runtime.map(|r| self.window_start + r),
            bytes,
            issued: 0,
            // fill_device runs until ENOSPC, unless a size bounds it (as in fio).
            time_based: spec.time_based || (spec.misc.fill_device && spec.size.is_none()) || self.no_data,
            ios: 0,
            max_ios: spec.misc.number_ios.unwrap_or(u64::MAX),
        }
    }

    /// One turn of the issuing loop: a sync that is due, the ramp's end,
    /// the latency search's step, then the next I/O unless the job is over.
    #[inline]
    fn turn(&mut self, plan: &Plan, pass: &mut Pass, stop: &AtomicBool, progress: &ProgressCell) -> Turn {
        if let Some(file) = pass.sync_due {
            if self.inflight > 0 {
                return Turn::Wait;
            }
            self.sync_now(file, plan.sync_op);
            pass.sync_due = None;
            return Turn::Next;
        }
        let mut now = Instant::now();
        if !self.ramp_over && now >= self.window_start {
            self.start_window();
            pass.budget.issued = 0;
            pass.budget.ios = 0;
            pass.limit = self.depth_limit(plan.depth);
        }
        // fio judges the depth outside the ramp only.
        if self.ramp_over && self.lat.as_ref().is_some_and(|l| now >= l.due) {
            // A lower depth has drained the queue, so issuing on is right.
            pass.limit = self.latency_step(plan.depth);
            // Draining took time that is no part of the next I/O.
            now = Instant::now();
        }
        // One relaxed load of a flag nobody writes until Ctrl-C or
        // an exitall: it stays in this core's cache and costs ~1 ns.
        if stop.load(Ordering::Relaxed) {
            return Turn::Stopped;
        }
        if let Some((file, offset, len)) = pass.rewrite.take() {
            if self.error.is_some() {
                return Turn::Done;
            }
            self.issue(WRITE, file, offset, len as u32, now);
            pass.wrote(plan, file);
            return Turn::Next;
        }
        if self.rate_check_at.is_some_and(|t| now >= t) {
            self.check_min_rate(now);
        }
        if pass.budget.exhausted(now) || self.error.is_some() || self.eof || self.ended || self.halted() {
            return Turn::Done;
        }
        if self.verifier.as_ref().is_some_and(|v| v.backlog_due()) {
            // Check the oldest completed writes before writing on.
            self.quiesce();
            return if self.read_back(stop, plan.depth, true) { Turn::Stopped } else { Turn::Next };
        }
        self.next_io(plan, pass, stop, progress, now)
    }

    /// Draw the next I/O, let it wait its turn (rate, thinktime, flow) and
    /// issue it.
    #[inline]
    fn next_io(&mut self, plan: &Plan, pass: &mut Pass, stop: &AtomicBool, progress: &ProgressCell, now: Instant) -> Turn {
        let spec = self.spec;
        let dir = if plan.mixed {
            if self.rng.below(100) < spec.rwmixread as u64 {
                READ
            } else {
                WRITE
            }
        } else {
            plan.only
        };
        let file = pass.next_file;
        pass.next_file = if pass.next_file + 1 == plan.nfiles { 0 } else { pass.next_file + 1 };
        let (offset, len) = self.place(plan, &mut pass.gens[file as usize], file, dir);
        let mut start = now;
        if plan.pacing && dir != TRIM {
            pass.pacer.wait(dir, len, now, pass.budget.end_time, stop, &mut self.rng);
            start = Instant::now();
            // As fio: an I/O whose wait ran into a stop or the
            // runtime's end is not issued.
            if stop.load(Ordering::Relaxed) {
                return Turn::Stopped;
            }
            if pass.budget.exhausted(start) {
                return Turn::Done;
            }
        }
        if !spec.thinktime.is_zero() && !self.dry_run {
            sleep_unless_stopped(spec.thinktime, stop);
            start = Instant::now();
        }
        pass.budget.issued += len;
        pass.budget.ios += 1;
        progress.bytes.store(self.progress_base + pass.budget.issued, Ordering::Relaxed);
        if self.flow.is_some() && self.flow_wait(stop) {
            start = Instant::now();
        }
        self.issue(dir, file, offset, len as u32, start);
        if plan.trim_then_write {
            pass.rewrite = Some((file, offset, len));
        }
        if dir == WRITE {
            pass.wrote(plan, file);
        }
        if plan.batch_submit > 0 && self.batch.len() >= plan.batch_submit {
            self.commit();
        }
        Turn::Next
    }

    /// The next I/O's offset and length in `dir` on `file`, whose offset
    /// generators are `gens`.
    #[inline]
    fn place(&mut self, plan: &Plan, gens: &mut [OffsetGen; 2], file: u32, dir: usize) -> (u64, u64) {
        let spec = self.spec;
        // Trims share the write side: its block size, its offsets.
        let g = &mut gens[if plan.shared_gen { READ } else { dir.min(WRITE) }];
        let offset = g.offset(&mut self.rng);
        if g.wrapped {
            g.wrapped = false;
            if plan.drop_cache_on_wrap {
                files::drop_cache(self.fds[file as usize]);
            }
        }
        let room = g.room(offset);
        let mut len = self.block_len(dir);
        if len > room {
            // As fio: draw again until the I/O fits before the end.
            len = (0..16).map(|_| self.block_len(dir)).find(|&l| l <= room).unwrap_or_else(|| spec.bs[dir].min());
        }
        (offset, g.commit(offset, len))
    }

    #[inline]
    fn block_len(&mut self, dir: usize) -> u64 {
        match &self.spec.bs[dir.min(WRITE)] {
            BlockSize::Fixed(b) => *b,
            BlockSize::Range { min, max } => min + self.rng.below((max - min) / min + 1) * min,
            BlockSize::Split(v) => {
                let mut p = self.rng.below(100) as u32;
                for &(b, pct) in v {
                    if p < pct {
                        return b;
                    }
                    p -= pct;
                }
                v.last().map(|x| x.0).unwrap_or(4096)
            }
        }
    }
}
