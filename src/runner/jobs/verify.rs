//! Data verification of one worker (fio's `verify=`): headers written into
//! each block, the record of what was written, and the checks when the
//! blocks are read back.
//!
//! The write path stays lean: each buffer slot holds content generated from
//! a seed once, whose data checksums are computed before the measured window;
//! a write only stamps the header (offset, sequence number, header crc32c)
//! into its slot. Content that changes per write (refill_buffers, a `%o`
//! pattern) is the exception, with its checksum at write time as in fio.
//!
//! Header (40 bytes, little-endian): magic 0xacca u16, method u16, interval
//! length u32, seed u64, offset u64, seconds u32, nanoseconds u32 (since the
//! job started), thread u16, sequence number u16, crc32c of the 36 bytes
//! before it u32; then the data checksum.

use super::checksum::{self, crc32c, MAX_LEN};
use crate::model::job::{BufferContent, JobSpec, WRITE};
use crate::model::verify::{gcd, VerifyMethod, VerifyPattern, HEADER_LEN};
pub use crate::result::verify::VerifyStats;
use crate::runner::buffers;
use crate::runner::rng::Rng;
use std::collections::VecDeque;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

pub const MAGIC: u16 = 0xacca;
const HL: usize = HEADER_LEN as usize;

#[derive(Clone, Copy, PartialEq, Eq)]
enum SlotState {
    /// Content as generated: data in place, headers not yet moved.
    Fresh,
    /// Stamped before: only the header needs rewriting.
    Ready,
    /// A read overwrote it: regenerate before the next write.
    Dirty,
}

/// The blocks written and not yet verified of one file: one entry per
/// `unit` bytes, nonzero at a block's first unit (its length in units,
/// sequence number and slot). A dense array costs 8 bytes per unit,
/// allocated lazily by the kernel, and never allocates while writing.
struct FileMap {
    start: u64,
    unit: u64,
    entries: Vec<u64>,
}

/// A block to read back and what its headers must say.
#[derive(Clone, Copy, Debug)]
pub struct Expect {
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    pub numberio: Option<u16>,
    pub seed: Option<u64>,
}

/// One write to stamp headers for.
pub struct Stamp {
    pub offset: u64,
    pub len: usize,
    pub numberio: u16,
    pub now: Instant,
}

pub struct Verifier {
    pub method: VerifyMethod,
    /// Header plus checksum bytes at the start of each interval.
    hl: usize,
    clen: usize,
    pub interval: usize,
    voff: usize,
    pattern: Option<VerifyPattern>,
    per_write: bool,
    refill: bool,
    content: BufferContent,
    seeds: Vec<u64>,
    state: Vec<SlotState>,
    /// Data checksum per (slot, interval), `clen` bytes each.
    sums: Vec<u8>,
    per_slot: usize,
    maps: Vec<FileMap>,
    /// Max units one block spans: how far back an overlapping block may start.
    max_units: u64,
    queue: VecDeque<(u32, u64)>,
    pub backlog: u64,
    pub batch: u64,
    pub check_numberio: bool,
    pub check_seed: bool,
    /// Checks happen (not `null`, not a fake engine).
    pub checks: bool,
    fatal: bool,
    dump: bool,
    thread: u16,
    t0: Instant,
    paths: Vec<PathBuf>,
    pub stats: VerifyStats,
    /// Seeds of refilled content: apart from the job's generator, whose
    /// sequence of offsets a verify_only run must repeat.
    rng: Rng,
    /// The first failure, for the job's error.
    pub first_failure: Option<String>,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Verifier {
    /// `slots` buffers of `slot_len` bytes; `regions` are (start, end) per file.
    pub fn new(spec: &JobSpec, clone: u32, slots: usize, paths: Vec<PathBuf>, regions: &[(u64, u64)], fake_io: bool) -> Verifier {
        let v = &spec.verify;
        let method = v.method.unwrap_or(VerifyMethod::Null);
        let (wmin, wmax) = (spec.bs[WRITE].min(), spec.bs[WRITE].max());
        let interval =
            if spec.rw.writes() { v.effective_interval(wmin, wmax) } else { v.effective_interval(spec.bs[0].min(), spec.bs[0].max()) }
                as usize;
        let mut sizes: Vec<u64> = match &spec.bs[WRITE] {
            crate::model::job::BlockSize::Split(s) => s.iter().map(|x| x.0).collect(),
            b => vec![b.min(), b.max()],
        };
        if let crate::model::job::BlockSize::Range { min, .. } = spec.bs[WRITE] {
            sizes.push(min);
        }
        let unit = sizes.iter().fold(0, |g, &s| gcd(g, s)).max(1);
        let maps = if spec.rw.writes() {
            regions.iter().map(|&(s, e)| FileMap { start: s, unit, entries: vec![0; ((e - s) / unit + 1) as usize] }).collect()
        } else {
            Vec::new()
        };
        let per_write = spec.buffer.refill || v.pattern.as_ref().is_some_and(|p| !p.offset_at.is_empty());
        let fixed = spec.bs[WRITE].is_fixed();
        let seeds: Vec<u64> = (0..slots).map(|s| mix(spec.randseed ^ ((clone as u64) << 32) ^ (s as u64 + 1))).collect();
        let backlog = v.backlog;
        Verifier {
            method,
            hl: method.header_len() as usize,
            clen: method.checksum_len() as usize,
            interval,
            voff: v.offset as usize,
            pattern: v.pattern.clone(),
            per_write,
            refill: spec.buffer.refill,
            content: spec.buffer.clone(),
            seeds,
            state: vec![SlotState::Dirty; slots],
            sums: Vec::new(),
            per_slot: 0,
            maps,
            max_units: spec.bs[WRITE].max().div_ceil(unit),
            queue: VecDeque::with_capacity(if backlog > 0 { (backlog as usize) + slots + 1 } else { 0 }),
            backlog,
            batch: if v.backlog_batch > 0 { v.backlog_batch } else { backlog },
            check_numberio: spec.rw.writes() && fixed && !spec.time_based && !v.only,
            check_seed: spec.rw.writes() && !per_write && !v.only,
            checks: method != VerifyMethod::Null && !fake_io,
            fatal: v.fatal,
            dump: v.dump,
            thread: clone as u16 + 1,
            t0: Instant::now(),
            paths,
            stats: VerifyStats { method: method.name().to_string(), ..VerifyStats::default() },
            rng: Rng::new(mix(spec.randseed ^ 0x5eed ^ clone as u64)),
            first_failure: None,
        }
    }

    /// Generate every slot's content and its data checksums (before the
    /// measured window). `slot_len` is the slots' size.
    pub fn prepare(&mut self, slot_ptrs: &[*mut u8], slot_len: usize) {
        self.per_slot = slot_len / self.interval;
        self.sums = vec![0; slot_ptrs.len() * self.per_slot * self.clen];
        for (s, &p) in slot_ptrs.iter().enumerate() {
            // SAFETY: each pointer is a distinct slot of `slot_len` bytes of
            // the worker's Buffers, unused by any engine before the run.
            let buf = unsafe { std::slice::from_raw_parts_mut(p, slot_len) };
            self.regenerate(s, buf, 0);
        }
    }

    /// A block's content as written from `seed` (for dumps; allocates).
    fn fill_content(&self, buf: &mut [u8], seed: u64, block_offset: u64) {
        if self.pattern.is_some() {
            self.fill_pattern_in_place(buf, block_offset);
        } else {
            buffers::fill_verify(buf, &self.content, &mut Rng::new(seed));
        }
    }

    /// Content from the slot's seed and its checksums.
    fn regenerate(&mut self, slot: usize, buf: &mut [u8], block_offset: u64) {
        let seed = self.seeds[slot];
        if self.pattern.is_some() {
            self.fill_pattern_in_place(buf, block_offset);
        } else {
            buffers::fill_verify(buf, &self.content, &mut Rng::new(seed));
        }
        self.checksum_slot(slot, buf);
        self.state[slot] = SlotState::Fresh;
    }

    /// The pattern without allocating (the write path may call this).
    fn fill_pattern_in_place(&self, buf: &mut [u8], block_offset: u64) {
        for (i, b) in buf.iter_mut().enumerate() {
            *b = self.pattern_byte(i, block_offset);
        }
    }

    fn checksum_slot(&mut self, slot: usize, buf: &[u8]) {
        if self.clen == 0 {
            return;
        }
        for k in 0..self.per_slot {
            let base = k * self.interval;
            let at = (slot * self.per_slot + k) * self.clen;
            let mut out = [0u8; MAX_LEN];
            checksum::digest(self.method, &buf[base + self.hl..base + self.interval], &mut out);
            self.sums[at..at + self.clen].copy_from_slice(&out[..self.clen]);
        }
    }

    /// A read (of the workload or a check) overwrote the slot.
    #[inline]
    pub fn dirty(&mut self, slot: usize) {
        self.state[slot] = SlotState::Dirty;
    }

    /// Put headers into slot `slot` (`buf` is the whole slot) for a write of
    /// `len` bytes at `offset`. No allocation.
    #[inline]
    pub fn stamp(&mut self, slot: usize, buf: &mut [u8], w: &Stamp) {
        let (offset, len, numberio) = (w.offset, w.len, w.numberio);
        if self.method == VerifyMethod::Null {
            return;
        }
        let mut seed = self.seeds[slot];
        if self.per_write {
            if self.refill {
                seed = self.rng.next_u64();
                self.seeds[slot] = seed;
                buffers::fill_verify(&mut buf[..len], &self.content, &mut Rng::new(seed));
            } else {
                self.fill_pattern_in_place(&mut buf[..len], offset);
            }
            if self.clen > 0 {
                for k in 0..len / self.interval {
                    let base = k * self.interval;
                    let at = (slot * self.per_slot + k) * self.clen;
                    let mut out = [0u8; MAX_LEN];
                    checksum::digest(self.method, &buf[base + self.hl..base + self.interval], &mut out);
                    self.sums[at..at + self.clen].copy_from_slice(&out[..self.clen]);
                }
            }
            self.state[slot] = SlotState::Fresh;
        } else if self.state[slot] == SlotState::Dirty {
            let whole = buf.len();
            self.regenerate(slot, &mut buf[..whole], 0);
        }
        if self.hl == 0 {
            return;
        }
        if self.voff > 0 && self.state[slot] == SlotState::Fresh {
            // The data under the header's new place moves to the interval's start.
            let upto = if self.per_write { len / self.interval } else { self.per_slot };
            for k in 0..upto {
                let base = k * self.interval;
                buf.copy_within(base + self.voff..base + self.voff + self.hl, base);
            }
        }
        self.state[slot] = SlotState::Ready;
        let t = w.now.saturating_duration_since(self.t0);
        for k in 0..len / self.interval {
            let at = k * self.interval + self.voff;
            let sum = (slot * self.per_slot + k) * self.clen;
            let h = &mut buf[at..at + self.hl];
            h[0..2].copy_from_slice(&MAGIC.to_le_bytes());
            h[2..4].copy_from_slice(&self.method.code().to_le_bytes());
            h[4..8].copy_from_slice(&(self.interval as u32).to_le_bytes());
            h[8..16].copy_from_slice(&seed.to_le_bytes());
            h[16..24].copy_from_slice(&(offset + (k * self.interval) as u64).to_le_bytes());
            h[24..28].copy_from_slice(&(t.as_secs() as u32).to_le_bytes());
            h[28..32].copy_from_slice(&t.subsec_nanos().to_le_bytes());
            h[32..34].copy_from_slice(&self.thread.to_le_bytes());
            h[34..36].copy_from_slice(&numberio.to_le_bytes());
            let crc = crc32c(&h[..36]);
            h[36..40].copy_from_slice(&crc.to_le_bytes());
            h[HL..HL + self.clen].copy_from_slice(&self.sums[sum..sum + self.clen]);
        }
    }

    /// The seed a write from `slot` carried (for the record).
    #[inline]
    pub fn slot_seed(&self, slot: usize) -> u64 {
        self.seeds[slot]
    }

    /// A write completed: remember it (replacing blocks it overlaps) and,
    /// with a backlog, queue it for an early check. No allocation.
    #[inline]
    pub fn logged(&mut self, file: u32, offset: u64, len: u64, numberio: u16, slot: usize) {
        let Some(m) = self.maps.get_mut(file as usize) else { return };
        let idx = ((offset - m.start) / m.unit) as usize;
        let units = len.div_ceil(m.unit) as usize;
        let end = (idx + units).min(m.entries.len());
        if self.max_units > 1 {
            let back = (self.max_units as usize - 1).min(idx);
            for i in idx - back..idx {
                let e = m.entries[i];
                if e != 0 && i + (e & 0xffff_ffff) as usize > idx {
                    m.entries[i] = 0;
                }
            }
            for e in &mut m.entries[idx + 1..end] {
                *e = 0;
            }
        }
        m.entries[idx] = (units as u64) | (numberio as u64) << 32 | (slot as u64 & 0xffff) << 48;
        if self.backlog > 0 && self.queue.len() < self.queue.capacity() {
            self.queue.push_back((file, offset));
        }
    }

    /// Enough completed writes wait for their backlog check.
    #[inline]
    pub fn backlog_due(&self) -> bool {
        self.backlog > 0 && self.queue.len() as u64 >= self.backlog
    }

    fn take(&mut self, file: u32, idx: usize) -> Option<Expect> {
        let m = &mut self.maps[file as usize];
        let e = std::mem::take(&mut m.entries[idx]);
        if e == 0 {
            return None;
        }
        let units = e & 0xffff_ffff;
        let slot = (e >> 48) as usize;
        Some(Expect {
            file,
            offset: m.start + idx as u64 * m.unit,
            len: (units * m.unit) as u32,
            numberio: self.check_numberio.then_some((e >> 32) as u16),
            seed: (self.check_seed && slot < self.seeds.len()).then(|| self.seeds[slot]),
        })
    }

    /// The next queued block of a backlog check, if it is still the latest.
    pub fn next_backlog(&mut self) -> Option<Expect> {
        while let Some((file, offset)) = self.queue.pop_front() {
            let m = &self.maps[file as usize];
            let idx = ((offset - m.start) / m.unit) as usize;
            if let Some(x) = self.take(file, idx) {
                return Some(x);
            }
        }
        None
    }

    /// The next block of the verify phase, in file and offset order, from
    /// `cursor` (file, index), which it advances.
    pub fn next_pending(&mut self, cursor: &mut (u32, usize)) -> Option<Expect> {
        while (cursor.0 as usize) < self.maps.len() {
            let n = self.maps[cursor.0 as usize].entries.len();
            while cursor.1 < n {
                let i = cursor.1;
                cursor.1 += 1;
                if let Some(x) = self.take(cursor.0, i) {
                    return Some(x);
                }
            }
            *cursor = (cursor.0 + 1, 0);
        }
        self.queue.clear();
        None
    }

    /// Check a block read back into `buf` (its `len` bytes). Failures are
    /// returned as fio words them, one entry per failed interval.
    pub fn check(&mut self, buf: &mut [u8], x: &Expect, out: &mut Vec<String>) {
        self.stats.blocks += 1;
        self.stats.bytes += x.len as u64;
        if !self.checks {
            return;
        }
        let len = x.len as usize;
        let iv = self.interval;
        let mut failed = false;
        for k in 0..len / iv {
            if failed && self.fatal {
                break;
            }
            let base = k * iv;
            let block = &mut buf[base..base + iv];
            if self.voff > 0 && self.hl > 0 {
                let (a, b) = block.split_at_mut(self.voff);
                a[..self.hl].swap_with_slice(&mut b[..self.hl]);
            }
            let here = x.offset + base as u64;
            if let Some(msg) = self.check_interval(block, x, here) {
                failed = true;
                out.push(msg);
            }
        }
        if failed {
            self.stats.mismatches += 1;
            if self.first_failure.is_none() {
                self.first_failure = out.first().map(|m| m.lines().next().unwrap_or("").to_string());
            }
        }
    }

    fn at(&self, x: &Expect, here: u64) -> String {
        format!(
            "at file {} offset {here}, length {} (requested block: offset={}, length={})",
            self.paths[x.file as usize].display(),
            self.interval,
            x.offset,
            x.len
        )
    }

    fn check_interval(&mut self, b: &[u8], x: &Expect, here: u64) -> Option<String> {
        let iv = self.interval;
        if self.method == VerifyMethod::Pattern {
            return self.check_pattern(b, 0, x, here, "pattern");
        }
        let rd16 = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let rd32 = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().expect("4 bytes"));
        let rd64 = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let header_fail = |this: &Self, what: String| {
            let msg = format!("verify: {what} {}", this.at(x, here));
            if this.dump {
                let note = this.dump_file(x.file, here, "hdr_fail", b);
                return format!("{msg}\n{note}");
            }
            msg
        };
        if rd16(0) != MAGIC {
            return Some(header_fail(self, format!("bad magic header {:x}, wanted {MAGIC:x}", rd16(0))));
        }
        if rd32(4) as usize != iv {
            return Some(header_fail(self, format!("bad header length {}, wanted {iv}", rd32(4))));
        }
        if let Some(seed) = x.seed {
            if rd64(8) != seed {
                return Some(header_fail(self, format!("bad header rand_seed {}, wanted {seed}", rd64(8))));
            }
        }
        if rd64(16) != here {
            return Some(header_fail(self, format!("bad header offset {}, wanted {here}", rd64(16))));
        }
        if let Some(n) = x.numberio {
            if rd16(34) != n {
                return Some(header_fail(self, format!("bad header numberio {}, wanted {n}", rd16(34))));
            }
        }
        let crc = crc32c(&b[..36]);
        if rd32(36) != crc {
            return Some(header_fail(self, format!("bad header crc {:x}, calculated {crc:x}", rd32(36))));
        }
        if self.method == VerifyMethod::Meta {
            return if self.pattern.is_some() { self.check_pattern(b, self.hl, x, here, "meta") } else { None };
        }
        let mut got = [0u8; MAX_LEN];
        checksum::digest(self.method, &b[self.hl..iv], &mut got);
        let want = &b[HL..HL + self.clen];
        if want == &got[..self.clen] {
            return None;
        }
        let mut msg = format!("{}: verify failed {}", self.method.name(), self.at(x, here));
        let _ = write!(msg, "\n       Expected CRC: {}\n       Received CRC: {}", hex(want), hex(&got[..self.clen]));
        let code = rd16(2);
        if code != self.method.code() {
            let media = VerifyMethod::from_code(code).map_or("unknown", |m| m.name());
            let _ = write!(msg, "\nverify: method mismatch ({media} on the media, {} given)", self.method.name());
        }
        if self.dump {
            msg.push('\n');
            msg.push_str(&self.dump_pair(b, x, here, rd64(8)));
        }
        Some(msg)
    }

    /// The pattern's byte at `pos` bytes into a block at `block_offset`.
    #[inline]
    fn pattern_byte(&self, pos: usize, block_offset: u64) -> u8 {
        let Some(p) = &self.pattern else { return 0 };
        let j = pos % p.bytes.len();
        match p.offset_at.iter().find(|&&at| j >= at && j < at + 8) {
            Some(&at) => block_offset.to_le_bytes()[j - at],
            None => p.bytes[j],
        }
    }

    /// Compare `b[from..]` with the pattern, which runs from the block's
    /// start (not the interval's). Allocates only on a mismatch.
    fn check_pattern(&self, b: &[u8], from: usize, x: &Expect, here: u64, name: &str) -> Option<String> {
        let shift = (here - x.offset) as usize;
        let i = (from..b.len()).find(|&i| b[i] != self.pattern_byte(shift + i, x.offset))?;
        let want_i = self.pattern_byte(shift + i, x.offset);
        let bits = (b[i] ^ want_i).count_ones();
        let mut msg = format!(
            "fio: got pattern '{:02x}', wanted '{want_i:02x}'. Bad bits {bits}\nfio: bad pattern block offset {}\n{name}: verify failed {}",
            b[i],
            i - from,
            self.at(x, here)
        );
        if self.dump {
            let mut want: Vec<u8> = (0..b.len()).map(|i| self.pattern_byte(shift + i, x.offset)).collect();
            want[..from].copy_from_slice(&b[..from]);
            msg.push('\n');
            msg.push_str(&self.dump_file(x.file, here, "received", b));
            msg.push('\n');
            msg.push_str(&self.dump_file(x.file, here, "expected", &want));
        }
        Some(msg)
    }

    /// The received interval and the one the seed in its header generates.
    fn dump_pair(&self, b: &[u8], x: &Expect, here: u64, seed: u64) -> String {
        let shift = (here - x.offset) as usize;
        let mut full = vec![0u8; shift + b.len()];
        self.fill_content(&mut full, seed, x.offset);
        let mut want = full[shift..].to_vec();
        want[..self.hl].copy_from_slice(&b[..self.hl]);
        let mut sum = [0u8; MAX_LEN];
        checksum::digest(self.method, &want[self.hl..], &mut sum);
        want[HL..HL + self.clen].copy_from_slice(&sum[..self.clen]);
        format!("{}\n{}", self.dump_file(x.file, here, "received", b), self.dump_file(x.file, here, "expected", &want))
    }

    /// fio's dump: `BASENAME.OFFSET.KIND` in the current directory.
    fn dump_file(&self, file: u32, offset: u64, kind: &str, data: &[u8]) -> String {
        let path = &self.paths[file as usize];
        let base = path.file_name().map(|n| n.to_string_lossy().to_string()).unwrap_or_else(|| "file".into());
        let name = PathBuf::from(format!("{base}.{offset}.{kind}"));
        match crate::environment::safety::write_output("verify_dump", &name, data) {
            Ok(()) => format!("       {kind} data dumped as {}", name.display()),
            Err(e) => format!("       could not dump {kind} data: {e}"),
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
