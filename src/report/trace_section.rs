//! A run's block trace as text: how it was captured, blkparse's summary
//! (as blkparse prints it) and the analysis's table (`report::trace`). Shown by `fsbench
//! trace` and under every layout's report when the run was traced.

use crate::report::blkparse::{self, Grouping};
use crate::result::trace::TraceReport;
use std::fmt::Write;

pub fn render(r: &TraceReport) -> String {
    let c = &r.capture;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "\nBlock trace of {} ({}): {} records, {} events lost, {:.3} s; files {}.blktrace.*",
        c.device,
        c.method,
        c.records,
        c.lost_events,
        c.duration_ns as f64 / 1e9,
        r.basename.display()
    );
    if let Some(m) = &c.act_mask {
        let _ = writeln!(t, "categories kept (blktrace -a): {m}");
    }
    if let Some(d) = &c.counters {
        let _ = writeln!(
            t,
            "counters only: {} reads ({} bytes), {} writes ({} bytes)",
            d.read_ios,
            d.read_bytes(),
            d.write_ios,
            d.write_bytes()
        );
    }
    if let Some(s) = &r.summary {
        t.push('\n');
        t.push_str(&blkparse::render(s, Grouping::of_this_machine()));
    }
    if let Some(a) = &r.analysis {
        t.push('\n');
        t.push_str(&crate::report::trace::render(a));
    }
    t
}
