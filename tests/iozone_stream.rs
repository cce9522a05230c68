//! `fsbench iozone` streams IOzone's text as IOzone does: the preamble and
//! each row as soon as its cell is measured, on stdout, fsbench's own lines
//! after `iozone test complete.`; JSON on stdout stays one document.

mod common;

use common::fsbench;
use std::io::{BufRead, BufReader};
use std::process::Stdio;

/// IOzone's auto-mode cells from 64 kB files up to `max_kb`, records from
/// 4 kB up to the file (no crossover below 32 MB files).
fn auto_cells(max_kb: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut f = 64;
    while f <= max_kb {
        let mut r = 4;
        while r <= f.min(16384) {
            out.push((f, r));
            r *= 2;
        }
        f *= 2;
    }
    out
}

fn row_cell(line: &str) -> Option<(u64, u64)> {
    let mut w = line.split_whitespace();
    let (f, r) = (w.next()?.parse().ok()?, w.next()?.parse().ok()?);
    // A row has its figures after the sizes; fsbench's latency lines have a column name.
    w.next()?.parse::<u64>().ok()?;
    Some((f, r))
}

#[test]
fn rows_arrive_while_the_run_goes_on_in_iozones_order() {
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("iozone.tmp");
    // -e puts an fsync in every write figure: the 16 MB cells take long
    // enough that the first row is read well before the run ends.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("fsbench"))
        .env("FSBENCH_STATE_DIR", d.path().join("state"))
        .args(["iozone", "-a", "-g", "16m", "-i", "0", "-i", "1", "-e", "-f"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("fsbench starts");
    let out = BufReader::new(child.stdout.take().unwrap());
    let mut lines = Vec::new();
    let mut running_at_first_row = None;
    for l in out.lines() {
        let l = l.expect("utf-8 lines");
        if running_at_first_row.is_none() && row_cell(&l).is_some() {
            running_at_first_row = Some(child.try_wait().expect("wait").is_none());
        }
        lines.push(l);
    }
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    assert_eq!(running_at_first_row, Some(true), "the first row came only when fsbench had exited:\n{}", lines.join("\n"));
    assert_eq!(lines[0], "\tAuto Mode", "{lines:?}");
    let done = lines.iter().position(|l| l == "iozone test complete.").expect("IOzone's last line");
    let rows: Vec<(u64, u64)> = lines[..done].iter().filter_map(|l| row_cell(l)).collect();
    assert_eq!(rows, auto_cells(16 * 1024));
    // Printed once, and fsbench's own part after IOzone's.
    assert_eq!(lines.iter().filter(|l| l.contains("reclen    write")).count(), 1);
    let fsb = lines.iter().position(|l| l.starts_with("fsbench:")).expect("fsbench's part");
    assert!(fsb > done);
    // An auto run's latency part is a line per column, not per cell.
    assert!(lines.len() - fsb < 40, "{} lines after fsbench:", lines.len() - fsb);
}

#[test]
fn json_on_stdout_is_one_document_with_every_cell() {
    let d = tempfile::tempdir().unwrap();
    let out = fsbench()
        .args(["iozone", "-a", "-g", "256k", "-i", "0", "-i", "1", "--output-format", "json", "-f"])
        .arg(d.path().join("iozone.tmp"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is exactly one JSON document");
    let jobs: Vec<&str> = v["jobs"].as_array().unwrap().iter().map(|j| j["name"].as_str().unwrap()).collect();
    let want: Vec<String> = auto_cells(256).iter().map(|(f, r)| format!("{f}k/{r}k")).collect();
    assert_eq!(jobs, want);
}
