//! One YCSB phase (load or run) as YCSB 0.17's CoreWorkload and Client
//! would execute it, with every property already read and checked. Plain
//! data: the frontend (`frontend::ycsb`) builds it from property files and
//! `-p`, the runner (`runner::ycsb`) executes it against a store
//! (`kvstore`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// `-load`: insert `insertcount` records.
    Load,
    /// `-t`: `operationcount` operations drawn from the proportions.
    Run,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Load => "load",
            Phase::Run => "run",
        }
    }
}

/// Which key a read, update, scan or read-modify-write picks
/// (`requestdistribution`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyDist {
    Uniform,
    /// Scrambled zipfian (θ 0.99) over the keyspace grown by the expected
    /// inserts, as YCSB's CoreWorkload builds it.
    Zipfian,
    /// The newest keys are the hottest (skewed latest).
    Latest,
    /// `data_fraction` of the keys get `op_fraction` of the operations.
    Hotspot {
        data_fraction: f64,
        op_fraction: f64,
    },
    /// `exponential.percentile` of the operations fall on the newest
    /// `exponential.frac` of the keys.
    Exponential {
        percentile: f64,
        frac: f64,
    },
    /// Every key in turn.
    Sequential,
}

impl KeyDist {
    pub fn name(&self) -> &'static str {
        match self {
            KeyDist::Uniform => "uniform",
            KeyDist::Zipfian => "zipfian",
            KeyDist::Latest => "latest",
            KeyDist::Hotspot { .. } => "hotspot",
            KeyDist::Exponential { .. } => "exponential",
            KeyDist::Sequential => "sequential",
        }
    }
}

/// How long each field is (`fieldlengthdistribution`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FieldLength {
    Constant(u64),
    /// Uniform over `min..=max`.
    Uniform {
        min: u64,
        max: u64,
    },
    /// Zipfian over `min..=max` (short fields most frequent).
    Zipfian {
        min: u64,
        max: u64,
    },
    /// YCSB's histogram file (`fieldlengthhistogram`): `BlockSize` and one
    /// count per bucket; bucket i holds lengths `i × block_size`.
    Histogram {
        block_size: u64,
        counts: Vec<u64>,
    },
}

impl FieldLength {
    /// The longest field this can draw (buffers are sized for it).
    pub fn max(&self) -> u64 {
        match self {
            FieldLength::Constant(n) => *n,
            FieldLength::Uniform { max, .. } | FieldLength::Zipfian { max, .. } => *max,
            FieldLength::Histogram { block_size, counts } => block_size * counts.len() as u64,
        }
    }

    /// The mean length drawn (the shortest for zipfian, whose short
    /// lengths are the most frequent): what a record takes on average.
    pub fn mean(&self) -> f64 {
        match self {
            FieldLength::Constant(n) => *n as f64,
            FieldLength::Uniform { min, max } => (*min as f64 + *max as f64) / 2.0,
            FieldLength::Zipfian { min, .. } => *min as f64,
            FieldLength::Histogram { block_size, counts } => {
                let n: f64 = counts.iter().map(|&c| c as f64).sum();
                let sum: f64 = counts.iter().enumerate().map(|(i, &c)| (i as u64 * block_size) as f64 * c as f64).sum();
                if n > 0.0 {
                    sum / n
                } else {
                    0.0
                }
            }
        }
    }
}

/// How many records a scan asks for (`scanlengthdistribution`), over
/// `minscanlength..=maxscanlength`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScanLength {
    Uniform,
    Zipfian,
}

/// The operation mix of the run phase (YCSB's `*proportion` properties),
/// not necessarily summing to 1: each weight over their sum.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Proportions {
    pub read: f64,
    pub update: f64,
    pub insert: f64,
    pub scan: f64,
    pub read_modify_write: f64,
}

/// What the latency figures are measured from (`measurement.interval`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interval {
    /// From the operation's actual start.
    Op,
    /// From the time the throttle intended it to start (`-target`), so a
    /// stalled store's queueing shows (coordinated omission).
    Intended,
    /// Both, the intended ones as `INTENDED_<OP>`.
    Both,
}

/// `measurementtype`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measurement {
    /// Percentiles from a histogram (YCSB's default `hdrhistogram`).
    Hdr,
    /// Average latency per `timeseries.granularity` milliseconds.
    Timeseries { granularity_ms: u64 },
}

/// `exporter`: how YCSB's final figures are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Exporter {
    /// `site.ycsb.measurements.exporter.TextMeasurementsExporter`.
    Text,
    /// `JSONMeasurementsExporter`: one object per line.
    Json,
    /// `JSONArrayMeasurementsExporter`: one array.
    JsonArray,
}

/// The store a phase runs against and the properties it was given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StoreSpec {
    /// A name from `model::store::STORES`.
    pub name: String,
    /// Where it keeps its files (`<store>.dir`); none for `null`.
    pub dir: Option<PathBuf>,
    /// The properties with the store's prefix (`rocksdb.*`, ...), prefix
    /// removed, already checked against the store's list.
    pub props: BTreeMap<String, String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct YcsbPlan {
    pub phase: Phase,
    pub store: StoreSpec,
    pub table: String,
    pub recordcount: u64,
    pub operationcount: u64,
    pub fieldcount: u32,
    pub fieldnameprefix: String,
    pub fieldlength: FieldLength,
    pub readallfields: bool,
    pub writeallfields: bool,
    /// Values derived from key and field, checked on every read.
    pub dataintegrity: bool,
    pub proportions: Proportions,
    pub requestdistribution: KeyDist,
    pub minscanlength: u64,
    pub maxscanlength: u64,
    pub scanlengthdistribution: ScanLength,
    /// `insertorder=hashed` (keys are FNV-1a-64 of the sequence number).
    pub hashed_inserts: bool,
    pub insertstart: u64,
    pub insertcount: u64,
    pub zeropadding: u32,
    /// `core_workload_insertion_retry_limit` / `_interval` (seconds).
    pub insertion_retry_limit: u32,
    pub insertion_retry_interval_s: u64,
    /// `maxexecutiontime` in seconds; 0 = until the operations are done.
    pub maxexecutiontime_s: u64,
    /// `-threads`.
    pub threads: u32,
    /// `-target`: total operations per second over all threads; 0 = as fast
    /// as possible.
    pub target_ops: f64,
    /// `-s`: status lines every this many seconds (`status.interval`).
    pub status_interval_s: Option<u64>,
    /// `-l`: prefix of the status lines.
    pub label: String,
    pub measurement: Measurement,
    pub interval: Interval,
    /// `hdrhistogram.percentiles`.
    pub percentiles: Vec<f64>,
    pub exporter: Exporter,
    /// `exportfile`: YCSB's final figures go there instead of stdout.
    pub exportfile: Option<PathBuf>,
    /// Seed of the client's random numbers (fsbench's: YCSB has none).
    pub seed: u64,
    /// Every property as given (files, then `-p`), for the record.
    pub properties: BTreeMap<String, String>,
}

impl YcsbPlan {
    /// The field names, `field0`.. with the prefix.
    pub fn field_names(&self) -> Vec<String> {
        (0..self.fieldcount).map(|i| format!("{}{i}", self.fieldnameprefix)).collect()
    }
}

impl super::Shape for YcsbPlan {
    /// The store's directory.
    fn data_dir(&self) -> Option<PathBuf> {
        self.store.dir.clone()
    }
    /// A run phase reads what the load phase left: the database stays.
    fn keeps_files_between_runs(&self) -> bool {
        true
    }
    /// Inserts and updates make an LSM flush and compact and a B-tree
    /// grow: anything but a read-only run allocates.
    fn allocates(&self) -> bool {
        let p = &self.proportions;
        self.phase == Phase::Load || p.insert > 0.0 || p.update > 0.0 || p.read_modify_write > 0.0
    }
    /// A run phase refuses an empty store: it needs a load's records.
    fn reads_earlier_data(&self) -> Option<PathBuf> {
        self.store.dir.clone().filter(|_| self.phase == Phase::Run)
    }
    fn leaves_data(&self) -> Option<PathBuf> {
        self.store.dir.clone().filter(|_| self.phase == Phase::Load)
    }
}
