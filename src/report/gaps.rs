//! `## What this run cannot fill`: per seed table, the rows and columns the
//! experiment leaves empty on this machine and why, from its `[[gap]]`
//! tables. A column the reader expects from the seed and does not find is
//! then a stated limit (the kernel lacks JFS, there is no HDD), not a
//! silent omission or a result of zero.

use super::export::markdown::table_padded;
use crate::model::experiment::Gap;
use std::fmt::Write;

/// The section, or nothing when the experiment names no gap.
pub fn section(gaps: &[Gap]) -> String {
    if gaps.is_empty() {
        return String::new();
    }
    let mut t = String::new();
    let _ = writeln!(t, "\n## What this run cannot fill\n");
    let _ = writeln!(
        t,
        "Rows and columns of the seed's tables this experiment leaves empty here, and why (the experiment file's [[gap]] tables):\n"
    );
    let rows: Vec<Vec<String>> = gaps.iter().map(|g| vec![g.table.clone(), g.what.clone(), g.why.clone()]).collect();
    t += &table_padded(&["table", "not filled", "why"], &[false, false, false], &rows, true);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_gap_is_a_row_with_its_reason() {
        assert_eq!(section(&[]), "");
        let gaps = [
            Gap { table: "seed 004 Table 1".into(), what: "JFS column".into(), why: "no jfs module".into() },
            Gap { table: "seed 000 Table 2".into(), what: "every row (HDD)".into(), why: "no HDD".into() },
        ];
        let s = section(&gaps);
        assert!(s.contains("## What this run cannot fill"), "{s}");
        let row = s.lines().find(|l| l.contains("JFS column")).expect("a row per gap");
        assert!(row.contains("seed 004 Table 1") && row.contains("no jfs module"), "{s}");
        assert!(s.find("JFS column") < s.find("every row (HDD)"), "file order: {s}");
    }
}
