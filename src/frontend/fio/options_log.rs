//! fio's log options: which per-job logs to write and how they sample.

use super::options::opt;
use super::options::Kind::*;
use super::options::{JobState, OptDef};
use crate::model::logs::LogName;

/// Bare (`write_bw_log`) names the log after the job, as in fio. The
/// parser hands a bare option over as `1`, so `write_bw_log=1` does the
/// same (fio would name the files `1_bw.N.log`).
fn name(v: &str) -> Option<LogName> {
    Some(if v == "1" { LogName::JobName } else { LogName::Prefix(v.to_string()) })
}

fn set(j: &mut JobState, v: &str, which: fn(&mut JobState) -> &mut Option<LogName>) -> Result<(), String> {
    *which(j) = name(v);
    Ok(())
}

pub static LOGS: &[OptDef] = &[
    opt!(
        "write_bw_log",
        [],
        "write a bandwidth log PREFIX_bw.N.log (KiB/s per I/O or per log_avg_msec)",
        BareValue(|j, v| set(j, v, |j| &mut j.spec.logs.bw))
    ),
    opt!(
        "write_lat_log",
        [],
        "write latency logs PREFIX_lat.N.log, PREFIX_clat.N.log, PREFIX_slat.N.log (ns)",
        BareValue(|j, v| set(j, v, |j| &mut j.spec.logs.lat))
    ),
    opt!("write_iops_log", [], "write an IOPS log PREFIX_iops.N.log", BareValue(|j, v| set(j, v, |j| &mut j.spec.logs.iops))),
    opt!(
        "write_hist_log",
        [],
        "write completion-latency histograms PREFIX_clat_hist.N.log every log_hist_msec",
        BareValue(|j, v| set(j, v, |j| &mut j.spec.logs.hist))
    ),
    opt!(
        "log_avg_msec",
        [],
        "average bw/iops/lat log samples over this many ms (0 = every I/O)",
        Uint(0, u32::MAX, |j, n| j.spec.logs.avg_msec = n)
    ),
    opt!("log_max_value", [], "with log_avg_msec, log the window's maximum latency (0/1)", Bool(|j, b| j.spec.logs.max_value = b)),
    opt!("log_offset", [], "add each I/O's offset to the logs (0/1)", Bool(|j, b| j.spec.logs.offset = b)),
    opt!("log_hist_msec", [], "interval of the histogram log in ms", Uint(0, u32::MAX, |j, n| j.spec.logs.hist_msec = n)),
    opt!(
        "log_hist_coarseness",
        [],
        "merge 2^N adjacent bins of the histogram log (0-6)",
        Uint(0, 6, |j, n| j.spec.logs.hist_coarseness = n)
    ),
    opt!("per_job_logs", [], "one log file per thread, .N.log (1, default) or per job (0)", Bool(|j, b| j.spec.logs.per_job_logs = b)),
    opt!(
        "log_prio",
        [],
        "priority column: the I/O's ioprio value (0x4003) instead of 1 for realtime, 0 otherwise (0/1)",
        Bool(|j, b| j.spec.logs.prio = b)
    ),
];

#[cfg(test)]
mod tests {
    use super::super::options::apply_for_test as apply;
    use super::super::options::{find, JobState};
    use crate::model::logs::LogName;

    #[test]
    fn log_options_set_the_log_spec() {
        let mut j = JobState::new("j");
        assert!(find("write_bw_log").unwrap().bare_ok());
        apply(&mut j, "write_bw_log", "1").unwrap();
        apply(&mut j, "write_lat_log", "lat").unwrap();
        apply(&mut j, "log_avg_msec", "500").unwrap();
        apply(&mut j, "log_hist_coarseness", "3").unwrap();
        apply(&mut j, "per_job_logs", "0").unwrap();
        let l = &j.spec.logs;
        assert_eq!(l.bw, Some(LogName::JobName));
        assert_eq!(l.lat, Some(LogName::Prefix("lat".into())));
        assert_eq!((l.avg_msec, l.hist_coarseness, l.per_job_logs), (500, 3, false));
        assert!(apply(&mut j, "log_hist_coarseness", "7").is_err(), "fio's bins merge at most 2^6 at a time");
        assert!(apply(&mut j, "log_avg_msec", "-1").is_err());
    }
}
