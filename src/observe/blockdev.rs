//! Block device counters: what actually reached the devices under a run.
//!
//! The devices and their counters come from `crate::host::blockdev`; this
//! module watches them around a run and reports the difference in the
//! result's `DeviceReport`.
use crate::host::blockdev::{device_for_path, read_stat, BlockDev, BlockKind};
use crate::result::device::{DeviceReport, DiskStat};
use std::path::Path;

struct Watched {
    dev: BlockDev,
    underlying: Vec<String>,
    before: Result<DiskStat, String>,
}

/// Counters of the devices under some paths, read before and after a run.
pub struct DeviceWatch {
    watched: Vec<Watched>,
}

impl DeviceWatch {
    /// Find the devices under `paths` (and what they stand on), deduplicated,
    /// and read their counters.
    pub fn start(paths: &[&Path]) -> DeviceWatch {
        let mut devs: Vec<(BlockDev, Vec<String>)> = Vec::new();
        let add = |d: BlockDev, devs: &mut Vec<(BlockDev, Vec<String>)>| {
            if !devs.iter().any(|(x, _)| x.name == d.name) {
                let u = d.underlying();
                devs.push((d, u));
            }
        };
        for p in paths {
            if let Some(d) = device_for_path(p) {
                add(d, &mut devs);
            }
        }
        // Underlying devices get their own reports, after the direct ones.
        let mut i = 0;
        while i < devs.len() {
            let names = devs[i].1.clone();
            for n in names {
                if let Some(d) = BlockDev::from_name(&n) {
                    add(d, &mut devs);
                }
            }
            i += 1;
        }
        let watched = devs
            .into_iter()
            .map(|(dev, underlying)| {
                let before = read_stat(&dev.name).map_err(|e| e.to_string());
                Watched { dev, underlying, before }
            })
            .collect();
        DeviceWatch { watched }
    }

    /// Names of the watched devices, direct ones first.
    pub fn devices(&self) -> Vec<String> {
        self.watched.iter().map(|w| w.dev.name.clone()).collect()
    }

    /// Read the counters again; `elapsed_ns` is the wall time between start and finish.
    pub fn finish(self, elapsed_ns: u64) -> Vec<DeviceReport> {
        self.watched.into_iter().map(|w| report(w, elapsed_ns)).collect()
    }
}

fn report(w: Watched, elapsed_ns: u64) -> DeviceReport {
    let after = read_stat(&w.dev.name).map_err(|e| e.to_string());
    let mut notes: Vec<String> = Vec::new();
    let (before, after) = match (w.before, after) {
        (Ok(b), Ok(a)) => (b, a),
        (Err(e), Ok(a)) => {
            notes.push(format!("could not read counters before the run: {e}"));
            (a.clone(), a)
        }
        (Ok(b), Err(e)) => {
            notes.push(format!("could not read counters after the run: {e}"));
            (b.clone(), b)
        }
        (Err(e), Err(_)) => {
            notes.push(format!("could not read counters: {e}"));
            (DiskStat::default(), DiskStat::default())
        }
    };
    let delta = after.delta(&before);
    let mut util_pct = if elapsed_ns > 0 && notes.is_empty() {
        let pct = delta.io_ticks_ms as f64 * 1e6 / elapsed_ns as f64 * 100.0;
        Some(pct.min(100.0))
    } else {
        None
    };
    let ticks =
        delta.io_ticks_ms.saturating_add(delta.read_ticks_ms).saturating_add(delta.write_ticks_ms).saturating_add(delta.time_in_queue_ms);
    if matches!(w.dev.kind, BlockKind::Zram) {
        notes.push("time counters do not advance on zram; util and await are meaningless".into());
        util_pct = None;
    } else if delta.total_ios() > 0 && ticks == 0 {
        notes.push(
            "I/O completed but the time counters did not move (bio-based device with sub-jiffy \
             accounting?); util and await are meaningless"
                .into(),
        );
        util_pct = None;
    }
    DeviceReport {
        name: w.dev.name.clone(),
        kind: w.dev.kind_str().to_string(),
        backing_file: w.dev.backing_file().map(|p| p.to_string_lossy().into_owned()),
        underlying: w.underlying,
        before,
        after,
        delta,
        util_pct,
        note: if notes.is_empty() { None } else { Some(notes.join("; ")) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::is_root;
    use crate::host::testutil::LoopDev;

    #[test]
    fn watch_temp_dir() {
        let t = std::env::temp_dir();
        let w = DeviceWatch::start(&[t.as_path(), t.as_path()]);
        let names = w.devices();
        assert!(!names.is_empty());
        let mut dedup = names.clone();
        dedup.dedup();
        assert_eq!(dedup.len(), names.len(), "devices are deduplicated");
        let r = w.finish(1_000_000_000);
        assert_eq!(r.len(), names.len());
        for d in &r {
            assert_eq!(d.delta, d.after.delta(&d.before));
        }
        let empty = DeviceWatch::start(&[Path::new("/dev/shm")]).finish(1);
        assert!(empty.is_empty());
    }

    #[test]
    fn loop_device_sees_direct_writes() {
        if !is_root() {
            eprintln!("skipping loop_device_sees_direct_writes: needs root to attach a loop device");
            return;
        }
        let Some(lo) = LoopDev::attach(64 << 20) else { return };
        let dev = device_for_path(lo.path()).expect("loop device resolves");
        assert_eq!(Some(dev.name.as_str()), lo.path().file_name().and_then(|s| s.to_str()));
        match &dev.kind {
            BlockKind::Loop { backing_file } => {
                let bf = backing_file.as_ref().expect("attached loop has a backing file");
                let want = std::fs::canonicalize(&lo.file).unwrap();
                assert_eq!(bf, &want);
            }
            k => panic!("expected a loop device, got {k:?}"),
        }
        assert_eq!(dev.kind_str(), "loop");

        let watch = DeviceWatch::start(&[lo.path()]);
        assert_eq!(watch.devices().first().map(|s| s.as_str()), Some(dev.name.as_str()));
        write_direct(lo.path(), 1 << 20);
        let reports = watch.finish(1_000_000);
        let r = reports.iter().find(|r| r.name == dev.name).expect("report for the loop device");
        assert_eq!(r.kind, "loop");
        assert!(r.backing_file.as_deref().is_some_and(|b| b.ends_with("loop.img")));
        assert!(r.delta.write_sectors >= 2048, "write sectors delta {} < 2048", r.delta.write_sectors);
        assert!(r.delta.write_bytes() >= 1 << 20);
        // The backing file's device is watched as underlying, with its own report.
        for u in &r.underlying {
            assert!(reports.iter().any(|x| &x.name == u), "underlying {u} has a report");
        }
    }

    /// Write `len` bytes of a pattern with O_DIRECT at offset 0. Only ever
    /// called on the loop device the test attached.
    fn write_direct(path: &Path, len: usize) {
        use std::io::Write;
        use std::os::unix::fs::OpenOptionsExt;
        assert!(path.to_string_lossy().starts_with("/dev/loop"), "only the test's own loop device");
        let layout = std::alloc::Layout::from_size_align(len, 4096).unwrap();
        // SAFETY: layout has non-zero size; the buffer is freed below.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null());
        // SAFETY: ptr points to len initialised (zeroed) bytes.
        let buf = unsafe { std::slice::from_raw_parts_mut(ptr, len) };
        for (i, b) in buf.iter_mut().enumerate() {
            *b = (i % 251) as u8;
        }
        let res = std::fs::OpenOptions::new().write(true).custom_flags(libc::O_DIRECT).open(path).and_then(|mut f| f.write_all(buf));
        // SAFETY: same layout as allocated.
        unsafe { std::alloc::dealloc(ptr, layout) };
        res.expect("O_DIRECT write to the loop device");
    }
}
