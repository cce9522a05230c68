//! The measured window the one-group lifecycle (`lifecycle::drive`)
//! opens around a runner's work: the device counters, the process's I/O and CPU,
//! and the progress meter, opened and closed in one place so every such
//! runner reports the same figures the same way.

use crate::host::proc_io::process_io;
use crate::measure::usage::UsageMark;
use crate::observe::blockdev::DeviceWatch;
use crate::result::{GroupResult, ProcessIo};
use crate::runner::events::{Expected, Meter};
use crate::runner::RunOptions;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) struct Window {
    watch: DeviceWatch,
    io0: ProcessIo,
    u0: UsageMark,
    started_unix_ns: u64,
    /// Kept current by the runner for the progress display.
    pub meter: Arc<Meter>,
}

impl Window {
    /// Start counting; `dirs` are where the files are (their devices are watched).
    pub(crate) fn open(opts: &RunOptions, label: &str, expected: &Expected, dirs: &[PathBuf]) -> Window {
        let refs: Vec<&Path> = dirs.iter().map(|p| p.as_path()).collect();
        let watch = DeviceWatch::start(&refs);
        let io0 = process_io();
        // Read first: the span it starts is never later than the window.
        let started_unix_ns = unix_now_ns();
        let u0 = UsageMark::now();
        let meter = Arc::new(Meter::default());
        opts.events.measuring(label, expected, meter.clone());
        Window { watch, io0, u0, started_unix_ns, meter }
    }

    /// Stop counting: the run's one group, over the window's wall time (a
    /// runner with a figure of its own, such as Postmark's t0..t3, puts
    /// that in `elapsed_ns`).
    pub(crate) fn close(self, opts: &RunOptions) -> GroupResult {
        opts.events.measured();
        let cpu = self.u0.until(&UsageMark::now());
        let elapsed_ns = (cpu.wall_s * 1e9) as u64;
        GroupResult {
            group: 0,
            ran_with: Vec::new(),
            elapsed_ns,
            started_unix_ns: Some(self.started_unix_ns),
            process_io: process_io().since(&self.io0),
            devices: self.watch.finish(elapsed_ns),
            cpu,
        }
    }
}

/// The wall clock in ns: ranks on different machines share no monotonic
/// clock, so their windows line up by this one.
fn unix_now_ns() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0)
}
