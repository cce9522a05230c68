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

/// Fill `buf` as the job asks: zeros, or random data of which
/// `compress_percentage` percent of every chunk is zeros (fio's layout, so a
/// compressor gets the same ratio out of fsbench's data as out of fio's).
pub fn fill(buf: &mut [u8], content: &BufferContent, rng: &mut Rng) {
    if content.zero {
        buf.fill(0);
        return;
    }
    let pct = content.compress_percentage.min(100) as usize;
    if pct == 0 {
        rng.fill(buf);
        return;
    }
    let chunk = (content.compress_chunk.max(1) as usize).min(buf.len().max(1));
    for c in buf.chunks_mut(chunk) {
        let random = c.len() * (100 - pct) / 100;
        rng.fill(&mut c[..random]);
        c[random..].fill(0);
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
    fn default_content_is_random_not_zero() {
        let mut rng = Rng::new(1);
        let mut buf = vec![0u8; 4096];
        fill(&mut buf, &BufferContent::default(), &mut rng);
        let zeros = buf.iter().filter(|&&b| b == 0).count();
        assert!(zeros < 64, "{zeros} zero bytes in random data");
    }
}
