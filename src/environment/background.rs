//! Background load: a separate process that keeps creating files during the
//! measured run (seed 000's interference job), so its I/O is attributable.
//!
//! The parent (`BackgroundLoad::start`) runs `fsbench background-load ...`
//! (a hidden subcommand whose body is `child_main`). The child creates
//! `bg-0`, `bg-1`, ... in its directory, each `file_size` bytes of
//! incompressible data, optionally fsynced, deletes the oldest once
//! `max_files` exist, and on SIGTERM/SIGINT removes everything it created and
//! prints one JSON line (`BackgroundReport`) with its own counts and its
//! `/proc/self/io`, so the load's I/O never mixes with the measured
//! process's.

use crate::measure::hist::LatencyHist;
use crate::model::environment::BackgroundSpec;
use crate::result::background::BackgroundReport;
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::os::unix::io::IntoRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Largest single write the child issues.
const MAX_WRITE: usize = 1 << 20;
/// How long `start` waits for the first file.
const START_WAIT: Duration = Duration::from_secs(2);
/// How long `stop` waits after SIGTERM before SIGKILL.
const STOP_WAIT: Duration = Duration::from_secs(30);
/// How long `Drop` waits after SIGTERM before SIGKILL.
const DROP_WAIT: Duration = Duration::from_secs(5);
/// Most of the child's stderr kept for error messages.
const STDERR_KEEP: usize = 16 * 1024;

/// The hidden subcommand's arguments for `spec`: plain numbers, so the
/// child parses no unit suffixes.
fn child_args(spec: &BackgroundSpec) -> Vec<std::ffi::OsString> {
    let mut a: Vec<std::ffi::OsString> = vec![
        "background-load".into(),
        "--dir".into(),
        spec.dir.clone().into_os_string(),
        "--file-size".into(),
        spec.file_size.to_string().into(),
        "--max-files".into(),
        spec.max_files.to_string().into(),
    ];
    if spec.fsync {
        a.push("--fsync".into());
    }
    if let Some(r) = spec.rate {
        a.push("--rate".into());
        a.push(r.to_string().into());
    }
    a
}

/// `fsbench background-load`: the process fsbench starts to load the file
/// system during a run. Stops on SIGTERM/SIGINT, then prints one JSON line.
#[derive(clap::Args, Debug, Clone)]
pub struct ChildArgs {
    /// Directory to create files in (created if missing; its parent must exist).
    #[arg(long)]
    pub dir: PathBuf,
    /// Bytes per file, a plain number (the parent passes the parsed size).
    #[arg(long, default_value_t = 100 * 1024)]
    pub file_size: u64,
    /// fsync each file after writing it.
    #[arg(long)]
    pub fsync: bool,
    /// Files per second (default: as fast as possible).
    #[arg(long)]
    pub rate: Option<u64>,
    /// Keep at most this many files, deleting the oldest.
    #[arg(long, default_value_t = 1000)]
    pub max_files: u64,
}

/// The hidden subcommand: check the arguments (usage errors exit 2), run.
pub fn child_main_args(a: ChildArgs) -> i32 {
    let spec = BackgroundSpec { dir: a.dir, file_size: a.file_size, fsync: a.fsync, rate: a.rate, max_files: a.max_files };
    if let Err(e) = spec.validate() {
        eprintln!("fsbench background-load: {e}");
        return 2;
    }
    child_main(spec)
}

/// A small xorshift64* generator: plenty for incompressible file data.
struct XorShift(u64);

impl XorShift {
    fn seeded() -> XorShift {
        let t = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
        let s = t ^ (u64::from(std::process::id()) << 32) ^ 0x9E37_79B9_7F4A_7C15;
        XorShift(if s == 0 { 1 } else { s })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
}

/// The child's running state: counts, the live files (oldest first), and
/// the file being written if any.
struct Load {
    spec: BackgroundSpec,
    report: BackgroundReport,
    live: VecDeque<u64>,
    partial: Option<PathBuf>,
    created_dir: bool,
    hist: LatencyHist,
}

impl Load {
    fn path(&self, n: u64) -> PathBuf {
        self.spec.dir.join(format!("bg-{n}"))
    }

    /// Create the directory (not its parents) unless it exists.
    fn prepare_dir(&mut self) -> Result<(), String> {
        let dir = &self.spec.dir;
        match std::fs::create_dir(dir) {
            Ok(()) => {
                self.created_dir = true;
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                if dir.is_dir() {
                    Ok(())
                } else {
                    Err(format!("{} exists and is not a directory", dir.display()))
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(format!("cannot create {}: its parent directory does not exist", dir.display()))
            }
            Err(e) => Err(format!("cannot create {}: {e}", dir.display())),
        }
    }

    fn delete_oldest(&mut self) -> Result<(), String> {
        if let Some(n) = self.live.pop_front() {
            let p = self.path(n);
            std::fs::remove_file(&p).map_err(|e| format!("cannot delete {}: {e}", p.display()))?;
            self.report.files_deleted += 1;
        }
        Ok(())
    }

    /// Write one file: open (O_CREAT|O_EXCL), fill, fsync if asked, close.
    fn create_one(&mut self, n: u64, rng: &mut XorShift, buf: &mut [u8]) -> Result<(), String> {
        let path = self.path(n);
        let t0 = Instant::now();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .open(&path)
            .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
        self.partial = Some(path.clone());
        let mut left = self.spec.file_size;
        let mut file = file;
        while left > 0 {
            let len = (left.min(buf.len() as u64)) as usize;
            rng.fill(&mut buf[..len]);
            file.write_all(&buf[..len]).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            self.report.bytes_written += len as u64;
            left -= len as u64;
        }
        if self.spec.fsync {
            file.sync_all().map_err(|e| format!("cannot fsync {}: {e}", path.display()))?;
            self.report.fsyncs += 1;
        }
        // Close explicitly: some file systems (NFS) report write errors here.
        let fd = file.into_raw_fd();
        // SAFETY: `fd` came from `into_raw_fd`, so this code owns it and nothing else uses or closes it; it is closed
        // exactly once, here.
        if unsafe { libc::close(fd) } != 0 {
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EINTR) {
                return Err(format!("cannot close {}: {e}", path.display()));
            }
        }
        self.hist.record(t0.elapsed().as_nanos().min(u128::from(u64::MAX)) as u64);
        self.partial = None;
        self.live.push_back(n);
        self.report.files_created += 1;
        self.report.peak_live_files = self.report.peak_live_files.max(self.live.len() as u64);
        Ok(())
    }

    /// Remove every file this process created and the directory if it made
    /// it. Returns the first failure.
    fn clean_up(&mut self) -> Result<(), String> {
        let mut first_err: Option<String> = None;
        if let Some(p) = self.partial.take() {
            if let Err(e) = std::fs::remove_file(&p) {
                if e.kind() != std::io::ErrorKind::NotFound {
                    first_err.get_or_insert(format!("cannot delete {}: {e}", p.display()));
                }
            }
        }
        while let Some(n) = self.live.pop_front() {
            let p = self.path(n);
            match std::fs::remove_file(&p) {
                Ok(()) => self.report.files_cleaned_up += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    first_err.get_or_insert(format!("cannot delete {}: {e}", p.display()));
                }
            }
        }
        if self.created_dir {
            if let Err(e) = std::fs::remove_dir(&self.spec.dir) {
                first_err.get_or_insert(format!("cannot remove {}: {e}", self.spec.dir.display()));
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Sleep until `t` in short steps so a stop request is seen promptly.
fn sleep_until(t: Instant, should_stop: &dyn Fn() -> bool) {
    loop {
        let now = Instant::now();
        if now >= t || should_stop() {
            return;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(20)));
    }
}

/// The body of `fsbench background-load`: create files until SIGTERM or
/// SIGINT (or the parent process exits), clean up, print one JSON line.
/// Exit status 0, or 1 after an error (the report's `error` says which).
pub fn child_main(spec: BackgroundSpec) -> i32 {
    let stop = Arc::new(AtomicBool::new(false));
    let mut setup_err = spec.validate().err();
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(sig, stop.clone()) {
            setup_err.get_or_insert(format!("cannot install signal handler: {e}"));
        }
    }
    // SAFETY: getppid takes no arguments, cannot fail and touches no memory.
    let parent = unsafe { libc::getppid() };
    // SAFETY: as above: getppid has no arguments and touches no memory.
    let parent_gone = || unsafe { libc::getppid() } != parent;
    let should_stop = || stop.load(Ordering::Relaxed) || parent_gone();

    let mut load = Load {
        report: BackgroundReport { pid: std::process::id(), spec: Some(spec.clone()), ..Default::default() },
        spec,
        live: VecDeque::new(),
        partial: None,
        created_dir: false,
        hist: LatencyHist::new(),
    };
    let mut error = match setup_err {
        Some(e) => Some(e),
        None => load.prepare_dir().err(),
    };

    let started = Instant::now();
    if error.is_none() {
        let mut rng = XorShift::seeded();
        let mut buf = vec![0u8; (load.spec.file_size.min(MAX_WRITE as u64)) as usize];
        let mut next_name = 0u64;
        // Pacing: file k of the current schedule is due at base + k/rate;
        // after falling more than a second behind the schedule restarts
        // instead of bursting to catch up.
        let mut base = Instant::now();
        let mut paced = 0u64;
        while !should_stop() {
            if load.live.len() as u64 >= load.spec.max_files {
                if let Err(e) = load.delete_oldest() {
                    error = Some(e);
                    break;
                }
            }
            let n = next_name;
            next_name += 1;
            if let Err(e) = load.create_one(n, &mut rng, &mut buf) {
                error = Some(e);
                break;
            }
            if let Some(rate) = load.spec.rate {
                paced += 1;
                let due = base + Duration::from_secs_f64(paced as f64 / rate as f64);
                let now = Instant::now();
                if due > now {
                    sleep_until(due, &should_stop);
                } else if now - due > Duration::from_secs(1) {
                    base = now;
                    paced = 0;
                }
            }
        }
    }
    load.report.elapsed_s = started.elapsed().as_secs_f64();
    load.report.stopped_by = if error.is_some() {
        "error".into()
    } else if stop.load(Ordering::Relaxed) {
        "signal".into()
    } else {
        "parent exited".into()
    };

    let t_clean = Instant::now();
    if let Err(e) = load.clean_up() {
        error.get_or_insert(e);
    }
    load.report.cleanup_s = t_clean.elapsed().as_secs_f64();
    if load.hist.count() > 0 {
        load.report.create_latency = Some(load.hist.summary());
    }
    load.report.io = crate::host::proc_io::process_io();
    if let Some(e) = &error {
        eprintln!("fsbench background-load: {e}");
    }
    load.report.error = error;

    let line = serde_json::to_string(&load.report).unwrap_or_else(|e| format!("{{\"error\":\"report: {e}\"}}"));
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}").and_then(|_| out.flush());
    if load.report.error.is_some() {
        1
    } else {
        0
    }
}

/// A running background load process. `stop` ends it and returns its
/// report; dropping it without `stop` terminates it and removes its files.
pub struct BackgroundLoad {
    child: Child,
    spec: BackgroundSpec,
    /// Whether the directory existed before the child started (if not, the
    /// sweep after a kill may remove it).
    dir_existed: bool,
    /// The child's stderr, forwarded to ours line by line and kept (bounded)
    /// for error messages.
    stderr_text: Arc<Mutex<String>>,
    stderr_thread: Option<JoinHandle<()>>,
    /// The child has been reaped (or `stop` ran).
    done: bool,
}

impl BackgroundLoad {
    /// Start the load with this executable (`fsbench background-load`).
    pub fn start(spec: &BackgroundSpec) -> Result<BackgroundLoad, String> {
        let exe = match crate::host::self_exe() {
            Some(p) => p.to_path_buf(),
            None => std::env::current_exe().map_err(|e| format!("background load: cannot find fsbench's executable: {e}"))?,
        };
        Self::start_with_exe(&exe, spec)
    }

    /// Start the load running `exe background-load ...` (tests pass the
    /// fsbench binary; `start` passes the current executable). Returns once
    /// the child has created its first file, or after 2 s if it is slow.
    pub fn start_with_exe(exe: &Path, spec: &BackgroundSpec) -> Result<BackgroundLoad, String> {
        spec.validate()?;
        let dir_existed = spec.dir.exists();
        let mut child = Command::new(exe)
            .args(child_args(spec))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("background load: cannot run {}: {e}", exe.display()))?;
        let stderr_text = Arc::new(Mutex::new(String::new()));
        let stderr_thread = child.stderr.take().map(|pipe| {
            let keep = stderr_text.clone();
            std::thread::spawn(move || forward_stderr(pipe, &keep))
        });
        let mut load = BackgroundLoad { child, spec: spec.clone(), dir_existed, stderr_text, stderr_thread, done: false };

        let deadline = Instant::now() + START_WAIT;
        loop {
            match load.child.try_wait() {
                Ok(Some(status)) => {
                    load.done = true;
                    let (report, stderr) = load.collect_output();
                    let why = report
                        .and_then(|r| r.error)
                        .or_else(|| (!stderr.trim().is_empty()).then(|| stderr.trim().to_string()))
                        .unwrap_or_else(|| "no message".into());
                    load.sweep();
                    return Err(format!("background load (pid {}) exited ({status}) before creating a file: {why}", load.pid()));
                }
                Ok(None) => {}
                Err(e) => return Err(format!("background load: cannot check its process: {e}")),
            }
            if has_load_file(&load.spec.dir) || Instant::now() >= deadline {
                return Ok(load);
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn spec(&self) -> &BackgroundSpec {
        &self.spec
    }

    /// SIGTERM the child, wait for it (30 s, then SIGKILL and an error) and
    /// return its report. A load that failed while running (ENOSPC, ...)
    /// still returns `Ok`, with the reason in `report.error`; `Err` means
    /// there is no report (the child was killed or crashed).
    pub fn stop(mut self) -> Result<BackgroundReport, String> {
        self.done = true;
        let pid = self.pid();
        let status = match self.child.try_wait() {
            Ok(Some(s)) => s,
            _ => {
                // SAFETY: kill takes plain integers and touches no memory; the child has not been reaped (try_wait saw
                // it running), so `pid` is still this child and cannot have been reused by another process.
                unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
                match wait_timeout(&mut self.child, STOP_WAIT) {
                    Some(s) => s,
                    None => {
                        let _ = self.child.kill();
                        let _ = self.child.wait();
                        self.collect_output();
                        self.sweep();
                        return Err(format!(
                            "background load (pid {pid}) did not stop within {} s of SIGTERM; killed it",
                            STOP_WAIT.as_secs()
                        ));
                    }
                }
            }
        };
        let (report, stderr) = self.collect_output();
        match report {
            Some(r) => Ok(r),
            None => {
                self.sweep();
                let stderr = stderr.trim();
                Err(format!(
                    "background load (pid {pid}) exited ({status}) without a report{}",
                    if stderr.is_empty() { String::new() } else { format!(": {stderr}") }
                ))
            }
        }
    }

    /// After the child has exited: its report (last JSON line on stdout)
    /// and the stderr it wrote.
    fn collect_output(&mut self) -> (Option<BackgroundReport>, String) {
        let mut out = String::new();
        if let Some(mut pipe) = self.child.stdout.take() {
            let _ = pipe.read_to_string(&mut out);
        }
        if let Some(t) = self.stderr_thread.take() {
            let _ = t.join();
        }
        let stderr = self.stderr_text.lock().map(|s| s.clone()).unwrap_or_default();
        let report = out.lines().rev().find(|l| !l.trim().is_empty()).and_then(|l| serde_json::from_str::<BackgroundReport>(l).ok());
        (report, stderr)
    }

    /// Remove what a child that could not clean up left behind: `bg-N`
    /// files, and the directory if it did not exist before and is empty.
    fn sweep(&self) {
        let dir = &self.spec.dir;
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                if is_load_name(&e.file_name().to_string_lossy()) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        if !self.dir_existed {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

impl Drop for BackgroundLoad {
    /// Never leave the load running: SIGTERM (so it cleans up), SIGKILL
    /// after 5 s, reap, and sweep any files left.
    fn drop(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        let clean = match self.child.try_wait() {
            Ok(Some(s)) => s.success(),
            _ => {
                // SAFETY: kill takes plain integers and touches no memory; the child has not been reaped (try_wait saw
                // it running), so its pid cannot have been reused by another process.
                unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
                match wait_timeout(&mut self.child, DROP_WAIT) {
                    Some(s) => s.success(),
                    None => {
                        let _ = self.child.kill();
                        let _ = self.child.wait();
                        false
                    }
                }
            }
        };
        let (report, _) = self.collect_output();
        if !clean || report.is_none() {
            self.sweep();
        }
    }
}

/// Wait for the child up to `limit`; None if it is still running.
fn wait_timeout(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    let mut nap = Duration::from_millis(1);
    loop {
        match child.try_wait() {
            Ok(Some(s)) => return Some(s),
            Ok(None) => {}
            Err(_) => return None,
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    }
}

/// Copy the child's stderr to ours, keeping the first part.
fn forward_stderr(pipe: impl Read, keep: &Mutex<String>) {
    let mut r = BufReader::new(pipe);
    let mut line = Vec::new();
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                let _ = std::io::stderr().write_all(&line);
                if let Ok(mut k) = keep.lock() {
                    if k.len() < STDERR_KEEP {
                        k.push_str(&String::from_utf8_lossy(&line));
                    }
                }
            }
        }
    }
}

/// `bg-<digits>`: a name the load creates.
fn is_load_name(name: &str) -> bool {
    name.strip_prefix("bg-").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
}

fn has_load_file(dir: &Path) -> bool {
    std::fs::read_dir(dir).map(|rd| rd.flatten().any(|e| is_load_name(&e.file_name().to_string_lossy()))).unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_args_round_trip_through_clap() {
        use clap::Parser;
        #[derive(Parser)]
        struct T {
            #[command(flatten)]
            a: ChildArgs,
        }
        let spec = BackgroundSpec { dir: "/a b".into(), file_size: 4096, fsync: true, rate: Some(7), max_files: 9 };
        let mut argv: Vec<std::ffi::OsString> = vec!["t".into()];
        argv.extend(child_args(&spec).into_iter().skip(1));
        let a = T::try_parse_from(argv).unwrap().a;
        assert_eq!(a.dir, PathBuf::from("/a b"));
        assert_eq!(a.file_size, 4096);
        assert!(a.fsync);
        assert_eq!((a.rate, a.max_files), (Some(7), 9));
    }

    #[test]
    fn load_names() {
        assert!(is_load_name("bg-0"));
        assert!(is_load_name("bg-123"));
        assert!(!is_load_name("bg-"));
        assert!(!is_load_name("bg-1x"));
        assert!(!is_load_name("data"));
    }

    #[test]
    fn random_data_does_not_repeat() {
        let mut r = XorShift(1);
        let mut a = vec![0u8; 4099];
        r.fill(&mut a);
        let mut b = vec![0u8; 4099];
        r.fill(&mut b);
        assert_ne!(a, b);
        let zeros = a.iter().filter(|&&x| x == 0).count();
        assert!(zeros < 100, "{zeros} zero bytes in 4 KiB");
    }
}
