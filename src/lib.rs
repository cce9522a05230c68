//! fsbench: file-system and storage benchmarking.
//!
//! Data flows one way: `frontend` (parse a peer's syntax) → `model` (checked
//! jobs) → `runner` (issue I/O through an `ioengine`, timed by `measure`) →
//! `result` (typed, serialisable) → `report` (text, JSON, fio JSON).
//! `environment` and `observe` describe and watch the system around a run.
//! `units` (values with units) and `host` (/proc and /sys) are the leaves
//! everything may use; `tests/layers.rs` checks the directions between the
//! top-level modules.

#![warn(clippy::undocumented_unsafe_blocks)]

pub mod cli;
pub mod environment;
pub mod frontend;
pub mod host;
pub mod input;
pub mod ioengine;
pub mod kvstore;
pub mod measure;
pub mod model;
pub mod observe;
pub mod report;
pub mod result;
pub mod runner;
pub mod stats;
pub mod units;
