//! YCSB 0.17 CoreWorkload's generators: key names, the key choosers of
//! `requestdistribution`, the operation mix, field and scan lengths, the
//! insert-key counters and the `dataintegrity` values. The algorithms and
//! constants are YCSB's (`site.ycsb.generator`, `CoreWorkload`, `Utils`);
//! only the random source is fsbench's (`Rng`, one per client thread), so
//! draws match YCSB's in distribution, and everything deterministic (keys,
//! hashes, zeta sums, integrity values) matches it exactly, which
//! `tests/data/ycsb` (made by Java YCSB itself) checks.

mod counter;
mod keys;
mod numbers;
mod zipfian;

#[cfg(test)]
mod tests;

pub use counter::{AcknowledgedCounter, InsertKeys, TooManyUnacknowledged, ACK_WINDOW};
pub use keys::KeyChooser;
pub use numbers::{Exponential, FieldLengthGen, Histogram, Hotspot, ScanLengthGen, Sequential, Uniform};
pub use zipfian::{zeta, ScrambledZipfian, SkewedLatest, Zipfian, SCRAMBLED_ITEM_COUNT, SCRAMBLED_ZETAN, ZIPFIAN_CONSTANT};

use crate::model::ycsb::Proportions;
use crate::runner::rng::Rng;

const FNV_OFFSET_BASIS: u64 = 0xCBF2_9CE4_8422_2325;
const FNV_PRIME: u64 = 1_099_511_628_211;

/// YCSB's `Utils.fnvhash64`: FNV-1a over the 8 octets, low byte first, then
/// the absolute value of the result read as a signed long. The bits are
/// returned as `u64`; Java's `Math.abs(Long.MIN_VALUE)` stays negative, so
/// that one value comes back as `1 << 63` (read it `as i64` to see Java's).
#[inline]
pub fn fnv64(v: u64) -> u64 {
    let mut h = FNV_OFFSET_BASIS;
    for i in 0..8 {
        h ^= (v >> (8 * i)) & 0xff;
        h = h.wrapping_mul(FNV_PRIME);
    }
    (h as i64).wrapping_abs() as u64
}

/// Two ASCII digits for every value below 100, so a key costs one division
/// per two digits.
const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

#[inline]
fn pair(x: u32, out: &mut [u8]) {
    let at = x as usize * 2;
    out[..2].copy_from_slice(&DIGIT_PAIRS[at..at + 2]);
}

/// Exactly 8 digits of `x` (< 10^8), leading zeros included.
#[inline]
fn eight_digits(x: u32, out: &mut [u8]) {
    let (hi, lo) = (x / 10_000, x % 10_000);
    pair(hi / 100, &mut out[0..2]);
    pair(hi % 100, &mut out[2..4]);
    pair(lo / 100, &mut out[4..6]);
    pair(lo % 100, &mut out[6..8]);
}

/// The digits of `x` without leading zeros, ending at `end`; returns where
/// they start.
#[inline]
fn digits_upto(mut x: u32, buf: &mut [u8], end: usize) -> usize {
    let mut at = end;
    while x >= 100 {
        at -= 2;
        pair(x % 100, &mut buf[at..at + 2]);
        x /= 100;
    }
    if x >= 10 {
        at -= 2;
        pair(x, &mut buf[at..at + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + x as u8;
    }
    at
}

/// Writes the decimal digits of `v` at the end of `buf`, returns where they
/// start. Hashed keys have 18–19 digits, so the number is cut into 8-digit
/// pieces converted independently rather than one long division chain.
#[inline]
fn decimal(v: u64, buf: &mut [u8; 20]) -> usize {
    const E8: u64 = 100_000_000;
    if v < E8 {
        return digits_upto(v as u32, buf, 20);
    }
    eight_digits((v % E8) as u32, &mut buf[12..20]);
    let top = v / E8;
    if top < E8 {
        return digits_upto(top as u32, buf, 12);
    }
    eight_digits((top % E8) as u32, &mut buf[4..12]);
    digits_upto((top / E8) as u32, buf, 4)
}

/// YCSB's `CoreWorkload.buildKeyName`: "user", then the key number (its
/// `fnv64` when `hashed`, i.e. `insertorder=hashed`) in decimal, zero-padded
/// on the left to `zeropadding` characters. Replaces `out`'s contents and
/// allocates only if `out` is too small. Java prints the number as a signed
/// long and counts a minus sign toward the padding; so does this.
#[inline]
pub fn key_name(keynum: u64, hashed: bool, zeropadding: u32, out: &mut Vec<u8>) {
    let v = if hashed { fnv64(keynum) } else { keynum } as i64;
    let mut digits = [0u8; 20];
    let start = decimal(v.unsigned_abs(), &mut digits);
    let len = digits.len() - start + (v < 0) as usize;
    let fill = (zeropadding as usize).saturating_sub(len);
    out.clear();
    out.reserve(4 + fill + len);
    out.extend_from_slice(b"user");
    if fill > 0 {
        out.resize(4 + fill, b'0');
    }
    if v < 0 {
        out.push(b'-');
    }
    out.extend_from_slice(&digits[start..]);
}

/// Walks YCSB's `CoreWorkload.buildDeterministicValue(key, field)` for a
/// field of `size` characters, handing each character's position and byte
/// to `sink` until it returns false. Java builds `key:field`, then while
/// shorter than `size` appends ':' and the `String.hashCode` of everything
/// so far (':' included), and cuts the result to `size`; the hash is kept
/// running here, so no string is built. Characters are UTF-16 units as in
/// Java, stored as their low byte as YCSB's `StringByteIterator` does.
fn integrity_walk(key: &[u8], field: &str, size: usize, mut sink: impl FnMut(usize, u8) -> bool) -> bool {
    let mut pos = 0usize;
    let mut hash = 0i32;
    let mut put = |unit: u16, pos: &mut usize, hash: &mut i32| -> bool {
        *hash = hash.wrapping_mul(31).wrapping_add(unit as i32);
        let keep = *pos >= size || sink(*pos, unit as u8);
        *pos += 1;
        keep
    };
    let head = key.iter().map(|&b| b as u16).chain(std::iter::once(b':' as u16)).chain(field.encode_utf16());
    for unit in head {
        if !put(unit, &mut pos, &mut hash) {
            return false;
        }
    }
    while pos < size {
        if !put(b':' as u16, &mut pos, &mut hash) {
            return false;
        }
        let h = hash;
        let mut digits = [0u8; 20];
        let start = decimal(h.unsigned_abs() as u64, &mut digits);
        if h < 0 && !put(b'-' as u16, &mut pos, &mut hash) {
            return false;
        }
        for &d in &digits[start..] {
            if !put(d as u16, &mut pos, &mut hash) {
                return false;
            }
        }
    }
    true
}

/// Fills `out` with the value YCSB's `dataintegrity=true` writes for `field`
/// of `key` when the field length is `out.len()`.
pub fn integrity_value(key: &[u8], field: &str, out: &mut [u8]) {
    let size = out.len();
    integrity_walk(key, field, size, |pos, b| {
        out[pos] = b;
        true
    });
}

/// Whether `value` is what YCSB's `dataintegrity=true` writes for `field` of
/// `key` with field length `len`, checked without building it. (A shorter
/// value is a prefix of the longer one, so the length must be given.)
pub fn integrity_matches(key: &[u8], field: &str, len: usize, value: &[u8]) -> bool {
    value.len() == len && integrity_walk(key, field, len, |pos, b| value[pos] == b)
}

/// A run-phase operation, as CoreWorkload's operation chooser names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Read,
    Update,
    Insert,
    Scan,
    ReadModifyWrite,
}

impl Op {
    /// In YCSB's order (the order `createOperationGenerator` adds them).
    pub const ALL: [Op; 5] = [Op::Read, Op::Update, Op::Insert, Op::Scan, Op::ReadModifyWrite];

    /// The name YCSB measures and reports the operation under.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "READ",
            Op::Update => "UPDATE",
            Op::Insert => "INSERT",
            Op::Scan => "SCAN",
            Op::ReadModifyWrite => "READ-MODIFY-WRITE",
        }
    }
}

/// YCSB's `DiscreteGenerator` over the proportions: operations with a
/// weight above 0, in `Op::ALL` order, each chosen with its weight over the
/// weights' sum (which need not be 1).
#[derive(Clone, Debug)]
pub struct OpChooser {
    /// (weight / sum, op), the first `len` entries used.
    ops: [(f64, Op); 5],
    len: usize,
}

impl OpChooser {
    pub fn new(p: &Proportions) -> Result<OpChooser, String> {
        let given = [
            ("readproportion", p.read),
            ("updateproportion", p.update),
            ("insertproportion", p.insert),
            ("scanproportion", p.scan),
            ("readmodifywriteproportion", p.read_modify_write),
        ];
        if let Some((name, w)) = given.iter().find(|(_, w)| !w.is_finite()) {
            return Err(format!("{name}={w}: expected a finite number"));
        }
        let sum: f64 = given.iter().map(|&(_, w)| w).filter(|&w| w > 0.0).sum();
        let mut ops = [(0.0, Op::Read); 5];
        let mut len = 0;
        for (&(_, w), op) in given.iter().zip(Op::ALL) {
            if w > 0.0 {
                ops[len] = (w / sum, op);
                len += 1;
            }
        }
        if len == 0 {
            return Err("readproportion, updateproportion, insertproportion, scanproportion and \
                        readmodifywriteproportion: expected at least one above 0"
                .to_string());
        }
        Ok(OpChooser { ops, len })
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> Op {
        // Subtracting each share in turn, as YCSB does, keeps its rounding.
        let mut val = rng.next_f64();
        for &(share, op) in &self.ops[..self.len] {
            if val < share {
                return op;
            }
            val -= share;
        }
        // Only rounding gets here (YCSB throws); the last op is the one
        // whose share the rounding cut.
        self.ops[self.len - 1].1
    }
}
