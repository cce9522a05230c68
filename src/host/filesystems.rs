//! `/proc/filesystems`: the file system types the running kernel knows.

/// Whether the running kernel lists `fs` in /proc/filesystems (false when
/// the file cannot be read).
pub fn kernel_lists(fs: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems").unwrap_or_default().split_whitespace().any(|w| w == fs)
}
