//! Executes one `BonniePlan` with Bonnie++ 2.00a's tests, in its order:
//! the IO tests on `Bonnie.<pid>` in the scratch directory (`io`), then the
//! file tests in the directory `Bonnie.<pid>` (`files`). Each test is a
//! phase timed as Bonnie++ times it (from its first operation to the end of
//! its closing fsync, close or sync) with the process's CPU over it, and
//! every operation's latency in the test's histogram (Bonnie++ keeps only
//! the slowest).
//!
//! The tests run on a thread of their own with its own descriptor table
//! (so reads and writes keep the kernel's unshared fast path, as in
//! Bonnie++'s single process) and with the file-system uid and gid `-u`/`-g`
//! name (setfsuid/setfsgid: the files are created as that user and
//! permissions are checked as that user, while fsbench keeps root for its
//! own cleanup).
//!
//! Differences from Bonnie++ 2.00a, none in what the kernel is asked to do
//! per operation: random numbers come from fsbench's generator seeded with
//! `-z` (or a `-Z` file's numbers), not glibc's rand(), so one seed gives
//! another (equally distributed) sequence; the seekers (threads sharing one
//! descriptor table and reading 4-byte tickets from one pipe, as 2.00a's
//! do) get their tickets as soon as every one has opened the file, not
//! after Bonnie++'s 3-second pause.
//!
//! Only what the run created is removed, on success, on error and when
//! stopped (the stop flag is read once per chunk and per file, and every
//! 100 ms while `-y s` waits for the other copies). The IO file and the
//! file tests' directory are on record with their identity
//! (`environment::cleanup`) from the moment they exist: a second signal
//! removes them at once, and after a SIGKILL `fsbench cleanup` does.

mod files;
mod io;
#[cfg(test)]
mod tests;

use crate::environment::space::Need;
use crate::measure::usage::UsageMark;
use crate::model::bonnie::FileKind;
use crate::model::bonnie::{BonniePlan, Seed, SemaphoreSet, SyncMode, Test};
use crate::result::bonnie::{BonnieDetails, PhaseFigure};
use crate::result::warning::{Code, Warning};
use crate::result::{GroupResult, Headline, JobResult, OpClass, OpStats, RunResult};
use crate::runner::events::{Events, Expected, Meter, Warnings};
use crate::runner::lifecycle::{self, Finished, OneGroup};
use crate::runner::rng::Rng;
use crate::runner::{RunError, RunOptions};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Random numbers as Bonnie++ draws them: 31-bit values, from the seed or
/// from a `-Z` file's big-endian 32-bit numbers, in a loop.
pub(crate) enum Rand {
    Gen(Rng),
    File { values: Vec<u32>, next: usize },
}

impl Rand {
    fn new(seed: &Seed) -> Result<Rand, String> {
        match seed {
            Seed::Number(n) => Ok(Rand::Gen(Rng::new(*n as u64))),
            Seed::File(p) => {
                let bytes = std::fs::read(p).map_err(|e| format!("-Z {}: {e}", p.display()))?;
                let values: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]])).collect();
                if values.is_empty() {
                    return Err(format!("-Z {}: no random numbers in it (expected 4-byte numbers in network byte order)", p.display()));
                }
                Ok(Rand::File { values, next: 0 })
            }
        }
    }

    /// A number in 0..2^31, like rand().
    pub(crate) fn next(&mut self) -> u32 {
        match self {
            Rand::Gen(r) => (r.next_u64() >> 33) as u32,
            Rand::File { values, next } => {
                let v = values[*next % values.len()];
                *next += 1;
                v & 0x7fff_ffff
            }
        }
    }

    /// A number below n (n > 0).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() as u64 % n.max(1)
    }
}

/// One test as it ran: Bonnie++'s figure and the operations' statistics.
pub(crate) struct Phase {
    pub figure: PhaseFigure,
    pub ops: OpStats,
}

/// Times one test: the wall clock and the process's CPU from `start` to
/// `finish`, every operation's latency in between.
pub(crate) struct Timer {
    test: Test,
    t0: Instant,
    u0: UsageMark,
    pub ops: OpStats,
}

impl Timer {
    pub(crate) fn start(test: Test) -> Timer {
        let class = match test {
            Test::Putc | Test::PutBlock | Test::Rewrite => OpClass::DataWrite,
            Test::Getc | Test::GetBlock | Test::Seeks => OpClass::DataRead,
            _ => OpClass::Metadata,
        };
        Timer { test, t0: Instant::now(), u0: UsageMark::now(), ops: OpStats::new(test.name(), class, false) }
    }

    /// One operation that began at `began`, moving `bytes`.
    #[inline]
    pub(crate) fn op(&mut self, began: Instant, bytes: u64) {
        let ns = began.elapsed().as_nanos() as u64;
        self.ops.lat.record(ns);
        self.ops.ops += 1;
        self.ops.bytes += bytes;
    }

    /// The phase ended now; `amount` is what its rate counts (KiB, seeks,
    /// files).
    pub(crate) fn finish(mut self, amount: u64) -> Phase {
        let elapsed_ns = self.t0.elapsed().as_nanos() as u64;
        let cpu = self.u0.until(&UsageMark::now());
        self.ops.active_ns = Some(elapsed_ns);
        Phase {
            figure: PhaseFigure {
                test: self.test,
                elapsed_ns,
                amount,
                cpu_s: cpu.user_s + cpu.system_s,
                max_latency_ns: self.ops.lat.max(),
            },
            ops: self.ops,
        }
    }
}

/// Bonnie++'s `-p`: make the semaphore set for N copies or remove it; what
/// Bonnie++ prints then.
pub fn semaphores(set: SemaphoreSet) -> Result<String, String> {
    match set {
        SemaphoreSet::Make { copies } => {
            crate::host::semaphore::create(copies)?;
            Ok(format!("Creating semaphore for {copies} procs.\n"))
        }
        SemaphoreSet::Remove => {
            crate::host::semaphore::remove()?;
            Ok("Semaphore removed.\n".into())
        }
    }
}

/// What the run does before each test: line up with other copies, or wait
/// for the user.
pub(crate) struct Gate<'a> {
    mode: Option<SyncMode>,
    semaphores: Option<i32>,
    /// Ctrl-C or SIGTERM ends a wait for the other copies; the test that
    /// follows sees the flag and stops at once.
    stop: &'a AtomicBool,
    /// Who asks the user for `-y p`.
    events: &'a dyn Events,
}

impl<'a> Gate<'a> {
    fn new(mode: Option<SyncMode>, stop: &'a AtomicBool, events: &'a dyn Events) -> Result<Gate<'a>, String> {
        let semaphores = match mode {
            Some(SyncMode::Semaphore) => Some(crate::host::semaphore::open().map_err(|e| format!("-y s: {e}"))?),
            _ => None,
        };
        Ok(Gate { mode, semaphores, stop, events })
    }

    pub(crate) fn before(&self, test: Test) -> Result<(), String> {
        match (self.mode, self.semaphores) {
            (Some(SyncMode::Semaphore), Some(id)) => {
                crate::host::semaphore::arrive_and_wait(id, test.index() as u16, self.stop).map(|_| ())
            }
            (Some(SyncMode::Prompt), _) => self
                .events
                .wait_for_user(&format!("fsbench bonnie: press Enter to start {} ...", test.name()))
                .map_err(|e| format!("-y p: {e}")),
            _ => Ok(()),
        }
    }
}

/// What the tests produced, or why they stopped.
pub(crate) struct Outcome {
    pub phases: Vec<Phase>,
    pub partial: bool,
    pub error: Option<String>,
}

/// Everything a test needs besides its plan.
pub(crate) struct Ctx<'a> {
    pub plan: &'a BonniePlan,
    pub stop: &'a AtomicBool,
    pub gate: Gate<'a>,
    pub rand: Rand,
    pub meter: &'a Meter,
    /// `Bonnie.<pid>`: the IO file's name and the file tests' directory.
    pub base: PathBuf,
}

impl Ctx<'_> {
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// `Bonnie.<pid>` in the scratch directory: the IO file, then the file
/// tests' directory.
fn base_name(plan: &BonniePlan) -> PathBuf {
    plan.dir.join(format!("Bonnie.{}", std::process::id()))
}

/// Run every test of the plan on this thread (as the plan's user).
fn run_tests(plan: &BonniePlan, stop: &AtomicBool, meter: &Meter, events: &dyn Events) -> Outcome {
    crate::host::private_fd_table(false);
    // SAFETY: setfsuid/setfsgid change only this thread's file-system ids;
    // the group first, while the thread may still change it.
    let ids = unsafe {
        libc::setfsgid(plan.gid);
        libc::setfsuid(plan.uid);
        // Each call answers the ids in force before it: asking again (with
        // an id that cannot be set) tells whether the change took.
        (libc::setfsuid(u32::MAX) as u32, libc::setfsgid(u32::MAX) as u32)
    };
    let mut out = Outcome { phases: Vec::new(), partial: false, error: None };
    if ids != (plan.uid, plan.gid) {
        out.error = Some(format!("-u/-g: cannot run the tests as uid {} gid {} (that needs root)", plan.uid, plan.gid));
        return out;
    }
    let mut ctx = match (Gate::new(plan.sync, stop, events), Rand::new(&plan.seed)) {
        (Ok(gate), Ok(rand)) => Ctx { plan, stop, gate, rand, meter, base: base_name(plan) },
        (Err(e), _) | (_, Err(e)) => {
            out.error = Some(e);
            return out;
        }
    };
    if plan.size_mib > 0 {
        if let Err(e) = io::run(&mut ctx, &mut out.phases) {
            out.error = Some(e);
        }
    }
    if out.error.is_none() && !ctx.stopped() {
        if let Some(t) = &plan.files {
            if let Err(e) = files::run(&mut ctx, t, &mut out.phases) {
                out.error = Some(e);
            }
        }
    }
    out.partial = ctx.stopped();
    out
}

/// The headline: every test Bonnie++ prints, as its rate (KiB/s for the IO
/// tests, seeks/s, files/s), in Bonnie++'s column order.
fn headline(phases: &[PhaseFigure]) -> Vec<Headline> {
    Test::ALL
        .iter()
        .filter_map(|&t| phases.iter().find(|p| p.test == t))
        .map(|p| Headline::new(p.test.headline_name(), p.test.rate_unit(), p.rate()))
        .collect()
}

/// What the run takes on the file system at most: the IO test's file, or
/// the file tests' files (the IO file is gone by then), with their inodes:
/// a file each (hard links share the one they point to), a directory each
/// beyond the first, and `Bonnie.<pid>` itself.
fn space_needs(plan: &BonniePlan) -> Vec<Need> {
    let io = if plan.size_mib > 0 { (plan.size_bytes(), 1) } else { (0, 0) };
    let files = plan.files.as_ref().map_or((0, 0), |t| {
        let mean = (t.min_size as u128 + t.max_size as u128) / 2;
        let bytes = u64::try_from(t.count() as u128 * mean).unwrap_or(u64::MAX);
        let entries = if t.kind == FileKind::HardLinks { 1 } else { t.count() };
        let dirs = if t.dirs > 1 { t.dirs } else { 0 };
        (bytes, entries + dirs + 1)
    });
    vec![Need::new_in(&plan.dir, io.0.max(files.0)).with_inodes(io.1.max(files.1))]
}

/// Bytes the tests move, for the progress display: three passes over the
/// file, two of the per-character part.
fn expected_bytes(plan: &BonniePlan) -> u64 {
    let chars = plan.char_mib.unwrap_or(0).min(plan.size_mib) << 20;
    plan.size_bytes().saturating_mul(3).saturating_add(chars * 2)
}

/// Run the plan through the one-group lifecycle: inside a measured window
/// with its CPU, process I/O and device counters, and the result in the
/// common envelope (Bonnie++'s figures in `details`). Once the directory is
/// known to be one, every failure (too little space or too few inodes,
/// found before anything is made; a thread that cannot start; an error in
/// a test) is the run's: recorded failed, with what ran.
pub(crate) fn run_plan(
    plan: &BonniePlan,
    opts: &RunOptions,
    layout: &str,
    before_measure: &mut dyn FnMut(&[PathBuf]),
) -> Result<RunResult, RunError> {
    lifecycle::drive(Bonnie { plan }, opts, layout, before_measure)
}

/// A Bonnie++ run's stages. Its tests make and remove their files inside
/// the measured run (the cache scenario gets no file), on a thread of
/// their own.
struct Bonnie<'a> {
    plan: &'a BonniePlan,
}

impl OneGroup for Bonnie<'_> {
    type Ran = Outcome;

    fn label(&self) -> String {
        "bonnie".into()
    }

    fn places(&self) -> Vec<PathBuf> {
        vec![self.plan.dir.clone()]
    }

    fn expected(&self) -> Expected {
        Expected { bytes: expected_bytes(self.plan), ..Default::default() }
    }

    fn check(&mut self, _opts: &RunOptions) -> Result<(), RunError> {
        let plan = self.plan;
        let meta = std::fs::metadata(&plan.dir).map_err(|e| format!("-d {}: {e}", plan.dir.display()))?;
        if !meta.is_dir() {
            return Err(format!("-d {}: not a directory", plan.dir.display()).into());
        }
        // Bonnie++ would unlink it; fsbench removes only what it created.
        let base = base_name(plan);
        if std::fs::symlink_metadata(&base).is_ok() {
            return Err(format!(
                "-d {}: {} already exists and was not created by this run (fsbench removes only what it creates: remove it or use another -d)",
                plan.dir.display(),
                crate::environment::identity::absolute(&base).display()
            )
            .into());
        }
        Ok(())
    }

    fn refused(&mut self, opts: &RunOptions) -> Option<Outcome> {
        let e = crate::environment::space::check(&space_needs(self.plan), opts.allow_fill, "reduce -s or -n").err()?;
        Some(Outcome { phases: Vec::new(), partial: false, error: Some(e) })
    }

    fn set_up(&mut self, _opts: &RunOptions, warnings: &mut Warnings) -> Result<(), RunError> {
        if let Some(w) = cache_warning(self.plan) {
            warnings.warn(Warning::new(Code::WorkingSetFitsInRam, w));
        }
        Ok(())
    }

    fn run(&mut self, opts: &RunOptions, meter: &Arc<Meter>, _warnings: &mut Warnings) -> Result<Outcome, RunError> {
        let (stop, p2, meter, events) = (opts.stop.clone(), self.plan.clone(), meter.clone(), opts.events.clone());
        let outcome = std::thread::Builder::new()
            .name("fsb-bonnie".into())
            .spawn(move || {
                crate::runner::workers::note_this_thread();
                run_tests(&p2, &stop, &meter, &*events)
            })
            .map_err(|e| format!("cannot start the Bonnie++ thread: {e}"))
            .and_then(|h| h.join().map_err(|_| "the Bonnie++ thread panicked".to_string()));
        Ok(outcome.unwrap_or_else(|e| Outcome { phases: Vec::new(), partial: false, error: Some(e) }))
    }

    fn finish(self, outcome: Outcome, group: &mut GroupResult, _: &RunOptions, _: &mut Warnings) -> Result<Finished, RunError> {
        let job = result(self.plan, outcome, group.elapsed_ns)?;
        let partial = job.partial;
        Ok(Finished { jobs: vec![job], partial })
    }
}

/// The IO tests are buffered: a file that fits in RAM is read back from the
/// page cache right after it is written, whatever was done before the run
/// (`--cache` included). Bonnie++'s own answer is its size rule.
fn cache_warning(plan: &BonniePlan) -> Option<String> {
    if plan.size_mib == 0 {
        return None;
    }
    crate::environment::cache::memory_speed_warning(
        "Bonnie++'s file holds",
        plan.size_bytes(),
        "and its read tests (getc, block read, seeks) read it right after its write tests wrote it, from the page cache, whatever a --cache scenario did before the run",
        "-s of at least twice the RAM, Bonnie++'s own rule (its default; -r lowers the RAM it checks against). \
         -D does not help: 2.00a opens only the writes' file with O_DIRECT and reopens it without to read; nor does -b, which adds fsyncs to the seeks' updates and the file tests only",
    )
}

/// The run's one job with every test that ran, failed when `outcome` has
/// an error.
fn result(plan: &BonniePlan, outcome: Outcome, elapsed_ns: u64) -> Result<JobResult, RunError> {
    let figures: Vec<PhaseFigure> = outcome.phases.iter().map(|p| p.figure.clone()).collect();
    let details = BonnieDetails {
        seed_text: match &plan.seed {
            Seed::Number(n) => n.to_string(),
            Seed::File(p) => p.display().to_string(),
        },
        settings: plan.clone(),
        phases: figures.clone(),
    };
    Ok(JobResult {
        name: "bonnie".into(),
        group: 0,
        threads: 1,
        engine: "sync".into(),
        elapsed_ns,
        ops: outcome.phases.into_iter().map(|p| p.ops).collect(),
        timeline: Default::default(),
        options: Default::default(),
        resolved: serde_json::to_value(plan).unwrap_or_default(),
        partial: outcome.partial,
        error: outcome.error,
        headline: headline(&figures),
        details: Some(serde_json::to_value(&details).map_err(|e| e.to_string())?),
    })
}
