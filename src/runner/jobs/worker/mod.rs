//! One worker thread: issues a job's I/O through its engine and times it.
//!
//! The loop is the measurement path. Per I/O it reads the clock twice
//! (issue, completion), records into thread-local histograms and counters,
//! and makes the engine's own call(s); no allocation, lock or formatting
//! (the optional I/O log is the user's explicit exception; the bw/lat/iops
//! logs copy a sample into a preallocated chunk, see `logs`).
//!
//! `run` is the thread's life: `setup` (files, engine, buffers), the I/O in
//! `io_loop` (or verification's rounds in `readback`), `wrapup`. A `Worker`
//! holds its state; `submit` is the issue and completion path, `pacing` the
//! rate and flow control, `window` the ramp and latency-target search,
//! `ticker` the per-second series and `depths` the queue-depth counts.

mod depths;
mod io_loop;
mod pacing;
mod readback;
mod setup;
mod submit;
mod ticker;
mod window;
mod wrapup;

pub use depths::Depths;

use super::cmdprio::Picker;
use super::files::PreparedFile;
use super::logs::Recorder;
use super::roster::Seat;
use super::steady::{LatSearch, LeaveGuard, Steady};
use super::verify::{Verifier, VerifyStats};
use crate::ioengine::{self, Completion, IoEngine};
use crate::measure::usage::{CpuUsage, UsageMark};
use crate::model::job::JobSpec;
use crate::result::{OpStats, Timeline};
use crate::runner::buffers::{Buffers, Dedupe};
use crate::runner::events::Events;
use crate::runner::rng::Rng;
use setup::RunningGuard;
use std::fs::File;
use std::io::BufWriter;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Instant;
use submit::Slot;
use ticker::Ticker;

/// Operation types a fio-style job reports, in result order; the first
/// three are fio's directions, indexed by `READ`, `WRITE`, `TRIM`.
pub const OP_NAMES: [&str; 4] = ["read", "write", "trim", "sync"];
const SYNC: usize = 3;
const KINDS: usize = OP_NAMES.len();

/// A counter the progress display reads; one cache line per worker, written
/// with plain stores so workers never contend.
#[repr(align(64))]
#[derive(Default)]
pub struct ProgressCell {
    pub bytes: AtomicU64,
    pub done: AtomicBool,
}

pub struct WorkerInput {
    pub spec: Arc<JobSpec>,
    pub clone: u32,
    /// This thread's number among all threads of the invocation, from 1
    /// (fio's, which names its log files).
    pub thread_number: u32,
    pub files: Vec<PreparedFile>,
    /// Set by Ctrl-C: what the job did is reported as partial.
    pub stop: Arc<AtomicBool>,
    /// This worker's stop: set by a job's exitall (fio's terminate, which
    /// is no failure) and by Ctrl-C, forwarded by the group's follower. The
    /// only flag the I/O loop reads.
    pub halt: Arc<AtomicBool>,
    /// Its place among the workers running with it, which exitall reaches.
    pub seat: Seat,
    /// exitall with exit_what=all: the groups after this one do not run.
    pub end_run: Arc<AtomicBool>,
    pub progress: Arc<ProgressCell>,
    /// Clones of the job this one waits for (`wait_for`) still running.
    pub wait: Option<Arc<AtomicU64>>,
    /// This job's own count of clones still running, for its waiters.
    pub running: Arc<AtomicU64>,
    /// The job's flow (fio `flow`): I/Os issued by all its jobs, and their weights.
    pub flow: Option<Arc<Flow>>,
    /// Verification failures are told here as they happen.
    pub events: Arc<dyn Events>,
    /// The steady-state judgement this clone takes part in (fio `ss_dur`).
    pub steady: Option<Arc<Steady>>,
    /// This thread's index and the count of threads sharing a global dedupe
    /// working set (fio `dedupe_global`); (0, 0) outside one.
    pub dedupe_rank: (u32, u32),
}

#[derive(Default)]
pub struct WorkerOutput {
    pub ops: Vec<OpStats>,
    pub timeline: Timeline,
    pub elapsed_ns: u64,
    pub partial: bool,
    pub error: Option<String>,
    /// This thread's CPU during its ramp, which the group's CPU leaves out
    /// (CPU per op is over the measured ops only).
    pub ramp_cpu: Option<CpuUsage>,
    pub depths: Depths,
    pub verify: Option<VerifyStats>,
    /// Handed back so the group reads the verdict once every clone has ended.
    pub steady: Option<Arc<Steady>>,
    /// The depth the latency-target search ended at.
    pub latency_depth: Option<u32>,
    /// With cmdprio: measured reads and writes per priority.
    pub cmdprio: Option<crate::result::cmdprio::CmdPrioStats>,
}

/// A worker's state through its run; each concern's methods are in the
/// file named for it.
struct Worker<'a> {
    spec: &'a JobSpec,
    engine: Box<dyn IoEngine>,
    rng: Rng,
    slots: Vec<Slot>,
    free: Vec<u32>,
    batch: Vec<u32>,
    completions: Vec<Completion>,
    bufs: Buffers,
    stats: [OpStats; KINDS],
    ticker: Ticker,
    window_start: Instant,
    /// The ramp has ended (or there is none). Completions are recorded from
    /// the start and reset when the ramp ends.
    ramp_over: bool,
    /// Taken when the ramp starts; turned into `ramp_cpu` when it ends.
    ramp_mark: Option<UsageMark>,
    ramp_cpu: Option<CpuUsage>,
    with_submit: bool,
    /// fsync/fdatasync apply (the engine has descriptors).
    syncs: bool,
    /// The engine moves no bytes (cpuio, exec): only the run time ends the job.
    no_data: bool,
    flow: Option<Arc<Flow>>,
    /// I/Os this clone issued, against its flow's total.
    flow_own: u64,
    /// The engine's peer finished (`IoEngine::finished`): the job is over.
    ended: bool,
    inflight: usize,
    error: Option<String>,
    paths: Vec<String>,
    fds: Vec<i32>,
    iolog: Option<BufWriter<File>>,
    logs: Option<Recorder>,
    /// cmdprio's choice per I/O; `None` without cmdprio.
    cmdprio: Option<Picker>,
    /// The thread's priority, which the I/Os cmdprio leaves are logged with.
    default_prio: u16,
    depths: Depths,
    /// A read returned 0 bytes (end of a character device): the job ends, as in fio.
    eof: bool,
    /// fill_device: ENOSPC ends the job instead of failing it.
    enospc_ends: bool,
    verifier: Option<Verifier>,
    /// Seeds of refilled content when some writes copy earlier ones.
    dedupe: Option<Dedupe>,
    /// Scrambled writes carry their issue time since this instant.
    epoch: Instant,
    /// verify_only: the write workload runs without I/O, only recording
    /// what it would have written.
    dry_run: bool,
    writes_issued: u64,
    /// Bytes issued by earlier rounds and read-backs (fio's io_bytes sum).
    progress_base: u64,
    /// Measured time of the write rounds and of the read-backs, per direction.
    phase_ns: [u64; 2],
    events: Arc<dyn Events>,
    seat: &'a Seat,
    failures: Vec<String>,
    /// ratemin/rate_iops_min: when the rates are looked at next (None: no
    /// minimum), and per direction the last look's time, bytes and I/Os.
    rate_check_at: Option<Instant>,
    rate_marks: [Option<(Instant, u64, u64)>; 2],
    /// fio's latency-target depth search, when the job sets latency_target.
    lat: Option<LatSearch>,
    /// Taken at the start for a latency search: its final run leaves the
    /// search's CPU out, as the ramp's is.
    search_mark: Option<UsageMark>,
}

/// The jobs of one `flow_id` in a group: their I/Os so far and the sum of
/// their weights (each clone counts), so each keeps its share.
#[derive(Debug, Default)]
pub struct Flow {
    pub ios: AtomicU64,
    /// A clone takes its weight out when it ends, so the others never wait
    /// for a job that is gone (as fio does).
    pub weight: AtomicU64,
}

/// The worker thread: set up, do the job's I/O, report it.
pub fn run(input: WorkerInput) -> WorkerOutput {
    let spec = input.spec.clone();
    let fail = |e: String| WorkerOutput { error: Some(e), ..WorkerOutput::default() };
    let (Some(info), Some(imp)) = (crate::model::engine::find(&spec.ioengine), ioengine::find(&spec.ioengine)) else {
        return fail(format!("unknown ioengine '{}'", spec.ioengine));
    };
    // A table of its own before the worker opens its files: with the
    // process's table shared, every pread/pwrite takes and drops a file
    // reference (see `host::private_fd_table`); fio's jobs are processes
    // and never pay that. Sockets stay (a network job's may come from outside).
    crate::host::private_fd_table(true);
    let _running = RunningGuard(input.running.clone());
    let _leave = LeaveGuard(input.steady.clone());
    if let Err(e) = setup::place_thread(&spec, input.clone) {
        return fail(e);
    }
    setup::wait_for(&input);
    let (mut w, open) = match Worker::start(&spec, &input, info, imp) {
        Ok(started) => started,
        Err(e) => return fail(e),
    };
    let halted = w.work(&input);
    w.wrap_up(&input, halted, open)
}

/// Verification reads back what the job writes, in rounds of writes and checks.
fn reads_back(spec: &JobSpec) -> bool {
    spec.verify.enabled() && spec.rw.writes() && (spec.verify.do_verify || spec.verify.only)
}

impl Worker<'_> {
    /// The job's I/O: its loops, or verification's rounds. Returns true when
    /// stopped by the user or another job's exitall.
    fn work(&mut self, input: &WorkerInput) -> bool {
        let spec = self.spec;
        let depth = self.slots.len();
        let region_total: u64 = input.files.iter().map(|f| f.region.end - f.region.start).sum();
        // With filesize, size only sets how much I/O a loop does, and no
        // more than the files hold (fio: filesize=2m nrfiles=3 size=8m reads 6m).
        let sized = if spec.misc.filesize.is_some() { spec.size.map(|s| s.min(region_total)) } else { None };
        let io_limit = spec.io_size.or(sized).unwrap_or(region_total);
        if reads_back(spec) {
            self.rounds(input, depth, region_total, io_limit)
        } else {
            self.main_loop(&input.files, &input.halt, &input.progress, depth, io_limit.saturating_mul(spec.loops as u64))
        }
    }

    fn set_error(&mut self, msg: String) {
        if self.error.is_none() {
            self.error = Some(msg);
        }
    }
}
