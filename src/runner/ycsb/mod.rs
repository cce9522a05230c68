//! Executes one `YcsbPlan`, a YCSB load or run phase, against a store
//! (`kvstore`): opens it, splits the operations over the threads as YCSB's
//! Client does (the first threads take the remainder), runs them inside the
//! measured window (device counters, process I/O, CPU), prints YCSB's
//! status lines with `-s`, stops at `maxexecutiontime` or Ctrl-C, closes
//! the store, and returns the common result with YCSB's figures in
//! `details`. A run phase on an empty store is refused: load first.

mod client;
pub mod gen;
pub(crate) mod measure;

use crate::environment::cleanup::{self, Token};
use crate::kvstore::{self, Status, StoreConfig};
use crate::model::store;
use crate::model::ycsb::{Interval, Measurement, Phase, YcsbPlan};
use crate::result::warning::{Code, Warning};
use crate::result::ycsb::YcsbDetails;
use crate::result::{GroupResult, Headline, JobResult, OpClass, OpStats, RunResult};
use crate::runner::events::{Expected, Meter, Warnings};
use crate::runner::lifecycle::{self, Finished, OneGroup};
use crate::runner::{RunError, RunOptions};
use measure::{Live, Metric, Recorder, Snapshot};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Run the phase through the one-group lifecycle (the store's directory is
/// the data the cache scenario acts on).
pub(crate) fn run_plan(
    plan: &YcsbPlan,
    opts: &RunOptions,
    layout: &str,
    before_measure: &mut dyn FnMut(&[PathBuf]),
) -> Result<RunResult, RunError> {
    let ycsb = Ycsb { plan, desc: None, made: None, store: None, field_names: Vec::new(), shared_device: None, armed: None };
    lifecycle::drive(ycsb, opts, layout, before_measure)
}

/// A YCSB phase's stages: the store is opened before the cache scenario,
/// the generators built after it, outside the window; the store is closed
/// inside the window (its last flush is the phase's I/O).
struct Ycsb<'a> {
    plan: &'a YcsbPlan,
    desc: Option<&'static store::StoreDesc>,
    made: Option<StoreDir>,
    store: Option<Box<dyn kvstore::Store>>,
    field_names: Vec<String>,
    shared_device: Option<String>,
    armed: Option<Armed>,
}

/// What the client threads share, built before the window opens.
struct Armed {
    threads: u32,
    per: u64,
    rest: u64,
    tick_ns: Option<u64>,
    insert_keys: gen::InsertKeys,
    acked: Arc<gen::AcknowledgedCounter>,
    gens: client::Gens,
    t0: Instant,
}

/// What the measured phase ended with.
struct Ran {
    outcomes: Vec<client::Outcome>,
    runtime: Duration,
    partial: bool,
    store_counters: BTreeMap<String, u64>,
    closed: Result<(), String>,
}

impl Ran {
    fn error(&self) -> Option<String> {
        self.outcomes.iter().find_map(|o| o.error.clone()).or(self.closed.clone().err())
    }
}

impl OneGroup for Ycsb<'_> {
    type Ran = Ran;

    fn label(&self) -> String {
        format!("ycsb {}", self.plan.phase.name())
    }

    fn places(&self) -> Vec<PathBuf> {
        self.plan.store.dir.iter().cloned().collect()
    }

    fn expected(&self) -> Expected {
        let plan = self.plan;
        Expected {
            ops: plan.operationcount,
            time: (plan.maxexecutiontime_s > 0).then(|| Duration::from_secs(plan.maxexecutiontime_s)),
            ..Default::default()
        }
    }

    fn check(&mut self, opts: &RunOptions) -> Result<(), RunError> {
        let plan = self.plan;
        let desc = store::find(&plan.store.name).ok_or_else(|| format!("unknown store {}", plan.store.name))?;
        if let Some(d) = &plan.store.dir {
            let reduce = "reduce recordcount, insertcount, operationcount, fieldcount or fieldlength";
            crate::environment::space::check(&[space_need(plan, d)], opts.allow_fill, reduce)
                .map_err(|e| format!("{}.dir={}: {e}", desc.name, d.display()))?;
        }
        self.desc = Some(desc);
        Ok(())
    }

    fn claim(&mut self, _opts: &RunOptions) -> Result<(), RunError> {
        let desc = self.desc.ok_or_else(|| format!("unknown store {}", self.plan.store.name))?;
        self.made = Some(StoreDir::make(self.plan.store.dir.as_deref(), desc.name)?);
        Ok(())
    }

    fn set_up(&mut self, _opts: &RunOptions, warnings: &mut Warnings) -> Result<(), RunError> {
        let plan = self.plan;
        let desc = self.desc.ok_or_else(|| format!("unknown store {}", plan.store.name))?;
        self.field_names = plan.field_names();
        let cfg = StoreConfig {
            dir: plan.store.dir.clone(),
            props: plan.store.props.clone(),
            table: plan.table.clone(),
            field_names: self.field_names.clone(),
            threads: plan.threads,
        };
        let store = self.store.insert(kvstore::open(desc, &cfg).map_err(RunError::Workload)?);
        if plan.phase == Phase::Run && store.is_empty().map_err(RunError::Workload)? {
            let at = plan.store.dir.as_ref().map(|d| format!(" in {}", d.display())).unwrap_or_default();
            return Err(RunError::Workload(format!(
                "the {} store{at} holds no record in table {}: load first (fsbench ycsb load {} ...)",
                desc.name, plan.table, desc.name
            )));
        }
        self.shared_device = plan.store.dir.as_deref().and_then(crate::environment::safety::shared_device);
        if let (Some(why), Some(d)) = (&self.shared_device, &plan.store.dir) {
            warnings.warn(Warning::new(
                Code::DeviceShared,
                format!(
                    "{}.dir={}: {why}: the device's bytes and the write amplification count that I/O too and are upper bounds, \
                 not the store's own (a store on a device of its own, such as an experiment's managed target, gives its own)",
                    desc.name,
                    d.display()
                ),
            ));
        }
        Ok(())
    }

    fn data_files(&self) -> Vec<PathBuf> {
        self.places()
    }

    fn arm(&mut self, _opts: &RunOptions) -> Result<(), RunError> {
        let plan = self.plan;
        // The Client caps the threads at the operation count.
        let threads =
            if plan.operationcount > 0 { plan.threads.min(plan.operationcount.min(u32::MAX as u64) as u32).max(1) } else { plan.threads };
        let acked = Arc::new(gen::AcknowledgedCounter::for_plan(plan));
        let gens = client::Gens::new(plan, acked.clone(), Arc::new(AtomicU64::new(0))).map_err(RunError::Workload)?;
        self.armed = Some(Armed {
            threads,
            per: plan.operationcount / u64::from(threads),
            rest: plan.operationcount % u64::from(threads),
            tick_ns: (plan.target_ops > 0.0).then(|| (1e9 * f64::from(threads) / plan.target_ops).max(1.0) as u64),
            insert_keys: gen::InsertKeys::for_plan(plan),
            acked,
            gens,
            t0: Instant::now(),
        });
        Ok(())
    }

    fn run(&mut self, opts: &RunOptions, meter: &Arc<Meter>, _warnings: &mut Warnings) -> Result<Ran, RunError> {
        let plan = self.plan;
        let (Some(armed), Some(store)) = (self.armed.take(), self.store.take()) else {
            return Err(RunError::Workload("ycsb: the phase ran before its store was open".into()));
        };
        let Armed { threads, per, rest, tick_ns, insert_keys, acked, gens, t0: shared_t0 } = armed;
        let stop = Arc::new(AtomicBool::new(false));
        let with_status = plan.status_interval_s.is_some();
        let shared = client::Shared {
            plan,
            store: store.as_ref(),
            stop: &stop,
            insert_keys,
            acked,
            gens,
            field_names: self.field_names.clone(),
            t0: shared_t0,
        };
        let (op, intended) = match plan.interval {
            Interval::Op => (true, false),
            Interval::Intended => (false, true),
            Interval::Both => (true, true),
        };
        let unit_ns = match plan.measurement {
            Measurement::Timeseries { granularity_ms } => Some(granularity_ms * 1_000_000),
            Measurement::Hdr => None,
        };
        let parts: Vec<(client::Part, Option<Arc<Live>>)> = (0..threads)
            .map(|i| {
                let ops = per + u64::from(u64::from(i) < rest);
                (client::Part { index: i, ops, tick_ns, done: Arc::new(AtomicU64::new(0)) }, with_status.then(|| Arc::new(Live::new())))
            })
            .collect();
        let counters: Vec<Arc<AtomicU64>> = parts.iter().map(|(p, _)| p.done.clone()).collect();
        let lives: Vec<Arc<Live>> = parts.iter().filter_map(|(_, l)| l.clone()).collect();
        // Each thread says when it ends (also by panicking), so the watcher
        // returns at once rather than at its next poll.
        let (ended_tx, ended_rx) = mpsc::channel::<()>();
        let t0 = Instant::now();
        let outcomes: Vec<client::Outcome> = std::thread::scope(|s| {
            let handles: Vec<_> = parts
                .into_iter()
                .map(|(part, live)| {
                    let sh = &shared;
                    let ended = EndNotice(ended_tx.clone());
                    crate::runner::workers::spawn_scoped(s, format!("fsb-ycsb-{}", part.index), move || {
                        let _ended = ended;
                        let rec = Recorder::new(op, intended, unit_ns, sh.t0, live);
                        client::run(sh, part, rec)
                    })
                })
                .collect();
            if handles.iter().any(|h| h.is_err()) {
                // The run has failed: the threads that started stop now.
                stop.store(true, Ordering::Relaxed);
            }
            watch(plan, opts, &stop, &counters, &lives, meter, t0, &handles, &ended_rx);
            handles
                .into_iter()
                .map(|h| match h {
                    Ok(h) => h.join().unwrap_or_else(|_| failed_outcome("a client thread panicked")),
                    Err(e) => failed_outcome(&format!("cannot start a client thread: {e}")),
                })
                .collect()
        });
        // YCSB's RunTime: from the threads' start to the end of the last one,
        // by the threads' own clocks (the watcher's wake-ups are not in it).
        let runtime = outcomes.iter().map(|o| o.ended).max().unwrap_or(t0).saturating_duration_since(t0);
        let partial = opts.stop.load(Ordering::Relaxed);
        let store_counters: BTreeMap<String, u64> = store.counters().into_iter().collect();
        let closed = store.close();
        Ok(Ran { outcomes, runtime, partial, store_counters, closed })
    }

    fn tear_down(&mut self, _opts: &RunOptions, ran: Option<&Ran>) -> Result<(), RunError> {
        // The store goes before its directory.
        self.store = None;
        if let Some(made) = self.made.take() {
            made.finish(ran.is_none_or(|r| r.partial || r.error().is_some()));
        }
        Ok(())
    }

    fn finish(self, ran: Ran, _: &mut GroupResult, _: &RunOptions, warnings: &mut Warnings) -> Result<Finished, RunError> {
        if let Some(e) = ran.outcomes.iter().find_map(|o| o.first_op_error.clone()) {
            warnings.warn(Warning::new(
                Code::OperationsFailed,
                format!("the store answered ERROR (counted as Return=ERROR, as YCSB does); the first: {e}"),
            ));
        }
        let job = result(self.plan, ran, self.shared_device, warnings);
        let partial = job.partial;
        Ok(Finished { jobs: vec![job], partial })
    }
}

/// What the phase's records take in the store's directory, at least: each
/// record its key and fields (a store adds its own overhead, an LSM tree its
/// compactions' temporary copies), for every record a load inserts or a run
/// is expected to insert; and the files a store makes (an LSM tree's table
/// of some tens of MiB each, its logs and manifests).
fn space_need(plan: &YcsbPlan, dir: &std::path::Path) -> crate::environment::space::Need {
    let records = match plan.phase {
        Phase::Load => plan.operationcount,
        Phase::Run => {
            let p = &plan.proportions;
            let sum = p.read + p.update + p.insert + p.scan + p.read_modify_write;
            if sum > 0.0 {
                (plan.operationcount as f64 * p.insert / sum) as u64
            } else {
                0
            }
        }
    };
    // "user" and the key number: a hashed one has up to 19 digits.
    let digits = if plan.hashed_inserts { 19 } else { (plan.recordcount.saturating_add(plan.operationcount) as f64).log10() as u64 + 1 };
    let key = 4 + digits.max(u64::from(plan.zeropadding));
    let record = key as f64 + f64::from(plan.fieldcount) * plan.fieldlength.mean();
    let bytes = (records as f64 * record).min(u64::MAX as f64) as u64;
    crate::environment::space::Need::new_in(dir, bytes).with_inodes(16 + bytes / (32 << 20))
}

/// The store's directory when this run made it: on record (with its
/// identity) while the run lasts, so a killed load leaves what `fsbench
/// cleanup` removes; removed when the run fails, stops or cannot start,
/// the user's once a run completes (a loaded store is what `load` is for).
struct StoreDir(Option<Token>);

impl StoreDir {
    fn make(dir: Option<&Path>, store: &str) -> Result<StoreDir, String> {
        let Some(d) = dir else { return Ok(StoreDir(None)) };
        // The outermost directory that is missing is the one this run makes.
        let mut top = None;
        let mut cur = Some(d);
        while let Some(p) = cur.filter(|p| !p.as_os_str().is_empty() && std::fs::symlink_metadata(p).is_err()) {
            top = Some(p.to_path_buf());
            cur = p.parent();
        }
        std::fs::create_dir_all(d).map_err(|e| format!("{store}.dir={}: cannot create it: {e}", d.display()))?;
        Ok(StoreDir(top.map(|t| cleanup::made_dir(&t))))
    }

    fn finish(mut self, failed: bool) {
        if let Some(t) = self.0.take() {
            if failed {
                let _ = t.done();
            } else {
                t.forget();
            }
        }
    }
}

impl Drop for StoreDir {
    fn drop(&mut self) {
        if let Some(t) = self.0.take() {
            let _ = t.done();
        }
    }
}

fn failed_outcome(msg: &str) -> client::Outcome {
    let now = Instant::now();
    client::Outcome {
        rec: Recorder::new(false, false, None, now, None),
        ops_done: 0,
        error: Some(msg.to_string()),
        first_op_error: None,
        ended: now,
    }
}

/// Sent when dropped: a client thread has ended, however it ended.
struct EndNotice(mpsc::Sender<()>);

impl Drop for EndNotice {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// While the threads run: stop them at `maxexecutiontime` or Ctrl-C, keep
/// the progress meter current, print YCSB's status lines.
#[allow(clippy::too_many_arguments)]
fn watch<T>(
    plan: &YcsbPlan,
    opts: &RunOptions,
    stop: &AtomicBool,
    counters: &[Arc<AtomicU64>],
    lives: &[Arc<Live>],
    meter: &Meter,
    t0: Instant,
    handles: &[std::io::Result<std::thread::ScopedJoinHandle<'_, T>>],
    ended: &mpsc::Receiver<()>,
) {
    // The frontend bounds both; a deadline past what the clock holds is none.
    let deadline = (plan.maxexecutiontime_s > 0).then(|| t0.checked_add(Duration::from_secs(plan.maxexecutiontime_s))).flatten();
    let status_every = plan.status_interval_s.map(Duration::from_secs);
    let mut next_status = status_every.and_then(|d| t0.checked_add(d));
    let started = handles.iter().filter(|h| h.is_ok()).count();
    let mut ended_count = 0;
    let mut last = Snapshot::new();
    let (mut last_ops, mut last_at) = (0u64, t0);
    let done = |c: &[Arc<AtomicU64>]| c.iter().map(|x| x.load(Ordering::Relaxed)).sum::<u64>();
    if status_every.is_some() {
        opts.events.note(&status_line(plan, t0, t0, 0, 0, t0, &last, &last));
    }
    loop {
        let all_done = ended_count >= started || handles.iter().all(|h| h.as_ref().map(|h| h.is_finished()).unwrap_or(true));
        let now = Instant::now();
        let ops = done(counters);
        meter.ops.store(ops, Ordering::Relaxed);
        if opts.stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| now >= d) {
            stop.store(true, Ordering::Relaxed);
        }
        let status_due = next_status.is_some_and(|t| now >= t);
        if status_due || (all_done && status_every.is_some()) {
            let mut snap = Snapshot::new();
            for l in lives {
                l.snapshot(&mut snap);
            }
            opts.events.note(&status_line(plan, t0, last_at, last_ops, ops, now, &snap, &last));
            last = snap;
            last_ops = ops;
            last_at = now;
            if let (Some(t), Some(d)) = (next_status, status_every) {
                next_status = t.checked_add(d);
            }
        }
        if all_done {
            return;
        }
        // Wake for the next status line, a stop, or a thread's end.
        let mut wait = Duration::from_millis(50);
        for t in [next_status, deadline].into_iter().flatten() {
            wait = wait.min(t.saturating_duration_since(Instant::now()));
        }
        if ended.recv_timeout(wait).is_ok() {
            ended_count += 1;
        }
    }
}

/// YCSB's status line: `DATE TIME N sec: OPS operations; X current ops/sec;
/// est completion in T [READ: …] …`.
#[allow(clippy::too_many_arguments)]
fn status_line(
    plan: &YcsbPlan,
    t0: Instant,
    since: Instant,
    ops_before: u64,
    ops: u64,
    now: Instant,
    snap: &Snapshot,
    last: &Snapshot,
) -> String {
    let elapsed_ms = now.duration_since(t0).as_millis() as u64;
    let mut msg = format!("{}{} {} sec: {ops} operations; ", plan.label, crate::units::local_time_ms(), elapsed_ms / 1000);
    if ops != 0 {
        let cur = 1000.0 * (ops - ops_before) as f64 / now.duration_since(since).as_millis().max(1) as f64;
        msg.push_str(&format!("{} current ops/sec; ", crate::units::java::decimal2(cur)));
    }
    let todo = plan.operationcount.saturating_sub(ops);
    if todo != 0 {
        let throughput = 1000.0 * ops as f64 / elapsed_ms.max(1) as f64;
        let remaining = if throughput > 0.0 { (todo as f64 / throughput).ceil() as u64 } else { 0 };
        msg.push_str(&format!("est completion in {}", remaining_text(remaining)));
    }
    let names: Vec<String> = Metric::ALL.iter().map(|m| m.name().to_string()).collect();
    for name in ycsb_order(&names) {
        let Some(&m) = Metric::ALL.iter().find(|m| m.name() == name) else { continue };
        if let Some(s) = snap.interval_summary(last, m, m.name()) {
            msg.push_str(&s);
            msg.push(' ');
        }
    }
    msg
}

/// YCSB's RemainingFormatter, its quirks included ("1 second", "12 seconds",
/// minutes dropping the seconds, days dropping the minutes).
fn remaining_text(mut s: u64) -> String {
    let mut t = String::new();
    let days = s / 86_400;
    if days > 0 {
        t.push_str(&format!("{days} {}", if days == 1 { "day " } else { "days " }));
        s -= days * 86_400;
    }
    let hours = s / 3600;
    if hours > 0 {
        t.push_str(&format!("{hours} {}", if hours == 1 { "hour " } else { "hours " }));
        s -= hours * 3600;
    }
    if days < 1 {
        let minutes = s / 60;
        if minutes > 0 {
            t.push_str(&format!("{minutes} {}", if minutes == 1 { "minute " } else { "minutes " }));
        }
    }
    if t.is_empty() {
        let digits = s.to_string();
        // YCSB tests the length of the text so far, which is the number's.
        let unit = if digits.len() == 1 { " second " } else { " seconds " };
        t = format!("{digits}{unit}");
    }
    t
}

/// The phase's one job, YCSB's figures in its details.
fn result(plan: &YcsbPlan, ran: Ran, shared_device: Option<String>, warnings: &mut Warnings) -> JobResult {
    let error = ran.error();
    let Ran { outcomes, runtime, partial, store_counters, .. } = ran;
    let mut ops: Vec<OpStats> = Vec::new();
    let mut returns: BTreeMap<String, BTreeMap<String, u64>> = BTreeMap::new();
    let mut timeseries: BTreeMap<String, Vec<(u64, u64, u64)>> = BTreeMap::new();
    let unit_ms = match plan.measurement {
        Measurement::Timeseries { granularity_ms } => granularity_ms,
        Measurement::Hdr => 0,
    };
    let operations: u64 = outcomes.iter().map(|o| o.ops_done).sum();
    let bytes = |m: Metric| -> u64 { outcomes.iter().map(|o| o.rec.bytes[m as usize]).sum() };
    let client_bytes_written = bytes(Metric::Insert) + bytes(Metric::Update);
    for m in Metric::ALL {
        let i = m as usize;
        for (prefix, intended) in [("", false), ("Intended-", true)] {
            let name = format!("{prefix}{}", m.name());
            let mut hist: Option<crate::measure::hist::LatencyHist> = None;
            let mut units: Vec<(u64, u64)> = Vec::new();
            for o in &outcomes {
                let s = &o.rec.series[i];
                let (h, u) = if intended { (&s.intended, &s.intended_units) } else { (&s.hist, &s.units) };
                if let Some(h) = h {
                    hist.get_or_insert_with(Default::default).merge(h);
                }
                if units.len() < u.len() {
                    units.resize(u.len(), (0, 0));
                }
                for (acc, x) in units.iter_mut().zip(u) {
                    acc.0 += x.0;
                    acc.1 += x.1;
                }
            }
            if !intended {
                let mut counts = BTreeMap::new();
                for st in Status::ALL {
                    let n: u64 = outcomes.iter().map(|o| o.rec.returns[i][st as usize]).sum();
                    if n > 0 {
                        counts.insert(st.name().to_string(), n);
                    }
                }
                if !counts.is_empty() {
                    returns.insert(name.clone(), counts);
                }
            }
            if let Some(h) = hist {
                let mut s = OpStats::new(&name, class(m), false);
                s.ops = h.count();
                // What the client handed the store or got back: the
                // benchmark's issued bytes in the attribution.
                s.bytes = if intended { 0 } else { bytes(m) };
                s.errors = if matches!(m, Metric::ReadFailed | Metric::UpdateFailed | Metric::InsertFailed | Metric::ScanFailed) {
                    h.count()
                } else {
                    0
                };
                s.lat = h;
                s.active_ns = Some(runtime.as_nanos() as u64);
                ops.push(s);
                if unit_ms > 0 {
                    let series = units.iter().enumerate().filter(|(_, u)| u.0 > 0).map(|(k, u)| (k as u64 * unit_ms, u.0, u.1)).collect();
                    timeseries.insert(name.clone(), series);
                }
            } else if returns.contains_key(&name) {
                ops.push(OpStats::new(&name, class(m), false));
            }
        }
    }
    let names: Vec<String> = ops.iter().map(|o| o.name.clone()).collect();
    let order = ycsb_order(&names);
    let error = error.or_else(|| failed_operations(&returns, warnings));
    let runtime_ms = runtime.as_millis() as u64;
    let details = YcsbDetails {
        settings: plan.clone(),
        runtime_ms,
        runtime_ns: runtime.as_nanos() as u64,
        operations,
        returns,
        timeseries,
        order,
        client_bytes_written,
        store_counters,
        shared_device,
    };
    let throughput = details.throughput();
    JobResult {
        name: format!("ycsb-{}", plan.phase.name()),
        group: 0,
        threads: plan.threads,
        engine: plan.store.name.clone(),
        elapsed_ns: runtime.as_nanos() as u64,
        ops,
        timeline: Default::default(),
        options: plan.properties.clone(),
        resolved: serde_json::to_value(plan).unwrap_or_default(),
        partial,
        error,
        headline: vec![Headline::new("throughput_ops_s", "ops/s", throughput)],
        details: serde_json::to_value(&details).ok(),
    }
}

/// The store operations that did not answer OK, said as a warning; when
/// none did, the run measured nothing that completed and is failed (its
/// error returned): a `run` whose every read is NOT_FOUND ran against
/// records that are not there.
fn failed_operations(returns: &BTreeMap<String, BTreeMap<String, u64>>, warnings: &mut Warnings) -> Option<String> {
    let ops = [Metric::Read, Metric::Update, Metric::Insert, Metric::Scan];
    let (mut ok, mut all) = (0u64, 0u64);
    let mut failed: Vec<String> = Vec::new();
    for m in ops {
        let Some(counts) = returns.get(m.name()) else { continue };
        for (st, n) in counts {
            all += n;
            if st == "OK" {
                ok += n;
            } else {
                failed.push(format!("{} {st} {n}", m.name()));
            }
        }
    }
    if failed.is_empty() {
        return None;
    }
    let list = failed.join(", ");
    if ok == 0 {
        let e = format!(
            "every one of the {all} operations failed ({list}): nothing completed, so this is not a measurement \
             (does the store hold the records this run asks for: the same table, recordcount, insertstart and insertorder as the load?)"
        );
        warnings.warn(Warning::new(Code::OperationsFailed, e.clone()));
        return Some(e);
    }
    warnings.warn(Warning::new(
        Code::OperationsFailed,
        format!("{} of {all} operations failed ({list}); the figures count them apart (-FAILED metrics)", all - ok),
    ));
    None
}

fn class(m: Metric) -> OpClass {
    match m {
        Metric::Read | Metric::ReadFailed | Metric::Scan | Metric::ScanFailed | Metric::ScanPerRecord => OpClass::DataRead,
        Metric::Update | Metric::UpdateFailed | Metric::Insert | Metric::InsertFailed | Metric::ReadModifyWrite => OpClass::DataWrite,
        Metric::Verify => OpClass::Idle,
        Metric::Cleanup => OpClass::Sync,
    }
}

/// The order YCSB prints its metrics in: the iteration order of Java's
/// ConcurrentHashMap (bins by the spread String.hashCode, 16 bins growing
/// at three quarters full), the plain metrics first, then the intended
/// ones; a tie in one bin keeps `Metric::ALL`'s order.
fn ycsb_order(names: &[String]) -> Vec<String> {
    let java_hash = |s: &str| s.encode_utf16().fold(0u32, |h, c| h.wrapping_mul(31).wrapping_add(u32::from(c)));
    let spread = |h: u32| (h ^ (h >> 16)) & 0x7fff_ffff;
    let mut out = Vec::new();
    for intended in [false, true] {
        let group: Vec<&String> = names.iter().filter(|n| n.starts_with("Intended-") == intended).collect();
        let mut bins = 16usize;
        while group.len() > bins * 3 / 4 {
            bins *= 2;
        }
        let mut keyed: Vec<(usize, usize, &String)> =
            group.iter().enumerate().map(|(k, n)| ((spread(java_hash(n)) as usize) & (bins - 1), k, *n)).collect();
        keyed.sort();
        out.extend(keyed.into_iter().map(|(_, _, n)| n.clone()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_in_the_order_java_ycsb_printed_them() {
        // Orders seen in Java YCSB's own output (workload F with
        // dataintegrity, workload E, a load).
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            ycsb_order(&s(&["READ", "UPDATE", "READ-MODIFY-WRITE", "VERIFY", "CLEANUP"])),
            s(&["READ", "READ-MODIFY-WRITE", "CLEANUP", "UPDATE", "VERIFY"])
        );
        assert_eq!(
            ycsb_order(&s(&["INSERT", "SCAN", "CLEANUP", "SCAN-LATENCY-PER-RECORD"])),
            s(&["CLEANUP", "SCAN-LATENCY-PER-RECORD", "INSERT", "SCAN"])
        );
        assert_eq!(
            ycsb_order(&s(&["INSERT", "CLEANUP", "Intended-INSERT", "Intended-CLEANUP"])),
            s(&["CLEANUP", "INSERT", "Intended-CLEANUP", "Intended-INSERT"])
        );
    }

    #[test]
    fn remaining_time_as_ycsb_words_it() {
        assert_eq!(remaining_text(0), "0 second ");
        assert_eq!(remaining_text(13), "13 seconds ");
        assert_eq!(remaining_text(61), "1 minute ");
        assert_eq!(remaining_text(3 * 3600 + 120), "3 hours 2 minutes ");
        assert_eq!(remaining_text(86_400 + 3600 + 60), "1 day 1 hour ");
    }

    #[test]
    fn interval_metrics_count() {
        assert_eq!(measure::METRICS, Metric::ALL.len());
    }
}
