use super::*;
use crate::observe::trace::record::{Header, MAGIC, VERSION};
use crate::result::trace::analysis::{Unplugs, Untracked};
use crate::result::trace::hist::Bucket;

const R: u16 = cat::READ;
const W: u16 = cat::WRITE;

/// Hand-built traces: (time ns, action, category, sector, bytes, pid, payload).
struct Trace(Vec<(Header, Vec<u8>)>);

impl Trace {
    fn new() -> Trace {
        Trace(vec![])
    }
    fn ev(mut self, t: u64, a: u16, c: u16, sector: u64, bytes: u32, pid: u32) -> Trace {
        self.0.push((header(t, a, c, sector, bytes, pid, 0), vec![]));
        self
    }
    fn pdu(mut self, t: u64, a: u16, pdu: &[u8]) -> Trace {
        self.0.push((header(t, a, 0, 0, 0, 1, pdu.len() as u16), pdu.to_vec()));
        self
    }
    fn run(&self, ctx: &Context) -> TraceAnalysis {
        analyse(self.0.iter().map(|(h, p)| Record { h: *h, pdu: p }), ctx)
    }
}

fn header(t: u64, a: u16, c: u16, sector: u64, bytes: u32, pid: u32, pdu_len: u16) -> Header {
    Header {
        magic: MAGIC | VERSION,
        sequence: 0,
        time: t,
        sector,
        bytes,
        action: (c as u32) << 16 | a as u32,
        pid,
        device: 7 << 20,
        cpu: 0,
        error: 0,
        pdu_len,
    }
}

fn ctx() -> Context {
    Context::new(Box::new(|pid| match pid {
        100 => Role::Benchmark,
        101 => Role::Background,
        _ => Role::Other,
    }))
}

/// A whole write or read of `sectors` at `s`: Q G I D C.
fn io(tr: Trace, t: u64, c: u16, s: u64, bytes: u32, pid: u32) -> Trace {
    tr.ev(t, act::QUEUE, c, s, bytes, pid)
        .ev(t + 10, act::GETRQ, c, s, bytes, pid)
        .ev(t + 20, act::INSERT, c, s, bytes, pid)
        .ev(t + 30, act::ISSUE, c, s, bytes, 0)
        .ev(t + 130, act::COMPLETE, c, s, bytes, 0)
}

#[test]
fn sequential_writes_then_a_far_seek() {
    let mut tr = io(Trace::new(), 0, W, 0, 4096, 100);
    tr = io(tr, 1000, W, 8, 4096, 100);
    tr = io(tr, 2000, W, 1000, 4096, 100);
    tr = io(tr, 3000, R, 1000, 8192, 100);
    let a = tr.run(&ctx());
    assert_eq!((a.write.sequential, a.write.random), (1, 1));
    assert_eq!(a.write.seek_forward.buckets(), [Bucket { low: 512, high: 1023, count: 1 }], "1000 - 16 = 984 sectors");
    assert_eq!(a.read.sequential + a.read.random, 0, "the first read has no predecessor");
    assert!((a.write.sequential_pct() - 50.0).abs() < 1e-9);
    assert_eq!(a.write.sizes.buckets(), [Bucket { low: 4096, high: 8191, count: 3 }]);
    assert_eq!(a.read.sizes.buckets(), [Bucket { low: 8192, high: 16383, count: 1 }]);
    assert_eq!(a.dispatched, IoCounts { read_ops: 1, read_bytes: 8192, write_ops: 3, write_bytes: 12288 });
    assert_eq!(a.queued, a.dispatched);
    assert_eq!(a.completed, a.dispatched);
    // Every phase of every I/O is the same: Q2G 10, G2I 10, I2D 10, D2C 100, Q2C 130.
    let p = &a.phases;
    for (ph, v) in [(&p.q2g, 10), (&p.g2i, 10), (&p.i2d, 10), (&p.d2c, 100), (&p.q2c, 130), (&p.d2c_request, 100)] {
        assert_eq!((ph.count, ph.mean_ns()), (4, v as f64));
    }
    assert_eq!(p.q2m.count + p.m2d.count, 0);
    assert_eq!((a.btt_q, a.btt_d, a.merge_ratio()), (4, 4, 1.0));
}

#[test]
fn merges_pair_as_btt_pairs_them() {
    // The trace btt 1.2.0 was run on: its figures are in the asserts.
    let tr = Trace::new()
        .ev(1000, act::QUEUE, W, 0, 4096, 100)
        .ev(1500, act::GETRQ, W, 0, 4096, 100)
        .ev(2000, act::QUEUE, W, 8, 4096, 101)
        .ev(2100, act::BACKMERGE, W, 8, 4096, 101)
        .ev(3000, act::INSERT, W, 0, 8192, 100)
        .ev(4000, act::ISSUE, W, 0, 8192, 5)
        .ev(9000, act::COMPLETE, W, 0, 8192, 0)
        .ev(10000, act::QUEUE, R, 1000, 4096, 200)
        .ev(10500, act::GETRQ, R, 1000, 4096, 200)
        .ev(11000, act::INSERT, R, 1000, 4096, 200)
        .ev(12000, act::ISSUE, R, 1000, 4096, 200)
        .ev(20000, act::COMPLETE, R, 1000, 4096, 0);
    let a = tr.run(&ctx());
    let p = &a.phases;
    let got: Vec<(u64, f64)> = p.named().iter().map(|(_, ph)| (ph.count, ph.mean_ns())).collect();
    // Q2G G2I Q2M I2D M2D D2C Q2C
    assert_eq!(got, [(2, 500.0), (2, 1000.0), (1, 100.0), (2, 1000.0), (1, 1900.0), (3, 6000.0), (3, 25000.0 / 3.0)]);
    assert_eq!((p.d2c.min_ns, p.d2c.max_ns), (5000, 8000));
    assert_eq!(p.d2c_request.count, 2, "per request, not per bio");
    assert_eq!(a.merges, 1);
    assert_eq!((a.btt_q, a.btt_d, a.merge_ratio()), (3, 2, 1.5));
    // The merged request belongs to its first bio's process (the
    // benchmark), not the merged one's (background) nor the dispatcher's.
    assert_eq!(a.roles.benchmark.dispatched.write_bytes, 8192);
    assert_eq!(a.roles.background.dispatched, IoCounts::default());
    assert_eq!(a.roles.background.queued.write_bytes, 4096);
    assert_eq!(a.untracked, Untracked::default());
}

#[test]
fn a_requeue_takes_the_request_off_the_device_and_it_is_dispatched_again() {
    let tr = Trace::new()
        .ev(0, act::QUEUE, W, 64, 4096, 100)
        .ev(10, act::GETRQ, W, 64, 4096, 100)
        .ev(20, act::INSERT, W, 64, 4096, 100)
        .ev(30, act::ISSUE, W, 64, 4096, 0)
        .ev(50, act::REQUEUE, W, 64, 4096, 0)
        .ev(70, act::INSERT, W, 64, 4096, 0)
        .ev(100, act::ISSUE, W, 64, 4096, 0)
        .ev(400, act::COMPLETE, W, 64, 4096, 0);
    let a = tr.run(&ctx());
    assert_eq!(a.requeues, 1);
    assert_eq!(a.dispatched.write_ops, 2, "each D counts, as blkparse counts them");
    assert_eq!((a.btt_q, a.btt_d), (2, 2), "btt adds requeues to #Q");
    let p = &a.phases;
    assert_eq!((p.i2d.count, p.i2d.sum_ns), (2, 10 + 30));
    assert_eq!((p.d2c.count, p.d2c.sum_ns), (1, 300), "from the last dispatch");
    assert_eq!((p.q2c.count, p.q2c.sum_ns), (1, 400));
    assert_eq!(a.depth_max, 1, "the requeue took it off before the second D");
    // Off the device from 50 to 100: an idle period of 50 ns.
    assert_eq!((a.idle.count, a.idle.total_ns), (1, 50));
}

#[test]
fn idle_gaps_and_depth_over_time() {
    let mut c = ctx();
    c.series_step_ns = 100;
    let tr = Trace::new()
        .ev(0, act::ISSUE, W, 0, 4096, 0)
        .ev(50, act::ISSUE, W, 8, 4096, 0)
        .ev(150, act::COMPLETE, W, 0, 4096, 0)
        .ev(250, act::COMPLETE, W, 8, 4096, 0)
        .ev(1250, act::ISSUE, R, 100, 4096, 0)
        .ev(1300, act::COMPLETE, R, 100, 4096, 0)
        .ev(1350, act::ISSUE, R, 100, 4096, 0)
        .ev(1400, act::COMPLETE, R, 100, 4096, 0);
    let a = tr.run(&c);
    assert_eq!(a.depth_max, 2);
    assert_eq!(
        &a.depth[..3],
        [
            DepthPoint { t_ns: 0, mean: 1.5, max: 2 },
            DepthPoint { t_ns: 100, mean: 1.5, max: 2 },
            DepthPoint { t_ns: 200, mean: 0.5, max: 1 },
        ]
    );
    assert_eq!(a.depth.len(), 14, "buckets 0..1400 step 100");
    assert_eq!(a.depth[13], DepthPoint { t_ns: 1300, mean: 0.5, max: 1 });
    assert_eq!(a.depth[12], DepthPoint { t_ns: 1200, mean: 0.5, max: 1 });
    // 50 + 200 + 100 + 50 + 50 request·ns over 1400 ns.
    assert!((a.depth_mean - 450.0 / 1400.0).abs() < 1e-12, "{}", a.depth_mean);
    assert_eq!((a.idle.count, a.idle.total_ns, a.idle.longest_ns), (2, 1000 + 50, 1000));
    // No Q seen: the dispatches are charged to the D's pid and counted.
    assert_eq!(a.untracked.dispatches, 4);
    assert_eq!(a.roles.other.dispatched.write_ops, 2);
    assert_eq!((a.btt_q, a.btt_d), (0, 0), "btt ignores a device's events before its first Q");
    assert_eq!(a.phases.d2c.count, 0);
    assert_eq!(a.phases.d2c_request.count, 4);
}

#[test]
fn unplugs_carry_their_request_count_big_endian() {
    let three = 3u64.to_be_bytes();
    let mut with_cgroup = 77u64.to_le_bytes().to_vec();
    with_cgroup.extend(5u64.to_be_bytes());
    let tr = Trace::new().pdu(0, act::UNPLUG_IO, &three).pdu(1, act::UNPLUG_IO | act::CGROUP_FLAG, &with_cgroup).pdu(
        2,
        act::UNPLUG_TIMER,
        &three,
    );
    let a = tr.run(&ctx());
    assert_eq!(a.unplugs, Unplugs { io: 2, io_requests: 8, timer: 1, timer_requests: 3 });
    assert_eq!(a.unplugs.ios_per_unplug(), 4.0);
}

#[test]
fn roles_by_pid_and_write_amplification() {
    let mut c = ctx();
    c.workload_bytes_written = Some(4096);
    let mut tr = io(Trace::new(), 0, W, 0, 4096, 100);
    tr = io(tr, 1000, W, 100, 8192, 101);
    tr = io(tr, 2000, W, 200, 4096, 300);
    tr = io(tr, 3000, R, 300, 4096, 100);
    let a = tr.run(&c);
    assert_eq!(a.roles.benchmark.dispatched, IoCounts { read_ops: 1, read_bytes: 4096, write_ops: 1, write_bytes: 4096 });
    assert_eq!(a.roles.background.dispatched.write_bytes, 8192);
    assert_eq!(a.roles.other.dispatched.write_bytes, 4096);
    assert!((a.share_pct(Role::Benchmark, true) - 25.0).abs() < 1e-9);
    assert!((a.share_pct(Role::Benchmark, false) - 100.0).abs() < 1e-9);
    assert_eq!(a.write_amplification(), Some(4.0));
    let m = a.metrics();
    let get = |n: &str| m.iter().find(|(name, _, _)| name == n).unwrap_or_else(|| panic!("no {n} in {m:?}")).2;
    assert_eq!(get("trace.write_dispatches"), 3.0);
    assert_eq!(get("trace.write_amplification"), 4.0);
    assert_eq!(get("trace.benchmark_pct_of_traced_write_bytes"), 25.0);
    assert_eq!(get("trace.d2c_mean_us"), 0.1);
    let names: std::collections::HashSet<&str> = m.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names.len(), m.len(), "metric names are unique");
    assert!(m.iter().all(|(_, u, v)| !u.is_empty() && v.is_finite()), "{m:?}");
    // Without the workload's bytes there is no amplification figure.
    let none = tr.run(&ctx()).metrics();
    assert!(!none.iter().any(|(n, _, _)| n == "trace.write_amplification"));
}

#[test]
fn lba_sample_stays_bounded_and_spread() {
    let mut c = ctx();
    c.lba_points = 10;
    let mut tr = Trace::new();
    for i in 0..100u64 {
        tr = tr.ev(i * 10, act::ISSUE, R, i * 8, 4096, 0).ev(i * 10 + 5, act::COMPLETE, R, i * 8, 4096, 0);
    }
    let a = tr.run(&c);
    assert!(a.lba.len() <= 10 && a.lba.len() >= 5, "{}", a.lba.len());
    assert_eq!(a.lba_stride, 16);
    let gaps: Vec<u64> = a.lba.windows(2).map(|w| w[1].t_ns - w[0].t_ns).collect();
    assert!(gaps.iter().all(|g| *g == 160), "{gaps:?}");
    assert_eq!(a.lba[0].sector, 0);
}

#[test]
fn stale_bios_make_room_when_the_table_fills() {
    let mut c = ctx();
    c.max_tracked = 2;
    c.stale_after_ns = 1_000;
    // Two Qs never completed, then one much later: the old ones go.
    let tr = Trace::new()
        .ev(1, act::QUEUE, W, 0, 4096, 100)
        .ev(2, act::QUEUE, W, 8, 4096, 100)
        .ev(5_000_000_000, act::QUEUE, W, 16, 4096, 100)
        .ev(5_000_000_100, act::ISSUE, W, 16, 4096, 0)
        .ev(5_000_000_200, act::COMPLETE, W, 16, 4096, 0);
    let a = tr.run(&c);
    assert_eq!(a.untracked.bios_stale, 2);
    assert_eq!(a.untracked.bios_dropped, 0);
    assert_eq!(a.phases.q2c.count, 1);
    assert_eq!(a.roles.benchmark.dispatched.write_ops, 1);
}

#[test]
fn serialises_and_reads_back() {
    let a = io(Trace::new(), 0, W, 0, 4096, 100).run(&ctx());
    let text = serde_json::to_string(&a).unwrap();
    let b: TraceAnalysis = serde_json::from_str(&text).unwrap();
    assert_eq!(b.phases.d2c.count, 1);
    assert_eq!(b.phases.d2c.percentile_ns(50.0), a.phases.d2c.percentile_ns(50.0));
    assert_eq!(b.write.sizes, a.write.sizes);
    assert_eq!(b.metrics(), a.metrics());
}

#[test]
fn an_event_stamped_no_later_counts_one_ns() {
    assert_eq!(delta(5, 5), 1);
    assert_eq!(delta(9, 5), 1);
    assert_eq!(delta(5, 9), 4);
}
