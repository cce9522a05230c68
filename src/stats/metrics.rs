//! The scalar metrics of one run, and their summaries over repeated runs.
//!
//! A metric is a name with its unit in it and one number per run:
//!
//! | name                      | meaning                                              |
//! |---------------------------|------------------------------------------------------|
//! | `JOB/OP/iops`             | completed operations per second of the measured window |
//! | `JOB/OP/bw_MiB_s`         | bytes per second / 2^20                              |
//! | `JOB/OP/lat_mean_us`      | mean total latency (fio's `lat`), µs                 |
//! | `JOB/OP/lat_p99_us`       | 99th percentile of the total latency, µs             |
//! | `JOB/OP/active_s`         | the time the operation ran, where it is not the job's whole window (a Bonnie++ phase, a verify pass), s |
//! | `JOB/HEADLINE`            | each headline figure the unit declares that is not one of the above (Filebench: `io_summary/ops_s`, `rd_s`, `wr_s`, `MiB_s`, `ms_op`) |
//! | `device/read_MiB`         | what the devices under the files read, MiB           |
//! | `device/write_MiB`        | what they wrote, MiB                                 |
//! | `cpu/us_per_op`           | process CPU time (user + system) per operation, µs   |
//! | `trace/…`                 | with `--trace`, the trace analysis's figures (`TraceAnalysis::metrics`: dispatches, each role's part of the traced bytes, write amplification, btt's phases, queue depth, idle time) |
//!
//! `JOB` is the job's name; when several reported units share a name (the
//! clones of a job with `numjobs` and no `group_reporting`), the second is
//! `JOB#2`, the third `JOB#3` and so on, in the order of the result.
//! Latency metrics are left out for an operation that completed nothing.
//!
//! Device figures add up the devices of every group, counting each device
//! once: a device named in another watched device's `underlying` list (the
//! disk under a partition, the disks under a dm or loop device) is skipped,
//! because its counters already include, or duplicate, the I/O of the device
//! on top. Device metrics are absent when no device was watched (tmpfs), and
//! `cpu/us_per_op` when nothing completed or the result has no groups.

use super::summary::{summarize, Summary};
use crate::result::warning::{few_of, Code, Warning};
use crate::result::{JobResult, RunResult};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, HashMap};

const MIB: f64 = 1048576.0;

/// Coefficient of variation above which `warnings` complains.
pub const CV_WARN: f64 = 0.05;

/// The scalar metrics of one run, in a stable order: jobs and operations as
/// the result lists them, then devices, then CPU.
pub fn metrics(r: &RunResult) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = Vec::new();
    for (jname, job) in unit_names(r) {
        for op in &job.ops {
            let p = format!("{jname}/{}", op.name);
            out.push((format!("{p}/iops"), op.iops(job.elapsed_ns)));
            out.push((format!("{p}/bw_MiB_s"), op.bytes_per_sec(job.elapsed_ns) / MIB));
            // An operation timed on its own (a Bonnie++ phase): its time, which says
            // whether Bonnie++ would have given its rate at all.
            if let Some(ns) = op.active_ns {
                out.push((format!("{p}/active_s"), ns as f64 / 1e9));
            }
            if op.lat.count() > 0 {
                out.push((format!("{p}/lat_mean_us"), op.lat.mean() / 1000.0));
                out.push((format!("{p}/lat_p99_us"), op.lat.percentile(99.0) as f64 / 1000.0));
            }
        }
        // The unit's own headline figures, where they are not per-op ones.
        for h in &job.headline {
            let name = format!("{jname}/{}", h.name);
            if !out.iter().any(|(n, _)| *n == name) {
                out.push((name, h.value));
            }
        }
    }

    let underlying: BTreeSet<&str> =
        r.groups.iter().flat_map(|g| g.devices.iter()).flat_map(|d| d.underlying.iter().map(String::as_str)).collect();
    let (mut read, mut write, mut any) = (0u64, 0u64, false);
    for g in &r.groups {
        let mut counted: BTreeSet<&str> = BTreeSet::new();
        for d in &g.devices {
            if underlying.contains(d.name.as_str()) || !counted.insert(d.name.as_str()) {
                continue;
            }
            any = true;
            read = read.saturating_add(d.delta.read_bytes());
            write = write.saturating_add(d.delta.write_bytes());
        }
    }
    if any {
        out.push(("device/write_MiB".into(), write as f64 / MIB));
        out.push(("device/read_MiB".into(), read as f64 / MIB));
    }

    let ops: u64 = r.jobs.iter().map(|j| j.counted_ops()).sum();
    if ops > 0 && !r.groups.is_empty() {
        let cpu_s: f64 = r.groups.iter().map(|g| g.cpu.user_s + g.cpu.system_s).sum();
        out.push(("cpu/us_per_op".into(), cpu_s * 1e6 / ops as f64));
    }
    // The block trace's figures (`--trace`): dispatches, shares, phases, ...
    if let Some(t) = &r.trace {
        out.extend(t.metrics().into_iter().map(|(name, _, v)| (name.replacen("trace.", "trace/", 1), v)));
    }
    out.retain(|(_, v)| v.is_finite());
    out
}

/// Each reported unit with the name its metrics go under: its own name, or
/// `NAME#k` for the k-th unit of that name.
pub(crate) fn unit_names(r: &RunResult) -> Vec<(String, &JobResult)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    r.jobs
        .iter()
        .map(|job| {
            let k = seen.entry(job.name.as_str()).or_insert(0);
            *k += 1;
            (if *k == 1 { job.name.clone() } else { format!("{}#{}", job.name, k) }, job)
        })
        .collect()
}

/// The metrics the run leads with and their units, named as `metrics`
/// names them.
pub fn headlines(r: &RunResult) -> Vec<(String, String)> {
    unit_names(r)
        .into_iter()
        .flat_map(|(jname, job)| job.headline.iter().map(move |h| (format!("{jname}/{}", h.name), h.unit.clone())))
        .collect()
}

/// One metric summarised over repeated runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricSummary {
    pub metric: String,
    pub summary: Summary,
}

/// The values of each metric present in every one of `runs`, in the order
/// of the first run. Metrics missing from some run are left out.
pub fn collect(runs: &[RunResult]) -> Vec<(String, Vec<f64>)> {
    let per_run: Vec<Vec<(String, f64)>> = runs.iter().map(metrics).collect();
    let Some(first) = per_run.first() else { return Vec::new() };
    let maps: Vec<HashMap<&str, f64>> = per_run.iter().map(|m| m.iter().map(|(k, v)| (k.as_str(), *v)).collect()).collect();
    first
        .iter()
        .filter_map(|(name, _)| {
            let vals: Option<Vec<f64>> = maps.iter().map(|m| m.get(name.as_str()).copied()).collect();
            vals.map(|v| (name.clone(), v))
        })
        .collect()
}

/// Summaries of the metrics present in every one of `runs`.
pub fn summarize_runs(runs: &[RunResult]) -> Vec<MetricSummary> {
    collect(runs).into_iter().map(|(metric, v)| MetricSummary { metric, summary: summarize(&v) }).collect()
}

/// The complaint about metrics whose runs disagree (CV above 5%), as one
/// warning: empty when every metric is steady or has a single run.
pub fn warnings(summaries: &[MetricSummary]) -> Vec<Warning> {
    let unsteady = summaries.iter().filter(|m| m.summary.n >= 2 && m.summary.cv > CV_WARN).map(|m| (m.metric.clone(), m.summary.cv));
    cv_warning(&[(String::new(), unsteady.collect())]).into_iter().collect()
}

/// One warning for every unsteady metric of every group (a comparison's
/// sides, an experiment's cells): `(group label, [(metric, CV)])`; `None`
/// when there are none. An empty label leaves the group unnamed. A run of
/// many jobs has hundreds of metrics: the message names the first two,
/// taken from the groups in turn so that each side shows, and the details
/// list them all.
pub fn cv_warning(groups: &[(String, Vec<(String, f64)>)]) -> Option<Warning> {
    let named = |label: &str, (m, cv): &(String, f64)| {
        if label.is_empty() {
            format!("{m} {:.1}%", cv * 100.0)
        } else {
            format!("{label}: {m} {:.1}%", cv * 100.0)
        }
    };
    let longest = groups.iter().map(|(_, ms)| ms.len()).max().unwrap_or(0);
    let listed: Vec<String> =
        (0..longest).flat_map(|i| groups.iter().filter_map(move |(label, ms)| ms.get(i).map(|m| named(label, m)))).collect();
    if listed.is_empty() {
        return None;
    }
    let count = listed.len();
    let message = format!(
        "the runs disagree (CV above {:.0}%) for {count} metric{}: {}; add repeats or control the environment",
        CV_WARN * 100.0,
        if count == 1 { "" } else { "s" },
        few_of(&listed, 2, 40, ", ")
    );
    Some(Warning::new(Code::Unsteady, message).with_details(listed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::testutil::*;

    fn get(m: &[(String, f64)], k: &str) -> f64 {
        m.iter().find(|(n, _)| n == k).unwrap_or_else(|| panic!("no {k} in {m:?}")).1
    }

    #[test]
    fn per_op_metrics_with_units() {
        // 1000 reads of 4 KiB in 0.5 s, latencies 100..=1099 µs.
        let r = run(&[job("x", 500_000_000, &[op("read", 1000, 1000 * 4096, 100_000)])], &[]);
        let m = metrics(&r);
        assert!((get(&m, "x/read/iops") - 2000.0).abs() < 1e-9);
        assert!((get(&m, "x/read/bw_MiB_s") - 2000.0 * 4096.0 / 1048576.0).abs() < 1e-9);
        let mean = get(&m, "x/read/lat_mean_us");
        assert!((mean - 599.5).abs() < 1.0, "{mean}");
        let p99 = get(&m, "x/read/lat_p99_us");
        assert!((p99 - 1089.0).abs() < 2.0, "{p99}");
        // No device watched: no device metrics.
        assert!(!m.iter().any(|(n, _)| n.starts_with("device/")));
        assert!((get(&m, "cpu/us_per_op") - 0.5 * 1e6 / 1000.0).abs() < 1e-9);
    }

    #[test]
    fn duplicate_job_names_are_numbered() {
        let r =
            run(&[job("c", 1_000_000_000, &[op("write", 10, 40960, 1000)]), job("c", 1_000_000_000, &[op("write", 20, 81920, 1000)])], &[]);
        let m = metrics(&r);
        assert_eq!(get(&m, "c/write/iops"), 10.0);
        assert_eq!(get(&m, "c#2/write/iops"), 20.0);
    }

    #[test]
    fn devices_count_once_without_underlying() {
        // dm-0 on vda2 on vda: only dm-0 counts; vda2 listed twice counts once.
        let devs = vec![dev("dm-0", &["vda2", "vda"], 2048, 4096), dev("vda2", &["vda"], 2048, 4096), dev("vda", &[], 9999, 9999)];
        let r = run(&[job("x", 1_000_000_000, &[op("read", 1, 4096, 1000)])], &devs);
        let m = metrics(&r);
        assert_eq!(get(&m, "device/read_MiB"), 1.0);
        assert_eq!(get(&m, "device/write_MiB"), 2.0);

        let twice = vec![dev("sdb", &[], 2048, 0), dev("sdb", &[], 2048, 0), dev("sdc", &[], 2048, 0)];
        let r = run(&[job("x", 1_000_000_000, &[op("read", 1, 4096, 1000)])], &twice);
        assert_eq!(get(&metrics(&r), "device/read_MiB"), 2.0);
    }

    #[test]
    fn empty_ops_have_no_latency_and_no_nan() {
        let r = run(&[job("x", 0, &[op("read", 0, 0, 0)])], &[]);
        let m = metrics(&r);
        assert_eq!(get(&m, "x/read/iops"), 0.0);
        assert!(!m.iter().any(|(n, _)| n.contains("lat_")));
        assert!(!m.iter().any(|(n, _)| n == "cpu/us_per_op"));
        assert!(m.iter().all(|(_, v)| v.is_finite()));
    }

    #[test]
    fn summaries_keep_metrics_present_everywhere() {
        let a = run(&[job("x", 1_000_000_000, &[op("read", 100, 409600, 1000)])], &[]);
        let b = run(&[job("x", 1_000_000_000, &[op("read", 110, 450560, 1000), op("write", 5, 20480, 1000)])], &[]);
        let c = run(&[job("x", 1_000_000_000, &[op("read", 90, 368640, 1000)])], &[]);
        let s = summarize_runs(&[a, b, c]);
        let names: Vec<&str> = s.iter().map(|m| m.metric.as_str()).collect();
        assert_eq!(names[..4], ["x/read/iops", "x/read/bw_MiB_s", "x/read/lat_mean_us", "x/read/lat_p99_us"]);
        assert!(!names.iter().any(|n| n.contains("write")));
        let iops = &s[0].summary;
        assert_eq!((iops.n, iops.mean, iops.sd), (3, 100.0, 10.0));

        let w = warnings(&s);
        assert_eq!(w.len(), 1, "one line: {w:?}");
        assert_eq!(w[0].code, Code::Unsteady);
        assert!(w[0].message.starts_with("the runs disagree (CV above 5%) for "), "{w:?}");
        assert!(w[0].message.contains("x/read/iops 10.0%") && w[0].message.ends_with("; add repeats or control the environment"), "{w:?}");
        let two = cv_warning(&[("A".into(), vec![("m".into(), 0.1)]), ("B".into(), vec![]), ("C".into(), vec![("n".into(), 0.2)])]);
        assert_eq!(
            two.unwrap().message,
            "the runs disagree (CV above 5%) for 2 metrics: A: m 10.0%, C: n 20.0%; add repeats or control the environment"
        );
        assert!(summarize_runs(&[]).is_empty());
    }

    #[test]
    fn no_warning_for_steady_or_single_runs() {
        let a = run(&[job("x", 1_000_000_000, &[op("read", 100, 409600, 1000)])], &[]);
        let b = run(&[job("x", 1_000_000_000, &[op("read", 101, 413696, 1000)])], &[]);
        let iops = |s: &[MetricSummary]| warnings(s).into_iter().filter(|w| w.message.contains("iops")).count();
        assert_eq!(iops(&summarize_runs(&[a.clone(), b])), 0);
        assert_eq!(iops(&summarize_runs(&[a])), 0);
    }

    #[test]
    fn many_unsteady_metrics_make_one_short_warning() {
        // A run of many jobs has hundreds of metrics; the line used to name
        // every one of them (thousands of characters).
        let groups: Vec<(String, Vec<(String, f64)>)> = ["A", "B"]
            .iter()
            .map(|side| (side.to_string(), (0..400).map(|j| (format!("job-with-a-long-name-{j}/read/lat_p99_us"), 0.3)).collect()))
            .collect();
        let w = cv_warning(&groups).unwrap();
        assert!(w.message.chars().count() <= 200, "{} chars: {}", w.message.chars().count(), w.message);
        assert!(w.message.contains("for 800 metrics: A: job-with-a-long-name-0/") && w.message.contains("and 798 more"), "{}", w.message);
        assert!(w.message.contains(", B: job-with-a-long-name-0/"), "both sides named: {}", w.message);
        assert_eq!(w.details.len(), 800, "the whole list is kept");
    }
}
