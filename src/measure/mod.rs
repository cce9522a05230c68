//! Clocks, latency histograms, CPU and I/O accounting.

pub mod hist;
pub mod usage;
