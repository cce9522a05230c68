//! fio's `--output-format=json` layout (fio 3.33), for the fields fio's
//! ecosystem reads, so existing post-processing works on fsbench output.
//! Values come from the same `RunResult` as every other report.

use super::{unsupported, DocKind, Document, ExportError, Exporter};
use crate::measure::hist::LatencyHist;
use crate::report::format::mean_sd;
use crate::result::{JobResult, OpStats, RunResult};
use serde_json::{json, Map, Value};

pub struct FioJson;

impl Exporter for FioJson {
    fn name(&self) -> &'static str {
        "fio-json"
    }
    fn help(&self) -> &'static str {
        "fio's JSON layout of a single run, for tools that post-process fio output"
    }
    fn kinds(&self) -> &'static [DocKind] {
        &[DocKind::Run]
    }
    fn render(&self, doc: &Document) -> Result<String, ExportError> {
        match doc {
            Document::Run(r) => Ok(render(r)),
            _ => Err(unsupported(self, doc)),
        }
    }
}

pub fn render(r: &RunResult) -> String {
    let jobs: Vec<Value> = r.jobs.iter().map(|j| job(r, j)).collect();
    let mut top = Map::new();
    top.insert("fio version".into(), json!(format!("fsbench-{}", r.fsbench_version)));
    top.insert("timestamp".into(), json!(r.started_unix));
    top.insert("timestamp_ms".into(), json!(r.started_unix * 1000));
    top.insert("time".into(), json!(ctime(r.started_unix)));
    top.insert("jobs".into(), Value::Array(jobs));
    let disks: Vec<Value> = r
        .groups
        .iter()
        .flat_map(|g| g.devices.iter())
        .map(|d| {
            let x = &d.delta;
            json!({
                "name": d.name,
                "read_ios": x.read_ios, "write_ios": x.write_ios,
                "read_merges": x.read_merges, "write_merges": x.write_merges,
                "read_ticks": x.read_ticks_ms, "write_ticks": x.write_ticks_ms,
                "in_queue": x.time_in_queue_ms,
                "util": d.util_pct.unwrap_or(0.0),
            })
        })
        .collect();
    if !disks.is_empty() {
        top.insert("disk_util".into(), Value::Array(disks));
    }
    let mut s = serde_json::to_string_pretty(&Value::Object(top)).expect("json");
    s.push('\n');
    s
}

fn ctime(unix: u64) -> String {
    let t = unix as libc::time_t;
    let mut buf = [0 as libc::c_char; 64];
    // SAFETY: `buf` has 64 bytes, more than the 26 ctime_r writes; `t` is a live time_t; the result is null or points
    // into `buf`.
    let p = unsafe { libc::ctime_r(&t, buf.as_mut_ptr()) };
    if p.is_null() {
        return String::new();
    }
    // SAFETY: `p` is not null, so it points into `buf`, where ctime_r wrote a NUL-terminated string; `buf` outlives
    // this statement, which copies it out.
    unsafe { std::ffi::CStr::from_ptr(p) }.to_string_lossy().trim_end().to_string()
}

fn job(r: &RunResult, j: &JobResult) -> Value {
    let g = r.groups.iter().find(|g| g.group == j.group);
    let secs = j.elapsed_ns as f64 / 1e9;
    let cpu_pct = |v: f64| if secs > 0.0 { v / secs * 100.0 } else { 0.0 };
    let (usr, sys, ctx, majf, minf) = g
        .map(|g| {
            let c = &g.cpu;
            (cpu_pct(c.user_s), cpu_pct(c.system_s), c.voluntary_ctx_switches + c.involuntary_ctx_switches, c.major_faults, c.minor_faults)
        })
        .unwrap_or_default();
    let empty = OpStats::default();
    let dir = |name: &str| direction(j, j.op(name).unwrap_or(&empty));
    let all = j.ops.iter().fold(LatencyHist::new(), |mut h, o| {
        h.merge(&o.lat);
        h
    });
    let mut m = Map::new();
    m.insert("jobname".into(), json!(j.name));
    m.insert("groupid".into(), json!(j.group));
    m.insert("error".into(), json!(if j.error.is_some() { 5 } else { 0 }));
    m.insert("eta".into(), json!(0));
    m.insert("elapsed".into(), json!(secs.round() as u64));
    m.insert("job options".into(), json!(j.options));
    m.insert("read".into(), dir("read"));
    m.insert("write".into(), dir("write"));
    m.insert("trim".into(), dir("trim"));
    let sync = j.op("sync").unwrap_or(&empty);
    m.insert("sync".into(), json!({ "total_ios": sync.ops, "lat_ns": lat_obj(&sync.lat, true) }));
    m.insert("job_runtime".into(), json!(j.elapsed_ns / 1_000_000));
    m.insert("usr_cpu".into(), json!(usr));
    m.insert("sys_cpu".into(), json!(sys));
    m.insert("ctx".into(), json!(ctx));
    m.insert("majf".into(), json!(majf));
    m.insert("minf".into(), json!(minf));
    m.insert("latency_ns".into(), buckets(&all, 1, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000]));
    m.insert("latency_us".into(), buckets(&all, 1000, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000]));
    m.insert("latency_ms".into(), buckets(&all, 1_000_000, &[2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000]));
    Value::Object(m)
}

fn direction(j: &JobResult, op: &OpStats) -> Value {
    let runtime_ms = j.elapsed_ns / 1_000_000;
    let bw_bytes = op.bytes_per_sec(j.elapsed_ns);
    let per_s = |m: &std::collections::BTreeMap<String, Vec<u64>>, scale: f64| -> Vec<f64> {
        m.get(&op.name).map(|v| v.iter().map(|&x| x as f64 / scale).collect()).unwrap_or_default()
    };
    let bw_samples = per_s(&j.timeline.bytes, 1024.0);
    let iops_samples = per_s(&j.timeline.ops, 1.0);
    let (bw_mean, bw_dev) = mean_sd(&bw_samples);
    let (iops_mean, iops_dev) = mean_sd(&iops_samples);
    let minmax = |v: &[f64]| {
        let min = v.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = v.iter().cloned().fold(0.0, f64::max);
        (if min.is_finite() { min } else { 0.0 }, max)
    };
    let (bw_min, bw_max) = minmax(&bw_samples);
    let (iops_min, iops_max) = minmax(&iops_samples);
    // Synchronous engines time one span per I/O: fio calls it clat and lat.
    let (slat, clat) = match (&op.slat, &op.clat) {
        (Some(s), Some(c)) => (lat_obj(s, false), lat_obj(c, true)),
        _ => (lat_obj(&LatencyHist::new(), false), lat_obj(&op.lat, true)),
    };
    json!({
        "io_bytes": op.bytes,
        "io_kbytes": op.bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        "iops": op.iops(j.elapsed_ns),
        "runtime": if op.ops > 0 { runtime_ms } else { 0 },
        "total_ios": op.ops,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": slat,
        "clat_ns": clat,
        "lat_ns": lat_obj(&op.lat, false),
        "bw_min": bw_min.round() as u64,
        "bw_max": bw_max.round() as u64,
        "bw_agg": if op.ops > 0 { 100.0 } else { 0.0 },
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": bw_samples.len(),
        "iops_min": iops_min.round() as u64,
        "iops_max": iops_max.round() as u64,
        "iops_mean": iops_mean,
        "iops_stddev": iops_dev,
        "iops_samples": iops_samples.len(),
    })
}

fn lat_obj(h: &LatencyHist, with_percentiles: bool) -> Value {
    let mut m = Map::new();
    m.insert("min".into(), json!(h.min()));
    m.insert("max".into(), json!(h.max()));
    m.insert("mean".into(), json!(if h.count() > 0 { h.mean() } else { 0.0 }));
    m.insert("stddev".into(), json!(if h.count() > 0 { h.stddev() } else { 0.0 }));
    m.insert("N".into(), json!(h.count()));
    if with_percentiles && h.count() > 0 {
        let p: Map<String, Value> =
            crate::measure::hist::PERCENTILES.iter().map(|p| (format!("{p:.6}"), json!(h.percentile(*p)))).collect();
        m.insert("percentile".into(), Value::Object(p));
    }
    Value::Object(m)
}

/// fio's coarse "percentage of I/Os with latency ≤ bound" buckets; the last
/// ms bucket is ">=2000".
fn buckets(h: &LatencyHist, unit_ns: u64, bounds: &[u64]) -> Value {
    let total = h.count().max(1) as f64;
    let mut m = Map::new();
    let mut lower = 0u64;
    let counts: Vec<(u64, u64)> = h.buckets().collect();
    let in_range = |lo: u64, hi: u64| counts.iter().filter(|(v, _)| *v > lo && *v <= hi).map(|(_, c)| c).sum::<u64>();
    for (i, &b) in bounds.iter().enumerate() {
        let is_last_ms = unit_ns == 1_000_000 && i + 1 == bounds.len();
        let (key, n) = if is_last_ms {
            (">=2000".to_string(), in_range(lower, u64::MAX))
        } else {
            let hi = b * unit_ns;
            let n = in_range(lower, hi);
            lower = hi;
            (b.to_string(), n)
        };
        m.insert(key, json!(n as f64 * 100.0 / total));
    }
    Value::Object(m)
}
