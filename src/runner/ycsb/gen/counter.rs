//! The insert-key counters: the load phase's shared sequence and the run
//! phase's `AcknowledgedCounterGenerator`, which tells readers how far the
//! inserts have got.

use crate::model::ycsb::YcsbPlan;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

/// YCSB's window of insert keys handed out but not yet acknowledged: 2^20.
pub const ACK_WINDOW: u64 = 1 << 20;
const MASK: u64 = ACK_WINDOW - 1;

/// The load phase's keys: one counter from `insertstart` shared by every
/// thread (YCSB's `keysequence`), ending after `count` keys. Clones share it.
#[derive(Clone, Debug)]
pub struct InsertKeys {
    next: Arc<AtomicU64>,
    end: u64,
}

impl InsertKeys {
    pub fn new(start: u64, count: u64) -> InsertKeys {
        InsertKeys { next: Arc::new(AtomicU64::new(start)), end: start.saturating_add(count) }
    }

    /// `insertstart`, `insertcount` keys.
    pub fn for_plan(plan: &YcsbPlan) -> InsertKeys {
        InsertKeys::new(plan.insertstart, plan.insertcount)
    }

    /// The next key number, or None once all were handed out.
    #[inline]
    pub fn next(&self) -> Option<u64> {
        let k = self.next.fetch_add(1, Ordering::Relaxed);
        (k < self.end).then_some(k)
    }
}

/// More than `ACK_WINDOW` insert keys were outstanding (YCSB: "Too many
/// unacknowledged insertion keys.").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyUnacknowledged(pub u64);

impl fmt::Display for TooManyUnacknowledged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "too many unacknowledged insert keys: acknowledging {} with {} keys outstanding", self.0, ACK_WINDOW)
    }
}

impl std::error::Error for TooManyUnacknowledged {}

/// YCSB's `AcknowledgedCounterGenerator`, shared by all client threads:
/// `next` hands out insert key numbers from `start`, `acknowledge` marks one
/// inserted, and `last_value` is the highest key with every key up to it
/// acknowledged, so readers never pick a key still being inserted.
///
/// As in YCSB, one thread at a time (whoever gets the try-lock) moves the
/// limit over the acknowledged run; the others just mark their slot. YCSB
/// can strand an acknowledgement that meets a busy lock after the holder has
/// looked at its slot; here whoever releases the lock looks once more.
pub struct AcknowledgedCounter {
    next: AtomicU64,
    limit: AtomicI64,
    window: Box<[AtomicBool]>,
    advancing: AtomicBool,
}

impl fmt::Debug for AcknowledgedCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AcknowledgedCounter")
            .field("next", &self.next.load(Ordering::Relaxed))
            .field("limit", &self.limit.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl AcknowledgedCounter {
    /// Keys from `start`; keys below it count as acknowledged.
    pub fn new(start: u64) -> AcknowledgedCounter {
        AcknowledgedCounter {
            next: AtomicU64::new(start),
            limit: AtomicI64::new(start as i64 - 1),
            window: (0..ACK_WINDOW).map(|_| AtomicBool::new(false)).collect(),
            advancing: AtomicBool::new(false),
        }
    }

    /// YCSB's `transactioninsertkeysequence`: from `recordcount`, which
    /// YCSB takes as `Integer.MAX_VALUE` when 0.
    pub fn for_plan(plan: &YcsbPlan) -> AcknowledgedCounter {
        AcknowledgedCounter::new(effective_recordcount(plan))
    }

    /// The next insert key number.
    #[inline]
    pub fn next(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    /// Every key up to this one is acknowledged (−1: none, only when built
    /// from 0).
    #[inline]
    pub fn last_value(&self) -> i64 {
        self.limit.load(Ordering::Acquire)
    }

    /// Marks `key` inserted (successfully or not: YCSB acknowledges in a
    /// `finally`).
    pub fn acknowledge(&self, key: u64) -> Result<(), TooManyUnacknowledged> {
        // SeqCst on the slots and the lock flag: an acknowledgement that
        // finds the lock taken must be seen by the holder's final look.
        if self.window[(key & MASK) as usize].swap(true, Ordering::SeqCst) {
            return Err(TooManyUnacknowledged(key));
        }
        loop {
            if self.advancing.compare_exchange(false, true, Ordering::SeqCst, Ordering::Relaxed).is_err() {
                return Ok(());
            }
            let mut limit = self.limit.load(Ordering::Relaxed);
            for _ in 0..ACK_WINDOW {
                let slot = &self.window[((limit + 1) as u64 & MASK) as usize];
                if !slot.load(Ordering::SeqCst) {
                    break;
                }
                slot.store(false, Ordering::SeqCst);
                limit += 1;
            }
            self.limit.store(limit, Ordering::Release);
            self.advancing.store(false, Ordering::SeqCst);
            if !self.window[((limit + 1) as u64 & MASK) as usize].load(Ordering::SeqCst) {
                return Ok(());
            }
        }
    }
}

/// YCSB's CoreWorkload reads `recordcount=0` (the Client's default) as
/// `Integer.MAX_VALUE`.
pub(super) fn effective_recordcount(plan: &YcsbPlan) -> u64 {
    if plan.recordcount == 0 {
        i32::MAX as u64
    } else {
        plan.recordcount
    }
}
