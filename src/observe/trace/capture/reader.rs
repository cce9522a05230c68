//! One reader thread per CPU over `per_cpu/cpuN/trace_pipe_raw`: it waits
//! (poll, woken by the kernel when the buffer is `buffer_percent` full, or
//! every 10 ms, soon enough to look a new thread's process up in /proc
//! while it most likely still runs) and reads whole ring-buffer pages.
//! During the run it only copies the pages into memory and notes new pids:
//! turning events into blktrace records and writing the files costs CPU
//! the benchmark and the device's workers need, and writing the files
//! while the run goes on would add I/O (to the traced device, if the files
//! are on it). The pages are converted with a [`Convert`] and handed to the
//! sink on stop, or while the run goes on once the readers hold more than
//! their memory limit ([`stage_limit`]).

use super::ringbuf;
use crate::observe::trace::record::{RecordSink, Records};
use crate::result::trace::capture::PidInfo;
use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// How long a reader waits for the kernel's wake-up before reading anyway.
const POLL_MS: i32 = 10;

/// Turns ring-buffer events of one CPU into encoded blktrace records.
pub trait Convert: Send {
    /// Append the records `data` (an event at ring time `ts`) stands for to `out`.
    fn convert(&mut self, ts: u64, data: &[u8], out: &mut Vec<u8>);
    /// A task name the events carried, for the pid map.
    fn comm_of(&self, _data: &[u8]) -> Option<String> {
        None
    }
}

/// What the readers share: the sink and what they learned.
pub struct Shared {
    sink: Mutex<Box<dyn RecordSink>>,
    records: AtomicU64,
    /// Bytes of pages held by all readers, and the most they may hold.
    staged: AtomicU64,
    stage_limit: u64,
    error: Mutex<Option<String>>,
    pids: Mutex<BTreeMap<u32, PidInfo>>,
}

/// What one CPU's reader saw.
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuCount {
    /// Every event read from the ring buffer (ours and any other).
    pub events: u64,
    /// Pages the kernel flagged as following lost events.
    pub missed_pages: u64,
}

pub struct Readers {
    stop: Arc<AtomicBool>,
    shared: Arc<Shared>,
    threads: Vec<(u32, JoinHandle<Result<CpuCount, String>>)>,
}

/// Results once every reader has ended.
pub struct Drained {
    pub sink: Box<dyn RecordSink>,
    pub records: u64,
    pub per_cpu: Vec<(u32, CpuCount)>,
    pub pids: BTreeMap<u32, PidInfo>,
}

impl Readers {
    /// Start a reader for each CPU of `dir` (a tracefs instance or the top
    /// level), converting with what `make(cpu)` returns.
    pub fn start(
        dir: &Path,
        cpus: &[u32],
        sink: Box<dyn RecordSink>,
        page_size: usize,
        mut make: impl FnMut(u32) -> Box<dyn Convert>,
    ) -> Result<Readers, (String, Box<dyn RecordSink>)> {
        let mut files = Vec::new();
        for &cpu in cpus {
            let path = dir.join(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
            match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(&path) {
                Ok(f) => files.push((cpu, f, path)),
                Err(e) => return Err((format!("cannot open {}: {e}", path.display()), sink)),
            }
        }
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Shared {
            sink: Mutex::new(sink),
            records: AtomicU64::new(0),
            staged: AtomicU64::new(0),
            stage_limit: stage_limit(),
            error: Mutex::new(None),
            pids: Mutex::new(BTreeMap::new()),
        });
        let mut readers = Readers { stop: stop.clone(), shared: shared.clone(), threads: Vec::new() };
        for (cpu, file, path) in files {
            let conv = make(cpu);
            let (stop, shared) = (stop.clone(), shared.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("fsb-trace{cpu}"))
                .spawn(move || read_loop(file, path, page_size, conv, &stop, &shared));
            match spawned {
                Ok(t) => readers.threads.push((cpu, t)),
                Err(e) => {
                    let why = format!("cannot start a trace reader thread: {e}");
                    return Err(match readers.finish() {
                        Ok(d) => (why, d.sink),
                        Err(e2) => (format!("{why}; {e2}"), Box::<Vec<u8>>::default()),
                    });
                }
            }
        }
        Ok(readers)
    }

    /// Read what is left (the caller stopped the events first) and end.
    pub fn finish(self) -> Result<Drained, String> {
        self.stop.store(true, Ordering::SeqCst);
        let mut per_cpu = Vec::new();
        let mut errors = Vec::new();
        for (cpu, t) in self.threads {
            match t.join() {
                Ok(Ok(c)) => per_cpu.push((cpu, c)),
                Ok(Err(e)) => errors.push(e),
                Err(_) => errors.push(format!("the reader of CPU {cpu} panicked")),
            }
        }
        if let Some(e) = self.shared.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            errors.push(e);
        }
        if !errors.is_empty() {
            return Err(errors.join("; "));
        }
        let shared = Arc::try_unwrap(self.shared).map_err(|_| "a trace reader is still running".to_string())?;
        Ok(Drained {
            sink: shared.sink.into_inner().unwrap_or_else(|e| e.into_inner()),
            records: shared.records.into_inner(),
            per_cpu,
            pids: shared.pids.into_inner().unwrap_or_else(|e| e.into_inner()),
        })
    }
}

fn read_loop(
    file: std::fs::File,
    path: PathBuf,
    page_size: usize,
    mut conv: Box<dyn Convert>,
    stop: &AtomicBool,
    shared: &Shared,
) -> Result<CpuCount, String> {
    let fd = file.as_raw_fd();
    let mut page = vec![0u8; page_size];
    let mut stage = Stage::default();
    let mut count = CpuCount::default();
    let mut seen = PidSet::default();
    let mut new_pids: Vec<(u32, Option<String>)> = Vec::new();
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        // SAFETY: `page` is a writable buffer of page.len() bytes; fd is open for reading.
        let n = unsafe { libc::read(fd, page.as_mut_ptr().cast(), page.len()) };
        if n > 0 {
            let page = &page[..n as usize];
            // Only the pids now: they must be looked up while they run.
            let info = ringbuf::for_each_event(page, |_, data| {
                if let Some((_, pid)) = ringbuf::entry_type_pid(data) {
                    if seen.insert(pid) {
                        new_pids.push((pid, conv.comm_of(data)));
                    }
                }
            })
            .map_err(|e| format!("{}: {}", path.display(), e.0))?;
            count.events += info.events;
            count.missed_pages += info.missed.is_some() as u64;
            if !new_pids.is_empty() {
                learn_pids(shared, &mut new_pids);
            }
            stage.push(page);
            let staged = shared.staged.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
            if stopping || staged > shared.stage_limit {
                stage.convert_and_deliver(conv.as_mut(), shared);
            }
            continue;
        }
        let err = std::io::Error::last_os_error();
        if n < 0 && err.raw_os_error() != Some(libc::EAGAIN) && err.raw_os_error() != Some(libc::EINTR) {
            return Err(format!("cannot read {}: {err}", path.display()));
        }
        if stopping {
            stage.convert_and_deliver(conv.as_mut(), shared);
            return Ok(count);
        }
        let mut pfd = libc::pollfd { fd, events: libc::POLLIN, revents: 0 };
        // SAFETY: one valid pollfd for the duration of the call.
        unsafe { libc::poll(&mut pfd, 1, POLL_MS) };
    }
}

/// The pids a reader has seen: a bit per pid, since it is asked for every
/// event.
#[derive(Default)]
struct PidSet(Vec<u64>);

impl PidSet {
    /// Whether `pid` is new.
    fn insert(&mut self, pid: u32) -> bool {
        let (word, bit) = (pid as usize / 64, 1u64 << (pid % 64));
        if word >= self.0.len() {
            self.0.resize(word + 1, 0);
        }
        let new = self.0[word] & bit == 0;
        self.0[word] |= bit;
        new
    }
}

/// How many bytes of ring-buffer pages all readers together hold before
/// they convert and write during the run: 512 MiB (about 9 million blk
/// tracer events), or an eighth of the memory available if that is less.
fn stage_limit() -> u64 {
    const MAX: u64 = 512 << 20;
    match crate::host::meminfo::read_meminfo().available {
        0 => MAX,
        available => (available / 8).min(MAX),
    }
}

/// Pages one reader read and has not converted yet, in reading order, in
/// chunks so that holding more never copies what is held.
#[derive(Default)]
struct Stage {
    chunks: Vec<(Vec<u8>, Vec<usize>)>,
    bytes: u64,
}

impl Stage {
    const CHUNK: usize = 1 << 20;

    fn push(&mut self, page: &[u8]) {
        match self.chunks.last_mut() {
            Some((bytes, lens)) if bytes.len() + page.len() <= bytes.capacity() => {
                bytes.extend_from_slice(page);
                lens.push(page.len());
            }
            _ => {
                let mut bytes = Vec::with_capacity(Self::CHUNK.max(page.len()));
                bytes.extend_from_slice(page);
                self.chunks.push((bytes, vec![page.len()]));
            }
        }
        self.bytes += page.len() as u64;
    }

    /// Convert every held page and hand the records to the sink; the
    /// pages were checked when they were read.
    fn convert_and_deliver(&mut self, conv: &mut dyn Convert, shared: &Shared) {
        let mut out = Vec::with_capacity(64 * 1024);
        for (bytes, lens) in self.chunks.drain(..) {
            let mut at = 0;
            for len in lens {
                let _ = ringbuf::for_each_event(&bytes[at..at + len], |ts, data| conv.convert(ts, data, &mut out));
                at += len;
                if out.len() >= 32 * 1024 {
                    deliver(shared, &out);
                    out.clear();
                }
            }
        }
        deliver(shared, &out);
        shared.staged.fetch_sub(self.bytes, Ordering::Relaxed);
        self.bytes = 0;
    }
}

fn deliver(shared: &Shared, encoded: &[u8]) {
    if encoded.is_empty() {
        return;
    }
    let mut n = 0u64;
    let mut sink = shared.sink.lock().unwrap_or_else(|e| e.into_inner());
    for r in Records::new(encoded, 0) {
        let Ok(r) = r else { break };
        if let Err(e) = sink.push(&r) {
            let mut slot = shared.error.lock().unwrap_or_else(|e| e.into_inner());
            slot.get_or_insert_with(|| format!("the trace sink failed: {e}"));
            break;
        }
        n += 1;
    }
    shared.records.fetch_add(n, Ordering::Relaxed);
}

/// Look new pids up while they most likely still run.
fn learn_pids(shared: &Shared, new: &mut Vec<(u32, Option<String>)>) {
    let found: Vec<(u32, PidInfo)> = new
        .drain(..)
        .map(|(pid, comm)| {
            let info = if pid == 0 {
                PidInfo { tgid: Some(0), parent: None, comm: "<idle>".into() }
            } else {
                let comm = comm.or_else(|| crate::host::process::command_name(pid)).unwrap_or_default();
                PidInfo::lookup(pid, comm)
            };
            (pid, info)
        })
        .collect();
    let mut pids = shared.pids.lock().unwrap_or_else(|e| e.into_inner());
    for (pid, info) in found {
        pids.entry(pid).or_insert(info);
    }
}
