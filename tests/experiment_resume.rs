//! `--resume` finishes the experiment that was started, never a mix of
//! configurations (issue 9, defect 2): the results directory records the
//! parameters after `--set`, the targets (a loop device's size included) and
//! the matrix; `--resume` reuses them and refuses a different `--set` or a
//! changed experiment file; the Ctrl-C hint is the whole command; `--out`
//! into a directory that holds something else is refused.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One write workload of `${size}`, `repeat` times, on a directory target.
fn experiment(target: &Path, repeat: u32) -> String {
    timed(target, repeat, "")
}

/// The same workload, with `extra` options (e.g. `--time_based` to run for `${runtime}` s).
fn timed(target: &Path, repeat: u32, extra: &str) -> String {
    format!(
        r#"
name = "resume"
repeat = {repeat}
[params]
size = "1m"
runtime = "5"
tag = "none"
[[target]]
label = "dir"
directory = "{}"
[[workload]]
label = "w"
args = ["--name=w", "--rw=write", "--bs=64k", "--size=${{size}}", "--runtime=${{runtime}}"{extra}]
"#,
        target.display()
    )
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))).unwrap()
}

/// The paths of the runs in `out/runs`, sorted.
fn run_paths(out: &Path) -> Vec<PathBuf> {
    run_files(out).iter().map(|f| out.join("runs").join(f)).collect()
}

/// Bytes the run's job wrote.
fn written(run: &Path) -> u64 {
    let v = json(run);
    v["result"]["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["name"] == "write").unwrap()["bytes"].as_u64().unwrap()
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn resume_keeps_the_recorded_set_and_refuses_another() {
    let work = disk_tempdir();
    let exp = write_exp(work.path(), &experiment(work.path(), 2));
    let out = work.path().join("out");
    let first = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out).args(["--set", "size=2m", "--no-progress"]).output().unwrap();
    assert!(first.status.success(), "{}", stderr(&first));
    let plan = json(&out.join("plan.json"));
    assert_eq!(plan["params"]["size"], "2m", "{plan}");
    assert_eq!(plan["sets"], serde_json::json!(["size=2m"]), "{plan}");
    assert_eq!(plan["runs"].as_array().unwrap().len(), 2, "1 cell x 2 repeats: {plan}");
    assert_eq!(std::fs::read_to_string(out.join("experiment.toml")).unwrap(), std::fs::read_to_string(&exp).unwrap());
    let runs = run_paths(&out);
    std::fs::remove_file(&runs[1]).unwrap();

    // Another value is refused, naming the parameter and both values; nothing runs.
    let other = fsbench().arg("experiment").arg(&exp).arg("--resume").arg(&out).args(["--set", "size=1m"]).output().unwrap();
    assert_eq!(other.status.code(), Some(2), "{}", stderr(&other));
    let err = stderr(&other);
    assert!(err.contains("size=1m") && err.contains("size=2m"), "{err}");
    assert_eq!(run_files(&out).len(), 1, "nothing ran");

    // A changed experiment file is refused too: the recorded one is finished.
    let changed = work.path().join("changed.toml");
    std::fs::write(&changed, std::fs::read_to_string(&exp).unwrap().replace("repeat = 2", "repeat = 3")).unwrap();
    let o = fsbench().arg("experiment").arg(&changed).arg("--resume").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("line 3"), "{}", stderr(&o));
    assert_eq!(run_files(&out).len(), 1, "nothing ran");

    // Without --set (and without the file) the recorded size is used.
    let again = fsbench().args(["experiment", "--no-progress", "--output-format", "json", "--resume"]).arg(&out).output().unwrap();
    assert!(again.status.success(), "{}", stderr(&again));
    let redone = run_paths(&out);
    assert_eq!(redone.len(), 2);
    assert_eq!(written(&redone[1]), 2 << 20, "the redone run wrote the recorded --set size=2m");
    let summary: Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!((summary["planned"].as_u64(), summary["done"].as_u64(), summary["failed"].as_u64()), (Some(2), Some(2), Some(0)));
}

#[test]
fn out_into_a_directory_that_holds_something_is_refused() {
    let work = disk_tempdir();
    let exp = write_exp(work.path(), &experiment(work.path(), 1));
    let out = work.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("other.txt"), "another experiment's").unwrap();
    let o = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not empty") && stderr(&o).contains("--resume"), "{}", stderr(&o));
    let left: Vec<_> = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, vec![std::ffi::OsString::from("other.txt")], "nothing written into it");
    // An empty directory is fine.
    let empty = work.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&empty).arg("--no-progress").output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn the_interrupt_hint_is_the_whole_command_and_following_it_keeps_the_parameters() {
    let work = disk_tempdir();
    write_exp(work.path(), &timed(work.path(), 3, ", \"--time_based\""));
    let out = work.path().join("out");
    let child = Command::new(assert_cmd::cargo::cargo_bin("fsbench"))
        .current_dir(work.path())
        .args(["experiment", "exp.toml", "--out", "out", "--no-progress", "--set", "runtime=1", "--set", "tag=two words"])
        .args(["--set", "size=512k"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt the first run (each runs 1 s).
    let start = Instant::now();
    while !out.join("runs").is_dir() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill takes plain integers and touches no memory; `child` has not been waited for, so its pid names it.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    let hint = err.lines().find_map(|l| l.split_once("finish with: ").map(|(_, c)| c.to_string())).unwrap_or_else(|| panic!("{err}"));
    assert_eq!(hint, "fsbench experiment exp.toml --resume out --set runtime=1 --set 'tag=two words' --set size=512k", "{err}");

    // Following the hint finishes the experiment with the same parameters.
    let bin = assert_cmd::cargo::cargo_bin("fsbench");
    let cmd = format!("{} {} --no-progress", bin.display(), hint.strip_prefix("fsbench ").unwrap());
    let done = Command::new("sh").arg("-c").arg(&cmd).current_dir(work.path()).output().unwrap();
    assert!(done.status.success(), "{cmd}: {}", stderr(&done));
    let runs = run_paths(&out);
    assert_eq!(runs.len(), 3);
    for r in &runs {
        let elapsed = json(r)["result"]["jobs"][0]["elapsed_ns"].as_u64().unwrap();
        assert!((900_000_000..3_000_000_000).contains(&elapsed), "{}: ran {elapsed} ns, not the --set runtime=1", r.display());
    }
    let plan = json(&out.join("plan.json"));
    assert_eq!(plan["params"]["tag"], "two words");
}

#[test]
fn a_resumed_experiment_keeps_its_device_size() {
    if !is_root() || !have("mkfs.ext4") {
        skip("needs root and mkfs.ext4 for a loop device");
        return;
    }
    let work = disk_tempdir();
    let text = format!(
        r#"
name = "devsize"
[params]
devsize = "64m"
[[target]]
label = "ext4"
fs = "ext4"
loop = {{ dir = "{}", size = "${{devsize}}" }}
[[workload]]
label = "w"
args = ["--name=w", "--rw=write", "--bs=64k", "--size=1m"]
"#,
        work.path().display()
    );
    let exp = write_exp(work.path(), &text);
    let out = work.path().join("out");
    let o = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out).args(["--set", "devsize=96m", "--no-progress"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let plan = json(&out.join("plan.json"));
    assert_eq!(plan["targets"][0]["spec"]["managed"]["device"]["loop"]["size"], 96u64 << 20, "{plan}");
    std::fs::remove_file(&run_paths(&out)[0]).unwrap();
    let o = fsbench().arg("experiment").arg(&exp).arg("--resume").arg(&out).args(["--set", "devsize=2g"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("devsize=2g") && stderr(&o).contains("devsize=96m"), "{}", stderr(&o));
    assert!(run_files(&out).is_empty(), "nothing ran");
}
