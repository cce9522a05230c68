//! The shipped experiments planned without running them: every cell and
//! repeat once, and the allocation warning only where a workload cannot
//! allocate (checked through the workloads' recipes, whatever their tool).

use fsbench::frontend::experiment::load;
use fsbench::runner::experiment::{allocation_warnings, matrix, run_file_name};
use std::path::Path;

fn shipped(name: &str) -> fsbench::model::experiment::Experiment {
    let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments").join(name);
    load(&f, &[]).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn delalloc_study_flags_only_the_non_allocating_workloads() {
    let exp = shipped("delalloc.toml");
    let w = allocation_warnings(&exp);
    let flagged: Vec<&str> =
        exp.workloads.iter().map(|w| w.label.as_str()).filter(|l| w.iter().any(|x| x.contains(&format!("'{l}'")))).collect();
    assert_eq!(flagged, vec!["seed-job", "seed-write-fsync1"], "{w:?}");
}

#[test]
fn no_allocation_warning_without_differing_allocation_settings() {
    assert!(allocation_warnings(&shipped("environment.toml")).is_empty());
}

#[test]
fn every_cell_and_repeat_is_planned_once() {
    let exp = shipped("environment.toml");
    let p = matrix(&exp, "t");
    assert_eq!(exp.workloads.len(), 4);
    assert_eq!(p.len(), exp.workloads.len() * 3 * 3 * 3);
    let names: std::collections::HashSet<String> = p.iter().map(|x| run_file_name(&x.cell, x.repeat)).collect();
    assert_eq!(names.len(), p.len());
    assert!(exp.workloads.iter().all(|w| w.family == "filebench"), "the environment study runs personalities");
}

#[test]
fn the_iozone_experiments_pass_the_check_made_before_anything_runs() {
    // `-U ${target}` names the file system the experiment mounts itself:
    // the check before the run must not demand a mount point yet.
    for name in ["iozone-sweep.toml", "iozone-filesystems.toml"] {
        let exp = shipped(name);
        if let Err(problems) = fsbench::runner::experiment::preflight(&exp, false, false) {
            let about_workloads: Vec<&String> = problems.iter().filter(|p| p.contains("workload")).collect();
            assert!(about_workloads.is_empty(), "{name}: {about_workloads:?}");
        }
    }
}
