//! Every output fsbench writes (the report, its exports, a tool's own files
//! such as IOzone's `-b` and YCSB's `exportfile`, fio's logs, charts,
//! traces, an experiment's results directory, replay's iolog) refuses a
//! block or character device and anything under /dev, before anything
//! runs: exit status 2, the flag and the path named, the device's bytes
//! unchanged, no workload file made, no new name under /dev. Through a
//! symlink or `..` too. The devices are loop devices over sparse files this
//! test makes (one with a mounted ext4 on it); needs root, SKIPPED otherwise.

mod common;

use common::{fsbench, is_root, skip};
use std::path::{Path, PathBuf};
use std::process::Command;

/// A loop device over a sparse file, with ext4 on it, mounted (read-only:
/// writing to the device is still possible, as the old code did) or not;
/// unmounted and detached when dropped.
struct Dev {
    dev: String,
    mnt: Option<PathBuf>,
    _dir: tempfile::TempDir,
}

impl Dev {
    fn new(mounted: bool) -> Option<Dev> {
        let dir = tempfile::tempdir().ok()?;
        let img = dir.path().join("img");
        std::fs::File::create(&img).and_then(|f| f.set_len(64 << 20)).ok()?;
        let out = Command::new("losetup").args(["--find", "--show"]).arg(&img).output().ok()?;
        if !out.status.success() {
            return None;
        }
        let mut d = Dev { dev: String::from_utf8_lossy(&out.stdout).trim().to_string(), mnt: None, _dir: dir };
        // No lazy initialisation: the kernel then writes nothing after the
        // mount, and a read-only mount not even the superblock, so any
        // change in its bytes is fsbench's.
        let mkfs = ["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", &d.dev];
        if !Command::new("mkfs.ext4").args(mkfs).status().is_ok_and(|s| s.success()) {
            return None;
        }
        if mounted {
            let mnt = d._dir.path().join("mnt");
            std::fs::create_dir(&mnt).ok()?;
            if !Command::new("mount").args(["-o", "ro"]).arg(&d.dev).arg(&mnt).status().is_ok_and(|s| s.success()) {
                return None;
            }
            d.mnt = Some(mnt);
        }
        Some(d)
    }

    /// The first MiB: the superblock and what is around it.
    fn head(&self) -> Vec<u8> {
        use std::io::Read;
        let mut b = vec![0u8; 1 << 20];
        std::fs::File::open(&self.dev).unwrap().read_exact(&mut b).unwrap();
        b
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        if let Some(m) = &self.mnt {
            let _ = Command::new("umount").arg(m).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

const WORK_DIRS: [&str; 3] = ["pm", "fb", "target"];

/// A workspace: a directory for the workloads' files and a private state directory.
struct Work {
    dir: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Work {
    fn new() -> Work {
        let w = Work { dir: tempfile::tempdir().unwrap(), state: tempfile::tempdir().unwrap() };
        w.reset();
        w
    }
    /// Empty but for the directories the workloads need (Postmark's
    /// location, Filebench's dir, the experiment's target) and `keep-*`.
    fn reset(&self) {
        for e in std::fs::read_dir(self.dir.path()).unwrap().flatten() {
            if !e.file_name().to_string_lossy().starts_with("keep-") {
                let _ = std::fs::remove_dir_all(e.path()).or_else(|_| std::fs::remove_file(e.path()));
            }
        }
        for d in WORK_DIRS {
            std::fs::create_dir(self.dir.path().join(d)).unwrap();
        }
    }
    fn path(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }
    fn run(&self, args: &[String]) -> std::process::Output {
        fsbench().args(args).current_dir(self.dir.path()).env("FSBENCH_STATE_DIR", self.state.path()).output().unwrap()
    }
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Why the command was not refused before anything ran, naming `flag`
/// and `shown` (None when it was).
fn not_refused(w: &Work, args: &[String], flag: &str, shown: &str) -> Option<String> {
    let out = w.run(args);
    let err = String::from_utf8_lossy(&out.stderr);
    if out.status.code() != Some(2) {
        return Some(format!("{args:?}: exit status {:?}, not 2:\n{err}", out.status.code()));
    }
    if !(err.contains(flag) && err.contains(shown) && (err.contains("device") || err.contains("under /dev"))) {
        return Some(format!("{args:?}: the error does not name {flag} and {shown} and say why:\n{err}"));
    }
    None
}

/// The workload files the command made (none, when nothing ran), removed
/// so the next command starts from the same place.
fn files_made(w: &Work) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            if e.file_name().to_string_lossy().starts_with("keep-") {
                continue;
            }
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), out);
            } else {
                out.push(e.path());
            }
        }
    }
    let mut made = Vec::new();
    walk(w.dir.path(), &mut made);
    w.reset();
    made
}

/// One command per family and output flag, aimed at `dev` (a device node or
/// a symlink to one); the files a workload would make are in `w`.
fn device_cases(w: &Work, dev: &str) -> Vec<(Vec<String>, &'static str)> {
    let fio = |extra: &[String]| {
        let mut v = s(&["fio", "--name=x", "--rw=write", "--bs=4k", "--size=256k", "--no-progress"]);
        v.push(format!("--filename={}", w.path("data")));
        v.extend_from_slice(extra);
        v
    };
    let iozone = |extra: &[String]| {
        let mut v = s(&["iozone", "-i", "0", "-s", "64k", "-r", "4k", "-f"]);
        v.push(w.path("iozone.tmp"));
        v.extend_from_slice(extra);
        v.push("--no-progress".into());
        v
    };
    let ycsb = |extra: &[String]| {
        let mut v = s(&["ycsb", "load", "rocksdb", "-P", "workloada", "-p", "recordcount=100", "--no-progress", "-p"]);
        v.push(format!("rocksdb.dir={}", w.path("db")));
        v.extend_from_slice(extra);
        v
    };
    let postmark = |extra: &[String]| {
        let mut v = s(&["postmark", "-c"]);
        v.push(format!("set location {}", w.path("pm")));
        v.extend(s(&["-c", "set number 20", "-c", "set transactions 20", "--no-progress"]));
        v.extend_from_slice(extra);
        v
    };
    let out = format!("--output={dev}");
    vec![
        (fio(std::slice::from_ref(&out)), "--output"),
        (fio(&["--output-format=json,normal".into(), "--output".into(), dev.into()]), "--output"),
        (fio(&[format!("--write_iolog={dev}")]), "write_iolog"),
        (iozone(std::slice::from_ref(&out)), "--output"),
        (iozone(&["-R".into(), "-b".into(), dev.into()]), "-b"),
        (ycsb(&["-p".into(), format!("exportfile={dev}")]), "exportfile"),
        (ycsb(std::slice::from_ref(&out)), "--output"),
        (s(&["bonnie", "-d", &w.path(""), "-s", "16", "-r", "8", "-n", "0", "-u", "root", "-q", "--no-progress", &out]), "--output"),
        (postmark(std::slice::from_ref(&out)), "--output"),
        (postmark(&["-c".into(), format!("run {dev}")]), "report file"),
        (s(&["filebench", "fileserver", "--set", &format!("dir={}", w.path("fb")), "--runtime", "1", "--no-progress", &out]), "--output"),
        (s(&["quick", &w.path(""), "--size", "1m", "--runtime", "1", "--no-progress", &out]), "--output"),
    ]
}

fn experiment(w: &Work, workload_args: &str) -> String {
    let text = format!(
        "name = \"o\"\nrepeat = 1\ncache = [\"warm\"]\n[[target]]\nlabel = \"d\"\ndirectory = \"{}\"\n[[workload]]\nlabel = \"w\"\nargs = [{workload_args}]\n",
        w.path("target")
    );
    let keep = tempfile::Builder::new().prefix("keep-").tempdir_in(w.dir.path()).unwrap().keep();
    common::write_exp(&keep, &text).display().to_string()
}

#[test]
fn outputs_into_a_device_are_refused_before_anything_runs() {
    if !is_root() {
        skip("not root: the devices are loop devices");
        return;
    }
    let (Some(mounted), Some(bare)) = (Dev::new(true), Dev::new(false)) else {
        skip("cannot make and format loop devices here");
        return;
    };
    let mut failures = Vec::new();
    for d in [&mounted, &bare] {
        let mut before = d.head();
        let w = Work::new();
        // The device by its node, and through a symlink in an ordinary directory.
        let link = tempfile::tempdir().unwrap();
        let via = link.path().join("report.json");
        std::os::unix::fs::symlink(&d.dev, &via).unwrap();
        for target in [d.dev.clone(), via.display().to_string()] {
            let mut cases = device_cases(&w, &target);
            let exp = experiment(&w, "\"--name=w\", \"--rw=write\", \"--size=256k\"");
            cases.push((s(&["experiment", &exp, "--out", &w.path("out"), "--no-progress", &format!("--output={target}")]), "--output"));
            let iolog = w.dir.path().join("keep-log");
            std::fs::write(&iolog, format!("fio version 2 iolog\n{0} add\n{0} open\n{0} write 0 4096\n{0} close\n", w.path("x"))).unwrap();
            cases.push((s(&["replay", &iolog.display().to_string(), "--target", &w.path("x"), "--to-iolog", &target]), "--to-iolog"));
            for (args, flag) in cases {
                // Through the symlink, the error says where it leads.
                let shown = if target == d.dev { target.clone() } else { format!("{target} (which leads to {})", d.dev) };
                failures.extend(not_refused(&w, &args, flag, &shown));
                let head = d.head();
                if head != before {
                    failures.push(format!("{args:?} wrote into {}", d.dev));
                    before = head;
                }
                let made = files_made(&w);
                if !made.is_empty() {
                    failures.push(format!("{args:?} ran: it made {made:?}"));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} case(s) not refused:\n{}", failures.len(), failures.join("\n"));
}

/// Whatever a failing run made under /dev with this test's names goes again.
struct DevNames(String);

impl Drop for DevNames {
    fn drop(&mut self) {
        for e in std::fs::read_dir("/dev").unwrap().flatten() {
            let ours = e.file_name().to_str().is_some_and(|n| n.starts_with("fsbench-test-") && n.contains(&self.0));
            match e.file_type() {
                Ok(t) if ours && t.is_dir() => drop(std::fs::remove_dir_all(e.path())),
                Ok(t) if ours && t.is_file() => drop(std::fs::remove_file(e.path())),
                _ => {}
            }
        }
    }
}

#[test]
fn no_output_is_created_under_dev() {
    if !is_root() {
        skip("not root: /dev is writable only by root, so nothing could be created there anyway");
        return;
    }
    let w = Work::new();
    let pid = std::process::id();
    let _gone = DevNames(format!("-{pid}"));
    let name = |what: &str| format!("/dev/fsbench-test-{what}-{pid}");
    let fio = |extra: &[&str]| {
        let mut v = s(&["fio", "--name=x", "--rw=write", "--bs=4k", "--size=256k", "--no-progress"]);
        v.push(format!("--filename={}", w.path("data")));
        v.extend(s(extra));
        v
    };
    // A path that only `..` (past a directory that does not exist yet) takes to /dev.
    let up = "../".repeat(w.dir.path().components().count() + 1);
    let sneaky = format!("{}/new/{up}dev/fsbench-test-up-{pid}", w.dir.path().display());
    let mut cases = vec![
        (fio(&["--charts", &name("charts")]), "--charts", name("charts")),
        (fio(&["--charts", &sneaky]), "--charts", format!("/dev/fsbench-test-up-{pid}")),
        (fio(&[&format!("--output={}", name("out"))]), "--output", name("out")),
        (fio(&["--trace", "--trace-output", &name("trace")]), "--trace-output", name("trace")),
        (s(&["trace", "-d", "fsbench-no-such-disk", "-w", "1", "-o", &name("t")]), "-o", name("t")),
    ];
    for (option, file) in [("write_bw_log", "bw"), ("write_lat_log", "lat"), ("write_iops_log", "iops"), ("write_hist_log", "hist")] {
        let prefix = name(&format!("log-{file}"));
        cases.push((fio(&[&format!("--{option}={prefix}")]), option, prefix));
    }
    let exp = experiment(&w, "\"--name=w\", \"--rw=write\", \"--size=256k\"");
    cases.push((s(&["experiment", &exp, "--out", &name("exp"), "--no-progress"]), "--out", name("exp")));
    let logged = experiment(&w, &format!("\"--name=w\", \"--rw=write\", \"--size=256k\", \"--write_bw_log={}\"", name("explog")));
    cases.push((s(&["experiment", &logged, "--out", &w.path("out"), "--no-progress"]), "write_bw_log", name("explog")));
    let mut failures = Vec::new();
    for (args, flag, shown) in cases {
        failures.extend(not_refused(&w, &args, flag, &shown));
        let in_dev: Vec<String> = std::fs::read_dir("/dev")
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("fsbench-test-") && n.contains(&format!("-{pid}")))
            .collect();
        if !in_dev.is_empty() {
            failures.push(format!("{args:?} made {in_dev:?} under /dev"));
            drop(DevNames(format!("-{pid}")));
        }
        let made = files_made(&w);
        if !made.is_empty() {
            failures.push(format!("{args:?} ran: it made {made:?}"));
        }
    }
    assert!(failures.is_empty(), "{} case(s) not refused:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn a_tmpfs_under_dev_is_a_place_for_files() {
    let Ok(shm) = tempfile::tempdir_in("/dev/shm") else {
        skip("no /dev/shm here");
        return;
    };
    let w = Work::new();
    let report = shm.path().join("r.json");
    let out = w.run(&[
        "fio".into(),
        "--name=x".into(),
        "--rw=write".into(),
        "--size=64k".into(),
        format!("--filename={}", w.path("data")),
        "--output-format=json".into(),
        format!("--output={}", report.display()),
        "--no-progress".into(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert!(doc["schema"].as_str().is_some_and(|s| s.starts_with("fsbench-result")), "{doc}");
}

/// A run refused after `--output` was checked (a bad flag the family's
/// parser finds) leaves no empty output file, and an existing output keeps
/// its bytes: the writability check made and left `=-format` in the working
/// directory whenever the fuzz gave `--output =-format` a bad neighbour.
/// Needs nothing but a directory.
#[test]
fn a_refused_run_leaves_no_output_file_and_an_existing_one_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().display().to_string();
    let refused: [&[&str]; 6] = [
        &["fio", "--name=x", "--size=1m", "--bogus=1"],
        &["iozone", "-i", "0", "-s", "64k", "-r", "4k", "-z9"],
        &["bonnie", "-d", &dir, "-s", "99999999999"],
        &["postmark", "/nonexistent/config.pm"],
        &["ycsb", "load", "null", "-p", "recordcount=x"],
        &["filebench", "-f", "/nonexistent/w.f"],
    ];
    for args in refused {
        let new = d.path().join("new.out");
        let out = fsbench().args(args).arg("--output").arg(&new).arg("--no-progress").output().unwrap();
        assert!(!out.status.success(), "{args:?} should be refused");
        assert!(!new.exists(), "{args:?}: a refused run left {}", new.display());
        let kept = d.path().join("kept.out");
        std::fs::write(&kept, b"earlier results").unwrap();
        let out = fsbench().args(args).arg("--output").arg(&kept).arg("--no-progress").output().unwrap();
        assert!(!out.status.success(), "{args:?} should be refused");
        assert_eq!(std::fs::read(&kept).unwrap(), b"earlier results", "{args:?}");
        std::fs::remove_file(&kept).unwrap();
    }
    let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "{left:?}");
}
