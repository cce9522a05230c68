//! A replay: a fixed list of I/Os, each with the time it was issued in the
//! trace, re-issued against one target. A surface scan is the same plan
//! with the reads laid out zone by zone (`Surface`), so one runner serves
//! both and both report the same figures.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Dir {
    Read,
    Write,
    /// A discard (BLKDISCARD on a device, a punched hole in a file).
    Trim,
}

impl Dir {
    pub fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
            Dir::Trim => "trim",
        }
    }
    /// Destroys what the target held at that place.
    pub fn modifies(self) -> bool {
        self != Dir::Read
    }
}

/// One I/O of the plan.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceIo {
    /// When the trace issued it, in ns from the trace's first I/O.
    pub at_ns: u64,
    /// Bytes from the start of the target.
    pub offset: u64,
    pub len: u32,
    pub dir: Dir,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Speed {
    /// Each I/O at its recorded time after the start (later only when the
    /// depth limit holds it back).
    AsRecorded,
    /// As fast as the depth limit allows, in the trace's order.
    Max,
}

impl Speed {
    pub fn name(self) -> &'static str {
        match self {
            Speed::AsRecorded => "as-recorded",
            Speed::Max => "max",
        }
    }
}

/// A surface scan's layout of the plan's I/Os: `zones` groups of
/// `chunks_per_zone` consecutive I/Os, zone by zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Surface {
    pub zones: u32,
    pub chunks_per_zone: u32,
    pub chunk: u64,
    /// Bytes of the device the zones spread over.
    pub device_bytes: u64,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ReplayPlan {
    /// A block device or a regular file.
    pub target: PathBuf,
    /// Shared: a repeat clones the plan, not the trace.
    #[serde(skip)]
    pub ios: Arc<Vec<TraceIo>>,
    pub speed: Speed,
    /// Most I/Os in flight at once.
    pub depth: u32,
    /// `io_uring` or `libaio`.
    pub engine: String,
    /// What the I/Os came from (trace files and the events used), for the report.
    pub source: String,
    /// The user allowed writes and trims (`--write`).
    pub write: bool,
    /// Set for a surface scan.
    pub surface: Option<Surface>,
    /// What was done to the trace on the way (I/Os wrapped or skipped past
    /// the target's end, events left out), for the report.
    pub notes: Vec<String>,
}

impl ReplayPlan {
    /// The trace's reads, writes and trims: (ios, bytes) each.
    pub fn counts(&self) -> [(u64, u64); 3] {
        let mut c = [(0u64, 0u64); 3];
        for io in self.ios.iter() {
            let k = &mut c[io.dir as usize];
            k.0 += 1;
            k.1 += io.len as u64;
        }
        c
    }

    /// The time of the last I/O (the trace's span of issues).
    pub fn duration_ns(&self) -> u64 {
        self.ios.iter().map(|i| i.at_ns).max().unwrap_or(0)
    }

    pub fn modifies(&self) -> bool {
        self.ios.iter().any(|i| i.dir.modifies())
    }
}

/// What to do with an I/O that ends past the target's end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BeyondEnd {
    /// Refuse the replay before any I/O.
    Error,
    /// Its offset modulo the target's size.
    Wrap,
    /// Leave it out.
    Skip,
}

impl BeyondEnd {
    pub const NAMES: [&'static str; 3] = ["error", "wrap", "skip"];

    pub fn parse(s: &str) -> Option<BeyondEnd> {
        match s {
            "error" => Some(BeyondEnd::Error),
            "wrap" => Some(BeyondEnd::Wrap),
            "skip" => Some(BeyondEnd::Skip),
            _ => None,
        }
    }
}

/// The first I/O that does not fit in `size` bytes, as an error naming it.
pub fn check_fits(ios: &[TraceIo], size: u64, target: &Path) -> Result<(), String> {
    match ios.iter().enumerate().find(|(_, io)| io.offset + io.len as u64 > size) {
        None => Ok(()),
        Some((i, io)) => Err(format!(
            "I/O #{} ({} of {} bytes at byte {}) ends past the end of {} ({size} bytes); nothing was issued",
            i + 1,
            io.dir.name(),
            io.len,
            io.offset,
            target.display()
        )),
    }
}

/// The I/Os fitted to a target of `size` bytes as `how` says, what was
/// done noted; `option` is how the user spelled the choice
/// (`--beyond-end`, `beyond_end`), for the notes and errors.
pub fn fit(ios: &mut Vec<TraceIo>, size: u64, target: &Path, how: BeyondEnd, option: &str, notes: &mut Vec<String>) -> Result<(), String> {
    match how {
        BeyondEnd::Wrap => {
            let mut wrapped = 0;
            for io in ios.iter_mut().filter(|io| io.offset + io.len as u64 > size) {
                if io.len as u64 > size {
                    return Err(format!("{option} wrap: an I/O of {} bytes is larger than {} ({size} bytes)", io.len, target.display()));
                }
                // Sector-aligned, so O_DIRECT still takes it.
                io.offset = (io.offset % (size - io.len as u64 + 1)) / 512 * 512;
                wrapped += 1;
            }
            if wrapped > 0 {
                notes.push(format!("{option} wrap: {wrapped} I/Os past the end of the target wrapped to its start"));
            }
        }
        BeyondEnd::Skip => {
            let before = ios.len();
            ios.retain(|io| io.offset + io.len as u64 <= size);
            if ios.len() < before {
                notes.push(format!("{option} skip: {} I/Os past the end of the target left out", before - ios.len()));
            }
        }
        BeyondEnd::Error => {
            check_fits(ios, size, target).map_err(|e| format!("{e}; {option} wrap|skip to replay it anyway"))?;
        }
    }
    Ok(())
}

impl super::Shape for ReplayPlan {
    /// A file's directory; none for a device, whose node directory is no
    /// place for a background load's files.
    fn data_dir(&self) -> Option<PathBuf> {
        if std::fs::metadata(&self.target).is_ok_and(|m| m.is_file()) {
            self.target.parent().map(Path::to_path_buf)
        } else {
            None
        }
    }
    fn keeps_files_between_runs(&self) -> bool {
        true
    }
    /// It rewrites places that exist; it never grows or creates a file.
    fn allocates(&self) -> bool {
        false
    }
}
