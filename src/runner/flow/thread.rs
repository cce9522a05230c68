//! One worker thread: loops over its flowops until the run ends, with
//! Filebench's semantics per flowop (reference §2), timing each call. The
//! file flowops live in `namespace.rs` and `data.rs`; the CPU, time and
//! synchronisation ones here.
//!
//! The measurement path: file picking and path building (into a reused
//! buffer) happen before the first clock read; the clock is read once
//! before and once after the system call(s); the result goes into this
//! thread's own counters and histogram and three Relaxed stores publish the
//! running totals. No lock, allocation or formatting per operation (error
//! messages are built only when the run is about to stop on them).

use super::buf::MapBuf;
use super::dist;
use super::fileset::Fileset;
use super::hist::CompactHist;
use super::program::{Count, Node, SyncRef, ThreadDef, FDS};
use super::sync::{lock_bucket, BlockCv, Bucket, EventGen, Gate, ProcCounters, PubSlot, RunCtl, Sem, SharedBucket, POLL};
use crate::model::flow::{FlowPlan, FlowopKind, Num, QuitMode};
use crate::runner::rng::Rng;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

pub(super) const NONE: u32 = u32::MAX;
pub(super) const MIB: u64 = 1 << 20;
/// Asynchronous writes in flight before aiowrite reaps some itself.
pub(super) const AIO_MAX: u32 = 256;

/// Everything the worker threads share during the run.
pub struct Shared<'a> {
    pub plan: &'a FlowPlan,
    pub filesets: &'a [Fileset],
    pub ctl: RunCtl,
    pub gate: Gate,
    pub events: Option<EventGen>,
    pub blocks: Vec<BlockCv>,
    pub sems: Vec<Sem>,
    pub procs: Vec<ProcCounters>,
    /// Per thread, per slot.
    pub pubs: Vec<Box<[PubSlot]>>,
    pub buckets: Vec<SharedBucket>,
    /// Per name: (thread, slot).
    pub holders: Vec<Vec<(usize, usize)>>,
    /// Write data for every thread, filled once with the plan's content.
    pub src: MapBuf,
    /// Where `print` flowops and psrun intervals go.
    pub report: &'a dyn crate::runner::events::Events,
}

/// Per-slot results of one thread.
#[derive(Default)]
pub struct SlotStats {
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub hist: CompactHist,
    pub out_of_files: u64,
    pub busy_skips: u64,
}

impl SlotStats {
    pub(super) fn reset(&mut self) {
        self.ops = 0;
        self.bytes = 0;
        self.errors = 0;
        self.hist.reset();
        self.out_of_files = 0;
        self.busy_skips = 0;
    }
}

pub struct ThreadOut {
    pub stats: Vec<SlotStats>,
    pub notes: Vec<String>,
}

/// What one flowop call came to.
pub(super) enum Outcome {
    Ok,
    /// No suitable file (Filebench's NORSC).
    NoFile,
    /// finishon* reached its value.
    Done,
    Fatal(String),
}

/// What the loop does next.
#[derive(PartialEq)]
enum Flow {
    Go,
    /// Start the flowop list again (a shortage in timeout mode).
    Restart,
    Stop,
}

#[derive(Clone, Copy)]
pub(super) struct FdSlot {
    pub(super) fd: i32,
    pub(super) fileset: u32,
    pub(super) entry: u32,
    /// Deleted through this slot while open.
    pub(super) deleted: bool,
}

pub(super) const EMPTY: FdSlot = FdSlot { fd: -1, fileset: 0, entry: NONE, deleted: false };

/// The file last opened (or created) on a descriptor slot, kept after the
/// slot is closed: Filebench's `tf_fse[fd]`, which `closefile` leaves alone,
/// so `deletefile fd=N` deletes that file even after `closefile fd=N`
/// (netsfs.f and networkfs.f rely on it). A delete through the slot uses it
/// up, as Filebench clears `tf_fse[fd]` there.
#[derive(Clone, Copy)]
pub(super) struct LastFile {
    pub(super) fileset: u32,
    pub(super) entry: u32,
}

pub(super) const NO_FILE: LastFile = LastFile { fileset: 0, entry: NONE };

pub(super) struct Aio {
    pub(super) ring: io_uring::IoUring,
    pub(super) outstanding: u32,
}

pub(super) struct Worker<'s, 'a> {
    pub(super) sh: &'s Shared<'a>,
    pub(super) def: &'s ThreadDef<'a>,
    pub(super) rng: Rng,
    pub(super) var_rngs: Vec<Option<Rng>>,
    pub(super) stats: Vec<SlotStats>,
    pub(super) cum: Vec<[u64; 3]>,
    pub(super) pubs: &'s [PubSlot],
    pub(super) proc: Option<&'s ProcCounters>,
    pub(super) fds: Vec<FdSlot>,
    /// Per slot, the file last opened there (see `LastFile`).
    pub(super) last: Vec<LastFile>,
    pub(super) fd_rotor: usize,
    /// Per fileset, this thread's rotor for `opennext` opens.
    pub(super) own_rotors: Vec<u64>,
    pub(super) path: Vec<u8>,
    pub(super) rbuf: MapBuf,
    pub(super) gen: u64,
    pub(super) aio: Option<Aio>,
    limits: Vec<Bucket>,
    pub(super) printed: Vec<bool>,
    pub(super) notes: Vec<String>,
}

#[inline]
pub(super) fn errno() -> std::io::Error {
    std::io::Error::last_os_error()
}

pub(super) fn show(path: &[u8]) -> String {
    String::from_utf8_lossy(path.strip_suffix(&[0]).unwrap_or(path)).into_owned()
}

fn set_priority(def: &ThreadDef) -> Vec<String> {
    let mut notes = Vec::new();
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    if def.nice != 0 {
        // On Linux the nice value belongs to the thread named by its id.
        // SAFETY: setpriority takes integers only (this thread's id and a nice value) and touches no memory.
        if unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, def.nice) } != 0 {
            notes.push(format!("thread {}: cannot set nice {}: {}", def.name, def.nice, errno()));
        }
    }
    if let Some(level) = def.spec.ioprio {
        const IOPRIO_WHO_PROCESS: libc::c_long = 1;
        const IOPRIO_CLASS_BE: libc::c_long = 2;
        let prio = (IOPRIO_CLASS_BE << 13) | level.min(7) as libc::c_long;
        // SAFETY: ioprio_set takes integers only (this thread's id and a priority) and touches no memory.
        if unsafe { libc::syscall(libc::SYS_ioprio_set, IOPRIO_WHO_PROCESS, tid as libc::c_long, prio) } != 0 {
            notes.push(format!("thread {}: cannot set ioprio {level}: {}", def.name, errno()));
        }
    }
    notes
}

/// Run one thread from the start gate to the end of the run.
pub fn run(sh: &Shared, def: &ThreadDef) -> ThreadOut {
    let rbuf = match MapBuf::new(def.read_len) {
        Ok(b) => b,
        Err(e) => {
            sh.ctl.fail(format!("thread {}: {e}", def.name));
            sh.gate.arrive_and_wait(&sh.ctl);
            sh.ctl.running.fetch_sub(1, Ordering::SeqCst);
            return ThreadOut { stats: def.slots.iter().map(|_| SlotStats::default()).collect(), notes: Vec::new() };
        }
    };
    let plan = sh.plan;
    let idx = def.index as u64;
    let mut w = Worker {
        sh,
        def,
        rng: Rng::new(plan.seed.wrapping_add(idx + 1)),
        var_rngs: plan.randvars.iter().map(|v| v.seed.map(|s| Rng::new(s ^ idx.rotate_left(32)))).collect(),
        stats: def.slots.iter().map(|_| SlotStats::default()).collect(),
        cum: vec![[0; 3]; def.slots.len()],
        pubs: &sh.pubs[def.index],
        proc: def.proc_counters.map(|p| &sh.procs[p]),
        fds: vec![EMPTY; FDS],
        last: vec![NO_FILE; FDS],
        fd_rotor: 0,
        own_rotors: vec![0; sh.filesets.len()],
        path: Vec::with_capacity(4096),
        rbuf,
        gen: 0,
        aio: None,
        limits: vec![Bucket::default(); def.nodes.len()],
        printed: vec![false; def.nodes.len()],
        notes: set_priority(def),
    };
    if sh.gate.arrive_and_wait(&sh.ctl) {
        w.main_loop();
    }
    w.finish()
}

impl<'s, 'a> Worker<'s, 'a> {
    fn main_loop(&mut self) {
        let def = self.def;
        let ctl = &self.sh.ctl;
        'outer: while !ctl.ended() {
            for &ni in &def.top {
                if ctl.ended() {
                    break 'outer;
                }
                let g = ctl.generation.load(Ordering::Relaxed);
                if g != self.gen {
                    self.gen = g;
                    self.stats.iter_mut().for_each(SlotStats::reset);
                }
                match self.exec(ni) {
                    Flow::Go => {}
                    Flow::Restart => continue 'outer,
                    Flow::Stop => break 'outer,
                }
            }
        }
    }

    fn finish(mut self) -> ThreadOut {
        self.sh.ctl.running.fetch_sub(1, Ordering::SeqCst);
        if let Some(aio) = self.aio.as_mut() {
            // The kernel may still read the shared buffer: wait for all.
            while aio.outstanding > 0 {
                let _ = aio.ring.submit_and_wait(1);
                let n = aio.ring.completion().count() as u32;
                aio.outstanding = aio.outstanding.saturating_sub(n);
            }
        }
        for i in 0..FDS {
            if self.fds[i].fd >= 0 {
                self.close_slot(i);
            }
        }
        ThreadOut { stats: self.stats, notes: self.notes }
    }

    /// A number that WML allows to be random: constant, or a fresh sample
    /// from the variable's own stream (seed=) or this thread's.
    #[inline]
    pub(super) fn value(&mut self, n: Num) -> u64 {
        match n {
            Num::Fixed(v) => v,
            Num::Random(i) => {
                let vars = &self.sh.plan.randvars;
                match self.var_rngs.get_mut(i) {
                    Some(Some(r)) => dist::value(n, vars, r),
                    _ => dist::value(n, vars, &mut self.rng),
                }
            }
        }
    }

    #[inline]
    pub(super) fn record(&mut self, node: &Node, t0: Instant, bytes: u64) {
        let ns = t0.elapsed().as_nanos() as u64;
        let s = node.slot;
        let st = &mut self.stats[s];
        st.ops += 1;
        st.bytes += bytes;
        st.hist.record(ns);
        let c = &mut self.cum[s];
        c[0] += 1;
        c[1] += bytes;
        c[2] += ns;
        let p = &self.pubs[s];
        p.ops.store(c[0], Ordering::Relaxed);
        p.bytes.store(c[1], Ordering::Relaxed);
        p.lat_ns.store(c[2], Ordering::Relaxed);
        if let Some(pc) = self.proc {
            if node.io {
                pc.io_ops.fetch_add(1, Ordering::Relaxed);
                pc.bytes.fetch_add(bytes, Ordering::Relaxed);
                if node.rw {
                    pc.rw_ops.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    fn exec(&mut self, ni: usize) -> Flow {
        let def = self.def;
        let node = &def.nodes[ni];
        let iters = self.value(node.spec.iters);
        for i in 0..iters {
            if i > 0 && self.sh.ctl.ended() {
                break;
            }
            let out = if node.kind == FlowopKind::Composite {
                let t0 = Instant::now();
                for &c in &node.children {
                    let f = self.exec(c);
                    if f != Flow::Go {
                        return f;
                    }
                }
                self.record(node, t0, 0);
                Outcome::Ok
            } else {
                self.one(node, ni)
            };
            match out {
                Outcome::Ok => {}
                Outcome::NoFile => {
                    self.stats[node.slot].out_of_files += 1;
                    return match self.sh.plan.mode {
                        QuitMode::Timeout => Flow::Restart,
                        QuitMode::AllDone => Flow::Stop,
                        QuitMode::FirstDone => {
                            self.sh.ctl.first_done();
                            Flow::Stop
                        }
                    };
                }
                Outcome::Done => {
                    match self.sh.plan.mode {
                        QuitMode::FirstDone => self.sh.ctl.first_done(),
                        // Filebench 1.4: the limit ends the run.
                        QuitMode::Timeout => self.sh.ctl.finish_on(),
                        QuitMode::AllDone => {}
                    }
                    return Flow::Stop;
                }
                Outcome::Fatal(msg) => {
                    self.stats[node.slot].errors += 1;
                    self.sh.ctl.fail(msg);
                    return Flow::Stop;
                }
            }
        }
        Flow::Go
    }

    fn one(&mut self, node: &Node, ni: usize) -> Outcome {
        use FlowopKind::*;
        let r = match node.kind {
            Read => self.read(node),
            Write => self.write(node),
            AppendFile | AppendFileRand => self.append(node),
            ReadWholeFile => self.read_whole(node),
            WriteWholeFile => self.write_whole(node),
            CreateFile => self.create(node),
            OpenFile => self.open(node),
            CloseFile => self.close(node),
            DeleteFile => self.delete(node),
            StatFile => self.stat(node),
            Fsync => self.fsync(node),
            FsyncSet => self.fsyncset(node),
            MakeDir | RemoveDir => self.leafdir(node),
            ListDir => self.listdir(node),
            AioWrite => self.aiowrite(node),
            AioWait => self.aiowait(node),
            Hog => self.hog(node),
            Delay => self.delay(node),
            Block | Wakeup | SemBlock | SemPost => self.sync_op(node),
            EventLimit | IopsLimit | OpsLimit | BwLimit => self.limit(node, ni),
            FinishOnCount | FinishOnBytes => self.finish_on(node),
            Print => {
                if !self.printed[ni] {
                    self.printed[ni] = true;
                    self.sh.report.note(&format!("fsbench: {}: {}", node.spec.name, node.spec.text.as_deref().unwrap_or("")));
                }
                let t0 = Instant::now();
                self.record(node, t0, 0);
                Ok(())
            }
            TestRandVar => {
                // The sampled value goes into the op's bytes, so bytes/ops
                // is the variable's observed mean.
                let v = self.value(node.spec.value);
                let t0 = Instant::now();
                self.record(node, t0, v);
                Ok(())
            }
            Composite => Ok(()),
        };
        match r {
            Ok(()) => Outcome::Ok,
            Err(o) => o,
        }
    }

    // ---- CPU, time and synchronisation -----------------------------------

    /// `value` iterations of memory work on the thread's buffer.
    pub(super) fn hog(&mut self, node: &Node) -> Result<(), Outcome> {
        let n = self.value(node.spec.value);
        let p = self.rbuf.ptr();
        let t0 = Instant::now();
        for i in 0..n {
            // SAFETY: the index stays inside the first page of the buffer.
            unsafe { std::ptr::write_volatile(p.add((i & 4095) as usize), i as u8) };
        }
        self.record(node, t0, 0);
        Ok(())
    }

    /// Sleep `value` seconds, cut short by the end of the run.
    pub(super) fn delay(&mut self, node: &Node) -> Result<(), Outcome> {
        let secs = self.value(node.spec.value);
        let t0 = Instant::now();
        let until = t0 + Duration::from_secs(secs);
        loop {
            let now = Instant::now();
            if now >= until || self.sh.ctl.ended() {
                break;
            }
            std::thread::sleep((until - now).min(POLL));
        }
        self.record(node, t0, 0);
        Ok(())
    }

    pub(super) fn sync_op(&mut self, node: &Node) -> Result<(), Outcome> {
        let sh = self.sh;
        let value = self.value(node.spec.value);
        let t0 = Instant::now();
        match &node.sync {
            SyncRef::Block(b) => sh.blocks[*b].wait(&sh.ctl),
            SyncRef::Wakeup(b) => sh.blocks[*b].wake(),
            SyncRef::SemBlock(s) => sh.sems[*s].block(value.max(1), &sh.ctl),
            SyncRef::SemPost(list) => {
                for &s in list {
                    sh.sems[s].post(value.max(1), node.spec.blocking, &sh.ctl);
                }
            }
            _ => {}
        }
        if !sh.ctl.ended() {
            self.record(node, t0, 0);
        }
        Ok(())
    }

    /// Ops (or bytes) a limit or finishon* looks at, counted from the start.
    pub(super) fn count(&self, c: Count, kind: FlowopKind) -> u64 {
        let bytes = matches!(kind, FlowopKind::BwLimit | FlowopKind::FinishOnBytes);
        let k = if bytes { 1 } else { 0 };
        match c {
            Count::Local(slot) => self.cum[slot][k],
            Count::Global(name) => self.sh.holders[name]
                .iter()
                .map(|&(t, s)| {
                    let p = &self.sh.pubs[t][s];
                    if bytes {
                        p.bytes.load(Ordering::Relaxed)
                    } else {
                        p.ops.load(Ordering::Relaxed)
                    }
                })
                .sum(),
            Count::Process(p) => {
                let pc = &self.sh.procs[p];
                match kind {
                    FlowopKind::IopsLimit => pc.rw_ops.load(Ordering::Relaxed),
                    _ if bytes => pc.bytes.load(Ordering::Relaxed),
                    _ => pc.io_ops.load(Ordering::Relaxed),
                }
            }
        }
    }

    /// eventlimit takes one event per call; iopslimit/opslimit one per op
    /// and bwlimit one per MiB done since the previous call (a per-flowop
    /// bucket, as in Filebench). Without an event generator (or at rate 0)
    /// they return at once and record nothing.
    pub(super) fn limit(&mut self, node: &Node, ni: usize) -> Result<(), Outcome> {
        let sh = self.sh;
        let Some(ev) = sh.events.as_ref() else { return Ok(()) };
        if node.kind == FlowopKind::EventLimit {
            let t0 = Instant::now();
            if ev.take(1.0, &sh.ctl) {
                self.record(node, t0, 0);
            }
            return Ok(());
        }
        let SyncRef::Count(c) = node.sync else { return Ok(()) };
        let now = self.count(c, node.kind);
        let unit = if node.kind == FlowopKind::BwLimit { MIB as i64 } else { 1 };
        let owed = match node.bucket {
            Some(b) => lock_bucket(&sh.buckets[b]).charge(now, unit),
            None => self.limits[ni].charge(now, unit),
        };
        let Some(events) = owed else { return Ok(()) };
        let t0 = Instant::now();
        if events > 0 {
            if !ev.take(events as f64, &sh.ctl) {
                return Ok(());
            }
            match node.bucket {
                Some(b) => lock_bucket(&sh.buckets[b]).pay(events, unit),
                None => self.limits[ni].pay(events, unit),
            }
        }
        self.record(node, t0, 0);
        Ok(())
    }

    pub(super) fn finish_on(&mut self, node: &Node) -> Result<(), Outcome> {
        let SyncRef::Count(c) = node.sync else { return Ok(()) };
        let limit = self.value(node.spec.value);
        let t0 = Instant::now();
        let n = self.count(c, node.kind);
        self.record(node, t0, 0);
        if n >= limit {
            return Err(Outcome::Done);
        }
        Ok(())
    }
}
