//! Renders documents. A reporter never measures: everything comes from the
//! results and the statistics over them.
//!
//! - `layout`: a run as its tool's users read it (fio, Filebench, quick, ...)
//! - `export`: the output formats over every document (text, json, fio-json,
//!   csv, markdown)
//! - `repeated`, `compare`, `experiment`: the text tables of the other
//!   documents; `experiment` also writes an experiment's files and charts
//! - `chart`, `format`: SVG charts and number formatting; `heatmap`: IOzone's
//!   matrix and its comparison as SVG heat maps
//! - `trace`, `trace_charts`: a block trace's analysis as a text table and
//!   as SVG charts

pub mod blkparse;
pub mod chart;
pub mod compare;
pub mod design;
pub mod experiment;
pub mod experiment_iozone;
pub mod export;
pub mod format;
pub mod gaps;
pub mod heatmap;
pub mod layout;
pub mod repeated;
pub mod seed_tables;
pub mod trace;
pub mod trace_charts;
pub mod trace_section;
