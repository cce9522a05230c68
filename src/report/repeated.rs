//! A repeated run (`--repeat`) as a table: per metric, mean ± sd, CV,
//! range and the 95% confidence interval of the mean.

use crate::stats::repeated::Repeated;
use std::fmt::Write;

pub fn table(doc: &Repeated) -> String {
    let (summary, warns, n) = (&doc.summary, &doc.warnings, doc.complete_runs());
    let mut t = String::new();
    let failed = doc.failed_runs();
    if failed > 0 {
        let _ = writeln!(t, "{failed} of {} runs FAILED and are left out of every figure below", doc.runs.len());
    }
    let _ = writeln!(t, "{n} runs: mean ± sd, CV, [min … max], 95% confidence interval of the mean");
    for m in summary {
        let s = &m.summary;
        let _ = writeln!(
            t,
            "  {:<40} {:>14.2} ± {:<12.2} CV {:>5.1}%  [{:.2} … {:.2}]  CI95 [{:.2} … {:.2}]",
            m.metric,
            s.mean,
            s.sd,
            s.cv * 100.0,
            s.min,
            s.max,
            s.ci95_low,
            s.ci95_high
        );
    }
    for w in warns {
        let _ = writeln!(t, "warning: {w}");
    }
    t
}
