//! The I/O engines as the rest of fsbench sees them: name, help and
//! capabilities, in one descriptive table. The fio frontend validates
//! `ioengine=` against it, `fsbench engines` lists it, and the runner's
//! warnings read its capabilities.
//!
//! What belongs here: the description of an engine, never its code. The
//! implementations live in `crate::ioengine`, looked up there by the same
//! name; a test checks that both tables name exactly the same engines.
//! Like the rest of `model`, this imports nothing else from the crate, so any
//! module may use it.

/// What an engine can do, so the runner can warn about settings that have
/// no effect (fio's most common confusion).
#[derive(Clone, Copy, Debug)]
pub struct Caps {
    /// Can keep more than one I/O in flight.
    pub is_async: bool,
    /// Does no I/O at all (calibration).
    pub diskless: bool,
    /// Buffered I/O through this engine completes inline, so a queue depth
    /// above one gains nothing without direct=1.
    pub inline_when_buffered: bool,
    /// Works through a memory mapping, not read/write calls: direct and sync
    /// open flags do not apply.
    pub mapped: bool,
    /// What the engine does with the job's files instead of reading and
    /// writing them; `Data` for every plain I/O engine.
    pub files: FileUse,
    /// Counts operations but moves no bytes (cpuio, exec): results show 0
    /// bytes, as fio's do, and the job runs until its runtime.
    pub moves_no_data: bool,
    /// What kind of work the engine does.
    pub class: Class,
    /// The directions of `rw=` it can perform; a job asking for another is
    /// refused before it runs.
    pub dirs: Dirs,
}

/// What an engine's "I/O" is, which decides how it is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Moves file or device data (or, for `null`, pretends to).
    Data,
    /// Changes a file's allocation or size instead of its bytes (falloc,
    /// ftruncate, e4defrag).
    Space,
    /// Creates, stats or deletes files and directories.
    FileOps,
    /// Burns CPU instead of doing I/O.
    Cpu,
    /// Sends or receives over a network.
    Net,
    /// Runs a program.
    Exec,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Data => "data",
            Class::Space => "space",
            Class::FileOps => "file-ops",
            Class::Cpu => "cpu",
            Class::Net => "net",
            Class::Exec => "exec",
        }
    }
}

/// A set of `rw=` directions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dirs {
    pub read: bool,
    pub write: bool,
    pub trim: bool,
}

impl Dirs {
    pub const RW: Dirs = Dirs { read: true, write: true, trim: false };
    pub const ALL: Dirs = Dirs { read: true, write: true, trim: true };
    pub const WRITE: Dirs = Dirs { read: false, write: true, trim: false };

    /// "read,write,trim" or the part of it the set holds.
    pub fn names(&self) -> String {
        let v: Vec<&str> = [(self.read, "read"), (self.write, "write"), (self.trim, "trim")].iter().filter(|d| d.0).map(|d| d.1).collect();
        v.join(",")
    }

    /// Why an engine with these directions cannot run a job that reads,
    /// writes and trims as given, if it cannot.
    pub fn refuses(&self, engine: &str, read: bool, write: bool, trim: bool) -> Option<String> {
        let missing: Vec<&str> = [(read && !self.read, "read"), (write && !self.write, "write"), (trim && !self.trim, "trim")]
            .iter()
            .filter(|m| m.0)
            .map(|m| m.1)
            .collect();
        if missing.is_empty() {
            return None;
        }
        Some(format!("ioengine={engine} cannot {}; it can only {}", missing.join(" or "), self.names().replace(',', ", ")))
    }
}

/// How an engine uses the files a job names. Everything but `Data` is
/// handled before the measured window (the runner neither opens nor, for
/// some, lays out the files), so the data path is the same for all.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileUse {
    /// Laid out, opened, read and written through descriptors.
    Data,
    /// Laid out as files, then worked on by path (stat, unlink).
    ByPath,
    /// Laid out as directories, then worked on by path (stat, rmdir).
    DirsByPath,
    /// Created by the engine itself (one create per file and pass): the
    /// runner lays nothing out and opens nothing.
    MadeByEngine,
    /// No files at all (CPU burner, program runner, network sockets): a
    /// name only, which some engines read (a unix socket's path).
    None,
}

impl FileUse {
    /// The runner opens the files and hands their descriptors to the engine.
    pub fn opened(self) -> bool {
        self == FileUse::Data
    }
    /// Something exists on disk before the run that the runner prepares.
    pub fn laid_out(self) -> bool {
        matches!(self, FileUse::Data | FileUse::ByPath | FileUse::DirsByPath)
    }
}

impl Caps {
    /// Keeps several I/Os in flight to a real device: what a queue-depth
    /// test needs.
    pub fn keeps_a_queue(&self) -> bool {
        self.is_async && !self.diskless && !self.mapped && self.files == FileUse::Data
    }
}

/// An entry of the engine table.
#[derive(Debug)]
pub struct EngineInfo {
    pub name: &'static str,
    pub help: &'static str,
    pub caps: Caps,
}

/// Every engine fsbench has, in the order `fsbench engines` lists them.
pub static ENGINES: &[EngineInfo] = &[
    EngineInfo { name: "sync", help: "lseek + read/write, one synchronous call per I/O", caps: SYNC },
    EngineInfo { name: "psync", help: "pread/pwrite, one synchronous call per I/O", caps: SYNC },
    EngineInfo {
        name: "libaio",
        help: "Linux kernel AIO (io_submit/io_getevents); asynchronous only with direct=1",
        caps: Caps { is_async: true, ..SYNC },
    },
    EngineInfo {
        name: "io_uring",
        help: "Linux io_uring: batched submission and completion through shared rings (options: fixedbufs, registerfiles, sqthread_poll)",
        caps: ASYNC,
    },
    EngineInfo {
        name: "mmap",
        help: "memcpy to/from a shared mapping of each file; syncs are msync(MS_SYNC)",
        caps: Caps { inline_when_buffered: false, mapped: true, ..SYNC },
    },
    EngineInfo { name: "pvsync", help: "preadv/pwritev with one iovec, one synchronous call per I/O", caps: SYNC },
    EngineInfo { name: "pvsync2", help: "preadv2/pwritev2 with one iovec (options: hipri = RWF_HIPRI, nowait = RWF_NOWAIT)", caps: SYNC },
    EngineInfo { name: "vsync", help: "lseek + readv/writev with one iovec, one synchronous call per I/O", caps: SYNC },
    EngineInfo {
        name: "posixaio",
        help: "POSIX AIO (aio_read/aio_write, completion by aio_suspend); glibc runs it on helper threads",
        caps: ASYNC,
    },
    EngineInfo { name: "splice", help: "data moved through a pipe: vmsplice + splice to write, splice + read to read", caps: SYNC },
    EngineInfo {
        name: "falloc",
        help: "fallocate per I/O: write allocates, read allocates keeping the size, trim punches a hole",
        caps: Caps { class: Class::Space, ..SYNC },
    },
    EngineInfo {
        name: "ftruncate",
        help: "ftruncate per write I/O, to the I/O's offset (bs is ignored); reads and trims are refused",
        caps: Caps { class: Class::Space, dirs: Dirs::WRITE, ..SYNC },
    },
    EngineInfo {
        name: "e4defrag",
        help: "EXT4_IOC_MOVE_EXT of each block to a donor file, ext4 only (options: donorname, inplace)",
        caps: Caps { class: Class::Space, dirs: Dirs::WRITE, ..SYNC },
    },
    EngineInfo {
        name: "null",
        help: "no I/O at all; calibrates fsbench's own per-I/O overhead",
        caps: Caps { diskless: true, inline_when_buffered: false, ..SYNC },
    },
    EngineInfo {
        name: "filecreate",
        help: "each file is created (open O_CREAT, close) once per pass; no data I/O (counts as fio does: filesize/bs I/Os per file)",
        caps: META.with_files(FileUse::MadeByEngine),
    },
    EngineInfo {
        name: "filestat",
        help: "each laid-out file is stat'ed once per pass (option stat_type=stat|lstat|statx); no data I/O",
        caps: META.with_files(FileUse::ByPath),
    },
    EngineInfo { name: "filedelete", help: "each laid-out file is unlinked once; no data I/O", caps: META.with_files(FileUse::ByPath) },
    EngineInfo {
        name: "dircreate",
        help: "each file name is created as a directory (mkdir) once per pass; no data I/O",
        caps: META.with_files(FileUse::MadeByEngine),
    },
    EngineInfo {
        name: "dirstat",
        help: "each laid-out directory is stat'ed once per pass (option stat_type); no data I/O",
        caps: META.with_files(FileUse::DirsByPath),
    },
    EngineInfo {
        name: "dirdelete",
        help: "each laid-out directory is removed (rmdir) once; no data I/O",
        caps: META.with_files(FileUse::DirsByPath),
    },
    EngineInfo {
        name: "cpuio",
        help: "no I/O: burns CPU for cpuload percent of the time in cycles of cpuchunks us (cpumode=noop|qsort); needs runtime",
        caps: Caps { moves_no_data: true, class: Class::Cpu, ..META.with_files(FileUse::None) },
    },
    EngineInfo {
        name: "exec",
        help: "no I/O: runs program with arguments (%r runtime, %n job name) for the job's runtime, then SIGTERM, grace_time, SIGKILL",
        caps: Caps { moves_no_data: true, class: Class::Exec, ..META.with_files(FileUse::None) },
    },
    EngineInfo {
        name: "net",
        help: "send (rw=write) or receive (rw=read) over TCP, UDP or a unix socket (hostname, port, protocol, listen, pingpong, nodelay)",
        caps: Caps { class: Class::Net, ..META.with_files(FileUse::None) },
    },
    EngineInfo {
        name: "netsplice",
        help: "like net, but the data goes through a pipe with splice (TCP, unix) instead of send/recv",
        caps: Caps { class: Class::Net, ..META.with_files(FileUse::None) },
    },
];

/// A plain synchronous data engine: one call per I/O, every direction.
const SYNC: Caps = Caps {
    is_async: false,
    diskless: false,
    inline_when_buffered: true,
    mapped: false,
    class: Class::Data,
    dirs: Dirs::ALL,
    files: FileUse::Data,
    moves_no_data: false,
};

/// Keeps a queue in flight whose buffered I/O really runs in parallel.
const ASYNC: Caps = Caps { is_async: true, inline_when_buffered: false, ..SYNC };

/// What the engines that do no data I/O share.
const META: Caps = Caps { inline_when_buffered: false, class: Class::FileOps, dirs: Dirs::RW, ..SYNC };

impl Caps {
    const fn with_files(self, files: FileUse) -> Caps {
        Caps { files, ..self }
    }
}

pub fn find(name: &str) -> Option<&'static EngineInfo> {
    ENGINES.iter().find(|e| e.name == name)
}

pub fn names() -> Vec<&'static str> {
    ENGINES.iter().map(|e| e.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut n = names();
        n.sort_unstable();
        n.dedup();
        assert_eq!(n.len(), ENGINES.len());
        assert_eq!(find("psync").map(|e| e.name), Some("psync"));
        assert!(find("spdk").is_none());
    }

    #[test]
    fn directions_an_engine_refuses() {
        assert_eq!(Dirs::ALL.refuses("psync", true, true, true), None);
        let m = Dirs::RW.refuses("x", false, true, true).unwrap();
        assert_eq!(m, "ioengine=x cannot trim; it can only read, write");
        assert!(Dirs::WRITE.refuses("ftruncate", true, false, false).unwrap().contains("cannot read; it can only write"));
    }
}
