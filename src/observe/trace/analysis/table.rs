//! The per-I/O state the analysis keeps between events, bounded and
//! allocated once: the queued bios (btt's pending Qs, keyed by device and
//! start sector, several per key when the same sectors are queued twice)
//! and the dispatched requests still on the device.

use crate::result::trace::analysis::Role;
use std::collections::HashMap;

/// "Not seen yet" for an event time.
pub const NONE: u64 = u64::MAX;
const END: u32 = u32::MAX;

/// One queued bio (a Q) and the times of the later events that found it.
#[derive(Clone, Copy, Debug)]
pub struct Bio {
    pub sector: u64,
    pub sectors: u64,
    pub q_ns: u64,
    pub g_ns: u64,
    pub i_ns: u64,
    pub m_ns: u64,
    pub d_ns: u64,
    pub role: Role,
    next: u32,
}

impl Bio {
    pub fn new(sector: u64, sectors: u64, q_ns: u64, role: Role) -> Bio {
        Bio { sector, sectors, q_ns, g_ns: NONE, i_ns: NONE, m_ns: NONE, d_ns: NONE, role, next: END }
    }
    pub fn end(&self) -> u64 {
        self.sector + self.sectors
    }
}

/// Pending bios: a slab with a free list, chained per (device, sector).
/// The hash map gets twice the slots it will ever hold, so its in-place
/// rehashing never needs to grow it.
pub struct Bios {
    slots: Vec<Bio>,
    free: Vec<u32>,
    heads: HashMap<(u32, u64), u32>,
    cap: usize,
}

impl Bios {
    pub fn with_capacity(cap: usize) -> Bios {
        let cap = cap.clamp(1, END as usize - 1);
        Bios { slots: Vec::with_capacity(cap), free: Vec::with_capacity(cap), heads: HashMap::with_capacity(2 * cap), cap }
    }

    pub fn len(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    pub fn is_full(&self) -> bool {
        self.len() >= self.cap
    }

    /// Adds a bio; false (and nothing kept) when the table is full.
    pub fn insert(&mut self, dev: u32, mut bio: Bio) -> bool {
        if self.is_full() {
            return false;
        }
        let key = (dev, bio.sector);
        bio.next = self.heads.get(&key).copied().unwrap_or(END);
        let idx = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = bio;
                i
            }
            None => {
                self.slots.push(bio);
                (self.slots.len() - 1) as u32
            }
        };
        self.heads.insert(key, idx);
        true
    }

    /// The most recently queued bio starting at `sector` for which `want`
    /// holds, else the most recent one there.
    pub fn find(&mut self, dev: u32, sector: u64, want: impl Fn(&Bio) -> bool) -> Option<&mut Bio> {
        let head = *self.heads.get(&(dev, sector))?;
        let mut i = head;
        while i != END {
            if want(&self.slots[i as usize]) {
                return Some(&mut self.slots[i as usize]);
            }
            i = self.slots[i as usize].next;
        }
        Some(&mut self.slots[head as usize])
    }

    /// Visits every pending bio that lies inside `[start, end)` and that
    /// the bios from `start` reach end to end (a request is its bios laid
    /// back to back, whatever merged them), in sector order; `visit`
    /// returns whether to drop the bio afterwards.
    pub fn cover(&mut self, dev: u32, start: u64, end: u64, mut visit: impl FnMut(&mut Bio) -> bool) {
        let mut pos = start;
        while pos < end {
            let Some(&head) = self.heads.get(&(dev, pos)) else { return };
            let mut next = pos;
            let (mut prev, mut i, mut new_head) = (END, head, head);
            while i != END {
                let slot = &mut self.slots[i as usize];
                let after = slot.next;
                let mut dropped = false;
                if slot.sectors > 0 && slot.end() <= end {
                    next = next.max(slot.end());
                    dropped = visit(slot);
                }
                if dropped {
                    if prev == END {
                        new_head = after;
                    } else {
                        self.slots[prev as usize].next = after;
                    }
                    self.free.push(i);
                } else {
                    prev = i;
                }
                i = after;
            }
            if new_head == END {
                self.heads.remove(&(dev, pos));
            } else if new_head != head {
                self.heads.insert((dev, pos), new_head);
            }
            if next == pos {
                return;
            }
            pos = next;
        }
    }

    /// Drops every bio queued before `before_ns` (its completion was lost
    /// or falls outside the trace); returns how many.
    pub fn evict_older(&mut self, before_ns: u64) -> u64 {
        let (slots, free) = (&mut self.slots, &mut self.free);
        let mut n = 0;
        self.heads.retain(|_, head| {
            let (mut prev, mut i) = (END, *head);
            while i != END {
                let after = slots[i as usize].next;
                if slots[i as usize].q_ns < before_ns {
                    if prev == END {
                        *head = after;
                    } else {
                        slots[prev as usize].next = after;
                    }
                    free.push(i);
                    n += 1;
                } else {
                    prev = i;
                }
                i = after;
            }
            *head != END
        });
        n
    }
}

/// A dispatched request not yet completed: how many are outstanding at
/// that (device, sector) and when the last was dispatched.
#[derive(Clone, Copy, Debug)]
pub struct Inflight {
    pub n: u32,
    pub d_ns: u64,
}

/// Requests on the device, for the queue depth and per-request D2C.
pub struct Requests {
    map: HashMap<(u32, u64), Inflight>,
    cap: usize,
}

impl Requests {
    pub fn with_capacity(cap: usize) -> Requests {
        let cap = cap.max(1);
        Requests { map: HashMap::with_capacity(2 * cap), cap }
    }

    /// Records a dispatch; false when the table is full (it is not counted
    /// in flight then, so the depth does not drift when its C comes).
    pub fn dispatch(&mut self, dev: u32, sector: u64, d_ns: u64) -> bool {
        if let Some(e) = self.map.get_mut(&(dev, sector)) {
            e.n += 1;
            e.d_ns = d_ns;
            return true;
        }
        if self.map.len() >= self.cap {
            return false;
        }
        self.map.insert((dev, sector), Inflight { n: 1, d_ns });
        true
    }

    /// Takes one request off the device (completion or requeue); its
    /// dispatch time, or None when it was not dispatched in the trace.
    pub fn retire(&mut self, dev: u32, sector: u64) -> Option<u64> {
        let e = self.map.get_mut(&(dev, sector))?;
        let d = e.d_ns;
        e.n -= 1;
        if e.n == 0 {
            self.map.remove(&(dev, sector));
        }
        Some(d)
    }

    pub fn is_full(&self) -> bool {
        self.map.len() >= self.cap
    }

    /// Forgets requests dispatched before `before_ns`; returns how many.
    pub fn evict_older(&mut self, before_ns: u64) -> u64 {
        let mut n = 0;
        self.map.retain(|_, e| {
            let keep = e.d_ns >= before_ns;
            if !keep {
                n += e.n as u64;
            }
            keep
        });
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cover_walks_back_to_back_bios_and_drops_what_it_is_told() {
        let mut b = Bios::with_capacity(8);
        for (s, n) in [(0, 8), (8, 8), (16, 8), (100, 8)] {
            assert!(b.insert(1, Bio::new(s, n, s, Role::Other)));
        }
        let mut seen = vec![];
        b.cover(1, 0, 16, |bio| {
            seen.push(bio.sector);
            true
        });
        assert_eq!(seen, [0, 8]);
        assert_eq!(b.len(), 2);
        // A bio sticking out of the range is not covered.
        let mut n = 0;
        b.cover(1, 16, 20, |_| {
            n += 1;
            false
        });
        assert_eq!(n, 0);
        // Another device's bio at the same sector is apart.
        assert!(b.find(2, 100, |_| true).is_none());
        assert_eq!(b.evict_older(50), 1);
        assert_eq!(b.len(), 1);
    }

    #[test]
    fn tables_are_bounded() {
        let mut b = Bios::with_capacity(2);
        assert!(b.insert(1, Bio::new(0, 8, 0, Role::Other)));
        assert!(b.insert(1, Bio::new(0, 8, 1, Role::Benchmark)));
        assert!(!b.insert(1, Bio::new(8, 8, 2, Role::Other)));
        // The most recent of two bios at one sector comes first.
        assert_eq!(b.find(1, 0, |_| true).unwrap().role, Role::Benchmark);
        let mut r = Requests::with_capacity(1);
        assert!(r.dispatch(1, 0, 5));
        assert!(r.dispatch(1, 0, 6), "a second request at the same sector shares the entry");
        assert!(!r.dispatch(1, 8, 7));
        assert_eq!(r.retire(1, 0), Some(6));
        assert_eq!(r.retire(1, 0), Some(6));
        assert_eq!(r.retire(1, 0), None);
    }
}
