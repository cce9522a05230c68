//! Replay as a workload family (`family`): a captured trace as a replay's
//! list of I/Os, from blktrace's per-CPU files (`blktrace`) or a fio iolog
//! (`iolog`, which also writes one), lowered into a
//! `model::replay::ReplayPlan` (`lower`) for `fsbench replay` and for an
//! experiment alike.

pub mod blktrace;
pub mod family;
pub mod iolog;
pub mod lower;

pub use family::Replay;

use crate::model::replay::TraceIo;
use std::path::Path;

/// A trace read from disk: its I/Os in issue order, with times from the first.
#[derive(Debug)]
pub struct Trace {
    pub ios: Vec<TraceIo>,
    /// What it was read from and which events were used, for the report.
    pub source: String,
    /// The traced device (major, minor), when the trace names one.
    pub device: Option<(u32, u32)>,
    /// What was left out (flushes, syncs, ...), for stderr and the report.
    pub notes: Vec<String>,
}

/// Reads `path` as a fio iolog when it starts like one, else as blktrace
/// files (`path` is NAME, or one of its NAME.blktrace.N).
pub fn read_trace(path: &Path) -> Result<Trace, String> {
    let head =
        if path.is_file() { crate::input::read_prefix(path, 16).map_err(|e| format!("{}: {e}", path.display()))? } else { Vec::new() };
    if head.starts_with(b"fio version") {
        let text = String::from_utf8(read_regular(path)?)
            .map_err(|e| format!("{}: not UTF-8 text (byte {})", path.display(), e.utf8_error().valid_up_to()))?;
        return iolog::parse(&text, path);
    }
    blktrace::read(path)
}

/// A trace file's bytes. Traces are often larger than `input`'s bound for
/// job files, so only the kind of file is checked.
fn read_regular(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.is_file() {
        return Err(format!("{}: not a regular file (expected a trace file)", path.display()));
    }
    std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))
}

#[cfg(test)]
mod tests;
