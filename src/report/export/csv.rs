//! CSV (RFC 4180), one table per document, for spreadsheets and plotting
//! scripts. Metric names carry their units.

use super::{DocKind, Document, ExportError, Exporter};
use crate::stats::compare::ComparisonDoc;
use crate::stats::experiment::ExperimentSummary;
use crate::stats::metrics::metrics;
use crate::stats::repeated::Repeated;
use crate::stats::Summary;
use std::fmt::Write;

pub struct Csv;

impl Exporter for Csv {
    fn name(&self) -> &'static str {
        "csv"
    }
    fn help(&self) -> &'static str {
        "one CSV table: a run's metrics, a repeated run's or experiment's statistics per metric, a comparison per metric"
    }
    fn kinds(&self) -> &'static [DocKind] {
        &DocKind::ALL
    }
    fn render(&self, doc: &Document) -> Result<String, ExportError> {
        Ok(match doc {
            Document::Run(r) => {
                let mut out = String::from("metric,value\n");
                for (m, v) in metrics(r) {
                    let _ = writeln!(out, "{},{v}", field(&m));
                }
                out
            }
            Document::Repeated(r) => repeated(r),
            Document::Experiment(s) => experiment(s),
            Document::Comparison(c) => comparison(c),
        })
    }
}

/// RFC 4180 quoting where needed.
pub fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The statistics of a metric. `ci95_clamped` is true where the interval's
/// lower end was cut at 0 (a quantity that is never negative), as the
/// tables mark it.
const STATS: &str = "n,mean,sd,cv,min,max,median,ci95_low,ci95_high,ci95_clamped";

fn stats(x: &Summary) -> String {
    format!("{},{},{},{},{},{},{},{},{},{}", x.n, x.mean, x.sd, x.cv, x.min, x.max, x.median, x.ci95_low, x.ci95_high, x.ci95_clamped)
}

fn repeated(r: &Repeated) -> String {
    let mut out = format!("metric,{STATS}\n");
    for m in &r.summary {
        let _ = writeln!(out, "{},{}", field(&m.metric), stats(&m.summary));
    }
    out
}

fn comparison(c: &ComparisonDoc) -> String {
    let mut out = String::from(
        "metric,a_n,a_mean,a_sd,b_n,b_mean,b_sd,diff,rel_diff,rel_ci95_low,rel_ci95_high,welch_t,df,p_value,p_holm,significant\n",
    );
    for x in &c.comparisons {
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            field(&x.metric),
            x.a.n,
            x.a.mean,
            x.a.sd,
            x.b.n,
            x.b.mean,
            x.b.sd,
            x.diff,
            x.rel_diff,
            x.rel_ci_low,
            x.rel_ci_high,
            x.welch_t,
            x.df,
            x.p_value,
            x.p_adjusted,
            x.significant
        );
    }
    out
}

/// One row per cell and metric (summary.csv).
pub fn experiment(s: &ExperimentSummary) -> String {
    let mut out = format!("target,workload,cache,background,metric,{STATS}\n");
    for c in &s.cells {
        let cell = [&c.cell.target, &c.cell.workload, &c.cell.cache, &c.cell.background].map(|f| field(f)).join(",");
        for (m, x) in &c.metrics {
            let _ = writeln!(out, "{cell},{},{}", field(m), stats(x));
        }
    }
    out
}
