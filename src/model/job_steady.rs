//! The two fio options that end a job on what it measures: steady-state
//! detection (`steadystate`, `ss_dur`, `ss_ramp`) and the latency-target
//! queue-depth search (`latency_target`, `latency_window`,
//! `latency_percentile`, `latency_run`). Plain data; the runner applies them.

use serde::Serialize;
use std::time::Duration;

/// What a steady-state criterion watches (fio `ss=iops...` or `ss=bw...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadyMetric {
    Iops,
    Bw,
}

/// fio's steady-state settings. Detection is on when `dur_s` > 0, as in
/// fio, whose `steadystate` alone (default `iops:1%`) does nothing.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SteadyState {
    pub metric: SteadyMetric,
    /// `_slope`: the least-squares slope of the window, not the largest
    /// deviation from its mean.
    pub slope: bool,
    /// The limit is a percentage of the window's mean.
    pub percent: bool,
    /// Per second (IOPS or bytes/s), or percent with `percent`.
    pub limit: f64,
    /// `ss_dur` in whole seconds (fio drops the fraction); 0 = off.
    pub dur_s: u32,
    /// `ss_ramp`: time after the job's ramp before samples count.
    pub ramp: Duration,
}

impl Default for SteadyState {
    fn default() -> Self {
        SteadyState { metric: SteadyMetric::Iops, slope: false, percent: true, limit: 1.0, dur_s: 0, ramp: Duration::ZERO }
    }
}

impl SteadyState {
    pub fn enabled(&self) -> bool {
        self.dur_s > 0
    }

    /// fio's own spelling of the criterion (its JSON `ss` key), such as
    /// `iops:5.000000%` or `bw_slope:1048576.000000`.
    pub fn label(&self) -> String {
        format!(
            "{}{}:{:.6}{}",
            match self.metric {
                SteadyMetric::Iops => "iops",
                SteadyMetric::Bw => "bw",
            },
            if self.slope { "_slope" } else { "" },
            self.limit as f32,
            if self.percent { "%" } else { "" }
        )
    }

    /// The settings fio requires to be equal across a reporting group.
    pub fn same_as(&self, o: &SteadyState) -> bool {
        if !self.enabled() && !o.enabled() {
            return true;
        }
        self == o
    }
}

/// fio's latency-target settings; the search is on when `target_ns` > 0.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LatencyTarget {
    /// `latency_target`: the completion latency (from issue) I/Os must stay under.
    pub target_ns: u64,
    /// `latency_window`: how long each depth is tried (fio's default 0: every I/O).
    pub window_us: u64,
    /// `latency_percentile`: the share of a window's I/Os that must meet the target.
    pub percentile: f64,
    /// `latency_run`: keep adjusting the depth for the whole run instead of
    /// ending once the depth has settled.
    pub run: bool,
}

impl Default for LatencyTarget {
    fn default() -> Self {
        LatencyTarget { target_ns: 0, window_us: 0, percentile: 100.0, run: false }
    }
}

impl LatencyTarget {
    pub fn enabled(&self) -> bool {
        self.target_ns > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_as_fio_prints_them() {
        let mut s = SteadyState { dur_s: 3, limit: 5.0, ..Default::default() };
        assert_eq!(s.label(), "iops:5.000000%");
        s.metric = SteadyMetric::Bw;
        s.slope = true;
        s.percent = false;
        s.limit = 1048576.0;
        assert_eq!(s.label(), "bw_slope:1048576.000000");
    }

    #[test]
    fn off_settings_are_equal_whatever_else_they_say() {
        let a = SteadyState::default();
        let b = SteadyState { limit: 9.0, ..Default::default() };
        assert!(a.same_as(&b));
        let c = SteadyState { dur_s: 2, ..Default::default() };
        assert!(!a.same_as(&c));
    }
}
