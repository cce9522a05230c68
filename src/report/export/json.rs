//! fsbench's own JSON: every document as it is, schema-versioned
//! (`fsbench-result/2`, `fsbench-repeated/1`, `fsbench-experiment-summary/1`,
//! `fsbench-comparison/1`).

use super::{DocKind, Document, ExportError, Exporter};
use serde::Serialize;

pub struct Json;

/// Pretty JSON with a final newline.
pub fn to_json<T: Serialize + ?Sized>(v: &T) -> Result<String, ExportError> {
    let mut s = serde_json::to_string_pretty(v).map_err(|e| ExportError(format!("cannot write JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

impl Exporter for Json {
    fn name(&self) -> &'static str {
        "json"
    }
    fn help(&self) -> &'static str {
        "fsbench's versioned JSON with everything measured (fsbench-result/2, fsbench-repeated/1, ...)"
    }
    fn kinds(&self) -> &'static [DocKind] {
        &DocKind::ALL
    }
    fn render(&self, doc: &Document) -> Result<String, ExportError> {
        match doc {
            Document::Run(r) => to_json(r),
            Document::Repeated(r) => to_json(r),
            Document::Experiment(s) => to_json(s),
            Document::Comparison(c) => to_json(c),
        }
    }
}
