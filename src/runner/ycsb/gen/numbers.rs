//! YCSB's plain number generators (uniform, hotspot, exponential,
//! sequential, histogram) and the field- and scan-length generators
//! CoreWorkload builds from them.

use super::zipfian::Zipfian;
use crate::model::ycsb::{FieldLength, ScanLength};
use crate::runner::rng::Rng;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// YCSB's `UniformLongGenerator` over `lb..=ub`.
#[derive(Clone, Debug)]
pub struct Uniform {
    lb: u64,
    interval: u64,
}

impl Uniform {
    /// `what` names the properties in the error for an empty range.
    pub fn new(lb: u64, ub: u64, what: &str) -> Result<Uniform, String> {
        if ub < lb {
            return Err(format!("{what}: the range {lb}..={ub} is empty"));
        }
        Ok(Uniform { lb, interval: (ub - lb).wrapping_add(1) })
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        // An interval of 0 is the whole u64 range wrapped; only 0..=MAX gets it.
        if self.interval == 0 {
            return rng.next_u64();
        }
        self.lb + rng.below(self.interval)
    }
}

/// YCSB's `HotspotIntegerGenerator` over `lower..=upper`: the first
/// `data_fraction` of the range gets `op_fraction` of the draws.
#[derive(Clone, Debug)]
pub struct Hotspot {
    lower: u64,
    hot: u64,
    cold: u64,
    op_fraction: f64,
}

impl Hotspot {
    pub fn new(lower: u64, upper: u64, data_fraction: f64, op_fraction: f64) -> Result<Hotspot, String> {
        if !(0.0..=1.0).contains(&data_fraction) {
            return Err(format!("hotspotdatafraction={data_fraction}: expected a fraction in [0, 1]"));
        }
        if !(0.0..=1.0).contains(&op_fraction) {
            return Err(format!("hotspotopnfraction={op_fraction}: expected a fraction in [0, 1]"));
        }
        if upper < lower {
            return Err(format!("hotspot key range {lower}..={upper} is empty (insertcount 0?)"));
        }
        let interval = upper - lower + 1;
        // YCSB casts the hot set's size to int.
        let hot = (interval as f64 * data_fraction) as i32 as u64;
        let cold = interval - hot;
        // YCSB divides by zero here; an error says why instead.
        if hot == 0 && op_fraction > 0.0 {
            return Err(format!(
                "hotspotdatafraction={data_fraction} of {interval} keys is an empty hot set, \
                 but hotspotopnfraction={op_fraction} sends operations to it"
            ));
        }
        if cold == 0 && op_fraction < 1.0 {
            return Err(format!(
                "hotspotdatafraction={data_fraction} leaves no cold keys, but hotspotopnfraction={op_fraction} \
                 sends operations to them"
            ));
        }
        Ok(Hotspot { lower, hot, cold, op_fraction })
    }

    /// Keys below this are the hot set.
    pub fn hot_end(&self) -> u64 {
        self.lower + self.hot
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        if rng.next_f64() < self.op_fraction {
            self.lower + rng.below(self.hot)
        } else {
            self.lower + self.hot + rng.below(self.cold)
        }
    }
}

/// YCSB's `ExponentialGenerator(percentile, range)`: `percentile` % of the
/// draws fall below `range`.
#[derive(Clone, Debug)]
pub struct Exponential {
    gamma: f64,
}

impl Exponential {
    pub fn new(percentile: f64, range: f64) -> Result<Exponential, String> {
        if !(percentile > 0.0 && percentile <= 100.0) {
            return Err(format!("exponential.percentile={percentile}: expected a percentage above 0, at most 100"));
        }
        if !(range > 0.0 && range.is_finite()) {
            return Err(format!("exponential.frac × recordcount = {range}: expected a positive number of keys"));
        }
        Ok(Exponential { gamma: -(1.0 - percentile / 100.0).ln() / range })
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> f64 {
        -rng.next_f64().ln() / self.gamma
    }
}

/// YCSB's `SequentialGenerator` over `start..=end`, wrapping; the position is
/// shared by every thread, as YCSB's one generator is.
#[derive(Clone, Debug)]
pub struct Sequential {
    start: u64,
    interval: u64,
    counter: Arc<AtomicU64>,
}

impl Sequential {
    pub fn new(start: u64, end: u64, counter: Arc<AtomicU64>) -> Result<Sequential, String> {
        if end < start {
            return Err(format!("sequential key range {start}..={end} is empty (insertcount 0?)"));
        }
        Ok(Sequential { start, interval: end - start + 1, counter })
    }

    #[inline]
    pub fn next(&self) -> u64 {
        self.start + self.counter.fetch_add(1, Ordering::Relaxed) % self.interval
    }
}

/// YCSB's `HistogramGenerator`: a draw in `0..area` walks the buckets, and
/// landing in bucket i gives `(i + 1) × block_size` (the last bucket, and a
/// draw past every bucket, give `(len − 1) × block_size`), exactly as YCSB
/// counts.
#[derive(Clone, Debug)]
pub struct Histogram {
    block_size: u64,
    buckets: Vec<u64>,
    area: u64,
}

impl Histogram {
    pub fn new(block_size: u64, buckets: &[u64]) -> Result<Histogram, String> {
        let area: u64 = buckets.iter().sum();
        if area == 0 {
            return Err("fieldlengthhistogram: expected at least one bucket with a count above 0".to_string());
        }
        Ok(Histogram { block_size, buckets: buckets.to_vec(), area })
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let mut number = rng.below(self.area) as i128;
        let last = self.buckets.len() - 1;
        for (i, &count) in self.buckets[..last].iter().enumerate() {
            number -= count as i128;
            if number <= 0 {
                return (i as u64 + 1) * self.block_size;
            }
        }
        last as u64 * self.block_size
    }
}

/// The length of a written field (`fieldlengthdistribution`), as
/// `CoreWorkload.getFieldLengthGenerator` builds it.
#[derive(Clone, Debug)]
pub enum FieldLengthGen {
    Constant(u64),
    Uniform(Uniform),
    Zipfian { gen: Zipfian, max: u64 },
    Histogram(Histogram),
}

impl FieldLengthGen {
    pub fn new(f: &FieldLength) -> Result<FieldLengthGen, String> {
        Ok(match *f {
            FieldLength::Constant(n) => FieldLengthGen::Constant(n),
            FieldLength::Uniform { min, max } => FieldLengthGen::Uniform(Uniform::new(min, max, "minfieldlength..=fieldlength")?),
            FieldLength::Zipfian { min, max } => {
                if max < min {
                    return Err(format!("minfieldlength={min} is above fieldlength={max}"));
                }
                FieldLengthGen::Zipfian { gen: Zipfian::new(min, max), max }
            }
            FieldLength::Histogram { block_size, ref counts } => FieldLengthGen::Histogram(Histogram::new(block_size, counts)?),
        })
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match self {
            FieldLengthGen::Constant(n) => *n,
            FieldLengthGen::Uniform(u) => u.next(rng),
            // YCSB's zipfian reaches max + 1 when the uniform draw rounds to
            // 1 (once in ~10^15); buffers are sized for max.
            FieldLengthGen::Zipfian { gen, max } => gen.next(rng).min(*max),
            FieldLengthGen::Histogram(h) => h.next(rng),
        }
    }
}

/// The length of a scan (`scanlengthdistribution` over
/// `minscanlength..=maxscanlength`).
#[derive(Clone, Debug)]
pub enum ScanLengthGen {
    Uniform(Uniform),
    Zipfian { gen: Zipfian, max: u64 },
}

impl ScanLengthGen {
    pub fn new(dist: ScanLength, min: u64, max: u64) -> Result<ScanLengthGen, String> {
        if max < min {
            return Err(format!("minscanlength={min} is above maxscanlength={max}"));
        }
        Ok(match dist {
            ScanLength::Uniform => ScanLengthGen::Uniform(Uniform::new(min, max, "minscanlength..=maxscanlength")?),
            ScanLength::Zipfian => ScanLengthGen::Zipfian { gen: Zipfian::new(min, max), max },
        })
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match self {
            ScanLengthGen::Uniform(u) => u.next(rng),
            ScanLengthGen::Zipfian { gen, max } => gen.next(rng).min(*max),
        }
    }
}
