//! What the background load did while a run was measured (`--background`,
//! an experiment's `[[background]]`): the child process's own counts and
//! I/O, which `environment::background` collects from the child's last
//! line of output.

use crate::measure::hist::LatencySummary;
use crate::model::environment::BackgroundSpec;
use crate::result::process_io::ProcessIo;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct BackgroundReport {
    /// Files completely written (and fsynced if asked) and closed.
    pub files_created: u64,
    /// Files deleted during the run to stay within `max_files` (part of the
    /// load); the ones removed at stop are `files_cleaned_up`.
    pub files_deleted: u64,
    pub bytes_written: u64,
    pub fsyncs: u64,
    /// From the first file to the stop request (cleanup excluded).
    pub elapsed_s: f64,
    /// The child's /proc/self/io at exit.
    pub io: ProcessIo,
    /// The child's process id.
    #[serde(default)]
    pub pid: u32,
    /// Files removed when the load stopped.
    #[serde(default)]
    pub files_cleaned_up: u64,
    /// Time spent removing files and the directory at stop.
    #[serde(default)]
    pub cleanup_s: f64,
    /// Most files that existed at once (never above `max_files`).
    #[serde(default)]
    pub peak_live_files: u64,
    /// Open to close of each created file (write and fsync included);
    /// None when no file was created.
    #[serde(default)]
    pub create_latency: Option<LatencySummary>,
    /// What ended the load: "signal", "parent exited" or "error".
    #[serde(default)]
    pub stopped_by: String,
    /// Why the load failed (ENOSPC, permissions, cleanup); None if it did not.
    #[serde(default)]
    pub error: Option<String>,
    /// The load as it ran.
    #[serde(default)]
    pub spec: Option<BackgroundSpec>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_without_new_fields_still_parses() {
        let r: BackgroundReport = serde_json::from_str(
            r#"{"files_created":1,"files_deleted":0,"bytes_written":5,"fsyncs":0,"elapsed_s":1.0,
                "io":{"read_bytes":0,"write_bytes":0,"cancelled_write_bytes":0,"syscr":0,"syscw":0}}"#,
        )
        .unwrap();
        assert_eq!(r.files_created, 1);
        assert!(r.error.is_none());
    }
}
