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
    // YCSB C only reads: the allocation settings cannot change what it does.
    assert_eq!(flagged, vec!["seed-job", "seed-write-fsync1", "ycsb-c"], "{w:?}");
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

/// The block sizes of seed 003's figure, 4 KB to 16 MB, doubling.
const SEED_003_SIZES: [&str; 13] = ["4k", "8k", "16k", "32k", "64k", "128k", "256k", "512k", "1m", "2m", "4m", "8m", "16m"];

#[test]
fn blockdev_vs_fs_sweeps_the_seeds_block_sizes_on_a_raw_loop_device_and_a_file_on_ext2() {
    use fsbench::model::environment::{DeviceSource, TargetSpec};
    use fsbench::model::recipe::Placement;
    let exp = shipped("blockdev-vs-fs.toml");
    let loop_of = |spec: &TargetSpec| match spec {
        TargetSpec::ManagedDevice(DeviceSource::Loop { size, .. }) => Some(("raw", *size)),
        TargetSpec::Managed { fs, device: DeviceSource::Loop { size, .. }, .. } if fs == "ext2" => Some(("ext2", *size)),
        _ => None,
    };
    let kinds: Vec<_> = exp.targets.iter().map(|t| loop_of(&t.spec)).collect();
    assert_eq!(kinds, vec![Some(("raw", 1 << 30)), Some(("ext2", 1 << 30))], "{:?}", exp.targets);
    // One matrix: the fill, then every size written and read, all fio jobs.
    let mut want = vec!["fill".to_string()];
    for dir in ["write", "read"] {
        want.extend(SEED_003_SIZES.iter().map(|bs| format!("{dir}-{bs}")));
    }
    let labels: Vec<&str> = exp.workloads.iter().map(|w| w.label.as_str()).collect();
    assert_eq!(labels, want);
    assert!(exp.workloads.iter().all(|w| w.family == "fio"));
    assert_eq!(matrix(&exp, "raw").len(), 27 * 5, "5 repeats of each workload, cold");

    // Planned on the raw device, every job reads or writes the device itself;
    // on the file system, one file in the mount point. Each at its label's
    // block size: the same job name throughout, so the sizes make one line
    // per target and direction in the size chart.
    let dev = Path::new("/dev/loop-standin");
    let mnt = Path::new("/mnt/standin");
    for w in &exp.workloads {
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
    let quick = load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments/blockdev-vs-fs.toml"), &["rsize=128m".into()])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(quick.params["rsize"], "128m");

    if let Err(problems) = fsbench::runner::experiment::preflight(&exp, false, false) {
        let about_workloads: Vec<&String> = problems.iter().filter(|p| p.contains("workload")).collect();
        assert!(about_workloads.is_empty(), "{about_workloads:?}");
    }
}

#[test]
fn bonnie_filesystems_has_every_file_system_fsbench_makes_the_unmountable_ones_commented_with_why() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments/bonnie-filesystems.toml");
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
    let exp = shipped("bonnie-filesystems.toml");
    let labels: Vec<&str> = exp.targets.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, active);
    assert!(exp.workloads.iter().all(|w| w.family == "bonnie"), "{:?}", exp.workloads);
    assert_eq!(exp.repeat, 3);
    if let Err(problems) = fsbench::runner::experiment::preflight(&exp, false, false) {
        let about_workloads: Vec<&String> = problems.iter().filter(|p| p.contains("workload")).collect();
        assert!(about_workloads.is_empty(), "{about_workloads:?}");
    }
    // The seed's scale is one --set away.
    load(&file, &["size=256".into(), "ram=128".into(), "files=16".into()]).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn every_shipped_workload_keeps_its_files_in_its_target() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments");
    let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    for f in files.iter().filter(|f| f.ends_with(".toml")) {
        let exp = shipped(f);
        // Targets this machine cannot set up are not this test's business.
        let problems = fsbench::runner::experiment::preflight(&exp, true, true).err().unwrap_or_default();
        let workload: Vec<&String> = problems.iter().filter(|p| p.starts_with("workload '")).collect();
        assert!(workload.is_empty(), "{f}: {workload:?}");
    }
}
