//! `fsbench fio|filebench --repeat N [--cache S] [--background B]`: the same
//! workload N times with the environment re-applied before each run, then
//! statistics.

use super::CommonArgs;
use crate::environment::background::BackgroundLoad;
use crate::environment::cache;
use crate::frontend::environment::{parse_background, parse_cache};
use crate::model::environment::CacheScenario;
use crate::model::Plan;
use crate::report::export::{DocKind, Document};
use crate::runner::{self, RunOptions};
use crate::stats::repeated::Repeated;
use std::sync::atomic::Ordering;

/// The flags that make a command repeat its workload (shared by `fio` and
/// `filebench`).
#[derive(clap::Args, Debug, Clone)]
pub struct RepeatArgs {
    /// Run the workload N times and report statistics over the runs.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub repeat: u32,
    /// Cache scenario applied before each measured run, once the workload's
    /// files exist: warm, cold, polluted:SIZE (fresh-mount needs a managed
    /// target: use `fsbench experiment`).
    #[arg(long)]
    pub cache: Option<String>,
    /// Background load during each run, e.g. files or files:fsync.
    #[arg(long)]
    pub background: Option<String>,
}

impl RepeatArgs {
    /// Any of the flags given: the run goes through `run` below.
    pub fn wanted(&self) -> bool {
        self.repeat > 1 || self.cache.is_some() || self.background.is_some()
    }
}

pub fn run(plan: Plan, common: &CommonArgs, flags: &RepeatArgs, command: Vec<String>) -> i32 {
    let exporter = match super::exporter_for("--repeat", &common.output_format, DocKind::Repeated) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let (repeat, cache_s, bg) = (flags.repeat, flags.cache.as_deref(), flags.background.as_deref());
    let scenario = match cache_s.map(parse_cache).transpose() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fsbench: error: --cache: {e}");
            return 2;
        }
    };
    let bg_dir = plan.data_dir().join("fsbench-background");
    let bg_spec = match bg.map(|b| parse_background(b, bg_dir)).transpose() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fsbench: error: --background: {e}");
            return 2;
        }
    };
    let stop = super::install_stop_handler();
    let mut runs = Vec::new();
    let mut cache_reports = Vec::new();
    let mut bg_reports = Vec::new();
    for i in 1..=repeat {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let opts = RunOptions {
            cache_controlled: scenario.as_ref().is_some_and(|s| *s != CacheScenario::Warm),
            allow_device: common.allow_device,
            keep_files: common.keep_files,
            stop: stop.clone(),
            progress: super::want_progress(common),
            command: command.clone(),
        };
        // The cache scenario, then the background load, once the files are in place.
        let (mut guard, mut load, mut load_err) = (None, None, None);
        let result = runner::execute(&plan, &opts, &mut |files| {
            if let Some(s) = &scenario {
                let (r, g) = cache::apply_guarded(s, None, files);
                guard = Some(g);
                if !r.applied {
                    eprintln!(
                        "fsbench: warning: run {i}: cache scenario '{}' did not take effect: {}",
                        s.label(),
                        r.note.clone().unwrap_or_default()
                    );
                }
                cache_reports.push(r);
            }
            if let Some(s) = &bg_spec {
                match BackgroundLoad::start(s) {
                    Ok(l) => load = Some(l),
                    Err(e) => load_err = Some(e),
                }
            }
        });
        drop(guard);
        if let Some(e) = load_err {
            eprintln!("fsbench: error: background load: {e}");
            return 1;
        }
        if let Some(l) = load {
            match l.stop() {
                Ok(r) => {
                    if let Some(e) = &r.error {
                        eprintln!("fsbench: warning: run {i}: the background load failed: {e}");
                    }
                    bg_reports.push(r)
                }
                Err(e) => eprintln!("fsbench: warning: background load: {e}"),
            }
        }
        match result {
            Ok(r) => {
                eprintln!("fsbench: run {i}/{repeat} done");
                runs.push(r);
            }
            Err(e) => {
                eprintln!("fsbench: error: run {i}: {e}");
                return 1;
            }
        }
    }
    let last = runs.last().map(|r| super::fio::exit_code(r, stop.load(Ordering::Relaxed)));
    let doc = Repeated::new(cache_s.map(str::to_string), bg.map(str::to_string), cache_reports, bg_reports, runs);
    if let Err(code) = super::emit_doc(exporter, &Document::Repeated(&doc), &common.output) {
        return code;
    }
    last.unwrap_or(1)
}
