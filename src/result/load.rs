//! Reading result files back: a run, an experiment's run record, or a
//! repeated run's document, of this schema version or the previous one.
//! `compare`, `--resume` and experiment summaries all load through here.
//!
//! `fsbench-result/1` files are upgraded as they are read: an operation's
//! class comes from its name (fio jobs) or its flowop (Filebench runs, whose
//! `flow` becomes `details`), and the headline is computed as a run of this
//! version computes it.

use super::experiment::{ExperimentPlan, ExperimentRun, PLAN_FILE, PLAN_SCHEMA, RUN_SCHEMA};
use super::flow::FlowReport;
use super::{OpClass, RunResult, REPEATED_SCHEMA, SCHEMA};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

/// The schema this version upgrades from.
pub const SCHEMA_V1: &str = "fsbench-result/1";

/// A file that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadError {
    pub path: PathBuf,
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for LoadError {}

fn err(path: &Path, message: impl Into<String>) -> LoadError {
    LoadError { path: path.to_path_buf(), message: message.into() }
}

/// "no such file or directory" rather than the OS's wording with its code.
pub fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        _ => e.to_string(),
    }
}

fn read_json(path: &Path) -> Result<Value, LoadError> {
    let text = crate::input::read_text(path, "result file").map_err(|e| err(path, format!("cannot read: {e}")))?;
    serde_json::from_str(&text).map_err(|e| err(path, format!("not JSON ({e})")))
}

/// The runs of one side, with the files they came from.
/// The runs of one side of a comparison, with the files they came from.
pub struct Side {
    pub path: PathBuf,
    pub files: Vec<PathBuf>,
    pub runs: Vec<RunResult>,
}

/// Load a result file, every `*.json` file of a directory (sorted by name),
/// or one matrix cell of an experiment: `EXPERIMENT_DIR::CELL`, where CELL is
/// `target__workload__cache__background` as in the run file names.
pub fn load_side(path: &Path) -> Result<Side, LoadError> {
    if let Some((dir, cell)) = path.to_str().and_then(|s| s.split_once("::")) {
        return load_cell(path, Path::new(dir), cell);
    }
    let meta = std::fs::metadata(path).map_err(|e| err(path, io_reason(&e)))?;
    let files: Vec<PathBuf> = if meta.is_dir() {
        let rd = std::fs::read_dir(path).map_err(|e| err(path, format!("cannot list: {}", io_reason(&e))))?;
        let mut v: Vec<PathBuf> =
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file()).collect();
        v.sort();
        if v.is_empty() {
            return Err(err(path, "no *.json result files in this directory (write them with `fsbench fio ... --output-format=json`)"));
        }
        v
    } else {
        vec![path.to_path_buf()]
    };
    let runs = load_files(&files)?;
    Ok(Side { path: path.to_path_buf(), files, runs })
}

fn load_cell(spec: &Path, dir: &Path, cell: &str) -> Result<Side, LoadError> {
    let runs_dir = dir.join("runs");
    let rd = std::fs::read_dir(&runs_dir).map_err(|e| err(&runs_dir, io_reason(&e)))?;
    let prefix = format!("{cell}__r");
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".json")))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(err(spec, format!("no runs of cell '{cell}' in {}", runs_dir.display())));
    }
    let runs = load_files(&files)?;
    Ok(Side { path: spec.to_path_buf(), files, runs })
}

fn load_files(files: &[PathBuf]) -> Result<Vec<RunResult>, LoadError> {
    let mut runs = Vec::new();
    for f in files {
        runs.extend(load_file(f)?);
    }
    Ok(runs)
}

/// The runs in one result file: a run, an experiment run, or the complete
/// runs of a `--repeat` document.
pub fn load_file(path: &Path) -> Result<Vec<RunResult>, LoadError> {
    let value = read_json(path)?;
    if value.get("schema").and_then(|s| s.as_str()) == Some(REPEATED_SCHEMA) {
        let runs = value.get("runs").and_then(|r| r.as_array()).cloned().unwrap_or_default();
        let runs: Vec<RunResult> = runs.into_iter().map(|r| run_from(path, r)).collect::<Result<Vec<_>, _>>()?;
        let complete: Vec<RunResult> = runs.into_iter().filter(|r| r.is_valid()).collect();
        if complete.is_empty() {
            return Err(err(path, "the repeated result holds no complete run"));
        }
        return Ok(complete);
    }
    run_from(path, value).map(|r| vec![r])
}

/// A run result, possibly wrapped in an experiment run record.
fn run_from(path: &Path, value: Value) -> Result<RunResult, LoadError> {
    let value = match value.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s == RUN_SCHEMA => value.get("result").cloned().unwrap_or_default(),
        _ => value,
    };
    upgrade(value).map_err(|m| err(path, m))
}

/// A `RunResult` from JSON of this version or `fsbench-result/1`.
pub fn upgrade(mut value: Value) -> Result<RunResult, String> {
    let schema = value.get("schema").and_then(|s| s.as_str()).map(str::to_string);
    match schema.as_deref() {
        Some(SCHEMA) => serde_json::from_value(value).map_err(|e| format!("not a valid {SCHEMA} result: {e}")),
        Some(SCHEMA_V1) => {
            let flows = take_flows(&mut value);
            let mut r: RunResult = serde_json::from_value(value).map_err(|e| format!("not a valid {SCHEMA_V1} result: {e}"))?;
            upgrade_v1(&mut r, flows)?;
            Ok(r)
        }
        Some(s) => Err(format!("result schema '{s}' is not one this fsbench reads ({SCHEMA} or {SCHEMA_V1})")),
        None => {
            let hint = if value.get("fio version").is_some() {
                "this is fio's JSON layout; write results with --output-format=json"
            } else {
                "expected the output of `fsbench ... --output-format=json`"
            };
            Err(format!("not an fsbench result (no \"schema\" field; {hint})"))
        }
    }
}

/// Version 1 kept a Filebench run's figures in `jobs[i].flow`.
fn take_flows(value: &mut Value) -> Vec<Option<Value>> {
    let Some(jobs) = value.get_mut("jobs").and_then(|j| j.as_array_mut()) else { return Vec::new() };
    jobs.iter_mut().map(|j| j.as_object_mut().and_then(|o| o.remove("flow"))).collect()
}

fn upgrade_v1(r: &mut RunResult, flows: Vec<Option<Value>>) -> Result<(), String> {
    r.schema = SCHEMA.to_string();
    let mut any_flow = false;
    for (i, (job, flow)) in r.jobs.iter_mut().zip(flows.into_iter().chain(std::iter::repeat(None))).enumerate() {
        let flow = match flow {
            Some(f) => {
                let rep = serde_json::from_value::<FlowReport>(f.clone())
                    .map_err(|e| format!("not a valid {SCHEMA_V1} result: jobs[{i}].flow is not a Filebench report: {e}"))?;
                Some((f, rep))
            }
            None => None,
        };
        match flow {
            Some((raw, rep)) => {
                any_flow = true;
                for op in &mut job.ops {
                    op.class = rep.flowops.iter().find(|i| i.name == op.name).map(|i| i.class()).unwrap_or(OpClass::Idle);
                }
                job.headline = rep.io_summary(job).headline();
                job.details = Some(raw);
            }
            None => {
                for op in &mut job.ops {
                    op.class = fio_class(&op.name);
                }
                job.headline = job.op_headline();
            }
        }
    }
    r.layout = if any_flow { "filebench" } else { "fio" }.to_string();
    Ok(())
}

/// The class of a fio job's operation, by its name.
pub fn fio_class(name: &str) -> OpClass {
    match name {
        "read" => OpClass::DataRead,
        "write" => OpClass::DataWrite,
        "sync" => OpClass::Sync,
        _ => OpClass::Other,
    }
}

/// Every saved run of an experiment in `out/runs`, sorted by file name.
pub fn load_experiment_runs(out: &Path) -> Result<Vec<ExperimentRun>, LoadError> {
    let dir = out.join("runs");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| err(&dir, format!("cannot list: {}", io_reason(&e))))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths.iter().map(|p| load_experiment_run(p)).collect()
}

/// The plan an experiment recorded in `out` before its first run.
pub fn load_experiment_plan(out: &Path) -> Result<ExperimentPlan, LoadError> {
    let path = out.join(PLAN_FILE);
    if !path.exists() {
        return Err(err(&path, "no such file: the directory holds no experiment of this fsbench version (nothing records its parameters)"));
    }
    let value = read_json(&path)?;
    if value.get("schema").and_then(Value::as_str) != Some(PLAN_SCHEMA) {
        return Err(err(&path, format!("not an fsbench experiment plan (expected schema {PLAN_SCHEMA})")));
    }
    serde_json::from_value(value).map_err(|e| err(&path, format!("not an fsbench experiment plan: {e}")))
}

fn load_experiment_run(path: &Path) -> Result<ExperimentRun, LoadError> {
    let mut value = read_json(path)?;
    let inner = value.get_mut("result").map(Value::take).ok_or_else(|| err(path, "not an fsbench experiment run (no \"result\")"))?;
    let result = upgrade(inner).map_err(|m| err(path, m))?;
    if let Some(o) = value.as_object_mut() {
        o.insert("result".into(), serde_json::to_value(&result).map_err(|e| err(path, e.to_string()))?);
    }
    serde_json::from_value(value).map_err(|e| err(path, format!("not an fsbench experiment run: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fio result as fsbench 0.1 wrote it (schema 1): a run of this
    /// version with what version 2 added taken out.
    fn v1_fio() -> Value {
        use crate::result::testutil::{job, op, run};
        let r = run(&[job("x", 1_000_000_000, &[op("read", 100, 409600, 1000), op("sync", 10, 0, 1000)])], &[]);
        let mut v = serde_json::to_value(&r).unwrap();
        v["schema"] = SCHEMA_V1.into();
        v.as_object_mut().unwrap().remove("layout");
        for j in v["jobs"].as_array_mut().unwrap() {
            j.as_object_mut().unwrap().remove("headline");
            for o in j["ops"].as_array_mut().unwrap() {
                o.as_object_mut().unwrap().remove("class");
            }
        }
        v
    }

    #[test]
    fn v1_fio_results_gain_classes_headline_and_layout() {
        let r = upgrade(v1_fio()).unwrap();
        assert_eq!(r.schema, SCHEMA);
        assert_eq!(r.layout, "fio");
        let j = &r.jobs[0];
        assert_eq!(j.op("read").unwrap().class, OpClass::DataRead);
        assert_eq!(j.op("sync").unwrap().class, OpClass::Sync);
        assert_eq!(j.issued(), ((100, 409600), (0, 0)));
        assert_eq!(j.counted_ops(), 110);
        let iops = j.headline.iter().find(|h| h.name == "read/iops").unwrap();
        assert_eq!((iops.value, iops.unit.as_str()), (100.0, "IOPS"));
    }

    #[test]
    fn v1_filebench_results_move_flow_into_details() {
        let mut v = v1_fio();
        v["jobs"][0]["ops"][0]["name"] = "readfile1".into();
        v["jobs"][0]["ops"][1]["name"] = "hog1".into();
        v["jobs"][0]["flow"] = serde_json::json!({
            "flowops": [
                {"name":"readfile1","kind":"readwholefile","io":true,"direction":"read","out_of_files":0,"busy_skips":0},
                {"name":"hog1","kind":"hog","io":false,"direction":"none","out_of_files":0,"busy_skips":0}],
            "filesets": [], "ended_by": "duration", "seed": 1, "threads": 1});
        let r = upgrade(v).unwrap();
        assert_eq!(r.layout, "filebench");
        let j = &r.jobs[0];
        assert_eq!(j.op("readfile1").unwrap().class, OpClass::DataRead);
        assert_eq!(j.op("hog1").unwrap().class, OpClass::Idle);
        assert_eq!(j.counted_ops(), 100, "hog is not I/O");
        let ops_s = j.headline.iter().find(|h| h.name == "io_summary/ops_s").unwrap();
        assert_eq!(ops_s.value, 100.0);
        let rep: FlowReport = j.details_as().unwrap();
        assert_eq!(rep.ended_by, "duration");

        let mut bad = v1_fio();
        bad["jobs"][0]["flow"] = serde_json::json!({"flowops": 3});
        assert!(upgrade(bad).unwrap_err().contains("jobs[0].flow is not a Filebench report"));
    }

    #[test]
    fn unknown_schemas_and_foreign_files_are_named() {
        let e = upgrade(serde_json::json!({"schema": "fsbench-result/0"})).unwrap_err();
        assert!(e.contains("fsbench-result/0"), "{e}");
        let e = upgrade(serde_json::json!({"fio version": "fio-3.36"})).unwrap_err();
        assert!(e.contains("--output-format=json"), "{e}");
    }
}

#[cfg(test)]
mod side_tests {
    use super::*;
    use crate::result::testutil::simple;

    #[test]
    fn load_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let e = load_side(&missing).err().unwrap().to_string();
        assert!(e.contains("missing.json") && e.contains("no such file"), "{e}");

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "not json").unwrap();
        let e = load_side(&bad).err().unwrap().to_string();
        assert!(e.contains("bad.json") && e.contains("not JSON"), "{e}");

        let fio = dir.path().join("fio.json");
        std::fs::write(&fio, r#"{"fio version": "fio-3.36", "jobs": []}"#).unwrap();
        let e = load_side(&fio).err().unwrap().to_string();
        assert!(e.contains("fio.json") && e.contains("--output-format=json"), "{e}");

        let old = dir.path().join("old.json");
        std::fs::write(&old, r#"{"schema": "fsbench-result/0"}"#).unwrap();
        let e = load_side(&old).err().unwrap().to_string();
        assert!(e.contains("old.json") && e.contains("fsbench-result/0"), "{e}");

        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, format!(r#"{{"schema": "{SCHEMA}", "jobs": 3}}"#)).unwrap();
        let e = load_side(&broken).err().unwrap().to_string();
        assert!(e.contains("broken.json") && e.contains("not a valid"), "{e}");

        let empty = tempfile::tempdir().unwrap();
        std::fs::write(empty.path().join("notes.txt"), "x").unwrap();
        let e = load_side(empty.path()).err().unwrap().to_string();
        assert!(e.contains("no *.json result files"), "{e}");
    }

    #[test]
    fn directories_load_sorted_json_files() {
        let dir = tempfile::tempdir().unwrap();
        for (name, ops) in [("b.json", 20), ("a.json", 10), ("c.json", 30)] {
            std::fs::write(dir.path().join(name), serde_json::to_string_pretty(&simple(ops)).unwrap()).unwrap();
        }
        std::fs::write(dir.path().join("README"), "not a result").unwrap();
        let s = load_side(dir.path()).unwrap();
        assert_eq!(s.runs.len(), 3);
        let names: Vec<String> = s.files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["a.json", "b.json", "c.json"]);
        assert_eq!(s.runs[0].jobs[0].ops[0].ops, 10);
    }

    #[test]
    fn old_results_with_string_warnings_load_as_unclassified() {
        use crate::result::experiment::{Cell, ExperimentRun, RUN_SCHEMA};
        use crate::result::warning::{Code, Warning};
        let old = |message: &str| Warning { code: Code::Unclassified, message: message.into(), details: Vec::new() };
        // A run file as `compare` reads it.
        let dir = tempfile::tempdir().unwrap();
        let mut v = serde_json::to_value(simple(10)).unwrap();
        v["warnings"] = serde_json::json!(["a warning from before codes", {"code": "no-o-direct", "message": "typed"}]);
        let file = dir.path().join("run.json");
        std::fs::write(&file, v.to_string()).unwrap();
        let s = load_side(&file).unwrap();
        assert_eq!(s.runs[0].warnings, vec![old("a warning from before codes"), Warning::new(Code::NoODirect, "typed")]);
        // An experiment's run as `--resume` and the report read it.
        let run = ExperimentRun {
            schema: RUN_SCHEMA.into(),
            experiment: "e".into(),
            cell: Cell { target: "t".into(), workload: "w".into(), cache: "warm".into(), background: "none".into() },
            repeat: 1,
            target: Default::default(),
            cache: Default::default(),
            background: None,
            attribution: Default::default(),
            result: simple(10),
            order: None,
        };
        let mut v = serde_json::to_value(&run).unwrap();
        v["result"]["warnings"] = serde_json::json!(["saved by an older fsbench"]);
        std::fs::create_dir(dir.path().join("runs")).unwrap();
        std::fs::write(dir.path().join("runs/t__w__warm__none__r1.json"), v.to_string()).unwrap();
        let runs = load_experiment_runs(dir.path()).unwrap();
        assert_eq!(runs[0].result.warnings, vec![old("saved by an older fsbench")]);
        // Saved again, it has the new shape.
        let again = serde_json::to_value(&runs[0].result.warnings).unwrap();
        assert_eq!(again, serde_json::json!([{"code": "unclassified", "message": "saved by an older fsbench"}]));
    }
}
