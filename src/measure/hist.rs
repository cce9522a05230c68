//! Latency histograms: one per thread and operation, merged at the end.
//!
//! HdrHistogram with 3 significant digits (0.1% value error) over 1 ns ..
//! 1 hour. Two sizes of one type: `new()` holds the whole range (~270 KiB,
//! written through at creation) so that recording never allocates, for the
//! measurement paths; `Default` starts at 16 KiB and grows to the largest
//! value it is given, for histograms that are filled after the clock stops,
//! merged or read back (a run keeps one per operation and IOzone pass: a
//! full one each made auto mode write 370 MB of zeros). Both map a value to
//! the same bucket, so they merge exactly. Serialised as a summary plus the
//! non-empty buckets, so a result file can be merged again later (threads,
//! repeats and machines merge the same way: counts add).

use hdrhistogram::Histogram;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

const HIGHEST_NS: u64 = 3_600_000_000_000;
const SIGFIG: u8 = 3;

/// The percentiles every report shows (fio's list).
pub const PERCENTILES: &[f64] = &[1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

#[derive(Clone, Debug)]
pub struct LatencyHist {
    h: Histogram<u64>,
}

impl Default for LatencyHist {
    /// Growable: see the module's comment.
    fn default() -> Self {
        let mut h = Histogram::new_with_bounds(1, 2, SIGFIG).expect("valid bounds");
        h.auto(true);
        LatencyHist { h }
    }
}

impl LatencyHist {
    /// The whole range, so that `record` never allocates.
    pub fn new() -> Self {
        LatencyHist { h: Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIG).expect("valid bounds") }
    }

    /// Record one latency in nanoseconds. Values beyond an hour are clamped.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        // Cannot fail: clamped into a full histogram's range, and a growable
        // one grows (saturating_record would clamp to its current top).
        let _ = self.h.record(ns.clamp(1, HIGHEST_NS));
    }

    /// Record `count` latencies of `ns` at once (rebuilding a histogram).
    pub fn record_n(&mut self, ns: u64, count: u64) {
        // Cannot fail: the value is within range or the histogram grows.
        let _ = self.h.record_n(ns.clamp(1, HIGHEST_NS), count);
    }

    pub fn reset(&mut self) {
        self.h.reset();
    }

    pub fn merge(&mut self, other: &LatencyHist) {
        // Cannot fail: a full histogram holds every value a growable one
        // can, and a growable one grows.
        let _ = self.h.add(&other.h);
    }

    pub fn count(&self) -> u64 {
        self.h.len()
    }
    pub fn min(&self) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.h.min()
        }
    }
    pub fn max(&self) -> u64 {
        self.h.max()
    }
    pub fn mean(&self) -> f64 {
        self.h.mean()
    }
    pub fn stddev(&self) -> f64 {
        self.h.stdev()
    }
    /// Value at percentile `p` (0..=100), in ns.
    pub fn percentile(&self, p: f64) -> u64 {
        self.h.value_at_percentile(p)
    }

    /// Non-empty buckets as (highest equivalent value in ns, count).
    pub fn buckets(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.h.iter_recorded().map(|v| (self.h.highest_equivalent(v.value_iterated_to()), v.count_at_value()))
    }

    pub fn summary(&self) -> LatencySummary {
        LatencySummary {
            count: self.count(),
            min_ns: self.min(),
            max_ns: self.max(),
            mean_ns: self.mean(),
            stddev_ns: self.stddev(),
            percentiles_ns: PERCENTILES.iter().map(|p| (format_pct(*p), self.percentile(*p))).collect(),
        }
    }
}

/// "99.9" style keys, as fio prints them but without trailing zeros noise.
pub fn format_pct(p: f64) -> String {
    let s = format!("{p:.6}");
    let s = s.trim_end_matches('0');
    s.trim_end_matches('.').to_string()
}

/// The human-facing figures derived from a histogram.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub min_ns: u64,
    pub max_ns: u64,
    pub mean_ns: f64,
    pub stddev_ns: f64,
    /// Percentile (as a string like "99.9") to nanoseconds.
    pub percentiles_ns: BTreeMap<String, u64>,
}

#[derive(Serialize, Deserialize)]
struct HistRepr {
    #[serde(flatten)]
    summary: LatencySummary,
    /// Non-empty buckets: [value_ns, count]. Enough to rebuild and merge.
    buckets: Vec<[u64; 2]>,
}

impl Serialize for LatencyHist {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        HistRepr { summary: self.summary(), buckets: self.buckets().map(|(v, c)| [v, c]).collect() }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for LatencyHist {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let repr = HistRepr::deserialize(d)?;
        let mut h = LatencyHist::default();
        for [v, c] in repr.buckets {
            h.h.record_n(v.clamp(1, HIGHEST_NS), c).map_err(D::Error::custom)?;
        }
        Ok(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_and_keeps_extremes() {
        let mut a = LatencyHist::new();
        let mut b = LatencyHist::new();
        for v in 1..=1000 {
            a.record(v * 1000);
        }
        b.record(5_000_000);
        a.merge(&b);
        assert_eq!(a.count(), 1001);
        assert_eq!(a.min(), 1000);
        assert!(a.max() >= 5_000_000 && a.max() < 5_010_000);
        let p50 = a.percentile(50.0);
        assert!((495_000..=505_000).contains(&p50), "p50 {p50}");
    }

    #[test]
    fn json_round_trip_preserves_distribution() {
        let mut a = LatencyHist::new();
        for v in [10, 200, 3000, 40_000, 500_000, 6_000_000] {
            a.record(v);
        }
        let text = serde_json::to_string(&a).unwrap();
        let b: LatencyHist = serde_json::from_str(&text).unwrap();
        assert_eq!(b.count(), 6);
        assert_eq!(a.percentile(99.0), b.percentile(99.0));
        assert_eq!(a.summary().percentiles_ns, b.summary().percentiles_ns);
    }

    #[test]
    fn growable_and_full_histograms_agree_and_merge_both_ways() {
        let values = [1, 7, 999, 1_000, 123_456, 9_999_999, 2_000_000_000, 4_000_000_000_000];
        let mut full = LatencyHist::new();
        let mut small = LatencyHist::default();
        for v in values {
            full.record(v);
            small.record(v);
        }
        assert_eq!(full.summary(), small.summary());
        assert_eq!(full.buckets().collect::<Vec<_>>(), small.buckets().collect::<Vec<_>>());
        let mut a = LatencyHist::default();
        a.merge(&full);
        let mut b = LatencyHist::new();
        b.merge(&small);
        assert_eq!(a.summary(), b.summary());
        assert_eq!(a.count(), values.len() as u64);
        assert_eq!(a.max(), full.max(), "clamped at an hour on both");
    }

    #[test]
    fn percentile_keys_are_short() {
        assert_eq!(format_pct(99.0), "99");
        assert_eq!(format_pct(99.95), "99.95");
        assert_eq!(format_pct(1.0), "1");
    }
}
