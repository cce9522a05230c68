//! SQLite through the system's libsqlite3, in `<dir>/ycsb.db`, with one
//! table as YCSB's JDBC binding defines it: `YCSB_KEY VARCHAR(255) PRIMARY
//! KEY` and one TEXT column per field, named after the field. A field is a
//! column, so a read of one field reads one column and an update writes
//! only the fields it changes, as the JDBC binding's statements do.
//!
//! Each session has its own connection (an SQLite connection belongs to one
//! thread) and prepares its statements once: the fixed ones when it opens,
//! one per field set (read some fields, update some fields) the first time
//! that set comes. The PRAGMAs `sqlite.journal_mode`, `sqlite.synchronous`
//! and `sqlite.cache_size` are set on every connection, since most of them
//! are per connection. Writers from several sessions take turns on
//! SQLite's database lock; a busy timeout makes them wait rather than fail.

use super::{Fields, Record, Rows, Session, Status, Store, StoreConfig};
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, Statement};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

const NAME: &str = "sqlite";
/// The database file in the store's directory.
const FILE: &str = "ycsb.db";
/// What marks an SQLite database of this store.
pub const MARKER: &str = "ycsb.db starting with SQLite's header";

/// Whether `dir` holds this store's SQLite database ("SQLite format 3").
pub fn holds(dir: &std::path::Path) -> bool {
    super::starts_with(&dir.join(FILE), b"SQLite format 3\0")
}
/// Long enough that a writer waits out any other's commit, even an fsync
/// on a slow disk under many threads; short enough that a stuck run ends.
const BUSY_TIMEOUT: Duration = Duration::from_secs(60);

const JOURNAL_MODES: &[&str] = &["DELETE", "TRUNCATE", "PERSIST", "MEMORY", "WAL", "OFF"];
const SYNCHRONOUS: &[&str] = &["OFF", "NORMAL", "FULL", "EXTRA"];

pub struct SqliteStore {
    conf: Conf,
    sql: Sql,
    /// For `is_empty`, `counters` and `close`, outside the sessions.
    admin: Mutex<Connection>,
}

/// How to open a connection.
struct Conf {
    path: PathBuf,
    journal_mode: Option<&'static str>,
    /// The other PRAGMA statements every connection runs first.
    pragmas: String,
}

/// The fixed statements' text, and what per-field-set ones are built from.
struct Sql {
    table: String,
    /// Quoted column name of field i.
    columns: Vec<String>,
    read_all: String,
    scan_all: String,
    insert_all: String,
    delete: String,
}

/// `name` as an SQL identifier, whatever it holds.
fn quote(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// An upper-case value from `accepted`, or an error naming the property.
fn choice(cfg: &StoreConfig, prop: &str, accepted: &[&'static str]) -> Result<Option<&'static str>, String> {
    let Some(v) = cfg.props.get(prop) else { return Ok(None) };
    match accepted.iter().find(|a| a.eq_ignore_ascii_case(v)) {
        Some(a) => Ok(Some(a)),
        None => Err(format!("{NAME}.{prop}={v}: expected one of {}", accepted.join(", "))),
    }
}

pub fn open(cfg: &StoreConfig) -> Result<Box<dyn Store>, String> {
    let dir = cfg.dir(NAME)?;
    let journal_mode = choice(cfg, "journal_mode", JOURNAL_MODES)?;
    let synchronous = choice(cfg, "synchronous", SYNCHRONOUS)?;
    let cache_size = match cfg.props.get("cache_size") {
        None => None,
        Some(v) => Some(
            v.parse::<i64>()
                .map_err(|_| format!("{NAME}.cache_size={v}: expected an integer (pages, or negative for KiB, as PRAGMA cache_size)"))?,
        ),
    };
    let mut pragmas = String::new();
    if let Some(s) = synchronous {
        pragmas += &format!("PRAGMA synchronous = {s};");
    }
    if let Some(c) = cache_size {
        pragmas += &format!("PRAGMA cache_size = {c};");
    }
    if let Some(f) = cfg.field_names.iter().find(|f| f.eq_ignore_ascii_case("YCSB_KEY")) {
        return Err(format!("{NAME}: a field named {f:?} would clash with the key column YCSB_KEY"));
    }

    let table = quote(&cfg.table);
    let columns: Vec<String> = cfg.field_names.iter().map(|f| quote(f)).collect();
    let all = columns.join(", ");
    let marks = vec!["?"; columns.len()].join(", ");
    let sql = Sql {
        read_all: format!("SELECT {all} FROM {table} WHERE YCSB_KEY = ?"),
        scan_all: format!("SELECT YCSB_KEY, {all} FROM {table} WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?"),
        insert_all: format!("INSERT INTO {table} (YCSB_KEY, {all}) VALUES (?, {marks})"),
        delete: format!("DELETE FROM {table} WHERE YCSB_KEY = ?"),
        table,
        columns,
    };
    let create = format!(
        "CREATE TABLE IF NOT EXISTS {} (YCSB_KEY VARCHAR(255) PRIMARY KEY{})",
        sql.table,
        sql.columns.iter().map(|c| format!(", {c} TEXT")).collect::<String>()
    );

    std::fs::create_dir_all(dir).map_err(|e| format!("{NAME}: cannot create {}: {e}", dir.display()))?;
    let conf = Conf { path: dir.join(FILE), journal_mode, pragmas };
    let admin = conf.connect()?;
    admin.execute_batch(&create).map_err(|e| format!("{NAME}: creating the table in {}: {e}", conf.path.display()))?;
    Ok(Box::new(SqliteStore { conf, sql, admin: Mutex::new(admin) }))
}

fn s(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Conf {
    fn connect(&self) -> Result<Connection, String> {
        let at = |e: rusqlite::Error| format!("{NAME}: {}: {e}", self.path.display());
        let c = Connection::open(&self.path).map_err(at)?;
        c.busy_timeout(BUSY_TIMEOUT).map_err(at)?;
        if let Some(want) = self.journal_mode {
            // SQLite answers with the mode it is in, which is not the one
            // asked for when it cannot switch (an in-memory journal, ...).
            let got: String = c.query_row(&format!("PRAGMA journal_mode = {want}"), [], |r| r.get(0)).map_err(at)?;
            if !got.eq_ignore_ascii_case(want) {
                return Err(format!("{NAME}.journal_mode={want}: SQLite stayed in {got} on {}", self.path.display()));
            }
        }
        c.execute_batch(&self.pragmas).map_err(at)?;
        Ok(c)
    }
}

impl SqliteStore {
    fn admin_value(&self, sql: &str) -> Result<i64, String> {
        let c = self.admin.lock().map_err(|e| format!("{NAME}: {e}"))?;
        c.query_row(sql, [], |r| r.get(0)).map_err(|e| format!("{NAME}: {e}"))
    }
}

impl Store for SqliteStore {
    fn session(&self) -> Result<Box<dyn Session + '_>, String> {
        SqliteSession::new(self).map(|s| Box::new(s) as Box<dyn Session + '_>)
    }

    fn is_empty(&self) -> Result<bool, String> {
        let n = self.admin_value(&format!("SELECT count(*) FROM (SELECT 1 FROM {} LIMIT 1)", self.sql.table))?;
        Ok(n == 0)
    }

    fn counters(&self) -> Vec<(String, u64)> {
        let mut c = Vec::new();
        for (name, pragma) in [
            ("sqlite.pages", "PRAGMA page_count"),
            ("sqlite.page_size_bytes", "PRAGMA page_size"),
            ("sqlite.freelist_pages", "PRAGMA freelist_count"),
        ] {
            if let Ok(v) = self.admin_value(pragma) {
                c.push((name.to_string(), v as u64));
            }
        }
        c
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        let at = |e: String| format!("{NAME}: closing {}: {e}", self.conf.path.display());
        let admin = self.admin.into_inner().map_err(|e| at(e.to_string()))?;
        if self.conf.journal_mode == Some("WAL") {
            // Leave one file behind, as the other journal modes do.
            admin.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)").map_err(|e| at(e.to_string()))?;
        }
        admin.close().map_err(|(_, e)| at(e.to_string()))
    }
}

/// Which per-field-set statement.
#[derive(Clone, Copy)]
enum Kind {
    Read,
    Scan,
    Update,
    Insert,
}

struct SqliteSession<'a> {
    // The statements borrow `conn`: they are declared, and so dropped,
    // before it.
    read_all: Statement<'static>,
    scan_all: Statement<'static>,
    insert_all: Statement<'static>,
    delete: Statement<'static>,
    /// Per field set, prepared the first time that set comes.
    by_fields: [HashMap<Vec<u32>, Statement<'static>>; 4],
    /// Boxed so that its address stays put while the session moves.
    conn: Box<Connection>,
    store: &'a SqliteStore,
    /// The field set of the operation at hand, reused.
    set: Vec<u32>,
    error: Option<String>,
}

fn text(bytes: &[u8]) -> ToSqlOutput<'_> {
    // SQLite keeps TEXT as the bytes given, so values round-trip unchanged
    // without a UTF-8 check per operation.
    ToSqlOutput::Borrowed(ValueRef::Text(bytes))
}

impl<'a> SqliteSession<'a> {
    fn new(store: &'a SqliteStore) -> Result<Self, String> {
        let conn = Box::new(store.conf.connect()?);
        // SAFETY: the statements made from this reference live in the
        // session's fields declared before `conn`, so they are dropped
        // before the connection is, and the Box keeps its address while
        // the session moves. `conn` is never handed out mutably.
        let c: &'static Connection = unsafe { &*(conn.as_ref() as *const Connection) };
        let prep = |sql: &str| c.prepare(sql).map_err(|e| format!("{NAME}: preparing {sql}: {e}"));
        Ok(SqliteSession {
            read_all: prep(&store.sql.read_all)?,
            scan_all: prep(&store.sql.scan_all)?,
            insert_all: prep(&store.sql.insert_all)?,
            delete: prep(&store.sql.delete)?,
            by_fields: Default::default(),
            conn,
            store,
            set: Vec::new(),
            error: None,
        })
    }

    fn fail(&mut self, what: &str, e: impl std::fmt::Display) -> Status {
        self.error = Some(format!("{NAME}: {what}: {e}"));
        Status::Error
    }

    /// The statement for `kind` over the fields `set`, in that order.
    fn stmt_for_set(&mut self, kind: Kind, set: &[u32]) -> Result<&mut Statement<'static>, String> {
        let map = &mut self.by_fields[kind as usize];
        if !map.contains_key(set) {
            let sql = &self.store.sql;
            let cols: Vec<&str> = set.iter().map(|&f| sql.columns[f as usize].as_str()).collect();
            let (t, list) = (&sql.table, cols.join(", "));
            let text = match kind {
                Kind::Read => format!("SELECT {list} FROM {t} WHERE YCSB_KEY = ?"),
                Kind::Scan => format!("SELECT YCSB_KEY, {list} FROM {t} WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?"),
                Kind::Update => {
                    let sets: Vec<String> = cols.iter().map(|c| format!("{c} = ?")).collect();
                    format!("UPDATE {t} SET {} WHERE YCSB_KEY = ?", sets.join(", "))
                }
                Kind::Insert => {
                    let named: String = cols.iter().map(|c| format!(", {c}")).collect();
                    format!("INSERT INTO {t} (YCSB_KEY{named}) VALUES (?{})", ", ?".repeat(cols.len()))
                }
            };
            // SAFETY: as in `new`.
            let c: &'static Connection = unsafe { &*(self.conn.as_ref() as *const Connection) };
            let st = c.prepare(&text).map_err(|e| format!("preparing {text}: {e}"))?;
            map.insert(set.to_vec(), st);
        }
        Ok(map.get_mut(set).expect("prepared above"))
    }
}

/// Push the non-NULL columns `first..` of `row` as fields `set` (or
/// 0, 1, ... when `set` is None).
fn row_into(row: &rusqlite::Row, first: usize, set: Option<&[u32]>, out: &mut Record) -> rusqlite::Result<()> {
    let n = row.as_ref().column_count() - first;
    for j in 0..n {
        if let Some(v) = row.get_ref(first + j)?.as_bytes_or_null()? {
            out.push(set.map_or(j as u32, |s| s[j]), v);
        }
    }
    Ok(())
}

impl Session for SqliteSession<'_> {
    fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Status {
        out.clear();
        let set = fields.subset();
        let r = (|| -> Result<Status, String> {
            let st = match set {
                Some(f) => self.stmt_for_set(Kind::Read, f)?,
                None => &mut self.read_all,
            };
            st.raw_bind_parameter(1, text(key)).map_err(s)?;
            let mut rows = st.raw_query();
            match rows.next().map_err(s)? {
                Some(row) => row_into(row, 0, set, out).map_err(s).map(|()| Status::Ok),
                None => Ok(Status::NotFound),
            }
        })();
        r.unwrap_or_else(|e| self.fail("read", e))
    }

    fn scan(&mut self, start: &[u8], count: usize, fields: Fields, out: &mut Rows) -> Status {
        out.clear();
        let set = fields.subset();
        let r = (|| -> Result<Status, String> {
            let st = match set {
                Some(f) => self.stmt_for_set(Kind::Scan, f)?,
                None => &mut self.scan_all,
            };
            st.raw_bind_parameter(1, text(start)).map_err(s)?;
            st.raw_bind_parameter(2, i64::try_from(count).unwrap_or(i64::MAX)).map_err(s)?;
            let mut rows = st.raw_query();
            while let Some(row) = rows.next().map_err(s)? {
                let key = row.get_ref(0).map_err(s)?.as_bytes().map_err(s)?;
                row_into(row, 1, set, out.next_row(key)).map_err(s)?;
            }
            Ok(Status::Ok)
        })();
        r.unwrap_or_else(|e| self.fail("scan", e))
    }

    fn update(&mut self, key: &[u8], values: &Record) -> Status {
        let mut set = std::mem::take(&mut self.set);
        set.clear();
        set.extend(values.iter().map(|(f, _)| f));
        let r = (|| -> Result<Status, String> {
            let st = self.stmt_for_set(Kind::Update, &set)?;
            for (i, (_, v)) in values.iter().enumerate() {
                st.raw_bind_parameter(i + 1, text(v)).map_err(s)?;
            }
            st.raw_bind_parameter(values.len() + 1, text(key)).map_err(s)?;
            Ok(if st.raw_execute().map_err(s)? == 0 { Status::NotFound } else { Status::Ok })
        })();
        self.set = set;
        r.unwrap_or_else(|e| self.fail("update", e))
    }

    fn insert(&mut self, key: &[u8], values: &Record) -> Status {
        let mut set = std::mem::take(&mut self.set);
        set.clear();
        set.extend(values.iter().map(|(f, _)| f));
        let all = set.len() == self.store.sql.columns.len() && set.iter().enumerate().all(|(i, &f)| f == i as u32);
        let r = (|| -> Result<Status, String> {
            let st = if all { &mut self.insert_all } else { self.stmt_for_set(Kind::Insert, &set)? };
            st.raw_bind_parameter(1, text(key)).map_err(s)?;
            for (i, (_, v)) in values.iter().enumerate() {
                st.raw_bind_parameter(i + 2, text(v)).map_err(s)?;
            }
            st.raw_execute().map_err(s)?;
            Ok(Status::Ok)
        })();
        self.set = set;
        r.unwrap_or_else(|e| self.fail("insert", e))
    }

    /// NOT_FOUND when no row had the key.
    fn delete(&mut self, key: &[u8]) -> Status {
        let r = (|| -> Result<usize, rusqlite::Error> {
            self.delete.raw_bind_parameter(1, text(key))?;
            self.delete.raw_execute()
        })();
        match r {
            Ok(0) => Status::NotFound,
            Ok(_) => Status::Ok,
            Err(e) => self.fail("delete", e),
        }
    }

    fn last_error(&self) -> Option<String> {
        self.error.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::super::conformance;
    use super::Status;

    #[test]
    fn conformance() {
        let dir = tempfile::tempdir().unwrap();
        conformance::check(super::open, &conformance::config(dir.path(), &[]));
    }

    #[test]
    fn conformance_in_wal_mode() {
        let dir = tempfile::tempdir().unwrap();
        let props = [("journal_mode", "wal"), ("synchronous", "normal"), ("cache_size", "-4096")];
        conformance::check(super::open, &conformance::config(dir.path(), &props));
        let files: Vec<String> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        assert!(files.iter().any(|f| f == "ycsb.db"), "{files:?}");
    }

    #[test]
    fn the_table_is_the_jdbc_bindings() {
        let dir = tempfile::tempdir().unwrap();
        let store = super::open(&conformance::config(dir.path(), &[])).unwrap();
        store.close().unwrap();
        let c = rusqlite::Connection::open(dir.path().join("ycsb.db")).unwrap();
        let sql: String = c.query_row("SELECT sql FROM sqlite_master WHERE name = 'usertable'", [], |r| r.get(0)).unwrap();
        assert_eq!(
            sql,
            "CREATE TABLE \"usertable\" (YCSB_KEY VARCHAR(255) PRIMARY KEY, \"field0\" TEXT, \"field1\" TEXT, \
             \"field2\" TEXT, \"field3\" TEXT)"
        );
    }

    #[test]
    fn field_sets_get_their_own_statements() {
        let dir = tempfile::tempdir().unwrap();
        let store = super::open(&conformance::config(dir.path(), &[])).unwrap();
        let mut s = store.session().unwrap();
        let mut r = super::Record::default();
        r.push(3, b"three");
        r.push(1, b"one");
        assert_eq!(s.insert(b"k", &r), Status::Ok, "{:?}", s.last_error());
        let mut out = super::Record::default();
        assert_eq!(s.read(b"k", super::Fields::All, &mut out), Status::Ok);
        let got: Vec<(u32, &[u8])> = out.iter().collect();
        assert_eq!(got, vec![(1, &b"one"[..]), (3, &b"three"[..])], "unset fields are NULL and left out");
        assert_eq!(s.read(b"k", super::Fields::Some(&[3, 1]), &mut out), Status::Ok);
        let got: Vec<(u32, &[u8])> = out.iter().collect();
        assert_eq!(got, vec![(3, &b"three"[..]), (1, &b"one"[..])]);
        assert_eq!(s.update(b"missing", &r), Status::NotFound);
        assert_eq!(s.delete(b"missing"), Status::NotFound);
        assert_eq!(s.insert(b"k", &r), Status::Error, "a second insert of a key breaks the primary key");
        assert!(s.last_error().unwrap().contains("UNIQUE"), "{:?}", s.last_error());
        drop(s);
        let c = store.counters();
        assert!(c.iter().any(|(n, v)| n == "sqlite.pages" && *v > 0), "{c:?}");
        store.close().unwrap();
    }

    #[test]
    fn bad_values_and_directories_are_named() {
        let dir = tempfile::tempdir().unwrap();
        for (prop, v, want) in [
            ("journal_mode", "fast", "DELETE, TRUNCATE, PERSIST, MEMORY, WAL, OFF"),
            ("synchronous", "2", "OFF, NORMAL, FULL, EXTRA"),
            ("cache_size", "big", "integer"),
        ] {
            let e = super::open(&conformance::config(dir.path(), &[(prop, v)])).err().unwrap();
            assert!(e.contains(&format!("sqlite.{prop}={v}")) && e.contains(want), "{e}");
        }
        let file = dir.path().join("a-file");
        std::fs::write(&file, b"x").unwrap();
        let e = super::open(&conformance::config(&file, &[])).err().unwrap();
        assert!(e.contains(&file.display().to_string()), "{e}");
    }

    #[test]
    #[ignore = "run by sync_setting_reaches_the_disk, under strace"]
    fn sync_probe_child() {
        super::super::sync_probe::child(super::open);
    }

    #[test]
    fn sync_setting_reaches_the_disk() {
        use super::super::sync_probe::{syncs, WRITES};
        let child = "kvstore::sqlite::tests::sync_probe_child";
        let (Some(on), Some(off)) = (syncs(child, "synchronous=full"), syncs(child, "synchronous=off")) else {
            eprintln!("skipped: strace cannot trace here");
            return;
        };
        // At least one sync per write more; and the lazy setting's syncs
        // are the open's and close's, not one per write.
        assert!(on >= off + WRITES, "synchronous=full: {on} fsync/fdatasync calls for {WRITES} inserts, synchronous=off: {off}");
        assert!(off < WRITES / 2, "synchronous=off: {off} fsync/fdatasync calls for {WRITES} inserts");
    }
}
