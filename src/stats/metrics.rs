//! stub
use super::summary::{summarize, Summary};
use crate::result::RunResult;
use serde::{Deserialize, Serialize};
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MetricSummary { pub metric: String, pub summary: Summary }
pub fn metrics(r: &RunResult) -> Vec<(String, f64)> { r.jobs.iter().flat_map(|j| j.ops.iter().map(move |o| (format!("{}/{}/iops", j.name, o.name), o.iops(j.elapsed_ns)))).collect() }
pub fn summarize_runs(runs: &[RunResult]) -> Vec<MetricSummary> { let Some(first) = runs.first() else { return vec![] }; metrics(first).into_iter().map(|(m, _)| { let xs: Vec<f64> = runs.iter().filter_map(|r| metrics(r).into_iter().find(|(k, _)| *k == m).map(|x| x.1)).collect(); MetricSummary { metric: m, summary: summarize(&xs) } }).collect() }
pub fn warnings(_m: &[MetricSummary]) -> Vec<String> { vec![] }
