//! fsbench's RocksDB store and Java YCSB's RocksDB binding open each
//! other's databases: Java loads and fsbench reads every record back, and
//! fsbench loads and Java reads. Both sides write YCSB's deterministic
//! values (`dataintegrity=true`) so each side checks the other's bytes.
//! Skips, saying why, without the Java YCSB build (scripts/build-ycsb.sh).
#![cfg(feature = "rocksdb")]

use fsbench::kvstore::{self, Fields, Record, Rows, Status, StoreConfig};
use std::path::{Path, PathBuf};
use std::process::Command;

const RECORDS: u32 = 200;
const FIELDS: u32 = 3;

/// The classpath and workloadc of the Java YCSB scripts/build-ycsb.sh built
/// (in $FSBENCH_YCSB_OUT, as that script, else /var/tmp/fsbench-peers).
fn ycsb() -> Option<(String, PathBuf)> {
    let out = std::env::var_os("FSBENCH_YCSB_OUT").map(PathBuf::from).unwrap_or_else(|| "/var/tmp/fsbench-peers".into());
    let file = out.join("ycsb/classpath");
    let cp = match std::fs::read_to_string(&file) {
        Ok(cp) => cp.trim().to_string(),
        Err(e) => {
            eprintln!("skipped: no Java YCSB ({}: {e}); build it with scripts/build-ycsb.sh", file.display());
            return None;
        }
    };
    if Command::new("java").arg("-version").output().is_err() {
        eprintln!("skipped: no java on PATH");
        return None;
    }
    Some((cp, out.join("ycsb/workloads/workloadc")))
}

/// Run YCSB's client (`-load` or `-t`) on `dir`; its stdout and stderr.
fn java(cp: &str, workload: &Path, phase: &str, dir: &Path) -> String {
    let out = Command::new("java")
        .args(["-cp", cp, "site.ycsb.Client", phase, "-db", "site.ycsb.db.rocksdb.RocksDBClient", "-P"])
        .arg(workload)
        .args(["-p", &format!("recordcount={RECORDS}"), "-p", &format!("operationcount={RECORDS}")])
        .args(["-p", "insertorder=ordered", "-p", &format!("fieldcount={FIELDS}"), "-p", "readallfields=true"])
        .args(["-p", "dataintegrity=true", "-p"])
        .arg(format!("rocksdb.dir={}", dir.display()))
        .output()
        .expect("run java");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "YCSB {phase} failed:\n{text}");
    text
}

/// YCSB's `buildDeterministicValue` for fieldlength 100: the key, the
/// field name, then, after a colon each, Java string hashes of what is
/// there so far (the colon included).
fn value(key: &str, field: &str) -> Vec<u8> {
    let mut s = format!("{key}:{field}");
    while s.len() < 100 {
        s.push(':');
        let h = s.bytes().fold(0i32, |h, b| h.wrapping_mul(31).wrapping_add(b as i32));
        s.push_str(&h.to_string());
    }
    s.truncate(100);
    s.into_bytes()
}

fn open(dir: &Path, props: &[(&str, &str)]) -> Box<dyn kvstore::Store> {
    let cfg = StoreConfig {
        dir: Some(dir.to_path_buf()),
        props: props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        table: "usertable".into(),
        field_names: (0..FIELDS).map(|i| format!("field{i}")).collect(),
        threads: 1,
    };
    kvstore::open(fsbench::model::store::find("rocksdb").unwrap(), &cfg).expect("open with fsbench")
}

#[test]
fn deterministic_value_matches_java() {
    // As Java's own load wrote it.
    let v = value("user0", "field0");
    assert_eq!(v.len(), 100);
    assert!(v.starts_with(b"user0:field0:539063247:-733297562:"), "{}", String::from_utf8_lossy(&v));
}

#[test]
fn fsbench_reads_what_java_loaded() {
    let Some((cp, workload)) = ycsb() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let out = java(&cp, &workload, "-load", &dir);
    assert!(out.contains(&format!("[INSERT], Return=OK, {RECORDS}")), "{out}");

    let store = open(&dir, &[]);
    let mut s = store.session().unwrap();
    let mut r = Record::default();
    for i in 0..RECORDS {
        let key = format!("user{i}");
        assert_eq!(s.read(key.as_bytes(), Fields::All, &mut r), Status::Ok, "{key}");
        assert_eq!(r.len(), FIELDS as usize, "{key}");
        for f in 0..FIELDS {
            assert_eq!(r.get(f), Some(&value(&key, &format!("field{f}"))[..]), "{key} field{f}");
        }
    }
    let mut rows = Rows::default();
    assert_eq!(s.scan(b"user", 1000, Fields::All, &mut rows), Status::Ok);
    assert_eq!(rows.len(), RECORDS as usize, "Java's load holds exactly the records asked for");
    drop(s);
    store.close().unwrap();

    // And Java still opens it after fsbench has (CF_NAMES as it expects).
    let out = java(&cp, &workload, "-t", &dir);
    assert!(out.contains(&format!("[READ], Return=OK, {RECORDS}")), "{out}");
}

#[test]
fn java_reads_what_fsbench_loaded() {
    let Some((cp, workload)) = ycsb() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    // Without the WAL, close flushes: Java reads fsbench's table files, not
    // just a log it replays.
    let store = open(&dir, &[("wal", "false")]);
    let mut s = store.session().unwrap();
    let mut r = Record::default();
    for i in 0..RECORDS {
        let key = format!("user{i}");
        r.clear();
        for f in 0..FIELDS {
            r.push(f, &value(&key, &format!("field{f}")));
        }
        assert_eq!(s.insert(key.as_bytes(), &r), Status::Ok);
    }
    drop(s);
    store.close().unwrap();

    let out = java(&cp, &workload, "-t", &dir);
    assert!(out.contains(&format!("[READ], Return=OK, {RECORDS}")), "{out}");
    // dataintegrity: Java compared every value it read with its own.
    assert!(out.contains(&format!("[VERIFY], Return=OK, {RECORDS}")), "{out}");
    for bad in ["NOT_FOUND", "UNEXPECTED_STATE", "Return=ERROR"] {
        assert!(!out.contains(bad), "{bad} in:\n{out}");
    }
}
