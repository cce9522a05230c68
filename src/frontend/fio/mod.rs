//! fio job files and fio-style command-line options → `JobSpec`s.
//!
//! - `ini`: job-file lines, sections, comments, `include`, positions
//! - `expand`: `${VAR}`, `$ncpus`, `$mb_memory`, `$pagesize` in values
//! - sizes, times, booleans and their arithmetic: `crate::units`
//! - `options`: the option table (names, aliases, help, validating setters)
//! - `build`: entries and arguments → jobs, late checks

mod build;
mod family;
pub use family::{Fio, LAYOUT};
mod expand;
mod ini;
pub mod options;
mod options_engines_misc;
#[cfg(test)]
mod tests;

use crate::model::job::{JobSpec, MAX_CLONES};
use std::fmt;
use std::path::PathBuf;

/// How strict the parser is.
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Turn unknown options into warnings instead of errors.
    pub ignore_unknown: bool,
}

/// The jobs of one invocation, in file order, plus warnings for stderr.
#[derive(Debug, Default)]
pub struct Parsed {
    pub jobs: Vec<JobSpec>,
    pub warnings: Vec<String>,
}

/// A parse or validation error with its location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FioError {
    /// The job file, or "command line".
    pub source: String,
    pub line: Option<u32>,
    pub col: Option<u32>,
    pub section: Option<String>,
    pub option: Option<String>,
    pub message: String,
}

impl fmt::Display for FioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.source)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
            if let Some(c) = self.col {
                write!(f, ":{c}")?;
            }
        }
        if let Some(s) = &self.section {
            write!(f, ": [{s}]")?;
        }
        if let Some(o) = &self.option {
            write!(f, ": option '{o}'")?;
        }
        write!(f, ": {}", self.message)
    }
}

impl std::error::Error for FioError {}

/// Parse job files and fio-style `--key=value` arguments.
///
/// With job files, every argument overrides that option in every job (so
/// `job.fio --size=1g --runtime=10` shrinks a job file without editing it).
/// Without job files, `--name=X` starts a job and options before the first
/// `--name` are global defaults, as in fio.
pub fn parse(files: &[PathBuf], args: &[String], opts: &ParseOptions) -> Result<Parsed, FioError> {
    let mut entries = Vec::new();
    for f in files {
        entries.push((f.display().to_string(), ini::read_file(f)?));
    }
    parse_entries(entries, args, opts, &expand::process_env)
}

/// Everything after reading: entries of each file (or none) plus arguments.
fn parse_entries(
    files: Vec<(String, Vec<ini::Entry>)>,
    args: &[String],
    opts: &ParseOptions,
    env: expand::Env,
) -> Result<Parsed, FioError> {
    let mut b = build::Builder { opts, env, warnings: Vec::new() };
    let jobs = if files.is_empty() { b.command_line_jobs(args)? } else { file_jobs(&mut b, &files, args)? };
    let jobs = jobs.into_iter().map(build::finish).collect::<Result<Vec<_>, _>>()?;
    let clones: u64 = jobs.iter().map(|j| u64::from(j.numjobs)).sum();
    if clones > u64::from(MAX_CLONES) {
        let source = files.first().map_or_else(|| "command line".to_string(), |(s, _)| s.clone());
        let message = format!("the jobs start {clones} clones (the sum of numjobs) but at most {MAX_CLONES} can run at once, as in fio");
        return Err(FioError { source, line: None, col: None, section: None, option: Some("numjobs".into()), message });
    }
    Ok(Parsed { jobs, warnings: b.warnings })
}

/// The jobs of all files, each with the command-line overrides applied.
fn file_jobs(b: &mut build::Builder, files: &[(String, Vec<ini::Entry>)], args: &[String]) -> Result<Vec<build::Job>, FioError> {
    let mut all = Vec::new();
    for (source, entries) in files {
        let mut jobs = b.file_jobs(entries)?;
        if jobs.is_empty() {
            let msg = "no jobs defined: expected a [jobname] section (only [global] was found)";
            return Err(FioError { source: source.clone(), line: None, col: None, section: None, option: None, message: msg.into() });
        }
        for job in &mut jobs {
            b.overrides(job, args)?;
        }
        all.extend(jobs);
    }
    Ok(all)
}
