//! The measured window: where the ramp ends, the latency-target search's
//! steps and final restart, and the steady-state halt.

use super::{Depths, Worker};
use crate::measure::usage::UsageMark;
use crate::runner::jobs::steady::LatStep;
use std::time::Instant;

impl Worker<'_> {
    /// The ramp is over: forget what it recorded.
    pub(super) fn start_window(&mut self) {
        self.ramp_over = true;
        self.seat.running();
        self.ticker.forget_current();
        if let Some(m) = self.ramp_mark.take() {
            self.ramp_cpu = Some(m.until(&UsageMark::thread_now()));
        }
        for s in self.stats.iter_mut() {
            s.reset();
        }
        if let Some(p) = self.cmdprio.as_mut() {
            p.reset();
        }
        if let Some(l) = self.lat.as_mut() {
            l.restart(Instant::now());
        }
    }

    /// The steady-state criterion was met (by this clone, or by its group).
    #[inline]
    pub(super) fn halted(&self) -> bool {
        self.ticker.steady.as_ref().is_some_and(|s| s.halted())
    }

    /// Drain every I/O in flight (fio's quiesce).
    pub(super) fn quiesce(&mut self) {
        while self.inflight > 0 {
            self.reap(self.inflight);
        }
    }

    /// A latency window has passed (or, at latency_percentile=100, an I/O
    /// missed the target): apply fio's verdict. Returns the new depth limit.
    #[cold]
    pub(super) fn latency_step(&mut self, depth: usize) -> usize {
        let Some(l) = self.lat.as_mut() else { return depth };
        let step = l.verdict();
        match step {
            LatStep::Next => l.new_cycle(Instant::now()),
            // fio keeps counting into the failed window; it is judged again
            // at the next I/O.
            LatStep::Stuck => {}
            LatStep::Done => self.ended = true,
            LatStep::Fatal => {
                let msg = format!(
                    "latency_target: an I/O took {} ns, over the {} ns target at queue depth 1 with latency_percentile=100 (fio fails the job: max latency exceeded)",
                    l.worst_ns,
                    l.target_ns()
                );
                self.set_error(msg);
            }
            LatStep::Lower | LatStep::FinalRun => {
                self.quiesce();
                let now = Instant::now();
                if step == LatStep::FinalRun {
                    self.restart_measure(now);
                }
                if let Some(l) = self.lat.as_mut() {
                    l.new_cycle(now);
                }
            }
        }
        self.depth_limit(depth)
    }

    /// I/Os in flight at most: the iodepth, or the latency search's depth.
    #[inline]
    pub(super) fn depth_limit(&self, depth: usize) -> usize {
        self.lat.as_ref().map_or(depth, |l| l.qd.min(depth))
    }

    /// The latency search has settled: what it measured on the way is
    /// forgotten, as fio resets its statistics for the final window.
    fn restart_measure(&mut self, now: Instant) {
        for s in self.stats.iter_mut() {
            s.reset();
        }
        self.depths = Depths::default();
        self.ticker.restart(now);
        self.window_start = now;
        if let Some(m) = self.search_mark.take() {
            self.ramp_cpu = Some(m.until(&UsageMark::thread_now()));
        }
    }
}
