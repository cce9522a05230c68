//! Block device counters: what actually reached the devices under a run.
//!
//! Devices are found from paths (`device_for_path`) through
//! `/sys/dev/block/MAJ:MIN`; counters come from `/sys/class/block/X/stat`
//! (documented in the kernel's `Documentation/block/stat.rst`).
use serde::{Deserialize, Serialize};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The fields of `/sys/block/X/stat`. Kernels before 4.18 report 11 fields,
/// before 5.5 report 15; fields they lack are 0.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
    pub discard_ios: u64,
    pub discard_merges: u64,
    pub discard_sectors: u64,
    pub discard_ticks_ms: u64,
    pub flush_ios: u64,
    pub flush_ticks_ms: u64,
}

/// Sectors in the stat file are always 512 bytes, whatever the device's block size.
pub const SECTOR_BYTES: u64 = 512;

impl DiskStat {
    pub fn read_bytes(&self) -> u64 {
        self.read_sectors.saturating_mul(SECTOR_BYTES)
    }
    pub fn write_bytes(&self) -> u64 {
        self.write_sectors.saturating_mul(SECTOR_BYTES)
    }
    pub fn discard_bytes(&self) -> u64 {
        self.discard_sectors.saturating_mul(SECTOR_BYTES)
    }
    /// All completed requests of any kind.
    pub fn total_ios(&self) -> u64 {
        self.read_ios.saturating_add(self.write_ios).saturating_add(self.discard_ios).saturating_add(self.flush_ios)
    }
    /// Counters of `self` minus those of `before`, saturating at 0 (a counter
    /// that went backwards means the device was reset or replaced).
    /// `in_flight` is a gauge, not a counter: the delta carries `self`'s value.
    pub fn delta(&self, before: &DiskStat) -> DiskStat {
        DiskStat {
            read_ios: self.read_ios.saturating_sub(before.read_ios),
            read_merges: self.read_merges.saturating_sub(before.read_merges),
            read_sectors: self.read_sectors.saturating_sub(before.read_sectors),
            read_ticks_ms: self.read_ticks_ms.saturating_sub(before.read_ticks_ms),
            write_ios: self.write_ios.saturating_sub(before.write_ios),
            write_merges: self.write_merges.saturating_sub(before.write_merges),
            write_sectors: self.write_sectors.saturating_sub(before.write_sectors),
            write_ticks_ms: self.write_ticks_ms.saturating_sub(before.write_ticks_ms),
            in_flight: self.in_flight,
            io_ticks_ms: self.io_ticks_ms.saturating_sub(before.io_ticks_ms),
            time_in_queue_ms: self.time_in_queue_ms.saturating_sub(before.time_in_queue_ms),
            discard_ios: self.discard_ios.saturating_sub(before.discard_ios),
            discard_merges: self.discard_merges.saturating_sub(before.discard_merges),
            discard_sectors: self.discard_sectors.saturating_sub(before.discard_sectors),
            discard_ticks_ms: self.discard_ticks_ms.saturating_sub(before.discard_ticks_ms),
            flush_ios: self.flush_ios.saturating_sub(before.flush_ios),
            flush_ticks_ms: self.flush_ticks_ms.saturating_sub(before.flush_ticks_ms),
        }
    }
}

/// Parse the text of a stat file. Missing fields are 0; a field that is not a
/// number is 0; extra fields (from a future kernel) are ignored.
pub fn parse_stat(text: &str) -> DiskStat {
    let mut v = [0u64; 17];
    for (slot, tok) in v.iter_mut().zip(text.split_ascii_whitespace()) {
        *slot = tok.parse().unwrap_or(0);
    }
    DiskStat {
        read_ios: v[0],
        read_merges: v[1],
        read_sectors: v[2],
        read_ticks_ms: v[3],
        write_ios: v[4],
        write_merges: v[5],
        write_sectors: v[6],
        write_ticks_ms: v[7],
        in_flight: v[8],
        io_ticks_ms: v[9],
        time_in_queue_ms: v[10],
        discard_ios: v[11],
        discard_merges: v[12],
        discard_sectors: v[13],
        discard_ticks_ms: v[14],
        flush_ios: v[15],
        flush_ticks_ms: v[16],
    }
}

/// Read `/sys/class/block/NAME/stat` (works for whole disks and partitions).
pub fn read_stat(name: &str) -> io::Result<DiskStat> {
    let text = std::fs::read_to_string(sysfs_dir_of(name).join("stat"))?;
    Ok(parse_stat(&text))
}

/// What a block device is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BlockKind {
    Disk,
    Partition {
        parent: String,
    },
    /// `backing_file` is None for a loop device with nothing attached.
    Loop {
        backing_file: Option<PathBuf>,
    },
    DeviceMapper {
        slaves: Vec<String>,
    },
    Zram,
    Other,
}

impl BlockKind {
    /// Short name, as in `DeviceReport::kind`.
    pub fn as_str(&self) -> &'static str {
        match self {
            BlockKind::Disk => "disk",
            BlockKind::Partition { .. } => "partition",
            BlockKind::Loop { .. } => "loop",
            BlockKind::DeviceMapper { .. } => "dm",
            BlockKind::Zram => "zram",
            BlockKind::Other => "other",
        }
    }
}

/// A block device as the kernel names it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockDev {
    /// Kernel name: `vda`, `vda1`, `loop3`, `dm-0`, `zram0`.
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// `/sys/class/block/NAME`.
    pub sysfs_dir: PathBuf,
    pub kind: BlockKind,
}

fn sysfs_dir_of(name: &str) -> PathBuf {
    Path::new("/sys/class/block").join(name)
}

fn read_trim(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

fn list_dir(path: &Path) -> Vec<String> {
    let mut v: Vec<String> = match std::fs::read_dir(path) {
        Ok(rd) => rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// Split a `MAJ:MIN` string.
pub fn parse_devnum(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Major number of a `dev_t` (glibc encoding).
pub fn dev_major(dev: u64) -> u32 {
    (((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff)) as u32
}

/// Minor number of a `dev_t` (glibc encoding).
pub fn dev_minor(dev: u64) -> u32 {
    ((dev & 0xff) | ((dev >> 12) & !0xff)) as u32
}

impl BlockDev {
    /// Look a device up by its kernel name (`vda1`, `dm-0`).
    pub fn from_name(name: &str) -> Option<BlockDev> {
        if name.is_empty() || name.contains('/') || name == "." || name == ".." {
            return None;
        }
        let dir = sysfs_dir_of(name);
        let (major, minor) = parse_devnum(&read_trim(&dir.join("dev"))?)?;
        let kind = classify(name, major, &dir);
        Some(BlockDev { name: name.to_string(), major, minor, sysfs_dir: dir, kind })
    }

    /// Look a device up by number through `/sys/dev/block/MAJ:MIN`.
    pub fn from_devnum(major: u32, minor: u32) -> Option<BlockDev> {
        let link = std::fs::read_link(format!("/sys/dev/block/{major}:{minor}")).ok()?;
        let name = link.file_name()?.to_string_lossy().into_owned();
        BlockDev::from_name(&name)
    }

    /// The `/dev` node the kernel would name it (`cciss!c0d0` → `/dev/cciss/c0d0`).
    pub fn dev_path(&self) -> PathBuf {
        Path::new("/dev").join(self.name.replace('!', "/"))
    }

    pub fn kind_str(&self) -> &'static str {
        self.kind.as_str()
    }

    pub fn is_partition(&self) -> bool {
        matches!(self.kind, BlockKind::Partition { .. })
    }

    /// The whole disk this is a partition of; None when it is not a partition.
    pub fn parent(&self) -> Option<BlockDev> {
        match &self.kind {
            BlockKind::Partition { parent } => BlockDev::from_name(parent),
            _ => None,
        }
    }

    /// The device whose queue settings apply: the parent disk for a partition, else itself.
    pub fn whole_disk(&self) -> BlockDev {
        self.parent().unwrap_or_else(|| self.clone())
    }

    /// Partitions of a whole disk (empty for anything else).
    pub fn partitions(&self) -> Vec<BlockDev> {
        if self.is_partition() {
            return Vec::new();
        }
        list_dir(&self.sysfs_dir)
            .into_iter()
            .filter(|n| self.sysfs_dir.join(n).join("partition").exists())
            .filter_map(|n| BlockDev::from_name(&n))
            .collect()
    }

    /// Devices stacked on this one (`holders/`: dm, md, bcache).
    pub fn holders(&self) -> Vec<String> {
        list_dir(&self.sysfs_dir.join("holders"))
    }

    /// Devices this one is stacked on (`slaves/`).
    pub fn slaves(&self) -> Vec<String> {
        list_dir(&self.sysfs_dir.join("slaves"))
    }

    /// For a loop device, the file it is attached to.
    pub fn backing_file(&self) -> Option<PathBuf> {
        match &self.kind {
            BlockKind::Loop { backing_file } => backing_file.clone(),
            _ => None,
        }
    }

    /// Everything I/O to this device goes on to reach, transitively: the
    /// parent disk of a partition, the slaves of dm/md, and for a loop device
    /// the device holding its backing file. Deduplicated, without `self`.
    pub fn underlying(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut todo: Vec<BlockDev> = vec![self.clone()];
        let mut steps = 0;
        while let Some(d) = todo.pop() {
            steps += 1;
            if steps > 64 {
                break;
            }
            let mut next: Vec<String> = Vec::new();
            if let BlockKind::Partition { parent } = &d.kind {
                next.push(parent.clone());
            }
            next.extend(d.slaves());
            if let Some(f) = d.backing_file() {
                if let Some(b) = device_for_path(&f) {
                    next.push(b.name);
                }
            }
            for n in next {
                if n != self.name && !out.contains(&n) {
                    if let Some(b) = BlockDev::from_name(&n) {
                        out.push(n);
                        todo.push(b);
                    }
                }
            }
        }
        out
    }
}

fn classify(name: &str, major: u32, dir: &Path) -> BlockKind {
    if dir.join("partition").exists() {
        // /sys/class/block/vda1 -> ../../devices/.../block/vda/vda1
        let parent =
            std::fs::canonicalize(dir).ok().and_then(|p| p.parent().and_then(|p| p.file_name()).map(|s| s.to_string_lossy().into_owned()));
        if let Some(parent) = parent {
            return BlockKind::Partition { parent };
        }
    }
    if dir.join("loop").exists() || (major == 7 && name.starts_with("loop")) {
        let backing_file = read_trim(&dir.join("loop/backing_file")).filter(|s| !s.is_empty()).map(PathBuf::from);
        return BlockKind::Loop { backing_file };
    }
    if dir.join("dm").exists() {
        return BlockKind::DeviceMapper { slaves: list_dir(&dir.join("slaves")) };
    }
    if name.starts_with("zram") {
        return BlockKind::Zram;
    }
    if Path::new("/sys/block").join(name).exists() {
        return BlockKind::Disk;
    }
    BlockKind::Other
}

/// The nearest existing ancestor of `path` (a job's file may not exist yet).
fn existing_metadata(path: &Path) -> Option<std::fs::Metadata> {
    let mut p: Option<&Path> = Some(path);
    while let Some(cur) = p {
        let cur_eff = if cur.as_os_str().is_empty() { Path::new(".") } else { cur };
        if let Ok(m) = std::fs::metadata(cur_eff) {
            return Some(m);
        }
        p = cur.parent();
    }
    None
}

/// The block device behind `path`: the device itself when `path` is a block
/// device node, else the device of the file system holding it (or holding
/// its nearest existing ancestor). None for file systems without a block
/// device (tmpfs, overlay, proc, network file systems).
///
/// File systems that report an anonymous `st_dev` (btrfs, some FUSE) are
/// resolved through the mount's source when that is a block device node.
pub fn device_for_path(path: &Path) -> Option<BlockDev> {
    let meta = existing_metadata(path)?;
    if meta.file_type().is_block_device() {
        let rdev = meta.rdev();
        return BlockDev::from_devnum(dev_major(rdev), dev_minor(rdev));
    }
    let dev = meta.dev();
    if let Some(b) = BlockDev::from_devnum(dev_major(dev), dev_minor(dev)) {
        return Some(b);
    }
    // Anonymous device number: try the mount source.
    let m = crate::environment::system::mount_for_path(path)?;
    if !m.source.starts_with('/') {
        return None;
    }
    let sm = std::fs::metadata(&m.source).ok()?;
    if !sm.file_type().is_block_device() {
        return None;
    }
    BlockDev::from_devnum(dev_major(sm.rdev()), dev_minor(sm.rdev()))
}

/// What happened on one device during a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceReport {
    pub name: String,
    /// `disk`, `partition`, `loop`, `dm`, `zram` or `other`.
    pub kind: String,
    pub backing_file: Option<String>,
    /// Devices below this one that are watched too (each has its own report).
    pub underlying: Vec<String>,
    pub before: DiskStat,
    pub after: DiskStat,
    pub delta: DiskStat,
    /// Share of the elapsed time the device had I/O in flight (io_ticks).
    pub util_pct: Option<f64>,
    pub note: Option<String>,
}

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

/// Test helpers shared with the other modules' tests.
#[cfg(test)]
pub(crate) mod testutil {
    use std::path::{Path, PathBuf};
    use std::process::Command;

    pub fn is_root() -> bool {
        // SAFETY: geteuid has no preconditions.
        unsafe { libc::geteuid() == 0 }
    }

    /// A loop device attached by the test; detached on drop, even on panic.
    pub struct LoopDev {
        pub dev: PathBuf,
        pub file: PathBuf,
        _dir: tempfile::TempDir,
    }

    impl LoopDev {
        /// A sparse file of `bytes` in a fresh temporary directory, attached
        /// with `losetup --find --show`. None (with the reason printed) when
        /// that is not possible here.
        pub fn attach(bytes: u64) -> Option<LoopDev> {
            let dir = tempfile::tempdir().ok()?;
            let file = dir.path().join("loop.img");
            let f = std::fs::File::create(&file).ok()?;
            f.set_len(bytes).ok()?;
            drop(f);
            let out = match Command::new("losetup").arg("--find").arg("--show").arg(&file).output() {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("skipping: cannot run losetup: {e}");
                    return None;
                }
            };
            if !out.status.success() {
                eprintln!("skipping: losetup failed: {}", String::from_utf8_lossy(&out.stderr).trim());
                return None;
            }
            let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            // Guard first, so the device is detached whatever happens next.
            let lo = LoopDev { dev, file, _dir: dir };
            assert!(lo.dev.to_string_lossy().starts_with("/dev/loop"), "losetup printed {}", lo.dev.display());
            Some(lo)
        }

        pub fn path(&self) -> &Path {
            &self.dev
        }
    }

    impl Drop for LoopDev {
        fn drop(&mut self) {
            let ok = Command::new("losetup").arg("-d").arg(&self.dev).status().map(|s| s.success()).unwrap_or(false);
            if !ok {
                eprintln!("WARNING: could not detach {}", self.dev.display());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::{is_root, LoopDev};
    use super::*;

    const S17: &str = "3142127 0 25138738 594785  4329   145 8660440 30172 0 25752 625023 2 0 2097160 0 12 65";

    #[test]
    fn parse_17_fields() {
        let s = parse_stat(S17);
        assert_eq!(s.read_ios, 3142127);
        assert_eq!(s.read_merges, 0);
        assert_eq!(s.read_sectors, 25138738);
        assert_eq!(s.read_ticks_ms, 594785);
        assert_eq!(s.write_ios, 4329);
        assert_eq!(s.write_merges, 145);
        assert_eq!(s.write_sectors, 8660440);
        assert_eq!(s.write_ticks_ms, 30172);
        assert_eq!(s.in_flight, 0);
        assert_eq!(s.io_ticks_ms, 25752);
        assert_eq!(s.time_in_queue_ms, 625023);
        assert_eq!(s.discard_ios, 2);
        assert_eq!(s.discard_merges, 0);
        assert_eq!(s.discard_sectors, 2097160);
        assert_eq!(s.discard_ticks_ms, 0);
        assert_eq!(s.flush_ios, 12);
        assert_eq!(s.flush_ticks_ms, 65);
        assert_eq!(s.read_bytes(), 25138738 * 512);
        assert_eq!(s.write_bytes(), 8660440 * 512);
    }

    #[test]
    fn parse_11_fields() {
        let s = parse_stat("  100 1 800 5 200 2 1600 7 3 11 12\n");
        assert_eq!((s.read_ios, s.read_sectors, s.write_ios, s.write_sectors), (100, 800, 200, 1600));
        assert_eq!((s.in_flight, s.io_ticks_ms, s.time_in_queue_ms), (3, 11, 12));
        assert_eq!((s.discard_ios, s.discard_sectors, s.flush_ios, s.flush_ticks_ms), (0, 0, 0, 0));
    }

    #[test]
    fn parse_15_fields() {
        let s = parse_stat("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15");
        assert_eq!(s.discard_ios, 12);
        assert_eq!(s.discard_merges, 13);
        assert_eq!(s.discard_sectors, 14);
        assert_eq!(s.discard_ticks_ms, 15);
        assert_eq!((s.flush_ios, s.flush_ticks_ms), (0, 0));
    }

    #[test]
    fn parse_garbage_and_empty() {
        assert_eq!(parse_stat(""), DiskStat::default());
        let s = parse_stat("5 x 7");
        assert_eq!((s.read_ios, s.read_merges, s.read_sectors), (5, 0, 7));
    }

    #[test]
    fn delta_arithmetic() {
        let before = parse_stat("10 0 100 5 20 1 400 9 4 30 50 0 0 0 0 1 1");
        let after = parse_stat("15 0 180 6 25 3 2448 19 2 40 70 1 0 8 0 3 2");
        let d = after.delta(&before);
        assert_eq!(d.read_ios, 5);
        assert_eq!(d.read_sectors, 80);
        assert_eq!(d.write_ios, 5);
        assert_eq!(d.write_merges, 2);
        assert_eq!(d.write_sectors, 2048);
        assert_eq!(d.write_bytes(), 1 << 20);
        assert_eq!(d.read_bytes(), 80 * 512);
        assert_eq!(d.in_flight, 2, "in_flight is a gauge: delta carries the after value");
        assert_eq!(d.io_ticks_ms, 10);
        assert_eq!(d.time_in_queue_ms, 20);
        assert_eq!(d.discard_sectors, 8);
        assert_eq!(d.flush_ios, 2);
        assert_eq!(d.total_ios(), 5 + 5 + 1 + 2);
        // Counters that went backwards saturate at zero.
        let back = before.delta(&after);
        assert_eq!(back.read_ios, 0);
        assert_eq!(back.write_sectors, 0);
        assert_eq!(after.delta(&after).total_ios(), 0);
    }

    #[test]
    fn devnum_split() {
        // 254:0 and a large minor (259:65536) round-trip through the glibc encoding.
        let mk = |ma: u64, mi: u64| ((ma & 0xfff) << 8) | ((ma & !0xfff) << 32) | (mi & 0xff) | ((mi & !0xff) << 12);
        assert_eq!((dev_major(mk(254, 0)), dev_minor(mk(254, 0))), (254, 0));
        assert_eq!((dev_major(mk(259, 65536)), dev_minor(mk(259, 65536))), (259, 65536));
        assert_eq!(parse_devnum("8:17\n"), Some((8, 17)));
        assert_eq!(parse_devnum("8"), None);
    }

    #[test]
    fn temp_dir_is_on_a_block_device() {
        let d = device_for_path(&std::env::temp_dir()).expect("temp dir should be on a block device here");
        assert!(!d.name.is_empty());
        assert!(d.sysfs_dir.join("stat").exists());
        assert!(read_stat(&d.name).is_ok());
        // A file that does not exist yet resolves through its directory.
        let missing = std::env::temp_dir().join("fsbench-does-not-exist/x/y");
        assert_eq!(device_for_path(&missing).map(|b| b.name), Some(d.name.clone()));
        // The device node itself resolves to the same device.
        if d.dev_path().exists() {
            assert_eq!(device_for_path(&d.dev_path()).map(|b| b.name), Some(d.name));
        }
    }

    #[test]
    fn tmpfs_has_no_device() {
        if Path::new("/dev/shm").exists() {
            assert_eq!(device_for_path(Path::new("/dev/shm")), None);
        }
        assert_eq!(device_for_path(Path::new("/proc/self")), None);
    }

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
        crate::environment::safety::check_device_usable(lo.path(), true).expect("fresh loop device is usable");

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
