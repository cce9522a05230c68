//! Page-cache scenarios applied before each run and checked afterwards. (stub)

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CacheScenario {
    /// Nothing done.
    Warm,
    /// sync; echo 3 > /proc/sys/vm/drop_caches (seed 000, Scenario A).
    Cold,
    /// Unmount and mount the target again (Scenario B).
    FreshMount,
    /// Fill the page cache with this many bytes of unrelated data (Scenario C).
    Polluted(u64),
}

/// What applying a scenario did, with the evidence.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CacheReport {
    pub scenario: String,
    /// The scenario took effect (checked, not assumed).
    pub applied: bool,
    /// Why not, or what was seen.
    pub note: Option<String>,
    pub cached_before_bytes: u64,
    pub cached_after_bytes: u64,
    pub dirty_before_bytes: u64,
    pub dirty_after_bytes: u64,
}

pub fn parse(s: &str) -> Result<CacheScenario, String> {
    match s {
        "warm" => Ok(CacheScenario::Warm),
        "cold" => Ok(CacheScenario::Cold),
        "fresh-mount" => Ok(CacheScenario::FreshMount),
        _ if s.starts_with("polluted:") => crate::frontend::fio::units::parse_size(&s[9..], 1024).map(CacheScenario::Polluted),
        _ => Err(format!("expected warm, cold, fresh-mount or polluted:SIZE, got '{s}'")),
    }
}

pub fn apply(s: &CacheScenario, _target: Option<&mut super::target::ActiveTarget>) -> CacheReport {
    CacheReport { scenario: format!("{s:?}"), ..Default::default() }
}

impl CacheScenario {
    pub fn label(&self) -> String {
        match self {
            CacheScenario::Warm => "warm".into(),
            CacheScenario::Cold => "cold".into(),
            CacheScenario::FreshMount => "fresh-mount".into(),
            CacheScenario::Polluted(n) => format!("polluted:{n}"),
        }
    }
}
