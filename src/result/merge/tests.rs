use super::*;
use crate::measure::hist::PERCENTILES;
use crate::result::testutil::{dev, job, run};
use crate::result::{OpClass, Timeline};

/// An operation that saw exactly these latencies, 4 KiB each.
fn op_of(name: &str, lats: &[u64]) -> OpStats {
    let mut o = OpStats::new(name, OpClass::DataRead, false);
    for &l in lats {
        o.lat.record(l);
    }
    o.ops = lats.len() as u64;
    o.bytes = 4096 * o.ops;
    o
}

/// Latencies spread over four decades.
fn samples() -> Vec<u64> {
    (0..20_000u64).map(|i| 1_000 + (i * i * 7919) % 9_000_000).collect()
}

/// One rank's run: its group opened at `start_ns` for `elapsed_ns`, one job
/// doing `read` with these latencies over the same span.
fn rank(start_ns: u64, elapsed_ns: u64, lats: &[u64]) -> RunResult {
    let mut r = run(&[job("x", elapsed_ns, &[op_of("read", lats)])], &[dev("sda", &[], 8, 0)]);
    r.groups[0].started_unix_ns = Some(start_ns);
    r.groups[0].elapsed_ns = elapsed_ns;
    r.groups[0].cpu.wall_s = elapsed_ns as f64 / 1e9;
    r
}

#[test]
fn merged_halves_have_the_histogram_of_all_samples() {
    let all = samples();
    // Halves unlike each other: neither one's percentiles are the whole's.
    let (a, b): (Vec<u64>, Vec<u64>) = all.iter().partition(|&&l| l < 2_000_000);
    let whole = op_of("read", &all);
    let merged = merge_runs(&[rank(0, 1_000_000_000, &a), rank(0, 1_000_000_000, &b)]).unwrap();
    let m = merged.jobs[0].op("read").unwrap();
    assert_eq!((m.ops, m.bytes), (whole.ops, whole.bytes));
    assert_eq!(m.lat.count(), all.len() as u64);
    for &p in PERCENTILES {
        assert_eq!(m.lat.percentile(p), whole.lat.percentile(p), "p{p}");
    }
    assert_eq!((m.lat.min(), m.lat.max()), (whole.lat.min(), whole.lat.max()));
    assert_eq!(m.lat.mean(), whole.lat.mean());
    // Neither half alone would have passed.
    let half = op_of("read", &a);
    assert_ne!(half.lat.percentile(50.0), whole.lat.percentile(50.0));
}

#[test]
fn the_span_is_the_union_and_bandwidth_is_over_it() {
    // Rank 1 opens its window 1 s after rank 0; each runs 2 s.
    let s = 1_700_000_000_000_000_000;
    let lats = [10_000; 1000];
    let merged = merge_runs(&[rank(s, 2_000_000_000, &lats), rank(s + 1_000_000_000, 2_000_000_000, &lats)]).unwrap();
    let g = &merged.groups[0];
    assert_eq!(g.started_unix_ns, Some(s));
    assert_eq!(g.elapsed_ns, 3_000_000_000);
    assert_eq!(g.cpu.wall_s, 3.0);
    assert!((g.cpu.user_s - 0.6).abs() < 1e-9, "CPU time adds: {}", g.cpu.user_s);
    assert_eq!(g.devices.len(), 2, "each rank's devices, as measured");
    let j = &merged.jobs[0];
    assert_eq!(j.elapsed_ns, 3_000_000_000);
    let read = j.op("read").unwrap();
    // 2000 ops of 4 KiB over 3 s, not the sum of two 2-second rates.
    assert_eq!(read.iops(j.elapsed_ns), 2000.0 / 3.0);
    assert_eq!(read.bytes_per_sec(j.elapsed_ns), 2000.0 * 4096.0 / 3.0);
    assert_eq!(j.threads, 2);
}

#[test]
fn an_operation_timed_apart_ends_at_its_latest_rank() {
    let mut a = op_of("read", &[1000]);
    a.active_ns = Some(500);
    let mut b = op_of("read", &[1000]);
    b.active_ns = Some(700);
    let only_b = op_of("write", &[1000]);
    let ops = merge_ops(&[(std::slice::from_ref(&a), 0, 1000), (&[b, only_b], 400, 1000)]);
    assert_eq!(ops.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["read", "write"]);
    assert_eq!(ops[0].active_ns, Some(1100));
    assert_eq!(ops[1].active_ns, None, "timed with its unit in the one rank that has it");
}

#[test]
fn timelines_add_per_interval_on_the_ranks_clock() {
    let t = |v: &[u64]| {
        let mut t = Timeline { interval_ms: 1000, ..Default::default() };
        t.ops.insert("read".into(), v.to_vec());
        t.bytes.insert("read".into(), v.iter().map(|x| x * 4096).collect());
        t
    };
    let (a, b) = (t(&[1, 2, 3]), t(&[10, 20]));
    let m = merge_timelines(&[(&a, 0), (&b, 1_000_000_000)]).unwrap();
    assert_eq!(m.ops["read"], [1, 12, 23]);
    assert_eq!(m.bytes["read"], [4096, 12 * 4096, 23 * 4096]);
    // Without a known start the ranks are taken to have started together.
    assert_eq!(merge_timelines(&[(&a, 0), (&b, 0)]).unwrap().ops["read"], [11, 22, 3]);
    let other = Timeline { interval_ms: 500, ..t(&[1]) };
    assert!(merge_timelines(&[(&a, 0), (&other, 0)]).is_err());
}

#[test]
fn partial_is_any_failed_is_the_first_and_warnings_are_once_each() {
    let lats = [1000];
    let mut a = rank(0, 1, &lats);
    let mut b = rank(0, 1, &lats);
    let mut c = rank(0, 1, &lats);
    a.warnings = vec![warn("w1"), warn("w2")];
    b.warnings = vec![warn("w2"), warn("w3")];
    b.partial = true;
    b.jobs[0].partial = true;
    b.failed = Some("rank 1 failed".into());
    b.jobs[0].error = Some("EIO".into());
    c.failed = Some("rank 2 failed".into());
    let m = merge_runs(&[a, b, c]).unwrap();
    assert_eq!(m.warnings, [warn("w1"), warn("w2"), warn("w3")]);
    assert!(m.partial && m.jobs[0].partial);
    assert_eq!(m.failed.as_deref(), Some("rank 1 failed"));
    assert_eq!(m.jobs[0].error.as_deref(), Some("EIO"));
}

#[test]
fn figures_of_a_tool_are_kept_only_when_the_ranks_agree() {
    let lats = [1000];
    let mut a = rank(0, 1_000_000_000, &lats);
    let mut b = rank(0, 1_000_000_000, &lats);
    a.jobs[0].details = Some(serde_json::json!({"tx": 1}));
    b.jobs[0].details = Some(serde_json::json!({"tx": 2}));
    a.jobs[0].headline = vec![crate::result::Headline::new("tx_s", "tx/s", 1.0)];
    let m = merge_runs(&[a.clone(), b]).unwrap();
    assert_eq!(m.jobs[0].details, None);
    assert_eq!(m.jobs[0].headline, m.jobs[0].op_headline());
    let same = merge_runs(&[a.clone(), a.clone()]).unwrap();
    assert_eq!(same.jobs[0].details, a.jobs[0].details);
    assert_eq!(same.jobs[0].headline, a.jobs[0].headline);
}

#[test]
fn ranks_of_different_plans_do_not_merge() {
    let lats = [1000];
    let a = rank(0, 1, &lats);
    let mut b = rank(0, 1, &lats);
    b.jobs[0].name = "y".into();
    assert!(merge_runs(&[a.clone(), b]).is_err());
    let mut c = rank(0, 1, &lats);
    c.jobs.push(job("z", 1, &[]));
    assert!(merge_runs(&[a, c]).is_err());
    assert!(merge_runs(&[]).is_err());
}

#[test]
fn one_rank_merges_to_itself() {
    let mut r = rank(1_700_000_000_000_000_000, 2_000_000_000, &samples());
    r.jobs[0].timeline = Timeline { interval_ms: 1000, ..Default::default() };
    r.jobs[0].timeline.ops.insert("read".into(), vec![5, 6]);
    r.jobs[0].ops[0].active_ns = Some(1_500_000_000);
    r.jobs[0].details = Some(serde_json::json!({"tool": "figures"}));
    r.jobs[0].headline = vec![crate::result::Headline::new("tx_s", "tx/s", 3.0)];
    r.warnings = vec![warn("once")];
    let m = merge_runs(std::slice::from_ref(&r)).unwrap();
    assert_eq!(serde_json::to_value(&m).unwrap(), serde_json::to_value(&r).unwrap());
}

fn warn(m: &str) -> crate::result::warning::Warning {
    crate::result::warning::Warning::new(crate::result::warning::Code::Unclassified, m)
}
