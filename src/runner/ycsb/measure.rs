//! Per-thread measurements of a YCSB phase, as YCSB's DBWrapper and
//! CoreWorkload take them: a latency histogram per metric (an operation, or
//! `<OP>-FAILED` when the store did not answer OK), the intended-start
//! latency beside it under `-target`, `Return=` counts per operation, and
//! per-time-unit sums with `measurementtype=timeseries`. Each thread owns
//! its `Recorder`; they are merged when the threads are done, so recording
//! takes no lock. With `-s` each thread also keeps cumulative bucket counts
//! that the status thread reads (single writer, relaxed loads and stores,
//! no read-modify-write) to print the interval's figures.

use crate::kvstore::Status;
use crate::measure::hist::LatencyHist;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The metrics YCSB records, in the order that breaks ties when its hash
/// map would put two in one bin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
    Verify,
    Cleanup,
    ScanPerRecord,
    ReadFailed,
    UpdateFailed,
    InsertFailed,
    ScanFailed,
}

pub const METRICS: usize = 12;

impl Metric {
    pub const ALL: [Metric; METRICS] = [
        Metric::Read,
        Metric::Update,
        Metric::Insert,
        Metric::Scan,
        Metric::ReadModifyWrite,
        Metric::Verify,
        Metric::Cleanup,
        Metric::ScanPerRecord,
        Metric::ReadFailed,
        Metric::UpdateFailed,
        Metric::InsertFailed,
        Metric::ScanFailed,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Read => "READ",
            Metric::Update => "UPDATE",
            Metric::Insert => "INSERT",
            Metric::Scan => "SCAN",
            Metric::ReadModifyWrite => "READ-MODIFY-WRITE",
            Metric::Verify => "VERIFY",
            Metric::Cleanup => "CLEANUP",
            Metric::ScanPerRecord => "SCAN-LATENCY-PER-RECORD",
            Metric::ReadFailed => "READ-FAILED",
            Metric::UpdateFailed => "UPDATE-FAILED",
            Metric::InsertFailed => "INSERT-FAILED",
            Metric::ScanFailed => "SCAN-FAILED",
        }
    }

    /// Where a store operation's latency goes: itself when OK, else its
    /// `-FAILED` twin (YCSB's DBWrapper).
    #[inline]
    pub fn outcome(self, st: Status) -> Metric {
        if st.is_ok() {
            return self;
        }
        match self {
            Metric::Read => Metric::ReadFailed,
            Metric::Update => Metric::UpdateFailed,
            Metric::Insert => Metric::InsertFailed,
            Metric::Scan => Metric::ScanFailed,
            m => m,
        }
    }
}

/// Bucket of a latency in µs for the status lines: exact below 128 µs,
/// then 64 buckets per power of two (under 1.6% error).
#[inline]
fn bucket(us: u64) -> usize {
    if us < 128 {
        return us as usize;
    }
    let e = 63 - us.leading_zeros() as usize;
    128 + (e - 7) * 64 + ((us >> (e - 6)) & 63) as usize
}

/// The largest µs value in bucket `b`.
fn bucket_top(b: usize) -> u64 {
    if b < 128 {
        return b as u64;
    }
    let e = (b - 128) / 64 + 7;
    let sub = ((b - 128) % 64) as u64;
    ((64 + sub + 1) << (e - 6)) - 1
}

const BUCKETS: usize = 128 + (64 - 7) * 64;

/// Cumulative counts a status thread reads while the owner writes.
pub struct Live {
    counts: Vec<[AtomicU64; BUCKETS]>,
    sums: [AtomicU64; METRICS],
}

impl Live {
    pub fn new() -> Live {
        Live {
            counts: (0..METRICS).map(|_| std::array::from_fn(|_| AtomicU64::new(0))).collect(),
            sums: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Only the owning thread calls this: a load and a store, no lock.
    #[inline]
    fn add(&self, m: Metric, us: u64) {
        let c = &self.counts[m as usize][bucket(us)];
        c.store(c.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        let s = &self.sums[m as usize];
        s.store(s.load(Ordering::Relaxed) + us, Ordering::Relaxed);
    }

    /// Add this thread's counts so far to `into` (per metric: buckets, sum).
    pub fn snapshot(&self, into: &mut Snapshot) {
        for m in 0..METRICS {
            for (acc, c) in into.counts[m].iter_mut().zip(&self.counts[m]) {
                *acc += c.load(Ordering::Relaxed);
            }
            into.sums[m] += self.sums[m].load(Ordering::Relaxed);
        }
    }
}

/// Every thread's counts at one moment, summed.
#[derive(Clone)]
pub struct Snapshot {
    pub counts: Vec<Vec<u64>>,
    pub sums: [u64; METRICS],
}

impl Snapshot {
    pub fn new() -> Snapshot {
        Snapshot { counts: vec![vec![0; BUCKETS]; METRICS], sums: [0; METRICS] }
    }

    /// YCSB's status summary of metric `m` between `earlier` and this:
    /// `[READ: Count=…, Max=…, Min=…, Avg=…, 50=…, 90=…, 99=…, 99.9=…, 99.99=…]`,
    /// or None when it has no operation in the interval.
    pub fn interval_summary(&self, earlier: &Snapshot, m: Metric, name: &str) -> Option<String> {
        let i = m as usize;
        let d: Vec<u64> = self.counts[i].iter().zip(&earlier.counts[i]).map(|(a, b)| a - b).collect();
        let n: u64 = d.iter().sum();
        if n == 0 {
            return None;
        }
        let min = d.iter().position(|&c| c > 0).map(bucket_top).unwrap_or(0);
        let max = d.iter().rposition(|&c| c > 0).map(bucket_top).unwrap_or(0);
        let avg = (self.sums[i] - earlier.sums[i]) as f64 / n as f64;
        let at = |p: f64| {
            let want = ((p / 100.0) * n as f64).ceil().max(1.0) as u64;
            let mut acc = 0;
            for (b, &c) in d.iter().enumerate() {
                acc += c;
                if acc >= want {
                    return bucket_top(b);
                }
            }
            max
        };
        let f = crate::units::java::decimal2;
        Some(format!(
            "[{name}: Count={n}, Max={max}, Min={min}, Avg={}, 50={}, 90={}, 99={}, 99.9={}, 99.99={}]",
            f(avg),
            at(50.0),
            at(90.0),
            at(99.0),
            at(99.9),
            at(99.99)
        ))
    }
}

/// One metric's figures in one thread.
#[derive(Default)]
pub struct Series {
    pub hist: Option<Box<LatencyHist>>,
    pub intended: Option<Box<LatencyHist>>,
    /// Per time unit: (operations, summed latency ns).
    pub units: Vec<(u64, u64)>,
    pub intended_units: Vec<(u64, u64)>,
}

/// A thread's measurements.
pub struct Recorder {
    pub series: Vec<Series>,
    /// `Return=` counts per metric (only the operations' own metrics).
    pub returns: [[u64; Status::ALL.len()]; METRICS],
    op: bool,
    intended: bool,
    /// Nanoseconds per time unit with `measurementtype=timeseries`.
    unit_ns: Option<u64>,
    t0: Instant,
    pub live: Option<std::sync::Arc<Live>>,
    /// Bytes per metric the store took (INSERT, UPDATE: key and fields
    /// written) or returned (READ, SCAN: fields read), OK operations only.
    pub bytes: [u64; METRICS],
}

impl Recorder {
    pub fn new(op: bool, intended: bool, unit_ns: Option<u64>, t0: Instant, live: Option<std::sync::Arc<Live>>) -> Recorder {
        Recorder {
            series: (0..METRICS).map(|_| Series::default()).collect(),
            returns: [[0; Status::ALL.len()]; METRICS],
            op,
            intended,
            unit_ns,
            t0,
            live,
            bytes: [0; METRICS],
        }
    }

    /// One measured span: `[start, end]`, intended to start at `intended`.
    #[inline]
    pub fn measure(&mut self, m: Metric, intended: Instant, start: Instant, end: Instant) {
        let ns = end.saturating_duration_since(start).as_nanos() as u64;
        let ins = end.saturating_duration_since(intended).as_nanos() as u64;
        let s = &mut self.series[m as usize];
        let unit = self.unit_ns.map(|u| (start.saturating_duration_since(self.t0).as_nanos() as u64 / u) as usize);
        if self.op {
            s.hist.get_or_insert_with(|| Box::new(LatencyHist::new())).record(ns);
            if let Some(u) = unit {
                add_unit(&mut s.units, u, ns);
            }
            if let Some(l) = &self.live {
                l.add(m, ns / 1000);
            }
        }
        if self.intended {
            s.intended.get_or_insert_with(|| Box::new(LatencyHist::new())).record(ins);
            if let Some(u) = unit {
                add_unit(&mut s.intended_units, u, ins);
            }
        }
    }

    /// A latency taken apart from a span (scan latency per record).
    #[inline]
    pub fn measure_ns(&mut self, m: Metric, ns: u64) {
        let now = Instant::now();
        let start = now.checked_sub(std::time::Duration::from_nanos(ns)).unwrap_or(now);
        let was = self.intended;
        // YCSB measures this one without an intended time.
        self.intended = false;
        self.measure(m, start, start, now);
        self.intended = was;
    }

    #[inline]
    pub fn status(&mut self, m: Metric, st: Status) {
        self.returns[m as usize][st as usize] += 1;
    }
}

#[inline]
fn add_unit(units: &mut Vec<(u64, u64)>, u: usize, ns: u64) {
    if u >= units.len() {
        // Once per time unit at most: a second by default.
        units.resize(u + 1, (0, 0));
    }
    units[u].0 += 1;
    units[u].1 += ns;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_cover_their_values() {
        let mut last = 0;
        for us in [0u64, 1, 127, 128, 129, 200, 1000, 65_535, 1 << 20, 3_600_000_000] {
            let b = bucket(us);
            assert!(b >= last && b < BUCKETS, "{us} -> {b}");
            assert!(bucket_top(b) >= us, "{us}: top {}", bucket_top(b));
            assert!(bucket_top(b) as f64 <= us as f64 * 1.016 + 1.0, "{us}: top {}", bucket_top(b));
            last = b;
        }
    }

    #[test]
    fn failed_operations_go_to_their_own_metric() {
        assert_eq!(Metric::Read.outcome(Status::NotFound), Metric::ReadFailed);
        assert_eq!(Metric::Read.outcome(Status::Ok), Metric::Read);
        assert_eq!(Metric::Verify.outcome(Status::UnexpectedState), Metric::Verify);
    }
}
