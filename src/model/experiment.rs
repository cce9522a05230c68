//! An experiment as plain data: a matrix of targets × workloads × cache
//! scenarios × background loads × repeats. `frontend::experiment` reads it
//! from a TOML file; `runner::experiment` runs it.

use super::environment::{BackgroundSpec, CacheScenario, TargetSpec};
use super::recipe::Recipe;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone, Debug)]
pub struct Experiment {
    pub name: String,
    pub description: Option<String>,
    pub file: PathBuf,
    pub repeat: u32,
    /// `[params]` after `--set`; `${name}` in workloads expands to these.
    pub params: BTreeMap<String, String>,
    pub targets: Vec<Target>,
    pub workloads: Vec<MatrixWorkload>,
    pub caches: Vec<CacheScenario>,
    /// `None` = no background load.
    pub backgrounds: Vec<Option<BackgroundChoice>>,
    /// Block tracing of every run (`trace = true` or a device).
    pub trace: Option<crate::model::environment::TraceSpec>,
    /// `[[gap]]`: what of the seed's tables this experiment cannot fill.
    pub gaps: Vec<Gap>,
}

#[derive(Clone, Debug)]
pub struct Target {
    pub label: String,
    pub spec: TargetSpec,
}

/// A background load as written; unless it names its directory (`dir=`),
/// the directory is chosen per target when the target is up.
#[derive(Clone, Debug)]
pub struct BackgroundChoice {
    pub label: String,
    pub spec: BackgroundSpec,
    /// `spec.dir` is the user's (`dir=`), not a placeholder.
    pub dir_given: bool,
}

impl BackgroundChoice {
    /// The load, writing its files in `dir` unless it names its own.
    pub fn spec_in(&self, dir: &Path) -> BackgroundSpec {
        let dir = if self.dir_given { self.spec.dir.clone() } else { dir.to_path_buf() };
        BackgroundSpec { dir, ..self.spec.clone() }
    }
}

/// A workload of the matrix: its label, the family (frontend) it is
/// written for, and the recipe that plans it once the target is known.
#[derive(Clone, Debug)]
pub struct MatrixWorkload {
    pub label: String,
    pub family: &'static str,
    pub recipe: Arc<dyn Recipe>,
}

/// A `[[gap]]` of the experiment file: rows or columns of a seed's table
/// that this experiment cannot fill, and why (the kernel lacks a file
/// system, the machine has no HDD, ...). The report lists them so that a
/// missing column reads as a known limit, not as a result of zero.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Gap {
    /// Which table, e.g. "seed 004 Table 1".
    pub table: String,
    /// The rows or columns not filled, e.g. "JFS and ReiserFS columns".
    pub what: String,
    pub why: String,
}
