//! What a Postmark run adds to its operation statistics: the settings it ran
//! with, Postmark's counters, and the four phase boundaries t0..t3 on two
//! clocks (monotonic nanoseconds for fsbench's figures, whole Unix seconds
//! for Postmark's quantised ones).

use crate::model::postmark::PostmarkPlan;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PostmarkDetails {
    /// The configuration the run used (the seed included).
    pub settings: PostmarkPlan,
    /// t0 (before the first create), t1 (pool created), t2 (transactions
    /// done), t3 (every file deleted): nanoseconds of the monotonic clock
    /// since the run began (before the subdirectories were made).
    pub t_ns: [u64; 4],
    /// The same instants as whole seconds since the Unix epoch (Postmark's
    /// `time()`), from which its report is computed.
    pub t_unix: [u64; 4],
    /// Transactions performed (fewer than configured when interrupted).
    pub transactions_done: u64,
    /// Files of the initial pool.
    pub created_alone: u64,
    /// Files created by transactions.
    pub created_mixed: u64,
    /// Files deleted by transactions.
    pub deleted_mixed: u64,
    /// Files deleted after the transactions.
    pub deleted_alone: u64,
    pub read: u64,
    pub appended: u64,
    pub bytes_read: u64,
    /// Creates and appends.
    pub bytes_written: u64,
}

impl PostmarkDetails {
    pub fn created(&self) -> u64 {
        self.created_alone + self.created_mixed
    }
    pub fn deleted(&self) -> u64 {
        self.deleted_alone + self.deleted_mixed
    }
    /// Monotonic nanoseconds from t`a` to t`b`.
    pub fn span_ns(&self, a: usize, b: usize) -> u64 {
        self.t_ns[b].saturating_sub(self.t_ns[a])
    }
    /// Postmark's seconds from t`a` to t`b`: whole seconds, at least 1.
    pub fn span_s(&self, a: usize, b: usize) -> u64 {
        self.t_unix[b].saturating_sub(self.t_unix[a]).max(1)
    }
}
