//! YCSB's final figures as its exporters write them (text:
//! `[METRIC], Measurement, value`; JSON: pretty objects one after another,
//! or one array), in the order YCSB prints its metrics, so scripts that
//! read YCSB's output read fsbench's. Numbers as Java prints them: doubles
//! by `Double.toString`, latencies in whole microseconds.
//!
//! What is not YCSB's: there are no JVM garbage-collection lines (no JVM
//! ran), and after YCSB's figures come fsbench's in the same
//! `[METRIC], Measurement, value` shape, named `FSBENCH-…`: the bytes the
//! client wrote, the bytes the device received, their ratio (write
//! amplification), the CPU, and the store's own counters. With `exportfile`
//! the figures go to that file, as YCSB writes them there.

use super::Layout;
use crate::model::ycsb::{Exporter, Measurement};
use crate::result::ycsb::YcsbDetails;
use crate::result::{JobResult, RunResult};
use crate::units::java;

pub const LAYOUT: Layout = Layout {
    name: "ycsb",
    about: "YCSB's final figures exactly as its text or JSON exporter writes them, then fsbench's: device bytes, write amplification, CPU, the store's counters",
    render: run,
    files,
    charts: super::no_charts,
};

/// One value of a line: an integer, or a Java double.
enum V {
    Int(u64),
    Dbl(f64),
}

impl V {
    fn text(&self) -> String {
        match self {
            V::Int(n) => n.to_string(),
            V::Dbl(x) => java::double(*x),
        }
    }
}

fn run(r: &RunResult) -> String {
    let mut out = String::new();
    for j in &r.jobs {
        let Some(d) = j.details_as::<YcsbDetails>() else {
            return super::by_group(r, super::fio::job);
        };
        if d.settings.exportfile.is_none() {
            out.push_str(&figures(j, &d, r));
        }
        if let Some(e) = &j.error {
            out.push_str(&format!("*** FAILED: {e}; the figures above show what ran and are not a result ***\n"));
        }
    }
    if r.partial {
        out.push_str("*** PARTIAL RESULTS: the run was interrupted; figures cover what ran ***\n");
    }
    out
}

fn files(r: &RunResult) -> Vec<(std::path::PathBuf, String)> {
    r.jobs
        .iter()
        .filter_map(|j| {
            let d = j.details_as::<YcsbDetails>()?;
            let path = d.settings.exportfile.clone()?;
            Some((path, figures(j, &d, r)))
        })
        .collect()
}

/// Every line YCSB's exporter writes, then fsbench's, in the exporter's form.
pub fn figures(j: &JobResult, d: &YcsbDetails, r: &RunResult) -> String {
    let lines = lines(j, d, r);
    match d.settings.exporter {
        Exporter::Text => lines.iter().map(|(m, k, v)| format!("[{m}], {k}, {}\n", v.text())).collect(),
        Exporter::Json => {
            let objs: Vec<String> = lines.iter().map(|(m, k, v)| json_object(m, k, v)).collect();
            objs.join(" ")
        }
        Exporter::JsonArray => format!("[ {} ]", lines.iter().map(|(m, k, v)| json_object(m, k, v)).collect::<Vec<_>>().join(", ")),
    }
}

/// Jackson's default pretty printer, as YCSB's JSON exporters use it.
fn json_object(metric: &str, measurement: &str, v: &V) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default().replace("\\u007f", "\u{7f}");
    format!("{{\n  \"metric\" : {},\n  \"measurement\" : {},\n  \"value\" : {}\n}}", q(metric), q(measurement), v.text())
}

/// YCSB's ordinal of a percentile: `50th`, `1st`, `99.9`.
fn ordinal(p: f64) -> String {
    if p.fract() != 0.0 {
        return java::double(p);
    }
    let j = p as u64;
    let suffix = match (j % 100, j % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{j}{suffix}")
}

fn lines(j: &JobResult, d: &YcsbDetails, r: &RunResult) -> Vec<(String, String, V)> {
    let mut out: Vec<(String, String, V)> = Vec::new();
    let mut push = |m: &str, k: &str, v: V| out.push((m.to_string(), k.to_string(), v));
    push("OVERALL", "RunTime(ms)", V::Int(d.runtime_ms));
    push("OVERALL", "Throughput(ops/sec)", V::Dbl(d.throughput()));
    for name in &d.order {
        let Some(op) = j.ops.iter().find(|o| &o.name == name) else { continue };
        let h = &op.lat;
        let us = |ns: u64| ns / 1000;
        push(name, "Operations", V::Int(h.count()));
        push(name, "AverageLatency(us)", V::Dbl(if h.count() == 0 { 0.0 } else { h.mean() / 1000.0 }));
        push(name, "MinLatency(us)", V::Int(us(h.min())));
        push(name, "MaxLatency(us)", V::Int(us(h.max())));
        let timeseries = matches!(d.settings.measurement, Measurement::Timeseries { .. });
        if !timeseries {
            for &p in &d.settings.percentiles {
                push(name, &format!("{}PercentileLatency(us)", ordinal(p)), V::Int(if h.count() == 0 { 0 } else { us(h.percentile(p)) }));
            }
        }
        if let Some(ret) = d.returns.get(name) {
            for st in crate::result::ycsb::STATUS_ORDER {
                if let Some(n) = ret.get(*st) {
                    push(name, &format!("Return={st}"), V::Int(*n));
                }
            }
        }
        if let Some(series) = d.timeseries.get(name) {
            for &(ms, n, ns) in series {
                push(name, &ms.to_string(), V::Dbl(ns as f64 / n.max(1) as f64 / 1000.0));
            }
        }
    }
    // fsbench's figures, in the same shape.
    // The device the store's directory is on: the first one watched (the
    // others are the devices under it).
    let first = r.groups.iter().find_map(|g| g.devices.first());
    push("FSBENCH", "ClientWriteBytes", V::Int(d.client_bytes_written));
    if let Some(dev) = first {
        let device = dev.delta.write_sectors * 512;
        push("FSBENCH", &format!("DeviceWriteBytes({})", dev.name), V::Int(device));
        push("FSBENCH", &format!("DeviceFlushes({})", dev.name), V::Int(dev.delta.flush_ios));
        if d.client_bytes_written > 0 {
            // From a device others write to it is not the store's own: the
            // name says so, so that a script reading WriteAmplification
            // never takes it for one.
            let name = if d.shared_device.is_some() { "WriteAmplification(shared device)" } else { "WriteAmplification" };
            push("FSBENCH", name, V::Dbl(device as f64 / d.client_bytes_written as f64));
        }
    }
    for g in &r.groups {
        push("FSBENCH", "CpuUser(s)", V::Dbl(g.cpu.user_s));
        push("FSBENCH", "CpuSystem(s)", V::Dbl(g.cpu.system_s));
        push("FSBENCH", "ProcessWriteBytes", V::Int(g.process_io.write_bytes));
    }
    for (k, v) in &d.store_counters {
        push(&format!("FSBENCH-{}", j.engine.to_ascii_uppercase()), k, V::Int(*v));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_as_ycsb_writes_them() {
        assert_eq!(ordinal(50.0), "50th");
        assert_eq!(ordinal(1.0), "1st");
        assert_eq!(ordinal(92.0), "92nd");
        assert_eq!(ordinal(13.0), "13th");
        assert_eq!(ordinal(99.9), "99.9");
    }
}
