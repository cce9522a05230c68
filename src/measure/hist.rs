//! Latency histograms: one per thread and operation, merged at the end.
//!
//! HdrHistogram with 3 significant digits (0.1% value error) over 1 ns ..
//! 1 hour. Two sizes of one type: `new()` holds the whole range (~270 KiB,
//! written through at creation) so that recording never allocates, for the
//! measurement paths; `Default` starts at 16 KiB and grows to the largest
//! value it is given, for histograms that are filled after the clock stops,
//! merged or read back (a run keeps one per operation and IOzone pass: a
//! full one each made auto mode write 370 MB of zeros). Both map a value to
//! the same bucket, so they merge exactly. A histogram that will only be
//! read can be packed to its non-empty buckets (`pack`). Serialised as a summary plus the
//! non-empty buckets, so a result file can be merged again later (threads,
//! repeats and machines merge the same way: counts add).

use hdrhistogram::Histogram;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::Cow;
use std::collections::BTreeMap;

const HIGHEST_NS: u64 = 3_600_000_000_000;
const SIGFIG: u8 = 3;

/// The percentiles every report shows (fio's list).
pub const PERCENTILES: &[f64] = &[1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99];

#[derive(Clone, Debug)]
pub struct LatencyHist {
    repr: Repr,
}

/// A histogram that is only read from now on can be packed: its non-empty
/// buckets alone, a few hundred bytes where the bucket array is tens of
/// KiB. IOzone's auto mode keeps one per pass and column (over a thousand);
/// dense, they made its RSS 2.4 times IOzone's. Any change unpacks it.
#[derive(Clone, Debug)]
enum Repr {
    Dense(Histogram<u64>),
    Packed { count: u64, buckets: Box<[[u64; 2]]> },
}

impl Default for LatencyHist {
    /// Growable: see the module's comment.
    fn default() -> Self {
        LatencyHist { repr: Repr::Dense(growable()) }
    }
}

fn growable() -> Histogram<u64> {
    let mut h = Histogram::new_with_bounds(1, 2, SIGFIG).expect("valid bounds");
    h.auto(true);
    h
}

/// Rebuilt from its buckets' highest equivalent values, a histogram reads
/// exactly as the one they came from: the same buckets, so the same
/// extremes, mean and percentiles.
fn rebuild(buckets: &[[u64; 2]]) -> Histogram<u64> {
    let mut h = growable();
    for &[v, c] in buckets {
        // Cannot fail: the value is within range and the histogram grows.
        let _ = h.record_n(v.clamp(1, HIGHEST_NS), c);
    }
    h
}

impl LatencyHist {
    /// The whole range, so that `record` never allocates.
    pub fn new() -> Self {
        LatencyHist { repr: Repr::Dense(Histogram::new_with_bounds(1, HIGHEST_NS, SIGFIG).expect("valid bounds")) }
    }

    /// Record one latency in nanoseconds. Values beyond an hour are clamped.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        // Cannot fail: clamped into a full histogram's range, and a growable
        // one grows (saturating_record would clamp to its current top).
        let _ = self.dense_mut().record(ns.clamp(1, HIGHEST_NS));
    }

    /// Record `count` latencies of `ns` at once (rebuilding a histogram).
    pub fn record_n(&mut self, ns: u64, count: u64) {
        // Cannot fail: the value is within range or the histogram grows.
        let _ = self.dense_mut().record_n(ns.clamp(1, HIGHEST_NS), count);
    }

    pub fn reset(&mut self) {
        match &mut self.repr {
            Repr::Dense(h) => h.reset(),
            Repr::Packed { .. } => *self = LatencyHist::default(),
        }
    }

    pub fn merge(&mut self, other: &LatencyHist) {
        match &other.repr {
            // Cannot fail: a full histogram holds every value a growable
            // one can, and a growable one grows.
            Repr::Dense(o) => {
                let _ = self.dense_mut().add(o);
            }
            Repr::Packed { buckets, .. } => buckets.iter().for_each(|&[v, c]| self.record_n(v, c)),
        }
    }

    /// Keep only the non-empty buckets (see `Repr`); reading gives the
    /// same figures, and any change unpacks it again.
    pub fn pack(&mut self) {
        if let Repr::Dense(h) = &self.repr {
            let buckets = self.buckets().map(|(v, c)| [v, c]).collect();
            self.repr = Repr::Packed { count: h.len(), buckets };
        }
    }

    #[inline(always)]
    fn dense_mut(&mut self) -> &mut Histogram<u64> {
        if let Repr::Packed { .. } = self.repr {
            self.unpack();
        }
        match &mut self.repr {
            Repr::Dense(h) => h,
            Repr::Packed { .. } => unreachable!("unpacked above"),
        }
    }

    #[cold]
    #[inline(never)]
    fn unpack(&mut self) {
        if let Repr::Packed { buckets, .. } = &self.repr {
            self.repr = Repr::Dense(rebuild(buckets));
        }
    }

    /// The histogram to read: itself, or rebuilt for the call when packed.
    fn dense(&self) -> Cow<'_, Histogram<u64>> {
        match &self.repr {
            Repr::Dense(h) => Cow::Borrowed(h),
            Repr::Packed { buckets, .. } => Cow::Owned(rebuild(buckets)),
        }
    }

    pub fn count(&self) -> u64 {
        match &self.repr {
            Repr::Dense(h) => h.len(),
            Repr::Packed { count, .. } => *count,
        }
    }
    pub fn min(&self) -> u64 {
        min_of(&self.dense())
    }
    pub fn max(&self) -> u64 {
        self.dense().max()
    }
    pub fn mean(&self) -> f64 {
        self.dense().mean()
    }
    pub fn stddev(&self) -> f64 {
        self.dense().stdev()
    }
    /// Value at percentile `p` (0..=100), in ns.
    pub fn percentile(&self, p: f64) -> u64 {
        self.dense().value_at_percentile(p)
    }

    /// Non-empty buckets as (highest equivalent value in ns, count).
    pub fn buckets(&self) -> Box<dyn Iterator<Item = (u64, u64)> + '_> {
        match &self.repr {
            Repr::Dense(h) => Box::new(h.iter_recorded().map(|v| (h.highest_equivalent(v.value_iterated_to()), v.count_at_value()))),
            Repr::Packed { buckets, .. } => Box::new(buckets.iter().map(|&[v, c]| (v, c))),
        }
    }

    pub fn summary(&self) -> LatencySummary {
        // Rebuilt once for all the figures when packed.
        let h = self.dense();
        LatencySummary {
            count: h.len(),
            min_ns: min_of(&h),
            max_ns: h.max(),
            mean_ns: h.mean(),
            stddev_ns: h.stdev(),
            percentiles_ns: PERCENTILES.iter().map(|p| (format_pct(*p), h.value_at_percentile(*p))).collect(),
        }
    }
}

/// hdrhistogram's min of an empty histogram is u64::MAX; ours is 0.
fn min_of(h: &Histogram<u64>) -> u64 {
    if h.is_empty() {
        0
    } else {
        h.min()
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
        Ok(LatencyHist { repr: Repr::Dense(rebuild(&repr.buckets)) })
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
    fn a_packed_histogram_reads_merges_and_grows_as_the_dense_one() {
        let mut dense = LatencyHist::default();
        // Clustered, with a tail, as latencies come.
        for v in (1..5000u64).map(|i| if i % 500 == 0 { i * 1000 } else { 2000 + i * 7919 % 3000 }) {
            dense.record(v);
        }
        let mut packed = dense.clone();
        packed.pack();
        assert!(matches!(packed.repr, Repr::Packed { .. }));
        assert_eq!(packed.count(), dense.count());
        assert_eq!(packed.summary(), dense.summary());
        assert_eq!(packed.buckets().collect::<Vec<_>>(), dense.buckets().collect::<Vec<_>>());
        assert_eq!((packed.min(), packed.max(), packed.percentile(99.9)), (dense.min(), dense.max(), dense.percentile(99.9)));
        assert_eq!(serde_json::to_string(&packed).unwrap(), serde_json::to_string(&dense).unwrap());
        // Far fewer bytes than the bucket array it replaces.
        let Repr::Packed { buckets, .. } = &packed.repr else { unreachable!() };
        assert!(buckets.len() * 16 < dense.dense().distinct_values() * 8 / 4, "{} buckets", buckets.len());

        let mut into = LatencyHist::new();
        into.merge(&packed);
        assert_eq!(into.summary(), dense.summary());
        // Changing a packed histogram unpacks it first.
        packed.record(7_000_000_000);
        dense.record(7_000_000_000);
        assert!(matches!(packed.repr, Repr::Dense(_)));
        assert_eq!(packed.summary(), dense.summary());
        packed.pack();
        packed.reset();
        assert_eq!((packed.count(), packed.min(), packed.max()), (0, 0, 0));
        let mut empty = LatencyHist::default();
        empty.pack();
        assert_eq!(empty.summary(), LatencyHist::default().summary());
    }

    #[test]
    fn percentile_keys_are_short() {
        assert_eq!(format_pct(99.0), "99");
        assert_eq!(format_pct(99.95), "99.95");
        assert_eq!(format_pct(1.0), "1");
    }
}
