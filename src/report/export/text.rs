//! Human text: a run in its tool's layout, the tables of the other
//! documents.

use super::{DocKind, Document, ExportError, Exporter};

pub struct Text;

impl Exporter for Text {
    fn name(&self) -> &'static str {
        "text"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["normal"]
    }
    fn help(&self) -> &'static str {
        "human summary; a run in its tool's layout (fio, Filebench, ...)"
    }
    fn kinds(&self) -> &'static [DocKind] {
        &DocKind::ALL
    }
    fn render(&self, doc: &Document) -> Result<String, ExportError> {
        Ok(match doc {
            Document::Run(r) => crate::report::layout::render(r).map_err(ExportError)?,
            Document::Repeated(r) => crate::report::repeated::table(r),
            Document::Experiment(s) => crate::report::experiment::report(s),
            Document::Comparison(c) => crate::report::compare::table(c),
        })
    }
}
