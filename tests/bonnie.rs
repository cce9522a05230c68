//! `fsbench bonnie` through the CLI: Bonnie++'s report and CSV line, read
//! by Debian's bon_csv2txt and bon_csv2html; -q and -x; the common JSON
//! result; the fsyncs -b makes, counted by strace against Bonnie++'s own
//! count; and refusals naming the flag.

mod common;

use common::{fsbench, have, skip};
use serde_json::Value;
use std::io::Write;
use std::process::Stdio;

fn run(args: &[&str]) -> std::process::Output {
    fsbench().arg("bonnie").args(args).args(["--no-progress"]).output().unwrap()
}

fn stdout_ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn csv_of(text: &str) -> Vec<String> {
    let line = text.lines().find(|l| l.starts_with("1.98,")).unwrap_or_else(|| panic!("no CSV line in:\n{text}"));
    line.split(',').map(str::to_string).collect()
}

/// Feed `input` to a tool on stdin; its stdout.
fn pipe(tool: &str, input: &str) -> String {
    let mut c = std::process::Command::new(tool).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    c.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = c.wait_with_output().unwrap();
    assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn report_and_csv_line_are_bonnies_and_its_tools_read_them() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let text = stdout_ok(&run(&["-d", dir, "-s", "8", "-f2", "-n", "1:2000:100:2", "-r", "0", "-u", "root", "-z", "42", "-m", "ci"]));
    assert!(text.starts_with("Version 2.00a       ------Sequential Output------"), "{text}");
    assert!(text.contains("\nci               8M "), "{text}");
    assert!(text.contains("\n       1:2000:100/2 "), "{text}");
    let f = csv_of(&text);
    assert_eq!(f.len(), 50);
    assert_eq!(&f[..9], ["1.98", "2.00a", "ci", "1", "42", "8M", "", "8192", "5"]);
    // num_files, max, min, then the writer's empty chunk before num_dirs.
    assert_eq!(&f[21..26], ["1", "2000", "100", "", "2"]);
    // Two MiB one byte at a time take well over half a second.
    let putc: u64 = f[9].parse().unwrap_or_else(|_| panic!("putc should be a figure: {}", f[9]));
    assert!(putc > 0);
    for lat in &f[38..50] {
        assert!(lat.ends_with("us") || lat.ends_with("ms") || lat.ends_with('s'), "latency {lat}");
    }
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "nothing is left behind");

    if !have("bon_csv2txt") || !have("bon_csv2html") {
        skip("bon_csv2txt/bon_csv2html not installed (Debian's bonnie++; scripts/setup-peers.sh installs it)");
        return;
    }
    let line = f.join(",") + "\n";
    let txt = pipe("bon_csv2txt", &line);
    let cells = txt.lines().find(|l| l.starts_with("ci ")).unwrap_or_else(|| panic!("bon_csv2txt has no row for ci:\n{txt}"));
    let putc_cell = if putc < 10000 { format!("{putc}k") } else { format!("{:.1}m", putc as f64 / 1024.0) };
    assert!(cells.contains(&putc_cell), "bon_csv2txt shows putc {putc_cell}: {cells}");
    assert!(cells.contains("8M::8192:5"), "size cell: {cells}");
    for lat in &f[38..44] {
        assert!(txt.contains(lat.as_str()), "bon_csv2txt shows latency {lat}:\n{txt}");
    }
    let html = pipe("bon_csv2html", &line);
    assert!(html.contains("Bonnie++ Benchmark results"), "{html}");
    assert!(html.contains(">ci<"), "bon_csv2html has the name");
    assert!(html.contains(&format!(">{putc}<")), "bon_csv2html shows putc {putc}");
    assert!(html.contains(&format!(">{}<", f[38])), "bon_csv2html shows putc's latency {}", f[38]);
}

#[test]
fn quiet_prints_the_csv_line_alone_and_x_a_header_and_a_line_per_run() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let text = stdout_ok(&run(&["-d", dir, "-s", "0", "-n", "1", "-r", "0", "-u", "root", "-q"]));
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("1.98,2.00a,"));
    let text = stdout_ok(&run(&["-d", dir, "-s", "0", "-n", "1", "-r", "0", "-u", "root", "-x", "2", "-z", "3"]));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].starts_with("format_version,bonnie_version,name,"));
    assert!(lines[1].starts_with("1.98,") && lines[2].starts_with("1.98,"));
}

#[test]
fn the_json_result_holds_every_phase_with_its_histogram() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let out = fsbench()
        .arg("bonnie")
        .args(["-d", dir, "-s", "4", "-f1", "-n", "1", "-r", "0", "-u", "root", "--output-format", "json", "--no-progress"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&stdout_ok(&out).into_bytes()).unwrap();
    assert_eq!(v["layout"], "bonnie");
    let j = &v["jobs"][0];
    let names: Vec<&str> = j["ops"].as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "putc",
            "put_block",
            "rewrite",
            "getc",
            "get_block",
            "seeks",
            "seq_create",
            "seq_stat",
            "seq_del",
            "ran_create",
            "ran_stat",
            "ran_del"
        ]
    );
    let phases = j["details"]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 12);
    assert_eq!(j["ops"][1]["bytes"], 4 << 20, "put_block writes the whole size");
    assert_eq!(j["ops"][6]["ops"], 1024, "1024 files created");
}

/// strace's count of one system call in a `strace -c` table.
fn calls(table: &str, name: &str) -> u64 {
    table.lines().find(|l| l.split_whitespace().last() == Some(name)).and_then(|l| l.split_whitespace().nth(3)?.parse().ok()).unwrap_or(0)
}

#[test]
fn b_fsyncs_every_create_and_delete_as_bonnie_does() {
    if !have("strace") {
        skip("strace not installed (scripts/setup-peers.sh installs it)");
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let log = d.path().join("strace.txt");
    let bin = assert_cmd::cargo::cargo_bin("fsbench");
    let st = std::process::Command::new("strace")
        .args(["-f", "-c", "-e", "trace=fsync,sync", "-o", log.to_str().unwrap()])
        .arg(&bin)
        .args(["bonnie", "-d", dir, "-s", "0", "-n", "1", "-b", "-r", "0", "-u", "root", "-q", "--no-progress"])
        .output()
        .unwrap();
    assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
    let table = std::fs::read_to_string(&log).unwrap();
    // Bonnie++ 2.00a under strace with the same flags: 6144 fsync, 4 sync
    // (each create: the file and its directory; each delete: the
    // directory; sync after every create and delete test).
    assert_eq!(calls(&table, "fsync"), 2 * 1024 * 2 + 1024 * 2, "{table}");
    assert_eq!(calls(&table, "sync"), 4, "{table}");
}

#[test]
fn refusals_name_the_flag() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    for (args, flag, expect) in [
        (vec!["-s", "64:3000", "-r", "0"], "-s", "power of two"),
        (vec!["-s", "100", "-r", "1024"], "-s", "File size should be double RAM"),
        (vec!["-s", "0", "-n", "1:10:20", "-r", "0"], "-n", "larger than max"),
        (vec!["-s", "0", "-n", "1", "-r", "0", "-u", "no-such-user-fsbench"], "-u", "Can't find user"),
    ] {
        let out = fsbench()
            .arg("bonnie")
            .args(["-d", dir])
            .args(&args)
            .args(if flag == "-u" { vec![] } else { vec!["-u", "root"] })
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(&format!("bonnie++ {flag}:")) && err.contains(expect), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn copies_line_up_on_bonnies_semaphores() {
    let made = fsbench().args(["bonnie", "-u", "root", "-p", "2"]).output().unwrap();
    assert_eq!(stdout_ok(&made), "Creating semaphore for 2 procs.\n");
    let dirs: Vec<tempfile::TempDir> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let bin = assert_cmd::cargo::cargo_bin("fsbench");
    // Two copies: each waits at every test for the other. One copy alone
    // would wait forever at the first, so both finishing shows they met.
    let copies: Vec<std::process::Child> = dirs
        .iter()
        .map(|d| {
            std::process::Command::new(&bin)
                .args([
                    "bonnie",
                    "-d",
                    d.path().to_str().unwrap(),
                    "-s",
                    "0",
                    "-n",
                    "1",
                    "-r",
                    "0",
                    "-u",
                    "root",
                    "-y",
                    "s",
                    "-q",
                    "--no-progress",
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outs: Vec<std::process::Output> = copies.into_iter().map(|c| c.wait_with_output().unwrap()).collect();
    let removed = fsbench().args(["bonnie", "-u", "root", "-p", "-1"]).output().unwrap();
    for o in &outs {
        assert!(stdout_ok(o).starts_with("1.98,"));
    }
    assert_eq!(stdout_ok(&removed), "Semaphore removed.\n");
    let again = fsbench().args(["bonnie", "-u", "root", "-p", "-1"]).output().unwrap();
    assert_eq!(again.status.code(), Some(2), "no set is left to remove");
}

#[test]
fn u_runs_the_tests_as_that_user() {
    if !common::is_root() {
        skip("needs root to run the tests as another user");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    // Root's directory, closed to others: nobody cannot create in it.
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let dir = d.path().to_str().unwrap();
    let state0 = tempfile::tempdir().unwrap();
    let out = fsbench()
        .env("FSBENCH_STATE_DIR", state0.path())
        .args(["bonnie", "-d", dir, "-s", "0", "-n", "1", "-r", "0", "-u", "nobody", "-q", "--no-progress"])
        .output()
        .unwrap();
    assert!(!out.status.success(), "nobody created files in root's 0755 directory");
    assert!(String::from_utf8_lossy(&out.stderr).contains("Permission denied"), "{}", String::from_utf8_lossy(&out.stderr));
    // Opened to everyone, the same run goes through; as root it did anyway.
    // The run's record of what it made is the process's: written and
    // removed with root's ids though the tests ran as nobody, so nothing
    // stays on record once the directory is gone.
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let state = tempfile::tempdir().unwrap();
    let out = fsbench()
        .env("FSBENCH_STATE_DIR", state.path())
        .args(["bonnie", "-d", dir, "-s", "0", "-n", "1", "-r", "0", "-u", "nobody", "-q", "--no-progress"])
        .output()
        .unwrap();
    assert!(stdout_ok(&out).starts_with("1.98,"));
    assert!(!String::from_utf8_lossy(&out.stderr).contains("cannot keep a record"), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
    assert_eq!(std::fs::read_dir(state.path()).unwrap().count(), 0, "a record stayed behind");
}

/// Run `cmd`, killing it after `secs` (a hang is a failure, not a stuck
/// test run).
fn within(mut cmd: std::process::Command, secs: u64) -> std::process::Output {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > end {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("still running after {secs} s; stderr: {}", String::from_utf8_lossy(&out.stderr));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn absurd_numbers_are_refused_before_anything_runs() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("fsbench");
    // Each was a panic spawning 100,000 threads, an abort on a 2.3 PB
    // allocation, or a silent clamp.
    for (args, flag, expect) in [
        (vec!["-s", "64:8192:100:100000", "-n", "0", "-f"], "-s", "expected 1 to 1024 seeker processes"),
        (vec!["-s", "64:8192:9999999999", "-n", "0", "-f"], "-s", "at most 2147483647"),
        (vec!["-s", "0", "-n", "99999999999"], "-n", "expected at most 182361"),
        (vec!["-s", "0", "-n", "1:0:0:5000"], "-n", "at most the number of files (1024)"),
        (vec!["-s", "0", "-n", "1", "-x", "99999999999"], "-x", "1 to 1000"),
        (vec!["-s", "8", "-n", "0", "-f100"], "-f", "at most the -s size (8 MiB)"),
    ] {
        let mut cmd = std::process::Command::new(&bin);
        cmd.args(["bonnie", "-d", dir, "-r", "0", "-u", "root", "--no-progress"]).args(&args);
        let out = within(cmd, 60);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(&format!("bonnie++ {flag}:")) && err.contains(expect), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "{args:?} left files");
    }
}

#[test]
fn a_seeker_that_cannot_start_fails_the_run_and_leaves_nothing() {
    if !common::is_root() || !have("setpriv") || !have("prlimit") {
        skip("needs root, setpriv and prlimit to run fsbench as nobody with a process limit");
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    for p in [d.path(), state.path()] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    // Root is exempt from RLIMIT_NPROC; nobody with 40 tasks cannot start
    // 200 seekers: a real failed thread start, not a simulated one.
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", "prlimit", "--nproc=40"])
        .arg(assert_cmd::cargo::cargo_bin("fsbench"))
        .args(["bonnie", "-d", d.path().to_str().unwrap(), "-s", "8:8192:1000:200", "-n", "0", "-r", "0", "-f", "--no-progress"])
        .env("FSBENCH_STATE_DIR", state.path());
    let out = within(cmd, 120);
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if out.status.code() == Some(126) || (err.contains("Permission denied") && !text.contains("FAILED")) {
        skip("nobody cannot run the test binary here (its directory is closed to others)");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{text}\n{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(text.starts_with("*** FAILED: job 'bonnie': seeks: cannot start seeker "), "{text}");
    assert!(err.contains("Resource temporarily unavailable"), "{err}");
    // The tests before the seeks ran and are shown; the file is gone.
    assert!(text.contains("\nput_block "), "{text}");
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0, "the IO file is removed");
}

/// A tmpfs of `size` with at most `inodes` inodes on a fresh directory,
/// unmounted when dropped.
struct SmallFs(tempfile::TempDir);

impl SmallFs {
    fn mount(size: &str, inodes: u32) -> Option<SmallFs> {
        let d = tempfile::tempdir().ok()?;
        let opts = format!("size={size},nr_inodes={inodes}");
        let ok = std::process::Command::new("mount").args(["-t", "tmpfs", "-o", &opts, "tmpfs"]).arg(d.path()).status().ok()?.success();
        ok.then_some(SmallFs(d))
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(self.0.path()).status();
    }
}

#[test]
fn too_few_inodes_or_too_little_space_fail_the_run_before_anything_runs() {
    if !common::is_root() {
        skip("needs root to mount a small tmpfs");
        return;
    }
    // 300 inodes and 64 MiB: room for the 8 MiB IO file, not for 1024 files.
    let Some(fs) = SmallFs::mount("64m", 300) else {
        skip("cannot mount tmpfs");
        return;
    };
    let dir = fs.0.path().to_str().unwrap();
    let json = |args: &[&str]| {
        let out = fsbench()
            .arg("bonnie")
            .args(["-d", dir, "-r", "0", "-u", "root", "--output-format", "json", "--no-progress"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["jobs"][0]["ops"].as_array().map(Vec::len), Some(0), "nothing ran: {}", v["jobs"][0]["ops"]);
        assert_eq!(std::fs::read_dir(fs.0.path()).unwrap().count(), 0, "nothing was made");
        v["failed"].as_str().unwrap_or_default().to_string()
    };
    let failed = json(&["-s", "8", "-f1", "-n", "1"]);
    assert!(failed.contains("1,025 files and directories") && failed.contains("299 free inodes"), "{failed}");
    assert!(!failed.contains("No space left"), "{failed}");
    let failed = json(&["-s", "128", "-f1", "-n", "0"]);
    assert!(failed.contains("needs about 128.0 MiB") && failed.contains(" free"), "{failed}");
    // The text report says FAILED too.
    let out = run(&["-d", dir, "-s", "0", "-n", "1", "-r", "0", "-u", "root"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("*** FAILED: job 'bonnie': the workload makes 1,025 files and directories"), "{text}");
}

#[test]
fn many_seekers_with_few_seeks_all_open_the_file_before_any_finishes() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_str().unwrap();
    // 1024 seekers share 100 tickets: most get none and end at once. Each
    // ends by unlinking the file, so a seeker that opened it only then
    // found it gone ("cannot open ... No such file") and failed the run.
    for _ in 0..2 {
        let text = stdout_ok(&run(&["-d", dir, "-s", "8:256:100:1024", "-f1", "-n", "0", "-r", "0", "-u", "root", "-q"]));
        let f = csv_of(&text);
        assert_eq!(&f[7..9], ["100", "1024"], "{text}");
        assert_ne!(f[19], "", "the seek test has a figure: {text}");
    }
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}
