//! What a run did to the block devices under it: each device's counters
//! (the fields of `/sys/block/X/stat`, documented in the kernel's
//! `Documentation/block/stat.rst`) before and after, and their difference.
//! `host::blockdev` reads the counters; `observe::blockdev` watches the
//! devices around a run and fills in the report.

use serde::{Deserialize, Serialize};

/// The fields of `/sys/block/X/stat`. Kernels before 4.18 report 11 fields,
/// before 5.5 report 15; fields they lack are 0.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
    pub discard_ios: u64,
    pub discard_merges: u64,
    pub discard_sectors: u64,
    pub discard_ticks_ms: u64,
    pub flush_ios: u64,
    pub flush_ticks_ms: u64,
}

/// Sectors in the stat file are always 512 bytes, whatever the device's block size.
pub const SECTOR_BYTES: u64 = 512;

impl DiskStat {
    pub fn read_bytes(&self) -> u64 {
        self.read_sectors.saturating_mul(SECTOR_BYTES)
    }
    pub fn write_bytes(&self) -> u64 {
        self.write_sectors.saturating_mul(SECTOR_BYTES)
    }
    pub fn discard_bytes(&self) -> u64 {
        self.discard_sectors.saturating_mul(SECTOR_BYTES)
    }
    /// All completed requests of any kind.
    pub fn total_ios(&self) -> u64 {
        self.read_ios.saturating_add(self.write_ios).saturating_add(self.discard_ios).saturating_add(self.flush_ios)
    }
    /// Counters of `self` minus those of `before`, saturating at 0 (a counter
    /// that went backwards means the device was reset or replaced).
    /// `in_flight` is a gauge, not a counter: the delta carries `self`'s value.
    pub fn delta(&self, before: &DiskStat) -> DiskStat {
        DiskStat {
            read_ios: self.read_ios.saturating_sub(before.read_ios),
            read_merges: self.read_merges.saturating_sub(before.read_merges),
            read_sectors: self.read_sectors.saturating_sub(before.read_sectors),
            read_ticks_ms: self.read_ticks_ms.saturating_sub(before.read_ticks_ms),
            write_ios: self.write_ios.saturating_sub(before.write_ios),
            write_merges: self.write_merges.saturating_sub(before.write_merges),
            write_sectors: self.write_sectors.saturating_sub(before.write_sectors),
            write_ticks_ms: self.write_ticks_ms.saturating_sub(before.write_ticks_ms),
            in_flight: self.in_flight,
            io_ticks_ms: self.io_ticks_ms.saturating_sub(before.io_ticks_ms),
            time_in_queue_ms: self.time_in_queue_ms.saturating_sub(before.time_in_queue_ms),
            discard_ios: self.discard_ios.saturating_sub(before.discard_ios),
            discard_merges: self.discard_merges.saturating_sub(before.discard_merges),
            discard_sectors: self.discard_sectors.saturating_sub(before.discard_sectors),
            discard_ticks_ms: self.discard_ticks_ms.saturating_sub(before.discard_ticks_ms),
            flush_ios: self.flush_ios.saturating_sub(before.flush_ios),
            flush_ticks_ms: self.flush_ticks_ms.saturating_sub(before.flush_ticks_ms),
        }
    }
}

/// What happened on one device during a run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DeviceReport {
    pub name: String,
    /// `disk`, `partition`, `loop`, `dm`, `zram` or `other`.
    pub kind: String,
    pub backing_file: Option<String>,
    /// Devices below this one that are watched too (each has its own report).
    pub underlying: Vec<String>,
    pub before: DiskStat,
    pub after: DiskStat,
    pub delta: DiskStat,
    /// Share of the elapsed time the device had I/O in flight (io_ticks).
    pub util_pct: Option<f64>,
    pub note: Option<String>,
}
