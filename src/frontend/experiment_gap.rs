//! `[[gap]]` tables of an experiment file: which rows or columns of a seed's
//! table the experiment cannot fill here, and why.
//!
//! ```toml
//! [[gap]]
//! table = "seed 004 Table 1"
//! what = "JFS and ReiserFS columns"
//! why = "this kernel has no jfs module; ReiserFS was removed in Linux 6.13"
//! ```
//!
//! Every key is required and none may be empty: a gap without its reason
//! is the unexplained hole the section exists to avoid.

use super::experiment::{ExperimentError, Locator};
use crate::model::experiment::Gap;
use std::collections::BTreeMap;
use toml::Spanned;

/// One `[[gap]]` table as written.
pub(super) type RawGap = Spanned<BTreeMap<String, Spanned<toml::Value>>>;

const KEYS: [&str; 3] = ["table", "what", "why"];

/// Check every `[[gap]]`, in file order.
pub(super) fn gaps(loc: &Locator, raw: &[RawGap]) -> Result<Vec<Gap>, ExperimentError> {
    raw.iter().enumerate().map(|(i, g)| gap(loc, i + 1, g)).collect()
}

fn gap(loc: &Locator, number: usize, g: &RawGap) -> Result<Gap, ExperimentError> {
    let keys = g.get_ref();
    if let Some((k, v)) = keys.iter().find(|(k, _)| !KEYS.contains(&k.as_str())) {
        return Err(loc.span(v, &format!("gap.{k}"), format!("unknown key '{k}' in [[gap]]; expected {}", KEYS.join(", "))));
    }
    let text = |key: &str| -> Result<String, ExperimentError> {
        let Some(v) = keys.get(key) else {
            return Err(loc.span(
                g,
                &format!("gap.{key}"),
                format!("[[gap]] number {number} has no '{key}'; every gap names its table, what is not filled, and why"),
            ));
        };
        match v.get_ref() {
            toml::Value::String(s) if !s.trim().is_empty() => Ok(s.trim().to_string()),
            toml::Value::String(_) => Err(loc.span(v, &format!("gap.{key}"), "expected a non-empty string")),
            other => Err(loc.span(v, &format!("gap.{key}"), format!("expected a string, found {}", other.type_str()))),
        }
    };
    Ok(Gap { table: text("table")?, what: text("what")?, why: text("why")? })
}

#[cfg(test)]
mod tests {
    use crate::frontend::experiment::parse;
    use std::path::Path;

    const BASE: &str = "name = \"t\"\n[[target]]\nlabel = \"d\"\ndirectory = \"/tmp\"\n\
                        [[workload]]\nlabel = \"w\"\nargs = [\"--name=w\", \"--rw=write\", \"--size=1m\"]\n";

    fn with(gaps: &str) -> Result<crate::model::experiment::Experiment, crate::frontend::experiment::ExperimentError> {
        parse(&format!("{BASE}{gaps}"), Path::new("exp.toml"), &[])
    }

    #[test]
    fn gaps_parse_in_file_order() {
        let e = with(
            "[[gap]]\ntable = \"seed 004 Table 1\"\nwhat = \"JFS column\"\nwhy = \"no jfs\"\n\
             [[gap]]\ntable = \"seed 000 Table 5\"\nwhat = \"HDD rows\"\nwhy = \"no HDD\"\n",
        )
        .unwrap();
        assert_eq!(e.gaps.len(), 2);
        assert_eq!(
            (e.gaps[0].table.as_str(), e.gaps[0].what.as_str(), e.gaps[0].why.as_str()),
            ("seed 004 Table 1", "JFS column", "no jfs")
        );
        assert_eq!(e.gaps[1].what, "HDD rows");
        assert!(with("").unwrap().gaps.is_empty());
    }

    #[test]
    fn a_missing_key_is_located_at_its_gap() {
        let e = with("[[gap]]\ntable = \"seed 004 Table 1\"\nwhat = \"JFS column\"\n").unwrap_err();
        assert_eq!(e.key.as_deref(), Some("gap.why"), "{e}");
        assert!(e.line >= 8 && e.col >= 1 && e.message.contains("no 'why'"), "{e}");
    }

    #[test]
    fn an_empty_string_is_located_at_its_value() {
        let e = with("[[gap]]\ntable = \"seed 004 Table 1\"\nwhat = \"  \"\nwhy = \"no jfs\"\n").unwrap_err();
        assert_eq!((e.line, e.col, e.key.as_deref()), (10, 8, Some("gap.what")), "{e}");
        assert!(e.message.contains("non-empty"), "{e}");
    }

    #[test]
    fn an_unknown_key_or_a_number_is_located() {
        let e = with("[[gap]]\ntable = \"t\"\nwhat = \"w\"\nwhy = \"y\"\nwhere = \"x\"\n").unwrap_err();
        assert_eq!((e.line, e.col, e.key.as_deref()), (12, 9, Some("gap.where")), "{e}");
        assert!(e.message.contains("unknown key 'where'") && e.message.contains("table, what, why"), "{e}");
        let e = with("[[gap]]\ntable = 4\nwhat = \"w\"\nwhy = \"y\"\n").unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (9, Some("gap.table")), "{e}");
        assert!(e.message.contains("expected a string"), "{e}");
    }
}
