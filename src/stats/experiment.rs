//! An experiment's statistics: per matrix cell, every metric summarised
//! over the repeats, the attribution figures, and the warnings a reader
//! needs (unsteady metrics, scenarios that did not take effect, writes that
//! never reached the device). Written as summary.json.

use crate::result::experiment::{Cell, ExperimentRun};
use crate::stats::metrics::{summarize_runs, warnings as cv_warnings};
use crate::stats::summary::{summarize, Summary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SUMMARY_SCHEMA: &str = "fsbench-experiment-summary/1";

/// The benchmark's share of what reached the device: charted for every cell.
pub const SHARE: &str = "attribution/benchmark_share_of_device_writes_pct";

/// Per-cell statistics over the repeats, written as summary.json.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExperimentSummary {
    pub schema: String,
    pub experiment: String,
    /// Runs of the matrix (cells × repeats).
    #[serde(default)]
    pub planned: usize,
    /// Runs that finished and count.
    #[serde(default)]
    pub done: usize,
    /// Runs recorded as failed; `--resume` redoes them. Planned runs
    /// neither done nor failed were not run (interrupted, or stopped by
    /// `--fail-fast`).
    #[serde(default)]
    pub failed: usize,
    pub cells: Vec<CellSummary>,
    pub warnings: Vec<String>,
}

impl ExperimentSummary {
    /// Every planned run finished and counts.
    pub fn complete(&self) -> bool {
        self.done >= self.planned
    }

    /// Planned runs that were neither done nor failed.
    pub fn not_run(&self) -> usize {
        self.planned.saturating_sub(self.done + self.failed)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CellSummary {
    pub cell: Cell,
    /// Runs the statistics are over (failed ones excluded).
    pub runs: usize,
    /// Runs whose workload failed.
    #[serde(default)]
    pub failed: usize,
    /// Metric name (with its unit) to its statistics over the repeats.
    pub metrics: BTreeMap<String, Summary>,
    /// The metrics this cell's results lead with, and their units: what
    /// tables and charts show first.
    #[serde(default)]
    pub headline: BTreeMap<String, String>,
}

/// Group runs by cell and summarise every metric over the repeats;
/// `planned` is how many runs the matrix has.
pub fn summarize_experiment(name: &str, runs: &[ExperimentRun], planned: usize) -> ExperimentSummary {
    let mut by_cell: BTreeMap<Cell, Vec<&ExperimentRun>> = BTreeMap::new();
    for r in runs {
        by_cell.entry(r.cell.clone()).or_default().push(r);
    }
    let mut warnings = Vec::new();
    let mut cells = Vec::new();
    for (cell, all) in by_cell {
        // A failed run is kept on disk for inspection but is not data.
        let (rs, failed): (Vec<&ExperimentRun>, Vec<&ExperimentRun>) = all.into_iter().partition(|r| r.result.failed.is_none());
        for r in &failed {
            warnings.push(format!(
                "{} r{}: FAILED ({}); left out of every figure",
                cell.key(),
                r.repeat,
                r.result.failed.as_deref().unwrap_or("")
            ));
        }
        let results: Vec<_> = rs.iter().map(|r| r.result.clone()).collect();
        let summaries = summarize_runs(&results);
        // One line per cell: the count of unsteady metrics and the worst one.
        let unsteady = cv_warnings(&summaries);
        if !unsteady.is_empty() {
            let worst = summaries.iter().filter(|m| m.summary.n > 1).max_by(|a, b| a.summary.cv.total_cmp(&b.summary.cv));
            if let Some(w) = worst {
                warnings.push(format!(
                    "{}: CV above 5% for {} metrics (worst: {} at {:.1}%): the repeats disagree; add repeats or control the environment",
                    cell.key(),
                    unsteady.len(),
                    w.metric,
                    w.summary.cv * 100.0
                ));
            }
        }
        let mut metrics: BTreeMap<_, _> = summaries.into_iter().map(|m| (m.metric, m.summary)).collect();
        let extra = |f: &dyn Fn(&ExperimentRun) -> Option<f64>| -> Option<Summary> {
            let xs: Vec<f64> = rs.iter().filter_map(|r| f(r)).collect();
            (!rs.is_empty() && xs.len() == rs.len()).then(|| summarize(&xs))
        };
        let mib = |b: u64| b as f64 / 1048576.0;
        let share = |r: &ExperimentRun| {
            let a = &r.attribution;
            a.device_write_bytes.filter(|&d| d > 0).map(|d| a.benchmark_storage_write_bytes.min(d) as f64 * 100.0 / d as f64)
        };
        if let Some(s) = extra(&share) {
            metrics.insert(SHARE.into(), s);
        }
        if let Some(s) = extra(&|r| r.attribution.device_write_bytes.map(mib)) {
            metrics.insert("attribution/device_write_MiB".into(), s);
        }
        if let Some(s) = extra(&|r| Some(mib(r.attribution.benchmark_write_bytes))) {
            metrics.insert("attribution/benchmark_write_MiB".into(), s);
        }
        if let Some(s) = extra(&|r| r.background.as_ref().map(|b| mib(b.bytes_written))) {
            metrics.insert("attribution/background_write_MiB".into(), s);
        }
        for r in &rs {
            if !r.cache.applied {
                warnings.push(format!(
                    "{} r{}: cache scenario did not take effect: {}",
                    cell.key(),
                    r.repeat,
                    r.cache.note.clone().unwrap_or_default()
                ));
            }
            if let Some(n) = r.cache.note.as_ref().filter(|n| n.contains("dirty pages pending")) {
                warnings.push(format!("{} r{}: {n}", cell.key(), r.repeat));
            }
            if let Some(e) = r.background.as_ref().and_then(|b| b.error.as_ref()) {
                warnings.push(format!("{} r{}: the background load failed during the run: {e}", cell.key(), r.repeat));
            }
            if r.result.partial {
                warnings.push(format!("{} r{}: partial run", cell.key(), r.repeat));
            }
        }
        let unwritten = rs.iter().filter(|r| {
            let a = &r.attribution;
            a.device_write_bytes.is_some_and(|d| a.benchmark_storage_write_bytes > 2 * d.max(1 << 20))
        });
        if unwritten.count() > 0 {
            warnings.push(format!(
                "{}: most of the benchmark's buffered writes were still in the page cache when the run ended (dirtied far more than reached the device): the result measures memory; run longer, add fsync, or use direct=1",
                cell.key()
            ));
        }
        if let (Some(dev), Some(bench)) =
            (metrics.get("attribution/device_write_MiB").map(|s| s.mean), metrics.get("attribution/benchmark_write_MiB").map(|s| s.mean))
        {
            if dev > bench * 1.5 + 1.0 {
                warnings.push(format!(
                    "{}: the device saw {dev:.1} MiB of writes, the benchmark issued {bench:.1} MiB: other I/O (journal, background load, other processes) reached the device",
                    cell.key()
                ));
            }
        }
        let mut headline: BTreeMap<String, String> = rs
            .first()
            .map(|r| crate::stats::metrics::headlines(&r.result))
            .unwrap_or_default()
            .into_iter()
            .filter(|(m, _)| metrics.contains_key(m))
            .collect();
        if metrics.contains_key(SHARE) {
            headline.insert(SHARE.into(), "%".into());
        }
        cells.push(CellSummary { cell, runs: rs.len(), failed: failed.len(), metrics, headline });
    }
    warnings.dedup();
    let failed = runs.iter().filter(|r| r.result.failed.is_some()).count();
    ExperimentSummary {
        schema: SUMMARY_SCHEMA.into(),
        experiment: name.into(),
        planned,
        done: runs.len() - failed,
        failed,
        cells,
        warnings,
    }
}
