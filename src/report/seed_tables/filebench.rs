//! Seed 000's table: Filebench's ops/s per personality × cache scenario ×
//! background load, the spread over the repeats, and the write share as
//! the seed defines it (Tables 2-3): the write operations the benchmark
//! issued against the write requests the device completed.

use super::{levels_of, spread, total, Ctx};
use crate::report::export::markdown::table_padded;
use crate::stats::experiment::{BENCHMARK_WRITE_OPS, DEVICE_WRITE_REQUESTS};
use crate::units::thousands;
use std::fmt::Write;

/// The headline Filebench's own summary leads with.
const OPS: &str = "/io_summary/ops_s";

pub(super) fn table(x: &Ctx) -> Option<String> {
    let rows: Vec<_> = x
        .cells
        .iter()
        .filter_map(|c| c.headline_order.iter().find(|m| m.ends_with(OPS)).and_then(|m| c.metrics.get(m)).map(|ops| (c, ops)))
        .collect();
    if rows.is_empty() {
        return None;
    }
    let factors: Vec<&str> = ["workload"].into_iter().chain(x.varying(&["target", "cache", "background"])).collect();
    let mut header: Vec<&str> = factors.clone();
    header.extend(["n", "ops/s median [min–max]", "range", "write ops issued", "device write requests", "write share"]);
    let right: Vec<bool> = (0..header.len()).map(|i| i >= factors.len()).collect();
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|(c, ops)| {
            let range =
                if ops.n >= 2 && ops.median > 0.0 { format!("{:.1}%", (ops.max - ops.min) / ops.median * 100.0) } else { "–".into() };
            let (issued, device) = (c.metrics.get(BENCHMARK_WRITE_OPS).map(total), c.metrics.get(DEVICE_WRITE_REQUESTS).map(total));
            let share = match (issued, device) {
                (Some(i), Some(d)) if d > 0 => format!("{:.2}%", i as f64 * 100.0 / d as f64),
                _ => "–".into(),
            };
            let count = |v: Option<u64>| v.map_or_else(|| "–".into(), thousands);
            levels_of(c, &factors).into_iter().chain([ops.n.to_string(), spread(ops), range, count(issued), count(device), share]).collect()
        })
        .collect();
    let mut t = String::new();
    let _ = writeln!(t, "\n## Filebench: ops/s and write share (seed 000)\n");
    let _ = writeln!(
        t,
        "ops/s: Filebench's IO Summary, median over the repeats with the smallest and largest; range = (max − min) / median. \
         Write share, the seed's Tables 2-3: the write operations the benchmark issued (its write and append flowops) against \
         the write requests the target's device completed during the runs (its block counters), both summed over the repeats \
         (per run: `attribution/write_share_pct` in summary.csv). Above 100% when the page cache absorbed or the block layer \
         merged writes; on a directory target the device is whatever holds it, with every other writer on it.\n"
    );
    t += &table_padded(&header, &right, &body, true);
    Some(t)
}
