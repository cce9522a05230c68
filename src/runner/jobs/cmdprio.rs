//! fio's per-command priorities (`cmdprio_percentage`, `cmdprio_class`,
//! `cmdprio`, `cmdprio_bssplit`): which priority each read or write is
//! issued with, and the measured I/Os' latency at each priority.
//!
//! Everything is laid out when the worker starts, so picking costs one draw
//! from the picker's own generator and a scan of a few entries: no
//! allocation or system call per I/O. The generator is apart from the job's
//! so that offsets and block sizes stay the same with or without cmdprio, as
//! fio keeps its `prio_state` apart.

use crate::model::job::{ioprio_value, CmdPrio, JobSpec};
use crate::result::cmdprio::{CmdPrioStats, PrioStats};
use crate::runner::rng::Rng;

/// Any block size: the entry of `cmdprio_percentage`.
const ANY_BS: u64 = 0;

struct BsEntry {
    bs: u64,
    /// Cumulative percents with the priority each range gives.
    prios: Vec<(u32, u16)>,
}

pub struct Picker {
    dirs: [Vec<BsEntry>; 2],
    /// The thread's priority (prio/prioclass), 0 when none: what the other
    /// I/Os are issued and logged with.
    pub default: u16,
    rng: Rng,
    /// Measured I/Os per direction and priority, with their ioprio value;
    /// every priority that can occur is listed up front.
    stats: [Vec<(u16, PrioStats)>; 2],
    total_latency: bool,
}

/// The thread's priority as fio computes its `td->ioprio`.
pub fn thread_ioprio(spec: &JobSpec) -> u16 {
    spec.misc.ioprio.map_or(0, |(class, level)| ioprio_value(class, level))
}

impl Picker {
    /// `None` when the job sets no per-command priority: every I/O then
    /// carries the thread's priority and nothing is counted.
    pub fn new(spec: &JobSpec, seed: u64) -> Option<Picker> {
        let c: &CmdPrio = &spec.engine.cmdprio;
        if !c.active() {
            return None;
        }
        let default = thread_ioprio(spec);
        let mut dirs: [Vec<BsEntry>; 2] = Default::default();
        for (d, out) in dirs.iter_mut().enumerate() {
            let implicit = c.implicit(d);
            if c.percentage[d] > 0 {
                out.push(BsEntry { bs: ANY_BS, prios: vec![(c.percentage[d], implicit)] });
                continue;
            }
            for e in &c.bssplit[d] {
                let p = e.ioprio.unwrap_or(implicit);
                match out.iter_mut().find(|b| b.bs == e.bs) {
                    Some(b) => {
                        let cum = b.prios.last().map_or(0, |x| x.0) + e.percent;
                        b.prios.push((cum, p));
                    }
                    None => out.push(BsEntry { bs: e.bs, prios: vec![(e.percent, p)] }),
                }
            }
        }
        let stats = std::array::from_fn(|d| {
            let mut v = vec![(default, PrioStats::new(default))];
            for p in dirs[d].iter().flat_map(|b| b.prios.iter().map(|x| x.1)) {
                if !v.iter().any(|x| x.0 == p) {
                    v.push((p, PrioStats::new(p)));
                }
            }
            v
        });
        let total_latency = spec.misc.lat_percentiles;
        Some(Picker { dirs, default, rng: Rng::new(seed ^ 0x636d_6470_7269_6f00), stats, total_latency })
    }

    /// The priority of a `dir` (0 read, 1 write) I/O of `len` bytes.
    #[inline]
    pub fn pick(&mut self, dir: usize, len: u32) -> u16 {
        let Some(entries) = self.dirs.get(dir) else { return self.default };
        let Some(b) = entries.iter().find(|b| b.bs == ANY_BS || b.bs == u64::from(len)) else { return self.default };
        let total = b.prios.last().map_or(0, |x| x.0);
        if total == 0 {
            return self.default;
        }
        let r = self.rng.below(100) as u32;
        b.prios.iter().find(|x| r < x.0).map_or(self.default, |x| x.1)
    }

    /// Whether `record` takes the total latency (fio's `lat_percentiles`)
    /// rather than submission to completion.
    pub fn total_latency(&self) -> bool {
        self.total_latency
    }

    /// One measured `dir` I/O issued at `prio` took `ns`.
    #[inline]
    pub fn record(&mut self, dir: usize, prio: u16, ns: u64) {
        if let Some(c) = self.stats.get_mut(dir).and_then(|v| v.iter_mut().find(|x| x.0 == prio)) {
            c.1.record(ns);
        }
    }

    /// The ramp is over: what it recorded is not reported.
    pub fn reset(&mut self) {
        for (_, p) in self.stats.iter_mut().flatten() {
            p.reset();
        }
    }

    pub fn stats(&self) -> CmdPrioStats {
        let [read, write] = std::array::from_fn(|d| self.stats[d].iter().map(|(_, p)| p.clone()).collect());
        CmdPrioStats { total_latency: self.total_latency, read, write }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::PrioSplit;

    fn spec(c: CmdPrio) -> JobSpec {
        let mut s = JobSpec::new("j");
        s.engine.cmdprio = c;
        s
    }

    #[test]
    fn none_without_cmdprio() {
        assert!(Picker::new(&spec(CmdPrio::default()), 1).is_none());
    }

    #[test]
    fn percentage_per_direction_with_default_class_rt() {
        let c = CmdPrio { percentage: [30, 0], level: [2, 0], ..Default::default() };
        let mut p = Picker::new(&spec(c), 7).unwrap();
        let n = 100_000;
        let high = (0..n).filter(|_| p.pick(0, 4096) == (1 << 13 | 2)).count();
        assert!((28_000..32_000).contains(&high), "{high}");
        assert!((0..1000).all(|_| p.pick(1, 4096) == 0));
    }

    #[test]
    fn bssplit_entries_with_own_priorities() {
        let e = |bs, percent, ioprio| PrioSplit { bs, percent, ioprio };
        let split = vec![e(4096, 50, Some(ioprio_value(2, 3))), e(4096, 20, None), e(8192, 100, Some(ioprio_value(3, 0)))];
        let c = CmdPrio { class: [2, 2], level: [5, 5], bssplit: [split, vec![]], ..Default::default() };
        let mut s = spec(c);
        s.misc.ioprio = Some((2, 7));
        let mut p = Picker::new(&s, 3).unwrap();
        let (mut a, mut b, mut rest) = (0, 0, 0);
        for _ in 0..100_000 {
            match p.pick(0, 4096) {
                0x4003 => a += 1,
                0x4005 => b += 1,
                0x4007 => rest += 1,
                x => panic!("unexpected prio {x:#x}"),
            }
        }
        assert!((48_000..52_000).contains(&a) && (18_500..21_500).contains(&b) && (28_500..31_500).contains(&rest), "{a} {b} {rest}");
        assert!((0..100).all(|_| p.pick(0, 8192) == 0x6000));
        // A size the split does not name keeps the thread's priority.
        assert_eq!(p.pick(0, 512), 0x4007);
        p.record(0, 0x4003, 1000);
        p.record(0, 0x4007, 2000);
        p.record(0, 0x4007, 3000);
        let st = p.stats();
        assert_eq!((st.read[0].prioclass, st.read[0].prio, st.read[0].ios), (2, 7, 2));
        assert!(st.read[0].lat.max().abs_diff(3000) <= 3, "the histogram keeps 3 digits");
        assert!(st.read.iter().any(|x| (x.prioclass, x.prio, x.ios) == (2, 3, 1)));
    }
}
