//! fio's `--output-format=json` and `json+` layouts (fio 3.33), with every
//! per-job key fio writes, so existing post-processing works on fsbench
//! output. Values come from the same `RunResult` as every other report;
//! json+'s latency `bins` are fsbench's histograms regrouped in fio's bins.

use super::{unsupported, DocKind, Document, ExportError, Exporter};
use crate::measure::fio_bins;
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

/// fio's json+: json plus each completion-latency histogram as `bins`.
pub struct FioJsonPlus;

impl Exporter for FioJsonPlus {
    fn name(&self) -> &'static str {
        "fio-json+"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["json+"]
    }
    fn help(&self) -> &'static str {
        "fio's json+ layout: fio-json plus clat_ns bins (for fio_jsonplus_clat2csv, fio-plot)"
    }
    fn kinds(&self) -> &'static [DocKind] {
        &[DocKind::Run]
    }
    fn render(&self, doc: &Document) -> Result<String, ExportError> {
        match doc {
            Document::Run(r) => Ok(render_with(r, true)),
            _ => Err(unsupported(self, doc)),
        }
    }
}

pub fn render(r: &RunResult) -> String {
    render_with(r, false)
}

fn render_with(r: &RunResult, plus: bool) -> String {
    let mut s = serde_json::to_string_pretty(&document(r, plus)).expect("json");
    s.push('\n');
    s
}

/// fio's JSON document of a run; the terse format is a projection of it.
pub(super) fn document(r: &RunResult, plus: bool) -> Value {
    let jobs: Vec<Value> = r.jobs.iter().map(|j| job(r, j, plus)).collect();
    let mut top = Map::new();
    top.insert("fio version".into(), json!(format!("fsbench-{}", r.fsbench_version)));
    top.insert("timestamp".into(), json!(r.started_unix));
    top.insert("timestamp_ms".into(), json!(r.started_unix * 1000));
    top.insert("time".into(), json!(ctime(r.started_unix)));
    // fio prints its [global] section once; fsbench keeps it per job.
    let global = r.jobs.first().and_then(global_options);
    if let Some(g) = global.filter(|g| !g.is_empty()) {
        top.insert("global options".into(), json!(g));
    }
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
    Value::Object(top)
}

fn global_options(j: &JobResult) -> Option<std::collections::BTreeMap<String, String>> {
    j.details.as_ref().and_then(|d| d.get("global_options")).and_then(|g| serde_json::from_value(g.clone()).ok())
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

fn job(r: &RunResult, j: &JobResult, plus: bool) -> Value {
    let g = r.groups.iter().find(|g| g.holds(j.group));
    let secs = j.elapsed_ns as f64 / 1e9;
    let cpu_pct = |v: f64| if secs > 0.0 { v / secs * 100.0 } else { 0.0 };
    let (usr, sys, ctx, majf, minf) = g
        .map(|g| {
            let c = &g.cpu;
            (cpu_pct(c.user_s), cpu_pct(c.system_s), c.voluntary_ctx_switches + c.involuntary_ctx_switches, c.major_faults, c.minor_faults)
        })
        .unwrap_or_default();
    let empty = OpStats::default();
    let dir = |name: &str| direction(j, j.op(name).unwrap_or(&empty), plus);
    // fio's latency_* maps count every I/O's completion latency.
    let all = j.ops.iter().fold(LatencyHist::new(), |mut h, o| {
        h.merge(o.clat.as_ref().unwrap_or(&o.lat));
        h
    });
    let mut m = Map::new();
    m.insert("jobname".into(), json!(j.name));
    m.insert("groupid".into(), json!(j.group));
    let verify = crate::result::verify::VerifyStats::of(j);
    // fio fails a job whose data does not verify with EILSEQ (84), a missed latency
    // target with ETIMEDOUT (110), other I/O errors with EIO.
    let code = match (&j.error, &verify) {
        (None, _) => 0,
        (Some(_), Some(v)) if v.mismatches > 0 => libc::EILSEQ,
        // A latency target missed at depth 1 with latency_percentile=100.
        (Some(e), _) if e.starts_with("latency_target:") => libc::ETIMEDOUT,
        (Some(_), _) => libc::EIO,
    };
    m.insert("error".into(), json!(code));
    // Errors continue_on_error went past (fio's total_err).
    m.insert("total_err".into(), json!(j.ops.iter().map(|o| o.errors).sum::<u64>()));
    m.insert("eta".into(), json!(0));
    m.insert("elapsed".into(), json!(secs.round() as u64));
    // A job's own options: what [global] set is listed once at the top.
    let global = global_options(j).unwrap_or_default();
    let own: Map<String, Value> = j.options.iter().filter(|(k, v)| global.get(*k) != Some(v)).map(|(k, v)| (k.clone(), json!(v))).collect();
    if !own.is_empty() {
        m.insert("job options".into(), Value::Object(own));
    }
    let cmdprio = crate::result::cmdprio::CmdPrioStats::of(j);
    for (d, name) in ["read", "write"].into_iter().enumerate() {
        let mut v = dir(name);
        if let (Some(c), Value::Object(o)) = (&cmdprio, &mut v) {
            let shown = c.shown(d);
            if !shown.is_empty() {
                // fio names the figure after what it timed.
                let key = if c.total_latency { "lat_ns" } else { "clat_ns" };
                let list: Vec<Value> =
                    shown.iter().map(|p| json!({ "prioclass": p.prioclass, "prio": p.prio, key: lat_obj(&p.lat, true) })).collect();
                o.insert("prios".into(), Value::Array(list));
            }
        }
        m.insert(name.into(), v);
    }
    m.insert("trim".into(), dir("trim"));
    let sync = j.op("sync").unwrap_or(&empty);
    m.insert("sync".into(), json!({ "total_ios": sync.ops, "lat_ns": lat_obj(&sync.lat, true) }));
    m.insert("job_runtime".into(), json!(j.elapsed_ns / 1_000_000));
    m.insert("usr_cpu".into(), json!(usr));
    m.insert("sys_cpu".into(), json!(sys));
    m.insert("ctx".into(), json!(ctx));
    m.insert("majf".into(), json!(majf));
    m.insert("minf".into(), json!(minf));
    let depth = |key: &str| j.details.as_ref().and_then(|d| d.get(key)).and_then(|v| serde_json::from_value::<Vec<u64>>(v.clone()).ok());
    let sync_engine = j.ops.iter().all(|o| o.clat.is_none());
    let level = depth("iodepth_level").unwrap_or_else(|| one_per_call(0, j, sync_engine));
    let submit = depth("iodepth_submit").unwrap_or_else(|| one_per_call(1, j, sync_engine));
    let complete = depth("iodepth_complete").unwrap_or_else(|| one_per_call(1, j, sync_engine));
    m.insert("iodepth_level".into(), percent_map(&["1", "2", "4", "8", "16", "32", ">=64"], &level));
    m.insert("iodepth_submit".into(), percent_map(&BATCH_KEYS, &submit));
    m.insert("iodepth_complete".into(), percent_map(&BATCH_KEYS, &complete));
    let [ns, us, ms] = latency_maps(&all);
    m.insert("latency_ns".into(), ns);
    m.insert("latency_us".into(), us);
    m.insert("latency_ms".into(), ms);
    let iodepth = j.resolved.get("iodepth").and_then(Value::as_u64).unwrap_or(1);
    // Without a latency target fio prints the iodepth, target 0, window 0, 100%.
    let lat = j.resolved.get("misc").and_then(|m| m.get("latency"));
    let lat_u64 = |k: &str| lat.and_then(|l| l.get(k)).and_then(Value::as_u64).unwrap_or(0);
    m.insert("latency_depth".into(), json!(crate::result::steady::latency_depth(j).unwrap_or(iodepth)));
    m.insert("latency_target".into(), json!(lat_u64("target_ns")));
    m.insert("latency_percentile".into(), json!(lat.and_then(|l| l.get("percentile")).and_then(Value::as_f64).unwrap_or(100.0)));
    m.insert("latency_window".into(), json!(lat_u64("window_us")));
    if let Some(ss) = crate::result::steady::SteadyReport::of(j) {
        m.insert("steadystate".into(), steadystate(&ss));
    }
    if let Some(v) = verify {
        // Not a fio field (fio prints only failures): what was read back and checked.
        m.insert(
            "verify".into(),
            json!({ "method": v.method, "verified_blocks": v.blocks, "verified_bytes": v.bytes, "mismatches": v.mismatches }),
        );
    }
    Value::Object(m)
}

/// fio 3.33's `steadystate` object: the criterion as text with six
/// decimals (and `%`), the window's samples oldest first, integer means.
fn steadystate(ss: &crate::result::steady::SteadyReport) -> Value {
    let pct = if ss.percent { "%" } else { "" };
    json!({
        "ss": ss.ss,
        "duration": ss.duration,
        "attained": u8::from(ss.attained),
        "criterion": format!("{:.6}{pct}", ss.criterion as f32),
        "max_deviation": ss.max_deviation,
        "slope": ss.slope,
        "data": {
            "bw_mean": ss.bw_mean(),
            "iops_mean": ss.iops_mean(),
            "iops": ss.iops,
            "bw": ss.bw,
        },
    })
}

const BATCH_KEYS: [&str; 7] = ["0", "4", "8", "16", "32", "64", ">=64"];

/// A result without depth counts (written before fsbench kept them): what
/// a synchronous engine does, one I/O per call; unknown otherwise (zeros).
fn one_per_call(bucket: usize, j: &JobResult, sync_engine: bool) -> Vec<u64> {
    let mut v = vec![0; 7];
    if sync_engine {
        v[bucket] = j.ops.iter().map(|o| o.ops).sum();
    }
    v
}

/// Counts as fio's percentages (six decimals), keyed as fio keys them.
fn percent_map(keys: &[&str], counts: &[u64]) -> Value {
    let total: u64 = counts.iter().sum();
    let m: Map<String, Value> = keys
        .iter()
        .zip(counts.iter().chain(std::iter::repeat(&0)))
        .map(|(k, &c)| (k.to_string(), json!(if total > 0 { round6(c as f64 * 100.0 / total as f64) } else { 0.0 })))
        .collect();
    Value::Object(m)
}

fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

fn direction(j: &JobResult, op: &OpStats, plus: bool) -> Value {
    let runtime_ms = op.active_ns.unwrap_or(j.elapsed_ns) / 1_000_000;
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
    let (slat, mut clat) = match (&op.slat, &op.clat) {
        (Some(s), Some(c)) => (lat_obj(s, false), lat_obj(c, true)),
        _ => (lat_obj(&LatencyHist::new(), false), lat_obj(&op.lat, true)),
    };
    if plus && op.ops > 0 {
        if let Value::Object(m) = &mut clat {
            m.insert("bins".into(), bins(op.clat.as_ref().unwrap_or(&op.lat)));
        }
    }
    json!({
        "io_bytes": op.bytes,
        "io_kbytes": op.bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        "iops": op.iops(j.elapsed_ns),
        "runtime": if op.ops > 0 { runtime_ms } else { 0 },
        // fio counts an I/O that failed (and was gone past) as issued.
        "total_ios": op.ops + op.errors,
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

/// json+'s `bins`: fio's bin value (ns, as a string) to the number of
/// I/Os in it, non-empty bins only. fsbench's finer buckets are each put
/// in the fio bin that holds their value.
fn bins(h: &LatencyHist) -> Value {
    let mut counts: std::collections::BTreeMap<usize, u64> = std::collections::BTreeMap::new();
    for (v, c) in h.buckets() {
        *counts.entry(fio_bins::index(v)).or_default() += c;
    }
    Value::Object(counts.into_iter().map(|(i, c)| (fio_bins::value(i).to_string(), json!(c))).collect())
}

/// fio's `latency_ns`, `latency_us` and `latency_ms`: the percentage of all
/// I/Os whose completion latency falls in each range. The three maps split
/// one distribution (below 1 µs, below 1 ms, the rest), so together they
/// add up to 100; a key is the range's upper bound in the map's unit (the
/// "10" of latency_us holds 4 µs to 10 µs), and ">=2000" of latency_ms
/// holds 2 s and more.
fn latency_maps(h: &LatencyHist) -> [Value; 3] {
    const BOUNDS: [u64; 10] = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let total = h.count();
    let counts: Vec<(u64, u64)> = h.buckets().collect();
    let pct = |lo: u64, hi: u64| {
        let n: u64 = counts.iter().filter(|(v, _)| *v >= lo && *v < hi).map(|(_, c)| c).sum();
        json!(if total > 0 { round6(n as f64 * 100.0 / total as f64) } else { 0.0 })
    };
    let map = |unit: u64, extra: &[(&str, u64, u64)]| {
        let mut m = Map::new();
        let mut lo = if unit == 1 { 0 } else { unit };
        for b in BOUNDS {
            let hi = b * unit;
            m.insert(b.to_string(), pct(lo, hi));
            lo = hi;
        }
        for (k, lo, hi) in extra {
            m.insert(k.to_string(), pct(*lo, *hi));
        }
        Value::Object(m)
    };
    let ms = 1_000_000;
    [map(1, &[]), map(1000, &[]), map(ms, &[("2000", 1000 * ms, 2000 * ms), (">=2000", 2000 * ms, u64::MAX)])]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_maps_split_all_ios_and_have_fios_keys() {
        let mut h = LatencyHist::new();
        for _ in 0..90 {
            h.record(71_000); // 71 µs: latency_us "100"
        }
        for _ in 0..9 {
            h.record(400); // latency_ns "500" (250 to 500 ns)
        }
        h.record(2_500_000_000); // 2.5 s: latency_ms ">=2000"
        let [ns, us, ms] = latency_maps(&h);
        let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
        let mut want: Vec<&str> = vec!["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"];
        want.sort();
        assert_eq!(keys(&ns), want);
        assert_eq!(keys(&us), want);
        want.extend(["2000", ">=2000"]);
        want.sort();
        assert_eq!(keys(&ms), want);
        assert_eq!(us["100"], json!(90.0));
        assert_eq!(ns["500"], json!(9.0));
        assert_eq!(ms[">=2000"], json!(1.0));
        assert_eq!(ms["2"], json!(0.0), "71 µs is not in the 1-2 ms range");
        let sum: f64 =
            [ns, us, ms].iter().flat_map(|m| m.as_object().unwrap().values().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>()).sum();
        assert!((sum - 100.0).abs() < 1e-6, "{sum}");
    }

    #[test]
    fn bins_are_fio_bin_values_with_every_io() {
        let mut h = LatencyHist::new();
        for v in [100, 100, 10_690, 5_000_000] {
            h.record(v);
        }
        let b = bins(&h);
        let m = b.as_object().unwrap();
        assert_eq!(m["100"], json!(2));
        assert_eq!(m["10688"], json!(1));
        assert_eq!(m.values().map(|v| v.as_u64().unwrap()).sum::<u64>(), 4);
    }

    #[test]
    fn depth_maps_are_percentages_of_their_counts() {
        let v = percent_map(&BATCH_KEYS, &[0, 3, 1, 0, 0, 0, 0]);
        assert_eq!(v["4"], json!(75.0));
        assert_eq!(v["8"], json!(25.0));
        assert_eq!(v.as_object().unwrap().len(), 7);
    }
}
