//! A block trace around a measured run (`--trace`, an experiment's
//! `trace`), and around a command (`fsbench trace`): the capture writes
//! blktrace's per-CPU files as records arrive; at the end they are read
//! back once for blkparse's summary and the analysis.

use crate::environment::trace::{self as session, TraceSession};
use crate::host::blockdev::device_for_path;
use crate::model::environment::TraceSpec;
use crate::observe::trace::analysis::{self, Context};
use crate::observe::trace::capture::{CaptureError, TraceRequest};
use crate::observe::trace::files::{read_trace, TraceWriter};
use crate::observe::trace::summary::summarize;
use crate::result::trace::analysis::Role;
use crate::result::trace::capture::{Captured, Method, PidInfo};
use crate::result::trace::summary::Mode;
use crate::result::trace::TraceReport;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A capture in progress and where its files go.
pub struct TraceRun {
    session: TraceSession,
    basename: PathBuf,
}

/// Who the pids in a trace belong to: the benchmark's process (this one,
/// or `fsbench trace`'s command) with its threads and child processes, and
/// the background load's process.
pub struct Owners {
    pub benchmark: u32,
    /// The benchmark's worker threads by id: a thread that ended before
    /// the trace reader met its id is still known as the benchmark's.
    pub threads: Vec<u32>,
    pub background: Option<u32>,
}

impl Owners {
    /// This process and every worker thread it has started so far.
    pub fn this_process() -> Owners {
        Owners { benchmark: std::process::id(), threads: super::workers::ids(), background: None }
    }
}

/// The device a run's files are on: the first file that is a block device
/// or lies on one (`spec.device` overrides).
pub fn device_of(spec: &TraceSpec, files: &[PathBuf], data_dir: &Path) -> Result<String, String> {
    if let Some(d) = &spec.device {
        return Ok(d.clone());
    }
    files
        .iter()
        .map(PathBuf::as_path)
        .chain(std::iter::once(data_dir))
        .find_map(device_for_path)
        .map(|d| d.name)
        .ok_or_else(|| format!("--trace: no block device under {} (tmpfs has none); name one with --trace=DEV", data_dir.display()))
}

/// Where a run's trace goes when the spec names no place:
/// `fsbench-trace-UNIXTIME/trace` in the current directory.
pub fn default_basename() -> PathBuf {
    PathBuf::from(format!("fsbench-trace-{}", super::unix_now())).join("trace")
}

impl TraceRun {
    /// Start tracing `device`, writing `basename.blktrace.CPU` (its
    /// directory is made if missing).
    pub fn start(
        device: &str,
        method: Option<Method>,
        buffer_kb: Option<u64>,
        act_mask: Option<u16>,
        basename: &Path,
    ) -> Result<TraceRun, StartError> {
        let io = |message: String| StartError { message, bad_input: false };
        // The per-CPU files too: one of them may be a link to a device.
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut files = vec![("trace output".to_string(), basename.to_path_buf())];
        files.extend((0..cpus).map(|c| ("trace output".to_string(), crate::observe::trace::files::cpu_path(basename, c as u32))));
        crate::environment::safety::check_output_paths(&files).map_err(|message| StartError { message, bad_input: true })?;
        if let Some(dir) = basename.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io(format!("trace: cannot make {}: {e}", dir.display())))?;
        }
        let writer = TraceWriter::create(basename).map_err(|e| io(format!("trace: {e}")))?;
        let mut req = TraceRequest::new(device);
        req.method = method;
        if let Some(kb) = buffer_kb {
            req.buffer_kb_per_cpu = kb;
        }
        if let Some(m) = act_mask {
            req.act_mask = m;
        }
        let session = session::start(&req, Box::new(writer)).map_err(|e| StartError {
            bad_input: matches!(e, CaptureError::BadDevice(_) | CaptureError::NotRoot(_)),
            message: format!("trace: {e}"),
        })?;
        Ok(TraceRun { session, basename: basename.to_path_buf() })
    }

    /// What killed runs had left and was put back before this start.
    pub fn recovered(&self) -> &[String] {
        &self.session.recovered
    }

    pub fn method(&self) -> Method {
        self.session.capture().method()
    }

    pub fn reasons(&self) -> &[String] {
        self.session.capture().reasons()
    }

    /// Stop the capture and close its files.
    pub fn stop(self) -> Result<Stopped, String> {
        let (captured, sink) = self.session.stop().map_err(|(e, _)| format!("trace: {e}"))?;
        let files = sink.close().map_err(|e| format!("trace: {e}"))?;
        Ok(Stopped { captured, basename: self.basename, files })
    }
}

/// Why a trace did not start; `bad_input` when the device named is not
/// one that can be traced (or the user may not trace).
#[derive(Debug)]
pub struct StartError {
    pub message: String,
    pub bad_input: bool,
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A finished capture, its files closed.
pub struct Stopped {
    pub captured: Captured,
    pub basename: PathBuf,
    pub files: Vec<PathBuf>,
}

impl Stopped {
    /// Read the files back for blkparse's summary and the analysis;
    /// `written` (the workload's bytes written) gives the write amplification.
    pub fn report(self, owners: &Owners, written: Option<u64>) -> Result<TraceReport, String> {
        report(self.captured, &self.basename, self.files, owners, written)
    }
}

/// blkparse's summary and the analysis of the files a capture wrote.
fn report(captured: Captured, basename: &Path, files: Vec<PathBuf>, owners: &Owners, written: Option<u64>) -> Result<TraceReport, String> {
    if captured.method == Method::Counters {
        return Ok(TraceReport { capture: captured, basename: basename.to_path_buf(), files, summary: None, analysis: None });
    }
    let trace = read_trace(basename).map_err(|e| format!("trace: {e}"))?;
    let name = basename.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let summary = summarize(trace.merged(), Mode::Files { name });
    let roles = roles(&captured.pids, owners);
    let mut ctx = Context::new(Box::new(move |pid| roles.get(&pid).copied().unwrap_or(Role::Other)));
    ctx.workload_bytes_written = written;
    let analysis = analysis::analyse(trace.merged(), &ctx);
    Ok(TraceReport { capture: captured, basename: basename.to_path_buf(), files, summary: Some(summary), analysis: Some(analysis) })
}

/// Each traced pid's role, by the process it belonged to.
fn roles(pids: &BTreeMap<u32, PidInfo>, owners: &Owners) -> BTreeMap<u32, Role> {
    pids.iter()
        .map(|(&pid, info)| {
            // Only a thread that had ended goes without a tgid; a worker's
            // id taken since by another process's thread has one.
            let process = info.tgid.unwrap_or_else(|| if owners.threads.contains(&pid) { owners.benchmark } else { pid });
            // The background load is a child of fsbench: it is tested first.
            let role = if Some(process) == owners.background {
                Role::Background
            } else if process == owners.benchmark || info.parent == Some(owners.benchmark) {
                Role::Benchmark
            } else {
                Role::Other
            };
            (pid, role)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ended_worker_thread_is_the_benchmarks_and_a_reused_id_is_not() {
        let info = |tgid: Option<u32>, parent: Option<u32>| PidInfo { tgid, parent, comm: String::new() };
        let pids = BTreeMap::from([
            (101, info(None, None)),           // our worker, ended before it was looked up
            (102, info(Some(900), Some(1))),   // our worker's id, since taken by another process
            (103, info(None, None)),           // nobody we know
            (104, info(Some(100), Some(1))),   // a thread of ours that was looked up
            (105, info(Some(105), Some(100))), // a child process of ours
            (106, info(Some(50), Some(1))),    // the background load
        ]);
        let owners = Owners { benchmark: 100, threads: vec![101, 102], background: Some(50) };
        let r = roles(&pids, &owners);
        let want = [
            (101, Role::Benchmark),
            (102, Role::Other),
            (103, Role::Other),
            (104, Role::Benchmark),
            (105, Role::Benchmark),
            (106, Role::Background),
        ];
        for (pid, role) in want {
            assert_eq!(r[&pid], role, "pid {pid}");
        }
    }
}
