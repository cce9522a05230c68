//! fio's own example job files (Debian's `fio-examples`), run unchanged by
//! fio and by fsbench at a small scale, side by side.
//!
//! Each file gets the same small-scale edits for both tools, and nothing
//! else: device names become scratch files, directories the scratch
//! directory, sizes and offsets above 16 MiB become 16 MiB, run times above
//! 2 s become 2 s, more than 64 files per job 64, and a `[global]` section on
//! top gives size=16m, runtime=2 and thread to jobs that set none. A
//! size-based job must do the same work under both: io_bytes and total_ios
//! per direction within 1% (where each I/O's direction or size is drawn at
//! random: all bytes within 1%, each direction within 4 binomial standard
//! deviations of the difference, at least 5%). A job that ran into its run
//! time (time_based, or cut short by runtime) must simply run.
//!
//! A file fio runs here and fsbench does not is an entry of `EXPLAINED`,
//! with the reason; the test fails when an explained file starts to run (so
//! the list stays true) and when fewer than `TARGET` of fio's files run.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const EXAMPLES: &str = "/usr/share/doc/fio/examples";
/// Of the files fio runs here, the share fsbench must run too: the issue's
/// 40 of the 44 fio ran on an idle machine of this kind (fio runs fewer when
/// the machine is loaded, as some of its files then outlast the timeout).
const TARGET: (usize, usize) = (40, 44);

/// Files fio runs on this machine that fsbench does not, and why.
const EXPLAINED: &[(&str, &str)] = &[
    (
        "exec.fio",
        "its monitor job runs /usr/sbin/turbostat, which this machine lacks: fio runs the job without the program, fsbench stops with the error",
    ),
    (
        "cmdprio-bssplit.fio",
        "fio moves 38.7 of the 48 MiB its three randrw 64k/1m bssplit jobs ask for, fsbench all 48: fio's early end is not understood yet",
    ),
];

/// Files that need what this machine lacks; neither tool is asked to run them.
const HARDWARE: &[(&str, &str)] = &[];

/// Longest a scaled file may take (a loaded machine lays out slowly).
const TIMEOUT_S: u64 = 60;
const SIZE_CAP: u64 = 16 << 20;
const RUNTIME_CAP: u64 = 2;
/// filecreate-ioengine.fio makes 16 x 31,250 files: too many for a test.
const NRFILES_CAP: u64 = 64;

/// Parse a fio size such as `10G`, `512m`, `4k` (1024-based); None for
/// anything else (percentages, ranges, variables).
fn size_of(v: &str) -> Option<u64> {
    let v = v.trim();
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: u64 = v[..digits].parse().ok()?;
    let mult = match v[digits..].to_ascii_lowercase().trim_end_matches(['b', 'i']) {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    Some(n * mult)
}

/// Seconds of a fio time such as `900`, `30s`, `2m`, `1h`; None otherwise.
fn secs_of(v: &str) -> Option<u64> {
    let v = v.trim();
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: u64 = v[..digits].parse().ok()?;
    match &v[digits..] {
        "" | "s" => Some(n),
        "m" => Some(n * 60),
        "h" => Some(n * 3600),
        _ => None,
    }
}

/// The small-scale edit of one job file, the same for both tools.
fn scaled(text: &str, scratch: &Path) -> String {
    // thread: fio's jobs as threads of one process, so a timeout's kill
    // reaches them all (fsbench always runs jobs as threads).
    let mut out = format!("[global]\nsize={SIZE_CAP}\nruntime={RUNTIME_CAP}\nthread\n\n");
    let mut devices = 0;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let Some((key, value)) = trimmed.split_once('=') else {
            out.push_str(line);
            out.push('\n');
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        let edited = match key {
            "directory" => Some(scratch.display().to_string()),
            "filename" if value.starts_with("/dev/") && value != "/dev/null" && value != "/dev/zero" => {
                let names: Vec<String> = value
                    .split(':')
                    .map(|_| {
                        devices += 1;
                        scratch.join(format!("device{devices}.img")).display().to_string()
                    })
                    .collect();
                Some(names.join(":"))
            }
            "size" | "filesize" | "io_size" | "io_limit" | "offset" | "offset_increment" => {
                size_of(value).filter(|&b| b > SIZE_CAP).map(|_| "16m".to_string())
            }
            "runtime" | "timeout" => secs_of(value).filter(|&s| s > RUNTIME_CAP).map(|_| RUNTIME_CAP.to_string()),
            "ramp_time" | "startdelay" => secs_of(value).filter(|&s| s > 1).map(|_| "1".to_string()),
            "nrfiles" | "nr_files" => value.parse::<u64>().ok().filter(|&n| n > NRFILES_CAP).map(|_| NRFILES_CAP.to_string()),
            _ => None,
        };
        match edited {
            Some(v) => out.push_str(&format!("{key}={v}\n")),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

/// What one tool did with one file.
enum Outcome {
    Ran(Value),
    Failed(String),
}

fn run_tool(tool: &str, job: &Path, cwd: &Path) -> Outcome {
    let mut cmd = if tool == "fio" {
        let mut c = Command::new("fio");
        c.arg(job).arg("--output-format=json");
        c
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_fsbench"));
        c.arg("fio").arg(job).args(["--output-format=fio-json", "--no-progress"]);
        c
    };
    // Its own process group: fio runs its jobs as child processes, which a
    // timeout must stop too.
    use std::os::unix::process::CommandExt;
    cmd.process_group(0);
    let child = match cmd.current_dir(cwd).stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped()).spawn() {
        Ok(c) => c,
        Err(e) => return Outcome::Failed(format!("cannot start {tool}: {e}")),
    };
    // Output is drained while the tool runs (a full pipe would stall it); a
    // job that never ends (a listener with no sender) must not hang the suite.
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let out = match rx.recv_timeout(Duration::from_secs(TIMEOUT_S)) {
        Ok(out) => out.expect("output"),
        Err(_) => {
            // SAFETY: kill takes plain integers; the group is the one this
            // test created for the child above, named by its pid.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            // Not joined: a process that left the group could hold the pipes.
            drop(waiter);
            return Outcome::Failed(format!("still running after {TIMEOUT_S} s; stopped"));
        }
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        let first = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("no message");
        return Outcome::Failed(format!("exit {}: {}", out.status.code().unwrap_or(-1), first.chars().take(140).collect::<String>()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    match text.find('{').map(|i| serde_json::from_str::<Value>(&text[i..])) {
        Some(Ok(v)) => Outcome::Ran(v),
        _ => Outcome::Failed(format!("no JSON on stdout: {}", text.chars().take(140).collect::<String>())),
    }
}

/// Bytes and I/Os per direction, all jobs together.
fn work(v: &Value) -> [(u64, u64); 3] {
    let mut w = [(0, 0); 3];
    for j in v["jobs"].as_array().into_iter().flatten() {
        for (i, d) in ["read", "write", "trim"].iter().enumerate() {
            w[i].0 += j[d]["io_bytes"].as_u64().unwrap_or(0);
            w[i].1 += j[d]["total_ios"].as_u64().unwrap_or(0);
        }
    }
    w
}

/// A job's option as fio reports it: its own section first, then [global]
/// (fio's JSON keeps the two apart).
fn option<'a>(fio: &'a Value, job: &'a Value, key: &str) -> Option<&'a Value> {
    job["job options"].get(key).or_else(|| fio["global options"].get(key))
}

/// Did a job stop on its run time rather than on its size?
fn ran_into_runtime(fio: &Value) -> bool {
    fio["jobs"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|j| option(fio, j, "time_based").is_some() || j["job_runtime"].as_u64().unwrap_or(0) + 150 >= RUNTIME_CAP * 1000)
}

fn within(a: u64, b: u64, pct: f64) -> bool {
    let (a, b) = (a as f64, b as f64);
    (a - b).abs() <= b.max(1.0) * pct / 100.0
}

/// What a job leaves to chance: each I/O's direction (a mixed job, or a
/// net receiver that counts short receives and may miss the last bytes),
/// and each I/O's size (bssplit, bsrange). Then the split per direction
/// and the I/O count move from one seed to another.
#[derive(Clone, Copy, Default)]
struct Chance {
    direction: bool,
    size: bool,
}

fn chance_of(fio: &Value) -> Chance {
    let mut c = Chance::default();
    for j in fio["jobs"].as_array().into_iter().flatten() {
        let o = |key| option(fio, j, key);
        let rw = o("rw").or(o("readwrite")).and_then(Value::as_str).unwrap_or("");
        let net = matches!(o("ioengine").and_then(Value::as_str), Some("net" | "netsplice"));
        c.direction |= net || matches!(rw, "rw" | "readwrite" | "randrw");
        c.size |= o("bssplit").is_some() || o("bsrange").is_some();
    }
    c
}

/// Compare the two runs; None when they agree: all bytes within 1%, and
/// bytes and I/Os per direction within 1% (5% where chance decides them).
fn disagreement(fio: &Value, fsb: &Value) -> Option<String> {
    if ran_into_runtime(fio) {
        return None;
    }
    let (a, b) = (work(fsb), work(fio));
    let luck = chance_of(fio);
    let chance = luck.direction || luck.size;
    let names = ["read", "write", "trim"];
    let mut diffs = Vec::new();
    let total = |w: &[(u64, u64); 3]| w.iter().map(|d| d.0).sum::<u64>();
    if !within(total(&a), total(&b), if chance { 2.0 } else { 1.0 }) {
        diffs.push(format!("all: {} B vs fio {} B", total(&a), total(&b)));
    }
    let ios: u64 = b.iter().map(|d| d.1).sum();
    for i in 0..3 {
        // Where chance draws the direction, two runs differ by a binomial
        // amount: allow 4 standard deviations of the difference (or 5%).
        // Random sizes on top spread a direction's bytes further: a rare
        // 64k among 4k I/Os moves them as much as sixteen directions do
        // (jesd219.fio's read bytes span 5% over fio's own runs).
        let tol = if chance && b[i].1 > 0 {
            let (n, p) = (ios as f64, b[i].1 as f64 / ios.max(1) as f64);
            let binomial = (400.0 * (2.0 * n * p * (1.0 - p)).sqrt() / (n * p)).max(5.0);
            if luck.direction && luck.size {
                binomial.max(12.0)
            } else {
                binomial
            }
        } else {
            1.0
        };
        if !within(a[i].0, b[i].0, tol) || !within(a[i].1, b[i].1, tol) {
            diffs.push(format!("{}: {} B/{} ios vs fio {} B/{} ios", names[i], a[i].0, a[i].1, b[i].0, b[i].1));
        }
    }
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

fn short(v: &Value) -> String {
    let w = work(v);
    format!("r{}k w{}k", w[0].0 >> 10, w[1].0 >> 10)
}

#[test]
fn fio_examples_run_under_fsbench_as_under_fio() {
    if !have("fio") {
        skip("fio is not installed (scripts/setup-peers.sh installs it)");
        return;
    }
    if !Path::new(EXAMPLES).is_dir() {
        skip("fio-examples is not installed (scripts/setup-peers.sh installs it)");
        return;
    }
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(EXAMPLES).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|x| x == "fio")).collect();
    files.sort();
    let only = std::env::var("FSBENCH_CORPUS_ONLY").ok();
    let mut table = vec![format!("{:32} | {:24} | {:24} | reason", "file", "fio", "fsbench")];
    let (mut fio_ran, mut both_ran, mut failures) = (0, 0, Vec::new());
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if only.as_deref().is_some_and(|o| !name.contains(o)) {
            continue;
        }
        if let Some((_, why)) = HARDWARE.iter().find(|(f, _)| *f == name) {
            table.push(format!("{name:32} | {:24} | {:24} | needs {why}", "not run", "not run"));
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        let run = |tool: &str| {
            let dir = disk_tempdir();
            let job = dir.path().join(&name);
            std::fs::write(&job, scaled(&text, dir.path())).unwrap();
            run_tool(tool, &job, dir.path())
        };
        let fio = run("fio");
        let Outcome::Ran(fio) = fio else {
            let Outcome::Failed(why) = fio else { unreachable!() };
            table.push(format!("{name:32} | {:24} | {:24} | fio: {why}", "fails here", "not compared"));
            continue;
        };
        fio_ran += 1;
        let explained = EXPLAINED.iter().find(|(f, _)| *f == name).map(|(_, why)| *why);
        let (cell, reason) = match run("fsbench") {
            Outcome::Ran(fsb) => match disagreement(&fio, &fsb) {
                None => {
                    both_ran += 1;
                    if explained.is_some() {
                        failures.push(format!("{name} runs now: remove it from EXPLAINED"));
                    }
                    (short(&fsb), String::new())
                }
                Some(d) => match explained {
                    Some(e) => (short(&fsb), format!("explained: {e} ({d})")),
                    None => {
                        failures.push(format!("{name}: different work: {d}"));
                        (short(&fsb), format!("DIFFERENT WORK: {d}"))
                    }
                },
            },
            Outcome::Failed(why) => match explained {
                Some(e) => ("not run (explained)".to_string(), e.to_string()),
                None => {
                    failures.push(format!("{name}: {why}"));
                    ("FAILED".to_string(), why)
                }
            },
        };
        table.push(format!("{name:32} | {:24} | {cell:24} | {reason}", short(&fio)));
    }
    table.push(format!("fio ran {fio_ran} files here; fsbench ran {both_ran} of them with the same work"));
    let text = table.join("\n") + "\n";
    // The harness shows a passing test's output only with --nocapture: the
    // table is kept in a file as well.
    let saved = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fio-corpus.txt");
    let _ = std::fs::write(&saved, &text);
    println!("{text}(also in {})", saved.display());
    if only.is_none() && both_ran * TARGET.1 < fio_ran * TARGET.0 {
        failures.push(format!("fsbench ran {both_ran} of fio's {fio_ran} files; the target is {} of {}", TARGET.0, TARGET.1));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn scaling_edits_only_what_it_should() {
    let t = scaled("[j]\nsize=10G\nfilename=/dev/sdb:/dev/sdc\nruntime=900\nbs=4k\nfilename=/dev/null\n", Path::new("/s"));
    assert!(t.starts_with("[global]\nsize=16777216\nruntime=2\nthread\n"), "{t}");
    assert!(t.contains("\nsize=16m\n") && t.contains("filename=/s/device1.img:/s/device2.img\n"), "{t}");
    assert!(t.contains("\nruntime=2\n") && t.contains("\nbs=4k\n") && t.contains("filename=/dev/null\n"), "{t}");
    assert_eq!(size_of("512m"), Some(512 << 20));
    assert_eq!(size_of("50%"), None);
    assert_eq!(secs_of("2m"), Some(120));
}
