//! The key a read, update, scan or read-modify-write picks: CoreWorkload's
//! `keychooser` as `init` builds it from `requestdistribution`, and
//! `nextKeynum`'s rule that a key not yet acknowledged is drawn again.

use super::counter::{effective_recordcount, AcknowledgedCounter};
use super::numbers::{Exponential, Hotspot, Sequential, Uniform};
use super::zipfian::{ScrambledZipfian, SkewedLatest};
use crate::model::ycsb::{KeyDist, YcsbPlan};
use crate::runner::rng::Rng;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

#[derive(Clone, Debug)]
enum Dist {
    Uniform(Uniform),
    Zipfian(ScrambledZipfian),
    Latest(SkewedLatest),
    Hotspot(Hotspot),
    Exponential(Exponential),
    Sequential(Sequential),
}

/// One per client thread (clone it: `latest` sums ζ over every record when
/// built). The acknowledged-insert counter and, for `sequential`, the
/// position are shared.
#[derive(Clone, Debug)]
pub struct KeyChooser {
    dist: Dist,
    acked: Arc<AcknowledgedCounter>,
}

impl KeyChooser {
    /// `acked` is the run's shared `AcknowledgedCounter::for_plan(plan)`,
    /// `sequence` the shared position of `requestdistribution=sequential`
    /// (start it at 0; unused otherwise).
    pub fn new(plan: &YcsbPlan, acked: Arc<AcknowledgedCounter>, sequence: Arc<AtomicU64>) -> Result<KeyChooser, String> {
        let recordcount = effective_recordcount(plan);
        let (start, count) = (plan.insertstart, plan.insertcount);
        if start.checked_add(count).is_none_or(|end| end > recordcount) {
            return Err(format!(
                "insertstart={start} + insertcount={count} is above recordcount={recordcount}: \
                 YCSB requires recordcount >= insertstart + insertcount"
            ));
        }
        let name = plan.requestdistribution.name();
        let nonempty = || {
            if count == 0 {
                Err(format!("insertcount=0 leaves requestdistribution={name} no keys to choose from"))
            } else {
                Ok(())
            }
        };
        let last = start + count.max(1) - 1;
        let dist = match plan.requestdistribution {
            KeyDist::Uniform => {
                nonempty()?;
                Dist::Uniform(Uniform::new(start, last, "insertstart..insertstart+insertcount")?)
            }
            KeyDist::Zipfian => {
                if start >= recordcount {
                    return Err(format!("insertstart={start} leaves no loaded key below recordcount={recordcount}"));
                }
                // Room for the keys the run's inserts will add (YCSB's
                // "fudge factor" 2), so the hot keys stay where they are as
                // the keyspace fills; keys not there yet are drawn again.
                let expected_new = (plan.operationcount as f64 * plan.proportions.insert * 2.0) as i32;
                let end = start + count + expected_new.max(0) as u64;
                Dist::Zipfian(ScrambledZipfian::new(start, end))
            }
            KeyDist::Latest => Dist::Latest(SkewedLatest::new(acked.clone())),
            KeyDist::Hotspot { data_fraction, op_fraction } => {
                nonempty()?;
                Dist::Hotspot(Hotspot::new(start, last, data_fraction, op_fraction)?)
            }
            KeyDist::Exponential { percentile, frac } => Dist::Exponential(Exponential::new(percentile, recordcount as f64 * frac)?),
            KeyDist::Sequential => {
                nonempty()?;
                Dist::Sequential(Sequential::new(start, last, sequence)?)
            }
        };
        Ok(KeyChooser { dist, acked })
    }

    /// The key number of the next read, update, scan or read-modify-write.
    ///
    /// YCSB truncates the drawn number to a Java int here (`intValue()`),
    /// which breaks keyspaces beyond 2^31 keys; the full number is kept.
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        loop {
            let k = match &mut self.dist {
                Dist::Uniform(g) => g.next(rng),
                Dist::Zipfian(g) => g.next(rng),
                Dist::Latest(g) => g.next(rng),
                Dist::Hotspot(g) => g.next(rng),
                Dist::Sequential(g) => g.next(),
                Dist::Exponential(e) => {
                    // Counted back from the newest acknowledged key, with
                    // YCSB's (saturating) int conversion of the draw.
                    let back = e.next(rng) as i32 as i64;
                    let k = self.acked.last_value() - back;
                    if k >= 0 {
                        return k as u64;
                    }
                    continue;
                }
            };
            if k as i64 <= self.acked.last_value() {
                return k;
            }
        }
    }
}
