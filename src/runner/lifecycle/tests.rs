use super::*;
use crate::result::warning::{Code, Warning};
use crate::runner::events::Collect;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

type Log = Rc<RefCell<Vec<String>>>;

/// Records each stage it is asked for; the stages named in `fail` fail.
struct Fake {
    log: Log,
    fail: Vec<&'static str>,
    refuse: bool,
}

impl Fake {
    fn new(fail: &[&'static str]) -> (Fake, Log) {
        let log = Log::default();
        (Fake { log: log.clone(), fail: fail.to_vec(), refuse: false }, log)
    }

    fn step(&self, stage: &str) -> Result<(), RunError> {
        self.log.borrow_mut().push(stage.to_string());
        if self.fail.contains(&stage) {
            return Err(RunError::Workload(format!("{stage} failed")));
        }
        Ok(())
    }
}

impl OneGroup for Fake {
    type Ran = u64;

    fn label(&self) -> String {
        "fake".into()
    }
    fn places(&self) -> Vec<PathBuf> {
        Vec::new()
    }
    fn expected(&self) -> Expected {
        Expected::default()
    }
    fn check(&mut self, _: &RunOptions) -> Result<(), RunError> {
        self.step("check")
    }
    fn refused(&mut self, _: &RunOptions) -> Option<u64> {
        self.refuse.then(|| {
            self.log.borrow_mut().push("refused".into());
            0
        })
    }
    fn claim(&mut self, _: &RunOptions) -> Result<(), RunError> {
        self.step("claim")
    }
    fn set_up(&mut self, _: &RunOptions, warnings: &mut Warnings) -> Result<(), RunError> {
        warnings.warn(Warning::new(Code::Unclassified, "set-up says so"));
        self.step("set_up")
    }
    fn arm(&mut self, _: &RunOptions) -> Result<(), RunError> {
        self.step("arm")
    }
    fn run(&mut self, _: &RunOptions, meter: &Arc<Meter>, _: &mut Warnings) -> Result<u64, RunError> {
        meter.ops.store(7, std::sync::atomic::Ordering::Relaxed);
        self.step("run").map(|()| 7)
    }
    fn tear_down(&mut self, _: &RunOptions, ran: Option<&u64>) -> Result<(), RunError> {
        self.step(if ran.is_some() { "tear_down" } else { "tear_down after failure" })
    }
    fn finish(self, ran: u64, _: &mut GroupResult, _: &RunOptions, _: &mut Warnings) -> Result<Finished, RunError> {
        self.step("finish")?;
        let job = crate::result::testutil::job(&format!("ran {ran}"), 1, &[]);
        Ok(Finished { jobs: vec![job], partial: ran == 0 })
    }
}

fn opts() -> RunOptions {
    RunOptions {
        allow_device: false,
        keep_files: false,
        allow_fill: false,
        stop: Arc::new(AtomicBool::new(false)),
        events: Arc::new(Collect::default()),
        cache_controlled: false,
        command: vec!["fake".into()],
    }
}

/// Drive `fake`, logging `before_measure` between its stages.
fn drive_logged(fake: Fake, log: &Log) -> Result<RunResult, RunError> {
    let before = log.clone();
    drive(fake, &opts(), "fake", &mut |_| before.borrow_mut().push("before_measure".into()))
}

fn logged(log: &Log) -> Vec<String> {
    log.borrow().clone()
}

#[test]
fn the_stages_run_in_order_and_the_result_is_wrapped() {
    let (fake, log) = Fake::new(&[]);
    let r = drive_logged(fake, &log).unwrap();
    assert_eq!(logged(&log), ["check", "claim", "set_up", "before_measure", "arm", "run", "tear_down", "finish"]);
    assert_eq!(r.layout, "fake");
    assert_eq!(r.jobs.len(), 1);
    assert_eq!(r.jobs[0].name, "ran 7");
    assert!(!r.partial);
    assert_eq!(r.warnings, [Warning::new(Code::Unclassified, "set-up says so")]);
    assert_eq!(r.groups.len(), 1);
    assert!(r.groups[0].started_unix_ns.is_some(), "the window says when it opened");
}

#[test]
fn a_failed_check_claims_nothing_and_tears_nothing_down() {
    let (fake, log) = Fake::new(&["check"]);
    assert_eq!(drive_logged(fake, &log).unwrap_err(), RunError::Workload("check failed".into()));
    assert_eq!(logged(&log), ["check"]);
}

#[test]
fn a_failed_claim_releases_what_it_took() {
    let (fake, log) = Fake::new(&["claim"]);
    assert_eq!(drive_logged(fake, &log).unwrap_err(), RunError::Workload("claim failed".into()));
    assert_eq!(logged(&log), ["check", "claim", "tear_down after failure"]);
}

#[test]
fn a_failed_set_up_is_torn_down_and_its_error_returned() {
    let (fake, log) = Fake::new(&["set_up"]);
    assert_eq!(drive_logged(fake, &log).unwrap_err(), RunError::Workload("set_up failed".into()));
    assert_eq!(logged(&log), ["check", "claim", "set_up", "tear_down after failure"]);
}

#[test]
fn a_failed_arm_is_torn_down_after_the_cache_scenario() {
    let (fake, log) = Fake::new(&["arm"]);
    assert_eq!(drive_logged(fake, &log).unwrap_err(), RunError::Workload("arm failed".into()));
    assert_eq!(logged(&log), ["check", "claim", "set_up", "before_measure", "arm", "tear_down after failure"]);
}

#[test]
fn a_failed_run_is_torn_down_and_its_error_returned() {
    let (fake, log) = Fake::new(&["run"]);
    assert_eq!(drive_logged(fake, &log).unwrap_err(), RunError::Workload("run failed".into()));
    assert_eq!(logged(&log), ["check", "claim", "set_up", "before_measure", "arm", "run", "tear_down after failure"]);
}

#[test]
fn the_runs_error_wins_over_its_teardowns() {
    let (fake, log) = Fake::new(&["run", "tear_down after failure"]);
    assert_eq!(drive_logged(fake, &log).unwrap_err(), RunError::Workload("run failed".into()));
}

#[test]
fn a_failed_teardown_fails_a_run_that_went_well() {
    let (fake, log) = Fake::new(&["tear_down"]);
    assert_eq!(drive_logged(fake, &log).unwrap_err(), RunError::Workload("tear_down failed".into()));
    assert_eq!(logged(&log).last().map(String::as_str), Some("tear_down"), "no result after a failed teardown");
}

#[test]
fn a_recorded_refusal_measures_nothing_and_is_finished() {
    let (mut fake, log) = Fake::new(&[]);
    fake.refuse = true;
    let r = drive_logged(fake, &log).unwrap();
    assert_eq!(logged(&log), ["check", "refused", "finish"]);
    assert_eq!(r.jobs[0].name, "ran 0");
    assert!(r.partial);
    assert!(r.warnings.is_empty());
    assert_eq!(r.groups[0].started_unix_ns, None, "no window was opened");
}

/// The reads of a 1 MiB file in 4 KiB pieces, the `k`-th of `n` ranks'
/// share (every n-th, from the k-th).
fn reads(target: &std::path::Path, k: usize, n: usize) -> crate::model::replay::ReplayPlan {
    use crate::model::replay::{Dir, ReplayPlan, Speed, TraceIo};
    let ios: Vec<TraceIo> =
        (0..256u64).filter(|i| *i as usize % n == k).map(|i| TraceIo { at_ns: 0, offset: i * 4096, len: 4096, dir: Dir::Read }).collect();
    ReplayPlan {
        target: target.to_path_buf(),
        ios: Arc::new(ios),
        speed: Speed::Max,
        depth: 4,
        engine: "psync".into(),
        source: "test".into(),
        write: false,
        surface: None,
        notes: Vec::new(),
    }
}

#[test]
fn a_real_run_split_over_two_ranks_merges_to_the_whole_runs_work() {
    let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
    let target = dir.path().join("data");
    std::fs::write(&target, vec![7u8; 1 << 20]).unwrap();
    let run = |k, n| crate::runner::replay::run_plan(&reads(&target, k, n), &opts(), "replay", &mut |_| {}).unwrap();
    let whole = run(0, 1);
    let ranks = [run(0, 2), run(1, 2)];
    let merged = crate::result::merge::merge_runs(&ranks).unwrap();
    let (w, m) = (whole.jobs[0].op("read").unwrap(), merged.jobs[0].op("read").unwrap());
    assert_eq!((m.ops, m.bytes), (w.ops, w.bytes));
    assert_eq!((m.ops, m.bytes), (256, 1 << 20));
    assert_eq!(m.lat.count(), 256);
    // The ranks ran one after the other: the merged span covers both.
    let (a, b) = (&ranks[0].groups[0], &ranks[1].groups[0]);
    let (sa, sb) = (a.started_unix_ns.unwrap(), b.started_unix_ns.unwrap());
    assert!(sb >= sa + a.elapsed_ns, "rank 1 opened its window after rank 0 closed its own");
    assert_eq!(merged.groups[0].started_unix_ns, Some(sa));
    assert_eq!(merged.groups[0].elapsed_ns, sb + b.elapsed_ns - sa);
    let job_span = merged.jobs[0].elapsed_ns;
    assert!(job_span >= ranks[0].jobs[0].elapsed_ns + ranks[1].jobs[0].elapsed_ns, "the ranks' spans do not overlap");
    assert_eq!(merged.jobs[0].threads, 2);
}
