//! The option table: one entry per fio option fsbench understands, with its
//! aliases, help text and a setter that validates the value and writes it
//! into the job being built.
//!
//! Setters return complete "expected FORM, got 'VALUE'" messages; the caller
//! adds the location.

use crate::frontend::suggest::nearest;
use crate::model::job::{BlockSize, Fallocate, JobSpec, RwKind, SyncMode, MAX_CLONES};
use crate::units::clip;
use crate::units::{parse_bool, parse_duration, parse_size, parse_u32, parse_uint};
use std::path::PathBuf;
use std::time::Duration;

/// A job while its options are being applied.
#[derive(Clone, Debug)]
pub struct JobState {
    pub spec: JobSpec,
    /// fio's `kb_base`: what `k` means for the sizes that follow.
    pub kb_base: u64,
    /// `filename=` as written; split and joined with `directory` at the end
    /// because `directory` may come later.
    pub filename: Option<String>,
    /// One-time notes on options fsbench accepts but measures differently.
    pub notes: Vec<crate::result::warning::Warning>,
}

impl JobState {
    pub fn new(name: &str) -> JobState {
        let mut spec = JobSpec::new(name);
        // fio's default; `options_buffers::finish` keeps it where fio applies it.
        spec.buffer.scramble = true;
        JobState { spec, kb_base: 1024, filename: None, notes: Vec::new() }
    }
}

/// How an option takes its value; the common shapes parse here, the rest
/// (`Value`) parse in their own setter.
pub enum Kind {
    /// A boolean; may be given bare (`time_based` means `time_based=1`).
    Bool(fn(&mut JobState, bool)),
    /// A whole number within `min..=max`.
    Uint(u32, u32, fn(&mut JobState, u32)),
    /// A size in bytes, honouring `kb_base`.
    Size(fn(&mut JobState, u64)),
    /// A duration; a bare number is in the given unit.
    Time(Duration, fn(&mut JobState, Duration)),
    /// Free text (names, paths).
    Text(fn(&mut JobState, &str)),
    /// Anything else: the setter parses and validates the text.
    Value(fn(&mut JobState, &str) -> Result<(), String>),
    /// Like `Value`, but may be given bare, meaning `1` (fio's `sync`).
    BareValue(fn(&mut JobState, &str) -> Result<(), String>),
}

/// One option of the table.
pub struct OptDef {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub help: &'static str,
    pub kind: Kind,
}

impl OptDef {
    /// May the option be given without `=value`?
    pub fn bare_ok(&self) -> bool {
        matches!(self.kind, Kind::Bool(_) | Kind::BareValue(_))
    }

    /// Validate `value` and write it into `job`.
    pub fn apply(&self, job: &mut JobState, value: &str) -> Result<(), String> {
        match self.kind {
            Kind::Bool(set) => parse_bool(value).map(|b| set(job, b)),
            Kind::Uint(min, max, set) => parse_u32(value, min, max).map(|n| set(job, n)),
            Kind::Size(set) => parse_size(value, job.kb_base).map(|b| set(job, b)),
            Kind::Time(unit, set) => parse_duration(value, unit).map(|d| set(job, d)),
            Kind::Text(set) => {
                set(job, value);
                Ok(())
            }
            Kind::Value(set) | Kind::BareValue(set) => set(job, value),
        }
    }
}

/// Every option table, one per area of fio's options, so that an area
/// (engines, verification, logs, ...) keeps its options in its own file.
pub static TABLES: &[&[OptDef]] = &[
    OPTIONS,
    super::options_engine::ENGINE,
    super::options_engines_misc::ENGINES_MISC,
    super::options_log::LOGS,
    super::options_misc::MISC,
    super::options_buffers::BUFFERS,
    super::options_verify::VERIFY,
];

/// Every option of every table.
pub fn all() -> impl Iterator<Item = &'static OptDef> {
    TABLES.iter().flat_map(|t| t.iter())
}

/// Find an option by name or alias.
pub fn find(name: &str) -> Option<&'static OptDef> {
    all().find(|o| o.name == name || o.aliases.contains(&name))
}

/// The closest known option name, if it is within edit distance 2.
pub fn suggest(name: &str) -> Option<&'static str> {
    let names = all().flat_map(|o| std::iter::once(&o.name).chain(o.aliases.iter()));
    nearest(name, names.copied(), 2)
}

pub(super) const SEC: Duration = Duration::from_secs(1);
pub(super) const USEC: Duration = Duration::from_micros(1);
pub(super) const MSEC: Duration = Duration::from_millis(1);
const RW_FORM: &str = "one of read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite, randtrimwrite";

pub(super) fn expected(form: &str, v: &str) -> String {
    format!("expected {form}, got '{}'", clip(v))
}

/// Split a `read,write[,trim]` list. One value applies to both directions;
/// an empty side (`,8k`) leaves that direction unchanged.
pub(super) fn per_direction<T: Clone>(
    v: &str,
    form: &str,
    mut parse: impl FnMut(&str) -> Result<T, String>,
) -> Result<[Option<T>; 2], String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let mut side = |s: &str| if s.is_empty() { Ok(None) } else { parse(s).map(Some) };
    match parts[..] {
        [one] => {
            let x = parse(one)?;
            Ok([Some(x.clone()), Some(x)])
        }
        [r, w] => Ok([side(r)?, side(w)?]),
        // fio's third value is for trims, which fsbench refuses as a
        // workload (rw=trim), so a job here never trims: checked, unused.
        [r, w, t] => {
            side(t)?;
            Ok([side(r)?, side(w)?])
        }
        _ => Err(format!("expected {form}, a 'read,write' pair or a 'read,write,trim' triple, got '{}'", clip(v))),
    }
}

/// Store per-direction values, leaving `None` sides as they were.
pub(super) fn store<T>(dst: &mut [T; 2], src: [Option<T>; 2]) {
    for (d, s) in dst.iter_mut().zip(src) {
        if let Some(s) = s {
            *d = s;
        }
    }
}

pub(super) fn block_size(j: &JobState, v: &str) -> Result<u64, String> {
    match parse_size(v, j.kb_base)? {
        0 => Err(format!("expected a block size > 0 such as 4k, got '{}'", clip(v))),
        b => Ok(b),
    }
}

fn set_bs(j: &mut JobState, v: &str) -> Result<(), String> {
    let bs = per_direction(v, "a block size such as 4k", |s| block_size(j, s).map(BlockSize::Fixed))?;
    store(&mut j.spec.bs, bs);
    Ok(())
}

fn set_bsrange(j: &mut JobState, v: &str) -> Result<(), String> {
    let form = "a range such as 1k-64k";
    let range = per_direction(v, form, |s| {
        let (lo, hi) = s.split_once('-').ok_or_else(|| expected(form, s))?;
        let (min, max) = (block_size(j, lo)?, block_size(j, hi)?);
        if min > max {
            return Err(format!("expected {form} with min <= max, got '{}' (min {min} > max {max})", clip(s)));
        }
        Ok(BlockSize::Range { min, max })
    })?;
    store(&mut j.spec.bs, range);
    Ok(())
}

/// `4k/10:64k/50:32k` → sizes with percents. Entries without a percent share
/// what is left of 100 evenly (the first ones get the remainder), as fio does.
fn parse_bssplit(j: &JobState, v: &str) -> Result<BlockSize, String> {
    let form = "entries like 4k/10:64k/90 whose percentages add up to 100";
    let mut entries = Vec::new();
    for part in v.split(':') {
        let (bs, pct) = match part.split_once('/') {
            Some((b, p)) => (b, Some(parse_u32(p, 0, 100)?)),
            None => (part, None),
        };
        entries.push((block_size(j, bs)?, pct));
    }
    let given: u32 = entries.iter().filter_map(|e| e.1).sum();
    let missing = entries.iter().filter(|e| e.1.is_none()).count() as u32;
    if given > 100 || (missing == 0 && given != 100) {
        return Err(format!("expected {form}, got '{}' (they add up to {given})", clip(v)));
    }
    let left = 100 - given;
    let (share, mut extra) = (left.checked_div(missing).unwrap_or(0), left.checked_rem(missing).unwrap_or(0));
    let fill = |p: Option<u32>, extra: &mut u32| {
        p.unwrap_or_else(|| {
            let e = u32::from(*extra > 0);
            *extra -= e;
            share + e
        })
    };
    Ok(BlockSize::Split(entries.into_iter().map(|(b, p)| (b, fill(p, &mut extra))).collect()))
}

fn set_bssplit(j: &mut JobState, v: &str) -> Result<(), String> {
    let split = per_direction(v, "a split such as 4k/10:64k/90", |s| parse_bssplit(j, s))?;
    store(&mut j.spec.bs, split);
    Ok(())
}

fn set_rw(j: &mut JobState, v: &str) -> Result<(), String> {
    let (v, n) = match v.split_once(':') {
        Some((m, n)) => (m, Some(n)),
        None => (v, None),
    };
    j.spec.rw = match v.to_ascii_lowercase().as_str() {
        "read" => RwKind::Read,
        "write" => RwKind::Write,
        "randread" => RwKind::RandRead,
        "randwrite" => RwKind::RandWrite,
        "rw" | "readwrite" => RwKind::ReadWrite,
        "randrw" => RwKind::RandRw,
        "trim" => RwKind::Trim,
        "randtrim" => RwKind::RandTrim,
        "trimwrite" => RwKind::TrimWrite,
        "randtrimwrite" => RwKind::RandTrimWrite,
        _ => return Err(expected(RW_FORM, v)),
    };
    super::options_misc::set_rw_suffix(j, n)
}

fn set_ioengine(j: &mut JobState, v: &str) -> Result<(), String> {
    match crate::model::engine::find(v) {
        Some(e) => {
            j.spec.ioengine = e.name.to_string();
            Ok(())
        }
        None => Err(format!("unknown ioengine '{}'; expected one of: {}", clip(v), crate::model::engine::names().join(", "))),
    }
}

fn set_sync(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.sync = match v.to_ascii_lowercase().as_str() {
        "0" | "none" | "false" | "no" | "off" => SyncMode::None,
        "1" | "sync" | "true" | "yes" | "on" => SyncMode::Sync,
        "dsync" => SyncMode::Dsync,
        _ => return Err(expected("one of 0, 1, none, sync, dsync", v)),
    };
    Ok(())
}

fn set_fallocate(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.fallocate = match v.to_ascii_lowercase().as_str() {
        // truncate: only ftruncate, which laying out does anyway.
        "none" | "0" | "truncate" => Fallocate::None,
        "native" => Fallocate::Native,
        "posix" | "1" => Fallocate::Posix,
        "keep" => Fallocate::Keep,
        _ => return Err(expected("one of none, native, posix, keep, truncate, 0, 1", v)),
    };
    Ok(())
}

fn set_rate(j: &mut JobState, v: &str) -> Result<(), String> {
    let kb = j.kb_base;
    let r = per_direction(v, "bytes per second such as 10m", |s| parse_size(s, kb).map(|b| (b > 0).then_some(b)))?;
    store(&mut j.spec.rate, r);
    Ok(())
}

fn set_rate_iops(j: &mut JobState, v: &str) -> Result<(), String> {
    let r = per_direction(v, "I/Os per second such as 1000", |s| parse_uint(s, 0, u64::MAX).map(|n| (n > 0).then_some(n)))?;
    store(&mut j.spec.rate_iops, r);
    Ok(())
}

fn set_kb_base(j: &mut JobState, v: &str) -> Result<(), String> {
    j.kb_base = match v {
        "1000" => 1000,
        "1024" => 1024,
        _ => return Err(expected("1000 or 1024", v)),
    };
    Ok(())
}

fn set_randseed(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.randseed = parse_uint(v, 0, u64::MAX)?;
    Ok(())
}

fn set_compress_chunk(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.buffer.compress_chunk = block_size(j, v)?;
    Ok(())
}

macro_rules! opt {
    ($name:literal, [$($alias:literal),*], $help:literal, $kind:expr) => {
        $crate::frontend::fio::options::OptDef { name: $name, aliases: &[$($alias),*], help: $help, kind: $kind }
    };
}
/// For the tables of the other areas (`options_*.rs`).
#[allow(unused_imports)]
pub(crate) use opt;

use Kind::{BareValue, Bool, Size, Text, Time, Uint, Value};

/// Every option, roughly in the order of fio's documentation. Sizes and
/// runtimes of 0 mean "not set", as in fio.
pub static OPTIONS: &[OptDef] = &[
    opt!("name", [], "job name", Text(|j, v| j.spec.name = v.to_string())),
    opt!("description", [], "free text describing the job", Text(|j, v| j.spec.description = Some(v.to_string()))),
    opt!("filename", [], "file(s) to use, separated by ':' (escape a colon as '\\:')", Text(|j, v| j.filename = Some(v.to_string()))),
    opt!("directory", [], "directory for the job's files", Text(|j, v| j.spec.directory = Some(PathBuf::from(v)))),
    opt!("nrfiles", ["nr_files"], "number of files per job (>= 1)", Uint(1, u32::MAX, |j, n| j.spec.nrfiles = n)),
    opt!("size", [], "total bytes of the job's files, such as 1g", Size(|j, b| j.spec.size = (b > 0).then_some(b))),
    opt!("io_size", ["io_limit"], "bytes to transfer per loop, such as 1g", Size(|j, b| j.spec.io_size = (b > 0).then_some(b))),
    opt!("offset", [], "start offset in each file, such as 1m", Size(|j, b| j.spec.offset = b)),
    opt!(
        "rw",
        ["readwrite"],
        "I/O pattern: read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite, randtrimwrite",
        Value(set_rw)
    ),
    opt!("rwmixread", [], "percentage of reads in a mixed job (0-100)", Uint(0, 100, |j, n| j.spec.rwmixread = n)),
    opt!("rwmixwrite", [], "percentage of writes in a mixed job (0-100)", Uint(0, 100, |j, n| j.spec.rwmixread = 100 - n)),
    opt!("bs", ["blocksize"], "block size such as 4k, or a read,write pair", Value(set_bs)),
    opt!("bsrange", ["blocksize_range"], "block size range such as 1k-64k, or a read,write pair", Value(set_bsrange)),
    opt!("bssplit", [], "weighted block sizes such as 4k/10:64k/90", Value(set_bssplit)),
    opt!("ioengine", [], "I/O engine name", Value(set_ioengine)),
    opt!("iodepth", [], "I/Os in flight (1-65536)", Uint(1, 65536, |j, n| j.spec.iodepth = n)),
    opt!(
        "iodepth_batch_submit",
        ["iodepth_batch"],
        "I/Os per submit call (0 = all queued)",
        Uint(0, 65536, |j, n| j.spec.engine.iodepth_batch_submit = n)
    ),
    opt!(
        "iodepth_batch_complete_min",
        ["iodepth_batch_complete"],
        "minimum completions to wait for",
        Uint(0, 65536, |j, n| j.spec.engine.iodepth_batch_complete_min = n)
    ),
    opt!("fixedbufs", [], "io_uring: register buffers", Bool(|j, b| j.spec.engine.fixedbufs = b)),
    opt!("registerfiles", [], "io_uring: register files", Bool(|j, b| j.spec.engine.registerfiles = b)),
    opt!("sqthread_poll", [], "io_uring: kernel submission polling thread", Bool(|j, b| j.spec.engine.sqthread_poll = b)),
    opt!("direct", [], "O_DIRECT, bypassing the page cache (0/1)", Bool(|j, b| j.spec.direct = b)),
    opt!("buffered", [], "use the page cache, the inverse of direct (0/1)", Bool(|j, b| j.spec.direct = !b)),
    opt!("sync", [], "open with O_SYNC/O_DSYNC: 0, 1, none, sync, dsync", BareValue(set_sync)),
    opt!("fsync", [], "fsync after every N writes (0 = never)", Uint(0, u32::MAX, |j, n| j.spec.fsync = n)),
    opt!("fdatasync", [], "fdatasync after every N writes (0 = never)", Uint(0, u32::MAX, |j, n| j.spec.fdatasync = n)),
    opt!("end_fsync", [], "fsync when the job ends (0/1)", Bool(|j, b| j.spec.end_fsync = b)),
    opt!("numjobs", [], "parallel clones of the job (>= 1)", Uint(1, MAX_CLONES, |j, n| j.spec.numjobs = n)),
    opt!(
        "runtime",
        ["timeout"],
        "run time limit such as 60 or 2m (default unit s; 0 = none)",
        Time(SEC, |j, d| j.spec.runtime = Some(d).filter(|d| !d.is_zero()))
    ),
    opt!("time_based", [], "run for runtime even when the I/O is done (0/1)", Bool(|j, b| j.spec.time_based = b)),
    opt!("ramp_time", [], "unmeasured warm-up time such as 10 (default unit s)", Time(SEC, |j, d| j.spec.ramp_time = d)),
    opt!("startdelay", [], "delay before the job starts (default unit s)", Time(SEC, |j, d| j.spec.startdelay = d)),
    opt!("loops", [], "repeat the job N times (>= 1)", Uint(1, u32::MAX, |j, n| j.spec.loops = n)),
    opt!("norandommap", [], "random I/O may repeat blocks (0/1)", Bool(|j, b| j.spec.norandommap = b)),
    opt!("randrepeat", [], "same random sequence every run (0/1)", Bool(|j, b| j.spec.randrepeat = b)),
    opt!("randseed", [], "seed of the random generator", Value(set_randseed)),
    opt!("rate", [], "bandwidth cap in bytes/s such as 10m, or a read,write pair", Value(set_rate)),
    opt!("rate_iops", [], "IOPS cap, or a read,write pair", Value(set_rate_iops)),
    opt!("thinktime", [], "pause between I/Os (default unit us)", Time(USEC, |j, d| j.spec.thinktime = d)),
    opt!("invalidate", [], "drop the page cache of the files first (0/1)", Bool(|j, b| j.spec.invalidate = b)),
    opt!("unlink", [], "delete the files when done (0/1)", Bool(|j, b| j.spec.unlink = b)),
    opt!("create_on_open", [], "create files when first opened (0/1)", Bool(|j, b| j.spec.create_on_open = b)),
    opt!("fallocate", [], "preallocation: none, native, posix, keep, 0, 1", Value(set_fallocate)),
    opt!("zero_buffers", [], "write buffers of zeros (0/1)", Bool(|j, b| j.spec.buffer.zero = b)),
    opt!("refill_buffers", [], "new buffer content before every write (0/1)", Bool(|j, b| j.spec.buffer.refill = b)),
    opt!(
        "buffer_compress_percentage",
        [],
        "compressible part of each chunk (0-100)",
        Uint(0, 100, |j, n| j.spec.buffer.compress_percentage = n)
    ),
    opt!("buffer_compress_chunk", [], "chunk size for buffer_compress_percentage, such as 4k", Value(set_compress_chunk)),
    opt!("group_reporting", [], "report clones of a job together (0/1)", Bool(|j, b| j.spec.group_reporting = b)),
    opt!("stonewall", ["wait_for_previous"], "wait for earlier jobs to finish (0/1)", Bool(|j, b| j.spec.stonewall = b)),
    opt!("new_group", [], "start a new reporting group (0/1)", Bool(|j, b| j.spec.new_group = b)),
    opt!("write_iolog", [], "log every I/O to this file", Text(|j, v| j.spec.write_iolog = Some(PathBuf::from(v)))),
    opt!("kb_base", [], "what k means in sizes: 1024 (default) or 1000", Value(set_kb_base)),
];

/// Apply option `name` (from any table) to `j` as a job file line would:
/// the option tests' one way in.
#[cfg(test)]
pub(super) fn apply_for_test(j: &mut JobState, name: &str, v: &str) -> Result<(), String> {
    find(name).unwrap_or_else(|| panic!("no option {name}")).apply(j, v)
}

#[cfg(test)]
mod tests {
    use super::apply_for_test as apply;
    use super::*;
    use crate::frontend::suggest::edit_distance;
    use crate::model::job::{READ, WRITE};

    #[test]
    fn table_has_unique_names() {
        let mut all: Vec<&str> = all().flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied())).collect();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n);
    }

    #[test]
    fn block_size_forms() {
        let mut j = JobState::new("j");
        apply(&mut j, "bs", "4k,8k").unwrap();
        assert_eq!(j.spec.bs, [BlockSize::Fixed(4096), BlockSize::Fixed(8192)]);
        apply(&mut j, "bs", "16k").unwrap();
        apply(&mut j, "blocksize", ",32k").unwrap();
        assert_eq!(j.spec.bs, [BlockSize::Fixed(16384), BlockSize::Fixed(32768)]);
        apply(&mut j, "bsrange", "1k-4k,2k-8k").unwrap();
        assert_eq!(j.spec.bs[READ], BlockSize::Range { min: 1024, max: 4096 });
        assert_eq!(j.spec.bs[WRITE], BlockSize::Range { min: 2048, max: 8192 });
        assert!(apply(&mut j, "bsrange", "8k-4k").unwrap_err().contains("min <= max"));
        assert!(apply(&mut j, "bs", "0").unwrap_err().contains("> 0"));
        apply(&mut j, "bs", "4k,8k,16k").unwrap();
        assert_eq!(j.spec.bs, [BlockSize::Fixed(4096), BlockSize::Fixed(8192)]);
        assert!(apply(&mut j, "bs", "4k,4k,x").is_err());
        assert!(apply(&mut j, "bs", "4k,4k,4k,4k").unwrap_err().contains("read,write,trim"));
    }

    #[test]
    fn bssplit_fills_missing_percentages() {
        let mut j = JobState::new("j");
        apply(&mut j, "bssplit", "4k/10:64k/50:32k/40").unwrap();
        assert_eq!(j.spec.bs[READ], BlockSize::Split(vec![(4096, 10), (65536, 50), (32768, 40)]));
        apply(&mut j, "bssplit", "4k/10:8k:16k:32k").unwrap();
        assert_eq!(j.spec.bs[WRITE], BlockSize::Split(vec![(4096, 10), (8192, 30), (16384, 30), (32768, 30)]));
        apply(&mut j, "bssplit", "4k:8k:16k").unwrap();
        assert_eq!(j.spec.bs[READ], BlockSize::Split(vec![(4096, 34), (8192, 33), (16384, 33)]));
        assert!(apply(&mut j, "bssplit", "4k/60:8k/60").unwrap_err().contains("add up to 120"));
    }

    #[test]
    fn rates_and_mixes() {
        let mut j = JobState::new("j");
        apply(&mut j, "rate", "1m,2m").unwrap();
        assert_eq!(j.spec.rate, [Some(1 << 20), Some(2 << 20)]);
        apply(&mut j, "rate_iops", ",500").unwrap();
        assert_eq!(j.spec.rate_iops, [None, Some(500)]);
        apply(&mut j, "rwmixwrite", "30").unwrap();
        assert_eq!(j.spec.rwmixread, 70);
        apply(&mut j, "sync", "dsync").unwrap();
        assert_eq!(j.spec.sync, SyncMode::Dsync);
        apply(&mut j, "fallocate", "1").unwrap();
        assert_eq!(j.spec.fallocate, Fallocate::Posix);
        apply(&mut j, "buffered", "1").unwrap();
        assert!(!j.spec.direct);
        apply(&mut j, "runtime", "0").unwrap();
        assert_eq!(j.spec.runtime, None);
        apply(&mut j, "thinktime", "50").unwrap();
        assert_eq!(j.spec.thinktime, Duration::from_micros(50));
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest("iodepht"), Some("iodepth"));
        assert_eq!(suggest("runtim"), Some("runtime"));
        assert_eq!(suggest("completely_unknown"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
    }
}
