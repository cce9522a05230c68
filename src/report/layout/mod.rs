//! Peer layouts: how a run is shown as text in the layout its tool's users
//! read. Each layout is one file and one entry of `LAYOUTS`; a run names
//! its layout (`RunResult::layout`), set by the frontend that planned it.
//! A layout renders only from the result (details included), never from
//! anything measured on the side.

pub mod bonnie;
pub mod filebench;
pub mod fio;
pub mod iozone;
pub mod postmark;
pub mod quick;
pub mod replay;
pub mod ycsb;

use crate::report::format::{bytes, thousands};
use crate::result::{GroupResult, JobResult, RunResult};
use std::fmt::Write;

/// A registered text layout.
pub struct Layout {
    pub name: &'static str,
    /// One line for `fsbench layouts` and the documentation.
    pub about: &'static str,
    pub render: fn(&RunResult) -> String,
    /// Files the tool writes besides its report (IOzone's `-b`), as
    /// (path, contents); the CLI writes them after the run.
    pub files: fn(&RunResult) -> Vec<(std::path::PathBuf, String)>,
    /// Charts of one or more runs of the same workload, as (file name,
    /// SVG), for `--charts DIR`.
    pub charts: fn(&[&RunResult]) -> Vec<(String, String)>,
}

/// For layouts whose tool writes nothing but its report.
pub fn no_files(_: &RunResult) -> Vec<(std::path::PathBuf, String)> {
    Vec::new()
}

/// For layouts without charts of their own.
pub fn no_charts(_: &[&RunResult]) -> Vec<(String, String)> {
    Vec::new()
}

/// Every layout fsbench can show a run in.
pub const LAYOUTS: &[Layout] = &[
    fio::LAYOUT,
    filebench::LAYOUT,
    quick::LAYOUT,
    postmark::LAYOUT,
    iozone::LAYOUT,
    bonnie::LAYOUT,
    ycsb::LAYOUT,
    replay::REPLAY,
    replay::SURFACE,
];

pub fn find(name: &str) -> Option<&'static Layout> {
    LAYOUTS.iter().find(|l| l.name == name)
}

/// The run in its own layout. A result naming a layout this version does
/// not have (written by a newer fsbench) is an error, not a guess.
pub fn render(r: &RunResult) -> Result<String, String> {
    match find(&r.layout) {
        Some(l) => {
            let mut text = (l.render)(r);
            if let Some(t) = &r.trace {
                text.push_str(&crate::report::trace_section::render(t));
            }
            Ok(text)
        }
        None => {
            let known: Vec<&str> = LAYOUTS.iter().map(|l| l.name).collect();
            Err(format!("the result asks for layout '{}', which this fsbench does not have (it has: {})", r.layout, known.join(", ")))
        }
    }
}

/// The common frame: a PARTIAL banner, then per group of jobs that ran
/// together each job as `job` shows it, then what the process and the
/// devices did during the group. Reporting groups that ran at the same
/// time (fio's new_group) each list their jobs and what those issued,
/// then share the group's figures.
pub fn by_group(r: &RunResult, job: fn(&mut String, &JobResult)) -> String {
    let mut s = String::new();
    if let Some(e) = &r.failed {
        let _ = writeln!(s, "*** FAILED: {e}; the figures below show what ran and are not a result ***\n");
    }
    if r.partial {
        let _ = writeln!(s, "*** PARTIAL RESULTS: the run was interrupted; figures cover what ran ***\n");
    }
    for g in &r.groups {
        let members: Vec<&JobResult> = r.jobs.iter().filter(|j| g.holds(j.group)).collect();
        for gid in g.ids() {
            let own: Vec<&JobResult> = members.iter().copied().filter(|j| j.group == gid).collect();
            for j in &own {
                job(&mut s, j);
            }
            if !g.ran_with.is_empty() {
                let others: Vec<String> = g.ids().filter(|&o| o != gid).map(|o| o.to_string()).collect();
                let _ = writeln!(s, "group {gid} (ran alongside group {}):", others.join(", "));
                issued(&mut s, &own);
                s.push('\n');
            }
        }
        group(&mut s, g, &members);
    }
    s
}

/// What `jobs` issued, summed.
fn issued(s: &mut String, jobs: &[&JobResult]) {
    let ((rn, rb), (wn, wb)) = jobs.iter().fold(((0, 0), (0, 0)), |((rn, rb), (wn, wb)), j| {
        let ((a, b), (c, d)) = j.issued();
        ((rn + a, rb + b), (wn + c, wb + d))
    });
    let _ = writeln!(
        s,
        "  issued by the jobs (measured window): read {} ios {}, write {} ios {}",
        thousands(rn),
        bytes(rb),
        thousands(wn),
        bytes(wb)
    );
}

pub fn group(s: &mut String, g: &GroupResult, jobs: &[&JobResult]) {
    let ops: u64 = jobs.iter().map(|j| j.counted_ops()).sum();
    let c = &g.cpu;
    let ids: Vec<String> = g.ids().map(|i| i.to_string()).collect();
    let _ = writeln!(
        s,
        "group {}: {:.2} s wall; fsbench CPU (whole process, incl. kernel I/O worker threads): user {:.2} s, system {:.2} s{}; context switches {} voluntary, {} involuntary",
        ids.join("+"),
        g.elapsed_ns as f64 / 1e9,
        c.user_s,
        c.system_s,
        if ops > 0 { format!(" = {:.2} µs CPU per op", c.us_per_op(ops)) } else { String::new() },
        thousands(c.voluntary_ctx_switches),
        thousands(c.involuntary_ctx_switches)
    );
    issued(s, jobs);
    let io = &g.process_io;
    let _ = writeln!(
        s,
        "  process I/O (/proc/self/io): {} read from storage, {} written to storage",
        bytes(io.read_bytes),
        bytes(io.write_bytes)
    );
    if g.devices.is_empty() {
        let _ = writeln!(s, "  device: none (the files are not on a block device, e.g. tmpfs)");
    }
    for d in &g.devices {
        let x = &d.delta;
        let util = d.util_pct.map(|u| format!(", util {u:.1}%")).unwrap_or_default();
        let _ = writeln!(
            s,
            "  device {} ({}): read {} ios {} ({} merged), write {} ios {} ({} merged), flush {}{util}",
            d.name,
            d.kind,
            thousands(x.read_ios),
            bytes(x.read_sectors * 512),
            thousands(x.read_merges),
            thousands(x.write_ios),
            bytes(x.write_sectors * 512),
            thousands(x.write_merges),
            thousands(x.flush_ios)
        );
        if let Some(n) = &d.note {
            let _ = writeln!(s, "    note: {n}");
        }
    }
    s.push('\n');
}
