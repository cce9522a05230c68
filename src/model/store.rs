//! The key-value stores YCSB workloads run against, as descriptions: names,
//! the property prefix each reads (as YCSB bindings read `rocksdb.dir`),
//! and the properties it knows. The implementations are in `kvstore`
//! (`kvstore::IMPLS`); a unit test there checks both tables name the same
//! stores. Kept here so the frontend can check properties without
//! depending on the implementations.

pub struct StoreDesc {
    pub name: &'static str,
    pub summary: &'static str,
    /// Properties of this store start with this (`rocksdb.`).
    pub prefix: &'static str,
    /// Its properties, without the prefix, with a line of help each.
    pub properties: &'static [(&'static str, &'static str)],
    /// It keeps files, in `<prefix>dir`.
    pub needs_dir: bool,
    /// The cargo feature it is built with, if it can be left out.
    pub feature: Option<&'static str>,
}

impl StoreDesc {
    pub fn knows(&self, prop: &str) -> bool {
        self.properties.iter().any(|(p, _)| *p == prop)
    }
}

pub static STORES: &[StoreDesc] = &[
    StoreDesc {
        name: "null",
        summary: "does nothing and answers OK: measures the client's own cost",
        prefix: "null.",
        properties: &[],
        needs_dir: false,
        feature: None,
    },
    StoreDesc {
        name: "rocksdb",
        summary: "RocksDB (the system's librocksdb), records laid out as YCSB's RocksDB binding lays them out",
        prefix: "rocksdb.",
        properties: &[
            ("dir", "the database directory (required)"),
            (
                "optionsfile",
                "a RocksDB OPTIONS file to open with (as YCSB's binding's rocksdb.optionsfile); it must name the table's column family",
            ),
            ("sync", "true: every write is synced (WriteOptions::sync); default false"),
            ("wal", "false: writes skip the write-ahead log; default true"),
            ("blockcache", "block cache size in bytes (k/m/g suffixes); default RocksDB's 8 MiB"),
            ("compression", "none, snappy, lz4, zstd, on every level; default the binding's: none on levels 0-1, lz4 below"),
            ("statistics", "false: do not collect RocksDB's statistics; default true"),
        ],
        needs_dir: true,
        feature: Some("rocksdb"),
    },
    StoreDesc {
        name: "sqlite",
        summary: "SQLite (the system's libsqlite3), one table as YCSB's JDBC binding defines it",
        prefix: "sqlite.",
        properties: &[
            ("dir", "the directory holding ycsb.db (required)"),
            ("journal_mode", "DELETE, TRUNCATE, PERSIST, MEMORY, WAL, OFF; default DELETE (SQLite's)"),
            ("synchronous", "OFF, NORMAL, FULL, EXTRA; default FULL (SQLite's)"),
            ("cache_size", "PRAGMA cache_size (pages, or negative KiB); default SQLite's"),
        ],
        needs_dir: true,
        feature: Some("sqlite"),
    },
    StoreDesc {
        name: "fjall",
        summary: "fjall, a pure-Rust LSM tree",
        prefix: "fjall.",
        properties: &[
            ("dir", "the database directory (required)"),
            ("sync", "true: every write is persisted with fsync; default false"),
            ("cache", "block cache size in bytes (k/m/g suffixes)"),
        ],
        needs_dir: true,
        feature: None,
    },
    StoreDesc {
        name: "redb",
        summary: "redb, a pure-Rust copy-on-write B-tree",
        prefix: "redb.",
        properties: &[
            ("dir", "the directory holding ycsb.redb (required)"),
            ("durability", "immediate (fsync per commit, redb's default) or none"),
            ("cache", "cache size in bytes (k/m/g suffixes)"),
        ],
        needs_dir: true,
        feature: None,
    },
];

pub fn find(name: &str) -> Option<&'static StoreDesc> {
    STORES.iter().find(|s| s.name == name)
}
