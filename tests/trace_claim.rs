//! The kernel's top-level tracer (the home of the `blk` tracer) is one per
//! machine. Two fsbench captures at once: one has it, the other falls back
//! to a private instance, both succeed. A capture killed with SIGKILL, or
//! one whose settings could not be put back, leaves the machine changed
//! only until `fsbench cleanup` or the next capture, whatever state
//! directory those use; a setting that could not be put back after a
//! finished capture is a warning, not a failed run. After each, every
//! tracing setting (tracefs's top level, its options, the block events,
//! the instances, each block device's trace) equals the snapshot taken
//! before. Loop devices over sparse files this test makes; needs root and
//! tracefs, SKIPPED otherwise.

mod common;

use common::{fsbench, is_root, skip};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const TRACEFS: &str = "/sys/kernel/tracing";

/// Tracing state is global: one test of this file at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

struct Loop {
    name: String,
    _dir: tempfile::TempDir,
}

impl Loop {
    fn new() -> Option<Loop> {
        let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).ok()?;
        let img = dir.path().join("img");
        std::fs::File::create(&img).and_then(|f| f.set_len(64 << 20)).ok()?;
        let out = Command::new("losetup").args(["--find", "--show"]).arg(&img).output().ok()?;
        let dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && dev.starts_with("/dev/loop")).then(|| Loop { name: dev.trim_start_matches("/dev/").into(), _dir: dir })
    }
    fn dev(&self) -> String {
        format!("/dev/{}", self.name)
    }
    fn base(&self, what: &str) -> String {
        self._dir.path().join(what).display().to_string()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev()]).status();
    }
}

struct Setup {
    _serial: std::sync::MutexGuard<'static, ()>,
    a: Loop,
    b: Loop,
}

fn setup() -> Option<Setup> {
    if !is_root() {
        skip("not root: block tracing needs root");
        return None;
    }
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    if !common::ensure_tracefs() {
        skip("tracefs cannot be mounted at /sys/kernel/tracing");
        return None;
    }
    if read("current_tracer") != "nop" {
        skip("the top-level tracer is in use by someone else");
        return None;
    }
    match (Loop::new(), Loop::new()) {
        (Some(a), Some(b)) => Some(Setup { _serial: serial, a, b }),
        _ => {
            skip("cannot make loop devices");
            None
        }
    }
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(TRACEFS).join(rel)).map(|s| s.trim().to_string()).unwrap_or_else(|e| format!("<{e}>"))
}

/// A buffer size as its size: the kernel allocates a fresh machine's
/// buffer at its first use ("7 (expanded: 1408)" becomes "1408") and never
/// gives it back, which no capture can undo.
fn size(text: String) -> String {
    match text.split_once("(expanded:") {
        Some((_, rest)) => rest.trim().trim_end_matches(')').trim().to_string(),
        None => text,
    }
}

/// Every tracing setting a capture could change, by name.
fn snapshot() -> BTreeMap<String, String> {
    let mut s = BTreeMap::new();
    for f in ["current_tracer", "trace_clock", "tracing_on", "tracing_cpumask"] {
        s.insert(f.to_string(), read(f));
    }
    for f in ["buffer_size_kb", "buffer_total_size_kb"] {
        s.insert(f.to_string(), size(read(f)));
    }
    for dir in ["options", "events/block"] {
        for e in std::fs::read_dir(Path::new(TRACEFS).join(dir)).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            for f in ["enable", "filter"] {
                if e.path().join(f).is_file() {
                    s.insert(format!("{dir}/{name}/{f}"), read(&format!("{dir}/{name}/{f}")));
                }
            }
            if e.path().is_file() {
                s.insert(format!("{dir}/{name}"), read(&format!("{dir}/{name}")));
            }
        }
    }
    s.insert("events/enable".into(), read("events/enable"));
    let mut instances: Vec<String> = std::fs::read_dir(Path::new(TRACEFS).join("instances"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    instances.sort();
    s.insert("instances".into(), instances.join(","));
    for e in std::fs::read_dir("/sys/block").unwrap().flatten() {
        for f in ["enable", "act_mask", "start_lba", "end_lba"] {
            let p = e.path().join("trace").join(f);
            let v = std::fs::read_to_string(&p).map(|v| v.trim().to_string()).unwrap_or_default();
            s.insert(format!("{}/trace/{f}", e.path().display()), v);
        }
    }
    for d in ["/run/lock", "/run"] {
        for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with("fsbench-") {
                s.insert(format!("{d}/{name}"), "present".into());
            }
        }
    }
    s
}

/// The settings that differ, as "name: before -> after".
fn changed(before: &BTreeMap<String, String>) -> Vec<String> {
    let after = snapshot();
    let keys: std::collections::BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    keys.into_iter()
        .filter(|k| before.get(*k) != after.get(*k))
        .map(|k| format!("{k}: {:?} -> {:?}", before.get(k), after.get(k)))
        .collect()
}

fn assert_as_before(before: &BTreeMap<String, String>, when: &str) {
    let c = changed(before);
    assert!(c.is_empty(), "{when}: tracing settings changed:\n{}", c.join("\n"));
}

fn trace_cmd(l: &Loop, state: &Path, secs: &str, extra: &[&str]) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("fsbench"));
    c.args(["trace", "-d", &l.name, "-w", secs, "-o", &l.base("t")]).args(extra).env("FSBENCH_STATE_DIR", state);
    c
}

/// A fio job writing to the loop device for `secs`, traced.
fn traced_fio(l: &Loop, state: &Path, secs: &str) -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("fsbench"));
    c.args(["fio", "--name=w", "--rw=randwrite", "--bs=4k", "--direct=1", "--size=16m", "--time_based", "--allow-device"])
        .arg(format!("--runtime={secs}"))
        .arg(format!("--filename={}", l.dev()))
        .args(["--trace", "--output-format=json", "--no-progress"])
        .arg(format!("--trace-output={}", l.base("f")))
        .env("FSBENCH_STATE_DIR", state);
    c
}

fn spawn(mut c: Command) -> Child {
    c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap()
}

/// Wait until `cond` holds (at most 10 s).
fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !cond() {
        assert!(t0.elapsed() < Duration::from_secs(10), "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn kill9(child: &mut Child) {
    // SAFETY: kill with the pid of our own child, not yet reaped.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
}

fn cleanup(state: &Path) -> String {
    let out = fsbench().arg("cleanup").env("FSBENCH_STATE_DIR", state).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "fsbench cleanup failed:\n{text}");
    text
}

/// The method a finished `fsbench trace` says it traced with.
fn method_of(err: &str) -> &str {
    let line = err.lines().find(|l| l.starts_with("fsbench trace: tracing ")).unwrap_or_else(|| panic!("no method line:\n{err}"));
    line.rsplit(' ').next().unwrap()
}

#[test]
fn two_traces_at_once_share_the_top_level_tracer() {
    let Some(s) = setup() else { return };
    let state = tempfile::tempdir().unwrap();
    let before = snapshot();
    for round in 1..=3 {
        let a = spawn(trace_cmd(&s.a, state.path(), "2", &[]));
        let b = spawn(trace_cmd(&s.b, state.path(), "1", &[]));
        let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
        let (ea, eb) = (String::from_utf8_lossy(&a.stderr), String::from_utf8_lossy(&b.stderr));
        assert!(a.status.success() && b.status.success(), "round {round}: both succeed:\n{ea}\n{eb}");
        let mut methods = [method_of(&ea), method_of(&eb)];
        methods.sort();
        assert_eq!(methods, ["blk-tracer", "tracepoints"], "round {round}: one has the top level, the other falls back:\n{ea}\n{eb}");
        let fell_back = if method_of(&ea) == "tracepoints" { &ea } else { &eb };
        assert!(
            fell_back.contains("not used: blk-tracer: the top-level tracer") && fell_back.contains("in use by fsbench pid"),
            "{fell_back}"
        );
        assert_as_before(&before, &format!("after round {round}"));
    }
    // Two traced benchmark runs at once, the same.
    let a = spawn(traced_fio(&s.a, state.path(), "2"));
    let b = spawn(traced_fio(&s.b, state.path(), "1"));
    let (a, b) = (a.wait_with_output().unwrap(), b.wait_with_output().unwrap());
    let mut methods = Vec::new();
    for o in [&a, &b] {
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{err}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert!(v["failed"].is_null(), "{}", v["failed"]);
        assert!(v["trace"]["capture"]["records"].as_u64().unwrap() > 0, "the writes were traced: {}", v["trace"]["capture"]);
        methods.push(v["trace"]["capture"]["method"].as_str().unwrap().to_string());
    }
    methods.sort();
    assert_eq!(methods, ["blk-tracer", "tracepoints"]);
    assert_as_before(&before, "after two traced fio runs");

    // And two experiments that trace every run, on a raw device each.
    let work = tempfile::tempdir().unwrap();
    let experiment = |l: &Loop, name: &str| {
        let text = format!(
            "name = \"{name}\"\nrepeat = 1\ncache = [\"warm\"]\ntrace = true\n[[target]]\nlabel = \"d\"\ndevice = \"{}\"\n\
             [[workload]]\nlabel = \"w\"\nargs = [\"--name=w\", \"--rw=randwrite\", \"--bs=4k\", \"--direct=1\", \"--size=16m\", \"--time_based\", \"--runtime=2\"]\n",
            l.dev()
        );
        let file = work.path().join(format!("{name}.toml"));
        std::fs::write(&file, text).unwrap();
        let mut c = fsbench();
        c.args(["experiment", file.to_str().unwrap(), "--allow-device", "--no-progress", "--out"])
            .arg(work.path().join(name))
            .env("FSBENCH_STATE_DIR", state.path());
        c
    };
    let (mut ea, mut eb) = (experiment(&s.a, "a"), experiment(&s.b, "b"));
    let (a, b) = std::thread::scope(|sc| {
        let a = sc.spawn(|| ea.output().unwrap());
        let b = sc.spawn(|| eb.output().unwrap());
        (a.join().unwrap(), b.join().unwrap())
    });
    let mut methods = Vec::new();
    for (o, name) in [(&a, "a"), (&b, "b")] {
        assert!(o.status.success(), "experiment {name}: {}", String::from_utf8_lossy(&o.stderr));
        let run = work.path().join(name).join("runs/d__w__warm__none__r1.json");
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&run).unwrap()).unwrap();
        assert!(v["result"]["failed"].is_null(), "experiment {name}: {}", v["result"]["failed"]);
        methods.push(v["result"]["trace"]["capture"]["method"].as_str().unwrap().to_string());
    }
    methods.sort();
    assert_eq!(methods, ["blk-tracer", "tracepoints"]);
    assert_as_before(&before, "after two traced experiments");
}

#[test]
fn a_killed_capture_is_put_back_exactly_by_cleanup() {
    let Some(s) = setup() else { return };
    let before = snapshot();
    // `fsbench trace` with the top-level tracer, the same with tracepoints,
    // and a traced benchmark run.
    let cases: [(&str, Command); 3] = [
        ("fsbench trace", trace_cmd(&s.a, Path::new("/nonexistent"), "30", &[])),
        ("fsbench trace --method tracepoints", trace_cmd(&s.a, Path::new("/nonexistent"), "30", &["--method", "tracepoints"])),
        ("fsbench fio --trace", traced_fio(&s.a, Path::new("/nonexistent"), "30")),
    ];
    for (what, mut cmd) in cases {
        let state = tempfile::tempdir().unwrap();
        cmd.env("FSBENCH_STATE_DIR", state.path());
        let mut child = spawn(cmd);
        let instance = PathBuf::from(TRACEFS).join(format!("instances/fsbench-{}", child.id()));
        wait_for("tracing to be on", || read("current_tracer") == "blk" || instance.join("events/block/enable").exists());
        std::thread::sleep(Duration::from_millis(300));
        kill9(&mut child);
        assert!(!changed(&before).is_empty(), "{what}: the killed run left something changed");
        let text = cleanup(state.path());
        assert!(text.contains("done:"), "{what}: {text}");
        assert_as_before(&before, &format!("{what}, killed, after `fsbench cleanup`"));
    }
}

#[test]
fn a_killed_captures_settings_are_never_taken_for_the_originals() {
    let Some(s) = setup() else { return };
    let before = snapshot();
    let (dead, next) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut child = spawn(trace_cmd(&s.a, dead.path(), "30", &[]));
    wait_for("the blk tracer", || read("current_tracer") == "blk");
    std::thread::sleep(Duration::from_millis(200));
    kill9(&mut child);
    assert_eq!(read("current_tracer"), "blk");
    // The next capture keeps its records elsewhere: it puts the killed
    // run's settings back from the machine-wide record, then has the top
    // level itself, and leaves the true originals.
    let out = trace_cmd(&s.b, next.path(), "0.5", &[]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(method_of(&err), "blk-tracer", "{err}");
    assert!(err.contains("restore the tracer") && err.contains(&format!("left by fsbench pid {}", child.id())), "{err}");
    assert_as_before(&before, "after the next capture");
    // The killed run's own record is then nothing to undo.
    cleanup(dead.path());
    assert_as_before(&before, "after `fsbench cleanup` of the killed run's record");
}

#[test]
fn a_setting_that_cannot_be_put_back_is_a_warning_not_a_failed_run() {
    let Some(s) = setup() else { return };
    let before = snapshot();
    let state = tempfile::tempdir().unwrap();
    for (what, cmd) in
        [("fsbench trace", trace_cmd(&s.a, state.path(), "1.5", &[])), ("fsbench fio --trace", traced_fio(&s.a, state.path(), "1.5"))]
    {
        let mut child = spawn(cmd);
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let lines = std::thread::spawn(move || stderr.lines().map_while(Result::ok).collect::<Vec<_>>().join("\n"));
        wait_for("the blk tracer", || read("current_tracer") == "blk");
        // A reader of the top-level buffer makes the kernel refuse to
        // change the tracer (EBUSY), as another capture's reader did.
        let reader = std::fs::File::open(Path::new(TRACEFS).join("per_cpu/cpu0/trace_pipe_raw")).unwrap();
        let out = child.wait_with_output().unwrap();
        let err = lines.join().unwrap();
        assert!(out.status.success(), "{what}: the measurement is complete, so the run succeeds:\n{err}");
        assert!(err.contains("warning") && err.contains("could not restore the tracer") && err.contains("busy"), "{what}: {err}");
        if what.contains("fio") {
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert!(v["failed"].is_null(), "{}", v["failed"]);
            let warnings = v["warnings"].as_array().unwrap();
            assert!(warnings.iter().any(|w| w["message"].as_str().unwrap().contains("could not restore the tracer")), "{warnings:?}");
        }
        assert_eq!(read("current_tracer"), "blk", "{what}: left changed while the reader is there");
        drop(reader);
        cleanup(state.path());
        assert_as_before(&before, &format!("{what}: after `fsbench cleanup`"));
    }
}
