//! Snapshot of the system a run happened on. (stub, being written)
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SystemInfo {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: u32,
    pub memory_bytes: u64,
    pub page_size: u64,
    pub clocksource: String,
    pub vm: BTreeMap<String, String>,
    pub targets: Vec<TargetInfo>,
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
}

pub fn snapshot(_paths: &[&Path]) -> SystemInfo {
    SystemInfo::default()
}
