//! fio's per-job logs (`write_bw_log`, `write_lat_log`, `write_iops_log`,
//! `write_hist_log`) and how they are sampled, as plain data.

use serde::Serialize;

/// The prefix of one kind of log: fio writes `PREFIX_bw.N.log` and the like.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LogName {
    /// Given bare (`write_bw_log`): the job's name is the prefix.
    JobName,
    Prefix(String),
}

impl LogName {
    pub fn prefix<'a>(&'a self, job: &'a str) -> &'a str {
        match self {
            LogName::JobName => job,
            LogName::Prefix(p) => p,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LogSpec {
    /// Bandwidth per I/O (or averaged per window), KiB/s.
    pub bw: Option<LogName>,
    /// Latency logs: `_lat`, `_clat` and `_slat`, in ns.
    pub lat: Option<LogName>,
    /// I/Os per second (1 per I/O unless averaged).
    pub iops: Option<LogName>,
    /// Completion-latency histograms in fio's bins, every `hist_msec`.
    pub hist: Option<LogName>,
    /// Average (or take the maximum of, with `max_value`) samples over this
    /// many ms; 0 logs every I/O.
    pub avg_msec: u32,
    /// With `avg_msec`: the window's largest latency instead of its mean.
    pub max_value: bool,
    /// Add each I/O's offset as a column.
    pub offset: bool,
    /// Interval of the histogram log.
    pub hist_msec: u32,
    /// Merge 2^N adjacent histogram bins into one column.
    pub hist_coarseness: u32,
    /// One file per thread (`.N.log`) instead of one per job.
    pub per_job_logs: bool,
    /// The priority column holds the I/O's whole ioprio value rather than
    /// 1 for a realtime class (fio's `log_prio`).
    pub prio: bool,
}

impl Default for LogSpec {
    fn default() -> Self {
        LogSpec {
            bw: None,
            lat: None,
            iops: None,
            hist: None,
            avg_msec: 0,
            max_value: false,
            offset: false,
            hist_msec: 0,
            hist_coarseness: 0,
            per_job_logs: true,
            prio: false,
        }
    }
}

impl LogSpec {
    /// Any log is written.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }

    /// The files a clone of job `job` writes, each with the option that
    /// asks for it, in fio's scheme: `PREFIX_KIND.N.log` with N the thread's
    /// number among all the invocation's threads (from 1), or
    /// `PREFIX_KIND.log` with per_job_logs=0.
    pub fn files(&self, job: &str, thread_number: u32) -> Vec<(&'static str, std::path::PathBuf)> {
        let logs = [
            (&self.bw, "write_bw_log", &["bw"][..]),
            (&self.lat, "write_lat_log", &["lat", "clat", "slat"][..]),
            (&self.iops, "write_iops_log", &["iops"][..]),
            (&self.hist, "write_hist_log", &["clat_hist"][..]),
        ];
        let mut out = Vec::new();
        for (log, option, kinds) in logs {
            let Some(n) = log else { continue };
            let p = n.prefix(job);
            for k in kinds {
                let name = if self.per_job_logs { format!("{p}_{k}.{thread_number}.log") } else { format!("{p}_{k}.log") };
                out.push((option, std::path::PathBuf::from(name)));
            }
        }
        out
    }
}
