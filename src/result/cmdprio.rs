//! fio's per-priority latency (`cmdprio_*`): how many reads and writes ran
//! at each I/O priority and their completion latency, kept in a job's
//! `details` under `"cmdprio"`. fio-json writes them as fio's `prios`.

use super::JobResult;
use crate::measure::hist::LatencyHist;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrioStats {
    pub prioclass: u16,
    pub prio: u16,
    /// Measured I/Os at this priority (the histogram's count, kept for
    /// readers of the JSON that want only the split).
    pub ios: u64,
    /// Submission to completion (fio's clat; total latency with
    /// `lat_percentiles=1`, which `of_lat` says).
    pub lat: LatencyHist,
}

impl PrioStats {
    pub fn new(ioprio: u16) -> PrioStats {
        // Full range: recorded into per I/O, so it must never allocate.
        PrioStats { prioclass: ioprio >> 13, prio: ioprio & 7, ios: 0, lat: LatencyHist::new() }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.ios += 1;
        self.lat.record(ns);
    }

    pub fn reset(&mut self) {
        self.ios = 0;
        self.lat.reset();
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CmdPrioStats {
    /// `lat` holds total latency (fio's `lat_percentiles=1`), not clat.
    #[serde(default)]
    pub total_latency: bool,
    pub read: Vec<PrioStats>,
    pub write: Vec<PrioStats>,
}

impl CmdPrioStats {
    pub fn dir(&self, d: usize) -> &[PrioStats] {
        if d == 0 {
            &self.read
        } else {
            &self.write
        }
    }

    /// Add another thread's figures, priority by priority.
    pub fn merge(&mut self, o: &CmdPrioStats) {
        self.total_latency |= o.total_latency;
        for (mine, theirs) in [(&mut self.read, &o.read), (&mut self.write, &o.write)] {
            for p in theirs {
                match mine.iter_mut().find(|m| m.prioclass == p.prioclass && m.prio == p.prio) {
                    Some(m) => {
                        m.ios += p.ios;
                        m.lat.merge(&p.lat);
                    }
                    None => mine.push(p.clone()),
                }
            }
        }
    }

    /// The priorities fio reports for direction `d`: those that completed
    /// I/O, and only when there are two or more (fio 3.33 prints no `prios`
    /// when every I/O of a direction ran at one priority).
    pub fn shown(&self, d: usize) -> Vec<&PrioStats> {
        let used: Vec<&PrioStats> = self.dir(d).iter().filter(|p| p.ios > 0).collect();
        if used.len() >= 2 {
            used
        } else {
            Vec::new()
        }
    }

    pub fn of(j: &JobResult) -> Option<CmdPrioStats> {
        serde_json::from_value(j.details.as_ref()?.get("cmdprio")?.clone()).ok()
    }

    /// Store into a job's details (next to whatever else is there).
    pub fn store(&self, j: &mut JobResult) {
        j.set_detail("cmdprio", serde_json::to_value(self).unwrap_or_default());
    }
}
