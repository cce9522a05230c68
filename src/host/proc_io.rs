//! `/proc/self/io`: the bytes a process read and wrote as the kernel
//! accounted them (task I/O accounting).

use serde::{Deserialize, Serialize};

/// Bytes the process read and wrote as the kernel saw them (/proc/self/io).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ProcessIo {
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub cancelled_write_bytes: u64,
    pub syscr: u64,
    pub syscw: u64,
}

impl ProcessIo {
    pub fn since(&self, before: &ProcessIo) -> ProcessIo {
        ProcessIo {
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
            cancelled_write_bytes: self.cancelled_write_bytes.saturating_sub(before.cancelled_write_bytes),
            syscr: self.syscr.saturating_sub(before.syscr),
            syscw: self.syscw.saturating_sub(before.syscw),
        }
    }
}

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
        let d = io.since(&ProcessIo { write_bytes: 10, syscr: 1, ..Default::default() });
        assert_eq!((d.syscr, d.write_bytes), (2, 0));
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
