//! stub
use serde::{Deserialize, Serialize};
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Summary { pub n: usize, pub mean: f64, pub sd: f64, pub cv: f64, pub min: f64, pub max: f64, pub median: f64, pub ci95_low: f64, pub ci95_high: f64 }
pub fn summarize(xs: &[f64]) -> Summary { let n = xs.len(); let mean = if n > 0 { xs.iter().sum::<f64>() / n as f64 } else { 0.0 }; Summary { n, mean, ci95_low: mean, ci95_high: mean, median: mean, min: mean, max: mean, ..Default::default() } }
