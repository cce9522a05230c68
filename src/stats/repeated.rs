//! The document `--repeat` writes: every run, the environment applied
//! before each, and the statistics over the complete ones.

use crate::result::background::BackgroundReport;
use crate::result::cache::CacheReport;
use crate::result::warning::Warning;
use crate::result::{RunResult, REPEATED_SCHEMA};
use crate::stats::metrics::{summarize_runs, warnings, MetricSummary};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Repeated {
    pub schema: String,
    /// The cache scenario and background load as the user named them.
    pub cache: Option<String>,
    pub background: Option<String>,
    pub cache_reports: Vec<CacheReport>,
    pub background_reports: Vec<BackgroundReport>,
    pub runs: Vec<RunResult>,
    /// Over the complete (not interrupted) runs only.
    pub summary: Vec<MetricSummary>,
    pub warnings: Vec<Warning>,
}

impl Repeated {
    /// Summarise `runs` (interrupted ones are kept but left out of the
    /// statistics).
    pub fn new(
        cache: Option<String>,
        background: Option<String>,
        cache_reports: Vec<CacheReport>,
        background_reports: Vec<BackgroundReport>,
        runs: Vec<RunResult>,
    ) -> Repeated {
        let complete: Vec<RunResult> = runs.iter().filter(|r| r.is_valid()).cloned().collect();
        let summary = summarize_runs(&complete);
        let warnings = warnings(&summary);
        Repeated { schema: REPEATED_SCHEMA.into(), cache, background, cache_reports, background_reports, runs, summary, warnings }
    }

    /// The runs the statistics are over.
    pub fn complete_runs(&self) -> usize {
        self.runs.iter().filter(|r| r.is_valid()).count()
    }

    /// Runs whose workload failed.
    pub fn failed_runs(&self) -> usize {
        self.runs.iter().filter(|r| r.failed.is_some()).count()
    }
}
