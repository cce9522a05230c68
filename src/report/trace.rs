//! A block trace's analysis as a text table: what reached the device and
//! who sent it, its sizes and seeks, queue depth and idle time, and btt's
//! phases. Every number carries its unit.

use super::format::{bytes, num, thousands, us};
use crate::result::trace::analysis::{role_name, IoCounts, TraceAnalysis};
use crate::result::trace::hist::{Bucket, Log2Hist, Phase};
use std::fmt::Write;

fn ops(n: u64) -> String {
    format!("{} ops", thousands(n))
}

fn pct(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.1} %")
    } else {
        "- %".into()
    }
}

fn ms(ns: u64) -> String {
    format!("{} ms", num(ns as f64 / 1e6))
}

/// A power-of-two bucket as a range: "4 KiB-8 KiB" for sizes, "512-1023
/// sectors" for seeks.
fn size_range(b: &Bucket) -> String {
    format!("{} - {}", bytes(b.low), bytes(b.high.saturating_add(1)))
}

fn io_row(out: &mut String, label: &str, c: &IoCounts) {
    let _ = writeln!(
        out,
        "  {label:<16} {:>16} {:>12}   {:>16} {:>12}",
        ops(c.read_ops),
        bytes(c.read_bytes),
        ops(c.write_ops),
        bytes(c.write_bytes)
    );
}

/// Two histograms side by side (reads, writes), one row per bucket either has.
fn hist_rows(out: &mut String, r: &Log2Hist, w: &Log2Hist, label: impl Fn(&Bucket) -> String) {
    let (rb, wb) = (r.buckets(), w.buckets());
    let mut lows: Vec<u64> = rb.iter().chain(wb.iter()).map(|b| b.low).collect();
    lows.sort_unstable();
    lows.dedup();
    for low in lows {
        let get = |v: &[Bucket]| v.iter().find(|b| b.low == low).copied();
        let b = get(&rb).or(get(&wb)).expect("a bucket from one of them");
        let n = |v: &[Bucket]| get(v).map_or(0, |b| b.count);
        let _ = writeln!(out, "  {:<26} {:>14} {:>14}", label(&b), ops(n(&rb)), ops(n(&wb)));
    }
}

fn phase_row(out: &mut String, name: &str, p: &Phase) {
    if p.count == 0 {
        let _ = writeln!(out, "  {name:<12} {:>12}", "none");
        return;
    }
    let _ = writeln!(
        out,
        "  {name:<12} {:>12} {:>10} µs {:>10} µs {:>10} µs {:>10} µs {:>10} µs {:>10} µs",
        thousands(p.count),
        us(p.min_ns as f64),
        us(p.mean_ns()),
        us(p.percentile_ns(50.0) as f64),
        us(p.percentile_ns(90.0) as f64),
        us(p.percentile_ns(99.0) as f64),
        us(p.max_ns as f64),
    );
}

/// The analysis as text.
pub fn render(a: &TraceAnalysis) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "Block trace: {} records over {} s", thousands(a.records), num(a.duration_ns() as f64 / 1e9));
    let _ = writeln!(o, "\n  {:<16} {:>29}   {:>29}", "", "reads", "writes");
    io_row(&mut o, "queued (Q)", &a.queued);
    io_row(&mut o, "dispatched (D)", &a.dispatched);
    io_row(&mut o, "completed (C)", &a.completed);
    let _ = writeln!(
        o,
        "  merges {}, requeues {}, flushes {}, discards {} ({})",
        ops(a.merges),
        ops(a.requeues),
        ops(a.flushes),
        ops(a.discards),
        bytes(a.discard_bytes)
    );
    let _ = writeln!(
        o,
        "  merge ratio (btt #Q/#D) {} Q/D ({} Q, {} D); I/Os per unplug {} requests ({} unplugs, {} by timer)",
        num(a.merge_ratio()),
        thousands(a.btt_q),
        thousands(a.btt_d),
        num(a.unplugs.ios_per_unplug()),
        thousands(a.unplugs.io),
        thousands(a.unplugs.timer)
    );
    match (a.write_amplification(), a.workload_bytes_written) {
        (Some(wa), Some(w)) => {
            let _ = writeln!(o, "  write amplification {} x (device {} / workload {})", num(wa), bytes(a.dispatched.write_bytes), bytes(w));
        }
        _ => o.push_str("  write amplification: - (the workload's written bytes are not known)\n"),
    }

    let _ = writeln!(o, "\nBy process (dispatched; a request is its first bio's process)");
    let _ = writeln!(o, "  {:<16} {:>29}   {:>29}   {:>9} {:>9}", "", "reads", "writes", "of reads", "of writes");
    for (role, io) in a.roles.all() {
        let d = &io.dispatched;
        let _ = writeln!(
            o,
            "  {:<16} {:>16} {:>12}   {:>16} {:>12}   {:>9} {:>9}",
            role_name(role),
            ops(d.read_ops),
            bytes(d.read_bytes),
            ops(d.write_ops),
            bytes(d.write_bytes),
            pct(a.share_pct(role, false)),
            pct(a.share_pct(role, true))
        );
    }
    let u = &a.untracked;
    if u.dispatches + u.bios_dropped + u.bios_stale + u.requests_dropped > 0 {
        let _ = writeln!(
            o,
            "  not paired: {} dispatched without a queued bio (charged to the dispatching pid), {} bios over the table's bound, {} stale bios, {} requests left out of the depth",
            ops(u.dispatches),
            thousands(u.bios_dropped),
            thousands(u.bios_stale),
            thousands(u.requests_dropped)
        );
    }

    let _ = writeln!(o, "\nAccess pattern (dispatches with data)");
    for (dir, p) in [("reads", &a.read), ("writes", &a.write)] {
        let _ = writeln!(o, "  {dir:<7} sequential {} ({} sequential, {} not)", pct(p.sequential_pct()), ops(p.sequential), ops(p.random));
    }
    let _ = writeln!(o, "  {:<26} {:>14} {:>14}", "I/O size", "reads", "writes");
    hist_rows(&mut o, &a.read.sizes, &a.write.sizes, size_range);
    let sectors = |b: &Bucket| format!("{} - {} sectors", thousands(b.low), thousands(b.high));
    let _ = writeln!(o, "  {:<26} {:>14} {:>14}", "seek forward", "reads", "writes");
    hist_rows(&mut o, &a.read.seek_forward, &a.write.seek_forward, sectors);
    let _ = writeln!(o, "  {:<26} {:>14} {:>14}", "seek backward", "reads", "writes");
    hist_rows(&mut o, &a.read.seek_backward, &a.write.seek_backward, sectors);

    let _ = writeln!(
        o,
        "\nQueue depth: mean {} requests, max {} requests ({} buckets of {})",
        num(a.depth_mean),
        a.depth_max,
        thousands(a.depth.len() as u64),
        ms(a.series_step_ns)
    );
    let _ = writeln!(
        o,
        "Idle (nothing on the device): {} periods, {} in all, longest {}, median {}",
        thousands(a.idle.count),
        ms(a.idle.total_ns),
        ms(a.idle.longest_ns),
        ms(a.idle.hist.percentile_ns(50.0))
    );

    let _ = writeln!(o, "\nbtt's phases (per bio; D2C per request last)");
    let _ =
        writeln!(o, "  {:<12} {:>12} {:>13} {:>13} {:>13} {:>13} {:>13} {:>13}", "phase", "N", "min", "mean", "p50", "p90", "p99", "max");
    for (name, p) in a.phases.named() {
        phase_row(&mut o, name, p);
    }
    phase_row(&mut o, "D2C/request", &a.phases.d2c_request);
    o
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::observe::trace::analysis::{analyse, Context};
    use crate::observe::trace::record::{act, cat, Header, Record, MAGIC, VERSION};
    use crate::result::trace::analysis::Role;

    fn h(t: u64, a: u16, c: u16, sector: u64, bytes: u32, pid: u32) -> Header {
        Header {
            magic: MAGIC | VERSION,
            time: t,
            sector,
            bytes,
            action: (c as u32) << 16 | a as u32,
            pid,
            device: 7 << 20,
            ..Header::default()
        }
    }

    pub(crate) fn sample() -> TraceAnalysis {
        let mut v = vec![];
        for i in 0..20u64 {
            let (c, s) = if i % 4 == 0 { (cat::READ, 5000 + i * 64) } else { (cat::WRITE, i * 8) };
            let t = i * 10_000;
            for (dt, a, pid) in
                [(0, act::QUEUE, 100 + (i % 2) as u32), (500, act::GETRQ, 100), (2_000, act::ISSUE, 0), (9_000, act::COMPLETE, 0)]
            {
                v.push(h(t + dt, a, c, s, 4096 << (i % 3), pid));
            }
        }
        v.sort_by_key(|h| h.time);
        let mut ctx = Context::new(Box::new(|pid| if pid == 100 { Role::Benchmark } else { Role::Background }));
        ctx.workload_bytes_written = Some(64 << 10);
        ctx.series_step_ns = 20_000;
        analyse(v.iter().map(|h| Record { h: *h, pdu: &[] }), &ctx)
    }

    #[test]
    fn table_shows_every_part_with_units() {
        let a = sample();
        let t = render(&a);
        for want in [
            "dispatched (D)",
            "15 ops",
            "write amplification",
            " x (device ",
            "benchmark",
            "background",
            "4.0 KiB - 8.0 KiB",
            "sequential",
            "Queue depth: mean",
            "Idle (nothing on the device): 19 periods",
            "Q2G",
            "D2C/request",
            "7.00 µs",
        ] {
            assert!(t.contains(want), "no {want:?} in\n{t}");
        }
        // Every line with a digit has a unit or is a count of something named.
        eprintln!("{t}");
        let phase_names = ["Q2G", "G2I", "Q2M", "I2D", "M2D", "D2C", "Q2C"];
        let has_number = |l: &str| phase_names.iter().fold(l.to_string(), |l, n| l.replace(n, "")).chars().any(|c| c.is_ascii_digit());
        for line in t.lines().filter(|l| has_number(l) && !l.trim_start().starts_with("phase ")) {
            let units = ["ops", " B", "KiB", "MiB", "µs", " ms", " s", " %", "requests", "Q/D", " x ", "sectors", "records", "periods"];
            assert!(units.iter().any(|u| line.contains(u)), "no unit on {line:?}");
        }
    }
}
