//! Filebench as a workload family: `fsbench filebench NAME|-f FILE.f` and
//! `[[workload]] filebench = "NAME" | "file.f"`, with `set $var` overrides.
//!
//! - `wml`: the workload language (1.5 and the 1.4 dialect) → `FlowPlan`
//! - `personalities`: the shipped workloads, compiled in

pub mod personalities;
pub mod wml;

use crate::frontend::confine::in_target;
use crate::frontend::experiment::{expand, runtime_seconds, ExperimentError, WorkloadDef};
use crate::frontend::{input_error, one_run, print_only, Frontend, FrontendError, Preset, Session, Step};
use crate::model::job::BufferContent;
use crate::model::recipe::{Lowered, Placement, Recipe, RecipeError};
use crate::model::{Plan, Workload};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wml::WmlOptions;

/// The layout Filebench runs are shown in.
pub const LAYOUT: &str = "filebench";

/// A workload's text, where it came from, and the name its result takes.
#[derive(Clone, Debug)]
pub struct Source {
    pub text: String,
    /// `builtin:NAME` or the file's path, for error messages.
    pub origin: String,
    pub name: String,
}

/// A personality by name, or a `.f` file: a name with a `/` or ending in
/// `.f` is a path (relative to `base`), anything else a personality.
pub fn resolve(name: &str, base: &Path) -> Result<Source, String> {
    if name.ends_with(".f") || name.contains('/') {
        return read_file(&base.join(name));
    }
    match personalities::find(name) {
        Some(p) => Ok(Source { text: p.text.to_string(), origin: format!("builtin:{}", p.name), name: p.name.to_string() }),
        None => {
            let hint = personalities::closest(name).map(|c| format!("; did you mean '{c}'?")).unwrap_or_default();
            Err(format!("no personality named '{name}'{hint} (`fsbench filebench --list` shows them, or give a path ending in .f)"))
        }
    }
}

fn read_file(path: &Path) -> Result<Source, String> {
    let text = crate::input::read_text(path, "Filebench workload file").map_err(|e| {
        if e.starts_with("no such file") {
            format!("workload file {} does not exist", path.display())
        } else {
            format!("cannot read {}: {e}", path.display())
        }
    })?;
    let name = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "workload".into());
    Ok(Source { text, origin: path.display().to_string(), name })
}

/// `--content`: `random`, `zero` or `compress:PCT`.
pub fn content(s: &str) -> Result<BufferContent, String> {
    let mut c = BufferContent::default();
    match s {
        "random" => {}
        "zero" => c.zero = true,
        _ => {
            let pct = s
                .strip_prefix("compress:")
                .and_then(|p| p.trim_end_matches('%').parse::<u32>().ok())
                .filter(|p| *p <= 100)
                .ok_or_else(|| format!("--content {s}: expected random, zero or compress:PCT with PCT in 0..=100"))?;
            c.compress_percentage = pct;
            c.compress_chunk = 4096;
        }
    }
    Ok(c)
}

/// `--set NAME=VALUE` (a leading `$` is allowed).
fn parse_set(s: &str) -> Result<(String, String), String> {
    let Some((k, v)) = s.split_once('=') else { return Err(format!("--set {s}: expected NAME=VALUE")) };
    let k = k.trim().trim_start_matches('$');
    if k.is_empty() {
        return Err(format!("--set {s}: the variable name is empty"));
    }
    Ok((k.to_string(), v.to_string()))
}

fn lower(source: &Source, opts: &WmlOptions) -> Result<Lowered, wml::WmlError> {
    let parsed = wml::parse(&source.text, &source.origin, &source.name, opts)?;
    Ok(Lowered { plan: Plan::new(Workload::Flow(parsed.plan), LAYOUT), warnings: parsed.warnings })
}

pub struct Filebench;

impl Frontend for Filebench {
    fn name(&self) -> &'static str {
        "filebench"
    }
    fn about(&self) -> &'static str {
        "Run a Filebench workload: a shipped personality by name (`fsbench filebench fileserver --set dir=/mnt/x`) or a .f file (`-f my.f`)"
    }
    fn reads(&self) -> &'static str {
        "Filebench workload files (WML 1.5 and the 1.4 dialect), or a shipped personality by name; --set overrides `set $var`"
    }
    fn presets(&self) -> &'static [Preset] {
        personalities::ALL
    }
    fn command(&self) -> clap::Command {
        use clap::{value_parser, Arg, ArgAction};
        clap::Command::new("filebench")
            .about(self.about())
            .arg(Arg::new("personality").help("A personality shipped with fsbench (see --list)").conflicts_with("file"))
            .arg(
                Arg::new("file")
                    .short('f')
                    .long("file")
                    .value_parser(value_parser!(PathBuf))
                    .help("A Filebench workload file (.f), 1.5 or 1.4 dialect"),
            )
            .arg(
                Arg::new("set")
                    .long("set")
                    .value_name("NAME=VALUE")
                    .action(ArgAction::Append)
                    .help("Override `set $NAME` of the workload (repeatable), e.g. --set nfiles=1000 --set dir=/mnt/x"),
            )
            .arg(
                Arg::new("runtime")
                    .long("runtime")
                    .value_parser(value_parser!(u64).range(1..))
                    .help("Seconds to measure: overrides `run N`/`psrun` and supplies a length where the file has no `run` (default 60)"),
            )
            .arg(
                Arg::new("seed")
                    .long("seed")
                    .value_parser(value_parser!(u64))
                    .help("Seed of every random stream (file sizes, offsets, picks); recorded in the result"),
            )
            .arg(
                Arg::new("content")
                    .long("content")
                    .default_value("random")
                    .help("What written and preallocated data contains: random, zero, or compress:PCT (PCT% of each 4 KiB is zeros)"),
            )
            .arg(Arg::new("list").long("list").action(ArgAction::SetTrue).help("List the shipped personalities and exit"))
            .arg(
                Arg::new("show")
                    .long("show")
                    .action(ArgAction::SetTrue)
                    .help("Print the workload's text (a personality's .f file) and exit"),
            )
    }
    fn lower_cli(&self, m: &clap::ArgMatches, _raw: &[String]) -> Result<Session, FrontendError> {
        if m.get_flag("list") {
            let list: String = personalities::ALL.iter().map(|p| format!("{:<28} {}\n", p.name, p.summary)).collect();
            return Ok(print_only(list));
        }
        let usage = FrontendError::Usage;
        let sets = m.get_many::<String>("set").into_iter().flatten().map(|s| parse_set(s)).collect::<Result<Vec<_>, _>>().map_err(usage)?;
        let opts = WmlOptions {
            sets,
            runtime_s: m.get_one::<u64>("runtime").copied(),
            seed: m.get_one::<u64>("seed").copied(),
            content: content(m.get_one::<String>("content").map(String::as_str).unwrap_or("random")).map_err(usage)?,
        };
        let source = match (m.get_one::<String>("personality"), m.get_one::<PathBuf>("file")) {
            (Some(n), None) if !n.ends_with(".f") && !n.contains('/') => resolve(n, Path::new(".")),
            (Some(n), None) => Err(format!("'{n}' looks like a file: give it with -f {n}")),
            (None, Some(f)) => read_file(f),
            _ => Err("name a personality (see --list) or give -f FILE.f".into()),
        }
        .map_err(usage)?;
        if m.get_flag("show") {
            return Ok(print_only(source.text));
        }
        let named_dir = opts.sets.iter().any(|(k, _)| k.trim_start_matches('{').trim_end_matches('}') == "dir");
        if source.origin.starts_with("builtin:") && !named_dir {
            // The personalities' `set $dir=/tmp` would put every user's and
            // every run's fileset in one place. Checked now, at a stand-in
            // directory, so bad input is reported before anything is made.
            let recipe = FreshDirRecipe { source, opts };
            recipe.lower_at(Path::new("/nonexistent/fsbench-check")).map_err(input_error)?;
            return Ok(Box::new(std::iter::once(Ok(Step::RunInFreshDir { recipe: Arc::new(recipe), prefix: "fsbench-filebench-" }))));
        }
        Ok(one_run(lower(&source, &opts).map_err(input_error)?))
    }
    fn workload_keys(&self) -> &'static [&'static str] {
        &["filebench", "set", "runtime"]
    }
    fn lower_workload(&self, w: &WorkloadDef) -> Result<Arc<dyn Recipe>, ExperimentError> {
        let Some(name) = w.string("filebench")? else {
            return Err(w.error("filebench", "set and runtime need filebench = PERSONALITY or FILE.f"));
        };
        let source = resolve(&name, &w.base).map_err(|e| w.error("filebench", e))?;
        let sets: Vec<(String, String)> =
            w.scalar_table("set")?.into_iter().map(|(k, v)| (k.trim_start_matches('$').to_string(), v)).collect();
        let runtime = w.scalar("runtime")?;
        if let Some(r) = runtime.as_deref().filter(|r| !r.contains("${")) {
            runtime_seconds(r).map_err(|m| w.error("runtime", m))?;
        }
        Ok(Arc::new(FilebenchRecipe { label: w.label.clone(), source, sets, runtime }))
    }
}

/// A shipped personality from the command line, its `$dir` a directory
/// made for the run.
#[derive(Debug)]
struct FreshDirRecipe {
    source: Source,
    opts: WmlOptions,
}

impl FreshDirRecipe {
    fn lower_at(&self, dir: &Path) -> Result<Lowered, wml::WmlError> {
        let mut opts = self.opts.clone();
        opts.sets.push(("dir".into(), dir.display().to_string()));
        lower(&self.source, &opts)
    }
}

impl Recipe for FreshDirRecipe {
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError> {
        self.lower_at(&at.target).map_err(|e| RecipeError { workload: self.source.name.clone(), message: e.to_string() })
    }
}

/// A Filebench workload of an experiment, `${…}` still unexpanded.
#[derive(Debug)]
struct FilebenchRecipe {
    label: String,
    source: Source,
    sets: Vec<(String, String)>,
    /// Seconds, possibly `${param}`.
    runtime: Option<String>,
}

impl Recipe for FilebenchRecipe {
    /// `$dir` is the target unless the workload sets it (to a place in the
    /// target: every fileset's path is); a raw device has no directory for
    /// filesets.
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError> {
        let err = |message: String| RecipeError { workload: self.label.clone(), message };
        if at.is_device {
            return Err(err("a Filebench workload needs a directory or a managed file system, not a raw device".into()));
        }
        let mut sets = Vec::with_capacity(self.sets.len() + 1);
        for (k, v) in &self.sets {
            sets.push((k.clone(), expand(v, at.params, Some(&at.target)).map_err(err)?));
        }
        if !sets.iter().any(|(k, _)| k == "dir") {
            sets.push(("dir".into(), at.target.display().to_string()));
        }
        let runtime_s = match &self.runtime {
            Some(r) => Some(runtime_seconds(&expand(r, at.params, Some(&at.target)).map_err(err)?).map_err(err)?),
            None => None,
        };
        let mut lowered = lower(&self.source, &WmlOptions { sets, runtime_s, ..Default::default() }).map_err(|e| err(e.to_string()))?;
        if let Workload::Flow(flow) = &mut lowered.plan.workload {
            // `path=` is usually `$dir`, set by the workload or its `set`.
            for f in &mut flow.filesets {
                f.path = in_target(at, &format!("fileset '{}' path=", f.name), &f.path).map_err(err)?;
            }
        }
        Ok(lowered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_forms() {
        assert!(content("zero").unwrap().zero);
        assert_eq!(content("compress:50").unwrap().compress_percentage, 50);
        assert_eq!(content("random").unwrap(), BufferContent::default());
        for bad in ["compress:101", "compress:", "ones", "compress:x"] {
            assert!(content(bad).unwrap_err().contains("--content"), "{bad}");
        }
    }

    #[test]
    fn sources_resolve_once_for_every_caller() {
        let s = resolve("varmail", Path::new("/nonexistent")).unwrap();
        assert_eq!((s.origin.as_str(), s.name.as_str()), ("builtin:varmail", "varmail"));
        let e = resolve("filesrever", Path::new(".")).unwrap_err();
        assert!(e.contains("did you mean 'fileserver'"), "{e}");
        let e = resolve("missing/x.f", Path::new("/nonexistent")).unwrap_err();
        assert!(e.contains("does not exist"), "{e}");
    }
}
