//! One run in its environment: the single way `--repeat` and experiments
//! run a cell. Once the workload's files are in place (before fio jobs,
//! after a Filebench flow has built its filesets) the cache scenario is
//! applied, then the background load starts, so a fresh mount never finds
//! the load's files open; after the run the load stops and what reached the
//! device is attributed.

use super::trace::{device_of, Owners, TraceRun};
use super::{execute, RunError, RunOptions};
use crate::environment::background::BackgroundLoad;
use crate::environment::cache;
use crate::environment::target::ActiveTarget;
use crate::model::environment::{BackgroundSpec, CacheScenario, TraceSpec};
use crate::model::Plan;
use crate::result::background::BackgroundReport;
use crate::result::cache::CacheReport;
use crate::result::experiment::Attribution;
use crate::result::warning::{Code, Warning};
use crate::result::RunResult;
use std::path::PathBuf;

/// The environment a cell runs in.
#[derive(Default)]
pub struct Environment<'a> {
    pub cache: Option<&'a CacheScenario>,
    pub background: Option<&'a BackgroundSpec>,
    /// A target fsbench set up: a fresh mount remounts it, attribution
    /// reads its device.
    pub target: Option<&'a mut ActiveTarget>,
    /// Trace the run's device, writing the blktrace files under this base name.
    pub trace: Option<(&'a TraceSpec, PathBuf)>,
}

/// A run and what was done and seen around it.
pub struct CellRun {
    pub result: RunResult,
    /// Absent when no scenario was asked for.
    pub cache: Option<CacheReport>,
    pub background: Option<BackgroundReport>,
    pub attribution: Attribution,
}

pub fn run_cell(plan: &Plan, env: Environment, opts: &RunOptions) -> Result<CellRun, RunError> {
    let Environment { cache: scenario, background, mut target, trace } = env;
    let opts = RunOptions { cache_controlled: scenario.is_some_and(|s| *s != CacheScenario::Warm), ..opts.clone() };
    let (mut cache_step, mut load, mut tracing) = (None, Ok(None), Ok(None));
    let mut scope_warning = None;
    let result = execute(plan, &opts, &mut |files| {
        if let Some(s) = scenario {
            // The guard keeps a polluted scenario's file (and its cached
            // pages) for the length of the run.
            let (mut report, guard) = cache::apply_guarded(s, target.as_deref_mut(), files);
            if !report.applied {
                opts.events.warning(&Warning::new(
                    Code::CacheNotApplied,
                    format!("cache scenario '{}' did not take effect: {}", s.label(), report.note.as_deref().unwrap_or("no reason given")),
                ));
            }
            // A run that writes what it then reads (IOzone, Bonnie++) gets
            // the scenario at its start only: say so rather than "applied".
            scope_warning = plan
                .workload
                .shape()
                .reads_own_writes()
                .and_then(|reads| report.before_run_only(&reads))
                .map(|w| Warning::new(Code::CacheBeforeRunOnly, w));
            if let Some(w) = &scope_warning {
                opts.events.warning(w);
            }
            cache_step = Some((report, guard));
        }
        // After the cache step (its I/O is not the run's), before the
        // background load (whose I/O is).
        tracing = trace
            .as_ref()
            .map(|(spec, basename)| {
                let dev = device_of(spec, files, &plan.data_dir())?;
                let t = TraceRun::start(&dev, None, None, spec.act_mask, basename).map_err(|e| e.message)?;
                for why in t.reasons() {
                    opts.events.note(&format!("trace: {why}"));
                }
                opts.events.note(&format!("trace: {} on {dev}, files {}.blktrace.*", t.method(), basename.display()));
                Ok(t)
            })
            .transpose()
            .map_err(RunError::Environment);
        load = background.map(|b| BackgroundLoad::start(b).map_err(|e| RunError::Environment(format!("background load: {e}")))).transpose();
    });
    // The trace ends with the measured run, before the load's clean-up.
    let traced = tracing.and_then(|t| t.map(TraceRun::stop).transpose().map_err(RunError::Environment));
    let cache_report = cache_step.map(|(report, guard)| {
        drop(guard);
        report
    });
    let bg_report = match load? {
        Some(l) => Some(l.stop().map_err(|e| RunError::Environment(format!("background load: {e}")))?),
        None => None,
    };
    if let Some(e) = bg_report.as_ref().and_then(|b| b.error.as_ref()) {
        opts.events.warning(&Warning::new(Code::BackgroundLoadFailed, format!("the background load failed during the run: {e}")));
    }
    let mut result = result?;
    result.warnings.extend(scope_warning);
    if let Some(t) = traced? {
        let owners = Owners { background: bg_report.as_ref().map(|b| b.pid), ..Owners::this_process() };
        let written = result.jobs.iter().map(|j| j.issued().1 .1).sum();
        let report = t.report(&owners, Some(written)).map_err(RunError::Environment)?;
        if report.capture.lost_events > 0 {
            opts.events.warning(&Warning::new(
                Code::TraceLostEvents,
                format!("trace: the kernel lost {} events; the trace's figures are incomplete", report.capture.lost_events),
            ));
        }
        // A setting the trace could not put back does not make the run's
        // figures wrong: a warning, not a failed run.
        for w in &report.capture.warnings {
            opts.events.warning(w);
            result.warnings.push(w.clone());
        }
        result.trace = Some(report);
    }
    // A run that failed before its files were in place (refused for want of
    // space or inodes) keeps its own reason.
    if scenario.is_some() && cache_report.is_none() && result.failed.is_none() {
        return Err(RunError::Workload("the run ended before its cache scenario was applied".into()));
    }
    let device = target.as_ref().and_then(|t| t.info.device.clone());
    let attribution = Attribution::of(&result, device.as_deref(), bg_report.as_ref().map(|b| b.bytes_written).unwrap_or(0));
    Ok(CellRun { result, cache: cache_report, background: bg_report, attribution })
}
