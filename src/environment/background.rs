//! Background load: a separate process that keeps creating files during the
//! measured run (seed 000's interference job), so its I/O is attributable. (stub)

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackgroundSpec {
    /// Where to create files; a subdirectory fsbench makes and removes.
    pub dir: PathBuf,
    /// Bytes per file (seed: 100 KB).
    pub file_size: u64,
    /// fsync each file after writing it.
    pub fsync: bool,
    /// Files per second; None = as fast as possible.
    pub rate: Option<u64>,
    /// Keep at most this many files, deleting the oldest (bounds the space used).
    pub max_files: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BackgroundReport {
    pub files_created: u64,
    pub files_deleted: u64,
    pub bytes_written: u64,
    pub fsyncs: u64,
    pub elapsed_s: f64,
    /// The child's /proc/self/io at exit.
    pub io: crate::result::ProcessIo,
}

pub fn parse(s: &str, dir: PathBuf) -> Result<BackgroundSpec, String> {
    match s {
        "files" | "files:fsync" => Ok(BackgroundSpec { dir, file_size: 102400, fsync: s.ends_with("fsync"), rate: None, max_files: 1000 }),
        _ => Err(format!("bad background '{s}'")),
    }
}

pub struct BackgroundLoad;

impl BackgroundLoad {
    pub fn start(_spec: &BackgroundSpec) -> Result<BackgroundLoad, String> {
        Err("background: not implemented".into())
    }
    pub fn stop(self) -> Result<BackgroundReport, String> {
        Err("background: not implemented".into())
    }
}
