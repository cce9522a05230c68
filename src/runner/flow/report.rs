//! From the threads' counters to results: the controller's 1-s timeline and
//! psrun intervals (sampled from the published atomics, no locks), and the
//! per-name merge of every thread's statistics at the end.

use super::program::Program;
use super::thread::{Shared, ThreadOut};
use crate::model::flow::{Direction, FlowopKind, QuitMode};
use crate::result::flow::{FlowopInfo, IntervalStats};
use crate::result::warning::{few, Code, Warning};
use crate::result::OpStats;
use std::sync::atomic::Ordering;

/// Running totals (ops, bytes, latency ns) per flowop name, summed over the
/// threads that record it.
pub fn snapshot(sh: &Shared) -> Vec<[u64; 3]> {
    sh.holders
        .iter()
        .map(|hs| {
            let mut t = [0u64; 3];
            for &(th, slot) in hs {
                let p = &sh.pubs[th][slot];
                t[0] += p.ops.load(Ordering::Relaxed);
                t[1] += p.bytes.load(Ordering::Relaxed);
                t[2] += p.lat_ns.load(Ordering::Relaxed);
            }
            t
        })
        .collect()
}

fn delta(a: &[[u64; 3]], b: &[[u64; 3]], k: usize) -> Vec<u64> {
    a.iter().zip(b).map(|(x, y)| x[k].saturating_sub(y[k])).collect()
}

pub struct Sampler {
    prev_tick: Vec<[u64; 3]>,
    base: Vec<[u64; 3]>,
    prev_int: Vec<[u64; 3]>,
    prev_int_at: f64,
    pub ops: Vec<Vec<u64>>,
    pub bytes: Vec<Vec<u64>>,
    pub intervals: Vec<IntervalStats>,
}

impl Sampler {
    /// The measured window starts now.
    pub fn start(sh: &Shared) -> Sampler {
        let base = snapshot(sh);
        let n = base.len();
        Sampler {
            prev_tick: base.clone(),
            prev_int: base.clone(),
            base,
            prev_int_at: 0.0,
            ops: vec![Vec::new(); n],
            bytes: vec![Vec::new(); n],
            intervals: Vec::new(),
        }
    }

    /// One second of the timeline.
    pub fn tick(&mut self, sh: &Shared) {
        let now = snapshot(sh);
        for (i, (a, b)) in now.iter().zip(&self.prev_tick).enumerate() {
            self.ops[i].push(a[0].saturating_sub(b[0]));
            self.bytes[i].push(a[1].saturating_sub(b[1]));
        }
        self.prev_tick = now;
    }

    /// A psrun print at `at_s` into the window: the interval's deltas when
    /// `reset`, totals since the start otherwise.
    pub fn interval(&mut self, sh: &Shared, at_s: f64, reset: bool, names: &[(String, FlowopKind)]) {
        let now = snapshot(sh);
        let (from, span) = if reset { (&self.prev_int, at_s - self.prev_int_at) } else { (&self.base, at_s) };
        let st =
            IntervalStats { at_s, span_s: span, ops: delta(&now, from, 0), bytes: delta(&now, from, 1), lat_sum_ns: delta(&now, from, 2) };
        sh.report.note(&interval_lines(&st, names));
        self.intervals.push(st);
        self.prev_int = now;
        self.prev_int_at = at_s;
    }
}

/// Filebench-like lines for the interval (notes go to stderr: stdout is
/// for the report).
fn interval_lines(st: &IntervalStats, names: &[(String, FlowopKind)]) -> String {
    let span = st.span_s.max(1e-9);
    let mut lines = format!("{:8.3}: Per-Operation Breakdown\n", st.at_s);
    let (mut ops, mut rd, mut wr, mut bytes, mut lat) = (0u64, 0u64, 0u64, 0u64, 0u64);
    for (i, (name, kind)) in names.iter().enumerate().rev() {
        let (o, b, l) = (st.ops[i], st.bytes[i], st.lat_sum_ns[i]);
        let ms = if o == 0 { 0.0 } else { l as f64 / o as f64 / 1e6 };
        lines += &format!("{name:<20} {o:>9}ops {:>9.0}ops/s {:>7.1}mb/s {ms:>9.3}ms/op\n", o as f64 / span, b as f64 / span / 1048576.0);
        if kind.is_io() {
            ops += o;
            bytes += b;
            lat += l;
            match kind.direction() {
                Direction::Read => rd += o,
                Direction::Write => wr += o,
                Direction::None => {}
            }
        }
    }
    lines += &format!(
        "{:8.3}: IO Summary: {ops} ops {:.3} ops/s {:.0}/{:.0} rd/wr {:.1}mb/s {:.3}ms/op",
        st.at_s,
        ops as f64 / span,
        rd as f64 / span,
        wr as f64 / span,
        bytes as f64 / span / 1048576.0,
        if ops == 0 { 0.0 } else { lat as f64 / ops as f64 / 1e6 }
    );
    lines
}

/// Per name, in definition order: the merged statistics and the report's
/// flowop information.
pub fn merge(prog: &Program, outs: &[ThreadOut]) -> (Vec<OpStats>, Vec<FlowopInfo>) {
    let n = prog.names.len();
    let mut hists: Vec<super::hist::CompactHist> = (0..n).map(|_| Default::default()).collect();
    let mut infos: Vec<FlowopInfo> = prog.names.iter().map(|(name, kind)| FlowopInfo::new(name, *kind)).collect();
    let mut ops: Vec<OpStats> = infos.iter().map(|i| OpStats::new(&i.name, i.class(), false)).collect();
    for (t, out) in prog.threads.iter().zip(outs) {
        for (slot, st) in out.stats.iter().enumerate() {
            let Some(&name) = t.slots.get(slot) else { continue };
            let o = &mut ops[name];
            o.ops += st.ops;
            o.bytes += st.bytes;
            o.errors += st.errors;
            hists[name].merge(&st.hist);
            infos[name].out_of_files += st.out_of_files;
            infos[name].busy_skips += st.busy_skips;
        }
    }
    for (o, h) in ops.iter_mut().zip(&hists) {
        o.lat = h.to_latency();
    }
    (ops, infos)
}

/// What the threads noted ("thread NAME: cannot set nice 5: ..."), one
/// warning per thing noted, naming a few of the threads that noted it: a
/// workload of a thousand threads says it once, not a thousand times.
pub fn thread_notes(outs: &[ThreadOut]) -> Vec<Warning> {
    let mut said: Vec<(&str, Vec<&str>)> = Vec::new();
    for n in outs.iter().flat_map(|o| &o.notes) {
        let (thread, what) = n.strip_prefix("thread ").and_then(|t| t.split_once(": ")).unwrap_or(("", n.as_str()));
        match said.iter_mut().find(|(w, _)| *w == what) {
            Some((_, threads)) => threads.push(thread),
            None => said.push((what, vec![thread])),
        }
    }
    said.into_iter()
        .map(|(what, threads)| match threads.as_slice() {
            _ if threads.iter().all(|t| t.is_empty()) => Warning::new(Code::WorkloadNote, what),
            [one] => Warning::new(Code::WorkloadNote, format!("thread {one}: {what}")),
            _ => Warning::new(Code::WorkloadNote, format!("{} threads: {what} ({})", threads.len(), few(&threads)))
                .with_details(threads.iter().map(|t| t.to_string()).collect()),
        })
        .collect()
}

/// Warnings about shortages, in words a user can act on.
pub fn shortage_warnings(infos: &[FlowopInfo], mode: QuitMode) -> Vec<String> {
    let mut w = Vec::new();
    for f in infos.iter().filter(|f| f.out_of_files > 0) {
        let what = match f.kind.as_str() {
            "createfile" => "found no free file",
            "makedir" => "found no missing leaf directory",
            "removedir" => "found no existing leaf directory",
            "deletefile" => "found no existing file that no thread had open",
            _ => "found no existing file",
        };
        let then = match mode {
            QuitMode::Timeout => {
                "each time the thread started its flowop list again (Filebench aborts the run here); set mode quit alldone/firstdone or define more entries"
            }
            QuitMode::AllDone => "the thread stopped there (mode quit alldone)",
            QuitMode::FirstDone => "the run ended there (mode quit firstdone)",
        };
        let times = if f.out_of_files == 1 { "once".to_string() } else { format!("{} times", f.out_of_files) };
        w.push(format!("flowop {} {what} {times}: {then}", f.name));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_of_many_threads_is_one_short_warning() {
        // A workload of 1,000 threads that may not renice: one line each, before.
        let outs: Vec<ThreadOut> = (0..1000)
            .map(|i| ThreadOut { stats: Vec::new(), notes: vec![format!("thread worker-thread-{i}: cannot set nice 5: EPERM")] })
            .chain(std::iter::once(ThreadOut { stats: Vec::new(), notes: vec!["thread solo: cannot set ioprio 1: EPERM".into()] }))
            .collect();
        let w = thread_notes(&outs);
        assert_eq!(w.len(), 2, "{w:?}");
        assert_eq!(w[0].code, Code::WorkloadNote);
        assert!(w[0].message.starts_with("1000 threads: cannot set nice 5: EPERM (worker-thread-0, "), "{}", w[0].message);
        assert!(w[0].message.ends_with("and 997 more)") && w[0].message.chars().count() <= 200, "{}", w[0].message);
        assert_eq!(w[0].details.len(), 1000);
        assert_eq!(w[1].message, "thread solo: cannot set ioprio 1: EPERM");
    }
}
