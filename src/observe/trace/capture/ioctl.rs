//! Method (c): the kernel's blktrace ioctls (what the `blktrace` tool uses):
//! BLKTRACESETUP makes per-CPU relay files in debugfs
//! (`block/NAME/traceN`), BLKTRACESTART/STOP switch it, TEARDOWN removes
//! it. The records arrive complete (magic, sequence, time from
//! CLOCK_MONOTONIC), so only the time is made relative to the start.
//! Where the kernel is locked down, setting up works but opening the relay
//! files is refused; that refusal is the reason reported.

use super::tracefs::Undo;
use super::{note_step, undo_all, undo_failed_start, Hooks, Running, Started, Stopped, Target, TraceRequest};
use crate::observe::trace::record::{notify, RecordSink, Records, HEADER_LEN};
use crate::result::trace::capture::PidInfo;
use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// `struct blk_user_trace_setup`.
#[repr(C)]
struct UserSetup {
    name: [u8; 32],
    act_mask: u16,
    buf_size: u32,
    buf_nr: u32,
    start_lba: u64,
    end_lba: u64,
    pid: u32,
}

const BLKTRACESETUP: libc::c_ulong = 0xc048_1273;
const BLKTRACESTART: libc::c_ulong = 0x1274;
const BLKTRACESTOP: libc::c_ulong = 0x1275;
const BLKTRACETEARDOWN: libc::c_ulong = 0x1276;
/// The relay sub-buffer size blktrace uses by default.
const SUBBUF: u32 = 512 * 1024;

fn ioctl(fd: i32, req: libc::c_ulong, arg: *mut libc::c_void) -> std::io::Result<()> {
    // SAFETY: the callers pass a request number with the argument it expects
    // (a UserSetup for SETUP, nothing for the others) on an open device.
    if unsafe { libc::ioctl(fd, req as _, arg) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn open_dev(device: &Path) -> Result<std::fs::File, String> {
    std::fs::File::open(device).map_err(|e| format!("cannot open {}: {e}", device.display()))
}

/// Stop and tear down the ioctl trace of `device` (safe when there is none).
pub fn teardown(device: &Path) -> Result<(), String> {
    let f = match open_dev(device) {
        Ok(f) => f,
        Err(_) if !device.exists() => return Ok(()),
        Err(e) => return Err(e),
    };
    let _ = ioctl(f.as_raw_fd(), BLKTRACESTOP, std::ptr::null_mut());
    match ioctl(f.as_raw_fd(), BLKTRACETEARDOWN, std::ptr::null_mut()) {
        // ENXIO: no trace set up.
        Err(e) if e.raw_os_error() != Some(libc::ENXIO) => Err(format!("BLKTRACETEARDOWN on {}: {e}", device.display())),
        _ => Ok(()),
    }
}

fn debugfs(hooks: &mut dyn Hooks, steps: &mut Vec<Undo>) -> Result<PathBuf, String> {
    for e in crate::host::mountinfo::read_mountinfo() {
        if e.fs_type == "debugfs" {
            return Ok(e.mount_point);
        }
    }
    let dir = std::env::temp_dir().join(format!("fsbench-debugfs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    note_step(hooks, steps, Undo::Unmount { path: dir.clone() })?;
    let target = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|_| "path has a NUL byte".to_string())?;
    // SAFETY: NUL-terminated strings that outlive the call; no data.
    let rc = unsafe { libc::mount(c"none".as_ptr(), target.as_ptr(), c"debugfs".as_ptr(), 0, std::ptr::null()) };
    if rc != 0 {
        return Err(format!("debugfs is not mounted and mounting it failed: {}", std::io::Error::last_os_error()));
    }
    Ok(dir)
}

pub(crate) fn start(req: &TraceRequest, t: &Target, sink: Box<dyn RecordSink>, start_ns: u64, hooks: &mut dyn Hooks) -> Started {
    let mut steps = Vec::new();
    match setup(req, t, hooks, &mut steps) {
        Ok((dev, files, dropped)) => {
            if let Err(e) = ioctl(dev.as_raw_fd(), BLKTRACESTART, std::ptr::null_mut()) {
                return Err((undo_failed_start(format!("BLKTRACESTART: {e}"), &mut steps), sink));
            }
            let stop = Arc::new(AtomicBool::new(false));
            let shared = Arc::new(Mutex::new((sink, 0u64, BTreeMap::<u32, PidInfo>::new(), None::<String>)));
            let threads = files
                .into_iter()
                .map(|(cpu, f)| {
                    let (stop, shared) = (stop.clone(), shared.clone());
                    std::thread::spawn(move || relay_loop(cpu, f, start_ns, &stop, &shared))
                })
                .collect();
            Ok((Box::new(IoctlRunning { dev, steps, stop, shared, threads, dropped }), Vec::new()))
        }
        Err(e) => Err((undo_failed_start(e, &mut steps), sink)),
    }
}

type Opened = (std::fs::File, Vec<(u32, std::fs::File)>, PathBuf);

fn setup(req: &TraceRequest, t: &Target, hooks: &mut dyn Hooks, steps: &mut Vec<Undo>) -> Result<Opened, String> {
    let node = t.dev.dev_path();
    let dev = open_dev(&node)?;
    let mut s = UserSetup {
        name: [0; 32],
        act_mask: req.act_mask,
        buf_size: SUBBUF,
        buf_nr: ((req.buffer_kb_per_cpu * 1024) / SUBBUF as u64).clamp(2, 512) as u32,
        start_lba: 0,
        end_lba: 0,
        pid: 0,
    };
    note_step(hooks, steps, Undo::IoctlTrace { device: node.clone() })?;
    ioctl(dev.as_raw_fd(), BLKTRACESETUP, (&mut s as *mut UserSetup).cast())
        .map_err(|e| format!("BLKTRACESETUP on {}: {e}", node.display()))?;
    let name = String::from_utf8_lossy(&s.name[..s.name.iter().position(|&b| b == 0).unwrap_or(32)]).into_owned();
    let dbg = debugfs(hooks, steps)?;
    let dir = dbg.join("block").join(&name);
    let mut files = Vec::new();
    let cpus = crate::host::read_trim("/sys/devices/system/cpu/possible").map(|s| parse_cpu_list(&s)).unwrap_or_else(|| vec![0]);
    for cpu in cpus {
        let p = dir.join(format!("trace{cpu}"));
        if !p.exists() {
            continue;
        }
        let f = std::fs::File::open(&p).map_err(|e| {
            let locked = if e.raw_os_error() == Some(libc::EPERM) { " (kernel lockdown restricts debugfs)" } else { "" };
            format!("the kernel set the trace up but refused to open {}: {e}{locked}", p.display())
        })?;
        files.push((cpu, f));
    }
    if files.is_empty() {
        return Err(format!("no relay files in {}", dir.display()));
    }
    Ok((dev, files, dir.join("dropped")))
}

/// `0-3,6` → [0, 1, 2, 3, 6].
pub fn parse_cpu_list(s: &str) -> Vec<u32> {
    let mut v = Vec::new();
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    v.extend(a..=b);
                }
            }
            None => v.extend(part.parse::<u32>().ok()),
        }
    }
    v
}

type Shared = Mutex<(Box<dyn RecordSink>, u64, BTreeMap<u32, PidInfo>, Option<String>)>;

fn relay_loop(_cpu: u32, mut f: std::fs::File, start_ns: u64, stop: &AtomicBool, shared: &Shared) {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 256 * 1024];
    loop {
        let stopping = stop.load(Ordering::SeqCst);
        let n = f.read(&mut chunk).unwrap_or(0);
        if n == 0 {
            if stopping {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
            continue;
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut used = 0;
        let mut g = shared.lock().unwrap_or_else(|e| e.into_inner());
        for r in Records::new(&buf, 0) {
            let Ok(r) = r else { break };
            used += r.h.record_len();
            if r.h.is_notify() && r.h.action_code() == notify::PROCESS {
                let comm = String::from_utf8_lossy(r.pdu).trim_end_matches('\0').to_string();
                g.2.entry(r.h.pid).or_insert(PidInfo::lookup(r.h.pid, comm));
                continue;
            }
            let mut h = r.h;
            h.time = h.time.saturating_sub(start_ns);
            let mut rec = r;
            rec.h = h;
            if let Err(e) = g.0.push(&rec) {
                g.3.get_or_insert(format!("the trace sink failed: {e}"));
            }
            g.1 += 1;
        }
        drop(g);
        // A record cut between two reads waits for its rest.
        buf.drain(..used.min(buf.len()));
        if buf.len() >= HEADER_LEN && Records::new(&buf, 0).next().is_some_and(|r| r.is_err() && buf.len() > 64 * 1024) {
            buf.clear();
        }
    }
}

struct IoctlRunning {
    dev: std::fs::File,
    steps: Vec<Undo>,
    stop: Arc<AtomicBool>,
    shared: Arc<Shared>,
    threads: Vec<std::thread::JoinHandle<()>>,
    dropped: PathBuf,
}

impl Running for IoctlRunning {
    fn stop(mut self: Box<Self>) -> Result<Stopped, (String, Option<Box<dyn RecordSink>>)> {
        let mut errors = Vec::new();
        if let Err(e) = ioctl(self.dev.as_raw_fd(), BLKTRACESTOP, std::ptr::null_mut()) {
            errors.push(format!("BLKTRACESTOP: {e}"));
        }
        self.stop.store(true, Ordering::SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let dropped = super::tracefs::read(&self.dropped).ok().and_then(|s| s.parse::<u64>().ok());
        let undo_failed = undo_all(&mut self.steps);
        let Ok(m) = Arc::try_unwrap(self.shared) else { return Err(("a relay reader is still running".into(), None)) };
        let (sink, records, pids, err) = m.into_inner().unwrap_or_else(|e| e.into_inner());
        errors.extend(err);
        if !errors.is_empty() {
            errors.extend(undo_failed.iter().map(|(u, e)| format!("could not {u}: {e}")));
            return Err((errors.join("; "), Some(sink)));
        }
        let notes = if dropped.is_none() {
            vec!["the relay's dropped count could not be read; lost events are counted as 0".into()]
        } else {
            Vec::new()
        };
        // The relay counts drops for the whole trace, not per CPU.
        Ok(Stopped {
            sink,
            records,
            lost_per_cpu: vec![dropped.unwrap_or(0)],
            pids,
            counters: None,
            notes,
            ring_events: records,
            undo_failed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setup_struct_and_cpu_lists() {
        assert_eq!(std::mem::size_of::<UserSetup>(), 72, "the kernel's struct blk_user_trace_setup");
        assert_eq!(BLKTRACESETUP >> 16 & 0x3fff, 72);
        assert_eq!(parse_cpu_list("0-3,6\n"), vec![0, 1, 2, 3, 6]);
        assert_eq!(parse_cpu_list("0"), vec![0]);
    }
}
