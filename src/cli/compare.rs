//! `fsbench compare A B`: per metric, B against A (the baseline): the
//! relative difference of the means with its 95% confidence interval and
//! Welch's t-test.
//!
//! A and B are each a result file (`fsbench fio ... --output-format=json`,
//! or an experiment's run file), a directory of them (`*.json`, e.g. the
//! repeats of one setup), or one matrix cell of an experiment written as
//! `RESULTS_DIR::target__workload__cache__background`. Only
//! metrics present in every run of both sides are compared.
//!
//! Exit status: 0 when the comparison was made (whatever it found), 2 when
//! an input cannot be used (the message names the file).

use crate::report::format::thousands;
use crate::report::OutputFormat;
use crate::result::{RunResult, SCHEMA};
use crate::stats::{self, Comparison};
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Baseline: a result file (`fsbench fio|filebench ... --output-format=json`,
    /// with or without --repeat, or an experiment run), a directory of them,
    /// or an experiment cell
    /// `RESULTS_DIR::target__workload__cache__background`.
    pub a: PathBuf,
    /// What to compare with the baseline: same forms as A.
    pub b: PathBuf,
    /// Only metrics whose name contains this text (e.g. `iops`, `lat_p99`, `x/read/`).
    #[arg(long)]
    pub metric: Option<String>,
    /// `normal` (a table) or `json` (an array of comparisons).
    #[arg(long, value_enum, default_value = "normal")]
    pub output_format: OutputFormat,
}

/// The runs of one side, with the files they came from.
pub struct Side {
    pub path: PathBuf,
    pub files: Vec<PathBuf>,
    pub runs: Vec<RunResult>,
}

pub fn run(a: CompareArgs) -> i32 {
    if a.output_format == OutputFormat::FioJson {
        eprintln!("fsbench compare: --output-format fio-json does not apply here; use normal or json");
        return 2;
    }
    let sides = load_side(&a.a).and_then(|sa| load_side(&a.b).map(|sb| (sa, sb)));
    let (sa, sb) = match sides {
        Ok(s) => s,
        Err(e) => {
            eprintln!("fsbench compare: {e}");
            return 2;
        }
    };
    for (label, side) in [("A", &sa), ("B", &sb)] {
        for (f, r) in side.files.iter().zip(&side.runs) {
            if r.partial {
                eprintln!("fsbench compare: warning: {label}: {} was interrupted; its figures cover what ran", f.display());
            }
            for j in r.jobs.iter().filter(|j| j.error.is_some()) {
                eprintln!(
                    "fsbench compare: warning: {label}: {}: job '{}' failed: {}",
                    f.display(),
                    j.name,
                    j.error.as_deref().unwrap_or_default()
                );
            }
        }
        for w in stats::warnings(&stats::summarize_runs(&side.runs)) {
            if a.metric.as_deref().is_none_or(|m| w.contains(m)) {
                eprintln!("fsbench compare: warning: {label}: {w}");
            }
        }
    }

    let comparisons = match compare_runs(&sa.runs, &sb.runs, a.metric.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fsbench compare: {e}");
            return 2;
        }
    };
    let text = match a.output_format {
        OutputFormat::Json => {
            for line in no_spread_notice(&sa, &sb) {
                eprintln!("fsbench compare: note: {line}");
            }
            let mut s = serde_json::to_string_pretty(&comparisons).expect("comparisons serialise");
            s.push('\n');
            s
        }
        _ => render_table(&sa, &sb, &comparisons),
    };
    match super::emit(&text, &None) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("fsbench compare: {e}");
            1
        }
    }
}

/// Load a result file, every `*.json` file of a directory (sorted by name),
/// or one matrix cell of an experiment: `EXPERIMENT_DIR::CELL`, where CELL is
/// `target__workload__cache__background` as in the run file names.
pub fn load_side(path: &Path) -> Result<Side, String> {
    if let Some((dir, cell)) = path.to_str().and_then(|s| s.split_once("::")) {
        return load_cell(path, Path::new(dir), cell);
    }
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {}", path.display(), io_reason(&e)))?;
    let files: Vec<PathBuf> = if meta.is_dir() {
        let rd = std::fs::read_dir(path).map_err(|e| format!("{}: cannot list: {}", path.display(), io_reason(&e)))?;
        let mut v: Vec<PathBuf> =
            rd.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file()).collect();
        v.sort();
        if v.is_empty() {
            return Err(format!(
                "{}: no *.json result files in this directory (write them with `fsbench fio ... --output-format=json`)",
                path.display()
            ));
        }
        v
    } else {
        vec![path.to_path_buf()]
    };
    let runs = load_files(&files)?;
    Ok(Side { path: path.to_path_buf(), files, runs })
}

fn load_cell(spec: &Path, dir: &Path, cell: &str) -> Result<Side, String> {
    let runs_dir = dir.join("runs");
    let rd = std::fs::read_dir(&runs_dir).map_err(|e| format!("{}: {}", runs_dir.display(), io_reason(&e)))?;
    let prefix = format!("{cell}__r");
    let mut files: Vec<PathBuf> = rd
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".json")))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(format!("{}: no runs of cell '{cell}' in {}", spec.display(), runs_dir.display()));
    }
    let runs = load_files(&files)?;
    Ok(Side { path: spec.to_path_buf(), files, runs })
}

fn io_reason(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        _ => e.to_string(),
    }
}

fn load_files(files: &[PathBuf]) -> Result<Vec<RunResult>, String> {
    let mut runs = Vec::new();
    for f in files {
        runs.extend(load_file(f)?);
    }
    Ok(runs)
}

/// One result file: a run, an experiment run, or the output of `--repeat`
/// (its complete runs).
pub fn load_file(path: &Path) -> Result<Vec<RunResult>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {}", path.display(), io_reason(&e)))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: not JSON ({e})", path.display()))?;
    if value.get("schema").and_then(|s| s.as_str()) == Some(super::repeat::SCHEMA) {
        let runs = value.get("runs").and_then(|r| r.as_array()).cloned().unwrap_or_default();
        let runs = runs
            .into_iter()
            .map(|r| one_result(path, r))
            .filter(|r| !matches!(r, Ok(run) if run.partial))
            .collect::<Result<Vec<_>, _>>()?;
        if runs.is_empty() {
            return Err(format!("{}: the repeated result holds no complete run", path.display()));
        }
        return Ok(runs);
    }
    one_result(path, value).map(|r| vec![r])
}

/// A run result, possibly wrapped in an experiment run record.
fn one_result(path: &Path, value: serde_json::Value) -> Result<RunResult, String> {
    // An experiment run wraps the workload's result.
    let value = match value.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s == crate::result::experiment::RUN_SCHEMA => value.get("result").cloned().unwrap_or_default(),
        _ => value,
    };
    match value.get("schema").and_then(|s| s.as_str()) {
        Some(s) if s == SCHEMA => {}
        Some(s) => {
            return Err(format!("{}: result schema '{s}' is not the '{SCHEMA}' this fsbench reads", path.display()));
        }
        None => {
            let hint = if value.get("fio version").is_some() {
                "this is fio's JSON layout; write results with --output-format=json"
            } else {
                "expected the output of `fsbench fio ... --output-format=json`"
            };
            return Err(format!("{}: not an fsbench result (no \"schema\" field; {hint})", path.display()));
        }
    }
    serde_json::from_value(value).map_err(|e| format!("{}: not a valid {SCHEMA} result: {e}", path.display()))
}

/// Compare every metric present in all runs of both sides (in A's order),
/// optionally only those whose name contains `filter`.
pub fn compare_runs(a: &[RunResult], b: &[RunResult], filter: Option<&str>) -> Result<Vec<Comparison>, String> {
    let ma = stats::collect(a);
    let mb = stats::collect(b);
    let common: Vec<Comparison> =
        ma.iter().filter_map(|(name, va)| mb.iter().find(|(n, _)| n == name).map(|(_, vb)| stats::welch(name, va, vb))).collect();
    if common.is_empty() {
        let names = |m: &[(String, Vec<f64>)]| m.iter().map(|(n, _)| n.as_str()).take(8).collect::<Vec<_>>().join(", ");
        return Err(format!(
            "no metric is present on both sides (A has: {}; B has: {}); are they the same jobs?",
            or_none(names(&ma)),
            or_none(names(&mb))
        ));
    }
    let Some(f) = filter else { return Ok(common) };
    let picked: Vec<Comparison> = common.iter().filter(|c| c.metric.contains(f)).cloned().collect();
    if picked.is_empty() {
        let all: Vec<&str> = common.iter().map(|c| c.metric.as_str()).collect();
        return Err(format!("no metric matches '{f}'; the metrics are: {}", all.join(", ")));
    }
    Ok(picked)
}

fn or_none(s: String) -> String {
    if s.is_empty() {
        "none".into()
    } else {
        s
    }
}

/// A value with precision that suits its size.
fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 1000.0 {
        let s = thousands(a.round() as u64);
        if v < 0.0 {
            format!("-{s}")
        } else {
            s
        }
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a == 0.0 {
        "0".into()
    } else {
        format!("{v:.3}")
    }
}

fn pct(v: f64) -> String {
    format!("{:+.1}", v * 100.0)
}

fn tested(c: &Comparison) -> bool {
    c.a.n >= 2 && c.b.n >= 2
}

fn no_spread_notice(sa: &Side, sb: &Side) -> Vec<String> {
    [("A", sa), ("B", sb)]
        .iter()
        .filter(|(_, s)| s.runs.len() < 2)
        .map(|(l, s)| {
            format!(
                "{l} ({}) is a single run: the comparison has no spread, so nothing is marked significant; \
                 compare directories of repeated runs to test differences",
                s.path.display()
            )
        })
        .collect()
}

/// The human table.
pub fn render_table(sa: &Side, sb: &Side, cs: &[Comparison]) -> String {
    let runs = |n: usize| if n == 1 { "1 run".to_string() } else { format!("{n} runs") };
    let mut out = format!("A: {} ({})\nB: {} ({})\n\n", sa.path.display(), runs(sa.runs.len()), sb.path.display(), runs(sb.runs.len()));
    let header = ["metric", "A mean ± sd (n)", "B mean ± sd (n)", "Δ% [95% CI]", "p", ""];
    let rows: Vec<[String; 6]> = cs
        .iter()
        .map(|c| {
            let side = |s: &stats::Summary| format!("{} ± {} ({})", num(s.mean), num(s.sd), s.n);
            let delta = if c.note.as_deref().is_some_and(|n| n.contains("mean of A is 0")) {
                "n/a".to_string()
            } else if tested(c) {
                format!("{}% [{}, {}]", pct(c.rel_diff), pct(c.rel_ci_low), pct(c.rel_ci_high))
            } else {
                format!("{}%", pct(c.rel_diff))
            };
            let p = if !tested(c) {
                "—".to_string()
            } else if c.p_value < 0.001 {
                "<0.001".to_string()
            } else {
                format!("{:.3}", c.p_value)
            };
            let verdict = if c.significant { "significant" } else { "—" };
            [c.metric.clone(), side(&c.a), side(&c.b), delta, p, verdict.to_string()]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| -> String {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
            let pad = w - cell.chars().count();
            if i == 0 || i == cells.len() - 1 {
                s.push_str(cell);
                s.push_str(&" ".repeat(pad));
            } else {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            }
            s.push_str("  ");
        }
        s.trim_end().to_string() + "\n"
    };
    out.push_str(&line(&header.map(String::from)));
    for r in &rows {
        out.push_str(&line(r));
    }
    let notes: Vec<String> =
        cs.iter().filter(|c| tested(c)).filter_map(|c| c.note.as_ref().map(|n| format!("{}: {n}", c.metric))).collect();
    let notice = no_spread_notice(sa, sb);
    if !notes.is_empty() || !notice.is_empty() {
        out.push('\n');
    }
    for n in notice.iter().chain(&notes) {
        out.push_str(&format!("note: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::testutil::simple;

    fn side(name: &str, runs: Vec<RunResult>) -> Side {
        Side { path: name.into(), files: runs.iter().map(|_| PathBuf::from("f.json")).collect(), runs }
    }

    #[test]
    fn compares_metrics_on_both_sides() {
        let a = [simple(1000), simple(1010), simple(990)];
        let b = [simple(500), simple(505), simple(495)];
        let cs = compare_runs(&a, &b, None).unwrap();
        let iops = cs.iter().find(|c| c.metric == "x/read/iops").unwrap();
        assert!(iops.significant && (iops.rel_diff + 0.5).abs() < 1e-9);
        let only = compare_runs(&a, &b, Some("bw_")).unwrap();
        assert_eq!(only.len(), 1);
        assert_eq!(only[0].metric, "x/read/bw_MiB_s");
        let e = compare_runs(&a, &b, Some("nope")).unwrap_err();
        assert!(e.contains("no metric matches 'nope'") && e.contains("x/read/iops"), "{e}");
    }

    #[test]
    fn different_jobs_have_nothing_in_common() {
        let mut other = simple(10);
        other.jobs[0].name = "y".into();
        other.groups.clear();
        let e = compare_runs(&[simple(10)], &[other], None).unwrap_err();
        assert!(e.contains("no metric is present on both sides"), "{e}");
    }

    #[test]
    fn table_shows_means_delta_and_verdict() {
        let sa = side("base", vec![simple(1000), simple(1010), simple(990)]);
        let sb = side("new", vec![simple(1500), simple(1490), simple(1510)]);
        let cs = compare_runs(&sa.runs, &sb.runs, Some("iops")).unwrap();
        let t = render_table(&sa, &sb, &cs);
        assert!(t.starts_with("A: base (3 runs)\nB: new (3 runs)\n"), "{t}");
        let row = t.lines().find(|l| l.starts_with("x/read/iops")).unwrap();
        assert!(row.contains("1,000 ± 10.00 (3)"), "{row}");
        assert!(row.contains("1,500 ± 10.00 (3)"), "{row}");
        assert!(row.contains("+50.0% ["), "{row}");
        assert!(row.contains("<0.001") && row.ends_with("significant"), "{row}");
        assert!(!t.contains("note:"), "{t}");
    }

    #[test]
    fn single_runs_say_there_is_no_spread() {
        let sa = side("one.json", vec![simple(1000)]);
        let sb = side("dir", vec![simple(2000), simple(2010)]);
        let cs = compare_runs(&sa.runs, &sb.runs, None).unwrap();
        assert!(cs.iter().all(|c| !c.significant && c.p_value == 1.0));
        let t = render_table(&sa, &sb, &cs);
        assert!(t.contains("note: A (one.json) is a single run: the comparison has no spread"), "{t}");
        let row = t.lines().find(|l| l.starts_with("x/read/iops")).unwrap();
        assert!(row.contains("+100.5%") && !row.contains('[') && !row.contains("significant"), "{row}");
    }

    #[test]
    fn load_errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let e = load_side(&missing).err().unwrap();
        assert!(e.contains("missing.json") && e.contains("no such file"), "{e}");

        let bad = dir.path().join("bad.json");
        std::fs::write(&bad, "not json").unwrap();
        let e = load_side(&bad).err().unwrap();
        assert!(e.contains("bad.json") && e.contains("not JSON"), "{e}");

        let fio = dir.path().join("fio.json");
        std::fs::write(&fio, r#"{"fio version": "fio-3.36", "jobs": []}"#).unwrap();
        let e = load_side(&fio).err().unwrap();
        assert!(e.contains("fio.json") && e.contains("--output-format=json"), "{e}");

        let old = dir.path().join("old.json");
        std::fs::write(&old, r#"{"schema": "fsbench-result/0"}"#).unwrap();
        let e = load_side(&old).err().unwrap();
        assert!(e.contains("old.json") && e.contains("fsbench-result/0"), "{e}");

        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, format!(r#"{{"schema": "{SCHEMA}", "jobs": 3}}"#)).unwrap();
        let e = load_side(&broken).err().unwrap();
        assert!(e.contains("broken.json") && e.contains("not a valid"), "{e}");

        let empty = tempfile::tempdir().unwrap();
        std::fs::write(empty.path().join("notes.txt"), "x").unwrap();
        let e = load_side(empty.path()).err().unwrap();
        assert!(e.contains("no *.json result files"), "{e}");
    }

    #[test]
    fn directories_load_sorted_json_files() {
        let dir = tempfile::tempdir().unwrap();
        for (name, ops) in [("b.json", 20), ("a.json", 10), ("c.json", 30)] {
            std::fs::write(dir.path().join(name), crate::report::json::render(&simple(ops))).unwrap();
        }
        std::fs::write(dir.path().join("README"), "not a result").unwrap();
        let s = load_side(dir.path()).unwrap();
        assert_eq!(s.runs.len(), 3);
        let names: Vec<String> = s.files.iter().map(|f| f.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["a.json", "b.json", "c.json"]);
        assert_eq!(s.runs[0].jobs[0].ops[0].ops, 10);
    }

    #[test]
    fn numbers_are_readable() {
        assert_eq!(num(152345.4), "152,345");
        assert_eq!(num(-2500.0), "-2,500");
        assert_eq!(num(123.45), "123.5");
        assert_eq!(num(12.345), "12.35");
        assert_eq!(num(0.01234), "0.012");
        assert_eq!(num(0.0), "0");
        assert_eq!(pct(-0.98412), "-98.4");
        assert_eq!(pct(0.5), "+50.0");
    }
}
