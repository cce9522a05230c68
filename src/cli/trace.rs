//! `fsbench trace -d DEV [-w SECONDS] [-o BASENAME] [--method M] [-- COMMAND]`:
//! capture what reaches a block device for a time, while a command runs,
//! or until Ctrl-C, into blktrace's files; how it was captured on stderr,
//! blkparse's summary and the analysis on stdout.

use crate::observe::trace::capture::{DEFAULT_BUFFER_KB, MAX_BUFFER_KB, MIN_BUFFER_KB};
use crate::result::trace::capture::Method;
use crate::result::trace::TraceReport;
use crate::runner::trace::{Owners, TraceRun};
use clap::Args;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct TraceArgs {
    /// The block device: a name (loop3) or a node (/dev/loop3). A partition
    /// is traced on its disk, kept to the partition's sectors.
    #[arg(short = 'd', long)]
    device: String,
    /// Stop after this many seconds (with a COMMAND: at the latest then).
    /// Without it and without a COMMAND, trace until Ctrl-C.
    #[arg(short = 'w', long, value_name = "SECONDS")]
    seconds: Option<f64>,
    /// Write the records as blktrace does, BASENAME.blktrace.CPU
    /// (`blkparse -i BASENAME`, btt and iowatcher read them); default: the
    /// device's name in the current directory, as blktrace.
    #[arg(short = 'o', long, value_name = "BASENAME")]
    output: Option<PathBuf>,
    /// Use only this method: blk-tracer, tracepoints, ioctl or counters
    /// (default: the first that works, in that order).
    #[arg(long, value_name = "M")]
    method: Option<String>,
    /// Keep only this blktrace category (blktrace's -a; repeat it or give
    /// a comma-separated list): read, write, flush, sync, queue, requeue,
    /// issue, complete, fs, pc, notify, ahead, meta, discard, drv_data, fua.
    #[arg(short = 'a', long = "act-mask", value_name = "CATEGORY")]
    act_mask: Vec<String>,
    /// Kernel trace buffer per CPU, in KiB.
    #[arg(long, default_value_t = DEFAULT_BUFFER_KB, value_name = "KIB")]
    buffer_kb: u64,
    /// A command to run while tracing (after --).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

fn fail(msg: String, code: i32) -> i32 {
    super::fail(format!("fsbench trace: {msg}"));
    code
}

pub fn run(a: TraceArgs) -> i32 {
    let method = match a.method.as_deref().map(Method::parse).transpose() {
        Ok(m) => m,
        Err(e) => return fail(format!("--method: {e}"), 2),
    };
    if let Some(s) = a.seconds {
        if !(s.is_finite() && s > 0.0) {
            return fail(format!("-w {s}: expected a number of seconds greater than 0"), 2);
        }
    }
    if !(MIN_BUFFER_KB..=MAX_BUFFER_KB).contains(&a.buffer_kb) {
        return fail(format!("--buffer-kb {}: expected {MIN_BUFFER_KB} to {MAX_BUFFER_KB} KiB per CPU", a.buffer_kb), 2);
    }
    let act_mask = if a.act_mask.is_empty() {
        None
    } else {
        match crate::observe::trace::record::cat::parse_mask(&a.act_mask.join(",")) {
            Ok(m) => Some(m),
            Err(e) => return fail(format!("-a: {e}"), 2),
        }
    };
    let basename = a.output.clone().unwrap_or_else(|| {
        let dev = a.device.rsplit('/').next().unwrap_or(&a.device);
        PathBuf::from(".").join(dev)
    });
    if let Err(code) = super::check_outputs("trace", &[("-o".into(), basename.clone())]) {
        return code;
    }
    let stop = super::install_stop_handler();
    let sess = match TraceRun::start(&a.device, method, Some(a.buffer_kb), act_mask, &basename) {
        Ok(s) => s,
        Err(e) => return fail(e.message, if e.bad_input { 2 } else { 1 }),
    };
    for line in sess.recovered() {
        eprintln!("fsbench trace: what a killed fsbench left: {line}");
    }
    eprintln!("fsbench trace: tracing {} with {}", a.device, sess.method());

    let mut w = watch(&a.command, a.seconds, &stop);
    let stopped = sess.stop();
    w.reap(&a.command);
    let stopped = match stopped {
        Ok(x) => x,
        Err(e) => return fail(format!("the capture failed: {e}"), 1),
    };
    // The command and its children are the benchmark; without one, no
    // process is (everything is "other").
    let owners = Owners { benchmark: w.child_pid.unwrap_or(0), threads: Vec::new(), background: None };
    let report = match stopped.report(&owners, None) {
        Ok(r) => r,
        Err(e) => return fail(e, 1),
    };
    tell(&report, w.status_line.take());
    if let Err(e) = super::emit(&crate::report::trace_section::render(&report), &None) {
        return fail(e, 1);
    }
    if w.interrupted {
        return 130;
    }
    w.code
}

/// The command traced (if any) and how the wait for it ended.
struct Watch {
    child: Option<std::process::Child>,
    /// Kept apart from `child`, which is taken when the command exits early.
    child_pid: Option<u32>,
    status_line: Option<String>,
    code: i32,
    interrupted: bool,
}

/// Starts the command, then waits for it to exit, for the time to pass or
/// for Ctrl-C, whichever comes first, while the tracer records.
fn watch(command: &[String], seconds: Option<f64>, stop: &AtomicBool) -> Watch {
    let mut child = None;
    let mut child_pid = None;
    let mut status_line = None;
    let mut code = 0;
    if !command.is_empty() {
        // The command's output goes to stderr: stdout is the summary's.
        let stdout = std::io::stderr().as_fd_owned();
        match std::process::Command::new(&command[0]).args(&command[1..]).stdout(stdout).spawn() {
            Ok(c) => {
                child_pid = Some(c.id());
                child = Some(c);
            }
            Err(e) => {
                code = 1;
                status_line = Some(format!("cannot run '{}': {e}", command[0]));
            }
        }
    }
    let deadline = seconds.map(|s| Instant::now() + Duration::from_secs_f64(s));
    let mut interrupted = false;
    if code == 0 {
        loop {
            if stop.load(Ordering::SeqCst) {
                interrupted = true;
                break;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            if let Some(c) = &mut child {
                match c.try_wait() {
                    Ok(Some(st)) => {
                        status_line = Some(format!("'{}' exited: {st}", command.join(" ")));
                        code = st.code().unwrap_or(1);
                        child = None;
                        break;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        status_line = Some(format!("cannot wait for '{}': {e}", command[0]));
                        break;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    Watch { child, child_pid, status_line, code, interrupted }
}

impl Watch {
    /// After the tracer stopped: a command still running is interrupted
    /// (on Ctrl-C) or waited for, and its exit status kept.
    fn reap(&mut self, command: &[String]) {
        if let Some(mut c) = self.child.take() {
            if self.interrupted {
                // SAFETY: kill with the pid of a child we started and have not reaped.
                unsafe { libc::kill(c.id() as i32, libc::SIGINT) };
            }
            match c.wait() {
                Ok(st) => {
                    self.status_line = Some(format!("'{}' exited: {st}", command.join(" ")));
                    self.code = st.code().unwrap_or(1);
                }
                Err(e) => self.status_line = Some(format!("cannot wait for '{}': {e}", command[0])),
            }
        }
    }
}

/// What was captured, on stderr: stdout is the summary's.
fn tell(report: &TraceReport, status_line: Option<String>) {
    let captured = &report.capture;
    if !report.files.is_empty() {
        eprintln!("fsbench trace: wrote {}.blktrace.0-{} (blkparse -i {0})", report.basename.display(), report.files.len() - 1);
    }
    eprintln!(
        "fsbench trace: {} on {}: {} records, {} events lost, {:.3} s",
        captured.method,
        captured.device,
        captured.records,
        captured.lost_events,
        captured.duration_ns as f64 / 1e9
    );
    for r in &captured.reasons {
        eprintln!("fsbench trace: not used: {r}");
    }
    for n in &captured.notes {
        eprintln!("fsbench trace: note: {n}");
    }
    for w in &captured.warnings {
        eprintln!("fsbench trace: warning[{}]: {}", w.code, w.message.strip_prefix("trace: ").unwrap_or(&w.message));
    }
    if let Some(s) = status_line {
        eprintln!("fsbench trace: {s}");
    }
}

trait StderrFd {
    fn as_fd_owned(&self) -> std::process::Stdio;
}

impl StderrFd for std::io::Stderr {
    fn as_fd_owned(&self) -> std::process::Stdio {
        use std::os::fd::AsFd;
        match self.as_fd().try_clone_to_owned() {
            Ok(fd) => std::process::Stdio::from(fd),
            Err(_) => std::process::Stdio::inherit(),
        }
    }
}
