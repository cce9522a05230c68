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
    /// The order the runs are done in (`order = ...`, `--order`).
    pub order: Order,
    /// What the interleaved order is shuffled from (`seed = N`, `--seed`);
    /// drawn when neither gives one, and recorded so `--resume` and a
    /// rerun with `--seed` reproduce the schedule.
    pub seed: u64,
    /// `[[gap]]`: what of the seed's tables this experiment cannot fill.
    pub gaps: Vec<Gap>,
}

/// The order of an experiment's runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Round r runs repeat r of every cell, each workload's cells shuffled
    /// per round: load that drifts over the experiment falls on every level
    /// alike, and the cells a comparison pairs run next to each other.
    #[default]
    Interleaved,
    /// Every run of one target, then the next (target-major): drift between
    /// the targets' halves can fake an effect.
    Sequential,
}

impl Order {
    pub fn name(self) -> &'static str {
        match self {
            Order::Interleaved => "interleaved",
            Order::Sequential => "sequential",
        }
    }

    pub fn parse(s: &str) -> Result<Order, String> {
        match s {
            "interleaved" => Ok(Order::Interleaved),
            "sequential" => Ok(Order::Sequential),
            _ => Err(format!("expected \"interleaved\" or \"sequential\", got \"{s}\"")),
        }
    }
}

/// A seed nobody chose: from the OS's randomness (std's hasher keys).
pub fn draw_seed() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0));
    // Kept below 2^53 so a JSON reader that holds numbers as doubles (and
    // TOML's i64) takes the seed back exactly.
    h.finish() >> 11
}

/// The most repeats an experiment may have (`repeat`, `--set repeat=N`).
pub const MAX_REPEAT: u32 = 1000;

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
    /// The target labels it runs on (`targets = [...]`); `None` = every
    /// target. One experiment can then hold a seed whose parts need
    /// different targets (a raw device sweep and a file-system survey).
    pub only: Option<Vec<String>>,
}

impl MatrixWorkload {
    /// Whether the matrix has this workload on `target` (a label).
    pub fn runs_on(&self, target: &str) -> bool {
        self.only.as_ref().is_none_or(|o| o.iter().any(|t| t == target))
    }
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
