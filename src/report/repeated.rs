//! A repeated run (`--repeat`) as a table: per metric, mean ± sd, CV,
//! range and the 95% confidence interval of the mean.

use crate::report::format::{interval, num, pm};
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
        // One run has no spread: say so rather than print [x … x].
        if s.n < 2 {
            let _ = writeln!(t, "  {:<40} {:>14} (one run: no spread or interval)", m.metric, num(s.mean));
            continue;
        }
        let _ = writeln!(
            t,
            "  {:<40} {:>24}  CV {:>5.1}%  [{} … {}]  CI95 {}",
            m.metric,
            pm(s.mean, s.sd),
            s.cv * 100.0,
            num(s.min),
            num(s.max),
            interval(s)
        );
    }
    for w in warns {
        let _ = writeln!(t, "warning: {w}");
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testutil::simple;

    #[test]
    fn one_run_has_no_interval_and_two_have_one() {
        let one = Repeated::new(None, None, Vec::new(), Vec::new(), vec![simple(1000)]);
        let t = table(&one);
        let row = t.lines().find(|l| l.contains("x/read/iops")).unwrap();
        assert!(row.contains("one run: no spread or interval") && !row.contains("CI95"), "{row}");
        let two = Repeated::new(None, None, Vec::new(), Vec::new(), vec![simple(1000), simple(1100)]);
        let row = table(&two).lines().find(|l| l.contains("x/read/iops")).unwrap().to_string();
        assert!(row.contains("CI95 [") && row.contains("± "), "{row}");
    }
}
