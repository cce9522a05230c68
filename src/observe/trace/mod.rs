//! Block tracing: capturing what reached a device as blktrace records,
//! writing and reading blktrace's files, and analysing them.
//!
//! `record` is the record format every other part shares; `capture` gets
//! records from the kernel.

pub mod capture;
pub mod record;
