//! `fsbench experiment FILE`: run a matrix and write runs, summaries and charts.

use super::CommonArgs;
use crate::frontend::experiment;
use crate::report::experiment::write_all;
use crate::report::export::{DocKind, Document};
use crate::result::load::load_experiment_runs;
use crate::runner::experiment::{run, ExperimentOptions};
use crate::stats::experiment::summarize_experiment;
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

#[derive(Args, Debug)]
pub struct ExperimentArgs {
    /// The experiment file (TOML).
    file: PathBuf,
    /// Output directory (default: results/NAME-TIMESTAMP).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Finish an interrupted experiment in DIR without redoing finished runs.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    resume: Option<PathBuf>,
    /// Override a [params] value: --set size=1g (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    sets: Vec<String>,
    #[command(flatten)]
    common: CommonArgs,
}

pub fn run_cmd(a: ExperimentArgs) -> i32 {
    let exporter = match super::exporter_for("experiment", &a.common.output_format, DocKind::Experiment) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if let Err(code) = super::check_output("experiment", &a.common.output) {
        return code;
    }
    let exp = match experiment::load(&a.file, &a.sets) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("fsbench: error: {e}");
            return 2;
        }
    };
    let (out, resume) = match (&a.resume, &a.out) {
        (Some(d), _) => {
            if !d.join("runs").is_dir() {
                eprintln!("fsbench: error: --resume {}: no runs/ directory there", d.display());
                return 2;
            }
            (d.clone(), true)
        }
        (None, Some(o)) => (o.clone(), false),
        (None, None) => (PathBuf::from("results").join(format!("{}-{}", exp.name, timestamp())), false),
    };
    let _lock = match super::cleanup::claim_results_dir(&out, resume) {
        Ok(l) => l,
        Err(code) => return code,
    };
    crate::environment::cleanup::install_panic_hook();
    let opts = ExperimentOptions {
        out: out.clone(),
        resume,
        allow_device: a.common.allow_device,
        stop: super::install_stop_handler(),
        events: std::sync::Arc::new(super::events::Terminal::new(super::want_progress(&a.common))),
    };
    eprintln!("fsbench: experiment '{}' → {}", exp.name, out.display());
    let alloc_warnings = crate::runner::experiment::allocation_warnings(&exp);
    for w in &alloc_warnings {
        eprintln!("fsbench: warning: {w}");
    }
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
    let mut summary = summarize_experiment(&exp.name, &runs);
    summary.warnings.extend(alloc_warnings);
    if let Err(e) = write_all(&out, &summary, &runs) {
        eprintln!("fsbench: error: {e}");
        return 1;
    }
    if let Err(code) = super::emit_doc(exporter, &Document::Experiment(&summary), &a.common.output) {
        return code;
    }
    if opts.stop.load(Ordering::Relaxed) {
        eprintln!("fsbench: interrupted; finish with: fsbench experiment {} --resume {}", a.file.display(), out.display());
        return 130;
    }
    let failed: usize = summary.cells.iter().map(|c| c.failed).sum();
    if failed > 0 {
        eprintln!("fsbench: {failed} run(s) FAILED and are left out of the statistics; --resume {} redoes them", out.display());
    }
    if outcome.is_err() || failed > 0 {
        1
    } else {
        0
    }
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
