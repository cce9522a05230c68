//! Markdown tables a user pastes into a paper, a wiki or an issue: figures
//! with thousands separators and units in the headers.

use super::{DocKind, Document, ExportError, Exporter};
use crate::report::compare::{delta, method, p_columns, side};
use crate::report::format::{interval, num, pm, thousands, us};
use crate::result::RunResult;
use crate::stats::compare::ComparisonDoc;
use crate::stats::repeated::Repeated;

pub struct Markdown;

impl Exporter for Markdown {
    fn name(&self) -> &'static str {
        "markdown"
    }
    fn help(&self) -> &'static str {
        "Markdown tables to paste into a paper or an issue"
    }
    fn kinds(&self) -> &'static [DocKind] {
        &DocKind::ALL
    }
    fn render(&self, doc: &Document) -> Result<String, ExportError> {
        Ok(match doc {
            Document::Run(r) => run(r),
            Document::Repeated(r) => repeated(r),
            Document::Experiment(s) => crate::report::experiment::report(s),
            Document::Comparison(c) => comparison(c),
        })
    }
}

/// A table: a header row, the alignment row (numbers right-aligned) and
/// the rows, with `|` in cells escaped.
fn table(header: &[&str], right: &[bool], rows: &[Vec<String>]) -> String {
    table_padded(header, right, rows, false)
}

/// A table as `table` makes it; with `pad`, every column is padded to its
/// widest cell, so it also reads as a table on a terminal.
pub fn table_padded(header: &[&str], right: &[bool], rows: &[Vec<String>], pad: bool) -> String {
    let cell = |s: &str| s.replace('|', "\\|");
    let head: Vec<String> = header.iter().map(|h| cell(h)).collect();
    let body: Vec<Vec<String>> = rows.iter().map(|r| r.iter().map(|c| cell(c)).collect()).collect();
    let mut widths: Vec<usize> = vec![if pad { 4 } else { 0 }; header.len()];
    if pad {
        for r in std::iter::once(&head).chain(&body) {
            for (w, c) in widths.iter_mut().zip(r) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let line = |r: &[String]| -> String {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let fill = " ".repeat(widths.get(i).copied().unwrap_or(0).saturating_sub(c.chars().count()));
                if right.get(i).copied().unwrap_or(false) {
                    format!("{fill}{c}")
                } else {
                    format!("{c}{fill}")
                }
            })
            .collect();
        format!("| {} |\n", cells.join(" | "))
    };
    // ":---" / "---:", as wide as the column when padded.
    let rule: Vec<String> = right
        .iter()
        .enumerate()
        .map(|(i, &r)| {
            let dashes = "-".repeat(widths.get(i).copied().unwrap_or(0).saturating_sub(1).max(3));
            if r {
                format!("{dashes}:")
            } else {
                format!(":{dashes}")
            }
        })
        .collect();
    let mut out = line(&head);
    out += &if pad { format!("| {} |\n", rule.join(" | ")) } else { format!("|{}|\n", rule.join("|")) };
    for r in &body {
        out += &line(r);
    }
    out
}

fn run(r: &RunResult) -> String {
    let mut rows = Vec::new();
    for j in &r.jobs {
        for o in &j.ops {
            let lat = |p: f64| if o.lat.count() > 0 { us(o.lat.percentile(p) as f64) } else { "–".into() };
            rows.push(vec![
                j.name.clone(),
                o.name.clone(),
                o.class.name().to_string(),
                thousands(o.ops),
                thousands(o.iops(j.elapsed_ns).round() as u64),
                format!("{:.1}", o.bytes_per_sec(j.elapsed_ns) / 1048576.0),
                if o.lat.count() > 0 { us(o.lat.mean()) } else { "–".into() },
                lat(50.0),
                lat(99.0),
                lat(99.9),
            ]);
        }
    }
    let mut out = String::new();
    if r.partial {
        out += "**Partial: the run was interrupted; figures cover what ran.**\n\n";
    }
    out += &table(
        &["unit", "operation", "class", "ops", "IOPS", "MiB/s", "mean µs", "p50 µs", "p99 µs", "p99.9 µs"],
        &[false, false, false, true, true, true, true, true, true, true],
        &rows,
    );
    // Headline figures that are not per-operation ones (Filebench's IO
    // Summary, Postmark's transactions/s, ...).
    let extra: Vec<Vec<String>> = r
        .jobs
        .iter()
        .flat_map(|j| j.headline.iter().filter(|h| !j.ops.iter().any(|o| h.name.starts_with(&format!("{}/", o.name)))).map(move |h| (j, h)))
        .map(|(j, h)| vec![j.name.clone(), h.name.clone(), h.unit.clone(), num(h.value)])
        .collect();
    if !extra.is_empty() {
        out += "\n";
        out += &table(&["unit", "figure", "unit of measure", "value"], &[false, false, false, true], &extra);
    }
    out
}

fn repeated(r: &Repeated) -> String {
    let rows: Vec<Vec<String>> = r
        .summary
        .iter()
        .map(|m| {
            let s = &m.summary;
            vec![
                m.metric.clone(),
                s.n.to_string(),
                pm(s.mean, s.sd),
                format!("{:.1}", s.cv * 100.0),
                format!("{} – {}", num(s.min), num(s.max)),
                interval(s),
            ]
        })
        .collect();
    table(&["metric", "n", "mean ± sd", "CV %", "range", "95% CI of the mean"], &[false, true, true, true, true, true], &rows)
}

fn comparison(c: &ComparisonDoc) -> String {
    let rows: Vec<Vec<String>> = c
        .comparisons
        .iter()
        .map(|x| {
            let [p, adj] = p_columns(x);
            vec![x.metric.clone(), side(&x.a), side(&x.b), delta(x), p, adj, if x.significant { "significant".into() } else { "–".into() }]
        })
        .collect();
    let mut out = format!("A: {} ({} runs); B: {} ({} runs). {}.\n\n", c.a.path, c.a.runs, c.b.path, c.b.runs, method(c.tests));
    out += &table(
        &["metric", "A mean ± sd (n)", "B mean ± sd (n)", "Δ% [95% CI]", "p", "p (Holm)", ""],
        &[false, true, true, true, true, true, false],
        &rows,
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testutil::simple;

    #[test]
    fn run_table_has_a_row_per_operation_with_units() {
        let t = run(&simple(1000));
        let lines: Vec<&str> = t.lines().collect();
        assert!(lines[0].starts_with("| unit | operation | class | ops | IOPS |"), "{t}");
        assert!(lines[1].starts_with("|:---|:---|:---|---:|"), "{t}");
        assert!(lines[2].starts_with("| x | read | data_read | 1,000 | 1,000 |"), "{t}");
    }

    #[test]
    fn pipes_in_names_are_escaped() {
        let t = table(&["a"], &[false], &[vec!["x|y".into()]]);
        assert!(t.contains("x\\|y"), "{t}");
    }
}
