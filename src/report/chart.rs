//! Charts as self-contained SVG text, written by hand (no drawing library,
//! no fonts to find, no system libraries): grouped bars with confidence
//! intervals, latency against percentile, and means against a size.
//!
//! Every piece of text passes through `escape`, so names from job files
//! cannot break the markup. Each series gets a style in order of first
//! appearance: one of ten colours (Okabe–Ito's seven, readable with the
//! common colour-vision deficiencies, then wine, brown and dark grey), and
//! past ten series the colours come again with white hatching over the bars
//! (diagonal, cross, dots) or dashes along the lines, so forty series stay
//! apart before any style repeats.

use std::fmt::Write;

/// Series colours, in order.
pub const PALETTE: [&str; 10] =
    ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#882255", "#9C755F", "#555555"];

/// What tells series apart once the colours are used up: a hatching over
/// the bars (the id of a pattern in `HATCH_DEFS`) and a dash pattern along
/// the lines; the first of each is plain.
const HATCHES: [&str; 4] = ["", "hatch-diagonal", "hatch-cross", "hatch-dots"];
const DASHES: [&str; 4] = ["", "7 3", "2 3", "9 3 2 3"];

const HATCH_DEFS: &str = "<defs>\
<pattern id=\"hatch-diagonal\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">\
<rect x=\"0\" y=\"0\" width=\"2\" height=\"6\" fill=\"white\"/></pattern>\
<pattern id=\"hatch-cross\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">\
<path d=\"M0 3H6M3 0V6\" stroke=\"white\" stroke-width=\"1.5\"/></pattern>\
<pattern id=\"hatch-dots\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\">\
<rect x=\"1.5\" y=\"1.5\" width=\"2\" height=\"2\" fill=\"white\"/></pattern></defs>\n";

/// The look of the `i`-th series.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Style {
    colour: &'static str,
    /// Index into `HATCHES` and `DASHES`.
    variant: usize,
}

fn style(i: usize) -> Style {
    Style { colour: PALETTE[i % PALETTE.len()], variant: (i / PALETTE.len()) % HATCHES.len() }
}

/// A filled box `[x, y, width, height]` in a series' style: its colour, and
/// its hatching over it. `attrs` go on the coloured rectangle, `inner`
/// inside it (a tooltip).
fn filled_box(svg: &mut String, [x, y, w, h]: [f64; 4], st: Style, attrs: &str, inner: &str) {
    let _ = write!(svg, "<rect {attrs}x=\"{x:.2}\" y=\"{y:.3}\" width=\"{w:.2}\" height=\"{h:.3}\" fill=\"{}\">{inner}</rect>", st.colour);
    if st.variant > 0 {
        let _ = write!(
            svg,
            "<rect class=\"hatch\" x=\"{x:.2}\" y=\"{y:.3}\" width=\"{w:.2}\" height=\"{h:.3}\" fill=\"url(#{})\" pointer-events=\"none\"/>",
            HATCHES[st.variant]
        );
    }
}

/// The dash attribute of a line in a series' style ("" when solid).
fn dash(st: Style) -> String {
    if st.variant == 0 {
        String::new()
    } else {
        format!(" stroke-dasharray=\"{}\"", DASHES[st.variant])
    }
}

const FONT: &str = "font-family=\"sans-serif\"";

/// One bar: the mean of a series in a group, with its confidence interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    pub series: String,
    pub mean: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// Bars drawn side by side under one label.
#[derive(Clone, Debug, PartialEq)]
pub struct BarGroup {
    pub label: String,
    pub bars: Vec<Bar>,
}

/// Text made safe for XML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // Control characters are not allowed in XML 1.0.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// About five evenly spaced ticks from 0 with a step of 1, 2, 2.5 or 5
/// times a power of ten; the last tick is at or above `max`.
pub fn nice_ticks(max: f64) -> Vec<f64> {
    let max = if max.is_finite() && max > 0.0 { max } else { 1.0 };
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0].iter().map(|m| m * mag).find(|s| *s >= raw * (1.0 - 1e-12)).unwrap_or(10.0 * mag);
    let n = ((max / step) - 1e-9).ceil().max(1.0) as usize;
    (0..=n).map(|i| i as f64 * step).collect()
}

/// The class attribute of the x-axis tick labels tests look for.
const XTICK: &str = " class=\"xtick\"";

/// A vertical grid line at `xp` and its label under the plot; `class` is
/// put into the label's tag as is (empty, or [`XTICK`]).
fn x_tick(svg: &mut String, xp: f64, plot_top: f64, plot_bottom: f64, class: &str, label: &str) {
    let _ = writeln!(
        svg,
        "<line class=\"grid\" x1=\"{xp:.1}\" y1=\"{plot_top:.1}\" x2=\"{xp:.1}\" y2=\"{plot_bottom:.1}\" stroke=\"#dddddd\"/>\
         <text{class} x=\"{xp:.1}\" y=\"{:.1}\" {FONT} font-size=\"11\" text-anchor=\"middle\">{label}</text>",
        plot_bottom + 16.0
    );
}

/// The y axis and the x axis along the bottom of the plot area.
fn axes(svg: &mut String, left: f64, plot_top: f64, plot_bottom: f64, plot_w: f64) {
    let _ = writeln!(
        svg,
        "<line class=\"axis\" x1=\"{left:.1}\" y1=\"{plot_top:.1}\" x2=\"{left:.1}\" y2=\"{plot_bottom:.1}\" stroke=\"black\"/>\
         <line class=\"axis\" x1=\"{left:.1}\" y1=\"{plot_bottom:.1}\" x2=\"{:.1}\" y2=\"{plot_bottom:.1}\" stroke=\"black\"/>",
        left + plot_w
    );
}

/// The y axis's title, turned along it, and the x axis's under the plot.
fn axis_titles(svg: &mut String, (left, plot_top, plot_bottom, plot_w): (f64, f64, f64, f64), y: &str, x: Option<&str>) {
    let mid = plot_top + (plot_bottom - plot_top) / 2.0;
    let _ = write!(
        svg,
        "<text class=\"unit\" x=\"18\" y=\"{mid:.1}\" {FONT} font-size=\"12\" text-anchor=\"middle\" transform=\"rotate(-90 18 {mid:.1})\">{}</text>",
        escape(y)
    );
    if let Some(x) = x {
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"12\" text-anchor=\"middle\">{}</text>",
            left + plot_w / 2.0,
            plot_bottom + 36.0,
            escape(x)
        );
    }
    svg.push('\n');
}

/// A tick label with as many decimals as the step needs.
fn tick_label(v: f64, step: f64) -> String {
    let decimals = (0..10)
        .find(|d| {
            let scaled = step * 10f64.powi(*d);
            (scaled - scaled.round()).abs() < 1e-6 * scaled.max(1.0)
        })
        .unwrap_or(10) as usize;
    format!("{v:.decimals$}")
}

/// A value for a tooltip: four significant digits or so.
fn short(v: f64) -> String {
    let a = v.abs();
    if !v.is_finite() {
        "n/a".into()
    } else if a >= 1000.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

fn finite_or(v: f64, d: f64) -> f64 {
    if v.is_finite() {
        v
    } else {
        d
    }
}

/// Series names in order of first appearance.
fn series_order<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

/// Legend entries in one row (wrapping) starting at (x, y), each with a
/// box (bars) or a line (`lines`) in its series' style; returns the y below
/// the legend.
fn legend(svg: &mut String, names: &[&str], x0: f64, y0: f64, width: f64, lines: bool) -> f64 {
    let (mut x, mut y) = (x0, y0);
    for (i, name) in names.iter().enumerate() {
        let w = 30.0 + 7.0 * name.chars().count() as f64;
        if x > x0 && x + w > x0 + width {
            x = x0;
            y += 18.0;
        }
        let st = style(i);
        svg.push_str("<g class=\"legend\">");
        if lines {
            let _ = write!(
                svg,
                "<line x1=\"{x:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{}\" stroke-width=\"2\"{}/>",
                x + 12.0,
                st.colour,
                dash(st)
            );
        } else {
            filled_box(svg, [x, y - 6.0, 12.0, 12.0], st, "", "");
        }
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{y:.1}\" {FONT} font-size=\"12\" dominant-baseline=\"middle\">{}</text></g>",
            x + 16.0,
            escape(name)
        );
        x += w;
    }
    y + 18.0
}

fn open(svg: &mut String, width: f64, height: f64, title: &str) {
    let _ = writeln!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\">"
    );
    let _ = writeln!(svg, "<title>{}</title>", escape(title));
    let _ = writeln!(svg, "<rect x=\"0\" y=\"0\" width=\"{width:.0}\" height=\"{height:.0}\" fill=\"white\"/>");
    let _ = writeln!(
        svg,
        "<text class=\"title\" x=\"{:.1}\" y=\"22\" {FONT} font-size=\"16\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>",
        width / 2.0,
        escape(title)
    );
}

/// Grouped bars with 95% confidence intervals as error bars, on a linear
/// axis from 0 labelled with `unit`. Negative and non-finite values are
/// drawn as 0.
pub fn bar_chart(title: &str, unit: &str, groups: &[BarGroup]) -> String {
    bars(title, unit, groups, Some("error bars: 95% confidence interval of the mean"))
}

/// Grouped bars of counts (a histogram per series): as `bar_chart`, with
/// no intervals and so no note about them.
pub fn count_chart(title: &str, unit: &str, groups: &[BarGroup]) -> String {
    bars(title, unit, groups, None)
}

fn bars(title: &str, unit: &str, groups: &[BarGroup], note: Option<&str>) -> String {
    let series = series_order(groups.iter().flat_map(|g| g.bars.iter().map(|b| b.series.as_str())));
    let per_group = groups.iter().map(|g| g.bars.len()).max().unwrap_or(0).max(1);
    let bar_w = 24.0;
    // Wide enough for the longest line of a group label (~7 px a character at 12 px).
    let label_w = groups.iter().flat_map(|g| g.label.split(" / ")).map(|l| l.chars().count() as f64 * 7.0 + 12.0).fold(0.0, f64::max);
    let group_w = (per_group as f64 * bar_w + 24.0).max(label_w);
    let (left, right) = (80.0, 20.0);
    let plot_w = (groups.len() as f64 * group_w).max(360.0);
    let width = left + plot_w + right;

    let mut svg = String::new();
    // Legend height first: it decides where the plot starts.
    let mut legend_svg = String::new();
    let plot_top = legend(&mut legend_svg, &series, left, 44.0, plot_w, false) + 8.0;
    let plot_h = 240.0;
    let plot_bottom = plot_top + plot_h;
    let label_lines = groups.iter().map(|g| g.label.split(" / ").count()).max().unwrap_or(1) as f64;
    let height = plot_bottom + 34.0 + 15.0 * label_lines;
    open(&mut svg, width, height, title);
    if series.len() > PALETTE.len() {
        svg.push_str(HATCH_DEFS);
    }
    svg.push_str(&legend_svg);

    let top_value =
        groups.iter().flat_map(|g| g.bars.iter()).map(|b| finite_or(b.mean, 0.0).max(finite_or(b.ci_high, 0.0))).fold(0.0, f64::max);
    let axis_max = value_grid(&mut svg, top_value, left, plot_w, plot_bottom, plot_h);
    let y_of = |v: f64| plot_bottom - finite_or(v, 0.0).clamp(0.0, axis_max) / axis_max * plot_h;
    axes(&mut svg, left, plot_top, plot_bottom, plot_w);
    axis_titles(&mut svg, (left, plot_top, plot_bottom, plot_w), unit, None);

    // Bars, centred in equal slots.
    let slot = plot_w / groups.len().max(1) as f64;
    for (gi, g) in groups.iter().enumerate() {
        let cx = left + slot * (gi as f64 + 0.5);
        let x0 = cx - g.bars.len() as f64 * bar_w / 2.0;
        let _ = writeln!(svg, "<g class=\"group\">");
        for (bi, b) in g.bars.iter().enumerate() {
            let st = style(series.iter().position(|s| *s == b.series).unwrap_or(0));
            let x = x0 + bi as f64 * bar_w + 2.0;
            let w = bar_w - 4.0;
            let y = y_of(b.mean);
            let tip = format!(
                "<title>{}: {} {} [{}, {}]</title>",
                escape(&format!("{} / {}", g.label, b.series)),
                short(b.mean),
                escape(unit),
                short(b.ci_low),
                short(b.ci_high)
            );
            filled_box(&mut svg, [x, y, w, plot_bottom - y], st, "class=\"bar\" ", &tip);
            svg.push('\n');
            if b.ci_high.is_finite() && b.ci_low.is_finite() && b.ci_high > b.ci_low {
                let (ylo, yhi) = (y_of(b.ci_low), y_of(b.ci_high));
                let ex = x + w / 2.0;
                let _ = writeln!(
                    svg,
                    "<g class=\"errorbar\" stroke=\"#333333\"><line x1=\"{ex:.2}\" y1=\"{ylo:.2}\" x2=\"{ex:.2}\" y2=\"{yhi:.2}\"/>\
                     <line x1=\"{:.2}\" y1=\"{ylo:.2}\" x2=\"{:.2}\" y2=\"{ylo:.2}\"/>\
                     <line x1=\"{:.2}\" y1=\"{yhi:.2}\" x2=\"{:.2}\" y2=\"{yhi:.2}\"/></g>",
                    ex - 4.0,
                    ex + 4.0,
                    ex - 4.0,
                    ex + 4.0
                );
            }
        }
        // Long "target / workload" labels break at " / " so neighbours do not overlap.
        let lines: String = g
            .label
            .split(" / ")
            .enumerate()
            .map(|(i, part)| format!("<tspan x=\"{cx:.1}\" dy=\"{}\">{}</tspan>", if i == 0 { "0" } else { "1.2em" }, escape(part)))
            .collect();
        let _ = writeln!(
            svg,
            "<text class=\"label\" x=\"{cx:.1}\" y=\"{:.1}\" {FONT} font-size=\"12\" text-anchor=\"middle\">{lines}</text></g>",
            plot_bottom + 18.0
        );
    }
    if let Some(note) = note {
        let _ = writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"10\" fill=\"#555555\" text-anchor=\"end\">{}</text>",
            left + plot_w,
            height - 8.0,
            escape(note)
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// Horizontal position of a percentile: `-log10(1 - p/100)`, so 90, 99,
/// 99.9 and 99.99 are evenly spaced (1, 2, 3, 4) and 50 sits at 0.3.
pub fn percentile_position(p: f64) -> f64 {
    -(1.0 - p / 100.0).log10()
}

/// Percentiles that get a tick when they fall inside the data's range.
const PCT_TICKS: &[f64] = &[0.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 99.9999];

/// Latency (µs, log scale) against percentile (the tail stretched, see
/// `percentile_position`), one line per series. Points with a percentile
/// outside [0, 100) or a latency that is not positive are left out.
pub fn percentile_chart(title: &str, series: &[(String, Vec<(f64, f64)>)]) -> String {
    let clean: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .map(|(name, pts)| {
            let mut v: Vec<(f64, f64)> =
                pts.iter().copied().filter(|(p, us)| p.is_finite() && *p >= 0.0 && *p < 100.0 && us.is_finite() && *us > 0.0).collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            (name.as_str(), v)
        })
        .collect();
    let names: Vec<&str> = series_order(clean.iter().map(|(n, _)| *n));

    let (mut svg, legend_svg, LineFrame { left, plot_w, plot_top, plot_h, plot_bottom, height: _ }) = line_frame(title, &names);
    svg.push_str(&legend_svg);

    let all = || clean.iter().flat_map(|(_, v)| v.iter());
    let (mut xlo, mut xhi) = all().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (p, _)| {
        let x = percentile_position(*p);
        (lo.min(x), hi.max(x))
    });
    if !xlo.is_finite() {
        (xlo, xhi) = (percentile_position(50.0), percentile_position(99.99));
    }
    if xhi - xlo < 1e-9 {
        xlo -= 0.5;
        xhi += 0.5;
    }
    let (vmin, vmax) = all().fold((f64::INFINITY, 0.0f64), |(lo, hi), (_, us)| (lo.min(*us), hi.max(*us)));
    let (mut dlo, mut dhi) = if vmin.is_finite() { (vmin.log10().floor(), vmax.log10().ceil()) } else { (0.0, 3.0) };
    if dhi <= dlo {
        dhi = dlo + 1.0;
    }
    dlo = dlo.max(-9.0);
    dhi = dhi.min(15.0).max(dlo + 1.0);
    let x_of = |p: f64| left + (percentile_position(p) - xlo) / (xhi - xlo) * plot_w;
    let y_of = |us: f64| plot_bottom - (us.log10() - dlo) / (dhi - dlo) * plot_h;

    // Decades on y.
    let mut k = dlo;
    while k <= dhi + 1e-9 {
        let v = 10f64.powf(k);
        let y = y_of(v);
        let label = if k < 0.0 { format!("{v:.prec$}", prec = (-k) as usize) } else { format!("{v:.0}") };
        let _ = writeln!(
            svg,
            "<line class=\"grid\" x1=\"{left:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#dddddd\"/>\
             <text x=\"{:.1}\" y=\"{y:.1}\" {FONT} font-size=\"11\" text-anchor=\"end\" dominant-baseline=\"middle\">{label}</text>",
            left + plot_w,
            left - 6.0
        );
        k += 1.0;
    }
    // Percentiles on x.
    for p in PCT_TICKS {
        let x = percentile_position(*p);
        if x < xlo - 1e-9 || x > xhi + 1e-9 {
            continue;
        }
        x_tick(&mut svg, x_of(*p), plot_top, plot_bottom, "", &crate::measure::hist::format_pct(*p));
    }
    axes(&mut svg, left, plot_top, plot_bottom, plot_w);
    axis_titles(&mut svg, (left, plot_top, plot_bottom, plot_w), "latency (µs, log scale)", Some("percentile"));

    for (name, pts) in &clean {
        if pts.is_empty() {
            continue;
        }
        let st = style(names.iter().position(|n| n == name).unwrap_or(0));
        let colour = st.colour;
        let points: Vec<String> = pts.iter().map(|(p, us)| format!("{:.2},{:.2}", x_of(*p), y_of(*us))).collect();
        let _ = writeln!(
            svg,
            "<g class=\"series\"><polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{} points=\"{}\"/>",
            dash(st),
            points.join(" ")
        );
        for (p, us) in pts {
            let _ = writeln!(
                svg,
                "<circle cx=\"{:.2}\" cy=\"{:.2}\" r=\"3\" fill=\"{colour}\"><title>{}: p{} = {} µs</title></circle>",
                x_of(*p),
                y_of(*us),
                escape(name),
                crate::measure::hist::format_pct(*p),
                short(*us)
            );
        }
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    svg
}

/// A mean at a size, with its 95% confidence interval.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub x: f64,
    pub mean: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

/// One line of `size_chart`.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<Point>,
}

/// Labels closer than this (px) to the previous one are left out.
const MIN_LABEL_GAP: f64 = 30.0;

/// Means against a size, one line per series, as seed 003 draws throughput
/// against block size: x on a log2 axis (one step per doubling) with a tick
/// at every size in the data (`x_label` names it; labels that would
/// overlap are skipped), y linear from 0 labelled `unit`, whiskers for the
/// 95% intervals. Points whose size is not positive and finite, or whose
/// mean is not finite, are left out; negative means are drawn as 0.
pub fn size_chart(title: &str, unit: &str, x_name: &str, lines: &[Line], x_label: impl Fn(f64) -> String) -> String {
    let clean: Vec<(&str, Vec<&Point>)> = lines
        .iter()
        .map(|l| {
            let mut v: Vec<&Point> = l.points.iter().filter(|p| p.x.is_finite() && p.x > 0.0 && p.mean.is_finite()).collect();
            v.sort_by(|a, b| a.x.total_cmp(&b.x));
            (l.name.as_str(), v)
        })
        .collect();
    let names: Vec<&str> = series_order(clean.iter().map(|(n, _)| *n));

    let (mut svg, legend_svg, LineFrame { left, plot_w, plot_top, plot_h, plot_bottom, height }) = line_frame(title, &names);
    if names.len() > PALETTE.len() {
        svg.push_str(HATCH_DEFS);
    }
    svg.push_str(&legend_svg);

    let mut xs: Vec<f64> = clean.iter().flat_map(|(_, v)| v.iter().map(|p| p.x)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let (lo, hi) = match (xs.first(), xs.last()) {
        (Some(a), Some(b)) if b > a => (a.log2(), b.log2()),
        (Some(a), _) => (a.log2() - 1.0, a.log2() + 1.0),
        _ => (0.0, 1.0),
    };
    // Half a step of margin each side, so the end points clear the axes.
    let (lo, hi) = (lo - 0.5, hi + 0.5);
    let x_of = |x: f64| left + (x.log2() - lo) / (hi - lo) * plot_w;
    let top_value = clean.iter().flat_map(|(_, v)| v.iter()).map(|p| p.mean.max(finite_or(p.ci_high, 0.0))).fold(0.0, f64::max);
    let axis_max = value_grid(&mut svg, top_value, left, plot_w, plot_bottom, plot_h);
    let y_of = |v: f64| plot_bottom - finite_or(v, 0.0).clamp(0.0, axis_max) / axis_max * plot_h;
    let mut last_label = f64::NEG_INFINITY;
    for x in &xs {
        let xp = x_of(*x);
        let _ = write!(
            svg,
            "<line class=\"grid\" x1=\"{xp:.1}\" y1=\"{plot_top:.1}\" x2=\"{xp:.1}\" y2=\"{plot_bottom:.1}\" stroke=\"#dddddd\"/>"
        );
        if xp - last_label >= MIN_LABEL_GAP {
            last_label = xp;
            let _ = write!(
                svg,
                "<text class=\"xtick\" x=\"{xp:.1}\" y=\"{:.1}\" {FONT} font-size=\"11\" text-anchor=\"middle\">{}</text>",
                plot_bottom + 16.0,
                escape(&x_label(*x))
            );
        }
        svg.push('\n');
    }
    axes(&mut svg, left, plot_top, plot_bottom, plot_w);
    axis_titles(&mut svg, (left, plot_top, plot_bottom, plot_w), unit, Some(&format!("{x_name} (log2 scale)")));

    for (name, pts) in &clean {
        if pts.is_empty() {
            continue;
        }
        let st = style(names.iter().position(|n| n == name).unwrap_or(0));
        let colour = st.colour;
        let coords: Vec<String> = pts.iter().map(|p| format!("{:.2},{:.2}", x_of(p.x), y_of(p.mean))).collect();
        let _ = writeln!(
            svg,
            "<g class=\"series\"><polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{} points=\"{}\"/>",
            dash(st),
            coords.join(" ")
        );
        for p in pts {
            let (cx, cy) = (x_of(p.x), y_of(p.mean));
            if p.ci_high.is_finite() && p.ci_low.is_finite() && p.ci_high > p.ci_low {
                let _ = write!(
                    svg,
                    "<line class=\"errorbar\" x1=\"{cx:.2}\" y1=\"{:.2}\" x2=\"{cx:.2}\" y2=\"{:.2}\" stroke=\"{colour}\"/>",
                    y_of(p.ci_low),
                    y_of(p.ci_high)
                );
            }
            let _ = writeln!(
                svg,
                "<circle cx=\"{cx:.2}\" cy=\"{cy:.2}\" r=\"3\" fill=\"{colour}\"><title>{}: {} {} at {} [{}, {}]</title></circle>",
                escape(name),
                short(p.mean),
                escape(unit),
                escape(&x_label(p.x)),
                short(p.ci_low),
                short(p.ci_high)
            );
        }
        svg.push_str("</g>\n");
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"10\" fill=\"#555555\" text-anchor=\"end\">whiskers: 95% confidence interval of the mean</text>",
        left + plot_w,
        height - 4.0
    );
    svg.push_str("</svg>\n");
    svg
}

/// Values against a position on a linear axis from 0 to `x_max` (a surface
/// scan's throughput against the byte offset): one polyline per series, a
/// whisker per point from `ci_low` to `ci_high` (what those are, `note`
/// says under the plot), y linear from 0 labelled `unit`.
pub fn position_chart(
    title: &str,
    unit: &str,
    x_name: &str,
    x_max: f64,
    lines: &[Line],
    note: &str,
    x_label: impl Fn(f64) -> String,
) -> String {
    let names: Vec<&str> = series_order(lines.iter().map(|l| l.name.as_str()));
    let (mut svg, legend_svg, LineFrame { left, plot_w, plot_top, plot_h, plot_bottom, height }) = line_frame(title, &names);
    svg.push_str(&legend_svg);
    let x_max = if x_max.is_finite() && x_max > 0.0 { x_max } else { 1.0 };
    let x_of = |x: f64| left + x.clamp(0.0, x_max) / x_max * plot_w;
    let finite = |p: &&Point| p.x.is_finite() && p.mean.is_finite();
    let top_value =
        lines.iter().flat_map(|l| l.points.iter().filter(finite)).map(|p| p.mean.max(finite_or(p.ci_high, 0.0))).fold(0.0, f64::max);
    let axis_max = value_grid(&mut svg, top_value, left, plot_w, plot_bottom, plot_h);
    let y_of = |v: f64| plot_bottom - finite_or(v, 0.0).clamp(0.0, axis_max) / axis_max * plot_h;
    for t in nice_ticks(x_max).into_iter().filter(|t| *t <= x_max * 1.0001) {
        x_tick(&mut svg, x_of(t), plot_top, plot_bottom, XTICK, &escape(&x_label(t)));
    }
    axes(&mut svg, left, plot_top, plot_bottom, plot_w);
    axis_titles(&mut svg, (left, plot_top, plot_bottom, plot_w), unit, Some(x_name));
    for l in lines {
        let pts: Vec<&Point> = l.points.iter().filter(finite).collect();
        if pts.is_empty() {
            continue;
        }
        let st = style(names.iter().position(|n| *n == l.name).unwrap_or(0));
        let colour = st.colour;
        let coords: Vec<String> = pts.iter().map(|p| format!("{:.2},{:.2}", x_of(p.x), y_of(p.mean))).collect();
        let _ = writeln!(
            svg,
            "<g class=\"series\"><polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\"{} points=\"{}\"/>",
            dash(st),
            coords.join(" ")
        );
        for p in pts {
            let cx = x_of(p.x);
            if p.ci_high.is_finite() && p.ci_low.is_finite() && p.ci_high > p.ci_low {
                let _ = write!(
                    svg,
                    "<line class=\"errorbar\" x1=\"{cx:.2}\" y1=\"{:.2}\" x2=\"{cx:.2}\" y2=\"{:.2}\" stroke=\"{colour}\" stroke-opacity=\"0.5\"/>",
                    y_of(p.ci_low),
                    y_of(p.ci_high)
                );
            }
            let _ = writeln!(
                svg,
                "<circle cx=\"{cx:.2}\" cy=\"{:.2}\" r=\"2\" fill=\"{colour}\"><title>{}: {} {} at {}</title></circle>",
                y_of(p.mean),
                escape(&l.name),
                short(p.mean),
                escape(unit),
                escape(&x_label(p.x))
            );
        }
        svg.push_str("</g>\n");
    }
    let _ = writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"10\" fill=\"#555555\" text-anchor=\"end\">{}</text>",
        left + plot_w,
        height - 4.0,
        escape(note)
    );
    svg.push_str("</svg>\n");
    svg
}

/// How `xy_chart` draws a series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// A dot per point (a scatter plot).
    Dots,
    /// A line through the points in x order.
    Line,
}

/// One series of `xy_chart`.
#[derive(Clone, Debug, PartialEq)]
pub struct XySeries {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// Values against a linear x from 0 (time, position), y linear from 0
/// labelled `y_name`; one style per series. Points that are not finite or
/// are negative are left out.
pub fn xy_chart(title: &str, x_name: &str, y_name: &str, series: &[XySeries], mark: Mark) -> String {
    let clean: Vec<(&str, Vec<(f64, f64)>)> = series
        .iter()
        .map(|s| {
            let mut v: Vec<(f64, f64)> =
                s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite() && *x >= 0.0 && *y >= 0.0).collect();
            v.sort_by(|a, b| a.0.total_cmp(&b.0));
            (s.name.as_str(), v)
        })
        .collect();
    let names: Vec<&str> = series_order(clean.iter().map(|(n, _)| *n));
    let (mut svg, legend_svg, LineFrame { left, plot_w, plot_top, plot_h, plot_bottom, height: _ }) = line_frame(title, &names);
    svg.push_str(&legend_svg);

    let all = || clean.iter().flat_map(|(_, v)| v.iter());
    let top_y = all().map(|p| p.1).fold(0.0, f64::max);
    let axis_y = value_grid(&mut svg, top_y, left, plot_w, plot_bottom, plot_h);
    let xt = nice_ticks(all().map(|p| p.0).fold(0.0, f64::max));
    let axis_x = *xt.last().expect("at least two ticks");
    let x_step = xt.get(1).copied().unwrap_or(axis_x);
    let x_of = |x: f64| left + x.clamp(0.0, axis_x) / axis_x * plot_w;
    let y_of = |y: f64| plot_bottom - y.clamp(0.0, axis_y) / axis_y * plot_h;
    for t in &xt {
        x_tick(&mut svg, x_of(*t), plot_top, plot_bottom, XTICK, &tick_label(*t, x_step));
    }
    axes(&mut svg, left, plot_top, plot_bottom, plot_w);
    axis_titles(&mut svg, (left, plot_top, plot_bottom, plot_w), y_name, Some(x_name));
    for (name, pts) in &clean {
        if pts.is_empty() {
            continue;
        }
        let st = style(names.iter().position(|n| n == name).unwrap_or(0));
        let colour = st.colour;
        let _ = write!(svg, "<g class=\"series\"><title>{}</title>", escape(name));
        match mark {
            Mark::Line => {
                let coords: Vec<String> = pts.iter().map(|(x, y)| format!("{:.2},{:.2}", x_of(*x), y_of(*y))).collect();
                let _ = write!(
                    svg,
                    "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.5\"{} points=\"{}\"/>",
                    dash(st),
                    coords.join(" ")
                );
            }
            Mark::Dots => {
                for (x, y) in pts {
                    let _ = write!(svg, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"1.6\" fill=\"{colour}\"/>", x_of(*x), y_of(*y));
                }
            }
        }
        svg.push_str("</g>\n");
    }
    svg.push_str("</svg>\n");
    svg
}

/// Where a line chart's plot sits: below its legend, 480 wide and 260 high.
struct LineFrame {
    left: f64,
    plot_w: f64,
    plot_top: f64,
    plot_h: f64,
    plot_bottom: f64,
    height: f64,
}

/// A line chart's opened SVG, its legend (for the caller to place after
/// any definitions) and its frame.
fn line_frame(title: &str, names: &[&str]) -> (String, String, LineFrame) {
    let (left, right) = (80.0, 24.0);
    let plot_w = 480.0;
    let width = left + plot_w + right;
    let mut legend_svg = String::new();
    let plot_top = legend(&mut legend_svg, names, left, 44.0, plot_w, true) + 8.0;
    let plot_h = 260.0;
    let plot_bottom = plot_top + plot_h;
    let height = plot_bottom + 52.0;
    let mut svg = String::new();
    open(&mut svg, width, height, title);
    (svg, legend_svg, LineFrame { left, plot_w, plot_top, plot_h, plot_bottom, height })
}

/// The value axis: round ticks up to at least `top_value`, each with its
/// grid line and label; returns the axis maximum.
fn value_grid(svg: &mut String, top_value: f64, left: f64, plot_w: f64, plot_bottom: f64, plot_h: f64) -> f64 {
    let ticks = nice_ticks(top_value);
    let axis_max = *ticks.last().expect("at least two ticks");
    let step = ticks.get(1).copied().unwrap_or(axis_max);
    let y_of = |v: f64| plot_bottom - finite_or(v, 0.0).clamp(0.0, axis_max) / axis_max * plot_h;
    for t in &ticks {
        let y = y_of(*t);
        let _ = writeln!(
            svg,
            "<line class=\"grid\" x1=\"{left:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"#dddddd\"/>\
             <text x=\"{:.1}\" y=\"{y:.1}\" {FONT} font-size=\"11\" text-anchor=\"end\" dominant-baseline=\"middle\">{}</text>",
            left + plot_w,
            left - 6.0,
            tick_label(*t, step)
        );
    }
    axis_max
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small well-formedness check: one root `<svg>`, every tag closed in
    /// order, attributes quoted, and every `&` the start of an entity.
    pub(crate) fn check_xml(s: &str) -> Result<(), String> {
        let s = s.trim_end();
        if !s.starts_with("<svg") || !s.ends_with("</svg>") {
            return Err("not an <svg> document".into());
        }
        let check_amp = |t: &str| -> Result<(), String> {
            for (i, _) in t.match_indices('&') {
                let rest = &t[i..];
                if !["&amp;", "&lt;", "&gt;", "&quot;", "&apos;", "&#"].iter().any(|e| rest.starts_with(e)) {
                    return Err(format!("bare & in {t:?}"));
                }
            }
            Ok(())
        };
        let mut stack: Vec<String> = Vec::new();
        let mut rest = s;
        let mut roots = 0;
        while let Some(open) = rest.find('<') {
            let text = &rest[..open];
            if text.contains('>') {
                return Err(format!("bare > in text {text:?}"));
            }
            check_amp(text)?;
            let close = rest[open..].find('>').ok_or("unterminated tag")? + open;
            let tag = &rest[open + 1..close];
            if tag.contains('<') {
                return Err(format!("< inside tag {tag:?}"));
            }
            check_amp(tag)?;
            if tag.matches('"').count() % 2 != 0 {
                return Err(format!("unbalanced quotes in {tag:?}"));
            }
            if let Some(name) = tag.strip_prefix('/') {
                let top = stack.pop().ok_or(format!("</{name}> closes nothing"))?;
                if top != name.trim() {
                    return Err(format!("</{name}> closes <{top}>"));
                }
            } else {
                let name: String = tag.chars().take_while(|c| !c.is_whitespace() && *c != '/').collect();
                if name.is_empty() {
                    return Err(format!("empty tag {tag:?}"));
                }
                if stack.is_empty() {
                    roots += 1;
                }
                if !tag.ends_with('/') {
                    stack.push(name);
                }
            }
            rest = &rest[close + 1..];
        }
        if !rest.trim().is_empty() {
            return Err("text after the root".into());
        }
        if !stack.is_empty() {
            return Err(format!("unclosed: {stack:?}"));
        }
        if roots != 1 {
            return Err(format!("{roots} root elements"));
        }
        Ok(())
    }

    #[test]
    fn checker_catches_mistakes() {
        assert!(check_xml("<svg><g></g></svg>").is_ok());
        assert!(check_xml("<svg><g></svg>").is_err());
        assert!(check_xml("<svg><g></a></g></svg>").is_err());
        assert!(check_xml("<svg><text>a & b</text></svg>").is_err());
        assert!(check_xml("<svg><text>a &amp; b</text></svg>").is_ok());
        assert!(check_xml("<svg><rect x=\"1/></svg>").is_err());
        assert!(check_xml("<svg></svg><svg></svg>").is_err());
    }

    /// The value of attribute `name` in an element's text.
    fn attr(el: &str, name: &str) -> f64 {
        let key = format!(" {name}=\"");
        let i = el.find(&key).unwrap_or_else(|| panic!("no {name} in {el}")) + key.len();
        el[i..].split('"').next().unwrap().parse().unwrap()
    }

    fn elements<'a>(svg: &'a str, start: &str) -> Vec<&'a str> {
        svg.match_indices(start).map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap()]).collect()
    }

    fn sample() -> Vec<BarGroup> {
        let bar = |s: &str, m: f64, h: f64| Bar { series: s.into(), mean: m, ci_low: m - h, ci_high: m + h };
        vec![
            BarGroup { label: "4k randread".into(), bars: vec![bar("ext4", 100.0, 5.0), bar("xfs", 150.0, 10.0)] },
            BarGroup { label: "1m write".into(), bars: vec![bar("ext4", 50.0, 2.0), bar("xfs", 25.0, 0.0)] },
        ]
    }

    #[test]
    fn bar_chart_is_well_formed_and_proportional() {
        let svg = bar_chart("IOPS", "IOPS", &sample());
        check_xml(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        let bars = elements(&svg, "<rect class=\"bar\"");
        assert_eq!(bars.len(), 4);
        let h: Vec<f64> = bars.iter().map(|b| attr(b, "height")).collect();
        let means = [100.0, 150.0, 50.0, 25.0];
        for (hi, m) in h.iter().zip(means) {
            assert!((hi / h[0] - m / 100.0).abs() < 1e-3, "heights {h:?} not proportional to {means:?}");
        }
        // All bars stand on the same baseline.
        let base: Vec<f64> = bars.iter().map(|b| attr(b, "y") + attr(b, "height")).collect();
        assert!(base.iter().all(|y| (y - base[0]).abs() < 1e-2), "{base:?}");
        // Error bars for the three bars with a non-empty interval.
        assert_eq!(svg.matches("class=\"errorbar\"").count(), 3);
        // Colours per series: ext4 bars share one, xfs bars another.
        let fill = |b: &str| b.split("fill=\"").nth(1).unwrap().split('"').next().unwrap().to_string();
        assert_eq!(fill(bars[0]), fill(bars[2]));
        assert_eq!(fill(bars[1]), fill(bars[3]));
        assert_ne!(fill(bars[0]), fill(bars[1]));
        assert_eq!(svg.matches("class=\"legend\"").count(), 2);
        assert!(svg.contains(">4k randread</tspan>") && svg.contains(">1m write</tspan>"));
    }

    #[test]
    fn many_series_stay_apart() {
        let names: Vec<String> = (0..25).map(|i| format!("s{i}")).collect();
        let g = [BarGroup {
            label: "g".into(),
            bars: names.iter().map(|n| Bar { series: n.clone(), mean: 1.0, ci_low: 1.0, ci_high: 1.0 }).collect(),
        }];
        let svg = bar_chart("many", "u", &g);
        check_xml(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        let styles: Vec<Style> = (0..names.len()).map(style).collect();
        for (i, a) in styles.iter().enumerate() {
            assert!(styles[..i].iter().all(|b| b != a), "series {i} looks like an earlier one");
        }
        assert_eq!(PALETTE.iter().collect::<std::collections::HashSet<_>>().len(), 10);
        // Bars 10..20 hatched diagonally, 20.. crossed; defined once.
        assert_eq!(svg.matches("fill=\"url(#hatch-diagonal)\"").count(), 2 * 10, "bars and their legend boxes");
        assert_eq!(svg.matches("fill=\"url(#hatch-cross)\"").count(), 2 * 5);
        assert_eq!(svg.matches("<pattern id=").count(), 3);
        assert!(!bar_chart("few", "u", &sample()).contains("<defs>"));
        // Lines past the palette are dashed.
        let series: Vec<(String, Vec<(f64, f64)>)> = names.iter().map(|n| (n.clone(), vec![(50.0, 1.0), (99.0, 2.0)])).collect();
        let p = percentile_chart("lat", &series);
        check_xml(&p).unwrap();
        assert_eq!(p.matches("<polyline fill=\"none\" stroke=\"#0072B2\" stroke-width=\"2\" points").count(), 1);
        assert_eq!(p.matches("stroke-dasharray=\"7 3\"").count(), 2 * 10, "line and legend of series 10..20");
    }

    #[test]
    fn error_bar_spans_the_interval() {
        let g = [BarGroup { label: "g".into(), bars: vec![Bar { series: "s".into(), mean: 80.0, ci_low: 60.0, ci_high: 100.0 }] }];
        let svg = bar_chart("t", "u", &g);
        let bar = elements(&svg, "<rect class=\"bar\"")[0];
        let (y, h) = (attr(bar, "y"), attr(bar, "height"));
        let bottom = y + h;
        let err = &svg[svg.find("class=\"errorbar\"").unwrap()..];
        let line = elements(err, "<line")[0];
        let (y1, y2) = (attr(line, "y1"), attr(line, "y2"));
        // Axis 0..100: the interval 60..100 is 0.5 of the bar's 80 in height.
        assert!(((y1 - y2) / h - 0.5).abs() < 1e-3, "{y1} {y2} {h}");
        assert!(((bottom - y1) / h - 60.0 / 80.0).abs() < 1e-3);
    }

    #[test]
    fn titles_and_labels_are_escaped() {
        let mut g = sample();
        g[0].label = "a<b>&\"c\"".into();
        g[0].bars[0].series = "x'y".into();
        let svg = bar_chart("<&>", "MiB/s <&>", &g);
        check_xml(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        assert!(svg.contains("&lt;&amp;&gt;"));
        assert!(!svg.contains("<&>"));
        assert!(svg.contains("a&lt;b&gt;&amp;&quot;c&quot;"));
        assert!(svg.contains("x&apos;y"));
        let p = percentile_chart("<&>", &[("a<b".into(), vec![(50.0, 10.0), (99.0, 100.0)])]);
        check_xml(&p).unwrap_or_else(|e| panic!("{e}\n{p}"));
        assert!(p.contains("&lt;&amp;&gt;") && !p.contains("<&>") && p.contains("a&lt;b"));
        assert_eq!(escape("\u{1}x"), " x");
    }

    #[test]
    fn nice_ticks_start_at_zero_and_cover_the_max() {
        assert_eq!(nice_ticks(100.0), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(nice_ticks(160.0), vec![0.0, 50.0, 100.0, 150.0, 200.0]);
        assert_eq!(nice_ticks(9.0), vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]);
        assert_eq!(nice_ticks(11.0), vec![0.0, 2.5, 5.0, 7.5, 10.0, 12.5]);
        assert_eq!(nice_ticks(0.0), vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]);
        for max in [0.003, 0.7, 1.0, 3.3, 47.0, 999.0, 1234.5, 8.7e6] {
            let t = nice_ticks(max);
            assert_eq!(t[0], 0.0);
            assert!(*t.last().unwrap() >= max, "{max}: {t:?}");
            assert!((4..=8).contains(&t.len()), "{max}: {t:?}");
        }
        assert_eq!(tick_label(7.5, 2.5), "7.5");
        assert_eq!(tick_label(0.25, 0.25), "0.25");
        assert_eq!(tick_label(0.4, 0.2), "0.4");
        assert_eq!(tick_label(200.0, 50.0), "200");
    }

    #[test]
    fn empty_and_degenerate_bar_charts_are_still_svg() {
        check_xml(&bar_chart("none", "u", &[])).unwrap();
        let g =
            [BarGroup { label: "z".into(), bars: vec![Bar { series: "s".into(), mean: f64::NAN, ci_low: -1.0, ci_high: f64::INFINITY }] }];
        let svg = bar_chart("degenerate", "u", &g);
        check_xml(&svg).unwrap();
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    }

    #[test]
    fn percentile_chart_positions() {
        let pts = vec![(50.0, 100.0), (90.0, 200.0), (99.0, 1000.0), (99.9, 5000.0), (99.99, 10000.0)];
        let svg = percentile_chart("lat", &[("ext4".into(), pts.clone()), ("xfs".into(), vec![(50.0, 80.0), (99.99, 20000.0)])]);
        check_xml(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        let circles = elements(&svg, "<circle");
        assert_eq!(circles.len(), 7);
        let cx: Vec<f64> = circles[..5].iter().map(|c| attr(c, "cx")).collect();
        let cy: Vec<f64> = circles[..5].iter().map(|c| attr(c, "cy")).collect();
        // 90, 99, 99.9, 99.99 are equally spaced.
        let d = cx[2] - cx[1];
        assert!(d > 0.0 && (cx[3] - cx[2] - d).abs() < 0.02 && (cx[4] - cx[3] - d).abs() < 0.02, "{cx:?}");
        // 50 → 0.301, 90 → 1: (1 - 0.301) of a step before 90.
        assert!(((cx[1] - cx[0]) / d - (1.0 - std::f64::consts::LOG10_2)).abs() < 1e-3, "{cx:?}");
        // Log y: 1000 → 10000 is the same height as 100 → 1000.
        assert!(((cy[2] - cy[4]) - (cy[0] - cy[2])).abs() < 0.02, "{cy:?}");
        for label in [">50<", ">90<", ">99<", ">99.9<", ">99.99<"] {
            assert!(svg.contains(label), "no tick {label}");
        }
        assert!((percentile_position(99.0) - 2.0).abs() < 1e-12);
    }

    fn line(name: &str, pts: &[(f64, f64, f64)]) -> Line {
        Line { name: name.into(), points: pts.iter().map(|&(x, mean, h)| Point { x, mean, ci_low: mean - h, ci_high: mean + h }).collect() }
    }

    #[test]
    fn size_chart_spaces_doublings_evenly_and_scales_means() {
        let lines = [
            line("raw / write", &[(4096.0, 100.0, 10.0), (8192.0, 150.0, 0.0), (16384.0, 200.0, 5.0)]),
            // Out of order and with a size the other line lacks.
            line("ext2 / write", &[(65536.0, 50.0, 0.0), (4096.0, 25.0, 0.0)]),
        ];
        let svg = size_chart("bw by size", "MiB/s", "I/O size", &lines, |x| format!("{}k", x / 1024.0));
        check_xml(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        let c = elements(&svg, "<circle");
        assert_eq!(c.len(), 5);
        let (cx, cy): (Vec<f64>, Vec<f64>) = c.iter().map(|e| (attr(e, "cx"), attr(e, "cy"))).unzip();
        // 4k → 8k → 16k are one step each; 4k → 64k is four.
        let step = cx[1] - cx[0];
        assert!(step > 0.0 && (cx[2] - cx[1] - step).abs() < 0.02, "{cx:?}");
        assert!((cx[3] - cx[0]).abs() < 0.02 && (cx[4] - cx[0] - 4.0 * step).abs() < 0.02, "sorted by size: {cx:?}");
        // Linear y from 0: 100 and 200 are 1:2 above the baseline; 0 is the plot bottom.
        let bottom = elements(&svg, "<line class=\"axis\"")[1];
        let base = attr(bottom, "y1");
        assert!(((base - cy[2]) / (base - cy[0]) - 2.0).abs() < 1e-3, "{cy:?} over {base}");
        assert_eq!(svg.matches("class=\"errorbar\"").count(), 2, "whiskers only where the interval is not empty");
        assert_eq!(svg.matches("class=\"xtick\"").count(), 4, "one label per size: 4k, 8k, 16k, 64k");
        assert!(svg.contains(">16k</text>") && svg.contains("I/O size (log2 scale)") && svg.contains(">MiB/s</text>"));
        assert_eq!(svg.matches("class=\"legend\"").count(), 2);
    }

    #[test]
    fn size_chart_drops_bad_points_and_crowded_labels() {
        let xs: Vec<(f64, f64, f64)> = (0..40).map(|i| (2f64.powi(i), 1.0, 0.0)).collect();
        let mut l = line("a<b", &xs);
        l.points.push(Point { x: 0.0, mean: 1.0, ci_low: 1.0, ci_high: 1.0 });
        l.points.push(Point { x: 8.0, mean: f64::NAN, ci_low: 1.0, ci_high: 1.0 });
        let svg = size_chart("<&>", "u", "x", &[l, line("empty", &[])], |x| format!("{x}"));
        check_xml(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        assert_eq!(svg.matches("<circle").count(), 40);
        let labels = svg.matches("class=\"xtick\"").count();
        assert!((10..40).contains(&labels), "{labels} labels for 40 sizes on 480 px");
        assert!(!svg.contains("NaN") && !svg.contains("inf") && svg.contains("a&lt;b"));
        check_xml(&size_chart("none", "u", "x", &[], |x| format!("{x}"))).unwrap();
        check_xml(&size_chart("one", "u", "x", &[line("s", &[(4096.0, 3.0, 1.0)])], |x| format!("{x}"))).unwrap();
    }

    #[test]
    fn xy_chart_scales_both_axes_from_zero() {
        let s = [
            XySeries { name: "reads".into(), points: vec![(0.0, 0.0), (1.0, 50.0), (2.0, 100.0), (f64::NAN, 1.0), (-1.0, 3.0)] },
            XySeries { name: "writes<".into(), points: vec![(0.5, 25.0)] },
        ];
        let svg = xy_chart("LBA", "time (s)", "offset (MiB)", &s, Mark::Dots);
        check_xml(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        let c = elements(&svg, "<circle");
        assert_eq!(c.len(), 4, "bad points left out");
        let (cx, cy): (Vec<f64>, Vec<f64>) = c.iter().map(|e| (attr(e, "cx"), attr(e, "cy"))).unzip();
        // x: 0, 1, 2 evenly spaced; y: 0, 50, 100 likewise; writes at (0.5, 25) halfway between the first two.
        assert!(((cx[1] - cx[0]) - (cx[2] - cx[1])).abs() < 0.11 && cx[1] > cx[0], "{cx:?}");
        assert!(((cy[0] - cy[1]) - (cy[1] - cy[2])).abs() < 0.11 && cy[0] > cy[1], "{cy:?}");
        assert!(((cx[3] - cx[0]) * 2.0 - (cx[1] - cx[0])).abs() < 0.2, "{cx:?}");
        assert!(svg.contains("writes&lt;") && svg.contains(">offset (MiB)</text>") && svg.contains(">time (s)</text>"));
        let lines = xy_chart("depth", "t", "requests", &s, Mark::Line);
        check_xml(&lines).unwrap();
        assert_eq!(lines.matches("<polyline").count(), 2);
        check_xml(&xy_chart("empty", "x", "y", &[], Mark::Line)).unwrap();
    }

    #[test]
    fn count_chart_has_no_interval_note() {
        let svg = count_chart("sizes", "I/Os", &sample());
        check_xml(&svg).unwrap();
        assert!(!svg.contains("confidence") && bar_chart("b", "u", &sample()).contains("confidence"));
        assert_eq!(elements(&svg, "<rect class=\"bar\"").len(), 4);
    }

    #[test]
    fn percentile_chart_skips_bad_points() {
        let svg =
            percentile_chart("x", &[("a".into(), vec![(100.0, 5.0), (50.0, 0.0), (f64::NAN, 1.0), (90.0, 3.0)]), ("empty".into(), vec![])]);
        check_xml(&svg).unwrap_or_else(|e| panic!("{e}\n{svg}"));
        assert_eq!(svg.matches("<circle").count(), 1);
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        check_xml(&percentile_chart("none", &[])).unwrap();
    }
}
