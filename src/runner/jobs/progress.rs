//! What a group of jobs is expected to do, and the meter a progress display
//! reads while it runs.

use super::roster::Roster;
use super::worker::ProgressCell;
use crate::model::job::JobSpec;
use crate::runner::events::{Expected, Meter};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// "Done" for a group: its longest startdelay + ramp + runtime over the
/// time-limited jobs, the bytes of the size-limited ones (all clones).
pub fn expected<'a>(jobs: impl Iterator<Item = &'a JobSpec>) -> Expected {
    let mut e = Expected::default();
    for j in jobs {
        if let Some(r) = j.runtime {
            let t = j.startdelay + j.ramp_time + r;
            e.time = Some(e.time.map_or(t, |x| x.max(t)));
        }
        if !j.time_based {
            let per = j.io_size.or(j.size).unwrap_or(0);
            e.bytes += per * j.loops as u64 * j.numjobs as u64;
        }
    }
    e
}

/// Keep `meter` current (every 100 ms) until every worker is done or the
/// run is stopped: the bytes the workers have issued, summed. A stop is
/// passed on to each worker's halt flag, the one flag its I/O loop reads.
pub fn follow(cells: &[Arc<ProgressCell>], meter: &Meter, stop: &AtomicBool, roster: &Roster) {
    loop {
        let bytes: u64 = cells.iter().map(|c| c.bytes.load(Ordering::Relaxed)).sum();
        meter.bytes.store(bytes, Ordering::Relaxed);
        if stop.load(Ordering::Relaxed) {
            roster.halt_all();
            break;
        }
        if cells.iter().all(|c| c.done.load(Ordering::Relaxed)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
