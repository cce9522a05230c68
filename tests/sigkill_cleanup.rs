//! One SIGKILL per family: a run is killed once it has made its files
//! (polled for, on disk and on record), `fsbench cleanup` runs with the
//! test's state directory, and the machine is back exactly as it was:
//! the same mounts and loop devices as far as the test's directory is
//! concerned, the same tree with the user's file in it untouched, no
//! record left (issue 31, "prove it stays true"). The tracer's case is in
//! the block trace tests.

mod common;
use common::killed::*;
use common::*;
use std::path::Path;

/// A directory for the run, with a file of the user's in it.
fn work() -> tempfile::TempDir {
    let w = disk_tempdir();
    std::fs::create_dir(w.path().join("d")).unwrap();
    std::fs::write(w.path().join("d/the-users-file"), "keep me").unwrap();
    w
}

/// Whether a record lists something under `under` (kind `remove_file` or
/// `remove_dir`) with its identity, that exists now and whose name `named`
/// accepts.
fn made(state: &Path, kind: &str, under: &Path, named: impl Fn(&str) -> bool) -> bool {
    let under = under.canonicalize().unwrap_or_else(|_| under.to_path_buf());
    actions(state).iter().any(|a| {
        a[kind]["ino"].is_u64()
            && action_path(a, kind)
                .is_some_and(|p| p.starts_with(&under) && p.exists() && p.file_name().is_some_and(|n| named(&n.to_string_lossy())))
    })
}

/// Bonnie++ refuses to run as root without `-u`.
fn bonnie_args<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut v = args.to_vec();
    if is_root() {
        v.extend(["-u", "root"]);
    }
    v
}

/// Run `args` in `cwd` until `ready` holds, SIGKILL it, check it left
/// something, run `fsbench cleanup`, and check `work` and the machine are
/// as before.
fn kill_and_clean(work: &Path, cwd: &Path, args: &[&str], what: &str, ready: impl Fn(&Path) -> bool) {
    let state = tempfile::tempdir().unwrap();
    let before = Snapshot::take(work, &[]);
    let mut child = spawn(cwd, state.path(), args);
    let _undo = CleanupOnPanic { cwd, state: state.path() };
    wait_until(&mut child, 90, what, || ready(state.path()));
    kill(&mut child);
    let points = recorded_mount_points(state.path());
    let left = Snapshot::take(work, &points);
    assert_ne!(left, before, "the SIGKILL left something for cleanup to do");
    let said = cleanup(cwd, state.path());
    let after = Snapshot::take(work, &points);
    assert_eq!(after.mounts, before.mounts, "mounts: {said}");
    assert_eq!(after.devices, before.devices, "loop devices: {said}");
    assert_eq!(after.tree, before.tree, "the tree: {said}");
    for p in &points {
        assert!(mounted_at(p).is_none() && !p.exists(), "{} is left: {said}", p.display());
    }
    assert!(records(state.path()).is_empty(), "records left: {said}");
    assert!(!said.contains("left alone") && !said.contains("FAILED"), "{said}");
}

#[test]
fn fio() {
    let w = work();
    let d = w.path().join("d");
    let dir = format!("--directory={}", d.display());
    kill_and_clean(
        w.path(),
        w.path(),
        &["fio", "--name=k", "--rw=write", "--bs=64k", "--size=16m", "--runtime=60", "--time_based", &dir, "--no-progress"],
        "fio's file on record",
        |s| made(s, "remove_file", &d, |n| n == "k.0.0"),
    );
}

#[test]
fn filebench() {
    let w = work();
    let d = w.path().join("d");
    let set = format!("dir={}", d.display());
    kill_and_clean(
        w.path(),
        w.path(),
        &["filebench", "fileserver", "--set", &set, "--set", "nfiles=200", "--set", "nthreads=2", "--runtime", "60", "--no-progress"],
        "the fileset on record",
        |s| made(s, "remove_dir", &d, |n| n == "bigfileset") && d.join("bigfileset/.fsbench-fileset").exists(),
    );
}

#[test]
fn iozone() {
    let w = work();
    let d = w.path().join("d");
    let f = d.join("iozone.tmp");
    kill_and_clean(
        w.path(),
        w.path(),
        // One cell: the file is made once (see cleanup_identity.rs).
        &["iozone", "-s", "1g", "-r", "64k", "-i", "0", "-i", "1", "-i", "2", "-f", f.to_str().unwrap(), "--no-progress"],
        "IOzone's file on record",
        |s| made(s, "remove_file", &d, |n| n == "iozone.tmp"),
    );
}

#[test]
fn bonnie_io_file() {
    let w = work();
    let d = w.path().join("d");
    kill_and_clean(
        w.path(),
        w.path(),
        &bonnie_args(&["bonnie", "-d", d.to_str().unwrap(), "-s", "2048", "-r", "1024", "-n", "0", "-q", "--no-progress"]),
        "Bonnie.<pid> on record",
        |s| made(s, "remove_file", &d, |n| n.starts_with("Bonnie.")),
    );
}

#[test]
fn bonnie_file_tests() {
    let w = work();
    let d = w.path().join("d");
    kill_and_clean(
        w.path(),
        w.path(),
        &bonnie_args(&["bonnie", "-d", d.to_str().unwrap(), "-s", "0", "-n", "64:0:0:16", "-q", "--no-progress"]),
        "the file tests' directory on record, with files in it",
        |s| {
            made(s, "remove_dir", &d, |n| n.starts_with("Bonnie."))
                && std::fs::read_dir(&d)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|e| e.path().is_dir() && std::fs::read_dir(e.path()).is_ok_and(|mut r| r.next().is_some()))
        },
    );
}

#[test]
fn postmark() {
    let w = work();
    let d = w.path().join("d");
    let cmds = w.path().join("pm.cmd");
    std::fs::write(
        &cmds,
        format!(
            "set location {}\nset subdirectories 4\nset size 500 1000\nset number 100000\nset transactions 1000000\nrun\n",
            d.display()
        ),
    )
    .unwrap();
    kill_and_clean(
        w.path(),
        w.path(),
        &["postmark", cmds.to_str().unwrap(), "--no-progress"],
        "Postmark's directory on record, with files",
        |s| {
            made(s, "remove_dir", &d, |n| n.starts_with("fsbench-postmark-"))
                && std::fs::read_dir(&d).into_iter().flatten().flatten().any(|e| {
                    e.file_name().to_string_lossy().starts_with("fsbench-postmark-")
                        && std::fs::read_dir(e.path().join("s0")).is_ok_and(|mut r| r.next().is_some())
                })
        },
    );
}

#[test]
fn ycsb() {
    let w = work();
    let d = w.path().join("d");
    let db = d.join("db");
    let dir = format!("fjall.dir={}", db.display());
    kill_and_clean(
        w.path(),
        w.path(),
        &["ycsb", "load", "fjall", "-P", "workloada", "-p", &dir, "-p", "recordcount=100000", "-target", "1000", "--no-progress"],
        "the store's directory on record",
        |s| made(s, "remove_dir", &d, |n| n == "db"),
    );
}

/// An experiment on a managed ext4 on a loop device over an image in the
/// test's directory, running `workload` (TOML lines).
fn experiment(workload: &str, ready: impl Fn(&Path, &Path) -> bool) {
    if !is_root() {
        skip("needs root for mkfs, mount and loop devices");
        return;
    }
    let w = work();
    let out = tempfile::tempdir().unwrap();
    let exp = w.path().join("exp.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"k\"\n[[target]]\nlabel = \"ext4\"\nfs = \"ext4\"\nloop = {{ dir = \"{}\", size = \"256m\" }}\n[[workload]]\n{workload}\n",
            w.path().join("d").display()
        ),
    )
    .unwrap();
    let out = out.path().join("out");
    kill_and_clean(
        w.path(),
        w.path(),
        &["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"],
        "a mounted target with the workload's files",
        |s| recorded_mount_points(s).into_iter().any(|mp| mounted_at(&mp).is_some() && ready(s, &mp)),
    );
}

#[test]
fn fio_on_a_managed_loop_target() {
    experiment(
        "label = \"w\"\nargs = [\"--name=w\", \"--rw=write\", \"--bs=64k\", \"--size=16m\", \"--runtime=60\", \"--time_based\"]",
        |s, mp: &Path| made(s, "remove_file", mp, |n| n.starts_with("w.")),
    );
}

#[test]
fn experiment_with_postmark_on_a_managed_loop_target() {
    experiment("label = \"pm\"\npostmark = [\"set size 500 1000\", \"set number 20000\", \"set transactions 1000000\"]", |s, mp: &Path| {
        made(s, "remove_dir", mp, |n| n.starts_with("fsbench-postmark-"))
    });
}
