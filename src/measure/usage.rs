//! Process-wide CPU accounting, read before and after a window (the
//! process's I/O counters are `crate::host::proc_io`).
//!
//! getrusage(RUSAGE_SELF) sums every thread of the process, including
//! io_uring's io-wq workers (they are threads of the process since Linux
//! 5.12), which fio's per-job-thread figures leave out.

use serde::{Deserialize, Serialize};
use std::time::Instant;

/// CPU used by the whole fsbench process during the measured window,
/// including io_uring worker threads (which fio leaves out).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CpuUsage {
    pub user_s: f64,
    pub system_s: f64,
    pub wall_s: f64,
    pub voluntary_ctx_switches: u64,
    pub involuntary_ctx_switches: u64,
    /// Minor and major page faults.
    pub minor_faults: u64,
    pub major_faults: u64,
}

impl CpuUsage {
    /// This usage without `part` of it (e.g. a run without its ramp); the
    /// wall time loses the longest part, since parts overlap in time.
    pub fn without(&self, parts: &[CpuUsage]) -> CpuUsage {
        let mut u = self.clone();
        for p in parts {
            u.user_s = (u.user_s - p.user_s).max(0.0);
            u.system_s = (u.system_s - p.system_s).max(0.0);
            u.voluntary_ctx_switches = u.voluntary_ctx_switches.saturating_sub(p.voluntary_ctx_switches);
            u.involuntary_ctx_switches = u.involuntary_ctx_switches.saturating_sub(p.involuntary_ctx_switches);
            u.minor_faults = u.minor_faults.saturating_sub(p.minor_faults);
            u.major_faults = u.major_faults.saturating_sub(p.major_faults);
        }
        let longest = parts.iter().map(|p| p.wall_s).fold(0.0, f64::max);
        u.wall_s = (u.wall_s - longest).max(0.0);
        u
    }

    /// CPU seconds (user + system) per completed operation, in microseconds.
    pub fn us_per_op(&self, ops: u64) -> f64 {
        if ops == 0 {
            0.0
        } else {
            (self.user_s + self.system_s) * 1e6 / ops as f64
        }
    }
}

#[derive(Clone, Copy)]
pub struct UsageMark {
    at: Instant,
    ru: libc::rusage,
}

fn tv_secs(tv: libc::timeval) -> f64 {
    tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6
}

impl UsageMark {
    /// The whole process so far.
    pub fn now() -> UsageMark {
        Self::of(libc::RUSAGE_SELF)
    }

    /// The calling thread so far (a worker's own share, e.g. its ramp).
    pub fn thread_now() -> UsageMark {
        Self::of(libc::RUSAGE_THREAD)
    }

    fn of(who: libc::c_int) -> UsageMark {
        // SAFETY: libc::rusage is integers and timevals, for which all-zero bytes is a valid value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a live, writable rusage that getrusage only writes into.
        unsafe { libc::getrusage(who, &mut ru) };
        UsageMark { at: Instant::now(), ru }
    }

    /// CPU used between `self` and `later`.
    pub fn until(&self, later: &UsageMark) -> CpuUsage {
        let (a, b) = (&self.ru, &later.ru);
        CpuUsage {
            user_s: tv_secs(b.ru_utime) - tv_secs(a.ru_utime),
            system_s: tv_secs(b.ru_stime) - tv_secs(a.ru_stime),
            wall_s: later.at.duration_since(self.at).as_secs_f64(),
            voluntary_ctx_switches: (b.ru_nvcsw - a.ru_nvcsw).max(0) as u64,
            involuntary_ctx_switches: (b.ru_nivcsw - a.ru_nivcsw).max(0) as u64,
            minor_faults: (b.ru_minflt - a.ru_minflt).max(0) as u64,
            major_faults: (b.ru_majflt - a.ru_majflt).max(0) as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_loop_shows_user_time() {
        // Spin until rusage reports 100 ms of user time; on a loaded machine
        // that takes longer than 100 ms of wall time, so wait up to 10 s.
        let a = UsageMark::now();
        let t = Instant::now();
        let mut x = 0u64;
        let mut u = a.until(&UsageMark::now());
        while u.user_s < 0.1 && t.elapsed().as_secs() < 10 {
            for _ in 0..1_000_000 {
                x = x.wrapping_add(std::hint::black_box(1));
            }
            u = a.until(&UsageMark::now());
        }
        assert!(x > 0);
        assert!(u.user_s >= 0.1, "user {} after {:?}", u.user_s, t.elapsed());
        // Other tests run threads in this process, so user time may exceed
        // wall time here; the wall clock must agree with an independent one.
        let elapsed = t.elapsed().as_secs_f64();
        assert!(u.wall_s <= elapsed + 0.01 && u.wall_s >= elapsed * 0.5, "wall {} vs {elapsed}", u.wall_s);
    }
}
