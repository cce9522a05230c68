//! What can be checked before a run is checked before it (issue 9, defects
//! 6, 10, 11 and 12): free space, numjobs, files under /dev, read-only jobs
//! on devices, engines that cannot keep a queue, cache scenarios that
//! cannot apply, JSON error objects, and warnings that reach stderr.

mod common;

use common::{fsbench, is_root, skip};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect()
}

#[test]
fn a_plan_larger_than_the_free_space_is_refused_before_anything_is_written() {
    let d = tempfile::tempdir().unwrap();
    let out = fsbench()
        .args(["fio", "--name=huge", "--rw=write", "--bs=1m", "--size=1p", "--no-progress"])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    let e = stderr(&out);
    assert!(!out.status.success());
    assert!(e.contains("needs about 1024.0 TiB") && e.contains(" free") && e.contains("--allow-fill"), "{e}");
    assert!(entries(d.path()).is_empty(), "nothing laid out: {:?}", entries(d.path()));

    // A Filebench fileset the same way: refused before preallocating.
    let wml = d.path().join("big.f");
    std::fs::write(
        &wml,
        format!(
            "set $dir={}\ndefine fileset name=big,path=$dir,size=1g,entries=1000000,dirwidth=100,prealloc=100\n\
             define process name=p {{ thread name=t {{ flowop openfile name=o,filesetname=big,fd=1\n flowop closefile name=c,fd=1 }} }}\nrun 1\n",
            d.path().display()
        ),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let out = fsbench().arg("filebench").arg("-f").arg(&wml).arg("--no-progress").output().unwrap();
    let e = stderr(&out);
    assert!(!out.status.success() && e.contains("--allow-fill") && e.contains("needs about"), "{e}");
    assert!(t0.elapsed().as_secs() < 30, "refused at once, not after preallocating");
    assert_eq!(entries(d.path()), vec![wml], "no fileset tree was made");
}

#[test]
fn numjobs_has_a_bound_with_a_clear_error() {
    let d = tempfile::tempdir().unwrap();
    let out = fsbench()
        .args(["fio", "--name=many", "--rw=write", "--size=1m", "--numjobs=100000", "--no-progress"])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("numjobs") && e.contains("4096") && e.contains("100000"), "{e}");
    // Many jobs whose numjobs add up past the bound, too.
    let mut args = vec!["fio".to_string()];
    for i in 0..3 {
        args.extend([format!("--name=j{i}"), "--rw=read".into(), "--size=1m".into(), "--numjobs=2000".into()]);
    }
    let out = fsbench().args(&args).arg(format!("--directory={}", d.path().display())).output().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("6000 clones") && e.contains("4096"), "{e}");
    assert!(entries(d.path()).is_empty());
}

/// nrfiles had no bound but u32's: the names of four billion files were
/// built before anything checked them, and the process aborted asking for
/// 96 GB (found by the experiment fuzz in `cli_fuzz`).
#[test]
fn nrfiles_is_bounded_by_open_files_and_memory_before_names_are_made() {
    let d = tempfile::tempdir().unwrap();
    let dir = format!("--directory={}", d.path().display());
    let out = fsbench().args(["fio", "--name=x", "--size=1g", "--nrfiles=4000000000", "--no-progress", &dir]).output().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("nrfiles") && e.contains("4000000000 files open") && e.contains("ulimit -n"), "{e}");
    // Files worked on by path are not held open: memory bounds them.
    let out = fsbench()
        .args(["fio", "--name=x", "--ioengine=filestat", "--size=1g", "--nrfiles=4000000000", "--no-progress", &dir])
        .output()
        .unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("nrfiles") && e.contains("lay out 4000000000 files") && e.contains("of RAM"), "{e}");
    // In an experiment, too, before its target is touched.
    let exp = d.path().join("e.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"n\"\n[[target]]\nlabel = \"here\"\ndirectory = \"{}\"\n[[workload]]\nlabel = \"w\"\nargs = [\"--name=x\", \"--size=1g\", \"--nrfiles=4000000000\"]\n",
            d.path().join("t").display()
        ),
    )
    .unwrap();
    std::fs::create_dir(d.path().join("t")).unwrap();
    let out = fsbench().args(["experiment", "--no-progress"]).arg(&exp).output().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("nrfiles") && e.contains("4000000000"), "{e}");
    assert!(entries(&d.path().join("t")).is_empty());
    assert_eq!(entries(d.path()).len(), 2, "{:?}", entries(d.path()));
}

#[test]
fn no_regular_files_are_created_under_dev() {
    let name = format!("/dev/fsbench-test-missing-{}", std::process::id());
    let out =
        fsbench().args(["fio", "--name=x", "--rw=write", "--size=1m", "--no-progress"]).arg(format!("--filename={name}")).output().unwrap();
    let e = stderr(&out);
    assert!(!out.status.success(), "{e}");
    assert!(e.contains(&name) && e.contains("does not exist") && e.contains("/dev"), "{e}");
    assert!(!Path::new(&name).exists(), "{name} was created");
}

/// A loop device over a sparse 32 MiB file with known contents; detached
/// and unmounted when dropped.
struct Loop {
    dev: String,
    mount: Option<tempfile::TempDir>,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn attach() -> Option<Loop> {
        let dir = tempfile::tempdir().ok()?;
        let img = dir.path().join("img");
        let data: Vec<u8> = (0..32u32 << 20).map(|i| (i.wrapping_mul(2654435761) >> 24) as u8).collect();
        std::fs::write(&img, data).ok()?;
        let out = Command::new("losetup").args(["-f", "--show"]).arg(&img).output().ok()?;
        out.status.success().then(|| Loop { dev: String::from_utf8_lossy(&out.stdout).trim().to_string(), mount: None, _dir: dir })
    }
    fn contents(&self) -> Vec<u8> {
        std::fs::read(&self.dev).unwrap()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        if let Some(m) = self.mount.take() {
            let _ = Command::new("umount").arg(m.path()).status();
        }
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

#[test]
fn read_only_jobs_on_a_device_need_no_allow_device_and_may_run_on_a_mounted_one() {
    if !is_root() {
        skip("needs root to attach a loop device");
        return;
    }
    let Some(mut lo) = Loop::attach() else {
        skip("cannot attach a loop device");
        return;
    };
    let before = lo.contents();
    let read = |lo: &Loop, extra: &[&str]| {
        fsbench()
            .args(["fio", "--name=r", "--rw=randread", "--bs=4k", "--size=8m", "--direct=1", "--output-format=json", "--no-progress"])
            .arg(format!("--filename={}", lo.dev))
            .args(extra)
            .output()
            .unwrap()
    };
    let out = read(&lo, &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = v["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["name"] == "read").unwrap().clone();
    assert_eq!(r["bytes"].as_u64(), Some(8 << 20), "{r}");
    assert!(lo.contents() == before, "a read-only job changed the device");

    // Writing still needs --allow-device.
    let out = fsbench()
        .args(["fio", "--name=w", "--rw=write", "--size=1m", "--no-progress"])
        .arg(format!("--filename={}", lo.dev))
        .output()
        .unwrap();
    assert!(!out.status.success() && stderr(&out).contains("--allow-device"), "{}", stderr(&out));
    assert!(lo.contents() == before, "a refused job wrote");

    // Mounted: reading is fine, writing is refused even with --allow-device.
    if !Command::new("mkfs.ext4").args(["-q", "-F", &lo.dev]).status().is_ok_and(|s| s.success()) {
        skip("mkfs.ext4 failed; the mounted case is not tested");
        return;
    }
    let m = tempfile::tempdir().unwrap();
    assert!(Command::new("mount").arg(&lo.dev).arg(m.path()).status().unwrap().success());
    lo.mount = Some(m);
    let out = read(&lo, &[]);
    assert!(out.status.success(), "reading a mounted device: {}", stderr(&out));
    let out = fsbench()
        .args(["fio", "--name=w", "--rw=write", "--size=1m", "--allow-device", "--no-progress"])
        .arg(format!("--filename={}", lo.dev))
        .output()
        .unwrap();
    assert!(!out.status.success() && stderr(&out).contains("mounted"), "{}", stderr(&out));
}

#[test]
fn cpu_per_op_leaves_the_ramp_out() {
    // The null engine burns CPU as fast as it can in the ramp and in the
    // window alike: one thread cannot use more CPU than the 1-s window
    // lasted, so counting the 2-s ramp would show up as ~3 s.
    let d = tempfile::tempdir().unwrap();
    let dir = format!("--directory={}", d.path().display());
    let v = common::fio_json(&[
        "--name=n",
        "--ioengine=null",
        "--rw=read",
        "--bs=4k",
        "--size=1m",
        "--time_based",
        "--runtime=1",
        "--ramp_time=2",
        &dir,
    ]);
    let cpu = &v["groups"][0]["cpu"];
    let used = cpu["user_s"].as_f64().unwrap() + cpu["system_s"].as_f64().unwrap();
    assert!(used > 0.05, "the window used CPU: {cpu}");
    assert!(used < 1.6, "CPU of the ramp counted: {used} s for a 1-s window ({cpu})");
}

#[test]
fn quick_refuses_synchronous_engines_for_queue_depth_tests_and_says_what_it_measured() {
    let d = tempfile::tempdir().unwrap();
    for engine in ["psync", "mmap", "null"] {
        let out = fsbench().arg("quick").arg(d.path()).args(["--size=1m", "--runtime=1", "--qd32-engine", engine]).output().unwrap();
        let e = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{engine}: {e}");
        assert!(e.contains("cannot keep 32 I/Os in flight") && e.contains("io_uring"), "{e}");
    }
    let shm = Path::new("/dev/shm");
    let on_tmpfs = std::fs::read_to_string("/proc/self/mounts")
        .unwrap()
        .lines()
        .any(|l| l.split(' ').nth(1) == Some("/dev/shm") && l.contains(" tmpfs "));
    if !on_tmpfs {
        skip("/dev/shm is not a tmpfs here; the memory-file-system header is not tested");
        return;
    }
    let d = tempfile::tempdir_in(shm).unwrap();
    let out =
        fsbench().arg("quick").arg(d.path()).args(["--size=1m", "--runtime=1", "--qd32-engine=libaio", "--no-progress"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let header = text.lines().next().unwrap_or_default();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(header.contains("tmpfs") && header.contains("no disk was measured"), "{header}");
}

#[test]
fn one_warm_run_keeps_the_tools_report() {
    let d = tempfile::tempdir().unwrap();
    let out = fsbench()
        .args(["fio", "--name=w", "--rw=write", "--bs=4k", "--size=256k", "--cache=warm", "--output-format=json", "--no-progress"])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["schema"], "fsbench-result/2", "a single run's document, not a repeated one");
    let out = fsbench()
        .args(["fio", "--name=w", "--rw=write", "--bs=4k", "--size=256k", "--cache=warm", "--no-progress"])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("w: 1 thread") && !text.contains("runs"), "the single run's layout: {text}");
}

#[test]
fn a_cache_scenario_that_cannot_apply_is_refused_unless_allowed() {
    let d = tempfile::tempdir().unwrap();
    let args = ["fio", "--name=w", "--rw=write", "--bs=4k", "--size=256k", "--cache=fresh-mount", "--no-progress"];
    let out = fsbench().args(args).arg(format!("--directory={}", d.path().display())).output().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("fresh-mount needs a managed target") && e.contains("--allow-uncontrolled"), "{e}");
    assert!(entries(d.path()).is_empty(), "nothing ran");
    let out = fsbench()
        .args(args)
        .args(["--allow-uncontrolled", "--output-format=json"])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["cache_reports"][0]["applied"], false, "recorded as not applied: {}", v["cache_reports"]);
    assert!(stderr(&out).contains("did not take effect"));
}

#[test]
fn json_modes_print_an_error_object_for_errors_before_the_run() {
    for args in [
        vec!["fio", "--name=x", "--bs=banana", "--output-format=json"],
        vec!["fio", "--name=x", "--repeat=0", "--output-format", "json"],
        vec!["experiment", "/nonexistent/exp.toml", "--output-format=json"],
        vec!["compare", "/nonexistent/a.json", "/nonexistent/b.json", "--output-format=json"],
    ] {
        let out = fsbench().args(&args).output().unwrap();
        assert!(!out.status.success(), "{args:?}");
        let v: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)));
        assert_eq!(v["schema"], "fsbench-error/1", "{v}");
        assert_eq!(v["exit_status"].as_i64(), out.status.code().map(i64::from), "{v}");
        let msg = v["error"].as_str().unwrap();
        assert!(!msg.is_empty() && stderr(&out).contains(msg.lines().next().unwrap()), "{msg} / {}", stderr(&out));
    }
    // Text mode keeps stdout empty.
    let out = fsbench().args(["fio", "--name=x", "--bs=banana"]).output().unwrap();
    assert!(out.stdout.is_empty());
}

#[test]
fn every_warning_of_the_document_is_also_on_stderr() {
    let d = tempfile::tempdir().unwrap();
    let out = fsbench()
        .args([
            "fio",
            "--name=w",
            "--rw=randwrite",
            "--bs=4k",
            "--size=256k",
            "--runtime=1",
            "--repeat=3",
            "--output-format=json",
            "--no-progress",
        ])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = stderr(&out);
    let mut all: Vec<String> = v["warnings"].as_array().unwrap().iter().map(|w| w["message"].as_str().unwrap().to_string()).collect();
    for r in v["runs"].as_array().unwrap() {
        all.extend(r["warnings"].as_array().unwrap().iter().map(|w| w["message"].as_str().unwrap().to_string()));
    }
    assert!(!all.is_empty(), "a buffered 256 KiB working set is warned about");
    for w in &all {
        assert!(e.contains(w.as_str()), "'{w}' is not on stderr:\n{e}");
    }
}

#[test]
fn an_experiment_whose_cache_scenario_cannot_apply_is_refused_before_it_starts() {
    let work = tempfile::tempdir().unwrap();
    let exp = work.path().join("exp.toml");
    std::fs::write(
        &exp,
        format!(
            "name = \"fm\"\ncache = [\"warm\", \"fresh-mount\"]\n[[target]]\nlabel = \"dir\"\ndirectory = \"{}\"\n\
             [[workload]]\nlabel = \"w\"\nargs = [\"--name=w\", \"--rw=write\", \"--bs=64k\", \"--size=256k\"]\n",
            work.path().display()
        ),
    )
    .unwrap();
    let out_dir = work.path().join("out");
    let out = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out_dir).arg("--no-progress").output().unwrap();
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("target 'dir'") && e.contains("fresh-mount needs a managed target") && e.contains("--allow-uncontrolled"), "{e}");
    assert!(!out_dir.exists(), "nothing was created");
}
