//! A block trace's analysis as SVG charts: where on the device the I/O
//! went over time, the I/O sizes, the queue depth over time and the
//! D2C (and Q2C) latency percentiles.

use super::chart::{count_chart, percentile_chart, xy_chart, Bar, BarGroup, Mark, XySeries};
use super::format::bytes;
use crate::measure::hist::PERCENTILES;
use crate::result::trace::analysis::TraceAnalysis;
use crate::result::trace::hist::{Bucket, Phase};

/// The charts as (file name, SVG text), in a fixed order.
pub fn charts(a: &TraceAnalysis) -> Vec<(String, String)> {
    vec![
        ("trace-lba.svg".into(), lba(a)),
        ("trace-sizes.svg".into(), sizes(a)),
        ("trace-depth.svg".into(), depth(a)),
        ("trace-latency.svg".into(), latency(a)),
    ]
}

fn secs(a: &TraceAnalysis, t_ns: u64) -> f64 {
    t_ns.saturating_sub(a.first_ns) as f64 / 1e9
}

/// Dispatch start against time, reads and writes apart.
pub fn lba(a: &TraceAnalysis) -> String {
    let top = a.lba.iter().map(|p| p.sector * 512).max().unwrap_or(0);
    let (div, unit) = if top >= 1 << 30 { (1u64 << 30, "GiB") } else { (1 << 20, "MiB") };
    let pts = |write: bool| -> Vec<(f64, f64)> {
        a.lba.iter().filter(|p| p.write == write).map(|p| (secs(a, p.t_ns), (p.sector * 512) as f64 / div as f64)).collect()
    };
    let series = [XySeries { name: "reads".into(), points: pts(false) }, XySeries { name: "writes".into(), points: pts(true) }];
    let title = if a.lba_stride > 1 {
        format!("Device offset over time (1 in {} dispatches)", a.lba_stride)
    } else {
        "Device offset over time".into()
    };
    xy_chart(&title, "time since the trace began (s)", &format!("offset ({unit})"), &series, Mark::Dots)
}

/// Dispatches per size bucket, reads and writes side by side.
pub fn sizes(a: &TraceAnalysis) -> String {
    let (r, w) = (a.read.sizes.buckets(), a.write.sizes.buckets());
    let mut lows: Vec<u64> = r.iter().chain(w.iter()).map(|b| b.low).collect();
    lows.sort_unstable();
    lows.dedup();
    let count = |v: &[Bucket], low: u64| v.iter().find(|b| b.low == low).map_or(0, |b| b.count) as f64;
    let bar = |series: &str, n: f64| Bar { series: series.into(), mean: n, ci_low: n, ci_high: n };
    let groups: Vec<BarGroup> = lows
        .iter()
        .map(|&low| {
            let high = r.iter().chain(w.iter()).find(|b| b.low == low).map_or(low, |b| b.high);
            BarGroup {
                label: format!("{} / to {}", bytes(low), bytes(high.saturating_add(1))),
                bars: vec![bar("reads", count(&r, low)), bar("writes", count(&w, low))],
            }
        })
        .collect();
    count_chart("I/O sizes (dispatched)", "dispatches", &groups)
}

/// Time-weighted mean and the maximum per bucket.
pub fn depth(a: &TraceAnalysis) -> String {
    let mean = a.depth.iter().map(|p| (secs(a, p.t_ns), p.mean)).collect();
    let max = a.depth.iter().map(|p| (secs(a, p.t_ns), p.max as f64)).collect();
    let step_ms = a.series_step_ns as f64 / 1e6;
    xy_chart(
        &format!("Queue depth ({step_ms} ms buckets)"),
        "time since the trace began (s)",
        "requests on the device",
        &[XySeries { name: "mean".into(), points: mean }, XySeries { name: "max".into(), points: max }],
        Mark::Line,
    )
}

/// D2C per request and per bio (btt's) and Q2C, latency against percentile.
pub fn latency(a: &TraceAnalysis) -> String {
    let line = |name: &str, p: &Phase| -> (String, Vec<(f64, f64)>) {
        let pts = if p.count == 0 { vec![] } else { PERCENTILES.iter().map(|q| (*q, p.percentile_ns(*q) as f64 / 1e3)).collect() };
        (name.to_string(), pts)
    };
    let ph = &a.phases;
    percentile_chart(
        "D2C and Q2C latency",
        &[line("D2C per request", &ph.d2c_request), line("D2C per bio (btt)", &ph.d2c), line("Q2C per bio (btt)", &ph.q2c)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::tests::check_xml;

    #[test]
    fn every_chart_is_svg_and_shows_the_data() {
        let a = crate::report::trace::tests::sample();
        let c = charts(&a);
        assert_eq!(
            c.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
            ["trace-lba.svg", "trace-sizes.svg", "trace-depth.svg", "trace-latency.svg"]
        );
        for (name, svg) in &c {
            check_xml(svg).unwrap_or_else(|e| panic!("{name}: {e}\n{svg}"));
        }
        assert_eq!(c[0].1.matches("<circle").count(), a.lba.len(), "a dot per sampled dispatch");
        assert!(c[0].1.contains(">offset (MiB)</text>"));
        // Sizes 4, 8 and 16 KiB: three groups, two bars each.
        assert_eq!(c[1].1.matches("class=\"bar\"").count(), 6);
        assert!(c[1].1.contains(">4.0 KiB</tspan>"));
        assert_eq!(c[2].1.matches("<polyline").count(), 2);
        assert_eq!(c[3].1.matches("<polyline").count(), 3);
        // An empty analysis still draws.
        for (name, svg) in charts(&TraceAnalysis::default()) {
            check_xml(&svg).unwrap_or_else(|e| panic!("{name}: {e}\n{svg}"));
        }
    }
}
