//! The model every frontend produces and the runner consumes.

pub mod engine;
pub mod environment;
pub mod flow;
pub mod job;

use std::path::PathBuf;

/// What one run executes: fio-style jobs, or one Filebench-style workload.
/// One Plan exists per run, so the size of its larger variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
pub enum Plan {
    Jobs(Vec<job::JobSpec>),
    Flow(flow::FlowPlan),
}

impl Plan {
    /// Where the workload keeps its files (background loads write next to
    /// them): the first job's directory or file's parent, or the first
    /// fileset's path.
    pub fn data_dir(&self) -> PathBuf {
        let dir = match self {
            Plan::Jobs(jobs) => jobs
                .first()
                .and_then(|j| j.directory.clone().or_else(|| j.filenames.first().and_then(|f| f.parent()).map(|p| p.to_path_buf()))),
            Plan::Flow(f) => f.filesets.first().map(|s| s.path.clone()),
        };
        dir.filter(|p| !p.as_os_str().is_empty()).unwrap_or_else(|| PathBuf::from("."))
    }
}
