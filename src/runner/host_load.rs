//! The machine's load around each run of an experiment, so drift (a load
//! that changes over the experiment) can be seen next to the figures:
//! loadavg at the start and the end, and the share of all CPUs that other
//! processes kept busy during the run (fsbench's own time taken out), and
//! the mean number of runnable tasks during it. The CPU share saturates on
//! a busy machine (others can use no more than fsbench leaves them); the
//! runnable count does not: it shows how many compete for the CPUs.

use crate::host::load::{self, LoadReading};
use crate::result::experiment::HostLoad;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A reading at a run's start, to close at its end, and a thread that
/// counts the machine's runnable tasks every `SAMPLE` meanwhile.
pub struct LoadWatch {
    start: Option<LoadReading>,
    sampler: Option<Sampler>,
}

/// The sampling thread's stop flag and handle (it returns the sum and count).
type Sampler = (Arc<AtomicBool>, std::thread::JoinHandle<(f64, u32)>);

/// How often the runnable tasks are counted: cheap (one read of /proc/stat).
const SAMPLE: Duration = Duration::from_millis(100);

impl LoadWatch {
    pub fn start() -> LoadWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let sampler = std::thread::Builder::new()
            .name("fsbench-load".into())
            .spawn(move || {
                let (mut sum, mut n) = (0.0, 0u32);
                while !flag.load(Ordering::Relaxed) {
                    if let Some(r) = load::procs_running() {
                        sum += r as f64;
                        n += 1;
                    }
                    std::thread::park_timeout(SAMPLE);
                }
                (sum, n)
            })
            .ok();
        LoadWatch { start: load::read(), sampler: sampler.map(|h| (stop, h)) }
    }

    /// The mean count of runnable tasks on the machine since `start`
    /// (fsbench's own included); stops the sampling.
    pub fn runnable(&mut self) -> Option<f64> {
        let (stop, h) = self.sampler.take()?;
        stop.store(true, Ordering::Relaxed);
        h.thread().unpark();
        let (sum, n) = h.join().ok()?;
        (n > 0).then(|| sum / n as f64)
    }

    pub fn load_start(&self) -> HostLoad {
        self.start.map(host_load).unwrap_or_default()
    }

    /// The end's loadavg and others' CPU share over the run.
    pub fn end(&self) -> (HostLoad, Option<f64>) {
        let end = load::read();
        (end.map(host_load).unwrap_or_default(), self.start.zip(end).and_then(|(a, b)| others_cpu_pct(&a, &b)))
    }
}

impl Drop for LoadWatch {
    fn drop(&mut self) {
        let _ = self.runnable();
    }
}

fn host_load(r: LoadReading) -> HostLoad {
    HostLoad { load1: r.load1, load5: r.load5 }
}

/// % of all CPUs' time between `a` and `b` that was busy with something
/// other than this process; `None` over too short a span to count.
pub fn others_cpu_pct(a: &LoadReading, b: &LoadReading) -> Option<f64> {
    let total = b.total_ticks.checked_sub(a.total_ticks).filter(|&t| t > 0)?;
    let busy = b.busy_ticks.saturating_sub(a.busy_ticks);
    let own = b.self_ticks.saturating_sub(a.self_ticks);
    Some((busy.saturating_sub(own) as f64 * 100.0 / total as f64).clamp(0.0, 100.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn others_share_leaves_out_our_own_time() {
        let a = LoadReading { busy_ticks: 1000, total_ticks: 4000, self_ticks: 100, ..Default::default() };
        let b = LoadReading { busy_ticks: 1300, total_ticks: 4400, self_ticks: 250, ..Default::default() };
        // 300 busy of 400, 150 of them ours: 150 / 400.
        assert_eq!(others_cpu_pct(&a, &b), Some(37.5));
        assert_eq!(others_cpu_pct(&a, &a), None);
    }

    #[test]
    fn runnable_tasks_count_a_spinning_thread() {
        let mut w = LoadWatch::start();
        let stop = Arc::new(AtomicBool::new(false));
        let spin = |s: Arc<AtomicBool>| {
            std::thread::spawn(move || {
                while !s.load(Ordering::Relaxed) {
                    std::hint::spin_loop();
                }
            })
        };
        let spinners: Vec<_> = (0..3).map(|_| spin(stop.clone())).collect();
        std::thread::sleep(Duration::from_millis(450));
        let busy = w.runnable().expect("sampled");
        stop.store(true, Ordering::Relaxed);
        spinners.into_iter().for_each(|s| s.join().unwrap());
        // Three spinners are runnable at every sample (the sampler itself too).
        assert!(busy >= 3.0, "{busy}");
        assert_eq!(w.runnable(), None, "sampled once");
    }
}
