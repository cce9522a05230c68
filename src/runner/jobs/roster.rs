//! The workers of one run-together group as fio's terminate walks its
//! threads: which reporting group each belongs to, whether it is running,
//! and its own stop flag. A job ending with `exitall` stops the ones its
//! `exit_what` names (fio 3.33 `fio_terminate_threads`).

use crate::model::job_misc::ExitWhat;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

struct Member {
    /// Reporting group (fio's groupid).
    gid: u32,
    /// The one flag this worker's I/O loop reads.
    halt: Arc<AtomicBool>,
    /// Past its startdelay and ramp_time: what fio's `exit_what=stonewall`
    /// stops (runstate TD_RUNNING or later). Jobs still waiting to start or
    /// ramping are spared and run on, as in fio.
    running: AtomicBool,
}

pub struct Roster {
    members: Vec<Member>,
}

impl Roster {
    /// One member per worker, in the order seats are handed out.
    pub fn new(gids: impl IntoIterator<Item = u32>) -> Arc<Roster> {
        let members =
            gids.into_iter().map(|gid| Member { gid, halt: Arc::new(AtomicBool::new(false)), running: AtomicBool::new(false) }).collect();
        Arc::new(Roster { members })
    }

    pub fn seat(self: &Arc<Roster>, slot: usize) -> Seat {
        Seat { roster: self.clone(), slot }
    }

    /// Ctrl-C: every worker stops.
    pub fn halt_all(&self) {
        for m in &self.members {
            m.halt.store(true, Ordering::Relaxed);
        }
    }
}

/// One worker's place in its roster.
pub struct Seat {
    roster: Arc<Roster>,
    slot: usize,
}

impl Seat {
    fn me(&self) -> &Member {
        &self.roster.members[self.slot]
    }

    pub fn halt(&self) -> Arc<AtomicBool> {
        self.me().halt.clone()
    }

    /// Past the start delay and the ramp: exit_what=stonewall reaches it now.
    pub fn running(&self) {
        self.me().running.store(true, Ordering::Relaxed);
    }

    /// This worker's job ended with exitall: stop what `what` names. Jobs of
    /// the reporting group are stopped even before they start (they then do
    /// nothing, as fio skips them); `stonewall` stops only running ones;
    /// `all` every one here (the caller ends the run too).
    pub fn exit(&self, what: ExitWhat) {
        let gid = self.me().gid;
        for m in &self.roster.members {
            let hit = match what {
                ExitWhat::Group => m.gid == gid,
                ExitWhat::Stonewall => m.running.load(Ordering::Relaxed),
                ExitWhat::All => true,
            };
            if hit {
                m.halt.store(true, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn halted(r: &Arc<Roster>) -> Vec<bool> {
        (0..r.members.len()).map(|i| r.seat(i).halt().load(Ordering::Relaxed)).collect()
    }

    #[test]
    fn exit_what_picks_fio_s_threads() {
        // Groups 0, 1, 1, 2; workers 0, 1 and 3 running, 2 still waiting.
        let mk = || {
            let r = Roster::new([0, 1, 1, 2]);
            for i in [0, 1, 3] {
                r.seat(i).running();
            }
            r
        };
        let r = mk();
        r.seat(1).exit(ExitWhat::Group);
        assert_eq!(halted(&r), [false, true, true, false], "its reporting group, started or not");
        let r = mk();
        r.seat(1).exit(ExitWhat::Stonewall);
        assert_eq!(halted(&r), [true, true, false, true], "every running worker, of any group");
        let r = mk();
        r.seat(0).exit(ExitWhat::All);
        assert_eq!(halted(&r), [true; 4]);
        let r = mk();
        r.halt_all();
        assert_eq!(halted(&r), [true; 4]);
    }
}
