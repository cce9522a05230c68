//! The end of a worker's run: the final fsync, its logs closed, its counts
//! settled into the `WorkerOutput`, and exitall passed on.

use super::{reads_back, Worker, WorkerInput, WorkerOutput, KINDS};
use crate::ioengine::IoOp;
use crate::model::job::{READ, WRITE};
use crate::model::job_misc::ExitWhat;
use crate::runner::jobs::cmdprio::Picker;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl Worker<'_> {
    /// Close the run that ended (`halted`: stopped) and report it. The job's
    /// files close here, once its logs are written.
    pub(super) fn wrap_up(mut self, input: &WorkerInput, halted: bool, open: Vec<Option<File>>) -> WorkerOutput {
        let spec = self.spec;
        // Stopped by another job's exitall, the job ends as fio's do: synced,
        // complete, not partial.
        let partial = halted && input.stop.load(Ordering::Relaxed);
        if let Some(f) = &self.flow {
            f.weight.fetch_sub(u64::from(spec.misc.flow), Ordering::Relaxed);
        }
        if self.error.is_none() && spec.end_fsync && self.syncs && !partial {
            for file in 0..self.fds.len() as u32 {
                self.sync_now(file, IoOp::Fsync);
            }
        }
        let end = Instant::now();
        input.progress.done.store(true, Ordering::Relaxed);
        if let Some(log) = self.iolog.as_mut() {
            for p in &self.paths {
                let _ = writeln!(log, "{p} close");
            }
            let _ = log.flush();
        }
        // A job that ended inside its ramp reports all it did, as fio does
        // (its statistics are only reset when the ramp ends).
        let from = if self.ramp_over { self.window_start } else { self.epoch };
        let elapsed_ns = end.saturating_duration_since(from).as_nanos() as u64;
        if let Some(l) = self.logs.take() {
            if let Err(e) = l.finish(elapsed_ns) {
                self.set_error(e);
            }
        }
        if reads_back(spec) {
            for d in [READ, WRITE] {
                self.stats[d].active_ns = Some(self.phase_ns[d]);
            }
        }
        drop(open);
        let used = [spec.rw.reads() || reads_back(spec), spec.rw.writes(), spec.rw.trims(), self.syncs];
        self.report(input, used, end, elapsed_ns, partial)
    }

    /// The worker's counts as its output; an error or a verify failure
    /// passes exitall on.
    fn report(self, input: &WorkerInput, used: [bool; KINDS], end: Instant, elapsed_ns: u64, partial: bool) -> WorkerOutput {
        let spec = self.spec;
        let latency_depth = self.lat.as_ref().map(|l| l.qd as u32);
        let cmdprio = self.cmdprio.as_ref().map(Picker::stats);
        let Worker { mut stats, mut ticker, mut error, ramp_cpu, depths, verifier, no_data, .. } = self;
        if no_data {
            // The engine's operations carry a block size but no bytes (fio
            // reports them the same way).
            for s in stats.iter_mut() {
                s.bytes = 0;
            }
            ticker.forget_bytes();
        }
        let verify = verifier.map(|v| {
            if error.is_none() && v.stats.mismatches > 0 {
                error = v.first_failure.clone();
            }
            v.stats
        });
        if spec.misc.exitall || (spec.misc.exitall_on_error && error.is_some()) {
            input.seat.exit(spec.misc.exit_what);
            if spec.misc.exit_what == ExitWhat::All {
                input.end_run.store(true, Ordering::Relaxed);
            }
        }
        let ops = stats.into_iter().zip(used).filter(|(_, u)| *u).map(|(s, _)| s).collect();
        WorkerOutput {
            ops,
            timeline: ticker.into_timeline(used, end),
            elapsed_ns,
            partial,
            error,
            ramp_cpu,
            depths,
            verify,
            steady: input.steady.clone(),
            latency_depth,
            cmdprio,
        }
    }
}
