//! Repetition statistics and comparisons. (stub, being written)
pub mod metrics;
pub mod summary;
