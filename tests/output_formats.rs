//! Output formats through the CLI: every document in csv and markdown, the
//! refusal of a format that cannot show a command's document before
//! anything runs, and results of the previous schema read by `compare`.

mod common;

use common::{assert_no_document, disk_tempdir, fsbench};
use serde_json::Value;
use std::path::Path;

fn run_fio(dir: &Path, format: &str, extra: &[&str]) -> std::process::Output {
    fsbench()
        .args(["fio", "--name=x", "--rw=randread", "--bs=4k", "--size=1m", "--invalidate=0"])
        .arg(format!("--directory={}", dir.display()))
        .args(extra)
        .args([&format!("--output-format={format}"), "--no-progress"])
        .output()
        .unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn a_run_as_csv_is_one_metric_per_row_with_the_figures_measured() {
    let dir = disk_tempdir();
    let csv = stdout(&run_fio(dir.path(), "csv", &[]));
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("metric,value"));
    let rows: Vec<(String, f64)> = lines
        .map(|l| {
            let (m, v) = l.rsplit_once(',').unwrap();
            (m.to_string(), v.parse().unwrap_or_else(|_| panic!("not a number: {l}")))
        })
        .collect();
    let get = |name: &str| rows.iter().find(|(m, _)| m == name).unwrap_or_else(|| panic!("no {name} in {csv}")).1;
    // 256 reads of 4 KiB: the IOPS times the window is the count.
    assert!(get("x/read/iops") > 0.0);
    assert!(get("x/read/lat_p99_us") >= get("x/read/lat_mean_us") * 0.1);
    assert!(get("cpu/us_per_op") > 0.0);
}

#[test]
fn a_run_as_markdown_is_a_table_with_a_row_per_operation() {
    let dir = disk_tempdir();
    let md = stdout(&run_fio(dir.path(), "markdown", &[]));
    let lines: Vec<&str> = md.lines().collect();
    assert!(lines[0].starts_with("| unit | operation | class | ops | IOPS |"), "{md}");
    let row = lines.iter().find(|l| l.starts_with("| x | read |")).unwrap_or_else(|| panic!("{md}"));
    assert!(row.contains("| data_read | 256 |"), "{row}");
    // Every row has as many cells as the header.
    let cells = |l: &str| l.matches(" | ").count();
    assert!(lines.iter().filter(|l| l.starts_with("| ")).all(|l| cells(l) == cells(lines[0])), "{md}");
}

#[test]
fn repeated_runs_and_comparisons_export_their_statistics() {
    let dir = disk_tempdir();
    let csv = stdout(&run_fio(dir.path(), "csv", &["--repeat=2"]));
    assert!(csv.starts_with("metric,n,mean,sd,cv,min,max,median,ci95_low,ci95_high,ci95_clamped\n"), "{csv}");
    let iops: Vec<&str> = csv.lines().find(|l| l.starts_with("x/read/iops,")).unwrap().split(',').collect();
    assert_eq!(iops[1], "2", "two runs summarised");

    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(&a, stdout(&run_fio(dir.path(), "json", &[]))).unwrap();
    std::fs::write(&b, stdout(&run_fio(dir.path(), "json", &["--thinktime=100"]))).unwrap();
    let md = stdout(&fsbench().args(["compare", "--output-format=markdown"]).arg(&a).arg(&b).output().unwrap());
    assert!(md.contains("| metric | A mean ± sd (n) | B mean ± sd (n) | Δ% [95% CI] | p | p (Holm) |"), "{md}");
    assert!(md.lines().any(|l| l.starts_with("| x/read/iops |")), "{md}");
    let csv = stdout(&fsbench().args(["compare", "--output-format=csv"]).arg(&a).arg(&b).output().unwrap());
    let row: Vec<&str> = csv.lines().find(|l| l.starts_with("x/read/iops,")).unwrap().split(',').collect();
    let (a_mean, b_mean): (f64, f64) = (row[2].parse().unwrap(), row[5].parse().unwrap());
    assert!(b_mean < a_mean, "100 µs of think time per I/O lowers IOPS: {csv}");
}

#[test]
fn a_format_that_cannot_show_the_document_is_refused_before_anything_runs() {
    let dir = disk_tempdir();
    let o = run_fio(dir.path(), "fio-json", &["--repeat=2"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("fio-json cannot show a repeated run") && err.contains("text, json, csv, markdown"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no file was laid out");
    assert_no_document(&o);

    let o = run_fio(dir.path(), "yaml", &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("yaml") && err.contains("markdown"), "the accepted values come from the table: {err}");
}

/// A result as fsbench wrote it before results described themselves.
fn downgrade_to_v1(v: &mut Value) {
    v["schema"] = "fsbench-result/1".into();
    v.as_object_mut().unwrap().remove("layout");
    for j in v["jobs"].as_array_mut().unwrap() {
        j.as_object_mut().unwrap().remove("headline");
        for o in j["ops"].as_array_mut().unwrap() {
            o.as_object_mut().unwrap().remove("class");
        }
    }
}

#[test]
fn compare_reads_results_of_the_previous_schema() {
    let dir = disk_tempdir();
    let mut old: Value = serde_json::from_str(&stdout(&run_fio(dir.path(), "json", &[]))).unwrap();
    downgrade_to_v1(&mut old);
    let a = dir.path().join("old.json");
    std::fs::write(&a, serde_json::to_string(&old).unwrap()).unwrap();
    let b = dir.path().join("new.json");
    std::fs::write(&b, stdout(&run_fio(dir.path(), "json", &[]))).unwrap();
    let out: Value =
        serde_json::from_str(&stdout(&fsbench().args(["compare", "--output-format=json"]).arg(&a).arg(&b).output().unwrap())).unwrap();
    let metrics: Vec<&str> = out["comparisons"].as_array().unwrap().iter().map(|c| c["metric"].as_str().unwrap()).collect();
    for m in ["x/read/iops", "x/read/lat_p99_us", "cpu/us_per_op"] {
        assert!(metrics.contains(&m), "{m} compared across versions: {metrics:?}");
    }
}

#[test]
fn an_unwritable_output_file_is_refused_before_anything_runs() {
    let dir = disk_tempdir();
    let o = run_fio(dir.path(), "json", &["--output=/nonexistent/dir/result.json"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--output /nonexistent/dir/result.json") && err.contains("nothing was run"), "{err}");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "no file was laid out");
    // A writable one gets the document.
    let out = dir.path().join("r.json");
    let o = run_fio(dir.path(), "json", &[&format!("--output={}", out.display())]);
    assert!(o.status.success() && o.stdout.is_empty());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(v["schema"], "fsbench-result/2");
}
