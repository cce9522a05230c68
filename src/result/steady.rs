//! What fio's steady-state detection and latency-target search found for a
//! job, kept in its `details` for the layouts and the fio-json exporter.

use super::JobResult;
use serde::{Deserialize, Serialize};

/// A job's steady-state window as fio reports it: the criterion, whether it
/// was met, and the last `duration` one-second samples, oldest first
/// (zeros where the window never filled).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SteadyReport {
    /// fio's spelling, such as `iops:5.000000%`.
    pub ss: String,
    pub iops_metric: bool,
    pub slope_mode: bool,
    pub percent: bool,
    pub limit: f64,
    /// Window length, seconds.
    pub duration: u32,
    pub attained: bool,
    /// The value compared with the limit at the last check (percent of the
    /// mean with `percent`); 0 before the window first filled.
    pub criterion: f64,
    /// Largest distance of a sample from the window's mean (deviation mode).
    pub max_deviation: f64,
    /// Least-squares slope per second (slope mode).
    pub slope: f64,
    /// Seconds sampled in all.
    pub samples: u64,
    pub iops: Vec<u64>,
    /// Bytes per second.
    pub bw: Vec<u64>,
}

impl SteadyReport {
    pub fn of(j: &JobResult) -> Option<SteadyReport> {
        serde_json::from_value(j.details.as_ref()?.get("steadystate")?.clone()).ok()
    }

    /// fio's integer means over the whole window.
    pub fn iops_mean(&self) -> u64 {
        self.iops.iter().sum::<u64>() / u64::from(self.duration.max(1))
    }
    pub fn bw_mean(&self) -> u64 {
        self.bw.iter().sum::<u64>() / u64::from(self.duration.max(1))
    }
}

/// The queue depth the latency-target search ended at (`None` without a target).
pub fn latency_depth(j: &JobResult) -> Option<u64> {
    j.details.as_ref()?.get("latency_depth")?.as_u64()
}
