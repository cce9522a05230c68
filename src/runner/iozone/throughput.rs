//! Throughput mode (`-t`): for each child count, every test in IOzone's
//! throughput order, run by that many threads at once, each on its own file
//! (`-F` names them, else `iozone.DUMMY.<i>` next to the test file). The
//! children make their buffers, then wait at a start gate and go together.
//! With the stonewall (the default), the first child to finish raises a flag
//! and the others stop counting there: a reader stops, a writer that makes
//! the file finishes it untimed so the next test reads a whole file.

use super::pass::{run_pass, NoRecord, PassOut};
use super::{buffer_for, cell_bytes, job, op_stats, order_for, Cell, Created, Outcome};
use crate::measure::usage::UsageMark;
use crate::model::iozone::{Column, IozonePlan, Test, Throughput};
use crate::result::iozone::{IozoneDetails, ThroughputFigure};
use crate::runner::events::Meter;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// IOzone's order of the throughput tests (initial writers, rewriters,
/// readers, re-readers, reverse readers, stride readers, random readers,
/// mixed workload, random writers, pwrite writers, pread readers, fwriters,
/// freaders), each with the test that selects it.
const ORDER: [(Test, Column); 13] = [
    (Test::Write, Column::Write),
    (Test::Write, Column::Rewrite),
    (Test::Read, Column::Read),
    (Test::Read, Column::Reread),
    (Test::Backward, Column::BkwdRead),
    (Test::Stride, Column::StrideRead),
    (Test::Random, Column::RandomRead),
    (Test::Mixed, Column::Mixed),
    (Test::Random, Column::RandomWrite),
    (Test::Pwrite, Column::Pwrite),
    (Test::Pread, Column::Pread),
    (Test::Fwrite, Column::Fwrite),
    (Test::Fread, Column::Fread),
];

/// The columns a plan runs in throughput mode, in order.
pub(crate) fn columns(plan: &IozonePlan) -> Vec<Column> {
    ORDER
        .iter()
        .filter(|(t, c)| plan.tests.contains(t) && !(plan.no_retest && matches!(c, Column::Rewrite | Column::Reread)))
        .map(|(_, c)| *c)
        .collect()
}

/// Child `i`'s file.
pub(crate) fn child_file(plan: &IozonePlan, t: &Throughput, i: usize) -> PathBuf {
    match t.files.get(i) {
        Some(f) => f.clone(),
        None => super::dir_of(&plan.file).join(format!("iozone.DUMMY.{i}")),
    }
}

/// Whether child `i` of `n` reads in the mixed workload: the first P% with
/// `-+p P`, else the even ones.
pub(crate) fn mixed_reader(t: &Throughput, i: usize, n: usize) -> bool {
    match t.mixed_read_pct {
        Some(p) => (i as u64) * 100 < (n as u64) * p as u64,
        None => i % 2 == 0,
    }
}

pub(crate) fn run(plan: &IozonePlan, t: &Throughput, stop: &AtomicBool, created: &mut Created, meter: &Meter) -> Result<Outcome, String> {
    let mut details = IozoneDetails { settings: plan.clone(), cells: Vec::new(), throughput: Vec::new() };
    let mut jobs = Vec::new();
    let mut partial = false;
    let cols = columns(plan);
    'all: for &(file_kb, rec_kb) in &plan.cells {
        let (file_bytes, rec) = cell_bytes(file_kb, rec_kb)?;
        let cell = Cell { plan, file_bytes, rec, stop };
        for &n in &t.children {
            let n = n.max(1) as usize;
            let mut ops = Vec::new();
            let mut elapsed = 0u64;
            for &col in &cols {
                if stop.load(Ordering::Relaxed) {
                    partial = true;
                    break;
                }
                if col.writes() {
                    (0..n).for_each(|i| created.claim(&child_file(plan, t, i)));
                }
                let (mut outs, wall_s, cpu_s) = run_children(&cell, t, col, n, created)?;
                partial |= outs.iter().any(|o| o.stopped);
                let first = outs.iter().map(|o| o.start).min().unwrap_or_else(Instant::now);
                let last = outs.iter().map(|o| o.end).max().unwrap_or(first);
                let span_ns = last.duration_since(first).as_nanos() as u64;
                let total: u64 = outs.iter().map(|o| o.bytes).sum();
                meter.bytes.fetch_add(total, Ordering::Relaxed);
                details.throughput.push(ThroughputFigure {
                    children: n as u32,
                    file_kb,
                    rec_kb,
                    column: col,
                    per_child_kb_s: outs.iter().map(|o| o.bytes as f64 / 1024.0 / secs(o.elapsed_ns())).collect(),
                    per_child_kb: outs.iter().map(|o| o.bytes as f64 / 1024.0).collect(),
                    parent_kb_s: total as f64 / 1024.0 / secs(span_ns),
                    wall_s,
                    cpu_s,
                });
                elapsed += span_ns;
                ops.push(op_stats(col, &mut outs, span_ns));
            }
            let name = if plan.cells.len() > 1 { format!("{file_kb}k/{rec_kb}k/{n}children") } else { format!("{n}children") };
            jobs.push(job(name, n as u32, elapsed, ops, plan, partial));
            if partial {
                break 'all;
            }
        }
    }
    Ok(Outcome { jobs, details, partial })
}

fn secs(ns: u64) -> f64 {
    (ns as f64 / 1e9).max(1e-9)
}

/// One test by `n` children at once: their figures, and the wall and CPU
/// seconds of the whole test.
fn run_children(cell: &Cell, t: &Throughput, col: Column, n: usize, created: &Created) -> Result<(Vec<PassOut>, f64, f64), String> {
    let plan = cell.plan;
    let wall = AtomicBool::new(false);
    let gate = StartGate::default();
    let files: Vec<PathBuf> = (0..n).map(|i| child_file(plan, t, i)).collect();
    let u0 = UsageMark::now();
    let results: Vec<Result<PassOut, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = files
            .iter()
            .enumerate()
            .map(|(i, path)| {
                let (wall, gate) = (&wall, &gate);
                crate::runner::workers::spawn_scoped(s, format!("iozone-{i}"), move || {
                    // IOzone's children are processes, each with its own
                    // descriptor table; a table shared by the children costs
                    // every read and write a file reference (see
                    // host::private_fd_table). The child opens its file after.
                    crate::host::private_fd_table(false);
                    let mut buf = buffer_for(col, cell.rec, super::pass::is_stdio(col));
                    let order = order_for(col, cell.file_bytes / cell.rec, t.mixed_sequential);
                    let mut ctx = cell.ctx(path, &order, t.stonewall.then_some(wall));
                    ctx.mixed_reads = mixed_reader(t, i, n);
                    ctx.owner = created.token(path);
                    if !gate.ready_and_wait() {
                        return Err("not started: another child could not start".into());
                    }
                    let r = run_pass(&ctx, col, &mut buf, &mut NoRecord);
                    // The first to finish stops the others' counting (a
                    // failed child stops them too).
                    wall.store(true, Ordering::Relaxed);
                    r
                })
            })
            .collect();
        gate.open(handles.iter().all(|h| h.is_ok()), n);
        handles
            .into_iter()
            .map(|h| match h {
                Ok(h) => h.join().unwrap_or_else(|_| Err("a throughput child panicked".into())),
                Err(e) => Err(format!("cannot start a throughput child: {e}")),
            })
            .collect()
    });
    let cpu = u0.until(&UsageMark::now());
    let outs = results.into_iter().collect::<Result<Vec<_>, _>>()?;
    Ok((outs, cpu.wall_s, cpu.user_s + cpu.system_s))
}

/// All children start at once: each says it is ready and waits; the parent
/// opens the gate when all are ready, or aborts it when one could not be
/// started (a barrier would then wait forever).
#[derive(Default)]
struct StartGate {
    ready: AtomicUsize,
    go: AtomicBool,
    abort: AtomicBool,
}

impl StartGate {
    /// False: aborted.
    fn ready_and_wait(&self) -> bool {
        self.ready.fetch_add(1, Ordering::AcqRel);
        loop {
            if self.go.load(Ordering::Acquire) {
                return true;
            }
            if self.abort.load(Ordering::Acquire) {
                return false;
            }
            std::thread::yield_now();
        }
    }

    fn open(&self, all_started: bool, n: usize) {
        if !all_started {
            self.abort.store(true, Ordering::Release);
            return;
        }
        while self.ready.load(Ordering::Acquire) < n {
            std::thread::yield_now();
        }
        self.go.store(true, Ordering::Release);
    }
}
