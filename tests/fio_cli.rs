//! fio's command line as people type it (one dash, values as the next word,
//! fio's own flags), and every problem of a job file reported in one run.

mod common;

use common::*;
use serde_json::Value;
use std::path::Path;

fn run(args: &[&str], cwd: &Path) -> std::process::Output {
    fsbench().current_dir(cwd).arg("fio").args(args).output().expect("fsbench runs")
}

fn json(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "fsbench failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn single_dash_options_and_values_as_the_next_word() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // `30` and `job` would be job files if values were not taken as fio takes them.
    let out = run(
        &[
            "-name",
            "job",
            "-rw",
            "write",
            "-size",
            "1m",
            "-bs",
            "64k",
            "-directory",
            d,
            "-runtime",
            "30",
            "-output-format=json",
            "-eta",
            "never",
        ],
        dir.path(),
    );
    let v = json(&out);
    let w = op(&v, 0, "write");
    assert_eq!((w["ops"].as_u64(), w["bytes"].as_u64()), (Some(16), Some(1 << 20)), "{w}");
    assert_eq!(v["jobs"][0]["name"], "job");
    assert_eq!(std::fs::metadata(dir.path().join("job.0.0")).unwrap().len(), 1 << 20);
}

#[test]
fn several_names_on_one_line_make_several_jobs() {
    let dir = tempfile::tempdir().unwrap();
    let d = format!("--directory={}", dir.path().display());
    let out = run(
        &["--rw=write", "--size=256k", &d, "--name", "a", "--name", "b", "--bs", "128k", "--output-format=json", "--no-progress"],
        dir.path(),
    );
    let v = json(&out);
    assert_eq!(v["jobs"].as_array().unwrap().len(), 2);
    assert_eq!(op(&v, 0, "write")["ops"], 64, "job a keeps the default 4k blocks");
    assert_eq!(op(&v, 1, "write")["ops"], 2, "--bs after --name b belongs to b");
}

#[test]
fn every_problem_of_a_job_file_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("bad.fio");
    std::fs::write(&job, "[global]\nrw=sideways\n\n[a]\niodepht=4\nbs=4q\nnuma_cpu_nodes=0\n\n[b]\nsize=1m\ndirect=maybe\n").unwrap();
    let out = run(&[job.to_str().unwrap(), "--no-progress"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert_no_document(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let f = job.display().to_string();
    for want in [
        format!("{f}:2:4: [global]: option 'rw': expected one of"),
        format!("{f}:5:1: [a]: option 'iodepht': not a fio option; did you mean 'iodepth'?"),
        format!("{f}:6:4: [a]: option 'bs': expected"),
        format!("{f}:7:1: [a]: option 'numa_cpu_nodes': fio option not supported by fsbench (yet)"),
        format!("{f}:11:8: [b]: option 'direct': expected"),
    ] {
        assert!(err.contains(&want), "missing '{want}' in:\n{err}");
    }
    assert!(err.contains("--ignore-unknown"), "the unsupported option points at --ignore-unknown:\n{err}");
    assert!(std::fs::read_dir(dir.path()).unwrap().count() == 1, "nothing was laid out");
}

#[test]
fn ignore_unknown_runs_without_a_real_fio_option() {
    let dir = tempfile::tempdir().unwrap();
    let d = format!("--directory={}", dir.path().display());
    let out = run(
        &["--name=x", "--rw=write", "--size=64k", &d, "--numa_cpu_nodes=0", "--ignore-unknown", "--output-format=json", "--no-progress"],
        dir.path(),
    );
    let v = json(&out);
    assert_eq!(op(&v, 0, "write")["bytes"], 65536);
    assert!(String::from_utf8_lossy(&out.stderr).contains("numa_cpu_nodes"), "warned");
}

#[test]
fn section_parse_only_readonly_and_unsupported_flags() {
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("two.fio");
    std::fs::write(&job, format!("[global]\ndirectory={}\nsize=128k\n[w]\nrw=write\n[r]\nrw=read\n", dir.path().display())).unwrap();
    let j = job.to_str().unwrap();

    let out = run(&[j, "--parse-only"], dir.path());
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    assert!(!dir.path().join("w.0.0").exists(), "--parse-only does no I/O");

    let v = json(&run(&[j, "--section", "w", "--output-format=json", "--no-progress"], dir.path()));
    assert_eq!(v["jobs"].as_array().unwrap().len(), 1);
    assert_eq!(v["jobs"][0]["name"], "w");

    let out = run(&[j, "--section=nope", "--no-progress"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--section=nope: no such job section; the sections are: w, r"));

    let out = run(&[j, "--readonly", "--no-progress"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("job 'w' writes (write) but --readonly forbids writing"));

    let out = run(&[j, "--server"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--server is not supported by fsbench"));
}

#[test]
fn showcmd_prints_what_fio_prints() {
    if !have("fio") {
        skip("fio is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("show.fio");
    std::fs::write(&job, "; c\n[global]\nioengine=libaio\nbuffered=0\nbs=128k\n\n[file1]\niodepth=4\ntime_based\n[file2]\nrw=randread\n")
        .unwrap();
    let ours = run(&[job.to_str().unwrap(), "--showcmd"], dir.path());
    assert!(ours.status.success(), "{ours:?}");
    let fio = std::process::Command::new("fio").arg("--showcmd").arg(&job).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&ours.stdout), String::from_utf8_lossy(&fio.stdout));
}

#[test]
fn minimal_gives_fio_terse_lines_fields_where_fio_has_them() {
    if !have("fio") {
        skip("fio is not installed");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let job = dir.path().join("t.fio");
    std::fs::write(
        &job,
        format!("[a]\nrw=randread\nsize=1m\nbs=4k\ndirectory={}\n[b]\nrw=write\nsize=512k\nbs=64k\n", dir.path().display()),
    )
    .unwrap();
    let ours = run(&[job.to_str().unwrap(), "-minimal", "--no-progress"], dir.path());
    assert!(ours.status.success(), "{}", String::from_utf8_lossy(&ours.stderr));
    let fio = std::process::Command::new("fio").arg("--minimal").arg(&job).current_dir(dir.path()).output().unwrap();
    let lines =
        |o: &[u8]| -> Vec<Vec<String>> { String::from_utf8_lossy(o).lines().map(|l| l.split(';').map(str::to_string).collect()).collect() };
    let (ours, theirs) = (lines(&ours.stdout), lines(&fio.stdout));
    assert_eq!(ours.len(), 2, "one line per job");
    assert_eq!(ours.len(), theirs.len());
    for (o, t) in ours.iter().zip(&theirs) {
        // 121 fields before the disk utilisation, which depends on the devices watched.
        assert!(o.len() >= 121 && t.len() >= 121, "{} / {} fields", o.len(), t.len());
        assert_eq!((o[0].as_str(), &o[2]), ("3", &t[2]), "version and job name");
        // io_kbytes of read (field 6) and write (field 47): the same work.
        assert_eq!((&o[5], &o[46]), (&t[5], &t[46]), "kbytes read/write");
        assert!(o[17].contains("%=") && o[88].ends_with('%'), "percentile and cpu forms: {} {}", o[17], o[88]);
    }
}
