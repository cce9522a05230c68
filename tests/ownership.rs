//! What fsbench owns is one run's at a time (issue 9, defect 3): a second
//! Filebench run on a live fileset, a second experiment on one results
//! directory, a second Postmark run in one location are refused with who
//! holds it; shipped personalities run in a fresh directory of their own.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// fsbench with its state records in `state` (not the machine's).
fn cmd(state: &Path) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("fsbench"));
    c.env("FSBENCH_STATE_DIR", state).stdout(Stdio::piped()).stderr(Stdio::piped());
    c
}

/// Wait until `file` exists and names `pid` as its holder.
fn wait_for_holder(file: &Path, pid: u32) {
    let t = Instant::now();
    let holds = || std::fs::read_to_string(file).is_ok_and(|s| s.lines().any(|l| l == format!("pid {pid}")));
    while !holds() && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(holds(), "{} never named pid {pid}", file.display());
}

/// A child fsbench that is stopped (SIGTERM) if the test fails before
/// waiting for it.
struct Running(Option<Child>);

impl Running {
    fn id(&self) -> u32 {
        self.0.as_ref().map(Child::id).unwrap_or(0)
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            // SAFETY: kill takes plain integers and touches no memory; `c` has not been waited for, so its pid still
            // names that process.
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            // Its report must have somewhere to go, or it blocks on a full pipe and is never reaped.
            let _ = c.wait_with_output();
        }
    }
}

fn start(c: &mut Command) -> Running {
    Running(Some(c.spawn().unwrap()))
}

fn finish(mut r: Running) -> (i32, String, String) {
    let o = r.0.take().unwrap().wait_with_output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn a_second_filebench_run_on_a_live_fileset_is_refused_and_the_first_is_untouched() {
    let state = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let d = format!("dir={}", dir.path().display());
    let small = ["--set", "nfiles=200", "--set", "nthreads=2", "--output-format", "json", "--no-progress"];
    let first = start(cmd(state.path()).args(["filebench", "fileserver", "--set", &d, "--runtime", "4"]).args(small));
    let root = dir.path().join("bigfileset");
    wait_for_holder(&root.join(".fsbench-fileset"), first.id());
    let first_pid = first.id();

    let second = start(cmd(state.path()).args(["filebench", "fileserver", "--set", &d, "--runtime", "1"]).args(small));
    let (code, out, err) = finish(second);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty() || out.contains("\"fsbench-error/1\""), "no result from a refused run, only the error object: {out}");
    let want = format!("{} is in use by fsbench pid {first_pid} since ", root.display());
    assert!(err.contains(&want), "expected '{want}' in: {err}");

    let (code, out, err) = finish(first);
    assert_eq!(code, 0, "the first run is not disturbed: {err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["failed"].is_null(), "{}", v["failed"]);
    let ops: u64 = v["jobs"][0]["ops"].as_array().unwrap().iter().map(|o| o["ops"].as_u64().unwrap()).sum();
    assert!(ops > 0);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the first run removed its fileset");
}

#[test]
fn a_second_experiment_on_one_results_directory_is_refused() {
    let state = tempfile::tempdir().unwrap();
    let work = disk_tempdir();
    let exp = work.path().join("exp.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"lock\"\nrepeat = 1\n[[target]]\nlabel = \"t\"\ndirectory = \"{}\"\n[[workload]]\nlabel = \"w\"\nargs = [\"--name=w\", \"--rw=write\", \"--bs=64k\", \"--size=4m\", \"--runtime=3\", \"--time_based\"]\n",
            work.path().display()
        ),
    )
    .unwrap();
    let out = work.path().join("out");
    let args = ["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"];
    let first = start(cmd(state.path()).args(args));
    let first_pid = first.id();
    wait_for_holder(&out.join(".fsbench-lock"), first_pid);

    let (code, stdout, err) = finish(start(cmd(state.path()).args(args)));
    assert_eq!(code, 2, "{err}");
    assert!(stdout.is_empty(), "{stdout}");
    let want = format!("{} is in use by fsbench pid {first_pid} since ", out.display());
    assert!(err.contains(&want), "expected '{want}' in: {err}");
    let t = Instant::now();
    while !out.join("runs").is_dir() && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let resumed = finish(start(cmd(state.path()).args(["experiment", exp.to_str().unwrap(), "--resume", out.to_str().unwrap()])));
    assert_eq!(resumed.0, 2, "--resume of a directory in use is refused too: {}", resumed.2);
    assert!(resumed.2.contains(&want), "{}", resumed.2);

    let (code, _, err) = finish(first);
    assert_eq!(code, 0, "{err}");
    let runs: Vec<PathBuf> = std::fs::read_dir(out.join("runs")).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let run: Value = serde_json::from_str(&std::fs::read_to_string(&runs[0]).unwrap()).unwrap();
    assert!(run["result"]["failed"].is_null() && run["result"]["partial"] == false, "{}", run["result"]["failed"]);
    assert!(std::fs::read_to_string(out.join("summary.csv")).unwrap().contains("t,w,warm,none,"));
}

#[test]
fn a_second_postmark_run_in_one_location_is_refused() {
    let state = tempfile::tempdir().unwrap();
    let loc = tempfile::tempdir_in("/dev/shm").unwrap();
    let script = |dir: &Path, tx: u32| {
        let f = dir.join(format!("pm{tx}.pm"));
        std::fs::write(&f, format!("set location {}\nset number 200\nset transactions {tx}\nrun\nquit\n", loc.path().display())).unwrap();
        f
    };
    let work = tempfile::tempdir().unwrap();
    let long = script(work.path(), 20_000_000);
    let first = start(cmd(state.path()).args(["postmark", long.to_str().unwrap(), "--no-progress"]));
    let first_pid = first.id();
    // Postmark makes its files in the location once the run is under way.
    let t = Instant::now();
    while std::fs::read_dir(loc.path()).unwrap().count() == 0 && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let short = script(work.path(), 100);
    let (code, _, err) = finish(start(cmd(state.path()).args(["postmark", short.to_str().unwrap(), "--no-progress"])));
    assert_eq!(code, 2, "{err}");
    let want = format!("{} is in use by fsbench pid {first_pid} since ", loc.path().display());
    assert!(err.contains(&want), "expected '{want}' in: {err}");
    // SAFETY: kill takes plain integers and touches no memory; `first` has not been waited for, so its pid still names
    // that process.
    unsafe { libc::kill(first_pid as i32, libc::SIGINT) };
    let (code, _, err) = finish(first);
    assert_eq!(code, 130, "{err}");
    assert_eq!(std::fs::read_dir(loc.path()).unwrap().count(), 0, "the first run removed its own files");
}

#[test]
fn a_personality_run_by_name_gets_a_fresh_directory_and_says_where() {
    let state = tempfile::tempdir().unwrap();
    let here = tempfile::tempdir_in("/dev/shm").unwrap();
    let small = ["--set", "nfiles=50", "--set", "nthreads=1", "--runtime", "1", "--output-format", "json", "--no-progress"];
    let o = cmd(state.path()).current_dir(here.path()).args(["filebench", "fileserver"]).args(small).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let path = v["jobs"][0]["details"]["filesets"][0]["path"].as_str().unwrap().to_string();
    let made = Path::new(&path).parent().unwrap();
    assert_eq!(made.parent(), Some(here.path()), "under the current directory, not /tmp: {path}");
    assert!(made.file_name().unwrap().to_string_lossy().starts_with("fsbench-filebench-"), "{path}");
    assert!(err.contains(&format!("files go to {}", made.display())) && err.contains("removed afterwards"), "{err}");
    assert_eq!(std::fs::read_dir(here.path()).unwrap().count(), 0, "removed afterwards");

    // Two at once in one directory each get their own.
    let spawn = || start(cmd(state.path()).current_dir(here.path()).args(["filebench", "fileserver"]).args(small));
    let (a, b) = (spawn(), spawn());
    for (code, _, err) in [finish(a), finish(b)] {
        assert_eq!(code, 0, "{err}");
    }

    // A directory the user names is used as named, with nothing said.
    let mine = tempfile::tempdir_in("/dev/shm").unwrap();
    let d = format!("dir={}", mine.path().display());
    let o = cmd(state.path()).current_dir(here.path()).args(["filebench", "fileserver", "--set", &d]).args(small).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("files go to"), "{err}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["jobs"][0]["details"]["filesets"][0]["path"], mine.path().join("bigfileset").display().to_string());
    assert_eq!(std::fs::read_dir(here.path()).unwrap().count(), 0);
}

#[test]
fn a_second_fio_run_on_the_same_file_is_refused_before_it_writes() {
    let state = tempfile::tempdir().unwrap();
    let dir = disk_tempdir();
    let d = format!("--directory={}", dir.path().display());
    let job = ["fio", "--name=same", "--rw=randwrite", "--bs=4k", "--size=8m", &d, "--no-progress", "--output-format=json"];
    let first = start(cmd(state.path()).args(job).args(["--runtime=4", "--time_based"]));
    let first_pid = first.id();
    let file = dir.path().join("same.0.0");
    // The file is laid out and locked before the measured run starts.
    let t = Instant::now();
    let locked =
        || std::fs::read_to_string("/proc/locks").unwrap().lines().any(|l| l.contains("FLOCK") && l.contains(&format!(" {first_pid} ")));
    while !locked() && t.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let before = std::fs::metadata(&file).unwrap().len();
    let (code, out, err) = finish(start(cmd(state.path()).args(job).args(["--size=16m", "--runtime=1"])));
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty() || out.contains("\"fsbench-error/1\""), "no result, only the error object: {out}");
    let want = format!("{} is in use by fsbench pid {first_pid} since ", file.display());
    assert!(err.contains(&want), "expected '{want}' in: {err}");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), before, "the refused run did not extend the first run's file");
    let (code, out, err) = finish(first);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["failed"].is_null(), "{}", v["failed"]);
}
