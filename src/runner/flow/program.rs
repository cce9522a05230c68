//! A FlowPlan turned into what threads execute: one definition per thread
//! instance with its flowops flattened (composite children after their
//! parent), each flowop's statistics slot, and every name-based reference
//! (wakeup, sempost, limit and finishon* targets) resolved to an index, so
//! nothing is looked up by name while the run is measured. Checks the plan
//! before anything touches the disk.

use super::dist;
use crate::model::flow::{Direction, FlowPlan, FlowopKind, FlowopSpec, Num, ThreadSpec};

/// Descriptor slots per thread, as in Filebench.
pub const FDS: usize = 128;

/// What a limit or finishon* counts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Count {
    /// The target flowop's counters in this thread.
    Local(usize),
    /// The target flowop's counters summed over all threads (name index).
    Global(usize),
    /// This process instance's I/O (index into the process counters).
    Process(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub enum SyncRef {
    None,
    Block(usize),
    Wakeup(usize),
    SemBlock(usize),
    SemPost(Vec<usize>),
    Count(Count),
}

pub struct Node<'p> {
    pub spec: &'p FlowopSpec,
    pub kind: FlowopKind,
    /// Statistics slot in the thread (one per distinct name).
    pub slot: usize,
    pub fileset: Option<usize>,
    /// Counted as I/O (IO Summary), and as a read or write.
    pub io: bool,
    pub rw: bool,
    pub children: Vec<usize>,
    pub sync: SyncRef,
    /// Shared bucket of a limit flowop counting a shared counter.
    pub bucket: Option<usize>,
}

pub struct ThreadDef<'p> {
    /// Global thread index, counting every instance in definition order.
    pub index: usize,
    pub name: String,
    pub spec: &'p ThreadSpec,
    pub nice: i32,
    pub nodes: Vec<Node<'p>>,
    /// Top-level nodes in loop order.
    pub top: Vec<usize>,
    /// Slot -> global name index.
    pub slots: Vec<usize>,
    pub proc_counters: Option<usize>,
    /// Bytes of the largest read the thread issues in one call.
    pub read_len: usize,
}

pub struct Program<'p> {
    /// Distinct flowop names in definition order, with their kinds.
    pub names: Vec<(String, FlowopKind)>,
    pub threads: Vec<ThreadDef<'p>>,
    pub blocks: usize,
    /// Highwater of each semblock instance.
    pub sems: Vec<u64>,
    pub procs: usize,
    /// Shared limit buckets.
    pub buckets: usize,
    /// Per name: the (thread, slot) pairs that record it.
    pub holders: Vec<Vec<(usize, usize)>>,
    /// Size of the shared write source buffer.
    pub src_len: usize,
    /// Limit flowops (names) that do nothing for want of an event generator.
    pub idle_limits: Vec<String>,
}

const MIB: u64 = 1 << 20;

/// A buffer size for a number that may be random: the constant itself, or
/// four times the variable's mean (larger draws are issued in chunks).
fn size_cap(n: Num, plan: &FlowPlan, default: u64) -> u64 {
    match n {
        Num::Fixed(0) => default,
        Num::Fixed(v) => v,
        Num::Random(i) => plan.randvars.get(i).map(|v| (dist::mean(v) * 4.0) as u64).unwrap_or(default).clamp(4096, 16 * MIB),
    }
}

fn is_limit(k: FlowopKind) -> bool {
    matches!(k, FlowopKind::EventLimit | FlowopKind::IopsLimit | FlowopKind::OpsLimit | FlowopKind::BwLimit)
}

fn counts(k: FlowopKind) -> bool {
    matches!(k, FlowopKind::IopsLimit | FlowopKind::OpsLimit | FlowopKind::BwLimit | FlowopKind::FinishOnCount | FlowopKind::FinishOnBytes)
}

fn check(op: &FlowopSpec, plan: &FlowPlan) -> Result<(), String> {
    use FlowopKind::*;
    let who = format!("flowop {} '{}'", op.kind.wml_name(), op.name);
    if let Some(f) = op.fileset {
        if f >= plan.filesets.len() {
            return Err(format!("{who}: fileset index {f} does not exist"));
        }
    }
    if op.fd as usize >= FDS || op.srcfd.is_some_and(|s| s as usize >= FDS) {
        return Err(format!("{who}: fd must be below {FDS}"));
    }
    if matches!(op.kind, CreateFile | OpenFile | MakeDir | RemoveDir | ListDir) && op.fileset.is_none() {
        return Err(format!("{who}: needs filesetname="));
    }
    if matches!(op.kind, Read | Write | AppendFile | AppendFileRand | AioWrite) && op.iosize == Num::Fixed(0) {
        return Err(format!("{who}: needs iosize= greater than 0"));
    }
    if op.kind == AioWrite && !op.random {
        return Err(format!("{who}: aiowrite issues random writes only (as in Filebench); add `random`"));
    }
    if matches!(op.kind, Wakeup | SemPost) && op.target.is_none() {
        return Err(format!("{who}: needs target="));
    }
    for n in [op.iosize, op.workingset, op.iters, op.value].into_iter().chain(op.indexed) {
        if let Num::Random(i) = n {
            if i >= plan.randvars.len() {
                return Err(format!("{who}: random variable index {i} does not exist"));
            }
        }
    }
    Ok(())
}

/// Flatten `ops` (children after their composite) into `nodes`.
fn flatten<'p>(
    ops: &'p [FlowopSpec],
    plan: &FlowPlan,
    nodes: &mut Vec<Node<'p>>,
    names: &mut Vec<(String, FlowopKind)>,
    slots: &mut Vec<usize>,
) -> Result<Vec<usize>, String> {
    let mut out = Vec::with_capacity(ops.len());
    for op in ops {
        check(op, plan)?;
        let name = match names.iter().position(|(n, _)| *n == op.name) {
            Some(i) => i,
            None => {
                names.push((op.name.clone(), op.kind));
                names.len() - 1
            }
        };
        let slot = match slots.iter().position(|&n| n == name) {
            Some(s) => s,
            None => {
                slots.push(name);
                slots.len() - 1
            }
        };
        nodes.push(Node {
            spec: op,
            kind: op.kind,
            slot,
            fileset: op.fileset,
            io: op.kind.is_io(),
            rw: op.kind.direction() != Direction::None,
            children: Vec::new(),
            sync: SyncRef::None,
            bucket: None,
        });
        let me = nodes.len() - 1;
        out.push(me);
        if op.kind == FlowopKind::Composite {
            let kids = flatten(&op.children, plan, nodes, names, slots)?;
            nodes[me].children = kids;
        }
    }
    Ok(out)
}

pub fn build(plan: &FlowPlan) -> Result<Program<'_>, String> {
    let mut names: Vec<(String, FlowopKind)> = Vec::new();
    let mut threads: Vec<ThreadDef> = Vec::new();
    // Process instance of each thread.
    let mut proc_of: Vec<usize> = Vec::new();
    let mut nproc = 0;
    for p in &plan.processes {
        for pi in 0..p.instances {
            for t in &p.threads {
                for ti in 0..t.instances {
                    let mut nodes = Vec::new();
                    let mut slots = Vec::new();
                    let top = flatten(&t.flowops, plan, &mut nodes, &mut names, &mut slots)?;
                    if top.is_empty() {
                        return Err(format!("thread '{}' of process '{}' has no flowops", t.name, p.name));
                    }
                    let mut name = t.name.clone();
                    if p.instances > 1 || t.instances > 1 {
                        name = format!("{}.{}.{}", t.name, pi, ti);
                    }
                    threads.push(ThreadDef {
                        index: threads.len(),
                        name,
                        spec: t,
                        nice: p.nice,
                        nodes,
                        top,
                        slots,
                        proc_counters: None,
                        read_len: 4096,
                    });
                    proc_of.push(nproc);
                }
            }
            nproc += 1;
        }
    }
    if threads.is_empty() {
        return Err("the workload defines no threads (no `define process` with a thread)".into());
    }

    let find = |n: &str| names.iter().position(|(x, _)| x == n);
    let mut holders: Vec<Vec<(usize, usize)>> = vec![Vec::new(); names.len()];
    for t in &threads {
        for (slot, &name) in t.slots.iter().enumerate() {
            holders[name].push((t.index, slot));
        }
    }

    // Block condition variables per block name; one semaphore per semblock
    // instance.
    let mut block_names: Vec<usize> = Vec::new();
    let mut sems: Vec<u64> = Vec::new();
    let mut sems_of: Vec<Vec<usize>> = vec![Vec::new(); names.len()];
    for t in threads.iter_mut() {
        for n in t.nodes.iter_mut() {
            let name = t.slots[n.slot];
            match n.kind {
                FlowopKind::Block => {
                    let b = match block_names.iter().position(|&x| x == name) {
                        Some(b) => b,
                        None => {
                            block_names.push(name);
                            block_names.len() - 1
                        }
                    };
                    n.sync = SyncRef::Block(b);
                }
                FlowopKind::SemBlock => {
                    sems.push(n.spec.highwater);
                    sems_of[name].push(sems.len() - 1);
                    n.sync = SyncRef::SemBlock(sems.len() - 1);
                }
                _ => {}
            }
        }
    }

    let mut proc_index: Vec<Option<usize>> = vec![None; nproc];
    let mut procs = 0;
    let mut idle_limits = Vec::new();
    let has_events = plan.eventgen_rate.is_some_and(|r| r > 0);
    let mut src_len = 4096u64;
    let mut bucket_keys: Vec<(usize, Count)> = Vec::new();
    for t in threads.iter_mut() {
        src_len = src_len.max(t.spec.memsize);
        let mut read_len = 4096u64;
        for ni in 0..t.nodes.len() {
            let n = &t.nodes[ni];
            let who = format!("flowop {} '{}'", n.kind.wml_name(), n.spec.name);
            let target = n.spec.target.as_deref();
            let sync = match n.kind {
                FlowopKind::Wakeup => {
                    let tn = target.and_then(find).filter(|&i| block_names.contains(&i));
                    let b = tn.and_then(|i| block_names.iter().position(|&x| x == i));
                    SyncRef::Wakeup(b.ok_or_else(|| format!("{who}: no block flowop named '{}'", target.unwrap_or("")))?)
                }
                FlowopKind::SemPost => {
                    let tn = target.and_then(find).filter(|&i| !sems_of[i].is_empty());
                    SyncRef::SemPost(
                        sems_of[tn.ok_or_else(|| format!("{who}: no semblock flowop named '{}'", target.unwrap_or("")))?].clone(),
                    )
                }
                k if counts(k) => match target {
                    Some(tg) => {
                        let i = find(tg).ok_or_else(|| format!("{who}: no flowop named '{tg}' to count"))?;
                        match t.slots.iter().position(|&x| x == i) {
                            Some(slot) if is_limit(k) => SyncRef::Count(Count::Local(slot)),
                            _ => SyncRef::Count(Count::Global(i)),
                        }
                    }
                    None => {
                        let p = proc_of[t.index];
                        let idx = *proc_index[p].get_or_insert_with(|| {
                            procs += 1;
                            procs - 1
                        });
                        SyncRef::Count(Count::Process(idx))
                    }
                },
                _ => t.nodes[ni].sync.clone(),
            };
            let n = &t.nodes[ni];
            if is_limit(n.kind) && !has_events && !idle_limits.contains(&n.spec.name) {
                idle_limits.push(n.spec.name.clone());
            }
            match n.kind {
                FlowopKind::Read | FlowopKind::ReadWholeFile => {
                    read_len = read_len.max(size_cap(n.spec.iosize, plan, MIB));
                }
                FlowopKind::ListDir => read_len = read_len.max(64 << 10),
                FlowopKind::Write | FlowopKind::AppendFile | FlowopKind::AppendFileRand | FlowopKind::AioWrite => {
                    src_len = src_len.max(size_cap(n.spec.iosize, plan, MIB));
                }
                FlowopKind::WriteWholeFile => src_len = src_len.max(size_cap(n.spec.iosize, plan, MIB)),
                _ => {}
            }
            if let (true, SyncRef::Count(c @ (Count::Process(_) | Count::Global(_)))) = (is_limit(n.kind), &sync) {
                let key = (t.slots[n.slot], *c);
                let b = match bucket_keys.iter().position(|k| *k == key) {
                    Some(b) => b,
                    None => {
                        bucket_keys.push(key);
                        bucket_keys.len() - 1
                    }
                };
                t.nodes[ni].bucket = Some(b);
            }
            t.nodes[ni].sync = sync;
        }
        t.read_len = read_len.min(64 * MIB) as usize;
    }
    for t in threads.iter_mut() {
        let p = proc_of[t.index];
        if let Some(idx) = proc_index[p] {
            t.proc_counters = Some(idx);
        }
    }
    Ok(Program {
        names,
        threads,
        blocks: block_names.len(),
        sems,
        procs,
        buckets: bucket_keys.len(),
        holders,
        src_len: src_len.min(1 << 30) as usize,
        idle_limits,
    })
}
