//! `iozone -U MOUNTPOINT` takes the user's file system down between tests:
//! killed before it is back, the run leaves a record from which the next
//! run's warning says so and `fsbench cleanup` mounts it again, with its
//! options (issue 31, item 3).
//!
//! The window is made findable without a hook in fsbench: the run goes
//! under strace, which delays every mount(2) (the `mount` program fsbench
//! starts) by a minute; the test waits until the file system is off
//! /proc/self/mountinfo and on record, then SIGKILLs the whole process
//! group, so the delayed mount never happens.

mod common;
use common::killed::*;
use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A user's ext4 on a loop device, mounted with options of its own; taken
/// down when dropped.
struct UserFs {
    device: String,
    point: PathBuf,
}

impl UserFs {
    fn new(dir: &Path) -> UserFs {
        let img = dir.join("user.img");
        std::fs::File::create(&img).unwrap().set_len(64 << 20).unwrap();
        let out = Command::new("losetup").args(["--find", "--show"]).arg(&img).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let device = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let point = dir.join("mnt");
        std::fs::create_dir(&point).unwrap();
        let fs = UserFs { device, point };
        assert!(Command::new("mkfs.ext4").args(["-q", "-F", &fs.device]).stdout(Stdio::null()).status().unwrap().success());
        assert!(Command::new("mount").args(["-o", "noatime,commit=17", &fs.device]).arg(&fs.point).status().unwrap().success());
        fs
    }
}

impl Drop for UserFs {
    fn drop(&mut self) {
        while mounted_at(&self.point).is_some() {
            if !Command::new("umount").arg(&self.point).status().is_ok_and(|s| s.success()) {
                break;
            }
        }
        let _ = Command::new("losetup").arg("-d").arg(&self.device).status();
    }
}

fn options_at(point: &Path) -> String {
    let p = point.to_string_lossy();
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap()
        .lines()
        .filter(|l| l.split(' ').nth(4) == Some(&p))
        .map(|l| {
            let (a, b) = l.split_once(" - ").unwrap();
            format!("{},{}", a.split(' ').nth(5).unwrap(), b.split(' ').nth(2).unwrap_or(""))
        })
        .next_back()
        .unwrap_or_default()
}

#[test]
fn killed_while_its_file_system_is_unmounted_the_record_mounts_it_again() {
    if !is_root() {
        skip("needs root: -U unmounts and mounts, and the test makes a loop device");
        return;
    }
    if !have("strace") || !have("mkfs.ext4") {
        skip("needs strace (to hold the remount) and mkfs.ext4");
        return;
    }
    let work = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let user = UserFs::new(work.path());
    let before = options_at(&user.point);
    assert!(before.contains("noatime") && before.contains("commit=17"), "{before}");
    std::fs::write(user.point.join("theirs"), "the user's data").unwrap();

    let file = user.point.join("iozone.tmp");
    let mut child = {
        use std::os::unix::process::CommandExt;
        Command::new("strace")
            .args(["-f", "-qq", "-o", "/dev/null", "-e", "trace=mount", "-e", "inject=mount:delay_enter=60s"])
            .arg(bin())
            .args(["iozone", "-s", "1m", "-r", "64k", "-i", "0", "-i", "1", "-U"])
            .arg(&user.point)
            .arg("-f")
            .arg(&file)
            .arg("--no-progress")
            .env("FSBENCH_STATE_DIR", state.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap()
    };
    let pgid = child.id() as i32;
    // Whatever happens, the group goes (fsbench and the held mount with it).
    struct Group(i32);
    impl Drop for Group {
        fn drop(&mut self) {
            // SAFETY: kill takes plain integers; the group is the test's own.
            unsafe { libc::kill(-self.0, libc::SIGKILL) };
        }
    }
    let group = Group(pgid);
    wait_until(&mut child, 60, "the file system unmounted and on record", || {
        mounted_at(&user.point).is_none() && actions(state.path()).iter().any(|a| a["remount"]["point"].is_string())
    });
    drop(group);
    let _ = child.wait();
    std::thread::sleep(Duration::from_millis(200));
    assert!(mounted_at(&user.point).is_none(), "killed during the remount: the file system is down");

    // The next run says what is down and that cleanup mounts it again.
    let d = format!("--directory={}", work.path().display());
    let o = run(work.path(), state.path(), &["fio", "--name=x", "--rw=write", "--bs=64k", "--size=1m", &d, "--no-progress"]);
    let err = String::from_utf8_lossy(&o.stderr);
    let warning = err.lines().find(|l| l.contains("fsbench cleanup")).unwrap_or_default();
    assert!(
        warning.contains(&format!("{} (ext4) is no longer mounted on {}", user.device, user.point.display()))
            && warning.contains("mounts it again"),
        "{err}"
    );

    let said = cleanup(work.path(), state.path());
    assert_eq!(mounted_at(&user.point).map(|m| m.1), Some("ext4".to_string()), "{said}");
    let after = options_at(&user.point);
    assert!(after.contains("noatime") && after.contains("commit=17"), "mounted with its options: {after} ({said})");
    assert_eq!(std::fs::read_to_string(user.point.join("theirs")).unwrap(), "the user's data");
    assert!(!file.exists(), "the run's file is removed too: {said}");
    assert!(records(state.path()).is_empty(), "{said}");
}
