//! `fsbench replay TRACE --target DEV|FILE`: a captured block trace (or a
//! fio iolog) re-issued as a benchmark, with the same report, JSON,
//! `--repeat` and environment flags as every workload command; and
//! `--to-iolog FILE`, which converts the trace for fio's `read_iolog=`
//! instead of running it. One command for both, because both read the
//! trace and choose its events the same way.

use super::events::Terminal;
use super::workload::{check_flags, run_options, run_plan, Output};
use super::{install_stop_handler, want_progress, CommonArgs, RepeatArgs};
use crate::frontend::replay::family::ReplayFlags;
use crate::frontend::replay::{iolog, read_trace, Trace};
use crate::model::recipe::Lowered;
use crate::model::{Plan, Workload};
use clap::Args;
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
    #[command(flatten)]
    flags: ReplayFlags,
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    repeat: RepeatArgs,
}

pub fn run(a: ReplayArgs) -> i32 {
    if let Some(out) = &a.flags.to_iolog {
        let trace = match read_trace(&a.flags.trace) {
            Ok(t) => t,
            Err(e) => {
                super::fail(format!("fsbench replay: {e}"));
                return 2;
            }
        };
        if let Err(code) = super::check_outputs("replay", &[("--to-iolog".into(), out.clone())]) {
            return code;
        }
        return to_iolog(&a, &trace, out);
    }
    match plan(&a) {
        Ok(l) => run_replay_plan("replay", l.plan, &a.common, &a.repeat),
        Err(e) => {
            super::fail(format!("fsbench replay: {e}"));
            2
        }
    }
}

/// The flags as a plan (`frontend::replay`), with what only the CLI may
/// check: whether the block device it writes may be written. The trace's
/// notes go to stderr.
fn plan(a: &ReplayArgs) -> Result<Lowered, String> {
    let lowered = crate::frontend::replay::family::lower(&a.flags)?;
    if let Workload::Replay(p) = &lowered.plan.workload {
        if p.modifies() && crate::environment::safety::is_block_device(&p.target) {
            crate::environment::safety::check_device_usable(&p.target, a.common.allow_device)?;
        }
        for n in &p.notes {
            eprintln!("fsbench replay: {n}");
        }
    }
    Ok(lowered)
}

fn to_iolog(a: &ReplayArgs, trace: &Trace, out: &std::path::Path) -> i32 {
    let file = match (&a.flags.target, trace.device) {
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
    let text = match iolog::write(&trace.ios, &file, a.flags.iolog_version) {
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
        a.flags.iolog_version
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
