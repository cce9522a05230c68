//! `fsbench compare` as a table: per metric, both sides' mean ± sd (n), the
//! relative difference with its 95% confidence interval, Welch's p and the
//! verdict.

use crate::report::format::thousands;
use crate::stats::compare::{Comparison, ComparisonDoc};
use crate::stats::Summary;

/// A value with precision that suits its size.
pub fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        let s = thousands(a.round() as u64);
        if v < 0.0 {
            format!("-{s}")
        } else {
            s
        }
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{v:.3}")
    }
}

pub fn pct(v: f64) -> String {
    format!("{:+.1}", v * 100.0)
}

pub fn tested(c: &Comparison) -> bool {
    c.a.n >= 2 && c.b.n >= 2
}

/// The human table.
pub fn table(doc: &ComparisonDoc) -> String {
    let (sa, sb, cs) = (&doc.a, &doc.b, &doc.comparisons);
    let runs = |n: usize| if n == 1 { "1 run".to_string() } else { format!("{n} runs") };
    let mut out = format!("A: {} ({})\nB: {} ({})\n\n", sa.path, runs(sa.runs), sb.path, runs(sb.runs));
    let header = ["metric", "A mean ± sd (n)", "B mean ± sd (n)", "Δ% [95% CI]", "p", ""];
    let rows: Vec<[String; 6]> = cs
        .iter()
        .map(|c| {
            let side = |s: &Summary| format!("{} ± {} ({})", num(s.mean), num(s.sd), s.n);
            let delta = if c.note.as_deref().is_some_and(|n| n.contains("mean of A is 0")) {
                "n/a".to_string()
            } else if tested(c) {
                format!("{}% [{}, {}]", pct(c.rel_diff), pct(c.rel_ci_low), pct(c.rel_ci_high))
            } else {
                format!("{}%", pct(c.rel_diff))
            };
            let p = if !tested(c) {
                "—".to_string()
            } else if c.p_value < 0.001 {
                "<0.001".to_string()
            } else {
                format!("{:.3}", c.p_value)
            };
            let verdict = if c.significant { "significant" } else { "—" };
            [c.metric.clone(), side(&c.a), side(&c.b), delta, p, verdict.to_string()]
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
        cs.iter().filter(|c| tested(c)).filter_map(|c| c.note.as_ref().map(|n| format!("{}: {n}", c.metric))).collect();
    let notice = doc.no_spread_notice();
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
    use crate::stats::compare::{compare_runs, SideInfo};

    fn doc(a: &str, ra: &[RunResult], b: &str, rb: &[RunResult], filter: Option<&str>) -> ComparisonDoc {
        ComparisonDoc {
            a: SideInfo { path: a.into(), runs: ra.len() },
            b: SideInfo { path: b.into(), runs: rb.len() },
            comparisons: compare_runs(ra, rb, filter).unwrap(),
        }
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
        assert!(t.starts_with("A: base (3 runs)\nB: new (3 runs)\n"), "{t}");
        let row = t.lines().find(|l| l.starts_with("x/read/iops")).unwrap();
        assert!(row.contains("1,000 ± 10.00 (3)"), "{row}");
        assert!(row.contains("1,500 ± 10.00 (3)"), "{row}");
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
    }

    #[test]
    fn numbers_are_readable() {
        assert_eq!(num(152345.4), "152,345");
        assert_eq!(num(-2500.0), "-2,500");
        assert_eq!(num(123.45), "123.5");
        assert_eq!(num(12.345), "12.35");
        assert_eq!(num(0.01234), "0.012");
        assert_eq!(num(0.0), "0");
        assert_eq!(pct(-0.98412), "-98.4");
        assert_eq!(pct(0.5), "+50.0");
    }
}
