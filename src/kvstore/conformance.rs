//! The checks every store that keeps data passes, whatever it is built on:
//! insert, read back every field, read some fields, update one field and
//! keep the others, scan in key order from a start key, delete, two
//! sessions at once, and everything still there after close and reopen.
//! A store's test module calls `check(open, dir)`.

use super::{Fields, Record, Rows, Status, Store, StoreConfig};
use std::collections::BTreeMap;
use std::path::Path;

pub fn config(dir: &Path, props: &[(&str, &str)]) -> StoreConfig {
    StoreConfig {
        dir: Some(dir.to_path_buf()),
        props: props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
        table: "usertable".into(),
        field_names: (0..4).map(|i| format!("field{i}")).collect(),
        threads: 2,
    }
}

fn record(key: &str, tag: &str) -> Record {
    let mut r = Record::default();
    for f in 0..4u32 {
        r.push(f, format!("{key}-{tag}-{f}-{}", "x".repeat(f as usize * 7)).as_bytes());
    }
    r
}

fn key(i: u32) -> String {
    format!("user{i:04}")
}

/// Run every check against the store `open` opens with `cfg`.
pub fn check(open: fn(&StoreConfig) -> Result<Box<dyn Store>, String>, cfg: &StoreConfig) {
    let store = open(cfg).expect("open");
    assert!(store.is_empty().unwrap(), "a new store is empty");
    {
        let mut s = store.session().unwrap();
        // Inserted out of key order: the scan must sort.
        for i in (0..50u32).rev() {
            assert_eq!(s.insert(key(i).as_bytes(), &record(&key(i), "v1")), Status::Ok, "insert {i}");
        }
        let mut out = Record::default();
        for i in 0..50u32 {
            assert_eq!(s.read(key(i).as_bytes(), Fields::All, &mut out), Status::Ok);
            let want = record(&key(i), "v1");
            for f in 0..4 {
                assert_eq!(out.get(f), want.get(f), "key {i} field {f}");
            }
            assert_eq!(out.len(), 4);
        }
        assert_eq!(s.read(b"user9999", Fields::All, &mut out), Status::NotFound);
        assert_eq!(s.read(key(7).as_bytes(), Fields::Some(&[2]), &mut out), Status::Ok);
        assert_eq!((out.len(), out.get(2)), (1, record(&key(7), "v1").get(2)), "a read of field2 alone");

        // An update changes one field and keeps the others.
        let mut upd = Record::default();
        upd.push(1, b"changed");
        assert_eq!(s.update(key(3).as_bytes(), &upd), Status::Ok);
        assert_eq!(s.read(key(3).as_bytes(), Fields::All, &mut out), Status::Ok);
        assert_eq!(out.get(1), Some(&b"changed"[..]));
        assert_eq!(out.get(0), record(&key(3), "v1").get(0));
        assert_eq!(out.get(3), record(&key(3), "v1").get(3));

        // Scans: key order, from the start key (inclusive), at most count.
        let mut rows = Rows::default();
        assert_eq!(s.scan(key(10).as_bytes(), 5, Fields::All, &mut rows), Status::Ok);
        let keys: Vec<String> = rows.iter().map(|(k, _)| String::from_utf8(k.to_vec()).unwrap()).collect();
        assert_eq!(keys, (10..15).map(key).collect::<Vec<_>>());
        for (k, r) in rows.iter() {
            let k = String::from_utf8(k.to_vec()).unwrap();
            assert_eq!(r.get(0), record(&k, "v1").get(0), "scan row {k}");
        }
        assert_eq!(s.scan(key(48).as_bytes(), 10, Fields::Some(&[0]), &mut rows), Status::Ok);
        assert_eq!(rows.len(), 2, "a scan stops at the last key");
        assert!(rows.iter().all(|(_, r)| r.len() == 1));

        assert_eq!(s.delete(key(20).as_bytes()), Status::Ok);
        assert_eq!(s.read(key(20).as_bytes(), Fields::All, &mut out), Status::NotFound);
        s.cleanup().unwrap();
    }
    // Two sessions at once, on two threads.
    std::thread::scope(|sc| {
        for t in 0..2u32 {
            let store = &store;
            sc.spawn(move || {
                let mut s = store.session().unwrap();
                for i in 0..25u32 {
                    let k = key(100 + t * 25 + i);
                    assert_eq!(s.insert(k.as_bytes(), &record(&k, "t")), Status::Ok);
                }
                s.cleanup().unwrap();
            });
        }
    });
    store.close().unwrap();

    let store = open(cfg).expect("reopen");
    assert!(!store.is_empty().unwrap());
    let mut s = store.session().unwrap();
    let mut out = Record::default();
    for i in (0..50u32).chain(100..150) {
        let st = s.read(key(i).as_bytes(), Fields::All, &mut out);
        if i == 20 {
            assert_eq!(st, Status::NotFound, "deleted before the reopen");
            continue;
        }
        assert_eq!(st, Status::Ok, "key {i} after reopen");
        let want = record(&key(i), if i >= 100 { "t" } else { "v1" });
        assert_eq!(out.get(0), want.get(0), "key {i} after reopen");
    }
    assert_eq!(s.read(key(3).as_bytes(), Fields::Some(&[1]), &mut out), Status::Ok);
    assert_eq!(out.get(1), Some(&b"changed"[..]), "the update survived the reopen");
    drop(s);
    store.close().unwrap();
}
