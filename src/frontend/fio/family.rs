//! fio as a workload family: `fsbench fio JOBFILE... --key=value...` and
//! `[[workload]] fio = "job.fio", args = [...]`.

use super::{parse, ParseOptions};
use crate::frontend::experiment::{expand, ExperimentError, WorkloadDef};
use crate::frontend::{input_error, one_run, Frontend, FrontendError, Session};
use crate::model::recipe::{Lowered, Placement, Recipe, RecipeError};
use crate::model::{Plan, Workload};
use std::path::PathBuf;
use std::sync::Arc;

/// The layout fio jobs are shown in.
pub const LAYOUT: &str = "fio";

pub struct Fio;

impl Frontend for Fio {
    fn name(&self) -> &'static str {
        "fio"
    }
    fn about(&self) -> &'static str {
        "Run fio job files or fio-style options: `fsbench fio JOB.fio [--size=1g ...]` or `fsbench fio --name=x --rw=randread ...`"
    }
    fn reads(&self) -> &'static str {
        "fio job files and fio's --key=value options (--name=NAME starts a job; options before the first --name apply to all; \
         with job files, options given on the command line override every job's value)"
    }
    fn command(&self) -> clap::Command {
        clap::Command::new("fio").about(self.about()).arg(
            clap::Arg::new("ignore-unknown")
                .long("ignore-unknown")
                .action(clap::ArgAction::SetTrue)
                .help("Warn about unknown fio options instead of stopping"),
        )
    }
    fn raw_args(&self) -> bool {
        true
    }
    fn lower_cli(&self, m: &clap::ArgMatches, raw: &[String]) -> Result<Session, FrontendError> {
        let (files, args): (Vec<&String>, Vec<&String>) = raw.iter().partition(|a| !a.starts_with('-'));
        if files.is_empty() && args.is_empty() {
            return Err(FrontendError::Usage("no job file and no --name=...; see `fsbench fio --help`".into()));
        }
        let files: Vec<PathBuf> = files.into_iter().map(PathBuf::from).collect();
        let args: Vec<String> = args.into_iter().cloned().collect();
        let opts = ParseOptions { ignore_unknown: m.get_flag("ignore-unknown") };
        let parsed = parse(&files, &args, &opts).map_err(input_error)?;
        Ok(one_run(Lowered { plan: Plan::new(Workload::Jobs(parsed.jobs), LAYOUT), warnings: parsed.warnings }))
    }
    fn workload_keys(&self) -> &'static [&'static str] {
        &["fio", "args"]
    }
    fn lower_workload(&self, w: &WorkloadDef) -> Result<Arc<dyn Recipe>, ExperimentError> {
        let file = w.existing_file("fio", "job file")?;
        let args = w.strings("args")?;
        if file.is_none() && !args.iter().any(|a| a.starts_with("--name=")) {
            return Err(w.error("args", "expected fio = JOBFILE, or args with --name=..."));
        }
        Ok(Arc::new(FioRecipe { label: w.label.clone(), file, args }))
    }
}

/// A fio workload of an experiment, `${…}` still unexpanded.
#[derive(Debug)]
struct FioRecipe {
    label: String,
    file: Option<PathBuf>,
    args: Vec<String>,
}

impl Recipe for FioRecipe {
    /// The files go to the target (directory, or the device itself) unless
    /// the workload places them.
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError> {
        let err = |message: String| RecipeError { workload: self.label.clone(), message };
        let mut args = Vec::with_capacity(self.args.len() + 1);
        for a in &self.args {
            args.push(expand(a, at.params, Some(&at.target)).map_err(err)?);
        }
        if !args.iter().any(|a| a.starts_with("--directory=") || a.starts_with("--filename=")) {
            let flag = if at.is_device { "--filename" } else { "--directory" };
            args.push(format!("{flag}={}", at.target.display()));
        }
        let files: Vec<PathBuf> = self.file.iter().cloned().collect();
        let parsed = parse(&files, &args, &ParseOptions::default()).map_err(|e| err(e.to_string()))?;
        Ok(Lowered { plan: Plan::new(Workload::Jobs(parsed.jobs), LAYOUT), warnings: parsed.warnings })
    }
}
