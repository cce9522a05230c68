//! fio as a workload family: `fsbench fio JOBFILE... --key=value...` and
//! `[[workload]] fio = "job.fio", args = [...]`.

use super::{cmdline, ini, parse, FioError, ParseOptions};
use crate::frontend::confine::in_target;
use crate::frontend::experiment::{expand, ExperimentError, WorkloadDef};
use crate::frontend::{input_error, one_run, print_only, Frontend, FrontendError, Session};
use crate::model::engine::FileUse;
use crate::model::job::JobSpec;
use crate::model::recipe::{Lowered, Placement, Recipe, RecipeError};
use crate::model::{Plan, Workload};
use crate::result::warning::{Code, Warning};
use std::path::{Path, PathBuf};
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
        use clap::{Arg, ArgAction};
        let flag = |name: &'static str, help: &'static str| Arg::new(name).long(name).action(ArgAction::SetTrue).help(help);
        let value = |name: &'static str, help: &'static str| Arg::new(name).long(name).value_name("VALUE").help(help);
        clap::Command::new("fio")
            .about(self.about())
            .arg(flag("ignore-unknown", "Warn about options fsbench does not know instead of stopping"))
            .arg(value("section", "fio: run only this job section (repeatable)").action(ArgAction::Append))
            .arg(flag("parse-only", "fio: check the job files and options, run nothing"))
            .arg(flag("showcmd", "fio: print each job file as one fio command line"))
            .arg(flag("readonly", "fio: refuse any job that writes"))
            .arg(flag("warnings-fatal", "fio: a warning stops the run like an error"))
            .arg(value("max-jobs", "fio: the most clones (sum of numjobs) allowed").value_parser(clap::value_parser!(u32)))
            .arg(value("eta-newline", "fio: accepted; fsbench's progress line has its own rhythm"))
            .arg(value("status-interval", "fio: accepted; fsbench reports once, at the end"))
            .arg(value("alloc-size", "fio: accepted; fsbench has no shared-memory pool to size"))
            .arg(value("debug", "fio: accepted; fsbench has no debug categories"))
            .arg(value("terse-version", "fio: terse format version; only 3"))
    }
    fn raw_args(&self) -> bool {
        true
    }
    fn normalize_args(&self, raw: Vec<String>) -> Vec<String> {
        cmdline::normalize(raw)
    }
    fn lower_cli(&self, m: &clap::ArgMatches, raw: &[String]) -> Result<Session, FrontendError> {
        let words = cmdline::words(raw).map_err(FrontendError::Usage)?;
        if words.files.is_empty() && words.args.is_empty() {
            return Err(FrontendError::Usage("no job file and no --name=...; see `fsbench fio --help`".into()));
        }
        if let Some(v) = m.get_one::<String>("terse-version").filter(|v| *v != "3") {
            return Err(FrontendError::Usage(format!("--terse-version={v}: expected 3, the only terse version fsbench writes")));
        }
        let opts = ParseOptions {
            ignore_unknown: m.get_flag("ignore-unknown"),
            sections: m.get_many::<String>("section").map(|v| v.cloned().collect()).unwrap_or_default(),
            readonly: m.get_flag("readonly"),
            warnings_fatal: m.get_flag("warnings-fatal"),
            max_jobs: m.get_one::<u32>("max-jobs").copied(),
        };
        if m.get_flag("showcmd") {
            return showcmd(&words.files).map_err(input_error);
        }
        let mut parsed = parse(&words.files, &words.args, &opts).map_err(input_error)?;
        for flag in ["eta-newline", "status-interval", "alloc-size", "debug"].iter().filter(|f| m.contains_id(f)) {
            parsed.warnings.push(Warning::new(Code::IgnoredOption, format!("fio's --{flag} has no effect in fsbench")));
        }
        if m.get_flag("parse-only") {
            // fio prints nothing when the jobs parse; the warnings still go to stderr.
            for w in &parsed.warnings {
                eprintln!("fsbench fio: {}", w.line());
            }
            return Ok(print_only(String::new()));
        }
        Ok(one_run(Lowered { plan: Plan::new(Workload::Jobs(parsed.jobs), LAYOUT), warnings: parsed.warnings }))
    }
    fn workload_keys(&self) -> &'static [&'static str] {
        &["fio", "args"]
    }
    fn lower_workload(&self, w: &WorkloadDef) -> Result<Arc<dyn Recipe>, ExperimentError> {
        let file = w.existing_file("fio", "job file")?;
        let (sections, args): (Vec<String>, Vec<String>) = w.strings("args")?.into_iter().partition(|a| a.starts_with(SECTION));
        if file.is_none() && !args.iter().any(|a| a.starts_with("--name=")) {
            return Err(w.error("args", "expected fio = JOBFILE, or args with --name=..."));
        }
        if let Some(a) = args.iter().find(|a| *a == "--section") {
            return Err(w.error("args", format!("'{a}': expected {SECTION}NAME, one argument")));
        }
        if file.is_none() && !sections.is_empty() {
            return Err(
                w.error("args", format!("{}: --section picks job sections of the fio = JOBFILE, and this workload has none", sections[0]))
            );
        }
        let sections = sections.iter().map(|a| a[SECTION.len()..].to_string()).collect();
        Ok(Arc::new(FioRecipe { label: w.label.clone(), file, args, sections }))
    }
}

/// fio's `--showcmd`: each job file as one `fio --name=... --key=value`
/// line, sections in order (a global section's options come first, without
/// a name), values as written.
fn showcmd(files: &[PathBuf]) -> Result<Session, FioError> {
    let mut text = String::new();
    for f in files {
        text.push_str("fio");
        for e in ini::read_file(f)? {
            match e {
                ini::Entry::Section { name, .. } if name == "global" => {}
                ini::Entry::Section { name, .. } => text.push_str(&format!(" --name={name}")),
                ini::Entry::Option { key, value: Some(v), .. } => text.push_str(&format!(" --{key}={v}")),
                ini::Entry::Option { key, value: None, .. } => text.push_str(&format!(" --{key}")),
            }
        }
        text.push_str(" \n");
    }
    Ok(print_only(text))
}

/// fio's `--section=NAME` among a workload's `args`: not a job option but
/// which job sections of the file run, as on fio's command line (repeatable;
/// `[global]` always applies).
const SECTION: &str = "--section=";

/// A fio workload of an experiment, `${…}` still unexpanded.
#[derive(Debug)]
struct FioRecipe {
    label: String,
    file: Option<PathBuf>,
    args: Vec<String>,
    /// `--section=` values: the job sections to run (all when empty).
    sections: Vec<String>,
}

impl Recipe for FioRecipe {
    /// The files go to the target (directory, or the device itself) unless
    /// the workload places them, which it may only do inside the target.
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
        let mut sections = Vec::with_capacity(self.sections.len());
        for s in &self.sections {
            sections.push(expand(s, at.params, Some(&at.target)).map_err(err)?);
        }
        let opts = ParseOptions { sections, ..ParseOptions::default() };
        let mut parsed = parse(&files, &args, &opts).map_err(|e| err(e.to_string()))?;
        for job in &mut parsed.jobs {
            keep_in_target(job, at).map_err(err)?;
        }
        Ok(Lowered { plan: Plan::new(Workload::Jobs(parsed.jobs), LAYOUT), warnings: parsed.warnings })
    }
}

/// A job's files in the target, wherever the job file or the arguments put
/// them: `directory=`, each `filename=`, the donor file, and the names
/// `filename_format` (or the job's name) makes in the directory. A job
/// whose engine opens no file (null, cpuio, exec, net) names none.
fn keep_in_target(job: &mut JobSpec, at: &Placement) -> Result<(), String> {
    if crate::model::engine::find(&job.ioengine).is_some_and(|e| e.caps.diskless || e.caps.files == FileUse::None) {
        return Ok(());
    }
    if let Some(d) = &job.directory {
        job.directory = Some(in_target(at, "directory=", d)?);
    }
    for f in &mut job.filenames {
        *f = in_target(at, "filename=", f)?;
    }
    if let Some(donor) = &job.engine.donorname {
        job.engine.donorname = Some(in_target(at, "donorname=", Path::new(donor))?.display().to_string());
    }
    if job.filenames.is_empty() {
        if job.directory.is_none() {
            job.directory = Some(at.target.clone());
        }
        // Every clone's and file's name differs from the first only in numbers.
        if let Some(first) = job.file_paths(0).first() {
            let option = match &job.misc.filename_format {
                Some(f) => format!("filename_format={f} puts a file at "),
                None => format!("job '{}' puts a file at ", job.name),
            };
            in_target(at, &option, first)?;
        }
    }
    Ok(())
}
