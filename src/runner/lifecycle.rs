//! One lifecycle for the runners whose run is one measured group
//! (Postmark, IOzone, Bonnie++, YCSB, replay): each says what its stages
//! do (`OneGroup`), and `drive` calls them in one fixed order and owns what
//! they used to repeat: the start time, the cache scenario's moment
//! (`before_measure`), the measured `Window`, the warnings, teardown on
//! every path, and the envelope. One trait called in a fixed order, as
//! criterion's `Report` and hyperfine's exporters are:
//!
//! 1. `check`: refuse before anything is claimed or written;
//! 2. `refused`: a refusal the runner records as a failed run instead;
//! 3. `claim`: locks and ownership records (`fsbench cleanup` reads them);
//! 4. `set_up`: what exists before the cache scenario (a store, an engine);
//! 5. `before_measure(data_files)`, then `arm`: what is built after it but
//!    outside the window (YCSB's generators);
//! 6. the window opens; `run`; the window closes;
//! 7. `tear_down`: once claim was called, on success and on every error;
//! 8. `finish`: the runner's jobs, then the envelope.
//!
//! A later distributed mode runs `drive` once per rank and merges the
//! ranks' results (`result::merge`): nothing here depends on being the
//! only rank but the paths a rank was given.

use crate::result::{GroupResult, JobResult, RunResult};
use crate::runner::events::{Expected, Meter, Warnings};
use crate::runner::window::Window;
use crate::runner::{envelope, unix_now, Measured, RunError, RunOptions};
use std::path::PathBuf;
use std::sync::Arc;

#[cfg(test)]
mod tests;

/// What `finish` hands the envelope: the runner's reported units and
/// whether the run was cut short (each runner knows what "short" means:
/// replay is not partial when Ctrl-C came after its last I/O).
pub(crate) struct Finished {
    pub jobs: Vec<JobResult>,
    pub partial: bool,
}

/// The stages of a one-group run, in the order `drive` calls them. The
/// defaults are the stages most runners have nothing to do in.
pub(crate) trait OneGroup {
    /// What the measured run hands teardown and `finish`.
    type Ran;

    /// The measured window's name in the progress display.
    fn label(&self) -> String;

    /// Where the run's files are: the window watches their devices and
    /// the envelope snapshots their mounts.
    fn places(&self) -> Vec<PathBuf>;

    /// What "done" means for the progress display.
    fn expected(&self) -> Expected;

    /// Refuse the plan before anything is claimed or written.
    fn check(&mut self, opts: &RunOptions) -> Result<(), RunError>;

    /// A refusal that is the run's to record as a failed run that
    /// measured nothing (Bonnie++'s too little space, once its directory
    /// is known to be one): `finish` gets it at once with an empty group,
    /// nothing claimed, no window opened.
    fn refused(&mut self, _opts: &RunOptions) -> Option<Self::Ran> {
        None
    }

    /// Take what the run will own or use (in-use locks, ownership
    /// records); released by `tear_down`.
    fn claim(&mut self, _opts: &RunOptions) -> Result<(), RunError> {
        Ok(())
    }

    /// Make what must exist before the cache scenario acts; say what the
    /// run's user should know before it is measured.
    fn set_up(&mut self, _opts: &RunOptions, _warnings: &mut Warnings) -> Result<(), RunError> {
        Ok(())
    }

    /// The data files `before_measure` checks the cache of: none for the
    /// runners that make their files inside the measured window.
    fn data_files(&self) -> Vec<PathBuf> {
        Vec::new()
    }

    /// What is built after the cache scenario and outside the window.
    fn arm(&mut self, _opts: &RunOptions) -> Result<(), RunError> {
        Ok(())
    }

    /// The measured work, inside the window; `meter` feeds the progress
    /// display. An error here still closes the window and tears down.
    fn run(&mut self, opts: &RunOptions, meter: &Arc<Meter>, warnings: &mut Warnings) -> Result<Self::Ran, RunError>;

    /// Remove what the run made (unless kept) and release what it
    /// claimed. `ran` is None when a stage failed.
    fn tear_down(&mut self, _opts: &RunOptions, _ran: Option<&Self::Ran>) -> Result<(), RunError> {
        Ok(())
    }

    /// The run's reported units; `group` is the window's, which a runner
    /// with a span of its own (Postmark's t0..t3) may correct.
    fn finish(self, ran: Self::Ran, group: &mut GroupResult, opts: &RunOptions, warnings: &mut Warnings) -> Result<Finished, RunError>;
}

/// Run `r` through its stages in order and wrap its result. The first
/// error wins: a run's error is returned even when its teardown fails too.
pub(crate) fn drive<R: OneGroup>(
    mut r: R,
    opts: &RunOptions,
    layout: &str,
    before_measure: &mut dyn FnMut(&[PathBuf]),
) -> Result<RunResult, RunError> {
    let started_unix = unix_now();
    r.check(opts)?;
    let places = r.places();
    let mut warnings = Warnings::new(&*opts.events);
    let (ran, mut group) = match r.refused(opts) {
        Some(ran) => (ran, GroupResult::default()),
        None => {
            let measured = claimed(&mut r, opts, before_measure, &places, &mut warnings);
            let down = r.tear_down(opts, measured.as_ref().ok().map(|m| &m.0));
            let measured = measured?;
            down?;
            measured
        }
    };
    let Finished { jobs, partial } = r.finish(ran, &mut group, opts, &mut warnings)?;
    let warnings = warnings.list;
    Ok(envelope(opts, layout, started_unix, Measured { jobs, groups: vec![group], targets: places, warnings, partial }))
}

/// The stages between claim and teardown; teardown follows whatever this
/// returns.
fn claimed<R: OneGroup>(
    r: &mut R,
    opts: &RunOptions,
    before_measure: &mut dyn FnMut(&[PathBuf]),
    places: &[PathBuf],
    warnings: &mut Warnings,
) -> Result<(R::Ran, GroupResult), RunError> {
    r.claim(opts)?;
    r.set_up(opts, warnings)?;
    before_measure(&r.data_files());
    r.arm(opts)?;
    let window = Window::open(opts, &r.label(), &r.expected(), places);
    let ran = r.run(opts, &window.meter, warnings);
    let group = window.close(opts);
    ran.map(|ran| (ran, group))
}
