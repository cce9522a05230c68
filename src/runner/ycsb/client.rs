//! One YCSB client thread: YCSB's ClientThread loop (throttled to its share
//! of `-target`, each operation's intended start time kept) around
//! CoreWorkload's operations, each measured as YCSB's DBWrapper measures
//! them. The store's session, the record buffers and the key buffer are
//! made once per thread; an operation allocates nothing.

use super::gen::{integrity_value, key_name, AcknowledgedCounter, FieldLengthGen, InsertKeys, KeyChooser, Op, OpChooser, ScanLengthGen};
use super::measure::{Metric, Recorder};
use crate::kvstore::{Fields, Record, Rows, Session, Status, Store};
use crate::model::ycsb::{Phase, YcsbPlan};
use crate::runner::rng::Rng;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The generators, built once (a `latest` chooser sums ζ over every
/// record) and cloned into each thread.
#[derive(Clone)]
pub struct Gens {
    pub ops: OpChooser,
    pub keys: KeyChooser,
    pub field_len: FieldLengthGen,
    pub scan_len: ScanLengthGen,
}

impl Gens {
    pub fn new(plan: &YcsbPlan, acked: Arc<AcknowledgedCounter>, sequential: Arc<AtomicU64>) -> Result<Gens, String> {
        Ok(Gens {
            ops: OpChooser::new(&plan.proportions)?,
            keys: KeyChooser::new(plan, acked, sequential)?,
            field_len: FieldLengthGen::new(&plan.fieldlength)?,
            scan_len: ScanLengthGen::new(plan.scanlengthdistribution, plan.minscanlength, plan.maxscanlength)?,
        })
    }
}

/// What every thread shares.
pub struct Shared<'a> {
    pub plan: &'a YcsbPlan,
    pub store: &'a dyn Store,
    pub stop: &'a AtomicBool,
    pub insert_keys: InsertKeys,
    pub acked: Arc<AcknowledgedCounter>,
    pub gens: Gens,
    pub field_names: Vec<String>,
    pub t0: Instant,
}

/// One thread's part.
pub struct Part {
    pub index: u32,
    /// Operations to do; 0 = until stopped.
    pub ops: u64,
    /// Nanoseconds between operations under `-target`.
    pub tick_ns: Option<u64>,
    /// Operations done, for the status thread and the progress meter.
    pub done: Arc<AtomicU64>,
}

/// What a thread ended with.
pub struct Outcome {
    pub rec: Recorder,
    pub ops_done: u64,
    /// What stopped the thread early (the run then failed).
    pub error: Option<String>,
    /// The first operation the store answered ERROR, with why: YCSB counts
    /// such operations (`Return=ERROR`) and goes on, and so does fsbench.
    pub first_op_error: Option<String>,
    /// When the thread was done (after its CLEANUP): the run's clock stops
    /// at the last of these, as YCSB's stops when it has joined every thread.
    pub ended: Instant,
}

struct Thread<'a, 's> {
    sh: &'a Shared<'a>,
    session: Box<dyn Session + 's>,
    rec: Recorder,
    rng: Rng,
    ops: OpChooser,
    keys: KeyChooser,
    field_len: FieldLengthGen,
    scan_len: ScanLengthGen,
    key: Vec<u8>,
    values: Record,
    out: Record,
    rows: Rows,
    one_field: [u32; 1],
    /// A field's expected value when checking integrity.
    want: Vec<u8>,
    first_error: Option<String>,
    /// Set when the thread cannot go on.
    fatal: Option<String>,
}

pub fn run(sh: &Shared, part: Part, rec: Recorder) -> Outcome {
    let plan = sh.plan;
    let session = match sh.store.session() {
        Ok(s) => s,
        Err(e) => {
            return Outcome {
                rec,
                ops_done: 0,
                error: Some(format!("thread {}: cannot open a session: {e}", part.index)),
                first_op_error: None,
                ended: Instant::now(),
            }
        }
    };
    let mut t = Thread {
        sh,
        session,
        rec,
        rng: Rng::new(plan.seed ^ (u64::from(part.index) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        ops: sh.gens.ops.clone(),
        keys: sh.gens.keys.clone(),
        field_len: sh.gens.field_len.clone(),
        scan_len: sh.gens.scan_len.clone(),
        key: Vec::with_capacity(32),
        values: Record::default(),
        out: Record::default(),
        rows: Rows::default(),
        one_field: [0],
        want: Vec::new(),
        first_error: None,
        fatal: None,
    };
    let start = Instant::now();
    let mut done = 0u64;
    // YCSB spreads the threads' first operations over one tick.
    if let Some(tick) = part.tick_ns {
        let wait = t.rng.below(tick.max(1));
        sleep_until(start + Duration::from_nanos(wait), sh.stop);
    }
    let mut stopped_by_error = None;
    while (part.ops == 0 || done < part.ops) && !sh.stop.load(Ordering::Relaxed) {
        let intended = match part.tick_ns {
            Some(tick) => {
                let at = start + Duration::from_nanos(done.saturating_mul(tick));
                sleep_until(at, sh.stop);
                at
            }
            None => Instant::now(),
        };
        let ok = match plan.phase {
            Phase::Load => t.load_one(intended),
            Phase::Run => {
                t.run_one(intended);
                t.fatal.is_none()
            }
        };
        if !ok {
            stopped_by_error = t.fatal.clone();
            break;
        }
        done += 1;
        part.done.store(done, Ordering::Relaxed);
    }
    let (i, s) = (Instant::now(), Instant::now());
    let cleaned = t.session.cleanup();
    let ended = Instant::now();
    t.rec.measure(Metric::Cleanup, i, s, ended);
    let error = match cleaned {
        Err(e) => stopped_by_error.or(Some(format!("cleanup: {e}"))),
        Ok(()) => stopped_by_error,
    };
    Outcome { rec: t.rec, ops_done: done, error, first_op_error: t.first_error, ended }
}

fn sleep_until(at: Instant, stop: &AtomicBool) {
    loop {
        let now = Instant::now();
        if now >= at || stop.load(Ordering::Relaxed) {
            return;
        }
        // Wake at least every 100 ms to notice a stop.
        std::thread::sleep((at - now).min(Duration::from_millis(100)));
    }
}

impl Thread<'_, '_> {
    fn note_error(&mut self, what: &str) {
        if self.first_error.is_none() {
            let why = self.session.last_error().unwrap_or_else(|| "the store answered ERROR".into());
            self.first_error = Some(format!("{what} {}: {why}", String::from_utf8_lossy(&self.key)));
        }
    }

    /// One store call, measured as YCSB's DBWrapper does.
    #[inline]
    fn timed(&mut self, m: Metric, intended: Instant, call: impl FnOnce(&mut Self) -> Status) -> Status {
        let start = Instant::now();
        let st = call(self);
        let end = Instant::now();
        self.rec.measure(m.outcome(st), intended, start, end);
        self.rec.status(m, st);
        if st == Status::Error {
            self.note_error(m.name());
        }
        st
    }

    /// All fields (an insert, or `writeallfields`), or one random field.
    fn build_values(&mut self, all: bool) {
        self.values.clear();
        let n = self.sh.plan.fieldcount;
        if all {
            for f in 0..n {
                self.push_value(f);
            }
        } else {
            let f = self.rng.below(u64::from(n)) as u32;
            self.push_value(f);
        }
    }

    fn push_value(&mut self, f: u32) {
        let len = self.field_len.next(&mut self.rng) as usize;
        let buf = self.values.push_with(f, len);
        if self.sh.plan.dataintegrity {
            integrity_value(&self.key, &self.sh.field_names[f as usize], buf);
        } else {
            random_printable(&mut self.rng, buf);
        }
    }

    /// A write the store took: the key and the fields handed to it.
    fn written(&mut self, m: Metric) {
        self.rec.bytes[m as usize] += (self.key.len() + self.values.bytes()) as u64;
    }

    fn read_fields(&mut self) -> bool {
        if self.sh.plan.readallfields {
            return true;
        }
        self.one_field[0] = self.rng.below(u64::from(self.sh.plan.fieldcount)) as u32;
        false
    }

    /// The load phase's insert (CoreWorkload.doInsert, with its retries).
    fn load_one(&mut self, intended: Instant) -> bool {
        let Some(keynum) = self.sh.insert_keys.next() else { return false };
        let plan = self.sh.plan;
        key_name(keynum, plan.hashed_inserts, plan.zeropadding, &mut self.key);
        self.build_values(true);
        let mut retries = 0;
        loop {
            let st = self.timed(Metric::Insert, intended, |t| t.session.insert(&t.key, &t.values));
            if st.is_ok() {
                self.written(Metric::Insert);
                return true;
            }
            retries += 1;
            if retries > plan.insertion_retry_limit || self.sh.stop.load(Ordering::Relaxed) {
                // YCSB's client thread stops at an insert it could not make.
                let why = self.session.last_error().unwrap_or_else(|| format!("the store answered {}", st.name()));
                self.fatal = Some(format!("INSERT {} failed ({} tries): {why}", String::from_utf8_lossy(&self.key), retries));
                return false;
            }
            // YCSB waits the interval ±20% before trying again.
            let ms =
                1000.0 * plan.insertion_retry_interval_s as f64 * (0.8 + 0.4 * (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64);
            sleep_until(Instant::now() + Duration::from_millis(ms as u64), self.sh.stop);
        }
    }

    fn run_one(&mut self, intended: Instant) {
        let plan = self.sh.plan;
        match self.ops.next(&mut self.rng) {
            Op::Read => {
                let keynum = self.keys.next(&mut self.rng);
                key_name(keynum, plan.hashed_inserts, plan.zeropadding, &mut self.key);
                let all = self.read_fields();
                self.read(intended, all);
                if plan.dataintegrity {
                    self.verify();
                }
            }
            Op::Update => {
                let keynum = self.keys.next(&mut self.rng);
                key_name(keynum, plan.hashed_inserts, plan.zeropadding, &mut self.key);
                self.build_values(plan.writeallfields);
                if self.timed(Metric::Update, intended, |t| t.session.update(&t.key, &t.values)).is_ok() {
                    self.written(Metric::Update);
                }
            }
            Op::Insert => {
                let keynum = self.sh.acked.next();
                key_name(keynum, plan.hashed_inserts, plan.zeropadding, &mut self.key);
                self.build_values(true);
                if self.timed(Metric::Insert, intended, |t| t.session.insert(&t.key, &t.values)).is_ok() {
                    self.written(Metric::Insert);
                }
                if let Err(e) = self.sh.acked.acknowledge(keynum) {
                    // YCSB's client thread dies on this: so does the run.
                    self.fatal.get_or_insert(e.to_string());
                }
            }
            Op::Scan => {
                let keynum = self.keys.next(&mut self.rng);
                key_name(keynum, plan.hashed_inserts, plan.zeropadding, &mut self.key);
                let len = self.scan_len.next(&mut self.rng) as usize;
                let all = self.read_fields();
                let start = Instant::now();
                let st = self.timed(Metric::Scan, intended, |t| {
                    let f = if all { Fields::All } else { Fields::Some(&t.one_field) };
                    t.session.scan(&t.key, len, f, &mut t.rows)
                });
                let ns = start.elapsed().as_nanos() as u64;
                if st.is_ok() {
                    self.rec.bytes[Metric::Scan as usize] += self.rows.bytes() as u64;
                }
                // YCSB divides by the rows returned (and fails on none).
                if !self.rows.is_empty() {
                    self.rec.measure_ns(Metric::ScanPerRecord, ns / self.rows.len() as u64);
                }
            }
            Op::ReadModifyWrite => {
                let keynum = self.keys.next(&mut self.rng);
                key_name(keynum, plan.hashed_inserts, plan.zeropadding, &mut self.key);
                let all = self.read_fields();
                self.build_values(plan.writeallfields);
                let start = Instant::now();
                self.read(intended, all);
                if self.timed(Metric::Update, intended, |t| t.session.update(&t.key, &t.values)).is_ok() {
                    self.written(Metric::Update);
                }
                let end = Instant::now();
                if plan.dataintegrity {
                    self.verify();
                }
                self.rec.measure(Metric::ReadModifyWrite, intended, start, end);
            }
        }
    }

    /// A read of all fields or the chosen one; what it returned counts as
    /// read bytes.
    fn read(&mut self, intended: Instant, all: bool) {
        let st = self.timed(Metric::Read, intended, |t| {
            let f = if all { Fields::All } else { Fields::Some(&t.one_field) };
            t.session.read(&t.key, f, &mut t.out)
        });
        if st.is_ok() {
            self.rec.bytes[Metric::Read as usize] += self.out.bytes() as u64;
        }
    }

    /// CoreWorkload.verifyRow: every field read must be the value derived
    /// from its key and name; nothing read is an error.
    fn verify(&mut self) {
        let start = Instant::now();
        let mut st = if self.out.is_empty() { Status::Error } else { Status::Ok };
        for (f, v) in self.out.iter() {
            self.want.resize(v.len(), 0);
            integrity_value(&self.key, &self.sh.field_names[f as usize], &mut self.want);
            if self.want != v {
                st = Status::UnexpectedState;
                break;
            }
        }
        let end = Instant::now();
        self.rec.measure(Metric::Verify, start, start, end);
        self.rec.status(Metric::Verify, st);
    }
}

/// YCSB's RandomByteIterator gives printable bytes from ' ' upwards.
#[inline]
fn random_printable(rng: &mut Rng, buf: &mut [u8]) {
    for chunk in buf.chunks_mut(8) {
        let r = rng.next_u64();
        for (i, b) in chunk.iter_mut().enumerate() {
            *b = b' ' + ((r >> (i * 6)) & 63) as u8;
        }
    }
}
