//! Data verification of a fio-style job (fio's `verify=` family): which
//! checksum, which fill pattern, where headers go, when the read-back runs.
//! Plain data; the runner writes and checks the headers.

use serde::Serialize;

/// How each block is checked (fio `verify=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerifyMethod {
    Md5,
    Crc64,
    Crc32c,
    /// crc32c computed with the CPU's instruction where it has one (fio's name).
    Crc32cIntel,
    Crc32,
    Crc16,
    Crc7,
    Sha1,
    Sha256,
    Sha512,
    Sha3_224,
    Sha3_256,
    Sha3_384,
    Sha3_512,
    Xxhash,
    /// The header alone (offset, length, sequence number, header checksum).
    Meta,
    /// No header: every byte must be `verify_pattern`.
    Pattern,
    /// Reads back without checking anything (fio: "pretend to verify").
    Null,
}

/// fio's names, in fio's order.
pub const METHODS: &[(&str, VerifyMethod)] = &[
    ("md5", VerifyMethod::Md5),
    ("crc64", VerifyMethod::Crc64),
    ("crc32", VerifyMethod::Crc32),
    ("crc32c-intel", VerifyMethod::Crc32cIntel),
    ("crc32c", VerifyMethod::Crc32c),
    ("crc16", VerifyMethod::Crc16),
    ("crc7", VerifyMethod::Crc7),
    ("sha1", VerifyMethod::Sha1),
    ("sha256", VerifyMethod::Sha256),
    ("sha512", VerifyMethod::Sha512),
    ("sha3-224", VerifyMethod::Sha3_224),
    ("sha3-256", VerifyMethod::Sha3_256),
    ("sha3-384", VerifyMethod::Sha3_384),
    ("sha3-512", VerifyMethod::Sha3_512),
    ("xxhash", VerifyMethod::Xxhash),
    ("meta", VerifyMethod::Meta),
    ("pattern", VerifyMethod::Pattern),
    ("null", VerifyMethod::Null),
];

/// Bytes of the common block header: magic, method, length, seed, offset,
/// time, thread, sequence number and the header's own crc32c.
pub const HEADER_LEN: u64 = 40;

impl VerifyMethod {
    pub fn name(self) -> &'static str {
        METHODS.iter().find(|(_, m)| *m == self).map(|(n, _)| *n).unwrap_or("?")
    }

    /// Bytes of the data checksum stored after the header.
    pub fn checksum_len(self) -> u64 {
        use VerifyMethod::*;
        match self {
            Md5 => 16,
            Crc64 => 8,
            Crc32c | Crc32cIntel | Crc32 | Xxhash => 4,
            Crc16 => 2,
            Crc7 => 1,
            Sha1 => 20,
            Sha256 | Sha3_256 => 32,
            Sha512 | Sha3_512 => 64,
            Sha3_224 => 28,
            Sha3_384 => 48,
            Meta | Pattern | Null => 0,
        }
    }

    /// Bytes at the start of every verify interval that are not data: the
    /// header and the checksum (none for `pattern` and `null`).
    pub fn header_len(self) -> u64 {
        match self {
            VerifyMethod::Pattern | VerifyMethod::Null => 0,
            m => HEADER_LEN + m.checksum_len(),
        }
    }

    /// Identifier stored in the header.
    pub fn code(self) -> u16 {
        METHODS.iter().position(|(_, m)| *m == self).map(|i| i as u16 + 1).unwrap_or(0)
    }

    pub fn from_code(code: u16) -> Option<VerifyMethod> {
        METHODS.get((code as usize).checked_sub(1)?).map(|(_, m)| *m)
    }
}

/// `verify_pattern`: bytes repeated from the start of each block; `%o`
/// places the block's offset (8 bytes, little-endian) at `offset_at`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerifyPattern {
    pub bytes: Vec<u8>,
    pub offset_at: Vec<usize>,
}

/// Every verification setting of a job.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VerifySpec {
    /// None: no verification (fio `verify=0`).
    pub method: Option<VerifyMethod>,
    pub pattern: Option<VerifyPattern>,
    /// Bytes per header (fio `verify_interval`); 0 = fio's default (the
    /// write block size, or its gcd over variable sizes).
    pub interval: u64,
    /// Where in each interval the header is stored (fio `verify_offset`).
    pub offset: u64,
    /// Read back after writing (fio `do_verify`).
    pub do_verify: bool,
    /// Do not write: check what an earlier run of the same job wrote.
    pub only: bool,
    /// Verify after every N blocks written (0 = after the write phase).
    pub backlog: u64,
    /// Blocks per backlog verification (0 = `backlog`).
    pub backlog_batch: u64,
    /// Stop checking a block's further intervals at the first failure.
    pub fatal: bool,
    /// Write the received and expected data of a failed block to files.
    pub dump: bool,
    /// fio's verifier threads; fsbench verifies in the job's thread.
    pub async_threads: u32,
    pub state_save: bool,
    pub state_load: bool,
}

impl Default for VerifySpec {
    fn default() -> Self {
        VerifySpec {
            method: None,
            pattern: None,
            interval: 0,
            offset: 0,
            do_verify: true,
            only: false,
            backlog: 0,
            backlog_batch: 0,
            fatal: false,
            dump: false,
            async_threads: 0,
            state_save: true,
            state_load: false,
        }
    }
}

impl VerifySpec {
    pub fn enabled(&self) -> bool {
        self.method.is_some()
    }

    /// fio's resolved interval for write block sizes `min..=max`: the given
    /// one if it divides both, else the gcd of the two.
    pub fn effective_interval(&self, min_bs: u64, max_bs: u64) -> u64 {
        let mut iv = if self.interval == 0 && min_bs != max_bs { min_bs } else { self.interval };
        if iv > min_bs {
            iv = min_bs;
        }
        if iv == 0 || min_bs % iv != 0 || max_bs % iv != 0 {
            iv = gcd(min_bs, max_bs);
        }
        iv.max(1)
    }
}

pub fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_names_are_fios() {
        for (name, m) in METHODS {
            assert_eq!(VerifyMethod::from_code(m.code()), Some(*m));
            assert_eq!(m.name(), *name);
        }
        assert_eq!(VerifyMethod::from_code(0), None);
    }

    #[test]
    fn interval_follows_fio() {
        let v = VerifySpec::default();
        assert_eq!(v.effective_interval(4096, 4096), 4096);
        assert_eq!(v.effective_interval(4096, 16384), 4096);
        assert_eq!(v.effective_interval(4096, 6144), 2048);
        let v = VerifySpec { interval: 512, ..VerifySpec::default() };
        assert_eq!(v.effective_interval(4096, 4096), 512);
        let v = VerifySpec { interval: 3000, ..VerifySpec::default() };
        assert_eq!(v.effective_interval(4096, 4096), 4096);
    }
}
