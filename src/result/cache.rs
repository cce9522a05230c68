//! What applying a page-cache scenario before a run did, with the evidence
//! (`environment::cache` applies it and fills this in).

use crate::model::environment::CacheScenario;
use serde::{Deserialize, Serialize};

/// How much of a run a scenario, applied before it, reaches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheScope {
    /// The run starts in the scenario, and its reads meet the cache the
    /// scenario left (the files were in place before it).
    #[default]
    WholeRun,
    /// Applied before the run only, and not to its read passes: the run
    /// writes, inside its measured span, what those passes then read
    /// (IOzone, Bonnie++), so they find the pages the run itself left.
    BeforeRunOnly,
}

/// What applying a scenario did, with the evidence.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CacheReport {
    pub scenario: String,
    /// The scenario took effect before the run (checked, not assumed);
    /// `scope` says whether that reaches the run's reads.
    pub applied: bool,
    #[serde(default)]
    pub scope: CacheScope,
    /// Why not, or what was seen.
    pub note: Option<String>,
    pub cached_before_bytes: u64,
    pub cached_after_bytes: u64,
    pub dirty_before_bytes: u64,
    pub dirty_after_bytes: u64,
    /// The workload's own files after the scenario (mincore); None when the
    /// caller gave no file.
    #[serde(default)]
    pub workload_pages: Option<WorkloadPages>,
}

/// Page-cache residency of a set of files, from mincore.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkloadPages {
    /// Regular files looked at.
    pub files: u64,
    /// Files given that do not exist (yet), are not regular files or could
    /// not be examined.
    pub skipped: u64,
    /// Pages of those files in the page cache.
    pub resident: u64,
    /// Pages the files span.
    pub total: u64,
}

impl CacheReport {
    /// Record that the run reads what it writes itself (`reads`, said by
    /// the workload's shape), so the scenario reached only the start of the
    /// run; the warning to give, or None for `warm`, which claims nothing.
    pub fn before_run_only(&mut self, reads: &str) -> Option<String> {
        if self.scenario == CacheScenario::Warm.label() {
            return None;
        }
        self.scope = CacheScope::BeforeRunOnly;
        let why = format!(
            "cache scenario '{}' applies before the run only, not to its read passes: {reads}, so they find the pages the run itself left in the page cache",
            self.scenario
        );
        self.note = Some(match self.note.take() {
            Some(n) => format!("{n}; {why}"),
            None => why.clone(),
        });
        Some(why)
    }
}
