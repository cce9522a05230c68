//! Frontends translate a peer tool's input into the model. They never run
//! I/O and never call a runner.
//!
//! Each workload family (fio, Filebench, Postmark, ...) is one `Frontend`:
//! its name, what it reads, its presets, its command-line flags, and how it
//! lowers its input into `Plan`s, from the command line and from an
//! experiment file's `[[workload]]` table. `FRONTENDS` is the one table of
//! them: the CLI's workload subcommands and the experiment file's workload
//! keys come from it, so a new family is a folder here plus one line there.

pub mod bonnie;
pub mod confine;
pub mod environment;
pub mod experiment;
pub mod experiment_gap;
pub mod filebench;
pub mod fio;
pub mod getopt;
pub mod iozone;
pub mod postmark;
pub mod quick;
pub mod replay;
pub mod suggest;
pub mod ycsb;

use crate::model::bonnie::SemaphoreSet;
use crate::model::recipe::{Lowered, Recipe};
use experiment::{ExperimentError, WorkloadDef};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// Every workload family fsbench reads.
pub static FRONTENDS: &[&dyn Frontend] =
    &[&fio::Fio, &filebench::Filebench, &postmark::Postmark, &iozone::Iozone, &bonnie::Bonnie, &ycsb::Ycsb, &quick::Quick, &replay::Replay];

pub fn find(name: &str) -> Option<&'static dyn Frontend> {
    FRONTENDS.iter().copied().find(|f| f.name() == name)
}

/// A shipped workload a family runs by name.
pub struct Preset {
    pub name: &'static str,
    /// One line for listings.
    pub summary: &'static str,
    /// The workload in the family's own syntax.
    pub text: &'static str,
}

/// What one invocation asks for, step by step: a family that reads commands
/// interactively yields each run as soon as it is read.
pub enum Step {
    /// Run this plan; write its report to `append_report_to` (appended)
    /// instead of where the output would go, when the input says so.
    Run { lowered: Box<Lowered>, append_report_to: Option<PathBuf> },
    /// Run this workload in a fresh directory that the CLI makes under the
    /// current directory (and removes afterwards): a shipped workload run
    /// without a place of the user's, which must not share a fixed default
    /// such as `/tmp` with every other user and run. `prefix` starts the
    /// directory's name.
    RunInFreshDir { recipe: Arc<dyn Recipe>, prefix: &'static str },
    /// Text the input asked to see (a listing, a configuration, help),
    /// appended to `append_to` when the input names a file.
    Print { text: String, append_to: Option<PathBuf> },
    /// Make or remove Bonnie++'s semaphore set (`-p`) and print what
    /// Bonnie++ says: the CLI hands it to the runner, because a frontend
    /// never touches the system, not even while it lowers.
    Semaphores(SemaphoreSet),
}

pub type Session = Box<dyn Iterator<Item = Result<Step, FrontendError>>>;

/// A session of one run.
pub fn one_run(lowered: Lowered) -> Session {
    Box::new(std::iter::once(Ok(Step::Run { lowered: Box::new(lowered), append_report_to: None })))
}

/// A session that prints and runs nothing.
pub fn print_only(text: String) -> Session {
    Box::new(std::iter::once(Ok(Step::Print { text, append_to: None })))
}

/// Input a frontend cannot use. Either way the user gets the place (file,
/// line, column, or the flag) and what was expected; the CLI exits with 2.
#[derive(Debug)]
pub enum FrontendError {
    /// The workload's text is wrong: the family's own located error.
    Input(Box<dyn std::error::Error + Send + Sync>),
    /// A flag or argument is wrong or missing.
    Usage(String),
}

impl fmt::Display for FrontendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrontendError::Input(e) => write!(f, "{e}"),
            FrontendError::Usage(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FrontendError {}

pub trait Frontend: Sync {
    /// The subcommand and the experiment file's key: `fio`, `filebench`.
    fn name(&self) -> &'static str;
    /// One line for `fsbench --help`.
    fn about(&self) -> &'static str;
    /// What it reads (files, flags, preset names, stdin), for its help.
    fn reads(&self) -> &'static str;
    fn presets(&self) -> &'static [Preset] {
        &[]
    }
    /// The subcommand with the family's own arguments; the CLI adds the
    /// flags every workload command has (output, repeats, environment).
    fn command(&self) -> clap::Command;
    /// The CLI has a command of its own for the family (`cli::quick`,
    /// `cli::replay`), built on `command` and `lower_cli` but doing what
    /// comes before or instead of a run (quick's scratch directory and
    /// O_DIRECT probe, replay's `--to-iolog`), and with the flags it always
    /// had: the generic workload commands leave the family out.
    fn own_command(&self) -> bool {
        false
    }
    /// The family takes its tool's own `--key=value` options: the CLI hands
    /// it every argument that is not one of fsbench's flags, unparsed.
    fn raw_args(&self) -> bool {
        false
    }
    /// A `raw_args` family's chance to respell its tool's flags as
    /// fsbench's before they are parsed (fio's `-output=x`, `--eta=never`).
    fn normalize_args(&self, raw: Vec<String>) -> Vec<String> {
        raw
    }
    /// The command line (its matches, and the unparsed arguments of a
    /// `raw_args` family) as steps to run.
    fn lower_cli(&self, m: &clap::ArgMatches, raw: &[String]) -> Result<Session, FrontendError>;
    /// The keys it owns in an experiment's `[[workload]]` table; the first
    /// is the family's own name when a workload must give it.
    fn workload_keys(&self) -> &'static [&'static str];
    /// A `[[workload]]` table of this family, checked, as a recipe the
    /// experiment plans per target.
    fn lower_workload(&self, w: &WorkloadDef) -> Result<Arc<dyn Recipe>, ExperimentError>;
}

/// A typed error as a frontend's input error.
pub fn input_error(e: impl std::error::Error + Send + Sync + 'static) -> FrontendError {
    FrontendError::Input(Box::new(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_workload_keys_are_unique_and_reserved_keys_are_left_alone() {
        let mut names: Vec<&str> = FRONTENDS.iter().map(|f| f.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), FRONTENDS.len(), "two frontends share a name");
        let mut keys: Vec<&str> = FRONTENDS.iter().flat_map(|f| f.workload_keys().iter().copied()).collect();
        let n = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), n, "two frontends claim the same [[workload]] key");
        assert!(!keys.contains(&"label") && !keys.contains(&"targets"), "label and targets are every workload's");
        for f in FRONTENDS {
            assert_eq!(f.command().get_name(), f.name(), "{}: the subcommand is named after the family", f.name());
            assert!(!f.about().is_empty() && !f.reads().is_empty());
        }
    }
}
