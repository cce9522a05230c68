//! One Bonnie++ run, as Bonnie++ 2.00a's flags configure it, with its rules
//! (default size, chunk, seeks, per-character size) already applied. Plain
//! data: the frontend (`frontend::bonnie`) builds it, the runner
//! (`runner::bonnie`) executes it.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Bonnie++'s twelve tests, in the order it runs and reports them (the
/// order of its semaphores and CSV columns too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Test {
    Putc,
    PutBlock,
    Rewrite,
    Getc,
    GetBlock,
    Seeks,
    SeqCreate,
    SeqStat,
    SeqDel,
    RanCreate,
    RanStat,
    RanDel,
}

impl Test {
    pub const ALL: [Test; 12] = [
        Test::Putc,
        Test::PutBlock,
        Test::Rewrite,
        Test::Getc,
        Test::GetBlock,
        Test::Seeks,
        Test::SeqCreate,
        Test::SeqStat,
        Test::SeqDel,
        Test::RanCreate,
        Test::RanStat,
        Test::RanDel,
    ];

    /// Its CSV name (`putc`, `seq_create`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Test::Putc => "putc",
            Test::PutBlock => "put_block",
            Test::Rewrite => "rewrite",
            Test::Getc => "getc",
            Test::GetBlock => "get_block",
            Test::Seeks => "seeks",
            Test::SeqCreate => "seq_create",
            Test::SeqStat => "seq_stat",
            Test::SeqDel => "seq_del",
            Test::RanCreate => "ran_create",
            Test::RanStat => "ran_stat",
            Test::RanDel => "ran_del",
        }
    }

    /// Its position: 0..12, Bonnie++'s semaphore number.
    pub fn index(self) -> usize {
        self as usize
    }

    /// One of the six IO tests (rates in KiB/s; seeks per second).
    pub fn is_io(self) -> bool {
        self.index() < 6
    }
}

/// What the file tests create.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// Regular files of `min..=max` bytes.
    Files,
    /// `-n N:-1`: hard links to one file.
    HardLinks,
    /// `-n N:-2`: symbolic links.
    SymLinks,
}

/// `-n num[:max[:min[:dirs[:chunk]]]]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileTests {
    /// Units of 1024 files.
    pub num_k: u64,
    pub kind: FileKind,
    /// Sizes in bytes (0 and 0 by default: empty files).
    pub max_size: u64,
    pub min_size: u64,
    /// Subdirectories `00000..`; 1 means the files sit in `Bonnie.<pid>`.
    pub dirs: u64,
    /// Bytes per write() when a file gets data.
    pub chunk: u64,
}

impl FileTests {
    pub fn count(&self) -> u64 {
        self.num_k * 1024
    }
}

/// `-p`: Bonnie++'s semaphore set made for that many copies, or removed;
/// nothing else runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SemaphoreSet {
    /// `-p N`.
    Make { copies: u16 },
    /// `-p -1`.
    Remove,
}

/// How several Bonnie++ copies line up before each test (`-y`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncMode {
    /// `-y s`: wait on the SysV semaphore set `-p` made (key 4711).
    Semaphore,
    /// `-y p`: wait for a line on standard input.
    Prompt,
}

/// Where the random numbers come from (`-z` / `-Z`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Seed {
    Number(u32),
    /// A file of 32-bit numbers in network byte order, read in a loop.
    File(PathBuf),
}

/// Everything one Bonnie++ invocation does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BonniePlan {
    /// `-d`: the scratch directory (the current one by default).
    pub dir: PathBuf,
    /// `-s`: MiB of the IO-test file(s); 0 skips the IO tests.
    pub size_mib: u64,
    /// Bytes per block operation (`-s size:chunk`), a power of two 256..=1 MiB.
    pub chunk: u64,
    /// Random seeks in total and the seeker threads sharing them.
    pub seeks: u64,
    pub seek_procs: u64,
    /// Whether `-s` gave the chunk, seeks and procs (the report's size cell
    /// leaves defaults out).
    pub size_text: String,
    /// `-f`: MiB of per-character I/O; None skips putc and getc.
    pub char_mib: Option<u64>,
    pub files: Option<FileTests>,
    /// `-r` (MiB), or what /proc/meminfo said; 0 turns the checks off.
    pub ram_mib: u64,
    /// `-b`: fsync after every write, create and delete.
    pub fsync: bool,
    /// `-D`: O_DIRECT on the opens that create the IO file.
    pub direct: bool,
    /// `-q`: only the CSV line on standard output.
    pub quiet: bool,
    /// `-m`, or the host name.
    pub machine: String,
    /// `-c`: recorded and used in the size check, as in Bonnie++ 2.00a.
    pub concurrency: u32,
    pub seed: Seed,
    /// The file-system uid and gid the tests run as (`-u`, `-g`).
    pub uid: u32,
    pub gid: u32,
    pub sync: Option<SyncMode>,
    /// `-x`: this run's number (from 0) and how many the invocation makes.
    pub run_index: u32,
    pub runs: u32,
}

impl BonniePlan {
    /// Bytes of the IO-test data.
    pub fn size_bytes(&self) -> u64 {
        self.size_mib * 1024 * 1024
    }
}

impl super::Shape for BonniePlan {
    fn data_dir(&self) -> Option<PathBuf> {
        Some(self.dir.clone())
    }
    fn keeps_files_between_runs(&self) -> bool {
        false
    }
    /// Writing its file and creating its files allocate.
    fn allocates(&self) -> bool {
        true
    }
    /// Its read tests read the file its write tests wrote, its stat tests
    /// the files its create tests made, all in the same run (`-D` opens
    /// only the writes' file with O_DIRECT).
    fn reads_own_writes(&self) -> Option<String> {
        if self.size_mib > 0 {
            Some(
                "Bonnie++'s read tests (getc, block read, seeks) read the file its write tests wrote moments before, in the same run"
                    .into(),
            )
        } else {
            self.files.as_ref().map(|_| "Bonnie++'s stat tests read the files its create tests made moments before, in the same run".into())
        }
    }
}
