//! Block tracing: capturing what reached a device as blktrace records,
//! writing and reading blktrace's files, and analysing them.
//!
//! `record` is the record format every other part shares; `capture` gets
//! records from the kernel; `files` writes and reads blktrace's per-CPU
//! files; `summary` is blkparse's end-of-run summary computed from records
//! (`report::blkparse` prints it); `analysis` turns a stream of records into
//! btt's and IPEAK's figures.

pub mod analysis;
pub mod capture;
pub mod files;
pub mod record;
pub mod summary;
