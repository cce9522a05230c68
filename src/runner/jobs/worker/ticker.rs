//! Per-second accounting: each direction's I/Os and bytes per closed
//! second, the series the result's timeline and steady state are made of.

use super::{KINDS, OP_NAMES, SYNC};
use crate::result::Timeline;
use crate::runner::jobs::steady::Steady;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TICK: Duration = Duration::from_secs(1);

/// Per-interval counters, pushed into preallocated series once a second.
pub(super) struct Ticker {
    next: Instant,
    cur_ops: [u64; KINDS],
    cur_bytes: [u64; KINDS],
    ops: [Vec<u64>; KINDS],
    bytes: [Vec<u64>; KINDS],
    /// Told each closed second: the steady-state check costs nothing per I/O.
    pub(super) steady: Option<Arc<Steady>>,
}

impl Ticker {
    pub(super) fn new(start: Instant, capacity: usize, steady: Option<Arc<Steady>>) -> Ticker {
        let v = || Vec::with_capacity(capacity);
        Ticker {
            next: start + TICK,
            cur_ops: [0; KINDS],
            cur_bytes: [0; KINDS],
            ops: std::array::from_fn(|_| v()),
            bytes: std::array::from_fn(|_| v()),
            steady,
        }
    }

    /// Measurement starts again at `now` (the latency search's final run).
    pub(super) fn restart(&mut self, now: Instant) {
        self.cur_ops = [0; KINDS];
        self.cur_bytes = [0; KINDS];
        self.ops.iter_mut().chain(self.bytes.iter_mut()).for_each(Vec::clear);
        self.next = now + TICK;
    }

    /// The ramp is over: what it counted in the second under way is forgotten.
    pub(super) fn forget_current(&mut self) {
        self.cur_ops = [0; KINDS];
        self.cur_bytes = [0; KINDS];
    }

    #[inline]
    pub(super) fn add(&mut self, t: Instant, dir: usize, bytes: u64) {
        while t >= self.next {
            self.roll();
        }
        self.cur_ops[dir] += 1;
        self.cur_bytes[dir] += bytes;
    }

    fn roll(&mut self) {
        if let Some(s) = &self.steady {
            // fio's steady state counts reads, writes and trims, not syncs.
            let sec = self.ops[0].len() as u64;
            s.second(sec, self.cur_ops[..SYNC].iter().sum(), self.cur_bytes[..SYNC].iter().sum());
        }
        for d in 0..KINDS {
            self.ops[d].push(self.cur_ops[d]);
            self.bytes[d].push(self.cur_bytes[d]);
        }
        self.cur_ops = [0; KINDS];
        self.cur_bytes = [0; KINDS];
        self.next += TICK;
    }

    pub(super) fn forget_bytes(&mut self) {
        self.cur_bytes = [0; KINDS];
        for b in self.bytes.iter_mut() {
            b.iter_mut().for_each(|x| *x = 0);
        }
    }

    /// Complete intervals only; the partial tail would read as a dip. An
    /// interval that ended before `end` is complete even when no I/O
    /// finished after its boundary.
    pub(super) fn into_timeline(mut self, used: [bool; KINDS], end: Instant) -> Timeline {
        // The job is over; its trailing idle seconds are no rate to judge.
        self.steady = None;
        while end >= self.next {
            self.roll();
        }
        let mut tl = Timeline { interval_ms: TICK.as_millis() as u64, ..Default::default() };
        for d in 0..KINDS {
            if used[d] {
                tl.ops.insert(OP_NAMES[d].to_string(), self.ops[d].clone());
                tl.bytes.insert(OP_NAMES[d].to_string(), self.bytes[d].clone());
            }
        }
        tl
    }
}
