//! Glue: turn reader entries and command-line arguments into `JobSpec`s.
//!
//! `[global]` is a `JobState` of its own; a job section starts as a copy of
//! it, which gives fio's rule that a global section only affects the jobs
//! after it. Options are recorded in `JobSpec::options` as they are applied,
//! so global ones come first.

use super::expand::{expand, Env};
use super::ini::Entry;
use super::options::{self, JobState};
use super::{cmdline, FioError, ParseOptions};
use crate::model::job::JobSpec;
use crate::result::warning::{Code, Warning};
use crate::units::clip;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub const COMMAND_LINE: &str = "command line";

/// Where an option was given, for errors found later.
#[derive(Clone, Debug, Default)]
pub struct Loc {
    pub source: String,
    pub line: Option<u32>,
    pub col: Option<u32>,
    pub section: Option<String>,
}

impl Loc {
    fn command_line(section: Option<&str>) -> Loc {
        Loc { source: COMMAND_LINE.into(), section: section.map(str::to_string), ..Loc::default() }
    }

    fn at_col(&self, col: u32) -> Loc {
        Loc { col: Some(col), ..self.clone() }
    }

    pub fn err(&self, option: Option<&str>, message: impl Into<String>) -> FioError {
        FioError {
            source: self.source.clone(),
            line: self.line,
            col: self.col,
            section: self.section.clone(),
            option: option.map(str::to_string),
            message: message.into(),
            also: Vec::new(),
        }
    }
}

/// A job being built plus where each option was last set.
#[derive(Clone, Debug)]
pub struct Job {
    pub state: JobState,
    pub set_at: HashMap<&'static str, Loc>,
    /// The section (or `--name`) that started the job; `name=` may rename
    /// the job, but `--section` selects by this.
    pub section: String,
}

impl Job {
    pub fn new(name: &str) -> Job {
        Job { state: JobState::new(name), set_at: HashMap::new(), section: name.to_string() }
    }

    /// A new job named `name` starting from these (global) settings.
    fn derive(&self, name: &str) -> Job {
        let mut job = self.clone();
        job.state.spec.global_options = job.state.spec.options.len();
        job.state.spec.name = name.to_string();
        job.section = name.to_string();
        job
    }
}

/// Shared inputs of one parse.
pub struct Builder<'a> {
    pub opts: &'a ParseOptions,
    pub env: Env<'a>,
    pub warnings: Vec<Warning>,
    /// Every problem found so far; the parse goes on past each one so a
    /// single run reports them all.
    pub errors: Vec<FioError>,
}

/// One `key[=value]` occurrence with its locations.
struct Given<'a> {
    key: &'a str,
    value: Option<&'a str>,
    key_loc: Loc,
    value_loc: Loc,
}

impl Builder<'_> {
    /// Apply one option, noting its error (if any) and going on.
    fn give(&mut self, job: &mut Job, g: Given) {
        if let Err(e) = self.apply(job, g) {
            self.errors.push(e);
        }
    }

    /// Expand, validate and apply one option to `job`.
    fn apply(&mut self, job: &mut Job, g: Given) -> Result<(), FioError> {
        let Some(def) = options::find(g.key) else {
            return self.unknown(&g);
        };
        let value = match g.value {
            Some(v) => expand(v, self.env).map_err(|e| {
                let col = g.value_loc.col.map(|c| c + e.offset as u32);
                Loc { col, ..g.value_loc.clone() }.err(Some(g.key), e.message)
            })?,
            None if def.bare_ok() => "1".to_string(),
            None => return Err(g.key_loc.err(Some(g.key), format!("needs a value: expected {}=VALUE ({})", g.key, def.help))),
        };
        if value.trim().is_empty() {
            return Err(g.value_loc.err(Some(g.key), format!("empty value: expected {}", def.help)));
        }
        def.apply(&mut job.state, &value).map_err(|m| g.value_loc.err(Some(g.key), m))?;
        let recorded = if g.value.is_some() { value } else { String::new() };
        job.state.spec.options.push((g.key.to_string(), recorded));
        job.set_at.insert(def.name, g.key_loc);
        Ok(())
    }

    /// An option fsbench does not know: an error, or a warning with
    /// `ignore_unknown`. A real fio option is told apart from a typo.
    fn unknown(&mut self, g: &Given) -> Result<(), FioError> {
        let msg = if cmdline::is_fio_option(g.key) {
            "fio option not supported by fsbench (yet); docs/fio.md lists them (\"Options fsbench refuses\"). Pass --ignore-unknown to run without it (with a warning)"
                .to_string()
        } else {
            match options::suggest(g.key).or_else(|| cmdline::suggest_fio_option(g.key)) {
                Some(s) => format!("not a fio option; did you mean '{s}'?"),
                None => "not a fio option".to_string(),
            }
        };
        let err = g.key_loc.err(Some(g.key), msg);
        if !self.opts.ignore_unknown {
            return Err(err);
        }
        let warning = Warning::new(Code::IgnoredOption, format!("{err} (ignored)"));
        if !self.warnings.contains(&warning) {
            self.warnings.push(warning);
        }
        Ok(())
    }

    /// The jobs of one job file, from its entries.
    pub fn file_jobs(&mut self, entries: &[Entry]) -> Vec<Job> {
        let mut global = Job::new("global");
        let mut jobs: Vec<Job> = Vec::new();
        let mut in_global = true;
        for e in entries {
            match e {
                Entry::Section { name, .. } if name == "global" => in_global = true,
                Entry::Section { name, .. } => {
                    jobs.push(global.derive(name));
                    in_global = false;
                }
                Entry::Option { key, value, pos, value_col } => {
                    let section = if in_global { "global" } else { &jobs[jobs.len() - 1].state.spec.name };
                    let key_loc =
                        Loc { source: pos.source.clone(), line: Some(pos.line), col: Some(pos.col), section: Some(section.to_string()) };
                    let given = Given { key, value: value.as_deref(), value_loc: key_loc.at_col(*value_col), key_loc };
                    let job = if in_global { &mut global } else { jobs.last_mut().expect("a job section was seen") };
                    self.give(job, given);
                }
            }
        }
        jobs
    }

    /// Apply command-line overrides to a job read from a file.
    pub fn overrides(&mut self, job: &mut Job, args: &[String]) {
        for a in args {
            let (key, value) = match split_arg(a) {
                Ok(kv) => kv,
                Err(e) => {
                    self.errors.push(e);
                    continue;
                }
            };
            // No section: an override applies to every job alike (and its
            // warning or error is then given once, not once per job).
            let loc = Loc::command_line(None);
            self.give(job, Given { key, value, key_loc: loc.clone(), value_loc: loc });
        }
    }

    /// Jobs described only by arguments: options before the first `--name`
    /// are global, `--name=X` starts job X.
    pub fn command_line_jobs(&mut self, args: &[String]) -> Vec<Job> {
        let mut global = Job::new("global");
        let mut jobs: Vec<Job> = Vec::new();
        for a in args {
            let (key, value) = match split_arg(a) {
                Ok(kv) => kv,
                Err(e) => {
                    self.errors.push(e);
                    continue;
                }
            };
            if key == "name" {
                let name = value.unwrap_or_default().trim();
                if name.is_empty() {
                    self.errors.push(Loc::command_line(None).err(Some("name"), "expected --name=JOBNAME"));
                    continue;
                }
                jobs.push(global.derive(name));
            }
            let loc = Loc::command_line(jobs.last().map(|j| j.state.spec.name.as_str()));
            let job = match jobs.last_mut() {
                Some(j) => j,
                None => &mut global,
            };
            self.give(job, Given { key, value, key_loc: loc.clone(), value_loc: loc });
        }
        if jobs.is_empty() {
            self.errors.push(Loc::command_line(None).err(None, "no job defined: start one with --name=JOBNAME"));
        }
        jobs
    }
}

/// `--key=value` → (key, Some(value)); `--key` → (key, None). One dash
/// will do, as in fio (`-rw=read`).
fn split_arg(a: &str) -> Result<(&str, Option<&str>), FioError> {
    let bad = || Loc::command_line(None).err(None, format!("expected --option=value or --option, got '{}'", clip(a)));
    let body = a.strip_prefix("--").or_else(|| a.strip_prefix('-')).ok_or_else(bad)?;
    let (key, value) = match body.split_once('=') {
        Some((k, v)) => (k, Some(v)),
        None => (body, None),
    };
    if key.is_empty() || key.contains(char::is_whitespace) {
        return Err(bad());
    }
    Ok((key, value))
}

/// Checks that need the whole job, then the finished `JobSpec`.
pub fn finish(job: Job) -> Result<JobSpec, FioError> {
    let loc = |name: &str| job.set_at.get(name).cloned().unwrap_or_default();
    let mut spec = job.state.spec.clone();
    if spec.time_based && spec.runtime.is_none() {
        let msg = "time_based needs runtime: expected runtime=DURATION (e.g. runtime=60) as well";
        return Err(loc("time_based").err(Some("time_based"), msg));
    }
    check_verify(&job, &mut spec)?;
    check_min_rates(&job, &spec)?;
    super::options_buffers::finish(&job, &mut spec).map_err(|(opt, m)| loc(opt).err(Some(opt), m))?;
    if let Some(raw) = &job.state.filename {
        spec.filenames = split_filenames(raw, spec.directory.as_deref()).map_err(|m| loc("filename").err(Some("filename"), m))?;
    }
    if let Some(info) = crate::model::engine::find(&spec.ioengine) {
        if let Some(m) = info.caps.dirs.refuses(info.name, spec.rw.reads(), spec.rw.writes(), spec.rw.trims()) {
            let msg = format!("rw={} with {m}", spec.rw.fio_name());
            let at = if job.set_at.contains_key("rw") { "rw" } else { "ioengine" };
            return Err(loc(at).err(Some(at), msg));
        }
    }
    if spec.ioengine == "e4defrag" {
        let Some(name) = &spec.engine.donorname else {
            return Err(
                loc("ioengine").err(Some("ioengine"), "ioengine=e4defrag needs donorname=FILE (the donor file, in the job's directory)")
            );
        };
        // fio puts the donor in the job's directory, or the current one.
        let dir = spec.directory.clone().unwrap_or_else(|| PathBuf::from("."));
        spec.engine.donorname = Some(dir.join(name).display().to_string());
    }
    super::options_engines_misc::finish(&mut spec).map_err(|(opt, m)| loc(opt).err(Some(opt), m))?;
    super::options_engine::finish_cmdprio(&|o| job.set_at.contains_key(o), &spec).map_err(|(opt, m)| loc(opt).err(Some(opt), m))?;
    Ok(spec)
}

/// fio's rules between the verify options and the block sizes.
fn check_verify(job: &Job, spec: &mut JobSpec) -> Result<(), FioError> {
    use crate::model::job::{READ, WRITE};
    use crate::model::verify::VerifyMethod;
    let loc = |name: &str| job.set_at.get(name).cloned().unwrap_or_default();
    let v = &mut spec.verify;
    // A pattern alone means: check the header and the pattern (fio's default).
    if v.pattern.is_some() && v.method.is_none() && !job.set_at.contains_key("verify") {
        v.method = Some(VerifyMethod::Meta);
    }
    let Some(method) = v.method else { return Ok(()) };
    if method == VerifyMethod::Pattern && v.pattern.is_none() {
        return Err(loc("verify").err(Some("verify"), "verify=pattern needs verify_pattern=PATTERN (such as 0xdeadbeef) as well"));
    }
    let d = if spec.rw.writes() { WRITE } else { READ };
    let iv = v.effective_interval(spec.bs[d].min(), spec.bs[d].max());
    let hl = method.header_len();
    if hl >= iv {
        let at = if job.set_at.contains_key("verify_interval") { "verify_interval" } else { "verify" };
        let msg = format!(
            "verify={} needs {hl} bytes of header per interval, but the interval is {iv} bytes; use a larger verify_interval or bs",
            method.name()
        );
        return Err(loc(at).err(Some(at), msg));
    }
    if v.offset > 0 && v.offset + hl > iv {
        let msg = format!("verify_offset={} puts the {hl}-byte header past the end of the {iv}-byte interval", v.offset);
        return Err(loc("verify_offset").err(Some("verify_offset"), msg));
    }
    if v.offset > 0 && v.offset < hl {
        let msg =
            format!("verify_offset={} would overlap the {hl}-byte header with the data it swaps with; expected at least {hl}", v.offset);
        return Err(loc("verify_offset").err(Some("verify_offset"), msg));
    }
    Ok(())
}

/// fio's rules between the minimum rates and the rates: one kind of
/// minimum, and none above the rate it goes with.
fn check_min_rates(job: &Job, spec: &JobSpec) -> Result<(), FioError> {
    let loc = |name: &str| job.set_at.get(name).cloned().unwrap_or_default();
    let m = &spec.misc;
    if m.ratemin.iter().any(Option::is_some) && m.rate_iops_min.iter().any(Option::is_some) {
        let msg = "ratemin and rate_iops_min cannot both be given (fio refuses them together): expected one of the two";
        return Err(loc("rate_iops_min").err(Some("rate_iops_min"), msg));
    }
    for (d, dir) in ["reads", "writes"].iter().enumerate() {
        let over = |rate: Option<u64>, min: Option<u64>| matches!((rate, min), (Some(r), Some(m)) if m > r);
        if over(spec.rate[d], m.ratemin[d]) {
            let msg = format!(
                "ratemin={} for {dir} exceeds rate={} (fio refuses a minimum above the rate): expected at most the rate",
                m.ratemin[d].unwrap_or(0),
                spec.rate[d].unwrap_or(0)
            );
            return Err(loc("ratemin").err(Some("ratemin"), msg));
        }
        if over(spec.rate_iops[d], m.rate_iops_min[d]) {
            let msg = format!(
                "rate_iops_min={} for {dir} exceeds rate_iops={} (fio refuses a minimum above the rate): expected at most the rate",
                m.rate_iops_min[d].unwrap_or(0),
                spec.rate_iops[d].unwrap_or(0)
            );
            return Err(loc("rate_iops_min").err(Some("rate_iops_min"), msg));
        }
    }
    Ok(())
}

/// `a:b\:c` → `a`, `b:c`; relative names are joined with `directory`.
fn split_filenames(raw: &str, dir: Option<&Path>) -> Result<Vec<PathBuf>, String> {
    let mut names = vec![String::new()];
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => names.last_mut().expect("non-empty").push(chars.next().expect("peeked")),
            ':' => names.push(String::new()),
            c => names.last_mut().expect("non-empty").push(c),
        }
    }
    if names.iter().any(|n| n.trim().is_empty()) {
        return Err(format!("expected file names separated by ':', got '{}' (an empty name)", clip(raw)));
    }
    let join = |n: String| match dir {
        Some(d) if Path::new(&n).is_relative() => d.join(n),
        _ => PathBuf::from(n),
    };
    Ok(names.into_iter().map(join).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filenames_split_escape_and_join() {
        let v = split_filenames("a:b\\:c:/abs", Some(Path::new("/d"))).unwrap();
        assert_eq!(v, [PathBuf::from("/d/a"), PathBuf::from("/d/b:c"), PathBuf::from("/abs")]);
        assert_eq!(split_filenames("x", None).unwrap(), [PathBuf::from("x")]);
        assert!(split_filenames("a::b", None).is_err());
    }

    #[test]
    fn argument_forms() {
        assert_eq!(split_arg("--bs=4k").unwrap(), ("bs", Some("4k")));
        assert_eq!(split_arg("--time_based").unwrap(), ("time_based", None));
        assert_eq!(split_arg("--filename=a=b").unwrap(), ("filename", Some("a=b")));
        assert_eq!(split_arg("-bs=4k").unwrap(), ("bs", Some("4k")));
        assert!(split_arg("bs=4k").is_err());
        assert!(split_arg("--=4k").is_err());
    }
}
