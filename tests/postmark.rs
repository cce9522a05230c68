//! `fsbench postmark` through the CLI: Postmark's commands from a file,
//! `-c` and stdin; its reports and the common JSON result; and Postmark
//! runs inside --repeat, experiments and compare, through the same seams as
//! every other family.

mod common;

use common::fsbench;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A command file whose location is `dir/w` (created).
fn config(dir: &Path, body: &str) -> PathBuf {
    let f = dir.join("c.pm");
    std::fs::write(&f, format!("set location {}\n{body}", dir.join("w").display())).unwrap();
    std::fs::create_dir_all(dir.join("w")).unwrap();
    f
}

fn json(out: &std::process::Output) -> Value {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn a_run_is_the_common_result_with_postmarks_figures_in_its_details() {
    let d = tempfile::tempdir().unwrap();
    let f = config(d.path(), "set number 40\nset transactions 400\nset size 1000 3000\nshow\nrun\nquit\n");
    let out = fsbench().arg("postmark").arg(&f).args(["--output-format", "json"]).output().unwrap();
    let v = json(&out);
    assert_eq!(v["schema"], "fsbench-result/2");
    assert_eq!(v["layout"], "postmark");
    let j = &v["jobs"][0];
    let det = &j["details"];
    assert_eq!(det["created_alone"], 40);
    assert_eq!(det["transactions_done"], 400);
    let op = |n: &str| j["ops"].as_array().unwrap().iter().find(|o| o["name"] == n).unwrap_or_else(|| panic!("no {n}")).clone();
    let n = |x: &Value| x.as_u64().unwrap();
    assert_eq!(n(&op("create")["ops"]), n(&det["created_alone"]) + n(&det["created_mixed"]));
    assert_eq!(n(&op("delete")["ops"]), n(&op("create")["ops"]), "every file is deleted at the end");
    // Each transaction reads or appends; an append to a file already at the
    // largest size does nothing (Postmark's rule) and is not an operation.
    assert_eq!(n(&op("read")["ops"]), n(&det["read"]));
    assert_eq!(n(&op("append")["ops"]), n(&det["appended"]));
    assert!(n(&op("read")["ops"]) + n(&op("append")["ops"]) <= 400);
    assert!(n(&op("read")["ops"]) > 100 && n(&op("append")["ops"]) > 100, "bias 5 splits the transactions");
    assert_eq!(op("read")["class"], "data_read");
    assert_eq!(op("create")["class"], "data_write");
    assert_eq!(op("delete")["class"], "metadata");
    assert_eq!(n(&op("read")["bytes"]), n(&det["bytes_read"]));
    let tx = j["headline"].as_array().unwrap().iter().find(|h| h["name"] == "transactions_s").expect("transactions/s leads");
    assert!(tx["value"].as_f64().unwrap() > 0.0 && tx["unit"] == "tx/s");
    assert!(String::from_utf8_lossy(&out.stderr).contains("Current configuration is:"), "show goes to stderr with JSON");
    assert_eq!(std::fs::read_dir(d.path().join("w")).unwrap().count(), 0, "nothing left behind");
}

#[test]
fn text_reports_and_run_file_appends() {
    let d = tempfile::tempdir().unwrap();
    let rep = d.path().join("report.txt");
    let f = config(
        d.path(),
        &format!("set number 30\nset transactions 50\nrun\nset report terse\nrun {}\nrun {}\n", rep.display(), rep.display()),
    );
    let out = fsbench().arg("postmark").arg(&f).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(stdout.starts_with("Time:\n\t1 seconds total\n"), "{stdout}");
    assert!(stdout.contains("\nfsbench (not in Postmark's report"), "{stdout}");
    let appended = std::fs::read_to_string(&rep).unwrap();
    let terse: Vec<&str> =
        appended.lines().filter(|l| !l.starts_with("# ") && !l.is_empty() && !l.starts_with("group ") && !l.starts_with("  ")).collect();
    assert_eq!(terse.len(), 2, "{appended}");
    assert!(terse.iter().all(|l| l.split(' ').count() == 13), "{appended}");
}

#[test]
fn bad_commands_exit_2_with_position_and_stdin_is_read() {
    let d = tempfile::tempdir().unwrap();
    let f = config(d.path(), "set number 5\nset numbr 4\nrun\n");
    let out = fsbench().arg("postmark").arg(&f).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty(), "nothing ran");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(&format!("{}:3:5: unknown setting 'numbr'", f.display())), "{err}");
    for (cmd, want) in [
        ("set size 900 100", "size"),
        ("set bias read 11", "-1"),
        ("set location /nonexistent/pm", "/nonexistent/pm"),
        ("frobnicate", "frobnicate"),
    ] {
        let out = fsbench().args(["postmark", "-c", cmd]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{cmd}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("command line:1:") && err.contains(want), "{cmd}: {err}");
    }
    let out = fsbench()
        .arg("postmark")
        .write_stdin(format!("set location {}\nset number 10\nset transactions 20\nset report terse\nrun\n", d.path().display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("pm>"), "no prompt when stdin is not a terminal");
    assert_eq!(String::from_utf8(out.stdout).unwrap().lines().next().unwrap().split(' ').count(), 13);
}

#[test]
fn repeats_experiments_and_compare_take_postmark_runs() {
    let d = tempfile::tempdir().unwrap();
    let f = config(d.path(), "set number 50\nset transactions 500\nrun\nquit\n");
    let v = json(&fsbench().arg("postmark").arg(&f).args(["--repeat", "2", "--output-format", "json"]).output().unwrap());
    assert_eq!(v["schema"], "fsbench-repeated/1");
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    let tx = v["summary"].as_array().unwrap().iter().find(|m| m["metric"] == "postmark/transactions_s").expect("headline summarised");
    assert_eq!(tx["summary"]["n"], 2);

    let exp = d.path().join("pm.toml");
    let out_dir = d.path().join("results");
    std::fs::write(
        &exp,
        format!(
            "name = \"pm\"\nrepeat = 2\n[[target]]\nlabel = \"dir\"\ndirectory = \"{}\"\n[[workload]]\nlabel = \"small\"\npostmark = [\"set number 40\", \"set transactions 300\"]\n[[workload]]\nlabel = \"reads\"\npostmark = [\"set number 40\", \"set transactions 300\", \"set bias read 10\"]\n",
            d.path().join("w").display()
        ),
    )
    .unwrap();
    let s = json(&fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out_dir).args(["--output-format", "json"]).output().unwrap());
    let cells = s["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for c in cells {
        assert_eq!(c["runs"], 2);
        assert_eq!(c["headline"]["postmark/transactions_s"], "tx/s", "{c}");
    }
    let reads = cells.iter().find(|c| c["cell"]["workload"] == "reads").unwrap();
    assert_eq!(reads["metrics"]["postmark/append/iops"]["mean"], 0.0, "bias read 10 never appends");
    assert!(out_dir.join("charts/postmark_transactions_s.svg").is_file());
    assert_eq!(std::fs::read_dir(d.path().join("w")).unwrap().count(), 0, "experiment runs leave nothing behind");

    let out = fsbench()
        .arg("compare")
        .arg(format!("{}::dir__small__warm__none", out_dir.display()))
        .arg(format!("{}::dir__reads__warm__none", out_dir.display()))
        .args(["--metric", "transactions_s"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("postmark/transactions_s"));
}
