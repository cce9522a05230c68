//! Block devices as /sys describes them: counters (`/sys/class/block/X/stat`,
//! documented in the kernel's `Documentation/block/stat.rst`), what a device
//! is (disk, partition, loop, dm, zram) and what it stands on, queue
//! settings, and the device behind a path (`device_for_path`, through
//! `/sys/dev/block/MAJ:MIN`).
use super::{bracketed, read_trim};
use crate::result::device::{DiskStat, SECTOR_BYTES};
use serde::{Deserialize, Serialize};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

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

/// Bytes an I/O may address on `path`: a block device's size, a regular
/// file's length; anything else is refused (a replay's target).
pub fn addressable_bytes(path: &Path) -> Result<u64, String> {
    let meta = std::fs::metadata(path).map_err(|e| format!("{}: {e}", path.display()))?;
    if meta.file_type().is_block_device() {
        let (ma, mi) = (dev_major(meta.rdev()), dev_minor(meta.rdev()));
        BlockDev::from_devnum(ma, mi)
            .and_then(|d| d.size_bytes())
            .ok_or_else(|| format!("{}: block device {ma}:{mi} has no size in /sys/dev/block", path.display()))
    } else if meta.is_file() {
        Ok(meta.len())
    } else {
        Err(format!("{}: neither a block device nor a regular file", path.display()))
    }
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
        let (major, minor) = parse_devnum(&read_trim(dir.join("dev"))?)?;
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

    /// Capacity in bytes (`size` counts 512-byte sectors whatever the block size).
    pub fn size_bytes(&self) -> Option<u64> {
        let sectors: u64 = read_trim(self.sysfs_dir.join("size"))?.parse().ok()?;
        Some(sectors * SECTOR_BYTES)
    }

    /// A device-mapper device's name (`dm/name`).
    pub fn dm_name(&self) -> Option<String> {
        read_trim(self.sysfs_dir.join("dm/name"))
    }

    /// A zram device's compression algorithm in use.
    pub fn zram_comp_algorithm(&self) -> Option<String> {
        read_trim(self.sysfs_dir.join("comp_algorithm")).and_then(|a| bracketed(&a))
    }

    /// The hardware model (`device/model`), when the device reports one.
    pub fn model(&self) -> Option<String> {
        read_trim(self.sysfs_dir.join("device/model")).filter(|s| !s.is_empty())
    }

    /// `queue/rotational`: Some(true) for spinning disks. Queue settings
    /// belong to whole disks (see `whole_disk`).
    pub fn rotational(&self) -> Option<bool> {
        read_trim(self.sysfs_dir.join("queue/rotational")).and_then(|s| match s.as_str() {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        })
    }

    /// The I/O scheduler in use (`queue/scheduler`).
    pub fn scheduler(&self) -> Option<String> {
        read_trim(self.sysfs_dir.join("queue/scheduler")).and_then(|s| bracketed(&s))
    }

    /// `queue/logical_block_size` in bytes.
    pub fn logical_block_size(&self) -> Option<u64> {
        read_trim(self.sysfs_dir.join("queue/logical_block_size")).and_then(|s| s.parse().ok())
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
        let backing_file = read_trim(dir.join("loop/backing_file")).filter(|s| !s.is_empty()).map(PathBuf::from);
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

/// `/sys/block/NAME/loop/backing_file` of a loop device: the file it is
/// attached to, trimmed (empty when nothing is attached); None when the
/// device has no such file (not a loop device, or detached and gone).
pub fn loop_backing_file(name: &str) -> Option<String> {
    read_trim(Path::new("/sys/block").join(name).join("loop/backing_file"))
}

/// Whether loop device NAME is attached to a file.
pub fn loop_attached(name: &str) -> bool {
    Path::new("/sys/block").join(name).join("loop/backing_file").exists()
}

/// Whether loop device NAME does direct I/O to its backing file (`loop/dio`).
pub fn loop_direct_io(name: &str) -> bool {
    read_trim(Path::new("/sys/block").join(name).join("loop/dio")).as_deref() == Some("1")
}

/// Every attached loop device with its backing file: `(name, file)`.
pub fn loop_backings() -> Vec<(String, PathBuf)> {
    let Ok(rd) = std::fs::read_dir("/sys/block") else { return Vec::new() };
    let mut out = Vec::new();
    for e in rd.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Ok(bf) = std::fs::read_to_string(e.path().join("loop/backing_file")) else { continue };
        let bf = bf.trim();
        if !bf.is_empty() {
            out.push((name, PathBuf::from(bf)));
        }
    }
    out
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
    let m = super::mountinfo::mount_for_path(path)?;
    if !m.source.starts_with('/') {
        return None;
    }
    let sm = std::fs::metadata(&m.source).ok()?;
    if !sm.file_type().is_block_device() {
        return None;
    }
    BlockDev::from_devnum(dev_major(sm.rdev()), dev_minor(sm.rdev()))
}

#[cfg(test)]
mod tests {
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
}
