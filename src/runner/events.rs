//! How runners tell the user what is going on without printing: warnings
//! and notes as they happen, and a meter for each measured window that a
//! progress display may read. The CLI draws; runners only report, and when
//! a workload waits for the user (Bonnie++'s `-y p`) they ask through here.

use crate::result::warning::Warning;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What "done" means for a measured window: a duration, an amount of
/// work, or both (whichever the display reaches first).
#[derive(Clone, Debug, Default)]
pub struct Expected {
    pub time: Option<Duration>,
    /// Bytes to transfer (size-limited fio jobs).
    pub bytes: u64,
    /// Operations to complete (a Postmark run's transactions).
    pub ops: u64,
}

/// Counters a runner keeps current during a measured window (written by
/// one controlling thread, a few times a second, never per I/O).
#[derive(Debug, Default)]
pub struct Meter {
    pub ops: AtomicU64,
    pub bytes: AtomicU64,
}

pub trait Events: Send + Sync {
    /// Something the user should know about the run's validity.
    fn warning(&self, w: &Warning);
    /// The same, said of `place` (an experiment's cell): a display that
    /// shows each warning once shows it at the first place it comes from.
    fn warning_at(&self, place: &str, w: &Warning) {
        self.warning(&w.at(place));
    }
    /// Something the workload asked to show (echo, psrun intervals) or a
    /// step of the run (filesets built).
    fn note(&self, text: &str);
    /// A measured window opens; `meter` is kept current until `measured`.
    fn measuring(&self, label: &str, expected: &Expected, meter: Arc<Meter>);
    /// The window closed.
    fn measured(&self);
    /// Whether the runner should hand its tool's own text (IOzone's
    /// preamble and rows) to `stream` as it measures it: only when that
    /// text is the report and goes to the terminal or a pipe, so the
    /// runner formats nothing otherwise.
    fn streams(&self) -> bool {
        false
    }
    /// Text of the report, shown now, between measured passes.
    fn stream(&self, _text: &str) {}
    /// What `stream` has shown since last taken: the report written at the
    /// end leaves it out.
    fn take_streamed(&self) -> String {
        String::new()
    }
    /// Show `prompt` and wait for the user's go-ahead; Err when it cannot
    /// be read. Only the side that talks to the user can ask, so a runner
    /// never reads standard input itself; with no one to ask, go on at once.
    fn wait_for_user(&self, _prompt: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Keeps every warning and note, shows nothing: for tests and for runs
/// whose caller reports by itself.
#[derive(Debug, Default)]
pub struct Collect {
    pub warnings: Mutex<Vec<Warning>>,
    pub notes: Mutex<Vec<String>>,
}

impl Events for Collect {
    fn warning(&self, w: &Warning) {
        self.warnings.lock().unwrap_or_else(|e| e.into_inner()).push(w.clone());
    }
    fn note(&self, text: &str) {
        self.notes.lock().unwrap_or_else(|e| e.into_inner()).push(text.to_string());
    }
    fn measuring(&self, _: &str, _: &Expected, _: Arc<Meter>) {}
    fn measured(&self) {}
}

/// The warnings of one run: each is reported as it happens and kept for
/// the result, once.
pub struct Warnings<'a> {
    events: &'a dyn Events,
    pub list: Vec<Warning>,
}

impl<'a> Warnings<'a> {
    pub fn new(events: &'a dyn Events) -> Warnings<'a> {
        Warnings { events, list: Vec::new() }
    }

    pub fn warn(&mut self, w: Warning) {
        if !self.list.contains(&w) {
            self.events.warning(&w);
            self.list.push(w);
        }
    }
}
