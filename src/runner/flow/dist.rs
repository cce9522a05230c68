//! Sampling WML's `randvar` and `cvar` variables.
//!
//! Every draw comes from the caller's xoshiro stream, so a seeded run
//! reproduces its sizes and offsets exactly (Filebench's randvars share one
//! unlocked erand48 state and its cvars seed themselves from /dev/urandom).
//!
//! Post-processing follows Filebench 1.5:
//! - randvar: the distribution already includes `min` (see [`Dist`]); the
//!   result is rounded to the *nearest* multiple of `round`.
//! - cvar: the value is truncated to an integer, rounded to the nearest
//!   multiple of `round` (a tie goes down), then clamped to `min`, then to
//!   `max`. A clamp can therefore produce a non-multiple, as in Filebench.
//!
//! The result is then truncated to an integer (Filebench reads variables
//! with an integer cast) and never negative: anything below zero, and NaN,
//! becomes 0; anything beyond `u64::MAX` saturates.
//!
//! Parameter meanings of the cvar libraries (from Filebench's cvar sources,
//! which call the mtwist `randistrs` routines):
//! - cvar-lognormal: `exp(N(mu = scale, sigma = shape))`, i.e. `scale` is
//!   the mean of the logarithm, not `ln(scale)`. Mean `exp(scale + shape²/2)`.
//! - cvar-erlang: the value Filebench calls `rate` is used as the *mean* of
//!   the distribution (a sum of `shape` exponentials of mean `rate/shape`);
//!   a shape below 1 counts as 1.
//! - cvar-weibull: `scale * (-ln U)^(1/shape)`.
//! - cvar-triangular: lower, upper and mode as usual.
//!
//! Degenerate parameters never panic; each case is listed at the
//! distribution in [`draw`] and mirrored by [`mean`].

use crate::model::flow::{Dist, Num, RandVar};
use crate::runner::rng::Rng;

/// One value of `var`: the distribution, then the randvar or cvar
/// post-processing described in the module comment. Allocation-free; a
/// tabular variable sums its row weights per draw rather than needing a
/// prepared table, since WML tables have a handful of rows.
pub fn sample(var: &RandVar, rng: &mut Rng) -> u64 {
    let x = draw(&var.dist, var.min, rng);
    if is_cvar(&var.dist) {
        finish_cvar(x, var.round, var.min, var.max)
    } else {
        finish_randvar(x, var.round)
    }
}

/// A Num's value: the constant (drawing nothing from `rng`), or a fresh
/// sample of `vars[i]`; an index out of range yields 0.
pub fn value(n: Num, vars: &[RandVar], rng: &mut Rng) -> u64 {
    match n {
        Num::Fixed(v) => v,
        Num::Random(i) => vars.get(i).map_or(0, |v| sample(v, rng)),
    }
}

/// Expected value of the distribution before rounding, clamping and the
/// integer cast (randvar `min` included). May be negative, infinite or NaN
/// when the parameters are.
pub fn mean(var: &RandVar) -> f64 {
    let min = var.min;
    match var.dist {
        Dist::Gamma { mean, .. } => {
            if mean > min {
                mean
            } else {
                min
            }
        }
        // min + E[U] * 2 * (mean - min)
        Dist::Uniform { mean } => mean,
        Dist::Tabular { ref rows } => {
            let total = total_weight(rows);
            if rows.is_empty() {
                0.0
            } else if total > 0.0 {
                rows.iter().map(|&(p, lo, hi)| p as f64 * (lo + hi) / 2.0).sum::<f64>() / total
            } else {
                rows.iter().map(|&(_, lo, hi)| (lo + hi) / 2.0).sum::<f64>() / rows.len() as f64
            }
        }
        Dist::CvarGamma { mean, .. } => mean,
        Dist::CvarNormal { mean, .. } => mean,
        Dist::CvarUniform { lower, upper } => (lower + upper) / 2.0,
        Dist::CvarLognormal { shape, scale } => (scale + shape * shape / 2.0).exp(),
        Dist::CvarExponential { mean } => mean,
        Dist::CvarTriangular { lower, upper, mode } => {
            let (lo, hi, m) = triangle(lower, upper, mode);
            (lo + hi + m) / 3.0
        }
        Dist::CvarWeibull { shape, scale } => {
            if shape > 0.0 && shape.is_finite() {
                scale * statrs::function::gamma::gamma(1.0 + 1.0 / shape)
            } else {
                scale
            }
        }
        Dist::CvarErlang { rate, .. } => rate,
    }
}

/// A uniform f64 in [0, 1): the top 53 bits of one xoshiro output.
#[inline]
pub fn unit(rng: &mut Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Gamma(shape, scale) by Marsaglia–Tsang; a shape below 1 draws
/// Gamma(shape + 1) and multiplies by `U^(1/shape)`.
/// A shape that is not a positive finite number, or a non-finite scale,
/// is treated as a point mass at the mean: returns `shape * scale` when
/// that is finite, else 0.
pub fn gamma(rng: &mut Rng, shape: f64, scale: f64) -> f64 {
    if !(shape > 0.0 && shape.is_finite() && scale.is_finite()) {
        let m = shape * scale;
        return if m.is_finite() { m } else { 0.0 };
    }
    if shape < 1.0 {
        let boost = open_unit(rng).powf(1.0 / shape);
        return gamma_at_least_one(rng, shape + 1.0) * boost * scale;
    }
    gamma_at_least_one(rng, shape) * scale
}

/// Marsaglia–Tsang for shape >= 1, unit scale.
fn gamma_at_least_one(rng: &mut Rng, shape: f64) -> f64 {
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = std_normal(rng);
        let t = 1.0 + c * x;
        if t <= 0.0 {
            continue;
        }
        let v = t * t * t;
        let u = open_unit(rng);
        let x2 = x * x;
        // The squeeze accepts ~98% of draws without a logarithm.
        if u < 1.0 - 0.0331 * x2 * x2 || u.ln() < 0.5 * x2 + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// (0, 1]: safe to take the logarithm of.
#[inline]
fn open_unit(rng: &mut Rng) -> f64 {
    1.0 - unit(rng)
}

/// Standard normal by the polar method; the second variate is dropped so
/// the generator stays stateless (as Filebench's cvar-normal does).
fn std_normal(rng: &mut Rng) -> f64 {
    loop {
        let x = 2.0 * unit(rng) - 1.0;
        let y = 2.0 * unit(rng) - 1.0;
        let s = x * x + y * y;
        if s > 0.0 && s < 1.0 {
            return x * (-2.0 * s.ln() / s).sqrt();
        }
    }
}

fn is_cvar(d: &Dist) -> bool {
    !matches!(d, Dist::Gamma { .. } | Dist::Uniform { .. } | Dist::Tabular { .. })
}

fn total_weight(rows: &[(u32, f64, f64)]) -> f64 {
    rows.iter().map(|&(p, _, _)| p as f64).sum()
}

/// Lower/upper in order and the mode inside them (a NaN mode becomes the
/// midpoint), so a malformed triangle still yields values in its range.
fn triangle(lower: f64, upper: f64, mode: f64) -> (f64, f64, f64) {
    let (lo, hi) = if lower <= upper { (lower, upper) } else { (upper, lower) };
    let m = if mode.is_nan() {
        (lo + hi) / 2.0
    } else if mode < lo {
        lo
    } else if mode > hi {
        hi
    } else {
        mode
    };
    (lo, hi, m)
}

/// The distribution itself, before any post-processing.
fn draw(dist: &Dist, min: f64, rng: &mut Rng) -> f64 {
    match *dist {
        // mean <= min (or NaN): constant `min`; shape not positive: constant
        // `mean` (WML's "gamma 0 = constant").
        Dist::Gamma { mean, shape } => {
            let span = mean - min;
            let positive = span > 0.0;
            if positive && shape > 0.0 && shape.is_finite() {
                min + gamma(rng, shape, span / shape)
            } else if positive {
                mean
            } else {
                min
            }
        }
        // mean < min gives values in [2*mean - min, min], as in Filebench.
        Dist::Uniform { mean } => min + unit(rng) * 2.0 * (mean - min),
        // No rows: 0. All weights 0: rows equally likely. lo > hi: uniform
        // between them all the same.
        Dist::Tabular { ref rows } => {
            let Some(&last) = rows.last() else { return 0.0 };
            let total = total_weight(rows);
            let (lo, hi) = if total > 0.0 {
                let mut target = unit(rng) * total;
                let mut pick = (last.1, last.2);
                for &(p, lo, hi) in rows {
                    let w = p as f64;
                    if target < w {
                        pick = (lo, hi);
                        break;
                    }
                    target -= w;
                }
                pick
            } else {
                let (_, lo, hi) = rows[rng.below(rows.len() as u64) as usize];
                (lo, hi)
            };
            lo + unit(rng) * (hi - lo)
        }
        // Shape not positive: constant `mean`.
        Dist::CvarGamma { mean, shape } => {
            if shape > 0.0 && shape.is_finite() {
                gamma(rng, shape, mean / shape)
            } else {
                mean
            }
        }
        // A negative sigma is its absolute value (the normal is symmetric).
        Dist::CvarNormal { mean, sigma } => mean + sigma.abs() * std_normal(rng),
        // lower > upper: uniform in (upper, lower].
        Dist::CvarUniform { lower, upper } => lower + unit(rng) * (upper - lower),
        Dist::CvarLognormal { shape, scale } => (scale + shape.abs() * std_normal(rng)).exp(),
        Dist::CvarExponential { mean } => -mean * open_unit(rng).ln(),
        Dist::CvarTriangular { lower, upper, mode } => {
            let (lo, hi, m) = triangle(lower, upper, mode);
            let width = hi - lo;
            let has_width = width > 0.0;
            if !has_width {
                return lo;
            }
            let split = (m - lo) / width;
            let u = unit(rng);
            let f = if u < split { (split * u).sqrt() } else { 1.0 - ((1.0 - split) * (1.0 - u)).sqrt() };
            lo + width * f
        }
        // Shape not positive: constant `scale`.
        Dist::CvarWeibull { shape, scale } => {
            if shape > 0.0 && shape.is_finite() {
                scale * (-open_unit(rng).ln()).powf(1.0 / shape)
            } else {
                scale
            }
        }
        // Shape 0 counts as 1 (as in Filebench). Large shapes use the
        // equivalent gamma draw so a sample costs O(1), not O(shape).
        Dist::CvarErlang { shape, rate } => {
            let k = shape.max(1);
            let per_stage = rate / k as f64;
            if k <= 16 {
                (0..k).map(|_| -open_unit(rng).ln()).sum::<f64>() * per_stage
            } else {
                gamma(rng, k as f64, per_stage)
            }
        }
    }
}

/// Negative and NaN become 0; huge values saturate.
fn to_u64(x: f64) -> u64 {
    if x > 0.0 {
        x as u64
    } else {
        0
    }
}

fn finish_randvar(x: f64, round: u64) -> u64 {
    if round == 0 {
        return to_u64(x);
    }
    let r = round as f64;
    to_u64((x / r).round() * r)
}

fn finish_cvar(x: f64, round: u64, min: f64, max: Option<f64>) -> u64 {
    let mut v = x;
    if round > 0 {
        let n = to_u64(x);
        let lower = n - n % round;
        let upper = lower.saturating_add(round);
        v = if n - lower > upper - n { upper } else { lower } as f64;
    }
    // Comparisons with a NaN bound are false, so a NaN bound is ignored.
    if v < min {
        v = min;
    }
    if let Some(max) = max {
        if v > max {
            v = max;
        }
    }
    to_u64(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: usize = 200_000;

    fn var(dist: Dist) -> RandVar {
        RandVar { name: "v".into(), dist, round: 0, min: 0.0, max: None, seed: None }
    }

    fn draws(v: &RandVar, seed: u64) -> Vec<f64> {
        let mut rng = Rng::new(seed);
        (0..N).map(|_| sample(v, &mut rng) as f64).collect()
    }

    fn mean_sd(xs: &[f64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let m = xs.iter().sum::<f64>() / n;
        let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0);
        (m, var.sqrt())
    }

    /// The sample mean lies within 5 standard errors of `expect`; that bound
    /// is itself no looser than 2% (1% unless the CV exceeds 0.9), so the
    /// test has teeth.
    fn check(v: &RandVar, expect: f64, sd: f64, seed: u64) -> Vec<f64> {
        let rel = (mean(v) - expect).abs() / expect.abs();
        assert!(rel < 1e-9, "{}: mean() {} but formula says {expect}", v.name, mean(v));
        let xs = draws(v, seed);
        let (m, _) = mean_sd(&xs);
        let bound = 5.0 * sd / (N as f64).sqrt() + 1.0; // +1: the integer cast
        assert!(bound <= 0.02 * expect.abs(), "{:?}: test bound {bound} too loose", v.dist);
        assert!((m - expect).abs() < bound, "{:?}: sample mean {m}, expected {expect} ± {bound}", v.dist);
        xs
    }

    fn cv(xs: &[f64]) -> f64 {
        let (m, sd) = mean_sd(xs);
        sd / m
    }

    #[test]
    fn unit_is_in_range_and_centred() {
        let mut rng = Rng::new(3);
        let xs: Vec<f64> = (0..N).map(|_| unit(&mut rng)).collect();
        assert!(xs.iter().all(|&x| (0.0..1.0).contains(&x)));
        let (m, sd) = mean_sd(&xs);
        assert!((m - 0.5).abs() < 5.0 * (1.0 / 12f64).sqrt() / (N as f64).sqrt(), "{m}");
        assert!((sd - (1.0 / 12f64).sqrt()).abs() < 0.002, "{sd}");
    }

    #[test]
    fn randvar_gamma_mean_cv_and_min_offset() {
        let (min, m, k) = (10_000.0, 50_000.0, 1.5);
        let mut v = var(Dist::Gamma { mean: m, shape: k });
        v.min = min;
        let xs = check(&v, m, (m - min) / k.sqrt(), 1);
        assert!(xs.iter().all(|&x| x >= min), "a value fell below min");
        let shifted: Vec<f64> = xs.iter().map(|x| x - min).collect();
        let c = cv(&shifted);
        assert!((c / (1.0 / k.sqrt()) - 1.0).abs() < 0.02, "cv {c}");
    }

    #[test]
    fn randvar_uniform_mean_and_range() {
        let (min, m) = (1000.0, 101_000.0);
        let mut v = var(Dist::Uniform { mean: m });
        v.min = min;
        let width = 2.0 * (m - min);
        let xs = check(&v, m, width / 12f64.sqrt(), 2);
        assert!(xs.iter().all(|&x| x >= min && x < min + width));
    }

    #[test]
    fn tabular_shares_follow_percentages_and_mean_is_weighted() {
        let rows = vec![(20, 0.0, 1000.0), (50, 2000.0, 3000.0), (30, 10_000.0, 20_000.0)];
        let v = var(Dist::Tabular { rows: rows.clone() });
        let ex: f64 = rows.iter().map(|&(p, lo, hi)| p as f64 / 100.0 * (lo + hi) / 2.0).sum();
        let ex2: f64 = rows.iter().map(|&(p, lo, hi)| p as f64 / 100.0 * (lo * lo + lo * hi + hi * hi) / 3.0).sum();
        let xs = check(&v, ex, (ex2 - ex * ex).sqrt(), 3);
        for &(p, lo, hi) in &rows {
            let share = xs.iter().filter(|&&x| x >= lo && x <= hi).count() as f64 / N as f64;
            assert!((share * 100.0 - p as f64).abs() < 1.0, "row {lo}-{hi}: {share}");
        }
    }

    #[test]
    fn tabular_weights_not_summing_to_100_are_normalised() {
        let v = var(Dist::Tabular { rows: vec![(10, 100.0, 200.0), (30, 1000.0, 2000.0)] });
        let xs = draws(&v, 4);
        let low = xs.iter().filter(|&&x| x <= 200.0).count() as f64 / N as f64;
        assert!((low - 0.25).abs() < 0.01, "{low}");
        assert!(xs.iter().all(|&x| (100.0..=2000.0).contains(&x)));
    }

    #[test]
    fn cvar_gamma_mean_and_cv_for_several_shapes() {
        for (i, &k) in [0.5, 1.5, 4.0].iter().enumerate() {
            let m = 200_000.0;
            let xs = check(&var(Dist::CvarGamma { mean: m, shape: k }), m, m / k.sqrt(), 10 + i as u64);
            let c = cv(&xs);
            assert!((c * k.sqrt() - 1.0).abs() < 0.02, "shape {k}: cv {c}");
        }
    }

    #[test]
    fn fileserver_size_variable() {
        let v = var(Dist::CvarGamma { mean: 131_072.0, shape: 1.5 });
        let xs = draws(&v, 42);
        let (m, _) = mean_sd(&xs);
        assert!((m / 131_072.0 - 1.0).abs() < 0.01, "mean {m}");
        assert!((cv(&xs) - 0.816).abs() < 0.02, "cv {}", cv(&xs));
    }

    #[test]
    fn cvar_normal_uniform_exponential() {
        check(&var(Dist::CvarNormal { mean: 100_000.0, sigma: 10_000.0 }), 100_000.0, 10_000.0, 20);
        let xs = check(&var(Dist::CvarUniform { lower: 5000.0, upper: 95_000.0 }), 50_000.0, 90_000.0 / 12f64.sqrt(), 21);
        assert!(xs.iter().all(|&x| (5000.0..95_000.0).contains(&x)));
        check(&var(Dist::CvarExponential { mean: 80_000.0 }), 80_000.0, 80_000.0, 22);
    }

    #[test]
    fn cvar_normal_has_its_sigma() {
        let xs = draws(&var(Dist::CvarNormal { mean: 100_000.0, sigma: 10_000.0 }), 23);
        let (_, sd) = mean_sd(&xs);
        assert!((sd / 10_000.0 - 1.0).abs() < 0.01, "{sd}");
    }

    #[test]
    fn cvar_lognormal_uses_scale_as_log_mean() {
        let (shape, scale) = (0.5f64, 11.0f64);
        let m = (scale + shape * shape / 2.0).exp();
        let sd = m * ((shape * shape).exp() - 1.0).sqrt();
        let xs = check(&var(Dist::CvarLognormal { shape, scale }), m, sd, 24);
        let mut sorted = xs.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        let median = sorted[N / 2];
        assert!((median / scale.exp() - 1.0).abs() < 0.01, "median {median}");
    }

    #[test]
    fn cvar_triangular() {
        let (a, b, c) = (10_000.0f64, 100_000.0f64, 30_000.0f64);
        let sd = ((a * a + b * b + c * c - a * b - a * c - b * c) / 18.0).sqrt();
        let xs = check(&var(Dist::CvarTriangular { lower: a, upper: b, mode: c }), (a + b + c) / 3.0, sd, 25);
        assert!(xs.iter().all(|&x| x >= a && x <= b));
        let below_mode = xs.iter().filter(|&&x| x < c).count() as f64 / N as f64;
        assert!((below_mode - (c - a) / (b - a)).abs() < 0.01, "{below_mode}");
    }

    #[test]
    fn cvar_weibull() {
        // Shape 2: mean scale*sqrt(pi)/2, variance scale^2 (1 - pi/4).
        let s = 100_000.0f64;
        let pi = std::f64::consts::PI;
        check(&var(Dist::CvarWeibull { shape: 2.0, scale: s }), s * pi.sqrt() / 2.0, s * (1.0 - pi / 4.0).sqrt(), 26);
        // Shape 1 is the exponential.
        check(&var(Dist::CvarWeibull { shape: 1.0, scale: s }), s, s, 27);
    }

    #[test]
    fn cvar_erlang_rate_is_the_mean() {
        for (i, &k) in [1u64, 3, 40].iter().enumerate() {
            let m = 100_000.0;
            let xs = check(&var(Dist::CvarErlang { shape: k, rate: m }), m, m / (k as f64).sqrt(), 30 + i as u64);
            assert!((cv(&xs) * (k as f64).sqrt() - 1.0).abs() < 0.02, "k {k}: cv {}", cv(&xs));
        }
    }

    #[test]
    fn randvar_rounds_to_nearest_multiple() {
        // A range spanning whole multiples: nearest rounding keeps the mean
        // exactly, rounding down would lose round/2 = 2048.
        let r = 4096.0;
        let min = 240.0 * r;
        let m = min + 5.0 * r;
        let mut v = var(Dist::Uniform { mean: m });
        v.min = min;
        v.round = 4096;
        let xs = draws(&v, 40);
        assert!(xs.iter().all(|&x| x as u64 % 4096 == 0));
        assert!(xs.contains(&min) && xs.contains(&(min + 10.0 * r)));
        let (mu, _) = mean_sd(&xs);
        let bound = 5.0 * 10.0 * r / 12f64.sqrt() / (N as f64).sqrt();
        assert!(bound < 2048.0 / 4.0);
        assert!((mu - m).abs() < bound, "{mu}");
    }

    #[test]
    fn cvar_rounds_then_clamps() {
        let mut v = var(Dist::CvarNormal { mean: 1000.0, sigma: 1000.0 });
        v.round = 100;
        v.min = 550.0;
        v.max = Some(1450.0);
        let xs = draws(&v, 41);
        assert!(xs.iter().all(|&x| (550.0..=1450.0).contains(&x)));
        let at_min = xs.iter().filter(|&&x| x == 550.0).count() as f64 / N as f64;
        let at_max = xs.iter().filter(|&&x| x == 1450.0).count() as f64 / N as f64;
        // P(N(1000, 1000) rounds below 600) = P(X < 550) = Phi(-0.45) = 0.326.
        assert!((at_min - 0.326).abs() < 0.01, "{at_min}");
        assert!((at_max - 0.326).abs() < 0.01, "{at_max}");
        assert!(xs.iter().filter(|&&x| x != 550.0 && x != 1450.0).all(|&x| x as u64 % 100 == 0));
    }

    #[test]
    fn cvar_never_negative() {
        let xs = draws(&var(Dist::CvarNormal { mean: 0.0, sigma: 1000.0 }), 42);
        let zeros = xs.iter().filter(|&&x| x == 0.0).count() as f64 / N as f64;
        assert!(zeros > 0.49, "{zeros}");
    }

    #[test]
    fn same_seed_same_sequence_different_seed_different() {
        let v = var(Dist::CvarGamma { mean: 1e6, shape: 1.5 });
        let seq = |seed| {
            let mut rng = Rng::new(seed);
            (0..64).map(|_| sample(&v, &mut rng)).collect::<Vec<_>>()
        };
        assert_eq!(seq(5), seq(5));
        assert_ne!(seq(5), seq(6));
    }

    #[test]
    fn value_of_fixed_draws_nothing_and_bad_index_is_zero() {
        let vars = vec![var(Dist::CvarUniform { lower: 10.0, upper: 20.0 })];
        let mut a = Rng::new(9);
        let mut b = Rng::new(9);
        assert_eq!(value(Num::Fixed(77), &vars, &mut a), 77);
        assert_eq!(a.next_u64(), b.next_u64(), "a constant consumed randomness");
        let x = value(Num::Random(0), &vars, &mut a);
        assert!((10..20).contains(&x));
        assert_eq!(value(Num::Random(5), &vars, &mut a), 0);
    }

    #[test]
    fn degenerate_parameters_do_not_panic() {
        let nan = f64::NAN;
        let inf = f64::INFINITY;
        let cases = [
            Dist::Gamma { mean: 100.0, shape: 0.0 },
            Dist::Gamma { mean: 100.0, shape: -1.0 },
            Dist::Gamma { mean: nan, shape: nan },
            Dist::Gamma { mean: inf, shape: 1.5 },
            Dist::Uniform { mean: -5.0 },
            Dist::Uniform { mean: nan },
            Dist::Tabular { rows: vec![] },
            Dist::Tabular { rows: vec![(0, 5.0, 6.0), (0, 7.0, 8.0)] },
            Dist::Tabular { rows: vec![(100, 9.0, 1.0)] },
            Dist::CvarGamma { mean: 100.0, shape: 0.0 },
            Dist::CvarGamma { mean: -100.0, shape: 2.0 },
            Dist::CvarGamma { mean: 100.0, shape: 1e-300 },
            Dist::CvarNormal { mean: 100.0, sigma: -3.0 },
            Dist::CvarNormal { mean: nan, sigma: inf },
            Dist::CvarUniform { lower: 10.0, upper: 1.0 },
            Dist::CvarLognormal { shape: -1.0, scale: 800.0 },
            Dist::CvarExponential { mean: -4.0 },
            Dist::CvarTriangular { lower: 10.0, upper: 1.0, mode: 50.0 },
            Dist::CvarTriangular { lower: 3.0, upper: 3.0, mode: nan },
            Dist::CvarWeibull { shape: 0.0, scale: 10.0 },
            Dist::CvarWeibull { shape: 1e-9, scale: 10.0 },
            Dist::CvarErlang { shape: 0, rate: 10.0 },
            Dist::CvarErlang { shape: u64::MAX, rate: 10.0 },
        ];
        let mut rng = Rng::new(1);
        for d in cases {
            let mut v = var(d);
            v.round = 7;
            v.min = nan;
            for _ in 0..1000 {
                sample(&v, &mut rng);
            }
            let _ = mean(&v);
        }
        let mut zero = var(Dist::CvarUniform { lower: 0.0, upper: 1.0 });
        zero.min = 10.0;
        zero.max = Some(5.0); // min > max: max wins, no panic
        assert_eq!(sample(&zero, &mut rng), 5);
    }

    #[test]
    fn degenerate_values_are_the_documented_ones() {
        let mut rng = Rng::new(2);
        let mut s = |d: Dist, min: f64| {
            let mut v = var(d);
            v.min = min;
            sample(&v, &mut rng)
        };
        assert_eq!(s(Dist::Gamma { mean: 100.0, shape: 0.0 }, 10.0), 100);
        assert_eq!(s(Dist::Gamma { mean: 5.0, shape: 1.5 }, 10.0), 10);
        assert_eq!(s(Dist::CvarGamma { mean: 300.0, shape: 0.0 }, 0.0), 300);
        assert_eq!(s(Dist::CvarWeibull { shape: 0.0, scale: 40.0 }, 0.0), 40);
        assert_eq!(s(Dist::Tabular { rows: vec![] }, 0.0), 0);
        assert_eq!(s(Dist::CvarTriangular { lower: 3.0, upper: 3.0, mode: f64::NAN }, 0.0), 3);
        let swapped = s(Dist::CvarUniform { lower: 10.0, upper: 1.0 }, 0.0);
        assert!((1..=10).contains(&swapped));
        // A negative sigma is the same distribution as its absolute value.
        let seq = |sigma: f64| {
            let v = var(Dist::CvarNormal { mean: 1e6, sigma });
            let mut r = Rng::new(8);
            (0..32).map(|_| sample(&v, &mut r)).collect::<Vec<_>>()
        };
        assert_eq!(seq(-1000.0), seq(1000.0));
        assert_eq!(gamma(&mut rng, 0.0, 5.0), 0.0);
        assert_eq!(gamma(&mut rng, -2.0, 5.0), -10.0);
        assert_eq!(gamma(&mut rng, f64::NAN, 5.0), 0.0);
    }
}
