//! YCSB's zipfian family: `ZipfianGenerator` (Gray et al., "Quickly
//! Generating Billion-Record Synthetic Databases", SIGMOD 1994),
//! `ScrambledZipfianGenerator` and `SkewedLatestGenerator`.

use super::counter::AcknowledgedCounter;
use super::fnv64;
use crate::runner::rng::Rng;
use std::sync::Arc;

/// YCSB's θ for every zipfian it builds.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// The scrambled zipfian draws from this many items (plus one: YCSB builds
/// it over `0..=ITEM_COUNT`) and folds the draw into the keyspace.
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;
/// YCSB's precomputed ζ(10^10, 0.99), which saves summing 10^10 terms.
pub const SCRAMBLED_ZETAN: f64 = 26.46902820178302;

/// ζ continued from `initial` (the sum of the first `from` terms) up to `n`
/// terms: Σ 1/i^θ, in YCSB's order so the floating-point sum is the same.
pub fn zeta(from: u64, n: u64, theta: f64, initial: f64) -> f64 {
    let mut sum = initial;
    for i in from..n {
        sum += 1.0 / ((i + 1) as f64).powf(theta);
    }
    sum
}

/// YCSB's `ZipfianGenerator`: item `base + 0` is the most popular. The item
/// count can grow after construction (`next_of`), ζ then being extended
/// term by term as YCSB does for the latest distribution.
#[derive(Clone, Debug)]
pub struct Zipfian {
    /// The item count it was built for; YCSB keeps using it in η when the
    /// count grows (a quirk kept so the draws match).
    items: u64,
    base: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    zeta2theta: f64,
    /// 0.5^θ, which YCSB recomputes on every draw.
    half_pow_theta: f64,
    count_for_zeta: u64,
}

impl Zipfian {
    /// Over `min..=max` with θ 0.99 (`new ZipfianGenerator(min, max)`).
    pub fn new(min: u64, max: u64) -> Zipfian {
        Zipfian::with_theta(min, max - min + 1, ZIPFIAN_CONSTANT)
    }

    /// Over `0..items` with θ 0.99 (`new ZipfianGenerator(items)`); 0 items
    /// is allowed as in YCSB (every draw is then 0).
    pub fn of_items(items: u64) -> Zipfian {
        Zipfian::with_theta(0, items, ZIPFIAN_CONSTANT)
    }

    /// `items` items from `base`, ζ summed here.
    pub fn with_theta(base: u64, items: u64, theta: f64) -> Zipfian {
        Zipfian::with_zeta(base, items, theta, zeta(0, items, theta, 0.0))
    }

    /// `items` items from `base` with ζ(items, θ) given.
    pub fn with_zeta(base: u64, items: u64, theta: f64, zetan: f64) -> Zipfian {
        let zeta2theta = zeta(0, 2, theta, 0.0);
        Zipfian {
            items,
            base,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta: Zipfian::eta_for(items, theta, zeta2theta, zetan),
            zeta2theta,
            half_pow_theta: 0.5f64.powf(theta),
            count_for_zeta: items,
        }
    }

    fn eta_for(items: u64, theta: f64, zeta2theta: f64, zetan: f64) -> f64 {
        (1.0 - (2.0 / items as f64).powf(1.0 - theta)) / (1.0 - zeta2theta / zetan)
    }

    pub fn items(&self) -> u64 {
        self.items
    }

    pub fn zetan(&self) -> f64 {
        self.zetan
    }

    pub fn eta(&self) -> f64 {
        self.eta
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// A draw over the items it was built for (`nextValue`).
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        self.draw(self.items, rng.next_f64())
    }

    /// A draw over `itemcount` items (`nextLong(itemcount)`): a larger count
    /// than ζ covers extends ζ first; a smaller one is drawn with the larger
    /// ζ, as YCSB does unless told otherwise.
    #[inline]
    pub fn next_of(&mut self, itemcount: u64, rng: &mut Rng) -> u64 {
        if itemcount > self.count_for_zeta {
            self.zetan = zeta(self.count_for_zeta, itemcount, self.theta, self.zetan);
            self.count_for_zeta = itemcount;
            self.eta = Zipfian::eta_for(self.items, self.theta, self.zeta2theta, self.zetan);
        }
        self.draw(itemcount, rng.next_f64())
    }

    #[inline]
    fn draw(&self, itemcount: u64, u: f64) -> u64 {
        let uz = u * self.zetan;
        if uz < 1.0 {
            return self.base;
        }
        if uz < 1.0 + self.half_pow_theta {
            return self.base + 1;
        }
        let spread = itemcount as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha);
        // Java's (long) cast: truncation, saturating, NaN to 0.
        self.base + spread as i64 as u64
    }
}

/// YCSB's `ScrambledZipfianGenerator` over `min..=max`: a zipfian draw over
/// 10^10 items hashed into the range, so the popular keys are spread over
/// the keyspace and stay put whatever its size.
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    gen: Zipfian,
    min: u64,
    itemcount: u64,
}

impl ScrambledZipfian {
    pub fn new(min: u64, max: u64) -> ScrambledZipfian {
        ScrambledZipfian {
            gen: Zipfian::with_zeta(0, SCRAMBLED_ITEM_COUNT + 1, ZIPFIAN_CONSTANT, SCRAMBLED_ZETAN),
            min,
            itemcount: max - min + 1,
        }
    }

    pub fn itemcount(&self) -> u64 {
        self.itemcount
    }

    /// The inner generator (for checking its constants against YCSB's).
    pub fn inner(&self) -> &Zipfian {
        &self.gen
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        self.min + fnv64(self.gen.next(rng)) % self.itemcount
    }
}

/// YCSB's `SkewedLatestGenerator`: the last acknowledged insert minus a
/// zipfian draw over the keys so far, so the newest keys are the hottest.
#[derive(Clone, Debug)]
pub struct SkewedLatest {
    gen: Zipfian,
    basis: Arc<AcknowledgedCounter>,
}

impl SkewedLatest {
    /// Sums ζ over the keys acknowledged so far: linear in their number.
    pub fn new(basis: Arc<AcknowledgedCounter>) -> SkewedLatest {
        let last = basis.last_value().max(0) as u64;
        SkewedLatest { gen: Zipfian::of_items(last), basis }
    }

    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        let max = self.basis.last_value().max(0) as u64;
        max.saturating_sub(self.gen.next_of(max, rng))
    }
}
