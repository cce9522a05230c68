//! `/proc/self/io`: the bytes a process read and wrote as the kernel
//! accounted them (task I/O accounting).

use crate::result::process_io::ProcessIo;

/// Parse the text of a /proc/PID/io file; unknown or malformed lines are skipped.
pub fn parse_proc_io(text: &str) -> ProcessIo {
    let mut io = ProcessIo::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        let v: u64 = v.trim().parse().unwrap_or(0);
        match k {
            "read_bytes" => io.read_bytes = v,
            "write_bytes" => io.write_bytes = v,
            "cancelled_write_bytes" => io.cancelled_write_bytes = v,
            "syscr" => io.syscr = v,
            "syscw" => io.syscw = v,
            _ => {}
        }
    }
    io
}

/// /proc/self/io now; zeros where the kernel has no task I/O accounting.
pub fn process_io() -> ProcessIo {
    parse_proc_io(&std::fs::read_to_string("/proc/self/io").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing() {
        let io = parse_proc_io("rchar: 1\nwchar: 2\nsyscr: 3\nsyscw: 4\nread_bytes: 5\nwrite_bytes: 6\ncancelled_write_bytes: 7\n");
        assert_eq!((io.syscr, io.syscw, io.read_bytes, io.write_bytes, io.cancelled_write_bytes), (3, 4, 5, 6, 7));
    }

    #[test]
    fn written_bytes_show_in_proc_io() {
        let before = process_io();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![1u8; 1 << 20]).unwrap();
        let d = process_io().since(&before);
        assert!(d.syscw >= 1);
    }
}
