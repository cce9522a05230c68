//! Pacing the I/O: a direction's rate cap (fio's `rate`, `rate_iops`,
//! `rate_process`), the minimum rate it must keep (`ratemin`), and a job's
//! share of its flow (`flow`).

use super::Worker;
use crate::model::job::{JobSpec, READ, WRITE};
use crate::model::job_misc::RateProcess;
use crate::runner::rng::Rng;
use crate::runner::sleep_unless_stopped;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Keeps a direction's I/O under its rate (bytes/s or IOPS) by sleeping.
/// Each I/O has a due time from the start, so a late one is followed at
/// once by the next (the mean rate holds).
pub(super) struct Pacer {
    start: Instant,
    bytes_per_s: [Option<u64>; 2],
    iops: [Option<u64>; 2],
    sent_bytes: [u64; 2],
    sent_ios: [u64; 2],
    /// rate_process=poisson: the mean gap between I/Os per direction (ns);
    /// the gaps are drawn from an exponential with that mean.
    poisson_mean_ns: Option<[f64; 2]>,
    /// Poisson: the next I/O's due time from `start` (ns), per direction.
    next_ns: [f64; 2],
}

impl Pacer {
    pub(super) fn new(spec: &JobSpec) -> Pacer {
        // fio's Poisson mean: a rate in bytes counts as that many smallest
        // blocks per second; a job with both caps keeps the slower.
        let mean = |d: usize| {
            let by_bytes = spec.rate[d].map_or(0.0, |r| 1e9 * spec.bs[d].min() as f64 / r.max(1) as f64);
            let by_ios = spec.rate_iops[d].map_or(0.0, |r| 1e9 / r.max(1) as f64);
            by_bytes.max(by_ios)
        };
        let poisson = spec.misc.rate_process == RateProcess::Poisson;
        Pacer {
            start: Instant::now(),
            bytes_per_s: spec.rate,
            iops: spec.rate_iops,
            sent_bytes: [0; 2],
            sent_ios: [0; 2],
            poisson_mean_ns: poisson.then(|| [mean(READ), mean(WRITE)]),
            next_ns: [0.0; 2],
        }
    }
    pub(super) fn active(&self) -> bool {
        self.bytes_per_s.iter().chain(&self.iops).any(|r| r.is_some())
    }
    /// Sleep until this I/O is due, but not past `deadline` (the runtime's
    /// end): as fio, a job whose next I/O is due after its runtime ends
    /// with it rather than sleeping on.
    pub(super) fn wait(&mut self, dir: usize, len: u64, now: Instant, deadline: Option<Instant>, stop: &AtomicBool, rng: &mut Rng) {
        let mut due_ns = 0u128;
        if let Some(mean) = self.poisson_mean_ns.map(|m| m[dir]).filter(|m| *m > 0.0) {
            due_ns = self.next_ns[dir] as u128;
            // 1 - [0, 1) is in (0, 1], whose log is finite.
            let u = 1.0 - (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
            self.next_ns[dir] += -u.ln() * mean;
        } else {
            if let Some(r) = self.bytes_per_s[dir] {
                due_ns = due_ns.max(self.sent_bytes[dir] as u128 * 1_000_000_000 / r.max(1) as u128);
            }
            if let Some(r) = self.iops[dir] {
                due_ns = due_ns.max(self.sent_ios[dir] as u128 * 1_000_000_000 / r.max(1) as u128);
            }
        }
        let mut due = self.start + Duration::from_nanos(due_ns.min(u64::MAX as u128) as u64);
        if let Some(d) = deadline {
            due = due.min(d);
        }
        if due > now {
            sleep_unless_stopped(due - now, stop);
        }
        self.sent_bytes[dir] += len;
        self.sent_ios[dir] += 1;
    }
}

impl Worker<'_> {
    /// fio's ratemin/rate_iops_min: over each ratecycle, a direction that has
    /// moved data must keep its minimum, or the job fails with fio's words.
    /// The first look after the settling time only takes the marks.
    #[cold]
    pub(super) fn check_min_rate(&mut self, now: Instant) {
        let spec = self.spec;
        let m = &spec.misc;
        let cycle = Duration::from_millis(m.ratecycle_ms);
        let mut next = now + cycle;
        for d in [READ, WRITE] {
            if m.ratemin[d].is_none() && m.rate_iops_min[d].is_none() {
                continue;
            }
            let (bytes, ios) = (self.stats[d].bytes, self.stats[d].ops);
            if bytes == 0 {
                // As fio: a direction is judged once it has moved something.
                next = next.min(now + Duration::from_millis(10));
                continue;
            }
            let Some((t, b0, n0)) = self.rate_marks[d] else {
                self.rate_marks[d] = Some((now, bytes, ios));
                continue;
            };
            let spent_ms = now.saturating_duration_since(t).as_millis() as u64;
            if spent_ms == 0 || spent_ms < m.ratecycle_ms {
                next = next.min(t + cycle);
                continue;
            }
            if let Some(min) = m.ratemin[d] {
                let got = bytes.saturating_sub(b0).saturating_mul(1000) / spent_ms;
                if got < min {
                    self.set_error(format!("rate_min={min}B/s not met, got {got}B/s"));
                    return;
                }
            } else if let Some(min) = m.rate_iops_min[d] {
                let got = ios.saturating_sub(n0).saturating_mul(1000) / spent_ms;
                if got < min {
                    self.set_error(format!("rate_iops_min={min} not met, got {got} IOPS"));
                    return;
                }
            }
            self.rate_marks[d] = Some((now, bytes, ios));
        }
        self.rate_check_at = Some(next);
    }

    /// fio's flow control: while this clone is ahead of its weight's share
    /// of its flow's I/Os, pause. An atomic load and add per I/O, for the
    /// jobs that ask for a flow only. Returns whether it paused.
    pub(super) fn flow_wait(&mut self, stop: &AtomicBool) -> bool {
        let Some(f) = self.flow.as_ref() else { return false };
        let weight = u64::from(self.spec.misc.flow);
        let pause = Duration::from_micros(self.spec.misc.flow_sleep_us.max(10));
        let mut paused = false;
        while self.flow_own * f.weight.load(Ordering::Relaxed) > f.ios.load(Ordering::Relaxed) * weight && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(pause);
            paused = true;
        }
        self.flow_own += 1;
        f.ios.fetch_add(1, Ordering::Relaxed);
        paused
    }
}
