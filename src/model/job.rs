//! The checked description of one fio-style job.
//!
//! Frontends (fio job files, `fsbench fio --flags`, `fsbench quick`) produce
//! `JobSpec`s; the runner consumes them. Nothing here knows about fio syntax:
//! every value is already parsed, unit-resolved and validated.

use super::verify::VerifySpec;
use serde::Serialize;
use std::path::PathBuf;
use std::time::Duration;

/// Which directions a job issues and in which order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RwKind {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes (fio `rw` / `readwrite`).
    ReadWrite,
    /// Random mixed reads and writes (fio `randrw`).
    RandRw,
    /// Sequential trims (discard / hole punching), fio `trim`.
    Trim,
    /// Random trims, fio `randtrim`.
    RandTrim,
    /// Each block trimmed, then written (fio `trimwrite`), sequentially.
    TrimWrite,
    /// The same in random order (fio `randtrimwrite`).
    RandTrimWrite,
}

impl RwKind {
    pub fn is_random(self) -> bool {
        matches!(self, RwKind::RandRead | RwKind::RandWrite | RwKind::RandRw | RwKind::RandTrim | RwKind::RandTrimWrite)
    }
    pub fn reads(self) -> bool {
        matches!(self, RwKind::Read | RwKind::RandRead | RwKind::ReadWrite | RwKind::RandRw)
    }
    pub fn writes(self) -> bool {
        matches!(self, RwKind::Write | RwKind::RandWrite | RwKind::ReadWrite | RwKind::RandRw | RwKind::TrimWrite | RwKind::RandTrimWrite)
    }
    pub fn trims(self) -> bool {
        matches!(self, RwKind::Trim | RwKind::RandTrim | RwKind::TrimWrite | RwKind::RandTrimWrite)
    }
    pub fn fio_name(self) -> &'static str {
        match self {
            RwKind::Read => "read",
            RwKind::Write => "write",
            RwKind::RandRead => "randread",
            RwKind::RandWrite => "randwrite",
            RwKind::ReadWrite => "rw",
            RwKind::RandRw => "randrw",
            RwKind::Trim => "trim",
            RwKind::RandTrim => "randtrim",
            RwKind::TrimWrite => "trimwrite",
            RwKind::RandTrimWrite => "randtrimwrite",
        }
    }
}

/// Most clones (threads) one invocation may start, all jobs together: fio's
/// own limit, and far beyond what a benchmark needs, but low enough that a
/// typo such as numjobs=100000 is an error, not 100,000 threads.
pub const MAX_CLONES: u32 = 4096;

/// Direction index used for per-direction arrays (`[read, write]`).
pub const READ: usize = 0;
pub const WRITE: usize = 1;
/// The third direction fio reports. Trims take the write block size (fio's
/// `bs=r,w` also gives trims the write value) and have no rate of their own.
pub const TRIM: usize = 2;

/// How the size of each I/O is chosen, per direction.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BlockSize {
    Fixed(u64),
    /// Uniformly random multiple of `min` in `[min, max]` (fio `bsrange`).
    Range {
        min: u64,
        max: u64,
    },
    /// Weighted choice (fio `bssplit`): `(size, percent)`, percents sum to 100.
    Split(Vec<(u64, u32)>),
}

impl BlockSize {
    pub fn min(&self) -> u64 {
        match self {
            BlockSize::Fixed(b) => *b,
            BlockSize::Range { min, .. } => *min,
            BlockSize::Split(v) => v.iter().map(|(b, _)| *b).min().unwrap_or(4096),
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            BlockSize::Fixed(b) => *b,
            BlockSize::Range { max, .. } => *max,
            BlockSize::Split(v) => v.iter().map(|(b, _)| *b).max().unwrap_or(4096),
        }
    }
    pub fn is_fixed(&self) -> bool {
        self.min() == self.max()
    }
}

/// O_SYNC / O_DSYNC on open (fio `sync=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    None,
    Sync,
    Dsync,
}

/// How files are preallocated before a write job (fio `fallocate=`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fallocate {
    None,
    /// fallocate(2) with mode 0, allocating blocks.
    Native,
    /// posix_fallocate(3).
    Posix,
    /// fallocate(2) with FALLOC_FL_KEEP_SIZE.
    Keep,
}

/// What the write buffers contain. Content decides results on compressing or
/// deduplicating devices (zram: 302 MiB/s random vs 5.3 GiB/s zeroed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BufferContent {
    /// All zeros (fio `zero_buffers`).
    pub zero: bool,
    /// New content before every write (fio `refill_buffers`).
    pub refill: bool,
    /// Percentage of each chunk that is zeros, 0..=100 (fio `buffer_compress_percentage`).
    pub compress_percentage: u32,
    /// Chunk size the compress percentage applies to (fio `buffer_compress_chunk`).
    pub compress_chunk: u64,
    /// Bytes repeated over each buffer from its start (fio `buffer_pattern`);
    /// empty: none. With a compress percentage it fills the compressible part.
    pub pattern: Vec<u8>,
    /// Stamp the block offset and the issue time into every 512 bytes of a
    /// write that is not refilled (fio `scramble_buffers`, as it applies it:
    /// the frontend leaves it on only where fio would scramble).
    pub scramble: bool,
    /// Share of written buffers that copy an earlier one, 0..=100 (fio
    /// `dedupe_percentage`); needs `refill`.
    pub dedupe_percentage: u32,
    /// Copies are drawn from the job's first unique buffers (fio
    /// `dedupe_mode=working_set`) instead of repeating the previous one.
    pub dedupe_working_set: bool,
    /// The working set's share of the job's size (fio `dedupe_working_set_percentage`).
    pub dedupe_working_set_percentage: u32,
    /// The working set spans every job with this set (fio `dedupe_global`).
    pub dedupe_global: bool,
}

impl Default for BufferContent {
    fn default() -> Self {
        BufferContent {
            zero: false,
            refill: false,
            compress_percentage: 0,
            compress_chunk: 512,
            pattern: Vec::new(),
            scramble: false,
            dedupe_percentage: 0,
            dedupe_working_set: false,
            dedupe_working_set_percentage: 5,
            dedupe_global: false,
        }
    }
}

/// Engine-specific switches; an engine rejects the ones it does not support.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct EngineOptions {
    /// io_uring: register the I/O buffers with the kernel (fio `fixedbufs`).
    pub fixedbufs: bool,
    /// io_uring: register the files with the kernel (fio `registerfiles`).
    pub registerfiles: bool,
    /// io_uring: kernel-side submission polling thread (fio `sqthread_poll`).
    pub sqthread_poll: bool,
    /// async engines: submit this many I/Os per submit call (fio `iodepth_batch_submit`,
    /// default 1); 0 means "everything that is queued".
    pub iodepth_batch_submit: u32,
    /// async engines: wait for at least this many completions (fio `iodepth_batch_complete_min`).
    pub iodepth_batch_complete_min: u32,
    /// The engines that do no plain data I/O (file operations, cpuio, exec, net).
    pub misc: crate::model::engine_misc::MiscEngineOptions,
    /// pvsync2: RWF_HIPRI, polled completion (fio `hipri`).
    pub hipri: bool,
    /// pvsync2: RWF_NOWAIT, fail with EAGAIN instead of blocking (fio `nowait`).
    pub nowait: bool,
    /// e4defrag: the donor file's name, in the job's directory (fio `donorname`).
    pub donorname: Option<String>,
    /// e4defrag: allocate and free the donor's blocks per I/O instead of once (fio `inplace`).
    pub inplace: bool,
    /// io_uring and libaio: a priority per I/O (fio's `cmdprio_*`).
    pub cmdprio: CmdPrio,
    /// Mapped engines: the access pattern to advise on each mapping
    /// (fio's `fadvise_hint` applied with madvise). Set by the runner from
    /// the job's pattern, not by an option.
    #[serde(skip)]
    pub map_advice: MapAdvice,
}

/// fio's per-command priorities, per direction (read, write). Values are
/// kernel ioprio values: `class << 13 | level`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CmdPrio {
    /// Percent of I/Os issued with `class`/`level` (`cmdprio_percentage`).
    pub percentage: [u32; 2],
    /// `cmdprio_class`; 0 means unset, which fio takes as realtime (1).
    pub class: [u32; 2],
    /// `cmdprio`.
    pub level: [u32; 2],
    /// `cmdprio_bssplit`: per block size, percent and priority (`None`:
    /// `class`/`level`). Exclusive with `percentage`.
    pub bssplit: [Vec<PrioSplit>; 2],
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct PrioSplit {
    pub bs: u64,
    pub percent: u32,
    pub ioprio: Option<u16>,
}

/// The kernel's I/O priority encoding.
pub fn ioprio_value(class: u32, level: u32) -> u16 {
    ((class.min(7) << 13) | level.min(7)) as u16
}

impl CmdPrio {
    pub fn active(&self) -> bool {
        self.percentage.iter().any(|&p| p > 0) || self.bssplit.iter().any(|v| !v.is_empty())
    }

    /// The priority of direction `d`'s prioritised I/Os when an entry names none.
    pub fn implicit(&self, d: usize) -> u16 {
        let class = if self.class[d] == 0 { 1 } else { self.class[d] };
        ioprio_value(class, self.level[d])
    }
}

/// What a mapped engine tells the kernel about its accesses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MapAdvice {
    #[default]
    None,
    Sequential,
    Random,
    Normal,
}

/// One job, fully resolved. `numjobs` clones of it run in parallel.
#[derive(Clone, Debug, Serialize)]
pub struct JobSpec {
    pub name: String,
    pub description: Option<String>,
    /// Explicit files (fio `filename=a:b`), already joined with `directory`.
    /// Empty means fsbench names the files `NAME.CLONE.FILENUM` in `directory`.
    pub filenames: Vec<PathBuf>,
    pub directory: Option<PathBuf>,
    pub nrfiles: u32,
    /// Total bytes of the job's file region, divided over its files; `None`
    /// means "the size of the existing file or device".
    pub size: Option<u64>,
    /// Bytes to transfer per loop; `None` means `size` (fio `io_size`).
    pub io_size: Option<u64>,
    /// Start offset inside each file.
    pub offset: u64,
    pub rw: RwKind,
    /// Percentage of reads in a mixed job.
    pub rwmixread: u32,
    /// Block size per direction `[read, write]`.
    pub bs: [BlockSize; 2],
    pub ioengine: String,
    pub engine: EngineOptions,
    pub iodepth: u32,
    pub direct: bool,
    pub sync: SyncMode,
    /// fsync after every N writes (0 = never).
    pub fsync: u32,
    /// fdatasync after every N writes (0 = never).
    pub fdatasync: u32,
    pub end_fsync: bool,
    pub numjobs: u32,
    #[serde(rename = "runtime_s", serialize_with = "secs_opt")]
    pub runtime: Option<Duration>,
    pub time_based: bool,
    #[serde(rename = "ramp_time_s", serialize_with = "secs")]
    pub ramp_time: Duration,
    #[serde(rename = "startdelay_s", serialize_with = "secs")]
    pub startdelay: Duration,
    pub loops: u32,
    pub norandommap: bool,
    pub randrepeat: bool,
    pub randseed: u64,
    /// Bytes per second per direction (fio `rate`).
    pub rate: [Option<u64>; 2],
    /// I/Os per second per direction (fio `rate_iops`).
    pub rate_iops: [Option<u64>; 2],
    /// Pause between I/Os.
    #[serde(rename = "thinktime_s", serialize_with = "secs")]
    pub thinktime: Duration,
    pub invalidate: bool,
    pub unlink: bool,
    pub create_on_open: bool,
    pub fallocate: Fallocate,
    pub buffer: BufferContent,
    pub group_reporting: bool,
    pub stonewall: bool,
    pub new_group: bool,
    /// Log every I/O to this file (fio `write_iolog`, iolog version 2).
    pub write_iolog: Option<PathBuf>,
    /// Bandwidth, latency, IOPS and histogram logs (fio `write_*_log`).
    pub logs: crate::model::logs::LogSpec,
    /// Distributions, zones, clone offsets, start and stop conditions.
    pub misc: super::job_misc::JobMisc,
    /// Data verification (fio `verify=` and its companions).
    pub verify: VerifySpec,
    /// The options as the user gave them, in order, for the report.
    #[serde(skip)]
    pub options: Vec<(String, String)>,
    /// How many of `options`, from the front, came from a `[global]`
    /// section (fio's JSON lists those apart from the job's own).
    #[serde(skip)]
    pub global_options: usize,
}

/// Durations appear in results as seconds (the field names say `_s`).
fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn secs_opt<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&d.as_secs_f64()),
        None => s.serialize_none(),
    }
}

impl JobSpec {
    /// The paths clone `clone` uses: the names given, else fio's
    /// `filename_format` (default `$jobname.$jobnum.$filenum`) in `directory`.
    pub fn file_paths(&self, clone: u32) -> Vec<PathBuf> {
        if !self.filenames.is_empty() {
            return self.filenames.clone();
        }
        let dir = self.directory.clone().unwrap_or_else(|| PathBuf::from("."));
        let format = self.misc.filename_format.as_deref().unwrap_or("$jobname.$jobnum.$filenum");
        (0..self.nrfiles)
            .map(|n| {
                let name = format
                    .replace("$jobname", &self.name)
                    .replace("$jobnum", &clone.to_string())
                    .replace("$filenum", &n.to_string())
                    .replace("$clientuid", "0");
                dir.join(name)
            })
            .collect()
    }

    /// fio's defaults for a job with the given name.
    pub fn new(name: &str) -> JobSpec {
        JobSpec {
            name: name.to_string(),
            description: None,
            filenames: Vec::new(),
            directory: None,
            nrfiles: 1,
            size: None,
            io_size: None,
            offset: 0,
            rw: RwKind::Read,
            rwmixread: 50,
            bs: [BlockSize::Fixed(4096), BlockSize::Fixed(4096)],
            ioengine: "psync".to_string(),
            // fio submits each I/O as soon as it is queued: a thread kept in
            // the kernel by its submits finds completions waiting instead of
            // sleeping for them (batching them cost 12% IOPS at QD32).
            engine: EngineOptions { iodepth_batch_submit: 1, ..Default::default() },
            iodepth: 1,
            direct: false,
            sync: SyncMode::None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            numjobs: 1,
            runtime: None,
            time_based: false,
            ramp_time: Duration::ZERO,
            startdelay: Duration::ZERO,
            loops: 1,
            norandommap: false,
            randrepeat: true,
            randseed: 0x89,
            rate: [None, None],
            rate_iops: [None, None],
            thinktime: Duration::ZERO,
            invalidate: true,
            unlink: false,
            create_on_open: false,
            fallocate: Fallocate::Native,
            buffer: BufferContent::default(),
            group_reporting: false,
            stonewall: false,
            new_group: false,
            write_iolog: None,
            logs: Default::default(),
            misc: Default::default(),
            verify: VerifySpec::default(),
            options: Vec::new(),
            global_options: 0,
        }
    }

    /// The job changes its files: it writes, trims, syncs them at the end,
    /// or its engine changes their allocation. A job that does none of these opens them read-only, so a device
    /// it names keeps its data (and may even be mounted).
    pub fn modifies_files(&self) -> bool {
        // An engine that changes allocation (falloc) does so even for reads.
        let space = crate::model::engine::find(&self.ioengine).is_some_and(|e| e.caps.class == crate::model::engine::Class::Space);
        self.rw.writes() || self.rw.trims() || self.end_fsync || space
    }

    /// Largest block size over both directions: buffers are this big.
    pub fn max_bs(&self) -> u64 {
        self.bs[READ].max().max(self.bs[WRITE].max())
    }
}
