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
    let exp = shipped("seed-002.toml");
    let w = allocation_warnings(&exp);
    let flagged: Vec<&str> =
        exp.workloads.iter().map(|w| w.label.as_str()).filter(|l| w.iter().any(|x| x.message.contains(&format!("'{l}'")))).collect();
    // The seed's sections are O_DIRECT into a laid-out file; YCSB C only
    // reads: the allocation settings cannot change what they do.
    let seed: Vec<String> =
        ["read", "write", "randread", "randwrite", "rw", "randrw", "write-fsync0", "write-fsync1", "randwrite-fsync0", "randwrite-fsync1"]
            .iter()
            .map(|s| format!("seed-{s}"))
            .collect();
    let want: Vec<&str> = seed.iter().map(String::as_str).chain(["ycsb-c"]).collect();
    assert_eq!(flagged, want, "{w:?}");
}

#[test]
fn no_allocation_warning_without_differing_allocation_settings() {
    assert!(allocation_warnings(&shipped("seed-000.toml")).is_empty());
}

#[test]
fn every_cell_and_repeat_is_planned_once() {
    let exp = shipped("seed-000.toml");
    let p = matrix(&exp, "ext4-ordered");
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
    for name in ["seed-001.toml", "seed-004.toml"] {
        let exp = shipped(name);
        if let Err(problems) = fsbench::runner::experiment::preflight(&exp, false, false) {
            let about_workloads: Vec<&String> = problems.iter().filter(|p| p.contains("workload")).collect();
            assert!(about_workloads.is_empty(), "{name}: {about_workloads:?}");
        }
    }
}

/// The block sizes of seed 003's figure, 4 KB to 16 MB, doubling.
const SEED_003_SIZES: [&str; 13] = ["4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1m", "2m", "4m", "8m", "16m"];

#[test]
fn seed_003_sweeps_the_seeds_block_sizes_on_a_raw_loop_device_and_a_file_on_ext2() {
    use fsbench::model::environment::{DeviceSource, TargetSpec};
    use fsbench::model::recipe::Placement;
    let exp = shipped("seed-003.toml");
    let loop_of = |spec: &TargetSpec| match spec {
        TargetSpec::ManagedDevice(DeviceSource::Loop { size, .. }) => Some(("raw".to_string(), *size)),
        TargetSpec::Managed { fs, device: DeviceSource::Loop { size, .. }, .. } => Some((fs.clone(), *size)),
        _ => None,
    };
    let kinds: Vec<_> = exp.targets.iter().map(|t| loop_of(&t.spec)).collect();
    let want_kinds: Vec<_> = ["raw", "ext2", "ext3", "ext4", "xfs", "btrfs"].iter().map(|k| Some((k.to_string(), 8u64 << 30))).collect();
    assert_eq!(kinds, want_kinds, "{:?}", exp.targets);
    // The sweep: the fill, then every size written and read, all fio jobs on raw and ext2.
    let mut want = vec!["fill".to_string()];
    for dir in ["write", "read"] {
        want.extend(SEED_003_SIZES.iter().map(|bs| format!("{dir}-{bs}")));
    }
    let exp_sweep: Vec<_> = exp.workloads.iter().filter(|w| w.family == "fio").collect();
    let labels: Vec<&str> = exp_sweep.iter().map(|w| w.label.as_str()).collect();
    assert_eq!(labels, want);
    assert!(exp_sweep.iter().all(|w| w.only.as_deref() == Some(&["raw".to_string(), "ext2".to_string()][..])));
    assert_eq!(matrix(&exp, "raw").len(), 27 * 5, "5 repeats of each sweep workload, cold, and no Bonnie++ on the raw device");
    assert_eq!(matrix(&exp, "ext2").len(), 28 * 5, "the sweep and Bonnie++");

    // Planned on the raw device, every job reads or writes the device itself;
    // on the file system, one file in the mount point. Each at its label's
    // block size: the same job name throughout, so the sizes make one line
    // per target and direction in the size chart.
    let dev = Path::new("/dev/loop-standin");
    let mnt = Path::new("/mnt/standin");
    for w in exp_sweep {
        // The fill writes in 1 MiB blocks.
        let (dir, bs) = w.label.split_once('-').unwrap_or((w.label.as_str(), "1m"));
        for (at, is_device) in [(dev, true), (mnt, false)] {
            let p = w.recipe.plan(&Placement { target: at.into(), is_device, params: &exp.params }).unwrap_or_else(|e| panic!("{e}"));
            let fsbench::model::Workload::Jobs(jobs) = &p.plan.workload else { panic!("{}: fio jobs", w.label) };
            let [j] = jobs.as_slice() else { panic!("{}: one job", w.label) };
            assert_eq!(j.name, dir, "{}", w.label);
            let size = |s: &str| fsbench::units::parse_size(s, 1024).unwrap();
            assert!(j.bs.iter().all(|b| *b == fsbench::model::job::BlockSize::Fixed(size(bs))), "{}: {:?}", w.label, j.bs);
            let want_file = if dir == "write" { "bvf-write.dat" } else { "bvf-read.dat" };
            let files = j.file_paths(0);
            let expected = if is_device { dev.to_path_buf() } else { mnt.join(want_file) };
            assert_eq!(files, vec![expected], "{} on {}", w.label, at.display());
            assert_eq!(j.size, Some(size(if dir == "write" { "32m" } else { "512m" })), "{}", w.label);
            assert!(!j.direct, "{}: the page cache, as the seed's read(2)/write(2)", w.label);
        }
    }
    // A quicker look is one --set away.
    let quick = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments/seed-003.toml"), &["rsize=128m".into()])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(quick.params["rsize"], "128m");

    if let Err(problems) = fsbench::runner::experiment::preflight(&exp, false, false) {
        let about_workloads: Vec<&String> = problems.iter().filter(|p| p.contains("workload")).collect();
        assert!(about_workloads.is_empty(), "{about_workloads:?}");
    }
}

#[test]
fn seed_003_runs_bonnie_on_every_file_system_fsbench_makes_the_unmountable_ones_commented_with_why() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments/seed-003.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let active = ["ext2", "ext3", "ext4", "xfs", "btrfs"];
    for fs in ["f2fs", "nilfs2", "jfs", "vfat"] {
        let at = text.find(&format!("# fs = \"{fs}\"")).unwrap_or_else(|| panic!("no commented-out {fs} target"));
        let before = &text[..at];
        let why = before[before.rfind("\n\n").unwrap()..].lines().find(|l| l.starts_with("# Not in this kernel")).map(str::to_string);
        assert!(why.is_some_and(|w| w.contains(fs)), "{fs}: the reason it is commented out");
    }
    for fs in active {
        assert!(text.contains(&format!("\nfs = \"{fs}\"")), "{fs} is an active target");
    }
    let exp = shipped("seed-003.toml");
    let bonnie: Vec<_> = exp.workloads.iter().filter(|w| w.family == "bonnie").collect();
    let [b] = bonnie.as_slice() else { panic!("one Bonnie++ workload: {:?}", exp.workloads) };
    let on: Vec<&str> = exp.targets.iter().map(|t| t.label.as_str()).filter(|t| b.runs_on(t)).collect();
    assert_eq!(on, active, "Bonnie++ on every file system, not on the raw device");
    assert_eq!(exp.repeat, 5);
    if let Err(problems) = fsbench::runner::experiment::preflight(&exp, false, false) {
        let about_workloads: Vec<&String> = problems.iter().filter(|p| p.contains("workload")).collect();
        assert!(about_workloads.is_empty(), "{about_workloads:?}");
    }
    // The seed's scale is one --set away.
    load(&file, &["bonnie_size=256".into(), "bonnie_ram=128".into(), "bonnie_files=16".into()]).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn every_shipped_workload_keeps_its_files_in_its_target() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert!(files.len() >= 5, "{files:?}");
    for f in files.iter().filter(|f| f.ends_with(".toml")) {
        let exp = shipped(f);
        // Targets this machine cannot set up are not this test's business.
        let problems = fsbench::runner::experiment::preflight(&exp, true, true).err().unwrap_or_default();
        let workload: Vec<&String> = problems.iter().filter(|p| p.starts_with("workload '")).collect();
        assert!(workload.is_empty(), "{f}: {workload:?}");
    }
}
