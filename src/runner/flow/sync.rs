//! What threads share while a flow runs: the end of the run, the start gate,
//! the event generator behind the `*limit` flowops, block/wakeup condition
//! variables, semblock/sempost semaphores, per-process counters and the
//! counters each thread publishes for the controller.
//!
//! Every blocking wait here wakes at least every 50 ms to look at the end of
//! the run, so Ctrl-C or the end of the duration never waits for a post or a
//! token that will not come.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

pub const POLL: Duration = Duration::from_millis(50);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Why the run ended early, as threads report it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Reason {
    None = 0,
    FirstDone = 1,
    Error = 2,
    /// A finishon* reached its value in timeout mode (a 1.4 script).
    FinishOn = 3,
}

#[derive(Default)]
pub struct RunCtl {
    /// Set once: threads finish the flowop they are in and stop.
    end: AtomicBool,
    /// Bumped when the warm-up ends: threads then zero their statistics.
    pub generation: AtomicU64,
    reason: AtomicU8,
    /// Worker threads still looping.
    pub running: AtomicUsize,
    error: Mutex<Option<String>>,
}

impl RunCtl {
    #[inline]
    pub fn ended(&self) -> bool {
        self.end.load(Ordering::Relaxed)
    }

    pub fn end(&self) {
        self.end.store(true, Ordering::SeqCst);
    }

    /// A thread hit its first shortage or finishon* in firstdone mode.
    pub fn first_done(&self) {
        let _ = self.reason.compare_exchange(0, Reason::FirstDone as u8, Ordering::SeqCst, Ordering::SeqCst);
        self.end();
    }

    /// A finishon* reached its value in timeout mode: the whole run ends,
    /// as in Filebench 1.4 (the WML frontend lets only 1.4 scripts here).
    pub fn finish_on(&self) {
        let _ = self.reason.compare_exchange(0, Reason::FinishOn as u8, Ordering::SeqCst, Ordering::SeqCst);
        self.end();
    }

    /// A thread cannot go on: the run ends and reports the first error.
    pub fn fail(&self, msg: String) {
        let mut e = lock(&self.error);
        if e.is_none() {
            *e = Some(msg);
        }
        drop(e);
        let _ = self.reason.compare_exchange(0, Reason::Error as u8, Ordering::SeqCst, Ordering::SeqCst);
        self.end();
    }

    pub fn reason(&self) -> Reason {
        match self.reason.load(Ordering::SeqCst) {
            1 => Reason::FirstDone,
            2 => Reason::Error,
            3 => Reason::FinishOn,
            _ => Reason::None,
        }
    }

    pub fn error(&self) -> Option<String> {
        lock(&self.error).clone()
    }
}

/// Threads arrive, then wait until the controller opens the gate, so all
/// start together and the statistics start with them.
#[derive(Default)]
pub struct Gate {
    ready: AtomicUsize,
    open: Mutex<bool>,
    cv: Condvar,
}

impl Gate {
    /// Returns false when the run ended before the gate opened.
    pub fn arrive_and_wait(&self, ctl: &RunCtl) -> bool {
        self.ready.fetch_add(1, Ordering::SeqCst);
        let mut open = lock(&self.open);
        while !*open {
            if ctl.ended() {
                return false;
            }
            open = self.cv.wait_timeout(open, POLL).map(|r| r.0).unwrap_or_else(|e| e.into_inner().0);
        }
        !ctl.ended()
    }

    /// Wait until `n` threads arrived (or the run ended, or `stop`).
    pub fn wait_ready(&self, n: usize, ctl: &RunCtl, stop: &AtomicBool) {
        while self.ready.load(Ordering::SeqCst) < n && !ctl.ended() && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    pub fn open(&self) {
        *lock(&self.open) = true;
        self.cv.notify_all();
    }
}

/// `eventgen rate=N`: a token bucket refilled by its own thread, `rate`
/// tokens per second up to 5 s worth. Waiters sleep on a condition variable;
/// nothing spins (Filebench's generator busy-spins at rate 0, where fsbench
/// has no generator at all).
pub struct EventGen {
    pub rate: u64,
    tokens: Mutex<f64>,
    cv: Condvar,
}

impl EventGen {
    pub fn new(rate: u64) -> EventGen {
        EventGen { rate, tokens: Mutex::new(0.0), cv: Condvar::new() }
    }

    fn cap(&self) -> f64 {
        5.0 * self.rate as f64
    }

    /// The generator loop, on its own thread until the run ends.
    pub fn run(&self, ctl: &RunCtl) {
        let tick = Duration::from_secs_f64((1.0 / self.rate.max(1) as f64).clamp(0.001, 0.1));
        let mut last = Instant::now();
        while !ctl.ended() {
            std::thread::sleep(tick);
            let now = Instant::now();
            let add = now.duration_since(last).as_secs_f64() * self.rate as f64;
            last = now;
            let mut t = lock(&self.tokens);
            *t = (*t + add).min(self.cap());
            drop(t);
            self.cv.notify_all();
        }
        self.cv.notify_all();
    }

    /// Take `events` tokens, waiting for them; false when the run ended
    /// first. A request larger than the bucket can hold takes a full bucket
    /// and leaves a debt, so it cannot wait forever.
    pub fn take(&self, events: f64, ctl: &RunCtl) -> bool {
        let need = events.min(self.cap());
        let mut t = lock(&self.tokens);
        loop {
            if *t >= need {
                *t -= events;
                return true;
            }
            if ctl.ended() {
                return false;
            }
            t = self.cv.wait_timeout(t, POLL).map(|r| r.0).unwrap_or_else(|e| e.into_inner().0);
        }
    }
}

/// A `block` flowop's condition variable; `wakeup` broadcasts it.
#[derive(Default)]
pub struct BlockCv {
    generation: Mutex<u64>,
    cv: Condvar,
}

impl BlockCv {
    pub fn wait(&self, ctl: &RunCtl) {
        let mut g = lock(&self.generation);
        let start = *g;
        while *g == start && !ctl.ended() {
            g = self.cv.wait_timeout(g, POLL).map(|r| r.0).unwrap_or_else(|e| e.into_inner().0);
        }
    }

    pub fn wake(&self) {
        *lock(&self.generation) += 1;
        self.cv.notify_all();
    }
}

/// One `semblock` instance. As in Filebench, it is a pair of counters: posts
/// waiting to be consumed, and credits (starting at `highwater`) that a
/// `blocking` sempost must take before it posts. semblock gives `value`
/// credits back, then waits for `value` posts; so a blocking poster can run
/// at most `highwater` (plus what the consumer released) posts ahead.
pub struct Sem {
    state: Mutex<(i64, i64)>,
    cv: Condvar,
}

impl Sem {
    pub fn new(highwater: u64) -> Sem {
        Sem { state: Mutex::new((0, highwater.min(i64::MAX as u64) as i64)), cv: Condvar::new() }
    }

    pub fn block(&self, value: u64, ctl: &RunCtl) {
        let v = value.min(i64::MAX as u64) as i64;
        let mut s = lock(&self.state);
        s.1 += v;
        self.cv.notify_all();
        while s.0 < v {
            if ctl.ended() {
                return;
            }
            s = self.cv.wait_timeout(s, POLL).map(|r| r.0).unwrap_or_else(|e| e.into_inner().0);
        }
        s.0 -= v;
    }

    pub fn post(&self, value: u64, blocking: bool, ctl: &RunCtl) {
        let v = value.min(i64::MAX as u64) as i64;
        let mut s = lock(&self.state);
        if blocking {
            while s.1 < v {
                if ctl.ended() {
                    return;
                }
                s = self.cv.wait_timeout(s, POLL).map(|r| r.0).unwrap_or_else(|e| e.into_inner().0);
            }
            s.1 -= v;
        }
        s.0 += v;
        self.cv.notify_all();
    }

    #[cfg(test)]
    pub fn counts(&self) -> (i64, i64) {
        *lock(&self.state)
    }
}

/// The credit of a rate-limiting flowop (iopslimit, opslimit, bwlimit), as
/// in Filebench: what was done since the last call is charged, and a
/// negative credit is paid for with events from the generator.
#[derive(Clone, Copy, Default)]
pub struct Bucket {
    started: bool,
    last: u64,
    credit: i64,
}

impl Bucket {
    /// Charge the counter's progress up to `now`; the events to wait for
    /// (0: none), or None on the first call, which only takes the reading.
    pub fn charge(&mut self, now: u64, unit: i64) -> Option<i64> {
        if !self.started {
            self.started = true;
            self.last = now;
            return None;
        }
        self.credit -= now.saturating_sub(self.last).min(i64::MAX as u64) as i64;
        self.last = self.last.max(now);
        Some(if self.credit < 0 { -self.credit / unit + i64::from(unit > 1) } else { 0 })
    }

    pub fn pay(&mut self, events: i64, unit: i64) {
        self.credit += events * unit;
    }
}

/// Buckets of limit flowops that count a shared counter (their process, or
/// a flowop of other threads): one per limit flowop name and counter, so
/// the threads together get the event rate. (In Filebench each thread's
/// bucket pays for the whole process's I/O, so N threads get 1/N of it.)
pub type SharedBucket = Mutex<Bucket>;

pub fn lock_bucket(b: &SharedBucket) -> MutexGuard<'_, Bucket> {
    lock(b)
}

/// I/O of one process instance, kept only when one of its threads has a
/// limit or finishon* flowop without a target (Filebench's per-process
/// control statistics).
#[derive(Default)]
pub struct ProcCounters {
    /// I/O-type flowop calls.
    pub io_ops: AtomicU64,
    /// Read- or write-attributed calls.
    pub rw_ops: AtomicU64,
    pub bytes: AtomicU64,
}

/// Cumulative counters of one flowop name in one thread, written only by
/// that thread (plain Relaxed stores) and read by the controller for the
/// timeline, psrun intervals, limits and finishon*.
#[derive(Default)]
pub struct PubSlot {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
    pub lat_ns: AtomicU64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn eventgen_paces_takers_without_spinning() {
        let ctl = Arc::new(RunCtl::default());
        let ev = Arc::new(EventGen::new(100));
        let (c2, e2) = (ctl.clone(), ev.clone());
        let gen = std::thread::spawn(move || e2.run(&c2));
        let t = Instant::now();
        let mut n = 0;
        while t.elapsed() < Duration::from_millis(1000) {
            if ev.take(1.0, &ctl) {
                n += 1;
            }
        }
        ctl.end();
        gen.join().unwrap();
        assert!((70..=130).contains(&n), "{n} events in 1 s at rate 100");
    }

    #[test]
    fn waits_end_with_the_run() {
        let ctl = Arc::new(RunCtl::default());
        let sem = Arc::new(Sem::new(0));
        let cv = Arc::new(BlockCv::default());
        let (c2, s2, v2) = (ctl.clone(), sem.clone(), cv.clone());
        let h = std::thread::spawn(move || {
            s2.block(10, &c2);
            s2.post(5, true, &c2);
            v2.wait(&c2);
        });
        std::thread::sleep(Duration::from_millis(100));
        let t = Instant::now();
        ctl.end();
        h.join().unwrap();
        assert!(t.elapsed() < Duration::from_millis(500));
    }

    #[test]
    fn blocking_posts_run_at_most_highwater_ahead() {
        let ctl = RunCtl::default();
        let sem = Sem::new(3);
        for _ in 0..3 {
            sem.post(1, true, &ctl);
        }
        assert_eq!(sem.counts(), (3, 0));
        sem.block(2, &ctl);
        assert_eq!(sem.counts(), (1, 2));
    }
}
