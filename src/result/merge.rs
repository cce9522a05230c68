//! Merging the results of the ranks of one run: the same plan's work split
//! over processes or machines, each run through the same lifecycle
//! (`runner::lifecycle::drive`), then put together as if one run had done
//! it all. Pure functions of results: nothing here measures.
//!
//! - counts and bytes add, latency histograms merge (they are HDR
//!   histograms with one bucket layout, so the merged one is the histogram
//!   of every rank's samples);
//! - spans take the earliest start and the latest end: bandwidth is the
//!   total bytes over the union of the windows, not a sum of rates;
//! - timelines add per interval, each rank's shifted by when its window
//!   opened (ranks that did not record it are taken to have started
//!   together);
//! - partial when any rank was, failed as the first failed rank, warnings
//!   once each;
//! - a tool's own figures (`details`, its headline) follow the tool's rules
//!   and cannot be added blindly: kept when every rank has the same, else
//!   the merged unit leads with its operations' figures and has no details.
//!
//! Block devices are each rank's as measured (two ranks on one machine see
//! one device twice: a device's counters cannot be split between them).

use crate::result::{GroupResult, JobResult, OpStats, RunResult, Timeline};
use std::collections::BTreeMap;
use std::fmt;

/// Why results cannot be merged as ranks of one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError(pub String);

impl fmt::Display for MergeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for MergeError {}

/// Where each rank's span starts: ns after the earliest, with the earliest
/// itself; all 0 (and no start) unless every rank recorded its start.
fn line_up(starts: &[Option<u64>]) -> (Option<u64>, Vec<u64>) {
    let known: Option<Vec<u64>> = starts.iter().copied().collect();
    match known.as_deref().and_then(|k| k.iter().min().map(|&m| (m, k))) {
        Some((first, k)) => (Some(first), k.iter().map(|s| s - first).collect()),
        None => (None, vec![0; starts.len()]),
    }
}

/// The end of the latest span, from the earliest start.
fn union_ns(offsets: &[u64], lengths: impl Iterator<Item = u64>) -> u64 {
    offsets.iter().zip(lengths).map(|(o, l)| o + l).max().unwrap_or(0)
}

/// One group (a measured window) from every rank.
pub fn merge_groups(ranks: &[&GroupResult]) -> GroupResult {
    let Some(first) = ranks.first() else { return GroupResult::default() };
    let (start, offsets) = line_up(&ranks.iter().map(|g| g.started_unix_ns).collect::<Vec<_>>());
    let mut g = GroupResult {
        group: first.group,
        ran_with: first.ran_with.clone(),
        elapsed_ns: union_ns(&offsets, ranks.iter().map(|g| g.elapsed_ns)),
        started_unix_ns: start,
        ..Default::default()
    };
    for r in ranks {
        let (c, o) = (&mut g.cpu, &r.cpu);
        c.user_s += o.user_s;
        c.system_s += o.system_s;
        c.voluntary_ctx_switches += o.voluntary_ctx_switches;
        c.involuntary_ctx_switches += o.involuntary_ctx_switches;
        c.minor_faults += o.minor_faults;
        c.major_faults += o.major_faults;
        let (p, o) = (&mut g.process_io, &r.process_io);
        p.read_bytes += o.read_bytes;
        p.write_bytes += o.write_bytes;
        p.cancelled_write_bytes += o.cancelled_write_bytes;
        p.syscr += o.syscr;
        p.syscw += o.syscw;
        g.devices.extend(r.devices.iter().cloned());
    }
    g.cpu.wall_s = offsets.iter().zip(ranks).map(|(&o, r)| o as f64 / 1e9 + r.cpu.wall_s).fold(0.0, f64::max);
    g
}

/// The same operation lists from every rank: each `(ops, offset_ns,
/// elapsed_ns)` is a rank's operations, when its span started after the
/// earliest, and its unit's span. Operations keep the first rank's order;
/// one that only a later rank has comes after.
pub fn merge_ops(ranks: &[(&[OpStats], u64, u64)]) -> Vec<OpStats> {
    let mut out: Vec<OpStats> = Vec::new();
    // Each operation's latest end from the earliest start, and whether any
    // rank timed it apart from its unit (`active_ns`).
    let mut ends: Vec<(u64, bool)> = Vec::new();
    for &(ops, offset, elapsed) in ranks {
        for o in ops {
            let i = match out.iter().position(|m| m.name == o.name) {
                Some(i) => {
                    out[i].merge(o);
                    i
                }
                None => {
                    out.push(o.clone());
                    ends.push((0, false));
                    out.len() - 1
                }
            };
            let e = &mut ends[i];
            e.0 = e.0.max(offset + o.active_ns.unwrap_or(elapsed));
            e.1 |= o.active_ns.is_some();
        }
    }
    for (o, (end, apart)) in out.iter_mut().zip(ends) {
        o.active_ns = apart.then_some(end);
    }
    out
}

/// `t` shifted later by `intervals` (zeros in front).
fn shifted(t: &Timeline, intervals: usize) -> Timeline {
    let shift = |m: &BTreeMap<String, Vec<u64>>| -> BTreeMap<String, Vec<u64>> {
        m.iter().map(|(k, v)| (k.clone(), std::iter::repeat_n(0, intervals).chain(v.iter().copied()).collect())).collect()
    };
    Timeline { interval_ms: t.interval_ms, ops: shift(&t.ops), bytes: shift(&t.bytes) }
}

/// Timelines added interval by interval, each shifted by its rank's offset.
pub fn merge_timelines(ranks: &[(&Timeline, u64)]) -> Result<Timeline, MergeError> {
    let mut out = Timeline::default();
    for &(t, offset) in ranks {
        if t.interval_ms == 0 {
            continue;
        }
        if out.interval_ms != 0 && out.interval_ms != t.interval_ms {
            return Err(MergeError(format!("timelines of {} ms and {} ms intervals cannot be added", out.interval_ms, t.interval_ms)));
        }
        let step = t.interval_ms * 1_000_000;
        let intervals = ((offset + step / 2) / step) as usize;
        out.merge(&shifted(t, intervals));
    }
    Ok(out)
}

/// One unit from every rank: `(job, offset_ns)`, when its rank's window
/// opened after the earliest.
pub fn merge_jobs(ranks: &[(&JobResult, u64)]) -> Result<JobResult, MergeError> {
    let Some(&(first, _)) = ranks.first() else { return Err(MergeError("no rank to merge".into())) };
    if let Some((other, _)) = ranks.iter().find(|(j, _)| j.name != first.name) {
        return Err(MergeError(format!("job '{}' of one rank meets job '{}' of another", first.name, other.name)));
    }
    let offsets: Vec<u64> = ranks.iter().map(|r| r.1).collect();
    let ops: Vec<(&[OpStats], u64, u64)> = ranks.iter().map(|(j, o)| (j.ops.as_slice(), *o, j.elapsed_ns)).collect();
    let timelines: Vec<(&Timeline, u64)> = ranks.iter().map(|(j, o)| (&j.timeline, *o)).collect();
    let mut job = JobResult {
        name: first.name.clone(),
        group: first.group,
        threads: ranks.iter().map(|(j, _)| j.threads).sum(),
        engine: first.engine.clone(),
        elapsed_ns: union_ns(&offsets, ranks.iter().map(|(j, _)| j.elapsed_ns)),
        ops: merge_ops(&ops),
        timeline: merge_timelines(&timelines)?,
        options: first.options.clone(),
        resolved: first.resolved.clone(),
        partial: ranks.iter().any(|(j, _)| j.partial),
        error: ranks.iter().find_map(|(j, _)| j.error.clone()),
        headline: first.headline.clone(),
        details: first.details.clone(),
    };
    if ranks.iter().any(|(j, _)| j.headline != first.headline || j.details != first.details) {
        job.headline = job.op_headline();
        job.details = None;
    }
    Ok(job)
}

/// The ranks of one run as one result. Every rank ran the same plan: the
/// same units in the same order, the same groups.
pub fn merge_runs(ranks: &[RunResult]) -> Result<RunResult, MergeError> {
    let Some(first) = ranks.first() else { return Err(MergeError("no rank to merge".into())) };
    for r in ranks {
        if r.jobs.len() != first.jobs.len() || r.groups.len() != first.groups.len() {
            return Err(MergeError(format!(
                "ranks of one run have the same units: {} jobs in {} groups against {} in {}",
                first.jobs.len(),
                first.groups.len(),
                r.jobs.len(),
                r.groups.len()
            )));
        }
    }
    let groups: Vec<GroupResult> =
        (0..first.groups.len()).map(|g| merge_groups(&ranks.iter().map(|r| &r.groups[g]).collect::<Vec<_>>())).collect();
    let jobs = (0..first.jobs.len())
        .map(|k| {
            // A unit's span starts with its group's window in its rank.
            let starts: Vec<Option<u64>> =
                ranks.iter().map(|r| r.groups.iter().find(|g| g.holds(r.jobs[k].group)).and_then(|g| g.started_unix_ns)).collect();
            let (_, offsets) = line_up(&starts);
            merge_jobs(&ranks.iter().zip(offsets).map(|(r, o)| (&r.jobs[k], o)).collect::<Vec<_>>())
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut warnings: Vec<crate::result::warning::Warning> = Vec::new();
    for w in ranks.iter().flat_map(|r| &r.warnings) {
        if !warnings.contains(w) {
            warnings.push(w.clone());
        }
    }
    let same_trace = ranks.iter().all(|r| serde_json::to_value(&r.trace).ok() == serde_json::to_value(&first.trace).ok());
    Ok(RunResult {
        schema: first.schema.clone(),
        fsbench_version: first.fsbench_version.clone(),
        started_unix: ranks.iter().map(|r| r.started_unix).min().unwrap_or(first.started_unix),
        command: first.command.clone(),
        layout: first.layout.clone(),
        jobs,
        groups,
        system: first.system.clone(),
        warnings,
        partial: ranks.iter().any(|r| r.partial),
        failed: ranks.iter().find_map(|r| r.failed.clone()),
        trace: if same_trace { first.trace.clone() } else { None },
    })
}

#[cfg(test)]
mod tests;
