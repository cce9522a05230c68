//! A Filebench workload after parsing: filesets, processes of threads that
//! loop over flowops, and what happens before the measured run. The WML
//! frontend produces it with every variable bound; the flow runner executes
//! it. Numbers that WML lets be random variables stay `Num::Random`, because
//! Filebench draws a new value on every read (per op for `iosize`, per file
//! for a fileset's `size`).

use crate::model::job::BufferContent;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

#[derive(Clone, Debug, Serialize)]
pub struct FlowPlan {
    /// Personality name or the workload file's stem; names the result.
    pub name: String,
    /// Where it came from: a file path or `builtin:NAME`.
    pub source: String,
    /// Final variable values (after `--set`), `name` without the `$`.
    pub vars: Vec<(String, String)>,
    pub randvars: Vec<RandVar>,
    pub filesets: Vec<FilesetSpec>,
    pub processes: Vec<ProcessSpec>,
    /// Commands with side effects before the run, in script order.
    pub prelude: Vec<Step>,
    pub run: RunSpec,
    pub mode: QuitMode,
    /// `eventgen rate=N`: events per second shared by the `*limit` flowops.
    /// `Some(0)` is accepted but generates nothing (Filebench busy-spins).
    pub eventgen_rate: Option<u64>,
    /// `enable lathist` was given (fsbench keeps histograms regardless).
    pub lathist: bool,
    /// Seed of every random stream in the run: thread `i` (counting all
    /// instances in definition order) draws from `seed + i + 1`, fileset `j`
    /// populates from `seed ^ (j << 32)`.
    pub seed: u64,
    /// What written and preallocated data contains.
    pub content: BufferContent,
}

/// Commands that run before the measured window, in script order.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub enum Step {
    /// `create files`: populate every fileset now.
    CreateFiles,
    /// `system "cmd"` with variables already substituted.
    System(String),
    /// `echo "text"` with variables already substituted.
    Echo(String),
    /// `sleep N` seconds.
    Sleep(u64),
}

#[derive(Clone, Debug, Serialize)]
pub struct RunSpec {
    /// Measured seconds: `run N`, `--runtime`, or 60 when neither says.
    pub duration_s: u64,
    /// Where the duration came from, for the report: "run", "psrun",
    /// "--runtime" or "default".
    pub duration_from: String,
    /// `psrun`: print statistics every `period_s`; `reset` (a negative
    /// period in WML) makes them interval statistics.
    pub interval: Option<Interval>,
    /// 1.4 `warmup N`: seconds run before the statistics are cleared (0: none,
    /// as in Filebench 1.5).
    pub warmup_s: u64,
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Interval {
    pub period_s: u64,
    pub reset: bool,
}

/// `set mode quit ...`: what ends the run besides its duration, and what
/// running out of files means.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum QuitMode {
    /// The run lasts its duration. Filebench aborts it when a thread runs
    /// out of files; fsbench counts the shortage and the thread goes on.
    /// A finishon* reaching its value ends the run (Filebench 1.4; only a
    /// 1.4 script gets here with one, 1.5 refuses it).
    Timeout,
    /// Each thread stops at its first shortage or finishon*; the run ends
    /// when all threads have stopped (or at its duration).
    AllDone,
    /// The run ends at the first shortage or finishon* of any thread.
    FirstDone,
}

/// A number as WML allows it: a constant or a random variable sampled anew
/// at every read.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub enum Num {
    Fixed(u64),
    /// Index into `FlowPlan::randvars`.
    Random(usize),
}

impl Num {
    pub fn fixed(&self) -> Option<u64> {
        match self {
            Num::Fixed(v) => Some(*v),
            Num::Random(_) => None,
        }
    }
}

/// `randvar(...)` or `cvar(...)`, already validated.
#[derive(Clone, Debug, Serialize)]
pub struct RandVar {
    pub name: String,
    pub dist: Dist,
    /// Result is rounded to a multiple of this (0 = no rounding).
    pub round: u64,
    /// Lower bound for randvar distributions (added) or clamp for cvars.
    pub min: f64,
    /// cvar clamp (randvars have none).
    pub max: Option<f64>,
    /// `seed=` when the script gave one; otherwise the thread's stream.
    pub seed: Option<u64>,
}

/// Distributions of WML's `randvar` and `cvar`. All parameters are in their
/// natural units (gamma shapes are no longer ×1000).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub enum Dist {
    /// randvar gamma: `min + Gamma(shape, (mean - min) / shape)`.
    Gamma {
        mean: f64,
        shape: f64,
    },
    /// randvar uniform: `min + U * 2 * (mean - min)`.
    Uniform {
        mean: f64,
    },
    /// randvar tabular: rows of (percent, lo, hi); the sample picks a row
    /// by weight, then a uniform value in [lo, hi].
    Tabular {
        rows: Vec<(u32, f64, f64)>,
    },
    /// cvar-gamma: Gamma(shape, mean / shape).
    CvarGamma {
        mean: f64,
        shape: f64,
    },
    CvarNormal {
        mean: f64,
        sigma: f64,
    },
    CvarUniform {
        lower: f64,
        upper: f64,
    },
    CvarLognormal {
        shape: f64,
        scale: f64,
    },
    CvarExponential {
        mean: f64,
    },
    CvarTriangular {
        lower: f64,
        upper: f64,
        mode: f64,
    },
    CvarWeibull {
        shape: f64,
        scale: f64,
    },
    CvarErlang {
        shape: u64,
        rate: f64,
    },
}

#[derive(Clone, Debug, Serialize)]
pub struct FilesetSpec {
    pub name: String,
    /// Files live under `path/name/`.
    pub path: PathBuf,
    /// Defined with `define file`: one entry at `path/name/00000001/00000001`
    /// (or the raw device when `path/name` is a block device).
    pub single_file: bool,
    pub entries: u64,
    pub leafdirs: u64,
    /// Mean entries per directory; `Fixed(0)`: none given (Filebench's
    /// default), each entry in a directory of its own under the root.
    pub dirwidth: Num,
    /// Gamma shape of each directory's drawn width (0 = fixed width).
    pub dirgamma: f64,
    /// Sets each entry's depth directly when given.
    pub dirdepthrv: Option<Num>,
    /// Bytes per file, drawn once per file when random.
    pub size: Num,
    /// Percent of entries that exist at the start.
    pub prealloc_pct: u32,
    pub paralloc: bool,
    pub reuse: bool,
    pub trusttree: bool,
    pub readonly: bool,
    pub writeonly: bool,
    /// 1.4 `cached=false`: drop the preallocated files' pages before the run.
    pub cached: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct ProcessSpec {
    pub name: String,
    pub instances: u32,
    pub nice: i32,
    pub threads: Vec<ThreadSpec>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ThreadSpec {
    pub name: String,
    pub instances: u32,
    /// Per-thread buffer in bytes (0: each flowop uses an `iosize` buffer).
    pub memsize: u64,
    /// Accepted for compatibility; fsbench never uses SysV shared memory.
    pub useism: bool,
    /// Best-effort I/O priority level 0–7, when set.
    pub ioprio: Option<u8>,
    pub flowops: Vec<FlowopSpec>,
}

#[derive(Clone, Debug, Serialize)]
pub struct FlowopSpec {
    /// Reported name; composite children are named `parent.child`.
    pub name: String,
    pub kind: FlowopKind,
    /// Index into `FlowPlan::filesets`.
    pub fileset: Option<usize>,
    /// Slot in the thread's descriptor table (0–127).
    pub fd: u32,
    /// writewholefile: take the size from this slot's file.
    pub srcfd: Option<u32>,
    /// Rotate through descriptor slots with a per-thread file rotor.
    pub opennext: bool,
    /// Pick the file by this variable's value (mod entries) instead of the rotor.
    pub indexed: Option<Num>,
    pub iosize: Num,
    pub workingset: Num,
    pub random: bool,
    /// Open flags, honoured only by flowops that open a file.
    pub dsync: bool,
    pub directio: bool,
    pub noreadahead: bool,
    pub iters: Num,
    /// Hog loops, delay seconds, semaphore count, finishon* limit.
    pub value: Num,
    /// `print`'s text.
    pub text: Option<String>,
    /// Name of the flowop a wakeup/sempost/limit/finishon* refers to.
    pub target: Option<String>,
    pub blocking: bool,
    pub highwater: u64,
    /// Children of a composite flowop (`define flowop`), run `iters` times.
    pub children: Vec<FlowopSpec>,
}

impl FlowopSpec {
    /// A flowop with Filebench's defaults: fd 0, iters 1, highwater 1,
    /// everything else off or zero.
    pub fn new(name: impl Into<String>, kind: FlowopKind) -> FlowopSpec {
        FlowopSpec {
            name: name.into(),
            kind,
            fileset: None,
            fd: 0,
            srcfd: None,
            opennext: false,
            indexed: None,
            iosize: Num::Fixed(0),
            workingset: Num::Fixed(0),
            random: false,
            dsync: false,
            directio: false,
            noreadahead: false,
            iters: Num::Fixed(1),
            value: Num::Fixed(0),
            text: None,
            target: None,
            blocking: false,
            highwater: 1,
            children: Vec::new(),
        }
    }
}

/// Every flowop type of Filebench 1.5.
#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "lowercase")]
pub enum FlowopKind {
    Read,
    Write,
    AppendFile,
    AppendFileRand,
    ReadWholeFile,
    WriteWholeFile,
    CreateFile,
    OpenFile,
    CloseFile,
    DeleteFile,
    StatFile,
    Fsync,
    FsyncSet,
    MakeDir,
    RemoveDir,
    ListDir,
    AioWrite,
    AioWait,
    Hog,
    Delay,
    Block,
    Wakeup,
    SemBlock,
    SemPost,
    EventLimit,
    IopsLimit,
    OpsLimit,
    BwLimit,
    FinishOnCount,
    FinishOnBytes,
    Print,
    TestRandVar,
    /// A `define flowop` used as a type.
    Composite,
}

/// Which side of Filebench's `rd/wr` an operation counts on.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Read,
    Write,
    None,
}

impl FlowopKind {
    pub const ALL: &'static [(FlowopKind, &'static str)] = &[
        (FlowopKind::Read, "read"),
        (FlowopKind::Write, "write"),
        (FlowopKind::AppendFile, "appendfile"),
        (FlowopKind::AppendFileRand, "appendfilerand"),
        (FlowopKind::ReadWholeFile, "readwholefile"),
        (FlowopKind::WriteWholeFile, "writewholefile"),
        (FlowopKind::CreateFile, "createfile"),
        (FlowopKind::OpenFile, "openfile"),
        (FlowopKind::CloseFile, "closefile"),
        (FlowopKind::DeleteFile, "deletefile"),
        (FlowopKind::StatFile, "statfile"),
        (FlowopKind::Fsync, "fsync"),
        (FlowopKind::FsyncSet, "fsyncset"),
        (FlowopKind::MakeDir, "makedir"),
        (FlowopKind::RemoveDir, "removedir"),
        (FlowopKind::ListDir, "listdir"),
        (FlowopKind::AioWrite, "aiowrite"),
        (FlowopKind::AioWait, "aiowait"),
        (FlowopKind::Hog, "hog"),
        (FlowopKind::Delay, "delay"),
        (FlowopKind::Block, "block"),
        (FlowopKind::Wakeup, "wakeup"),
        (FlowopKind::SemBlock, "semblock"),
        (FlowopKind::SemPost, "sempost"),
        (FlowopKind::EventLimit, "eventlimit"),
        (FlowopKind::IopsLimit, "iopslimit"),
        (FlowopKind::OpsLimit, "opslimit"),
        (FlowopKind::BwLimit, "bwlimit"),
        (FlowopKind::FinishOnCount, "finishoncount"),
        (FlowopKind::FinishOnBytes, "finishonbytes"),
        (FlowopKind::Print, "print"),
        (FlowopKind::TestRandVar, "testrandvar"),
    ];

    pub fn from_wml(name: &str) -> Option<FlowopKind> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(k, _)| *k)
    }

    pub fn wml_name(self) -> &'static str {
        Self::ALL.iter().find(|(k, _)| *k == self).map(|(_, n)| *n).unwrap_or("composite")
    }

    /// Counted in Filebench's `IO Summary` ops.
    pub fn is_io(self) -> bool {
        use FlowopKind::*;
        matches!(
            self,
            Read | Write
                | AppendFile
                | AppendFileRand
                | ReadWholeFile
                | WriteWholeFile
                | CreateFile
                | OpenFile
                | CloseFile
                | DeleteFile
                | StatFile
                | Fsync
                | FsyncSet
                | MakeDir
                | RemoveDir
                | ListDir
                | AioWrite
                | AioWait
        )
    }

    pub fn direction(self) -> Direction {
        use FlowopKind::*;
        match self {
            Read | ReadWholeFile => Direction::Read,
            Write | WriteWholeFile | AppendFile | AppendFileRand | AioWrite => Direction::Write,
            _ => Direction::None,
        }
    }

    /// Opens a file into its `fd` slot (explicitly, or implicitly when the
    /// slot is empty), so open-time attributes (directio, dsync,
    /// noreadahead) mean something on it.
    pub fn opens_file(self) -> bool {
        use FlowopKind::*;
        matches!(self, CreateFile | OpenFile | Read | Write | AppendFile | AppendFileRand | ReadWholeFile | WriteWholeFile | AioWrite)
    }

    /// Accepts `filesetname`. createfile, openfile, makedir, removedir and
    /// listdir require it; the others may instead work on an fd slot opened
    /// by an earlier flowop.
    pub fn uses_fileset(self) -> bool {
        use FlowopKind::*;
        matches!(
            self,
            CreateFile
                | OpenFile
                | DeleteFile
                | StatFile
                | MakeDir
                | RemoveDir
                | ListDir
                | Read
                | Write
                | AppendFile
                | AppendFileRand
                | ReadWholeFile
                | WriteWholeFile
                | AioWrite
                | FsyncSet
        )
    }
}
