//! A run's block trace: how it was captured, where its blktrace files are,
//! blkparse's summary and the analysis, all from fsbench's own parse.

pub mod analysis;
pub mod capture;
pub mod hist;
pub mod summary;

use analysis::TraceAnalysis;
use capture::Captured;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use summary::Summary;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TraceReport {
    pub capture: Captured,
    /// `BASENAME.blktrace.CPU`, for blkparse, btt and iowatcher
    /// (`blkparse -i BASENAME`); none for a counters-only capture.
    pub basename: PathBuf,
    pub files: Vec<PathBuf>,
    /// Absent for a counters-only capture (no records).
    pub summary: Option<Summary>,
    pub analysis: Option<TraceAnalysis>,
}

impl TraceReport {
    /// The analysis's flat figures (`trace.*`), for statistics and compare.
    pub fn metrics(&self) -> Vec<(String, &'static str, f64)> {
        let mut m = self.analysis.as_ref().map(|a| a.metrics()).unwrap_or_default();
        m.push(("trace.lost_events".into(), "events", self.capture.lost_events as f64));
        m
    }
}
