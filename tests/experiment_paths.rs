//! A workload's own path options stay inside its target in an experiment
//! (issue 31, item 4): `bonnie = "-d /tmp"`, Postmark's `set location
//! /etc`, IOzone's `-f`/`-F`, a Filebench fileset's path, YCSB's
//! `<store>.dir`, fio's `filename=`/`directory=` (on the command line or in
//! a job file) ran where they named and were labelled with the target. Now
//! such a path is refused before anything is set up, naming the workload,
//! the option, the value and the target; a relative path lands in the target.

mod common;
use common::*;
use std::path::{Path, PathBuf};

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The loop devices whose image is in `dir`, from `losetup -a`.
fn loops_over(dir: &Path) -> Vec<String> {
    let out = std::process::Command::new("losetup").arg("-a").output().map(|o| o.stdout).unwrap_or_default();
    String::from_utf8_lossy(&out).lines().filter(|l| l.contains(&dir.display().to_string())).map(str::to_string).collect()
}

/// Every entry under `dir`, recursively, with its contents for files.
fn tree(dir: &Path) -> Vec<(PathBuf, Option<Vec<u8>>)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.push((p.clone(), None));
            v.extend(tree(&p));
        } else {
            v.push((p.clone(), Some(std::fs::read(&p).unwrap())));
        }
    }
    v.sort();
    v
}

/// Bonnie++'s file tests only (no IO tests), as root must name a user.
fn bonnie_small() -> &'static str {
    if is_root() {
        "-s 0 -n 1 -u root"
    } else {
        "-s 0 -n 1"
    }
}

/// A work directory with a target directory `T`, a loop image directory
/// `L`, and `OUT` holding a file of the user's, which nothing may touch.
struct Work {
    dir: tempfile::TempDir,
    state: tempfile::TempDir,
}

impl Work {
    fn new() -> Work {
        let w = Work { dir: disk_tempdir(), state: tempfile::tempdir().unwrap() };
        for d in ["T", "L", "OUT", "cwd"] {
            std::fs::create_dir(w.path(d)).unwrap();
        }
        std::fs::write(w.path("OUT/users-file"), "the user's data").unwrap();
        w
    }
    fn path(&self, p: &str) -> PathBuf {
        self.dir.path().join(p)
    }
    /// `fsbench experiment EXP --out OUTDIR` from `cwd`, with a private state directory.
    fn run(&self, exp: &Path) -> std::process::Output {
        fsbench()
            .current_dir(self.path("cwd"))
            .env("FSBENCH_STATE_DIR", self.state.path())
            .arg("experiment")
            .arg(exp)
            .arg("--out")
            .arg(self.path("results"))
            .args(["--no-progress", "--output-format", "json"])
            .output()
            .unwrap()
    }
    /// The refusal left everything as it was: no results, no target
    /// subdirectory, no image or loop device, the user's directory as it was.
    fn assert_nothing_done(&self, before: &[(PathBuf, Option<Vec<u8>>)], o: &std::process::Output) {
        let err = stderr(o);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("nothing was run or created"), "{err}");
        assert!(!self.path("results").exists(), "a results directory was made: {err}");
        assert_eq!(tree(&self.path("OUT")), before, "the directory outside the target was touched");
        assert!(tree(&self.path("T")).is_empty(), "the directory target was set up");
        assert!(tree(&self.path("L")).is_empty(), "a loop image was made");
        assert!(loops_over(&self.path("L")).is_empty(), "a loop device was made");
        assert!(tree(&self.path("cwd")).is_empty(), "something was written in the current directory");
    }
}

#[test]
fn every_familys_path_outside_the_target_is_refused_before_anything_is_set_up() {
    let w = Work::new();
    let out = w.path("OUT");
    let o = out.display();
    std::fs::write(w.path("job.fio"), format!("[j]\nrw=write\nsize=64k\nfilename={o}/jf\n")).unwrap();
    std::fs::write(
        w.path("files.f"),
        format!(
            "define fileset name=fs0,path=$dir,size=16k,entries=10,dirwidth=10,prealloc=100\n\
             define fileset name=fs1,path={o},size=16k,entries=10,dirwidth=10,prealloc=100\n\
             define process name=p,instances=1\n{{\n  thread name=t,memsize=1m,instances=1\n  {{\n    \
             flowop openfile name=open1,filesetname=fs1,fd=1\n    flowop closefile name=close1,fd=1\n  }}\n}}\nrun 1\n"
        ),
    )
    .unwrap();
    // A managed target too where this machine can make one: nothing of it
    // may be created either.
    let managed = is_root() && have("mkfs.ext4") && std::fs::read_to_string("/proc/filesystems").unwrap_or_default().contains("ext4");
    let ext4 = if managed {
        format!("[[target]]\nlabel = \"ext4\"\nfs = \"ext4\"\nloop = {{ dir = \"{}\", size = \"256m\" }}\n", w.path("L").display())
    } else {
        skip("the managed ext4 target of this test needs root, mkfs.ext4 and ext4 in the kernel; the directory target still runs");
        String::new()
    };
    let bonnie = bonnie_small();
    let mut stores = vec!["fjall", "redb"];
    if cfg!(feature = "rocksdb") {
        stores.push("rocksdb");
    }
    if cfg!(feature = "sqlite") {
        stores.push("sqlite");
    }
    // Each workload: its label, its table, and the option and value the
    // refusal must name.
    let mut cases: Vec<(String, String, String)> = vec![
        (
            "fio-filename".into(),
            format!("args = [\"--name=f\", \"--rw=write\", \"--size=64k\", \"--filename={o}/f\"]"),
            format!("filename={o}/f"),
        ),
        (
            "fio-directory".into(),
            format!("args = [\"--name=f\", \"--rw=write\", \"--size=64k\", \"--directory={o}\"]"),
            format!("directory={o}"),
        ),
        ("fio-jobfile".into(), "fio = \"job.fio\"".into(), format!("filename={o}/jf")),
        ("bonnie".into(), format!("bonnie = \"-d {o} {bonnie}\""), format!("-d {o}")),
        (
            "postmark".into(),
            format!("postmark = [\"set location {o}\", \"set number 50\", \"set transactions 50\"]"),
            format!("set location {o}"),
        ),
        ("iozone-f".into(), format!("iozone = \"-i 0 -s 64k -r 4k -f {o}/x\""), format!("-f {o}/x")),
        ("iozone-F".into(), format!("iozone = \"-i 0 -s 64k -r 4k -t 2 -F {o}/a {o}/b\""), format!("-F {o}/a")),
        (
            "filebench-set".into(),
            format!("filebench = \"fileserver\"\nset = {{ dir = \"{o}\", nfiles = 20 }}\nruntime = 1"),
            format!("fileset 'bigfileset' path={o}"),
        ),
        ("filebench-file".into(), "filebench = \"files.f\"".into(), format!("fileset 'fs1' path={o}")),
    ];
    for s in stores {
        cases.push((
            format!("ycsb-{s}"),
            format!("ycsb = \"load {s} -p recordcount=100 -p {s}.dir={o}/db\""),
            format!("-p {s}.dir={o}/db"),
        ));
    }
    let mut text = format!("name = \"outside\"\n[[target]]\nlabel = \"dir\"\ndirectory = \"{}\"\n{ext4}", w.path("T").display());
    for (label, table, _) in &cases {
        text.push_str(&format!("[[workload]]\nlabel = \"{label}\"\n{table}\n"));
    }
    let exp = write_exp(w.dir.path(), &text);
    let before = tree(&out);
    let o = w.run(&exp);
    w.assert_nothing_done(&before, &o);
    let err = stderr(&o);
    let on = if managed { "on every target" } else { "on target 'dir'" };
    for (label, _, named) in &cases {
        let line =
            err.lines().find(|l| l.contains(&format!("workload '{label}' {on}:"))).unwrap_or_else(|| panic!("{label} not refused: {err}"));
        assert!(line.contains(&format!("{named}: outside the target ${{target}}")), "{line}");
    }
}

#[test]
fn a_path_that_leaves_the_target_through_dotdot_is_refused() {
    let w = Work::new();
    // The directory target's run directory is T/fsbench-XXXX: two levels up
    // is the work directory, where OUT is.
    let exp = write_exp(
        w.dir.path(),
        &format!(
            "name = \"dotdot\"\n[[target]]\nlabel = \"dir\"\ndirectory = \"{}\"\n\
             [[workload]]\nlabel = \"fio\"\nargs = [\"--name=f\", \"--rw=write\", \"--size=64k\", \"--filename=${{target}}/../../OUT/f\"]\n\
             [[workload]]\nlabel = \"bonnie\"\nbonnie = \"-d ../../OUT {}\"\n",
            w.path("T").display(),
            bonnie_small()
        ),
    );
    let before = tree(&w.path("OUT"));
    let o = w.run(&exp);
    w.assert_nothing_done(&before, &o);
    let err = stderr(&o);
    assert!(err.contains("workload 'fio' on target 'dir': filename=${target}/../../OUT/f (resolves to "), "{err}");
    assert!(err.contains("workload 'bonnie' on target 'dir': -d ../../OUT (resolves to "), "{err}");
}

#[test]
fn relative_paths_land_inside_the_target() {
    let w = Work::new();
    // The YCSB load makes `rel` in the target; the others then use it.
    let exp = write_exp(
        w.dir.path(),
        &format!(
            r#"name = "relative"
[[target]]
label = "dir"
directory = "{}"
[[workload]]
label = "ycsb"
ycsb = "load fjall -p recordcount=100 -p fjall.dir=rel"
[[workload]]
label = "fio"
args = ["--name=f", "--rw=write", "--bs=4k", "--size=64k", "--filename=rel/f"]
[[workload]]
label = "bonnie"
bonnie = "-d rel {}"
[[workload]]
label = "postmark"
postmark = ["set location rel", "set number 50", "set transactions 50"]
[[workload]]
label = "iozone"
iozone = "-i 0 -s 64k -r 4k -f rel/iozone.tmp"
[[workload]]
label = "filebench"
filebench = "fileserver"
set = {{ dir = "rel", nfiles = 20, filesize = "16k" }}
runtime = 1
"#,
            w.path("T").display(),
            bonnie_small()
        ),
    );
    let o = w.run(&exp);
    assert!(o.status.success(), "{}", stderr(&o));
    let target = w.path("T").canonicalize().unwrap();
    let runs = run_files(&w.path("results"));
    assert_eq!(runs.len(), 6, "{runs:?}");
    for f in runs {
        let v: serde_json::Value = serde_json::from_slice(&std::fs::read(w.path("results/runs").join(&f)).unwrap()).unwrap();
        assert!(v["result"]["failed"].is_null(), "{f}: {}", v["result"]["failed"]);
        // Where the run's files were, as its result records them: in the
        // target's run directory, under `rel`.
        let places: Vec<PathBuf> =
            v["result"]["system"]["targets"].as_array().unwrap().iter().map(|t| PathBuf::from(t["path"].as_str().unwrap())).collect();
        assert!(!places.is_empty(), "{f}: no place recorded");
        for p in places {
            let inside = p.strip_prefix(&target).ok().and_then(|r| r.to_str()).map(|r| r.starts_with("fsbench-"));
            assert_eq!(inside, Some(true), "{f}: files at {} are not in the target {}", p.display(), target.display());
        }
    }
    assert!(tree(&w.path("cwd")).is_empty(), "relative paths went to the current directory: {:?}", tree(&w.path("cwd")));
    assert!(tree(&w.path("T")).is_empty(), "the target's run directory is removed after the experiment");
}
