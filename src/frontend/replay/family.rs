//! Replay as a workload family. `fsbench replay TRACE --target DEV|FILE`
//! (`cli::replay`, which also converts with `--to-iolog`) and an
//! experiment's `[[workload]] replay = "TRACE"` both lower here: the trace
//! read, its I/Os chosen (`lower::choose`), then placed on the target
//! (`lower::place`). In an experiment the target is the experiment's: a raw
//! device target itself, or `target = "FILE"`, a file inside a directory
//! target that an earlier workload made.

use super::lower::{choose, engine, place, Chosen, ReplayOptions, Spelling};
use super::read_trace;
use crate::frontend::confine::in_target;
use crate::frontend::experiment::{expand, ExperimentError, WorkloadDef};
use crate::frontend::{one_run, Frontend, FrontendError, Session};
use crate::model::recipe::{Lowered, Placement, Recipe, RecipeError};
use crate::model::replay::{BeyondEnd, Speed};
use crate::model::{Plan, Workload};
use clap::{Args, FromArgMatches};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The layout replays are shown in.
pub const LAYOUT: &str = "replay";

// The flags of `fsbench replay` besides the output and environment flags
// every workload command has (no doc comment: clap would take it as the
// command's description).
#[derive(Args, Debug, Clone)]
pub struct ReplayFlags {
    /// The trace: blktrace files (NAME, or one of its NAME.blktrace.N; every CPU's file is read) or a fio iolog.
    pub trace: PathBuf,
    /// The block device or regular file to replay onto (with --to-iolog: the file name written in the log;
    /// default the traced device's /dev node).
    #[arg(long, value_name = "DEV|FILE")]
    pub target: Option<PathBuf>,
    /// as-recorded: each I/O at its recorded time after the start (later when the depth limit holds it
    /// back); max: as fast as the depth allows, in the trace's order.
    #[arg(long, default_value = "as-recorded", value_parser = ["as-recorded", "max"])]
    pub speed: String,
    /// Most I/Os in flight at once.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=MAX_DEPTH as i64))]
    pub depth: u32,
    /// io_uring or libaio (default: io_uring when the kernel allows it); O_DIRECT either way when the target allows it.
    #[arg(long)]
    pub engine: Option<String>,
    /// Allow the trace's writes and trims (they destroy what the target holds there).
    #[arg(long)]
    pub write: bool,
    /// Replay only the trace's reads.
    #[arg(long, conflicts_with = "write")]
    pub reads_only: bool,
    /// An I/O that ends past the target's end: error (refuse before any I/O), wrap (its offset modulo
    /// the target's size), or skip (leave it out); wrapped and skipped I/Os are counted in the report.
    #[arg(long, default_value = "error", value_parser = BeyondEnd::NAMES)]
    pub beyond_end: String,
    /// Write the trace as a fio iolog to FILE instead of replaying it (fio --read_iolog=FILE replays it).
    #[arg(long, value_name = "FILE")]
    pub to_iolog: Option<PathBuf>,
    /// The iolog version --to-iolog writes: 3 (a µs timestamp per line, fio 3.31 and later) or 2 (waits in ms).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=3))]
    pub iolog_version: u8,
}

/// The most I/Os a replay keeps in flight.
const MAX_DEPTH: u32 = 4096;

impl ReplayFlags {
    fn options(&self) -> ReplayOptions {
        ReplayOptions {
            speed: if self.speed == "max" { Speed::Max } else { Speed::AsRecorded },
            depth: self.depth,
            engine: self.engine.clone(),
            write: self.write,
            reads_only: self.reads_only,
            // clap allows only the names BeyondEnd parses.
            beyond_end: BeyondEnd::parse(&self.beyond_end).unwrap_or(BeyondEnd::Error),
        }
    }
}

fn lowered(plan: crate::model::replay::ReplayPlan) -> Lowered {
    Lowered { plan: Plan::new(Workload::Replay(plan), LAYOUT), warnings: Vec::new() }
}

/// `fsbench replay`'s flags as a plan: the trace read and its I/Os chosen,
/// then fitted to the target's size. Whether a block device may be written
/// is the caller's to check (the runner checks again before any I/O).
pub fn lower(f: &ReplayFlags) -> Result<Lowered, String> {
    let trace = read_trace(&f.trace)?;
    let Some(target) = f.target.clone() else {
        return Err("--target DEV|FILE is required: the device or file to replay onto".into());
    };
    let o = f.options();
    let chosen = choose(trace, &o, &target.display().to_string(), Spelling::Flags)?;
    let size = crate::host::blockdev::addressable_bytes(&target).map_err(|e| format!("--target {e}"))?;
    Ok(lowered(place(&chosen, &o, target, Some(size), Spelling::Flags)?))
}

pub struct Replay;

impl Frontend for Replay {
    fn name(&self) -> &'static str {
        "replay"
    }
    fn about(&self) -> &'static str {
        "Re-issue a captured block trace (blktrace files or a fio iolog) against a device or file, or convert it to a fio iolog"
    }
    fn reads(&self) -> &'static str {
        "blktrace files (NAME or NAME.blktrace.N) or a fio iolog (v2 or v3), and the device or file to replay onto"
    }
    fn command(&self) -> clap::Command {
        ReplayFlags::augment_args(clap::Command::new("replay")).about(self.about())
    }
    fn own_command(&self) -> bool {
        true
    }
    fn lower_cli(&self, m: &clap::ArgMatches, _raw: &[String]) -> Result<Session, FrontendError> {
        let flags = ReplayFlags::from_arg_matches(m).map_err(|e| FrontendError::Usage(e.to_string()))?;
        Ok(one_run(lower(&flags).map_err(FrontendError::Usage)?))
    }
    fn workload_keys(&self) -> &'static [&'static str] {
        &["replay", "target", "speed", "depth", "engine", "reads_only", "beyond_end", "write"]
    }
    fn lower_workload(&self, w: &WorkloadDef) -> Result<Arc<dyn Recipe>, ExperimentError> {
        let Some(path) = w.string("replay")? else {
            return Err(w.error("replay", "expected replay = \"TRACE\": blktrace files or a fio iolog, relative to this file"));
        };
        let flag = |key: &str| -> Result<bool, ExperimentError> {
            match w.scalar(key)?.as_deref() {
                None | Some("false") => Ok(false),
                Some("true") => Ok(true),
                Some(v) => Err(w.error(key, format!("expected true or false, got '{v}'"))),
            }
        };
        let (write, reads_only) = (flag("write")?, flag("reads_only")?);
        if write && reads_only {
            return Err(w.error("reads_only", "reads_only = true leaves out the writes that write = true allows: give one of them"));
        }
        let speed = match w.string("speed")?.as_deref() {
            None | Some("as-recorded") => Speed::AsRecorded,
            Some("max") => Speed::Max,
            Some(s) => return Err(w.error("speed", format!("expected as-recorded or max, got '{s}'"))),
        };
        let depth = match w.scalar("depth")? {
            None => 32,
            Some(d) => match d.parse::<u32>() {
                Ok(n) if (1..=MAX_DEPTH).contains(&n) => n,
                _ => return Err(w.error("depth", format!("expected 1 to {MAX_DEPTH} I/Os in flight, got {d}"))),
            },
        };
        let beyond_end = match w.string("beyond_end")? {
            None => BeyondEnd::Error,
            Some(s) => BeyondEnd::parse(&s)
                .ok_or_else(|| w.error("beyond_end", format!("expected one of {}, got '{s}'", BeyondEnd::NAMES.join(", "))))?,
        };
        let engine_name = w.string("engine")?;
        engine(engine_name.as_deref(), Spelling::Keys).map_err(|e| w.error("engine", e))?;
        let o = ReplayOptions { speed, depth, engine: engine_name, write, reads_only, beyond_end };
        let trace = read_trace(&w.base.join(&path)).map_err(|e| w.error("replay", e))?;
        let chosen = choose(trace, &o, "the target", Spelling::Keys).map_err(|e| w.error("replay", e))?;
        Ok(Arc::new(ReplayWorkload { label: w.label.clone(), target: w.string("target")?, options: o, chosen }))
    }
}

/// A replay of an experiment: the trace read and chosen once, placed on
/// each target as it is planned.
#[derive(Debug)]
struct ReplayWorkload {
    label: String,
    /// `target = "FILE"`, `${…}` unexpanded.
    target: Option<String>,
    options: ReplayOptions,
    chosen: Chosen,
}

impl Recipe for ReplayWorkload {
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError> {
        let error = |message: String| RecipeError { workload: self.label.clone(), message };
        let target = match (&self.target, at.is_device) {
            (None, true) => at.target.clone(),
            (Some(_), true) => return Err(error("a raw-device target is replayed onto itself: leave out target = FILE".into())),
            (None, false) => {
                return Err(error(
                    "on a directory or file-system target the replay needs target = FILE, a file in the target \
                     that an earlier workload lays out (e.g. fio's --filename=${target}/FILE)"
                        .into(),
                ))
            }
            (Some(t), false) => {
                let t = expand(t, at.params, Some(&at.target)).map_err(error)?;
                in_target(at, "target = ", Path::new(&t)).map_err(error)?
            }
        };
        // Known only once the file or device is there: before the
        // experiment sets its targets up, the runner checks the fit instead.
        let size = is_replayable(&target).then(|| crate::host::blockdev::addressable_bytes(&target)).transpose().map_err(error)?;
        Ok(lowered(place(&self.chosen, &self.options, target, size, Spelling::Keys).map_err(error)?))
    }
}

/// A regular file or a block device: what a replay can address.
fn is_replayable(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() || m.file_type().is_block_device())
}
