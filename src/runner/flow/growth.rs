//! What a Filebench workload can add to its file system while it runs, on
//! top of what its filesets lay out before: appendfile and appendfilerand
//! grow a file on every op, a sequential `write` past the end of a file
//! grows it, and createfile makes the fileset's missing entries. The
//! free-space check before laying out counts only the filesets; webserver's
//! log, appended to on every iteration, filled a 2 GiB target mid-run at
//! ~900k ops/s. This module bounds the growth so the experiment can refuse
//! such a run before it starts.
//!
//! The bound, per flowop: bytes per op (iosize; its mean when random, since
//! the bound multiplies it by thousands of ops) × a rate bound × the run's
//! seconds. The rate bound is a worst case from the thread's own loop: an
//! iteration of a thread runs every flowop of its list once (× iters), each
//! costs at least `OP_FLOOR_S` (a system call) plus its bytes at
//! `COPY_BYTES_PER_S` (copied to or from the page cache), and a CPU runs at
//! most one thread at a time, so a thread type does at most
//! min(threads, CPUs) / (cost of one iteration) iterations per second.
//! Measured on this 2-vCPU VM, webserver ran ~900k ops/s, 2.2 µs of CPU
//! per op; the floor of 1 µs per op and 10 GiB/s per CPU are below what a
//! flowop costs here, so the bound is above what was measured (webserver:
//! ~42k appends/s bound against ~29k measured).

use super::dist;
use crate::model::flow::{FlowPlan, FlowopKind, FlowopSpec, Num};

/// Least CPU time of one flowop that does I/O: one system call.
pub const OP_FLOOR_S: f64 = 1e-6;
/// Most bytes a CPU copies per second between a buffer and the page cache.
pub const COPY_BYTES_PER_S: f64 = 10.0 * (1u64 << 30) as f64;

/// One flowop's bound.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowopGrowth {
    pub flowop: String,
    pub kind: &'static str,
    /// Bytes each op adds (iosize, or its mean when random).
    pub bytes_per_op: u64,
    /// At most this many ops per second (all threads running it).
    pub ops_per_s: f64,
    /// bytes_per_op × ops_per_s × seconds, or less when the fileset's
    /// deletes bound what its files can hold (`deletes_bound`).
    pub bytes: u64,
    /// The loop deletes files of the same fileset: what the fileset holds
    /// levels off (see `steady_state`), and this is that level's bound.
    pub deletes_bound: Option<u64>,
}

/// What the whole workload can add during its run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Growth {
    /// Seconds the bound covers: the run and its warm-up.
    pub seconds: u64,
    /// Per flowop that grows files, largest first.
    pub flowops: Vec<FlowopGrowth>,
    /// Entries createfile can make beyond the preallocated ones in filesets
    /// the loop never deletes from (bounded by the filesets, not the rate).
    pub created_bytes: u64,
}

impl Growth {
    pub fn bytes(&self) -> u64 {
        self.flowops.iter().fold(self.created_bytes, |a, f| a.saturating_add(f.bytes))
    }
}

/// Per fileset, over one pass of a thread's loop: bytes appended or
/// written to its files, files created (each written to its fileset's
/// size at most once by writewholefile) and files deleted.
#[derive(Clone, Copy, Default)]
struct Churn {
    added: f64,
    created: f64,
    deleted: f64,
}

/// A flowop that grows files: how often per pass, bytes per op, and the
/// fileset its file belongs to when known.
struct Grower<'a> {
    spec: &'a FlowopSpec,
    times: f64,
    bytes: u64,
    fileset: Option<usize>,
}

/// The bound of `plan` on a machine with `cpus` CPUs.
pub fn bound(plan: &FlowPlan, cpus: usize) -> Growth {
    let seconds = plan.run.duration_s + plan.run.warmup_s;
    let mut flowops = Vec::new();
    let mut created_bytes = 0u64;
    let mut deleted_from: Vec<usize> = Vec::new();
    let mut created_in: Vec<usize> = Vec::new();
    for p in &plan.processes {
        for t in &p.threads {
            let threads = (p.instances as u64 * t.instances as u64).max(1);
            let mut pass = Pass { plan, grows: Vec::new(), churn: vec![Churn::default(); plan.filesets.len()], fds: Default::default() };
            let cost = pass.iteration(&t.flowops, 1.0);
            if cost <= 0.0 {
                continue;
            }
            let iters_per_s = threads.min(cpus.max(1) as u64) as f64 / cost;
            for (i, c) in pass.churn.iter().enumerate() {
                if c.deleted > 0.0 {
                    deleted_from.push(i);
                } else if c.created > 0.0 {
                    created_in.push(i);
                }
            }
            for g in pass.grows {
                let ops_per_s = iters_per_s * g.times;
                let by_rate = (g.bytes as f64 * ops_per_s * seconds as f64).min(u64::MAX as f64) as u64;
                let level = g.fileset.and_then(|i| steady_state(plan, i, &pass.churn[i]));
                flowops.push(FlowopGrowth {
                    flowop: g.spec.name.clone(),
                    kind: g.spec.kind.wml_name(),
                    bytes_per_op: g.bytes,
                    ops_per_s,
                    bytes: level.map_or(by_rate, |l| by_rate.min(l)),
                    deletes_bound: level,
                });
            }
        }
    }
    flowops.sort_by_key(|f| std::cmp::Reverse(f.bytes));
    created_in.sort_unstable();
    created_in.dedup();
    for i in created_in.into_iter().filter(|i| !deleted_from.contains(i)) {
        let s = &plan.filesets[i];
        created_bytes += (s.entries as f64 * (100 - s.prealloc_pct.min(100)) as f64 / 100.0 * file_size(plan, s.size)) as u64;
    }
    Growth { seconds, flowops, created_bytes }
}

/// What a fileset the loop deletes from can hold: with N files, each pass
/// adding A bytes to them, creating C files of size s and deleting D
/// random ones (each the mean size T/N), the total T moves by
/// A + C·s − D·T/N per pass and levels off at N·(A + C·s)/D, from below or
/// above, never past it and its start. Twice that, for the randomness of
/// which file is deleted.
fn steady_state(plan: &FlowPlan, i: usize, c: &Churn) -> Option<u64> {
    if c.deleted <= 0.0 {
        return None;
    }
    let s = plan.filesets.get(i)?;
    let size = file_size(plan, s.size);
    let level = s.entries as f64 * (c.added + c.created * size) / c.deleted;
    Some((2.0 * level).min(u64::MAX as f64) as u64)
}

/// One pass over a thread's flowops.
struct Pass<'a> {
    plan: &'a FlowPlan,
    grows: Vec<Grower<'a>>,
    churn: Vec<Churn>,
    /// The fileset of the file each descriptor slot last opened.
    fds: std::collections::HashMap<u32, usize>,
}

impl<'a> Pass<'a> {
    /// The least seconds one pass over `ops` takes (× `times`), noting the
    /// flowops that grow files and each fileset's churn.
    fn iteration(&mut self, ops: &'a [FlowopSpec], times: f64) -> f64 {
        let plan = self.plan;
        let mut cost = 0.0;
        for f in ops {
            let n = times * value(plan, f.iters).max(1.0);
            if f.kind == FlowopKind::Composite {
                cost += self.iteration(&f.children, n);
                continue;
            }
            // Only flowops that make a system call on a file cost time (the
            // others pace, count or synchronise threads, which the bound takes as free).
            if !f.kind.is_io() {
                continue;
            }
            // A flowop names its fileset, or works on the file its slot holds.
            let fileset = f.fileset.or_else(|| self.fds.get(&f.fd).copied());
            if let (FlowopKind::CreateFile | FlowopKind::OpenFile, Some(i)) = (f.kind, f.fileset) {
                self.fds.insert(f.fd, i);
            }
            let io = value(plan, f.iosize).max(0.0);
            let whole = fileset.and_then(|i| plan.filesets.get(i)).map(|s| file_size(plan, s.size)).unwrap_or(0.0);
            let moved = match f.kind {
                FlowopKind::ReadWholeFile | FlowopKind::WriteWholeFile => whole,
                FlowopKind::AppendFileRand => io / 2.0,
                _ => io,
            };
            cost += n * (OP_FLOOR_S + moved / COPY_BYTES_PER_S);
            let grows_by = match f.kind {
                FlowopKind::AppendFile | FlowopKind::AppendFileRand => io,
                FlowopKind::Write | FlowopKind::AioWrite if !f.random => io,
                _ => 0.0,
            };
            let churn = fileset.and_then(|i| self.churn.get_mut(i));
            if let Some(c) = churn {
                match f.kind {
                    FlowopKind::CreateFile => c.created += n,
                    FlowopKind::DeleteFile => c.deleted += n,
                    _ => c.added += n * grows_by,
                }
            }
            if grows_by > 0.0 {
                self.grows.push(Grower { spec: f, times: n, bytes: grows_by as u64, fileset });
            }
        }
        cost
    }
}

/// A number's value, or its mean when random.
fn value(plan: &FlowPlan, n: Num) -> f64 {
    match n {
        Num::Fixed(v) => v as f64,
        Num::Random(i) => plan.randvars.get(i).map_or(0.0, dist::mean),
    }
}

fn file_size(plan: &FlowPlan, n: Num) -> f64 {
    value(plan, n).max(0.0)
}
