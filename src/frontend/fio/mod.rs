//! fio job files and fio-style command-line options → `JobSpec`s. (stub, being written)

pub mod units;

use crate::model::job::JobSpec;
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
pub fn parse(_files: &[PathBuf], _args: &[String], _opts: &ParseOptions) -> Result<Parsed, FioError> {
    Err(FioError {
        source: "command line".into(),
        line: None,
        col: None,
        section: None,
        option: None,
        message: "not implemented".into(),
    })
}
