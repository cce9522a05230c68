//! `fsbench compare A B`: per metric, B against A (the baseline): the
//! relative difference of the means with its 95% confidence interval and
//! Welch's t-test.
//!
//! A and B are each a result file (`fsbench fio ... --output-format=json`,
//! or an experiment's run file), a directory of them (`*.json`, e.g. the
//! repeats of one setup), or one matrix cell of an experiment written as
//! `RESULTS_DIR::target__workload__cache__background`. Only
//! metrics present in every run of both sides are compared; their p-values
//! are adjusted (Holm) for the number of tests, and the settings the two
//! sides ran with are compared too.
//!
//! Exit status: 0 when the comparison was made (whatever it found), 2 when
//! an input cannot be used (the message names the file).

use crate::report::export::{DocKind, Document};
use crate::result::load::{load_side, Side};
use crate::result::warning::{Code, Warning};
use crate::stats::compare::{compare_sides, SideInfo};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Baseline: a result file (`fsbench fio|filebench ... --output-format=json`,
    /// with or without --repeat, or an experiment run), a directory of them,
    /// or an experiment cell
    /// `RESULTS_DIR::target__workload__cache__background`.
    pub a: PathBuf,
    /// What to compare with the baseline: same forms as A.
    pub b: PathBuf,
    /// Only metrics whose name contains this text (e.g. `iops`, `lat_p99`, `x/read/`).
    #[arg(long)]
    pub metric: Option<String>,
    /// Output format: a table (text), the comparisons as JSON, CSV or Markdown.
    #[arg(long, default_value = "text", value_parser = crate::report::export::FormatsParser)]
    pub output_format: String,
    /// Write charts of B against A into DIR: for IOzone results, a heat map
    /// per column of (B-A)/A over file size and record size, cells not
    /// significant at 5% drawn neutral.
    #[arg(long, value_name = "DIR")]
    pub charts: Option<PathBuf>,
}

pub fn run(a: CompareArgs) -> i32 {
    let exporter = match super::exporter_for("compare", &a.output_format, DocKind::Comparison) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if let Err(code) = super::check_outputs("compare", &a.charts.iter().map(|d| ("--charts".to_string(), d.clone())).collect::<Vec<_>>()) {
        return code;
    }
    let sides = load_side(&a.a).and_then(|sa| load_side(&a.b).map(|sb| (sa, sb)));
    let (mut sa, mut sb) = match sides {
        Ok(s) => s,
        Err(e) => {
            super::fail(format!("fsbench compare: {e}"));
            return 2;
        }
    };
    // Failed runs are not data; interrupted ones cover what ran.
    let mut early = Vec::new();
    for (label, side) in [("A", &mut sa), ("B", &mut sb)] {
        for (f, r) in side.files.iter().zip(&side.runs) {
            if r.partial {
                early.push(Warning::new(Code::PartialRun, format!("{label}: {} was interrupted; its figures cover what ran", f.display())));
            }
            if let Some(e) = &r.failed {
                early.push(Warning::new(Code::RunFailed, format!("{label}: {} FAILED ({e}): left out", f.display())));
            }
        }
        side.runs.retain(|r| r.failed.is_none());
        if side.runs.is_empty() {
            for w in &early {
                eprintln!("fsbench compare: {}", w.line());
            }
            super::fail(format!("fsbench compare: {label} ({}): every run FAILED; nothing to compare", side.path.display()));
            return 2;
        }
    }
    let info = |s: &Side| SideInfo { path: s.path.display().to_string(), runs: s.runs.len() };
    let mut doc = match compare_sides((info(&sa), &sa.runs), (info(&sb), &sb.runs), a.metric.as_deref()) {
        Ok(d) => d,
        Err(e) => {
            super::fail(format!("fsbench compare: {e}"));
            return 2;
        }
    };
    // emit_doc shows them on stderr in every format; JSON has them in `warnings` too.
    doc.warnings.splice(0..0, early);
    if let Some(dir) = &a.charts {
        if !sa.runs.iter().chain(&sb.runs).all(|r| r.layout == "iozone") {
            super::fail("fsbench compare: --charts: only IOzone results have comparison charts (heat maps) so far".to_string());
            return 2;
        }
        match crate::report::heatmap::write_iozone_compare_heatmaps(&sa.runs, &sb.runs, dir) {
            Ok(paths) => paths.iter().for_each(|p| eprintln!("fsbench compare: wrote {}", p.display())),
            Err(e) => {
                super::fail(format!("fsbench compare: --charts {}: {e}", dir.display()));
                return 1;
            }
        }
    }
    match super::emit_doc(&exporter, &Document::Comparison(&doc), &None) {
        Ok(()) => 0,
        Err(code) => code,
    }
}
