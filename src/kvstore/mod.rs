//! Key-value stores behind one small trait, one file per store, as
//! `ioengine` has one file per engine. The YCSB client (`runner::ycsb`)
//! opens a `Store`, gives each of its threads a `Session`, and calls the
//! five CoreWorkload operations on it. Stores get their properties as YCSB
//! bindings do (`-p rocksdb.dir=...`), already checked against their
//! description in `model::store`.
//!
//! The hot path allocates nothing in the client: a `Record` is reused
//! from one operation to the next, and keys and values are borrowed.

pub mod codec;
#[cfg(test)]
pub mod conformance;
pub mod fjall;
pub mod null;
pub mod redb;
#[cfg(feature = "rocksdb")]
pub mod rocksdb;
#[cfg(feature = "sqlite")]
pub mod sqlite;
#[cfg(test)]
mod sync_probe;

use crate::model::store::StoreDesc;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What an operation returned, as YCSB's `Status` names it on its
/// `Return=` lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Status {
    Ok,
    NotFound,
    Error,
    NotImplemented,
    BadRequest,
    /// A read's values are not what was written (a `dataintegrity` check).
    UnexpectedState,
}

impl Status {
    pub const ALL: [Status; 6] =
        [Status::Ok, Status::NotFound, Status::Error, Status::NotImplemented, Status::BadRequest, Status::UnexpectedState];

    /// YCSB's name (`Return=OK`, `Return=NOT_FOUND`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::NotFound => "NOT_FOUND",
            Status::Error => "ERROR",
            Status::NotImplemented => "NOT_IMPLEMENTED",
            Status::BadRequest => "BAD_REQUEST",
            Status::UnexpectedState => "UNEXPECTED_STATE",
        }
    }

    pub fn is_ok(self) -> bool {
        self == Status::Ok
    }
}

/// One record's fields: (field index, value) in one reusable buffer.
#[derive(Clone, Debug, Default)]
pub struct Record {
    data: Vec<u8>,
    /// (field index, start in `data`, length).
    fields: Vec<(u32, u32, u32)>,
}

impl Record {
    pub fn clear(&mut self) {
        self.data.clear();
        self.fields.clear();
    }

    pub fn push(&mut self, field: u32, value: &[u8]) {
        self.push_with(field, value.len()).copy_from_slice(value);
    }

    /// Append a field of `len` bytes and return it to be filled in place.
    pub fn push_with(&mut self, field: u32, len: usize) -> &mut [u8] {
        let start = self.data.len();
        self.data.resize(start + len, 0);
        self.fields.push((field, start as u32, len as u32));
        &mut self.data[start..]
    }

    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// The bytes of every field's value together.
    pub fn bytes(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The fields in the order they were pushed.
    pub fn iter(&self) -> impl Iterator<Item = (u32, &[u8])> + '_ {
        self.fields.iter().map(|&(f, s, l)| (f, &self.data[s as usize..(s + l) as usize]))
    }

    pub fn get(&self, field: u32) -> Option<&[u8]> {
        self.iter().find(|(f, _)| *f == field).map(|(_, v)| v)
    }

    /// Replace the fields `other` has and keep the rest (an update's merge).
    pub fn merge(&mut self, other: &Record) {
        let mut merged = Record::default();
        for (f, v) in self.iter() {
            merged.push(f, other.get(f).unwrap_or(v));
        }
        for (f, v) in other.iter() {
            if self.get(f).is_none() {
                merged.push(f, v);
            }
        }
        *self = merged;
    }
}

/// The rows a scan returned: records reused across scans.
#[derive(Debug, Default)]
pub struct Rows {
    pub keys: Vec<Vec<u8>>,
    recs: Vec<Record>,
    n: usize,
}

impl Rows {
    pub fn clear(&mut self) {
        self.n = 0;
    }

    /// A cleared record for the next row, whose key is `key`.
    pub fn next_row(&mut self, key: &[u8]) -> &mut Record {
        if self.n == self.recs.len() {
            self.recs.push(Record::default());
            self.keys.push(Vec::new());
        }
        self.keys[self.n].clear();
        self.keys[self.n].extend_from_slice(key);
        let r = &mut self.recs[self.n];
        r.clear();
        self.n += 1;
        r
    }

    pub fn len(&self) -> usize {
        self.n
    }

    /// The bytes of the rows' keys and values together.
    pub fn bytes(&self) -> usize {
        self.keys[..self.n].iter().map(Vec::len).sum::<usize>() + self.recs[..self.n].iter().map(Record::bytes).sum::<usize>()
    }

    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &Record)> + '_ {
        self.keys[..self.n].iter().map(|k| k.as_slice()).zip(&self.recs[..self.n])
    }
}

/// Which fields a read or scan returns.
#[derive(Clone, Copy, Debug)]
pub enum Fields<'a> {
    All,
    Some(&'a [u32]),
}

impl<'a> Fields<'a> {
    /// The fields asked for, or None for all of them.
    pub fn subset(&self) -> Option<&'a [u32]> {
        match *self {
            Fields::All => None,
            Fields::Some(f) => Some(f),
        }
    }

    pub fn wants(&self, field: u32) -> bool {
        match self {
            Fields::All => true,
            Fields::Some(f) => f.contains(&field),
        }
    }
}

/// What a store is opened with.
#[derive(Clone, Debug)]
pub struct StoreConfig {
    /// `<store>.dir`.
    pub dir: Option<PathBuf>,
    /// The store's own properties, prefix removed, checked against its
    /// description.
    pub props: BTreeMap<String, String>,
    /// YCSB's `table`.
    pub table: String,
    /// The field names, index i is `field_names[i]`.
    pub field_names: Vec<String>,
    /// Client threads that will hold a session at once.
    pub threads: u32,
}

impl StoreConfig {
    pub fn dir(&self, store: &str) -> Result<&PathBuf, String> {
        self.dir.as_ref().ok_or_else(|| format!("{store}: needs -p {store}.dir=DIRECTORY"))
    }

    /// A boolean property (as `units::parse_bool` reads one), or `default`.
    pub fn flag(&self, store: &str, name: &str, default: bool) -> Result<bool, String> {
        match self.props.get(name) {
            None => Ok(default),
            Some(v) => crate::units::parse_bool(v).map_err(|e| format!("{store}.{name}={v}: {e}")),
        }
    }

    /// A size property in bytes (k/m/g suffixes are 1024-based), if given.
    pub fn size(&self, store: &str, name: &str) -> Result<Option<u64>, String> {
        let Some(v) = self.props.get(name) else { return Ok(None) };
        crate::units::parse_size(v, 1024).map(Some).map_err(|e| format!("{store}.{name}={v}: {e}"))
    }
}

/// An open store.
pub trait Store: Send + Sync {
    /// A handle for one client thread.
    fn session(&self) -> Result<Box<dyn Session + '_>, String>;
    /// Whether the table holds no record (so `run` can say "load first").
    fn is_empty(&self) -> Result<bool, String>;
    /// The store's own counters after a phase (RocksDB's statistics, ...),
    /// with units in their names.
    fn counters(&self) -> Vec<(String, u64)> {
        Vec::new()
    }
    /// Flush what is buffered and close.
    fn close(self: Box<Self>) -> Result<(), String>;
}

/// One client thread's handle. An operation that fails returns
/// `Status::Error` and keeps the reason for `last_error`.
pub trait Session {
    fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Status;
    /// Up to `count` records from `start` on, in key order.
    fn scan(&mut self, start: &[u8], count: usize, fields: Fields, out: &mut Rows) -> Status;
    /// Change the fields `values` has; the others keep theirs.
    fn update(&mut self, key: &[u8], values: &Record) -> Status;
    fn insert(&mut self, key: &[u8], values: &Record) -> Status;
    fn delete(&mut self, key: &[u8]) -> Status;
    /// Why the last `Status::Error` happened.
    fn last_error(&self) -> Option<String>;
    /// The thread is done (YCSB's `DB.cleanup`, timed as CLEANUP).
    fn cleanup(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// An implementation: how to open the store `model::store::STORES` names,
/// and how to tell a directory that already holds one of its databases.
pub struct StoreImpl {
    pub name: &'static str,
    pub open: fn(&StoreConfig) -> Result<Box<dyn Store>, String>,
    /// Whether a directory holds a database of this store (its own files,
    /// checked by their contents, not only their names).
    pub holds: fn(&Path) -> bool,
    /// What `holds` looks for, for the refusal's message.
    pub marker: &'static str,
}

/// Every store built into this binary.
pub static IMPLS: &[StoreImpl] = &[
    StoreImpl { name: "null", open: null::open, holds: |_| false, marker: "" },
    StoreImpl { name: "fjall", open: fjall::open, holds: fjall::holds, marker: fjall::MARKER },
    StoreImpl { name: "redb", open: redb::open, holds: redb::holds, marker: redb::MARKER },
    #[cfg(feature = "sqlite")]
    StoreImpl { name: "sqlite", open: sqlite::open, holds: sqlite::holds, marker: sqlite::MARKER },
    #[cfg(feature = "rocksdb")]
    StoreImpl { name: "rocksdb", open: rocksdb::open, holds: rocksdb::holds, marker: rocksdb::MARKER },
];

/// Open the store `desc` describes. Its directory must be new, empty, or
/// already a database of this store: RocksDB deletes and renames files it
/// takes for its own (`*.sst`, `LOG`) and SQLite writes over a file named
/// like its database, so a directory holding anything else is refused
/// before the store sees it.
pub fn open(desc: &StoreDesc, cfg: &StoreConfig) -> Result<Box<dyn Store>, String> {
    match IMPLS.iter().find(|i| i.name == desc.name) {
        Some(i) => {
            if let Some(dir) = &cfg.dir {
                check_dir(i, dir)?;
            }
            (i.open)(cfg)
        }
        None => Err(match desc.feature {
            Some(f) => format!("{}: this fsbench was built without it (cargo feature \"{f}\")", desc.name),
            None => format!("{}: not built into this fsbench", desc.name),
        }),
    }
}

/// Refuse a directory that holds something and is not a database of `i`.
/// A file system's `lost+found` is not the user's data (a fresh mount point
/// has one).
fn check_dir(i: &StoreImpl, dir: &Path) -> Result<(), String> {
    let at = || format!("{}.dir={}", i.name, dir.display());
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotADirectory => return Err(format!("{}: not a directory", at())),
        Err(e) => return Err(format!("{}: cannot list it: {e}", at())),
    };
    let mut names: Vec<String> = Vec::new();
    for e in entries {
        let e = e.map_err(|e| format!("{}: cannot list it: {e}", at()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name == "lost+found" && e.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        names.push(name);
    }
    if names.is_empty() || (i.holds)(dir) {
        return Ok(());
    }
    names.sort();
    let more = if names.len() > 3 { format!(" and {} more", names.len() - 3) } else { String::new() };
    names.truncate(3);
    Err(format!(
        "{}: the directory holds files ({}{more}) and is not a {} database (no {}); a store is made only in a new or empty \
         directory, so that nothing in it is overwritten, renamed or deleted: name a new or empty directory, or one a previous {} load made",
        at(),
        names.join(", "),
        i.name,
        i.marker,
        i.name
    ))
}

/// Whether `path` is a regular file whose first bytes are `magic`.
pub(crate) fn starts_with(path: &Path, magic: &[u8]) -> bool {
    let mut head = vec![0u8; magic.len()];
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file())
        && std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok()
        && head == magic
}

#[cfg(test)]
mod tests {
    use crate::model::store::STORES;

    #[test]
    fn every_implementation_is_described() {
        for i in super::IMPLS {
            assert!(STORES.iter().any(|d| d.name == i.name), "{} has no description in model::store", i.name);
        }
    }

    /// Every store with a directory: a directory of someone else's files is
    /// refused untouched; a new one, an empty one and the store's own
    /// database (reopened after a load) are accepted.
    #[test]
    fn only_a_new_empty_or_own_directory_becomes_a_store() {
        for i in super::IMPLS.iter().filter(|i| i.name != "null") {
            let desc = crate::model::store::find(i.name).unwrap();
            let d = tempfile::tempdir().unwrap();
            let theirs = d.path().join("theirs");
            std::fs::create_dir(&theirs).unwrap();
            std::fs::write(theirs.join("000001.sst"), b"a user's table").unwrap();
            std::fs::write(theirs.join("LOG"), b"a user's log").unwrap();
            let e = super::open(desc, &super::conformance::config(&theirs, &[])).err().expect("refused");
            assert!(e.contains("000001.sst") && e.contains("not a") && e.contains(i.marker), "{}: {e}", i.name);
            let mut left: Vec<String> =
                std::fs::read_dir(&theirs).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
            left.sort();
            assert_eq!(left, ["000001.sst", "LOG"], "{}", i.name);
            assert_eq!(std::fs::read(theirs.join("LOG")).unwrap(), b"a user's log");

            let own = d.path().join("own");
            std::fs::create_dir_all(own.join("lost+found")).unwrap();
            let s = super::open(desc, &super::conformance::config(&own, &[])).expect("an empty directory");
            let mut r = super::Record::default();
            r.push(0, b"v");
            assert_eq!(s.session().unwrap().insert(b"user1", &r), super::Status::Ok);
            s.close().unwrap();
            assert!((i.holds)(&own), "{}: its own directory is recognised", i.name);
            let s = super::open(desc, &super::conformance::config(&own, &[])).expect("its own database again");
            assert!(!s.is_empty().unwrap());
            s.close().unwrap();
            assert!(super::open(desc, &super::conformance::config(&d.path().join("new"), &[])).is_ok());
        }
    }

    #[test]
    fn record_merge_keeps_other_fields() {
        let mut a = super::Record::default();
        a.push(0, b"zero");
        a.push(1, b"one");
        let mut b = super::Record::default();
        b.push(1, b"uno");
        b.push(2, b"dos");
        a.merge(&b);
        let got: Vec<(u32, &[u8])> = a.iter().collect();
        assert_eq!(got, vec![(0, &b"zero"[..]), (1, &b"uno"[..]), (2, &b"dos"[..])]);
    }
}
