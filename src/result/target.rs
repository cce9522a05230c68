//! What a result records about the target it ran on (`environment::target`
//! sets the target up and fills this in).

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// What a result records about its target.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TargetRecord {
    pub label: String,
    /// `directory`, `device` (a raw device: `device_source` is set when
    /// fsbench created it) or `managed`.
    pub kind: String,
    pub fs_type: Option<String>,
    pub device: Option<PathBuf>,
    pub mount_point: Option<PathBuf>,
    pub mkfs_command: Vec<String>,
    pub mount_options_requested: Option<String>,
    /// As /proc/mounts reports them after mounting.
    pub mount_options_in_force: Option<String>,
    /// For managed targets and the raw devices fsbench creates: `loop`,
    /// `zram` or `device`.
    #[serde(default)]
    pub device_source: Option<String>,
    /// The image file behind a managed loop device.
    #[serde(default)]
    pub backing_file: Option<PathBuf>,
    /// Things worth knowing about the setup (e.g. loop without direct I/O).
    #[serde(default)]
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_without_notes_reads() {
        let r: TargetRecord = serde_json::from_str(r#"{"label":"a","kind":"directory","fs_type":null,"device":null,"mount_point":null,"mkfs_command":[],"mount_options_requested":null,"mount_options_in_force":null}"#).unwrap();
        assert!(r.notes.is_empty());
    }
}
