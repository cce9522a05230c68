//! Block tracing: capturing what reached a device as blktrace records,
//! writing and reading blktrace's files, and analysing them.
//!
//! `record` is the record format every other part shares; `analysis`
//! turns a stream of records into btt's and IPEAK's figures.

pub mod analysis;
pub mod record;
