//! fsbench's own JSON: the `RunResult` as it is, schema-versioned.

use crate::result::RunResult;

pub fn render(result: &RunResult) -> String {
    let mut s = serde_json::to_string_pretty(result).expect("results always serialise");
    s.push('\n');
    s
}
