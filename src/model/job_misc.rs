//! The less common parts of a fio-style job: where random offsets land
//! (distributions, zones, alignment), how far each clone's region is moved,
//! when a job starts and stops, and how its thread is placed. Kept apart
//! from `job` so the common description stays short.

use serde::Serialize;

/// How random offsets are spread over a region (fio `random_distribution`).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Uniform, through the random map unless `norandommap`.
    Random,
    /// Zipf with exponent θ (> 0, != 1); `center` in [0, 1) moves the hot spot.
    Zipf { theta: f64, center: f64 },
    /// Pareto with the power h in (0, 1).
    Pareto { h: f64, center: f64 },
    /// Gaussian with the standard deviation given as percent of the region.
    Normal { dev_percent: f64, center: f64 },
    /// `(percent of accesses, percent of the region)`, in region order.
    Zoned(Vec<(u32, u32)>),
    /// `(percent of accesses, bytes)`, from the region's start.
    ZonedAbs(Vec<(u32, u64)>),
}

/// Which offset the I/Os between two sequencer steps use (fio `rw_sequencer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Sequencer {
    /// The ones after a new random offset follow it sequentially.
    Sequential,
    /// The same offset is used again.
    Identical,
}

/// posix_fadvise hint at open (fio `fadvise_hint`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fadvise {
    None,
    /// RANDOM for random jobs, SEQUENTIAL otherwise (fio's default, `1`).
    ByPattern,
    Sequential,
    Random,
    Normal,
}

/// Which jobs a finishing job with `exitall` stops (fio `exit_what`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExitWhat {
    /// The jobs of its group (fio's default).
    Group,
    /// Every job running now; the next group still runs.
    Stonewall,
    /// Every job: the groups after it do not run.
    All,
}

/// How I/Os are spaced under `rate`/`rate_iops` (fio `rate_process`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RateProcess {
    /// Evenly.
    Linear,
    /// Exponentially distributed gaps with the same mean.
    Poisson,
}

/// fio's `zonemode=strided`: I/O `size` bytes, then move on `skip` bytes;
/// offsets stay within `range` bytes of each zone's start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StridedZones {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

/// The option groups a job may set beyond the common ones.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JobMisc {
    /// Size of each file, or a range fio draws from per file (fio `filesize`).
    pub filesize: Option<(u64, u64)>,
    /// Per direction `[read, write]`.
    pub distribution: [Distribution; 2],
    /// `rw=MODE:N` for sequential jobs: bytes added after each I/O (may be
    /// negative: the job goes backwards).
    pub seq_skip: i64,
    /// `rw=MODE:N` for random jobs: a new random offset every N I/Os.
    pub rand_every: u32,
    pub sequencer: Sequencer,
    /// Offsets are multiples of this, per direction (fio `blockalign`).
    pub blockalign: [Option<u64>; 2],
    /// Clone k starts at `offset + k * offset_increment`.
    pub offset_increment: u64,
    /// Stop after this many I/Os (fio `number_ios`).
    pub number_ios: Option<u64>,
    /// Start when every clone of this job has finished (fio `wait_for`).
    pub wait_for: Option<String>,
    /// fio `flow`: the job's weight among the jobs of its `flow_id` (0: none).
    pub flow: u32,
    pub flow_id: u32,
    /// fio `flow_sleep`: the pause while the job is ahead of its share, in µs.
    pub flow_sleep_us: u64,
    /// Write until the device is full (fio `fill_device`).
    pub fill_device: bool,
    /// fio `steadystate`, `ss_dur`, `ss_ramp`: end the job once its rate is steady.
    pub steady: super::job_steady::SteadyState,
    /// fio `latency_target` and its companions: search the queue depth.
    pub latency: super::job_steady::LatencyTarget,
    /// `zonemode=strided` (true), `none` (false), or not given.
    pub zonemode_strided: Option<bool>,
    pub zonesize: u64,
    pub zonerange: u64,
    pub zoneskip: u64,
    pub fadvise: Fadvise,
    /// CPUs the job's threads may run on (fio `cpus_allowed`/`cpumask`).
    pub cpus: Option<Vec<usize>>,
    /// `cpus_allowed_policy=split`: clone k runs on the k-th allowed CPU only.
    pub cpus_split: bool,
    /// I/O priority `(class, level)` set with ioprio_set on each thread.
    pub ioprio: Option<(u32, u32)>,
    /// fio `lat_percentiles`: per-priority figures (cmdprio) time the whole
    /// I/O, not submission to completion. Every histogram is kept anyway.
    pub lat_percentiles: bool,
    /// fio's `filename_format`, with `$jobname`, `$jobnum`, `$filenum`, `$clientuid`.
    pub filename_format: Option<String>,
    /// Lay out write-only files with data first (fio `overwrite`).
    pub overwrite: bool,
    /// fio `allow_file_create`: 0 refuses files that do not exist.
    pub allow_file_create: bool,
    /// fio `continue_on_error`, per direction `[read, write]`: an I/O error
    /// whose errno is in `ignore_error` is counted and the job goes on.
    pub continue_on_error: [bool; 2],
    /// fio `ignore_error`: the errnos per direction `continue_on_error`
    /// passes over; empty means fio's default, EIO and EILSEQ.
    pub ignore_error: [Vec<i32>; 2],
    /// When this job ends, stop the jobs `exit_what` names (fio `exitall`,
    /// which fio applies to every job once any job sets it).
    pub exitall: bool,
    /// Also stop them when this job ends on an error (fio `exitall_on_error`).
    pub exitall_on_error: bool,
    pub exit_what: ExitWhat,
    /// Minimum bytes/s per direction over each `ratecycle` (fio `ratemin`);
    /// below it the job fails.
    pub ratemin: [Option<u64>; 2],
    /// Minimum I/Os per second per direction (fio `rate_iops_min`).
    pub rate_iops_min: [Option<u64>; 2],
    /// The window the minimum rates are averaged over, in ms (fio `ratecycle`).
    pub ratecycle_ms: u64,
    pub rate_process: RateProcess,
}

impl JobMisc {
    /// Does an error `errno` of an I/O in direction `dir` let the job go on?
    pub fn continues_after(&self, dir: usize, errno: i32) -> bool {
        /// fio's non-fatal errors when `ignore_error` names none: EIO, EILSEQ (Linux numbers).
        const DEFAULT: [i32; 2] = [5, 84];
        let list: &[i32] = if self.ignore_error[dir].is_empty() { &DEFAULT } else { &self.ignore_error[dir] };
        self.continue_on_error[dir] && list.contains(&errno)
    }

    /// A minimum rate is set for some direction.
    pub fn checks_min_rate(&self) -> bool {
        self.ratemin.iter().chain(&self.rate_iops_min).any(Option::is_some)
    }

    /// The strided zones in effect: `zonemode=strided`, or a zone size
    /// given without any zonemode, as fio reads older job files.
    pub fn strided(&self) -> Option<StridedZones> {
        let on = self.zonemode_strided.unwrap_or(self.zonesize > 0);
        (on && self.zonesize > 0).then(|| StridedZones {
            size: self.zonesize,
            range: if self.zonerange > 0 { self.zonerange.max(self.zonesize) } else { self.zonesize },
            skip: self.zoneskip,
        })
    }
}

impl Default for JobMisc {
    fn default() -> Self {
        JobMisc {
            filesize: None,
            distribution: [Distribution::Random, Distribution::Random],
            seq_skip: 0,
            rand_every: 1,
            sequencer: Sequencer::Sequential,
            blockalign: [None, None],
            offset_increment: 0,
            number_ios: None,
            wait_for: None,
            flow: 0,
            flow_id: 0,
            flow_sleep_us: 0,
            fill_device: false,
            steady: Default::default(),
            latency: Default::default(),
            zonemode_strided: None,
            zonesize: 0,
            zonerange: 0,
            zoneskip: 0,
            fadvise: Fadvise::ByPattern,
            cpus: None,
            cpus_split: false,
            ioprio: None,
            lat_percentiles: false,
            filename_format: None,
            overwrite: false,
            allow_file_create: true,
            continue_on_error: [false, false],
            ignore_error: [Vec::new(), Vec::new()],
            exitall: false,
            exitall_on_error: false,
            exit_what: ExitWhat::Group,
            ratemin: [None, None],
            rate_iops_min: [None, None],
            ratecycle_ms: 1000,
            rate_process: RateProcess::Linear,
        }
    }
}
