//! YCSB's command line and properties: `fsbench ycsb load|run [STORE]
//! -P workloada -p key=value -threads N -target N -s -l LABEL`, read as
//! YCSB 0.17's Client reads them (`-P` files in order, every `-p` over every
//! file), then CoreWorkload's defaults and rules applied, so the plan the
//! runner gets is explicit.
//!
//! Where fsbench is stricter than YCSB: a value that is not a number where
//! one is expected, negative counts, proportions summing to nothing, an
//! `insertstart + insertcount` beyond `recordcount` and unknown
//! distributions are errors naming the property and where it was given
//! (YCSB throws a Java exception or silently falls back). A property no
//! part of YCSB's core knows is a warning naming it, as YCSB passes such
//! properties to its bindings; one with the chosen store's prefix that the
//! store does not know is an error.

mod family;
mod limits;
pub mod properties;
#[cfg(test)]
mod tests;
pub mod workloads;

pub use family::{Ycsb, LAYOUT};

use crate::model::store::{self, StoreDesc};
use crate::model::ycsb::*;
use crate::result::warning::{Code, Warning};
use properties::{Origin, Property};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// CoreWorkload's and the Client's properties: what YCSB's core reads.
const CORE_PROPERTIES: &[&str] = &[
    "workload",
    "db",
    "table",
    "recordcount",
    "operationcount",
    "fieldcount",
    "fieldlength",
    "minfieldlength",
    "fieldlengthdistribution",
    "fieldlengthhistogram",
    "fieldnameprefix",
    "readallfields",
    "readallfieldsbyname",
    "writeallfields",
    "dataintegrity",
    "readproportion",
    "updateproportion",
    "insertproportion",
    "scanproportion",
    "readmodifywriteproportion",
    "requestdistribution",
    "minscanlength",
    "maxscanlength",
    "scanlengthdistribution",
    "insertorder",
    "zeropadding",
    "insertstart",
    "insertcount",
    "hotspotdatafraction",
    "hotspotopnfraction",
    "exponential.percentile",
    "exponential.frac",
    "core_workload_insertion_retry_limit",
    "core_workload_insertion_retry_interval",
    "maxexecutiontime",
    "threadcount",
    "target",
    "status.interval",
    "measurementtype",
    "measurement.interval",
    "measurement.trackjvm",
    "measurement.raw.output_file",
    "hdrhistogram.percentiles",
    "hdrhistogram.fileoutput",
    "timeseries.granularity",
    "exporter",
    "exportfile",
    "dotransactions",
    "histogram.buckets",
    "reportlatencyforeacherror",
    "latencytrackederrors",
    "seed",
];

/// What was wrong: the property or flag, where it was given, and what was
/// expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YcsbError(pub String);

impl std::fmt::Display for YcsbError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ycsb: {}", self.0)
    }
}

impl std::error::Error for YcsbError {}

fn err<T>(m: impl Into<String>) -> Result<T, YcsbError> {
    Err(YcsbError(m.into()))
}

/// The command line before its properties are applied.
#[derive(Debug, Default)]
struct Args {
    phase: Option<Phase>,
    store: Option<String>,
    files: Vec<String>,
    props: Vec<(String, String)>,
    status: bool,
}

/// YCSB's DB classes fsbench has a store for (`-db CLASS`).
const DB_CLASSES: &[(&str, &str)] =
    &[("site.ycsb.db.rocksdb.RocksDBClient", "rocksdb"), ("site.ycsb.BasicDB", "null"), ("site.ycsb.db.JdbcDBClient", "sqlite")];

fn read_args(raw: &[String]) -> Result<Args, YcsbError> {
    let mut a = Args::default();
    let mut i = 0;
    let value = |i: &mut usize, flag: &str| -> Result<String, YcsbError> {
        *i += 1;
        raw.get(*i).cloned().ok_or_else(|| YcsbError(format!("{flag}: expected a value after it")))
    };
    let set_phase = |a: &mut Args, p: Phase, w: &str| -> Result<(), YcsbError> {
        match a.phase {
            Some(q) if q != p => err(format!("{w}: the phase is already {}", q.name())),
            _ => {
                a.phase = Some(p);
                Ok(())
            }
        }
    };
    while i < raw.len() {
        let w = raw[i].as_str();
        match w {
            "load" | "-load" => set_phase(&mut a, Phase::Load, w)?,
            "run" | "-t" => set_phase(&mut a, Phase::Run, w)?,
            "-P" => a.files.push(value(&mut i, "-P")?),
            "-p" => {
                let kv = value(&mut i, "-p")?;
                let Some((k, v)) = kv.split_once('=') else {
                    return err(format!("-p {kv}: expected key=value"));
                };
                a.props.push((k.trim().to_string(), v.to_string()));
            }
            "-threads" => {
                let v = value(&mut i, "-threads")?;
                a.props.push(("threadcount".into(), v));
            }
            "-target" => {
                let v = value(&mut i, "-target")?;
                a.props.push(("target".into(), v));
            }
            "-s" => a.status = true,
            "-l" => {
                let v = value(&mut i, "-l")?;
                a.props.push(("label".into(), v));
            }
            "-db" | "--store" | "-store" => {
                let v = value(&mut i, w)?;
                let name = DB_CLASSES.iter().find(|(c, _)| *c == v).map(|(_, s)| s.to_string()).unwrap_or(v);
                a.store = Some(name);
            }
            _ if w.starts_with("--store=") => a.store = Some(w["--store=".len()..].to_string()),
            _ if w.starts_with('-') => {
                return err(format!(
                    "{w}: unknown flag (expected load|run, STORE, -P FILE, -p KEY=VALUE, -threads N, -target OPS, -s, -l LABEL, -db CLASS)"
                ))
            }
            _ if a.store.is_none() && a.phase.is_some() => a.store = Some(w.to_string()),
            _ => return err(format!("{w}: unexpected word (expected load or run first, then the store's name)")),
        }
        i += 1;
    }
    Ok(a)
}

/// Every property with where it came from: files in order, then `-p`
/// (which YCSB applies over every file whatever the order).
struct Props {
    map: BTreeMap<String, Property>,
    used: std::cell::RefCell<Vec<String>>,
}

impl Props {
    fn new(list: Vec<Property>) -> Props {
        let mut map = BTreeMap::new();
        for p in list {
            map.insert(p.key.clone(), p);
        }
        Props { map, used: Default::default() }
    }

    fn get(&self, key: &str) -> Option<&Property> {
        self.used.borrow_mut().push(key.to_string());
        self.map.get(key)
    }

    fn string(&self, key: &str, default: &str) -> String {
        self.get(key).map(|p| p.value.clone()).unwrap_or_else(|| default.to_string())
    }

    fn bad<T>(&self, key: &str, expected: &str) -> Result<T, YcsbError> {
        let p = &self.map[key];
        err(format!("{}: {key}={}: expected {expected}", p.origin, p.value))
    }

    /// A whole number ≥ 0 (YCSB's longs and ints).
    fn count(&self, key: &str, default: u64) -> Result<u64, YcsbError> {
        match self.get(key) {
            None => Ok(default),
            Some(p) => match p.value.trim().parse::<i64>() {
                Ok(n) if n >= 0 => Ok(n as u64),
                Ok(_) => self.bad(key, "a count of zero or more"),
                Err(_) => self.bad(key, "a whole number"),
            },
        }
    }

    /// A whole number from `lo` to `hi`; `expected` says what that range is.
    fn count_in(&self, key: &str, default: u64, lo: u64, hi: u64, expected: &str) -> Result<u64, YcsbError> {
        let n = self.count(key, default)?;
        if n < lo || n > hi {
            return self.bad(key, expected);
        }
        Ok(n)
    }

    fn number(&self, key: &str, default: f64) -> Result<f64, YcsbError> {
        match self.get(key) {
            None => Ok(default),
            Some(p) => match p.value.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => self.bad(key, "a number"),
            },
        }
    }

    fn fraction(&self, key: &str, default: f64) -> Result<f64, YcsbError> {
        let v = self.number(key, default)?;
        if !(0.0..=1.0).contains(&v) {
            return self.bad(key, "a fraction from 0 to 1");
        }
        Ok(v)
    }

    fn proportion(&self, key: &str, default: f64) -> Result<f64, YcsbError> {
        let v = self.number(key, default)?;
        if v < 0.0 {
            return self.bad(key, "a proportion of zero or more");
        }
        Ok(v)
    }

    /// Java's Boolean.parseBoolean: "true" in any case is true, anything
    /// else false; fsbench refuses what is neither true nor false.
    fn boolean(&self, key: &str, default: bool) -> Result<bool, YcsbError> {
        match self.get(key) {
            None => Ok(default),
            Some(p) => match p.value.trim().to_ascii_lowercase().as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => self.bad(key, "true or false"),
            },
        }
    }

    fn origin(&self, key: &str) -> Option<&Origin> {
        self.map.get(key).map(|p| &p.origin)
    }
}

/// A parsed command line: the plan and the warnings to print.
#[derive(Debug, Clone)]
pub struct Parsed {
    pub plan: YcsbPlan,
    pub warnings: Vec<Warning>,
}

/// Read a command line. `default_dir` is where a store keeps its files
/// when no `<store>.dir` is given (an experiment's target); none means the
/// property is required.
pub fn parse(raw: &[String], default_dir: Option<&std::path::Path>) -> Result<Parsed, YcsbError> {
    let args = read_args(raw)?;
    let Some(phase) = args.phase else {
        return err("expected the phase first: load (YCSB's -load) or run (YCSB's -t)");
    };
    let mut list = Vec::new();
    for f in &args.files {
        let path = std::path::Path::new(f);
        let props = if !path.exists() {
            match workloads::builtin(f) {
                Some(text) => properties::parse(text, f).map_err(YcsbError)?,
                None => {
                    let names: Vec<&str> = workloads::CORE.iter().map(|(n, _, _)| *n).collect();
                    return err(format!("-P {f}: no such file, and not a built-in workload ({})", names.join(", ")));
                }
            }
        } else {
            properties::read(path).map_err(YcsbError)?
        };
        list.extend(props);
    }
    list.extend(args.props.iter().map(|(k, v)| Property { key: k.clone(), value: v.clone(), origin: Origin::Flag }));
    let props = Props::new(list);
    resolve(phase, args.store.as_deref(), args.status, &props, default_dir)
}

fn store_of(name: Option<&str>, props: &Props) -> Result<&'static StoreDesc, YcsbError> {
    let name = match name {
        Some(n) => n.to_string(),
        None => match props.get("db") {
            Some(p) => DB_CLASSES.iter().find(|(c, _)| *c == p.value).map(|(_, s)| s.to_string()).unwrap_or_else(|| p.value.clone()),
            None => "null".into(),
        },
    };
    store::find(&name).ok_or_else(|| {
        let names: Vec<&str> = store::STORES.iter().map(|s| s.name).collect();
        YcsbError(format!("store {name:?}: unknown (expected one of {})", names.join(", ")))
    })
}

/// The plan, with CoreWorkload's defaults and rules applied, step by step.
fn resolve(
    phase: Phase,
    store_name: Option<&str>,
    status: bool,
    p: &Props,
    default_dir: Option<&std::path::Path>,
) -> Result<Parsed, YcsbError> {
    let mut warnings = Vec::new();
    if let Some(w) = p.get("workload") {
        if w.value != "site.ycsb.workloads.CoreWorkload" {
            return err(format!("{}: workload={}: fsbench runs YCSB's CoreWorkload (site.ycsb.workloads.CoreWorkload)", w.origin, w.value));
        }
    }
    let desc = store_of(store_name, p)?;
    if p.get("recordcount").is_none() {
        return err("recordcount: expected a positive number of records (YCSB's workload files set it; none was given)");
    }
    let Counts { recordcount, insertstart, insertcount, operationcount, maxexecutiontime_s } = counts(phase, p)?;
    let fieldcount = p.count_in("fieldcount", 10, 1, u32::MAX as u64, "at least one field")?;
    let fieldlength = field_length(p)?;
    limits::record(fieldcount, &fieldlength)?;
    let proportions = proportions(phase, p)?;
    let requestdistribution = request_distribution(p, recordcount)?;
    let (minscanlength, maxscanlength, scanlengthdistribution) = scan_lengths(p)?;
    // YCSB: "hashed" hashes, anything else is ordered.
    let hashed_inserts = p.string("insertorder", "hashed") == "hashed";
    let zeropadding = p.count("zeropadding", 1)?;
    if zeropadding == 0 || zeropadding > 20 {
        return p.bad("zeropadding", "1 to 20 digits");
    }
    let threads = p.count("threadcount", 1)?;
    if threads == 0 || threads > 4096 {
        return p.bad("threadcount", "1 to 4096 threads (-threads)");
    }
    let target_ops = p.number("target", 0.0)?;
    if target_ops < 0.0 || (target_ops > 0.0 && target_ops < limits::MIN_TARGET) {
        return p.bad("target", "operations per second: 0 for as fast as possible, else at least 0.001 (-target)");
    }
    let Reporting { status_interval_s, measurement, interval, percentiles, exporter } = reporting(p, status)?;
    let seed = p.count("seed", 0x5943_5342)?;
    // Only the histogram measurement fsbench does not do reads it.
    p.count_in("histogram.buckets", 1000, 1, limits::MAX_INT, "a positive number of buckets (YCSB's int)")?;
    let insertion_retry_limit = p.count_in("core_workload_insertion_retry_limit", 0, 0, limits::MAX_INT, limits::INT)? as u32;
    let insertion_retry_interval_s = p.count_in(
        "core_workload_insertion_retry_interval",
        3,
        0,
        limits::MAX_RETRY_INTERVAL_S,
        "seconds between retries, at most a day (86400)",
    )?;

    let (dir, store_props) = store_properties(p, desc, default_dir, &mut warnings)?;
    let plan = YcsbPlan {
        phase,
        store: StoreSpec { name: desc.name.to_string(), dir, props: store_props },
        table: p.string("table", "usertable"),
        recordcount,
        operationcount,
        fieldcount: fieldcount as u32,
        fieldnameprefix: p.string("fieldnameprefix", "field"),
        fieldlength,
        readallfields: p.boolean("readallfields", true)?,
        writeallfields: p.boolean("writeallfields", false)?,
        dataintegrity: p.boolean("dataintegrity", false)?,
        proportions,
        requestdistribution,
        minscanlength,
        maxscanlength,
        scanlengthdistribution,
        hashed_inserts,
        insertstart,
        insertcount,
        zeropadding: zeropadding as u32,
        insertion_retry_limit,
        insertion_retry_interval_s,
        maxexecutiontime_s,
        threads: threads as u32,
        target_ops,
        status_interval_s,
        label: p.string("label", ""),
        measurement,
        interval,
        percentiles,
        exporter,
        exportfile: p.get("exportfile").map(|x| PathBuf::from(&x.value)),
        seed,
        properties: p.map.iter().map(|(k, v)| (k.clone(), v.value.clone())).collect(),
    };
    if plan.dataintegrity && !matches!(plan.fieldlength, FieldLength::Constant(_)) {
        return err("dataintegrity=true: needs fieldlengthdistribution=constant (as YCSB requires)");
    }
    limits::memory(&plan, crate::host::meminfo::read_meminfo().available)?;
    Ok(Parsed { plan, warnings })
}

/// The key and operation counts, checked against each other.
struct Counts {
    recordcount: u64,
    insertstart: u64,
    insertcount: u64,
    operationcount: u64,
    maxexecutiontime_s: u64,
}

fn counts(phase: Phase, p: &Props) -> Result<Counts, YcsbError> {
    let recordcount = p.count_in("recordcount", 0, 1, limits::MAX_KEYS, limits::KEYS)?;
    let insertstart = p.count("insertstart", 0)?;
    if insertstart > recordcount {
        return err(format!("insertstart={insertstart}: beyond recordcount={recordcount}"));
    }
    let insertcount = p.count("insertcount", recordcount - insertstart)?;
    if insertstart + insertcount > recordcount {
        return err(format!(
            "{}: insertstart+insertcount = {} is beyond recordcount={recordcount}",
            p.origin("insertcount").map(|o| o.to_string()).unwrap_or_default(),
            insertstart + insertcount
        ));
    }
    // The Client's operation count: the inserts in the load phase.
    // Checked in both phases, though only the run phase reads it.
    let run_operations = p.count_in("operationcount", 0, 0, limits::MAX_KEYS, limits::OPERATIONS)?;
    let operationcount = match phase {
        Phase::Load => {
            if p.get("insertcount").is_some() {
                insertcount
            } else {
                recordcount
            }
        }
        Phase::Run => run_operations,
    };
    let maxexecutiontime_s = p.count_in("maxexecutiontime", 0, 0, limits::MAX_SECONDS, limits::SECONDS)?;
    if phase == Phase::Run && operationcount == 0 && maxexecutiontime_s == 0 {
        return err("operationcount: expected a positive number of operations (or a maxexecutiontime)");
    }
    Ok(Counts { recordcount, insertstart, insertcount, operationcount, maxexecutiontime_s })
}

fn proportions(phase: Phase, p: &Props) -> Result<Proportions, YcsbError> {
    let proportions = Proportions {
        read: p.proportion("readproportion", 0.95)?,
        update: p.proportion("updateproportion", 0.05)?,
        insert: p.proportion("insertproportion", 0.0)?,
        scan: p.proportion("scanproportion", 0.0)?,
        read_modify_write: p.proportion("readmodifywriteproportion", 0.0)?,
    };
    let sum = proportions.read + proportions.update + proportions.insert + proportions.scan + proportions.read_modify_write;
    if phase == Phase::Run && sum <= 0.0 {
        return err("readproportion, updateproportion, insertproportion, scanproportion, readmodifywriteproportion: they sum to 0; expected a positive sum");
    }
    if !sum.is_finite() {
        return err(format!(
            "readproportion, updateproportion, insertproportion, scanproportion, readmodifywriteproportion: they sum to {sum}; expected weights whose sum is a finite number"
        ));
    }
    Ok(proportions)
}

fn request_distribution(p: &Props, recordcount: u64) -> Result<KeyDist, YcsbError> {
    let requestdistribution = match p.string("requestdistribution", "uniform").as_str() {
        "uniform" => KeyDist::Uniform,
        "zipfian" => KeyDist::Zipfian,
        "latest" => KeyDist::Latest,
        "sequential" => KeyDist::Sequential,
        "hotspot" => {
            KeyDist::Hotspot { data_fraction: p.fraction("hotspotdatafraction", 0.2)?, op_fraction: p.fraction("hotspotopnfraction", 0.8)? }
        }
        "exponential" => KeyDist::Exponential {
            percentile: p.number("exponential.percentile", 95.0)?,
            frac: p.number("exponential.frac", 0.8571428571)?,
        },
        _ => return p.bad("requestdistribution", "uniform, zipfian, latest, hotspot, exponential or sequential"),
    };
    match requestdistribution {
        KeyDist::Exponential { percentile, frac } => {
            if !(percentile > 0.0 && percentile < 100.0) {
                return p.bad("exponential.percentile", "a percentile between 0 and 100");
            }
            if frac <= 0.0 {
                return p.bad("exponential.frac", "a positive fraction of the keyspace");
            }
            limits::exponential(percentile, frac)?
        }
        KeyDist::Latest => limits::zipfian_items("requestdistribution=latest over recordcount", recordcount)?,
        _ => {}
    }
    Ok(requestdistribution)
}

fn scan_lengths(p: &Props) -> Result<(u64, u64, ScanLength), YcsbError> {
    let minscanlength = p.count("minscanlength", 1)?;
    let maxscanlength = p.count_in("maxscanlength", 1000, 1, limits::MAX_INT, limits::INT)?;
    if minscanlength == 0 || minscanlength > maxscanlength {
        return err(format!("minscanlength={minscanlength}, maxscanlength={maxscanlength}: expected 1 ≤ minscanlength ≤ maxscanlength"));
    }
    let scanlengthdistribution = match p.string("scanlengthdistribution", "uniform").as_str() {
        "uniform" => ScanLength::Uniform,
        "zipfian" => {
            limits::zipfian_items("scanlengthdistribution=zipfian over minscanlength..maxscanlength", maxscanlength - minscanlength + 1)?;
            ScanLength::Zipfian
        }
        _ => return p.bad("scanlengthdistribution", "uniform or zipfian"),
    };
    Ok((minscanlength, maxscanlength, scanlengthdistribution))
}

/// How the run measures and reports: status lines, histograms, exporter.
struct Reporting {
    status_interval_s: Option<u64>,
    measurement: Measurement,
    interval: Interval,
    percentiles: Vec<f64>,
    exporter: Exporter,
}

fn reporting(p: &Props, status: bool) -> Result<Reporting, YcsbError> {
    let status_interval_s = if status {
        Some(p.count_in("status.interval", 10, 1, limits::MAX_SECONDS, "a positive number of seconds, at most a year (31536000)")?)
    } else {
        None
    };
    let measurement = match p.string("measurementtype", "hdrhistogram").as_str() {
        "hdrhistogram" => Measurement::Hdr,
        "timeseries" => {
            let g = p.count_in(
                "timeseries.granularity",
                1000,
                1,
                limits::MAX_SECONDS * 1000,
                "a positive number of milliseconds, at most a year",
            )?;
            Measurement::Timeseries { granularity_ms: g }
        }
        _ => return p.bad("measurementtype", "hdrhistogram or timeseries (fsbench does not do histogram, raw or hdrhistogram+histogram)"),
    };
    let interval = match p.string("measurement.interval", "op").as_str() {
        "op" => Interval::Op,
        "intended" => Interval::Intended,
        "both" => Interval::Both,
        _ => return p.bad("measurement.interval", "op, intended or both"),
    };
    let percentiles = match p.get("hdrhistogram.percentiles") {
        None => vec![50.0, 95.0, 99.0],
        Some(_) => {
            let v = p.string("hdrhistogram.percentiles", "");
            let list: Result<Vec<f64>, _> = v.split(',').map(|x| x.trim().parse::<f64>()).collect();
            match list {
                Ok(l) if !l.is_empty() && l.iter().all(|x| (0.0..=100.0).contains(x)) => l,
                _ => return p.bad("hdrhistogram.percentiles", "a comma list of percentiles from 0 to 100"),
            }
        }
    };
    let exporter = match p.string("exporter", "site.ycsb.measurements.exporter.TextMeasurementsExporter").as_str() {
        "site.ycsb.measurements.exporter.TextMeasurementsExporter" | "text" => Exporter::Text,
        "site.ycsb.measurements.exporter.JSONMeasurementsExporter" | "json" => Exporter::Json,
        "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter" | "jsonarray" => Exporter::JsonArray,
        _ => {
            return p.bad(
                "exporter",
                "site.ycsb.measurements.exporter.TextMeasurementsExporter, JSONMeasurementsExporter or JSONArrayMeasurementsExporter",
            )
        }
    };
    Ok(Reporting { status_interval_s, measurement, interval, percentiles, exporter })
}

/// The store's directory and its own properties; properties of other
/// stores and unknown ones become warnings.
fn store_properties(
    p: &Props,
    desc: &StoreDesc,
    default_dir: Option<&std::path::Path>,
    warnings: &mut Vec<Warning>,
) -> Result<(Option<PathBuf>, BTreeMap<String, String>), YcsbError> {
    // Properties: the chosen store's must be known to it; others are
    // passed over with a warning, as YCSB hands them to a binding that
    // may ignore them.
    let mut store_props = BTreeMap::new();
    for (k, prop) in &p.map {
        if let Some(rest) = k.strip_prefix(desc.prefix) {
            if !desc.knows(rest) {
                let known: Vec<String> = desc.properties.iter().map(|(n, _)| format!("{}{n}", desc.prefix)).collect();
                return err(format!(
                    "{}: {k}: not a property of the {} store (it knows {})",
                    prop.origin,
                    desc.name,
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                ));
            }
            store_props.insert(rest.to_string(), prop.value.clone());
        } else if let Some(other) = store::STORES.iter().find(|s| k.starts_with(s.prefix)) {
            warnings.push(Warning::new(
                Code::IgnoredOption,
                format!("{}: {k}: a property of the {} store, not used by {}", prop.origin, other.name, desc.name),
            ));
        } else if !CORE_PROPERTIES.contains(&k.as_str()) && k != "label" {
            warnings.push(Warning::new(
                Code::IgnoredOption,
                format!("{}: {k}: not a YCSB core property; no store reads it (ignored)", prop.origin),
            ));
        }
    }
    let dir =
        store_props.remove("dir").map(PathBuf::from).or_else(|| if desc.needs_dir { default_dir.map(|d| d.to_path_buf()) } else { None });
    if desc.needs_dir && dir.is_none() {
        return err(format!("the {} store needs -p {}dir=DIRECTORY", desc.name, desc.prefix));
    }
    for ignored in [
        "readallfieldsbyname",
        "hdrhistogram.fileoutput",
        "measurement.trackjvm",
        "reportlatencyforeacherror",
        "latencytrackederrors",
        "histogram.buckets",
    ] {
        if let Some(o) = p.origin(ignored) {
            warnings.push(Warning::new(Code::IgnoredOption, format!("{o}: {ignored}: accepted but not acted on by fsbench")));
        }
    }
    Ok((dir, store_props))
}

fn field_length(p: &Props) -> Result<FieldLength, YcsbError> {
    let len = p.count_in("fieldlength", 100, 0, limits::MAX_INT, limits::FIELD)?;
    let min = p.count_in("minfieldlength", 1, 0, limits::MAX_INT, limits::FIELD)?;
    match p.string("fieldlengthdistribution", "constant").as_str() {
        "constant" => Ok(FieldLength::Constant(len)),
        "uniform" | "zipfian" if min > len => err(format!("minfieldlength={min}: above fieldlength={len}")),
        "uniform" => Ok(FieldLength::Uniform { min, max: len }),
        "zipfian" => {
            limits::zipfian_items("fieldlengthdistribution=zipfian over minfieldlength..fieldlength", len - min + 1)?;
            Ok(FieldLength::Zipfian { min, max: len })
        }
        "histogram" => {
            let file = p.string("fieldlengthhistogram", "hist.txt");
            histogram(&file)
        }
        _ => p.bad("fieldlengthdistribution", "constant, uniform, zipfian or histogram"),
    }
}

/// YCSB's histogram file: a `BlockSize<TAB>n` line, then `bucket<TAB>count`.
fn histogram(file: &str) -> Result<FieldLength, YcsbError> {
    let path = std::path::Path::new(file);
    let text = crate::input::read_text(path, "histogram file").map_err(|e| YcsbError(format!("fieldlengthhistogram={file}: {e}")))?;
    let mut block_size = None;
    let mut counts: Vec<u64> = Vec::new();
    let mut total = 0u64;
    for (n, line) in text.lines().enumerate() {
        let at = format!("{file}:{}:1", n + 1);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut parts = line.split('\t');
        let (Some(a), Some(b)) = (parts.next(), parts.next()) else {
            return err(format!("{at}: expected two tab-separated fields"));
        };
        if a == "BlockSize" {
            block_size = Some(b.trim().parse::<u64>().map_err(|_| YcsbError(format!("{at}: BlockSize {b}: expected a whole number")))?);
            continue;
        }
        let bucket: usize = a.trim().parse().map_err(|_| YcsbError(format!("{at}: bucket {a}: expected a whole number")))?;
        let count: u64 = b.trim().parse().map_err(|_| YcsbError(format!("{at}: count {b}: expected a whole number")))?;
        if bucket >= limits::MAX_HISTOGRAM_BUCKETS {
            return err(format!("{at}: bucket {bucket}: expected a bucket below {}", limits::MAX_HISTOGRAM_BUCKETS));
        }
        if bucket >= counts.len() {
            counts.resize(bucket + 1, 0);
        }
        total = match (total - counts[bucket]).checked_add(count) {
            Some(t) => t,
            None => return err(format!("{at}: count {count}: the counts add up past 2^64; expected smaller counts")),
        };
        counts[bucket] = count;
    }
    let Some(block_size) = block_size.filter(|b| *b > 0) else {
        return err(format!("{file}: expected a 'BlockSize<TAB>n' line with n > 0"));
    };
    if total == 0 {
        return err(format!("{file}: expected at least one bucket with a count"));
    }
    let longest = block_size.saturating_mul(counts.len() as u64);
    if longest > limits::MAX_INT {
        return err(format!(
            "{file}: BlockSize {block_size} × {} buckets allows fields of {longest} bytes; expected fields of at most {} bytes (YCSB's int)",
            counts.len(),
            limits::MAX_INT
        ));
    }
    Ok(FieldLength::Histogram { block_size, counts })
}
