//! IOzone's command line: its flags, read as IOzone reads them (getopt:
//! single-letter flags that may be clustered, `-sVALUE` or `-s VALUE`, the
//! `-+x` family, `-F` taking every word up to the next flag), then IOzone's
//! rules applied — auto-mode ranges, the crossover, which tests run — so
//! the plan the runner gets is explicit.
//!
//! Sizes are IOzone's: a bare number is kB (1024 bytes), or k/m/g.

mod family;
#[cfg(test)]
mod tests;

pub use family::{Iozone, LAYOUT};

use crate::frontend::getopt::Words;
use crate::model::iozone::{IozonePlan, Test, Throughput, Units};
use std::path::PathBuf;

/// Auto mode's default ranges (kB) and IOzone's limits.
const AUTO_MIN_FILE_KB: u64 = 64;
const AUTO_MAX_FILE_KB: u64 = 512 * 1024;
const AUTO_MIN_REC_KB: u64 = 4;
const AUTO_MAX_REC_KB: u64 = 16 * 1024;
/// Above this file size auto mode starts at 64 kB records (the crossover).
const CROSSOVER_FILE_KB: u64 = 16 * 1024;
const CROSSOVER_MIN_REC_KB: u64 = 64;
/// The most children `-t` takes.
const MAX_CHILDREN: u32 = 1024;

/// A flag IOzone has that fsbench does not run, with why.
const NOT_SUPPORTED: &[(&str, &str)] = &[
    ("-B", "mmap files"),
    ("-k", "POSIX async I/O without bcopy"),
    ("-K", "noise in the access pattern"),
    ("-D", "msync(MS_ASYNC) of mmap files"),
    ("-G", "msync(MS_SYNC) of mmap files"),
    ("-H", "POSIX async I/O"),
    ("-m", "multiple buffers"),
    ("-p", "cache purge between tests (use fsbench's --cache=cold)"),
    ("-Q", "per-operation offset/latency files (fsbench keeps latency histograms)"),
    ("-V", "a verification pattern"),
    ("-Z", "mixed mmap I/O"),
    ("-W", "file locking"),
    ("-L", "the processor cache line size"),
    ("-S", "the processor cache size"),
    ("-P", "binding to processors"),
    ("-X", "write telemetry files"),
    ("-Y", "read telemetry files"),
    ("-C", "bytes per child"),
    ("-M", "uname in the output"),
    ("-J", "compute cycles between operations"),
    ("-+m", "cluster mode"),
    ("-+d", "diagnostic mode"),
    ("-+x", "a growth factor other than 2"),
    ("-+k", "constant aggregate size over the child sweep"),
    ("-+w", "dedupable data"),
];

/// What was wrong with the command line: the flag and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IozoneError {
    pub flag: String,
    pub message: String,
}

impl std::fmt::Display for IozoneError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "iozone {}: {}", self.flag, self.message)
    }
}

impl std::error::Error for IozoneError {}

fn err(flag: &str, message: impl Into<String>) -> IozoneError {
    IozoneError { flag: flag.to_string(), message: message.into() }
}

fn from_getopt((flag, message): (String, String)) -> IozoneError {
    IozoneError { flag, message }
}

/// The flags as given, before IOzone's rules.
#[derive(Debug, Default)]
struct Flags {
    auto: bool,
    no_crossover: bool,
    tests: Vec<Test>,
    file_sizes: Vec<u64>,
    rec_sizes: Vec<u64>,
    min_file: Option<u64>,
    max_file: Option<u64>,
    min_rec: Option<u64>,
    max_rec: Option<u64>,
    children: Option<u32>,
    lower: Option<u32>,
    upper: Option<u32>,
    pwrite_tests: bool,
    plan: IozonePlan,
    throughput_files: Vec<PathBuf>,
    threads: bool,
    no_stonewall: bool,
    mixed_read_pct: Option<u32>,
    mixed_sequential: bool,
}

/// `64k`, `1m`, `2g`, or a bare number of kB, as kB.
pub fn size_kb(flag: &str, v: &str) -> Result<u64, IozoneError> {
    let bad = || err(flag, format!("'{v}': expected a size in kB, or with a k, m or g suffix (e.g. 64k, 16m)"));
    let t = v.trim();
    let (digits, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_lowercase() {
                'k' => 1,
                'm' => 1024,
                'g' => 1024 * 1024,
                _ => return Err(bad()),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    n.checked_mul(mult).ok_or_else(bad)
}

fn count(flag: &str, v: &str, what: &str) -> Result<u64, IozoneError> {
    v.trim().parse().map_err(|_| err(flag, format!("'{v}': expected {what}")))
}

/// Read IOzone's command line (the words after `iozone`) into a plan.
pub fn parse(args: &[String]) -> Result<IozonePlan, IozoneError> {
    let mut f = Flags::default();
    let mut w = Words::new(args, true);
    while let Some(flag) = w.next_flag().map_err(|(f, _)| {
        err(&f, "expected an IOzone flag such as -a, -s 64m or -i 0 (see iozone -h); fsbench's own flags start with --")
    })? {
        apply(&mut f, &flag, &mut w)?;
        preamble_line(&mut f, &flag);
    }
    f.plan.command_line = std::iter::once("iozone").chain(args.iter().map(|s| s.as_str())).collect::<Vec<_>>().join(" ");
    finish(f)
}

fn apply(f: &mut Flags, flag: &str, w: &mut Words) -> Result<(), IozoneError> {
    match flag {
        "-a" => f.auto = true,
        "-A" => {
            f.auto = true;
            f.no_crossover = true;
            f.tests.extend([Test::Write, Test::Read]);
        }
        "-z" => f.no_crossover = true,
        "-s" => f.file_sizes.push(size_kb(flag, &w.value(flag).map_err(from_getopt)?)?),
        "-r" => f.rec_sizes.push(size_kb(flag, &w.value(flag).map_err(from_getopt)?)?),
        "-n" => f.min_file = Some(size_kb(flag, &w.value(flag).map_err(from_getopt)?)?),
        "-g" => f.max_file = Some(size_kb(flag, &w.value(flag).map_err(from_getopt)?)?),
        "-y" => f.min_rec = Some(size_kb(flag, &w.value(flag).map_err(from_getopt)?)?),
        "-q" => f.max_rec = Some(size_kb(flag, &w.value(flag).map_err(from_getopt)?)?),
        "-i" => {
            let v = w.value(flag).map_err(from_getopt)?;
            let n = count(flag, &v, "a test number 0-12")?;
            let t = Test::from_number(n).ok_or_else(|| {
                err(flag, format!("'{v}': no such test; expected 0 write, 1 read, 2 random, 3 backward, 4 record rewrite, 5 stride, 6 fwrite, 7 fread, 8 mixed, 9 pwrite, 10 pread, 11 pwritev, 12 preadv"))
            })?;
            f.tests.push(t);
        }
        "-f" => f.plan.file = PathBuf::from(w.value(flag).map_err(from_getopt)?),
        "-F" => {
            f.throughput_files = w
                .values_until_flag(flag)
                .map_err(|(f, _)| err(&f, "needs one file name per child"))?
                .into_iter()
                .map(PathBuf::from)
                .collect()
        }
        "-I" => f.plan.direct = true,
        "-o" => f.plan.osync = true,
        "-e" => f.plan.fsync_in_timing = true,
        "-c" => f.plan.close_in_timing = true,
        "-w" => f.plan.keep_files = true,
        "-+n" => f.plan.no_retest = true,
        "-+u" => f.plan.cpu = true,
        "-+B" => f.mixed_sequential = true,
        "-+p" => {
            let v = w.value(flag).map_err(from_getopt)?;
            let p = count(flag, &v, "a percentage of readers, 0-100")?;
            if p > 100 {
                return Err(err(flag, format!("'{v}': expected a percentage of readers, 0-100")));
            }
            f.mixed_read_pct = Some(p as u32);
        }
        "-j" => {
            let v = w.value(flag).map_err(from_getopt)?;
            f.plan.stride = count(flag, &v, "a stride in records (at least 1)")?;
            if f.plan.stride == 0 {
                return Err(err(flag, "0: expected a stride in records (at least 1)"));
            }
        }
        "-E" => f.pwrite_tests = true,
        "-O" => f.plan.units = Units::OpsPerSec,
        "-N" => f.plan.units = Units::UsPerOp,
        "-R" => f.plan.excel = true,
        "-b" => {
            f.plan.excel = true;
            f.plan.excel_file = Some(PathBuf::from(w.value(flag).map_err(from_getopt)?));
        }
        "-U" => f.plan.remount = Some(PathBuf::from(w.value(flag).map_err(from_getopt)?)),
        "-t" => f.children = Some(children(flag, &w.value(flag).map_err(from_getopt)?)?),
        "-l" => f.lower = Some(children(flag, &w.value(flag).map_err(from_getopt)?)?),
        "-u" => f.upper = Some(children(flag, &w.value(flag).map_err(from_getopt)?)?),
        "-T" => f.threads = true,
        "-x" => f.no_stonewall = true,
        other => {
            if let Some((_, why)) = NOT_SUPPORTED.iter().find(|(k, _)| *k == other) {
                return Err(err(other, format!("IOzone's option for {why} is not supported by fsbench (yet)")));
            }
            return Err(err(other, "not an IOzone flag (see iozone -h)"));
        }
    }
    Ok(())
}

/// The line IOzone's preamble prints for a flag just applied, if any.
fn preamble_line(f: &mut Flags, flag: &str) {
    let last = |v: &Vec<u64>| v.last().copied().unwrap_or(0);
    let lines: Vec<String> = match flag {
        "-a" => vec!["Auto Mode".into()],
        "-z" => vec!["Cross over of record size disabled.".into()],
        "-n" => vec![format!("Using minimum file size of {} kilobytes.", f.min_file.unwrap_or(0))],
        "-g" => vec![format!("Using maximum file size of {} kilobytes.", f.max_file.unwrap_or(0))],
        "-y" => vec![format!("Using Minimum Record Size {} kB", f.min_rec.unwrap_or(0))],
        "-q" => vec![format!("Using Maximum Record Size {} kB", f.max_rec.unwrap_or(0))],
        "-s" => vec![format!("File size set to {} kB", last(&f.file_sizes))],
        "-r" => vec![format!("Record Size {} kB", last(&f.rec_sizes))],
        "-R" | "-b" => vec!["Excel chart generation enabled".into()],
        "-O" => vec!["OPS Mode. Output is in operations per second.".into()],
        "-N" => vec!["Microseconds/op Mode. Output is in microseconds per operation.".into()],
        "-+u" => vec!["CPU utilization Resolution = 0.000 seconds.".into(), "CPU utilization Excel chart enabled".into()],
        "-+n" => vec!["No retest option selected".into()],
        "-I" => vec!["O_DIRECT feature enabled".into()],
        "-o" => vec!["SYNC Mode. ".into()],
        "-e" => vec!["Include fsync in write timing".into()],
        "-c" => vec!["Include close in write timing".into()],
        "-w" => vec!["Setting no_unlink".into()],
        "-x" => vec!["Stonewall disabled".into()],
        _ => vec![],
    };
    f.plan.option_lines.extend(lines);
}

fn children(flag: &str, v: &str) -> Result<u32, IozoneError> {
    let n = count(flag, v, &format!("a number of children, 1-{MAX_CHILDREN}"))?;
    if n == 0 || n > MAX_CHILDREN as u64 {
        return Err(err(flag, format!("'{v}': expected a number of children, 1-{MAX_CHILDREN}")));
    }
    Ok(n as u32)
}

/// Doubling steps from `lo` to `hi`, both included when on the way (a `hi`
/// near u64::MAX ends where doubling would overflow, not in a wrap to 0).
fn doublings(lo: u64, hi: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut x = Some(lo.max(1));
    while let Some(n) = x.filter(|&n| n <= hi) {
        v.push(n);
        x = n.checked_mul(2);
    }
    v
}

/// IOzone's rules, applied once so the plan is explicit.
fn finish(mut f: Flags) -> Result<IozonePlan, IozoneError> {
    check_sizes(&f)?;
    let throughput = f.children.is_some() || f.lower.is_some() || f.upper.is_some();
    let auto_flags = f.auto || f.min_file.is_some() || f.max_file.is_some() || f.min_rec.is_some() || f.max_rec.is_some();
    if throughput && auto_flags {
        return Err(err(
            "-t",
            "throughput mode (-t, -l, -u) cannot be combined with auto mode (-a, -A, -n, -g, -y, -q); give -s and -r instead",
        ));
    }
    if throughput && f.plan.remount.is_some() {
        return Err(err("-U", "remounting between tests is not allowed in throughput mode (-t)"));
    }
    if throughput && (f.file_sizes.len() > 1 || f.rec_sizes.len() > 1) {
        return Err(err("-t", "throughput mode runs one file size and one record size: give -s and -r once"));
    }
    if !throughput && !f.throughput_files.is_empty() {
        return Err(err("-F", "one file per child is for throughput mode: add -t N (or use -f for one file)"));
    }

    f.plan.tests = tests_of(&f, throughput)?;

    cells(&mut f, auto_flags)?;

    if throughput {
        f.plan.throughput = Some(throughput_of(&mut f)?);
    }
    Ok(f.plan)
}

/// Sizes IOzone refuses: records above 16m, and zero-sized files or records.
fn check_sizes(f: &Flags) -> Result<(), IozoneError> {
    if let Some(q) = f.max_rec {
        if q > AUTO_MAX_REC_KB {
            return Err(err("-q", format!("{q} kB: the largest record IOzone takes is {AUTO_MAX_REC_KB} kB (16m)")));
        }
    }
    for (flag, v) in [("-r", f.rec_sizes.iter().max()), ("-y", f.min_rec.as_ref())] {
        if let Some(&r) = v {
            if r > AUTO_MAX_REC_KB {
                return Err(err(flag, format!("{r} kB: the largest record IOzone takes is {AUTO_MAX_REC_KB} kB (16m)")));
            }
        }
    }
    for (flag, v) in
        [("-s", f.file_sizes.iter().min()), ("-r", f.rec_sizes.iter().min()), ("-n", f.min_file.as_ref()), ("-y", f.min_rec.as_ref())]
    {
        if v == Some(&0) {
            return Err(err(flag, "0: expected a size of at least 1 kB"));
        }
    }
    Ok(())
}

/// Which tests, in IOzone's order (the order of -i does not matter).
fn tests_of(f: &Flags, throughput: bool) -> Result<Vec<Test>, IozoneError> {
    let mut tests = if f.tests.is_empty() {
        let mut t: Vec<Test> = Test::ALL[..=Test::Fread.number() as usize].to_vec();
        if throughput {
            t.push(Test::Mixed);
        }
        if f.pwrite_tests {
            t.extend([Test::Pwrite, Test::Pread, Test::Pwritev, Test::Preadv]);
        }
        t
    } else {
        f.tests.clone()
    };
    tests.sort();
    tests.dedup();
    if !throughput && tests.contains(&Test::Mixed) {
        if tests.len() == 1 {
            return Err(err("-i", "8: the mixed workload runs only in throughput mode (-t N)"));
        }
        // IOzone prints no column for it without -t.
        tests.retain(|t| *t != Test::Mixed);
    }
    Ok(tests)
}

/// The (file size, record size) cells: auto mode's grid, or the one cell.
fn cells(f: &mut Flags, auto_flags: bool) -> Result<(), IozoneError> {
    let explicit_sizes = f.file_sizes.len() > 1 || f.rec_sizes.len() > 1;
    f.plan.auto = f.auto || explicit_sizes || auto_flags;
    if f.plan.auto {
        let files = match f.file_sizes.len() {
            0 => doublings(f.min_file.unwrap_or(AUTO_MIN_FILE_KB), f.max_file.unwrap_or(AUTO_MAX_FILE_KB)),
            _ => sorted(&f.file_sizes),
        };
        let recs = match f.rec_sizes.len() {
            0 => doublings(f.min_rec.unwrap_or(AUTO_MIN_REC_KB), f.max_rec.unwrap_or(AUTO_MAX_REC_KB)),
            _ => sorted(&f.rec_sizes),
        };
        if files.is_empty() {
            return Err(err("-n", "the smallest file size (-n) is above the largest (-g)"));
        }
        if recs.is_empty() {
            return Err(err("-y", "the smallest record size (-y) is above the largest (-q)"));
        }
        let crossover = !f.no_crossover && f.file_sizes.is_empty() && f.rec_sizes.is_empty() && f.min_rec.is_none() && f.max_rec.is_none();
        f.plan.cells = files
            .iter()
            .flat_map(|&file| {
                let min_rec = if crossover && file > CROSSOVER_FILE_KB { CROSSOVER_MIN_REC_KB } else { 0 };
                recs.iter().filter(move |&&r| r <= file && r >= min_rec).map(move |&r| (file, r))
            })
            .collect();
        if f.plan.cells.is_empty() {
            return Err(err("-r", "every record size is larger than every file size: nothing to run"));
        }
        f.plan.record_axis_kb = recs;
    } else {
        let file = f.file_sizes.first().copied().unwrap_or(512);
        let rec = f.rec_sizes.first().copied().unwrap_or(4);
        if rec > file {
            return Err(err("-r", format!("{rec} kB: the record size is larger than the file size ({file} kB, -s)")));
        }
        f.plan.cells = vec![(file, rec)];
        f.plan.record_axis_kb = vec![rec];
    }

    Ok(())
}

/// Throughput mode's children (-t, or -l to -u) and how they run.
fn throughput_of(f: &mut Flags) -> Result<Throughput, IozoneError> {
    let list = match (f.children, f.lower, f.upper) {
        (Some(n), None, None) => vec![n],
        (n, l, u) => {
            let lo = l.or(n).unwrap_or(1);
            let hi = u.or(n).unwrap_or(lo);
            if lo > hi {
                return Err(err("-l", format!("{lo} children: above the upper bound (-u {hi})")));
            }
            (lo..=hi).collect()
        }
    };
    let most = *list.iter().max().expect("non-empty");
    if !f.throughput_files.is_empty() && (f.throughput_files.len() as u32) < most {
        return Err(err("-F", format!("{} file names for {most} children: give one per child", f.throughput_files.len())));
    }
    Ok(Throughput {
        children: list,
        threads: f.threads,
        stonewall: !f.no_stonewall,
        mixed_read_pct: f.mixed_read_pct,
        mixed_sequential: f.mixed_sequential,
        files: std::mem::take(&mut f.throughput_files),
    })
}

fn sorted(v: &[u64]) -> Vec<u64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v.dedup();
    v
}

/// What the plan asks of this machine, checked when it is about to run
/// (an experiment's target is mounted only then): `-U` needs root and a
/// mount point.
pub fn check_host(plan: &IozonePlan) -> Result<(), IozoneError> {
    if let Some(m) = &plan.remount {
        if !is_mount_point(m) {
            return Err(err("-U", format!("{}: not a mount point; expected the mount point of the file system under test", m.display())));
        }
        // SAFETY: geteuid takes no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err(err("-U", "unmounting and mounting needs root"));
        }
    }
    Ok(())
}

/// A path is a mount point when mountinfo lists it.
fn is_mount_point(p: &std::path::Path) -> bool {
    let Ok(canon) = p.canonicalize() else { return false };
    crate::host::mountinfo::read_mountinfo().iter().any(|m| m.mount_point == canon)
}
