//! tracefs: finding (or mounting) it, its files, per-CPU statistics, trace
//! instances, and the undo steps that put back what a capture changed.
//!
//! Every change a capture makes to global tracing state is described by an
//! [`Undo`] *before* it is made, so whoever keeps the list (the capture
//! itself, and `environment::cleanup`'s on-disk record for a process that
//! is killed) can put the machine back.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Where tracefs normally lives; mounted there when it is not mounted anywhere.
pub const DEFAULT_DIR: &str = "/sys/kernel/tracing";
/// Prefix of the private instances captures create: `fsbench-PID`.
pub const INSTANCE_PREFIX: &str = "fsbench-";

/// A mounted tracefs.
#[derive(Clone, Debug)]
pub struct Tracefs {
    pub root: PathBuf,
    /// This process mounted it (and unmounts it when the capture ends).
    pub mounted_here: bool,
}

/// A file's text, trimmed; the error names the file.
pub fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map(|s| s.trim().to_string()).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Write a value to a tracefs or sysfs file; the error names the file and value.
pub fn write(path: &Path, value: &str) -> Result<(), String> {
    std::fs::write(path, value).map_err(|e| format!("cannot write '{value}' to {}: {e}", path.display()))
}

/// The selected choice of a `[local] global ...` list.
pub fn selected(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')?;
    Some(text[start + 1..start + end].to_string())
}

impl Tracefs {
    /// The mounted tracefs, or a new mount at [`DEFAULT_DIR`], whose
    /// [`Undo::Unmount`] goes into `steps`.
    pub fn find_or_mount(hooks: &mut dyn super::Hooks, steps: &mut Vec<Undo>) -> Result<Tracefs, String> {
        for e in crate::host::mountinfo::read_mountinfo() {
            if e.fs_type == "tracefs" && e.mount_point.join("trace").exists() {
                return Ok(Tracefs { root: e.mount_point, mounted_here: false });
            }
        }
        let dir = PathBuf::from(DEFAULT_DIR);
        if !dir.is_dir() {
            return Err(format!("tracefs is not mounted and {DEFAULT_DIR} does not exist (a kernel without CONFIG_TRACING?)"));
        }
        super::note_step(hooks, steps, Undo::Unmount { path: dir.clone() })?;
        mount_tracefs(&dir).map_err(|e| format!("tracefs is not mounted and mounting it at {DEFAULT_DIR} failed: {e}"))?;
        Ok(Tracefs { root: dir, mounted_here: true })
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// The CPUs that have a ring buffer.
    pub fn cpus(&self, dir: &Path) -> Result<Vec<u32>, String> {
        let per_cpu = dir.join("per_cpu");
        let rd = std::fs::read_dir(&per_cpu).map_err(|e| format!("cannot list {}: {e}", per_cpu.display()))?;
        let mut v: Vec<u32> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.strip_prefix("cpu")).and_then(|n| n.parse().ok()))
            .collect();
        v.sort_unstable();
        Ok(v)
    }

    /// `saved_cmdlines`: the kernel's pid → comm cache.
    pub fn saved_cmdlines(&self) -> BTreeMap<u32, String> {
        let text = std::fs::read_to_string(self.path("saved_cmdlines")).unwrap_or_default();
        text.lines()
            .filter_map(|l| {
                let (pid, comm) = l.split_once(' ')?;
                Some((pid.parse().ok()?, comm.to_string()))
            })
            .collect()
    }

    /// tracefs found or mounted (a mount is an undo step), with the
    /// instances killed fsbench runs left removed and said in the notes
    /// every capture method starts with.
    pub fn open(hooks: &mut dyn super::Hooks, steps: &mut Vec<Undo>) -> Result<(Tracefs, Vec<String>), String> {
        let tfs = Tracefs::find_or_mount(hooks, steps)?;
        let mut notes = Vec::new();
        let stale = tfs.remove_stale_instances();
        if !stale.is_empty() {
            notes.push(format!("removed trace instances killed fsbench runs left: {}", stale.join(", ")));
        }
        Ok((tfs, notes))
    }

    /// Remove the private instances of fsbench processes that no longer run
    /// (a killed capture); returns what was removed.
    pub fn remove_stale_instances(&self) -> Vec<String> {
        let Ok(rd) = std::fs::read_dir(self.path("instances")) else { return Vec::new() };
        let mut removed = Vec::new();
        for e in rd.filter_map(|e| e.ok()) {
            let name = e.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix(INSTANCE_PREFIX).and_then(|p| p.parse::<u32>().ok()) else { continue };
            // A live pid (even one reused by another program) is left alone.
            if Path::new(&format!("/proc/{pid}")).exists() {
                continue;
            }
            if std::fs::remove_dir(e.path()).is_ok() {
                removed.push(name);
            }
        }
        removed
    }
}

/// `buffer_size_kb` as a size to write back: "7 (expanded: 1408)" (not
/// yet allocated) means 1408; "X" (CPUs differ) has no single value.
pub fn buffer_kb(text: &str) -> Option<u64> {
    if let Some(rest) = text.split_once("(expanded:").map(|(_, r)| r) {
        return rest.trim().trim_end_matches(')').trim().parse().ok();
    }
    text.trim().parse().ok()
}

fn mount_tracefs(dir: &Path) -> Result<(), String> {
    let target = std::ffi::CString::new(dir.as_os_str().as_bytes()).map_err(|_| "path has a NUL byte".to_string())?;
    // SAFETY: every pointer is a NUL-terminated string that outlives the call; data is null.
    let rc = unsafe { libc::mount(c"nodev".as_ptr(), target.as_ptr(), c"tracefs".as_ptr(), 0, std::ptr::null()) };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error().to_string())
    }
}

/// The counters of `per_cpu/cpuN/stats` a capture reads before and after.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuStats {
    /// Events overwritten before they were read (overwrite mode).
    pub overrun: u64,
    /// Events lost because a writer wrapped into the page being committed.
    pub commit_overrun: u64,
    /// Events not written because the buffer was full (no-overwrite mode).
    pub dropped: u64,
    /// Events a reader consumed.
    pub read: u64,
}

impl CpuStats {
    pub fn lost(&self) -> u64 {
        self.overrun + self.commit_overrun + self.dropped
    }

    pub fn parse(text: &str) -> CpuStats {
        let mut s = CpuStats::default();
        for l in text.lines() {
            let Some((k, v)) = l.split_once(':') else { continue };
            let Ok(v) = v.trim().parse::<u64>() else { continue };
            match k.trim() {
                "overrun" => s.overrun = v,
                "commit overrun" => s.commit_overrun = v,
                "dropped events" => s.dropped = v,
                "read events" => s.read = v,
                _ => {}
            }
        }
        s
    }

    pub fn read(dir: &Path, cpu: u32) -> Result<CpuStats, String> {
        let p = dir.join(format!("per_cpu/cpu{cpu}/stats"));
        std::fs::read_to_string(&p).map(|t| CpuStats::parse(&t)).map_err(|e| format!("cannot read {}: {e}", p.display()))
    }

    pub fn since(&self, before: &CpuStats) -> CpuStats {
        CpuStats {
            overrun: self.overrun.saturating_sub(before.overrun),
            commit_overrun: self.commit_overrun.saturating_sub(before.commit_overrun),
            dropped: self.dropped.saturating_sub(before.dropped),
            read: self.read.saturating_sub(before.read),
        }
    }
}

/// The top-level settings the blk tracer path changes, as they were.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopLevelSaved {
    pub trace_clock: String,
    pub buffer_size_kb: String,
    pub bin: String,
}

/// One step that puts back something a capture changed. Each is safe to
/// run twice and when what it undoes is already gone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Undo {
    /// Unmount the tracefs or debugfs a capture mounted.
    Unmount { path: PathBuf },
    /// Put the top-level `blk` tracer back to `nop` and the settings as they were.
    TopLevel { tracefs: PathBuf, saved: TopLevelSaved },
    /// `echo 0 > /sys/block/DISK[/PART]/trace/enable`.
    DeviceTrace { sysfs_trace: PathBuf },
    /// Remove the private trace instance `instances/NAME`.
    Instance { tracefs: PathBuf, name: String },
    /// Stop and tear down a blktrace set up with the ioctls on this device node.
    IoctlTrace { device: PathBuf },
}

impl std::fmt::Display for Undo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Undo::Unmount { path } => write!(f, "unmount {}", path.display()),
            Undo::TopLevel { tracefs, saved } => write!(
                f,
                "restore the tracer in {} (nop, trace_clock {}, buffer_size_kb {}, options/bin {})",
                tracefs.display(),
                saved.trace_clock,
                saved.buffer_size_kb,
                saved.bin
            ),
            Undo::DeviceTrace { sysfs_trace } => write!(f, "disable block tracing in {}", sysfs_trace.display()),
            Undo::Instance { tracefs, name } => write!(f, "remove trace instance {}/instances/{name}", tracefs.display()),
            Undo::IoctlTrace { device } => write!(f, "stop and tear down the blktrace of {}", device.display()),
        }
    }
}

impl Undo {
    /// Run the step. What is already undone counts as done.
    pub fn perform(&self) -> Result<(), String> {
        match self {
            Undo::Unmount { path } => {
                unmount(path)?;
                // The private mount point a capture made for debugfs goes too.
                if path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("fsbench-debugfs-")) {
                    let _ = std::fs::remove_dir(path);
                }
                Ok(())
            }
            Undo::TopLevel { tracefs, saved } => restore_top_level(tracefs, saved),
            Undo::DeviceTrace { sysfs_trace } => {
                let enable = sysfs_trace.join("enable");
                if !enable.exists() {
                    return Ok(());
                }
                write(&enable, "0")
            }
            Undo::Instance { tracefs, name } => {
                let dir = tracefs.join("instances").join(name);
                match std::fs::remove_dir(&dir) {
                    Ok(()) => Ok(()),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                    Err(e) => Err(format!("cannot remove {}: {e}", dir.display())),
                }
            }
            Undo::IoctlTrace { device } => super::ioctl::teardown(device),
        }
    }
}

fn unmount(path: &Path) -> Result<(), String> {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| "path has a NUL byte".to_string())?;
    // SAFETY: c is a NUL-terminated string that outlives the call.
    if unsafe { libc::umount2(c.as_ptr(), 0) } == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        // Not a mount point (any more), or gone.
        Some(libc::EINVAL) | Some(libc::ENOENT) => Ok(()),
        _ => Err(format!("cannot unmount {}: {e}", path.display())),
    }
}

fn restore_top_level(tracefs: &Path, saved: &TopLevelSaved) -> Result<(), String> {
    let current = tracefs.join("current_tracer");
    if !current.exists() {
        return Ok(());
    }
    let mut errors = Vec::new();
    // Only the blk tracer is ours to stop: another tracer set since is someone else's.
    if read(&current).map(|t| t == "blk").unwrap_or(false) {
        if let Err(e) = write(&current, "nop") {
            errors.push(e);
        }
    }
    let steps = [("options/bin", &saved.bin), ("trace_clock", &saved.trace_clock), ("buffer_size_kb", &saved.buffer_size_kb)];
    for (file, value) in steps {
        if let Err(e) = write(&tracefs.join(file), value) {
            errors.push(e);
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_and_selection_parse() {
        let s = CpuStats::parse("entries: 5\noverrun: 7\ncommit overrun: 1\nbytes: 0\ndropped events: 2\nread events: 40\n");
        assert_eq!(s, CpuStats { overrun: 7, commit_overrun: 1, dropped: 2, read: 40 });
        assert_eq!(s.lost(), 10);
        assert_eq!(s.since(&CpuStats { overrun: 5, ..s }).overrun, 2);
        assert_eq!(selected("local global [mono] uptime").as_deref(), Some("mono"));
        assert_eq!(selected("nop"), None);
        assert_eq!(buffer_kb("7 (expanded: 1408)"), Some(1408));
        assert_eq!(buffer_kb("4096"), Some(4096));
        assert_eq!(buffer_kb("X"), None);
    }

    #[test]
    fn undo_round_trips_through_json() {
        let u = Undo::TopLevel {
            tracefs: DEFAULT_DIR.into(),
            saved: TopLevelSaved { trace_clock: "local".into(), buffer_size_kb: "1408".into(), bin: "0".into() },
        };
        let text = serde_json::to_string(&u).unwrap();
        assert_eq!(serde_json::from_str::<Undo>(&text).unwrap(), u);
        assert!(u.to_string().contains("buffer_size_kb 1408"), "{u}");
        // Already gone counts as undone.
        let gone = Undo::Instance { tracefs: "/nonexistent".into(), name: "fsbench-1".into() };
        assert_eq!(gone.perform(), Ok(()));
    }
}
