//! Options of particular engines (fio's "ioengine-specific" options). An
//! engine that does not use one ignores it, as fio does, except where the
//! runner warns.

use super::options::opt;
use super::options::Kind::*;
use super::options::OptDef;
use super::options::{block_size, expected, per_direction, store, JobState};
use crate::model::job::{ioprio_value, JobSpec, PrioSplit};
use crate::units::{clip, parse_u32};

fn set_donorname(j: &mut JobState, v: &str) -> Result<(), String> {
    // fio joins the name with the job's directory; a path would escape it.
    if v.is_empty() || v.contains('/') {
        return Err(format!("expected a file name without '/', got '{}'", clip(v)));
    }
    j.spec.engine.donorname = Some(v.to_string());
    Ok(())
}

/// fio's cmdprio options, which only its io_uring and libaio engines know.
pub const CMDPRIO_OPTIONS: [&str; 4] = ["cmdprio_percentage", "cmdprio_class", "cmdprio", "cmdprio_bssplit"];
const CMDPRIO_ENGINES: [&str; 2] = ["io_uring", "libaio"];

fn per_dir_u32(j_field: &mut [u32; 2], v: &str, form: &str, min: u32, max: u32) -> Result<(), String> {
    let parsed = per_direction(v, form, |s| parse_u32(s, min, max).map_err(|_| expected(form, s)))?;
    store(j_field, parsed);
    Ok(())
}

fn set_cmdprio_percentage(j: &mut JobState, v: &str) -> Result<(), String> {
    per_dir_u32(&mut j.spec.engine.cmdprio.percentage, v, "a percentage 0-100, or a read,write pair", 0, 100)
}

fn set_cmdprio_class(j: &mut JobState, v: &str) -> Result<(), String> {
    per_dir_u32(&mut j.spec.engine.cmdprio.class, v, "a class 1-3 (realtime, best effort, idle), or a read,write pair", 1, 3)
}

fn set_cmdprio_level(j: &mut JobState, v: &str) -> Result<(), String> {
    per_dir_u32(&mut j.spec.engine.cmdprio.level, v, "a level 0-7, or a read,write pair", 0, 7)
}

/// fio 3.33's `bs/percent[/class/level]:...`, one list per direction. Like
/// fio, a percent above 100, a class above 3 and a level above 7 are cut
/// to the maximum, a missing percent is 0, and the percents of one block
/// size may add up to at most 100.
fn parse_prio_split(j: &JobState, v: &str) -> Result<Vec<PrioSplit>, String> {
    let form = "entries like 4k/20:64k/50 or 4k/20/1/0 (bs/percent/class/level)";
    let mut out: Vec<PrioSplit> = Vec::new();
    for part in v.split(':').map(str::trim).filter(|p| !p.is_empty()) {
        let f: Vec<&str> = part.split('/').map(str::trim).collect();
        let num = |s: &str| parse_u32(s, 0, u32::MAX).map_err(|_| expected(form, part));
        let (bs, percent, ioprio) = match f[..] {
            [bs] => (bs, 0, None),
            [bs, p] => (bs, num(p)?, None),
            [bs, p, c, l] => (bs, num(p)?, Some(ioprio_value(num(c)?.min(3), num(l)?.min(7)))),
            _ => return Err(format!("{} (fio: invalid cmdprio_bssplit format)", expected(form, part))),
        };
        let bs = block_size(j, bs)?;
        let percent = percent.min(100);
        let total: u32 = out.iter().filter(|e| e.bs == bs).map(|e| e.percent).sum::<u32>() + percent;
        if total > 100 {
            return Err(format!("the percents for bs {bs} add up to {total}, more than 100, in '{}'", clip(v)));
        }
        if percent > 0 {
            out.push(PrioSplit { bs, percent, ioprio });
        }
    }
    Ok(out)
}

fn set_cmdprio_bssplit(j: &mut JobState, v: &str) -> Result<(), String> {
    let parsed = per_direction(v, "a split such as 4k/20:64k/50", |s| parse_prio_split(j, s))?;
    // An empty side of `,4k/50` is no entries, not "unchanged": fio
    // replaces the whole string.
    j.spec.engine.cmdprio.bssplit = parsed.map(Option::unwrap_or_default);
    Ok(())
}

/// fio's rules between the cmdprio options and the engine: only io_uring
/// and libaio have them (any other engine makes fio drop the job with
/// "Bad option"), and a percentage excludes a split.
pub fn finish_cmdprio(given: &dyn Fn(&str) -> bool, spec: &JobSpec) -> Result<(), (&'static str, String)> {
    let Some(opt) = CMDPRIO_OPTIONS.into_iter().find(|o| given(o)) else { return Ok(()) };
    if !CMDPRIO_ENGINES.contains(&spec.ioengine.as_str()) {
        return Err((
            opt,
            format!(
                "{opt} is an option of ioengine=io_uring and ioengine=libaio only, not of ioengine={} (fio 3.33 drops the job: Bad option)",
                spec.ioengine
            ),
        ));
    }
    let c = &spec.engine.cmdprio;
    if c.percentage.iter().any(|&p| p > 0) && c.bssplit.iter().any(|v| !v.is_empty()) {
        return Err(("cmdprio_bssplit", "cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as in fio): give one".into()));
    }
    Ok(())
}

pub static ENGINE: &[OptDef] = &[
    opt!(
        "cmdprio_percentage",
        [],
        "io_uring, libaio: percent of I/Os issued with cmdprio_class/cmdprio (read,write)",
        Value(set_cmdprio_percentage)
    ),
    opt!(
        "cmdprio_class",
        [],
        "io_uring, libaio: class of the prioritised I/Os, 1-3 (default 1, realtime; read,write)",
        Value(set_cmdprio_class)
    ),
    opt!("cmdprio", [], "io_uring, libaio: level of the prioritised I/Os, 0-7 (default 0; read,write)", Value(set_cmdprio_level)),
    opt!(
        "cmdprio_bssplit",
        [],
        "io_uring, libaio: percent of I/Os prioritised per block size: bs/percent[/class/level]:... (read,write)",
        Value(set_cmdprio_bssplit)
    ),
    opt!(
        "hipri",
        [],
        "pvsync2: polled completion (RWF_HIPRI), for direct I/O on polled queues (0/1)",
        Bool(|j, b| j.spec.engine.hipri = b)
    ),
    opt!("nowait", [], "pvsync2: RWF_NOWAIT, an I/O that would block fails with EAGAIN (0/1)", Bool(|j, b| j.spec.engine.nowait = b)),
    opt!("donorname", [], "e4defrag: donor file, in the job's directory", Value(set_donorname)),
    opt!("inplace", [], "e4defrag: allocate and free the donor's blocks per I/O (0/1)", Bool(|j, b| j.spec.engine.inplace = b)),
];

#[cfg(test)]
mod tests {
    use super::super::options::{find, JobState};

    #[test]
    fn engine_options_set_their_fields() {
        let mut j = JobState::new("j");
        for (k, v) in [("hipri", "1"), ("nowait", "1"), ("donorname", "file.def"), ("inplace", "1")] {
            find(k).unwrap().apply(&mut j, v).unwrap();
        }
        let e = &j.spec.engine;
        assert!(e.hipri && e.nowait && e.inplace);
        assert_eq!(e.donorname.as_deref(), Some("file.def"));
        assert!(find("donorname").unwrap().apply(&mut j, "../x").unwrap_err().contains("without '/'"));
        assert!(find("hipri").unwrap().bare_ok());
    }

    #[test]
    fn cmdprio_options_per_direction_and_bssplit_forms() {
        use crate::model::job::{ioprio_value, PrioSplit};
        let mut j = JobState::new("j");
        let set = |j: &mut JobState, k: &str, v: &str| find(k).unwrap().apply(j, v);
        set(&mut j, "cmdprio_percentage", "30,70").unwrap();
        set(&mut j, "cmdprio_class", "2").unwrap();
        set(&mut j, "cmdprio", ",5").unwrap();
        let c = &j.spec.engine.cmdprio;
        assert_eq!((c.percentage, c.class, c.level), ([30, 70], [2, 2], [0, 5]));
        assert!(set(&mut j, "cmdprio_percentage", "101").unwrap_err().contains("0-100"));
        assert!(set(&mut j, "cmdprio_class", "0").unwrap_err().contains("1-3"));
        assert!(set(&mut j, "cmdprio", "8").unwrap_err().contains("0-7"));
        // fio cuts class and level to their maximum and takes a missing percent as 0.
        set(&mut j, "cmdprio_bssplit", "4k/50/4/9:8k:4k/20,64k/100/3/0").unwrap();
        let e = |bs, percent, ioprio| PrioSplit { bs, percent, ioprio };
        assert_eq!(j.spec.engine.cmdprio.bssplit[0], vec![e(4096, 50, Some(ioprio_value(3, 7))), e(4096, 20, None)]);
        assert_eq!(j.spec.engine.cmdprio.bssplit[1], vec![e(65536, 100, Some(0x6000))]);
        assert!(set(&mut j, "cmdprio_bssplit", "4k/50/1").unwrap_err().contains("invalid cmdprio_bssplit format"));
        assert!(set(&mut j, "cmdprio_bssplit", "4k/60:4k/50").unwrap_err().contains("more than 100"));
    }
}
