//! Bonnie++ 2.00a's command line: its flags read as its getopt reads them,
//! then its rules applied (default size, chunk, seeks and seekers, the
//! per-character size, the RAM checks), so the plan the runner gets is
//! explicit.
//!
//! Where fsbench differs on purpose: `-r 1G` means 1 GiB (Bonnie++ reads
//! the number and drops the suffix: 1 MiB), with a note saying so; every
//! refusal names its flag and what was expected, where Bonnie++ prints its
//! usage text. `-p` (make or remove the semaphore set) and `-y` are
//! Bonnie++'s, so copies of fsbench and of Bonnie++ can line up together.

mod family;
#[cfg(test)]
mod tests;

pub use family::{Bonnie, LAYOUT};

use crate::frontend::getopt::Words;
use crate::model::bonnie::{BonniePlan, FileKind, FileTests, Seed, SyncMode};
use crate::result::warning::{Code, Warning};
use std::path::PathBuf;

const DEFAULT_CHUNK: u64 = 8192;
const DEFAULT_SEEKS: u64 = 8192;
const DEFAULT_SEEK_PROCS: u64 = 5;
/// MiB of per-character I/O when `-f` gives none: what 2.00a does (its
/// manual says 20).
const DEFAULT_CHAR_MIB: u64 = 3;
const MAX_CONCURRENCY: u32 = 200;
/// Bonnie++ keeps its counts (seeks, runs, files, RAM) in a C int: past
/// it a number means nothing to Bonnie++ either.
const INT_MAX: u64 = i32::MAX as u64;
/// The largest file Linux holds (a file offset is a signed 64-bit number),
/// in MiB.
const MAX_FILE_MIB: u64 = (i64::MAX as u64) >> 20;
/// Seeker threads at most: more would measure the scheduler, not the seeks
/// (Bonnie++'s default is 5).
const MAX_SEEK_PROCS: u64 = 1024;
/// Bytes fsbench holds per file of the file tests before they start: the
/// name (up to 22 characters and its NUL) and its directory and offset in
/// the name table; 8 more when the files get sizes.
const NAME_BYTES: u64 = 23 + 8;
/// The name table's offsets are 32-bit, so it holds at most 4 GiB of names.
const MAX_FILES: u64 = u32::MAX as u64 / 23;
/// Descriptors kept for fsbench itself besides one per `-n` directory.
const SPARE_FDS: u64 = 64;

/// What was wrong with the command line: the flag and what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BonnieError {
    pub flag: String,
    pub message: String,
}

impl std::fmt::Display for BonnieError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bonnie++ {}: {}", self.flag, self.message)
    }
}

impl std::error::Error for BonnieError {}

fn err(flag: &str, message: impl Into<String>) -> BonnieError {
    BonnieError { flag: flag.to_string(), message: message.into() }
}

/// What the command line asks for.
// Made once per command line: boxing the plan buys nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    /// Run the tests `runs` times (the plan of the first run).
    Run { plan: BonniePlan, notes: Vec<Warning> },
    /// `-p N`: make the semaphore set for N copies; `-p -1`: remove it.
    Semaphores(i32),
}

/// The host facts the rules need, so tests can give their own.
pub struct HostFacts {
    /// The machine's RAM (MemTotal), whatever `-r` says: what it can hold.
    pub ram_mib: u64,
    /// The descriptors this process may open (RLIMIT_NOFILE's soft limit).
    pub open_files: u64,
    pub hostname: String,
    pub is_root: bool,
    pub pid: u32,
    pub now_unix: u64,
}

impl HostFacts {
    pub fn current() -> HostFacts {
        HostFacts {
            ram_mib: crate::host::meminfo::read_meminfo().total / (1024 * 1024),
            open_files: crate::host::open_files_limit(),
            hostname: crate::host::kernel::uname().0,
            is_root: crate::host::is_root(),
            pid: std::process::id(),
            now_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        }
    }
}

/// Bytes as the messages say them.
fn mib_text(bytes: u64) -> String {
    crate::units::bytes(bytes)
}

/// A number with Bonnie++'s suffixes: `k` ×1024 (chunk sizes), `g` ×1024 and
/// `t` ×2^20 (sizes in MiB); `m` is accepted as ×1.
fn number(flag: &str, v: &str, what: &str, suffixes: &str) -> Result<u64, BonnieError> {
    let bad = || err(flag, format!("'{v}': expected {what}"));
    let t = v.trim();
    let (digits, mult) = match t.chars().last() {
        Some(c) if c.is_ascii_alphabetic() => {
            let c = c.to_ascii_lowercase();
            if !suffixes.contains(c) {
                return Err(bad());
            }
            let m = match c {
                'k' | 'g' => 1024,
                't' => 1024 * 1024,
                _ => 1,
            };
            (&t[..t.len() - 1], m)
        }
        _ => (t, 1),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    n.checked_mul(mult).ok_or_else(bad)
}

/// A signed field of `-n` (max may be -1 or -2).
fn signed(flag: &str, v: &str, what: &str) -> Result<i64, BonnieError> {
    let t = v.trim();
    let (digits, mult) = match t.chars().last() {
        Some('k' | 'K') => (&t[..t.len() - 1], 1024),
        Some('m' | 'M') => (&t[..t.len() - 1], 1024 * 1024),
        _ => (t, 1),
    };
    digits.parse::<i64>().ok().and_then(|n| n.checked_mul(mult)).ok_or_else(|| err(flag, format!("'{v}': expected {what}")))
}

#[derive(Default)]
struct Flags {
    dir: Option<PathBuf>,
    size: Option<String>,
    files: Option<String>,
    machine: Option<String>,
    ram: Option<String>,
    runs: Option<u32>,
    user: Option<String>,
    group: Option<String>,
    quiet: bool,
    fast: Option<Option<u64>>,
    fsync: bool,
    semaphores: Option<i32>,
    sync: Option<SyncMode>,
    seed: Option<Seed>,
    direct: bool,
    concurrency: Option<u32>,
}

/// Read Bonnie++'s command line (the words after `bonnie++`).
pub fn parse(args: &[String], host: &HostFacts) -> Result<Invocation, BonnieError> {
    let mut f = Flags::default();
    let mut w = Words::new(args, false);
    let from = |(flag, message): (String, String)| BonnieError { flag, message };
    loop {
        let flag = match w.next_flag() {
            Ok(Some(flag)) => flag,
            Ok(None) => break,
            Err((word, _)) => {
                return Err(err(&word, "expected a Bonnie++ flag such as -d DIR, -s SIZE or -n NUM (fsbench's own flags start with --)"))
            }
        };
        let flag = flag.as_str();
        match flag {
            "-d" => f.dir = Some(PathBuf::from(w.value(flag).map_err(from)?)),
            "-s" => f.size = Some(w.value(flag).map_err(from)?),
            "-n" => f.files = Some(w.value(flag).map_err(from)?),
            "-m" => f.machine = Some(w.value(flag).map_err(from)?),
            "-r" => f.ram = Some(w.value(flag).map_err(from)?),
            "-x" => {
                let v = w.value(flag).map_err(from)?;
                let n = number(flag, &v, "a number of runs (at least 1)", "")?;
                let max = crate::model::MAX_RUNS;
                if n == 0 || n > u64::from(max) {
                    return Err(err(flag, format!("'{v}': expected a number of runs, 1 to {max} (as --repeat)")));
                }
                f.runs = Some(n as u32);
            }
            "-u" => f.user = Some(w.value(flag).map_err(from)?),
            "-g" => f.group = Some(w.value(flag).map_err(from)?),
            "-q" => f.quiet = true,
            "-f" => {
                f.fast = Some(match w.attached_value() {
                    Some(v) => Some(number(flag, &v, "MiB of per-character I/O, attached as in -f20 (a bare -f skips it)", "gm")?),
                    None => None,
                })
            }
            "-b" => f.fsync = true,
            "-D" => f.direct = true,
            "-p" => {
                let v = w.value(flag).map_err(from)?;
                let n: i32 = v.trim().parse().ok().filter(|&n| n == -1 || n > 0).ok_or_else(|| {
                    err(flag, format!("'{v}': expected the number of copies to make the semaphores for, or -1 to remove them"))
                })?;
                f.semaphores = Some(n);
            }
            "-y" => {
                let v = w.value(flag).map_err(from)?;
                f.sync = Some(match v.as_str() {
                    "s" => SyncMode::Semaphore,
                    "p" => SyncMode::Prompt,
                    _ => return Err(err(flag, format!("'{v}': expected s (semaphores made with -p) or p (prompt)"))),
                });
            }
            "-z" => {
                let v = w.value(flag).map_err(from)?;
                let n: u32 = v.trim().parse().map_err(|_| err(flag, format!("'{v}': expected a random seed, 0-4294967295")))?;
                f.seed = Some(Seed::Number(n));
            }
            "-Z" => f.seed = Some(Seed::File(PathBuf::from(w.value(flag).map_err(from)?))),
            "-c" => {
                let v = w.value(flag).map_err(from)?;
                let n = number(flag, &v, "a concurrency of 1-200", "")?;
                if !(1..=MAX_CONCURRENCY as u64).contains(&n) {
                    return Err(err(flag, format!("'{v}': expected a concurrency of 1-200")));
                }
                f.concurrency = Some(n as u32);
            }
            "-Y" => return Err(err(flag, "Bonnie++ 2.00a has no -Y; to line copies up use -p N once, then -y s in each copy")),
            other => return Err(err(other, "not a Bonnie++ 2.00a flag (it has -d -s -n -m -r -x -u -g -q -f -b -p -y -z -Z -D -c)")),
        }
    }
    finish(f, host)
}

fn finish(f: Flags, host: &HostFacts) -> Result<Invocation, BonnieError> {
    let (uid, gid) = user_and_group(f.user.as_deref(), f.group.as_deref(), host.is_root)?;
    if let Some(n) = f.semaphores {
        return Ok(Invocation::Semaphores(n));
    }
    let mut notes = Vec::new();
    let ram_mib = ram_size(f.ram.as_deref(), host, &mut notes)?;
    let concurrency = f.concurrency.unwrap_or(1);

    let (size_mib, chunk, seeks, seek_procs, size_text) = size_spec(f.size.as_deref(), ram_mib)?;
    if size_mib > 0 && ram_mib > 0 && size_mib * (concurrency as u64) < 2 * ram_mib {
        return Err(err(
            "-s",
            format!(
                "File size should be double RAM for good results, RAM is {ram_mib}M: expected at least {} MiB{}, or -r with a smaller RAM size (-r 0 turns the check off)",
                (2 * ram_mib).div_ceil(concurrency as u64),
                if concurrency > 1 { format!(" per copy at -c {concurrency}") } else { String::new() }
            ),
        ));
    }

    if size_mib > 0 {
        check_seek_memory(seek_procs, chunk, host)?;
    }
    let char_mib = match f.fast {
        None => Some(DEFAULT_CHAR_MIB),
        Some(None) => None,
        Some(Some(n)) if size_mib > 0 && n > size_mib => {
            return Err(err(
                "-f",
                format!("-f{n}: expected at most the -s size ({size_mib} MiB): the per-character tests write and read within the file"),
            ))
        }
        Some(Some(n)) => Some(n),
    };

    let files = file_tests_checked(f.files.as_deref(), ram_mib, host)?;

    let seed = f.seed.unwrap_or(Seed::Number((host.pid as u64 ^ host.now_unix) as u32));
    let plan = BonniePlan {
        dir: f.dir.unwrap_or_else(|| PathBuf::from(".")),
        size_mib,
        chunk,
        seeks,
        seek_procs,
        size_text,
        char_mib,
        files,
        ram_mib,
        fsync: f.fsync,
        direct: f.direct,
        quiet: f.quiet,
        machine: f.machine.unwrap_or_else(|| host.hostname.clone()),
        concurrency,
        seed,
        uid,
        gid,
        sync: f.sync,
        run_index: 0,
        runs: f.runs.unwrap_or(1),
    };
    Ok(Invocation::Run { plan, notes })
}

/// `-r`: the RAM size in MiB the checks use (the machine's by default).
fn ram_size(ram: Option<&str>, host: &HostFacts, notes: &mut Vec<Warning>) -> Result<u64, BonnieError> {
    Ok(match ram {
        None => host.ram_mib,
        Some(v) => {
            let n = number("-r", v, "the RAM size in MiB (0 turns the checks off; g and t suffixes allowed)", "mgt")?;
            if n > INT_MAX {
                return Err(err("-r", format!("'{v}': expected the RAM size in MiB, at most {INT_MAX} (Bonnie++ holds it in an int)")));
            }
            if v.trim().ends_with(['g', 'G', 't', 'T']) {
                let digits = v.trim().trim_end_matches(char::is_alphabetic);
                notes.push(Warning::new(
                    Code::DiffersFromTool,
                    format!("-r {v}: fsbench reads this as {n} MiB; Bonnie++ 2.00a ignores the suffix and would take {digits} MiB"),
                ));
            }
            n
        }
    })
}

/// `-s size[:chunk[:seeks[:procs]]]`: the size in MiB, the chunk in bytes,
/// the seeks, the seeker processes, and the size as Bonnie++ labels it.
fn size_spec(size: Option<&str>, ram_mib: u64) -> Result<(u64, u64, u64, u64, String), BonnieError> {
    Ok(match size {
        None => {
            // max(300, 2 × RAM) MiB, rounded up to a whole GiB when the
            // remainder is over 512 MiB.
            let mut s = (2 * ram_mib).max(300);
            if s % 1024 > 512 {
                s = s.div_ceil(1024) * 1024;
            }
            (s, DEFAULT_CHUNK, DEFAULT_SEEKS, DEFAULT_SEEK_PROCS, size_label(s))
        }
        Some(v) => {
            let parts: Vec<&str> = v.split(':').collect();
            if parts.len() > 4 {
                return Err(err("-s", format!("'{v}': expected size[:chunk[:seeks[:procs]]]")));
            }
            let size = number("-s", parts[0], "a size in MiB (g and t suffixes allowed), 0 to skip the IO tests", "mgt")?;
            if size > MAX_FILE_MIB {
                return Err(err("-s", format!("size '{}': expected at most {MAX_FILE_MIB} MiB (the largest file Linux holds)", parts[0])));
            }
            let chunk = match parts.get(1).filter(|p| !p.is_empty()) {
                None => DEFAULT_CHUNK,
                Some(c) => {
                    let n = number("-s", c, "a chunk size in bytes (or with k)", "k")?;
                    if !n.is_power_of_two() || !(256..=1 << 20).contains(&n) {
                        return Err(err("-s", format!("chunk size '{c}': expected a power of two from 256 to 1048576 bytes (1k is 1024)")));
                    }
                    n
                }
            };
            let seeks = match parts.get(2).filter(|p| !p.is_empty()) {
                None => DEFAULT_SEEKS,
                Some(c) => {
                    let n = number("-s", c, "a number of seeks", "k")?;
                    if n > INT_MAX {
                        return Err(err("-s", format!("seeks '{c}': expected at most {INT_MAX} (Bonnie++ counts them in an int)")));
                    }
                    n
                }
            };
            let procs = match parts.get(3).filter(|p| !p.is_empty()) {
                None => DEFAULT_SEEK_PROCS,
                Some(c) => {
                    let n = number("-s", c, "a number of seeker processes (at least 1)", "")?;
                    if !(1..=MAX_SEEK_PROCS).contains(&n) {
                        return Err(err(
                            "-s",
                            format!("seekers '{c}': expected 1 to {MAX_SEEK_PROCS} seeker processes (each is a thread of fsbench; Bonnie++'s default is 5)"),
                        ));
                    }
                    n
                }
            };
            (size, chunk, seeks, procs, size_label(size))
        }
    })
}

/// `-n`: the file tests, refused when they would not fit in RAM or on disk.
fn file_tests_checked(files: Option<&str>, ram_mib: u64, host: &HostFacts) -> Result<Option<FileTests>, BonnieError> {
    let files = match files {
        None => Some(file_tests("16")?),
        Some(v) => {
            let t = file_tests(v)?;
            (t.num_k > 0).then_some(t)
        }
    };
    if let Some(t) = &files {
        if ram_mib > 0 && t.num_k > 8 * ram_mib {
            return Err(err(
                "-n",
                format!(
                    "When testing {}K of files in {ram_mib} MiB of RAM the system is likely to start paging Bonnie++ data and the test will give suspect results, use less files or install more RAM for this test (at most {}K files for {ram_mib} MiB; -r 0 turns the check off)",
                    t.num_k,
                    8 * ram_mib
                ),
            ));
        }
    }
    if let Some(t) = &files {
        check_file_tests_fit(t, host)?;
    }
    Ok(files)
}

/// Half the machine's RAM: what fsbench lets one run's own tables take
/// (None when /proc/meminfo could not be read).
fn memory_budget(host: &HostFacts) -> Option<u64> {
    (host.ram_mib > 0).then_some((host.ram_mib << 20) / 2)
}

/// Each seeker holds a chunk of its own: together they must fit in memory.
fn check_seek_memory(procs: u64, chunk: u64, host: &HostFacts) -> Result<(), BonnieError> {
    let Some(budget) = memory_budget(host) else { return Ok(()) };
    if procs * chunk > budget {
        return Err(err(
            "-s",
            format!(
                "{procs} seekers with a {chunk}-byte chunk each hold {}: expected at most {} on this machine ({} of RAM); use fewer seekers or a smaller chunk",
                mib_text(procs * chunk),
                mib_text(budget),
                mib_text(host.ram_mib << 20)
            ),
        ));
    }
    Ok(())
}

/// The file tests' names are drawn before they start and held in memory;
/// each directory is held open. Both must fit on this machine.
fn check_file_tests_fit(t: &FileTests, host: &HostFacts) -> Result<(), BonnieError> {
    let per_file = NAME_BYTES + if t.kind == FileKind::Files && t.max_size > 0 { 8 } else { 0 };
    if let Some(budget) = memory_budget(host) {
        let need = t.count() * per_file;
        if need > budget {
            return Err(err(
                "-n",
                format!(
                    "{}: {} files need {} for their names before the tests start: expected at most {} (×1024 files) on this machine ({} of RAM)",
                    t.num_k,
                    t.count(),
                    mib_text(need),
                    budget / per_file / 1024,
                    mib_text(host.ram_mib << 20)
                ),
            ));
        }
    }
    let fds = host.open_files.saturating_sub(SPARE_FDS);
    if t.dirs > fds {
        return Err(err(
            "-n",
            format!(
                "{} directories: expected at most {fds}: fsbench holds each open and this process may open {} files (ulimit -n)",
                t.dirs, host.open_files
            ),
        ));
    }
    Ok(())
}

/// The size as Bonnie++ labels it: `300M`, `2G` (whole GiB).
fn size_label(mib: u64) -> String {
    if mib > 0 && mib % 1024 == 0 {
        format!("{}G", mib / 1024)
    } else {
        format!("{mib}M")
    }
}

/// `-n num[:max[:min[:dirs[:chunk]]]]`.
fn file_tests(v: &str) -> Result<FileTests, BonnieError> {
    let parts: Vec<&str> = v.split(':').collect();
    if parts.len() > 5 {
        return Err(err("-n", format!("'{v}': expected num[:max[:min[:dirs[:chunk]]]]")));
    }
    let field = |i: usize| parts.get(i).copied().filter(|p| !p.is_empty());
    let num_k = number("-n", parts[0], "a number of files in units of 1024 (0 skips the file tests)", "")?;
    if num_k > MAX_FILES / 1024 {
        return Err(err(
            "-n",
            format!(
                "'{}': expected at most {} (×1024 files: fsbench's table of their names holds at most 4 GiB)",
                parts[0],
                MAX_FILES / 1024
            ),
        ));
    }
    let max = match field(1) {
        None => 0,
        Some(m) => signed("-n", m, "a maximum file size in bytes, -1 (hard links) or -2 (symbolic links)")?,
    };
    let min = match field(2) {
        None => 0,
        Some(m) => signed("-n", m, "a minimum file size in bytes")?,
    };
    let kind = match max {
        -1 => FileKind::HardLinks,
        -2 => FileKind::SymLinks,
        m if m >= 0 => FileKind::Files,
        _ => return Err(err("-n", format!("max '{}': expected a size in bytes, -1 (hard links) or -2 (symbolic links)", parts[1]))),
    };
    if min < 0 {
        return Err(err("-n", format!("min '{}': expected a size in bytes", parts[2])));
    }
    if kind == FileKind::Files && min > max {
        return Err(err("-n", format!("'{v}': min {min} is larger than max {max}; expected min <= max")));
    }
    let dirs = match field(3) {
        None => 1,
        Some(d) => {
            let n = number("-n", d, "a number of directories (at least 1)", "")?;
            if n == 0 {
                return Err(err("-n", format!("directories '{d}': expected at least 1")));
            }
            if num_k > 0 && n > num_k * 1024 {
                return Err(err("-n", format!("directories '{d}': expected at most the number of files ({})", num_k * 1024)));
            }
            n
        }
    };
    let chunk = match field(4) {
        None => DEFAULT_CHUNK,
        Some(c) => {
            let n = number("-n", c, "a chunk size in bytes (or with k)", "k")?;
            if !n.is_power_of_two() || !(256..=1 << 20).contains(&n) {
                return Err(err("-n", format!("chunk size '{c}': expected a power of two from 256 to 1048576 bytes")));
            }
            n
        }
    };
    Ok(FileTests { num_k, kind, max_size: max.max(0) as u64, min_size: min as u64, dirs, chunk })
}

/// `-u user[:group]` and `-g group` as (uid, gid). As root one of them is
/// required, as Bonnie++ requires it (`-u root` runs as root). A user given
/// by name without a group takes the user's primary group; by number,
/// `nogroup`.
fn user_and_group(user: Option<&str>, group: Option<&str>, is_root: bool) -> Result<(u32, u32), BonnieError> {
    // SAFETY: getuid/getgid take no arguments and cannot fail.
    let (mut uid, mut gid) = unsafe { (libc::getuid(), libc::getgid()) };
    if is_root && user.is_none() && group.is_none() {
        return Err(err("-u", "running as root: give the user the tests run as, as Bonnie++ requires (-u root to run them as root)"));
    }
    let (user, user_group) = match user {
        Some(u) => match u.split_once(':') {
            Some((a, b)) => (Some(a), Some(b)),
            None => (Some(u), None),
        },
        None => (None, None),
    };
    if let Some(u) = user {
        let (id, primary) = if let Ok(n) = u.parse::<u32>() {
            (n, crate::host::users::group_id("nogroup").unwrap_or(65534))
        } else {
            crate::host::users::user_ids(u).ok_or_else(|| err("-u", format!("Can't find user {u}: expected a user name or number")))?
        };
        uid = id;
        gid = primary;
    }
    if let Some(g) = user_group.or(group) {
        let flag = if user_group.is_some() { "-u" } else { "-g" };
        gid = match g.parse::<u32>() {
            Ok(n) => n,
            Err(_) => crate::host::users::group_id(g)
                .ok_or_else(|| err(flag, format!("Can't find group {g}: expected a group name or number")))?,
        };
    }
    Ok((uid, gid))
}
