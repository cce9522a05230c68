//! Space for what a workload adds while it runs. The free-space check
//! before laying out (`environment::space`) counts what a run lays out;
//! a Filebench workload that appends or creates files grows during the run
//! as well (webserver's log filled a 2 GiB target mid-run and every
//! webserver run of the experiment FAILED with ENOSPC). Before anything is
//! set up, this bounds that growth (`runner::flow::growth`) for every
//! Filebench workload on every target whose space is known then (a loop or
//! zram device fsbench makes, by its size; a directory, by its free space
//! now) and refuses the experiment when what is laid out plus the growth
//! exceeds 80% of it, naming the workload, the flowop, the bound and the
//! space, and what to change. `--allow-fill` runs it anyway (filling the
//! target on purpose). A run that hits ENOSPC regardless stays a failed
//! run; `explain_enospc` says in its record what happened.

use crate::environment::space;
use crate::model::environment::{DeviceSource, TargetSpec};
use crate::model::experiment::{Experiment, Target};
use crate::model::recipe::Placement;
use crate::model::Workload;
use crate::runner::flow::growth::{self, Growth};
use crate::units::bytes;

/// The share of a target's space a run may plan to fill: the rest is the
/// file system's own (journal, metadata, delayed-allocation reserves) and
/// the error of the estimate.
pub const USABLE_SHARE: f64 = 0.8;

/// Every (target, workload) whose growth may not fit; empty with `allow_fill`.
pub fn preflight(exp: &Experiment, allow_fill: bool) -> Result<(), Vec<String>> {
    if allow_fill {
        return Ok(());
    }
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let mut problems = Vec::new();
    // Planned in a directory that does not exist: planning touches nothing.
    let placeholder = std::env::temp_dir().join("fsbench-space-check");
    for t in &exp.targets {
        let Some((capacity, what)) = capacity(t) else { continue };
        let at = Placement { target: placeholder.clone(), is_device: false, params: &exp.params };
        for w in exp.workloads.iter().filter(|w| w.runs_on(&t.label)) {
            // A workload that cannot be planned is preflight's problem.
            let Ok(lowered) = w.recipe.plan(&at) else { continue };
            let Workload::Flow(plan) = &lowered.plan.workload else { continue };
            let laid_out: u64 = crate::runner::flow::fileset::space_needs(plan).iter().map(|n| n.bytes).sum();
            let g = growth::bound(plan, cpus);
            if let Some(p) = refusal(exp, t, &w.label, laid_out, &g, capacity, &what) {
                problems.push(p);
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// The target's space before it is set up, and how to name it.
fn capacity(t: &Target) -> Option<(u64, String)> {
    match &t.spec {
        TargetSpec::Managed { device: DeviceSource::Loop { size, .. }, .. } => Some((*size, format!("{} loop device", bytes(*size)))),
        TargetSpec::Managed { device: DeviceSource::Zram { size }, .. } => Some((*size, format!("{} zram device", bytes(*size)))),
        TargetSpec::Directory(d) => space::free_bytes(d).map(|b| (b, format!("{} free in {}", bytes(b), d.display()))),
        _ => None,
    }
}

/// Why `workload` cannot run on `t`, or None when it fits.
fn refusal(exp: &Experiment, t: &Target, workload: &str, laid_out: u64, g: &Growth, capacity: u64, what: &str) -> Option<String> {
    let allowed = (capacity as f64 * USABLE_SHARE) as u64;
    let need = laid_out.saturating_add(g.bytes());
    if need <= allowed || g.bytes() == 0 {
        return None;
    }
    let mut grows: Vec<String> = g
        .flowops
        .iter()
        .filter(|f| f.bytes > 0)
        .map(|f| {
            let level = match f.deletes_bound {
                Some(l) if l <= f.bytes => format!(", held to {} by the loop's deletes from its fileset", bytes(l)),
                _ => String::new(),
            };
            format!(
                "flowop '{}' ({}, {} per op, at most {} ops/s over {} s) can add {}{level}",
                f.flowop,
                f.kind,
                bytes(f.bytes_per_op),
                crate::units::thousands(f.ops_per_s.round() as u64),
                g.seconds,
                bytes(f.bytes)
            )
        })
        .collect();
    if g.created_bytes > 0 {
        grows.push(format!("createfile can make the filesets' missing files, {}", bytes(g.created_bytes)));
    }
    let mut fixes = Vec::new();
    let room = ((need as f64 / USABLE_SHARE) / (1u64 << 30) as f64).ceil().max(1.0) as u64;
    if exp.params.contains_key("devsize") && matches!(t.spec, TargetSpec::Managed { .. }) {
        fixes.push(format!("a larger target (--set devsize={room}g)"));
    } else {
        fixes.push(format!("a target of at least {room} GiB"));
    }
    // Seconds that fit: the rate-bound part scales with the run, the rest does not.
    let scales = |f: &&growth::FlowopGrowth| f.deletes_bound.is_none_or(|l| l > f.bytes);
    let per_s = g.flowops.iter().filter(scales).map(|f| f.bytes).sum::<u64>() as f64 / g.seconds.max(1) as f64;
    let held: u64 = g.flowops.iter().filter(|f| !scales(f)).map(|f| f.bytes).sum();
    let fixed = laid_out.saturating_add(g.created_bytes).saturating_add(held) as f64;
    let fit = if per_s > 0.0 { ((allowed as f64 - fixed) / per_s).floor() as i64 } else { -1 };
    match (fit >= 1, exp.params.contains_key("runtime")) {
        (true, true) => fixes.push(format!("a shorter run (--set runtime={fit} or less)")),
        (true, false) => fixes.push(format!("a shorter run ({fit} s or less)")),
        _ => {}
    }
    fixes.push("--allow-fill to run it anyway and fill the target on purpose".into());
    // One fact a line: the CLI bounds each line's length.
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    Some(format!(
        "workload '{workload}' on target '{}' can outgrow the target while it runs: up to {} with what it lays out, more than {:.0}% \
         of the target's {what} ({}); refused before anything runs\n  {}\n  laid out before the run: {}\n  \
         the bound: the fastest this machine's {cpus} CPUs could run the workload's thread loops (runner/flow/growth.rs)\n  fix: {}",
        t.label,
        bytes(need),
        USABLE_SHARE * 100.0,
        bytes(allowed),
        grows.join("\n  "),
        bytes(laid_out),
        fixes.join(", or ")
    ))
}

/// A failed run's error, with what ENOSPC means here added: the target
/// filled during the run although the check before it passed.
pub fn explain_enospc(error: &mut Option<String>) {
    let Some(e) = error else { return };
    if e.contains("No space left on device") && !e.contains("filled while it ran") {
        e.push_str(
            " (the target filled while it ran: what the workload wrote exceeded its space; give the target more room, e.g. --set devsize=, \
             or shorten the run)",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enospc_is_explained_once_and_other_errors_are_left_alone() {
        let mut e = Some("flowop appendfilerand 'appendlog': append to /m/x: No space left on device (os error 28)".to_string());
        explain_enospc(&mut e);
        explain_enospc(&mut e);
        let text = e.unwrap();
        assert_eq!(text.matches("filled while it ran").count(), 1, "{text}");
        let mut other = Some("permission denied".to_string());
        explain_enospc(&mut other);
        assert_eq!(other.as_deref(), Some("permission denied"));
    }
}
