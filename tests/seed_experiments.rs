//! Each seed complete in one command (issue 32): one shipped experiment per
//! seed, `workloads/experiments/seed-000.toml` … `seed-004.toml`, each
//! naming its seed and checked before anything runs; seed 002 with every
//! fio pattern of the seed's job and its fsync series; seed 003's two
//! experiments in one, each part on its own targets (`targets = [...]`),
//! which a real run shows plans and runs exactly the cells that exist.

mod common;
use common::*;
use fsbench::frontend::experiment::{load, parse};
use fsbench::model::experiment::Experiment;
use fsbench::model::recipe::Placement;
use fsbench::runner::experiment::{matrix, preflight};
use std::path::{Path, PathBuf};

const SEEDS: [&str; 5] = ["000", "001", "002", "003", "004"];

fn seed_file(n: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("workloads/experiments/seed-{n}.toml"))
}

fn seed(n: &str) -> Experiment {
    load(&seed_file(n), &[]).unwrap_or_else(|e| panic!("seed-{n}.toml: {e}"))
}

#[test]
fn every_seed_has_its_experiment_named_for_it_and_checked_before_it_runs() {
    for n in SEEDS {
        assert!(seed_file(n).is_file(), "seed-{n}.toml is shipped");
        let exp = seed(n);
        assert!(exp.name.starts_with(&format!("seed-{n}")), "seed-{n}.toml is named for its seed: {}", exp.name);
        let d = exp.description.clone().unwrap_or_default();
        assert!(d.contains(&format!("seed {n}")), "seed-{n}.toml's description names its seed: {d}");
        assert!(!exp.workloads.is_empty() && !exp.targets.is_empty());
        // Every workload plans on every target it runs on; as root (loop
        // devices, mkfs, mount) the targets' own checks pass too.
        match preflight(&exp, false, false) {
            Ok(()) => {}
            Err(problems) if is_root() => panic!("seed-{n}.toml: {problems:?}"),
            Err(problems) => {
                let about_workloads: Vec<&String> = problems.iter().filter(|p| p.starts_with("workload '")).collect();
                assert!(about_workloads.is_empty(), "seed-{n}.toml: {about_workloads:?}");
                eprintln!("seed-{n}.toml: target checks need root, skipped: {problems:?}");
            }
        }
    }
    // The old names are gone: one file per seed, nothing else.
    let dir = seed_file("000").parent().unwrap().to_path_buf();
    let mut names: Vec<String> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, SEEDS.map(|n| format!("seed-{n}.toml")));
}

#[test]
fn the_seeds_loop_targets_are_big_enough_for_what_the_workloads_append() {
    use fsbench::model::environment::{DeviceSource, TargetSpec};
    for n in SEEDS {
        for t in &seed(n).targets {
            let size = match &t.spec {
                TargetSpec::Managed { device: DeviceSource::Loop { size, .. }, .. } => *size,
                TargetSpec::ManagedDevice(DeviceSource::Loop { size, .. }) => *size,
                other => panic!("seed-{n}.toml '{}': a loop device fsbench makes, not {other:?}", t.label),
            };
            assert_eq!(size, 8 << 30, "seed-{n}.toml '{}': 8 GiB sparse", t.label);
        }
    }
}

/// The fio jobs of `exp`'s workload `label`, planned on a directory.
fn fio_jobs(exp: &Experiment, label: &str) -> Vec<fsbench::model::job::JobSpec> {
    let w = exp.workloads.iter().find(|w| w.label == label).unwrap_or_else(|| panic!("no workload {label}"));
    let dir = tempfile::tempdir().unwrap();
    let at = Placement { target: dir.path().into(), is_device: false, params: &exp.params };
    let lowered = w.recipe.plan(&at).unwrap_or_else(|e| panic!("{e}"));
    let fsbench::model::Workload::Jobs(jobs) = lowered.plan.workload else { panic!("{label}: fio jobs") };
    jobs
}

#[test]
fn seed_002_runs_every_section_of_the_seeds_job_and_its_fsync_series() {
    let exp = seed("002");
    // One workload per section of the seed's job file, each picked with --section.
    let mut patterns = Vec::new();
    for w in exp.workloads.iter().filter(|w| w.family == "fio" && w.label.starts_with("seed-") && !w.label.contains("fsync")) {
        let jobs = fio_jobs(&exp, &w.label);
        let [j] = jobs.as_slice() else { panic!("{}: one section, got {}", w.label, jobs.len()) };
        assert_eq!(j.name, format!("{}-4k-para", j.rw.fio_name()), "{}: the seed's section", w.label);
        assert_eq!(w.label, format!("seed-{}", j.rw.fio_name()));
        assert!(j.direct && j.ioengine == "libaio" && j.fsync == 0, "{}: the seed's [global]", w.label);
        patterns.push(j.rw.fio_name());
    }
    assert_eq!(patterns, ["read", "write", "randread", "randwrite", "rw", "randrw"]);
    // The second series: sequential and random writes, fsync=0 and fsync=1.
    for (label, rw, fsync) in [
        ("seed-write-fsync0", "write", 0),
        ("seed-write-fsync1", "write", 1),
        ("seed-randwrite-fsync0", "randwrite", 0),
        ("seed-randwrite-fsync1", "randwrite", 1),
    ] {
        let jobs = fio_jobs(&exp, label);
        let [j] = jobs.as_slice() else { panic!("{label}: one section") };
        assert_eq!((j.rw.fio_name(), j.fsync), (rw, fsync), "{label}");
    }
    // Short runs by default: the whole seed stays well under half an hour.
    let runtime: u64 = exp.params["runtime"].parse().unwrap();
    assert!(runtime <= 10, "runtime {runtime}");
    assert!(exp.workloads.iter().any(|w| w.family == "filebench") && exp.workloads.iter().any(|w| w.family == "ycsb"));
}

#[test]
fn seed_003_holds_the_block_size_sweep_and_bonnie_each_on_its_own_targets() {
    let exp = seed("003");
    let labels: Vec<&str> = exp.targets.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["raw", "ext2", "ext3", "ext4", "xfs", "btrfs"]);
    for w in &exp.workloads {
        let on: Vec<&str> = labels.iter().copied().filter(|t| w.runs_on(t)).collect();
        match w.family {
            "fio" => assert_eq!(on, ["raw", "ext2"], "{}: the sweep, raw device against ext2", w.label),
            "bonnie" => assert_eq!(on, ["ext2", "ext3", "ext4", "xfs", "btrfs"], "{}: every file system", w.label),
            f => panic!("{}: unexpected family {f}", w.label),
        }
    }
    assert!(exp.workloads.iter().any(|w| w.family == "bonnie"));
    // The plan has exactly the cells that exist.
    let per_target: Vec<usize> = labels.iter().map(|t| matrix(&exp, t).len()).collect();
    let r = exp.repeat as usize;
    assert_eq!(per_target, [27 * r, 28 * r, r, r, r, r]);
    let bonnie_on_raw = matrix(&exp, "raw").iter().any(|p| p.cell.workload == "bonnie");
    assert!(!bonnie_on_raw);
}

#[test]
fn a_workload_naming_a_target_that_does_not_exist_is_a_located_error() {
    let text = "name = \"x\"\n[[target]]\nlabel = \"a\"\ndirectory = \"/tmp\"\n[[target]]\nlabel = \"b\"\ndirectory = \"/tmp\"\n\
                [[workload]]\nlabel = \"w\"\nargs = [\"--name=w\", \"--rw=read\", \"--size=1m\"]\ntargets = [\"nope\"]\n";
    let e = parse(text, Path::new("exp.toml"), &[]).unwrap_err();
    assert_eq!((e.line, e.col, e.key.as_deref()), (11, 11, Some("targets")), "{e}");
    assert!(e.message.contains("'nope'") && e.message.contains("a, b"), "{e}");
    assert!(e.to_string().starts_with("exp.toml:11:11: key 'targets': "), "{e}");
    // Through the command line too, before anything is created.
    let dir = disk_tempdir();
    let f = write_exp(dir.path(), text);
    let o = fsbench().args(["experiment", f.to_str().unwrap(), "--out", dir.path().join("out").to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(":11:11: key 'targets': no target 'nope'"), "{err}");
    assert!(!dir.path().join("out").exists(), "nothing was created");
}

#[test]
fn fio_section_picks_one_section_of_a_job_file() {
    let dir = disk_tempdir();
    let job = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/fio/seed-002-delalloc.fio");
    let file = dir.path().join("seedfile");
    let file_arg = format!("--filename={}", file.display());
    let v = fio_json(&[job, "--section=randrw-4k-para", "--size=8m", "--runtime=1", "--ramp_time=0", &file_arg]);
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 1, "only the section asked for");
    assert_eq!(jobs[0]["name"], "randrw-4k-para");
    assert!(op(&v, 0, "read")["ops"].as_u64().unwrap() > 0 && op(&v, 0, "write")["ops"].as_u64().unwrap() > 0, "randrw reads and writes");
    // A section the file does not have runs nothing, and says which it has.
    let o = fsbench().args(["fio", job, "--section=randrw", "--size=8m", &file_arg]).output().unwrap();
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--section=randrw: no such job section") && err.contains("randrw-4k-para"), "{err}");
}

#[test]
fn section_in_an_experiment_workload_needs_a_job_file() {
    let text = "name = \"x\"\n[[target]]\nlabel = \"a\"\ndirectory = \"/tmp\"\n\
                [[workload]]\nlabel = \"w\"\nargs = [\"--section=b\", \"--name=w\", \"--rw=read\", \"--size=1m\"]\n";
    let e = parse(text, Path::new("exp.toml"), &[]).unwrap_err();
    assert_eq!((e.line, e.key.as_deref()), (7, Some("args")), "{e}");
    assert!(e.message.contains("--section=b") && e.message.contains("fio = JOBFILE"), "{e}");
}

/// Two directory targets; "both" runs the job file's two sections on each,
/// "only-b" runs section b on the second target alone.
#[test]
fn a_workload_restricted_to_one_target_runs_there_only_and_the_experiment_is_complete() {
    let work = disk_tempdir();
    let (a, b) = (work.path().join("a"), work.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    std::fs::write(work.path().join("two.fio"), "[global]\nrw=write\nbs=64k\nsize=1m\nfilename=f\n[one]\n[two]\nstonewall\nrw=read\n")
        .unwrap();
    let text = format!(
        "name = \"sparse\"\nrepeat = 2\n\
         [[target]]\nlabel = \"first\"\ndirectory = \"{}\"\n\
         [[target]]\nlabel = \"second\"\ndirectory = \"{}\"\n\
         [[workload]]\nlabel = \"both\"\nfio = \"two.fio\"\n\
         [[workload]]\nlabel = \"only-b\"\nfio = \"two.fio\"\nargs = [\"--section=two\"]\ntargets = [\"second\"]\n",
        a.display(),
        b.display()
    );
    let exp_file = write_exp(work.path(), &text);
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp_file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("INCOMPLETE"), "the cells that do not exist are not missing: {err}");
    let want: Vec<String> = ["first__both__warm__none", "second__both__warm__none", "second__only-b__warm__none"]
        .iter()
        .flat_map(|c| [1, 2].map(|r| format!("{c}__r{r}.json")))
        .collect();
    let mut want = want;
    want.sort();
    assert_eq!(run_files(&out), want);
    let read =
        |f: &str| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(out.join("runs").join(f)).unwrap()).unwrap() };
    let names = |f: &str| -> Vec<String> {
        read(f)["result"]["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap().to_string()).collect()
    };
    assert_eq!(names("second__both__warm__none__r1.json"), ["one", "two"]);
    assert_eq!(names("second__only-b__warm__none__r1.json"), ["two"], "--section in the workload's args");
    // The plan and the summary count the runs that exist.
    let plan: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    assert_eq!(plan["runs"].as_array().unwrap().len(), 6);
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!((summary["planned"].as_u64(), summary["done"].as_u64(), summary["failed"].as_u64()), (Some(6), Some(6), Some(0)));
    // "both" compares second with first; "only-b" has nothing to compare.
    let comps = summary["factors"]["comparisons"].as_array().unwrap();
    assert!(!comps.is_empty());
    assert!(comps.iter().all(|c| c["workload"] == "both" && c["baseline"] == "first" && c["level"] == "second"), "{comps:?}");
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(report.contains("6 planned runs"), "{report}");
}

/// Seed 003's shape: one workload on the first two targets, another on the
/// last two. Each is compared against the first target it runs on, and the
/// targets table says which baseline each row has.
#[test]
fn workloads_on_overlapping_targets_are_each_compared_against_their_own_first_target() {
    let work = disk_tempdir();
    let dirs: Vec<PathBuf> = ["a", "b", "c"].iter().map(|d| work.path().join(d)).collect();
    let mut text = String::from("name = \"overlap\"\nrepeat = 2\n");
    for (label, d) in ["raw", "ext2", "xfs"].iter().zip(&dirs) {
        std::fs::create_dir(d).unwrap();
        text += &format!("[[target]]\nlabel = \"{label}\"\ndirectory = \"{}\"\n", d.display());
    }
    text += "[[workload]]\nlabel = \"sweep\"\nargs = [\"--name=w\", \"--rw=write\", \"--bs=64k\", \"--size=1m\"]\ntargets = [\"raw\", \"ext2\"]\n\
             [[workload]]\nlabel = \"survey\"\nargs = [\"--name=r\", \"--rw=write\", \"--bs=4k\", \"--size=1m\"]\ntargets = [\"ext2\", \"xfs\"]\n";
    let exp_file = write_exp(work.path(), &text);
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp_file.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(run_files(&out).len(), 8, "{:?}", run_files(&out));
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let mut pairs: Vec<(String, String, String)> = summary["factors"]["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["workload"].as_str().unwrap().into(), c["baseline"].as_str().unwrap().into(), c["level"].as_str().unwrap().into()))
        .collect();
    pairs.dedup();
    assert_eq!(pairs, [("sweep".into(), "raw".into(), "ext2".into()), ("survey".into(), "ext2".into(), "xfs".into())]);
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let at = report.find("## Targets against each workload's first target (seed 002)").unwrap_or_else(|| panic!("{report}"));
    let rows: Vec<Vec<&str>> = report[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| !l.starts_with("| :"))
        .map(|l| l.trim_matches('|').split('|').map(str::trim).collect())
        .collect();
    let col = |name: &str| rows[0].iter().position(|h| *h == name).unwrap_or_else(|| panic!("no {name} in {:?}", rows[0]));
    let got: Vec<(&str, &str, &str)> = rows[1..].iter().map(|r| (r[col("workload")], r[col("baseline")], r[col("target")])).collect();
    assert_eq!(got, [("sweep", "raw", "ext2"), ("survey", "ext2", "xfs")]);
}
