//! Runs that die: start fsbench with a state directory of the test's own,
//! wait (polling, with a timeout) until it has made what the test is about,
//! SIGKILL it, run `fsbench cleanup`; and what the machine looked like
//! before and after (mounts, loop devices, active block devices, a tree).
#![allow(dead_code)]

use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The binary the tests run.
pub fn bin() -> PathBuf {
    assert_cmd::cargo::cargo_bin("fsbench")
}

/// `fsbench ARGS` in `cwd` with its records in `state`, output discarded.
pub fn spawn(cwd: &Path, state: &Path, args: &[&str]) -> Child {
    Command::new(bin())
        .current_dir(cwd)
        .env("FSBENCH_STATE_DIR", state)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fsbench starts")
}

/// `fsbench ARGS` in `cwd` with its records in `state`, to the end.
pub fn run(cwd: &Path, state: &Path, args: &[&str]) -> Output {
    Command::new(bin()).current_dir(cwd).env("FSBENCH_STATE_DIR", state).args(args).stdin(Stdio::null()).output().expect("fsbench runs")
}

/// Every record in `state` (the JSON of each `PID-START.json`).
pub fn records(state: &Path) -> Vec<Value> {
    let Ok(d) = std::fs::read_dir(state) else { return Vec::new() };
    d.filter_map(|e| e.ok())
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.ends_with(".json") && !n.starts_with('.')
        })
        .filter_map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).ok()?).ok())
        .collect()
}

/// Every action of every record.
pub fn actions(state: &Path) -> Vec<Value> {
    records(state).iter().filter_map(|r| r["actions"].as_array().cloned()).flatten().collect()
}

/// The path an action of kind `kind` (`remove_file`, `remove_dir`) names,
/// in either record format.
pub fn action_path(a: &Value, kind: &str) -> Option<PathBuf> {
    let v = &a[kind];
    v.as_str().or_else(|| v["path"].as_str()).map(PathBuf::from)
}

/// Whether a record lists `path` for `kind` with its identity (an older
/// fsbench recorded none: then the path alone).
pub fn recorded(state: &Path, kind: &str, path: &Path) -> bool {
    actions(state).iter().any(|a| {
        action_path(a, kind).is_some_and(|p| p == path || p.file_name() == path.file_name() && p.is_relative())
            && (a[kind].is_string() || a[kind]["ino"].is_u64())
    })
}

/// Poll `cond` every 20 ms until it holds or `secs` pass; `child` must stay
/// alive meanwhile (its stderr is shown when it ended early).
pub fn wait_until(child: &mut Child, secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(secs) {
        if cond() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut e, &mut err);
            }
            panic!("fsbench ended ({status}) before {what}: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(child);
    panic!("no {what} within {secs} s");
}

/// SIGKILL `child` and reap it.
pub fn kill(child: &mut Child) {
    // SAFETY: kill takes plain integers; `child` has not been reaped, so its
    // pid still names that process.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let _ = child.wait();
}

/// `fsbench cleanup` in `cwd` with the test's state directory; its output
/// (stdout then stderr), after checking it succeeded.
pub fn cleanup(cwd: &Path, state: &Path) -> String {
    let o = run(cwd, state, &["cleanup"]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(o.status.success(), "fsbench cleanup failed: {text}");
    text
}

/// Runs `fsbench cleanup` when dropped during a panic, so a test that
/// fails after its SIGKILL leaves no mount or loop device on the machine.
pub struct CleanupOnPanic<'a> {
    pub cwd: &'a Path,
    pub state: &'a Path,
}

impl Drop for CleanupOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let _ = Command::new(assert_cmd::cargo::cargo_bin("fsbench"))
                .current_dir(self.cwd)
                .env("FSBENCH_STATE_DIR", self.state)
                .arg("cleanup")
                .output();
        }
    }
}

/// Mounts (`/proc/self/mountinfo`: point, source, type).
pub fn mounts() -> Vec<(String, String, String)> {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (a, b) = l.split_once(" - ")?;
            let point = a.split(' ').nth(4)?.to_string();
            let mut b = b.split(' ');
            let fstype = b.next()?.to_string();
            Some((point, b.next()?.to_string(), fstype))
        })
        .collect()
}

pub fn mounted_at(point: &Path) -> Option<(String, String)> {
    let p = point.to_string_lossy();
    mounts().into_iter().rev().find(|m| m.0 == p).map(|m| (m.1, m.2))
}

/// Loop devices and their backing files (`/sys/block/loopN/loop/backing_file`).
pub fn loops() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir("/sys/block").into_iter().flatten().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if let Ok(b) = std::fs::read_to_string(e.path().join("loop/backing_file")) {
            out.insert(n, b.trim().to_string());
        }
    }
    out
}

/// Block devices in use as fsbench makes them: attached loop devices and
/// zram devices with a size.
pub fn active_devices() -> Vec<String> {
    let mut out: Vec<String> = loops().into_iter().map(|(n, b)| format!("{n} over {b}")).collect();
    for e in std::fs::read_dir("/sys/block").into_iter().flatten().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        let size = std::fs::read_to_string(e.path().join("disksize")).unwrap_or_default();
        if n.starts_with("zram") && size.trim() != "0" && !size.is_empty() {
            out.push(format!("{n} of {}", size.trim()));
        }
    }
    out.sort();
    out
}

/// Every entry under `root`: relative path → (kind, size, a hash of the
/// content, mode, inode). Nothing of the user's may change, and nothing
/// may be added.
pub fn tree(root: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        let Ok(rd) = std::fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else { continue };
            let rel = p.strip_prefix(root).unwrap().to_path_buf();
            if m.is_dir() {
                out.insert(rel, format!("dir mode {:o} ino {}", m.mode(), m.ino()));
                walk(root, &p, out);
            } else {
                let data = std::fs::read(&p).unwrap_or_default();
                let h = data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100_0000_01b3));
                out.insert(rel, format!("file {} bytes hash {h:x} mode {:o} ino {}", m.len(), m.mode(), m.ino()));
            }
        }
    }
    walk(root, root, &mut out);
    out
}

/// What the machine and a directory look like, for "back as it was".
#[derive(Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Mounts of things under the test's directory or of its loop devices.
    pub mounts: Vec<(String, String, String)>,
    /// Loop devices over files in the test's directory.
    pub devices: Vec<String>,
    pub tree: BTreeMap<PathBuf, String>,
}

impl Snapshot {
    /// The machine as far as the test can change it: `work` holds
    /// everything the test makes (images, trees); other processes on the
    /// machine (other tests) may mount and attach their own meanwhile, so
    /// only what refers to `work` (or to `mount_points` the killed run
    /// recorded) is compared.
    pub fn take(work: &Path, mount_points: &[PathBuf]) -> Snapshot {
        let w = work.to_string_lossy().into_owned();
        let ours: Vec<String> = loops().into_iter().filter(|(_, b)| b.starts_with(&w)).map(|(n, _)| format!("/dev/{n}")).collect();
        let mut mounts: Vec<_> = mounts()
            .into_iter()
            .filter(|(p, s, _)| p.starts_with(&w) || ours.contains(s) || mount_points.iter().any(|m| m.to_string_lossy() == *p))
            .collect();
        mounts.sort();
        // zram devices are left out: other tests on the machine add their own.
        let devices = active_devices().into_iter().filter(|d| d.contains(&w)).collect();
        Snapshot { mounts, devices, tree: tree(work) }
    }
}

/// The mount points a killed run recorded (to look for them afterwards).
pub fn recorded_mount_points(state: &Path) -> Vec<PathBuf> {
    actions(state).iter().filter_map(|a| a["unmount"].as_str().or_else(|| a["unmount"]["point"].as_str()).map(PathBuf::from)).collect()
}
