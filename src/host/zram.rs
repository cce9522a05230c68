//! zram through sysfs: `/sys/class/zram-control` (hot_add, hot_remove) and
//! `/sys/block/zramN` (comp_algorithm, disksize, reset). Only the writes;
//! which device may be touched is the caller's decision.

use std::io;
use std::path::{Path, PathBuf};

const CONTROL: &str = "/sys/class/zram-control";

/// Whether zram devices can be added (the module is loaded: `hot_add` exists).
pub fn control_available() -> bool {
    Path::new(CONTROL).join("hot_add").exists()
}

/// Read `hot_add`, which makes a new device; the text is its index.
pub fn hot_add() -> io::Result<String> {
    std::fs::read_to_string(Path::new(CONTROL).join("hot_add"))
}

/// Write `n` to `hot_remove`, which removes zram`n`.
pub fn hot_remove(n: u32) -> io::Result<()> {
    std::fs::write(Path::new(CONTROL).join("hot_remove"), n.to_string())
}

/// `/sys/block/zram<n>`.
pub fn sysfs_dir(n: u32) -> PathBuf {
    PathBuf::from(format!("/sys/block/zram{n}"))
}

/// Whether zram`n` exists.
pub fn exists(n: u32) -> bool {
    sysfs_dir(n).exists()
}

/// Reset zram`n` (frees its memory; fails with EBUSY while it is open).
pub fn reset(n: u32) -> io::Result<()> {
    std::fs::write(sysfs_dir(n).join("reset"), "1")
}

/// The `comp_algorithm` selector text (`lzo [lzo-rle] lz4 zstd`); empty when unreadable.
pub fn comp_algorithms(n: u32) -> String {
    std::fs::read_to_string(sysfs_dir(n).join("comp_algorithm")).unwrap_or_default()
}

pub fn set_comp_algorithm(n: u32, alg: &str) -> io::Result<()> {
    std::fs::write(sysfs_dir(n).join("comp_algorithm"), alg)
}

pub fn set_disksize(n: u32, bytes: u64) -> io::Result<()> {
    std::fs::write(sysfs_dir(n).join("disksize"), bytes.to_string())
}
