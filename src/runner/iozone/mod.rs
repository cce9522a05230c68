//! Executes one `IozonePlan`: every cell (file size, record size) × every
//! test in the plan's order, each test's passes with IOzone's access
//! patterns (`pass`), or, in throughput mode, every child count × the tests
//! in IOzone's throughput order, all children at once (`throughput`).
//!
//! Written from IOzone's documented behaviour (see the reference notes),
//! not from its code. Where fsbench differs, the module that does it says so.
//!
//! Files: the run refuses a test file that exists before it starts (IOzone
//! would unlink it; fsbench never deletes what it did not create). Each file
//! it creates is registered with `environment::cleanup` (its absolute path
//! first, its identity by the pass that creates it) and removed at the
//! end, on error and on Ctrl-C, unless `-w` (or `--keep-files`) keeps it.
//! `-U` records the mount it takes down before unmounting it, so a run
//! killed before the mount is back leaves a record that puts it back.
//!
//! Result: one `JobResult` per cell (`<file kB>k/<rec kB>k`), or per child
//! count in throughput mode (`<n>children`), one `OpStats` per column; the
//! first job's `details` holds the whole run's `IozoneDetails`.

mod mt;
mod pass;
mod throughput;

#[cfg(test)]
mod tests;

use crate::environment::cleanup::{self, Action, Token};
use crate::environment::identity::Remount;
use crate::environment::lock::{lock_path, Lock, LockError};
use crate::environment::space::Need;
use crate::model::iozone::{Column, IozonePlan, Test};
use crate::result::iozone::{CellFigure, IozoneDetails};
use crate::result::warning::{Code, Warning};
use crate::result::{GroupResult, Headline, JobResult, OpClass, OpStats, RunResult};
use crate::runner::buffers::Buffers;
use crate::runner::events::{Events, Expected, Meter, Warnings};
use crate::runner::lifecycle::{self, Finished, OneGroup};
use crate::runner::{RunError, RunOptions};
use pass::{NoRecord, PassCtx, PassOut, Recorder};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The layout `run_plan`'s results take when no frontend chose one.
pub const LAYOUT: &str = "iozone";

/// Largest record fsbench allocates a buffer for (IOzone's own limit is
/// 16 MiB; this only keeps a mistyped size from exhausting memory).
const MAX_REC_BYTES: u64 = 1 << 30;

/// The files the run created, removed at the end unless kept.
#[derive(Default)]
pub(crate) struct Created {
    files: Vec<(PathBuf, Token)>,
}

impl Created {
    /// Note `path` as the run's own (once), before the pass that creates it
    /// and records its identity (`PassCtx::owner`).
    pub(crate) fn claim(&mut self, path: &Path) {
        if !self.files.iter().any(|(p, _)| p == path) {
            self.files.push((path.to_path_buf(), cleanup::file_to_create(path)));
        }
    }

    /// The undo step of `path`, once claimed.
    pub(crate) fn token(&self, path: &Path) -> Option<&Token> {
        self.files.iter().find(|(p, _)| p == path).map(|(_, t)| t)
    }

    /// Remove them (or keep them, handing them over to the user).
    pub(crate) fn finish(self, keep: bool) -> Result<(), String> {
        let mut first = Ok(());
        for (_, t) in self.files {
            if keep {
                t.forget();
            } else if let Err(e) = t.done() {
                first = first.and(Err(e));
            }
        }
        first
    }
}

/// The context every pass of one cell shares.
pub(crate) struct Cell<'a> {
    pub plan: &'a IozonePlan,
    pub file_bytes: u64,
    pub rec: u64,
    pub stop: &'a AtomicBool,
}

impl Cell<'_> {
    pub(crate) fn ctx<'b>(&'b self, path: &'b Path, order: &'b [u64], wall: Option<&'b AtomicBool>) -> PassCtx<'b> {
        let p = self.plan;
        PassCtx {
            path,
            file_bytes: self.file_bytes,
            rec: self.rec,
            direct: p.direct,
            osync: p.osync,
            fsync_in_timing: p.fsync_in_timing,
            close_in_timing: p.close_in_timing,
            stride: p.stride,
            order,
            stop: self.stop,
            wall,
            mixed_reads: true,
            mixed_sequential: p.throughput.as_ref().is_some_and(|t| t.mixed_sequential),
            throughput: p.throughput.is_some(),
            owner: None,
        }
    }
}

/// Check a cell's sizes; returns (file bytes, record bytes).
pub(crate) fn cell_bytes(file_kb: u64, rec_kb: u64) -> Result<(u64, u64), String> {
    let file = file_kb.checked_mul(1024).ok_or(format!("file size {file_kb} kB is too large"))?;
    let rec = rec_kb.checked_mul(1024).ok_or(format!("record size {rec_kb} kB is too large"))?;
    if rec == 0 || rec > MAX_REC_BYTES {
        return Err(format!("record size {rec_kb} kB: must be 1 kB to {} kB", MAX_REC_BYTES / 1024));
    }
    if file < rec {
        return Err(format!("file size {file_kb} kB is smaller than the record size {rec_kb} kB"));
    }
    Ok((file, rec))
}

/// The record (or vector group) order a pass walks, computed before it
/// (untimed); empty for passes that need none.
pub(crate) fn order_for(col: Column, n: u64, mixed_sequential: bool) -> Vec<u64> {
    match col {
        Column::RandomRead | Column::RandomWrite => mt::permutation(n),
        Column::Mixed if !mixed_sequential => mt::permutation(n),
        Column::Pwritev | Column::RePwritev | Column::Preadv | Column::RePreadv => mt::permutation(n.div_ceil(pass::PVECMAX)),
        _ => Vec::new(),
    }
}

/// The passes a test runs: its columns, without the re- pass under `-+n`
/// (test 2's random write is not a re- pass and always runs).
pub(crate) fn passes(test: Test, no_retest: bool) -> &'static [Column] {
    let cols = test.columns();
    if no_retest && test != Test::Random {
        &cols[..1]
    } else {
        cols
    }
}

/// Whether any of `tests` makes a stdio pass (and so needs a stream buffer).
pub(crate) fn has_stdio(tests: &[Test]) -> bool {
    tests.iter().any(|t| t.columns().iter().any(|&c| pass::is_stdio(c)))
}

/// Buffers for records of up to `rec` bytes, aligned: slot 0 the record,
/// filled with a byte that names the column (so a test can tell which pass
/// wrote what is on disk); slot 1, when `stdio` passes will run, their
/// stream buffer (up to 16 MiB that a run without them need not hold).
/// Both are touched here, once, as IOzone allocates its buffers once:
/// zeroing a fresh stream buffer before each stdio pass evicted the record
/// from the cache and halved the 4 MB-record fwrite and fread figures, and a
/// fresh pair for each cell of an auto run (up to 32 MiB) was zeroed and
/// faulted in again 81 times.
pub(crate) fn buffer_for(col: Column, rec: u64, stdio: bool) -> Buffers {
    let mut b = Buffers::new(if stdio { 2 } else { 1 }, rec as usize);
    b.slot_mut(0).fill(fill_byte(col));
    if stdio {
        b.slot_mut(1).fill(0);
    }
    b
}

pub(crate) fn fill_byte(col: Column) -> u8 {
    0xA5 ^ (col as u8)
}

/// One pass, its CPU and its figure. The CPU is this thread's alone (the
/// progress meter's thread is not the pass's; a throughput child is a
/// thread of its own).
/// The cell's buffer is reused by its passes (allocating and faulting in a
/// record per pass cost more CPU than IOzone spends on a whole auto run);
/// a writing pass stamps its column's byte first.
pub(crate) fn timed_pass<R: Recorder>(ctx: &PassCtx, col: Column, buf: &mut Buffers, rec: &mut R) -> Result<PassOut, String> {
    if col.writes() {
        let rec = (ctx.rec as usize).min(buf.len);
        buf.slot_mut(0)[..rec].fill(fill_byte(col));
    }
    pass::run_pass(ctx, col, buf, rec)
}

pub(crate) fn op_stats(col: Column, outs: &mut [PassOut], active_ns: u64) -> OpStats {
    let class = match col {
        // Its children read or write: neither class says it alone.
        Column::Mixed => OpClass::Other,
        c if c.writes() => OpClass::DataWrite,
        _ => OpClass::DataRead,
    };
    // Growable histograms (Default): the passes' are filled after the clock.
    let mut o = OpStats { name: col.name().into(), class, ..Default::default() };
    for p in outs.iter() {
        o.ops += p.ops;
        o.bytes += p.bytes;
    }
    // One pass's histogram is moved, not merged.
    match outs {
        [one] => std::mem::swap(&mut o.lat, &mut one.lat),
        _ => outs.iter().for_each(|p| o.lat.merge(&p.lat)),
    }
    // Auto mode keeps one per cell and column, read only from here on.
    o.lat.pack();
    o.active_ns = Some(active_ns);
    o
}

/// `-U`: unmount the mount point and mount it again, as it was (source,
/// type, options from mountinfo). Needs root; a path that is not a mount
/// point is an error. The mount is on record (`Action::Remount`) from
/// before the unmount until it is back: a run that dies in between leaves
/// a record from which `fsbench cleanup` mounts it again, and Ctrl-C or an
/// error mounts it again at exit.
fn remount(mnt: &Path) -> Result<(), String> {
    let m = mount_entry(mnt)?;
    // A loop device set up by `mount -o loop` detaches itself when its
    // last user goes (autoclear): holding it open across the unmount keeps
    // it there to mount again. (Harmless for any other block device.)
    let _hold = m.source.starts_with("/dev/").then(|| std::fs::File::open(&m.source).ok()).flatten();
    let back = cleanup::register(Action::Remount(Remount::of(&m)));
    if let Err(e) = cleanup::unmount(&m.mount_point, false) {
        back.forget();
        return Err(format!("-U {}: {e}", mnt.display()));
    }
    crate::environment::mkfs::mount(Path::new(&m.source), &m.mount_point, &m.fs_type, &m.options()).map_err(|e| {
        format!("-U {}: {e}; it is no longer mounted (fsbench tries again at exit, then `fsbench cleanup` does)", mnt.display())
    })?;
    back.forget();
    Ok(())
}

fn mount_entry(mnt: &Path) -> Result<crate::host::mountinfo::MountEntry, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err(format!("-U {}: remounting needs root", mnt.display()));
    }
    let canon = mnt.canonicalize().map_err(|e| format!("-U {}: {e}", mnt.display()))?;
    let m = crate::host::mountinfo::read_mountinfo()
        .into_iter()
        .rev()
        .find(|m| m.mount_point == canon)
        .ok_or(format!("-U {}: not a mount point", mnt.display()))?;
    // Unmounting a file system that lives in memory throws its files away,
    // and one without a device behind it cannot be checked and put back.
    let is_device = std::fs::metadata(&m.source).is_ok_and(|d| std::os::unix::fs::FileTypeExt::is_block_device(&d.file_type()));
    if !is_device {
        return Err(format!(
            "-U {}: it is a {} mount of '{}', not of a block device; unmounting it would lose what it holds (or could not be put back): expected the mount point of a block device's file system",
            mnt.display(),
            m.fs_type,
            m.source
        ));
    }
    Ok(m)
}

/// What the run measured, before it is put in the envelope.
pub(crate) struct Outcome {
    pub jobs: Vec<JobResult>,
    pub details: IozoneDetails,
    pub partial: bool,
}

/// Single-process mode: every cell, every test, every pass, in order.
/// With `rows`, IOzone's preamble is shown before the first pass and each
/// cell's row once its last pass is done, as IOzone prints them: between
/// passes, never inside a timed one.
pub(crate) fn run_cells<R: Recorder>(
    plan: &IozonePlan,
    stop: &AtomicBool,
    created: &mut Created,
    meter: &Meter,
    rec: &mut R,
    rows: Option<&dyn Events>,
) -> Result<Outcome, String> {
    let mut details = IozoneDetails { settings: plan.clone(), cells: Vec::new(), throughput: Vec::new() };
    if let Some(ev) = rows {
        ev.stream(&crate::report::layout::iozone::head(&details));
    }
    let mut jobs = Vec::new();
    let mut partial = false;
    let mut largest = 0;
    for &(file_kb, rec_kb) in &plan.cells {
        largest = largest.max(cell_bytes(file_kb, rec_kb)?.1);
    }
    let mut buf = buffer_for(Column::Write, largest, has_stdio(&plan.tests));
    'cells: for &(file_kb, rec_kb) in &plan.cells {
        let (file_bytes, rec_bytes) = cell_bytes(file_kb, rec_kb)?;
        let cell = Cell { plan, file_bytes, rec: rec_bytes, stop };
        let mut ops = Vec::new();
        let mut elapsed = 0u64;
        for &test in &plan.tests {
            // The mixed workload exists only with -t: IOzone prints no column.
            if test == Test::Mixed {
                continue;
            }
            if stop.load(Ordering::Relaxed) {
                partial = true;
                break;
            }
            if let Some(m) = &plan.remount {
                remount(m)?;
            }
            for &col in passes(test, plan.no_retest) {
                if stop.load(Ordering::Relaxed) {
                    partial = true;
                    break;
                }
                let order = order_for(col, file_bytes / rec_bytes, false);
                if col.writes() {
                    created.claim(&plan.file);
                }
                let mut ctx = cell.ctx(&plan.file, &order, None);
                ctx.owner = created.token(&plan.file);
                let mut out = timed_pass(&ctx, col, &mut buf, rec)?;
                let cpu_s = out.cpu_s;
                partial |= out.stopped;
                let ns = out.elapsed_ns();
                elapsed += ns;
                meter.bytes.fetch_add(out.bytes, Ordering::Relaxed);
                meter.ops.fetch_add(out.ops, Ordering::Relaxed);
                details.cells.push(CellFigure { file_kb, rec_kb, column: col, elapsed_ns: ns, bytes: out.bytes, ops: out.ops, cpu_s });
                ops.push(op_stats(col, std::slice::from_mut(&mut out), ns));
            }
            // IOzone 3.471 reads backward twice and prints the first pass
            // (made slow by a test, the second leaves the figure alone; -+n
            // drops it like the re- passes): it only changes what the next
            // test finds in the cache, so it runs and is not reported.
            if test == Test::Backward && !plan.no_retest && !partial {
                let ctx = cell.ctx(&plan.file, &[], None);
                partial |= timed_pass(&ctx, Column::BkwdRead, &mut buf, rec)?.stopped;
            }
        }
        jobs.push(job(format!("{file_kb}k/{rec_kb}k"), 1, elapsed, ops, plan, partial));
        if partial {
            break 'cells;
        }
        if let Some(ev) = rows {
            ev.stream(&crate::report::layout::iozone::row(&details, file_kb, rec_kb));
        }
    }
    Ok(Outcome { jobs, details, partial })
}

pub(crate) fn job(name: String, threads: u32, elapsed_ns: u64, ops: Vec<OpStats>, plan: &IozonePlan, partial: bool) -> JobResult {
    let headline = ops
        .first()
        .map(|o| {
            let s = o.active_ns.unwrap_or(elapsed_ns).max(1) as f64 / 1e9;
            vec![Headline::new(format!("{}_kB_s", o.name), "kB/s", o.bytes as f64 / 1024.0 / s)]
        })
        .unwrap_or_default();
    JobResult {
        name,
        group: 0,
        threads,
        engine: if plan.direct { "iozone (O_DIRECT)".into() } else { "iozone".into() },
        elapsed_ns,
        ops,
        timeline: Default::default(),
        options: Default::default(),
        resolved: serde_json::to_value(plan).unwrap_or_default(),
        partial,
        error: None,
        headline,
        details: None,
    }
}

/// Every file the run will use.
fn files_of(plan: &IozonePlan) -> Vec<PathBuf> {
    match &plan.throughput {
        None => vec![plan.file.clone()],
        Some(t) => {
            let n = t.children.iter().copied().max().unwrap_or(0) as usize;
            (0..n).map(|i| throughput::child_file(plan, t, i)).collect()
        }
    }
}

fn dir_of(p: &Path) -> PathBuf {
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Refuse before anything is written: a file that exists is not ours, a
/// -F list shorter than the children, a -U that cannot work, too little
/// space.
fn preflight(plan: &IozonePlan, files: &[PathBuf], allow_fill: bool) -> Result<(), RunError> {
    if let Some(t) = &plan.throughput {
        let n = t.children.iter().copied().max().unwrap_or(0) as usize;
        if !t.files.is_empty() && t.files.len() < n {
            return Err(RunError::Workload(format!("{} children but only {} files named with -F", n, t.files.len())));
        }
    }
    for (i, f) in files.iter().enumerate() {
        if std::fs::symlink_metadata(f).is_ok() {
            return Err(RunError::Workload(format!(
                "{} {}: {} already exists and was not created by this run (IOzone would delete it; fsbench does not, nor at the end of the run: remove it or name another file{})",
                file_flag(plan, i),
                f.display(),
                crate::environment::identity::absolute(f).display(),
                if crate::environment::state::left_by_dead_run(f) { "; a killed fsbench run left it: `fsbench cleanup` removes it" } else { "" }
            )));
        }
    }
    for &(f, r) in &plan.cells {
        cell_bytes(f, r)?;
    }
    if let Some(m) = &plan.remount {
        mount_entry(m)?;
    }
    let biggest = plan.cells.iter().map(|c| c.0 * 1024).max().unwrap_or(0);
    let needs: Vec<Need> = files.iter().map(|f| Need::new_in(&dir_of(f), biggest)).collect();
    crate::environment::space::check(&needs, allow_fill, "reduce -s, -g or -t")?;
    Ok(())
}

/// The flag that names file `i` of `files_of(plan)`, as the user wrote it
/// (or IOzone's default name when none did).
fn file_flag(plan: &IozonePlan, i: usize) -> &'static str {
    match &plan.throughput {
        Some(t) if i < t.files.len() => "-F",
        Some(_) => "-t (IOzone's default child file, next to -f)",
        None if plan.file == IozonePlan::default().file => "-f (IOzone's default)",
        None => "-f",
    }
}

/// Two runs on one directory would remove each other's files: each data
/// directory is locked for the run. Not under -U, whose unmount a lock's
/// open descriptor would keep busy.
fn lock_dirs(plan: &IozonePlan, dirs: &[PathBuf]) -> Result<Vec<Lock>, RunError> {
    if plan.remount.is_some() {
        return Ok(Vec::new());
    }
    let mut locks = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for d in dirs {
        let canon = d.canonicalize().unwrap_or_else(|_| d.clone());
        if seen.contains(&canon) {
            continue;
        }
        seen.push(canon.clone());
        match lock_path(&canon) {
            Ok(k) => locks.push(k),
            Err(LockError::InUse(u)) => return Err(RunError::InUse(format!("directory {u}; give this run another directory"))),
            Err(LockError::Other(m)) => return Err(RunError::Workload(m)),
        }
    }
    Ok(locks)
}

/// Run the plan through the one-group lifecycle: inside a measured window
/// with its CPU, process I/O and device counters, progress on the meter, and
/// the result in the common envelope (IOzone's figures in `details`).
pub(crate) fn run_plan(
    plan: &IozonePlan,
    opts: &RunOptions,
    layout: &str,
    before_measure: &mut dyn FnMut(&[PathBuf]),
) -> Result<RunResult, RunError> {
    let files = files_of(plan);
    let mut dirs: Vec<PathBuf> = files.iter().map(|f| dir_of(f)).collect();
    dirs.dedup();
    let run = Iozone { plan, layout, files, dirs, locks: Vec::new(), created: Created::default() };
    lifecycle::drive(run, opts, layout, before_measure)
}

/// An IOzone run's stages. Test 0 makes the files inside the measured run:
/// none exist before it, so the cache scenario gets no file.
struct Iozone<'a> {
    plan: &'a IozonePlan,
    /// Only IOzone's own text layout streams its rows.
    layout: &'a str,
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
    locks: Vec<Lock>,
    created: Created,
}

impl OneGroup for Iozone<'_> {
    type Ran = Outcome;

    fn label(&self) -> String {
        "iozone".into()
    }

    fn places(&self) -> Vec<PathBuf> {
        self.dirs.clone()
    }

    fn expected(&self) -> Expected {
        Expected { bytes: expected_bytes(self.plan), ..Default::default() }
    }

    fn check(&mut self, opts: &RunOptions) -> Result<(), RunError> {
        preflight(self.plan, &self.files, opts.allow_fill)
    }

    fn claim(&mut self, _opts: &RunOptions) -> Result<(), RunError> {
        self.locks = lock_dirs(self.plan, &self.dirs)?;
        Ok(())
    }

    fn set_up(&mut self, _opts: &RunOptions, warnings: &mut Warnings) -> Result<(), RunError> {
        if let Some(w) = cache_warning(self.plan, self.files.len() as u64) {
            warnings.warn(Warning::new(Code::WorkingSetFitsInRam, w));
        }
        Ok(())
    }

    fn run(&mut self, opts: &RunOptions, meter: &Arc<Meter>, _warnings: &mut Warnings) -> Result<Outcome, RunError> {
        let plan = self.plan;
        // Only IOzone's own text layout streams; throughput mode (`-t`) prints
        // its blocks at the end (each is one measured span of all children).
        let rows = (self.layout == LAYOUT && opts.events.streams()).then_some(&*opts.events);
        let outcome = match &plan.throughput {
            None => run_cells(plan, &opts.stop, &mut self.created, meter, &mut NoRecord, rows),
            Some(t) => throughput::run(plan, t, &opts.stop, &mut self.created, meter),
        };
        Ok(outcome?)
    }

    fn tear_down(&mut self, opts: &RunOptions, _ran: Option<&Outcome>) -> Result<(), RunError> {
        let removed = std::mem::take(&mut self.created).finish(self.plan.keep_files || opts.keep_files);
        self.locks.clear();
        Ok(removed?)
    }

    fn finish(self, mut outcome: Outcome, _: &mut GroupResult, _: &RunOptions, _: &mut Warnings) -> Result<Finished, RunError> {
        if outcome.jobs.is_empty() {
            return Err(RunError::Workload("the plan has no cell and test to run".into()));
        }
        outcome.jobs[0].details = Some(serde_json::to_value(&outcome.details).map_err(|e| e.to_string())?);
        Ok(Finished { jobs: outcome.jobs, partial: outcome.partial })
    }
}

/// Buffered passes over files that fit in RAM meet the page cache: the
/// read passes read what test 0 wrote moments before (a --cache scenario
/// acts before the run, not between its tests), and a write pass without
/// -e or -o ends with its data in the cache. IOzone's own answers are -I,
/// -U and -e.
fn cache_warning(plan: &IozonePlan, files: u64) -> Option<String> {
    if plan.direct {
        return None;
    }
    let reads = plan.remount.is_none() && plan.tests.iter().any(|t| t.columns().iter().any(|c| !c.writes()));
    let writes = !plan.fsync_in_timing && !plan.osync;
    let why = match (reads, writes) {
        (false, false) => return None,
        (true, false) => "and its read passes read them right after test 0 wrote them, from the page cache, whatever a --cache scenario did before the run",
        (false, true) => "and its write passes end with their data in the page cache (no -e or -o)",
        (true, true) => "its write passes end with their data in the page cache (no -e or -o), and its read passes read it back from there right after test 0 wrote it, whatever a --cache scenario did before the run",
    };
    let biggest = plan.cells.iter().map(|c| c.0.saturating_mul(1024)).max().unwrap_or(0);
    crate::environment::cache::memory_speed_warning(
        if files > 1 { "IOzone's files hold" } else { "IOzone's file holds" },
        biggest.saturating_mul(files),
        why,
        "-I (O_DIRECT), -U MOUNTPOINT (unmount and mount before each test, so its first pass reads from the device), -e (the fsync inside the write figures; -c adds only the close, which flushes nothing on most file systems), or files larger than RAM",
    )
}

/// Bytes the passes move, for the progress display.
fn expected_bytes(plan: &IozonePlan) -> u64 {
    let children: u64 = plan.throughput.as_ref().map(|t| t.children.iter().map(|&c| c as u64).sum()).unwrap_or(1);
    let passes: u64 = plan.tests.iter().map(|&t| passes(t, plan.no_retest).len() as u64).sum();
    plan.cells.iter().map(|c| c.0 * 1024).sum::<u64>() * passes * children
}
