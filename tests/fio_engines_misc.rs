//! fio's example job files for the engines that do no plain data I/O, run
//! under fsbench and under fio 3.33, comparing what each reports: I/Os per
//! direction and bytes (fio-json from both). The examples are scaled by
//! rewriting their sizes, because fio lets a job file's own values win over
//! the command line. Skipped with a printed reason when fio or its
//! examples are missing.

mod common;

use common::{fsbench, skip};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const EXAMPLES: &str = "/usr/share/doc/fio/examples";

/// The example's text with `from` lines replaced, written into `dir`.
fn scaled(name: &str, dir: &Path, edits: &[(&str, &str)]) -> Option<PathBuf> {
    let src = Path::new(EXAMPLES).join(name);
    if !Path::new("/usr/bin/fio").exists() || !src.exists() {
        skip(&format!("fio or {} is not installed", src.display()));
        return None;
    }
    let mut text = std::fs::read_to_string(&src).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{name} no longer has '{from}'");
        text = text.replace(from, to);
    }
    let out = dir.join(name);
    std::fs::write(&out, text).unwrap();
    Some(out)
}

/// Per job name: (read ios, write ios, read bytes, write bytes).
type Counts = BTreeMap<String, (u64, u64, u64, u64)>;

fn counts(stdout: &[u8]) -> Counts {
    let s = String::from_utf8_lossy(stdout);
    // fio prints engine banners (cpuio, exec) before its JSON.
    let v: Value = serde_json::from_str(&s[s.find('{').expect("JSON output")..]).expect("fio-json");
    let mut out = Counts::new();
    for j in v["jobs"].as_array().unwrap() {
        let n = |d: &str, k: &str| j[d][k].as_u64().unwrap();
        let e = out.entry(j["jobname"].as_str().unwrap().to_string()).or_default();
        e.0 += n("read", "total_ios");
        e.1 += n("write", "total_ios");
        e.2 += n("read", "io_bytes");
        e.3 += n("write", "io_bytes");
    }
    out
}

/// Run a command with a deadline; None (after killing it by pid) when it
/// does not finish in time.
fn run(mut cmd: Command, deadline: Duration) -> Option<std::process::Output> {
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("starts");
    let end = Instant::now() + deadline;
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut out, &mut b).unwrap();
        b
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut stderr = Vec::new();
            std::io::Read::read_to_end(child.stderr.as_mut().unwrap(), &mut stderr).unwrap();
            return Some(std::process::Output { status, stdout: reader.join().unwrap(), stderr });
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// fio's own run of `job`. A failed run is tried again, twice: fio's
/// netio example starts its sender and its receiver at once, and on a busy
/// machine the sender can connect before the receiver listens (fio then
/// fails with nothing on stderr). A third failure is the test's.
fn fio(job: &Path, dir: &Path, extra: &[&str]) -> Option<Counts> {
    for attempt in 1..=3 {
        let mut c = Command::new("/usr/bin/fio");
        c.arg(job).arg(format!("--directory={}", dir.display())).args(extra).arg("--output-format=json").current_dir(dir);
        match run(c, Duration::from_secs(90)) {
            Some(o) if o.status.success() => return Some(counts(&o.stdout)),
            Some(o) if attempt == 3 => panic!(
                "fio failed 3 times on {}: {}{}",
                job.display(),
                String::from_utf8_lossy(&o.stderr),
                String::from_utf8_lossy(&o.stdout)
            ),
            Some(_) => std::thread::sleep(Duration::from_secs(1)),
            None => {
                skip(&format!("fio did not finish {} within 90 s (it hangs on some examples on this machine)", job.display()));
                return None;
            }
        }
    }
    None
}

fn ours(job: &Path, dir: &Path, extra: &[&str]) -> Counts {
    let out = fsbench()
        .arg("fio")
        .arg(job)
        .arg(format!("--directory={}", dir.display()))
        .args(extra)
        .args(["--output-format=fio-json", "--no-progress"])
        .current_dir(dir)
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success(), "fsbench failed on {}: {}", job.display(), String::from_utf8_lossy(&out.stderr));
    counts(&out.stdout)
}

fn files_in(dir: &Path) -> usize {
    std::fs::read_dir(dir).unwrap().flatten().filter(|e| e.file_name().to_string_lossy().starts_with('t')).count()
}

/// The file-operation examples do a fixed number of operations, so both
/// tools must report exactly the same I/Os, bytes and direction per job.
#[test]
fn file_engines_match_fio() {
    let cases: [(&str, &str, &str, usize); 3] = [
        ("filecreate-ioengine.fio", "nrfiles=31250", "nrfiles=20", 16 * 20),
        ("filestat-ioengine.fio", "nrfiles=200", "nrfiles=20", 6 * 20),
        ("filedelete-ioengine.fio", "nrfiles=200", "nrfiles=20", 0),
    ];
    for (name, from, to, left) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let Some(job) = scaled(name, tmp.path(), &[(from, to)]) else { return };
        let (a, b) = (tmp.path().join("fsbench"), tmp.path().join("fio"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let mine = ours(&job, &a, &[]);
        assert_eq!(files_in(&a), left, "{name}: files left on disk");
        for (job_name, c) in &mine {
            assert_eq!(*c, (20, 0, 20 * 4096, 0), "{name} job {job_name}: 20 reads of 4k (one per file), as fio counts");
        }
        if let Some(theirs) = fio(&job, &b, &[]) {
            assert_eq!(mine, theirs, "{name}: fsbench vs fio");
            assert_eq!(files_in(&b), left, "{name}: fio leaves as many files");
        }
    }
}

/// netio.fio's receiver and sender: the receiver counts reads, the sender
/// writes, and both the same bytes (TCP loses nothing).
#[test]
fn netio_matches_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(job) = scaled("netio.fio", tmp.path(), &[("size=100g", "size=16m"), ("port=8888", "port=18888")]) else { return };
    let mine = ours(&job, tmp.path(), &[]);
    assert_eq!(mine["receiver"], (4096, 0, 16 << 20, 0));
    assert_eq!(mine["sender"], (0, 4096, 0, 16 << 20));
    if let Some(theirs) = fio(&job, tmp.path(), &[]) {
        assert_eq!(mine["sender"], theirs["sender"]);
        // fio counts every recv as an I/O, short ones included, and may
        // stop before the last bytes; fsbench receives whole blocks.
        let (r, w, rb, _) = theirs["receiver"];
        assert_eq!(w, 0, "fio's receiver only reads");
        assert!(r.abs_diff(4096) <= 4096 / 10 && ((16 << 20) * 9 / 10..=16 << 20).contains(&rb), "fio's receiver: {r} reads, {rb} bytes");
    }
}

/// cpuio.fio: operations as reads with no bytes, about one per
/// burn-and-rest cycle (100 ms at 50%), in both tools.
#[test]
fn cpuio_counts_like_fio() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(job) = scaled("cpuio.fio", tmp.path(), &[("runtime=15", "runtime=2")]) else { return };
    let check = |who: &str, c: &Counts| {
        assert_eq!(c.len(), 2, "{who}: two jobs");
        for (name, &(r, w, rb, wb)) in c {
            // 2 clones x at most 20 cycles of 100 ms in 2 s (+ one started at the end).
            assert!((1..=42).contains(&r), "{who} {name}: {r} operations");
            assert_eq!((w, rb, wb), (0, 0, 0), "{who} {name}: reads without bytes");
        }
    };
    check("fsbench", &ours(&job, tmp.path(), &[]));
    if let Some(theirs) = fio(&job, tmp.path(), &[]) {
        check("fio", &theirs);
    }
}

/// An exec job beside a cpuio one (exec.fio's shape, with /bin/sh instead
/// of turbostat): the program gets its %n and %r, runs, and is stopped;
/// both tools count about ten check-ins a second.
#[test]
fn exec_matches_fio() {
    if !Path::new("/usr/bin/fio").exists() {
        skip("fio is not installed");
        return;
    }
    if !Path::new("/usr/sbin/turbostat").exists() {
        eprintln!("note: exec.fio itself needs /usr/sbin/turbostat, which is not installed; using /bin/sh instead");
    }
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("prog.sh");
    std::fs::write(&script, "#!/bin/sh\necho \"start $*\"\ntrap 'echo term; exit 0' TERM\nwhile :; do sleep 0.05; done\n").unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let job = tmp.path().join("exec.fio");
    std::fs::write(
        &job,
        format!(
            "[global]\ntime_based\nruntime=2\n[mon]\nioengine=exec\nprogram={}\narguments=%n %r\ngrace_time=1\n[burn]\nioengine=cpuio\ncpuload=20\n",
            script.display()
        ),
    )
    .unwrap();
    let mine = ours(&job, tmp.path(), &[]);
    let log = std::fs::read_to_string(tmp.path().join("mon.stdout")).unwrap();
    assert_eq!(log, "start mon 2\nterm\n", "the program ran with %n %r replaced and was stopped with SIGTERM");
    let (r, w, rb, _) = mine["mon"];
    assert!((10..=25).contains(&r) && w == 0 && rb == 0, "fsbench exec: {r} check-ins in 2 s");
    std::fs::remove_file(tmp.path().join("mon.stdout")).unwrap();
    if let Some(theirs) = fio(&job, tmp.path(), &[]) {
        let (fr, fw, _, _) = theirs["mon"];
        assert_eq!(fw, 0);
        assert!(r.abs_diff(fr) <= 8, "fsbench {r} vs fio {fr} check-ins");
        // fio's SIGTERM comes only when a check-in finds the runtime over,
        // which the job's own end usually beats (then SIGKILL): no "term".
        let theirs_log = std::fs::read_to_string(tmp.path().join("mon.stdout")).unwrap();
        assert!(theirs_log.starts_with("start mon 2\n"), "fio's program got the same arguments: {theirs_log}");
    }
}

/// Missing or contradictory engine settings are errors naming the place and
/// the option, before anything runs.
#[test]
fn bad_engine_settings_name_the_option() {
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &str); 5] = [
        ("[a]\nioengine=cpuio\nruntime=1\n", "2:1: [a]: option 'ioengine': ioengine=cpuio needs cpuload"),
        ("[a]\nioengine=net\nport=1234\nrw=rw\nsize=1m\n", "4:1: [a]: option 'rw'"),
        ("[a]\nioengine=exec\nprogram=/bin/true\n", "expected runtime=DURATION"),
        ("[a]\nioengine=net\nprotocol=udp\nport=9\nhostname=127.0.0.1\nrw=read\nruntime=1\n", "option 'hostname'"),
        ("[a]\nioengine=filestat\nnrfiles=3\nstat_type=fstat\n", "4:11: [a]: option 'stat_type': expected one of stat, lstat, statx"),
    ];
    for (i, (text, want)) in cases.iter().enumerate() {
        let job = tmp.path().join(format!("bad{i}.fio"));
        std::fs::write(&job, text).unwrap();
        let out = fsbench().arg("fio").arg(&job).arg("--no-progress").output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{text} was accepted");
        assert!(err.contains(want), "{text}: expected '{want}' in: {err}");
    }
}
