//! Postmark's report layouts, rendered from a run's details: the verbose
//! report and the 13-number terse line exactly as Postmark prints them (so
//! scripts that read Postmark's output read fsbench's), followed by what
//! Postmark cannot give.
//!
//! Postmark's arithmetic, reproduced: every interval is whole seconds of the
//! wall clock and at least 1; the verbose per-second counts are integer
//! divisions; the data figures and every terse figure are single-precision
//! floats printed with two decimals; a data figure is printed as megabytes
//! above 1 MiB, else as kilobytes, and zero as "0.000000 bytes". Divisors:
//! total time for created, deleted and data; transaction time for
//! transactions, read, appended and both "mixed" figures; t1-t0 for
//! creation alone; t3-t2 for deletion alone.

use super::{by_group, Layout};
use crate::model::postmark::ReportStyle;
use crate::report::format::us;
use crate::result::postmark::PostmarkDetails;
use crate::result::OpStats;
use std::fmt::Write;

/// Postmark's report of each unit, then fsbench's additions and the
/// common group lines (CPU, process I/O, devices).
pub const LAYOUT: Layout = Layout {
    name: "postmark",
    about: "Postmark's verbose report or terse line exactly as Postmark prints them, then sub-second phase times, rates and latency percentiles",
    render: run,
    files: super::no_files,
    charts: super::no_charts,
};

/// Each unit's report; the group lines (CPU, process I/O, devices) join
/// fsbench's section, as `# ` lines after a terse report.
fn run(r: &crate::result::RunResult) -> String {
    let mut out = String::new();
    for j in &r.jobs {
        let Some(d) = j.details_as::<PostmarkDetails>() else {
            return by_group(r, super::fio::job);
        };
        out.push_str(&render(&d, &j.ops, d.settings.report));
        let mut groups = String::new();
        for g in r.groups.iter().filter(|g| g.group == j.group) {
            super::group(&mut groups, g, &[j]);
        }
        match d.settings.report {
            ReportStyle::Verbose => out.push_str(&groups),
            ReportStyle::Terse => groups.lines().for_each(|l| out.push_str(&format!("# {l}\n"))),
        }
    }
    if r.partial {
        out.push_str("*** PARTIAL RESULTS: the run was interrupted; figures cover what ran ***\n");
    }
    out
}

/// The report of one run: Postmark's part, then fsbench's own figures (the
/// latter as `# ` comment lines after a terse line).
pub fn render(details: &PostmarkDetails, ops: &[OpStats], style: ReportStyle) -> String {
    let mut s = postmark_part(details, style);
    let extra = fsbench_part(details, ops);
    match style {
        ReportStyle::Verbose => {
            s.push('\n');
            s.push_str(&extra);
        }
        ReportStyle::Terse => {
            for line in extra.lines() {
                s.push_str("# ");
                s.push_str(line);
                s.push('\n');
            }
        }
    }
    s
}

/// Only what Postmark itself prints after a run.
pub fn postmark_part(d: &PostmarkDetails, style: ReportStyle) -> String {
    let total = d.span_s(0, 3);
    let trans = d.span_s(1, 2);
    let alone_c = d.span_s(0, 1);
    let alone_d = d.span_s(2, 3);
    let tx = d.transactions_done;
    let mut s = String::new();
    match style {
        ReportStyle::Verbose => {
            let _ = writeln!(s, "Time:");
            let _ = writeln!(s, "\t{total} seconds total");
            let _ = writeln!(s, "\t{trans} seconds of transactions ({} per second)", tx / trans);
            let _ = writeln!(s, "\nFiles:");
            let _ = writeln!(s, "\t{} created ({} per second)", d.created(), d.created() / total);
            let _ = writeln!(s, "\t\tCreation alone: {} files ({} per second)", d.created_alone, d.created_alone / alone_c);
            let _ = writeln!(s, "\t\tMixed with transactions: {} files ({} per second)", d.created_mixed, d.created_mixed / trans);
            let _ = writeln!(s, "\t{} read ({} per second)", d.read, d.read / trans);
            let _ = writeln!(s, "\t{} appended ({} per second)", d.appended, d.appended / trans);
            let _ = writeln!(s, "\t{} deleted ({} per second)", d.deleted(), d.deleted() / total);
            let _ = writeln!(s, "\t\tDeletion alone: {} files ({} per second)", d.deleted_alone, d.deleted_alone / alone_d);
            let _ = writeln!(s, "\t\tMixed with transactions: {} files ({} per second)", d.deleted_mixed, d.deleted_mixed / trans);
            let _ = writeln!(s, "\nData:");
            for (bytes, what) in [(d.bytes_read, "read"), (d.bytes_written, "written")] {
                let _ = writeln!(s, "\t{} {what} ({} per second)", data_size(bytes as f32), data_size(per(bytes, total)));
            }
        }
        ReportStyle::Terse => {
            let figures = [
                per(tx, trans),
                per(d.created(), total),
                per(d.created_alone, alone_c),
                per(d.created_mixed, trans),
                per(d.read, trans),
                per(d.appended, trans),
                per(d.deleted(), total),
                per(d.deleted_alone, alone_d),
                per(d.deleted_mixed, trans),
                per(d.bytes_read, total),
                per(d.bytes_written, total),
            ];
            let _ = write!(s, "{total} {trans}");
            for f in figures {
                let _ = write!(s, " {f:.2}");
            }
            s.push('\n');
        }
    }
    s
}

/// Postmark's single-precision rate.
fn per(count: u64, secs: u64) -> f32 {
    count as f32 / secs as f32
}

/// A data figure as Postmark's report prints it.
fn data_size(v: f32) -> String {
    if v > 1_048_576.0 {
        format!("{:.2} megabytes", v / 1_048_576.0)
    } else if v > 0.0 {
        format!("{:.2} kilobytes", v / 1024.0)
    } else {
        format!("{v:.6} bytes")
    }
}

const LAT_PCTS: &[(f64, &str)] = &[(50.0, "p50"), (95.0, "p95"), (99.0, "p99"), (99.9, "p99.9")];

/// fsbench's figures: phase times from the monotonic clock, the rates they
/// give with Postmark's divisors, and latency percentiles per operation.
pub fn fsbench_part(d: &PostmarkDetails, ops: &[OpStats]) -> String {
    let secs = |a: usize, b: usize| d.span_ns(a, b) as f64 / 1e9;
    let rate = |n: u64, a: usize, b: usize| {
        let t = secs(a, b);
        if t > 0.0 {
            n as f64 / t
        } else {
            0.0
        }
    };
    let mut s = String::new();
    let _ = writeln!(s, "fsbench (not in Postmark's report; monotonic clock, sub-second):");
    let _ = writeln!(s, "Time:");
    let _ = writeln!(s, "\t{:.6} seconds total", secs(0, 3));
    let _ = writeln!(s, "\t{:.6} seconds of creation alone ({:.2} files per second)", secs(0, 1), rate(d.created_alone, 0, 1));
    let _ = writeln!(s, "\t{:.6} seconds of transactions ({:.2} per second)", secs(1, 2), rate(d.transactions_done, 1, 2));
    let _ = writeln!(s, "\t{:.6} seconds of deletion alone ({:.2} files per second)", secs(2, 3), rate(d.deleted_alone, 2, 3));
    let _ = writeln!(s, "Rates:");
    let _ = writeln!(s, "\t{:.2} created per second (total time)", rate(d.created(), 0, 3));
    let _ = writeln!(s, "\t{:.2} read per second (transaction time)", rate(d.read, 1, 2));
    let _ = writeln!(s, "\t{:.2} appended per second (transaction time)", rate(d.appended, 1, 2));
    let _ = writeln!(s, "\t{:.2} deleted per second (total time)", rate(d.deleted(), 0, 3));
    let mib = |b: u64| rate(b, 0, 3) / 1_048_576.0;
    let _ = writeln!(s, "\t{:.2} MiB read per second, {:.2} MiB written per second (total time)", mib(d.bytes_read), mib(d.bytes_written));
    let _ = write!(s, "Latency per operation (µs):\n\t{:<8} {:>10}", "op", "count");
    for (_, name) in LAT_PCTS {
        let _ = write!(s, " {name:>9}");
    }
    let _ = writeln!(s, " {:>9}", "max");
    for name in ["create", "read", "append", "delete"] {
        let Some(o) = ops.iter().find(|o| o.name == name) else { continue };
        let _ = write!(s, "\t{:<8} {:>10}", name, o.lat.count());
        for (p, _) in LAT_PCTS {
            let v = if o.lat.count() == 0 { "-".to_string() } else { us(o.lat.percentile(*p) as f64) };
            let _ = write!(s, " {v:>9}");
        }
        let v = if o.lat.count() == 0 { "-".to_string() } else { us(o.lat.max() as f64) };
        let _ = writeln!(s, " {v:>9}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::postmark::PostmarkPlan;

    /// Counts and times of the reference runs in the Postmark notes.
    fn details(t_unix: [u64; 4]) -> PostmarkDetails {
        PostmarkDetails {
            settings: PostmarkPlan::default(),
            t_ns: [0, 400_000_000, 900_000_000, 1_000_000_000],
            t_unix,
            transactions_done: 5000,
            created_alone: 1000,
            created_mixed: 2484,
            deleted_mixed: 2516,
            deleted_alone: 968,
            read: 2502,
            appended: 2488,
            bytes_read: 16_059_103,
            bytes_written: 22_758_590,
        }
    }

    #[test]
    fn verbose_matches_postmark_byte_for_byte() {
        // All four instants in the same second: every interval becomes 1 s.
        let d = details([1000, 1000, 1000, 1000]);
        let want = "Time:\n\t1 seconds total\n\t1 seconds of transactions (5000 per second)\n\nFiles:\n\
            \t3484 created (3484 per second)\n\t\tCreation alone: 1000 files (1000 per second)\n\
            \t\tMixed with transactions: 2484 files (2484 per second)\n\t2502 read (2502 per second)\n\
            \t2488 appended (2488 per second)\n\t3484 deleted (3484 per second)\n\
            \t\tDeletion alone: 968 files (968 per second)\n\t\tMixed with transactions: 2516 files (2516 per second)\n\n\
            Data:\n\t15.32 megabytes read (15.32 megabytes per second)\n\t21.70 megabytes written (21.70 megabytes per second)\n";
        assert_eq!(postmark_part(&d, ReportStyle::Verbose), want);
    }

    #[test]
    fn terse_matches_postmark_byte_for_byte() {
        let d = details([1000, 1000, 1001, 1001]);
        assert_eq!(
            postmark_part(&d, ReportStyle::Terse),
            "1 1 5000.00 3484.00 1000.00 2484.00 2502.00 2488.00 3484.00 968.00 2516.00 16059103.00 22758590.00\n"
        );
    }

    #[test]
    fn quantisation_uses_each_divisor_and_the_one_second_floor() {
        // The 50000/500000 run of the notes: t1-t0 and t3-t2 round to 0 s and
        // count as 1, transactions took 28 s, total 30 s.
        let mut d = details([100, 101, 129, 130]);
        d.transactions_done = 500_000;
        d.created_alone = 50_000;
        d.created_mixed = 250_153;
        d.deleted_alone = 50_306;
        d.deleted_mixed = 249_847;
        d.read = 249_836;
        d.appended = 248_675;
        d.bytes_read = 1_655_208_120;
        d.bytes_written = 1_999_587_600;
        assert_eq!(
            postmark_part(&d, ReportStyle::Terse),
            "30 28 17857.14 10005.10 50000.00 8934.04 8922.71 8881.25 10005.10 50306.00 8923.11 55173604.00 66652920.00\n"
        );
        let v = postmark_part(&d, ReportStyle::Verbose);
        assert!(v.contains("\t30 seconds total\n\t28 seconds of transactions (17857 per second)\n"), "{v}");
        assert!(v.contains("\t300153 created (10005 per second)\n"), "{v}");
        assert!(v.contains("Creation alone: 50000 files (50000 per second)"), "{v}");
        assert!(v.contains("Mixed with transactions: 250153 files (8934 per second)"), "{v}");
        assert!(v.contains("Deletion alone: 50306 files (50306 per second)"), "{v}");
        assert!(v.contains("\t1578.53 megabytes read (52.62 megabytes per second)\n"), "{v}");
        // Same second everywhere but the transactions: the floor applies to
        // each interval separately, so the total is less than their sum.
        let d = details([7, 7, 13, 13]);
        assert!(postmark_part(&d, ReportStyle::Terse).starts_with("6 6 833.33 580.67 1000.00 "));
    }

    #[test]
    fn data_figures_switch_units_like_postmark() {
        // Exactly 1 MiB is still kilobytes; above it megabytes; 0 is bytes.
        assert_eq!(data_size(1_048_576.0), "1024.00 kilobytes");
        assert_eq!(data_size(1_048_577.0), "1.00 megabytes");
        assert_eq!(data_size(100.0), "0.10 kilobytes");
        assert_eq!(data_size(1.0 / 7.0), "0.00 kilobytes");
        assert_eq!(data_size(0.0), "0.000000 bytes");
        let mut d = details([0, 0, 0, 0]);
        d.bytes_read = 0;
        let v = postmark_part(&d, ReportStyle::Verbose);
        assert!(v.contains("\t0.000000 bytes read (0.000000 bytes per second)\n"), "{v}");
        // Ties round to even, as C's printf does.
        d.created_alone = 9;
        d.t_unix = [0, 8, 8, 8];
        assert!(postmark_part(&d, ReportStyle::Terse).contains(" 1.12 "));
    }

    #[test]
    fn fsbench_part_follows_and_is_separated() {
        let d = details([1000, 1000, 1000, 1000]);
        let mut ops: Vec<OpStats> =
            ["create", "read", "append", "delete"].iter().map(|n| OpStats::new(n, crate::result::OpClass::Other, false)).collect();
        for v in 1..=1000u64 {
            ops[0].lat.record(v * 1000);
        }
        let v = render(&d, &ops, ReportStyle::Verbose);
        let (pm, fsb) = v.split_once("\n\nfsbench (").expect("separated by a blank line");
        assert_eq!(format!("{pm}\n"), postmark_part(&d, ReportStyle::Verbose));
        assert!(fsb.contains("\t0.400000 seconds of creation alone (2500.00 files per second)"), "{fsb}");
        assert!(fsb.contains("\t0.500000 seconds of transactions (10000.00 per second)"), "{fsb}");
        assert!(fsb.contains("\t0.100000 seconds of deletion alone (9680.00 files per second)"), "{fsb}");
        let create = fsb.lines().find(|l| l.starts_with("\tcreate")).expect("create row");
        let cols: Vec<&str> = create.split_whitespace().collect();
        assert_eq!(cols[1], "1000");
        let p50: f64 = cols[2].parse().unwrap();
        assert!((p50 - 500.0).abs() < 1.0, "{create}");
        assert!(fsb.lines().any(|l| l.starts_with("\tread") && l.ends_with('-')), "{fsb}");
        let t = render(&d, &ops, ReportStyle::Terse);
        let mut lines = t.lines();
        assert_eq!(format!("{}\n", lines.next().unwrap()), postmark_part(&d, ReportStyle::Terse));
        assert!(lines.all(|l| l.starts_with("# ")), "{t}");
    }
}
