//! `fsbench replay` and `fsbench surface`. A replay shows its operations as
//! a fio job does, after a line on how faithfully the trace's timing was
//! kept; a surface scan leads with its throughput across the device (min,
//! mean, max, the slowest zones) and draws it against the position.

use super::{by_group, Layout};
use crate::report::chart::{position_chart, Line, Point};
use crate::report::format::{bytes, thousands, us};
use crate::result::replay::{ReplayDetails, SurfaceDetails};
use crate::result::{JobResult, RunResult};
use std::fmt::Write;

pub const REPLAY: Layout = Layout {
    name: "replay",
    about: "a replayed trace: its source, speed, depth and timing lag, then each operation as a fio job shows it",
    render: |r| by_group(r, replay_job),
    files: super::no_files,
    charts: super::no_charts,
};

pub const SURFACE: Layout = Layout {
    name: "surface",
    about: "a surface scan: throughput min/mean/max across the device, the slowest zones, per-zone table; charts against position",
    render: |r| by_group(r, surface_job),
    files: super::no_files,
    charts: surface_charts,
};

fn replay_job(s: &mut String, j: &JobResult) {
    if let Some(d) = ReplayDetails::of(j) {
        let _ = writeln!(s, "replay of {} onto {}", d.source, d.target);
        let timing = if d.speed == "as-recorded" {
            format!(
                "as recorded: trace span {:.3} s, replay {:.3} s; {} I/Os issued > 1 ms late, largest lag {} µs",
                d.trace_span_ns as f64 / 1e9,
                j.elapsed_ns as f64 / 1e9,
                thousands(d.late_ios),
                us(d.max_lag_ns as f64)
            )
        } else {
            format!("at max speed: {:.3} s (the trace spanned {:.3} s)", j.elapsed_ns as f64 / 1e9, d.trace_span_ns as f64 / 1e9)
        };
        let _ = writeln!(
            s,
            "  {} of {} I/Os issued, depth limit {} (reached {}), {}; {timing}",
            thousands(d.issued),
            thousands(d.trace_ios),
            d.depth,
            d.max_inflight,
            if d.direct { "O_DIRECT" } else { "BUFFERED" }
        );
        for n in &d.notes {
            let _ = writeln!(s, "  note: {n}");
        }
    }
    super::fio::job(s, j);
}

fn surface_job(s: &mut String, j: &JobResult) {
    let Some(d) = ReplayDetails::of(j) else { return super::fio::job(s, j) };
    let Some(sf) = d.surface.as_ref() else { return super::fio::job(s, j) };
    let _ = writeln!(
        s,
        "surface scan of {} ({}): {} zones x {} chunks of {}, one I/O in flight, {}",
        d.target,
        bytes(sf.device_bytes),
        sf.zones.len(),
        sf.chunks_per_zone,
        bytes(sf.chunk),
        if d.direct { "O_DIRECT" } else { "BUFFERED" }
    );
    if let Some(e) = &j.error {
        let _ = writeln!(s, "  ERROR: {e}");
    }
    summary(s, sf);
    let _ = writeln!(
        s,
        "  {:>5} {:>16} {:>12} {:>12} {:>12} {:>14} {:>12}",
        "zone", "offset", "MiB/s", "min MiB/s", "max MiB/s", "mean lat µs", "max lat µs"
    );
    for (i, z) in sf.zones.iter().enumerate() {
        let _ = writeln!(
            s,
            "  {:>5} {:>16} {:>12.1} {:>12.1} {:>12.1} {:>14} {:>12}",
            i,
            thousands(z.offset),
            z.mib_s,
            z.min_mib_s,
            z.max_mib_s,
            us(z.lat_mean_us * 1000.0),
            us(z.lat_max_us * 1000.0)
        );
    }
    s.push('\n');
}

/// Min, mean and max over the zones, and the five slowest.
fn summary(s: &mut String, sf: &SurfaceDetails) {
    let done: Vec<_> = sf.zones.iter().filter(|z| z.bytes > 0).collect();
    if done.is_empty() {
        let _ = writeln!(s, "  no zone completed");
        return;
    }
    let total: u64 = done.iter().map(|z| z.bytes).sum();
    let secs: f64 = done.iter().map(|z| z.bytes as f64 / 1048576.0 / z.mib_s.max(f64::MIN_POSITIVE)).sum();
    let min = done.iter().map(|z| z.mib_s).fold(f64::INFINITY, f64::min);
    let max = done.iter().map(|z| z.mib_s).fold(0.0, f64::max);
    let lat_max = done.iter().map(|z| z.lat_max_us).fold(0.0, f64::max);
    let _ = writeln!(
        s,
        "  throughput per zone: min {min:.1} MiB/s, mean {:.1} MiB/s (over all {}), max {max:.1} MiB/s; slowest chunk {} µs",
        total as f64 / 1048576.0 / secs.max(f64::MIN_POSITIVE),
        bytes(total),
        us(lat_max * 1000.0)
    );
    let mut slow: Vec<(usize, &crate::result::replay::ZoneStat)> = sf.zones.iter().enumerate().filter(|(_, z)| z.bytes > 0).collect();
    slow.sort_by(|a, b| a.1.mib_s.total_cmp(&b.1.mib_s));
    let list: Vec<String> = slow
        .iter()
        .take(5)
        .map(|(i, z)| format!("zone {i} at {} ({}): {:.1} MiB/s", bytes(z.offset), thousands(z.offset), z.mib_s))
        .collect();
    let _ = writeln!(s, "  slowest zones: {}", list.join("; "));
}

/// Throughput and latency against the byte offset, one line per run.
fn surface_charts(runs: &[&RunResult]) -> Vec<(String, String)> {
    let scans: Vec<(String, SurfaceDetails)> = runs
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.jobs.first().and_then(ReplayDetails::of).and_then(|d| d.surface).map(|sf| (format!("run {}", i + 1), sf)))
        .collect();
    let Some((_, first)) = scans.first() else { return Vec::new() };
    let gib = first.device_bytes as f64 >= (4u64 << 30) as f64;
    let x_label = move |x: f64| if gib { format!("{:.0} GiB", x / (1u64 << 30) as f64) } else { format!("{:.0} MiB", x / 1048576.0) };
    let line = |name: &str, sf: &SurfaceDetails, f: &dyn Fn(&crate::result::replay::ZoneStat) -> (f64, f64, f64)| Line {
        name: name.to_string(),
        points: sf
            .zones
            .iter()
            .filter(|z| z.bytes > 0)
            .map(|z| {
                let (mean, lo, hi) = f(z);
                Point { x: z.offset as f64, mean, ci_low: lo, ci_high: hi }
            })
            .collect(),
    };
    let tput: Vec<Line> = scans.iter().map(|(n, sf)| line(n, sf, &|z| (z.mib_s, z.min_mib_s, z.max_mib_s))).collect();
    let lat: Vec<Line> = scans.iter().map(|(n, sf)| line(n, sf, &|z| (z.lat_mean_us, z.lat_mean_us, z.lat_max_us))).collect();
    let x_max = first.device_bytes as f64;
    vec![
        (
            "surface-throughput.svg".into(),
            position_chart(
                "Read throughput across the device",
                "MiB/s",
                "position (byte offset)",
                x_max,
                &tput,
                "whiskers: slowest and fastest chunk of the zone",
                x_label,
            ),
        ),
        (
            "surface-latency.svg".into(),
            position_chart(
                "Chunk latency across the device",
                "µs",
                "position (byte offset)",
                x_max,
                &lat,
                "points: mean per zone; whiskers up to the slowest chunk",
                x_label,
            ),
        ),
    ]
}
