//! Options beyond the common ones: where random offsets land
//! (`random_distribution`, `rw=MODE:N`, `blockalign`, strided zones), how
//! clones and files are placed (`offset_increment`, `filesize`,
//! `filename_format`), when a job starts and stops (`wait_for`,
//! `number_ios`, `fill_device`), how its threads are placed (`cpus_allowed`,
//! `prio`), and the bookkeeping options fsbench accepts without changing
//! what it measures, each with a one-time note where it measures
//! differently from fio.

use super::options::Kind::{Bool, Size, Text, Time, Uint, Value};
use super::options::{block_size, expected, opt, per_direction, store, JobState, OptDef, MSEC, USEC};
use crate::model::job_misc::{Distribution, ExitWhat, Fadvise, RateProcess, Sequencer};
use crate::result::warning::{Code, Warning};
use crate::units::{clip, parse_size, parse_u32, parse_uint};

/// Record a note once per job (the parse later prints each distinct one once).
fn note(j: &mut JobState, code: Code, text: String) {
    let w = Warning::new(code, text);
    if !j.notes.contains(&w) {
        j.notes.push(w);
    }
}

/// An option that changes nothing fsbench measures: accepted; `why` says
/// how fsbench differs, if it does.
fn accepted(j: &mut JobState, option: &str, why: &str) {
    if !why.is_empty() {
        note(j, Code::IgnoredOption, format!("option '{option}' is accepted: {why}"));
    }
}

const HISTOGRAMS: &str = "fsbench always measures every latency into full histograms, so it changes nothing";

/// The `:N` of `rw=MODE:N` (`None` when absent). For sequential modes N is a
/// size added after every I/O (negative: backwards); for random ones it is
/// how many I/Os share one random offset.
pub(super) fn set_rw_suffix(j: &mut JobState, n: Option<&str>) -> Result<(), String> {
    j.spec.misc.seq_skip = 0;
    j.spec.misc.rand_every = 1;
    let Some(n) = n.map(str::trim) else { return Ok(()) };
    if j.spec.rw.is_random() {
        j.spec.misc.rand_every = parse_u32(n, 1, u32::MAX).map_err(|_| expected("randread:N with N >= 1 I/Os per random offset", n))?;
    } else {
        let (neg, body) = match n.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, n),
        };
        let b = parse_size(body, j.kb_base).map_err(|_| expected("read:SIZE such as read:8k or read:-8k", n))?;
        let b = i64::try_from(b).map_err(|_| expected("a skip below 8 EiB", n))?;
        j.spec.misc.seq_skip = if neg { -b } else { b };
    }
    Ok(())
}

/// fio's `steadystate=METRIC:LIMIT`: the limit is a percentage of the
/// window's mean when it ends in `%`; otherwise IOPS, or a bandwidth in
/// bytes/s that takes size suffixes (`bw:10m`).
fn set_steadystate(j: &mut JobState, v: &str) -> Result<(), String> {
    use crate::model::job_steady::SteadyMetric;
    const FORM: &str = "iops:N, iops_slope:N, bw:N or bw_slope:N, N a number or a percentage such as iops:5%";
    let Some((metric, limit)) = v.split_once(':') else { return Err(expected(FORM, v)) };
    let (metric, slope) = match metric.trim().to_ascii_lowercase().as_str() {
        "iops" => (SteadyMetric::Iops, false),
        "iops_slope" => (SteadyMetric::Iops, true),
        "bw" => (SteadyMetric::Bw, false),
        "bw_slope" => (SteadyMetric::Bw, true),
        _ => return Err(expected(FORM, v)),
    };
    let limit = limit.trim();
    let (limit, percent) = match limit.strip_suffix('%') {
        Some(n) => (percent_f(n, "a percentage such as iops:5%")?, true),
        None if metric == SteadyMetric::Iops => (percent_f(limit, "an IOPS limit such as iops:50")?, false),
        None => (parse_size(limit, j.kb_base).map_err(|_| expected("a bandwidth limit such as bw:10m (bytes/s)", limit))? as f64, false),
    };
    if limit < 0.0 {
        return Err(expected("a limit of 0 or more", v));
    }
    let s = &mut j.spec.misc.steady;
    (s.metric, s.slope, s.percent, s.limit) = (metric, slope, percent, limit);
    Ok(())
}

fn percent_f(s: &str, what: &str) -> Result<f64, String> {
    let x: f64 = s.trim().parse().map_err(|_| expected(what, s))?;
    if !x.is_finite() {
        return Err(expected(what, s));
    }
    Ok(x)
}

/// `zipf:1.2`, `pareto:0.9`, `normal:10`, each with an optional `:CENTER`
/// in [0, 1); `zoned:50/5:30/15:20/80`; `zoned_abs:60/20g:40/100g`; `random`.
/// Zoned forms may give reads and writes apart with a comma.
fn parse_distribution(j: &JobState, v: &str) -> Result<[Distribution; 2], String> {
    let form = "random, zipf:THETA, pareto:H, normal:DEV, zoned:PCT/PCT:... or zoned_abs:PCT/SIZE:...";
    let (kind, rest) = match v.split_once(':') {
        Some((k, r)) => (k.trim().to_ascii_lowercase(), Some(r)),
        None => (v.trim().to_ascii_lowercase(), None),
    };
    let center = |parts: &[&str]| -> Result<f64, String> {
        match parts.get(1) {
            None => Ok(0.0),
            Some(c) => {
                let c = percent_f(c, "a center from 0 to 1 such as zipf:1.2:0.5")?;
                if (0.0..1.0).contains(&c) {
                    Ok(c)
                } else {
                    Err(expected("a center in [0, 1) such as zipf:1.2:0.5", v))
                }
            }
        }
    };
    let one = |d: Distribution| Ok([d.clone(), d]);
    match (kind.as_str(), rest) {
        ("random", None) => one(Distribution::Random),
        ("zipf", Some(r)) => {
            let p: Vec<&str> = r.split(':').collect();
            let theta = percent_f(p[0], "zipf:THETA with THETA > 0 and != 1, such as zipf:1.2")?;
            if theta <= 0.0 || theta == 1.0 || p.len() > 2 {
                return Err(expected("zipf:THETA with THETA > 0 and != 1, such as zipf:1.2", v));
            }
            one(Distribution::Zipf { theta, center: center(&p)? })
        }
        ("pareto", Some(r)) => {
            let p: Vec<&str> = r.split(':').collect();
            let h = percent_f(p[0], "pareto:H with 0 < H < 1, such as pareto:0.9")?;
            if h <= 0.0 || h >= 1.0 || p.len() > 2 {
                return Err(expected("pareto:H with 0 < H < 1, such as pareto:0.9", v));
            }
            one(Distribution::Pareto { h, center: center(&p)? })
        }
        ("normal" | "gauss", Some(r)) => {
            let p: Vec<&str> = r.split(':').collect();
            let dev = percent_f(p[0], "normal:DEV with DEV a percent of the range from 0 to 100, such as normal:10")?;
            if !(0.0..=100.0).contains(&dev) || dev == 0.0 || p.len() > 2 {
                return Err(expected("normal:DEV with 0 < DEV <= 100 (percent of the range), such as normal:10", v));
            }
            one(Distribution::Normal { dev_percent: dev, center: center(&p)? })
        }
        ("zoned", Some(r)) => {
            let zones = per_direction(r, "zones such as 50/5:30/15:20/80", |s| {
                // An empty range (`20/`) is what the zones before it leave.
                let mut z = parse_zones(s, |x| if x.trim().is_empty() { Ok(None) } else { parse_u32(x, 0, 100).map(Some) })?;
                let given: u32 = z.iter().filter_map(|x| x.1).sum();
                let z: Vec<(u32, u32)> = z.drain(..).map(|(p, r)| (p, r.unwrap_or(100u32.saturating_sub(given)))).collect();
                let range: u32 = z.iter().map(|x| x.1).sum();
                if range > 100 {
                    return Err(format!("expected zones whose range percentages add up to at most 100, got '{}' ({range})", clip(s)));
                }
                Ok(Distribution::Zoned(z))
            })?;
            Ok(fill_sides(zones))
        }
        ("zoned_abs", Some(r)) => {
            let kb = j.kb_base;
            let zones =
                per_direction(r, "zones such as 60/20g:40/100g", |s| Ok(Distribution::ZonedAbs(parse_zones(s, |x| parse_size(x, kb))?)))?;
            Ok(fill_sides(zones))
        }
        _ => Err(expected(form, v)),
    }
}

fn fill_sides(d: [Option<Distribution>; 2]) -> [Distribution; 2] {
    let [r, w] = d;
    [r.unwrap_or(Distribution::Random), w.unwrap_or(Distribution::Random)]
}

/// `PCT/X:PCT/X:...` whose access percentages add up to 100.
fn parse_zones<T>(s: &str, mut x: impl FnMut(&str) -> Result<T, String>) -> Result<Vec<(u32, T)>, String> {
    let mut out = Vec::new();
    for part in s.split(':') {
        let (p, v) = part.split_once('/').ok_or_else(|| expected("zones such as 50/5:50/95 (ACCESS%/RANGE)", part))?;
        out.push((parse_u32(p, 0, 100)?, x(v)?));
    }
    let total: u32 = out.iter().map(|z| z.0).sum();
    if total != 100 {
        return Err(format!("expected zones whose access percentages add up to 100, got '{}' ({total})", clip(s)));
    }
    Ok(out)
}

fn set_distribution(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.misc.distribution = parse_distribution(j, v)?;
    Ok(())
}

/// `1g` or `512m-2g`: each file's size, drawn per file from a range.
fn set_filesize(j: &mut JobState, v: &str) -> Result<(), String> {
    let kb = j.kb_base;
    let (lo, hi) = match v.split_once('-') {
        Some((a, b)) => (parse_size(a, kb)?, parse_size(b, kb)?),
        None => {
            let b = parse_size(v, kb)?;
            (b, b)
        }
    };
    if lo == 0 || lo > hi {
        return Err(expected("a size such as 1g or a range LOW-HIGH with 0 < LOW <= HIGH", v));
    }
    j.spec.misc.filesize = Some((lo, hi));
    Ok(())
}

fn set_sequencer(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.misc.sequencer = match v.trim().to_ascii_lowercase().as_str() {
        "sequential" => Sequencer::Sequential,
        "identical" => Sequencer::Identical,
        _ => return Err(expected("sequential or identical", v)),
    };
    Ok(())
}

fn set_blockalign(j: &mut JobState, v: &str) -> Result<(), String> {
    let a = per_direction(v, "an alignment such as 4k", |s| block_size(j, s).map(Some))?;
    store(&mut j.spec.misc.blockalign, a);
    Ok(())
}

fn set_number_ios(j: &mut JobState, v: &str) -> Result<(), String> {
    let n = parse_uint(v, 0, u64::MAX)?;
    j.spec.misc.number_ios = (n > 0).then_some(n);
    Ok(())
}

fn set_fadvise(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.misc.fadvise = match v.trim().to_ascii_lowercase().as_str() {
        "0" | "none" | "false" | "off" | "no" => Fadvise::None,
        "1" | "true" | "on" | "yes" => Fadvise::ByPattern,
        "sequential" => Fadvise::Sequential,
        "random" => Fadvise::Random,
        "normal" => Fadvise::Normal,
        _ => return Err(expected("one of 0, 1, sequential, random, normal", v)),
    };
    Ok(())
}

fn set_zonemode(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.misc.zonemode_strided = Some(match v.trim().to_ascii_lowercase().as_str() {
        "none" => false,
        "strided" => true,
        "zbd" => return Err(expected("none or strided", v) + " (zoned block devices are not supported)"),
        _ => return Err(expected("none or strided", v)),
    });
    Ok(())
}

/// `0-3,6,8-9` → CPUs 0,1,2,3,6,8,9.
fn parse_cpu_list(v: &str) -> Result<Vec<usize>, String> {
    let form = "CPUs such as 0-3,6";
    let mut out = Vec::new();
    for part in v.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b) = (parse_uint(a, 0, 4095).map_err(|_| expected(form, v))?, parse_uint(b, 0, 4095).map_err(|_| expected(form, v))?);
        if a > b {
            return Err(expected(form, v) + " (a range goes low-high)");
        }
        out.extend(a as usize..=b as usize);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

fn set_cpus_allowed(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.misc.cpus = Some(parse_cpu_list(v)?);
    Ok(())
}

/// `cpumask=0x5` or `cpumask=5`: bit i set means CPU i.
fn set_cpumask(j: &mut JobState, v: &str) -> Result<(), String> {
    let t = v.trim();
    let mask = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).map_err(|_| expected("a CPU bit mask such as 0x3", v))?,
        None => t.parse::<u64>().map_err(|_| expected("a CPU bit mask such as 0x3", v))?,
    };
    if mask == 0 {
        return Err(expected("a CPU bit mask with at least one bit set", v));
    }
    j.spec.misc.cpus = Some((0..64).filter(|i| mask >> i & 1 == 1).collect());
    Ok(())
}

fn set_cpus_policy(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.misc.cpus_split = match v.trim().to_ascii_lowercase().as_str() {
        "shared" => false,
        "split" => true,
        _ => return Err(expected("shared or split", v)),
    };
    Ok(())
}

fn set_prio(j: &mut JobState, n: u32) {
    let class = j.spec.misc.ioprio.map_or(2, |p| p.0);
    j.spec.misc.ioprio = Some((class, n));
}

fn set_prioclass(j: &mut JobState, n: u32) {
    // fio 3.33 logs and sets prioclass=N alone as level 0 (0x4000 for 2).
    let level = j.spec.misc.ioprio.map_or(0, |p| p.1);
    j.spec.misc.ioprio = Some((n, level));
}

fn set_filename_format(j: &mut JobState, v: &str) -> Result<(), String> {
    if v.trim().is_empty() {
        return Err(expected("a file name pattern such as $jobname.$jobnum.$filenum", v));
    }
    j.spec.misc.filename_format = Some(v.to_string());
    Ok(())
}

fn set_fill_device(j: &mut JobState, b: bool) {
    j.spec.misc.fill_device = b;
    if b {
        note(
            j,
            Code::DiffersFromTool,
            "option 'fill_device'': the job writes until the file system reports no space (ENOSPC), which ends it without an error; its size is the free space"
                .into(),
        );
    }
}

/// errno names fio's `ignore_error` accepts by name (numbers work too).
const ERRNOS: &[(&str, i32)] = &[
    ("EPERM", libc::EPERM),
    ("ENOENT", libc::ENOENT),
    ("EINTR", libc::EINTR),
    ("EIO", libc::EIO),
    ("ENXIO", libc::ENXIO),
    ("E2BIG", libc::E2BIG),
    ("EBADF", libc::EBADF),
    ("EAGAIN", libc::EAGAIN),
    ("ENOMEM", libc::ENOMEM),
    ("EACCES", libc::EACCES),
    ("EFAULT", libc::EFAULT),
    ("EBUSY", libc::EBUSY),
    ("EEXIST", libc::EEXIST),
    ("ENODEV", libc::ENODEV),
    ("EINVAL", libc::EINVAL),
    ("EFBIG", libc::EFBIG),
    ("ENOSPC", libc::ENOSPC),
    ("ESPIPE", libc::ESPIPE),
    ("EROFS", libc::EROFS),
    ("EILSEQ", libc::EILSEQ),
    ("ENODATA", libc::ENODATA),
    ("ETIMEDOUT", libc::ETIMEDOUT),
    ("EOPNOTSUPP", libc::EOPNOTSUPP),
    ("ECANCELED", libc::ECANCELED),
    ("EREMOTEIO", libc::EREMOTEIO),
    ("EDQUOT", libc::EDQUOT),
    ("ENOMEDIUM", libc::ENOMEDIUM),
    ("EMEDIUMTYPE", libc::EMEDIUMTYPE),
    ("EBADMSG", libc::EBADMSG),
];

/// `READ_ERRS,WRITE_ERRS,VERIFY_ERRS`, each a `:` list of errno names or
/// numbers: the errors continue_on_error passes over, per direction.
fn set_ignore_error(j: &mut JobState, v: &str) -> Result<(), String> {
    let form = "errno lists per direction such as EIO:EILSEQ,ENOSPC (READ,WRITE,VERIFY; names or numbers)";
    let parts: Vec<&str> = v.split(',').collect();
    if parts.len() > 3 {
        return Err(expected(form, v));
    }
    for (dir, part) in parts.iter().enumerate().take(2) {
        let mut list = Vec::new();
        for e in part.split(':').map(str::trim).filter(|e| !e.is_empty()) {
            let n = match ERRNOS.iter().find(|(name, _)| name.eq_ignore_ascii_case(e)) {
                Some(&(_, n)) => n,
                None => e
                    .parse::<i32>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| expected(form, v) + &format!(" ('{}' is not an errno fsbench knows)", clip(e)))?,
            };
            list.push(n);
        }
        if !list.is_empty() {
            j.spec.misc.ignore_error[dir] = list;
        }
    }
    Ok(())
}

fn set_continue_on_error(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.misc.continue_on_error = match v.trim().to_ascii_lowercase().as_str() {
        "none" | "0" | "false" | "no" | "off" => [false, false],
        "read" => [true, false],
        "write" => [false, true],
        "io" | "all" | "1" | "true" | "yes" | "on" => [true, true],
        // Verification errors: fsbench's verification (if any) stops at the first mismatch.
        "verify" => [false, false],
        _ => return Err(expected("one of none, read, write, io, verify, all, 0, 1", v)),
    };
    Ok(())
}

fn set_percentile_list(j: &mut JobState, v: &str) -> Result<(), String> {
    for p in v.split(':') {
        let x = percent_f(p, "percentiles such as 50:99:99.9")?;
        if !(0.0..=100.0).contains(&x) {
            return Err(expected("percentiles from 0 to 100 such as 50:99:99.9", v));
        }
    }
    accepted(j, "percentile_list", "fsbench reports its fixed set of percentiles from full histograms");
    Ok(())
}

fn choice(j: &mut JobState, option: &str, v: &str, allowed: &[&str], why: &str) -> Result<(), String> {
    if !allowed.contains(&v.trim().to_ascii_lowercase().as_str()) {
        return Err(expected(&format!("one of {}", allowed.join(", ")), v));
    }
    accepted(j, option, why);
    Ok(())
}

fn set_exit_what(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.misc.exit_what = match v.trim().to_ascii_lowercase().as_str() {
        "group" => ExitWhat::Group,
        "stonewall" => ExitWhat::Stonewall,
        "all" => ExitWhat::All,
        _ => return Err(expected("one of group, stonewall, all", v)),
    };
    Ok(())
}

fn set_rate_process(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.misc.rate_process = match v.trim().to_ascii_lowercase().as_str() {
        "linear" => RateProcess::Linear,
        "poisson" => RateProcess::Poisson,
        _ => return Err(expected("one of linear, poisson", v)),
    };
    Ok(())
}

pub static MISC: &[OptDef] = &[
    opt!("thread", ["threads"], "run clones as threads (fsbench always does)", Bool(|_, _| {})),
    opt!("filesize", [], "size of each file, or a range such as 1m-8m drawn per file", Value(set_filesize)),
    opt!(
        "random_distribution",
        [],
        "random offsets: random, zipf:THETA, pareto:H, normal:DEV, zoned:..., zoned_abs:...",
        Value(set_distribution)
    ),
    opt!("rw_sequencer", [], "with rw=randX:N: sequential or identical offsets between random ones", Value(set_sequencer)),
    opt!("blockalign", ["ba"], "align random offsets to this size, or a read,write pair", Value(set_blockalign)),
    opt!("offset_increment", [], "clone k starts at offset + k * this", Size(|j, b| j.spec.misc.offset_increment = b)),
    opt!("number_ios", [], "stop after this many I/Os (0 = no limit)", Value(set_number_ios)),
    opt!(
        "wait_for",
        [],
        "start after every clone of the named (earlier) job has finished",
        Text(|j, v| j.spec.misc.wait_for = Some(v.trim().to_string()))
    ),
    opt!("fill_device", ["fill_fs"], "write until the file system is full (0/1)", Bool(set_fill_device)),
    opt!("fadvise_hint", [], "posix_fadvise at open: 0, 1 (by pattern), sequential, random, normal", Value(set_fadvise)),
    opt!("zonemode", [], "none or strided", Value(set_zonemode)),
    opt!("zonesize", [], "strided zones: bytes of I/O per zone", Size(|j, b| j.spec.misc.zonesize = b)),
    opt!("zonerange", [], "strided zones: size of a zone", Size(|j, b| j.spec.misc.zonerange = b)),
    opt!("zoneskip", [], "strided zones: bytes skipped after each zone", Size(|j, b| j.spec.misc.zoneskip = b)),
    opt!("cpus_allowed", [], "CPUs the job may run on, such as 0-3,6", Value(set_cpus_allowed)),
    opt!("cpumask", [], "CPUs the job may run on as a bit mask, such as 0x3", Value(set_cpumask)),
    opt!("cpus_allowed_policy", [], "shared (every clone on all CPUs) or split (one CPU per clone)", Value(set_cpus_policy)),
    opt!("prio", [], "I/O priority level 0-7 (ioprio_set)", Uint(0, 7, set_prio)),
    opt!("prioclass", [], "I/O priority class: 1 realtime, 2 best effort, 3 idle", Uint(0, 3, set_prioclass)),
    opt!("filename_format", [], "file names with $jobname, $jobnum, $filenum, $clientuid", Value(set_filename_format)),
    opt!("overwrite", [], "write the files' data before a write job (0/1)", Bool(|j, b| j.spec.misc.overwrite = b)),
    opt!("allow_file_create", [], "0: refuse files that do not exist yet", Bool(|j, b| j.spec.misc.allow_file_create = b)),
    opt!(
        "continue_on_error",
        [],
        "go on after errors listed in ignore_error (default EIO, EILSEQ): none, read, write, io, verify, all",
        Value(set_continue_on_error)
    ),
    opt!("ignore_error", [], "errnos continue_on_error goes past: READ,WRITE,VERIFY lists such as ,ENOSPC", Value(set_ignore_error)),
    opt!("error_dump", [], "dump every error (0/1; fsbench reports the first)", Bool(|_, _| {})),
    opt!(
        "gtod_reduce",
        [],
        "fewer clock reads (accepted; fsbench keeps full histograms)",
        Bool(|j, b| if b {
            accepted(j, "gtod_reduce", HISTOGRAMS)
        })
    ),
    opt!(
        "disable_lat",
        [],
        "skip total latency (accepted; fsbench keeps it)",
        Bool(|j, b| if b {
            accepted(j, "disable_lat", HISTOGRAMS)
        })
    ),
    opt!(
        "disable_clat",
        [],
        "skip completion latency (accepted; fsbench keeps it)",
        Bool(|j, b| if b {
            accepted(j, "disable_clat", HISTOGRAMS)
        })
    ),
    opt!(
        "disable_slat",
        [],
        "skip submission latency (accepted; fsbench keeps it)",
        Bool(|j, b| if b {
            accepted(j, "disable_slat", HISTOGRAMS)
        })
    ),
    opt!(
        "disable_bw_measurement",
        ["disable_bw"],
        "skip bandwidth logging (accepted)",
        Bool(|j, b| if b {
            accepted(j, "disable_bw_measurement", "fsbench always keeps its per-second series")
        })
    ),
    opt!("clat_percentiles", [], "report completion latency percentiles (accepted; always reported)", Bool(|_, _| {})),
    opt!(
        "lat_percentiles",
        [],
        "total latency percentiles (always reported); per-priority figures time the whole I/O",
        Bool(|j, b| j.spec.misc.lat_percentiles = b)
    ),
    opt!("slat_percentiles", [], "report submission latency percentiles (accepted; always reported)", Bool(|_, _| {})),
    opt!("percentile_list", ["percentile"], "percentiles to report such as 50:99:99.9 (accepted)", Value(set_percentile_list)),
    opt!(
        "random_generator",
        [],
        "tausworthe, lfsr, tausworthe64 (accepted; fsbench uses xoshiro256++)",
        Value(|j, v| {
            choice(
        j,
        "random_generator",
        v,
        &["tausworthe", "lfsr", "tausworthe64"],
        "fsbench draws offsets with its own generator (xoshiro256++) and covers every block once per pass through its random map as fio does"
    )
        })
    ),
    opt!("create_serialize", [], "lay out files one at a time (accepted; fsbench always does)", Bool(|_, _| {})),
    opt!(
        "exitall",
        [],
        "when a job ends, stop the jobs exit_what names (fio applies it to every job once one sets it)",
        Bool(|j, b| {
            // fio's exitall sets a process-wide switch whatever its value.
            j.spec.misc.exitall = true;
            if !b {
                note(j, Code::IgnoredOption, "option 'exitall=0' turns exitall on, as in fio 3.33, whose exitall ignores its value".into());
            }
        })
    ),
    opt!(
        "exitall_on_error",
        [],
        "when a job ends on an error, stop the jobs exit_what names",
        Bool(|j, b| j.spec.misc.exitall_on_error = b)
    ),
    opt!(
        "exit_what",
        [],
        "which jobs exitall stops: group (default), stonewall (all running), all (later groups too)",
        Value(set_exit_what)
    ),
    opt!(
        "ratemin",
        ["rate_min"],
        "minimum bandwidth such as 1m, or a read,write pair: below it over a ratecycle the job fails",
        Value(|j, v| {
            let kb = j.kb_base;
            let r = per_direction(v, "bytes per second such as 10m", |s| parse_size(s, kb).map(|b| (b > 0).then_some(b)))?;
            store(&mut j.spec.misc.ratemin, r);
            Ok(())
        })
    ),
    opt!(
        "rate_iops_min",
        [],
        "minimum IOPS, or a read,write pair: below it over a ratecycle the job fails",
        Value(|j, v| {
            let r = per_direction(v, "I/Os per second such as 100", |s| parse_uint(s, 0, u64::MAX).map(|n| (n > 0).then_some(n)))?;
            store(&mut j.spec.misc.rate_iops_min, r);
            Ok(())
        })
    ),
    opt!(
        "ratecycle",
        ["rate_cycle"],
        "the window ratemin and rate_iops_min average over (default 1000, unit ms)",
        Time(MSEC, |j, d| j.spec.misc.ratecycle_ms = d.as_millis().min(u64::MAX as u128) as u64)
    ),
    opt!("rate_process", [], "how rate/rate_iops space I/Os: linear or poisson", Value(set_rate_process)),
    opt!(
        "io_submit_mode",
        [],
        "inline or offload (accepted)",
        Value(|j, v| {
            let m = v.trim().to_ascii_lowercase();
            choice(
                j,
                "io_submit_mode",
                &m,
                &["inline", "offload"],
                if m == "offload" { "I/O is submitted by the job's own thread (inline)" } else { "" },
            )
        })
    ),
    opt!(
        "flow",
        [],
        "weight of the job in its flow: jobs of one flow_id keep their I/O counts in these proportions (0-1000)",
        Uint(0, 1000, |j, n| j.spec.misc.flow = n)
    ),
    opt!("flow_id", [], "the flow the job belongs to (default 0)", Uint(0, u32::MAX, |j, n| j.spec.misc.flow_id = n)),
    opt!(
        "flow_sleep",
        [],
        "pause while the job is ahead of its share (default unit us)",
        Time(USEC, |j, d| j.spec.misc.flow_sleep_us = d.as_micros() as u64)
    ),
    opt!(
        "latency_target",
        [],
        "latency (default unit us) I/Os must meet: the job searches the deepest queue that meets it",
        Time(USEC, |j, d| j.spec.misc.latency.target_ns = d.as_nanos().min(u64::MAX as u128) as u64)
    ),
    opt!(
        "latency_window",
        [],
        "how long each queue depth is tried for latency_target (default unit us)",
        Time(USEC, |j, d| j.spec.misc.latency.window_us = d.as_micros().min(u64::MAX as u128) as u64)
    ),
    opt!(
        "latency_percentile",
        [],
        "share of a window's I/Os that must meet latency_target (default 100)",
        Value(|j, v| {
            let x = percent_f(v.trim_end_matches('%'), "a percentage such as 99.9")?;
            if (0.0..=100.0).contains(&x) {
                j.spec.misc.latency.percentile = x;
                Ok(())
            } else {
                Err(expected("a percentage from 0 to 100 such as 99.9", v))
            }
        })
    ),
    opt!(
        "latency_run",
        [],
        "keep adjusting the queue depth for latency_target all run instead of stopping once it settles",
        Bool(|j, b| j.spec.misc.latency.run = b)
    ),
    opt!(
        "steadystate",
        ["ss"],
        "stop when the rate is steady: iops:N, iops_slope:N, bw:N or bw_slope:N (N absolute, or N% of the mean)",
        Value(set_steadystate)
    ),
    opt!(
        "steadystate_duration",
        ["ss_dur"],
        "steady-state window in whole seconds (default unit s; 0, the default, turns detection off)",
        Time(super::options::SEC, |j, d| j.spec.misc.steady.dur_s = d.as_secs().min(u32::MAX as u64) as u32)
    ),
    opt!(
        "steadystate_ramp_time",
        ["ss_ramp"],
        "time before steady-state samples count (default unit s)",
        Time(super::options::SEC, |j, d| j.spec.misc.steady.ramp = d)
    ),
];

#[cfg(test)]
mod tests {
    use super::super::options::apply_for_test as apply;
    use super::*;
    use crate::model::job::{RwKind, READ, WRITE};

    #[test]
    fn rw_suffixes() {
        let mut j = JobState::new("j");
        apply(&mut j, "rw", "read:-8k").unwrap();
        assert_eq!((j.spec.rw, j.spec.misc.seq_skip), (RwKind::Read, -8192));
        apply(&mut j, "rw", "write:4k").unwrap();
        assert_eq!(j.spec.misc.seq_skip, 4096);
        apply(&mut j, "rw", "randread:8").unwrap();
        assert_eq!((j.spec.misc.rand_every, j.spec.misc.seq_skip), (8, 0));
        apply(&mut j, "rw", "randread").unwrap();
        assert_eq!(j.spec.misc.rand_every, 1);
        assert!(apply(&mut j, "rw", "randread:0").is_err());
        assert!(apply(&mut j, "rw", "read:x").unwrap_err().contains("read:SIZE"));
        apply(&mut j, "rw_sequencer", "identical").unwrap();
        assert_eq!(j.spec.misc.sequencer, Sequencer::Identical);
    }

    #[test]
    fn distributions() {
        let mut j = JobState::new("j");
        apply(&mut j, "random_distribution", "zipf:1.2").unwrap();
        assert_eq!(j.spec.misc.distribution[READ], Distribution::Zipf { theta: 1.2, center: 0.0 });
        apply(&mut j, "random_distribution", "pareto:0.9:0.5").unwrap();
        assert_eq!(j.spec.misc.distribution[WRITE], Distribution::Pareto { h: 0.9, center: 0.5 });
        apply(&mut j, "random_distribution", "normal:10").unwrap();
        assert_eq!(j.spec.misc.distribution[READ], Distribution::Normal { dev_percent: 10.0, center: 0.0 });
        apply(&mut j, "random_distribution", "zoned:50/5:30/15:20/80").unwrap();
        assert_eq!(j.spec.misc.distribution[READ], Distribution::Zoned(vec![(50, 5), (30, 15), (20, 80)]));
        apply(&mut j, "random_distribution", "zoned_abs:60/1m:40/3m").unwrap();
        assert_eq!(j.spec.misc.distribution[WRITE], Distribution::ZonedAbs(vec![(60, 1 << 20), (40, 3 << 20)]));
        apply(&mut j, "random_distribution", "zoned:50/5:30/15:20/").unwrap();
        assert_eq!(j.spec.misc.distribution[READ], Distribution::Zoned(vec![(50, 5), (30, 15), (20, 80)]));
        apply(&mut j, "random_distribution", "zoned:100/10,50/50:50/50").unwrap();
        assert_eq!(j.spec.misc.distribution[READ], Distribution::Zoned(vec![(100, 10)]));
        assert_eq!(j.spec.misc.distribution[WRITE], Distribution::Zoned(vec![(50, 50), (50, 50)]));
        apply(&mut j, "random_distribution", "random").unwrap();
        assert_eq!(j.spec.misc.distribution[READ], Distribution::Random);
        assert!(apply(&mut j, "random_distribution", "zipf:1").is_err());
        assert!(apply(&mut j, "random_distribution", "pareto:1.5").is_err());
        assert!(apply(&mut j, "random_distribution", "zoned:50/5:30/15").unwrap_err().contains("add up to 100"));
        assert!(apply(&mut j, "random_distribution", "zoned:50/60:50/60").unwrap_err().contains("at most 100"));
        assert!(apply(&mut j, "random_distribution", "cauchy:3").is_err());
    }

    #[test]
    fn sizes_lists_and_masks() {
        let mut j = JobState::new("j");
        apply(&mut j, "filesize", "1m-4m").unwrap();
        assert_eq!(j.spec.misc.filesize, Some((1 << 20, 4 << 20)));
        apply(&mut j, "filesize", "2m").unwrap();
        assert_eq!(j.spec.misc.filesize, Some((2 << 20, 2 << 20)));
        assert!(apply(&mut j, "filesize", "4m-1m").is_err());
        apply(&mut j, "cpus_allowed", "0-2,5,1").unwrap();
        assert_eq!(j.spec.misc.cpus, Some(vec![0, 1, 2, 5]));
        apply(&mut j, "cpumask", "0x5").unwrap();
        assert_eq!(j.spec.misc.cpus, Some(vec![0, 2]));
        assert!(apply(&mut j, "cpus_allowed", "3-1").is_err());
        assert!(apply(&mut j, "cpumask", "0").is_err());
        apply(&mut j, "ba", "4k,8k").unwrap();
        assert_eq!(j.spec.misc.blockalign, [Some(4096), Some(8192)]);
        apply(&mut j, "number_ios", "100").unwrap();
        assert_eq!(j.spec.misc.number_ios, Some(100));
        apply(&mut j, "prio", "3").unwrap();
        assert_eq!(j.spec.misc.ioprio, Some((2, 3)));
        apply(&mut j, "prioclass", "1").unwrap();
        assert_eq!(j.spec.misc.ioprio, Some((1, 3)));
        assert!(apply(&mut j, "prio", "8").is_err());
        apply(&mut j, "fadvise_hint", "0").unwrap();
        assert_eq!(j.spec.misc.fadvise, Fadvise::None);
        apply(&mut j, "fadvise_hint", "random").unwrap();
        assert_eq!(j.spec.misc.fadvise, Fadvise::Random);
        assert!(apply(&mut j, "fadvise_hint", "2").is_err());
    }

    #[test]
    fn zones_and_notes() {
        let mut j = JobState::new("j");
        apply(&mut j, "zonesize", "1m").unwrap();
        apply(&mut j, "zoneskip", "3m").unwrap();
        let z = j.spec.misc.strided().unwrap();
        assert_eq!((z.size, z.range, z.skip), (1 << 20, 1 << 20, 3 << 20));
        apply(&mut j, "zonemode", "none").unwrap();
        assert!(j.spec.misc.strided().is_none());
        assert!(apply(&mut j, "zonemode", "zbd").unwrap_err().contains("not supported"));
        apply(&mut j, "gtod_reduce", "1").unwrap();
        apply(&mut j, "gtod_reduce", "1").unwrap();
        assert_eq!(j.notes.iter().filter(|n| n.message.contains("gtod_reduce")).count(), 1);
        apply(&mut j, "flow", "8").unwrap();
        assert_eq!(j.spec.misc.flow, 8);
        assert!(apply(&mut j, "random_generator", "mt").is_err());
        apply(&mut j, "continue_on_error", "write").unwrap();
        assert_eq!(j.spec.misc.continue_on_error, [false, true]);
        assert!(j.spec.misc.continues_after(WRITE, libc::EIO) && !j.spec.misc.continues_after(WRITE, libc::ENOSPC));
        apply(&mut j, "ignore_error", ",ENOSPC:122").unwrap();
        assert_eq!(j.spec.misc.ignore_error, [vec![], vec![libc::ENOSPC, 122]]);
        assert!(j.spec.misc.continues_after(WRITE, libc::ENOSPC) && !j.spec.misc.continues_after(READ, libc::EIO));
        assert!(apply(&mut j, "ignore_error", "EWHAT").unwrap_err().contains("EWHAT"));
        assert!(apply(&mut j, "continue_on_error", "sometimes").is_err());
    }
}
