//! An IOzone experiment's report leads with IOzone's columns: seed 004's
//! seven columns in KB/s per target in the file's order, the medians of the
//! runs' records; an auto sweep gives per-target, per-column tables of
//! MB/s by record size and file size, and no chart of one bar per cell.

mod common;

use common::fsbench;
use std::path::Path;

/// Two directory targets listed against the alphabet (`zeta` first).
fn experiment(work: &Path, name: &str, iozone: &str) -> std::path::PathBuf {
    let mut text = format!("name = \"{name}\"\nrepeat = 2\n");
    for t in ["zeta", "alpha"] {
        let d = work.join(t);
        std::fs::create_dir_all(&d).unwrap();
        text += &format!("[[target]]\nlabel = \"{t}\"\ndirectory = \"{}\"\n", d.display());
    }
    text += &format!("[[workload]]\nlabel = \"w\"\niozone = \"{iozone} -f ${{target}}/iozone.tmp\"\n");
    let p = work.join(format!("{name}.toml"));
    std::fs::write(&p, text).unwrap();
    p
}

fn run(exp: &Path, out: &Path) -> String {
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    for l in stderr.lines().filter(|l| l.starts_with('[')) {
        assert!(l.chars().count() <= 160, "a progress line longer than a terminal's: {l}");
    }
    std::fs::read_to_string(out.join("report.md")).unwrap()
}

/// Per target, per IOzone column (as the run records name it), the KB/s of
/// each run: bytes / 1024 over the pass's seconds.
fn recorded(out: &Path) -> Vec<(String, String, f64)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(out.join("runs")).unwrap() {
        let r: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap();
        let target = r["cell"]["target"].as_str().unwrap().to_string();
        for c in r["result"]["jobs"][0]["details"]["cells"].as_array().unwrap() {
            let secs = (c["elapsed_ns"].as_f64().unwrap() / 1e9).max(1e-9);
            v.push((target.clone(), c["column"].as_str().unwrap().to_string(), c["bytes"].as_f64().unwrap() / 1024.0 / secs));
        }
    }
    v
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

#[test]
fn seven_columns_per_target_in_file_order_are_the_runs_medians() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let exp = experiment(work.path(), "seven", "-i 0 -i 1 -i 2 -i 4 -i 6 -i 7 -r 64k -s 512k");
    let report = run(&exp, &out);
    let at = report.find("the seed's columns").unwrap_or_else(|| panic!("no seven-column table:\n{report}"));
    assert!(at < report.find("## Workload").unwrap(), "IOzone's columns lead the report");
    let lines: Vec<&str> = report[at..].lines().filter(|l| l.starts_with('|')).take(4).collect();
    let cells = |l: &str| -> Vec<String> { l.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect() };
    let head = cells(lines[0]);
    assert_eq!(head, ["target", "n", "write", "re-write", "read", "random read", "record re-write", "fwrite", "fread"]);
    let json_names = ["Write", "Rewrite", "Read", "RandomRead", "RecordRewrite", "Fwrite", "Fread"];
    let recs = recorded(&out);
    let rows: Vec<Vec<String>> = lines[2..].iter().map(|l| cells(l)).collect();
    assert_eq!(rows.iter().map(|r| r[0].as_str()).collect::<Vec<_>>(), ["zeta", "alpha"], "the file's order");
    for row in &rows {
        assert_eq!(row[1], "2");
        for (i, col) in json_names.iter().enumerate() {
            let runs: Vec<f64> = recs.iter().filter(|(t, c, _)| *t == row[0] && c == col).map(|x| x.2).collect();
            assert_eq!(runs.len(), 2, "{col} of {}", row[0]);
            let want = format!("{:.0} [", median(runs));
            assert!(row[i + 2].starts_with(&want), "{} {col}: {} is not the median {want}", row[0], row[i + 2]);
        }
    }
    assert!(report.contains("ratio of the medians to zeta"), "{report}");
}

#[test]
fn a_sweep_gives_tables_per_record_size_and_no_one_bar_charts() {
    let work = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let exp = experiment(work.path(), "sweep", "-a -n 64k -g 128k -y 4k -q 16k -i 0 -i 1");
    let report = run(&exp, &out);
    let zeta = report.find("### w on zeta, write").unwrap_or_else(|| panic!("no per-column table:\n{report}"));
    let alpha = report.find("### w on alpha, write").expect("a table per target");
    assert!(zeta < alpha, "targets in the file's order");
    let table: Vec<&str> = report[zeta..].lines().filter(|l| l.starts_with('|')).take(5).collect();
    assert!(table[0].contains("record KB") && table[0].contains(" 64 ") && table[0].contains(" 128 "), "{table:?}");
    let recs: Vec<&str> = table[2..].iter().map(|l| l.trim_matches('|').split('|').next().unwrap().trim()).collect();
    assert_eq!(recs, ["4", "8", "16"]);
    let section = &report[report.find("## Workload w").expect("the workload's section")..];
    let header = section.lines().find(|l| l.starts_with('|')).unwrap();
    assert!(!header.contains("64k/4k/"), "a column per cell in the workload's table: {header}");
    let charts: Vec<String> =
        std::fs::read_dir(out.join("charts")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(charts.iter().any(|c| c.ends_with("__iozone-write.svg")), "heat maps: {charts:?}");
    assert!(!charts.iter().any(|c| c.starts_with("64k_")), "one-bar charts per cell: {charts:?}");
}
