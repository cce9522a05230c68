//! RocksDB (the system's librocksdb through the `rocksdb` crate), laid out
//! as YCSB's RocksDB binding lays it out, so either can open a database the
//! other wrote: one column family per YCSB table, the key alone as stored
//! key, and one value per record holding every field (`codec`, shared
//! with fjall and redb). The binding finds its column families in `<dir>/CF_NAMES` rather than asking
//! RocksDB, so that file is kept up to date here too.
//!
//! One `DB` is shared by every session (it is `Sync`); a session keeps its
//! own buffers so that an operation allocates nothing on the Rust side.

use super::{codec, Fields, Record, Rows, Session, Status, Store, StoreConfig};
use ::rocksdb::{ColumnFamily, Options, ReadOptions, WriteOptions, DB};
use std::path::PathBuf;

mod options;

const NAME: &str = "rocksdb";
/// The binding's file of column family names, one a line, "default" first.
const CF_NAMES: &str = "CF_NAMES";
/// What marks a RocksDB database (fsbench's or Java YCSB's binding's).
pub const MARKER: &str = "CURRENT file naming an existing MANIFEST";

/// Whether `dir` holds a RocksDB database: `CURRENT` names the live
/// `MANIFEST-<number>`, and that file is there.
pub fn holds(dir: &std::path::Path) -> bool {
    let mut head = [0u8; 64];
    let Ok(n) = std::fs::File::open(dir.join("CURRENT")).and_then(|mut f| std::io::Read::read(&mut f, &mut head)) else {
        return false;
    };
    let Ok(text) = std::str::from_utf8(&head[..n]) else { return false };
    let name = text.trim_end_matches('\n');
    name.strip_prefix("MANIFEST-").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        && std::fs::symlink_metadata(dir.join(name)).is_ok_and(|m| m.is_file())
}

pub struct Rocks {
    db: DB,
    /// Kept for `get_statistics`: the statistics object lives in the options.
    opts: Options,
    write: WriteOptions,
    wal: bool,
    statistics: bool,
    dir: PathBuf,
    table: String,
    field_names: Vec<String>,
}

pub fn open(cfg: &StoreConfig) -> Result<Box<dyn Store>, String> {
    let p = options::props(cfg)?;
    let dir = cfg.dir(NAME)?.clone();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{NAME}.dir={}: {e}", dir.display()))?;
    // RocksDB refuses to open a database without naming all its column
    // families; ask it which there are rather than trusting CF_NAMES.
    let mut names = if dir.join("CURRENT").exists() {
        DB::list_cf(&Options::default(), &dir).map_err(|e| format!("{NAME}.dir={}: listing column families: {e}", dir.display()))?
    } else {
        vec!["default".to_string()]
    };
    names.sort_by_key(|n| n != "default");
    if !names.contains(&cfg.table) {
        names.push(cfg.table.clone());
    }
    let (opts, cfs) = options::options(&p, &names, &cfg.table)?;
    let db = DB::open_cf_descriptors(&opts, &dir, cfs).map_err(|e| format!("{NAME}.dir={}: {e}", dir.display()))?;
    let mut write = WriteOptions::default();
    write.set_sync(p.sync);
    write.disable_wal(!p.wal);
    let store = Rocks {
        db,
        opts,
        write,
        wal: p.wal,
        statistics: p.statistics,
        dir,
        table: cfg.table.clone(),
        field_names: cfg.field_names.clone(),
    };
    // Written now as well as at close, so that the binding can open what a
    // killed run left.
    store.save_cf_names()?;
    Ok(Box::new(store))
}

impl Rocks {
    fn cf(&self) -> &ColumnFamily {
        self.db.cf_handle(&self.table).expect("the table's column family was opened with the database")
    }

    fn save_cf_names(&self) -> Result<(), String> {
        let path = self.dir.join(CF_NAMES);
        let mut names = DB::list_cf(&self.opts, &self.dir).map_err(|e| format!("{}: {e}", path.display()))?;
        names.retain(|n| n != "default");
        let mut text = String::from("default\n");
        for n in names {
            text.push_str(&n);
            text.push('\n');
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

impl Store for Rocks {
    fn session(&self) -> Result<Box<dyn Session + '_>, String> {
        Ok(Box::new(RocksSession {
            store: self,
            cf: self.cf(),
            read: ReadOptions::default(),
            buf: Vec::new(),
            stored: Record::default(),
            err: None,
        }))
    }

    fn is_empty(&self) -> Result<bool, String> {
        let mut it = self.db.raw_iterator_cf(self.cf());
        it.seek_to_first();
        it.status().map_err(|e| format!("{NAME}: {e}"))?;
        Ok(!it.valid())
    }

    /// RocksDB's tickers count from the open: a phase that reopens the
    /// store (as YCSB's load and run do) gets its own.
    fn counters(&self) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        if self.statistics {
            if let Some(s) = self.opts.get_statistics() {
                out = stats::parse(&s);
            }
        }
        for (prop, name) in stats::PROPERTIES {
            if let Ok(Some(v)) = self.db.property_int_value_cf(self.cf(), *prop) {
                out.push((name.to_string(), v));
            }
        }
        out
    }

    fn close(self: Box<Self>) -> Result<(), String> {
        if !self.wal {
            // Without a log, what is in the memtables exists nowhere else.
            for n in DB::list_cf(&self.opts, &self.dir).map_err(|e| format!("{NAME}: {e}"))? {
                if let Some(cf) = self.db.cf_handle(&n) {
                    self.db.flush_cf(cf).map_err(|e| format!("{NAME}: flushing {n}: {e}"))?;
                }
            }
        }
        self.save_cf_names()?;
        drop(self);
        Ok(())
    }
}

struct RocksSession<'a> {
    store: &'a Rocks,
    cf: &'a ColumnFamily,
    read: ReadOptions,
    /// The value being written.
    buf: Vec<u8>,
    /// The record an update found, before the merge.
    stored: Record,
    err: Option<String>,
}

impl RocksSession<'_> {
    fn fail(&mut self, what: &str, key: &[u8], e: impl std::fmt::Display) -> Status {
        self.err = Some(format!("{NAME}: {what} {}: {e}", String::from_utf8_lossy(key)));
        Status::Error
    }

    fn put(&mut self, key: &[u8]) -> Status {
        match self.store.db.put_cf_opt(self.cf, key, &self.buf, &self.store.write) {
            Ok(()) => Status::Ok,
            Err(e) => self.fail("put", key, e),
        }
    }
}

impl Session for RocksSession<'_> {
    fn read(&mut self, key: &[u8], fields: Fields, out: &mut Record) -> Status {
        out.clear();
        let got = self.store.db.get_pinned_cf_opt(self.cf, key, &self.read);
        match got {
            Ok(Some(v)) => match codec::decode(&v, &self.store.field_names, fields, out) {
                Ok(()) => Status::Ok,
                Err(e) => self.fail("read", key, e),
            },
            Ok(None) => Status::NotFound,
            Err(e) => self.fail("read", key, e),
        }
    }

    fn scan(&mut self, start: &[u8], count: usize, fields: Fields, out: &mut Rows) -> Status {
        out.clear();
        let mut it = self.store.db.raw_iterator_cf_opt(self.cf, ReadOptions::default());
        it.seek(start);
        while out.len() < count && it.valid() {
            let (Some(k), Some(v)) = (it.key(), it.value()) else { break };
            if let Err(e) = codec::decode(v, &self.store.field_names, fields, out.next_row(k)) {
                let k = k.to_vec();
                return self.fail("scan", &k, e);
            }
            it.next();
        }
        match it.status() {
            Ok(()) => Status::Ok,
            Err(e) => self.fail("scan from", start, e),
        }
    }

    fn update(&mut self, key: &[u8], values: &Record) -> Status {
        let got = match self.store.db.get_pinned_cf_opt(self.cf, key, &self.read) {
            Ok(Some(v)) => v,
            Ok(None) => return Status::NotFound,
            Err(e) => return self.fail("update (get)", key, e),
        };
        let decoded = codec::decode(&got, &self.store.field_names, Fields::All, &mut self.stored);
        drop(got);
        if let Err(e) = decoded {
            return self.fail("update", key, e);
        }
        codec::encode_update(&self.stored, values, &self.store.field_names, &mut self.buf);
        self.put(key)
    }

    fn insert(&mut self, key: &[u8], values: &Record) -> Status {
        codec::encode(values, &self.store.field_names, &mut self.buf);
        self.put(key)
    }

    fn delete(&mut self, key: &[u8]) -> Status {
        match self.store.db.delete_cf_opt(self.cf, key, &self.store.write) {
            Ok(()) => Status::Ok,
            Err(e) => self.fail("delete", key, e),
        }
    }

    fn last_error(&self) -> Option<String> {
        self.err.clone()
    }
}

/// RocksDB's own counters, from its statistics text and a few properties.
mod stats {
    /// Tickers ("name COUNT : n") and what they are called here.
    const TICKERS: &[(&str, &str)] = &[
        ("rocksdb.bytes.written", "bytes_written"),
        ("rocksdb.bytes.read", "bytes_read"),
        ("rocksdb.number.keys.written", "keys_written"),
        ("rocksdb.number.keys.read", "keys_read"),
        ("rocksdb.compact.read.bytes", "compaction_read_bytes"),
        ("rocksdb.compact.write.bytes", "compaction_write_bytes"),
        ("rocksdb.flush.write.bytes", "flush_write_bytes"),
        ("rocksdb.stall.micros", "stall_us"),
        ("rocksdb.wal.bytes", "wal_bytes"),
        ("rocksdb.wal.synced", "wal_syncs"),
        ("rocksdb.block.cache.hit", "block_cache_hits"),
        ("rocksdb.block.cache.miss", "block_cache_misses"),
    ];
    /// Histograms ("name P50 : .. COUNT : n SUM : s"): their count and sum.
    const HISTOGRAMS: &[(&str, &str, &str)] =
        &[("rocksdb.db.flush.micros", "flushes", "flush_us"), ("rocksdb.compaction.times.micros", "compactions", "compaction_us")];
    /// Integer properties of the table's column family.
    pub const PROPERTIES: &[(&str, &str)] = &[
        ("rocksdb.total-sst-files-size", "sst_files_bytes"),
        ("rocksdb.cur-size-all-mem-tables", "memtable_bytes"),
        ("rocksdb.estimate-num-keys", "estimated_keys"),
        ("rocksdb.block-cache-capacity", "block_cache_capacity_bytes"),
    ];

    fn field(rest: &str, label: &str) -> Option<u64> {
        let mut words = rest.split_whitespace();
        while let Some(w) = words.next() {
            if w == label && words.next() == Some(":") {
                // Histogram sums may print as floats.
                return words.next()?.parse::<f64>().ok().map(|v| v as u64);
            }
        }
        None
    }

    pub fn parse(text: &str) -> Vec<(String, u64)> {
        let mut out = Vec::new();
        for line in text.lines() {
            let Some((name, rest)) = line.split_once(' ') else { continue };
            if let Some((_, ours)) = TICKERS.iter().find(|(t, _)| *t == name) {
                if let Some(v) = field(rest, "COUNT") {
                    out.push((ours.to_string(), v));
                }
            } else if let Some((_, count, sum)) = HISTOGRAMS.iter().find(|(h, _, _)| *h == name) {
                if let (Some(c), Some(s)) = (field(rest, "COUNT"), field(rest, "SUM")) {
                    out.push((count.to_string(), c));
                    out.push((sum.to_string(), s));
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
