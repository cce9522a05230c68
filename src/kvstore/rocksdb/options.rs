//! The store's properties and the RocksDB options they make.
//!
//! Every database is opened from an OPTIONS text, loaded with RocksDB's own
//! parser: the user's `rocksdb.optionsfile`, or one written here with the
//! binding's defaults. The `rocksdb` crate (0.20.1, the newest that links
//! against Debian's RocksDB 7.8) has no setter for the block checksum, and
//! the binding's RocksJava (6.2.2) cannot read 7.8's defaults (XXH3
//! checksums, table format 5): only options given as text reach those.

use super::NAME;
use crate::kvstore::StoreConfig;
use ::rocksdb::{Cache, ColumnFamilyDescriptor, DBCompressionType, Env, Options};
use std::path::PathBuf;

/// What the binding's `optimizeLevelStyleCompaction()` gets from RocksJava
/// when called without a budget.
pub const MEMTABLE_BUDGET: usize = 512 << 20;
/// RocksDB's default block cache when none is given (7.8).
const BLOCK_CACHE: u64 = 8 << 20;
/// Levels RocksDB keeps by default, each with its compression.
const LEVELS: usize = 7;

/// The properties, checked, before anything is opened.
pub struct Props {
    pub optionsfile: Option<PathBuf>,
    pub sync: bool,
    pub wal: bool,
    pub blockcache: Option<u64>,
    pub compression: Option<DBCompressionType>,
    pub statistics: bool,
}

/// RocksDB's name for a compression in OPTIONS files.
fn compression_name(c: DBCompressionType) -> &'static str {
    match c {
        DBCompressionType::None => "kNoCompression",
        DBCompressionType::Snappy => "kSnappyCompression",
        DBCompressionType::Lz4 => "kLZ4Compression",
        DBCompressionType::Zstd => "kZSTD",
        DBCompressionType::Zlib => "kZlibCompression",
        DBCompressionType::Bz2 => "kBZip2Compression",
        DBCompressionType::Lz4hc => "kLZ4HCCompression",
    }
}

pub fn props(cfg: &StoreConfig) -> Result<Props, String> {
    let compression = match cfg.props.get("compression").map(String::as_str) {
        None => None,
        Some("none") => Some(DBCompressionType::None),
        Some("snappy") => Some(DBCompressionType::Snappy),
        Some("lz4") => Some(DBCompressionType::Lz4),
        Some("zstd") => Some(DBCompressionType::Zstd),
        Some(v) => return Err(format!("{NAME}.compression={v}: expected none, snappy, lz4 or zstd")),
    };
    let blockcache = cfg.size(NAME, "blockcache")?;
    if blockcache == Some(0) {
        return Err(format!("{NAME}.blockcache=0: expected a size of at least 1 byte"));
    }
    let optionsfile = cfg.props.get("optionsfile").map(PathBuf::from);
    if optionsfile.is_some() && compression.is_some() {
        // The file's column family options come back opaque from the C API,
        // so a compression cannot be laid over them.
        return Err(format!("{NAME}.compression cannot be combined with {NAME}.optionsfile: set compression in the OPTIONS file"));
    }
    Ok(Props {
        optionsfile,
        sync: cfg.flag(NAME, "sync", false)?,
        wal: cfg.flag(NAME, "wal", true)?,
        blockcache,
        compression,
        statistics: cfg.flag(NAME, "statistics", true)?,
    })
}

/// The binding's defaults as an OPTIONS text, for the column families
/// `names` ("default" first, as RocksDB's parser wants).
fn defaults_text(p: &Props, names: &[String]) -> String {
    // What optimize_level_style_compaction(512 MiB) sets, the binding's
    // only column family option; a test checks it against RocksDB's own.
    let budget = MEMTABLE_BUDGET;
    let (compression, per_level) = match p.compression {
        Some(c) => (compression_name(c), vec![compression_name(c); LEVELS]),
        // RocksDB's: snappy, but the optimisation compresses only from L2,
        // with LZ4 when the library has it (Debian's has).
        None => ("kSnappyCompression", {
            let mut v = vec!["kNoCompression"; 2];
            v.resize(LEVELS, "kLZ4Compression");
            v
        }),
    };
    let mut s = String::from(
        "[Version]\n  rocksdb_version=7.8.3\n  options_file_version=1.1\n\n[DBOptions]\n  create_if_missing=true\n  \
         create_missing_column_families=true\n\n",
    );
    for n in names {
        s.push_str(&format!(
            "[CFOptions \"{n}\"]\n  write_buffer_size={}\n  min_write_buffer_number_to_merge=2\n  \
             max_write_buffer_number=6\n  level0_file_num_compaction_trigger=2\n  target_file_size_base={}\n  \
             max_bytes_for_level_base={budget}\n  compaction_style=kCompactionStyleLevel\n  compression={compression}\n  \
             compression_per_level={}\n\n[TableOptions/BlockBasedTable \"{n}\"]\n  checksum=kCRC32c\n  format_version=4\n\n",
            budget / 4,
            budget / 8,
            per_level.join(":"),
        ));
    }
    s
}

/// The database options and one descriptor for each of `names`.
pub fn options(p: &Props, names: &[String], table: &str) -> Result<(Options, Vec<ColumnFamilyDescriptor>), String> {
    if let Some(bad) = names.iter().find(|n| n.contains(['"', '\n', '[', ']'])) {
        return Err(format!("{NAME}: column family name {bad:?}: quotes, brackets and newlines cannot be named in an OPTIONS file"));
    }
    let (mut o, mut cfs) = match &p.optionsfile {
        Some(file) => {
            let what = format!("{NAME}.optionsfile={}", file.display());
            let text = std::fs::read_to_string(file).map_err(|e| format!("{what}: {e}"))?;
            if !text.contains(&format!("[CFOptions \"{table}\"]")) {
                // The binding would reuse the "default" section, which the C
                // API does not hand back; and its own next run would fail.
                return Err(format!("{what}: has no [CFOptions \"{table}\"] section for the table; add one"));
            }
            load(&text, p.blockcache).map_err(|e| format!("{what}: {e}"))?
        }
        None => {
            let (mut o, cfs) = load(&defaults_text(p, names), p.blockcache)?;
            let threads = 2 * std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1) as i32;
            o.increase_parallelism(threads);
            // Deprecated, but RocksDB 7.8 still honours it, and the binding sets it.
            #[allow(deprecated)]
            o.set_max_background_compactions(threads);
            (o, cfs)
        }
    };
    o.create_if_missing(true);
    o.create_missing_column_families(true);
    if p.statistics {
        o.enable_statistics();
    }
    // Column families the database has but the OPTIONS file does not name:
    // RocksDB will not open without them.
    for n in names {
        if !cfs.iter().any(|d| d.name() == n) {
            cfs.push(ColumnFamilyDescriptor::new(n, o.clone()));
        }
    }
    Ok((o, cfs))
}

/// Parse an OPTIONS text with RocksDB's loader, which reads only the
/// newest OPTIONS-* file of a directory: so one is written into an empty one.
fn load(text: &str, blockcache: Option<u64>) -> Result<(Options, Vec<ColumnFamilyDescriptor>), String> {
    let tmp = tempfile::tempdir().map_err(|e| format!("a temporary directory: {e}"))?;
    std::fs::write(tmp.path().join("OPTIONS-000001"), text).map_err(|e| format!("{}: {e}", tmp.path().display()))?;
    let env = Env::new().map_err(|e| e.to_string())?;
    let n = blockcache.unwrap_or(BLOCK_CACHE);
    let cache = Cache::new_lru_cache(n as usize).map_err(|e| format!("{NAME}.blockcache={n}: {e}"))?;
    Options::load_latest(tmp.path(), env, false, cache).map_err(|e| e.to_string())
}
