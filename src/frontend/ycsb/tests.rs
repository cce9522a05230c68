use super::*;

fn args(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

fn plan(s: &str) -> YcsbPlan {
    parse(&args(s), None).unwrap_or_else(|e| panic!("{s}: {e}")).plan
}

fn error(s: &str) -> String {
    parse(&args(s), None).unwrap_err().to_string()
}

#[test]
fn builtin_workloads_and_core_defaults() {
    let p = plan("run null -P workloada");
    assert_eq!((p.phase, p.recordcount, p.operationcount, p.fieldcount), (Phase::Run, 1000, 1000, 10));
    assert_eq!(p.requestdistribution, KeyDist::Zipfian);
    assert_eq!((p.proportions.read, p.proportions.update), (0.5, 0.5));
    assert_eq!(p.fieldlength, FieldLength::Constant(100));
    assert!(p.readallfields && !p.writeallfields && p.hashed_inserts);
    assert_eq!((p.table.as_str(), p.zeropadding, p.threads), ("usertable", 1, 1));
    assert_eq!(p.percentiles, vec![50.0, 95.0, 99.0]);
    let e = plan("run null -P workloads/workloade");
    assert_eq!((e.proportions.scan, e.proportions.insert, e.maxscanlength), (0.95, 0.05, 100));
    assert_eq!(plan("run null -P workloadd").requestdistribution, KeyDist::Latest);
    assert_eq!(plan("run null -P workloadf").proportions.read_modify_write, 0.5);
}

#[test]
fn flags_over_files_whatever_the_order() {
    let p = plan("run -p recordcount=77 null -P workloadc -threads 3 -target 500 -s -p status.interval=2");
    assert_eq!((p.recordcount, p.threads, p.target_ops, p.status_interval_s), (77, 3, 500.0, Some(2)));
    // YCSB's spellings.
    let p = plan("-load -db site.ycsb.db.rocksdb.RocksDBClient -P workloada -p rocksdb.dir=/tmp/x -p rocksdb.sync=true");
    assert_eq!((p.phase, p.store.name.as_str()), (Phase::Load, "rocksdb"));
    assert_eq!(p.store.dir, Some(PathBuf::from("/tmp/x")));
    assert_eq!(p.store.props.get("sync").map(String::as_str), Some("true"));
    assert_eq!(p.operationcount, 1000, "load inserts recordcount records");
}

#[test]
fn load_splits_by_insertstart_and_insertcount() {
    let p = plan("load null -P workloada -p recordcount=100 -p insertstart=40 -p insertcount=60");
    assert_eq!((p.insertstart, p.insertcount, p.operationcount), (40, 60, 60));
    assert!(error("load null -P workloada -p recordcount=100 -p insertstart=50 -p insertcount=60").contains("beyond recordcount=100"));
}

#[test]
fn property_files_with_locations() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w");
    std::fs::write(&f, "recordcount=10\n# c\nreadproportion = lots\noperationcount=5\n").unwrap();
    let e = error(&format!("run null -P {}", f.display()));
    assert!(e.contains(&format!("{}:3:18: readproportion=lots: expected a number", f.display())), "{e}");
}

#[test]
fn bad_input_names_the_property() {
    assert!(error("run null -P workloada -p readproportion=0 -p updateproportion=0").contains("sum to 0"));
    assert!(error("run null -P workloada -p recordcount=-5").contains("-p: recordcount=-5: expected a count of zero or more"));
    assert!(error("run null -P workloada -p requestdistribution=pareto").contains("requestdistribution=pareto: expected uniform, zipfian"));
    assert!(error("run mongodb -P workloada").contains("store \"mongodb\": unknown"));
    assert!(error("run rocksdb -P workloada").contains("needs -p rocksdb.dir=DIRECTORY"));
    assert!(error("run rocksdb -P workloada -p rocksdb.dir=/x -p rocksdb.turbo=1")
        .contains("rocksdb.turbo: not a property of the rocksdb store"));
    assert!(error("run null -P nosuchfile").contains("no such file, and not a built-in workload"));
    assert!(error("-P workloada").contains("expected the phase first"));
    assert!(error("run null -P workloada -x").contains("-x: unknown flag"));
    assert!(error("run null -P workloada -p scanlengthdistribution=normal").contains("expected uniform or zipfian"));
    assert!(error("run null -P workloada -p workload=site.ycsb.workloads.TimeSeriesWorkload").contains("CoreWorkload"));
    assert!(error("run null -P workloada -threads 0").contains("threadcount"));
}

#[test]
fn unknown_properties_are_warnings() {
    let w = parse(&args("run null -P workloada -p mongodb.url=x -p rocksdb.dir=/y -p frobnicate=1"), None).unwrap().warnings;
    assert!(w.iter().any(|x| x.message.contains("frobnicate: not a YCSB core property")), "{w:?}");
    assert!(w.iter().any(|x| x.message.contains("rocksdb.dir: a property of the rocksdb store, not used by null")), "{w:?}");
    assert!(w.iter().any(|x| x.message.contains("mongodb.url: not a YCSB core property")), "{w:?}");
}

#[test]
fn builtin_workloads_match_ycsbs_files_when_the_peer_is_built() {
    let dir = std::path::Path::new("/var/tmp/fsbench-peers/ycsb/workloads");
    if !dir.is_dir() {
        eprintln!("skipped: Java YCSB is not built here ({} missing; scripts/setup-peers.sh builds it)", dir.display());
        return;
    }
    for (name, _, text) in workloads::CORE {
        let ours: BTreeMap<String, String> = properties::parse(text, name).unwrap().into_iter().map(|p| (p.key, p.value)).collect();
        let theirs: BTreeMap<String, String> = properties::read(&dir.join(name)).unwrap().into_iter().map(|p| (p.key, p.value)).collect();
        assert_eq!(ours, theirs, "{name}");
    }
}

#[test]
fn the_clients_memory_is_checked_against_what_is_available() {
    let p = plan("run null -P workloada");
    assert!(limits::memory(&p, 64 << 20).is_ok(), "ten 100-byte fields in one thread fit in 64 MiB");
    assert!(limits::memory(&p, 0).is_ok(), "unknown memory checks nothing");
    let big = plan("run null -P workloada -p fieldcount=100 -p fieldlength=1000000 -threads 8");
    let e = limits::memory(&big, 1 << 30).unwrap_err().to_string();
    assert!(e.contains("fieldcount=100, fieldlength=1000000, threadcount=8") && e.contains("available"), "{e}");
    // Scans keep a row per record of the longest scan.
    let scans = plan("run null -P workloade -p fieldlength=100000");
    assert!(limits::memory(&scans, 64 << 20).unwrap_err().to_string().contains("maxscanlength=100"));
    assert!(limits::memory(&plan("load null -P workloade -p fieldlength=100000"), 64 << 20).is_ok(), "a load does not scan");
}

/// Random property values, extreme ones included, from a seeded generator:
/// parsing never panics, and what it accepts keeps the bounds the runner
/// relies on.
#[test]
fn random_property_values_never_panic_and_accepted_ones_are_bounded() {
    // Every property YCSB's core reads, numeric or not.
    let keys = CORE_PROPERTIES;
    let values = [
        "0",
        "1",
        "-1",
        "7",
        "1000",
        "2147483647",
        "2147483648",
        "4294967296",
        "4611686018427387904",
        "9223372036854775807",
        "18446744073709551616",
        "1e300",
        "-1e300",
        "1e-300",
        "NaN",
        "inf",
        "0.5",
        "",
        "x",
        "zipfian",
        "latest",
        "exponential",
        "uniform",
        "hotspot",
        "constant",
        "100,0",
    ];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for _ in 0..3000 {
        let mut words = args(if next(2) == 0 { "run null -P workloada -s" } else { "load null -P workloade" });
        for _ in 0..1 + next(4) {
            words.push("-p".into());
            words.push(format!("{}={}", keys[next(keys.len())], values[next(values.len())]));
        }
        let Ok(parsed) = parse(&words, None) else { continue };
        let p = parsed.plan;
        assert!(u64::from(p.fieldcount) * p.fieldlength.max() <= u64::from(u32::MAX), "{words:?}");
        assert!(p.recordcount <= 1 << 62 && p.operationcount <= 1 << 62 && p.maxscanlength <= i32::MAX as u64, "{words:?}");
        assert!(p.target_ops == 0.0 || p.target_ops >= 0.001, "{words:?}");
        assert!(p.maxexecutiontime_s <= 365 * 86_400 && p.status_interval_s.is_none_or(|s| s <= 365 * 86_400), "{words:?}");
    }
}
