//! One Postmark run, as Postmark's `set` commands configure it. Plain data:
//! the frontend (`frontend::postmark`) builds it, the runner
//! (`runner::postmark`) executes it.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// A directory the files go to, chosen per file with probability
/// weight / (sum of weights).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    pub path: PathBuf,
    pub weight: u32,
}

/// `set report verbose|terse`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReportStyle {
    /// The labelled multi-line report.
    #[default]
    Verbose,
    /// One line of 13 numbers.
    Terse,
}

/// Everything one `run` uses. `Default` is Postmark's start-up configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PostmarkPlan {
    /// Smallest file size in bytes.
    pub size_low: u64,
    /// Files are drawn uniformly in [size_low, size_high - 1]; when the two
    /// are equal every file has exactly that size (and appends do nothing).
    pub size_high: u64,
    /// Files created before the transactions (the pool).
    pub number: u64,
    pub transactions: u64,
    pub seed: u64,
    /// Never empty when built by the frontend.
    pub locations: Vec<Location>,
    /// Subdirectories `s0..s(n-1)` in every location; used only when > 1.
    pub subdirectories: u64,
    /// Bytes per read call (then the remainder).
    pub read_block: u64,
    /// Bytes per write call (then the remainder).
    pub write_block: u64,
    /// true: stdio-like user-space buffering; false: one syscall per block.
    pub buffering: bool,
    /// Chance out of 10 that a transaction reads rather than appends;
    /// -1: transactions neither read nor append.
    pub bias_read: i32,
    /// Chance out of 10 that a transaction creates rather than deletes;
    /// -1: transactions neither create nor delete.
    pub bias_create: i32,
    pub report: ReportStyle,
}

impl Default for PostmarkPlan {
    fn default() -> Self {
        PostmarkPlan {
            size_low: 500,
            size_high: 10_000,
            number: 500,
            transactions: 500,
            seed: 42,
            locations: vec![Location { path: PathBuf::from("."), weight: 1 }],
            subdirectories: 0,
            read_block: 512,
            write_block: 512,
            buffering: true,
            bias_read: 5,
            bias_create: 5,
            report: ReportStyle::Verbose,
        }
    }
}

impl super::Shape for PostmarkPlan {
    /// The first location.
    fn data_dir(&self) -> Option<PathBuf> {
        self.locations.first().map(|l| l.path.clone())
    }
    /// Postmark builds its pool in every run and deletes it at the end.
    fn keeps_files_between_runs(&self) -> bool {
        false
    }
    /// Every create and append allocates.
    fn allocates(&self) -> bool {
        true
    }
    fn reads_own_writes(&self) -> Option<String> {
        Some("Postmark's transactions read the files its pool creation wrote moments before, in the same run".into())
    }
}
