//! An experiment's statistics: per matrix cell, every metric summarised
//! over the repeats, the attribution figures; the comparisons of the
//! factors' levels (`factors`); and the warnings a reader needs (unsteady
//! headline metrics, scenarios that did not take effect, writes that never
//! reached the device, the runs' own warnings), each said once with the
//! cells it concerns. Written as summary.json.

use crate::model::experiment::Order;
use crate::result::experiment::{Cell, ExperimentRun};
use crate::result::warning::{few_of, Code, Warning, FEW};
use crate::stats::design::{Design, RoundValue, RunLoad};
use crate::stats::factors::{compare_factors, FactorReport, Levels};
use crate::stats::metrics::{collect, CV_WARN};
use crate::stats::summary::{summarize, Summary};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SUMMARY_SCHEMA: &str = "fsbench-experiment-summary/1";

/// The write share, seed 000's definition (Tables 2-3): the write
/// operations the benchmark issued against the write requests the target's
/// device completed during the run, %. Charted and tabled for every cell.
pub const WRITE_SHARE: &str = "attribution/write_share_pct";
/// Its numerator and denominator, per run.
pub const BENCHMARK_WRITE_OPS: &str = "attribution/benchmark_write_ops";
pub const DEVICE_WRITE_REQUESTS: &str = "attribution/device_write_requests";
/// The bytes the device wrote that /proc/self/io attributes to the
/// benchmark, % of all it wrote (bytes, not operations: not the write share).
pub const ATTRIBUTED_BYTES: &str = "attribution/benchmark_attributed_write_bytes_pct";

/// With `trace = true`: seed 002's read and write dispatches and the write
/// amplification. (The benchmark's threads' part of the traced write bytes,
/// `trace/benchmark_pct_of_traced_write_bytes`, is in summary.csv: it
/// misses the writeback the kernel's flusher threads do for it.)
const TRACE_HEADLINES: &[(&str, &str)] =
    &[("trace/read_dispatches", "count"), ("trace/write_dispatches", "count"), ("trace/write_amplification", "ratio")];

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
    pub warnings: Vec<Warning>,
    /// Each factor's levels compared with its first, per workload, on the
    /// headline metrics. Absent from older files.
    #[serde(default)]
    pub factors: FactorReport,
    /// The run order and the load the experiment ran under.
    #[serde(default)]
    pub design: Design,
    /// The experiment file's `[[gap]]`s: what of the seed's tables it
    /// cannot fill here. Absent from older files.
    #[serde(default)]
    pub gaps: Vec<crate::model::experiment::Gap>,
}

impl ExperimentSummary {
    /// Compare the factors' levels in the experiment file's order (the
    /// first level of each is the baseline) instead of sorted order.
    pub fn order_levels(&mut self, levels: Levels) {
        self.factors = compare_factors(&self.cells, levels, self.design.order);
    }

    /// The order the runs were done in and its seed: comparisons are then
    /// paired by round where the design allows, and drift judged by it.
    pub fn set_design(&mut self, order: Order, seed: u64) {
        self.design.order = Some(order);
        self.design.seed = Some(seed);
        self.factors = compare_factors(&self.cells, self.factors.levels.clone(), self.design.order);
    }

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
    /// The headline metrics in the order the results declare them (the
    /// first is the one the tool itself leads with).
    #[serde(default)]
    pub headline_order: Vec<String>,
    /// Each headline metric's value per run, with its round and place in
    /// the schedule: what paired tests and drift checks read.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub by_round: BTreeMap<String, Vec<RoundValue>>,
    /// The machine's load during each run (runs recorded with it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loads: Vec<RunLoad>,
}

impl CellSummary {
    /// `(metric, unit)` of the headline metrics, in declared order.
    pub fn headline_in_order(&self) -> Vec<(&str, &str)> {
        let declared = self.headline_order.iter().filter_map(|m| self.headline.get_key_value(m));
        let rest = self.headline.iter().filter(|(m, _)| !self.headline_order.contains(m));
        declared.chain(rest).map(|(m, u)| (m.as_str(), u.as_str())).collect()
    }
}

/// Warnings gathered while summarising, said once each: a message and the
/// places it concerns (a cell, or a run `CELL rN`), each with an optional
/// detail (a figure of that place).
#[derive(Default)]
struct Warnings(Vec<(Code, String, Places)>);

/// Where a warning applies: `(place, detail)`.
type Places = Vec<(String, Option<String>)>;

impl Warnings {
    fn add(&mut self, place: String, code: Code, message: impl Into<String>, detail: Option<String>) {
        let message = message.into();
        match self.0.iter_mut().find(|(c, m, _)| *c == code && *m == message) {
            Some((_, _, places)) => places.push((place, detail)),
            None => self.0.push((code, message, vec![(place, detail)])),
        }
    }

    /// "PLACE, PLACE (DETAIL), PLACE and N more: MESSAGE", every place
    /// with its detail in the warning's details.
    fn lines(self) -> Vec<Warning> {
        self.0
            .into_iter()
            .map(|(code, message, places)| {
                let named: Vec<String> =
                    places.iter().map(|(p, d)| d.as_ref().map_or_else(|| p.clone(), |d| format!("{p} ({d})"))).collect();
                let short = format!("{}: {message}", few_of(&named, FEW, PLACE_WIDTH, ", "));
                let whole = named.len() > FEW || named.iter().any(|n| n.chars().count() > PLACE_WIDTH);
                Warning::new(code, short).with_details(if whole { named } else { Vec::new() })
            })
            .collect()
    }
}

/// A place and its detail (a failed run's error) are cut to this in the
/// message; the details keep them whole.
const PLACE_WIDTH: usize = 60;

/// Group runs by cell and summarise every metric over the repeats;
/// `planned` is how many runs the matrix has.
pub fn summarize_experiment(name: &str, runs: &[ExperimentRun], planned: usize) -> ExperimentSummary {
    let mut by_cell: BTreeMap<Cell, Vec<&ExperimentRun>> = BTreeMap::new();
    for r in runs {
        by_cell.entry(r.cell.clone()).or_default().push(r);
    }
    let mut warnings = Warnings::default();
    // Per cell, its headline metrics whose repeats disagree, worst first.
    let mut unsteady: Vec<(String, Vec<(String, f64)>)> = Vec::new();
    let mut cells = Vec::new();
    for (cell, all) in by_cell {
        // A failed run is kept on disk for inspection but is not data.
        let (rs, failed): (Vec<&ExperimentRun>, Vec<&ExperimentRun>) = all.into_iter().partition(|r| r.result.failed.is_none());
        for r in &failed {
            let why = r.result.failed.clone().unwrap_or_default();
            warnings.add(format!("{} r{}", cell.key(), r.repeat), Code::RunFailed, "FAILED; left out of every figure", Some(why));
        }
        let results: Vec<_> = rs.iter().map(|r| r.result.clone()).collect();
        let per_run = collect(&results);
        let mut metrics: BTreeMap<_, _> = per_run.iter().map(|(m, v)| (m.clone(), summarize(v))).collect();
        attribution_metrics(&rs, &mut metrics);
        cell_warnings(&cell, &rs, &metrics, &mut warnings);
        let (headline_order, headline) = headlines_of(&rs, &metrics);
        // The repeats of a headline metric disagree: one line for the experiment.
        let mut cvs: Vec<(String, f64)> = headline_order
            .iter()
            .filter_map(|m| metrics.get(m).map(|s| (m, s)))
            .filter(|(_, s)| s.n >= 2 && s.cv > CV_WARN)
            .map(|(m, s)| (m.clone(), s.cv))
            .collect();
        cvs.sort_by(|a, b| b.1.total_cmp(&a.1));
        if !cvs.is_empty() {
            unsteady.push((cell.key(), cvs));
        }
        let by_round = rounds_of(&per_run, &rs, &headline);
        let loads = loads_of(&rs);
        cells.push(CellSummary { cell, runs: rs.len(), failed: failed.len(), metrics, headline, headline_order, by_round, loads });
    }
    let mut warnings = warnings.lines();
    // One line for the experiment: the table shows each cell's CV.
    if let Some((worst_cell, worst)) = unsteady.iter().max_by(|a, b| a.1[0].1.total_cmp(&b.1[0].1)) {
        let listed: Vec<String> = unsteady.iter().map(|(c, ms)| format!("{c} ({})", ms.len())).collect();
        let message = format!(
            "the repeats disagree (CV above {:.0}%) on headline metrics in {} of {} cells: {} (worst: {worst_cell} {} at {:.1}%); add repeats or control the environment",
            CV_WARN * 100.0,
            unsteady.len(),
            cells.len(),
            few_of(&listed, 1, 40, ", "),
            worst[0].0,
            worst[0].1 * 100.0
        );
        warnings.push(Warning::new(Code::Unsteady, message).with_details(listed));
    }
    let design = Design::of_runs(runs);
    let factors = compare_factors(&cells, Levels::of_cells(&cells), design.order);
    let failed = runs.iter().filter(|r| r.result.failed.is_some()).count();
    ExperimentSummary {
        schema: SUMMARY_SCHEMA.into(),
        experiment: name.into(),
        planned,
        done: runs.len() - failed,
        failed,
        cells,
        warnings,
        factors,
        design,
        gaps: Vec::new(),
    }
}

/// The attribution figures of a cell's runs, where every run has them: how
/// much of what reached the device the benchmark wrote, and the bytes and
/// requests on each side.
fn attribution_metrics(rs: &[&ExperimentRun], metrics: &mut BTreeMap<String, Summary>) {
    let extra = |f: &dyn Fn(&ExperimentRun) -> Option<f64>| -> Option<Summary> {
        let xs: Vec<f64> = rs.iter().filter_map(|r| f(r)).collect();
        (!rs.is_empty() && xs.len() == rs.len()).then(|| summarize(&xs))
    };
    let mib = |b: u64| b as f64 / 1048576.0;
    let attributed = |r: &ExperimentRun| {
        let a = &r.attribution;
        a.device_write_bytes.filter(|&d| d > 0).map(|d| a.benchmark_storage_write_bytes.min(d) as f64 * 100.0 / d as f64)
    };
    if let Some(s) = extra(&attributed) {
        metrics.insert(ATTRIBUTED_BYTES.into(), s);
    }
    if let Some(s) = extra(&|r| r.attribution.write_share.map(|x| x * 100.0)) {
        metrics.insert(WRITE_SHARE.into(), s);
    }
    if let Some(s) = extra(&|r| r.attribution.device_write_requests.map(|_| r.attribution.benchmark_write_ops as f64)) {
        metrics.insert(BENCHMARK_WRITE_OPS.into(), s);
    }
    if let Some(s) = extra(&|r| r.attribution.device_write_requests.map(|d| d as f64)) {
        metrics.insert(DEVICE_WRITE_REQUESTS.into(), s);
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
}

/// What a cell's runs say about themselves (cache scenarios that did not
/// take, failed background loads, partial runs, their own warnings) and
/// what their attribution shows (writes left in the page cache, other
/// writers on the device).
fn cell_warnings(cell: &Cell, rs: &[&ExperimentRun], metrics: &BTreeMap<String, Summary>, warnings: &mut Warnings) {
    for r in rs {
        let run = || format!("{} r{}", cell.key(), r.repeat);
        if !r.cache.applied {
            warnings.add(run(), Code::CacheNotApplied, "cache scenario did not take effect", r.cache.note.clone());
        }
        if let Some(n) = r.cache.note.as_ref().filter(|n| n.contains("dirty pages pending")) {
            warnings.add(run(), Code::DirtyPagesPending, n.clone(), None);
        }
        if let Some(e) = r.background.as_ref().and_then(|b| b.error.as_ref()) {
            warnings.add(run(), Code::BackgroundLoadFailed, "the background load failed during the run", Some(e.clone()));
        }
        if r.result.partial {
            warnings.add(run(), Code::PartialRun, "partial run", None);
        }
    }
    // What every run said about itself (working sets that fit in RAM, ...): per cell.
    let mut said: Vec<&Warning> = rs.iter().flat_map(|r| &r.result.warnings).collect();
    said.sort();
    said.dedup();
    for w in said {
        warnings.add(cell.key(), w.code, w.message.clone(), None);
    }
    let unwritten = rs.iter().filter(|r| {
        let a = &r.attribution;
        a.device_write_bytes.is_some_and(|d| a.benchmark_storage_write_bytes > 2 * d.max(1 << 20))
    });
    if unwritten.count() > 0 {
        warnings.add(
            cell.key(),
            Code::WritesInPageCache,
            "most of the benchmark's buffered writes were still in the page cache when the run ended (dirtied far more than reached the device): the result measures memory; run longer, add fsync, or use direct=1",
            None,
        );
    }
    if let (Some(dev), Some(bench)) =
        (metrics.get("attribution/device_write_MiB").map(|s| s.mean), metrics.get("attribution/benchmark_write_MiB").map(|s| s.mean))
    {
        if dev > bench * 1.5 + 1.0 {
            warnings.add(
                cell.key(),
                Code::OtherDeviceWrites,
                "the device saw far more writes than the benchmark issued: other I/O (journal, background load, other processes) reached the device",
                Some(format!("{dev:.1} vs {bench:.1} MiB")),
            );
        }
    }
}

/// The cell's headline metrics in the order the tables show them, and each
/// one's unit.
fn headlines_of(rs: &[&ExperimentRun], metrics: &BTreeMap<String, Summary>) -> (Vec<String>, BTreeMap<String, String>) {
    let mut declared: Vec<(String, String)> = rs
        .first()
        .map(|r| crate::stats::metrics::headlines(&r.result))
        .unwrap_or_default()
        .into_iter()
        .filter(|(m, _)| metrics.contains_key(m))
        .collect();
    if metrics.contains_key(WRITE_SHARE) {
        declared.push((WRITE_SHARE.into(), "%".into()));
    }
    // A traced experiment's figures per cell, as the seeds tabulate them.
    for (m, unit) in TRACE_HEADLINES {
        if metrics.contains_key(*m) {
            declared.push((m.to_string(), unit.to_string()));
        }
    }
    let headline_order: Vec<String> = declared.iter().map(|(m, _)| m.clone()).collect();
    (headline_order, declared.into_iter().collect())
}

/// Each headline metric's value per run, with the run's round and
/// position, in the order of `rs` (as `collect` gives the values).
fn rounds_of(
    per_run: &[(String, Vec<f64>)],
    rs: &[&ExperimentRun],
    headline: &BTreeMap<String, String>,
) -> BTreeMap<String, Vec<RoundValue>> {
    per_run
        .iter()
        .filter(|(m, _)| headline.contains_key(m))
        .map(|(m, v)| {
            let values = rs.iter().zip(v).map(|(r, &value)| RoundValue {
                round: r.order.as_ref().map_or(r.repeat, |o| o.round),
                position: r.order.as_ref().map(|o| o.position),
                value,
            });
            (m.clone(), values.collect())
        })
        .collect()
}

/// The machine's load around each run of the cell, where the order was recorded.
fn loads_of(rs: &[&ExperimentRun]) -> Vec<RunLoad> {
    rs.iter()
        .filter_map(|r| r.order.as_ref())
        .map(|o| RunLoad {
            round: o.round,
            position: o.position,
            load1_start: o.load_start.load1,
            load1_end: o.load_end.load1,
            others_cpu_pct: o.others_cpu_pct,
            runnable: o.runnable,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testutil::{job, op, run};
    use crate::result::warning::MAX_CHARS;

    fn one(workload: &str, repeat: u32, ops: u64) -> ExperimentRun {
        let mut j = job("j", 1_000_000_000, &[op("read", ops, ops * 4096, 1000)]);
        j.headline = j.op_headline();
        let mut result = run(&[j], &[]);
        result.warnings.push(Warning::new(Code::WorkingSetFitsInRam, "buffered I/O over a working set of 4 MiB, which fits in RAM"));
        ExperimentRun {
            schema: crate::result::experiment::RUN_SCHEMA.into(),
            experiment: "many".into(),
            cell: Cell { target: "t".into(), workload: workload.into(), cache: "cold".into(), background: "none".into() },
            repeat,
            target: Default::default(),
            cache: Default::default(),
            background: None,
            attribution: Default::default(),
            result,
            order: None,
        }
    }

    #[test]
    fn an_experiment_of_many_cells_says_each_warning_in_one_short_line() {
        // 300 cells whose repeats disagree, a failed run with a long error
        // in every third, a cache scenario that took effect nowhere and the
        // same warning from every run: each used to list every cell.
        let mut runs = Vec::new();
        for i in 0..300 {
            let w = format!("workload-{i}");
            runs.push(one(&w, 1, 100));
            runs.push(one(&w, 2, 200));
            if i % 3 == 0 {
                let mut failed = one(&w, 3, 0);
                failed.result.failed = Some(format!("job 'j': {}", "an error that goes on ".repeat(40)));
                runs.push(failed);
            }
        }
        let s = summarize_experiment("many", &runs, runs.len());
        for code in [Code::Unsteady, Code::RunFailed, Code::CacheNotApplied, Code::WorkingSetFitsInRam] {
            let said: Vec<&Warning> = s.warnings.iter().filter(|w| w.code == code).collect();
            assert_eq!(said.len(), 1, "{code}: {said:?}");
            assert!(said[0].message.contains(" more"), "{code} names a few and counts the rest: {}", said[0].message);
        }
        for w in &s.warnings {
            assert!(w.message.chars().count() <= MAX_CHARS, "{} chars: {}", w.message.chars().count(), w.message);
            assert!(w.details.len() <= 1000, "{w:?}");
        }
        let failed = s.warnings.iter().find(|w| w.code == Code::RunFailed).unwrap();
        assert_eq!(failed.details.len(), 100, "every failed run, with its whole error, in the details");
        assert!(failed.details[0].contains(&"an error that goes on ".repeat(40)), "{}", failed.details[0]);
    }
}
