//! Repetition statistics and comparisons.
//!
//! A benchmark run gives one number per metric; repeating it gives a sample.
//! This module turns `RunResult`s into named scalar metrics (`metrics`),
//! summarises repeats of one metric (`summarize`: mean, sample standard
//! deviation, coefficient of variation, median and a Student-t 95%
//! confidence interval of the mean), flags metrics whose repeats disagree
//! (`warnings`, CV above 5%), and compares two samples (`welch`: relative
//! difference of the means with its 95% confidence interval, and Welch's
//! unequal-variance t-test), many comparisons at once with their p-values
//! adjusted (`compare::adjust`, Holm), an experiment's factors level by
//! level (`factors`), and the settings two sets of runs differ in
//! (`options`).
//!
//! Everything here is finite by construction (no NaN or infinity reaches a
//! report or JSON); the degenerate cases (one run, no variance, a zero
//! baseline) are documented where they are handled.

pub mod compare;
pub mod design;
pub mod experiment;
pub mod factors;
pub mod metrics;
pub mod options;
pub mod repeated;
pub mod summary;

pub use compare::{welch, Comparison, ALPHA};
pub use metrics::{collect, metrics, summarize_runs, warnings, MetricSummary, CV_WARN};
pub use summary::{summarize, t_crit_95, t_quantile, t_two_sided_p, Summary};
