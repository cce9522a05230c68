//! A block trace capture whose global changes are in the cleanup registry:
//! undone on Ctrl-C, panic and early exit, and on record for `fsbench
//! cleanup` if the process is killed. What killed runs left is put back
//! first, so their tracer does not block this capture.

use crate::environment::cleanup::{self, Action, Token};
use crate::environment::state;
use crate::observe::trace::capture::{self, Capture, CaptureError, StopResult, TraceRequest};
use crate::observe::trace::record::RecordSink;

/// A capture and the registry entries that undo it.
pub struct TraceSession {
    capture: Capture,
    tokens: Vec<Token>,
    /// What was put back from killed runs before starting.
    pub recovered: Vec<String>,
}

/// Start a capture (see `observe::trace::capture::start`).
pub fn start(req: &TraceRequest, sink: Box<dyn RecordSink>) -> Result<TraceSession, CaptureError> {
    let recovered = state::undo_dead_traces();
    let mut tokens = Vec::new();
    let started = capture::start_logged(req, sink, &mut |u| tokens.push(cleanup::register(Action::Trace(u.clone()))));
    match started {
        Ok(capture) => Ok(TraceSession { capture, tokens, recovered }),
        Err(e) => {
            // A failed start has put back what it changed.
            tokens.into_iter().for_each(Token::forget);
            Err(e)
        }
    }
}

impl TraceSession {
    pub fn capture(&self) -> &Capture {
        &self.capture
    }

    /// Stop the capture; the sink comes back to be finished.
    pub fn stop(self) -> StopResult {
        let r = self.capture.stop();
        match &r {
            Ok(_) => self.tokens.into_iter().for_each(Token::forget),
            // Try each step again; what still fails is printed.
            Err(_) => {
                for t in self.tokens.into_iter().rev() {
                    if let Err(e) = t.done() {
                        eprintln!("fsbench: {e}");
                    }
                }
            }
        }
        r
    }
}
