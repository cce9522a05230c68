//! What a fio-style job's data verification found (fio's `verify=`), kept
//! in a job's `details` under `"verify"`.

use super::JobResult;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct VerifyStats {
    /// The method's fio name (`crc32c`, `md5`, `meta`, ...).
    pub method: String,
    /// Blocks read back and checked.
    pub blocks: u64,
    pub bytes: u64,
    /// Blocks that failed a check.
    pub mismatches: u64,
}

impl VerifyStats {
    pub fn merge(&mut self, o: &VerifyStats) {
        self.blocks += o.blocks;
        self.bytes += o.bytes;
        self.mismatches += o.mismatches;
    }

    /// The verification figures of a job, when it verified.
    pub fn of(j: &JobResult) -> Option<VerifyStats> {
        serde_json::from_value(j.details.as_ref()?.get("verify")?.clone()).ok()
    }

    /// Store into a job's details (next to whatever else is there).
    pub fn store(&self, j: &mut JobResult) {
        j.set_detail("verify", serde_json::to_value(self).unwrap_or_default());
    }
}
