//! `fsbench experiment FILE`: run a matrix and write runs, report.md (also shown), summaries and charts.
//!
//! The steps, each before the next: load the experiment (from FILE, or with
//! `--resume` from what its directory recorded), check every target and
//! workload, record the experiment in a new directory, run, summarise.
//! Nothing is set up or written until the checks pass.

use super::cleanup::{RESULTS_LOCK, RESULTS_LOCK_NOTE};
use super::resume;
use super::CommonArgs;
use crate::frontend::experiment::{self, Experiment};
use crate::report::experiment::write_all;
use crate::report::export::{DocKind, Document};
use crate::result::load::load_experiment_runs;
use crate::runner::experiment::{preflight, record, run, write_record, ExperimentOptions};
use crate::stats::experiment::summarize_experiment;
use clap::Args;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

#[derive(Args, Debug)]
pub struct ExperimentArgs {
    /// The experiment file (TOML). With --resume it may be left out (the
    /// directory keeps a copy); given, it must be the same text.
    #[arg(required_unless_present = "resume")]
    pub(super) file: Option<PathBuf>,
    /// Output directory, new or empty (default: results/NAME-TIMESTAMP).
    #[arg(long)]
    pub(super) out: Option<PathBuf>,
    /// Finish the experiment in DIR with the parameters it was started with,
    /// without redoing finished runs (failed ones are run again).
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub(super) resume: Option<PathBuf>,
    /// Override a [params] value: --set size=1g (repeatable). With --resume,
    /// only the values the experiment was started with are accepted.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub(super) sets: Vec<String>,
    /// Stop at the first failed run instead of recording it and going on.
    #[arg(long)]
    pub(super) fail_fast: bool,
    /// Shuffle the interleaved order from N (overrides the file's `seed`;
    /// report.md gives the seed an experiment ran with, to rerun its order).
    #[arg(long, value_name = "N")]
    pub(super) seed: Option<u64>,
    /// interleaved (default: round r runs repeat r of every cell, shuffled)
    /// or sequential (every run of one target, then the next). Overrides
    /// the file's `order`.
    #[arg(long, value_name = "ORDER", value_parser = ["interleaved", "sequential"])]
    pub(super) order: Option<String>,
    /// Check FILE and print what would run (targets, workloads, caches,
    /// backgrounds, repeats, runs, gaps); set up and write nothing.
    #[arg(long, conflicts_with_all = ["resume", "out"])]
    pub(super) check: bool,
    #[command(flatten)]
    pub(super) common: CommonArgs,
}

/// An experiment ready to run: what it is, the text it was read from, the
/// `--set` it was started with, and where its results go.
pub(super) struct Loaded {
    pub exp: Experiment,
    pub text: String,
    pub sets: Vec<String>,
    pub out: PathBuf,
}

pub fn run_cmd(a: ExperimentArgs) -> i32 {
    if a.check {
        return super::experiment_check::run(&a);
    }
    let exporter = match super::exporter_for("experiment", &a.common.output_format, DocKind::Experiment) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if let Err(code) = super::check_output("experiment", &a.common.output) {
        return code;
    }
    let loaded = match &a.resume {
        Some(dir) => resume::load(dir, &a),
        None => load_new(&a),
    };
    let Loaded { exp, text, sets, out } = match loaded {
        Ok(l) => l,
        Err(e) => {
            super::fail(format!("fsbench experiment: error: {e}"));
            return 2;
        }
    };
    // The results directory holds every run, report, chart and trace.
    let flag = if a.resume.is_some() { "--resume" } else { "--out" };
    if let Err(code) = super::check_outputs("experiment", &[(flag.to_string(), out.clone())]) {
        return code;
    }
    if !checks_pass(&exp, &a.common) {
        eprintln!("fsbench: nothing was run or created");
        return 2;
    }
    // Ctrl-C from here on stops the experiment the normal way (undoing
    // what a killed run left may take a while).
    let stop = super::install_stop_handler();
    let _lock = match super::cleanup::claim_results_dir(&out, a.resume.is_some()) {
        Ok(l) => l,
        Err(code) => return code,
    };
    let plan = record(&exp, &sets);
    if a.resume.is_none() {
        if let Err(e) = write_record(&out, &text, &plan) {
            super::fail(format!("fsbench experiment: error: {e}"));
            return 1;
        }
    }
    crate::environment::cleanup::install_panic_hook();
    let opts = ExperimentOptions {
        out: out.clone(),
        resume: a.resume.is_some(),
        allow_device: a.common.allow_device,
        allow_fill: a.common.allow_fill,
        fail_fast: a.fail_fast,
        stop,
        events: std::sync::Arc::new(super::events::Terminal::new(super::want_progress(&a.common))),
    };
    eprintln!("fsbench: experiment '{}' → {}", exp.name, out.display());
    let alloc_warnings = crate::runner::experiment::allocation_warnings(&exp);
    super::events::echo_warnings(&alloc_warnings);
    let outcome = run(&exp, &opts);
    crate::environment::cleanup::run_all();
    if let Err(e) = &outcome {
        eprintln!("fsbench: error: {e}");
    }
    let runs = match load_experiment_runs(&out) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fsbench: error: {e}");
            return 1;
        }
    };
    let mut summary = summarize_experiment(&exp.name, &runs, plan.runs.len());
    summary.set_design(exp.order, exp.seed);
    summary.order_levels(crate::stats::factors::Levels::of(&exp));
    summary.gaps = exp.gaps.clone();
    summary.warnings.extend(alloc_warnings);
    if let Err(e) = write_all(&out, &summary, &runs) {
        eprintln!("fsbench: error: {e}");
        return 1;
    }
    if let Err(code) = super::emit_doc(&exporter, &Document::Experiment(&summary), &a.common.output) {
        return code;
    }
    let finish = resume::command(&a, &exp.file, &sets, &out);
    if opts.stop.load(Ordering::Relaxed) {
        eprintln!("fsbench: interrupted; finish with: {finish}");
        return 130;
    }
    if !summary.complete() {
        eprintln!(
            "fsbench: INCOMPLETE: {} of {} planned runs done; {} FAILED (left out of the statistics), {} not run; {}",
            summary.done,
            summary.planned,
            summary.failed,
            summary.not_run(),
            resume::hint(&finish, summary.failed, outcome.as_ref().map(|o| o.failed_again.as_slice()).unwrap_or_default())
        );
        return 1;
    }
    if outcome.is_err() {
        1
    } else {
        0
    }
}

/// A new experiment from FILE, into a new or empty directory.
/// Every check that needs no set-up (`runner::experiment::preflight`, and
/// the space for what the workloads lay out and grow), each problem said on
/// stderr with the file; `--check` and a run share it.
pub(super) fn checks_pass(exp: &Experiment, common: &CommonArgs) -> bool {
    let mut problems = preflight(exp, common.allow_device, common.allow_uncontrolled).err().unwrap_or_default();
    problems.extend(crate::runner::experiment_space::preflight(exp, common.allow_fill).err().unwrap_or_default());
    for p in &problems {
        super::fail(format!("fsbench experiment: error: {}: {p}", exp.file.display()));
    }
    problems.is_empty()
}

fn load_new(a: &ExperimentArgs) -> Result<Loaded, String> {
    let file = a.file.as_deref().expect("clap requires FILE without --resume");
    let text = experiment::read(file).map_err(|e| e.to_string())?;
    let mut exp = experiment::parse(&text, file, &a.sets).map_err(|e| e.to_string())?;
    if let Some(seed) = a.seed {
        exp.seed = seed;
    }
    if let Some(o) = &a.order {
        exp.order = experiment::Order::parse(o).map_err(|e| format!("--order: {e}"))?;
    }
    let out = a.out.clone().unwrap_or_else(|| PathBuf::from("results").join(format!("{}-{}", exp.name, timestamp())));
    check_fresh(&out)?;
    // The last value of a parameter set twice is the one in force.
    let mut sets: Vec<String> = Vec::new();
    for s in &a.sets {
        let name = s.split_once('=').map(|(k, _)| k).unwrap_or(s);
        let seen = sets.iter().any(|x| x.split_once('=').is_some_and(|(k, _)| k == name));
        if let Some(v) = exp.params.get(name).filter(|_| !seen) {
            sets.push(format!("{name}={v}"));
        } else if name == experiment::REPEAT_SET && !seen {
            sets.push(format!("{name}={}", exp.repeat));
        }
    }
    Ok(Loaded { exp, text, sets, out })
}

/// The results of one experiment only: the directory is new or empty.
fn check_fresh(out: &Path) -> Result<(), String> {
    let mut entries = match std::fs::read_dir(out) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(format!("--out {}: {e}", out.display())),
        Ok(entries) => entries,
    };
    if entries.next().is_some() {
        // Another experiment writing there right now is the likelier story.
        let lock = out.join(RESULTS_LOCK);
        if lock.is_file() {
            if let Err(crate::environment::lock::LockError::InUse(m)) = crate::environment::lock::lock_file(&lock, out, RESULTS_LOCK_NOTE) {
                return Err(m.to_string());
            }
        }
        return Err(format!(
            "--out {0}: the directory is not empty; an experiment writes into a new or empty directory \
             (to finish the experiment in it, use --resume {0}; otherwise choose another --out)",
            out.display()
        ));
    }
    Ok(())
}

/// UTC timestamp for directory names, e.g. 20261122-041500.
fn timestamp() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let t = secs as libc::time_t;
    // SAFETY: libc::tm is integers plus (on glibc) a nullable tm_zone pointer, for all of which all-zero bytes is a
    // valid value.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: gmtime_r reads the live local `t` and writes only into the live local `tm`; being the re-entrant variant,
    // it keeps no pointer to either.
    unsafe { libc::gmtime_r(&t, &mut tm) };
    format!("{:04}{:02}{:02}-{:02}{:02}{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec)
}
