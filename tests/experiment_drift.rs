//! A load that fades over an experiment (issue 32, item 1): two identical
//! directory targets, a CPU-bound read, and CPU hogs this test starts and
//! stops by their pids halfway through. Run target after target
//! (`order = "sequential"`), the fading load makes the first target look
//! slower: Welch's test calls it significant, and the drift check (the
//! machine's load differed between the sides) keeps it from being called
//! so. Interleaved (the default), every round runs both targets side by
//! side and the paired test finds no difference. Then: an interrupted
//! interleaved experiment resumed does the runs left, in its recorded order.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const REPEAT: usize = 5;

fn experiment(dir: &Path, order: &str) -> String {
    let (a, b) = (dir.join("a"), dir.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    format!(
        r#"
name = "drift"
repeat = {REPEAT}
order = "{order}"
[[target]]
label = "a"
directory = "{}"
[[target]]
label = "b"
directory = "{}"
[[workload]]
label = "read"
args = ["--name=r", "--rw=read", "--bs=4k", "--size=16m", "--ioengine=psync", "--runtime=1", "--time_based"]
"#,
        a.display(),
        b.display()
    )
}

/// fsbench as a child this test watches, with a state directory of its own.
fn spawned() -> Command {
    let state = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("state-drift-{}", std::process::id()));
    std::fs::create_dir_all(&state).unwrap();
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("fsbench"));
    c.env("FSBENCH_STATE_DIR", state);
    c
}

/// Processes that keep a CPU busy each, ended by their own pids on drop.
struct Hogs(Vec<Child>);

impl Hogs {
    fn start(n: usize) -> Hogs {
        Hogs((0..n).map(|_| Command::new("sh").args(["-c", "while :; do :; done"]).spawn().expect("sh")).collect())
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Run the experiment with hogs on until half its runs are written.
fn run_with_fading_load(dir: &Path, order: &str) -> (std::path::PathBuf, Value, String) {
    let exp = write_exp(dir, &experiment(dir, order));
    let out = dir.join(format!("out-{order}"));
    // Three hogs per CPU: the benchmark gets a fraction of a CPU while they
    // run, well below what other processes leave it on a busy machine.
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
    let hogs = Hogs::start(3 * cpus);
    let mut child = spawned()
        .args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut hogs = Some(hogs);
    while child.try_wait().unwrap().is_none() {
        if hogs.is_some() && out.join("runs").is_dir() && run_files(&out).len() >= REPEAT {
            hogs = None;
        }
        assert!(Instant::now() < deadline, "the experiment took over a minute");
        std::thread::sleep(Duration::from_millis(10));
    }
    drop(hogs);
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{stderr}");
    let summary: Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    (out, summary, report)
}

/// The comparison of b against a on the lead metric.
fn lead(summary: &Value) -> Value {
    let c = summary["factors"]["comparisons"].as_array().unwrap();
    let first = c.iter().find(|x| x["factor"] == "target" && x["level"] == "b").expect("b against a").clone();
    let x = &first["comparison"];
    eprintln!(
        "{}: {} Δ {:.3} p (Holm) {:.3} drift {} veto {}",
        x["metric"], first["method"], x["rel_diff"], x["p_adjusted"], first["drift"], first["drift_veto"]
    );
    assert!(first["comparison"]["metric"].as_str().unwrap().contains("read"), "{first}");
    first
}

#[test]
fn a_fading_load_fakes_an_effect_run_target_after_target_which_the_drift_check_vetoes_and_interleaving_avoids() {
    let work = disk_tempdir();
    let (out, summary, report) = run_with_fading_load(work.path(), "sequential");
    let plan: Value = serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    assert_eq!(plan["order"], "sequential");
    let c = lead(&summary);
    let cmp = &c["comparison"];
    assert_eq!(c["method"], "welch", "{c}");
    // The false effect is in the data: a ran under the hogs, b did not.
    assert!(cmp["rel_diff"].as_f64().unwrap() > 0.2 && cmp["p_adjusted"].as_f64().unwrap() < 0.05, "no false effect to veto: {c}");
    let d = &c["drift"];
    let more = |k: &str, by: f64| d[format!("{k}_a")].as_f64().unwrap() > d[format!("{k}_b")].as_f64().unwrap() + by;
    assert!(more("others_cpu", 5.0) || more("runnable", 1.0), "the hogs were not seen: {d}");
    assert_eq!(cmp["significant"], false, "drift explains it: {c}");
    assert!(c["drift_veto"].as_str().is_some_and(|w| w.contains("load differed")), "{c}");
    assert!(report.contains("## Design and drift") && report.contains("Order: sequential"), "{report}");
    assert!(report.contains("because drift explains it") && report.contains("drift: not significant"), "{report}");

    let (out, summary, report) = run_with_fading_load(work.path(), "interleaved");
    let plan: Value = serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    assert_eq!(plan["order"], "interleaved");
    let seed = plan["seed"].as_u64().expect("a seed recorded");
    // Round r is repeat r of both targets.
    let runs = plan["runs"].as_array().unwrap();
    for (i, pair) in runs.chunks(2).enumerate() {
        let targets: Vec<&str> = pair.iter().map(|r| r["cell"]["target"].as_str().unwrap()).collect();
        assert!(pair.iter().all(|r| r["repeat"] == i + 1) && targets.contains(&"a") && targets.contains(&"b"), "{pair:?}");
    }
    let c = lead(&summary);
    assert_eq!(c["method"], "paired by round", "{c}");
    let cmp = &c["comparison"];
    assert!(cmp["p_adjusted"].as_f64().unwrap() >= 0.05 && cmp["significant"] == false, "a false effect: {c}");
    assert!(c["drift_veto"].is_null(), "{c}");
    assert!(report.contains(&format!("interleaved, seed {seed}")) && report.contains(&format!("--seed {seed}")), "{report}");
    assert!(report.contains("paired by round"), "{report}");
    // Each run records its place and the load around it.
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("runs").join("a__read__warm__none__r1.json")).unwrap()).unwrap();
    let o = &run["order"];
    assert_eq!(o["round"], 1);
    assert!(o["position"].as_u64().unwrap() < 2 && o["started_unix_ms"].as_u64().unwrap() > 0 && o["others_cpu_pct"].is_number(), "{o}");
    assert!(o["runnable"].as_f64().is_some_and(|r| r >= 1.0), "fsbench itself was runnable: {o}");
}

#[test]
fn an_interrupted_interleaved_experiment_resumes_with_the_runs_left_in_its_order() {
    let work = disk_tempdir();
    let text = experiment(work.path(), "interleaved").replace("repeat = 5", "repeat = 3").replace("--runtime=1", "--runtime=0.3");
    let exp = write_exp(work.path(), &text);
    let out = work.path().join("out");
    let mut child = spawned()
        .args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--seed", "7", "--no-progress"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !(out.join("runs").is_dir() && run_files(&out).len() >= 3) {
        assert!(Instant::now() < deadline && child.try_wait().unwrap().is_none(), "the experiment ended before its 3rd run");
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill takes plain integers and touches no memory; `child` has not been waited for, so its pid names it.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let done = run_files(&out);
    assert!(done.len() >= 3 && done.len() < 6, "{done:?}");
    let plan: Value = serde_json::from_str(&std::fs::read_to_string(out.join("plan.json")).unwrap()).unwrap();
    assert_eq!((plan["order"].as_str(), plan["seed"].as_u64()), (Some("interleaved"), Some(7)));
    // Another seed is refused: the runs left are those of the recorded order.
    let o = fsbench().args(["experiment", "--resume", out.to_str().unwrap(), "--seed", "8"]).output().unwrap();
    assert!(!o.status.success() && String::from_utf8_lossy(&o.stderr).contains("seed 7"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = fsbench().args(["experiment", "--resume", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(run_files(&out).len(), 6);
    // The resumed runs keep their places in the recorded schedule.
    let planned: Vec<String> = plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| format!("{}__read__warm__none__r{}.json", r["cell"]["target"].as_str().unwrap(), r["repeat"]))
        .collect();
    for (i, f) in planned.iter().enumerate() {
        let run: Value = serde_json::from_str(&std::fs::read_to_string(out.join("runs").join(f)).unwrap()).unwrap();
        assert_eq!(run["order"]["position"], i, "{f}");
    }
}
