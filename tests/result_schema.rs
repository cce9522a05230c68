//! docs/schema/fsbench-result.schema.json against real documents: every
//! family's run as `--output-format json` writes it (quick, fio, Filebench,
//! Postmark, IOzone, Bonnie++, YCSB, a traced run, replay, surface), a
//! repeated run, an experiment's plan.json, runs/*.json and summary, a
//! comparison and the error object, each made here by the release binary at
//! a tiny scale and validated with python3-jsonschema's Draft 2020-12
//! validator. Also: the schema is itself a valid 2020-12 schema, names every
//! document tag the crate writes, and rejects a real result with a field
//! removed, a wrong type or an unknown field.
//!
//! Without a python3 that has jsonschema (Debian: python3-jsonschema, which
//! scripts/setup-peers.sh installs) the validating tests skip, saying so.

mod common;

use common::{disk_tempdir, ensure_tracefs, fsbench, is_root, skip};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn schema_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema/fsbench-result.schema.json")
}

/// Validates each document named after the schema; prints `FILE: OK`, or
/// every error as `FILE: $.json.path: message` (with the errors of each
/// alternative of an anyOf under it), and exits 1 when any document fails.
/// `check` as the only argument after the schema checks the schema alone.
const VALIDATE: &str = r#"
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1], encoding="utf-8"))
Draft202012Validator.check_schema(schema)
if sys.argv[2:] == ["check"]:
    print("schema: OK")
    sys.exit(0)
validator = Draft202012Validator(schema)
bad = 0
def show(name, e, indent):
    print(f"{indent}{name}: {e.json_path}: {e.message[:300]}")
    for c in sorted(e.context, key=lambda c: list(c.absolute_path)):
        show(name, c, indent + "    ")
for path in sys.argv[2:]:
    doc = json.load(open(path, encoding="utf-8"))
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors:
        show(path, e, "")
    if not errors:
        print(f"{path}: OK")
    bad += bool(errors)
sys.exit(1 if bad else 0)
"#;

/// A Python with jsonschema's Draft 2020-12 validator: Debian's first.
fn python() -> Option<&'static str> {
    ["/usr/bin/python3", "python3"].into_iter().find(|py| {
        Command::new(py).args(["-c", "from jsonschema import Draft202012Validator"]).output().map(|o| o.status.success()).unwrap_or(false)
    })
}

fn validator() -> Option<&'static str> {
    let py = python();
    if py.is_none() {
        skip("no python3 with jsonschema (Debian: python3-jsonschema) to validate against the schema");
    }
    py
}

/// Run the validator over `files`: (passed, its output).
fn validate(py: &str, files: &[PathBuf]) -> (bool, String) {
    let out = Command::new(py).arg("-c").arg(VALIDATE).arg(schema_path()).args(files).output().expect("python3 runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// Every file valid, or fail with every error.
fn assert_valid(py: &str, files: &[PathBuf]) {
    assert!(!files.is_empty(), "no document to validate");
    let (ok, text) = validate(py, files);
    assert!(ok, "documents that do not match docs/schema/fsbench-result.schema.json:\n{text}");
}

/// stdout of a command that must succeed, parsed as JSON and saved as `dir/name.json`.
fn save(dir: &Path, name: &str, out: Output) -> PathBuf {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{name}: fsbench failed ({:?}): {stderr}", out.status.code());
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{name}: stdout is not JSON ({e}): {}\nstderr: {stderr}", String::from_utf8_lossy(&out.stdout)));
    let p = dir.join(format!("{name}.json"));
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    p
}

/// `fsbench ARGS --output-format json --no-progress`, saved as `dir/name.json`.
fn run_json(dir: &Path, name: &str, args: &[&str]) -> PathBuf {
    save(dir, name, fsbench().args(args).args(["--output-format", "json", "--no-progress"]).output().unwrap())
}

fn read(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A fio run whose jobs carry each of fio's details: verification,
/// per-priority latency (cmdprio), steady state and queue depths, in three
/// reporting groups.
fn fio_result(out: &Path, work: &Path, name: &str) -> PathBuf {
    let dir = format!("--directory={}", work.display());
    let jobs: [&[&str]; 3] = [
        &["--name=w", "--rw=randwrite", "--verify=crc32c", "--ioengine=psync"],
        &[
            "--name=r",
            "--rw=randread",
            "--stonewall",
            "--ioengine=io_uring",
            "--iodepth=4",
            "--cmdprio_percentage=50",
            "--cmdprio_class=2",
            "--cmdprio=1",
        ],
        &["--name=s", "--rw=read", "--stonewall", "--time_based", "--runtime=2", "--ss=iops:50%", "--ss_dur=1"],
    ];
    let mut args = vec!["fio"];
    for job in jobs {
        args.extend_from_slice(job);
        args.extend(["--bs=4k", "--size=256k", dir.as_str()]);
    }
    run_json(out, name, &args)
}

#[test]
fn the_schema_is_a_valid_draft_2020_12_schema_naming_every_document() {
    let schema: Value = serde_json::from_slice(&std::fs::read(schema_path()).unwrap()).expect("the schema is JSON");
    assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
    let tags: Vec<&str> = schema["properties"]["schema"]["enum"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    for tag in [
        fsbench::result::SCHEMA,
        fsbench::result::REPEATED_SCHEMA,
        fsbench::result::experiment::RUN_SCHEMA,
        fsbench::result::experiment::PLAN_SCHEMA,
        fsbench::stats::experiment::SUMMARY_SCHEMA,
        fsbench::stats::compare::COMPARISON_SCHEMA,
        fsbench::cli::ERROR_SCHEMA,
    ] {
        assert!(tags.contains(&tag), "the schema does not describe {tag}: {tags:?}");
    }
    // Every layout a run can name, and a details definition for each.
    let run = &schema["$defs"]["run"];
    let mut layouts: Vec<&str> = run["properties"]["layout"]["enum"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    let mut known: Vec<&str> = fsbench::report::layout::LAYOUTS.iter().map(|l| l.name).collect();
    layouts.sort();
    known.sort();
    assert_eq!(layouts, known, "the schema's layouts are report::layout::LAYOUTS");
    let with_details: Vec<&str> =
        run["allOf"].as_array().unwrap().iter().map(|c| c["if"]["properties"]["layout"]["const"].as_str().unwrap()).collect();
    for l in &known {
        assert!(with_details.contains(l), "no details definition for layout {l}");
    }
    // The warnings' item type is one definition, so that changing what a
    // warning is changes one place.
    assert!(schema["$defs"]["warning"].is_object());
    let Some(py) = validator() else { return };
    let out = Command::new(py).arg("-c").arg(VALIDATE).arg(schema_path()).arg("check").output().unwrap();
    assert!(out.status.success(), "check_schema: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

#[test]
fn runs_of_every_workload_family_match() {
    let Some(py) = validator() else { return };
    let out = tempfile::tempdir().unwrap();
    let o = out.path();
    let work = disk_tempdir();
    let w = work.path();
    let mut docs = Vec::new();

    docs.push(run_json(o, "quick", &["quick", s(w), "--size=1m", "--runtime=1"]));
    docs.push(fio_result(o, w, "fio"));
    let sub = |n: &str| {
        let d = w.join(n);
        std::fs::create_dir_all(&d).unwrap();
        d
    };
    let fb = sub("filebench");
    docs.push(run_json(
        o,
        "filebench",
        &["filebench", "varmail", "--set", &format!("dir={}", fb.display()), "--set", "nfiles=20", "--runtime", "1"],
    ));
    let pm = sub("postmark");
    let cfg = w.join("c.pm");
    std::fs::write(&cfg, format!("set location {}\nset number 20\nset transactions 50\nset size 500 2000\nrun\nquit\n", pm.display()))
        .unwrap();
    docs.push(run_json(o, "postmark", &["postmark", s(&cfg)]));
    let iz = sub("iozone");
    docs.push(run_json(o, "iozone", &["iozone", "-a", "-g", "128k", "-i", "0", "-i", "1", "-f", s(&iz.join("iozone.tmp"))]));
    docs.push(run_json(
        o,
        "iozone-throughput",
        &["iozone", "-t", "2", "-s", "64k", "-r", "16k", "-i", "0", "-F", s(&iz.join("a")), s(&iz.join("b"))],
    ));
    let bo = sub("bonnie");
    docs.push(run_json(o, "bonnie", &["bonnie", "-d", s(&bo), "-s", "4", "-f1", "-n", "1", "-r", "0", "-u", "root"]));
    let db = format!("fjall.dir={}", sub("ycsb").join("db").display());
    docs.push(run_json(o, "ycsb-load", &["ycsb", "load", "fjall", "-P", "workloada", "-p", "recordcount=50", "-p", &db]));
    docs.push(run_json(
        o,
        "ycsb-run",
        &[
            "ycsb",
            "run",
            "fjall",
            "-P",
            "workloada",
            "-p",
            "recordcount=50",
            "-p",
            "operationcount=100",
            "-p",
            &db,
            "-p",
            "measurementtype=timeseries",
        ],
    ));
    // A replay of a fio iolog onto a regular file (reads only).
    let target = w.join("replay-target");
    std::fs::write(&target, vec![7u8; 1 << 20]).unwrap();
    let log = w.join("trace.iolog");
    let mut text = format!("fio version 2 iolog\n{0} add\n{0} open\n", target.display());
    for i in 0..32u64 {
        text += &format!("{} read {} 4096\n", target.display(), (i * 37 % 256) * 4096);
    }
    text += &format!("{} close\n", target.display());
    std::fs::write(&log, text).unwrap();
    docs.push(run_json(o, "replay", &["replay", s(&log), "--target", s(&target), "--speed", "max"]));
    // fio --repeat makes the repeated-run document.
    let dir = format!("--directory={}", w.display());
    docs.push(run_json(o, "repeated", &["fio", "--name=x", "--rw=read", "--bs=4k", "--size=256k", &dir, "--repeat", "2"]));
    for d in &docs {
        eprintln!("validating {}", d.display());
    }
    assert_valid(py, &docs);
    // fio's details, each of which has its own definition, were all there.
    let fio = read(&docs[1]);
    for (job, key) in [(0, "verify"), (1, "cmdprio"), (2, "steadystate"), (1, "iodepth_level")] {
        assert!(
            fio["jobs"][job]["details"][key].is_object() || fio["jobs"][job]["details"][key].is_array(),
            "no {key} in job {job}'s details"
        );
    }
    // The layouts the documents claim, so that every family's details were checked.
    let layouts: Vec<String> = docs.iter().map(|p| read(p)).filter_map(|v| v["layout"].as_str().map(String::from)).collect();
    for want in ["quick", "fio", "filebench", "postmark", "iozone", "bonnie", "ycsb", "replay"] {
        assert!(layouts.iter().any(|l| l == want), "no run of layout {want}: {layouts:?}");
    }
}

/// A loop device over a file in /dev/shm (or /tmp), detached when dropped.
struct Loop {
    dev: String,
    _dir: tempfile::TempDir,
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

fn loop_device(bytes: u64) -> Option<Loop> {
    if !is_root() {
        skip("not root: a loop device needs root");
        return None;
    }
    let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
    let img = dir.path().join("img");
    std::fs::File::create(&img).and_then(|f| f.set_len(bytes)).unwrap();
    let out = Command::new("losetup").args(["--find", "--show"]).arg(&img).output().ok()?;
    if !out.status.success() {
        skip("losetup could not attach a loop device");
        return None;
    }
    Some(Loop { dev: String::from_utf8_lossy(&out.stdout).trim().to_string(), _dir: dir })
}

#[test]
fn a_surface_scan_and_a_traced_run_match() {
    let Some(py) = validator() else { return };
    let Some(lo) = loop_device(16 << 20) else { return };
    let out = tempfile::tempdir().unwrap();
    let mut docs = vec![run_json(out.path(), "surface", &["surface", &lo.dev, "--zones", "4", "--chunks-per-zone", "1", "--chunk", "1m"])];
    if ensure_tracefs() {
        let base = out.path().join("t");
        let state = tempfile::tempdir().unwrap();
        let o = fsbench()
            .args(["fio", "--name=w", "--rw=write", "--bs=4k", "--size=256k", "--direct=1", "--ioengine=psync", "--allow-device"])
            .arg(format!("--filename={}", lo.dev))
            .arg("--trace")
            .arg(format!("--trace-output={}", base.display()))
            .args(["--output-format", "json", "--no-progress"])
            .env("FSBENCH_STATE_DIR", state.path())
            .output()
            .unwrap();
        let p = save(out.path(), "traced", o);
        assert!(read(&p)["trace"].is_object(), "the traced run carries its trace");
        docs.push(p);
    } else {
        skip("tracefs cannot be mounted at /sys/kernel/tracing: the traced run is not checked");
    }
    assert_valid(py, &docs);
}

#[test]
fn an_experiment_its_comparison_and_the_error_object_match() {
    let Some(py) = validator() else { return };
    let work = disk_tempdir();
    let w = work.path();
    let target = w.join("target");
    std::fs::create_dir(&target).unwrap();
    let exp = common::write_exp(
        w,
        &format!(
            r#"
name = "schema"
repeat = 2
order = "interleaved"
background = ["none", "files"]
[[target]]
label = "tmpdir"
directory = "{}"
[[workload]]
label = "rr"
args = ["--name=rr", "--rw=randread", "--bs=4k", "--size=256k"]
"#,
            target.display()
        ),
    );
    let results = w.join("results");
    let docs_dir = tempfile::tempdir().unwrap();
    let d = docs_dir.path();
    let summary = save(
        d,
        "summary-stdout",
        fsbench().arg("experiment").arg(&exp).arg("--out").arg(&results).args(["--output-format", "json"]).output().unwrap(),
    );
    let mut docs = vec![summary, results.join("plan.json"), results.join("summary.json")];
    let mut runs: Vec<PathBuf> = std::fs::read_dir(results.join("runs")).unwrap().map(|e| e.unwrap().path()).collect();
    runs.sort();
    assert_eq!(runs.len(), 4, "2 background loads x 2 repeats: {runs:?}");
    assert!(runs.iter().any(|r| read(r)["background"].is_object()), "a run recorded its background load");
    docs.extend(runs);

    // compare: two sides of two runs each.
    let (a, b) = (w.join("A"), w.join("B"));
    for (side, rw) in [(&a, "read"), (&b, "randread")] {
        std::fs::create_dir(side).unwrap();
        for i in 0..2 {
            let dir = format!("--directory={}", w.display());
            run_json(
                side,
                &format!("run{i}"),
                &["fio", "--name=x", "--bs=4k", "--size=256k", "--invalidate=0", &dir, &format!("--rw={rw}")],
            );
        }
    }
    docs.push(save(d, "comparison", fsbench().args(["compare", s(&a), s(&b), "--output-format", "json"]).output().unwrap()));

    // The error object: a command refused with a JSON format.
    let refused = fsbench().args(["fio", "--name=x", "--bs=banana", "--output-format=json"]).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let err = d.join("error.json");
    std::fs::write(&err, &refused.stdout).unwrap();
    assert_eq!(read(&err)["schema"], "fsbench-error/1");
    docs.push(err);
    assert_valid(py, &docs);
}

/// `v` with the value at `path` (object keys and array indices) replaced by
/// `f`'s result, or removed when it returns None.
fn edit(v: &Value, path: &[&str], f: impl FnOnce(&Value) -> Option<Value>) -> Value {
    let mut v = v.clone();
    let (last, parents) = path.split_last().unwrap();
    let mut at = &mut v;
    for k in parents {
        at = match k.parse::<usize>() {
            Ok(i) => &mut at[i],
            Err(_) => &mut at[*k],
        };
    }
    let m = at.as_object_mut().unwrap_or_else(|| panic!("{path:?}: not an object"));
    let old = m.get(*last).unwrap_or_else(|| panic!("{path:?}: absent")).clone();
    match f(&old) {
        Some(new) => m.insert(last.to_string(), new),
        None => m.remove(*last),
    };
    v
}

#[test]
fn a_result_with_a_field_removed_a_wrong_type_or_an_unknown_field_is_rejected() {
    let Some(py) = validator() else { return };
    let out = tempfile::tempdir().unwrap();
    let work = disk_tempdir();
    let real = fio_result(out.path(), work.path(), "real");
    assert_valid(py, std::slice::from_ref(&real));
    let v = read(&real);
    let unknown = |path: &[&str]| {
        edit(&v, path, |o| {
            let mut o = o.clone();
            o.as_object_mut().expect("an object").insert("bogus".into(), Value::from(1));
            Some(o)
        })
    };
    let cases: Vec<(&str, Value, &str)> = vec![
        ("a required field removed", edit(&v, &["jobs", "0", "elapsed_ns"], |_| None), "$.jobs[0]"),
        ("the run's system removed", edit(&v, &["system"], |_| None), "$"),
        ("a count as a string", edit(&v, &["started_unix"], |x| Some(Value::from(x.to_string()))), "$.started_unix"),
        ("a negative count", edit(&v, &["jobs", "0", "ops", "0", "ops"], |_| Some(Value::from(-1))), "$.jobs[0].ops[0].ops"),
        (
            "an unknown operation class",
            edit(&v, &["jobs", "0", "ops", "0", "class"], |_| Some(Value::from("reads"))),
            "$.jobs[0].ops[0].class",
        ),
        ("an unknown field in the CPU figures", unknown(&["groups", "0", "cpu"]), "$.groups[0].cpu"),
        ("an unknown field in a fio job's details", unknown(&["jobs", "0", "details"]), "$.jobs[0].details"),
        ("an unknown field in a histogram", unknown(&["jobs", "0", "ops", "0", "lat"]), "$.jobs[0].ops[0].lat"),
        ("a warning that is not a string", edit(&v, &["warnings"], |_| Some(serde_json::json!([1]))), "$.warnings[0]"),
        ("another document's tag", edit(&v, &["schema"], |_| Some(Value::from("fsbench-result/1"))), "$.schema"),
    ];
    for (what, doc, path) in cases {
        let p = out.path().join("edited.json");
        std::fs::write(&p, serde_json::to_vec(&doc).unwrap()).unwrap();
        let (ok, text) = validate(py, &[p]);
        assert!(!ok, "{what}: accepted");
        assert!(text.contains(&format!(": {path}:")), "{what}: no error at {path}:\n{text}");
    }
}
