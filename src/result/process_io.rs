//! What a process read and wrote as the kernel accounted it (task I/O
//! accounting, `/proc/PID/io`); `host::proc_io` reads it.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_subtracts_and_saturates() {
        let io = ProcessIo { read_bytes: 5, write_bytes: 6, cancelled_write_bytes: 7, syscr: 3, syscw: 4 };
        let d = io.since(&ProcessIo { write_bytes: 10, syscr: 1, ..Default::default() });
        assert_eq!((d.syscr, d.syscw, d.read_bytes, d.write_bytes, d.cancelled_write_bytes), (2, 4, 5, 0, 7));
    }
}
