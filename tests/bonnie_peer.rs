//! `fsbench bonnie` against Debian's `bonnie++` 2.00a on one file system:
//! ext4 on a loop device over a sparse file in /dev/shm (RAM-backed, so the
//! figures are the two tools' paths through the same kernel, not a disk),
//! the same flags, runs alternating, caches dropped and the image trimmed
//! before each. Issue 31 (defect 11) reported fsbench's block write at
//! 1.81× Bonnie++'s on such a file system; the block write and the rewrite
//! must agree.
//!
//! The tolerance comes from the spread measured on this 2-core shared VM
//! (52 alternating pairs at load 1-10, -s 2048 -r 1024 and this test's
//! -s 1024 -r 512, fsbench before and after the fix, bonnie++ 2.00a): one
//! pair's block-write ratio fsbench / bonnie++ ranged 0.72-1.63, 2 of the
//! 52 above 1.5, and the median over each set of 3-8 pairs 0.89-1.24
//! (rewrite 0.93-1.11). The test takes the median of five pairs and
//! accepts 1/1.5 to 1.5: wider than any set's median, narrower than the
//! 1.81 the issue measured (three of five pairs beyond 1.5 by chance:
//! about 10 × 0.04³, under 0.1%).
//!
//! The timed spans themselves are compared call by call under strace: each
//! IO test's clock (getrusage) must start after its file is open and stop
//! after its fsync and close, as Bonnie++'s does.
//!
//! Needs root (loop device, mkfs.ext4, mount, drop_caches), bonnie++ and
//! about 3 GiB of free memory for the image, and strace for the spans;
//! each test skips with the reason otherwise.

mod common;

use common::{have, is_root, skip};
use std::path::Path;
use std::process::Command;

/// ext4 on a loop device over a sparse file in a directory under /dev/shm,
/// mounted on a temporary directory; undone when dropped, also when an
/// assertion fails.
struct Ext4 {
    dev: Option<String>,
    mnt: tempfile::TempDir,
    mounted: bool,
    _img_dir: tempfile::TempDir,
}

impl Ext4 {
    fn make(size: u64) -> Result<Ext4, String> {
        let img_dir = tempfile::Builder::new().prefix("fsbench-bonnie-peer-").tempdir_in("/dev/shm").map_err(|e| e.to_string())?;
        let img = img_dir.path().join("ext4.img");
        std::fs::File::create(&img).and_then(|f| f.set_len(size)).map_err(|e| e.to_string())?;
        let mut fs = Ext4 { dev: None, mnt: tempfile::tempdir().map_err(|e| e.to_string())?, mounted: false, _img_dir: img_dir };
        let out = Command::new("losetup").args(["--find", "--show"]).arg(&img).output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("losetup: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        fs.dev = Some(dev.clone());
        // Inode tables and journal zeroed now: ext4lazyinit would otherwise
        // zero them in the first seconds after the mount, under whichever
        // tool runs first.
        sh(Command::new("mkfs.ext4").args(["-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", &dev]))?;
        sh(Command::new("mount").arg(&dev).arg(fs.mnt.path()))?;
        fs.mounted = true;
        Ok(fs)
    }

    fn path(&self) -> &Path {
        self.mnt.path()
    }
}

impl Drop for Ext4 {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(self.mnt.path()).status();
        }
        if let Some(d) = &self.dev {
            let _ = Command::new("losetup").args(["-d", d]).status();
        }
    }
}

fn sh(cmd: &mut Command) -> Result<(), String> {
    let out = cmd.output().map_err(|e| e.to_string())?;
    out.status.success().then_some(()).ok_or_else(|| format!("{cmd:?}: {}", String::from_utf8_lossy(&out.stderr)))
}

/// Free memory (MemAvailable) in bytes.
fn available() -> u64 {
    let m = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    m.lines().find_map(|l| l.strip_prefix("MemAvailable:")).and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok()).unwrap_or(0)
        * 1024
}

/// One run of `prog` (bonnie++ or fsbench bonnie) in `dir`, from a dropped
/// cache: (block write, rewrite) in KiB/s from its CSV line.
fn run(prog: &[&Path], fs: &Ext4, flags: &[&str]) -> (f64, f64) {
    let dir = fs.path().join("b");
    std::fs::create_dir_all(&dir).unwrap();
    // SAFETY: sync takes no arguments.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3\n").unwrap();
    let mut cmd = Command::new(prog[0]);
    cmd.args(&prog[1..]).arg("-d").arg(&dir).args(flags);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{:?}: {}", prog, String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.starts_with("1.98,")).unwrap_or_else(|| panic!("{prog:?}: no CSV line in {text}"));
    let f: Vec<&str> = line.split(',').collect();
    let rate = |i: usize| f[i].parse::<f64>().unwrap_or_else(|_| panic!("{prog:?}: field {i} is '{}' (under 0.5 s?): {line}", f[i]));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "{prog:?} left files");
    // The image gives its pages back, so every run writes into the same
    // state of the backing file.
    let _ = Command::new("fstrim").arg(fs.path()).status();
    (rate(11), rate(13))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[test]
fn block_write_and_rewrite_agree_with_bonnie_on_the_same_ext4() {
    if !is_root() {
        skip("needs root for a loop device, mkfs.ext4, mount and drop_caches");
        return;
    }
    let Some(bonnie) = ["/usr/sbin/bonnie++", "/usr/bin/bonnie++"].into_iter().map(Path::new).find(|p| p.exists()) else {
        skip("bonnie++ is not installed (scripts/setup-peers.sh installs it)");
        return;
    };
    if !have("mkfs.ext4") || !have("losetup") {
        skip("mkfs.ext4 and losetup are needed");
        return;
    }
    // The 1 GiB file, ext4's metadata, and room to spare.
    if available() < 3 << 30 {
        skip("less than 3 GiB of memory available for the RAM-backed image");
        return;
    }
    let fs = match Ext4::make(2 << 30) {
        Ok(fs) => fs,
        Err(e) => {
            skip(&format!("cannot make ext4 on a loop device over /dev/shm: {e}"));
            return;
        }
    };
    let fsbench = assert_cmd::cargo::cargo_bin("fsbench");
    // The issue's flags at half the size (the block write still lasts well
    // over the 0.5 s below which Bonnie++ prints +++++), without the
    // per-character tests, whose calls the other test compares.
    let flags = ["-s", "1024", "-r", "512", "-n", "0", "-u", "root", "-q", "-f"];
    let (mut ratios_w, mut ratios_r) = (Vec::new(), Vec::new());
    for pair in 0..5 {
        let peer = || run(&[bonnie], &fs, &flags);
        let ours = || run(&[&fsbench, Path::new("bonnie")], &fs, &[&flags[..], &["--no-progress"]].concat());
        let ((bw, br), (fw, fr)) = if pair % 2 == 0 {
            let b = peer();
            (b, ours())
        } else {
            let f = ours();
            (peer(), f)
        };
        eprintln!("pair {}: block write bonnie++ {bw:.0} fsbench {fw:.0} KiB/s; rewrite {br:.0} {fr:.0}", pair + 1);
        ratios_w.push(fw / bw);
        ratios_r.push(fr / br);
    }
    let (w, r) = (median(ratios_w.clone()), median(ratios_r.clone()));
    eprintln!("median ratio fsbench / bonnie++: block write {w:.2} {ratios_w:.2?}, rewrite {r:.2} {ratios_r:.2?}");
    for (name, ratio) in [("block write", w), ("rewrite", r)] {
        assert!((1.0 / 1.5..=1.5).contains(&ratio), "{name}: fsbench / bonnie++ = {ratio:.2}, outside 0.67-1.5");
    }
}

/// The calls around the IO file of the thread that does the IO tests, in
/// order, until it starts the seekers: `unlink`, `create`, `open`, `clock`
/// (getrusage: a test's clock starting or stopping), `fsync`, `close`.
/// Bonnie++'s unlink of a file that is not there (ENOENT) is left out:
/// fsbench never removes what it did not make.
fn spans(log: &str) -> Vec<&'static str> {
    let io_tid = log
        .lines()
        .find(|l| l.contains("openat(") && l.contains("Bonnie.") && l.contains("O_CREAT"))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_else(|| panic!("no create of Bonnie.<pid> in:\n{log}"))
        .to_string();
    let mut fd = None;
    let mut out = Vec::new();
    for l in log.lines() {
        let mut w = l.splitn(2, ' ');
        if w.next() != Some(io_tid.as_str()) {
            continue;
        }
        // strace pads the pid to five columns: a four-digit pid is followed by two spaces.
        let call = w.next().unwrap_or("").trim_start();
        let ret = call.rsplit(" = ").next().unwrap_or("").trim();
        if call.starts_with("clone") {
            break;
        } else if call.starts_with("unlink(") && call.contains("Bonnie.") && !ret.starts_with('-') {
            out.push("unlink");
        } else if call.starts_with("openat(") && call.contains("Bonnie.") {
            out.push(if call.contains("O_CREAT") { "create" } else { "open" });
            fd = Some(ret.to_string());
        } else if call.starts_with("getrusage(") {
            out.push("clock");
        } else if call.starts_with("fsync(") {
            out.push("fsync");
        } else if fd.as_deref().is_some_and(|fd| call.starts_with(&format!("close({fd})"))) {
            out.push("close");
        }
    }
    out
}

#[test]
fn each_io_test_times_the_calls_bonnie_times() {
    if !is_root() || !have("strace") {
        skip("needs root (-u root) and strace");
        return;
    }
    let Some(bonnie) = ["/usr/sbin/bonnie++", "/usr/bin/bonnie++"].into_iter().map(Path::new).find(|p| p.exists()) else {
        skip("bonnie++ is not installed (scripts/setup-peers.sh installs it)");
        return;
    };
    let fsbench = assert_cmd::cargo::cargo_bin("fsbench");
    let d = tempfile::tempdir().unwrap();
    let trace = |prog: &[&Path], extra: &[&str]| {
        let log = d.path().join("strace.log");
        let out = Command::new("strace")
            .args(["-f", "--seccomp-bpf", "-e", "trace=openat,unlink,getrusage,fsync,close,clone,clone3", "-o"])
            .arg(&log)
            .args(prog)
            .arg("-d")
            .arg(d.path())
            .args(["-s", "16", "-r", "0", "-n", "0", "-u", "root", "-q"])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{prog:?}: {}", String::from_utf8_lossy(&out.stderr));
        spans(&std::fs::read_to_string(&log).unwrap())
    };
    let theirs = trace(&[bonnie], &[]);
    let ours = trace(&[&fsbench, Path::new("bonnie")], &["--no-progress"]);
    // putc on a new file; put_block on the file made anew; rewrite, getc,
    // get_block reopening it: the clock runs from after the open to after
    // the close.
    let test = |first: &[&'static str]| [first, &["clock", "fsync", "close", "clock"]].concat();
    let expected: Vec<&str> = [test(&["create"]), test(&["unlink", "create"]), test(&["open"]), test(&["open"]), test(&["open"])].concat();
    // The seek test follows (its clock, its seekers' opens): not compared.
    let five = |v: &[&'static str]| v[..expected.len().min(v.len())].to_vec();
    assert_eq!(five(&theirs), expected, "bonnie++ 2.00a itself: {theirs:?}");
    assert_eq!(five(&ours), expected, "fsbench bonnie: {ours:?}");
}
