//! `fsbench trace -d DEV [-w SECONDS] [-o BASENAME] [--method M] [-- COMMAND]`:
//! capture what reaches a block device for a time, while a command runs,
//! or until Ctrl-C; what was captured on stderr, a per-direction summary
//! on stdout.

use crate::environment::trace as session;
use crate::observe::trace::capture::{CaptureError, Method, TraceRequest, DEFAULT_BUFFER_KB, MAX_BUFFER_KB, MIN_BUFFER_KB};
use crate::observe::trace::record::{act, Record, RecordSink};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
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
    /// Write the records as one raw blktrace stream to BASENAME.raw.
    #[arg(short = 'o', long, value_name = "BASENAME")]
    output: Option<PathBuf>,
    /// Use only this method: blk-tracer, tracepoints, ioctl or counters
    /// (default: the first that works, in that order).
    #[arg(long, value_name = "M")]
    method: Option<String>,
    /// Kernel trace buffer per CPU, in KiB.
    #[arg(long, default_value_t = DEFAULT_BUFFER_KB, value_name = "KIB")]
    buffer_kb: u64,
    /// A command to run while tracing (after --).
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// Per direction, the queued, dispatched and completed I/Os and their bytes.
#[derive(Clone, Copy, Debug, Default)]
struct Counts {
    /// [read, write] × [Q, D, C] × (ios, bytes)
    n: [[(u64, u64); 3]; 2],
}

/// The sink `fsbench trace` writes through: counts for the summary, and
/// the raw stream when `-o` is given.
struct SummarySink {
    counts: Arc<Mutex<Counts>>,
    out: Option<std::io::BufWriter<std::fs::File>>,
}

impl RecordSink for SummarySink {
    fn push(&mut self, rec: &Record<'_>) -> std::io::Result<()> {
        let h = &rec.h;
        if !h.is_notify() {
            let col = match h.action_code() {
                act::QUEUE => Some(0),
                act::ISSUE => Some(1),
                act::COMPLETE => Some(2),
                _ => None,
            };
            if let Some(c) = col {
                let mut g = self.counts.lock().unwrap_or_else(|e| e.into_inner());
                let cell = &mut g.n[h.is_write() as usize][c];
                cell.0 += 1;
                cell.1 += h.bytes as u64;
            }
        }
        if let Some(w) = &mut self.out {
            w.write_all(&h.encode())?;
            w.write_all(rec.pdu)?;
        }
        Ok(())
    }
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
    let raw = a.output.as_ref().map(|b| PathBuf::from(format!("{}.raw", b.display())));
    let out = match &raw {
        Some(p) => match std::fs::File::create(p) {
            Ok(f) => Some(std::io::BufWriter::with_capacity(1 << 20, f)),
            Err(e) => return fail(format!("-o: cannot create {}: {e}", p.display()), 2),
        },
        None => None,
    };
    let stop = super::install_stop_handler();
    let counts = Arc::new(Mutex::new(Counts::default()));
    let req = TraceRequest { device: a.device.clone(), buffer_kb_per_cpu: a.buffer_kb, method };
    let sess = match session::start(&req, Box::new(SummarySink { counts: counts.clone(), out })) {
        Ok(s) => s,
        Err(e) => {
            if let Some(p) = &raw {
                let _ = std::fs::remove_file(p);
            }
            let code = if matches!(e, CaptureError::BadDevice(_) | CaptureError::NotRoot(_)) { 2 } else { 1 };
            return fail(e.to_string(), code);
        }
    };
    for line in &sess.recovered {
        eprintln!("fsbench trace: what a killed fsbench left: {line}");
    }
    eprintln!("fsbench trace: tracing {} with {}", a.device, sess.capture().method());

    let mut child = None;
    let mut status_line = None;
    let mut code = 0;
    if !a.command.is_empty() {
        // The command's output goes to stderr: stdout is the summary's.
        let stdout = std::io::stderr().as_fd_owned();
        match std::process::Command::new(&a.command[0]).args(&a.command[1..]).stdout(stdout).spawn() {
            Ok(c) => child = Some(c),
            Err(e) => {
                code = 1;
                status_line = Some(format!("cannot run '{}': {e}", a.command[0]));
            }
        }
    }
    let deadline = a.seconds.map(|s| Instant::now() + Duration::from_secs_f64(s));
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
                        status_line = Some(format!("'{}' exited: {st}", a.command.join(" ")));
                        code = st.code().unwrap_or(1);
                        child = None;
                        break;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        status_line = Some(format!("cannot wait for '{}': {e}", a.command[0]));
                        break;
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let stopped = sess.stop();
    if let Some(mut c) = child {
        if interrupted {
            // SAFETY: kill with the pid of a child we started and have not reaped.
            unsafe { libc::kill(c.id() as i32, libc::SIGINT) };
        }
        match c.wait() {
            Ok(st) => {
                status_line = Some(format!("'{}' exited: {st}", a.command.join(" ")));
                code = st.code().unwrap_or(1);
            }
            Err(e) => status_line = Some(format!("cannot wait for '{}': {e}", a.command[0])),
        }
    }
    let (captured, sink) = match stopped {
        Ok(x) => x,
        Err((e, _)) => return fail(format!("the capture failed: {e}"), 1),
    };
    drop(sink);
    if let (Some(p), true) = (&raw, captured.records > 0 || captured.method != Method::Counters) {
        eprintln!("fsbench trace: wrote {} ({} records, one raw blktrace stream in arrival order)", p.display(), captured.records);
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
    if let Some(s) = status_line {
        eprintln!("fsbench trace: {s}");
    }
    let c = *counts.lock().unwrap_or_else(|e| e.into_inner());
    let mut text = String::new();
    text.push_str("direction  queued_ios  queued_bytes  dispatched_ios  dispatched_bytes  completed_ios  completed_bytes\n");
    for (i, dir) in ["read", "write"].iter().enumerate() {
        let n = c.n[i];
        text.push_str(&format!(
            "{dir:<9}  {:>10}  {:>12}  {:>14}  {:>16}  {:>13}  {:>15}\n",
            n[0].0, n[0].1, n[1].0, n[1].1, n[2].0, n[2].1
        ));
    }
    if let Some(d) = &captured.counters {
        text.push_str(&format!(
            "counters   read_ios {}  read_bytes {}  write_ios {}  write_bytes {}\n",
            d.read_ios,
            d.read_bytes(),
            d.write_ios,
            d.write_bytes()
        ));
    }
    if let Err(e) = super::emit(&text, &None) {
        return fail(e, 1);
    }
    if interrupted {
        return 130;
    }
    code
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
