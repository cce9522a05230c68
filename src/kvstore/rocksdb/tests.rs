use super::{open, options, stats};
use crate::kvstore::{conformance, Fields, Record, Status, StoreConfig};
use ::rocksdb::{BlockBasedOptions, ColumnFamilyDescriptor, Options, DB};
use std::collections::BTreeMap;
use std::path::Path;

fn cfg(dir: &Path, props: &[(&str, &str)]) -> StoreConfig {
    conformance::config(dir, props)
}

/// The newest OPTIONS-* file RocksDB wrote into `dir`.
fn options_file(dir: &Path) -> String {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("OPTIONS-"))
        .collect();
    files.sort();
    std::fs::read_to_string(files.last().expect("an OPTIONS file")).unwrap()
}

fn insert_some(dir: &Path, props: &[(&str, &str)], n: u32) {
    let store = open(&cfg(dir, props)).unwrap();
    let mut s = store.session().unwrap();
    let mut r = Record::default();
    r.push(0, &[7u8; 100]);
    r.push(2, &[9u8; 100]);
    for i in 0..n {
        assert_eq!(s.insert(format!("user{i}").as_bytes(), &r), Status::Ok);
    }
    drop(s);
    store.close().unwrap();
}

#[test]
fn conformance() {
    let dir = tempfile::tempdir().unwrap();
    conformance::check(open, &cfg(dir.path(), &[]));
}

#[test]
fn conformance_without_wal_or_statistics() {
    let dir = tempfile::tempdir().unwrap();
    conformance::check(open, &cfg(dir.path(), &[("wal", "false"), ("statistics", "false"), ("compression", "zstd")]));
}

#[test]
fn update_of_a_missing_key_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&cfg(dir.path(), &[])).unwrap();
    let mut s = store.session().unwrap();
    let mut r = Record::default();
    r.push(0, b"x");
    assert_eq!(s.update(b"nope", &r), Status::NotFound);
    assert_eq!(s.read(b"nope", Fields::All, &mut r), Status::NotFound);
}

#[test]
fn cf_names_lists_default_then_the_table() {
    let dir = tempfile::tempdir().unwrap();
    insert_some(dir.path(), &[], 3);
    assert_eq!(std::fs::read_to_string(dir.path().join("CF_NAMES")).unwrap(), "default\nusertable\n");
    // Reopening does not repeat "default" (the binding's own save does).
    insert_some(dir.path(), &[], 3);
    assert_eq!(std::fs::read_to_string(dir.path().join("CF_NAMES")).unwrap(), "default\nusertable\n");
}

#[test]
fn counters_come_from_rocksdb_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&cfg(dir.path(), &[])).unwrap();
    let mut s = store.session().unwrap();
    let mut r = Record::default();
    r.push(0, &[1u8; 100]);
    for i in 0..40 {
        assert_eq!(s.insert(format!("user{i}").as_bytes(), &r), Status::Ok);
    }
    assert_eq!(s.read(b"user3", Fields::All, &mut r), Status::Ok);
    drop(s);
    let c: std::collections::BTreeMap<String, u64> = store.counters().into_iter().collect();
    assert_eq!(c.get("keys_written"), Some(&40), "{c:?}");
    assert_eq!(c.get("keys_read"), Some(&1), "{c:?}");
    assert!(c["bytes_written"] >= 40 * 100, "{c:?}");
    assert!(c["wal_bytes"] >= 40 * 100, "{c:?}");
    for k in ["compaction_read_bytes", "flush_write_bytes", "stall_us", "flushes", "memtable_bytes"] {
        assert!(c.contains_key(k), "{k} missing from {c:?}");
    }
    store.close().unwrap();
}

#[test]
fn statistics_parser_reads_tickers_and_histograms() {
    let text = "rocksdb.bytes.written COUNT : 1234\n\
                rocksdb.db.flush.micros P50 : 10.000000 P95 : 20.000000 P99 : 20.000000 P100 : 20.000000 COUNT : 3 SUM : 45\n\
                rocksdb.unrelated COUNT : 9\n";
    let got = stats::parse(text);
    assert_eq!(got, vec![("bytes_written".into(), 1234), ("flushes".into(), 3), ("flush_us".into(), 45)]);
}

#[test]
fn compression_applies_to_every_level() {
    let dir = tempfile::tempdir().unwrap();
    insert_some(dir.path(), &[("compression", "zstd")], 1);
    let o = options_file(dir.path());
    let line = o.lines().find(|l| l.trim_start().starts_with("compression_per_level=")).unwrap();
    assert!(line.contains("kZSTD") && !line.contains("kNoCompression") && !line.contains("kLZ4"), "{line}");
}

#[test]
fn tables_are_written_in_a_format_the_binding_reads() {
    let dir = tempfile::tempdir().unwrap();
    insert_some(dir.path(), &[], 10);
    let o = options_file(dir.path());
    assert!(o.contains("format_version=4") && o.contains("checksum=kCRC32c"), "{o}");
}

/// An OPTIONS file as sections of lines.
fn sections(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut cur = String::new();
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        if l.starts_with('[') {
            cur = l.to_string();
        }
        out.entry(cur.clone()).or_default().push(l.to_string());
    }
    out
}

/// The OPTIONS text written here must configure what the binding's calls
/// (optimizeLevelStyleCompaction, increaseParallelism, ...) configure:
/// compare what RocksDB writes back for both, but for the table checksum.
#[test]
fn default_options_text_is_what_rocksdbs_own_setters_give() {
    let ours = tempfile::tempdir().unwrap();
    insert_some(ours.path(), &[], 1);
    let theirs = tempfile::tempdir().unwrap();
    {
        let mut o = Options::default();
        o.create_if_missing(true);
        o.create_missing_column_families(true);
        o.optimize_level_style_compaction(options::MEMTABLE_BUDGET);
        let threads = 2 * std::thread::available_parallelism().unwrap().get() as i32;
        o.increase_parallelism(threads);
        #[allow(deprecated)]
        o.set_max_background_compactions(threads);
        let mut t = BlockBasedOptions::default();
        t.set_format_version(4);
        o.set_block_based_table_factory(&t);
        let cfs = ["default", "usertable"].map(|n| ColumnFamilyDescriptor::new(n, o.clone()));
        drop(DB::open_cf_descriptors(&o, theirs.path(), cfs).unwrap());
    }
    let (ours, theirs) = (sections(&options_file(ours.path())), sections(&options_file(theirs.path())));
    assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>());
    for (name, lines) in &theirs {
        let strip = |v: &Vec<String>| -> Vec<String> { v.iter().filter(|l| !l.starts_with("checksum=")).cloned().collect() };
        let (a, b) = (strip(&ours[name]), strip(lines));
        let diff: Vec<_> = a.iter().zip(&b).filter(|(x, y)| x != y).collect();
        assert!(a.len() == b.len() && diff.is_empty(), "{name}: ours vs RocksDB's: {diff:?}");
    }
}

#[test]
fn blockcache_sets_the_capacity() {
    let dir = tempfile::tempdir().unwrap();
    for (props, want) in [(&[("blockcache", "1m")][..], 1 << 20), (&[][..], 8 << 20)] {
        let store = open(&cfg(dir.path(), props)).unwrap();
        let c: std::collections::BTreeMap<String, u64> = store.counters().into_iter().collect();
        assert_eq!(c.get("block_cache_capacity_bytes"), Some(&want), "{props:?}");
        store.close().unwrap();
    }
}

#[test]
fn bad_properties_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for (k, v, want) in [
        ("compression", "brotli", "rocksdb.compression=brotli"),
        ("sync", "maybe", "rocksdb.sync=maybe"),
        ("blockcache", "lots", "rocksdb.blockcache=lots"),
        ("blockcache", "0", "rocksdb.blockcache=0"),
    ] {
        let err = open(&cfg(dir.path(), &[(k, v)])).err().unwrap_or_else(|| panic!("{k}={v} accepted"));
        assert!(err.contains(want), "{err}");
    }
    let mut c = cfg(dir.path(), &[]);
    c.dir = None;
    assert!(open(&c).err().unwrap().contains("rocksdb.dir"));
}

#[test]
fn optionsfile_is_loaded() {
    let first = tempfile::tempdir().unwrap();
    insert_some(first.path(), &[], 1);
    // An OPTIONS file from a database with the table, one option changed.
    let text = options_file(first.path());
    let (before, changed) = text
        .lines()
        .find(|l| l.trim_start().starts_with("write_buffer_size="))
        .map(|l| (l.to_string(), "  write_buffer_size=3145728".to_string()))
        .unwrap();
    let file = first.path().join("my-options.ini");
    std::fs::write(&file, text.replace(&before, &changed)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = file.to_str().unwrap();
    insert_some(dir.path(), &[("optionsfile", f)], 5);
    assert!(options_file(dir.path()).contains("write_buffer_size=3145728"));
}

#[test]
fn optionsfile_without_the_table_or_with_compression_is_refused() {
    let first = tempfile::tempdir().unwrap();
    insert_some(first.path(), &[], 1);
    let file = first.path().join("opts.ini");
    std::fs::write(&file, options_file(first.path()).replace("\"usertable\"", "\"other\"")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let f = file.to_str().unwrap();
    let err = open(&cfg(dir.path(), &[("optionsfile", f)])).err().unwrap();
    assert!(err.contains("rocksdb.optionsfile") && err.contains("usertable"), "{err}");
    let err = open(&cfg(dir.path(), &[("optionsfile", f), ("compression", "lz4")])).err().unwrap();
    assert!(err.contains("rocksdb.compression"), "{err}");
}

/// With the WAL off, the log RocksDB keeps open stays empty, and the data
/// still survives a close (flushed then).
#[test]
fn wal_false_writes_no_log() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(&cfg(dir.path(), &[("wal", "false")])).unwrap();
    let mut s = store.session().unwrap();
    let mut r = Record::default();
    r.push(0, &[5u8; 100]);
    for i in 0..100 {
        assert_eq!(s.insert(format!("user{i}").as_bytes(), &r), Status::Ok);
    }
    let logs: Vec<u64> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| e.metadata().unwrap().len())
        .collect();
    assert!(!logs.is_empty(), "RocksDB keeps a .log file even without writing to it");
    assert!(logs.iter().all(|&n| n == 0), "log sizes {logs:?}");
    drop(s);
    store.close().unwrap();
    let store = open(&cfg(dir.path(), &[])).unwrap();
    let mut s = store.session().unwrap();
    assert_eq!(s.read(b"user99", Fields::All, &mut r), Status::Ok);
}

/// fsync and fdatasync calls while the child test below writes 50 records
/// with `rocksdb.sync=<sync>`, counted by strace; None without strace.
fn syncs_under_strace(sync: &str) -> Option<usize> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("strace.log");
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(&log)
        .arg(exe)
        .args(["--ignored", "--exact", "kvstore::rocksdb::tests::sync_child", "--test-threads=1"])
        .env("FSBENCH_ROCKSDB_SYNC_CHILD", dir.path().join("db"))
        .env("FSBENCH_ROCKSDB_SYNC", sync)
        .output()
        .ok()?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if stderr.contains("ptrace") && stderr.contains("Operation not permitted") {
        eprintln!("skipped: strace may not trace here ({})", stderr.trim());
        return None;
    }
    assert!(out.status.success() && stdout.contains("1 passed"), "child failed: {stdout}{stderr}");
    let text = std::fs::read_to_string(&log).unwrap();
    Some(text.lines().filter(|l| l.contains(" fsync(") || l.contains(" fdatasync(")).count())
}

#[test]
fn sync_true_syncs_every_write() {
    if std::process::Command::new("strace").arg("-V").output().is_err() {
        eprintln!("skipped: no strace to count fsync calls with");
        return;
    }
    let (Some(with), Some(without)) = (syncs_under_strace("true"), syncs_under_strace("false")) else { return };
    // Opening and closing sync files either way; only the writes differ.
    assert!(with >= without + 50, "sync=true: {with} syncs, sync=false: {without}");
}

/// The writer `sync_true_syncs_every_write` runs under strace.
#[test]
#[ignore = "run by sync_true_syncs_every_write in a child process"]
fn sync_child() {
    let (Some(dir), Ok(sync)) = (std::env::var_os("FSBENCH_ROCKSDB_SYNC_CHILD"), std::env::var("FSBENCH_ROCKSDB_SYNC")) else {
        panic!("run by sync_true_syncs_every_write, which sets FSBENCH_ROCKSDB_SYNC_CHILD and FSBENCH_ROCKSDB_SYNC");
    };
    insert_some(Path::new(&dir), &[("sync", &sync)], 50);
}
