//! A compact per-thread latency histogram. A run keeps one per thread and
//! flowop name (webserver: 100 threads x 31 names), where the shared
//! `LatencyHist` (HdrHistogram, 3 digits, ~270 KiB each) would cost hundreds
//! of MiB. Log-linear buckets, 64 per power of two (bucket width <= 1.6%,
//! midpoints within 0.8%), exact below 64 ns; merged per name at the end
//! and converted once into a `LatencyHist`.

use crate::measure::hist::LatencyHist;

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;
/// Values are clamped below 2^42 ns (73 minutes).
const TOP_BIT: u32 = 42;
const BUCKETS: usize = (SUB + (TOP_BIT - SUB_BITS) as u64 * SUB) as usize;

pub struct CompactHist {
    counts: Box<[u64]>,
    pub sum_ns: u64,
}

impl Default for CompactHist {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn index(ns: u64) -> usize {
    let v = ns.min((1u64 << TOP_BIT) - 1);
    if v < SUB {
        return v as usize;
    }
    let k = 63 - v.leading_zeros();
    let sub = (v >> (k - SUB_BITS)) & (SUB - 1);
    (SUB + (k - SUB_BITS) as u64 * SUB + sub) as usize
}

/// Middle of bucket `i`, in ns.
fn midpoint(i: usize) -> u64 {
    let i = i as u64;
    if i < SUB {
        return i;
    }
    let k = (i - SUB) / SUB + SUB_BITS as u64;
    let sub = (i - SUB) % SUB;
    let width = 1u64 << (k - SUB_BITS as u64);
    (1u64 << k) + sub * width + width / 2
}

impl CompactHist {
    pub fn new() -> CompactHist {
        CompactHist { counts: vec![0u64; BUCKETS].into_boxed_slice(), sum_ns: 0 }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts[index(ns)] += 1;
        self.sum_ns = self.sum_ns.wrapping_add(ns);
    }

    pub fn reset(&mut self) {
        self.counts.fill(0);
        self.sum_ns = 0;
    }

    pub fn merge(&mut self, o: &CompactHist) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a += b;
        }
        self.sum_ns = self.sum_ns.wrapping_add(o.sum_ns);
    }

    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The same distribution as a `LatencyHist` (growable), from the
    /// non-empty buckets at their midpoints.
    pub fn to_latency(&self) -> LatencyHist {
        let mut h = LatencyHist::default();
        for (i, &c) in self.counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            h.record_n(midpoint(i).max(1), c);
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_monotonic_and_tight() {
        let mut last = 0;
        for ns in (1..2_000_000u64).step_by(7) {
            let i = index(ns);
            assert!(i >= last);
            last = i;
            let m = midpoint(i) as f64;
            assert!((m - ns as f64).abs() <= ns as f64 * 0.016 + 1.0, "{ns} -> {m}");
        }
        assert!(index(u64::MAX) < BUCKETS);
    }

    #[test]
    fn conversion_keeps_count_and_mean() {
        let mut h = CompactHist::new();
        for v in [100u64, 2_000, 30_000, 400_000, 5_000_000] {
            for _ in 0..10 {
                h.record(v);
            }
        }
        let l = h.to_latency();
        assert_eq!(l.count(), 50);
        let exact = h.sum_ns as f64 / 50.0;
        assert!((l.mean() - exact).abs() < exact * 0.01, "{} vs {exact}", l.mean());
        assert!(l.percentile(50.0) > 25_000 && l.percentile(50.0) < 35_000);
    }
}
