//! The machine's load around each run of an experiment, so drift (a load
//! that changes over the experiment) can be seen next to the figures:
//! loadavg at the start and the end, and the share of all CPUs that other
//! processes kept busy during the run (fsbench's own time taken out).

use crate::host::load::{self, LoadReading};
use crate::result::experiment::HostLoad;

/// A reading at a run's start, to close at its end.
pub struct LoadWatch {
    start: Option<LoadReading>,
}

impl LoadWatch {
    pub fn start() -> LoadWatch {
        LoadWatch { start: load::read() }
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
}
