//! Exporters: the output formats, over every document fsbench writes (a
//! run, a repeated run, an experiment summary, a comparison). Each format
//! is one file and one entry of `EXPORTERS`; `--output-format`'s values and
//! help come from the table, and a format that cannot show a command's
//! document is refused before anything runs (`for_kind`).

pub mod csv;
pub mod fio_json;
pub mod fio_terse;
pub mod iozone_csv;
pub mod json;
pub mod markdown;
pub mod text;

use crate::result::warning::Warning;
use crate::result::RunResult;
use crate::stats::compare::ComparisonDoc;
use crate::stats::experiment::ExperimentSummary;
use crate::stats::repeated::Repeated;
use std::fmt;

/// What a command produces.
pub enum Document<'a> {
    Run(&'a RunResult),
    Repeated(&'a Repeated),
    Experiment(&'a ExperimentSummary),
    Comparison(&'a ComparisonDoc),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DocKind {
    Run,
    Repeated,
    Experiment,
    Comparison,
}

impl DocKind {
    pub const ALL: [DocKind; 4] = [DocKind::Run, DocKind::Repeated, DocKind::Experiment, DocKind::Comparison];

    /// For messages: "cannot show a comparison".
    pub fn noun(self) -> &'static str {
        match self {
            DocKind::Run => "a single run",
            DocKind::Repeated => "a repeated run (--repeat)",
            DocKind::Experiment => "an experiment summary",
            DocKind::Comparison => "a comparison",
        }
    }
}

impl Document<'_> {
    pub fn kind(&self) -> DocKind {
        match self {
            Document::Run(_) => DocKind::Run,
            Document::Repeated(_) => DocKind::Repeated,
            Document::Experiment(_) => DocKind::Experiment,
            Document::Comparison(_) => DocKind::Comparison,
        }
    }

    /// Every warning the document carries, for stderr: a reader of JSON or
    /// of a file must not be the only one to learn of them.
    pub fn warnings(&self) -> Vec<Warning> {
        match self {
            Document::Run(r) => r.warnings.clone(),
            Document::Repeated(d) => d.runs.iter().flat_map(|r| r.warnings.iter().cloned()).chain(d.warnings.iter().cloned()).collect(),
            Document::Experiment(s) => s.warnings.clone(),
            Document::Comparison(c) => c.warnings.iter().cloned().chain(c.no_spread_notice()).collect(),
        }
    }
}

/// A document an exporter could not render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportError(pub String);

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ExportError {}

/// An output format.
pub trait Exporter: Sync {
    fn name(&self) -> &'static str;
    /// Other names accepted for it (kept for old command lines).
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// One line for `--output-format`'s help.
    fn help(&self) -> &'static str;
    /// The documents it can show.
    fn kinds(&self) -> &'static [DocKind];
    fn render(&self, doc: &Document) -> Result<String, ExportError>;
}

/// Every output format, the default first.
pub static EXPORTERS: &[&dyn Exporter] = &[
    &text::Text,
    &json::Json,
    &fio_json::FioJson,
    &fio_json::FioJsonPlus,
    &fio_terse::FioTerse,
    &csv::Csv,
    &markdown::Markdown,
    &iozone_csv::IozoneCsv,
];

pub fn find(name: &str) -> Option<&'static dyn Exporter> {
    EXPORTERS.iter().copied().find(|e| e.name() == name || e.aliases().contains(&name))
}

/// The exporter for `--output-format NAME` on a command that produces
/// `kind`, or why not (naming the formats that can show it).
pub fn for_kind(name: &str, kind: DocKind) -> Result<&'static dyn Exporter, String> {
    let e = find(name).ok_or_else(|| {
        let all: Vec<&str> = EXPORTERS.iter().map(|e| e.name()).collect();
        format!("--output-format {name}: no such format (have: {})", all.join(", "))
    })?;
    if e.kinds().contains(&kind) {
        return Ok(e);
    }
    let can: Vec<&str> = EXPORTERS.iter().filter(|x| x.kinds().contains(&kind)).map(|x| x.name()).collect();
    Err(format!("--output-format {name} cannot show {}; formats that can: {}", kind.noun(), can.join(", ")))
}

/// The formats of one `--output-format` value: one name, or several
/// separated by commas (`normal,json`, as fio allows). Every document is
/// written in each of them, text last, as fio writes its normal output
/// after its JSON.
pub struct Formats {
    list: Vec<&'static dyn Exporter>,
}

impl Formats {
    /// Human text only: listings may then share stdout with the report.
    pub fn is_text(&self) -> bool {
        self.list.iter().all(|e| e.name() == "text")
    }
    pub fn names(&self) -> Vec<&'static str> {
        self.list.iter().map(|e| e.name()).collect()
    }
    /// The document in every format, one after the other.
    pub fn render(&self, doc: &Document) -> Result<String, ExportError> {
        let mut out = String::new();
        for e in &self.list {
            out.push_str(&e.render(doc)?);
        }
        Ok(out)
    }
}

/// The formats of a (comma-separated) `--output-format` value on a command
/// that produces `kind`, or why not.
pub fn formats_for(names: &str, kind: DocKind) -> Result<Formats, String> {
    let mut list: Vec<&'static dyn Exporter> = Vec::new();
    for name in names.split(',').map(str::trim) {
        let e = for_kind(name, kind)?;
        if !list.iter().any(|x| x.name() == e.name()) {
            list.push(e);
        }
    }
    // Stable: the machine-readable formats keep their order.
    list.sort_by_key(|e| e.name() == "text");
    Ok(Formats { list })
}

/// Render `doc` in format `name`.
pub fn render(name: &str, doc: &Document) -> Result<String, ExportError> {
    let e = for_kind(name, doc.kind()).map_err(ExportError)?;
    e.render(doc)
}

/// `--output-format`'s accepted values, with their help, from the table.
pub fn value_parser() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        EXPORTERS.iter().map(|e| clap::builder::PossibleValue::new(e.name()).aliases(e.aliases()).help(e.help())),
    )
}

/// `--output-format`'s parser: a format, or several separated by commas,
/// each checked against the table (its possible values show in --help).
#[derive(Clone)]
pub struct FormatsParser;

impl clap::builder::TypedValueParser for FormatsParser {
    type Value = String;
    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<String, clap::Error> {
        let one = value_parser();
        let text = value.to_string_lossy();
        for name in text.split(',') {
            one.parse_ref(cmd, arg, std::ffi::OsStr::new(name.trim()))?;
        }
        Ok(text.into_owned())
    }
    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(EXPORTERS.iter().map(|e| clap::builder::PossibleValue::new(e.name()).aliases(e.aliases()).help(e.help()))))
    }
}

/// The error every exporter gives for a document outside its `kinds`.
fn unsupported(e: &dyn Exporter, doc: &Document) -> ExportError {
    ExportError(format!("{} cannot show {}", e.name(), doc.kind().noun()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testutil::simple;

    #[test]
    fn names_are_unique_and_every_document_has_a_format_besides_json() {
        let mut names: Vec<&str> = EXPORTERS.iter().flat_map(|e| std::iter::once(e.name()).chain(e.aliases().iter().copied())).collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "an exporter name or alias is used twice");
        for k in DocKind::ALL {
            let can: Vec<&str> = EXPORTERS.iter().filter(|e| e.kinds().contains(&k)).map(|e| e.name()).collect();
            for f in ["text", "json", "csv", "markdown"] {
                assert!(can.contains(&f), "{f} must show {}", k.noun());
            }
        }
    }

    #[test]
    fn refusal_names_the_formats_that_can() {
        let e = for_kind("fio-json", DocKind::Comparison).err().unwrap();
        assert!(e.contains("cannot show a comparison") && e.contains("text, json, csv, markdown"), "{e}");
        assert!(for_kind("yaml", DocKind::Run).err().unwrap().contains("no such format"));
        assert_eq!(for_kind("normal", DocKind::Run).unwrap().name(), "text");
    }

    #[test]
    fn several_formats_render_in_turn_text_last() {
        let r = simple(1000);
        let f = formats_for("normal,fio-json, json+ ,fio-json", DocKind::Run).unwrap();
        assert_eq!(f.names(), ["fio-json", "fio-json+", "text"]);
        assert!(!f.is_text());
        let out = f.render(&Document::Run(&r)).unwrap();
        let text = text::Text.render(&Document::Run(&r)).unwrap();
        assert!(out.starts_with('{') && out.ends_with(&text), "{out}");
        assert_eq!(out.matches("\"fio version\"").count(), 2);
        assert!(formats_for("text,yaml", DocKind::Run).err().unwrap().contains("yaml"));
        assert!(formats_for("text,fio-json", DocKind::Comparison).err().unwrap().contains("cannot show a comparison"));
    }

    #[test]
    fn every_format_renders_a_run() {
        let r = simple(1000);
        for e in EXPORTERS {
            // A tool's own matrix refuses the runs of other tools.
            if e.name() == "iozone-csv" {
                assert!(e.render(&Document::Run(&r)).is_err());
                continue;
            }
            let out = e.render(&Document::Run(&r)).unwrap_or_else(|err| panic!("{}: {err}", e.name()));
            assert!(out.ends_with('\n') && out.len() > 20, "{}: {out}", e.name());
        }
    }
}
