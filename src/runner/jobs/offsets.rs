//! Where the next I/O goes: sequential streams, random offsets, and the
//! random map that visits every block exactly once per pass.

use crate::runner::rng::Rng;

/// A keyed bijection on `0..n` (a small Feistel network with cycle-walking).
/// It replaces fio's bitmap-based random map: O(1) memory for any file size,
/// no allocation, and still every block exactly once per pass.
#[derive(Clone, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    mask: u64,
    keys: [u64; 4],
}

impl Permutation {
    pub fn new(n: u64, rng: &mut Rng) -> Permutation {
        let bits = 64 - n.saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        Permutation { n, half_bits, mask: (1u64 << half_bits) - 1, keys: [rng.next_u64(), rng.next_u64(), rng.next_u64(), rng.next_u64()] }
    }

    #[inline]
    fn round(&self, x: u64, key: u64) -> u64 {
        let mut z = (x ^ key).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        z ^= z >> 29;
        z = z.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        (z ^ (z >> 32)) & self.mask
    }

    #[inline]
    fn encrypt(&self, x: u64) -> u64 {
        let (mut l, mut r) = (x >> self.half_bits, x & self.mask);
        for k in self.keys {
            let t = r;
            r = l ^ self.round(r, k);
            l = t;
        }
        (l << self.half_bits) | r
    }

    /// The image of `i` (< n). The domain is at most 4n, so the walk is short.
    #[inline]
    pub fn get(&self, i: u64) -> u64 {
        let mut x = self.encrypt(i);
        while x >= self.n {
            x = self.encrypt(x);
        }
        x
    }
}

/// How one file's offsets are produced for one direction.
#[derive(Clone, Debug)]
pub enum Pattern {
    Sequential {
        next: u64,
    },
    /// Uniform random block, repeats allowed (norandommap).
    Uniform,
    /// Every block once per pass.
    Mapped {
        perm: Permutation,
        index: u64,
    },
}

/// The region of one file an I/O stream covers: `[start, end)`.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub start: u64,
    pub end: u64,
}

/// Offset source for one (file, direction).
#[derive(Clone, Debug)]
pub struct OffsetGen {
    region: Region,
    /// Granularity of random offsets (the minimum block size).
    align: u64,
    blocks: u64,
    pattern: Pattern,
    /// Completed passes over the region (wraps of a sequential stream or of the map).
    pub passes: u64,
}

impl OffsetGen {
    pub fn new(region: Region, align: u64, random: bool, map: bool, rng: &mut Rng) -> OffsetGen {
        let blocks = ((region.end - region.start) / align).max(1);
        let pattern = match (random, map) {
            (false, _) => Pattern::Sequential { next: region.start },
            (true, false) => Pattern::Uniform,
            (true, true) => Pattern::Mapped { perm: Permutation::new(blocks, rng), index: 0 },
        };
        OffsetGen { region, align, blocks, pattern, passes: 0 }
    }

    /// The offset of the next I/O of `len` bytes.
    #[inline]
    pub fn next(&mut self, len: u64, rng: &mut Rng) -> u64 {
        let r = self.region;
        match &mut self.pattern {
            Pattern::Sequential { next } => {
                if *next + len > r.end {
                    *next = r.start;
                    self.passes += 1;
                }
                let off = *next;
                *next += len;
                off
            }
            Pattern::Uniform => {
                let off = r.start + rng.below(self.blocks) * self.align;
                off.min(r.end.saturating_sub(len)).max(r.start)
            }
            Pattern::Mapped { perm, index } => {
                if *index == self.blocks {
                    *perm = Permutation::new(self.blocks, rng);
                    *index = 0;
                    self.passes += 1;
                }
                let off = r.start + perm.get(*index) * self.align;
                *index += 1;
                off
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permutation_is_a_bijection_for_awkward_sizes() {
        let mut rng = Rng::new(3);
        for n in [1u64, 2, 3, 7, 100, 1000, 4097, 65_537] {
            let p = Permutation::new(n, &mut rng);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let v = p.get(i) as usize;
                assert!(!seen[v], "n={n}: {v} twice");
                seen[v] = true;
            }
        }
    }

    #[test]
    fn permutation_is_not_the_identity() {
        let mut rng = Rng::new(3);
        let p = Permutation::new(1000, &mut rng);
        let fixed = (0..1000).filter(|&i| p.get(i) == i).count();
        assert!(fixed < 20, "{fixed} fixed points");
    }

    #[test]
    fn mapped_offsets_cover_each_block_once_per_pass() {
        let mut rng = Rng::new(9);
        let region = Region { start: 8192, end: 8192 + 4096 * 50 };
        let mut g = OffsetGen::new(region, 4096, true, true, &mut rng);
        let mut offs: Vec<u64> = (0..50).map(|_| g.next(4096, &mut rng)).collect();
        assert_eq!(g.passes, 0);
        offs.sort();
        let want: Vec<u64> = (0..50).map(|i| 8192 + i * 4096).collect();
        assert_eq!(offs, want);
        g.next(4096, &mut rng);
        assert_eq!(g.passes, 1);
    }

    #[test]
    fn sequential_wraps_at_region_end() {
        let mut rng = Rng::new(1);
        let mut g = OffsetGen::new(Region { start: 0, end: 10_000 }, 4096, false, false, &mut rng);
        assert_eq!(g.next(4096, &mut rng), 0);
        assert_eq!(g.next(4096, &mut rng), 4096);
        assert_eq!(g.next(4096, &mut rng), 0, "an I/O that would cross the end wraps");
        assert_eq!(g.passes, 1);
    }

    #[test]
    fn uniform_offsets_stay_inside_region() {
        let mut rng = Rng::new(5);
        let r = Region { start: 4096, end: 4096 * 11 };
        let mut g = OffsetGen::new(r, 4096, true, false, &mut rng);
        for _ in 0..1000 {
            let o = g.next(8192, &mut rng);
            assert!(o >= r.start && o + 8192 <= r.end && o % 4096 == 0);
        }
    }
}
