//! One IOzone run, as IOzone's flags configure it. Plain data: the frontend
//! (`frontend::iozone`) builds it and has already applied IOzone's rules
//! (auto-mode ranges, the crossover, which tests run), so the runner
//! (`runner::iozone`) only executes `cells` × `tests` in order.
//!
//! Sizes are kept in IOzone's unit, kB = 1024 bytes.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// IOzone's tests by their `-i` number. Each runs one or two passes, and
/// each pass is a column of IOzone's report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Test {
    /// 0: write (unlink + creat, so allocation is timed), rewrite.
    Write,
    /// 1: read, reread.
    Read,
    /// 2: random read, random write over a shuffled record order.
    Random,
    /// 3: backward read.
    Backward,
    /// 4: record rewrite (the record at offset 0, N times).
    RecordRewrite,
    /// 5: stride read (`stride` records apart, wrapping).
    Stride,
    /// 6: fwrite, frewrite (stdio, a reclen buffer).
    Fwrite,
    /// 7: fread, freread.
    Fread,
    /// 8: mixed workload (throughput mode only).
    Mixed,
    /// 9: pwrite, re-pwrite (-E).
    Pwrite,
    /// 10: pread, re-pread (-E).
    Pread,
    /// 11: pwritev, re-pwritev (-E).
    Pwritev,
    /// 12: preadv, re-preadv (-E).
    Preadv,
}

impl Test {
    pub const ALL: [Test; 13] = [
        Test::Write,
        Test::Read,
        Test::Random,
        Test::Backward,
        Test::RecordRewrite,
        Test::Stride,
        Test::Fwrite,
        Test::Fread,
        Test::Mixed,
        Test::Pwrite,
        Test::Pread,
        Test::Pwritev,
        Test::Preadv,
    ];

    /// IOzone's `-i` number.
    pub fn number(self) -> u8 {
        Test::ALL.iter().position(|t| *t == self).expect("in ALL") as u8
    }

    pub fn from_number(n: u64) -> Option<Test> {
        Test::ALL.get(usize::try_from(n).ok()?).copied()
    }

    /// The columns its passes fill, first pass first (`-+n` keeps only the
    /// first for the tests that have a re- pass; test 2 always has both).
    pub fn columns(self) -> &'static [Column] {
        use Column::*;
        match self {
            Test::Write => &[Write, Rewrite],
            Test::Read => &[Read, Reread],
            Test::Random => &[RandomRead, RandomWrite],
            Test::Backward => &[BkwdRead],
            Test::RecordRewrite => &[RecordRewrite],
            Test::Stride => &[StrideRead],
            Test::Fwrite => &[Fwrite, Frewrite],
            Test::Fread => &[Fread, Freread],
            Test::Mixed => &[Mixed],
            Test::Pwrite => &[Pwrite, RePwrite],
            Test::Pread => &[Pread, RePread],
            Test::Pwritev => &[Pwritev, RePwritev],
            Test::Preadv => &[Preadv, RePreadv],
        }
    }

    /// Writes the file (the tests after it read what test 0 left).
    pub fn writes(self) -> bool {
        matches!(self, Test::Write | Test::RecordRewrite | Test::Fwrite | Test::Pwrite | Test::Pwritev)
    }
}

/// One column of IOzone's report: a single pass of a test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Column {
    Write,
    Rewrite,
    Read,
    Reread,
    RandomRead,
    RandomWrite,
    BkwdRead,
    RecordRewrite,
    StrideRead,
    Fwrite,
    Frewrite,
    Fread,
    Freread,
    Mixed,
    Pwrite,
    RePwrite,
    Pread,
    RePread,
    Pwritev,
    RePwritev,
    Preadv,
    RePreadv,
}

impl Column {
    /// The operation name in fsbench's results (JSON, CSV, compare).
    pub fn name(self) -> &'static str {
        use Column::*;
        match self {
            Write => "write",
            Rewrite => "rewrite",
            Read => "read",
            Reread => "reread",
            RandomRead => "random_read",
            RandomWrite => "random_write",
            BkwdRead => "bkwd_read",
            RecordRewrite => "record_rewrite",
            StrideRead => "stride_read",
            Fwrite => "fwrite",
            Frewrite => "frewrite",
            Fread => "fread",
            Freread => "freread",
            Mixed => "mixed",
            Pwrite => "pwrite",
            RePwrite => "repwrite",
            Pread => "pread",
            RePread => "repread",
            Pwritev => "pwritev",
            RePwritev => "repwritev",
            Preadv => "preadv",
            RePreadv => "repreadv",
        }
    }

    /// The title of its block in IOzone's `-R` report.
    pub fn report_title(self) -> &'static str {
        use Column::*;
        match self {
            Write => "Writer report",
            Rewrite => "Re-writer report",
            Read => "Reader report",
            Reread => "Re-Reader report",
            RandomRead => "Random read report",
            RandomWrite => "Random write report",
            BkwdRead => "Backward read report",
            RecordRewrite => "Record rewrite report",
            StrideRead => "Stride read report",
            Fwrite => "Fwrite report",
            Frewrite => "Re-Fwrite report",
            Fread => "Fread report",
            Freread => "Re-Fread report",
            Mixed => "Mixed workload report",
            Pwrite => "Pwrite report",
            RePwrite => "Re-Pwrite report",
            Pread => "Pread report",
            RePread => "Re-Pread report",
            Pwritev => "Pwritev report",
            RePwritev => "Re-Pwritev report",
            Preadv => "Preadv report",
            RePreadv => "Re-Preadv report",
        }
    }

    /// Moves data to the file (else from it).
    pub fn writes(self) -> bool {
        use Column::*;
        matches!(self, Write | Rewrite | RandomWrite | RecordRewrite | Fwrite | Frewrite | Pwrite | RePwrite | Pwritev | RePwritev)
    }

    pub fn from_name(name: &str) -> Option<Column> {
        Test::ALL.iter().flat_map(|t| t.columns()).copied().find(|c| c.name() == name)
    }
}

/// How rates are shown (`-O`, `-N`); kB/s by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Units {
    #[default]
    KbPerSec,
    /// `-O`: operations per second.
    OpsPerSec,
    /// `-N`: microseconds per operation.
    UsPerOp,
}

/// Throughput mode (`-t N`, `-l`/`-u`): N processes or threads, each on its
/// own file, the tests run by all of them at once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Throughput {
    /// Child counts to run, in order (`-t N` alone: just N; `-l a -u b`:
    /// a..=b).
    pub children: Vec<u32>,
    /// `-T`: threads rather than processes (fsbench always runs threads;
    /// the flag is recorded).
    pub threads: bool,
    /// All children stop when the first one finishes (`-x` turns it off).
    pub stonewall: bool,
    /// `-+p`: percentage of the mixed workload's children that read; None:
    /// even children read, odd ones write.
    pub mixed_read_pct: Option<u32>,
    /// `-+B`: the mixed workload is sequential instead of random.
    pub mixed_sequential: bool,
    /// `-F`: one file per child; empty: `iozone.DUMMY.<n>` in the data
    /// directory.
    pub files: Vec<PathBuf>,
}

/// Everything one IOzone run uses, IOzone's rules already applied.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IozonePlan {
    /// Tests in IOzone's run order (test 0 first).
    pub tests: Vec<Test>,
    /// (file size kB, record size kB) to run, in order.
    pub cells: Vec<(u64, u64)>,
    /// Every record size of the report's axis, min to max (`-R` prints them
    /// all in its header, run or not).
    pub record_axis_kb: Vec<u64>,
    /// `-a`/`-A`/`-z` or repeated `-s`/`-r`: the matrix form of the report.
    pub auto: bool,
    /// The test file (`-f`; `./iozone.tmp` by default).
    pub file: PathBuf,
    /// `-I`: O_DIRECT.
    pub direct: bool,
    /// `-o`: O_SYNC.
    pub osync: bool,
    /// `-e`: fsync (fflush for stdio) inside the timing.
    pub fsync_in_timing: bool,
    /// `-c`: close inside the timing.
    pub close_in_timing: bool,
    /// `-w`: keep the files at the end.
    pub keep_files: bool,
    /// `-+n`: no second passes.
    pub no_retest: bool,
    /// `-j`: stride of test 5, in records.
    pub stride: u64,
    /// `-O`/`-N`.
    pub units: Units,
    /// `-U`: remount this mount point before each test.
    pub remount: Option<PathBuf>,
    /// `-+u`: CPU utilisation.
    pub cpu: bool,
    /// `-R`: print the Excel-style report.
    pub excel: bool,
    /// `-b`: also write that report to this file.
    pub excel_file: Option<PathBuf>,
    /// `-t`: throughput mode.
    pub throughput: Option<Throughput>,
    /// IOzone's "Command line used:" line.
    pub command_line: String,
    /// The lines IOzone's preamble prints for the flags, in the order they
    /// were given ("Auto Mode", "Record Size 64 kB", ...).
    #[serde(default)]
    pub option_lines: Vec<String>,
}

impl Default for IozonePlan {
    /// IOzone's defaults: tests 0-8 wait for the flags; one 512 kB file in
    /// 4 kB records.
    fn default() -> Self {
        IozonePlan {
            tests: vec![Test::Write],
            cells: vec![(512, 4)],
            record_axis_kb: vec![4],
            auto: false,
            file: PathBuf::from("iozone.tmp"),
            direct: false,
            osync: false,
            fsync_in_timing: false,
            close_in_timing: false,
            keep_files: false,
            no_retest: false,
            stride: 17,
            units: Units::KbPerSec,
            remount: None,
            cpu: false,
            excel: false,
            excel_file: None,
            throughput: None,
            command_line: String::new(),
            option_lines: Vec::new(),
        }
    }
}

impl super::Shape for IozonePlan {
    /// The test file's directory.
    fn data_dir(&self) -> Option<std::path::PathBuf> {
        let f = self.throughput.as_ref().and_then(|t| t.files.first()).unwrap_or(&self.file);
        f.parent().map(|p| p.to_path_buf())
    }
    /// IOzone unlinks and recreates its file in test 0 of every cell.
    fn keeps_files_between_runs(&self) -> bool {
        false
    }
    /// Test 0 creates the file.
    fn allocates(&self) -> bool {
        true
    }
    /// Test 0 writes the file the read tests then read, in the same run;
    /// only O_DIRECT (-I) or a remount before each test (-U) keeps those
    /// reads off the pages it left.
    fn reads_own_writes(&self) -> Option<String> {
        let reads = self.tests.iter().any(|t| t.columns().iter().any(|c| !c.writes()));
        (reads && !self.direct && self.remount.is_none())
            .then(|| "IOzone's read passes read the file its write test (test 0) wrote moments before, in the same run".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_names_round_trip() {
        for (i, t) in Test::ALL.iter().enumerate() {
            assert_eq!(t.number() as usize, i);
            assert_eq!(Test::from_number(i as u64), Some(*t));
            for c in t.columns() {
                assert_eq!(Column::from_name(c.name()), Some(*c));
            }
        }
        assert_eq!(Test::from_number(13), None);
        let n: usize = Test::ALL.iter().map(|t| t.columns().len()).sum();
        assert_eq!(n, 22);
    }
}
