//! What a Bonnie++ run adds to its operation statistics: the settings it ran
//! with and Bonnie++'s figure for every test, timed as Bonnie++ times it
//! (the phase's elapsed time, its CPU, its slowest single operation). The
//! operation statistics (one `OpStats` per test, named as the test's CSV
//! column, with every operation's latency in its histogram) are what
//! repeats, compare and the exporters read.

use crate::model::bonnie::{BonniePlan, Test};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BonnieDetails {
    pub settings: BonniePlan,
    /// The seed as the CSV shows it: the number, or the `-Z` file's name.
    pub seed_text: String,
    /// The tests that ran, in run order.
    pub phases: Vec<PhaseFigure>,
}

/// One test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PhaseFigure {
    pub test: Test,
    /// From the phase's first operation to the end of its closing fsync,
    /// close or sync (the seekers: the earliest start to the latest end).
    pub elapsed_ns: u64,
    /// What the rate counts: KiB for the IO tests, seeks, files.
    pub amount: u64,
    /// User + system CPU of the whole process over the phase, seconds.
    pub cpu_s: f64,
    /// The slowest single operation (Bonnie++'s "Latency"), nanoseconds.
    pub max_latency_ns: u64,
}

impl PhaseFigure {
    /// KiB/s, seeks/s or files/s.
    pub fn rate(&self) -> f64 {
        if self.elapsed_ns == 0 {
            return 0.0;
        }
        self.amount as f64 * 1e9 / self.elapsed_ns as f64
    }
    /// Bonnie++'s %CPU: int(cpu / elapsed × 100).
    pub fn cpu_pct(&self) -> u64 {
        if self.elapsed_ns == 0 {
            return 0;
        }
        (self.cpu_s * 1e9 / self.elapsed_ns as f64 * 100.0) as u64
    }
    /// Bonnie++ shows no figure for a phase under half a second (`+++++`).
    pub fn too_short(&self) -> bool {
        too_short(self.elapsed_ns as f64 / 1e9)
    }
}

impl BonnieDetails {
    pub fn phase(&self, t: Test) -> Option<&PhaseFigure> {
        self.phases.iter().find(|p| p.test == t)
    }
}

/// Bonnie++'s rule for `+++++`: a phase that took under half a second has
/// no figure. Also what an experiment's Bonnie++ table marks, from the
/// phase's time (`JOB/TEST/active_s`).
pub fn too_short(elapsed_s: f64) -> bool {
    elapsed_s < 0.5
}

impl Test {
    /// The run's headline metric for this test: `put_block_KiB_s`,
    /// `seeks_s`, `seq_stat_s`.
    pub fn headline_name(self) -> String {
        match self {
            Test::Seeks => "seeks_s".into(),
            t if t.is_io() => format!("{}_KiB_s", t.name()),
            t => format!("{}_s", t.name()),
        }
    }

    /// What its rate counts per second.
    pub fn rate_unit(self) -> &'static str {
        match self {
            Test::Seeks => "seeks/s",
            t if t.is_io() => "KiB/s",
            _ => "files/s",
        }
    }
}
