//! The terminal's side of `runner::events`: warnings and notes on stderr,
//! and while a measured window is open a progress line (only when a person
//! is watching both streams; stdout carries the report).

use crate::result::warning::{Code, Warning};
use crate::runner::events::{Events, Expected, Meter};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub struct Terminal {
    progress: bool,
    /// The report is the tool's text on stdout: rows are shown as measured.
    stream: bool,
    streamed: Mutex<String>,
    shown: Mutex<Option<Shown>>,
}

struct Shown {
    bar: ProgressBar,
    done: Arc<AtomicBool>,
    drawer: JoinHandle<()>,
}

impl Terminal {
    pub fn new(progress: bool) -> Terminal {
        Terminal { progress, stream: false, streamed: Mutex::new(String::new()), shown: Mutex::new(None) }
    }

    /// Show the tool's own text on stdout as the runner measures it (set
    /// only when the report is that text and goes to stdout).
    pub fn streaming(mut self, on: bool) -> Terminal {
        self.stream = on;
        self
    }

    /// Print a line on stderr without tearing the progress line.
    fn line(&self, text: &str) {
        match self.shown.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(s) => s.bar.suspend(|| eprintln!("{text}")),
            None => eprintln!("{text}"),
        }
    }
}

/// The warnings already on stderr (code and message, without the place
/// that said them), so that each is printed once per process: once per
/// run, however many repeats or cells say it, and not again when a
/// document repeats its warnings at its end.
fn printed() -> std::sync::MutexGuard<'static, BTreeSet<(Code, String)>> {
    static PRINTED: Mutex<BTreeSet<(Code, String)>> = Mutex::new(BTreeSet::new());
    PRINTED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `w` is new to stderr (and from now on, not).
fn first_time(w: &Warning) -> bool {
    printed().insert((w.code, w.message.clone()))
}

/// Print on stderr the warnings not printed yet. An experiment's summary
/// restates its runs' warnings with the cells they concern before them
/// ("CELL, CELL: MESSAGE"): one already printed is not printed again.
pub fn echo_warnings(warnings: &[Warning]) {
    for w in warnings {
        let restated = printed().iter().any(|(code, m)| *code == w.code && w.message.ends_with(&format!(": {m}")));
        if !restated && first_time(w) {
            eprintln!("fsbench: {}", w.line());
        }
    }
}

impl Events for Terminal {
    fn warning(&self, w: &Warning) {
        if first_time(w) {
            self.line(&format!("fsbench: {}", w.line()));
        }
    }
    fn warning_at(&self, place: &str, w: &Warning) {
        if first_time(w) {
            self.line(&format!("fsbench: {}", w.at(place).line()));
        }
    }
    fn note(&self, text: &str) {
        self.line(text);
    }
    fn measuring(&self, label: &str, expected: &Expected, meter: Arc<Meter>) {
        if !self.progress {
            return;
        }
        self.measured();
        let bar = ProgressBar::new(1000);
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix} [{bar:30}] {percent:>3}% {msg} ETA {eta}")
                .expect("static template")
                .progress_chars("=> "),
        );
        bar.set_prefix(label.to_string());
        let done = Arc::new(AtomicBool::new(false));
        let (b, d, e) = (bar.clone(), done.clone(), expected.clone());
        let drawer = std::thread::spawn(move || {
            crate::host::private_fd_table(false);
            draw(&b, &e, &meter, &d)
        });
        *self.shown.lock().unwrap_or_else(|e| e.into_inner()) = Some(Shown { bar, done, drawer });
    }
    fn streams(&self) -> bool {
        self.stream
    }
    fn stream(&self, text: &str) {
        use std::io::Write;
        let put = || {
            let mut out = std::io::stdout().lock();
            // A closed pipe ends nothing here: the run goes on and the end
            // reports the write error as any report's would.
            let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
        };
        // The bar is on stderr: cleared while the rows go to a shared
        // terminal, drawn again below them.
        match self.shown.lock().unwrap_or_else(|e| e.into_inner()).as_ref() {
            Some(s) => s.bar.suspend(put),
            None => put(),
        }
        self.streamed.lock().unwrap_or_else(|e| e.into_inner()).push_str(text);
    }
    fn take_streamed(&self) -> String {
        std::mem::take(&mut *self.streamed.lock().unwrap_or_else(|e| e.into_inner()))
    }
    fn wait_for_user(&self, prompt: &str) -> Result<(), String> {
        eprint!("{prompt}");
        let mut line = String::new();
        std::io::stdin().read_line(&mut line).map(|_| ()).map_err(|e| format!("reading standard input: {e}"))
    }
    fn measured(&self) {
        let shown = self.shown.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(s) = shown {
            s.done.store(true, Ordering::Relaxed);
            let _ = s.drawer.join();
            s.bar.finish_and_clear();
        }
    }
}

/// Redraw every 200 ms: the share done (by time, bytes or operations,
/// whichever is furthest) and the current rates.
fn draw(bar: &ProgressBar, expected: &Expected, meter: &Meter, done: &AtomicBool) {
    let start = Instant::now();
    let (mut last_ops, mut last_bytes, mut last_t) = (0u64, 0u64, start);
    while !done.load(Ordering::Relaxed) {
        let now = Instant::now();
        let (ops, bytes) = (meter.ops.load(Ordering::Relaxed), meter.bytes.load(Ordering::Relaxed));
        let mut frac: f64 = 0.0;
        if let Some(t) = expected.time {
            frac = frac.max(now.duration_since(start).as_secs_f64() / t.as_secs_f64().max(1e-9));
        }
        if expected.bytes > 0 {
            frac = frac.max(bytes as f64 / expected.bytes as f64);
        }
        if expected.ops > 0 {
            frac = frac.max(ops as f64 / expected.ops as f64);
        }
        let dt = now.duration_since(last_t).as_secs_f64();
        if dt > 0.0 {
            let mib_s = bytes.saturating_sub(last_bytes) as f64 / dt / 1048576.0;
            let ops_s = ops.saturating_sub(last_ops) as f64 / dt;
            bar.set_message(if expected.ops > 0 && expected.time.is_none() {
                format!("{ops}/{}", expected.ops)
            } else if ops > 0 {
                format!("{ops_s:.0} ops/s, {mib_s:.1} MiB/s")
            } else {
                format!("{mib_s:.1} MiB/s")
            });
        }
        (last_ops, last_bytes, last_t) = (ops, bytes, now);
        bar.set_position((frac.min(1.0) * 1000.0) as u64);
        std::thread::sleep(Duration::from_millis(200));
    }
}
