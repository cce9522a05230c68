//! What the environment of a run should be, as plain data: the target
//! (directory, raw device, a raw loop or zram device fsbench creates, or a
//! managed file system on a loop, zram or named device), the page-cache scenario applied before each run and the
//! background load during it.
//!
//! What belongs here: the specs that frontends produce and `environment`
//! carries out, with their labels and checks that need nothing but the
//! values. Parsing the user's text is `crate::frontend::environment`'s;
//! setting up, applying and watching is `crate::environment`'s. Like the rest
//! of `model`, this imports nothing else from the crate, so every module
//! above it (frontends, environment, runner, results, reports) may use it.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Which device a managed file system lives on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceSource {
    /// A loop device over a sparse file of `size` bytes created in `dir`.
    Loop { dir: PathBuf, size: u64 },
    /// A zram device of `size` bytes (made with /sys/class/zram-control/hot_add).
    Zram { size: u64 },
    /// A device the user named; needs allow_device.
    Device(PathBuf),
}

/// What the user asked for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TargetSpec {
    /// An existing directory; works unprivileged.
    Directory(PathBuf),
    /// A raw block device, written directly (needs allow_device, never mounted).
    Device(PathBuf),
    /// A raw block device that fsbench creates for the run (a loop device
    /// over its own image file, or a zram device) and removes afterwards,
    /// written directly: a device to benchmark without a file system (seed
    /// 003 compares it with a file system made on the same kind of device)
    /// that no user data can be on, so it needs no allow_device. Never
    /// `DeviceSource::Device`: a device the user names is `Device`.
    #[serde(rename = "managed-device")]
    ManagedDevice(DeviceSource),
    /// mkfs + mount on a device fsbench creates or the user names.
    Managed {
        /// File system type, one of `MANAGED_FS`.
        fs: String,
        /// Extra mkfs arguments, e.g. ["-O", "^has_journal"].
        mkfs_options: Vec<String>,
        /// The -o string for mount, e.g. "nodelalloc,data=ordered"; "" for defaults.
        mount_options: String,
        device: DeviceSource,
    },
}

/// The file systems a managed target can have: those whose mkfs fsbench
/// knows how to run unattended (`environment::mkfs`'s flags for each).
pub const MANAGED_FS: &[&str] = &["ext2", "ext3", "ext4", "xfs", "btrfs", "f2fs", "nilfs2", "jfs", "vfat"];

/// The page-cache state a run starts from (see `crate::environment::cache`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheScenario {
    /// Nothing done.
    Warm,
    /// sync; echo 3 > /proc/sys/vm/drop_caches (seed 000, Scenario A).
    Cold,
    /// Unmount and mount the target again (Scenario B).
    FreshMount,
    /// Fill the page cache with this many bytes of unrelated data (Scenario C).
    Polluted(u64),
}

fn size_text(n: u64) -> String {
    for (unit, m) in [("g", 1u64 << 30), ("m", 1 << 20), ("k", 1 << 10)] {
        if n >= m && n % m == 0 {
            return format!("{}{unit}", n / m);
        }
    }
    n.to_string()
}

impl CacheScenario {
    /// The text `frontend::environment::parse_cache` accepts for this scenario.
    pub fn label(&self) -> String {
        match self {
            CacheScenario::Warm => "warm".into(),
            CacheScenario::Cold => "cold".into(),
            CacheScenario::FreshMount => "fresh-mount".into(),
            CacheScenario::Polluted(n) => format!("polluted:{}", size_text(*n)),
        }
    }
}

impl std::fmt::Display for CacheScenario {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// A background load: a separate process that keeps creating files during
/// the measured run (see `crate::environment::background`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BackgroundSpec {
    /// Where to create files; a subdirectory fsbench makes and removes.
    pub dir: PathBuf,
    /// Bytes per file (seed: 100 KB).
    pub file_size: u64,
    /// fsync each file after writing it.
    pub fsync: bool,
    /// Files per second; None = as fast as possible.
    pub rate: Option<u64>,
    /// Keep at most this many files, deleting the oldest (bounds the space used).
    pub max_files: u64,
}

impl BackgroundSpec {
    /// Seed 000's load: 100 KiB files, no fsync, unpaced, at most 1000 files.
    pub fn seed(dir: impl Into<PathBuf>) -> BackgroundSpec {
        BackgroundSpec { dir: dir.into(), file_size: 100 * 1024, fsync: false, rate: None, max_files: 1000 }
    }

    /// The checks both sides make before running.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_files == 0 {
            return Err("background load: max_files must be at least 1".into());
        }
        if self.rate == Some(0) {
            return Err("background load: rate must be at least 1 file/s (or unset)".into());
        }
        if self.dir.as_os_str().is_empty() {
            return Err("background load: no directory given".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(CacheScenario::Polluted(512 << 20).label(), "polluted:512m");
        assert_eq!(CacheScenario::Polluted(2 << 30).to_string(), "polluted:2g");
        assert_eq!(CacheScenario::Polluted(1536 << 20).to_string(), "polluted:1536m");
        assert_eq!(CacheScenario::Polluted(1000).to_string(), "polluted:1000");
        assert_eq!(CacheScenario::FreshMount.to_string(), "fresh-mount");
    }

    #[test]
    fn seed_is_100k_unpaced_1000_files() {
        let s = BackgroundSpec::seed("/d");
        assert_eq!(s.dir, PathBuf::from("/d"));
        assert_eq!(s.file_size, 102_400);
        assert!(!s.fsync);
        assert_eq!(s.rate, None);
        assert_eq!(s.max_files, 1000);
    }

    #[test]
    fn validate_rejects_zero_max_and_rate() {
        let mut s = BackgroundSpec::seed("/d");
        assert!(s.validate().is_ok());
        s.max_files = 0;
        assert!(s.validate().is_err());
        s.max_files = 1;
        s.rate = Some(0);
        assert!(s.validate().is_err());
    }

    #[test]
    fn target_spec_serialises() {
        let s = TargetSpec::Managed {
            fs: "ext4".into(),
            mkfs_options: vec![],
            mount_options: "noatime".into(),
            device: DeviceSource::Loop { dir: "/tmp".into(), size: 1 << 30 },
        };
        let j = serde_json::to_string(&s).unwrap();
        assert_eq!(serde_json::from_str::<TargetSpec>(&j).unwrap(), s);
        let raw = TargetSpec::ManagedDevice(DeviceSource::Zram { size: 1 << 30 });
        let j = serde_json::to_string(&raw).unwrap();
        assert!(j.starts_with("{\"managed-device\""), "{j}");
        assert_eq!(serde_json::from_str::<TargetSpec>(&j).unwrap(), raw);
    }
}

/// Block tracing around each measured run (`--trace`, an experiment's
/// `trace` key). The capture itself is `crate::observe::trace`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceSpec {
    /// The block device to trace; `None` = the device the workload's files
    /// are on (for a partition, its disk, filtered to the partition).
    pub device: Option<String>,
    /// Where the blktrace files go: `BASENAME.blktrace.CPU` (a run number
    /// is added when several runs trace). `None` = a directory of the
    /// run's own (an experiment's cell directory, or `fsbench-trace-TIME`).
    pub output: Option<PathBuf>,
    /// The blktrace categories to keep (`--trace-mask`, blktrace's `-a`);
    /// `None` = all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub act_mask: Option<u16>,
}

impl TraceSpec {
    /// `--trace` / `trace = ...`: `auto` (or empty, or `true`) traces the
    /// workload's device; anything else names a device.
    pub fn parse(text: &str) -> Result<TraceSpec, String> {
        let t = text.trim();
        if t.is_empty() || t == "auto" || t == "true" {
            return Ok(TraceSpec::default());
        }
        if t.chars().any(|c| c.is_whitespace() || c == ',') {
            return Err(format!("expected a block device (e.g. /dev/loop0 or loop0) or 'auto', found '{t}'"));
        }
        Ok(TraceSpec { device: Some(t.to_string()), output: None, act_mask: None })
    }
}
