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

/// A YCSB load, then a run phase that reads its records (held to 2,000
/// operations per second, so it runs for 3 s), on the target `target` (the
/// keys of a `[[target]]` table).
fn load_then_run(target: &str) -> String {
    format!(
        r#"
name = "loadrun"
[[target]]
label = "t"
{target}
[[workload]]
label = "load"
ycsb = "load fjall -P workloada -p recordcount=2000 -p fjall.dir=${{target}}/db"
[[workload]]
label = "run"
ycsb = "run fjall -P workloada -p recordcount=2000 -p operationcount=6000 -target 2000 -p fjall.dir=${{target}}/db"
"#
    )
}

/// What a resumed experiment whose run phase was killed left and did.
struct Resumed {
    /// The load's run file before and after the resume.
    load_before: String,
    load_after: String,
    run: Value,
    rebuilds: Vec<Value>,
    summary: Value,
}

/// Run `exp`, SIGKILL it once the load's run is recorded (the run phase is
/// then under way), and resume it.
fn kill_after_the_load_and_resume(exp: &Path, out: &Path, state: &Path) -> Resumed {
    let mut child = Command::new(assert_cmd::cargo::cargo_bin("fsbench"))
        .env("FSBENCH_STATE_DIR", state)
        .arg("experiment")
        .arg(exp)
        .arg("--out")
        .arg(out)
        .arg("--no-progress")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let load = out.join("runs/t__load__warm__none__r1.json");
    let start = Instant::now();
    while !load.exists() && start.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(10));
    }
    // SAFETY: kill takes plain integers and touches no memory; `child` has not been waited for, so its pid names it.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));
    assert!(load.exists(), "the load's run was not recorded within 120 s");
    assert_eq!(run_files(out), ["t__load__warm__none__r1.json"], "the kill came after the run phase ended");
    let load_before = std::fs::read_to_string(&load).unwrap();

    let o = fsbench()
        .env("FSBENCH_STATE_DIR", state)
        .args(["experiment", "--no-progress", "--output-format", "json", "--resume"])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let rebuilds = match std::fs::read_dir(out.join("rebuilds")) {
        Ok(d) => d.map(|e| json(&e.unwrap().path())).collect(),
        Err(_) => Vec::new(),
    };
    Resumed {
        load_before,
        load_after: std::fs::read_to_string(&load).unwrap(),
        run: json(&out.join("runs/t__run__warm__none__r1.json")),
        rebuilds,
        summary: serde_json::from_slice(&o.stdout).unwrap(),
    }
}

impl Resumed {
    /// Every planned run is done and valid; the load's own run is the one
    /// counted, the load run again for the run phase is kept apart and the
    /// run phase says its data was rebuilt.
    fn assert_complete_and_honest(&self) {
        let s = &self.summary;
        assert_eq!((s["planned"].as_u64(), s["done"].as_u64(), s["failed"].as_u64()), (Some(2), Some(2), Some(0)), "{s}");
        assert!(self.run["result"]["failed"].is_null(), "{}", self.run["result"]["failed"]);
        let ops = self.run["result"]["jobs"][0]["ops"].as_array().unwrap();
        assert!(ops.iter().any(|o| o["ops"].as_u64().is_some_and(|n| n > 0)), "the run phase did operations: {ops:?}");
        assert_eq!(self.load_after, self.load_before, "the load's recorded run was not redone");
        assert_eq!(self.rebuilds.len(), 1, "one load run again, kept in rebuilds/");
        assert!(self.rebuilds[0]["result"]["failed"].is_null() && self.rebuilds[0]["cell"]["workload"] == "load");
        let warnings = self.run["result"]["warnings"].to_string();
        assert!(warnings.contains("rebuilt by running workload 'load' again") && warnings.contains("in no statistic"), "{warnings}");
    }
}

#[test]
fn resume_loads_again_what_a_killed_run_phase_needs_on_a_directory_target() {
    let work = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let dir = work.path().join("target");
    std::fs::create_dir(&dir).unwrap();
    let exp = write_exp(work.path(), &load_then_run(&format!("directory = \"{}\"", dir.display())));
    let r = kill_after_the_load_and_resume(&exp, &work.path().join("out"), state.path());
    r.assert_complete_and_honest();
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the target's run directories are removed");
}

#[test]
fn resume_loads_again_what_a_killed_run_phase_needs_on_a_managed_loop_target() {
    if !is_root() || !have("mkfs.ext4") || !std::fs::read_to_string("/proc/filesystems").unwrap_or_default().contains("ext4") {
        skip("needs root, mkfs.ext4 and ext4 in the kernel for a managed loop target");
        return;
    }
    let work = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let images = work.path().join("images");
    std::fs::create_dir(&images).unwrap();
    let target = format!("fs = \"ext4\"\nloop = {{ dir = \"{}\", size = \"128m\" }}", images.display());
    let exp = write_exp(work.path(), &load_then_run(&target));
    let r = kill_after_the_load_and_resume(&exp, &work.path().join("out"), state.path());
    r.assert_complete_and_honest();
    // What the killed run and the resume set up is gone.
    let load: Value = serde_json::from_str(&r.load_before).unwrap();
    for run in [&load, &r.run] {
        let mp = run["target"]["mount_point"].as_str().unwrap();
        let mounted = std::fs::read_to_string("/proc/self/mountinfo").unwrap().lines().any(|l| l.split(' ').nth(4) == Some(mp));
        assert!(!mounted && !Path::new(mp).exists(), "{mp} left");
    }
    assert_eq!(std::fs::read_dir(&images).unwrap().count(), 0, "an image was left");
    let losetup = Command::new("losetup").arg("-a").output().unwrap();
    assert!(!String::from_utf8_lossy(&losetup.stdout).contains(&images.display().to_string()), "a loop device was left");
}

#[test]
fn a_run_that_fails_again_on_resume_is_not_sent_back_to_resume() {
    let work = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    // A run phase with nothing that loads its store fails every time.
    let exp = write_exp(
        work.path(),
        &format!(
            "name = \"noload\"\n[[target]]\nlabel = \"t\"\ndirectory = \"{}\"\n[[workload]]\nlabel = \"run\"\n\
             ycsb = \"run fjall -P workloada -p recordcount=100 -p operationcount=100 -p fjall.dir=${{target}}/db\"\n",
            work.path().display()
        ),
    );
    let out = work.path().join("out");
    let first = fsbench().env("FSBENCH_STATE_DIR", state.path()).arg("experiment").arg(&exp).arg("--out").arg(&out).output().unwrap();
    let err = stderr(&first);
    assert_eq!(first.status.code(), Some(1), "{err}");
    let last = err.lines().rfind(|l| l.contains("INCOMPLETE")).unwrap_or_else(|| panic!("{err}"));
    assert!(last.contains("helps a failed run only once its cause"), "a failed run is not promised to finish on resume: {last}");

    let again = fsbench().env("FSBENCH_STATE_DIR", state.path()).arg("experiment").arg("--resume").arg(&out).output().unwrap();
    let err = stderr(&again);
    assert_eq!(again.status.code(), Some(1), "{err}");
    let last = err.lines().rfind(|l| l.contains("INCOMPLETE")).unwrap_or_else(|| panic!("{err}"));
    assert!(last.contains("t__run__warm__none r1 failed again on this resume as it did before"), "{last}");
    assert!(last.contains("load first") && last.contains("resuming alone repeats the failure"), "{last}");
}
