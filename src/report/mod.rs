//! Renders results. A reporter never measures: everything comes from `RunResult`.

pub mod chart;
pub mod experiment;
pub mod filebench;
pub mod fio_json;
pub mod format;
pub mod json;
pub mod text;

use crate::result::RunResult;

/// The layouts `--output-format` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// Human summary.
    Normal,
    /// fsbench's versioned schema with everything measured.
    Json,
    /// fio's JSON layout, for tools that post-process fio output.
    FioJson,
}

pub fn render(result: &RunResult, format: OutputFormat) -> String {
    match format {
        OutputFormat::Normal => text::render(result),
        OutputFormat::Json => json::render(result),
        OutputFormat::FioJson => fio_json::render(result),
    }
}
