//! `fsbench experiment --check FILE`: the checks that need no set-up, then
//! what would run on stdout (exit 0), or the located errors on stderr
//! (exit 2); nothing is created.

mod common;
use common::*;

const EXP: &str = "\
name = \"chk\"
repeat = \"${reps}\"
cache = [\"warm\", \"cold\"]
background = [\"none\", \"files\"]
[params]
reps = \"2\"
[[target]]
label = \"a\"
directory = \"DIR\"
[[target]]
label = \"b\"
directory = \"DIR\"
[[workload]]
label = \"w1\"
args = [\"--name=w1\", \"--rw=write\", \"--size=1m\"]
[[workload]]
label = \"w2\"
args = [\"--name=w2\", \"--rw=read\", \"--size=1m\"]
[[workload]]
label = \"w3\"
filebench = \"varmail\"
runtime = 1
[[gap]]
table = \"seed 004 Table 1\"
what = \"JFS column\"
why = \"no jfs here\"
";

fn value<'a>(stdout: &'a str, key: &str) -> Vec<&'a str> {
    stdout.lines().filter_map(|l| l.strip_prefix(&format!("{key}: "))).collect()
}

#[test]
fn check_prints_what_would_run_and_creates_nothing() {
    let work = disk_tempdir();
    let dir = work.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    let exp = write_exp(work.path(), &EXP.replace("DIR", &dir.display().to_string()));
    let o = fsbench().current_dir(work.path()).args(["experiment", "--check", "--allow-uncontrolled"]).arg(&exp).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(value(&stdout, "experiment"), ["chk"]);
    assert_eq!(value(&stdout, "target").len(), 2, "{stdout}");
    assert!(value(&stdout, "target")[0].starts_with("a (directory "), "{stdout}");
    assert_eq!(value(&stdout, "workload"), ["w1 (fio)", "w2 (fio)", "w3 (filebench)"]);
    assert_eq!(value(&stdout, "caches"), ["warm, cold"]);
    assert_eq!(value(&stdout, "backgrounds"), ["none, files"]);
    assert_eq!(value(&stdout, "repeats"), ["2"]);
    // 2 targets × 3 workloads × 2 caches × 2 backgrounds × 2 repeats.
    assert_eq!(value(&stdout, "runs"), ["48"]);
    assert_eq!(value(&stdout, "gap"), ["seed 004 Table 1 | JFS column | no jfs here"]);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "nothing in the target");
    assert!(!work.path().join("results").exists(), "no results directory");
    // --set reaches the check.
    let o = fsbench().args(["experiment", "--check", "--allow-uncontrolled", "--set", "reps=5"]).arg(&exp).output().unwrap();
    assert_eq!(value(&String::from_utf8_lossy(&o.stdout), "runs"), ["120"]);
}

#[test]
fn check_reports_located_errors_on_stderr_with_exit_2() {
    let work = disk_tempdir();
    let exp = write_exp(work.path(), &EXP.replace("DIR", "/tmp").replace("why = \"no jfs here\"", "why = \"\""));
    let o = fsbench().args(["experiment", "--check"]).arg(&exp).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(o.stdout.is_empty(), "stdout holds the plan only");
    assert!(err.contains(&format!("{}:26:7: key 'gap.why'", exp.display())), "{err}");
    // A workload's problem found by preflight, also on stderr.
    let bad = EXP.replace("DIR", "/tmp").replace("\"--rw=read\"", "\"--rw=bogus\"");
    let exp = write_exp(work.path(), &bad);
    let o = fsbench().args(["experiment", "--check", "--allow-uncontrolled"]).arg(&exp).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("bogus"), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn gaps_are_a_section_of_report_md() {
    let work = disk_tempdir();
    let dir = work.path().join("t");
    std::fs::create_dir(&dir).unwrap();
    let text = format!(
        "name = \"g\"\n[[target]]\nlabel = \"a\"\ndirectory = \"{}\"\n[[workload]]\nlabel = \"w\"\n\
         args = [\"--name=w\", \"--rw=write\", \"--size=64k\"]\n\
         [[gap]]\ntable = \"seed 004 Figures 2-8\"\nwhat = \"the JFS column\"\nwhy = \"this kernel has no jfs\"\n",
        dir.display()
    );
    let exp = write_exp(work.path(), &text);
    let out = work.path().join("results");
    let o = fsbench().arg("experiment").arg(&exp).arg("--out").arg(&out).arg("--no-progress").output().unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let at = report.find("## What this run cannot fill").unwrap_or_else(|| panic!("no gap section: {report}"));
    let row = report[at..].lines().find(|l| l.contains("the JFS column")).unwrap_or_else(|| panic!("no row: {report}"));
    assert!(row.contains("seed 004 Figures 2-8") && row.contains("this kernel has no jfs"), "{row}");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["gaps"][0]["why"], "this kernel has no jfs");
}
