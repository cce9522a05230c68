//! The two kinds of distribution a trace's analysis keeps: btt's phases (a
//! latency histogram plus the exact sum, so means agree with btt to the
//! nanosecond where the histogram alone is good to 0.1%), and power-of-two
//! histograms for sizes and seek distances.

use crate::measure::hist::LatencyHist;
use serde::{Deserialize, Serialize};

/// One of btt's phases (Q2G, I2D, D2C, ...): every interval it measured.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Phase {
    pub count: u64,
    pub sum_ns: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub hist: LatencyHist,
}

impl Default for Phase {
    /// Full-range histogram: recording never allocates.
    fn default() -> Self {
        Phase { count: 0, sum_ns: 0, min_ns: 0, max_ns: 0, hist: LatencyHist::new() }
    }
}

impl Phase {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.count == 0 || ns < self.min_ns {
            self.min_ns = ns;
        }
        self.max_ns = self.max_ns.max(ns);
        self.count += 1;
        self.sum_ns = self.sum_ns.saturating_add(ns);
        self.hist.record(ns);
    }

    /// Exact mean in ns (0 when empty).
    pub fn mean_ns(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64
        }
    }

    /// Percentile `p` (0..=100) in ns, from the histogram (0.1% value
    /// error), never past the exact extremes.
    pub fn percentile_ns(&self, p: f64) -> u64 {
        if self.count == 0 {
            0
        } else {
            self.hist.percentile(p).clamp(self.min_ns, self.max_ns)
        }
    }

    pub fn merge(&mut self, other: &Phase) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 || other.min_ns < self.min_ns {
            self.min_ns = other.min_ns;
        }
        self.max_ns = self.max_ns.max(other.max_ns);
        self.count += other.count;
        self.sum_ns = self.sum_ns.saturating_add(other.sum_ns);
        self.hist.merge(&other.hist);
    }
}

const BUCKETS: usize = 65;

/// Counts of values by power of two: bucket 0 holds 0, bucket k (1..=64)
/// holds 2^(k-1) ..= 2^k - 1. Serialised as the non-empty buckets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Log2Hist {
    counts: [u64; BUCKETS],
}

impl Default for Log2Hist {
    fn default() -> Self {
        Log2Hist { counts: [0; BUCKETS] }
    }
}

/// One non-empty bucket: values from `low` to `high` inclusive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bucket {
    pub low: u64,
    pub high: u64,
    pub count: u64,
}

fn index(v: u64) -> usize {
    (u64::BITS - v.leading_zeros()) as usize
}

fn bounds(k: usize) -> (u64, u64) {
    match k {
        0 => (0, 0),
        64 => (1 << 63, u64::MAX),
        k => (1 << (k - 1), (1 << k) - 1),
    }
}

impl Log2Hist {
    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
    }
    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }
    pub fn buckets(&self) -> Vec<Bucket> {
        (0..BUCKETS)
            .filter(|k| self.counts[*k] > 0)
            .map(|k| {
                let (low, high) = bounds(k);
                Bucket { low, high, count: self.counts[k] }
            })
            .collect()
    }
    pub fn merge(&mut self, other: &Log2Hist) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
    }
}

impl Serialize for Log2Hist {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.buckets().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Log2Hist {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut h = Log2Hist::default();
        for b in Vec::<Bucket>::deserialize(d)? {
            let k = index(b.low);
            if bounds(k) != (b.low, b.high) {
                return Err(serde::de::Error::custom(format!(
                    "power-of-two bucket expected, found {}..={} (the bucket holding {} is {:?})",
                    b.low,
                    b.high,
                    b.low,
                    bounds(k)
                )));
            }
            h.counts[k] += b.count;
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log2_buckets_bound_their_values_and_round_trip() {
        let mut h = Log2Hist::default();
        for v in [0, 1, 2, 3, 4096, 4097, 8191, u64::MAX] {
            h.record(v);
        }
        let b = h.buckets();
        assert_eq!(b[0], Bucket { low: 0, high: 0, count: 1 });
        assert_eq!(b[1], Bucket { low: 1, high: 1, count: 1 });
        assert_eq!(b[2], Bucket { low: 2, high: 3, count: 2 });
        assert_eq!(b[3], Bucket { low: 4096, high: 8191, count: 3 });
        assert_eq!(b[4], Bucket { low: 1 << 63, high: u64::MAX, count: 1 });
        let back: Log2Hist = serde_json::from_str(&serde_json::to_string(&h).unwrap()).unwrap();
        assert_eq!(back, h);
        let bad = serde_json::from_str::<Log2Hist>(r#"[{"low":4,"high":9,"count":1}]"#).unwrap_err();
        assert!(bad.to_string().contains("power-of-two"), "{bad}");
    }

    #[test]
    fn phase_mean_is_exact() {
        let mut p = Phase::default();
        for v in [1000, 2001, 3000] {
            p.record(v);
        }
        assert_eq!(p.mean_ns(), 2000.3333333333333);
        assert_eq!((p.min_ns, p.max_ns, p.count), (1000, 3000, 3));
    }
}
