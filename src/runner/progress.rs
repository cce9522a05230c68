//! A progress line with ETA on stderr while a group runs (terminal only).

use super::worker::ProgressCell;
use crate::model::job::JobSpec;
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What "done" means for a group: a duration, a byte count, or both.
pub struct Expected {
    /// Longest startdelay + ramp + runtime over the time-limited jobs.
    pub time: Option<Duration>,
    /// Bytes over the size-limited jobs (all clones).
    pub bytes: u64,
}

impl Expected {
    pub fn of<'a>(jobs: impl Iterator<Item = &'a JobSpec>) -> Expected {
        let mut e = Expected { time: None, bytes: 0 };
        for j in jobs {
            if let Some(r) = j.runtime {
                let t = j.startdelay + j.ramp_time + r;
                e.time = Some(e.time.map_or(t, |x| x.max(t)));
            }
            if !j.time_based {
                let per = j.io_size.or(j.size).unwrap_or(0);
                e.bytes += per * j.loops as u64 * j.numjobs as u64;
            }
        }
        e
    }
}

/// Redraw every 200 ms until every worker is done or the run is stopped.
pub fn draw(group: u32, cells: &[Arc<ProgressCell>], expected: &Expected, stop: &AtomicBool) {
    let bar = ProgressBar::new(1000);
    bar.set_style(
        ProgressStyle::with_template("{spinner} group {prefix} [{bar:30}] {percent:>3}% {msg} ETA {eta}")
            .expect("static template")
            .progress_chars("=> "),
    );
    bar.set_prefix(group.to_string());
    let start = Instant::now();
    let mut last = 0u64;
    let mut last_t = start;
    loop {
        let done = cells.iter().all(|c| c.done.load(Ordering::Relaxed));
        if done || stop.load(Ordering::Relaxed) {
            break;
        }
        let bytes: u64 = cells.iter().map(|c| c.bytes.load(Ordering::Relaxed)).sum();
        let now = Instant::now();
        let mut frac: f64 = 0.0;
        if let Some(t) = expected.time {
            frac = frac.max(now.duration_since(start).as_secs_f64() / t.as_secs_f64().max(1e-9));
        }
        if expected.bytes > 0 {
            frac = frac.max(bytes as f64 / expected.bytes as f64);
        }
        let dt = now.duration_since(last_t).as_secs_f64();
        if dt > 0.0 {
            let rate = bytes.saturating_sub(last) as f64 / dt / (1 << 20) as f64;
            bar.set_message(format!("{rate:.1} MiB/s"));
        }
        last = bytes;
        last_t = now;
        bar.set_position((frac.min(1.0) * 1000.0) as u64);
        std::thread::sleep(Duration::from_millis(200));
    }
    bar.finish_and_clear();
}
