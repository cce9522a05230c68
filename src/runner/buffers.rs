//! I/O buffers: page-aligned (O_DIRECT needs it), one per queue slot, and
//! filled with content that decides results on compressing devices.

use super::rng::Rng;
use crate::model::job::BufferContent;
use std::alloc::{alloc_zeroed, dealloc, Layout};

pub const ALIGN: usize = 4096;

/// One aligned allocation carved into `slots` buffers of `len` bytes.
pub struct Buffers {
    ptr: *mut u8,
    layout: Layout,
    pub len: usize,
    pub slots: usize,
}

// SAFETY: the allocation is owned by this value alone (freed in Drop) and not tied to a thread; the runner hands slot
// pointers to exactly one engine on one thread, so sending the owner there cannot race.
unsafe impl Send for Buffers {}

impl Buffers {
    pub fn new(slots: usize, len: usize) -> Buffers {
        let len = len.div_ceil(ALIGN) * ALIGN;
        let layout = Layout::from_size_align((slots * len).max(ALIGN), ALIGN).expect("buffer layout");
        // Zeroed so no uninitialised memory ever reaches a device.
        // SAFETY: the layout's size is at least ALIGN (`.max(ALIGN)`), non-zero as alloc_zeroed requires; null is
        // checked next.
        let ptr = unsafe { alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory allocating {} bytes of I/O buffers", layout.size());
        Buffers { ptr, layout, len, slots }
    }

    #[inline]
    pub fn slot(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.slots);
        // Only computes the address (no unsafe offset): a slot past the end
        // is caught where the pointer is used, not here.
        self.ptr.wrapping_add(i * self.len)
    }

    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        assert!(i < self.slots, "buffer slot {i} of {}", self.slots);
        // SAFETY: `i < slots` (asserted), so the slot's `len` bytes lie inside the zero-initialised allocation; `&mut
        // self` keeps any other slice of the buffers from existing while this one lives.
        unsafe { std::slice::from_raw_parts_mut(self.slot(i), self.len) }
    }

    pub fn fill_all(&mut self, content: &BufferContent, rng: &mut Rng) {
        for i in 0..self.slots {
            fill(self.slot_mut(i), content, rng);
        }
    }
}

impl Drop for Buffers {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from alloc_zeroed with this same `layout` in `new` and is freed once, here.
        unsafe { dealloc(self.ptr, self.layout) }
    }
}

/// Fill `buf` as the job asks, in fio's order of precedence: with a
/// compress or dedupe percentage, random data of which `compress_percentage`
/// percent of every chunk is the pattern (or zeros), so a compressor gets the
/// same ratio out of fsbench's data as out of fio's; else the pattern; else
/// zeros; else random data.
pub fn fill(buf: &mut [u8], content: &BufferContent, rng: &mut Rng) {
    if content.compress_percentage > 0 || content.dedupe_percentage > 0 {
        let chunk = (content.compress_chunk.max(1) as usize).min(buf.len().max(1));
        fill_percentage(buf, content.compress_percentage, chunk, &content.pattern, rng);
    } else if !content.pattern.is_empty() {
        fill_pattern(buf, &content.pattern);
    } else if content.zero {
        buf.fill(0);
    } else {
        rng.fill(buf);
    }
}

/// The content fio 3.33's verifier writes under its headers: its own random
/// data, with a pattern only in the compressible part, taken over the whole
/// block rather than per chunk. So a `buffer_pattern` without a compress
/// percentage leaves verified blocks random, as in fio; dedupe never applies.
pub fn fill_verify(buf: &mut [u8], content: &BufferContent, rng: &mut Rng) {
    if !content.pattern.is_empty() {
        let whole = buf.len().max(1);
        fill_percentage(buf, content.compress_percentage, whole, &content.pattern, rng);
    } else if content.compress_percentage > 0 {
        let chunk = (content.compress_chunk.max(1) as usize).min(buf.len().max(1));
        fill_percentage(buf, content.compress_percentage, chunk, &[], rng);
    } else if content.zero {
        buf.fill(0);
    } else {
        rng.fill(buf);
    }
}

/// Each `chunk`: its first (100 - pct)% random, the rest the pattern from
/// its start (zeros without one).
fn fill_percentage(buf: &mut [u8], pct: u32, chunk: usize, pattern: &[u8], rng: &mut Rng) {
    let pct = pct.min(100) as usize;
    for c in buf.chunks_mut(chunk) {
        let random = c.len() * (100 - pct) / 100;
        rng.fill(&mut c[..random]);
        if pattern.is_empty() {
            c[random..].fill(0);
        } else {
            fill_pattern(&mut c[random..], pattern);
        }
    }
}

/// `pattern` repeated from the start of `buf`.
pub fn fill_pattern(buf: &mut [u8], pattern: &[u8]) {
    if pattern.is_empty() {
        return;
    }
    let first = pattern.len().min(buf.len());
    buf[..first].copy_from_slice(&pattern[..first]);
    // Doubling copies: a few memcpy calls rather than one per repetition.
    let mut done = first;
    while done < buf.len() {
        let n = done.min(buf.len() - done);
        buf.copy_within(..n, done);
        done += n;
    }
}

/// fio's scramble of a write that is not refilled: in every 512 bytes, the
/// block's offset at the start of one 64-byte line (which one follows the
/// time and offset) and the issue time (seconds, nanoseconds) at the end of
/// the first line, so no two writes dedupe into one. Little-endian, as fio
/// writes them on x86.
#[inline]
pub fn scramble(buf: &mut [u8], offset: u64, secs: u64, nanos: u32) {
    let line = ((u64::from(nanos) ^ offset) & 7) as usize * 64;
    let mut at = offset;
    for b in buf.chunks_exact_mut(512) {
        b[line..line + 8].copy_from_slice(&at.to_le_bytes());
        b[48..56].copy_from_slice(&secs.to_le_bytes());
        b[56..64].copy_from_slice(&u64::from(nanos).to_le_bytes());
        at = at.wrapping_add(512);
    }
}

/// Which content each write gets when `dedupe_percentage` is set: a seed
/// per buffer, new for a unique buffer and an earlier one for a copy, so a
/// copy is regenerated (not stored) and no write allocates.
pub struct Dedupe {
    pct: u64,
    decide: Rng,
    base: u64,
    /// This thread among the owners of the seeds.
    owner: u64,
    uniques: u64,
    set: Option<WorkingSet>,
}

/// fio's working set: the first `pages` unique buffers; with `dedupe_global`
/// it is dealt out `per_owner` pages at a time over the participating
/// threads, starting with this one.
struct WorkingSet {
    pages: u64,
    per_owner: u64,
    owners: u64,
}

/// Seeds of global participants must agree across jobs whatever their
/// `randseed`: they share this base.
const GLOBAL_BASE: u64 = 0xd3d0_9e00_5eed_0001;

impl Dedupe {
    /// `rank`: (this thread's index, count) among the threads sharing a
    /// working set; `bytes`: the job's size; `block`: its smallest write.
    pub fn new(content: &BufferContent, seed: u64, rank: (u32, u32), bytes: u64, block: u64) -> Option<Dedupe> {
        if content.dedupe_percentage == 0 {
            return None;
        }
        let global = content.dedupe_global && content.dedupe_working_set && rank.1 > 0;
        let set = content.dedupe_working_set.then(|| {
            let pages = (bytes * u64::from(content.dedupe_working_set_percentage) / 100 / block.max(1)).max(1);
            let owners = if global { u64::from(rank.1) } else { 1 };
            WorkingSet { pages, per_owner: (pages / owners).max(1), owners }
        });
        Some(Dedupe {
            pct: u64::from(content.dedupe_percentage.min(100)),
            decide: Rng::new(seed ^ 0xdede_dede),
            base: if global { GLOBAL_BASE } else { seed },
            owner: if global { u64::from(rank.0) } else { 0 },
            uniques: 0,
            set,
        })
    }

    #[inline]
    fn seed(&self, owner: u64, k: u64) -> u64 {
        self.base ^ (owner << 40) ^ k
    }

    /// The seed of the next written buffer's content.
    #[inline]
    pub fn next_seed(&mut self) -> u64 {
        let copy = self.pct == 100 || self.decide.below(100) < self.pct;
        if copy {
            return match &self.set {
                // The previous unique buffer (the first one, before any).
                None => self.seed(self.owner, self.uniques.saturating_sub(1)),
                Some(w) => {
                    let i = self.decide.below(w.pages);
                    let owner = (self.owner + i / w.per_owner) % w.owners;
                    self.seed(owner, i % w.per_owner)
                }
            };
        }
        let s = self.seed(self.owner, self.uniques);
        self.uniques += 1;
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let b = Buffers::new(4, 5000);
        assert_eq!(b.len, 8192);
        for i in 0..4 {
            assert_eq!(b.slot(i) as usize % ALIGN, 0);
        }
        assert_eq!(b.slot(1) as usize - b.slot(0) as usize, 8192);
    }

    #[test]
    fn compress_percentage_zeroes_that_share_of_each_chunk() {
        let mut rng = Rng::new(1);
        let mut buf = vec![0xAAu8; 4096];
        let c = BufferContent { compress_percentage: 75, compress_chunk: 512, ..Default::default() };
        fill(&mut buf, &c, &mut rng);
        for chunk in buf.chunks(512) {
            assert!(chunk[128..].iter().all(|&b| b == 0));
            assert!(chunk[..128].iter().filter(|&&b| b != 0).count() > 100);
        }
    }

    #[test]
    fn pattern_repeats_from_the_buffer_start_and_fills_the_compressible_part() {
        let mut rng = Rng::new(1);
        let mut buf = vec![0u8; 1000];
        let c = BufferContent { pattern: vec![1, 2, 3], ..Default::default() };
        fill(&mut buf, &c, &mut rng);
        assert!(buf.iter().enumerate().all(|(i, &b)| b == [1, 2, 3][i % 3]));
        let c = BufferContent { compress_percentage: 50, compress_chunk: 512, pattern: vec![9], ..Default::default() };
        let mut buf = vec![0u8; 1024];
        fill(&mut buf, &c, &mut rng);
        for chunk in buf.chunks(512) {
            assert!(chunk[256..].iter().all(|&b| b == 9));
        }
        let mut v = vec![0u8; 1024];
        fill_verify(&mut v, &BufferContent { pattern: vec![9], ..Default::default() }, &mut rng);
        assert!(v.iter().filter(|&&b| b == 9).count() < 32, "verify content stays random under a pattern");
    }

    #[test]
    fn scramble_stamps_each_512_bytes() {
        let mut buf = vec![0u8; 2048];
        scramble(&mut buf, 8192, 3, 5);
        let line = ((5u64 ^ 8192) & 7) as usize * 64;
        for (k, b) in buf.chunks(512).enumerate() {
            assert_eq!(u64::from_le_bytes(b[line..line + 8].try_into().unwrap()), 8192 + 512 * k as u64);
            assert_eq!(u64::from_le_bytes(b[48..56].try_into().unwrap()), 3);
            assert_eq!(u64::from_le_bytes(b[56..64].try_into().unwrap()), 5);
        }
    }

    #[test]
    fn dedupe_copies_the_asked_share() {
        for ws in [false, true] {
            let c = BufferContent { dedupe_percentage: 30, dedupe_working_set: ws, refill: true, ..Default::default() };
            let mut d = Dedupe::new(&c, 7, (0, 1), 40_000 * 4096, 4096).unwrap();
            let seeds: Vec<u64> = (0..40_000).map(|_| d.next_seed()).collect();
            let distinct: std::collections::HashSet<_> = seeds.iter().collect();
            let share = 100.0 * (seeds.len() - distinct.len()) as f64 / seeds.len() as f64;
            assert!((share - 30.0).abs() < 1.5, "working_set={ws}: {share}%");
        }
        assert!(Dedupe::new(&BufferContent::default(), 7, (0, 1), 1 << 20, 4096).is_none());
    }

    #[test]
    fn default_content_is_random_not_zero() {
        let mut rng = Rng::new(1);
        let mut buf = vec![0u8; 4096];
        fill(&mut buf, &BufferContent::default(), &mut rng);
        let zeros = buf.iter().filter(|&&b| b == 0).count();
        assert!(zeros < 64, "{zeros} zero bytes in random data");
    }
}
