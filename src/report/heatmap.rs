//! Heat maps of IOzone's matrix as self-contained SVG, like `chart`: file
//! size up, record size across, both on log2 axes (one step per doubling,
//! as IOzone's sizes and the seed papers' plots go).
//!
//! - `iozone_heatmaps`: one map per IOzone column, colour = kB/s on a
//!   sequential scale from 0 to the map's largest figure, with its legend;
//!   a cell of the grid that did not run (the crossover, an interrupted
//!   run) is grey, a record larger than the file has no cell.
//! - `iozone_compare_heatmaps`: B against A per cell, colour = (b−a)/a of
//!   the mean kB/s on a diverging scale centred on 0. A cell whose
//!   difference is not significant at 5% (Welch's t-test, Holm-adjusted
//!   over the map's cells, as `fsbench compare` adjusts over its metrics)
//!   is neutral grey; with one run on a side nothing can be tested, every
//!   cell is neutral and the legend says so. Each cell is labelled with its
//!   percentage either way.
//!
//! Deterministic: the same results give the same bytes.

use super::chart::escape;
use crate::model::iozone::Column;
use crate::report::layout::iozone::details;
use crate::result::iozone::IozoneDetails;
use crate::result::RunResult;
use crate::stats::compare::{adjust, welch, Comparison};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

const FONT: &str = "font-family=\"sans-serif\"";
/// A cell of the grid that did not run.
const NOT_RUN: &str = "#e0e0e0";
/// A difference that is not significant or was not tested.
const NEUTRAL: &str = "#bdbdbd";
/// Sequential scale, light to dark (ColorBrewer YlGnBu).
const SEQUENTIAL: [(u8, u8, u8); 5] = [(0xff, 0xff, 0xcc), (0xa1, 0xda, 0xb4), (0x41, 0xb6, 0xc4), (0x2c, 0x7f, 0xb8), (0x25, 0x34, 0x94)];
/// Diverging scale: B slower (red), equal (near white), B faster (blue).
const DIVERGING: [(u8, u8, u8); 3] = [(0xb2, 0x18, 0x2b), (0xf7, 0xf7, 0xf7), (0x21, 0x66, 0xac)];

/// The colour at `t` in 0..=1 along `stops`.
fn ramp(stops: &[(u8, u8, u8)], t: f64) -> String {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.0 };
    let x = t * (stops.len() - 1) as f64;
    let i = (x.floor() as usize).min(stops.len() - 2);
    let f = x - i as f64;
    let (a, b) = (stops[i], stops[i + 1]);
    let mix = |p: u8, q: u8| (p as f64 + (q as f64 - p as f64) * f).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// A size in kB as an axis label: 4k, 64k, 1M, 512M, 2G.
fn size_label(kb: u64) -> String {
    if kb >= 1 << 20 && kb % (1 << 20) == 0 {
        format!("{}G", kb >> 20)
    } else if kb >= 1024 && kb % 1024 == 0 {
        format!("{}M", kb >> 10)
    } else {
        format!("{kb}k")
    }
}

/// One drawn cell.
struct Cell {
    file_kb: u64,
    rec_kb: u64,
    fill: String,
    /// `cell` (a figure), `not-run`, `sig`, `neutral`, `missing`.
    class: &'static str,
    tip: String,
    label: Option<String>,
    /// Extra attributes (`data-…`).
    data: String,
}

/// The legend at the right of the plot: a colour bar from `lo` to `hi`
/// (its stops), tick labels, then swatches with their meaning.
struct Legend {
    unit: String,
    stops: Vec<(u8, u8, u8)>,
    ticks: Vec<(f64, String)>,
    swatches: Vec<(&'static str, String)>,
}

const LEFT: f64 = 80.0;
const TOP: f64 = 56.0;
const CW: f64 = 46.0;
const CH: f64 = 24.0;
const LEGEND_W: f64 = 360.0;

/// The grid of `files` (y, smallest at the bottom) × `recs` (x).
fn grid(title: &str, subtitle: &str, recs: &[u64], files: &[u64], cells: &[Cell], legend: &Legend) -> String {
    let plot_w = CW * recs.len().max(1) as f64;
    let plot_h = CH * files.len().max(1) as f64;
    let width = LEFT + plot_w + 20.0 + LEGEND_W;
    let height = (TOP + plot_h + 60.0).max(TOP + 250.0);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\">"
    );
    let _ = writeln!(s, "<title>{}</title>", escape(title));
    let _ = writeln!(s, "<rect x=\"0\" y=\"0\" width=\"{width:.0}\" height=\"{height:.0}\" fill=\"white\"/>");
    let _ = writeln!(
        s,
        "<text class=\"title\" x=\"{:.1}\" y=\"20\" {FONT} font-size=\"15\" font-weight=\"bold\" text-anchor=\"middle\">{}</text>",
        width / 2.0,
        escape(title)
    );
    let _ = writeln!(
        s,
        "<text class=\"subtitle\" x=\"{:.1}\" y=\"38\" {FONT} font-size=\"11\" text-anchor=\"middle\">{}</text>",
        width / 2.0,
        escape(subtitle)
    );
    write_cells(&mut s, recs, files, cells, plot_h);
    write_axes(&mut s, recs, files, plot_w, plot_h);
    write_legend(&mut s, legend, LEFT + plot_w + 30.0);
    s.push_str("</svg>\n");
    s
}

/// One rectangle per cell, at its record size (x) and file size (y), with
/// its tooltip and label.
fn write_cells(s: &mut String, recs: &[u64], files: &[u64], cells: &[Cell], plot_h: f64) {
    let x_of = |rec: u64| recs.iter().position(|r| *r == rec).map(|i| LEFT + i as f64 * CW);
    let y_of = |file: u64| files.iter().position(|f| *f == file).map(|i| TOP + plot_h - (i + 1) as f64 * CH);
    for c in cells {
        let (Some(x), Some(y)) = (x_of(c.rec_kb), y_of(c.file_kb)) else { continue };
        let _ = write!(
            s,
            "<rect class=\"{}\" x=\"{x:.1}\" y=\"{y:.1}\" width=\"{CW:.1}\" height=\"{CH:.1}\" fill=\"{}\" stroke=\"white\" stroke-width=\"1\"{}><title>{}</title></rect>",
            c.class,
            c.fill,
            c.data,
            escape(&c.tip)
        );
        if let Some(l) = &c.label {
            let _ = write!(
                s,
                "<text class=\"cell-label\" x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"9\" text-anchor=\"middle\" pointer-events=\"none\">{}</text>",
                x + CW / 2.0,
                y + CH / 2.0 + 3.0,
                escape(l)
            );
        }
        s.push('\n');
    }
}

/// The axes and their labels: record sizes along x, file sizes up y.
fn write_axes(s: &mut String, recs: &[u64], files: &[u64], plot_w: f64, plot_h: f64) {
    let bottom = TOP + plot_h;
    let _ = writeln!(
        s,
        "<line class=\"axis\" x1=\"{LEFT:.1}\" y1=\"{TOP:.1}\" x2=\"{LEFT:.1}\" y2=\"{bottom:.1}\" stroke=\"black\"/><line class=\"axis\" x1=\"{LEFT:.1}\" y1=\"{bottom:.1}\" x2=\"{:.1}\" y2=\"{bottom:.1}\" stroke=\"black\"/>",
        LEFT + plot_w
    );
    for (i, r) in recs.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text class=\"x-label\" x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"10\" text-anchor=\"middle\">{}</text>",
            LEFT + (i as f64 + 0.5) * CW,
            bottom + 14.0,
            size_label(*r)
        );
    }
    for (i, f) in files.iter().enumerate() {
        let _ = writeln!(
            s,
            "<text class=\"y-label\" x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"10\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            bottom - (i as f64 + 0.5) * CH + 3.0,
            size_label(*f)
        );
    }
    let _ = writeln!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"11\" text-anchor=\"middle\">record size (log2)</text>",
        LEFT + plot_w / 2.0,
        bottom + 32.0
    );
    let _ = writeln!(
        s,
        "<text x=\"16\" y=\"{:.1}\" {FONT} font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 16 {:.1})\">file size (log2)</text>",
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0
    );
}

/// The legend at `lx`: a vertical colour bar, high at the top, its ticks,
/// then the swatches of the cells that have no colour on the scale.
fn write_legend(s: &mut String, legend: &Legend, lx: f64) {
    let bar_h = 150.0;
    let _ = writeln!(
        s,
        "<text class=\"legend-unit\" x=\"{lx:.1}\" y=\"{:.1}\" {FONT} font-size=\"11\">{}</text>",
        TOP - 4.0,
        escape(&legend.unit)
    );
    let _ = write!(s, "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">");
    let n = legend.stops.len().max(2) - 1;
    for (i, c) in legend.stops.iter().enumerate() {
        let _ = write!(s, "<stop offset=\"{:.3}\" stop-color=\"#{:02x}{:02x}{:02x}\"/>", i as f64 / n as f64, c.0, c.1, c.2);
    }
    let _ = writeln!(s, "</linearGradient></defs>");
    let _ = writeln!(s, "<rect class=\"legend-bar\" x=\"{lx:.1}\" y=\"{TOP:.1}\" width=\"16\" height=\"{bar_h:.1}\" fill=\"url(#scale)\" stroke=\"black\" stroke-width=\"0.5\"/>");
    for (t, label) in &legend.ticks {
        let y = TOP + bar_h * (1.0 - t.clamp(0.0, 1.0));
        let _ = writeln!(
            s,
            "<line x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"black\"/><text class=\"legend-tick\" x=\"{:.1}\" y=\"{:.1}\" {FONT} font-size=\"10\">{}</text>",
            lx + 16.0,
            lx + 20.0,
            lx + 23.0,
            y + 3.0,
            escape(label)
        );
    }
    let mut y = TOP + bar_h + 20.0;
    for (fill, text) in &legend.swatches {
        let _ = writeln!(
            s,
            "<rect class=\"legend-swatch\" x=\"{lx:.1}\" y=\"{:.1}\" width=\"16\" height=\"12\" fill=\"{fill}\"/><text x=\"{:.1}\" y=\"{y:.1}\" {FONT} font-size=\"10\">{}</text>",
            y - 10.0,
            lx + 22.0,
            escape(text)
        );
        y += 18.0;
    }
}

/// File sizes (ascending) and record sizes (the plan's axis and every record
/// run, ascending) of some runs' details.
fn axes<'a>(ds: impl IntoIterator<Item = &'a IozoneDetails>) -> (Vec<u64>, Vec<u64>) {
    let (mut files, mut recs) = (Vec::new(), Vec::new());
    for d in ds {
        recs.extend(d.settings.record_axis_kb.iter().copied());
        for c in &d.cells {
            files.push(c.file_kb);
            recs.push(c.rec_kb);
        }
    }
    for v in [&mut files, &mut recs] {
        v.sort();
        v.dedup();
    }
    (files, recs)
}

/// The columns of some runs' cells, in IOzone's order.
fn columns<'a>(ds: impl IntoIterator<Item = &'a IozoneDetails>) -> Vec<Column> {
    let mut cols: Vec<Column> = ds.into_iter().flat_map(|d| d.cells.iter().map(|c| c.column)).collect();
    cols.sort();
    cols.dedup();
    cols
}

/// Ticks at 0, ¼, ½, ¾ and 1 of the scale, labelled by `f`.
fn quarter_ticks(f: impl Fn(f64) -> String) -> Vec<(f64, String)> {
    (0..=4).map(|i| i as f64 / 4.0).map(|t| (t, f(t))).collect()
}

/// A figure for a legend or a tooltip: whole numbers with thousands
/// separators.
fn kbs(v: f64) -> String {
    crate::report::format::thousands(v.max(0.0).round() as u64)
}

/// One heat map per IOzone column of a run: `(iozone-<column>.svg, SVG)`.
/// Empty when the run has no IOzone details or no cells (throughput mode).
pub fn iozone_heatmaps(r: &RunResult) -> Vec<(String, String)> {
    maps(details(r).into_iter().collect())
}

/// The same over the repeats of one setup: each cell's colour is its mean
/// kB/s over the valid runs (failed and interrupted ones are left out).
pub fn iozone_heatmaps_mean(runs: &[&RunResult]) -> Vec<(String, String)> {
    maps(runs.iter().filter(|r| r.is_valid()).filter_map(|r| details(r)).collect())
}

fn maps(ds: Vec<IozoneDetails>) -> Vec<(String, String)> {
    let Some(first) = ds.first() else { return Vec::new() };
    let (files, recs) = axes(&ds);
    let n = ds.len();
    let mut values = CellValues::new();
    for d in &ds {
        for c in &d.cells {
            values.entry((c.column, c.file_kb, c.rec_kb)).or_default().push(c.kb_per_s());
        }
    }
    let mean = |v: &Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let mut out = Vec::new();
    for col in columns(&ds) {
        let max = values.iter().filter(|((c, _, _), _)| *c == col).map(|(_, v)| mean(v)).fold(0.0, f64::max);
        let mut cells = Vec::new();
        for &f in &files {
            for &rc in recs.iter().filter(|rc| **rc <= f) {
                match values.get(&(col, f, rc)) {
                    Some(vs) => {
                        let v = mean(vs);
                        let of = if n > 1 { format!(" (mean of {} runs)", vs.len()) } else { String::new() };
                        cells.push(Cell {
                            file_kb: f,
                            rec_kb: rc,
                            fill: ramp(&SEQUENTIAL, if max > 0.0 { v / max } else { 0.0 }),
                            class: "cell",
                            tip: format!("file {} kB, record {} kB: {} kB/s{of}", f, rc, kbs(v)),
                            label: None,
                            data: format!(" data-kbs=\"{v:.3}\""),
                        });
                    }
                    None => cells.push(Cell {
                        file_kb: f,
                        rec_kb: rc,
                        fill: NOT_RUN.into(),
                        class: "not-run",
                        tip: format!("file {f} kB, record {rc} kB: not run"),
                        label: None,
                        data: String::new(),
                    }),
                }
            }
        }
        let legend = Legend {
            unit: if n > 1 { format!("kB/s, mean of {n} runs") } else { "kB/s".into() },
            stops: SEQUENTIAL.to_vec(),
            ticks: quarter_ticks(|t| kbs(t * max)),
            swatches: vec![(NOT_RUN, "not run".into())],
        };
        let title = format!("{} (kB/s)", col.report_title());
        let subtitle = format!("IOzone {}: file size × record size, {}", col.name(), first.settings.command_line);
        out.push((format!("iozone-{}.svg", col.name()), grid(&title, &subtitle, &recs, &files, &cells, &legend)));
    }
    out
}

fn write_all(dir: &Path, maps: Vec<(String, String)>) -> std::io::Result<Vec<PathBuf>> {
    if maps.is_empty() {
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    for (name, svg) in maps {
        let p = dir.join(name);
        crate::environment::safety::write_output("--charts", &p, svg.as_bytes()).map_err(std::io::Error::other)?;
        written.push(p);
    }
    Ok(written)
}

/// Write `iozone_heatmaps(r)` into `dir` (created if needed); the files
/// written. Nothing is written for a run without IOzone cells.
pub fn write_iozone_heatmaps(r: &RunResult, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    write_all(dir, iozone_heatmaps(r))
}

/// kB/s of each (column, file kB, record kB), one value per run.
type CellValues = BTreeMap<(Column, u64, u64), Vec<f64>>;

/// kB/s of every (column, file, record) over a side's valid runs.
fn side_values(runs: &[RunResult]) -> (Vec<IozoneDetails>, CellValues) {
    let ds: Vec<IozoneDetails> = runs.iter().filter(|r| r.is_valid()).filter_map(details).collect();
    let mut m = CellValues::new();
    for d in &ds {
        for c in &d.cells {
            m.entry((c.column, c.file_kb, c.rec_kb)).or_default().push(c.kb_per_s());
        }
    }
    (ds, m)
}

/// The comparison of every cell both sides ran, per column, with Holm's
/// adjustment over each column's cells.
pub fn iozone_cell_comparisons(a: &[RunResult], b: &[RunResult]) -> BTreeMap<Column, Vec<(u64, u64, Comparison)>> {
    let (_, ma) = side_values(a);
    let (_, mb) = side_values(b);
    let mut out: BTreeMap<Column, Vec<(u64, u64, Comparison)>> = BTreeMap::new();
    for ((col, f, rc), va) in &ma {
        let Some(vb) = mb.get(&(*col, *f, *rc)) else { continue };
        let metric = format!("{f}k/{rc}k/{}/kB_s", col.name());
        out.entry(*col).or_default().push((*f, *rc, welch(&metric, va, vb)));
    }
    for cs in out.values_mut() {
        adjust(cs.iter_mut().map(|(_, _, c)| c));
    }
    out
}

/// A relative difference as a percentage with the decimal it needs:
/// "+5%", "-2.5%", "0%".
fn pct_label(v: f64) -> String {
    let p = (v * 1000.0).round() / 10.0;
    if p == 0.0 {
        "0%".into()
    } else if p.fract() == 0.0 {
        format!("{p:+.0}%")
    } else {
        format!("{p:+.1}%")
    }
}

/// The largest |relative difference| a diverging scale should show: a
/// round step at or above `m` (at least 5%).
fn diverging_range(m: f64) -> f64 {
    [0.05, 0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0].into_iter().find(|s| *s >= m * (1.0 - 1e-9)).unwrap_or(10.0)
}

/// One map per IOzone column both sides ran: `(iozone-compare-<column>.svg,
/// SVG)` of B against A (the baseline). `a` and `b` are each one run or the
/// repeats of one setup; failed and interrupted runs are left out.
pub fn iozone_compare_heatmaps(a: &[RunResult], b: &[RunResult]) -> Vec<(String, String)> {
    let (da, _) = side_values(a);
    let (db, _) = side_values(b);
    let (files, recs) = axes(da.iter().chain(&db));
    let (na, nb) = (da.len(), db.len());
    let mut out = Vec::new();
    for (col, cs) in iozone_cell_comparisons(a, b) {
        let tested = cs.iter().filter(|(_, _, c)| c.tested()).count();
        let max = cs.iter().filter(|(_, _, c)| c.significant).map(|(_, _, c)| c.rel_diff.abs()).fold(0.0, f64::max);
        let range = diverging_range(max);
        let mut cells = Vec::new();
        for &f in &files {
            for &rc in recs.iter().filter(|rc| **rc <= f) {
                let Some((_, _, c)) = cs.iter().find(|(x, y, _)| (*x, *y) == (f, rc)) else {
                    cells.push(Cell {
                        file_kb: f,
                        rec_kb: rc,
                        fill: NOT_RUN.into(),
                        class: "missing",
                        tip: format!("file {f} kB, record {rc} kB: not run on both sides"),
                        label: None,
                        data: String::new(),
                    });
                    continue;
                };
                let pct = format!("{:+.0}%", c.rel_diff * 100.0);
                let (fill, class, why) = if !c.tested() {
                    (NEUTRAL.to_string(), "neutral", "not tested (no spread)".to_string())
                } else if c.significant {
                    (ramp(&DIVERGING, 0.5 + c.rel_diff / range / 2.0), "sig", format!("p (Holm) = {:.3}", c.p_adjusted))
                } else {
                    (NEUTRAL.to_string(), "neutral", format!("not significant, p (Holm) = {:.3}", c.p_adjusted))
                };
                cells.push(Cell {
                    file_kb: f,
                    rec_kb: rc,
                    fill,
                    class,
                    tip: format!("file {f} kB, record {rc} kB: A {} kB/s, B {} kB/s, {pct}; {why}", kbs(c.a.mean), kbs(c.b.mean)),
                    label: Some(pct),
                    data: format!(" data-rel=\"{:.6}\"", c.rel_diff),
                });
            }
        }
        let neutral = if tested == 0 {
            format!("not tested: {na} run(s) of A, {nb} of B, no spread; every cell neutral")
        } else {
            format!("not significant at 5% (Welch, Holm over {tested} cells)")
        };
        let legend = Legend {
            unit: "(B − A) / A".into(),
            stops: DIVERGING.to_vec(),
            ticks: quarter_ticks(|t| pct_label((t * 2.0 - 1.0) * range)),
            swatches: vec![(NEUTRAL, neutral), (NOT_RUN, "not run on both sides".into())],
        };
        let title = format!("{}: B against A", col.report_title());
        let subtitle = format!("relative difference of the mean kB/s per cell; A: {na} run(s), B: {nb} run(s)");
        out.push((format!("iozone-compare-{}.svg", col.name()), grid(&title, &subtitle, &recs, &files, &cells, &legend)));
    }
    out
}

/// Write `iozone_compare_heatmaps(a, b)` into `dir` (created if needed);
/// the files written. Nothing is written when the sides share no IOzone
/// cell.
pub fn write_iozone_compare_heatmaps(a: &[RunResult], b: &[RunResult], dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    write_all(dir, iozone_compare_heatmaps(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::chart::tests::check_xml;
    use crate::report::layout::iozone::tests::{as_run, auto_2x2, fig};

    fn rects<'a>(svg: &'a str, class: &str) -> Vec<&'a str> {
        let key = format!("<rect class=\"{class}\"");
        svg.match_indices(&key).map(|(i, _)| &svg[i..i + svg[i..].find('>').unwrap()]).collect()
    }

    fn attr(el: &str, name: &str) -> String {
        let k = format!(" {name}=\"");
        let i = el.find(&k).unwrap_or_else(|| panic!("{name} in {el}")) + k.len();
        el[i..i + el[i..].find('"').unwrap()].to_string()
    }

    /// Light to dark: the sum of the channels.
    fn lightness(hex: &str) -> u32 {
        (0..3).map(|i| u32::from_str_radix(&hex[1 + 2 * i..3 + 2 * i], 16).unwrap()).sum()
    }

    #[test]
    fn one_map_per_column_one_rect_per_cell_darker_when_faster() {
        let mut d = auto_2x2();
        d.settings.record_axis_kb = vec![4, 8, 16];
        // The 128 kB file skipped 8 kB records (as a crossover would).
        d.cells.retain(|c| !(c.file_kb == 128 && c.rec_kb == 8));
        let maps = iozone_heatmaps(&as_run(&d));
        let names: Vec<&str> = maps.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["iozone-write.svg", "iozone-rewrite.svg", "iozone-read.svg", "iozone-reread.svg"]);
        let svg = &maps[0].1;
        check_xml(svg).unwrap();
        assert!(svg.contains("Writer report (kB/s)"));
        let cells = rects(svg, "cell");
        assert_eq!(cells.len(), 3, "{svg}");
        // 128 kB × 8 kB and both 16 kB records did not run.
        assert_eq!(rects(svg, "not-run").len(), 3, "{svg}");
        let mut by_value: Vec<(f64, u32)> =
            cells.iter().map(|c| (attr(c, "data-kbs").parse().unwrap(), lightness(&attr(c, "fill")))).collect();
        by_value.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert!(by_value.windows(2).all(|w| w[1].1 < w[0].1), "{by_value:?}");
        assert_eq!(iozone_heatmaps(&as_run(&d)), maps, "deterministic");
        let dir = std::env::temp_dir().join(format!("fsbench-heatmap-test-{}", std::process::id()));
        let written = write_iozone_heatmaps(&as_run(&d), &dir).unwrap();
        assert_eq!(written.len(), 4);
        assert_eq!(std::fs::read_to_string(&written[0]).unwrap(), maps[0].1);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(iozone_heatmaps(&crate::result::testutil::simple(5)).is_empty());
    }

    #[test]
    fn repeats_are_averaged_and_invalid_runs_left_out() {
        let mk = |kbs: u64| {
            let mut d = auto_2x2();
            d.cells = vec![fig(64, 4, Column::Write, kbs)];
            as_run(&d)
        };
        let mut bad = mk(9_000_000);
        bad.partial = true;
        let maps = iozone_heatmaps_mean(&[&mk(1_000_000), &mk(3_000_000), &bad]);
        assert_eq!(maps.len(), 1);
        let cell = rects(&maps[0].1, "cell")[0];
        assert_eq!(attr(cell, "data-kbs"), "2000000.000");
        assert!(maps[0].1.contains("kB/s, mean of 2 runs"));
        assert!(iozone_heatmaps_mean(&[]).is_empty());
    }

    fn side(scale: &[f64]) -> Vec<RunResult> {
        scale
            .iter()
            .map(|k| {
                let mut d = auto_2x2();
                d.settings.tests = vec![crate::model::iozone::Test::Write];
                d.cells = d.settings.cells.iter().map(|&(f, r)| fig(f, r, Column::Write, (1_048_576.0 * k) as u64)).collect();
                // The 64 kB × 4 kB cell is the same on both sides.
                d.cells[0] = fig(64, 4, Column::Write, 1_000_000 + (k * 1000.0) as u64 % 7 * 10_000);
                as_run(&d)
            })
            .collect()
    }

    #[test]
    fn compare_map_draws_non_significant_cells_neutral() {
        let a = side(&[1.0, 1.03125, 0.96875, 1.015625, 0.984375]);
        // 1.5 × A's, exactly.
        let b = side(&[1.5, 1.546875, 1.453125, 1.5234375, 1.4765625]);
        let maps = iozone_compare_heatmaps(&a, &b);
        assert_eq!(maps.len(), 1);
        let svg = &maps[0].1;
        check_xml(svg).unwrap();
        let sig = rects(svg, "sig");
        let neutral = rects(svg, "neutral");
        assert_eq!((sig.len(), neutral.len()), (3, 1), "{svg}");
        assert_eq!(attr(neutral[0], "fill"), NEUTRAL);
        for c in &sig {
            let rel: f64 = attr(c, "data-rel").parse().unwrap();
            assert!((rel - 0.5).abs() < 0.01, "{c}");
            // B faster by the whole range: the blue end.
            assert_eq!(attr(c, "fill"), "#2166ac", "{c}");
        }
        assert!(svg.contains("not significant at 5%"), "{svg}");
        // One run per side: nothing tested, everything neutral, and said so.
        let maps = iozone_compare_heatmaps(&a[..1], &b[..1]);
        let svg = &maps[0].1;
        check_xml(svg).unwrap();
        assert!(rects(svg, "sig").is_empty());
        assert_eq!(rects(svg, "neutral").len(), 4);
        assert!(svg.contains("not tested: 1 run(s) of A, 1 of B"), "{svg}");
        assert!(svg.contains("+50%"), "cells keep their percentage: {svg}");
    }

    #[test]
    fn ramps_and_labels() {
        assert_eq!(ramp(&SEQUENTIAL, 0.0), "#ffffcc");
        assert_eq!(ramp(&SEQUENTIAL, 1.0), "#253494");
        assert_eq!(ramp(&DIVERGING, 0.5), "#f7f7f7");
        assert_eq!(ramp(&DIVERGING, f64::NAN), "#b2182b");
        assert_eq!([4, 1024, 524288, 1 << 21].map(size_label), ["4k", "1M", "512M", "2G"]);
        assert_eq!(diverging_range(0.0), 0.05);
        assert_eq!(diverging_range(0.3), 0.5);
        assert_eq!([0.05, -0.025, 0.0, -0.0, 1.0].map(pct_label), ["+5%", "-2.5%", "0%", "0%", "+100%"]);
    }
}
