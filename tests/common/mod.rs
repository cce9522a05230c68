//! Helpers for the CLI tests: run fsbench, parse its JSON, check requirements.
#![allow(dead_code)]

pub mod fuzz;
pub mod killed;

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;

/// fsbench with a state directory of this test binary's own (a test that
/// needs another sets FSBENCH_STATE_DIR again): the records of what its
/// runs make never mix with the machine's, nor with another binary's
/// running at the same time.
pub fn fsbench() -> Command {
    let mut c = Command::cargo_bin("fsbench").expect("binary built");
    c.env("FSBENCH_STATE_DIR", private_state_dir());
    c
}

fn private_state_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("state-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("a state directory for the tests");
        d
    })
}

/// Run `fsbench fio ARGS --output-format=json --no-progress`, expect success,
/// return the parsed result.
pub fn fio_json(args: &[&str]) -> Value {
    let out = fsbench().arg("fio").args(args).args(["--output-format=json", "--no-progress"]).output().expect("fsbench runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "fsbench failed: {stderr}");
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}\nstderr: {stderr}", String::from_utf8_lossy(&out.stdout)))
}

/// The `name` operation of job `i`.
pub fn op<'a>(v: &'a Value, job: usize, name: &str) -> &'a Value {
    v["jobs"][job]["ops"]
        .as_array()
        .expect("ops array")
        .iter()
        .find(|o| o["name"] == name)
        .unwrap_or_else(|| panic!("no '{name}' op in job {job}: {}", v["jobs"][job]))
}

pub fn is_root() -> bool {
    fsbench::host::is_root()
}

/// Skip (return true) with a printed reason when a requirement is missing.
pub fn skip(reason: &str) -> bool {
    eprintln!("SKIPPED: {reason}");
    true
}

pub fn have(cmd: &str) -> bool {
    std::process::Command::new("sh").args(["-c", &format!("command -v {cmd}")]).output().map(|o| o.status.success()).unwrap_or(false)
}

/// Pages of `path` resident in the page cache (mincore over a mapping).
pub fn resident_pages(path: &Path) -> usize {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    if len == 0 {
        return 0;
    }
    // SAFETY: sysconf only reads the constant it is given; no memory of ours is involved.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    // SAFETY: a new read-only shared mapping of the `len` bytes of open file
    // `f` (unmapped before `f` closes); `vec` has one byte per page of it,
    // which is what mincore writes.
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0);
        assert_ne!(p, libc::MAP_FAILED);
        let mut vec = vec![0u8; len.div_ceil(page)];
        assert_eq!(libc::mincore(p, len, vec.as_mut_ptr()), 0);
        libc::munmap(p, len);
        vec.iter().filter(|&&b| b & 1 == 1).count()
    }
}

/// Drop a file's clean cached pages.
pub fn drop_cache(path: &Path) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).unwrap();
    // SAFETY: fdatasync and posix_fadvise take `f`'s descriptor (open for the
    // whole block) and integers; no memory of ours is involved.
    unsafe {
        libc::fdatasync(f.as_raw_fd());
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

/// A temporary directory on a file system that supports O_DIRECT (tmpfs
/// may not): under the target directory of the build, which is on disk.
pub fn disk_tempdir() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR"));
    tempfile::tempdir_in(base).expect("tempdir")
}

/// A command that failed before its document: stdout is empty, or (JSON
/// asked for) holds only the error object, whose message is on stderr too.
pub fn assert_no_document(out: &std::process::Output) {
    if out.stdout.is_empty() {
        return;
    }
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("stdout is neither empty nor JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(doc["schema"], "fsbench-error/1", "only the error object: {doc}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(doc["error"].as_str().is_some_and(|e| err.contains(e)), "the object carries stderr's error: {doc}");
}

/// Write an experiment file `exp.toml` into `dir`.
pub fn write_exp(dir: &Path, text: &str) -> std::path::PathBuf {
    let p = dir.join("exp.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// The file names in an experiment's `runs/`, sorted.
pub fn run_files(out: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(out.join("runs")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// A tracefs to use: the one mounted at the usual places, or one this test
/// mounts itself on a temporary directory (unmounted when dropped), so the
/// tests that read block events run on a machine where tracefs is not mounted.
pub struct Tracefs {
    pub path: std::path::PathBuf,
    own: Option<tempfile::TempDir>,
}

impl Tracefs {
    pub fn get() -> Option<Tracefs> {
        for t in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
            if Path::new(t).join("events").is_dir() {
                return Some(Tracefs { path: t.into(), own: None });
            }
        }
        let dir = tempfile::tempdir().ok()?;
        let ok = std::process::Command::new("mount").args(["-t", "tracefs", "nodev"]).arg(dir.path()).status().is_ok_and(|s| s.success());
        ok.then(|| Tracefs { path: dir.path().into(), own: Some(dir) })
    }
}

impl Drop for Tracefs {
    fn drop(&mut self) {
        if let Some(dir) = &self.own {
            let _ = std::process::Command::new("umount").arg(dir.path()).status();
        }
    }
}

/// tracefs at /sys/kernel/tracing, mounted there if the kernel has it and
/// nothing is mounted yet (a fresh machine often has it unmounted). It is
/// left mounted: the standard place, and the tests read the tracer's state
/// there after fsbench has put it back. Root only.
#[allow(dead_code)]
pub fn ensure_tracefs() -> bool {
    let root = std::path::Path::new("/sys/kernel/tracing");
    if root.join("trace").exists() {
        return true;
    }
    if !std::fs::read_to_string("/proc/filesystems").unwrap_or_default().contains("tracefs") {
        return false;
    }
    std::process::Command::new("mount").args(["-t", "tracefs", "nodev"]).arg(root).status().is_ok_and(|s| s.success())
        && root.join("trace").exists()
}
