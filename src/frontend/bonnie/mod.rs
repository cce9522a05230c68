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
use std::path::PathBuf;

const DEFAULT_CHUNK: u64 = 8192;
const DEFAULT_SEEKS: u64 = 8192;
const DEFAULT_SEEK_PROCS: u64 = 5;
/// MiB of per-character I/O when `-f` gives none: what 2.00a does (its
/// manual says 20).
const DEFAULT_CHAR_MIB: u64 = 3;
const MAX_CONCURRENCY: u32 = 200;

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
    Run { plan: BonniePlan, notes: Vec<String> },
    /// `-p N`: make the semaphore set for N copies; `-p -1`: remove it.
    Semaphores(i32),
}

/// The host facts the rules need, so tests can give their own.
pub struct HostFacts {
    pub ram_mib: u64,
    pub hostname: String,
    pub is_root: bool,
    pub pid: u32,
    pub now_unix: u64,
}

impl HostFacts {
    pub fn current() -> HostFacts {
        HostFacts {
            ram_mib: crate::host::meminfo::read_meminfo().total / (1024 * 1024),
            hostname: crate::host::kernel::uname().0,
            is_root: crate::host::is_root(),
            pid: std::process::id(),
            now_unix: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        }
    }
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
                if n == 0 || n > u32::MAX as u64 {
                    return Err(err(flag, format!("'{v}': expected a number of runs (at least 1)")));
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
    let ram_mib = match &f.ram {
        None => host.ram_mib,
        Some(v) => {
            let n = number("-r", v, "the RAM size in MiB (0 turns the checks off; g and t suffixes allowed)", "mgt")?;
            if v.trim().ends_with(['g', 'G', 't', 'T']) {
                let digits = v.trim().trim_end_matches(char::is_alphabetic);
                notes.push(format!("-r {v}: fsbench reads this as {n} MiB; Bonnie++ 2.00a ignores the suffix and would take {digits} MiB"));
            }
            n
        }
    };
    let concurrency = f.concurrency.unwrap_or(1);

    // -s size[:chunk[:seeks[:procs]]]
    let (size_mib, chunk, seeks, seek_procs, size_text) = match &f.size {
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
                Some(c) => number("-s", c, "a number of seeks", "k")?,
            };
            let procs = match parts.get(3).filter(|p| !p.is_empty()) {
                None => DEFAULT_SEEK_PROCS,
                Some(c) => {
                    let n = number("-s", c, "a number of seeker processes (at least 1)", "")?;
                    if n == 0 {
                        return Err(err("-s", format!("seekers '{c}': expected a number of seeker processes (at least 1)")));
                    }
                    n
                }
            };
            (size, chunk, seeks, procs, size_label(size))
        }
    };
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

    let files = match f.files.as_deref() {
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

    let seed = f.seed.unwrap_or(Seed::Number((host.pid as u64 ^ host.now_unix) as u32));
    let plan = BonniePlan {
        dir: f.dir.unwrap_or_else(|| PathBuf::from(".")),
        size_mib,
        chunk,
        seeks,
        seek_procs,
        size_text,
        char_mib: match f.fast {
            None => Some(DEFAULT_CHAR_MIB),
            Some(None) => None,
            Some(Some(n)) => Some(n),
        },
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
