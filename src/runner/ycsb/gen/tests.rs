//! Checked against fixtures written by Java YCSB itself
//! (`tests/data/ycsb/regen.sh`), and against the proportions YCSB's
//! workload files promise.

use super::*;
use crate::model::ycsb::{FieldLength, KeyDist, Proportions, ScanLength, YcsbPlan};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

const KEYS: &str = include_str!("../../../../tests/data/ycsb/keys.txt");
const INTEGRITY: &str = include_str!("../../../../tests/data/ycsb/integrity.txt");
const ZIPF: &str = include_str!("../../../../tests/data/ycsb/zipf-constants.txt");
const SHARES: &str = include_str!("../../../../tests/data/ycsb/shares.txt");

fn key(k: u64, hashed: bool, pad: u32) -> String {
    let mut out = Vec::new();
    key_name(k, hashed, pad, &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn known_hashed_keys() {
    assert_eq!(key(0, true, 1), "user6284781860667377211");
    assert_eq!(key(1, true, 1), "user8517097267634966620");
    assert_eq!(key(2, true, 1), "user1820151046732198393");
    assert_eq!(key(7, false, 1), "user7");
    assert_eq!(key(7, false, 10), "user0000000007");
}

#[test]
fn keys_and_hashes_match_java_ycsb() {
    let mut out = Vec::new();
    let mut checked = 0;
    for line in KEYS.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        match f[0] {
            "fnv" => {
                let v: u64 = f[1].parse().unwrap();
                let want: i64 = f[2].parse().unwrap();
                assert_eq!(fnv64(v) as i64, want, "fnv of {v}");
            }
            kind => {
                let pad: u32 = f[1].parse().unwrap();
                let k: u64 = f[2].parse().unwrap();
                // The buffer is reused, as the client will.
                key_name(k, kind == "hashed", pad, &mut out);
                assert_eq!(std::str::from_utf8(&out).unwrap(), f[3], "{line}");
            }
        }
        checked += 1;
    }
    assert!(checked > 800, "only {checked} fixture lines");
}

#[test]
fn negative_hash_is_printed_as_java_prints_it() {
    // Java's Math.abs(Long.MIN_VALUE) stays negative; no small number
    // hashes there, so the formatting is checked on the bits directly.
    let mut out = Vec::new();
    key_name(1 << 63, false, 22, &mut out);
    assert_eq!(out, b"user00-9223372036854775808");
}

#[test]
fn integrity_values_match_java_ycsb() {
    let mut n = 0;
    for line in INTEGRITY.lines() {
        let f: Vec<&str> = line.splitn(4, '\t').collect();
        let (key, field, len, want) = (f[0], f[1], f[2].parse::<usize>().unwrap(), f[3].as_bytes());
        assert_eq!(want.len(), len, "{line}");
        let mut got = vec![0u8; len];
        integrity_value(key.as_bytes(), field, &mut got);
        assert_eq!(got, want, "{key} {field} {len}");
        assert!(integrity_matches(key.as_bytes(), field, len, want));
        if len > 0 {
            let mut bad = want.to_vec();
            bad[len - 1] ^= 1;
            assert!(!integrity_matches(key.as_bytes(), field, len, &bad), "{key} {field} {len}");
            assert!(!integrity_matches(key.as_bytes(), field, len, &want[..len - 1]));
        }
        n += 1;
    }
    assert!(n >= 90, "only {n} fixture lines");
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= rel * a.abs().max(b.abs())
}

#[test]
fn zipfian_constants_match_java_ycsb() {
    let mut rng = Rng::new(1);
    let mut seen = 0;
    for line in ZIPF.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let num = |i: usize| f[i].parse::<f64>().unwrap();
        match f[0] {
            "zeta" => {
                let z = Zipfian::of_items(f[1].parse().unwrap());
                assert!(close(z.zetan(), num(2), 1e-12), "{line}: zetan {}", z.zetan());
                assert!(close(z.eta(), num(3), 1e-12), "{line}: eta {}", z.eta());
                assert!(close(z.alpha(), num(4), 1e-15), "{line}: alpha {}", z.alpha());
            }
            "scrambled" => {
                let s = ScrambledZipfian::new(0, 999);
                assert_eq!(s.inner().zetan(), num(1));
                assert!(close(s.inner().eta(), num(2), 1e-12), "{line}: eta {}", s.inner().eta());
            }
            "grow" => {
                let mut z = Zipfian::of_items(f[1].parse().unwrap());
                z.next_of(f[2].parse().unwrap(), &mut rng);
                assert!(close(z.zetan(), num(3), 1e-12), "{line}: zetan {}", z.zetan());
                assert!(close(z.eta(), num(4), 1e-12), "{line}: eta {}", z.eta());
            }
            other => panic!("unknown fixture line {other}"),
        }
        seen += 1;
    }
    assert_eq!(seen, 11);
}

/// Share of draws on the `top` most-drawn of `n` values.
fn top_share(n: usize, draws: usize, top: usize, mut draw: impl FnMut() -> u64) -> f64 {
    let mut counts = vec![0u64; n];
    for _ in 0..draws {
        counts[draw() as usize] += 1;
    }
    counts.sort_unstable_by(|a, b| b.cmp(a));
    counts[..top].iter().sum::<u64>() as f64 / draws as f64
}

#[test]
fn skew_matches_java_ycsb() {
    let mut rng = Rng::new(42);
    let mut seen = 0;
    for line in SHARES.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let n: usize = f[1].parse().unwrap();
        let draws: usize = f[2].parse().unwrap();
        let top: usize = f[3].parse().unwrap();
        let java: f64 = f[4].parse().unwrap();
        let ours = match f[0] {
            "zipfian" => {
                let mut z = Zipfian::of_items(n as u64);
                top_share(n, draws, top, || z.next(&mut rng))
            }
            "scrambled" => {
                let mut z = ScrambledZipfian::new(0, n as u64 - 1);
                top_share(n, draws, top, || z.next(&mut rng))
            }
            "latest" => {
                let mut l = SkewedLatest::new(Arc::new(AcknowledgedCounter::new(n as u64 + 1)));
                let newest = (0..draws).filter(|_| l.next(&mut rng) > (n - top) as u64).count();
                newest as f64 / draws as f64
            }
            "hotspot" => {
                let mut h = Hotspot::new(0, n as u64 - 1, 0.2, 0.8).unwrap();
                assert_eq!(h.hot_end(), top as u64);
                let hot = (0..draws).filter(|_| h.next(&mut rng) < top as u64).count();
                hot as f64 / draws as f64
            }
            other => panic!("unknown fixture line {other}"),
        };
        assert!((ours - java).abs() < 0.02, "{line}: ours {ours}");
        seen += 1;
    }
    assert_eq!(seen, 7);
}

/// Workload C's plan with 1000 records, YCSB's defaults elsewhere.
fn plan() -> YcsbPlan {
    use crate::model::ycsb::{Exporter, Interval, Measurement, Phase, StoreSpec};
    YcsbPlan {
        phase: Phase::Run,
        store: StoreSpec { name: "null".into(), dir: None, props: Default::default() },
        table: "usertable".into(),
        recordcount: 1000,
        operationcount: 1000,
        fieldcount: 10,
        fieldnameprefix: "field".into(),
        fieldlength: FieldLength::Constant(100),
        readallfields: true,
        writeallfields: false,
        dataintegrity: false,
        proportions: Proportions { read: 1.0, ..Default::default() },
        requestdistribution: KeyDist::Zipfian,
        minscanlength: 1,
        maxscanlength: 1000,
        scanlengthdistribution: ScanLength::Uniform,
        hashed_inserts: true,
        insertstart: 0,
        insertcount: 1000,
        zeropadding: 1,
        insertion_retry_limit: 0,
        insertion_retry_interval_s: 3,
        maxexecutiontime_s: 0,
        threads: 1,
        target_ops: 0.0,
        status_interval_s: None,
        label: String::new(),
        measurement: Measurement::Hdr,
        interval: Interval::Op,
        percentiles: vec![95.0, 99.0],
        exporter: Exporter::Text,
        exportfile: None,
        seed: 1,
        properties: Default::default(),
    }
}

#[test]
fn workload_mixes_within_one_percent() {
    let p = |read, update, insert, scan, read_modify_write| Proportions { read, update, insert, scan, read_modify_write };
    let workloads = [
        ("a", p(0.5, 0.5, 0.0, 0.0, 0.0)),
        ("b", p(0.95, 0.05, 0.0, 0.0, 0.0)),
        ("c", p(1.0, 0.0, 0.0, 0.0, 0.0)),
        ("d", p(0.95, 0.0, 0.05, 0.0, 0.0)),
        ("e", p(0.0, 0.0, 0.05, 0.95, 0.0)),
        ("f", p(0.5, 0.0, 0.0, 0.0, 0.5)),
        // Weights need not sum to 1.
        ("unnormalized", p(3.0, 1.0, 0.0, 0.0, 0.0)),
    ];
    let mut rng = Rng::new(9);
    for (name, props) in workloads {
        let mut chooser = OpChooser::new(&props).unwrap();
        let mut counts = [0u32; 5];
        let ops = 100_000;
        for _ in 0..ops {
            counts[chooser.next(&mut rng) as usize] += 1;
        }
        let w = [props.read, props.update, props.insert, props.scan, props.read_modify_write];
        let sum: f64 = w.iter().sum();
        for (i, op) in Op::ALL.iter().enumerate() {
            let share = counts[i] as f64 / ops as f64;
            assert!((share - w[i] / sum).abs() < 0.01, "workload {name}: {} {share}", op.name());
            if w[i] == 0.0 {
                assert_eq!(counts[i], 0, "workload {name}: {}", op.name());
            }
        }
    }
    assert!(OpChooser::new(&Proportions::default()).unwrap_err().contains("readproportion"));
    let names: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
    assert_eq!(names, ["READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"]);
}

#[test]
fn acknowledged_counter_never_passes_an_unacknowledged_key() {
    const START: u64 = 1000;
    const PER_THREAD: u64 = 50_000;
    const THREADS: u64 = 4;
    let total = PER_THREAD * THREADS;
    let counter = Arc::new(AcknowledgedCounter::new(START));
    assert_eq!(counter.last_value(), START as i64 - 1);
    let done: Arc<Vec<AtomicBool>> = Arc::new((0..total).map(|_| AtomicBool::new(false)).collect());
    let finished = Arc::new(AtomicBool::new(false));
    // Every key at or below the limit must already be marked done; keys only
    // get marked, so each needs checking once, when the limit first passes it.
    // The workers start once the watcher runs: on a busy machine it could
    // otherwise first look after they ended.
    let start = Arc::new(std::sync::Barrier::new(THREADS as usize + 1));
    let watcher = {
        let (counter, done, finished, start) = (counter.clone(), done.clone(), finished.clone(), start.clone());
        std::thread::spawn(move || {
            start.wait();
            let mut checked = START as i64 - 1;
            loop {
                // Read before the check: the last round sees every key acknowledged.
                let last_round = finished.load(Ordering::SeqCst);
                let limit = counter.last_value();
                assert!(limit >= checked, "limit went back from {checked} to {limit}");
                for k in checked + 1..=limit {
                    assert!(done[(k as u64 - START) as usize].load(Ordering::SeqCst), "limit {limit} passed {k}");
                }
                checked = limit;
                if last_round {
                    return checked;
                }
            }
        })
    };
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (counter, done, start) = (counter.clone(), done.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                let mut rng = Rng::new(t);
                let mut held = Vec::with_capacity(8);
                for _ in 0..PER_THREAD {
                    held.push(counter.next());
                    // Hold a few keys and acknowledge them out of order.
                    if held.len() == 8 || rng.below(4) == 0 {
                        while !held.is_empty() {
                            let k = held.swap_remove(rng.below(held.len() as u64) as usize);
                            done[(k - START) as usize].store(true, Ordering::SeqCst);
                            counter.acknowledge(k).unwrap();
                        }
                    }
                }
                for k in held {
                    done[(k - START) as usize].store(true, Ordering::SeqCst);
                    counter.acknowledge(k).unwrap();
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    finished.store(true, Ordering::SeqCst);
    assert_eq!(watcher.join().unwrap(), (START + total - 1) as i64, "the watcher checked every key");
    assert_eq!(counter.last_value(), (START + total - 1) as i64);
}

#[test]
fn acknowledged_counter_reports_a_full_window() {
    let c = AcknowledgedCounter::new(0);
    c.acknowledge(5).unwrap();
    assert_eq!(c.last_value(), -1);
    let err = c.acknowledge(5 + ACK_WINDOW).unwrap_err();
    assert_eq!(err, TooManyUnacknowledged(5 + ACK_WINDOW));
    for k in 0..5 {
        c.acknowledge(k).unwrap();
    }
    assert_eq!(c.last_value(), 5);
}

#[test]
fn insert_keys_are_shared_and_end() {
    let a = InsertKeys::new(10, 3);
    let b = a.clone();
    assert_eq!([a.next(), b.next(), a.next(), b.next()], [Some(10), Some(11), Some(12), None]);
    assert_eq!(a.next(), None);
}

fn chooser(p: &YcsbPlan) -> (KeyChooser, Arc<AcknowledgedCounter>) {
    let acked = Arc::new(AcknowledgedCounter::for_plan(p));
    (KeyChooser::new(p, acked.clone(), Arc::new(AtomicU64::new(0))).unwrap(), acked)
}

#[test]
fn key_choosers_stay_in_the_keyspace() {
    let mut rng = Rng::new(5);
    let mut p = plan();
    p.insertstart = 100;
    p.insertcount = 900;
    let dists = [
        KeyDist::Uniform,
        KeyDist::Zipfian,
        KeyDist::Latest,
        KeyDist::Hotspot { data_fraction: 0.2, op_fraction: 0.8 },
        KeyDist::Exponential { percentile: 95.0, frac: 0.8571428571 },
        KeyDist::Sequential,
    ];
    for d in dists {
        p.requestdistribution = d;
        // Inserts grow the zipfian keyspace past the loaded keys.
        p.proportions.insert = 0.5;
        p.operationcount = 1000;
        let (mut c, _) = chooser(&p);
        let mut seen = vec![false; 1000];
        for _ in 0..100_000 {
            let k = c.next(&mut rng);
            let lowest = if matches!(d, KeyDist::Latest | KeyDist::Exponential { .. }) { 0 } else { 100 };
            assert!((lowest..1000).contains(&k), "{}: {k}", d.name());
            seen[k as usize] = true;
        }
        let covered = seen[100..].iter().filter(|&&s| s).count();
        if matches!(d, KeyDist::Uniform | KeyDist::Sequential | KeyDist::Hotspot { .. }) {
            assert_eq!(covered, 900, "{} covers its range", d.name());
        }
    }
}

#[test]
fn key_choosers_follow_acknowledged_inserts() {
    let mut rng = Rng::new(6);
    let mut p = plan();
    p.requestdistribution = KeyDist::Latest;
    let (mut c, acked) = chooser(&p);
    for _ in 0..500 {
        let k = acked.next();
        acked.acknowledge(k).unwrap();
    }
    let newest = (0..10_000).filter(|_| c.next(&mut rng) >= 1490).count();
    // The newest 10 of 1500 keys take a good third of a zipfian's draws.
    assert!(newest > 3_000, "{newest}");
    // Exponential counts back from the newest key too.
    p.requestdistribution = KeyDist::Exponential { percentile: 95.0, frac: 0.1 };
    let (mut c, acked) = chooser(&p);
    let k = acked.next();
    acked.acknowledge(k).unwrap();
    let recent = (0..10_000).filter(|_| c.next(&mut rng) > 1000 - 100).count();
    assert!((9_300..=9_700).contains(&recent), "{recent}");
}

#[test]
fn sequential_position_is_shared() {
    let mut p = plan();
    p.requestdistribution = KeyDist::Sequential;
    p.insertcount = 3;
    let acked = Arc::new(AcknowledgedCounter::for_plan(&p));
    let pos = Arc::new(AtomicU64::new(0));
    let mut a = KeyChooser::new(&p, acked.clone(), pos.clone()).unwrap();
    let mut b = KeyChooser::new(&p, acked, pos).unwrap();
    let mut rng = Rng::new(0);
    let got = [a.next(&mut rng), b.next(&mut rng), a.next(&mut rng), b.next(&mut rng)];
    assert_eq!(got, [0, 1, 2, 0]);
}

#[test]
fn bad_keyspaces_are_errors() {
    let acked = Arc::new(AcknowledgedCounter::new(1000));
    let seq = Arc::new(AtomicU64::new(0));
    let mut p = plan();
    p.insertcount = 2000;
    let e = KeyChooser::new(&p, acked.clone(), seq.clone()).unwrap_err();
    assert!(e.contains("insertcount=2000") && e.contains("recordcount"), "{e}");
    p.insertcount = 0;
    p.requestdistribution = KeyDist::Uniform;
    assert!(KeyChooser::new(&p, acked.clone(), seq.clone()).unwrap_err().contains("insertcount=0"));
    // A zipfian keyspace is never empty, but it must reach a loaded key.
    p.requestdistribution = KeyDist::Zipfian;
    assert!(KeyChooser::new(&p, acked.clone(), seq.clone()).is_ok());
    p.insertstart = 1000;
    assert!(KeyChooser::new(&p, acked.clone(), seq.clone()).unwrap_err().contains("insertstart=1000"));
    p.insertstart = 0;
    p.insertcount = 1000;
    p.requestdistribution = KeyDist::Hotspot { data_fraction: 0.0, op_fraction: 0.5 };
    assert!(KeyChooser::new(&p, acked.clone(), seq.clone()).unwrap_err().contains("hotspotdatafraction"));
    p.requestdistribution = KeyDist::Exponential { percentile: 0.0, frac: 0.5 };
    assert!(KeyChooser::new(&p, acked, seq).unwrap_err().contains("exponential.percentile"));
}

#[test]
fn field_and_scan_lengths() {
    let mut rng = Rng::new(8);
    let mut c = FieldLengthGen::new(&FieldLength::Constant(100)).unwrap();
    assert!((0..100).all(|_| c.next(&mut rng) == 100));
    let mut u = FieldLengthGen::new(&FieldLength::Uniform { min: 5, max: 9 }).unwrap();
    let mut seen = [0u32; 10];
    for _ in 0..10_000 {
        seen[u.next(&mut rng) as usize] += 1;
    }
    assert!(seen[..5].iter().all(|&n| n == 0) && seen[5..].iter().all(|&n| n > 1_800), "{seen:?}");
    let mut z = FieldLengthGen::new(&FieldLength::Zipfian { min: 10, max: 1000 }).unwrap();
    let draws: Vec<u64> = (0..10_000).map(|_| z.next(&mut rng)).collect();
    assert!(draws.iter().all(|&n| (10..=1000).contains(&n)));
    let shortest = draws.iter().filter(|&&n| n == 10).count();
    assert!(shortest > 1_000, "zipfian lengths favour the minimum: {shortest}");
    // YCSB's histogram walk: a draw of 0 or 1..=3 in buckets [0, 3, 1] gives
    // one block for 0 and two for the rest; three blocks never come out.
    let mut h = FieldLengthGen::new(&FieldLength::Histogram { block_size: 10, counts: vec![0, 3, 1] }).unwrap();
    let mut by_len = std::collections::BTreeMap::new();
    for _ in 0..40_000 {
        *by_len.entry(h.next(&mut rng)).or_insert(0u32) += 1;
    }
    assert_eq!(by_len.keys().copied().collect::<Vec<_>>(), [10, 20]);
    assert!((9_000..11_000).contains(&by_len[&10]), "{by_len:?}");
    assert!(FieldLengthGen::new(&FieldLength::Uniform { min: 9, max: 5 }).unwrap_err().contains("9..=5"));
    let mut s = ScanLengthGen::new(ScanLength::Uniform, 1, 100).unwrap();
    let mut seen = [false; 101];
    for _ in 0..10_000 {
        seen[s.next(&mut rng) as usize] = true;
    }
    assert!(!seen[0] && seen[1..].iter().all(|&s| s));
    let mut s = ScanLengthGen::new(ScanLength::Zipfian, 1, 100).unwrap();
    assert!((0..10_000).all(|_| (1..=100).contains(&s.next(&mut rng))));
    assert!(ScanLengthGen::new(ScanLength::Zipfian, 5, 1).unwrap_err().contains("maxscanlength"));
}

#[test]
fn zipfian_key_and_name_are_cheap() {
    // The client must reach 2 M workload-A ops/s on one thread, so a key
    // must cost well under 100 ns (about 45 ns measured on an idle core).
    // The bound is loose for loaded test machines but catches any per-draw
    // ζ sum or allocation.
    let mut p = plan();
    p.recordcount = 10_000_000;
    p.insertcount = 10_000_000;
    p.requestdistribution = KeyDist::Zipfian;
    let (mut c, _) = chooser(&p);
    let mut rng = Rng::new(3);
    let mut out = Vec::with_capacity(32);
    let n = 2_000_000u32;
    let t = std::time::Instant::now();
    let mut sum = 0u64;
    for _ in 0..n {
        key_name(c.next(&mut rng), true, 1, &mut out);
        sum += out.len() as u64;
    }
    let ns = t.elapsed().as_nanos() as f64 / n as f64;
    eprintln!("zipfian key + name: {ns:.1} ns");
    assert!(sum > 0);
    assert!(ns < 1000.0, "{ns} ns per key");
}
