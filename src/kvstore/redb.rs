//! redb, a pure-Rust copy-on-write B-tree, in one file `<dir>/ycsb.redb`
//! with one table per YCSB table and records laid out as YCSB's RocksDB
//! binding lays them out (`codec`).
//!
//! Every operation is its own transaction. redb has one writer at a time:
//! sessions share the database, and a write waits for the one before it to
//! commit, whatever the thread count. That is the copy-on-write B-tree's
//! nature (each commit writes a new root), not a lock of ours, so a run
//! with many threads measures it. Reads run beside writes on a snapshot.
//! `redb.durability=immediate` (redb's default) fsyncs every commit;
//! `none` leaves commits in memory until the next durable one, which
//! `close` makes.

use super::codec;
use super::{Fields, Record, Rows, Session, Status, Store, StoreConfig};
use redb::{Builder, Database, Durability, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use std::fmt::Display;
use std::path::PathBuf;

const NAME: &str = "redb";
/// The file the database is, in the store's directory.
const FILE: &str = "ycsb.redb";
/// What marks a redb database of this store.
pub const MARKER: &str = "ycsb.redb starting with redb's header";

/// Whether `dir` holds this store's redb database (redb's magic number).
pub fn holds(dir: &std::path::Path) -> bool {
    super::starts_with(&dir.join(FILE), &[b'r', b'e', b'd', b'b', 0x1A, 0x0A, 0xA9, 0x0D, 0x0A])
}

pub struct RedbStore {
    db: Database,
    path: PathBuf,
    table: String,
    field_names: Vec<String>,
    durability: Durability,
}

pub fn open(cfg: &StoreConfig) -> Result<Box<dyn Store>, String> {
    let dir = cfg.dir(NAME)?;
    let durability = match cfg.props.get("durability").map(String::as_str) {
        None | Some("immediate") => Durability::Immediate,
        Some("none") => Durability::None,
        Some(v) => return Err(format!("{NAME}.durability={v}: expected immediate or none")),
    };
    let cache = cfg.size(NAME, "cache")?;
    if cfg.table.is_empty() {
        return Err(format!("{NAME}: the table name is empty"));
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{NAME}: cannot create {}: {e}", dir.display()))?;
    let path = dir.join(FILE);
    let mut builder = Builder::new();
    if let Some(bytes) = cache {
        let bytes = usize::try_from(bytes).map_err(|_| format!("{NAME}.cache={bytes}: too large for this machine"))?;
        builder.set_cache_size(bytes);
    }
    let db = builder.create(&path).map_err(|e| format!("{NAME}: cannot open {}: {e}", path.display()))?;
    let store = RedbStore { db, path, table: cfg.table.clone(), field_names: cfg.field_names.clone(), durability };
    // Created up front so that reads never meet a missing table.
    (|| -> Result<(), String> {
        let txn = store.db.begin_write().map_err(s)?;
        txn.open_table(store.def()).map_err(s)?;
        txn.commit().map_err(s)
    })()
    .map_err(|e| format!("{NAME}: cannot create table {:?} in {}: {e}", store.table, store.path.display()))?;
    Ok(Box::new(store))
}

fn s(e: impl Display) -> String {
    e.to_string()
}

impl RedbStore {
    fn def(&self) -> TableDefinition<'_, &'static [u8], &'static [u8]> {
        TableDefinition::new(&self.table)
    }

    fn begin_write(&self) -> Result<redb::WriteTransaction, String> {
        let mut txn = self.db.begin_write().map_err(s)?;
        txn.set_durability(self.durability).map_err(s)?;
        Ok(txn)
    }
}

impl Store for RedbStore {
    fn session(&self) -> Result<Box<dyn Session + '_>, String> {
        Ok(Box::new(RedbSession { store: self, blob: Vec::new(), stored: Record::default(), error: None }))
    }

    fn is_empty(&self) -> Result<bool, String> {
        let txn = self.db.begin_read().map_err(|e| format!("{NAME}: {e}"))?;
        let table = txn.open_table(self.def()).map_err(|e| format!("{NAME}: {e}"))?;
        table.is_empty().map_err(|e| format!("{NAME}: {e}"))
    }

    fn counters(&self) -> Vec<(String, u64)> {
        match std::fs::metadata(&self.path) {
            Ok(m) => vec![("redb.file_bytes".to_string(), m.len())],
            Err(_) => Vec::new(),
        }
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        // With durability=none the last commits are only in memory: one
        // durable commit writes them out.
        let RedbStore { db, path, .. } = *self;
        (|| -> Result<(), String> {
            let mut txn = db.begin_write().map_err(s)?;
            txn.set_durability(Durability::Immediate).map_err(s)?;
            txn.commit().map_err(s)?;
            db.close().map_err(s)
        })()
        .map_err(|e| format!("{NAME}: closing {}: {e}", path.display()))
    }
}

struct RedbSession<'a> {
    store: &'a RedbStore,
    /// The value being written, reused.
    blob: Vec<u8>,
    /// An update's stored record, reused.
    stored: Record,
    error: Option<String>,
}

impl RedbSession<'_> {
    fn status(&mut self, what: &str, r: Result<Status, String>) -> Status {
        r.unwrap_or_else(|e| {
            self.error = Some(format!("{NAME}: {what}: {e}"));
            Status::Error
        })
    }

    fn try_read(&self, key: &[u8], fields: Fields, out: &mut Record) -> Result<Status, String> {
        let txn = self.store.db.begin_read().map_err(s)?;
        let table = txn.open_table(self.store.def()).map_err(s)?;
        match table.get(key).map_err(s)? {
            Some(v) => codec::decode(v.value(), &self.store.field_names, fields, out).map(|()| Status::Ok),
            None => Ok(Status::NotFound),
        }
    }

    fn try_scan(&self, start: &[u8], count: usize, fields: Fields, out: &mut Rows) -> Result<Status, String> {
        out.clear();
        let txn = self.store.db.begin_read().map_err(s)?;
        let table = txn.open_table(self.store.def()).map_err(s)?;
        for kv in table.range(start..).map_err(s)?.take(count) {
            let (k, v) = kv.map_err(s)?;
            codec::decode(v.value(), &self.store.field_names, fields, out.next_row(k.value()))?;
        }
        Ok(Status::Ok)
    }

    fn try_update(&mut self, key: &[u8], values: &Record) -> Result<Status, String> {
        let txn = self.store.begin_write()?;
        {
            let mut table = txn.open_table(self.store.def()).map_err(s)?;
            match table.get(key).map_err(s)? {
                Some(v) => codec::decode(v.value(), &self.store.field_names, Fields::All, &mut self.stored)?,
                None => return Ok(Status::NotFound),
            }
            codec::encode_update(&self.stored, values, &self.store.field_names, &mut self.blob);
            table.insert(key, self.blob.as_slice()).map_err(s)?;
        }
        txn.commit().map_err(s)?;
        Ok(Status::Ok)
    }

    fn try_insert(&mut self, key: &[u8], values: &Record) -> Result<Status, String> {
        codec::encode(values, &self.store.field_names, &mut self.blob);
        let txn = self.store.begin_write()?;
        txn.open_table(self.store.def()).map_err(s)?.insert(key, self.blob.as_slice()).map_err(s)?;
        txn.commit().map_err(s)?;
        Ok(Status::Ok)
    }

    fn try_delete(&mut self, key: &[u8]) -> Result<Status, String> {
        let txn = self.store.begin_write()?;
        let found = txn.open_table(self.store.def()).map_err(s)?.remove(key).map_err(s)?.is_some();
        if !found {
            // Nothing changed: no commit to pay for.
            txn.abort().map_err(s)?;
            return Ok(Status::NotFound);
        }
        txn.commit().map_err(s)?;
        Ok(Status::Ok)
    }
}

impl Session for RedbSession<'_> {
    fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Status {
        let r = self.try_read(key, fields, out);
        self.status("read", r)
    }

    fn scan(&mut self, start: &[u8], count: usize, fields: Fields, out: &mut Rows) -> Status {
        let r = self.try_scan(start, count, fields, out);
        self.status("scan", r)
    }

    fn update(&mut self, key: &[u8], values: &Record) -> Status {
        let r = self.try_update(key, values);
        self.status("update", r)
    }

    fn insert(&mut self, key: &[u8], values: &Record) -> Status {
        let r = self.try_insert(key, values);
        self.status("insert", r)
    }

    /// NOT_FOUND when the key was not there: the B-tree knows at no cost.
    fn delete(&mut self, key: &[u8]) -> Status {
        let r = self.try_delete(key);
        self.status("delete", r)
    }

    fn last_error(&self) -> Option<String> {
        self.error.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::super::conformance;

    #[test]
    fn conformance() {
        let dir = tempfile::tempdir().unwrap();
        conformance::check(super::open, &conformance::config(dir.path(), &[]));
    }

    #[test]
    fn conformance_without_durability() {
        let dir = tempfile::tempdir().unwrap();
        conformance::check(super::open, &conformance::config(dir.path(), &[("durability", "none"), ("cache", "2m")]));
    }

    #[test]
    fn bad_values_and_directories_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let e = super::open(&conformance::config(dir.path(), &[("durability", "eventual")])).err().unwrap();
        assert!(e.contains("redb.durability=eventual") && e.contains("immediate or none"), "{e}");
        let e = super::open(&conformance::config(dir.path(), &[("cache", "-1")])).err().unwrap();
        assert!(e.contains("redb.cache=-1"), "{e}");
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let e = super::open(&conformance::config(&file, &[])).err().unwrap();
        assert!(e.contains(&file.display().to_string()), "{e}");
    }

    #[test]
    fn delete_of_a_missing_key_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let store = super::open(&conformance::config(dir.path(), &[])).unwrap();
        let mut s = store.session().unwrap();
        assert_eq!(s.delete(b"nobody"), super::Status::NotFound);
        drop(s);
        assert!(store.counters().iter().any(|(n, b)| n == "redb.file_bytes" && *b > 0));
        store.close().unwrap();
    }

    #[test]
    #[ignore = "run by sync_setting_reaches_the_disk, under strace"]
    fn sync_probe_child() {
        super::super::sync_probe::child(super::open);
    }

    #[test]
    fn sync_setting_reaches_the_disk() {
        use super::super::sync_probe::{syncs, WRITES};
        let child = "kvstore::redb::tests::sync_probe_child";
        let (Some(on), Some(off)) = (syncs(child, "durability=immediate"), syncs(child, "durability=none")) else {
            eprintln!("skipped: strace cannot trace here");
            return;
        };
        // At least one sync per write more; and the lazy setting's syncs
        // are the open's and close's, not one per write.
        assert!(on >= off + WRITES, "durability=immediate: {on} fsync/fdatasync calls for {WRITES} inserts, durability=none: {off}");
        assert!(off < WRITES / 2, "durability=none: {off} fsync/fdatasync calls for {WRITES} inserts");
    }
}
