//! The driver the fuzz tests share: inputs made and tried on a worker
//! thread for a bounded time, a watchdog that calls an input taking too long
//! a hang, and every failing input saved under `CARGO_TARGET_TMPDIR`.
//!
//! `FSBENCH_FUZZ_SECS` sets the duration (a test may read its own variable
//! first, see [`secs`]), `FSBENCH_FUZZ_SEED` the seed (default: from the
//! clock, printed so a failure can be replayed).

use fsbench::runner::rng::Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The duration: the first of `vars` that is set, else `FSBENCH_FUZZ_SECS`,
/// else `default` seconds.
pub fn secs(vars: &[&str], default: u64) -> u64 {
    vars.iter().chain(&["FSBENCH_FUZZ_SECS"]).find_map(|v| std::env::var(v).ok()?.parse().ok()).unwrap_or(default)
}

pub fn seed() -> u64 {
    std::env::var("FSBENCH_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1))
}

/// Write `text` under `CARGO_TARGET_TMPDIR` as `name`; where it went.
pub fn save(name: &str, text: &str) -> String {
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    match std::fs::write(&path, text) {
        Ok(()) => path.display().to_string(),
        Err(e) => format!("(could not save to {}: {e})", path.display()),
    }
}

/// Failure messages stay readable for huge inputs (the saved file has it all).
pub fn clip(s: &str) -> String {
    const MAX: usize = 4000;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}\n... ({} more bytes)", &s[..i], s.len() - i),
        None => s.to_string(),
    }
}

/// What the worker is trying now, for the watchdog.
struct Current {
    input: String,
    started: Option<Instant>,
}

/// One fuzz run: its name (in messages and saved files), how long, from
/// which seed, and the longest one input may take.
pub struct Fuzz {
    pub name: String,
    pub secs: u64,
    pub seed: u64,
    pub limit: Duration,
}

impl Fuzz {
    /// Try inputs from `make` (each with its text as shown and saved) with
    /// `try_one` until the time is up; the first panic or hang fails the
    /// test with the input. Each input is saved as `NAME.last` before it
    /// runs, so an abort leaves it. Returns how many inputs were tried and
    /// how many `try_one` accepted.
    pub fn run<T: 'static>(
        &self,
        mut make: impl FnMut(&mut Rng) -> Option<(String, T)> + Send + 'static,
        try_one: impl Fn(&T) -> bool + Send + 'static,
    ) -> (u64, u64) {
        let (name, seed, limit) = (self.name.clone(), self.seed, self.limit);
        println!("{name} fuzz: seed {seed} (FSBENCH_FUZZ_SEED), {} s", self.secs);
        let current = Arc::new(Mutex::new(Current { input: String::new(), started: None }));
        let stop = Arc::new(AtomicBool::new(false));
        let (tried, accepted) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let worker = {
            let (current, stop, tried, accepted, name) = (current.clone(), stop.clone(), tried.clone(), accepted.clone(), name.clone());
            std::thread::Builder::new()
                .name(format!("{name}-fuzz"))
                .stack_size(16 << 20)
                .spawn(move || -> Result<(), String> {
                    let mut rng = Rng::new(seed);
                    let last = format!("{name}.last");
                    while !stop.load(Ordering::Relaxed) {
                        let Some((shown, input)) = make(&mut rng) else { continue };
                        save(&last, &shown);
                        if let Ok(mut c) = current.lock() {
                            c.input.clone_from(&shown);
                            c.started = Some(Instant::now());
                        }
                        let r = catch_unwind(AssertUnwindSafe(|| try_one(&input)));
                        if let Ok(mut c) = current.lock() {
                            c.started = None;
                        }
                        tried.fetch_add(1, Ordering::Relaxed);
                        match r {
                            Ok(true) => {
                                accepted.fetch_add(1, Ordering::Relaxed);
                            }
                            Ok(false) => {}
                            Err(_) => {
                                let saved = save(&format!("{name}-panic.txt"), &shown);
                                return Err(format!("it panicked; input saved to {saved}:\n{shown}"));
                            }
                        }
                    }
                    Ok(())
                })
                .expect("spawn the fuzz worker")
        };
        let deadline = Instant::now() + Duration::from_secs(self.secs);
        loop {
            std::thread::sleep(Duration::from_millis(50));
            if worker.is_finished() {
                break;
            }
            let slow = current.lock().ok().and_then(|c| c.started.filter(|s| s.elapsed() > limit).map(|_| c.input.clone()));
            if let Some(input) = slow {
                let saved = save(&format!("{name}-hang.txt"), &input);
                panic!("{name}: one input took more than {limit:?}; saved to {saved}:\n{}", clip(&input));
            }
            if Instant::now() >= deadline {
                stop.store(true, Ordering::Relaxed);
            }
        }
        let result = worker.join().unwrap_or_else(|_| Err("the fuzz worker died".into()));
        let (n, ok) = (tried.load(Ordering::Relaxed), accepted.load(Ordering::Relaxed));
        println!("{name} fuzz: {n} inputs tried, {ok} accepted");
        if let Err(e) = result {
            panic!("{name}: after {n} inputs: {}", clip(&e));
        }
        (n, ok)
    }
}
