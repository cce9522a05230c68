//! Reading the files a user names as input (job files, workload files,
//! command files, experiment files, result files), bounded: a regular file
//! of at most `MAX_BYTES`. `/dev/zero` or a disk given by mistake is refused
//! with its kind, never read into memory. A leaf: it imports nothing from
//! the crate.

use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::Path;

/// No input fsbench reads is anywhere near this; a larger file is a mistake.
pub const MAX_BYTES: u64 = 16 << 20;

/// The file's bytes, or why not (without the path: callers name it).
/// `what` names the expected kind of file, e.g. "job file".
pub fn read(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        _ => e.to_string(),
    })?;
    let ft = meta.file_type();
    if ft.is_block_device() {
        return Err(format!("this is a block device, not a {what}: to benchmark the device, name it with --filename=DEV --allow-device"));
    }
    if !ft.is_file() {
        let kind = if ft.is_dir() {
            "a directory"
        } else if ft.is_char_device() {
            "a character device"
        } else if ft.is_fifo() {
            "a FIFO"
        } else if ft.is_socket() {
            "a socket"
        } else {
            "not a regular file"
        };
        return Err(format!("this is {kind}, not a {what} (expected a regular file)"));
    }
    let too_big = || format!("{} bytes is more than a {what} can be (at most {} MiB)", meta.len(), MAX_BYTES >> 20);
    if meta.len() > MAX_BYTES {
        return Err(too_big());
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    let f = std::fs::File::open(path).map_err(|e| e.to_string())?;
    // The file may grow while it is read: never take more than the bound.
    f.take(MAX_BYTES + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_BYTES {
        return Err(too_big());
    }
    Ok(bytes)
}

/// `read`, as UTF-8 text.
pub fn read_text(path: &Path, what: &str) -> Result<String, String> {
    String::from_utf8(read(path, what)?).map_err(|e| format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()))
}

/// At most `max` bytes from the start of a file (fio's `'file'` in a
/// pattern, which takes what fits and leaves the rest). Bounded by `max`,
/// so any kind of file will do, as in fio.
pub fn read_prefix(path: &Path, max: usize) -> Result<Vec<u8>, String> {
    let f = std::fs::File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".to_string(),
        _ => e.to_string(),
    })?;
    let mut bytes = Vec::with_capacity(max);
    f.take(max as u64).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bounded_regular_files_are_read() {
        let d = tempfile::tempdir().unwrap();
        let ok = d.path().join("a.fio");
        std::fs::write(&ok, "[x]\n").unwrap();
        assert_eq!(read_text(&ok, "job file").unwrap(), "[x]\n");
        assert!(read(Path::new("/dev/zero"), "job file").unwrap_err().contains("character device, not a job file"));
        assert!(read(d.path(), "job file").unwrap_err().contains("a directory"));
        assert!(read(&d.path().join("missing"), "job file").unwrap_err().contains("no such file"));
        let big = d.path().join("big");
        std::fs::File::create(&big).unwrap().set_len(MAX_BYTES + 1).unwrap();
        assert!(read(&big, "job file").unwrap_err().contains("at most 16 MiB"));
    }
}
