//! fio's terse format, version 3 (`--minimal`, `--output-format=terse`):
//! one `;`-separated line per job, for the scripts that cut fields out of
//! it. It is a projection of fio's JSON document (`fio_json::document`), so
//! both formats always carry the same figures. Times are in microseconds and
//! bandwidths in KiB/s, as in fio.

use super::{fio_json, unsupported, DocKind, Document, ExportError, Exporter};
use crate::result::RunResult;
use serde_json::Value;
use std::fmt::Write;

pub struct FioTerse;

impl Exporter for FioTerse {
    fn name(&self) -> &'static str {
        "fio-terse"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["terse"]
    }
    fn help(&self) -> &'static str {
        "fio's terse format (version 3): one ';'-separated line per job, as `fio --minimal` writes"
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

/// fio's terse line holds 20 percentile slots; fio's default list has 17.
const PERCENTILE_SLOTS: usize = 20;
const DEPTHS: [&str; 7] = ["1", "2", "4", "8", "16", "32", ">=64"];
const LAT_US: [&str; 10] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"];
const LAT_MS: [&str; 12] = ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"];

pub fn render(r: &RunResult) -> String {
    let doc = fio_json::document(r, false);
    let disks = disk_fields(&doc);
    let mut out = String::new();
    for j in doc["jobs"].as_array().into_iter().flatten() {
        let mut f: Vec<String> = vec!["3".into(), "fio-3.33".into(), text(&j["jobname"]), int(&j["groupid"]), int(&j["error"])];
        for d in ["read", "write"] {
            direction(&j[d], &mut f);
        }
        f.push(pct6(&j["usr_cpu"]));
        f.push(pct6(&j["sys_cpu"]));
        for k in ["ctx", "majf", "minf"] {
            f.push(int(&j[k]));
        }
        f.extend(DEPTHS.iter().map(|k| format!("{:.1}%", num(&j["iodepth_level"][*k]))));
        f.extend(LAT_US.iter().map(|k| format!("{:.2}%", num(&j["latency_us"][*k]))));
        f.extend(LAT_MS.iter().map(|k| format!("{:.2}%", num(&j["latency_ms"][*k]))));
        f.extend(disks.iter().cloned());
        let _ = writeln!(out, "{}", f.join(";"));
    }
    out
}

/// One direction's 41 fields: totals, slat, clat, percentiles, lat, bw.
fn direction(d: &Value, f: &mut Vec<String>) {
    f.push(int(&d["io_kbytes"]));
    f.push(int(&d["bw"]));
    f.push(format!("{}", num(&d["iops"]).round() as u64));
    f.push(int(&d["runtime"]));
    let usec = |v: &Value| num(v) / 1000.0;
    for key in ["slat_ns", "clat_ns"] {
        let l = &d[key];
        f.push(format!("{}", usec(&l["min"]).round() as u64));
        f.push(format!("{}", usec(&l["max"]).round() as u64));
        f.push(format!("{:.6}", usec(&l["mean"])));
        f.push(format!("{:.6}", usec(&l["stddev"])));
    }
    let pcts: Vec<(f64, f64)> = d["clat_ns"]["percentile"]
        .as_object()
        .map(|m| m.iter().filter_map(|(k, v)| Some((k.parse::<f64>().ok()?, usec(v)))).collect())
        .unwrap_or_default();
    for i in 0..PERCENTILE_SLOTS {
        f.push(match pcts.get(i) {
            Some((p, v)) => format!("{p:.6}%={}", v.round() as u64),
            None => "0%=0".into(),
        });
    }
    let l = &d["lat_ns"];
    f.push(format!("{}", usec(&l["min"]).round() as u64));
    f.push(format!("{}", usec(&l["max"]).round() as u64));
    f.push(format!("{:.6}", usec(&l["mean"])));
    f.push(format!("{:.6}", usec(&l["stddev"])));
    f.push(int(&d["bw_min"]));
    f.push(int(&d["bw_max"]));
    f.push(pct6(&d["bw_agg"]));
    f.push(format!("{:.6}", num(&d["bw_mean"])));
    f.push(format!("{:.6}", num(&d["bw_dev"])));
}

/// The disk utilisation fields fio appends to every line, disk after disk.
fn disk_fields(doc: &Value) -> Vec<String> {
    let mut f = Vec::new();
    for d in doc["disk_util"].as_array().into_iter().flatten() {
        f.push(text(&d["name"]));
        for k in ["read_ios", "write_ios", "read_merges", "write_merges", "read_ticks", "write_ticks", "in_queue"] {
            f.push(int(&d[k]));
        }
        f.push(format!("{:.2}%", num(&d["util"])));
    }
    f
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn int(v: &Value) -> String {
    format!("{}", v.as_u64().unwrap_or(0))
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

fn pct6(v: &Value) -> String {
    format!("{:.6}%", num(v))
}
