//! The model every frontend produces and the runner consumes. It imports
//! nothing else from the crate, so everything may use it.
//!
//! A `Plan` is one run: a workload in one of the shapes the runners take
//! (fio-style jobs, a Filebench-style flow, ...) and the layout its result
//! is shown in. A new shape is a file here plus one line in `workloads!`,
//! and one arm in `runner::execute`, which the compiler asks for.

pub mod bonnie;
pub mod engine;
pub mod engine_misc;
pub mod environment;
pub mod experiment;
pub mod flow;
pub mod iozone;
pub mod job;
pub mod job_misc;
pub mod job_steady;
pub mod logs;
pub mod postmark;
pub mod recipe;
pub mod replay;
pub mod store;
pub mod verify;
pub mod warning;
pub mod ycsb;

use std::path::PathBuf;

/// Most runs one command repeats its workload (`--repeat`, Bonnie++'s
/// `-x`): each is a whole benchmark whose result is kept until the
/// document is written.
pub const MAX_RUNS: u32 = 1000;

/// What every shape of workload answers, so that nothing above the model
/// needs to know which shape it holds.
pub trait Shape {
    /// Where the workload keeps its files (background loads write next to
    /// them); "." when it names none.
    fn data_dir(&self) -> Option<PathBuf>;
    /// Its files stay from one run to the next (fio's laid-out files);
    /// otherwise the runner builds them in every run and removes them after.
    fn keeps_files_between_runs(&self) -> bool;
    /// It allocates blocks during the run (writes new, growing or sparse
    /// files), so block-allocation settings can change its result.
    fn allocates(&self) -> bool;
    /// Data it starts from that an earlier workload must leave, by where the
    /// data lives: a YCSB run phase reads the records a load inserted.
    fn reads_earlier_data(&self) -> Option<PathBuf> {
        None
    }
    /// Data it leaves for later workloads to read, by where it lives (a
    /// YCSB load phase's records).
    fn leaves_data(&self) -> Option<PathBuf> {
        None
    }
    /// The reads a cache scenario applied before the run cannot reach: the
    /// run writes, inside its measured span, what they then read (IOzone's
    /// read passes after its write pass, Bonnie++'s read tests after its
    /// writes), so they find the pages the run itself left, whatever the
    /// scenario did. None when every read meets the scenario.
    fn reads_own_writes(&self) -> Option<String> {
        None
    }
}

/// Declares the shapes: the `Workload` enum and its `Shape` dispatch.
macro_rules! workloads {
    ($($(#[$doc:meta])* $variant:ident($ty:ty),)*) => {
        /// A workload in the shape its runner takes.
        // One plan per run, moved rarely: boxing the larger shapes buys nothing.
        #[allow(clippy::large_enum_variant)]
        #[derive(Clone, Debug)]
        pub enum Workload {
            $($(#[$doc])* $variant($ty),)*
        }

        impl Workload {
            pub fn shape(&self) -> &dyn Shape {
                match self {
                    $(Workload::$variant(w) => w,)*
                }
            }
        }
    };
}

workloads! {
    /// fio-style jobs (groups, clones, engines).
    Jobs(Vec<job::JobSpec>),
    /// A Filebench-style flow: filesets, processes, threads, flowops.
    Flow(flow::FlowPlan),
    Postmark(postmark::PostmarkPlan),
    /// IOzone's matrix of file sizes, record sizes and tests.
    Iozone(iozone::IozonePlan),
    /// Bonnie++'s IO and file tests.
    Bonnie(bonnie::BonniePlan),
    /// A YCSB load or run phase against a key-value store.
    Ycsb(ycsb::YcsbPlan),
    /// A captured trace re-issued, or a surface scan.
    Replay(replay::ReplayPlan),
}

/// One run: the workload and the registered layout (`report::layout`) its
/// result is shown in, chosen by the frontend that planned it.
#[derive(Clone, Debug)]
pub struct Plan {
    pub workload: Workload,
    pub layout: &'static str,
}

impl Plan {
    pub fn new(workload: Workload, layout: &'static str) -> Plan {
        Plan { workload, layout }
    }

    /// Where the workload keeps its files, "." when it names none.
    pub fn data_dir(&self) -> PathBuf {
        self.workload.shape().data_dir().filter(|p| !p.as_os_str().is_empty()).unwrap_or_else(|| PathBuf::from("."))
    }
}

impl Shape for Vec<job::JobSpec> {
    /// The first job's directory or its first file's parent.
    fn data_dir(&self) -> Option<PathBuf> {
        self.first().and_then(|j| j.directory.clone().or_else(|| j.filenames.first().and_then(|f| f.parent()).map(|p| p.to_path_buf())))
    }
    fn keeps_files_between_runs(&self) -> bool {
        true
    }
    /// Buffered writes allocate (delayed or not); O_DIRECT overwrites of a
    /// file laid out before the run never do, unless the file is created
    /// on open, unlinked after, or not preallocated.
    fn allocates(&self) -> bool {
        self.iter().any(|j| j.rw.writes() && (!j.direct || j.fallocate == job::Fallocate::None || j.create_on_open || j.unlink))
    }
}

impl Shape for flow::FlowPlan {
    /// The first fileset's path.
    fn data_dir(&self) -> Option<PathBuf> {
        self.filesets.first().map(|s| s.path.clone())
    }
    fn keeps_files_between_runs(&self) -> bool {
        false
    }
    /// Creating, appending and writing whole files allocate: assume a flow
    /// that writes or creates at all does.
    fn allocates(&self) -> bool {
        self.processes
            .iter()
            .flat_map(|p| &p.threads)
            .flat_map(|t| &t.flowops)
            .any(|o| o.kind.direction() == flow::Direction::Write || o.kind == flow::FlowopKind::CreateFile)
    }
}
