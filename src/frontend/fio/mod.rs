//! fio job files and fio-style command-line options → `JobSpec`s.
//!
//! - `ini`: job-file lines, sections, comments, `include`, positions
//! - `expand`: `${VAR}`, `$ncpus`, `$mb_memory`, `$pagesize` in values
//! - sizes, times, booleans and their arithmetic: `crate::units`
//! - `options`: the option table (names, aliases, help, validating setters)
//! - `build`: entries and arguments → jobs, late checks

// A parse error is built once per problem, on a cold path: its size does
// not matter, and one type carrying the location keeps the messages uniform.
#![allow(clippy::result_large_err)]

mod build;
mod cmdline;
mod family;
mod fio_names;
pub use family::{Fio, LAYOUT};
mod expand;
mod ini;
pub mod options;
mod options_buffers;
mod options_engine;
mod options_engines_misc;
mod options_log;
mod options_misc;
mod options_verify;
#[cfg(test)]
mod tests;

use crate::model::job::{JobSpec, MAX_CLONES};
use crate::result::warning::Warning;
use std::fmt;
use std::path::PathBuf;

/// How strict the parser is, and fio's flags that act on the parse.
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Turn unknown options into warnings instead of errors.
    pub ignore_unknown: bool,
    /// fio's `--section`: run only these job sections (all when empty).
    pub sections: Vec<String>,
    /// fio's `--readonly`: refuse any job that writes.
    pub readonly: bool,
    /// fio's `--warnings-fatal`: a warning stops the parse like an error.
    pub warnings_fatal: bool,
    /// fio's `--max-jobs`: the most clones the jobs may start.
    pub max_jobs: Option<u32>,
}

/// The jobs of one invocation, in file order, plus warnings for stderr.
#[derive(Debug, Default)]
pub struct Parsed {
    pub jobs: Vec<JobSpec>,
    pub warnings: Vec<Warning>,
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
    /// The other problems found in the same pass, in input order, so one run
    /// shows them all (fio stops at the first).
    pub also: Vec<FioError>,
}

impl FioError {
    /// An error about a whole input (no line or option).
    pub(crate) fn whole(source: &str, option: Option<&str>, message: impl Into<String>) -> FioError {
        FioError {
            source: source.to_string(),
            line: None,
            col: None,
            section: None,
            option: option.map(str::to_string),
            message: message.into(),
            also: Vec::new(),
        }
    }

    /// One error carrying every problem found, or `None` when there was none.
    fn gather(mut all: Vec<FioError>) -> Option<FioError> {
        let mut seen = std::collections::HashSet::new();
        all.retain(|e| seen.insert(e.to_string()));
        let mut first = all.drain(..1.min(all.len())).next()?;
        first.also = all;
        Some(first)
    }
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
        write!(f, ": {}", self.message)?;
        for e in &self.also {
            write!(f, "\n{e}")?;
        }
        Ok(())
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
/// Every problem is collected and reported together.
fn parse_entries(
    files: Vec<(String, Vec<ini::Entry>)>,
    args: &[String],
    opts: &ParseOptions,
    env: expand::Env,
) -> Result<Parsed, FioError> {
    let source = files.first().map_or_else(|| build::COMMAND_LINE.to_string(), |(s, _)| s.clone());
    let mut b = build::Builder { opts, env, warnings: Vec::new(), errors: Vec::new() };
    let jobs = if files.is_empty() { b.command_line_jobs(args) } else { file_jobs(&mut b, &files, args) };
    for n in jobs.iter().flat_map(|j| &j.state.notes) {
        if !b.warnings.contains(n) {
            b.warnings.push(n.clone());
        }
    }
    if let Err(e) = check_wait_for(&jobs) {
        b.errors.push(e);
    }
    let jobs = select_sections(jobs, &opts.sections, &source, &mut b.errors);
    let mut specs = Vec::new();
    for job in jobs {
        match build::finish(job) {
            Ok(spec) => specs.push(spec),
            Err(e) => b.errors.push(e),
        }
    }
    // fio's exitall is one switch for the whole run: once a job sets it,
    // every job that ends stops the jobs its own exit_what names.
    if specs.iter().any(|s| s.misc.exitall) {
        for s in specs.iter_mut() {
            s.misc.exitall = true;
        }
    }
    let clones: u64 = specs.iter().map(|j| u64::from(j.numjobs)).sum();
    let limit = opts.max_jobs.unwrap_or(MAX_CLONES).min(MAX_CLONES);
    if clones > u64::from(limit) {
        let why = if opts.max_jobs.is_some_and(|m| m < MAX_CLONES) { "--max-jobs allows" } else { "can run at once, as in fio" };
        let message = format!("the jobs start {clones} clones (the sum of numjobs) but at most {limit} {why}");
        b.errors.push(FioError::whole(&source, Some("numjobs"), message));
    }
    if let Err(message) = files_fit(&specs, crate::host::open_files_limit(), crate::host::meminfo::read_meminfo().total) {
        b.errors.push(FioError::whole(&source, Some("nrfiles"), message));
    }
    if opts.readonly {
        for s in specs.iter().filter(|s| s.modifies_files()) {
            let message = format!("job '{}' writes ({}) but --readonly forbids writing", s.name, s.rw.fio_name());
            b.errors.push(FioError::whole(&source, Some("rw"), message));
        }
    }
    if opts.warnings_fatal {
        for w in b.warnings.drain(..) {
            b.errors.push(FioError::whole(&source, None, format!("{} (--warnings-fatal)", w.message)));
        }
    }
    match FioError::gather(b.errors) {
        Some(e) => Err(e),
        None => Ok(Parsed { jobs: specs, warnings: b.warnings }),
    }
}

/// fio's `--section`: keep the named job sections, in file order; a name
/// that matches no section is an error, as a typo would otherwise run nothing.
fn select_sections(jobs: Vec<build::Job>, sections: &[String], source: &str, errors: &mut Vec<FioError>) -> Vec<build::Job> {
    if sections.is_empty() {
        return jobs;
    }
    for s in sections.iter().filter(|s| !jobs.iter().any(|j| &j.section == *s)) {
        let names: Vec<&str> = jobs.iter().map(|j| j.section.as_str()).collect();
        errors.push(FioError::whole(source, None, format!("--section={s}: no such job section; the sections are: {}", names.join(", "))));
    }
    jobs.into_iter().filter(|j| sections.contains(&j.section)).collect()
}

/// The jobs of all files, each with the command-line overrides applied.
fn file_jobs(b: &mut build::Builder, files: &[(String, Vec<ini::Entry>)], args: &[String]) -> Vec<build::Job> {
    let mut all = Vec::new();
    for (source, entries) in files {
        let mut jobs = b.file_jobs(entries);
        if jobs.is_empty() {
            b.errors.push(FioError::whole(source, None, "no jobs defined: expected a [jobname] section (only [global] was found)"));
        }
        for job in &mut jobs {
            b.overrides(job, args);
        }
        all.extend(jobs);
    }
    all
}

/// `wait_for` names a job defined before the waiting one, and only once
/// (fio's rules: no forward references, a waitee's name is unique).
fn check_wait_for(jobs: &[build::Job]) -> Result<(), FioError> {
    for (i, j) in jobs.iter().enumerate() {
        let Some(name) = &j.state.spec.misc.wait_for else { continue };
        let loc = j.set_at.get("wait_for").cloned().unwrap_or_default();
        let earlier = jobs[..i].iter().filter(|e| &e.state.spec.name == name).count();
        let msg = match earlier {
            1 => continue,
            0 if jobs.iter().any(|e| &e.state.spec.name == name) => {
                format!("job '{name}' is defined after this one; wait_for names an earlier job")
            }
            0 => format!("no job named '{name}' before this one; wait_for names an earlier job"),
            n => format!("{n} jobs are named '{name}'; the job wait_for names must be unique"),
        };
        return Err(loc.err(Some("wait_for"), msg));
    }
    Ok(())
}

/// Descriptors kept back for the process itself (logs, the trace, stdio).
const SPARE_FDS: u64 = 64;
/// What one file costs the runner in memory, at least (its path, its
/// state): bounds the files of engines that work on them by path.
const BYTES_PER_FILE: u64 = 1024;

/// Whether the jobs' files fit this process and machine, before anything
/// lays them out: fsbench keeps every file of every clone open, so files
/// opened for data are bounded by the descriptors it may open, and every
/// file by the memory its path and state take.
fn files_fit(specs: &[JobSpec], open_files: u64, ram_bytes: u64) -> Result<(), String> {
    let mut opened = 0u64;
    let mut all = 0u64;
    for s in specs {
        let Some(engine) = crate::model::engine::find(&s.ioengine) else { continue };
        if engine.caps.diskless || !engine.caps.files.laid_out() {
            continue;
        }
        let per_clone = if s.filenames.is_empty() { u64::from(s.nrfiles) } else { s.filenames.len() as u64 };
        let n = per_clone.saturating_mul(u64::from(s.numjobs));
        all = all.saturating_add(n);
        if engine.caps.files.opened() {
            opened = opened.saturating_add(n);
        }
    }
    let fds = open_files.saturating_sub(SPARE_FDS);
    if opened > fds {
        return Err(format!(
            "the jobs keep {opened} files open at once (nrfiles × numjobs over the jobs): expected at most {fds}, as this process may open {open_files} files (ulimit -n)"
        ));
    }
    let most = ram_bytes / BYTES_PER_FILE;
    if all > most {
        return Err(format!(
            "the jobs lay out {all} files (nrfiles × numjobs over the jobs): expected at most {most} on this machine ({} of RAM)",
            crate::units::bytes(ram_bytes)
        ));
    }
    Ok(())
}
