//! A workload as an experiment file names it, before its target is known.
//! Frontends make recipes (`frontend::Frontend::lower_workload`); the
//! experiment runner turns one into a `Plan` for each target, without
//! knowing which tool's syntax it came from.

use super::warning::Warning;
use super::Plan;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// Where the run's files go, and the values `${…}` expands to.
pub struct Placement<'a> {
    /// The target's directory, or its device for a raw-device target.
    pub target: PathBuf,
    /// `target` is a raw block device, not a directory.
    pub is_device: bool,
    /// The experiment's `[params]` (after `--set`).
    pub params: &'a BTreeMap<String, String>,
}

/// A plan and the frontend's warnings about it (for stderr).
#[derive(Debug)]
pub struct Lowered {
    pub plan: Plan,
    pub warnings: Vec<Warning>,
}

/// Why a recipe could not become a plan for a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecipeError {
    /// The workload's label in the experiment file.
    pub workload: String,
    pub message: String,
}

impl fmt::Display for RecipeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "workload '{}': {}", self.workload, self.message)
    }
}

impl std::error::Error for RecipeError {}

pub trait Recipe: Send + Sync + fmt::Debug {
    /// The plan for one run with its files at `at`.
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError>;
}
