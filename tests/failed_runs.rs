//! A run whose workload fails is never data: its failed I/Os are errors,
//! not operations; it is marked failed, left out of every statistic, shown
//! as FAILED, redone by `--resume`, and the exit status says so. The
//! failures are real: writes into a 256 KiB tmpfs run out of space (root).

mod common;

use common::{fsbench, is_root, skip};
use serde_json::Value;
use std::path::Path;

/// A 256 KiB tmpfs mounted on a fresh directory, unmounted when dropped.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn mount() -> Option<SmallFs> {
        let dir = tempfile::tempdir().ok()?;
        let ok =
            std::process::Command::new("mount").args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"]).arg(dir.path()).status().ok()?.success();
        ok.then_some(SmallFs { dir })
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(self.dir.path()).status();
    }
}

fn small_fs() -> Option<SmallFs> {
    if !is_root() {
        skip("needs root to mount a small tmpfs");
        return None;
    }
    SmallFs::mount().or_else(|| {
        skip("cannot mount tmpfs");
        None
    })
}

#[test]
fn failed_writes_are_errors_not_operations_and_the_run_is_marked_failed() {
    let Some(fs) = small_fs() else { return };
    let out = fsbench()
        .args(["fio", "--name=fill", "--rw=write", "--bs=4k", "--size=1m", "--allow-fill", "--output-format=json", "--no-progress"])
        .arg(format!("--directory={}", fs.path().display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a failed workload is not a success");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["failed"].as_str().is_some_and(|e| e.contains("No space left")), "{}", v["failed"]);
    let w = v["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["name"] == "write").unwrap().clone();
    let (ops, bytes, errors) = (w["ops"].as_u64().unwrap(), w["bytes"].as_u64().unwrap(), w["errors"].as_u64().unwrap());
    assert!(errors >= 1);
    assert_eq!(ops * 4096, bytes, "every counted write moved its 4 KiB; the failed one is not counted");
    assert!(bytes <= 256 << 10, "no more than the file system holds: {bytes}");

    let text = fsbench()
        .args(["fio", "--name=fill", "--rw=write", "--bs=4k", "--size=1m", "--allow-fill", "--no-progress"])
        .arg(format!("--directory={}", fs.path().display()))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).starts_with("*** FAILED: job 'fill'"), "{}", String::from_utf8_lossy(&text.stdout));
}

#[test]
fn repeats_leave_failed_runs_out_of_the_statistics() {
    let Some(fs) = small_fs() else { return };
    let out = fsbench()
        .args([
            "fio",
            "--name=fill",
            "--rw=write",
            "--bs=4k",
            "--size=1m",
            "--allow-fill",
            "--repeat=2",
            "--output-format=json",
            "--no-progress",
        ])
        .arg(format!("--directory={}", fs.path().display()))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 2, "failed runs are kept for inspection");
    assert!(v["runs"].as_array().unwrap().iter().all(|r| r["failed"].is_string()));
    assert!(v["summary"].as_array().unwrap().is_empty(), "no statistic from failed runs: {}", v["summary"]);
}

#[test]
fn an_experiment_records_failed_runs_as_failed_and_resume_redoes_them() {
    let Some(fs) = small_fs() else { return };
    let work = tempfile::tempdir().unwrap();
    let exp = work.path().join("fail.toml");
    let out_dir = work.path().join("out");
    std::fs::write(
        &exp,
        format!(
            "name = \"fail\"\n[[target]]\nlabel = \"small\"\ndirectory = \"{}\"\n\
             [[workload]]\nlabel = \"ok\"\nargs = [\"--name=ok\", \"--rw=write\", \"--bs=4k\", \"--size=64k\"]\n\
             [[workload]]\nlabel = \"fill\"\nargs = [\"--name=fill\", \"--rw=write\", \"--bs=4k\", \"--size=1m\"]\n",
            fs.path().display()
        ),
    )
    .unwrap();
    let run = |extra: &[&str]| {
        fsbench()
            .arg("experiment")
            .arg(&exp)
            .args(extra)
            .args(["--output-format", "json", "--no-progress", "--allow-fill"])
            .output()
            .unwrap()
    };
    let out = run(&["--out", out_dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.lines().any(|l| l.contains("small / fill /") && l.contains("FAILED")), "{err}");
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    let cell = |w: &str| s["cells"].as_array().unwrap().iter().find(|c| c["cell"]["workload"] == w).unwrap().clone();
    assert_eq!((cell("ok")["runs"].as_u64(), cell("ok")["failed"].as_u64()), (Some(1), Some(0)));
    assert_eq!((cell("fill")["runs"].as_u64(), cell("fill")["failed"].as_u64()), (Some(0), Some(1)));
    assert!(cell("fill")["metrics"].as_object().unwrap().is_empty(), "no statistic from a failed run");
    let csv = std::fs::read_to_string(out_dir.join("summary.csv")).unwrap();
    assert!(!csv.lines().any(|l| l.contains(",fill,")), "{csv}");

    // --resume redoes the failed run and only it.
    let out = run(&["--resume", out_dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let done: Vec<&str> = err.lines().filter(|l| l.starts_with('[')).collect();
    assert_eq!(done.len(), 1, "{err}");
    assert!(done[0].contains("small / fill /") && done[0].contains("FAILED"), "{err}");
}
