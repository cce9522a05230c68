//! What fsbench may touch. (stub, being written)
use std::path::Path;

pub fn is_block_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).map(|m| m.file_type().is_block_device()).unwrap_or(false)
}

pub fn check_device_usable(path: &Path, allow_device: bool) -> Result<(), String> {
    if !allow_device {
        return Err(format!("{} is a block device; pass --allow-device", path.display()));
    }
    Ok(())
}
