//! `fsbench experiment --check FILE`: read the experiment and run every
//! check that needs no set-up (the file, each target and workload planned
//! on each target, the space for what the workloads lay out and grow),
//! then print what would run. Nothing is formatted, mounted or written:
//! the answer to "will this file run, and how many runs is it?" before
//! committing the machine to it.

use super::experiment::ExperimentArgs;
use crate::frontend::experiment;
use crate::model::environment::{DeviceSource, TargetSpec};
use crate::model::experiment::Experiment;
use crate::units::bytes;
use std::fmt::Write;

/// Exit 0 with the plan on stdout, or 2 with every problem on stderr.
pub fn run(a: &ExperimentArgs) -> i32 {
    let Some(file) = a.file.as_deref() else {
        super::fail("fsbench experiment: error: --check needs the experiment FILE".to_string());
        return 2;
    };
    let exp = match experiment::load(file, &a.sets) {
        Ok(e) => e,
        Err(e) => {
            super::fail(format!("fsbench experiment: error: {e}"));
            return 2;
        }
    };
    if !super::experiment::checks_pass(&exp, &a.common) {
        eprintln!("fsbench: check failed; nothing was run or created");
        return 2;
    }
    print!("{}", plan_text(&exp));
    0
}

/// What would run, one fact per line (stdout is for machines too).
fn plan_text(exp: &Experiment) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "experiment: {}", exp.name);
    let _ = writeln!(t, "file: {}", exp.file.display());
    for x in &exp.targets {
        let _ = writeln!(t, "target: {} ({})", x.label, describe(&x.spec));
    }
    for w in &exp.workloads {
        let _ = writeln!(t, "workload: {} ({})", w.label, w.family);
    }
    let caches: Vec<String> = exp.caches.iter().map(|c| c.label()).collect();
    let _ = writeln!(t, "caches: {}", caches.join(", "));
    let backgrounds: Vec<String> = exp.backgrounds.iter().map(|b| b.as_ref().map_or("none".to_string(), |b| b.label.clone())).collect();
    let _ = writeln!(t, "backgrounds: {}", backgrounds.join(", "));
    let _ = writeln!(t, "repeats: {}", exp.repeat);
    // The recorded plan lists every run, so this counts what would run.
    let runs = crate::runner::experiment::record(exp, &[]).runs.len();
    let _ = writeln!(t, "runs: {runs}");
    for g in &exp.gaps {
        let _ = writeln!(t, "gap: {} | {} | {}", g.table, g.what, g.why);
    }
    t
}

fn describe(spec: &TargetSpec) -> String {
    let device = |d: &DeviceSource| match d {
        DeviceSource::Loop { dir, size } => format!("a {} loop device in {}", bytes(*size), dir.display()),
        DeviceSource::Zram { size } => format!("a {} zram device", bytes(*size)),
        DeviceSource::Device(p) => p.display().to_string(),
    };
    match spec {
        TargetSpec::Directory(d) => format!("directory {}", d.display()),
        TargetSpec::Device(d) => format!("raw device {}", d.display()),
        TargetSpec::ManagedDevice(d) => format!("raw, {}", device(d)),
        TargetSpec::Managed { fs, mount_options, device: d, .. } => {
            let opts = if mount_options.is_empty() { String::new() } else { format!(" -o {mount_options}") };
            format!("{fs}{opts} on {}", device(d))
        }
    }
}
