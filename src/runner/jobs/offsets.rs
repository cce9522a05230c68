//! Where the next I/O goes: sequential streams, random offsets, and the
//! random map that visits every block exactly once per pass.

use crate::model::job_misc::{Distribution, StridedZones};
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

/// A non-uniform spread of random offsets over `n` slots (fio's
/// `random_distribution`), built once per file size and cloned.
#[derive(Clone, Debug)]
pub enum Skew {
    /// Gray et al.'s closed-form zipf draw; `zetan` sums at most 10M terms
    /// as fio does, so building stays fast on huge files.
    Zipf {
        n: u64,
        theta: f64,
        zetan: f64,
        zeta2: f64,
        shift: u64,
        scatter: Permutation,
    },
    Pareto {
        n: u64,
        power: f64,
        shift: u64,
        scatter: Permutation,
    },
    Normal {
        n: u64,
        mean: f64,
        sd: f64,
        scatter: Permutation,
    },
    /// Cumulative access percent and the slot range `[lo, hi)` of each zone.
    Zoned(Vec<(u32, u64, u64)>),
}

const ZIPF_TERMS: u64 = 10_000_000;

impl Skew {
    /// `None` for the uniform distribution.
    pub fn new(d: &Distribution, n: u64, align: u64, rng: &mut Rng) -> Option<Skew> {
        let n = n.max(1);
        Some(match d {
            Distribution::Random => return None,
            Distribution::Zipf { theta, center } => {
                let zetan = (1..=n.min(ZIPF_TERMS)).map(|i| (i as f64).powf(-theta)).sum();
                let zeta2 = 1.0 + 0.5f64.powf(*theta);
                Skew::Zipf { n, theta: *theta, zetan, zeta2, shift: (center * n as f64) as u64, scatter: Permutation::new(n, rng) }
            }
            Distribution::Pareto { h, center } => {
                Skew::Pareto { n, power: h.ln() / (1.0 - h).ln(), shift: (center * n as f64) as u64, scatter: Permutation::new(n, rng) }
            }
            Distribution::Normal { dev_percent, center } => {
                let mean = if *center > 0.0 { center * n as f64 } else { n as f64 / 2.0 };
                Skew::Normal { n, mean, sd: (dev_percent / 100.0 * n as f64).max(0.5), scatter: Permutation::new(n, rng) }
            }
            Distribution::Zoned(z) => Skew::zones(n, z.iter().map(|&(p, r)| (p, r as u128 * n as u128 / 100))),
            Distribution::ZonedAbs(z) => Skew::zones(n, z.iter().map(|&(p, bytes)| (p, (bytes / align.max(1)) as u128))),
        })
    }

    fn zones(n: u64, z: impl Iterator<Item = (u32, u128)>) -> Skew {
        let (mut cum, mut lo) = (0u32, 0u64);
        let mut out = Vec::new();
        for (pct, slots) in z {
            let hi = (lo as u128 + slots).min(n as u128) as u64;
            cum += pct;
            // A zone beyond the region's end folds into its last slot.
            let (a, b) = if lo >= n { (n - 1, n) } else { (lo, hi.max(lo + 1)) };
            out.push((cum, a, b));
            lo = hi;
        }
        Skew::Zoned(out)
    }

    #[inline]
    fn unit(rng: &mut Rng) -> f64 {
        (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A slot in `0..n`.
    #[inline]
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        match self {
            Skew::Zipf { n, theta, zetan, zeta2, shift, scatter } => {
                let nf = *n as f64;
                let alpha = 1.0 / (1.0 - theta);
                let eta = (1.0 - (2.0 / nf).powf(1.0 - theta)) / (1.0 - zeta2 / zetan);
                let u = Self::unit(rng);
                let uz = u * zetan;
                let rank = if uz < 1.0 {
                    0
                } else if uz < *zeta2 {
                    1
                } else {
                    ((nf * (eta * u - eta + 1.0).powf(alpha)) as u64).min(n - 1)
                };
                (scatter.get(rank) + shift) % n
            }
            Skew::Pareto { n, power, shift, scatter } => {
                let v = (((n - 1) as f64) * Self::unit(rng).powf(*power)) as u64;
                (scatter.get(v.min(n - 1)) + shift) % n
            }
            Skew::Normal { n, mean, sd, scatter } => loop {
                // Box-Muller; draws outside the region are drawn again.
                let (u1, u2) = (Self::unit(rng).max(f64::MIN_POSITIVE), Self::unit(rng));
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                let v = mean + z * sd;
                if v >= 0.0 && v < *n as f64 {
                    break scatter.get(v as u64);
                }
            },
            Skew::Zoned(z) => {
                let p = rng.below(100) as u32;
                let &(_, lo, hi) = z.iter().find(|x| p < x.0).unwrap_or(&z[z.len() - 1]);
                lo + rng.below(hi - lo)
            }
        }
    }
}

/// Which blocks a pass has touched, in units of the alignment: fio's random
/// map for variable block sizes, where an I/O covers several units and is
/// cut short where it would reach a touched one.
#[derive(Clone, Debug)]
pub struct Bitmap {
    words: Vec<u64>,
    free: u64,
}

impl Bitmap {
    fn new(n: u64) -> Bitmap {
        Bitmap { words: vec![0; n.div_ceil(64) as usize], free: n }
    }

    #[inline]
    fn is_set(&self, i: u64) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    /// The first free unit at or after `i`, wrapping; the map has one.
    #[inline]
    fn next_free(&self, i: u64, n: u64) -> u64 {
        let mut w = (i / 64) as usize;
        let mut bits = !self.words[w] & (!0u64 << (i % 64));
        let words = self.words.len();
        for _ in 0..=words {
            if bits != 0 {
                let j = w as u64 * 64 + bits.trailing_zeros() as u64;
                if j < n {
                    return j;
                }
            }
            w = if w + 1 == words { 0 } else { w + 1 };
            bits = !self.words[w];
        }
        0
    }

    /// Mark up to `want` free units from `i` on; returns how many were free in a row.
    #[inline]
    fn take(&mut self, i: u64, want: u64, n: u64) -> u64 {
        let mut k = 0;
        while k < want && i + k < n && !self.is_set(i + k) {
            self.words[((i + k) / 64) as usize] |= 1 << ((i + k) % 64);
            k += 1;
        }
        self.free -= k;
        k
    }

    fn clear(&mut self, n: u64) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.free = n;
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
    /// Every block once per pass (fixed block size).
    Mapped {
        perm: Permutation,
        index: u64,
    },
    /// Every unit once per pass, I/Os cut at touched units (variable sizes).
    Marked(Bitmap),
    /// A non-uniform distribution, repeats allowed as in fio.
    Skewed(Skew),
}

/// The region of one file an I/O stream covers: `[start, end)`.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub start: u64,
    pub end: u64,
}

/// What shapes the offsets of one direction of a job.
#[derive(Clone, Debug)]
pub struct Shape {
    pub random: bool,
    /// The random map: each block once per pass.
    pub map: bool,
    /// Block sizes vary (the map then marks units and cuts I/Os short).
    pub variable: bool,
    /// Granularity of random offsets: blockalign, else the minimum block size.
    pub align: u64,
    /// The smallest I/O: a sequential stream wraps when it no longer fits.
    pub min_len: u64,
    pub skew: Option<Skew>,
    /// Bytes added after each sequential I/O (`rw=read:-8k`).
    pub skip: i64,
    /// A new random offset every this many I/Os (`rw=randread:8`).
    pub every: u32,
    pub identical: bool,
    pub zones: Option<StridedZones>,
}

impl Shape {
    pub fn sequential(min_len: u64) -> Shape {
        Shape {
            random: false,
            map: false,
            variable: false,
            align: min_len,
            min_len,
            skew: None,
            skip: 0,
            every: 1,
            identical: false,
            zones: None,
        }
    }
}

/// Offset source for one (file, direction).
#[derive(Clone, Debug)]
pub struct OffsetGen {
    region: Region,
    /// The part I/O goes to now: the region, or the current strided zone.
    cur: Region,
    zone_done: u64,
    zones: Option<StridedZones>,
    align: u64,
    min_len: u64,
    blocks: u64,
    pattern: Pattern,
    skip: i64,
    every: u32,
    identical: bool,
    count: u32,
    last: (u64, u64),
    /// Completed passes over the region (wraps of a sequential stream or of the map).
    pub passes: u64,
    /// Set when a pass ends; the worker takes it to drop the file's cache as fio does.
    pub wrapped: bool,
}

impl OffsetGen {
    pub fn new(region: Region, shape: Shape, rng: &mut Rng) -> OffsetGen {
        let zones = shape.zones.filter(|z| z.range < region.end - region.start);
        let cur = match zones {
            Some(z) => Region { start: region.start, end: region.start + z.range },
            None => region,
        };
        let align = shape.align.max(1);
        let blocks = ((region.end - region.start) / align).max(1);
        let pattern = match (shape.random, shape.skew, shape.map) {
            (false, _, _) => Pattern::Sequential { next: region.start },
            (true, _, _) if zones.is_some() => Pattern::Uniform,
            (true, Some(s), _) => Pattern::Skewed(s),
            (true, None, false) => Pattern::Uniform,
            (true, None, true) if shape.variable && shape.every == 1 => Pattern::Marked(Bitmap::new(blocks)),
            (true, None, true) => Pattern::Mapped { perm: Permutation::new(blocks, rng), index: 0 },
        };
        OffsetGen {
            region,
            cur,
            zone_done: 0,
            zones,
            align,
            min_len: shape.min_len.max(1),
            blocks,
            pattern,
            skip: shape.skip,
            every: shape.every.max(1),
            identical: shape.identical,
            count: 0,
            last: (region.start, 0),
            passes: 0,
            wrapped: false,
        }
    }

    /// Slots a random offset may take in `cur` so that the smallest I/O fits.
    #[inline]
    fn slots(&self) -> u64 {
        ((self.cur.end - self.cur.start).saturating_sub(self.min_len) / self.align + 1).max(1)
    }

    #[inline]
    fn pass_done(&mut self) {
        self.passes += 1;
        self.wrapped = true;
    }

    /// The offset of the next I/O; `room` then says how long it may be.
    #[inline]
    pub fn offset(&mut self, rng: &mut Rng) -> u64 {
        if self.every > 1 {
            self.count += 1;
            if self.count > 1 {
                if self.count == self.every {
                    self.count = 0;
                }
                let (off, len) = self.last;
                if self.identical {
                    return off;
                }
                if off + len + self.min_len <= self.cur.end {
                    return off + len;
                }
            }
        }
        let r = self.cur;
        let slots = self.slots();
        match &mut self.pattern {
            Pattern::Sequential { next } => {
                if *next + self.min_len <= r.end && *next >= r.start {
                    return *next;
                }
                *next = r.start;
                self.next_zone_or_pass();
                match &self.pattern {
                    Pattern::Sequential { next } => *next,
                    _ => r.start,
                }
            }
            Pattern::Uniform => r.start + rng.below(slots) * self.align,
            Pattern::Skewed(s) => r.start + s.draw(rng).min(slots - 1) * self.align,
            Pattern::Mapped { perm, index } => {
                if *index == self.blocks {
                    *perm = Permutation::new(self.blocks, rng);
                    *index = 0;
                    self.passes += 1;
                    self.wrapped = true;
                }
                let off = r.start + perm.get(*index) * self.align;
                *index += 1;
                off.min(r.end.saturating_sub(self.min_len))
            }
            Pattern::Marked(map) => {
                if map.free == 0 {
                    map.clear(self.blocks);
                    self.passes += 1;
                    self.wrapped = true;
                }
                let b = rng.below(self.blocks);
                let b = if map.is_set(b) { map.next_free(b, self.blocks) } else { b };
                r.start + b * self.align
            }
        }
    }

    /// Bytes from `off` to the end of the part I/O goes to.
    #[inline]
    pub fn room(&self, off: u64) -> u64 {
        self.cur.end.saturating_sub(off)
    }

    /// Account an I/O of `len` bytes at `off`; returns its length, cut
    /// short where the random map finds a touched block (as fio does).
    #[inline]
    pub fn commit(&mut self, off: u64, len: u64) -> u64 {
        let len = match &mut self.pattern {
            Pattern::Marked(map) => {
                let b = (off - self.region.start) / self.align;
                let k = map.take(b, len.div_ceil(self.align), self.blocks).max(1);
                len.min(k * self.align)
            }
            Pattern::Sequential { next } => {
                let n = off as i128 + len as i128 + self.skip as i128;
                let (s, e) = (self.cur.start as i128, self.cur.end as i128);
                *next = if n >= s && n < e {
                    n as u64
                } else if self.skip < 0 {
                    // Backwards past the start: on from the end, as fio does.
                    self.passes += 1;
                    self.wrapped = true;
                    (e + self.skip as i128).max(s) as u64
                } else {
                    // Let `offset` wrap (or move to the next zone).
                    self.cur.end
                };
                len
            }
            _ => len,
        };
        self.last = (off, len);
        if let Some(z) = self.zones {
            self.zone_done += len;
            if self.zone_done >= z.size {
                if let Pattern::Sequential { next } = &mut self.pattern {
                    *next = self.cur.end;
                } else {
                    self.next_zone_or_pass();
                }
            }
        }
        len
    }

    /// Strided zones: on to the next zone (wrapping at the region's end);
    /// without zones, a new pass.
    fn next_zone_or_pass(&mut self) {
        let Some(z) = self.zones else {
            self.pass_done();
            return;
        };
        self.zone_done = 0;
        let mut start = self.cur.start + z.range + z.skip;
        if start + self.min_len > self.region.end {
            start = self.region.start;
            self.pass_done();
        }
        self.cur = Region { start, end: (start + z.range).min(self.region.end) };
        if let Pattern::Sequential { next } = &mut self.pattern {
            *next = start;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(region: Region, align: u64, random: bool, map: bool, rng: &mut Rng) -> OffsetGen {
        let shape = Shape { random, map, align, min_len: align, ..Shape::sequential(align) };
        OffsetGen::new(region, shape, rng)
    }

    impl OffsetGen {
        fn next(&mut self, len: u64, rng: &mut Rng) -> u64 {
            let o = self.offset(rng);
            self.commit(o, len);
            o
        }
    }

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
        let mut g = gen(region, 4096, true, true, &mut rng);
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
        let mut g = gen(Region { start: 0, end: 10_000 }, 4096, false, false, &mut rng);
        assert_eq!(g.next(4096, &mut rng), 0);
        assert_eq!(g.next(4096, &mut rng), 4096);
        assert_eq!(g.next(4096, &mut rng), 0, "an I/O that would cross the end wraps");
        assert_eq!(g.passes, 1);
    }

    #[test]
    fn uniform_offsets_stay_inside_region() {
        let mut rng = Rng::new(5);
        let r = Region { start: 4096, end: 4096 * 11 };
        let shape = Shape { random: true, align: 4096, min_len: 8192, ..Shape::sequential(4096) };
        let mut g = OffsetGen::new(r, shape, &mut rng);
        for _ in 0..1000 {
            let o = g.next(8192, &mut rng);
            assert!(o >= r.start && o + 8192 <= r.end && o % 4096 == 0);
        }
    }

    #[test]
    fn backwards_and_holed_sequential_match_fio() {
        let mut rng = Rng::new(1);
        let r = Region { start: 0, end: 65536 };
        let mut g = OffsetGen::new(r, Shape { skip: -8192, ..Shape::sequential(4096) }, &mut rng);
        let offs: Vec<u64> = (0..17).map(|_| g.next(4096, &mut rng) / 4096).collect();
        // fio 3.33, rw=read:-8k bs=4k size=64k: 0, 56k, 52k, ..., 4k, 0.
        assert_eq!(offs, [0, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 14]);
        let mut g = OffsetGen::new(r, Shape { skip: 4096, ..Shape::sequential(4096) }, &mut rng);
        let offs: Vec<u64> = (0..10).map(|_| g.next(4096, &mut rng) / 4096).collect();
        assert_eq!(offs, [0, 2, 4, 6, 8, 10, 12, 14, 0, 2]);
    }

    #[test]
    fn marked_map_covers_every_unit_once_with_variable_sizes() {
        let mut rng = Rng::new(7);
        let r = Region { start: 0, end: 512 * 1000 };
        let shape = Shape { random: true, map: true, variable: true, align: 512, min_len: 512, ..Shape::sequential(512) };
        let mut g = OffsetGen::new(r, shape, &mut rng);
        let mut seen = vec![0u32; 1000];
        let mut total = 0;
        while total < 512 * 1000 {
            let o = g.offset(&mut rng);
            let want = [512, 4096, 65536][rng.below(3) as usize].min(g.room(o));
            let len = g.commit(o, want);
            assert!(len >= 512 && len <= want && o + len <= r.end);
            for u in o / 512..(o + len) / 512 {
                seen[u as usize] += 1;
            }
            total += len;
        }
        assert!(seen.iter().all(|&c| c == 1), "every unit exactly once in a pass");
        assert_eq!(g.passes, 0);
        g.offset(&mut rng);
        assert_eq!(g.passes, 1);
    }

    #[test]
    fn strided_zones_do_size_then_skip() {
        let mut rng = Rng::new(1);
        let r = Region { start: 0, end: 1 << 20 };
        let zones = Some(StridedZones { size: 8192, range: 8192, skip: 8192 });
        let mut g = OffsetGen::new(r, Shape { zones, ..Shape::sequential(4096) }, &mut rng);
        let offs: Vec<u64> = (0..6).map(|_| g.next(4096, &mut rng) / 4096).collect();
        assert_eq!(offs, [0, 1, 4, 5, 8, 9]);
        let shape = Shape { random: true, zones, ..Shape::sequential(4096) };
        let mut g = OffsetGen::new(r, shape, &mut rng);
        for z in 0..20u64 {
            for _ in 0..2 {
                let o = g.next(4096, &mut rng);
                assert!(o >= z * 16384 && o < z * 16384 + 8192, "zone {z}: {o}");
            }
        }
    }

    /// Share of draws that land on the most frequent `top` slots.
    fn top_share(skew: &Skew, n: u64, top: usize, rng: &mut Rng) -> f64 {
        let mut hits = vec![0u32; n as usize];
        let draws = 200_000;
        for _ in 0..draws {
            hits[skew.draw(rng) as usize] += 1;
        }
        hits.sort_unstable_by(|a, b| b.cmp(a));
        hits[..top].iter().map(|&h| h as f64).sum::<f64>() / draws as f64
    }

    #[test]
    fn skewed_distributions_have_fios_shape() {
        let mut rng = Rng::new(11);
        let n = 1024;
        // fio 3.33, zipf:1.2 over 1024 blocks: the hottest block takes 23%.
        let z = Skew::new(&Distribution::Zipf { theta: 1.2, center: 0.0 }, n, 4096, &mut rng).unwrap();
        let s = top_share(&z, n, 1, &mut rng);
        assert!((0.21..0.25).contains(&s), "zipf top block {s}");
        // pareto:0.5 is uniform (power 1).
        let p = Skew::new(&Distribution::Pareto { h: 0.5, center: 0.0 }, n, 4096, &mut rng).unwrap();
        assert!(top_share(&p, n, 1, &mut rng) < 0.003);
        // normal:10: about 68% of draws within one deviation (205 slots) of the mean.
        let g = Skew::new(&Distribution::Normal { dev_percent: 10.0, center: 0.0 }, n, 4096, &mut rng).unwrap();
        let s = top_share(&g, n, 205, &mut rng);
        assert!((0.64..0.72).contains(&s), "normal one-sigma share {s}");
        let zd = Skew::new(&Distribution::Zoned(vec![(50, 5), (30, 15), (20, 80)]), 1000, 4096, &mut rng).unwrap();
        let mut first = 0;
        for _ in 0..100_000 {
            if zd.draw(&mut rng) < 50 {
                first += 1;
            }
        }
        assert!((48_500..51_500).contains(&first), "zone 1 got {first}");
    }
}
