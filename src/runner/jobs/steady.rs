//! fio's two ways of ending a job on what it measures.
//!
//! Steady state (`ss`, `ss_dur`, `ss_ramp`): the worker's `Ticker` already
//! closes one-second intervals of completed I/O; at each close (once a
//! second, never per I/O) it hands the interval's I/Os and bytes to a
//! `Steady`. One `Steady` judges what fio judges together: a single clone,
//! or every clone of a group with `group_reporting`, whose seconds are
//! summed as fio's helper thread sums them. Once the window of `ss_dur`
//! seconds meets the criterion, `halt` tells those clones to stop.
//!
//! Latency target (`latency_target` and companions): `LatSearch` walks the
//! queue depth the way fio 3.33 does. Completions count themselves and the
//! ones over the target; the worker asks for a verdict when a window has
//! passed and applies it (a lower depth drains the queue first, the final
//! depth gets a fresh measurement window, the job ends once that window
//! also meets the target).

use crate::model::job::JobSpec;
use crate::model::job_steady::{LatencyTarget, SteadyMetric, SteadyState};
use crate::result::steady::SteadyReport;
use crate::result::warning::{Code, Warning};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// fio rejects a job whose steady-state settings differ from another's in
/// its group (with or without group_reporting); so does fsbench, before
/// anything runs.
pub fn check_groups(jobs: &[JobSpec], groups: &[Vec<usize>]) -> Result<(), String> {
    for g in groups {
        let Some(&first) = g.first() else { continue };
        if let Some(&odd) = g.iter().find(|&&j| !jobs[j].misc.steady.same_as(&jobs[first].misc.steady)) {
            return Err(format!(
                "job '{}': its steadystate/ss_dur/ss_ramp differ from job '{}' in the same group, which fio rejects \
                 (\"steadystate options must be consistent within reporting groups\"); give both the same settings \
                 or start a new reporting group with new_group or stonewall",
                jobs[odd].name, jobs[first].name
            ));
        }
    }
    Ok(())
}

/// What the options do differently here, said once per job.
pub fn warnings(spec: &JobSpec, engine: &str, is_async: bool) -> Vec<Warning> {
    let mut w = Vec::new();
    if spec.misc.latency.enabled() && !is_async {
        w.push(Warning::new(
            Code::IodepthNoEffect,
            format!(
                "job '{}': latency_target with ioengine={engine}: a synchronous engine keeps one I/O in flight, so the queue-depth search can only report depth 1",
                spec.name
            ),
        ));
    }
    w
}

/// The sliding window of one steady-state judgement.
struct Window {
    spec: SteadyState,
    /// Seconds of the measured window that come before `ss_ramp` ends.
    skip: u64,
    /// Ring buffers of `dur_s` samples; `n % len` is the oldest once full.
    iops: Vec<u64>,
    bw: Vec<u64>,
    n: u64,
    attained: bool,
    criterion: f64,
    deviation: f64,
    slope: f64,
}

impl Window {
    fn new(spec: &SteadyState) -> Window {
        let d = spec.dur_s.max(1) as usize;
        Window {
            spec: spec.clone(),
            skip: spec.ramp.as_nanos().div_ceil(1_000_000_000) as u64,
            iops: vec![0; d],
            bw: vec![0; d],
            n: 0,
            attained: false,
            criterion: 0.0,
            deviation: 0.0,
            slope: 0.0,
        }
    }

    /// Add one second; true once the criterion is met.
    fn push(&mut self, ios: u64, bytes: u64) -> bool {
        let d = self.iops.len();
        let at = (self.n % d as u64) as usize;
        self.iops[at] = ios;
        self.bw[at] = bytes;
        self.n += 1;
        if self.n < d as u64 {
            return false;
        }
        let ring = if self.spec.metric == SteadyMetric::Iops { &self.iops } else { &self.bw };
        let oldest = (self.n % d as u64) as usize;
        let ys = || (0..d).map(|k| ring[(oldest + k) % d] as f64);
        let n = d as f64;
        let mean = ys().sum::<f64>() / n;
        // Against the mean when the limit is a percentage; a zero mean
        // gives NaN or infinity, which no limit passes (as in fio).
        let scale = |x: f64| if self.spec.percent { 100.0 * x / mean } else { x };
        if self.spec.slope {
            // Least squares over x = 0..d-1, one sample per second.
            let sum_x = n * (n - 1.0) / 2.0;
            let sum_x2 = (n - 1.0) * n * (2.0 * n - 1.0) / 6.0;
            let sum_xy: f64 = ys().enumerate().map(|(x, y)| x as f64 * y).sum();
            let sum_y = mean * n;
            self.slope = (sum_xy - sum_x * sum_y / n) / (sum_x2 - sum_x * sum_x / n);
            self.criterion = scale(self.slope);
            self.attained = self.criterion.abs() < self.spec.limit;
        } else {
            self.deviation = ys().map(|y| (y - mean).abs()).fold(0.0, f64::max);
            self.criterion = scale(self.deviation);
            self.attained = self.criterion < self.spec.limit;
        }
        self.attained
    }

    fn report(&self) -> SteadyReport {
        let d = self.iops.len();
        // Oldest first; a window that never filled starts at its first slot.
        let from = if self.n < d as u64 { 0 } else { (self.n % d as u64) as usize };
        let order = |v: &[u64]| (0..d).map(|k| v[(from + k) % d]).collect();
        let fin = |x: f64| if x.is_finite() { x } else { 0.0 };
        SteadyReport {
            ss: self.spec.label(),
            iops_metric: self.spec.metric == SteadyMetric::Iops,
            slope_mode: self.spec.slope,
            percent: self.spec.percent,
            limit: self.spec.limit,
            duration: self.spec.dur_s,
            attained: self.attained,
            criterion: fin(self.criterion),
            max_deviation: fin(self.deviation),
            slope: fin(self.slope),
            samples: self.n,
            iops: order(&self.iops),
            bw: order(&self.bw),
        }
    }
}

/// One second of some clones, summed until every clone still running has
/// told its part.
struct Pending {
    sec: u64,
    ios: u64,
    bytes: u64,
    told: u32,
}

struct Inner {
    window: Window,
    live: u32,
    pending: VecDeque<Pending>,
}

impl Inner {
    fn flush(&mut self, halt: &AtomicBool) {
        while self.pending.front().is_some_and(|p| p.told >= self.live) && !self.window.attained {
            let Some(p) = self.pending.pop_front() else { break };
            if self.window.push(p.ios, p.bytes) {
                halt.store(true, Ordering::Relaxed);
                self.pending.clear();
            }
        }
    }
}

/// The steady-state judgement shared by the clones fio judges together.
pub struct Steady {
    inner: Mutex<Inner>,
    halt: AtomicBool,
}

impl Steady {
    pub fn new(spec: &SteadyState, clones: u32) -> Arc<Steady> {
        Arc::new(Steady {
            inner: Mutex::new(Inner { window: Window::new(spec), live: clones, pending: VecDeque::new() }),
            halt: AtomicBool::new(false),
        })
    }

    /// The criterion was met: the clones stop.
    #[inline]
    pub fn halted(&self) -> bool {
        self.halt.load(Ordering::Relaxed)
    }

    /// Second `sec` of a clone's measured window has closed with `ios` I/Os
    /// of `bytes` (reads, writes and trims, as fio counts them).
    pub fn second(&self, sec: u64, ios: u64, bytes: u64) {
        let Ok(mut g) = self.inner.lock() else { return };
        if g.window.attained || sec < g.window.skip {
            return;
        }
        // Clones close their seconds a few ms apart, in order each.
        let at = g.pending.iter().position(|p| p.sec >= sec).unwrap_or(g.pending.len());
        match g.pending.get_mut(at) {
            Some(p) if p.sec == sec => {
                p.ios += ios;
                p.bytes += bytes;
                p.told += 1;
            }
            _ => g.pending.insert(at, Pending { sec, ios, bytes, told: 1 }),
        }
        g.flush(&self.halt);
    }

    /// A clone has ended: the others' seconds no longer wait for it.
    pub fn leave(&self) {
        let Ok(mut g) = self.inner.lock() else { return };
        g.live = g.live.saturating_sub(1);
        if g.live > 0 {
            g.flush(&self.halt);
        }
    }

    pub fn report(&self) -> Option<SteadyReport> {
        self.inner.lock().ok().map(|g| g.window.report())
    }
}

/// Ends a clone's part in its `Steady` however the worker ends.
pub struct LeaveGuard(pub Option<Arc<Steady>>);

impl Drop for LeaveGuard {
    fn drop(&mut self) {
        if let Some(s) = &self.0 {
            s.leave();
        }
    }
}

/// What the worker does after a latency-target verdict.
#[derive(Debug, PartialEq, Eq)]
pub enum LatStep {
    /// Go on at `qd` with a new window (a higher depth, or latency_run).
    Next,
    /// Drain the queue, then go on at the lower `qd` with a new window.
    Lower,
    /// The depth has settled: drain, forget what was measured so far, and
    /// measure one more window at it.
    FinalRun,
    /// The final window met the target too: the job ends.
    Done,
    /// Failing at depth 1: nothing lower to try; the window goes on
    /// accumulating, as in fio.
    Stuck,
    /// latency_percentile=100 and an I/O over the target at depth 1: fio
    /// fails the job.
    Fatal,
}

/// fio's latency-target search over the depths 1..=max.
pub struct LatSearch {
    target_ns: u64,
    window: Duration,
    percentile: f64,
    run: bool,
    max: usize,
    pub qd: usize,
    low: usize,
    high: usize,
    /// Successes in a row at `qd + 1 == high`; at 3 fio tries one deeper.
    stable: u32,
    end_run: bool,
    /// The worker asks for a verdict once `now` reaches this.
    pub due: Instant,
    ios: u64,
    failed: u64,
    /// latency_percentile=100 and an I/O missed: act before the window ends.
    strict_miss: bool,
    /// The worst over-target latency that caused `strict_miss`.
    pub worst_ns: u64,
}

impl LatSearch {
    pub fn new(t: &LatencyTarget, max: usize, now: Instant) -> LatSearch {
        let mut s = LatSearch {
            target_ns: t.target_ns,
            window: Duration::from_micros(t.window_us),
            percentile: t.percentile,
            run: t.run,
            max: max.max(1),
            qd: 1,
            low: 1,
            high: max.max(1),
            stable: 0,
            end_run: false,
            due: now,
            ios: 0,
            failed: 0,
            strict_miss: false,
            worst_ns: 0,
        };
        s.new_cycle(now);
        s
    }

    /// The ramp is over: start again from depth 1 (fio re-initialises the
    /// search when it resets its statistics), unless in the final run.
    pub fn restart(&mut self, now: Instant) {
        if !self.end_run {
            *self = LatSearch { stable: self.stable, ..LatSearch::new_like(self, now) };
        }
    }

    fn new_like(o: &LatSearch, now: Instant) -> LatSearch {
        let t = LatencyTarget { target_ns: o.target_ns, window_us: o.window.as_micros() as u64, percentile: o.percentile, run: o.run };
        LatSearch::new(&t, o.max, now)
    }

    /// A new window starts at `now`.
    pub fn new_cycle(&mut self, now: Instant) {
        self.ios = 0;
        self.failed = 0;
        self.strict_miss = false;
        self.due = now + self.window;
    }

    /// One completed read, write or trim that took `lat_ns` from issue.
    #[inline]
    pub fn record(&mut self, lat_ns: u64, t: Instant) {
        self.ios += 1;
        if lat_ns > self.target_ns {
            self.failed += 1;
            if self.percentile >= 100.0 {
                self.strict_miss = true;
                self.worst_ns = self.worst_ns.max(lat_ns);
                self.due = t;
            }
        }
    }

    /// fio's target: the ns figure its JSON and text print.
    pub fn target_ns(&self) -> u64 {
        self.target_ns
    }

    /// The verdict on the window (or on a missed I/O at percentile 100).
    pub fn verdict(&mut self) -> LatStep {
        if self.strict_miss {
            self.strict_miss = false;
            return if self.qd == 1 { LatStep::Fatal } else { self.lower() };
        }
        // No completion in a whole window fails it (fio's 0/0 compares false).
        let met = self.ios > 0 && (self.ios - self.failed) as f64 * 100.0 / self.ios as f64 >= self.percentile;
        if met {
            self.raise()
        } else if self.qd == 1 {
            LatStep::Stuck
        } else {
            self.lower()
        }
    }

    fn raise(&mut self) -> LatStep {
        let before = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.stable += 1;
            if self.stable >= 3 {
                self.high += 1;
                self.stable = 0;
            }
        }
        // Double until a depth fails; after that, bisect below it.
        self.qd = if self.high != self.max { (self.qd + self.high) / 2 } else { self.qd * 2 };
        self.qd = self.qd.min(self.max);
        if self.qd == before && !self.run {
            if self.end_run {
                return LatStep::Done;
            }
            self.end_run = true;
            return LatStep::FinalRun;
        }
        LatStep::Next
    }

    fn lower(&mut self) -> LatStep {
        self.high = self.qd;
        if self.qd == self.low {
            self.low -= 1;
        }
        self.qd = (self.qd + self.low) / 2;
        self.stable = 0;
        LatStep::Lower
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ss(slope: bool, percent: bool, limit: f64, dur: u32) -> SteadyState {
        SteadyState { metric: SteadyMetric::Iops, slope, percent, limit, dur_s: dur, ramp: Duration::ZERO }
    }

    #[test]
    fn deviation_as_fio_computes_it() {
        // fio 3.33 on [1000, 1001, 1000]: max_deviation 0.666667, criterion 0.066644%.
        let mut w = Window::new(&ss(false, true, 5.0, 3));
        assert!(!w.push(1000, 0));
        assert!(!w.push(1001, 0));
        assert!(w.push(1000, 0));
        let r = w.report();
        assert!((r.max_deviation - 0.666667).abs() < 1e-5, "{r:?}");
        assert!((r.criterion - 0.066644).abs() < 1e-5, "{r:?}");
        assert_eq!(r.iops, vec![1000, 1001, 1000]);
    }

    #[test]
    fn slope_as_fio_computes_it() {
        // fio 3.33 on iops [1001, 1000] with iops_slope:5: slope -1, criterion -1.
        let mut w = Window::new(&ss(true, false, 5.0, 2));
        w.push(1001, 0);
        assert!(w.push(1000, 0));
        assert_eq!(w.report().slope, -1.0);
        // bw_slope:1% on [4100576, 4096000]: slope -4576, criterion -0.111656%.
        let mut w = Window::new(&SteadyState { metric: SteadyMetric::Bw, ..ss(true, true, 1.0, 2) });
        w.push(0, 4100576);
        assert!(w.push(0, 4096000));
        let r = w.report();
        assert_eq!(r.slope, -4576.0);
        assert!((r.criterion + 0.111656).abs() < 1e-5, "{r:?}");
    }

    #[test]
    fn a_sliding_window_reports_oldest_first() {
        let mut w = Window::new(&ss(false, true, 0.0001, 3));
        for x in [10, 20, 30, 40] {
            assert!(!w.push(x, 0));
        }
        assert_eq!(w.report().iops, vec![20, 30, 40]);
        let mut w = Window::new(&ss(false, true, 1.0, 3));
        w.push(7, 0);
        assert_eq!(w.report().iops, vec![7, 0, 0]);
    }

    #[test]
    fn a_group_sums_its_clones_seconds_and_halts_them() {
        let s = Steady::new(&ss(false, true, 5.0, 2), 2);
        s.second(0, 100, 0);
        s.second(1, 100, 0);
        assert!(!s.halted());
        s.second(0, 50, 0);
        s.second(1, 50, 0);
        assert!(s.halted());
        let r = s.report().expect("report");
        assert_eq!(r.iops, vec![150, 150]);
        assert!(r.attained);
    }

    #[test]
    fn a_clone_that_ends_is_not_waited_for() {
        let s = Steady::new(&ss(false, true, 5.0, 2), 2);
        s.second(0, 100, 0);
        s.second(1, 100, 0);
        s.leave();
        assert!(s.halted());
    }

    #[test]
    fn seconds_of_ss_ramp_are_skipped() {
        let s = Steady::new(&SteadyState { ramp: Duration::from_millis(1500), ..ss(false, true, 5.0, 2) }, 1);
        s.second(0, 1, 0);
        s.second(1, 5, 0);
        s.second(2, 100, 0);
        s.second(3, 100, 0);
        let r = s.report().expect("report");
        assert_eq!((r.samples, r.attained), (2, true));
    }

    fn search(max: usize, pct: f64, run: bool) -> LatSearch {
        let t = LatencyTarget { target_ns: 1000, window_us: 0, percentile: pct, run };
        LatSearch::new(&t, max, Instant::now())
    }

    fn window(s: &mut LatSearch, ios: u64, over: u64) -> LatStep {
        let now = Instant::now();
        for i in 0..ios {
            s.record(if i < over { 2000 } else { 10 }, now);
        }
        let step = s.verdict();
        s.new_cycle(now);
        step
    }

    #[test]
    fn an_easy_target_doubles_to_the_iodepth_then_runs_once_more() {
        // fio 3.33 --debug=rate, iodepth=16: 1 2 4 8 16 16(final run) 16(done).
        let mut s = search(16, 99.0, false);
        let mut depths = Vec::new();
        loop {
            let step = window(&mut s, 100, 0);
            depths.push(s.qd);
            if step == LatStep::Done {
                break;
            }
        }
        assert_eq!(depths, vec![2, 4, 8, 16, 16, 16]);
    }

    #[test]
    fn a_failing_depth_is_bisected_as_fio_does() {
        // fio 3.33: up 1>2>4>8, down to 6 (4..8), up to 7, down to 6, settle.
        let mut s = search(16, 90.0, false);
        let mut seen = Vec::new();
        for fails in [0, 0, 0, 20, 0, 30, 0, 0] {
            let step = window(&mut s, 100, fails);
            seen.push((s.qd, step));
            if seen.last().is_some_and(|x| x.1 == LatStep::Done) {
                break;
            }
        }
        let qds: Vec<usize> = seen.iter().map(|x| x.0).collect();
        assert_eq!(qds, vec![2, 4, 8, 6, 7, 6, 6, 6]);
        assert_eq!(seen[6].1, LatStep::FinalRun);
        assert_eq!(seen[7].1, LatStep::Done);
    }

    #[test]
    fn latency_run_keeps_walking_and_tries_deeper_after_three_successes() {
        // fio 3.33 with latency_run=1: "4 4 5" three times, then "4 5 6".
        let mut s = search(16, 90.0, true);
        for fails in [0, 0, 0, 20, 20, 20] {
            window(&mut s, 100, fails);
        }
        assert_eq!(s.qd, 4);
        for _ in 0..2 {
            assert_eq!(window(&mut s, 100, 0), LatStep::Next);
            assert_eq!(s.qd, 4);
        }
        window(&mut s, 100, 0);
        assert_eq!(s.qd, 5);
    }

    #[test]
    fn an_impossible_target_goes_down_to_one() {
        let mut s = search(16, 99.0, false);
        let steps: Vec<LatStep> = (0..3).map(|_| window(&mut s, 100, 100)).collect();
        assert_eq!(s.qd, 1);
        assert_eq!(steps, vec![LatStep::Stuck, LatStep::Stuck, LatStep::Stuck]);
        let mut s = search(16, 99.0, false);
        window(&mut s, 100, 0);
        window(&mut s, 100, 0);
        assert_eq!(s.qd, 4);
        assert_eq!(window(&mut s, 100, 100), LatStep::Lower);
        assert_eq!(s.qd, 3);
        window(&mut s, 100, 100);
        window(&mut s, 100, 100);
        assert_eq!(s.qd, 1);
        assert_eq!(window(&mut s, 0, 0), LatStep::Stuck);
    }

    #[test]
    fn at_percentile_100_a_miss_acts_at_once() {
        let mut s = search(8, 100.0, false);
        assert_eq!(window(&mut s, 1, 1), LatStep::Fatal);
    }

    #[test]
    fn inconsistent_groups_are_refused() {
        let mut a = JobSpec::new("a");
        a.misc.steady.dur_s = 3;
        let b = JobSpec::new("b");
        let e = check_groups(&[a.clone(), b.clone()], &[vec![0, 1]]).unwrap_err();
        assert!(e.contains("job 'b'") && e.contains("steadystate"), "{e}");
        assert!(check_groups(&[a, b], &[vec![0], vec![1]]).is_ok());
    }
}
