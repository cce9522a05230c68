//! `fsbench compare` as a table: per metric, both sides' mean ± sd (n), the
//! relative difference with its 95% confidence interval, Welch's p, that p
//! adjusted for the number of tests (Holm), and the verdict.

use crate::report::format::{num, p_value, pct, pct_ci, pm};
use crate::stats::compare::{Comparison, ComparisonDoc};
use crate::stats::Summary;

/// A side's figures: "mean ± sd (n)", or "mean (1)" for a single run.
pub fn side(s: &Summary) -> String {
    if s.n < 2 {
        format!("{} ({})", num(s.mean), s.n)
    } else {
        format!("{} ({})", pm(s.mean, s.sd), s.n)
    }
}

/// The relative difference, with its interval when there is one.
pub fn delta(c: &Comparison) -> String {
    if c.note.as_deref().is_some_and(|n| n.contains("mean of A is 0")) {
        "n/a".to_string()
    } else if c.tested() {
        pct_ci(c.rel_diff, c.rel_ci_low, c.rel_ci_high)
    } else {
        format!("{}%", pct(c.rel_diff))
    }
}

/// The p-value and the adjusted one, or dashes when nothing was tested.
pub fn p_columns(c: &Comparison) -> [String; 2] {
    if c.tested() {
        [p_value(c.p_value), p_value(c.p_adjusted)]
    } else {
        ["—".into(), "—".into()]
    }
}

/// The sentence under every comparison table: what was tested and how.
pub fn method(tests: usize) -> String {
    if tests == 0 {
        return "no test: a side has fewer than two runs".into();
    }
    format!(
        "{tests} test{} (Welch's t); p (Holm) is adjusted for all of them, significant below 0.05; Δ% interval: Fieller's, 95%",
        if tests == 1 { "" } else { "s" }
    )
}

/// The human table.
pub fn table(doc: &ComparisonDoc) -> String {
    let (sa, sb, cs) = (&doc.a, &doc.b, &doc.comparisons);
    let runs = |n: usize| if n == 1 { "1 run".to_string() } else { format!("{n} runs") };
    let mut out = format!("A: {} ({})\nB: {} ({})\n{}\n\n", sa.path, runs(sa.runs), sb.path, runs(sb.runs), method(doc.tests));
    let header = ["metric", "A mean ± sd (n)", "B mean ± sd (n)", "Δ% [95% CI]", "p", "p (Holm)", ""];
    let rows: Vec<[String; 7]> = cs
        .iter()
        .map(|c| {
            let [p, adj] = p_columns(c);
            let verdict = if c.significant { "significant" } else { "—" };
            [c.metric.clone(), side(&c.a), side(&c.b), delta(c), p, adj, verdict.to_string()]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            let pad = w - cell.chars().count();
            if i == 0 || i == cells.len() - 1 {
                s.push_str(cell);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            }
            s.push_str("  ");
        }
        s.trim_end().to_string() + "\n"
    };
    out.push_str(&line(&header.map(String::from)));
    for r in &rows {
        out.push_str(&line(r));
    }
    let notes: Vec<String> =
        cs.iter().filter(|c| c.tested()).filter_map(|c| c.note.as_ref().map(|n| format!("{}: {n}", c.metric))).collect();
    let notice: Vec<String> = doc.no_spread_notice().into_iter().map(|w| w.message).collect();
    if !notes.is_empty() || !notice.is_empty() {
        out.push('\n');
    }
    for n in notice.iter().chain(&notes) {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testutil::simple;
    use crate::result::RunResult;
    use crate::stats::compare::{compare_sides, SideInfo};

    fn doc(a: &str, ra: &[RunResult], b: &str, rb: &[RunResult], filter: Option<&str>) -> ComparisonDoc {
        let info = |p: &str, r: &[RunResult]| SideInfo { path: p.into(), runs: r.len() };
        compare_sides((info(a, ra), ra), (info(b, rb), rb), filter).unwrap()
    }

    #[test]
    fn table_shows_means_delta_and_verdict() {
        let t = table(&doc(
            "base",
            &[simple(1000), simple(1010), simple(990)],
            "new",
            &[simple(1500), simple(1490), simple(1510)],
            Some("iops"),
        ));
        assert!(t.starts_with("A: base (3 runs)\nB: new (3 runs)\n1 test (Welch's t); p (Holm)"), "{t}");
        let row = t.lines().find(|l| l.starts_with("x/read/iops")).unwrap();
        assert!(row.contains("1,000 ± 10 (3)"), "{row}");
        assert!(row.contains("1,500 ± 10 (3)"), "{row}");
        assert!(row.contains("+50.0% ["), "{row}");
        assert!(row.contains("<0.001") && row.ends_with("significant"), "{row}");
        assert!(!t.contains("note:"), "{t}");
    }

    #[test]
    fn single_runs_say_there_is_no_spread() {
        let d = doc("one.json", &[simple(1000)], "dir", &[simple(2000), simple(2010)], None);
        assert!(d.comparisons.iter().all(|c| !c.significant && c.p_value == 1.0));
        let t = table(&d);
        assert!(t.contains("note: A (one.json) is a single run: the comparison has no spread"), "{t}");
        let row = t.lines().find(|l| l.starts_with("x/read/iops")).unwrap();
        assert!(row.contains("+100.5%") && !row.contains('[') && !row.contains("significant"), "{row}");
        assert!(row.contains(" 1,000 (1) ") && t.contains("\nno test: a side has fewer than two runs\n"), "{t}");
    }
}
