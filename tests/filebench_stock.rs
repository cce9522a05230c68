//! Filebench's own 47 stock workload files (the `workloads/` folder of the
//! peers' Filebench snapshot), each run unchanged but shrunk with `--set`
//! (few small files, few threads, small counts, 1 s) on tmpfs. Every file
//! must either run to a good end or be refused for a reason on the
//! expected list below; none may fail at run time. Also: netsfs.f and
//! networkfs.f delete through a closed fd slot; a 1.4 script's finishon*
//! without `set mode quit` ends the run; a fileset without `dirwidth` runs
//! with Filebench's default and a located warning.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Files fsbench refuses, with the reason it must give: finishoncount or
/// finishonbytes without `set mode quit` in a 1.5-dialect script (Filebench
/// 1.5 makes their stop an error in timeout mode; only 1.4 scripts, which
/// ended the run there, are run).
const EXPECTED_REFUSALS: &[(&str, &str)] = &[
    ("filemicro_create.f", "flowop finishoncount needs 'set mode quit firstdone' or 'alldone'"),
    ("filemicro_createfiles.f", "flowop finishoncount needs 'set mode quit firstdone' or 'alldone'"),
    ("filemicro_createrand.f", "flowop finishonbytes needs 'set mode quit firstdone' or 'alldone'"),
    ("filemicro_rwritedsync.f", "flowop finishoncount needs 'set mode quit firstdone' or 'alldone'"),
];

/// The value each variable is shrunk to, where a file sets it. Directory
/// variables (`dir`, `path`) go to the test's temporary directory. Write
/// sizes stay small so a second of unbounded writing fits in RAM.
/// Files whose own thread count is kept (see `run_one`).
const KEEP_THREADS: &[&str] = &["netsfs.f", "networkfs.f"];

const SHRINK: &[(&str, &str)] = &[
    ("nfiles", "20"),
    ("totalfiles", "40"),
    ("ndirs", "20"),
    ("filesize", "16k"),
    ("meanfilesize", "16k"),
    ("logfilesize", "64k"),
    ("nlogfiles", "1"),
    ("nthreads", "2"),
    ("count", "50"),
    ("bytes", "1m"),
    ("iters", "2"),
    ("writeiters", "5"),
    ("fsynccount", "10"),
    ("workingset", "0"),
    ("nshadows", "2"),
    ("ndbwriters", "2"),
    ("usermode", "1000"),
    ("memperthread", "64k"),
    ("numactivevids", "2"),
    ("numpassivevids", "3"),
    ("runtime", "1"),
    ("eventrate", "1000"),
    ("iosize", "4k"),
    ("meaniosize", "4k"),
    ("readiosize", "4k"),
    ("writeiosize", "4k"),
    ("meanappendsize", "4k"),
];

/// The shared peers folder, found as scripts/peers.sh finds it: in
/// $FSBENCH_PEERS, ../shared/peers next to the repository, or next to the
/// main checkout when this is a git worktree; it must hold a Filebench
/// snapshot.
fn filebench_tarball() -> Result<PathBuf, String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut cands: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("FSBENCH_PEERS") {
        cands.push(p.into());
    }
    cands.push(root.join("../shared/peers"));
    let common = std::process::Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    if let Some(o) = common {
        let dir = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        if let Some(main) = dir.parent() {
            cands.push(main.join("../shared/peers"));
        }
    }
    for c in &cands {
        let Ok(rd) = std::fs::read_dir(c) else { continue };
        let mut tars: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("filebench-") && n.ends_with(".tar.gz")))
            .collect();
        tars.sort();
        if let Some(t) = tars.pop() {
            return Ok(t);
        }
    }
    Err(format!(
        "no peers folder with filebench-*.tar.gz (looked in: {})",
        cands.iter().map(|c| c.display().to_string()).collect::<Vec<_>>().join(", ")
    ))
}

/// Extract the stock `.f` files into `into`; returns them sorted.
fn extract_workloads(tarball: &Path, into: &Path) -> Vec<PathBuf> {
    let st = std::process::Command::new("tar")
        .arg("-xzf")
        .arg(tarball)
        .arg("-C")
        .arg(into)
        .args(["--wildcards", "*/workloads/*.f"])
        .status()
        .expect("tar runs");
    assert!(st.success(), "tar could not extract the workloads from {}", tarball.display());
    let mut files = Vec::new();
    for top in std::fs::read_dir(into).unwrap() {
        let w = top.unwrap().path().join("workloads");
        if let Ok(rd) = std::fs::read_dir(&w) {
            files.extend(rd.map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "f")));
        }
    }
    files.sort();
    files
}

/// Variables a script sets (`set $name ...`), in order, without repeats.
fn set_vars(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.trim_start().strip_prefix("set ") else { continue };
        let Some(rest) = rest.trim_start().strip_prefix('$') else { continue };
        let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
        if !name.is_empty() && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// The values of every `path=` attribute, for the check that the script
/// writes only where the test sends it.
fn path_values(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim_start().starts_with('#')) {
        let mut rest = line;
        while let Some(at) = rest.find("path=") {
            let before = rest[..at].chars().last();
            rest = &rest[at + 5..];
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$') {
                continue; // another attribute ending in "path", or `set $path=`
            }
            out.push(rest.chars().take_while(|c| !c.is_whitespace() && *c != ',').collect());
        }
    }
    out
}

/// Literal `size=`/`workingset=` values of a megabyte or more (tpcso.f's
/// 140 GiB of fixed-size files, which no `--set` reaches) become 1m. Returns
/// the text and whether anything changed.
fn shrink_literal_sizes(text: &str) -> (String, bool) {
    let mut out = String::with_capacity(text.len());
    let mut changed = false;
    let mut rest = text;
    loop {
        let next = ["size=", "workingset="].iter().filter_map(|k| rest.find(k).map(|i| (i, k.len()))).min();
        let Some((i, klen)) = next else { break };
        // The attribute itself, not iosize= or memsize=.
        let whole = !rest[..i].chars().last().is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        out.push_str(&rest[..i + klen]);
        rest = &rest[i + klen..];
        if !whole {
            continue;
        }
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        let unit = rest[digits..].chars().next();
        if digits > 0 && matches!(unit, Some('m' | 'M' | 'g' | 'G')) {
            out.push_str("1m");
            rest = &rest[digits + 1..];
            changed = true;
        }
    }
    out.push_str(rest);
    (out, changed)
}

/// Whether `dir`'s file system accepts O_DIRECT (tmpfs did not before 6.6).
fn takes_o_direct(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let p = dir.join(".odirect-probe");
    let ok = std::fs::OpenOptions::new().write(true).create(true).truncate(true).custom_flags(libc::O_DIRECT).open(&p).is_ok();
    let _ = std::fs::remove_file(&p);
    ok
}

enum Outcome {
    Ran { ended_by: String, ops: u64 },
    Refused(String),
    Failed(String),
}

struct Row {
    file: String,
    outcome: Outcome,
    secs: f64,
    note: &'static str,
}

/// The error fsbench gave, without its "fsbench filebench: error: " prefix.
fn first_error_line(stderr: &str) -> String {
    let line = stderr.lines().find(|l| l.contains("error:")).unwrap_or_else(|| stderr.lines().last().unwrap_or("")).trim();
    line.split_once("error: ").map(|(_, m)| m).unwrap_or(line).to_string()
}

/// Run one stock file, shrunk, with its files under `work`.
fn run_one(f: &Path, work: &Path, disk: &Path) -> (Outcome, &'static str, String, Value) {
    let text = std::fs::read_to_string(f).unwrap();
    let name = f.file_name().unwrap().to_string_lossy().to_string();
    let vars = set_vars(&text);
    // Everything goes under a directory the test made; a path the test
    // cannot redirect would write elsewhere, so it is a failure, not a run.
    for p in path_values(&text) {
        let var = p.trim_start_matches('$');
        if !p.starts_with('$') || !vars.iter().any(|v| v == var) || !["dir", "path"].contains(&var) {
            return (Outcome::Failed(format!("path={p}: not a directory variable the test can redirect")), "", String::new(), Value::Null);
        }
    }
    let (text, shrunk) = shrink_literal_sizes(&text);
    let note = if shrunk { "literal sizes shrunk to 1m in a copy" } else { "" };
    let base = if text.contains("directio") { disk } else { work };
    let dir = base.join(name.trim_end_matches(".f"));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join(&name);
    std::fs::write(&script, &text).unwrap();
    let mut cmd = fsbench();
    cmd.arg("filebench").arg("-f").arg(&script);
    for v in &vars {
        if v == "dir" || v == "path" {
            cmd.arg("--set").arg(format!("{v}={}", dir.display()));
        } else if v == "nthreads" && KEEP_THREADS.contains(&name.as_str()) {
            // Their own one thread: with two, the other may hold the file
            // a delete through the closed slot names, and Filebench (and
            // fsbench) skip a busy file, so a short run could delete nothing.
        } else if let Some((_, val)) = SHRINK.iter().find(|(n, _)| n == v) {
            cmd.arg("--set").arg(format!("{v}={val}"));
        }
    }
    cmd.args(["--runtime", "1", "--output-format", "json", "--no-progress"]);
    cmd.timeout(std::time::Duration::from_secs(60));
    let out = cmd.output().expect("fsbench runs");
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    if !out.status.success() {
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        // A refusal comes before any run: no result document.
        let ran = doc.get("jobs").is_some();
        let why = first_error_line(&stderr);
        let o = if ran { Outcome::Failed(why) } else { Outcome::Refused(why) };
        return (o, note, stderr, doc);
    }
    let doc: Value = match serde_json::from_slice(&out.stdout) {
        Ok(v) => v,
        Err(e) => return (Outcome::Failed(format!("stdout is not JSON: {e}")), note, stderr, Value::Null),
    };
    let job = &doc["jobs"][0];
    if let Some(e) = job["error"].as_str() {
        return (Outcome::Failed(e.to_string()), note, stderr, doc);
    }
    let ended_by = job["details"]["ended_by"].as_str().unwrap_or("?").to_string();
    let ops = job["ops"].as_array().map(|a| a.iter().filter_map(|o| o["ops"].as_u64()).sum()).unwrap_or(0);
    if ended_by == "error" || ended_by == "interrupted" || ops == 0 {
        return (Outcome::Failed(format!("ended by {ended_by} after {ops} ops")), note, stderr, doc);
    }
    (Outcome::Ran { ended_by, ops }, note, stderr, doc)
}

fn op_count(doc: &Value, name: &str) -> u64 {
    doc["jobs"][0]["ops"].as_array().and_then(|a| a.iter().find(|o| o["name"] == name)).and_then(|o| o["ops"].as_u64()).unwrap_or(0)
}

#[test]
fn every_stock_workload_runs_or_is_refused_for_an_expected_reason() {
    let tarball = match filebench_tarball() {
        Ok(t) => t,
        Err(why) => {
            skip(&why);
            return;
        }
    };
    let Ok(work) = tempfile::tempdir_in("/dev/shm") else {
        skip("no writable /dev/shm (the stock files run on tmpfs)");
        return;
    };
    let src = work.path().join("src");
    let runs = work.path().join("runs");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::create_dir_all(&runs).unwrap();
    // Files asking for directio go to disk where tmpfs refuses O_DIRECT.
    let disk_tmp = (!takes_o_direct(&runs)).then(disk_tempdir);
    let disk = disk_tmp.as_ref().map(|d| d.path().to_path_buf()).unwrap_or_else(|| runs.clone());
    let files = extract_workloads(&tarball, &src);
    assert!(!files.is_empty(), "no .f files in {}", tarball.display());

    let t0 = Instant::now();
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let t = Instant::now();
        let (outcome, note, stderr, doc) = run_one(f, &runs, &disk);
        let secs = t.elapsed().as_secs_f64();
        let expected = EXPECTED_REFUSALS.iter().find(|(n, _)| *n == name).map(|(_, why)| *why);
        match (&outcome, expected) {
            (Outcome::Ran { .. }, Some(why)) => failures.push(format!("{name}: ran, but the list expects a refusal ({why})")),
            (Outcome::Refused(r), Some(why)) if !r.contains(why) => failures.push(format!("{name}: refused for '{r}', expected '{why}'")),
            (Outcome::Refused(r), None) => failures.push(format!("{name}: refused unexpectedly: {r}")),
            (Outcome::Failed(e), _) => failures.push(format!("{name}: failed: {e}\n{stderr}")),
            _ => {}
        }
        if let Outcome::Ran { ended_by, .. } = &outcome {
            // A 1.4 script's finishon* without a quit mode ends the run.
            if stderr.contains("ends the run when it reaches its value") && ended_by != "finishon" {
                failures.push(format!("{name}: a 1.4 finishon* script ended by {ended_by}, not finishon"));
            }
            // netsfs and networkfs delete the file last opened on fd 1
            // after closing it.
            if (name == "netsfs.f" || name == "networkfs.f") && op_count(&doc, "rmw1.deletefile1") == 0 {
                failures.push(format!("{name}: rmw1.deletefile1 deleted nothing"));
            }
        }
        rows.push(Row { file: name, outcome, secs, note });
    }
    for must in ["netsfs.f", "networkfs.f"] {
        match rows.iter().find(|r| r.file == must) {
            Some(Row { outcome: Outcome::Ran { .. }, .. }) => {}
            Some(_) => {} // reported above
            None => failures.push(format!("{must}: not among the stock files")),
        }
    }
    for (n, _) in EXPECTED_REFUSALS {
        if !rows.iter().any(|r| r.file == *n) {
            failures.push(format!("{n}: on the refusal list but not among the stock files"));
        }
    }

    let (mut ran, mut refused, mut failed) = (0, 0, 0);
    eprintln!("{:<32} {:>6}  outcome", "file", "secs");
    for r in &rows {
        let what = match &r.outcome {
            Outcome::Ran { ended_by, ops } => {
                ran += 1;
                format!("ran (ended by {ended_by}, {ops} ops)")
            }
            Outcome::Refused(why) => {
                refused += 1;
                format!("refused ({why})")
            }
            Outcome::Failed(e) => {
                failed += 1;
                format!("FAILED ({e})")
            }
        };
        let note = if r.note.is_empty() { String::new() } else { format!(" [{}]", r.note) };
        eprintln!("{:<32} {:>6.1}  {what}{note}", r.file, r.secs);
    }
    eprintln!("{} files: {ran} ran, {refused} refused, {failed} failed, in {:.1} s", rows.len(), t0.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{} problem(s):\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn a_fileset_without_dirwidth_runs_with_a_located_warning() {
    let Ok(work) = tempfile::tempdir_in("/dev/shm") else {
        skip("no writable /dev/shm");
        return;
    };
    let dir = work.path().join("files");
    std::fs::create_dir(&dir).unwrap();
    let script = work.path().join("nowidth.f");
    let text = format!(
        "set $dir={}\n\
         define fileset name=flat,path=$dir,size=4k,entries=6,prealloc\n\
         define process name=p {{ thread name=t {{ flowop statfile name=stat1,filesetname=flat }} }}\n\
         run 1\n",
        dir.display()
    );
    std::fs::write(&script, text).unwrap();
    let out = fsbench()
        .arg("filebench")
        .arg("-f")
        .arg(&script)
        .args(["--keep-files", "--output-format", "json", "--no-progress"])
        .output()
        .expect("fsbench runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let want = format!("{}:2:1: fileset flat has no dirwidth", script.display());
    assert!(stderr.contains(&want), "no warning '{want}' in:\n{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(op_count(&doc, "stat1") > 0, "{doc}");
    // Filebench's default width 0: each file in a directory of its own
    // directly under the fileset's root.
    let root = dir.join("flat");
    let mut dirs = 0;
    for e in std::fs::read_dir(&root).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            dirs += 1;
            let inside: Vec<_> = std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()).collect();
            assert!(inside.len() == 1 && inside[0].is_file(), "{}: {inside:?}", p.display());
        }
    }
    assert_eq!(dirs, 6);
}
