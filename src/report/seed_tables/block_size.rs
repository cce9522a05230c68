//! Seed 003's block-device against file-system table: per job/operation
//! whose bandwidth leads, a row per block size (each workload's mean I/O
//! size, bytes / operations), a column per target with its MiB/s, and each
//! target's ratio to the first (the raw device in seed 003).

use super::{spread, Ctx};
use crate::report::export::markdown::table_padded;
use crate::report::format::{num, p_value};
use crate::stats::summary::Summary;
use std::fmt::Write;

/// One table: a job/operation in one cache scenario and background load.
struct Sweep<'a> {
    what: String,
    context: String,
    /// (size in bytes, workload, target, bandwidth).
    points: Vec<(u64, &'a str, &'a str, &'a Summary)>,
}

pub(super) fn table(x: &Ctx) -> Option<String> {
    let mut sweeps: Vec<Sweep> = Vec::new();
    let varying = x.varying(&["cache", "background"]);
    for c in &x.cells {
        for m in c.headline_order.iter().filter(|m| m.ends_with("/bw_MiB_s")) {
            let op = m.trim_end_matches("/bw_MiB_s");
            let (Some(bw), Some(iops)) = (c.metrics.get(m), c.metrics.get(&format!("{op}/iops"))) else { continue };
            if iops.mean <= 0.0 {
                continue;
            }
            let size = (bw.mean * 1048576.0 / iops.mean).round() as u64;
            let what = match op.split_once('/') {
                Some((job, o)) if job == o => job.to_string(),
                _ => op.to_string(),
            };
            let context: Vec<String> = varying.iter().map(|f| format!("{f} {}", crate::stats::factors::level(&c.cell, f))).collect();
            let context = context.join(", ");
            let point = (size, c.cell.workload.as_str(), c.cell.target.as_str(), bw);
            match sweeps.iter_mut().find(|s| s.what == what && s.context == context) {
                Some(s) => s.points.push(point),
                None => sweeps.push(Sweep { what, context, points: vec![point] }),
            }
        }
    }
    let targets = x.levels.get("target");
    let mut t = String::new();
    for sw in sweeps.iter().filter(|s| sweeps_sizes(s)) {
        let mut sizes: Vec<u64> = sw.points.iter().map(|p| p.0).collect();
        sizes.sort_unstable();
        sizes.dedup();
        let present: Vec<&String> = targets.iter().filter(|tg| sw.points.iter().any(|p| p.2 == tg.as_str())).collect();
        let heads: Vec<String> = present
            .iter()
            .map(|tg| format!("{tg} MiB/s"))
            .chain(present.iter().skip(1).flat_map(|tg| [format!("{tg} / {}", present[0]), format!("p (Holm) {tg}")]))
            .collect();
        let header: Vec<&str> = ["block size"].into_iter().chain(heads.iter().map(String::as_str)).collect();
        let right = vec![true; header.len()];
        let rows: Vec<Vec<String>> = sizes
            .iter()
            .map(|&size| {
                let at = |tg: &str| sw.points.iter().find(|p| p.0 == size && p.2 == tg);
                let mut row = vec![size_label(size)];
                row.extend(present.iter().map(|tg| at(tg).map_or_else(|| "–".into(), |p| spread(p.3))));
                for tg in present.iter().skip(1) {
                    let (base, this) = (at(present[0]), at(tg));
                    row.push(match (base, this) {
                        (Some(a), Some(b)) if a.3.mean > 0.0 => num(b.3.mean / a.3.mean),
                        _ => "–".into(),
                    });
                    row.push(this.and_then(|p| holm(x, p.1, tg, &sw.what)).unwrap_or_else(|| "–".into()));
                }
                row
            })
            .collect();
        let context = if sw.context.is_empty() { String::new() } else { format!(", {}", sw.context) };
        let _ = writeln!(t, "\n## {} MiB/s by block size{context} (seed 003)\n", sw.what);
        let _ = writeln!(
            t,
            "Block size: the mean size of the operation's I/Os (bytes / operations). MiB/s: median over the repeats [smallest–largest]; \
             the ratio is of the means, with p (Holm) of the stats module's comparison of that target with {}.\n",
            present[0]
        );
        t += &table_padded(&header, &right, &rows, true);
    }
    (!t.is_empty()).then_some(t)
}

/// Two or more sizes, and no size twice on one target (the rows could not
/// tell those workloads apart).
fn sweeps_sizes(s: &Sweep) -> bool {
    let mut keys: Vec<(u64, &str)> = s.points.iter().map(|p| (p.0, p.2)).collect();
    let n = keys.len();
    keys.sort_unstable();
    keys.dedup();
    let mut sizes: Vec<u64> = s.points.iter().map(|p| p.0).collect();
    sizes.sort_unstable();
    sizes.dedup();
    keys.len() == n && sizes.len() >= 2
}

/// The Holm-adjusted p of `target` against the first target on this bandwidth.
fn holm(x: &Ctx, workload: &str, target: &str, what: &str) -> Option<String> {
    x.s.factors
        .comparisons
        .iter()
        .find(|f| {
            f.factor == "target"
                && f.workload == workload
                && f.level == target
                && f.comparison.metric.ends_with("/bw_MiB_s")
                && f.comparison.metric.trim_end_matches("/bw_MiB_s").ends_with(what.rsplit('/').next().unwrap_or(what))
        })
        .map(|f| if f.comparison.tested() { p_value(f.comparison.p_adjusted) } else { "not tested".into() })
}

/// 4k, 64k, 1M, 16M; other sizes in bytes.
fn size_label(b: u64) -> String {
    for (unit, m) in [("G", 1u64 << 30), ("M", 1 << 20), ("k", 1 << 10)] {
        if b >= m && b % m == 0 {
            return format!("{}{unit}", b / m);
        }
    }
    b.to_string()
}
