//! Clocks, latency histograms, CPU and I/O accounting.

pub mod fio_bins;
pub mod hist;
pub mod usage;
