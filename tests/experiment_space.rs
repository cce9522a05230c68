//! Space for what a workload adds while it runs (issue 32, item 3): a
//! Filebench workload that appends to a file grows during the run, which
//! the free-space check before laying out never counted (the default-scale
//! delalloc experiment FAILED every webserver run with ENOSPC). Before
//! anything is set up, the experiment bounds that growth and refuses a
//! target it would overflow, saying which workload, flowop, bound and
//! space, and how to fix it; a target large enough passes.

mod common;
use common::*;
use std::path::Path;

/// One thread appending 4 KiB to one file for `runtime` seconds.
const APPENDER: &str = "\
define fileset name=logs,path=$dir,size=4k,entries=1,dirwidth=2,prealloc
define process name=p,instances=1
{
  thread name=t,memsize=1m,instances=1
  {
    flowop appendfile name=applog,filesetname=logs,iosize=4k
  }
}
run 60
";

fn experiment(dir: &Path, images: &Path) -> std::path::PathBuf {
    std::fs::write(dir.join("appender.f"), APPENDER).unwrap();
    write_exp(
        dir,
        &format!(
            "name = \"space\"\n[params]\ndevsize = \"64m\"\nruntime = \"1\"\n\
             [[target]]\nlabel = \"small\"\nfs = \"ext4\"\nloop = {{ dir = \"{}\", size = \"${{devsize}}\" }}\n\
             [[workload]]\nlabel = \"appender\"\nfilebench = \"appender.f\"\nruntime = \"${{runtime}}\"\n",
            images.display()
        ),
    )
}

fn images(work: &Path) -> std::path::PathBuf {
    let d = work.join("images");
    std::fs::create_dir(&d).unwrap();
    d
}

#[test]
fn an_append_loop_that_would_overflow_the_target_is_refused_before_anything_runs() {
    if !is_root() && skip("managed loop targets need root") {
        return;
    }
    let work = disk_tempdir();
    let images = images(work.path());
    let exp = experiment(work.path(), &images);
    let out = work.path().join("results");
    let o = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out).arg("--no-progress").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let at = err.find("outgrow").unwrap_or_else(|| panic!("no growth refusal: {err}"));
    let said = &err[at..];
    for says in [
        "flowop 'applog'",
        "appendfile",
        "4.0 KiB per op",
        "ops/s",
        "over 1 s",
        "64.0 MiB loop device",
        "80%",
        "--set devsize=",
        "--allow-fill",
    ] {
        assert!(said.contains(says), "'{says}' missing: {err}");
    }
    assert!(err.contains("workload 'appender' on target 'small' can outgrow"), "{err}");
    assert!(!out.exists(), "nothing written: {}", out.display());
    assert_eq!(std::fs::read_dir(&images).unwrap().count(), 0, "no loop image made");

    // The target the message asks for passes the same check.
    let room = said.split("--set devsize=").nth(1).and_then(|s| s.split(')').next()).unwrap().to_string();
    let check = |sets: &[&str]| {
        let mut c = fsbench();
        c.args(["experiment", "--check"]).arg(&exp);
        for s in sets {
            c.args(["--set", s]);
        }
        c.output().unwrap()
    };
    let o = check(&[&format!("devsize={room}")]);
    assert_eq!(o.status.code(), Some(0), "devsize={room}: {}", String::from_utf8_lossy(&o.stderr));
    // The bound grows with the run: that target does not hold a ten times longer one,
    // and the message names the run that fits.
    let o = check(&[&format!("devsize={room}"), "runtime=10"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    let secs = err.split("--set runtime=").nth(1).and_then(|s| s.split(' ').next()).unwrap_or_else(|| panic!("no runtime fix: {err}"));
    let secs: u64 = secs.parse().unwrap();
    assert!((1..10).contains(&secs), "{err}");
    let o = check(&[&format!("devsize={room}"), &format!("runtime={secs}")]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    // --allow-fill: filling it is the point.
    let o = fsbench().args(["experiment", "--check", "--allow-fill"]).arg(&exp).output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_run_that_fills_the_target_anyway_is_a_failed_run_that_says_so() {
    if !is_root() && skip("managed loop targets need root") {
        return;
    }
    if !have("mkfs.ext4") && skip("no mkfs.ext4") {
        return;
    }
    let work = disk_tempdir();
    let images = images(work.path());
    let exp = experiment(work.path(), &images);
    let out = work.path().join("results");
    let o = fsbench()
        .args(["experiment", "--allow-fill", "--no-progress", "--set", "runtime=3"])
        .arg(&exp)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    let runs = run_files(&out);
    assert_eq!(runs.len(), 1, "{err}");
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("runs").join(&runs[0])).unwrap()).unwrap();
    let Some(failed) = run["result"]["failed"].as_str() else {
        // A slow disk may not fill 64 MiB in 3 s: then nothing to show.
        skip("the run did not fill the 64 MiB target");
        return;
    };
    assert!(failed.contains("No space left on device") && failed.contains("filled while it ran"), "{failed}");
    assert_eq!(o.status.code(), Some(1), "a failed run makes the experiment INCOMPLETE: {err}");
}
