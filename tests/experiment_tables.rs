//! The seeds' tables at the top of an experiment's report.md (issue 32):
//! Filebench's ops/s with the spread and the write share by seed 000's
//! definition, targets against the first (seed 002), throughput per block
//! size and Bonnie++'s every test with `+++++` (seed 003); and bars in the
//! experiment file's order.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Run the experiment in `text` into `dir/out`; the out directory.
fn run_experiment(dir: &Path, text: &str) -> std::path::PathBuf {
    let exp = write_exp(dir, text);
    let out = dir.join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

/// The rows of the markdown table that follows `heading`: cells trimmed, the
/// header first, the alignment line dropped.
fn table_after(report: &str, heading: &str) -> Vec<Vec<String>> {
    let at = report.find(heading).unwrap_or_else(|| panic!("no {heading:?} in\n{report}"));
    report[at..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .filter(|l| !l.starts_with("| :") && !l.starts_with("| -"))
        .map(|l| l.trim_matches('|').split('|').map(|c| c.trim().to_string()).collect())
        .collect()
}

fn column(rows: &[Vec<String>], name: &str) -> usize {
    rows[0].iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name:?} in {:?}", rows[0]))
}

fn runs_of(out: &Path) -> Vec<Value> {
    run_files(out).iter().map(|f| serde_json::from_str(&std::fs::read_to_string(out.join("runs").join(f)).unwrap()).unwrap()).collect()
}

#[test]
fn filebench_table_has_the_spread_and_the_seeds_write_share_in_file_order() {
    let work = disk_tempdir();
    let data = work.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // File order that sorting would change: warm before cold, none before files.
    let out = run_experiment(
        work.path(),
        &format!(
            r#"
name = "fbtable"
repeat = 2
cache = ["warm", "cold"]
background = ["none", "files"]
[[target]]
label = "dir"
directory = "{}"
[[workload]]
label = "varmail"
filebench = "varmail"
set = {{ nfiles = "50" }}
runtime = "1"
"#,
            data.display()
        ),
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let heading = "## Filebench: ops/s and write share (seed 000)";
    assert!(report.find(heading).unwrap() < report.find("## Workload varmail").unwrap(), "the seed's table leads");
    // The seed's layout first: a row per personality, a column per scenario / load in file order.
    let pivot = table_after(&report, heading);
    let combos = ["warm / none", "warm / files", "cold / none", "cold / files"];
    let header: Vec<String> = ["workload".to_string()].into_iter().chain(combos.iter().map(|c| format!("ops/s (range): {c}"))).collect();
    assert_eq!(pivot[0], header);
    assert_eq!(pivot.len(), 2, "one row per personality: {pivot:?}");
    let shares = table_after(&report, "| workload | write share: warm / none");
    assert_eq!(shares.len(), 2, "{shares:?}");
    let rows = table_after(&report, "### Filebench per cell: the spread and the counts behind the write share");
    let (cache, bg) = (column(&rows, "cache"), column(&rows, "background"));
    for (i, r) in rows[1..].iter().enumerate() {
        // The pivot's cells are the per-cell rows' figures, placed by their levels.
        let median = r[column(&rows, "ops/s median [min–max]")].split(" [").next().unwrap().to_string();
        assert_eq!(pivot[1][1 + i], format!("{median} ({})", r[column(&rows, "range")]), "{pivot:?} {r:?}");
        assert_eq!(shares[1][1 + i], r[column(&rows, "write share")]);
    }
    let order: Vec<(&str, &str)> = rows[1..].iter().map(|r| (r[cache].as_str(), r[bg].as_str())).collect();
    assert_eq!(order, [("warm", "none"), ("warm", "files"), ("cold", "none"), ("cold", "files")]);
    let runs = runs_of(&out);
    for r in &rows[1..] {
        // The numerator: the write operations the runs recorded, summed over the cell's repeats.
        let cell: Vec<&Value> = runs.iter().filter(|x| x["cell"]["cache"] == r[cache] && x["cell"]["background"] == r[bg]).collect();
        assert_eq!(cell.len(), 2);
        let issued: u64 = cell
            .iter()
            .flat_map(|x| x["result"]["jobs"].as_array().unwrap())
            .flat_map(|j| j["ops"].as_array().unwrap())
            .filter(|o| o["class"] == "data_write")
            .map(|o| o["ops"].as_u64().unwrap())
            .sum();
        assert!(issued > 0);
        let device: u64 = cell.iter().map(|x| x["attribution"]["device_write_requests"].as_u64().expect("device counters")).sum();
        let num = |s: &str| s.replace(',', "").parse::<u64>().unwrap_or_else(|_| panic!("not a count: {s}"));
        assert_eq!(num(&r[column(&rows, "write ops issued")]), issued, "{r:?}");
        assert_eq!(num(&r[column(&rows, "device write requests")]), device, "{r:?}");
        assert_eq!(r[column(&rows, "write share")], format!("{:.2}%", issued as f64 * 100.0 / device as f64));
        // median [min–max] over the two repeats.
        let spread = &r[column(&rows, "ops/s median [min–max]")];
        assert!(spread.contains('[') && spread.contains('–'), "{spread}");
        for x in &cell {
            let a = &x["attribution"];
            let share = a["write_share"].as_f64().unwrap();
            let want = a["benchmark_write_ops"].as_f64().unwrap() / a["device_write_requests"].as_f64().unwrap();
            assert!((share - want).abs() < 1e-12, "{a}");
            assert!(a.get("benchmark_share_of_device_writes").is_none(), "the bytes figure has its own name: {a}");
            assert!(a["benchmark_attributed_write_bytes_fraction"].is_number(), "{a}");
        }
    }
    // One figure is called the write share; the byte and trace figures are named for what they are.
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(csv.contains(",attribution/write_share_pct,") && csv.contains(",attribution/benchmark_attributed_write_bytes_pct,"));
    assert!(!csv.contains("share_of_device_writes") && !report.contains("share_of_device_writes"));

    // The bars follow the file: warm / none, warm / files, cold / none, cold / files.
    let svg = std::fs::read_to_string(out.join("charts").join("varmail_io_summary_ops_s.svg")).unwrap();
    let at = |s: &str| svg.find(&format!(">{s}</text>")).unwrap_or_else(|| panic!("no legend entry {s}"));
    assert!(at("warm / none") < at("warm / files") && at("warm / files") < at("cold / none") && at("cold / none") < at("cold / files"));
    let bars: Vec<usize> = ["warm / none", "warm / files", "cold / none", "cold / files"]
        .iter()
        .map(|s| svg.find(&format!("<title>dir / varmail / {s}:")).unwrap_or_else(|| panic!("no bar {s}")))
        .collect();
    assert!(bars.windows(2).all(|w| w[0] < w[1]), "bars in file order: {bars:?}");
}

#[test]
fn two_targets_get_the_delta_table_and_a_block_size_sweep_its_table() {
    let work = disk_tempdir();
    let (a, b) = (work.path().join("a"), work.path().join("b"));
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    let out = run_experiment(
        work.path(),
        &format!(
            r#"
name = "twotargets"
repeat = 2
cache = ["warm"]
[[target]]
label = "zfirst"
directory = "{}"
[[target]]
label = "asecond"
directory = "{}"
[[workload]]
label = "w-64k"
args = ["--name=w", "--rw=write", "--bs=64k", "--size=2m"]
[[workload]]
label = "w-4k"
args = ["--name=w", "--rw=write", "--bs=4k", "--size=2m"]
"#,
            a.display(),
            b.display()
        ),
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let rows = table_after(&report, "## Targets against zfirst (seed 002)");
    let (w, t, d) = (column(&rows, "workload"), column(&rows, "target"), column(&rows, "Δ% [95% CI]"));
    let got: Vec<(&str, &str)> = rows[1..].iter().map(|r| (r[w].as_str(), r[t].as_str())).collect();
    assert_eq!(got, [("w-64k", "asecond"), ("w-4k", "asecond")], "a row per workload, in file order");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    for r in &rows[1..] {
        assert_eq!(r[column(&rows, "metric")], "w/write/iops (IOPS)");
        // The Δ is the stats module's, not one of its own.
        let c = summary["factors"]["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["workload"] == r[w] && c["factor"] == "target" && c["comparison"]["metric"] == "w/write/iops")
            .unwrap();
        let rel = c["comparison"]["rel_diff"].as_f64().unwrap() * 100.0;
        assert!(r[d].starts_with(&format!("{rel:+.1}%")), "{} vs {rel}", r[d]);
    }
    let rows = table_after(&report, "## w/write MiB/s by block size (seed 003)");
    assert_eq!(rows[0], ["block size", "zfirst MiB/s", "asecond MiB/s", "asecond / zfirst", "p (Holm) asecond"]);
    let sizes: Vec<&str> = rows[1..].iter().map(|r| r[0].as_str()).collect();
    assert_eq!(sizes, ["4k", "64k"], "rows by block size");
}

#[test]
fn bonnie_table_has_every_test_and_marks_phases_too_short_to_time() {
    let work = disk_tempdir();
    let data = work.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let out = run_experiment(
        work.path(),
        &format!(
            r#"
name = "bonnietable"
cache = ["warm"]
[[target]]
label = "dir"
directory = "{}"
[[workload]]
label = "bonnie"
bonnie = "-s 8 -r 4 -n 1 -u root"
"#,
            data.display()
        ),
    );
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let rows = table_after(&report, "## Bonnie++ (seed 003)");
    let run = &runs_of(&out)[0];
    let phases = run["result"]["jobs"][0]["details"]["phases"].as_array().unwrap();
    let headings = [
        ("putc", "Seq Output Per Chr K/s"),
        ("put_block", "Seq Output Block K/s"),
        ("rewrite", "Seq Output Rewrite K/s"),
        ("getc", "Seq Input Per Chr K/s"),
        ("get_block", "Seq Input Block K/s"),
        ("seeks", "Random Seeks /s"),
        ("seq_create", "Seq Create /s"),
        ("seq_stat", "Seq Read (stat) /s"),
        ("seq_del", "Seq Delete /s"),
        ("ran_create", "Random Create /s"),
        ("ran_stat", "Random Read (stat) /s"),
        ("ran_del", "Random Delete /s"),
    ];
    let mut marked = 0;
    for (test, heading) in headings {
        let cell = &rows[1][column(&rows, heading)];
        let p = phases.iter().find(|p| p["test"] == test).unwrap_or_else(|| panic!("no phase {test} in {phases:?}"));
        let short = p["elapsed_ns"].as_u64().unwrap() < 500_000_000;
        assert_eq!(cell == "+++++", short, "{test}: {cell} with {} ns", p["elapsed_ns"]);
        if !short {
            assert!(cell.replace(',', "").parse::<u64>().is_ok(), "{test}: {cell}");
        }
        marked += usize::from(short);
    }
    assert!(marked > 0, "an 8 MiB file and 1,024 files give phases under half a second");
}
