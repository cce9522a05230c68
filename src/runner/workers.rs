//! The threads that do a benchmark's I/O. Each one notes its thread id as
//! it starts, so that a block trace can charge its requests to the
//! benchmark even when the trace reader meets its id only after it ended
//! (a short job's thread is gone before its pages are read, and /proc no
//! longer tells whose it was).

use std::sync::Mutex;
use std::thread::{Scope, ScopedJoinHandle};

static IDS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Note the calling thread as one of the benchmark's: once, as it starts.
pub fn note_this_thread() {
    // SAFETY: gettid takes no arguments and touches no memory.
    let tid = unsafe { libc::gettid() } as u32;
    let mut ids = IDS.lock().unwrap_or_else(|e| e.into_inner());
    if !ids.contains(&tid) {
        ids.push(tid);
    }
}

/// Every thread id noted so far.
pub fn ids() -> Vec<u32> {
    IDS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Start a named benchmark thread in `s` that notes itself first.
pub fn spawn_scoped<'scope, 'env, T, F>(s: &'scope Scope<'scope, 'env>, name: String, f: F) -> std::io::Result<ScopedJoinHandle<'scope, T>>
where
    F: FnOnce() -> T + Send + 'scope,
    T: Send + 'scope,
{
    std::thread::Builder::new().name(name).spawn_scoped(s, move || {
        note_this_thread();
        f()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_spawned_thread_is_noted_and_stays_noted_after_it_ends() {
        let tid = std::thread::scope(|s| {
            // SAFETY: gettid takes no arguments and touches no memory.
            super::spawn_scoped(s, "fsb-test".into(), || unsafe { libc::gettid() } as u32).unwrap().join().unwrap()
        });
        assert!(super::ids().contains(&tid), "{tid} not in {:?}", super::ids());
    }
}
