//! `quick` as a workload family: the one-minute disk check's seven tests
//! (sequential 1 MiB at depth 8, random 4 KiB at depth 1 and 32, 4 KiB
//! writes with an fsync each) as fio-style jobs on one file. `fsbench
//! quick` (`cli::quick`) makes its scratch directory and probes O_DIRECT
//! there, then plans here; an experiment's `[[workload]] quick = "default"`
//! (or a table of the flags, `{ size = "64m", runtime = 2 }`) plans the
//! same jobs in the target's directory.

use crate::frontend::experiment::{expand, runtime_seconds, ExperimentError, WorkloadDef};
use crate::frontend::{Frontend, FrontendError, Session, Step};
use crate::model::job::{BlockSize, JobSpec, RwKind};
use crate::model::recipe::{Lowered, Placement, Recipe, RecipeError};
use crate::model::{Plan, Workload};
use clap::{Args, FromArgMatches};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The layout of quick's table.
pub const LAYOUT: &str = "quick";
/// The file the seven tests share, in the directory they run in.
const FILE: &str = "fsbench-quick.dat";
/// How `fsbench quick`'s scratch directory's name starts.
pub const PREFIX: &str = "fsbench-quick-";

// The flags of `fsbench quick` besides the output flags every command has
// (no doc comment: clap would take it as the command's description).
#[derive(Args, Debug, Clone)]
pub struct QuickFlags {
    /// Directory to test in; a temporary directory is made inside it and removed afterwards.
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Size of the test file (k/m/g suffixes, powers of 1024).
    #[arg(long, default_value = "1g", value_parser = parse_size_arg)]
    pub size: u64,
    /// Seconds per test (7 tests).
    #[arg(long, default_value_t = 8)]
    pub runtime: u64,
    /// Engine for the queue-depth-32 tests (default: io_uring if the kernel allows it, else libaio).
    #[arg(long)]
    pub qd32_engine: Option<String>,
}

fn parse_size_arg(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s, 1024)
}

/// The defaults of the flags, which `quick = "default"` takes.
const DEFAULT_SIZE: &str = "1g";
const DEFAULT_RUNTIME: &str = "8";

/// One of the tests, in the order they run and are shown.
struct Test {
    label: &'static str,
    rw: RwKind,
    bs: u64,
    qd: u32,
    fsync: bool,
}

const TESTS: &[Test] = &[
    Test { label: "SEQ 1MiB Q8 read", rw: RwKind::Read, bs: 1 << 20, qd: 8, fsync: false },
    Test { label: "SEQ 1MiB Q8 write", rw: RwKind::Write, bs: 1 << 20, qd: 8, fsync: false },
    Test { label: "RND 4KiB Q1 read", rw: RwKind::RandRead, bs: 4096, qd: 1, fsync: false },
    Test { label: "RND 4KiB Q1 write", rw: RwKind::RandWrite, bs: 4096, qd: 1, fsync: false },
    Test { label: "RND 4KiB Q32 read", rw: RwKind::RandRead, bs: 4096, qd: 32, fsync: false },
    Test { label: "RND 4KiB Q32 write", rw: RwKind::RandWrite, bs: 4096, qd: 32, fsync: false },
    Test { label: "4KiB write+fsync", rw: RwKind::Write, bs: 4096, qd: 1, fsync: true },
];

/// A quick run's settings, checked: what remains is where it runs.
#[derive(Debug, Clone)]
pub struct QuickRecipe {
    pub size: u64,
    /// Seconds per test.
    pub runtime: u64,
    /// The engine of the queue-depth-32 tests.
    pub qd32_engine: String,
}

impl QuickRecipe {
    /// The settings as the flags give them; errors name the flag.
    pub fn new(size: u64, runtime: u64, qd32_engine: Option<&str>) -> Result<QuickRecipe, String> {
        if size < (1 << 20) || runtime == 0 {
            return Err("--size must be at least 1m and --runtime at least 1".into());
        }
        let qd32_engine = match qd32_engine {
            Some(e) => e.to_string(),
            None => default_async_engine(),
        };
        match crate::model::engine::find(&qd32_engine) {
            None => Err(format!("unknown engine '{qd32_engine}' (have: {})", crate::model::engine::names().join(", "))),
            // A synchronous engine keeps one I/O in flight whatever the depth:
            // its "Q32" rows would be Q1 rows under a false label.
            Some(e) if !e.caps.keeps_a_queue() => {
                let good: Vec<&str> = crate::model::engine::ENGINES.iter().filter(|e| e.caps.keeps_a_queue()).map(|e| e.name).collect();
                Err(format!(
                    "--qd32-engine {qd32_engine} cannot keep 32 I/Os in flight to a disk; the queue-depth tests need one of: {}",
                    good.join(", ")
                ))
            }
            Some(_) => Ok(QuickRecipe { size, runtime, qd32_engine }),
        }
    }

    /// How many tests a run has.
    pub fn tests(&self) -> usize {
        TESTS.len()
    }

    /// The seven jobs on one file in `dir`, through O_DIRECT or buffered.
    pub fn plan_in(&self, dir: &Path, direct: bool) -> Plan {
        let file = dir.join(FILE);
        let jobs = TESTS.iter().map(|t| self.job(t, &file, direct)).collect();
        Plan::new(Workload::Jobs(jobs), LAYOUT)
    }

    fn job(&self, t: &Test, file: &Path, direct: bool) -> JobSpec {
        let mut j = JobSpec::new(t.label);
        j.filenames = vec![file.to_path_buf()];
        j.size = Some(self.size);
        j.rw = t.rw;
        j.bs = [BlockSize::Fixed(t.bs), BlockSize::Fixed(t.bs)];
        j.iodepth = t.qd;
        j.ioengine = if t.qd > 1 { self.qd32_engine.clone() } else { "psync".to_string() };
        j.direct = direct;
        j.runtime = Some(Duration::from_secs(self.runtime));
        j.time_based = true;
        j.stonewall = true;
        j.fsync = t.fsync as u32;
        // Random writes wander over the whole file; a fresh permutation per pass
        // costs nothing and avoids rewriting hot blocks.
        j.norandommap = false;
        j
    }
}

/// Planned for a directory made for it: through O_DIRECT, which
/// `fsbench quick` gives up only where its probe says the file system
/// refuses it.
impl Recipe for QuickRecipe {
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError> {
        Ok(Lowered { plan: self.plan_in(&at.target, true), warnings: Vec::new() })
    }
}

/// io_uring when the kernel lets this process use it, else libaio: the
/// engine of the tests (and replays) that keep a queue.
pub fn default_async_engine() -> String {
    let name = if crate::host::kernel::io_uring_allowed() { "io_uring" } else { "libaio" };
    name.to_string()
}

/// `fsbench quick`'s flags, checked (the directory must exist).
pub fn lower(f: &QuickFlags) -> Result<QuickRecipe, String> {
    if !f.dir.is_dir() {
        return Err(format!("{} is not a directory", f.dir.display()));
    }
    QuickRecipe::new(f.size, f.runtime, f.qd32_engine.as_deref())
}

pub struct Quick;

impl Frontend for Quick {
    fn name(&self) -> &'static str {
        "quick"
    }
    fn about(&self) -> &'static str {
        "A one-minute disk check: sequential 1 MiB bandwidth, random 4 KiB IOPS at queue depth 1 and 32 with latency percentiles, and fsync latency"
    }
    fn reads(&self) -> &'static str {
        "A directory (default .), --size, --runtime and --qd32-engine; in an experiment, quick = \"default\" or a table of size, runtime and qd32_engine"
    }
    fn command(&self) -> clap::Command {
        QuickFlags::augment_args(clap::Command::new("quick")).about(self.about())
    }
    fn own_command(&self) -> bool {
        true
    }
    /// The seven jobs for a scratch directory in DIR; `fsbench quick`
    /// makes it and plans them there, buffered where O_DIRECT is refused.
    fn lower_cli(&self, m: &clap::ArgMatches, _raw: &[String]) -> Result<Session, FrontendError> {
        let flags = QuickFlags::from_arg_matches(m).map_err(|e| FrontendError::Usage(e.to_string()))?;
        let recipe = lower(&flags).map_err(FrontendError::Usage)?;
        Ok(Box::new(std::iter::once(Ok(Step::RunInFreshDir { recipe: Arc::new(recipe), prefix: PREFIX }))))
    }
    fn workload_keys(&self) -> &'static [&'static str] {
        &["quick"]
    }
    fn lower_workload(&self, w: &WorkloadDef) -> Result<Arc<dyn Recipe>, ExperimentError> {
        let mut r = QuickWorkload { label: w.label.clone(), size: DEFAULT_SIZE.into(), runtime: DEFAULT_RUNTIME.into(), qd32_engine: None };
        let expected = "expected \"default\" or a table of quick's flags: { size = \"64m\", runtime = 2, qd32_engine = \"libaio\" }";
        match w.string("quick") {
            Ok(Some(s)) if s == "default" => {}
            Ok(_) => return Err(w.error("quick", expected)),
            Err(_) => {
                let table = w.scalar_table("quick").map_err(|_| w.error("quick", expected))?;
                for (k, v) in table {
                    match k.as_str() {
                        "size" => r.size = v,
                        "runtime" => r.runtime = v,
                        "qd32_engine" => r.qd32_engine = Some(v),
                        _ => return Err(w.error("quick", format!("unknown key 'quick.{k}'; {expected}"))),
                    }
                }
            }
        }
        // Checked now unless a `[params]` value fills it in.
        if ![&r.size, &r.runtime].iter().any(|s| s.contains("${")) {
            r.settings(&Default::default()).map_err(|e| w.error("quick", e))?;
        }
        Ok(Arc::new(r))
    }
}

/// A quick workload of an experiment: its settings as written, `${…}`
/// unexpanded.
#[derive(Debug)]
struct QuickWorkload {
    label: String,
    size: String,
    runtime: String,
    qd32_engine: Option<String>,
}

impl QuickWorkload {
    fn settings(&self, params: &std::collections::BTreeMap<String, String>) -> Result<QuickRecipe, String> {
        let size = expand(&self.size, params, None)?;
        let size = crate::units::parse_size(&size, 1024).map_err(|e| format!("size '{size}': {e}; expected a size like 64m"))?;
        let runtime = runtime_seconds(&expand(&self.runtime, params, None)?)?;
        if size < (1 << 20) {
            return Err(format!("size {size}: expected at least 1m"));
        }
        QuickRecipe::new(size, runtime, self.qd32_engine.as_deref())
    }
}

/// In the target's directory, through O_DIRECT: a file system that refuses
/// it fails the run rather than being compared, buffered, with targets
/// measured direct.
impl Recipe for QuickWorkload {
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError> {
        let error = |message: String| RecipeError { workload: self.label.clone(), message };
        if at.is_device {
            return Err(error("quick needs a directory or a managed file system, not a raw device".into()));
        }
        let recipe = self.settings(at.params).map_err(error)?;
        recipe.plan(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seven_tests_share_one_file_and_only_the_deep_ones_use_the_async_engine() {
        let r = QuickRecipe::new(4 << 20, 1, Some("libaio")).unwrap();
        let plan = r.plan_in(Path::new("/d"), true);
        let Workload::Jobs(jobs) = &plan.workload else { panic!("fio-style jobs") };
        assert_eq!(jobs.len(), r.tests());
        assert!(jobs.iter().all(|j| j.filenames == [PathBuf::from("/d/fsbench-quick.dat")] && j.direct && j.stonewall));
        let engines: Vec<(&str, u32)> = jobs.iter().map(|j| (j.ioengine.as_str(), j.iodepth)).collect();
        assert!(engines.iter().all(|&(e, qd)| (qd > 1) == (e == "libaio")), "{engines:?}");
        assert_eq!(jobs[6].fsync, 1);
        let Workload::Jobs(buffered) = r.plan_in(Path::new("/d"), false).workload else { panic!("fio-style jobs") };
        assert!(buffered.iter().all(|j| !j.direct));
    }

    #[test]
    fn bad_settings_are_refused_naming_the_flag() {
        assert!(QuickRecipe::new(1 << 19, 1, Some("libaio")).unwrap_err().contains("--size"));
        assert!(QuickRecipe::new(1 << 20, 0, Some("libaio")).unwrap_err().contains("--runtime"));
        assert!(QuickRecipe::new(1 << 20, 1, Some("psync")).unwrap_err().contains("cannot keep 32"));
        assert!(QuickRecipe::new(1 << 20, 1, Some("nope")).unwrap_err().contains("unknown engine 'nope'"));
    }

    fn exp(keys: &str) -> Result<crate::model::experiment::Experiment, ExperimentError> {
        let text = format!(
            "name = \"q\"\n[params]\nsize = \"4m\"\n[[target]]\nlabel = \"d\"\ndirectory = \"/tmp\"\n[[workload]]\nlabel = \"q\"\n{keys}\n"
        );
        crate::frontend::experiment::parse(&text, Path::new("exp.toml"), &[])
    }

    fn jobs_at(e: &crate::model::experiment::Experiment, target: &str) -> Result<Vec<JobSpec>, String> {
        let at = Placement { target: target.into(), is_device: false, params: &e.params };
        let plan = e.workloads[0].recipe.plan(&at).map_err(|e| e.message)?.plan;
        assert_eq!(plan.layout, LAYOUT);
        match plan.workload {
            Workload::Jobs(j) => Ok(j),
            _ => panic!("fio-style jobs"),
        }
    }

    #[test]
    fn an_experiment_plans_the_jobs_the_flags_would_in_the_target() {
        let e = exp("quick = { size = \"${size}\", runtime = 1, qd32_engine = \"libaio\" }").unwrap();
        assert_eq!(e.workloads[0].family, "quick");
        let jobs = jobs_at(&e, "/mnt/t").unwrap();
        let flags = QuickRecipe::new(4 << 20, 1, Some("libaio")).unwrap().plan_in(Path::new("/mnt/t"), true);
        let Workload::Jobs(same) = flags.workload else { panic!("fio-style jobs") };
        assert_eq!(format!("{jobs:?}"), format!("{same:?}"), "the keys and the flags give the same jobs");
        let e = exp("quick = \"default\"").unwrap();
        let jobs = jobs_at(&e, "/mnt/t").unwrap();
        assert!(jobs.iter().all(|j| j.size == Some(1 << 30) && j.runtime == Some(Duration::from_secs(8))), "the flags' defaults");
        let at = Placement { target: "/dev/x".into(), is_device: true, params: &e.params };
        assert!(e.workloads[0].recipe.plan(&at).unwrap_err().message.contains("not a raw device"));
    }

    #[test]
    fn bad_keys_are_located() {
        for (keys, says) in [
            ("quick = \"fast\"", "expected \"default\" or a table"),
            ("quick = { sise = \"4m\" }", "unknown key 'quick.sise'"),
            ("quick = { size = \"512k\" }", "at least 1m"),
            ("quick = { size = \"big\" }", "size 'big'"),
            ("quick = { runtime = 0 }", "runtime '0'"),
            ("quick = { qd32_engine = \"psync\" }", "cannot keep 32"),
            ("quick = [1]", "expected \"default\" or a table"),
        ] {
            let e = exp(keys).unwrap_err();
            assert_eq!((e.file.as_str(), e.line, e.col, e.key.as_deref()), ("exp.toml", 9, 9, Some("quick")), "{keys}: {e}");
            assert!(e.message.contains(says), "{keys}: {e}");
        }
        // A `[params]` value is checked when it is known.
        let e = exp("quick = { size = \"${size}\", runtime = \"${size}\" }").unwrap();
        assert!(jobs_at(&e, "/mnt/t").unwrap_err().contains("runtime '4m'"));
    }
}
