//! Experiments end to end: the matrix, what lands in the output directory,
//! resume, attribution on a managed file system, and teardown when killed.

mod common;
use common::*;
use std::path::{Path, PathBuf};

fn dir_experiment(target_dir: &Path) -> String {
    format!(
        r#"
name = "dirtest"
repeat = 2
cache = ["warm"]
[params]
size = "1m"
[[target]]
label = "tmpdir"
directory = "{}"
[[workload]]
label = "rr"
args = ["--name=rr", "--rw=randread", "--bs=4k", "--size=${{size}}"]
[[workload]]
label = "sw"
args = ["--name=sw", "--rw=write", "--bs=64k", "--size=${{size}}"]
"#,
        target_dir.display()
    )
}

#[test]
fn directory_experiment_writes_runs_summary_csv_and_charts() {
    let work = disk_tempdir();
    let exp = write_exp(work.path(), &dir_experiment(work.path()));
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let runs = run_files(&out);
    assert_eq!(runs.len(), 4, "2 workloads x 2 repeats: {runs:?}");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let cells = summary["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    for c in cells {
        assert_eq!(c["runs"], 2);
        let iops = c["metrics"].as_object().unwrap().iter().find(|(k, _)| k.ends_with("/iops")).expect("an iops metric").1;
        assert_eq!(iops["n"], 2);
        assert!(iops["mean"].as_f64().unwrap() > 0.0);
        assert!(iops["ci95_low"].as_f64().unwrap() <= iops["mean"].as_f64().unwrap());
    }
    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "target,workload,cache,background,metric,n,mean,sd,cv,min,max,median,ci95_low,ci95_high,ci95_clamped"
    );
    assert!(lines.any(|l| l.starts_with("tmpdir,rr,warm,none,rr/read/iops,2,")), "{csv}");
    let charts: Vec<_> = std::fs::read_dir(out.join("charts")).unwrap().collect();
    assert!(charts.len() >= 2, "charts written");
    for c in charts {
        let text = std::fs::read_to_string(c.unwrap().path()).unwrap();
        assert!(text.trim_start().starts_with("<svg") || text.trim_start().starts_with("<?xml"));
    }
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("## Workload rr\n") && stdout.contains("rr/read/iops (IOPS)"), "{stdout}");
    // The directory target's own subdirectory is gone afterwards.
    let leftovers: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("fsbench-"))
        .collect();
    assert!(leftovers.is_empty(), "left behind: {:?}", leftovers.iter().map(|e| e.path()).collect::<Vec<_>>());
}

#[test]
fn resume_runs_only_what_is_missing() {
    let work = disk_tempdir();
    let exp = write_exp(work.path(), &dir_experiment(work.path()));
    let out = work.path().join("out");
    let first = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap()]).output().unwrap();
    assert!(first.status.success());
    let runs = run_files(&out);
    let kept = std::fs::read_to_string(out.join("runs").join(&runs[0])).unwrap();
    std::fs::remove_file(out.join("runs").join(&runs[3])).unwrap();
    let again = fsbench().args(["experiment", exp.to_str().unwrap(), "--resume", out.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    let ran = stderr.lines().filter(|l| l.starts_with('[')).count();
    assert_eq!(ran, 1, "only the missing run is redone:\n{stderr}");
    assert_eq!(run_files(&out), runs);
    assert_eq!(std::fs::read_to_string(out.join("runs").join(&runs[0])).unwrap(), kept, "finished runs are not redone");
}

#[test]
fn malformed_experiment_names_file_line_and_key() {
    let work = tempfile::tempdir().unwrap();
    let exp = write_exp(work.path(), "name = \"x\"\nrepeat = 2\ncache = [\"tepid\"]\n[[target]]\nlabel = \"t\"\ndirectory = \"/tmp\"\n");
    let o = fsbench().args(["experiment", exp.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(&format!("{}:3:", exp.display())) && err.contains("cache") && err.contains("tepid"), "{err}");
}

/// The managed-target tests look at every fsbench mount and loop device of
/// the machine, so they must not overlap each other.
static MANAGED: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn fsbench_mounts() -> Vec<String> {
    std::fs::read_to_string("/proc/self/mountinfo").unwrap().lines().filter(|l| l.contains("fsbench-mnt")).map(str::to_string).collect()
}

fn fsbench_loops() -> Vec<String> {
    let out = std::process::Command::new("losetup").arg("-a").output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains("fsbench-loop")).map(str::to_string).collect()
}

fn managed_experiment(dir: &Path, runtime: u32, background: &str, cache: &str) -> String {
    managed_on(&format!("loop = {{ dir = \"{}\", size = \"512m\" }}", dir.display()), runtime, background, cache)
}

fn managed_on(device: &str, runtime: u32, background: &str, cache: &str) -> String {
    format!(
        r#"
name = "managed"
repeat = 1
cache = ["{cache}"]
background = ["{background}"]
[[target]]
label = "ext4"
fs = "ext4"
mount = "nodelalloc"
{device}
[[workload]]
label = "w"
args = ["--name=w", "--rw=write", "--bs=64k", "--size=32m", "--runtime={runtime}", "--time_based", "--fsync=16"]
"#
    )
}

fn zram_devices() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/sys/block")
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().to_string()).filter(|n| n.starts_with("zram")).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[test]
fn managed_ext4_run_attributes_device_writes_and_tears_down() {
    if !is_root() {
        skip("needs root for mkfs, mount and loop devices");
        return;
    }
    let _serial = MANAGED.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_tempdir();
    let exp = write_exp(work.path(), &managed_experiment(work.path(), 2, "files:fsync", "fresh-mount"));
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    let runs = run_files(&out);
    assert_eq!(runs.len(), 1);
    let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("runs").join(&runs[0])).unwrap()).unwrap();
    assert!(run["target"]["mount_options_in_force"].as_str().unwrap().contains("nodelalloc"), "{}", run["target"]);
    assert_eq!(run["cache"]["applied"], true, "{}", run["cache"]);
    let bg = &run["background"];
    assert!(bg["files_created"].as_u64().unwrap() > 0, "{bg}");
    let a = &run["attribution"];
    let bench = a["benchmark_write_bytes"].as_u64().unwrap();
    let device = a["device_write_bytes"].as_u64().expect("device counters for the loop device");
    assert!(bench > 0 && device >= bench, "device saw {device} B, benchmark issued {bench} B");
    let storage = a["benchmark_storage_write_bytes"].as_u64().unwrap();
    assert!(storage > 0 && storage <= device, "fsbench caused {storage} B of the device's {device} B");
    let share = a["benchmark_attributed_write_bytes_fraction"].as_f64().unwrap();
    assert!(share > 0.0 && share <= 1.0, "share {share}");
    // The write share, seed 000's: the benchmark's write operations over the device's write requests.
    let (ops, requests) = (a["benchmark_write_ops"].as_u64().unwrap(), a["device_write_requests"].as_u64().unwrap());
    assert!(ops > 0 && requests > 0, "{a}");
    assert_eq!(a["write_share"].as_f64().unwrap(), ops as f64 / requests as f64);
    assert!(fsbench_mounts().is_empty(), "mounts left: {:?}", fsbench_mounts());
    assert!(fsbench_loops().is_empty(), "loop devices left: {:?}", fsbench_loops());
}

#[test]
fn a_raw_loop_device_fsbench_creates_is_written_and_read_without_allow_device_and_removed() {
    if !is_root() {
        skip("needs root for loop devices");
        return;
    }
    let _serial = MANAGED.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_tempdir();
    let text = format!(
        r#"
name = "raw"
cache = ["cold"]
[[target]]
label = "raw"
loop = {{ dir = "{}", size = "64m" }}
[[workload]]
label = "w"
args = ["--name=w", "--rw=write", "--bs=64k", "--size=4m", "--end_fsync=1"]
[[workload]]
label = "r"
args = ["--name=r", "--rw=read", "--bs=64k", "--size=4m"]
"#,
        work.path().display()
    );
    let exp = write_exp(work.path(), &text);
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(!stderr.contains("devtmpfs"), "the device node's file system is not where its data lives: {stderr}");
    for name in run_files(&out) {
        let run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("runs").join(&name)).unwrap()).unwrap();
        let t = &run["target"];
        assert_eq!(
            (t["kind"].as_str(), t["device_source"].as_str(), t["mount_point"].as_str()),
            (Some("device"), Some("loop"), None),
            "{t}"
        );
        let dev = t["device"].as_str().unwrap();
        assert!(dev.starts_with("/dev/loop"), "{t}");
        let job = &run["result"]["jobs"][0];
        let op = job["ops"].as_array().unwrap().iter().find(|o| o["name"] == "read" || o["name"] == "write").unwrap();
        assert_eq!(op["bytes"], 4 << 20, "{name}: {op}");
        if name.starts_with("raw__w__") {
            // The device is the target's own: its counters show the writes.
            assert!(run["attribution"]["device_write_bytes"].as_u64().is_some_and(|b| b >= 4 << 20), "{}", run["attribution"]);
        }
    }
    assert!(fsbench_loops().is_empty(), "loop devices left: {:?}", fsbench_loops());
    let images: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".img"))
        .collect();
    assert!(images.is_empty(), "image files left: {images:?}");
}

#[test]
fn killed_experiment_leaves_no_mount_loop_device_or_file() {
    if !is_root() {
        skip("needs root for mkfs, mount and loop devices");
        return;
    }
    let _serial = MANAGED.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_tempdir();
    kill_and_check(work.path(), &managed_experiment(work.path(), 60, "files", "warm"));
}

#[test]
fn killed_experiment_on_zram_leaves_no_zram_device() {
    if !is_root() || !Path::new("/sys/class/zram-control").exists() {
        skip("needs root and the zram module");
        return;
    }
    let _serial = MANAGED.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_tempdir();
    kill_and_check(work.path(), &managed_on("zram = \"512m\"", 60, "none", "warm"));
}

/// Start the experiment, SIGTERM it mid-run, and check nothing it made is left.
fn kill_and_check(work: &Path, text: &str) {
    let zram_before = zram_devices();
    let exp = write_exp(work, text);
    let out = work.join("out");
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("fsbench"))
        .args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the file system is mounted and the run is under way.
    let start = std::time::Instant::now();
    while fsbench_mounts().is_empty() && start.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(!fsbench_mounts().is_empty(), "the experiment never mounted its target");
    std::thread::sleep(std::time::Duration::from_secs(2));
    // SAFETY: kill takes plain integers and touches no memory; `child` has not been waited for, so its pid still names
    // that process.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(fsbench_mounts().is_empty(), "mounts left: {:?}", fsbench_mounts());
    assert!(fsbench_loops().is_empty(), "loop devices left: {:?}", fsbench_loops());
    assert_eq!(zram_devices(), zram_before, "zram devices left");
    let images: Vec<_> = std::fs::read_dir(work)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("fsbench-loop"))
        .collect();
    assert!(images.is_empty(), "image files left");
    let bg_procs = std::process::Command::new("pgrep").args(["-f", "background-load"]).output().unwrap();
    assert!(bg_procs.stdout.is_empty(), "background process left: {}", String::from_utf8_lossy(&bg_procs.stdout));
}

#[test]
fn fio_repeat_reports_statistics_over_runs_with_the_cache_reapplied() {
    let work = disk_tempdir();
    let d = format!("--directory={}", work.path().display());
    let mut args = vec!["fio", "--name=r", "--rw=randread", "--bs=4k", "--size=4m", &d, "--repeat=3", "--output-format=json"];
    if is_root() {
        args.push("--cache=cold");
    }
    let o = fsbench().args(&args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"].as_array().unwrap().len(), 3);
    let m = v["summary"].as_array().unwrap().iter().find(|m| m["metric"] == "r/read/iops").expect("iops metric");
    let s = &m["summary"];
    assert_eq!(s["n"], 3);
    let (min, mean, max) = (s["min"].as_f64().unwrap(), s["mean"].as_f64().unwrap(), s["max"].as_f64().unwrap());
    assert!(min <= mean && mean <= max && min > 0.0);
    assert!(s["ci95_low"].as_f64().unwrap() <= mean && mean <= s["ci95_high"].as_f64().unwrap());
    if is_root() {
        let reports = v["cache_reports"].as_array().unwrap();
        assert_eq!(reports.len(), 3, "the scenario is applied before every run");
        // Judged by the pages of the job's own file (mincore), not by the
        // system-wide Cached figure that other processes move: none of them
        // may be cached once the scenario is applied. Before the first run the
        // file does not exist yet; from the second on it is the 4 MiB file.
        for (i, r) in reports.iter().enumerate() {
            assert_eq!(r["applied"], true, "run {}: {r}", i + 1);
            let pages = &r["workload_pages"];
            assert_eq!(pages["resident"], 0, "run {}: {r}", i + 1);
            assert_eq!(pages["files"].as_u64().unwrap() + pages["skipped"].as_u64().unwrap(), 1, "run {}: {r}", i + 1);
        }
        for r in &reports[1..] {
            let pages = &r["workload_pages"];
            assert_eq!(pages["files"], 1, "{r}");
            assert!(pages["total"].as_u64().unwrap() * 65536 >= 4 << 20, "the 4 MiB file spans its pages: {r}");
        }
    }
}

/// What a SIGKILLed experiment left: its state record's mount point, loop
/// device and image file.
struct Left {
    mount_point: String,
    loop_device: String,
    image: PathBuf,
}

fn state_records(state: &Path) -> Vec<serde_json::Value> {
    std::fs::read_dir(state)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json") && !e.file_name().to_string_lossy().starts_with('.'))
                .filter_map(|e| serde_json::from_str(&std::fs::read_to_string(e.path()).ok()?).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn is_mounted(mount_point: &str) -> bool {
    std::fs::read_to_string("/proc/self/mountinfo").unwrap().lines().any(|l| l.split(' ').nth(4) == Some(mount_point))
}

fn loop_over(image: &Path) -> bool {
    let out = std::process::Command::new("losetup").arg("-a").output().unwrap();
    String::from_utf8_lossy(&out.stdout).contains(&format!("({})", image.display()))
}

fn small_loop(work: &Path, runtime: u32) -> String {
    managed_on(&format!("loop = {{ dir = \"{}\", size = \"128m\" }}", work.display()), runtime, "none", "warm")
}

/// An experiment on a loop-device target, SIGKILLed once its file system
/// is mounted, with its records in a state directory of its own, and what
/// it left; None (skipped) without root.
struct Killed {
    _serial: std::sync::MutexGuard<'static, ()>,
    work: tempfile::TempDir,
    state: tempfile::TempDir,
    out: PathBuf,
    left: Left,
}

fn sigkilled_experiment() -> Option<Killed> {
    if !is_root() {
        skip("needs root for mkfs, mount and loop devices");
        return None;
    }
    let serial = MANAGED.lock().unwrap_or_else(|e| e.into_inner());
    let work = disk_tempdir();
    let state = tempfile::tempdir().unwrap();
    let out = work.path().join("out");
    let exp = write_exp(work.path(), &small_loop(work.path(), 60));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("fsbench"))
        .args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"])
        .env("FSBENCH_STATE_DIR", state.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mounted = || {
        state_records(state.path()).into_iter().find_map(|r| {
            let actions = r["actions"].as_array()?.clone();
            let mp = actions.iter().find_map(|a| a["unmount"]["point"].as_str())?.to_string();
            let lo = actions.iter().find_map(|a| a["detach_loop"]["device"].as_str())?.to_string();
            let img = actions.iter().find_map(|a| a["remove_file"]["path"].as_str())?.into();
            is_mounted(&mp).then_some(Left { mount_point: mp, loop_device: lo, image: img })
        })
    };
    let start = std::time::Instant::now();
    let mut left = mounted();
    while left.is_none() && start.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(100));
        left = mounted();
    }
    let Some(left) = left else {
        // SAFETY: kill takes plain integers and touches no memory; `child` has not been waited for, so its pid still
        // names that process.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        let _ = child.wait();
        panic!("no record of a mounted target appeared in {}", state.path().display());
    };
    std::thread::sleep(std::time::Duration::from_secs(1));
    // SAFETY: as above.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    let status = child.wait().unwrap();
    assert_eq!(std::os::unix::process::ExitStatusExt::signal(&status), Some(libc::SIGKILL));
    assert!(is_mounted(&left.mount_point), "SIGKILL leaves the mount");
    assert!(loop_over(&left.image) && left.image.exists(), "SIGKILL leaves the loop device and its image");
    Some(Killed { _serial: serial, work, state, out, left })
}

fn assert_nothing_left(left: &Left, state: &Path) {
    assert!(!is_mounted(&left.mount_point), "{} still mounted", left.mount_point);
    assert!(!Path::new(&left.mount_point).exists(), "mount point {} left", left.mount_point);
    assert!(!loop_over(&left.image), "{} still attached to {}", left.loop_device, left.image.display());
    assert!(!left.image.exists(), "image {} left", left.image.display());
    assert!(state_records(state).is_empty(), "records left: {:?}", state_records(state));
}

#[test]
fn sigkilled_experiment_leaves_a_record_that_fsbench_cleanup_undoes() {
    let Some(k) = sigkilled_experiment() else { return };
    let with_state = |args: &[&str]| fsbench().env("FSBENCH_STATE_DIR", k.state.path()).args(args).output().unwrap();

    // The next run says what is left and how to remove it.
    let d = format!("--directory={}", k.work.path().display());
    let o = with_state(&["fio", "--name=x", "--rw=write", "--bs=64k", "--size=1m", &d, "--no-progress"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let warning: Vec<&str> = err.lines().filter(|l| l.contains("fsbench cleanup")).collect();
    assert_eq!(warning.len(), 1, "{err}");
    // The image, and the job's file once it is laid out.
    let files = ["1 file", "2 files"].map(|f| format!("left 1 mount, 1 loop device, {f} and 1 directory behind"));
    assert!(files.iter().any(|f| warning[0].contains(f)), "{err}");

    let o = with_state(&["cleanup", "--dry-run"]);
    let listed = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success() && listed.contains(&format!("would unmount {}", k.left.mount_point)), "{listed}");
    assert!(is_mounted(&k.left.mount_point) && k.left.image.exists(), "a dry run changes nothing");

    let o = with_state(&["cleanup"]);
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{said}{}", String::from_utf8_lossy(&o.stderr));
    assert!(said.contains(&format!("done: detach loop device {}", k.left.loop_device)), "{said}");
    assert_nothing_left(&k.left, k.state.path());
    let o = with_state(&["cleanup"]);
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("nothing left"));
}

#[test]
fn resume_of_a_sigkilled_experiment_first_undoes_what_it_left() {
    use std::io::BufRead;
    let Some(k) = sigkilled_experiment() else { return };
    // --resume runs the recorded experiment (60-s runs): once it has undone
    // what the killed run left, it is interrupted, and must tear its own
    // target down too.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("fsbench"))
        .env("FSBENCH_STATE_DIR", k.state.path())
        .args(["experiment", "--resume", k.out.to_str().unwrap(), "--no-progress"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let want = format!("done: unmount {}", k.left.mount_point);
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !seen.iter().any(|l: &String| l.contains(&want)) && std::time::Instant::now() < deadline {
        if let Ok(l) = rx.recv_timeout(std::time::Duration::from_millis(200)) {
            seen.push(l);
        }
    }
    // SAFETY: kill only sends a signal to the child this test spawned.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    seen.extend(rx.try_iter());
    assert!(seen.iter().any(|l| l.contains(&want)), "{}", seen.join("\n"));
    assert_eq!(status.code(), Some(130), "{}", seen.join("\n"));
    assert_nothing_left(&k.left, k.state.path());
    assert!(fsbench_loops().is_empty() && fsbench_mounts().is_empty(), "the resumed run tore its own target down");
}

/// Two directory targets × a Filebench personality, a Postmark run and a
/// fio job that only reads (its write figures are 0) × 2 repeats.
fn report_experiment(dir: &Path) -> String {
    let (t1, t2) = (dir.join("t1"), dir.join("t2"));
    std::fs::create_dir_all(&t1).unwrap();
    std::fs::create_dir_all(&t2).unwrap();
    format!(
        r#"
name = "rep"
repeat = 2
[[target]]
label = "first"
directory = "{}"
[[target]]
label = "second"
directory = "{}"
[[workload]]
label = "mail"
filebench = "varmail"
set = {{ nfiles = "50", nthreads = 2 }}
runtime = 1
[[workload]]
label = "pm"
postmark = ["set number 40", "set transactions 300"]
[[workload]]
label = "rr"
args = ["--name=rr", "--rw=randrw", "--rwmixread=100", "--bs=4k", "--size=1m", "--runtime=1", "--time_based"]
"#,
        t1.display(),
        t2.display()
    )
}

#[test]
fn the_report_answers_the_question() {
    let work = disk_tempdir();
    let exp = write_exp(work.path(), &report_experiment(work.path()));
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let report = std::fs::read_to_string(out.join("report.md")).expect("report.md written");
    assert_eq!(String::from_utf8_lossy(&o.stdout), report, "the terminal shows the report");

    // Per workload, the headline each tool declares, for every cell.
    let section = |w: &str| -> String {
        let start = report.find(&format!("## Workload {w}\n")).unwrap_or_else(|| panic!("no section for {w}:\n{report}"));
        let rest = &report[start + 3..];
        rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
    };
    for (w, headline) in
        [("mail", "varmail/io_summary/ops_s (ops/s)"), ("pm", "postmark/transactions_s (tx/s)"), ("rr", "rr/read/iops (IOPS)")]
    {
        let s = section(w);
        assert!(s.contains(headline), "{w}: {s}");
        for target in ["first", "second"] {
            assert!(
                s.lines().any(|l| l.starts_with(&format!("| {target} ")) && l.contains(" ± ") && l.contains("%)")),
                "{w}/{target}: {s}"
            );
        }
        // The target varies: the second against the first, with Δ%, its interval and the adjusted p.
        assert!(s.contains("### target: against first"), "{s}");
        assert!(s.contains(" Δ% [95% CI] |") && s.contains(" p (Holm) |"), "{s}");
        assert!(s.lines().any(|l| l.starts_with("- ") && l.contains("times faster than") && l.contains("p (Holm)")), "{s}");
    }
    // Small latencies keep their significant figures: never "1 ± 0".
    let rr = section("rr");
    let cells = &rr[..rr.find("###").unwrap()];
    let header: Vec<&str> = cells.lines().find(|l| l.contains("rr/read/lat_p99_us")).unwrap().split('|').map(str::trim).collect();
    let col = header.iter().position(|h| h.starts_with("rr/read/lat_p99_us")).unwrap();
    for row in cells.lines().filter(|l| l.starts_with("| first ") || l.starts_with("| second ")) {
        let cell = row.split('|').map(str::trim).nth(col).unwrap();
        let (mean, _) = cell.split_once(" ± ").unwrap_or_else(|| panic!("{cell}"));
        let value: f64 = mean.replace(',', "").parse().unwrap();
        assert!(value >= 10.0 || mean.contains('.'), "p99 latency {cell} keeps its figures");
    }
    // The read-only job's write figures are 0 everywhere: said once, not tabled, not compared, not charted.
    assert!(rr.contains("0 in every run: rr/write/iops, rr/write/bw_MiB_s"), "{rr}");
    assert!(!rr.contains("| rr/write/"), "{rr}");

    // Every comparison row of the workload sections is one of the tests the
    // p-values are adjusted over (the seed tables ahead of them show some again).
    let workloads = &report[report.find("## Workload ").expect("workload sections")..];
    let rows = workloads.lines().filter(|l| l.starts_with("| ") && l.contains("% [") && l.contains("%]")).count();
    assert!(rows >= 3, "{report}");
    assert!(report.contains(&format!("adjusted by Holm's method over all {rows} tests in this report")), "{rows} rows:\n{report}");
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["factors"]["tests"], rows);
    assert_eq!(summary["factors"]["correction"], "holm");
    for c in summary["factors"]["comparisons"].as_array().unwrap() {
        let (p, adj) = (c["comparison"]["p_value"].as_f64().unwrap(), c["comparison"]["p_adjusted"].as_f64().unwrap());
        assert!(adj >= p && adj <= 1.0, "{c}");
        assert_eq!(c["baseline"], "first");
    }

    // Warnings once each: the working sets fit in RAM, said once per workload.
    let warnings: Vec<&str> = report[report.find("## Warnings").expect("warnings")..].lines().filter(|l| l.starts_with("- ")).collect();
    let mut unique = warnings.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), warnings.len(), "{warnings:?}");
    assert_eq!(warnings.iter().filter(|w| w.contains("the filesets' nominal size is")).count(), 1, "{warnings:?}");

    // Charts: headline metrics only, none all zero.
    let charts: Vec<String> =
        std::fs::read_dir(out.join("charts")).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().to_string()).collect();
    let headline: std::collections::BTreeSet<String> = summary["cells"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["headline"].as_object().unwrap().keys().map(|k| format!("{}.svg", k.replace('/', "_"))).collect::<Vec<_>>())
        .collect();
    for c in &charts {
        assert!(headline.contains(c) || c == "rr_read_latency_percentiles.svg", "{c} is not a headline metric's chart: {charts:?}");
        let svg = std::fs::read_to_string(out.join("charts").join(c)).unwrap();
        if svg.contains("class=\"bar\"") {
            let heights = svg.split("class=\"bar\"").skip(1).map(|b| b.split("height=\"").nth(1).unwrap().split('"').next().unwrap());
            assert!(heights.map(|h| h.parse::<f64>().unwrap()).any(|h| h > 0.0), "{c} is all zero");
        }
    }
    assert!(!charts.iter().any(|c| c.starts_with("rr_write_")), "all-zero charts: {charts:?}");
    assert!(charts.len() <= headline.len() + 1, "{} charts for {} headline metrics", charts.len(), headline.len());
    // Besides the 12 runs and the charts: the experiment's copy and plan, report.md, summary.json and .csv,
    // and the results directory's lock file.
    let files = walk(&out).len();
    assert!(files <= 12 + charts.len() + 6, "{files} files in {}", out.display());
}

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).flat_map(|p| if p.is_dir() { walk(&p) } else { vec![p] }).collect()
}

#[test]
fn intervals_of_non_negative_figures_stop_at_zero_everywhere() {
    let work = disk_tempdir();
    let exp = write_exp(
        work.path(),
        &format!(
            "name = \"ci\"\nrepeat = 2\n[[target]]\nlabel = \"d\"\ndirectory = \"{}\"\n[[workload]]\nlabel = \"rr\"\nargs = [\"--name=rr\", \"--rw=randread\", \"--bs=4k\", \"--size=1m\"]\n",
            work.path().display()
        ),
    );
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The second repeat took ten times as long: IOPS 1/10 of the first's, and
    // the t-interval of two such values reaches far below 0.
    let second = out.join("runs/d__rr__warm__none__r2.json");
    let mut run: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&second).unwrap()).unwrap();
    let e = run["result"]["jobs"][0]["elapsed_ns"].as_u64().unwrap();
    run["result"]["jobs"][0]["elapsed_ns"] = (e * 10).into();
    std::fs::write(&second, serde_json::to_string(&run).unwrap()).unwrap();
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--resume", out.to_str().unwrap()]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let csv = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    assert_eq!(header.last(), Some(&"ci95_clamped"), "{csv}");
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let row: Vec<&str> = csv.lines().find(|l| l.contains(",rr/read/iops,")).unwrap().split(',').collect();
    assert_eq!((row[at("ci95_low")], row[at("ci95_clamped")]), ("0", "true"), "{csv}");
    for l in csv.lines().skip(1) {
        let f: Vec<&str> = l.split(',').collect();
        let (min, low): (f64, f64) = (f[at("min")].parse().unwrap(), f[at("ci95_low")].parse().unwrap());
        assert!(min < 0.0 || low >= 0.0, "a non-negative figure's interval below 0: {l}");
    }
    let summary: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let iops = &summary["cells"][0]["metrics"]["rr/read/iops"];
    assert_eq!((iops["ci95_low"].as_f64(), iops["ci95_clamped"].as_bool()), (Some(0.0), Some(true)), "{iops}");
    // The unsteady repeats: one warning line for the experiment.
    let report = String::from_utf8_lossy(&o.stdout);
    assert_eq!(report.lines().filter(|l| l.contains("the repeats disagree")).count(), 1, "{report}");
}

#[test]
fn a_warning_every_cell_gives_is_printed_once_for_the_experiment() {
    // Two workloads × two repeats, every run with the same job 'q' whose
    // iodepth does nothing with psync: one line on stderr, at the first
    // cell; every run's file keeps it with its code.
    let work = disk_tempdir();
    let q = r#"["--name=q", "--rw=randread", "--bs=4k", "--iodepth=8", "--ioengine=psync""#;
    let exp = write_exp(
        work.path(),
        &format!(
            "name = \"once\"\nrepeat = 2\n[[target]]\nlabel = \"d\"\ndirectory = \"{}\"\n\
             [[workload]]\nlabel = \"a\"\nargs = {q}, \"--size=256k\"]\n[[workload]]\nlabel = \"b\"\nargs = {q}, \"--size=512k\"]\n",
            work.path().display()
        ),
    );
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("fsbench: warning[iodepth-no-effect]: ")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("__warm__none: job 'q': iodepth=8 has no effect"), "{err}");
    let runs = run_files(&out);
    assert_eq!(runs.len(), 4, "{runs:?}");
    for r in runs {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("runs").join(&r)).unwrap()).unwrap();
        let w = v["result"]["warnings"].as_array().unwrap();
        assert!(w.iter().any(|w| w["code"] == "iodepth-no-effect"), "{r}: {w:?}");
    }
}
