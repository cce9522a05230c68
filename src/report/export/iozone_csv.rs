//! `iozone-csv`: an IOzone run's matrix as one CSV table (RFC 4180), for
//! spreadsheets and plotting scripts: `file_kB,reclen_kB`, then one column
//! per IOzone column run, in the unit in force (`_kB_s`, `_ops_s` with
//! `-O`, `_us_op` with `-N`), one row per cell in run order; a cell a
//! column did not run is empty. In throughput mode, one row per child count
//! and test with IOzone's throughput figures in kB/s. Runs of other layouts
//! are refused.

use super::{unsupported, DocKind, Document, ExportError, Exporter};
use crate::model::iozone::Units;
use crate::report::layout::iozone::{cell_order, details, report_columns, value};
use crate::result::RunResult;
use std::fmt::Write;

pub struct IozoneCsv;

impl Exporter for IozoneCsv {
    fn name(&self) -> &'static str {
        "iozone-csv"
    }
    fn help(&self) -> &'static str {
        "an IOzone run's matrix as CSV: file_kB,reclen_kB and one column per IOzone column (throughput mode: one row per child count and test)"
    }
    fn kinds(&self) -> &'static [DocKind] {
        &[DocKind::Run]
    }
    fn render(&self, doc: &Document) -> Result<String, ExportError> {
        match doc {
            Document::Run(r) => matrix(r),
            _ => Err(unsupported(self, doc)),
        }
    }
}

/// The suffix of a column's name for the unit in force.
fn unit_suffix(u: Units) -> &'static str {
    match u {
        Units::KbPerSec => "kB_s",
        Units::OpsPerSec => "ops_s",
        Units::UsPerOp => "us_op",
    }
}

/// The CSV of an IOzone run, or why not.
pub fn matrix(r: &RunResult) -> Result<String, ExportError> {
    let Some(d) = details(r) else {
        return Err(ExportError(format!(
            "iozone-csv shows IOzone runs only; this run's layout is '{}' and it has no IOzone details (use csv for its metrics)",
            r.layout
        )));
    };
    let mut out = String::new();
    if !d.throughput.is_empty() {
        out.push_str("children,file_kB,reclen_kB,column,children_kB_s,parent_kB_s,min_kB_s,max_kB_s,avg_kB_s,min_xfer_kB\n");
        for t in &d.throughput {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{}",
                t.children,
                t.file_kb,
                t.rec_kb,
                t.column.name(),
                t.children_kb_s(),
                t.parent_kb_s,
                t.min_kb_s(),
                t.max_kb_s(),
                t.avg_kb_s(),
                t.min_xfer_kb()
            );
        }
        return Ok(out);
    }
    let cols = report_columns(&d);
    let suffix = unit_suffix(d.settings.units);
    out.push_str("file_kB,reclen_kB");
    for c in &cols {
        let _ = write!(out, ",{}_{suffix}", c.name());
    }
    out.push('\n');
    for (file, rec) in cell_order(&d) {
        let _ = write!(out, "{file},{rec}");
        for col in &cols {
            out.push(',');
            if let Some(c) = d.cells.iter().find(|c| c.file_kb == file && c.rec_kb == rec && c.column == *col) {
                let _ = write!(out, "{:.3}", value(c, d.settings.units));
            }
        }
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::iozone::Column;
    use crate::report::layout::iozone::tests::{as_run, auto_2x2, fig};

    #[test]
    fn one_row_per_cell_one_column_per_iozone_column() {
        let mut d = auto_2x2();
        // -+n on the 128 kB file: its rewrite and reread are empty.
        d.cells.retain(|c| !(c.file_kb == 128 && matches!(c.column, Column::Rewrite | Column::Reread)));
        let out = IozoneCsv.render(&Document::Run(&as_run(&d))).unwrap();
        let want = "file_kB,reclen_kB,write_kB_s,rewrite_kB_s,read_kB_s,reread_kB_s\n\
            64,4,1000000.000,2000000.000,3000000.000,4000000.000\n\
            64,8,1100000.000,2100000.000,3100000.000,4100000.000\n\
            128,4,1200000.000,,3200000.000,\n\
            128,8,1300000.000,,3300000.000,\n";
        assert_eq!(out, want);
        d.settings.units = Units::OpsPerSec;
        d.cells = vec![fig(64, 4, Column::Write, 1000)];
        let out = matrix(&as_run(&d)).unwrap();
        assert!(out.starts_with("file_kB,reclen_kB,write_ops_s,rewrite_ops_s,read_ops_s,reread_ops_s\n64,4,250.000,,,\n"), "{out}");
    }

    #[test]
    fn other_runs_and_documents_are_refused() {
        let e = matrix(&crate::result::testutil::simple(10)).unwrap_err();
        assert!(e.0.contains("IOzone runs only") && e.0.contains("'fio'"), "{e}");
        let e = super::super::for_kind("iozone-csv", DocKind::Comparison).err().unwrap();
        assert!(e.contains("cannot show a comparison"), "{e}");
    }
}
