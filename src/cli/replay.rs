//! `fsbench replay TRACE --target DEV|FILE`: a captured block trace (or a
//! fio iolog) re-issued as a benchmark, with the same report, JSON,
//! `--repeat` and environment flags as every workload command; and
//! `--to-iolog FILE`, which converts the trace for fio's `read_iolog=`
//! instead of running it. One command for both, because both read the
//! trace and choose its events the same way.

use super::events::Terminal;
use super::workload::{check_flags, run_options, run_plan, Output};
use super::{install_stop_handler, want_progress, CommonArgs, RepeatArgs};
use crate::frontend::replay::{iolog, read_trace, Trace};
use crate::model::recipe::Lowered;
use crate::model::replay::{ReplayPlan, Speed};
use crate::model::{Plan, Workload};
use crate::runner::replay::{check_fits, target_bytes};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

/// Re-issue a captured block trace against a device or file: its offsets,
/// sizes, directions and timing, with a queue-depth limit. From blktrace
/// files it replays the D (issue) events, or the Q (queue) events of a
/// trace that has no D (a bio-based device such as zram): reads and
/// writes, and discards as trims; flushes without data and passthrough
/// commands are left out. From a fio iolog (version 2 or 3) its reads,
/// writes and trims; syncs are left out. Writes and trims are refused
/// without --write (and on a block device without --allow-device).
#[derive(Args, Debug)]
pub struct ReplayArgs {
    /// The trace: blktrace files (NAME, or one of its NAME.blktrace.N; every CPU's file is read) or a fio iolog.
    trace: PathBuf,
    /// The block device or regular file to replay onto (with --to-iolog: the file name written in the log;
    /// default the traced device's /dev node).
    #[arg(long, value_name = "DEV|FILE")]
    target: Option<PathBuf>,
    /// as-recorded: each I/O at its recorded time after the start (later when the depth limit holds it
    /// back); max: as fast as the depth allows, in the trace's order.
    #[arg(long, default_value = "as-recorded", value_parser = ["as-recorded", "max"])]
    speed: String,
    /// Most I/Os in flight at once.
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=4096))]
    depth: u32,
    /// io_uring or libaio (default: io_uring when the kernel allows it); O_DIRECT either way when the target allows it.
    #[arg(long)]
    engine: Option<String>,
    /// Allow the trace's writes and trims (they destroy what the target holds there).
    #[arg(long)]
    write: bool,
    /// Replay only the trace's reads.
    #[arg(long, conflicts_with = "write")]
    reads_only: bool,
    /// An I/O that ends past the target's end: error (refuse before any I/O), wrap (its offset modulo
    /// the target's size), or skip (leave it out); wrapped and skipped I/Os are counted in the report.
    #[arg(long, default_value = "error", value_parser = ["error", "wrap", "skip"])]
    beyond_end: String,
    /// Write the trace as a fio iolog to FILE instead of replaying it (fio --read_iolog=FILE replays it).
    #[arg(long, value_name = "FILE")]
    to_iolog: Option<PathBuf>,
    /// The iolog version --to-iolog writes: 3 (a µs timestamp per line, fio 3.31 and later) or 2 (waits in ms).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(2..=3))]
    iolog_version: u8,
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    repeat: RepeatArgs,
}

pub fn run(a: ReplayArgs) -> i32 {
    let trace = match read_trace(&a.trace) {
        Ok(t) => t,
        Err(e) => {
            super::fail(format!("fsbench replay: {e}"));
            return 2;
        }
    };
    if let Some(out) = &a.to_iolog {
        if let Err(code) = super::check_outputs("replay", &[("--to-iolog".into(), out.clone())]) {
            return code;
        }
        return to_iolog(&a, &trace, out);
    }
    let Some(target) = a.target.clone() else {
        super::fail("fsbench replay: --target DEV|FILE is required: the device or file to replay onto".into());
        return 2;
    };
    match plan(&a, trace, target) {
        Ok(p) => run_replay_plan("replay", Plan::new(Workload::Replay(p), "replay"), &a.common, &a.repeat),
        Err(e) => {
            super::fail(format!("fsbench replay: {e}"));
            2
        }
    }
}

/// The trace as a plan for `target`, every check that needs no I/O done.
fn plan(a: &ReplayArgs, trace: Trace, target: PathBuf) -> Result<ReplayPlan, String> {
    let engine = engine(a.engine.as_deref())?;
    let mut notes = trace.notes;
    let mut ios = trace.ios;
    if a.reads_only {
        let before = ios.len();
        ios.retain(|i| !i.dir.modifies());
        notes.push(format!("--reads-only: {} writes and trims left out", before - ios.len()));
    }
    if ios.is_empty() {
        return Err(format!("{}: no I/O to replay (after the events and directions chosen)", trace.source));
    }
    let writes = ios.iter().filter(|i| i.dir.modifies()).count();
    if writes > 0 && !a.write {
        return Err(format!(
            "the trace has {writes} writes or trims, which would destroy data on {}: pass --write to replay them, or --reads-only to leave them out",
            target.display()
        ));
    }
    if writes > 0 && crate::environment::safety::is_block_device(&target) {
        crate::environment::safety::check_device_usable(&target, a.common.allow_device)?;
    }
    let size = target_bytes(&target).map_err(|e| format!("--target {e}"))?;
    match a.beyond_end.as_str() {
        "wrap" => {
            let mut wrapped = 0;
            for io in ios.iter_mut().filter(|io| io.offset + io.len as u64 > size) {
                if io.len as u64 > size {
                    return Err(format!(
                        "--beyond-end wrap: an I/O of {} bytes is larger than {} ({size} bytes)",
                        io.len,
                        target.display()
                    ));
                }
                // Sector-aligned, so O_DIRECT still takes it.
                io.offset = (io.offset % (size - io.len as u64 + 1)) / 512 * 512;
                wrapped += 1;
            }
            if wrapped > 0 {
                notes.push(format!("--beyond-end wrap: {wrapped} I/Os past the end of the target wrapped to its start"));
            }
        }
        "skip" => {
            let before = ios.len();
            ios.retain(|io| io.offset + io.len as u64 <= size);
            if ios.len() < before {
                notes.push(format!("--beyond-end skip: {} I/Os past the end of the target left out", before - ios.len()));
            }
        }
        _ => check_fits(&ios, size, &target).map_err(|e| format!("{e}; --beyond-end wrap|skip to replay it anyway"))?,
    }
    let speed = if a.speed == "max" { Speed::Max } else { Speed::AsRecorded };
    for n in &notes {
        eprintln!("fsbench replay: {n}");
    }
    Ok(ReplayPlan { target, ios: Arc::new(ios), speed, depth: a.depth, engine, source: trace.source, write: a.write, surface: None, notes })
}

/// The engine named, or the default; only engines that keep a queue.
pub(super) fn engine(name: Option<&str>) -> Result<String, String> {
    match name {
        None => Ok(super::quick::default_async_engine()),
        Some(e @ ("io_uring" | "libaio")) => Ok(e.to_string()),
        Some(e) => Err(format!("--engine {e}: replay issues through io_uring or libaio (an engine that keeps a queue)")),
    }
}

fn to_iolog(a: &ReplayArgs, trace: &Trace, out: &std::path::Path) -> i32 {
    let file = match (&a.target, trace.device) {
        (Some(t), _) => t.display().to_string(),
        (None, Some((ma, mi))) => match crate::host::blockdev::BlockDev::from_devnum(ma, mi) {
            Some(d) => d.dev_path().display().to_string(),
            None => {
                super::fail(format!(
                    "fsbench replay: the traced device {ma}:{mi} is not on this machine: name the file the log should use with --target"
                ));
                return 2;
            }
        },
        (None, None) => {
            super::fail("fsbench replay: the trace names no device: name the file the log should use with --target".into());
            return 2;
        }
    };
    let text = match iolog::write(&trace.ios, &file, a.iolog_version) {
        Ok(t) => t,
        Err(e) => {
            super::fail(format!("fsbench replay: --target {e}"));
            return 2;
        }
    };
    if let Err(e) = crate::environment::safety::write_output("--to-iolog", out, text.as_bytes()) {
        super::fail(format!("fsbench replay: {e}"));
        return 1;
    }
    let count = |d: crate::model::replay::Dir| trace.ios.iter().filter(|i| i.dir == d).count();
    use crate::model::replay::Dir;
    eprintln!(
        "fsbench replay: wrote {} I/Os ({} reads, {} writes, {} trims) of {} to {} (fio iolog v{}, file {file})",
        trace.ios.len(),
        count(Dir::Read),
        count(Dir::Write),
        count(Dir::Trim),
        trace.source,
        out.display(),
        a.iolog_version
    );
    for n in &trace.notes {
        eprintln!("fsbench replay: {n}");
    }
    0
}

/// Run a replay-shaped plan as every workload command runs its plan.
pub(super) fn run_replay_plan(name: &str, plan: Plan, common: &CommonArgs, repeat: &RepeatArgs) -> i32 {
    let (exporter, env) = match check_flags(name, common, repeat) {
        Ok(x) => x,
        Err(code) => return code,
    };
    super::cleanup::warn_leftovers();
    let opts = run_options(common, install_stop_handler(), Arc::new(Terminal::new(want_progress(common))));
    run_plan(Lowered { plan, warnings: Vec::new() }, &env, repeat, &opts, &exporter, &Output::Given(common.output.clone()))
}
