//! `fsbench cleanup` acts only on what fsbench made: records hold absolute
//! paths with each file's and directory's identity and each mount's source,
//! and cleanup re-checks them, from whatever directory it runs in (issue
//! 31, item 1). Also: a user's file at a path a run would use is refused
//! before the run, naming the flag.

mod common;
use common::killed::*;
use common::*;
use std::path::{Path, PathBuf};

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// IOzone with a relative `-f`, SIGKILLed in `w` once its file is on record.
/// One cell (the issue ran `-a`): its file is made once, so the kill never
/// falls between a recreation and its record.
fn killed_iozone(w: &Path, state: &Path) -> PathBuf {
    let mut io =
        spawn(w, state, &["iozone", "-s", "1g", "-r", "64k", "-i", "0", "-i", "1", "-i", "2", "-f", "iozone.tmp", "--no-progress"]);
    let real = w.canonicalize().unwrap().join("iozone.tmp");
    wait_until(&mut io, 60, "IOzone's file on record", || real.exists() && recorded(state, "remove_file", &real));
    kill(&mut io);
    assert!(real.exists(), "SIGKILL leaves the file");
    real
}

#[test]
fn cleanup_from_another_directory_removes_the_leftovers_and_leaves_the_decoys() {
    let top = disk_tempdir();
    let w = top.path().join("w");
    let decoy = top.path().join("decoy");
    std::fs::create_dir_all(w.join("fbrel")).unwrap();
    std::fs::create_dir_all(&decoy).unwrap();
    let state = tempfile::tempdir().unwrap();
    let state = state.path();

    let real_io = killed_iozone(&w, state);
    let mut fb = spawn(
        &w,
        state,
        &[
            "filebench",
            "fileserver",
            "--set",
            "dir=fbrel",
            "--set",
            "nfiles=200",
            "--set",
            "nthreads=2",
            "--runtime",
            "60",
            "--no-progress",
        ],
    );
    let real_fs = w.canonicalize().unwrap().join("fbrel/bigfileset");
    wait_until(&mut fb, 60, "the fileset on record", || {
        real_fs.join(".fsbench-fileset").exists() && recorded(state, "remove_dir", &real_fs)
    });
    kill(&mut fb);
    assert!(real_fs.is_dir(), "SIGKILL leaves the fileset");

    // Where a cwd-relative reading of the records would land from `decoy`:
    // a user's file and a user's tree (no fsbench marker).
    write(&decoy.join("iozone.tmp"), "the user's file");
    write(&decoy.join("fbrel/bigfileset/00000001/00000001"), "the user's tree");
    let before = tree(&decoy);

    let said = cleanup(&decoy, state);
    assert_eq!(tree(&decoy), before, "the decoys are untouched: {said}");
    assert!(!real_io.exists(), "IOzone's file is removed: {said}");
    assert!(!real_fs.exists(), "the fileset is removed: {said}");
    assert!(records(state).is_empty(), "nothing left on record: {said}");
    assert_eq!(tree(&w), [(PathBuf::from("fbrel"), tree(&w)[Path::new("fbrel")].clone())].into_iter().collect(), "{said}");
}

#[test]
fn a_users_file_that_took_a_recorded_name_is_left_alone_with_the_reason() {
    let top = disk_tempdir();
    let w = top.path().join("w");
    std::fs::create_dir_all(&w).unwrap();
    let state = tempfile::tempdir().unwrap();
    let real = killed_iozone(&w, state.path());
    // The user removes the leftover and makes a file of their own there.
    std::fs::remove_file(&real).unwrap();
    std::fs::write(w.join("spacer"), "so the new file does not get the old inode").unwrap();
    std::fs::write(&real, "the user's").unwrap();
    let said = cleanup(top.path(), state.path());
    assert_eq!(std::fs::read_to_string(&real).unwrap(), "the user's", "{said}");
    assert!(said.contains("left alone") && said.contains("someone else's file"), "{said}");
}

#[test]
fn a_hand_made_mount_on_a_recorded_mount_point_is_left_alone() {
    if !is_root() {
        skip("needs root for mkfs, mount and loop devices");
        return;
    }
    let work = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let exp = write_exp(
        work.path(),
        &format!(
            r#"
name = "k"
[[target]]
label = "ext4"
fs = "ext4"
loop = {{ dir = "{}", size = "128m" }}
[[workload]]
label = "w"
args = ["--name=w", "--rw=write", "--bs=64k", "--size=16m", "--runtime=60", "--time_based"]
"#,
            work.path().display()
        ),
    );
    let out = work.path().join("out");
    let mut child =
        spawn(work.path(), state.path(), &["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]);
    let _undo = CleanupOnPanic { cwd: work.path(), state: state.path() };
    let mut mp = PathBuf::new();
    wait_until(&mut child, 60, "a mounted target on record", || {
        mp = recorded_mount_points(state.path()).into_iter().next().unwrap_or_default();
        !mp.as_os_str().is_empty() && mounted_at(&mp).is_some()
    });
    kill(&mut child);
    let image = actions(state.path())
        .iter()
        .filter_map(|a| action_path(a, "remove_file"))
        .find(|p| p.extension().is_some_and(|e| e == "img"))
        .expect("the image on record");
    // The user takes the mount point over: fsbench's mount goes, a tmpfs
    // of theirs comes.
    assert!(std::process::Command::new("umount").arg(&mp).status().unwrap().success());
    assert!(std::process::Command::new("mount").args(["-t", "tmpfs", "-o", "size=1m", "userfs"]).arg(&mp).status().unwrap().success());
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
            let _ = std::fs::remove_dir(&self.0);
        }
    }
    let _guard = Unmount(mp.clone());
    std::fs::write(mp.join("theirs"), "x").unwrap();

    let said = cleanup(work.path(), state.path());
    assert_eq!(mounted_at(&mp), Some(("userfs".into(), "tmpfs".into())), "the user's mount stays: {said}");
    assert!(mp.join("theirs").exists(), "{said}");
    assert!(said.contains("someone else's mount"), "{said}");
    assert!(!image.exists(), "the image is removed: {said}");
    assert!(!loops().values().any(|b| Path::new(b) == image), "the loop device is detached: {said}");
}

#[test]
fn a_users_file_at_iozones_path_is_refused_before_the_run_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("iozone.tmp"), "the user's").unwrap();
    for args in
        [&["iozone", "-s", "1m", "-r", "64k", "-i", "0", "-f", "iozone.tmp"][..], &["iozone", "-s", "1m", "-r", "64k", "-i", "0"][..]]
    {
        let o = run(dir.path(), state.path(), args);
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{err}");
        assert!(err.contains("-f") && err.contains(&dir.path().canonicalize().unwrap().join("iozone.tmp").display().to_string()), "{err}");
        assert_eq!(std::fs::read_to_string(dir.path().join("iozone.tmp")).unwrap(), "the user's");
    }
}

#[test]
fn postmark_files_go_in_a_directory_of_its_own_and_a_users_file_is_never_in_the_way() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    // Postmark names its files 1, 2, ...: a user's file `1` in the location.
    std::fs::write(dir.path().join("1"), "the user's").unwrap();
    let before = tree(dir.path());
    let cmd = format!("set location {}\nset number 50\nset transactions 100\nrun\n", dir.path().display());
    let o = common::fsbench().env("FSBENCH_STATE_DIR", state.path()).arg("postmark").write_stdin(cmd).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(tree(dir.path()), before);
}
