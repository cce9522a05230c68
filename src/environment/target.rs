//! Where a run happens: a directory, a raw block device, or a managed file
//! system that fsbench creates, mounts and tears down. (stub, being written)

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
    /// mkfs + mount on a device fsbench creates or the user names.
    Managed {
        /// File system type: ext2, ext3, ext4, xfs, btrfs, f2fs, nilfs2, jfs, vfat.
        fs: String,
        /// Extra mkfs arguments, e.g. ["-O", "^has_journal"].
        mkfs_options: Vec<String>,
        /// The -o string for mount, e.g. "nodelalloc,data=ordered"; "" for defaults.
        mount_options: String,
        device: DeviceSource,
    },
}

/// A target that is set up; dropping it tears down what fsbench created.
#[derive(Debug)]
pub struct ActiveTarget {
    pub label: String,
    /// The directory (or raw device path) workloads put their files in.
    pub path: PathBuf,
    pub info: TargetRecord,
}

/// What a result records about its target.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TargetRecord {
    pub label: String,
    pub kind: String,
    pub fs_type: Option<String>,
    pub device: Option<PathBuf>,
    pub mount_point: Option<PathBuf>,
    pub mkfs_command: Vec<String>,
    pub mount_options_requested: Option<String>,
    /// As /proc/mounts reports them after mounting.
    pub mount_options_in_force: Option<String>,
}

impl ActiveTarget {
    pub fn setup(label: &str, spec: &TargetSpec, allow_device: bool) -> Result<ActiveTarget, String> {
        let _ = (label, spec, allow_device);
        Err("targets: not implemented yet".into())
    }
    /// Unmount and mount again (the fresh-mount cache scenario); managed targets only.
    pub fn remount(&mut self) -> Result<(), String> {
        Err("remount: not implemented yet".into())
    }
}
