//! `fsbench surface DEV`: HD Tach's surface scan. The device's whole LBA
//! range is cut into zones; a few consecutive chunks at the start of each
//! are read (written only with --write --allow-device) one at a time with
//! O_DIRECT, each timed alone, so throughput and latency come out per
//! position. It runs as a replay plan, so it reports like every run.

use super::{CommonArgs, RepeatArgs};
use crate::environment::safety::{check_device_usable, is_block_device};
use crate::model::replay::{Dir, ReplayPlan, Speed, Surface, TraceIo};
use crate::model::{Plan, Workload};
use clap::Args;
use std::path::PathBuf;
use std::sync::Arc;

/// Offsets and chunk sizes are multiples of this: O_DIRECT takes it on
/// every device with a logical block of up to 4 KiB.
const ALIGN: u64 = 4096;

/// Read fixed-size chunks across a block device's whole LBA range (HD Tach's
/// surface scan): throughput and latency per position, the slowest zones;
/// --charts DIR draws both against the position. Only a block device that
/// nothing uses (not mounted, no holders, not swap) is scanned: a regular
/// file's offsets are not positions on a disk.
#[derive(Args, Debug)]
pub struct SurfaceArgs {
    /// The block device to scan.
    device: PathBuf,
    /// Bytes per chunk (k/m/g suffixes, powers of 1024; a multiple of 4 KiB).
    #[arg(long, default_value = "1m", value_parser = parse_size)]
    chunk: u64,
    /// Zones, evenly spaced over the device.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    zones: u32,
    /// Consecutive chunks timed per zone.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1024))]
    chunks_per_zone: u32,
    /// Write the chunks instead of reading them (destroys the data there; needs --allow-device too).
    #[arg(long)]
    write: bool,
    /// io_uring or libaio (default: io_uring when the kernel allows it).
    #[arg(long)]
    engine: Option<String>,
    #[command(flatten)]
    common: CommonArgs,
    #[command(flatten)]
    repeat: RepeatArgs,
}

fn parse_size(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s, 1024)
}

pub fn run(a: SurfaceArgs) -> i32 {
    match plan(&a) {
        Ok(p) => super::replay::run_replay_plan("surface", Plan::new(Workload::Replay(p), "surface"), &a.common, &a.repeat),
        Err(e) => {
            super::fail(format!("fsbench surface: {e}"));
            2
        }
    }
}

fn plan(a: &SurfaceArgs) -> Result<ReplayPlan, String> {
    let dev = &a.device;
    let meta = std::fs::metadata(dev).map_err(|e| format!("{}: {e}", dev.display()))?;
    if !is_block_device(dev) {
        let kind = if meta.is_file() { "a regular file, whose offsets are not positions on a disk" } else { "not a block device" };
        return Err(format!("DEVICE {}: {kind}; name a block device (e.g. /dev/sdb)", dev.display()));
    }
    if a.write && !a.common.allow_device {
        return Err(format!("--write destroys the data on {}: pass --allow-device as well to confirm", dev.display()));
    }
    // Even a read-only scan of a device in use measures the file system's
    // I/O alongside its own: refuse it with the same checks as a write.
    check_device_usable(dev, true)?;
    if a.chunk == 0 || a.chunk % ALIGN != 0 {
        return Err(format!("--chunk {}: expected a positive multiple of 4 KiB", a.chunk));
    }
    let chunk = u32::try_from(a.chunk).map_err(|_| format!("--chunk {}: at most 4 GiB - 4 KiB", a.chunk))?;
    let size = crate::host::blockdev::addressable_bytes(dev)?;
    let zone_len = size / a.zones as u64;
    let need = a.chunk * a.chunks_per_zone as u64;
    if zone_len < need {
        return Err(format!(
            "{} ({size} bytes) in --zones {} gives zones of {zone_len} bytes, less than --chunks-per-zone {} x --chunk {} = {need} bytes: ask for fewer zones or smaller chunks",
            dev.display(),
            a.zones,
            a.chunks_per_zone,
            a.chunk
        ));
    }
    let dir = if a.write { Dir::Write } else { Dir::Read };
    let mut ios = Vec::with_capacity((a.zones * a.chunks_per_zone) as usize);
    for z in 0..a.zones as u64 {
        // Aligned down, so the zone's chunks still end inside it.
        let start = (z as u128 * size as u128 / a.zones as u128) as u64 / ALIGN * ALIGN;
        for c in 0..a.chunks_per_zone as u64 {
            ios.push(TraceIo { at_ns: 0, offset: start + c * a.chunk, len: chunk, dir });
        }
    }
    Ok(ReplayPlan {
        target: dev.clone(),
        ios: Arc::new(ios),
        speed: Speed::Max,
        depth: 1,
        engine: crate::frontend::replay::lower::engine(a.engine.as_deref(), crate::frontend::replay::lower::Spelling::Flags)?,
        source: format!("surface scan, {} zones x {} chunks of {} bytes", a.zones, a.chunks_per_zone, a.chunk),
        write: a.write,
        surface: Some(Surface { zones: a.zones, chunks_per_zone: a.chunks_per_zone, chunk: a.chunk, device_bytes: size }),
        notes: Vec::new(),
    })
}
