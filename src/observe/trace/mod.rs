//! Block tracing: capturing what reached a device as blktrace records,
//! writing and reading blktrace's files, and analysing them.
//!
//! `record` is the record format every other part shares; `capture` gets
//! records from the kernel; `files` writes and reads blktrace's per-CPU
//! files; `summary` computes blkparse's end-of-run summary from records
//! (`report::blkparse` prints it); `analysis` turns a stream of records into
//! btt's and IPEAK's figures. What they produce is the result's
//! (`result::trace`): the capture's record, the summary and the analysis.

pub mod analysis;
pub mod capture;
pub mod files;
pub mod record;
pub mod summary;
