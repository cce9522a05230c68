//! `/proc/swaps`: the files and devices in use as swap.

use super::blockdev::{dev_major, dev_minor};
use super::mountinfo::unescape_mount_bytes;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::PathBuf;

/// File names listed in a /proc/swaps text (escapes undone).
pub fn parse_swaps(text: &str) -> Vec<PathBuf> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|f| PathBuf::from(OsString::from_vec(unescape_mount_bytes(f))))
        .collect()
}

/// `(major, minor, name)` of the block devices used as swap.
pub fn swap_devices() -> Vec<(u32, u32, PathBuf)> {
    let text = std::fs::read_to_string("/proc/swaps").unwrap_or_default();
    parse_swaps(&text)
        .into_iter()
        .filter_map(|p| {
            let m = std::fs::metadata(&p).ok()?;
            if m.file_type().is_block_device() {
                Some((dev_major(m.rdev()), dev_minor(m.rdev()), p))
            } else {
                None
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_parsing() {
        let t = "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0   partition 1000 0 100\n/swap\\040file file 10 0 -2\n";
        assert_eq!(parse_swaps(t), vec![PathBuf::from("/dev/zram0"), PathBuf::from("/swap file")]);
        assert!(parse_swaps("Filename Type Size Used Priority\n").is_empty());
    }
}
