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
    EngineInfo {
        name: "sync",
        help: "lseek + read/write, one synchronous call per I/O",
        caps: Caps {
            is_async: false,
            diskless: false,
            inline_when_buffered: true,
            mapped: false,
            files: FileUse::Data,
            moves_no_data: false,
        },
    },
    EngineInfo {
        name: "psync",
        help: "pread/pwrite, one synchronous call per I/O",
        caps: Caps {
            is_async: false,
            diskless: false,
            inline_when_buffered: true,
            mapped: false,
            files: FileUse::Data,
            moves_no_data: false,
        },
    },
    EngineInfo {
        name: "libaio",
        help: "Linux kernel AIO (io_submit/io_getevents); asynchronous only with direct=1",
        caps: Caps {
            is_async: true,
            diskless: false,
            inline_when_buffered: true,
            mapped: false,
            files: FileUse::Data,
            moves_no_data: false,
        },
    },
    EngineInfo {
        name: "io_uring",
        help: "Linux io_uring: batched submission and completion through shared rings (options: fixedbufs, registerfiles, sqthread_poll)",
        caps: Caps {
            is_async: true,
            diskless: false,
            inline_when_buffered: false,
            mapped: false,
            files: FileUse::Data,
            moves_no_data: false,
        },
    },
    EngineInfo {
        name: "mmap",
        help: "memcpy to/from a shared mapping of each file; syncs are msync(MS_SYNC)",
        caps: Caps {
            is_async: false,
            diskless: false,
            inline_when_buffered: false,
            mapped: true,
            files: FileUse::Data,
            moves_no_data: false,
        },
    },
    EngineInfo {
        name: "null",
        help: "no I/O at all; calibrates fsbench's own per-I/O overhead",
        caps: Caps {
            is_async: false,
            diskless: true,
            inline_when_buffered: false,
            mapped: false,
            files: FileUse::Data,
            moves_no_data: false,
        },
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
        caps: Caps { moves_no_data: true, ..META.with_files(FileUse::None) },
    },
    EngineInfo {
        name: "exec",
        help: "no I/O: runs program with arguments (%r runtime, %n job name) for the job's runtime, then SIGTERM, grace_time, SIGKILL",
        caps: Caps { moves_no_data: true, ..META.with_files(FileUse::None) },
    },
    EngineInfo {
        name: "net",
        help: "send (rw=write) or receive (rw=read) over TCP, UDP or a unix socket (hostname, port, protocol, listen, pingpong, nodelay)",
        caps: META.with_files(FileUse::None),
    },
    EngineInfo {
        name: "netsplice",
        help: "like net, but the data goes through a pipe with splice (TCP, unix) instead of send/recv",
        caps: META.with_files(FileUse::None),
    },
];

/// What the engines that do no data I/O share.
const META: Caps =
    Caps { is_async: false, diskless: false, inline_when_buffered: false, mapped: false, files: FileUse::Data, moves_no_data: false };

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
}
