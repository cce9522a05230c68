//! A managed target whose file system the running kernel lacks is refused
//! before anything runs, with the reason (issue 31, item 14). jfs, vfat or
//! nilfs2 targets used to be formatted, fail at mount once per workload and
//! repeat, and end INCOMPLETE; `reiserfs` was refused with a list of names
//! and no reason.

mod common;
use common::*;
use std::path::Path;

/// Whether the running kernel has `fs` or could load it at mount, decided
/// apart from fsbench: /proc/filesystems, then an `alias fs-<fs>` line in
/// the running kernel's modules.alias.
fn kernel_could_mount(fs: &str) -> bool {
    let listed = std::fs::read_to_string("/proc/filesystems").unwrap_or_default().split_whitespace().any(|w| w == fs);
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let aliases = std::fs::read_to_string(Path::new("/lib/modules").join(release.trim()).join("modules.alias")).unwrap_or_default();
    listed || aliases.lines().any(|l| l.starts_with(&format!("alias fs-{fs} ")))
}

fn loops_over(dir: &Path) -> Vec<String> {
    let out = std::process::Command::new("losetup").arg("-a").output().map(|o| o.stdout).unwrap_or_default();
    String::from_utf8_lossy(&out).lines().filter(|l| l.contains(&dir.display().to_string())).map(str::to_string).collect()
}

#[test]
fn targets_the_kernel_cannot_mount_are_refused_before_any_mkfs() {
    let lacking: Vec<&str> = ["jfs", "vfat", "nilfs2"].into_iter().filter(|fs| !kernel_could_mount(fs)).collect();
    if lacking.is_empty() {
        skip("the running kernel has (or would load) jfs, vfat and nilfs2: nothing to refuse");
        return;
    }
    let work = disk_tempdir();
    let images = work.path().join("images");
    std::fs::create_dir(&images).unwrap();
    let state = tempfile::tempdir().unwrap();
    let mut text = String::from("name = \"fs\"\n");
    for fs in &lacking {
        text.push_str(&format!(
            "[[target]]\nlabel = \"t-{fs}\"\nfs = \"{fs}\"\nloop = {{ dir = \"{}\", size = \"128m\" }}\n",
            images.display()
        ));
    }
    text.push_str("[[workload]]\nlabel = \"w\"\nargs = [\"--name=w\", \"--rw=write\", \"--size=1m\"]\n");
    let exp = write_exp(work.path(), &text);
    let out = work.path().join("results");
    let o = fsbench()
        .env("FSBENCH_STATE_DIR", state.path())
        .arg("experiment")
        .arg(&exp)
        .arg("--out")
        .arg(&out)
        .arg("--no-progress")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    for fs in &lacking {
        let line = err.lines().find(|l| l.contains(&format!("target 't-{fs}': "))).unwrap_or_else(|| panic!("t-{fs} not refused: {err}"));
        assert!(
            line.contains("the running kernel (") && line.contains(&format!("has no {fs} file system (not in /proc/filesystems")),
            "{line}"
        );
        // Whether its mkfs is there is said too, so one message says all that is missing.
        assert!(line.contains(&format!("mkfs.{fs}")), "{line}");
    }
    assert!(err.contains("nothing was run or created"), "{err}");
    assert!(!out.exists(), "a results directory was made");
    assert_eq!(std::fs::read_dir(&images).unwrap().count(), 0, "a loop image was made");
    assert!(loops_over(&images).is_empty(), "a loop device was made");
}

#[test]
fn reiserfs_is_refused_with_the_reason() {
    let work = tempfile::tempdir().unwrap();
    let exp = write_exp(
        work.path(),
        &format!(
            "name = \"r\"\n[[target]]\nlabel = \"r\"\nfs = \"reiserfs\"\nloop = {{ dir = \"{}\", size = \"128m\" }}\n\
             [[workload]]\nlabel = \"w\"\nargs = [\"--name=w\", \"--rw=write\", \"--size=1m\"]\n",
            work.path().display()
        ),
    );
    let o = fsbench().arg("experiment").arg(&exp).arg("--out").arg(work.path().join("results")).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains(":4:6: key 'fs':") && err.contains("got 'reiserfs'"), "{err}");
    assert!(err.contains("fsbench formats only these file systems (it knows how to run their mkfs unattended)"), "{err}");
    if !kernel_could_mount("reiserfs") {
        assert!(err.contains("the running kernel (") && err.contains("has no reiserfs file system either"), "{err}");
    }
}
