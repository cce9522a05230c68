//! The system a run happened on, as its result records it: the machine, the
//! kernel's writeback settings, and for each target the mount and device
//! under it (`environment::system::snapshot` reads them).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SystemInfo {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: u32,
    pub memory_bytes: u64,
    pub page_size: u64,
    pub clocksource: String,
    /// `vm.*` writeback settings, `kernel.randomize_va_space`,
    /// `transparent_hugepage` (and `.defrag`): the values in force.
    pub vm: BTreeMap<String, String>,
    pub targets: Vec<TargetInfo>,
    /// Scaling governor(s) of the CPUs, comma-separated when they differ;
    /// None when there is no cpufreq (common in VMs).
    #[serde(default)]
    pub cpufreq_governor: Option<String>,
    /// Whether the run had effective uid 0.
    #[serde(default)]
    pub is_root: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TargetInfo {
    pub path: PathBuf,
    pub fs_type: String,
    pub mount_point: PathBuf,
    pub mount_source: String,
    pub mount_options: String,
    pub device: Option<String>,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub logical_block_size: Option<u64>,
    /// `disk`, `partition`, `loop`, `dm`, `zram` or `other`.
    #[serde(default)]
    pub device_kind: Option<String>,
}
