//! The kernel's `struct blk_io_trace`: the record blktrace writes and the
//! ftrace `blk` tracer emits in binary mode, 48 bytes (little-endian on this
//! machine's kind) followed by `pdu_len` bytes of payload.
//!
//! Everything that reads or writes trace records goes through this file:
//! capture writes them, `files` splits them per CPU, the analysis and the
//! blkparse summary read them, replay re-issues them.

/// `magic` is `BLK_IO_TRACE_MAGIC | BLK_IO_TRACE_VERSION`.
pub const MAGIC: u32 = 0x6561_7400;
pub const VERSION: u32 = 0x07;
/// Size of the fixed part; the payload follows.
pub const HEADER_LEN: usize = 48;
/// No payload the kernel writes is near this; a larger `pdu_len` means the
/// stream is corrupt, not that a huge record follows.
pub const MAX_PDU: u16 = 4096;

/// Action codes (the low 16 bits of `action`), `__BLK_TA_*`.
pub mod act {
    pub const QUEUE: u16 = 1;
    pub const BACKMERGE: u16 = 2;
    pub const FRONTMERGE: u16 = 3;
    pub const GETRQ: u16 = 4;
    pub const SLEEPRQ: u16 = 5;
    pub const REQUEUE: u16 = 6;
    pub const ISSUE: u16 = 7;
    pub const COMPLETE: u16 = 8;
    pub const PLUG: u16 = 9;
    pub const UNPLUG_IO: u16 = 10;
    pub const UNPLUG_TIMER: u16 = 11;
    pub const INSERT: u16 = 12;
    pub const SPLIT: u16 = 13;
    pub const BOUNCE: u16 = 14;
    pub const REMAP: u16 = 15;
    pub const ABORT: u16 = 16;
    pub const DRV_DATA: u16 = 17;
    /// Not an action: set when an 8-byte cgroup id leads the payload.
    pub const CGROUP_FLAG: u16 = 1 << 8;
}

/// Category bits (the high 16 bits of `action`), `BLK_TC_*`.
pub mod cat {
    pub const READ: u16 = 1 << 0;
    pub const WRITE: u16 = 1 << 1;
    pub const FLUSH: u16 = 1 << 2;
    pub const SYNC: u16 = 1 << 3;
    pub const QUEUE: u16 = 1 << 4;
    pub const REQUEUE: u16 = 1 << 5;
    pub const ISSUE: u16 = 1 << 6;
    pub const COMPLETE: u16 = 1 << 7;
    pub const FS: u16 = 1 << 8;
    pub const PC: u16 = 1 << 9;
    pub const NOTIFY: u16 = 1 << 10;
    pub const AHEAD: u16 = 1 << 11;
    pub const META: u16 = 1 << 12;
    pub const DISCARD: u16 = 1 << 13;
    pub const DRV_DATA: u16 = 1 << 14;
    pub const FUA: u16 = 1 << 15;

    /// Every category: what blktrace traces without `-a`.
    pub const ALL: u16 = 0xffff;

    /// blktrace's names for the categories (its `-a` and the kernel's
    /// `act_mask`), bit by bit.
    pub const NAMES: [&str; 16] = [
        "read", "write", "flush", "sync", "queue", "requeue", "issue", "complete", "fs", "pc", "notify", "ahead", "meta", "discard",
        "drv_data", "fua",
    ];

    /// A comma-separated list of category names (as blktrace's `-a`,
    /// which may also be given several times: join them with commas).
    pub fn parse_mask(text: &str) -> Result<u16, String> {
        let mut mask = 0;
        for name in text.split(',').map(str::trim) {
            match NAMES.iter().position(|n| n.eq_ignore_ascii_case(name)) {
                Some(bit) => mask |= 1 << bit,
                None => {
                    return Err(format!("'{name}' is not a blktrace category; expected a comma-separated list of {}", NAMES.join(", ")))
                }
            }
        }
        Ok(mask)
    }

    /// The names of the categories in `mask`, comma-separated.
    pub fn mask_names(mask: u16) -> String {
        NAMES.iter().enumerate().filter(|(bit, _)| mask & (1 << bit) != 0).map(|(_, n)| *n).collect::<Vec<_>>().join(",")
    }
}

/// Notify records (category NOTIFY): `BLK_TN_*` in the action code.
pub mod notify {
    /// Payload: the process name (`comm`) of `pid`.
    pub const PROCESS: u16 = 0;
    pub const TIMESTAMP: u16 = 1;
    /// Payload: a text message.
    pub const MESSAGE: u16 = 2;
}

/// The fixed part of one record, decoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    pub magic: u32,
    pub sequence: u32,
    /// Nanoseconds; blktrace counts from the start of the trace.
    pub time: u64,
    /// In 512-byte sectors.
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    /// `(major << 20) | minor`, the kernel's internal `dev_t`.
    pub device: u32,
    /// A `__u32` on disk; no machine has more CPUs than this holds, and
    /// `Records` rejects a record whose upper half is set.
    pub cpu: u16,
    pub error: u16,
    pub pdu_len: u16,
}

impl Header {
    pub fn action_code(&self) -> u16 {
        (self.action & 0xffff) as u16 & !act::CGROUP_FLAG
    }
    pub fn category(&self) -> u16 {
        (self.action >> 16) as u16
    }
    pub fn has_cgroup(&self) -> bool {
        self.action & act::CGROUP_FLAG as u32 != 0
    }
    pub fn is_notify(&self) -> bool {
        self.category() & cat::NOTIFY != 0
    }
    pub fn is_write(&self) -> bool {
        self.category() & cat::WRITE != 0
    }
    pub fn is_pc(&self) -> bool {
        self.category() & cat::PC != 0
    }
    pub fn major(&self) -> u32 {
        self.device >> 20
    }
    pub fn minor(&self) -> u32 {
        self.device & 0xfffff
    }
    /// The record's length on disk, payload included.
    pub fn record_len(&self) -> usize {
        HEADER_LEN + self.pdu_len as usize
    }

    pub fn decode(b: &[u8; HEADER_LEN]) -> Header {
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        let u16_at = |o: usize| u16::from_le_bytes(b[o..o + 2].try_into().unwrap());
        Header {
            magic: u32_at(0),
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u16_at(40),
            error: u16_at(44),
            pdu_len: u16_at(46),
        }
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[0..4].copy_from_slice(&self.magic.to_le_bytes());
        b[4..8].copy_from_slice(&self.sequence.to_le_bytes());
        b[8..16].copy_from_slice(&self.time.to_le_bytes());
        b[16..24].copy_from_slice(&self.sector.to_le_bytes());
        b[24..28].copy_from_slice(&self.bytes.to_le_bytes());
        b[28..32].copy_from_slice(&self.action.to_le_bytes());
        b[32..36].copy_from_slice(&self.pid.to_le_bytes());
        b[36..40].copy_from_slice(&self.device.to_le_bytes());
        // 42..44 is the cpu field's upper half, zero.
        b[40..42].copy_from_slice(&self.cpu.to_le_bytes());
        b[44..46].copy_from_slice(&self.error.to_le_bytes());
        b[46..48].copy_from_slice(&self.pdu_len.to_le_bytes());
        b
    }
}

/// One record borrowed from a buffer: the header and its payload.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    pub h: Header,
    pub pdu: &'a [u8],
}

/// Where captured records go: the per-CPU blktrace files, a buffer in a
/// test, or the analysis directly. Capture calls `push` from its reader
/// thread, so an implementation should only copy or append.
pub trait RecordSink: Send {
    fn push(&mut self, rec: &Record<'_>) -> std::io::Result<()>;
    /// The capture is over: flush, and name the files written, if any.
    fn close(self: Box<Self>) -> std::io::Result<Vec<std::path::PathBuf>> {
        Ok(Vec::new())
    }
}

impl RecordSink for Vec<u8> {
    /// The records as one stream, in arrival order.
    fn push(&mut self, rec: &Record<'_>) -> std::io::Result<()> {
        self.extend_from_slice(&rec.h.encode());
        self.extend_from_slice(rec.pdu);
        Ok(())
    }
}

/// A stream that is not a sequence of records, and where it stops being one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// Byte offset of the record that could not be read.
    pub offset: u64,
    pub what: String,
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.offset, self.what)
    }
}

impl std::error::Error for FormatError {}

/// Walks the records of a byte buffer; `base` is the buffer's offset in its
/// file, so errors name the file's byte, not the buffer's.
pub struct Records<'a> {
    buf: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Records<'a> {
    pub fn new(buf: &'a [u8], base: u64) -> Records<'a> {
        Records { buf, pos: 0, base }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<Record<'a>, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = &self.buf[self.pos..];
        if rest.is_empty() {
            return None;
        }
        let offset = self.base + self.pos as u64;
        let fail = |what: String| {
            // A broken stream has no next record we could trust.
            Some(Err(FormatError { offset, what }))
        };
        let Some(head) = rest.first_chunk::<HEADER_LEN>() else {
            self.pos = self.buf.len();
            return fail(format!("a {HEADER_LEN}-byte record header, found {} bytes (truncated file)", rest.len()));
        };
        let h = Header::decode(head);
        if h.magic & 0xffff_ff00 != MAGIC {
            self.pos = self.buf.len();
            return fail(format!("magic 0x{:08x}, found 0x{:08x}", MAGIC | VERSION, h.magic));
        }
        if h.magic & 0xff != VERSION {
            self.pos = self.buf.len();
            return fail(format!("trace version {VERSION}, found {}", h.magic & 0xff));
        }
        let cpu_high = u16::from_le_bytes([head[42], head[43]]);
        if cpu_high != 0 {
            self.pos = self.buf.len();
            return fail(format!("a cpu number below 65536, found {}", u32::from_le_bytes([head[40], head[41], head[42], head[43]])));
        }
        if h.pdu_len > MAX_PDU {
            self.pos = self.buf.len();
            return fail(format!("a payload of at most {MAX_PDU} bytes, found pdu_len {}", h.pdu_len));
        }
        if rest.len() < h.record_len() {
            self.pos = self.buf.len();
            return fail(format!("{} payload bytes, found {} (truncated file)", h.pdu_len, rest.len() - HEADER_LEN));
        }
        self.pos += h.record_len();
        Some(Ok(Record { h, pdu: &rest[HEADER_LEN..h.record_len()] }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_masks_read_and_print_blktraces_names() {
        assert_eq!(cat::parse_mask("issue,complete"), Ok(cat::ISSUE | cat::COMPLETE));
        assert_eq!(cat::parse_mask(" Write , sync"), Ok(cat::WRITE | cat::SYNC));
        assert_eq!(cat::parse_mask(&cat::NAMES.join(",")), Ok(cat::ALL));
        assert_eq!(cat::mask_names(cat::QUEUE | cat::FUA), "queue,fua");
        let e = cat::parse_mask("issue,dispatch").unwrap_err();
        assert!(e.contains("'dispatch'") && e.contains("drv_data"), "{e}");
        assert!(cat::parse_mask("").is_err());
    }

    fn sample(pdu: &[u8]) -> Vec<u8> {
        let h = Header {
            magic: MAGIC | VERSION,
            sequence: 3,
            time: 1_000_000,
            sector: 2048,
            bytes: 4096,
            action: ((cat::WRITE | cat::QUEUE) as u32) << 16 | act::QUEUE as u32,
            pid: 42,
            device: 7 << 20 | 1,
            cpu: 1,
            error: 0,
            pdu_len: pdu.len() as u16,
        };
        let mut v = h.encode().to_vec();
        v.extend_from_slice(pdu);
        v
    }

    #[test]
    fn layout_is_the_kernels() {
        // struct blk_io_trace: ... device u32 @36, cpu u32 @40, error u16 @44, pdu_len u16 @46.
        let b = sample(b"ab");
        assert_eq!(u32::from_le_bytes(b[40..44].try_into().unwrap()), 1);
        assert_eq!(u16::from_le_bytes(b[46..48].try_into().unwrap()), 2);
        let mut big = sample(b"");
        big[42] = 1;
        let e = Records::new(&big, 0).next().unwrap().unwrap_err();
        assert!(e.what.contains("cpu number"), "{e}");
    }

    #[test]
    fn round_trip_and_fields() {
        let mut buf = sample(b"abc");
        buf.extend(sample(b""));
        let recs: Vec<_> = Records::new(&buf, 0).collect::<Result<_, _>>().unwrap();
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].pdu, b"abc");
        let h = recs[0].h;
        assert_eq!((h.major(), h.minor(), h.action_code()), (7, 1, act::QUEUE));
        assert!(h.is_write() && !h.is_notify());
        assert_eq!(Header::decode(&h.encode()), h);
    }

    #[test]
    fn errors_name_the_offset() {
        let mut buf = sample(b"abc");
        let good = buf.len();
        buf.extend(&sample(b"xyz")[..50]);
        let errs: Vec<_> = Records::new(&buf, 100).filter_map(|r| r.err()).collect();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].offset, 100 + good as u64);
        assert!(errs[0].what.contains("truncated"), "{}", errs[0]);

        let mut bad = sample(b"");
        bad[3] = 0;
        let e = Records::new(&bad, 0).next().unwrap().unwrap_err();
        assert!(e.what.contains("magic"), "{e}");
    }
}
