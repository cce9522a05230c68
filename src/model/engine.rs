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
}

impl Caps {
    /// Keeps several I/Os in flight to a real device: what a queue-depth
    /// test needs.
    pub fn keeps_a_queue(&self) -> bool {
        self.is_async && !self.diskless && !self.mapped
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
        caps: Caps { is_async: false, diskless: false, inline_when_buffered: true, mapped: false },
    },
    EngineInfo {
        name: "psync",
        help: "pread/pwrite, one synchronous call per I/O",
        caps: Caps { is_async: false, diskless: false, inline_when_buffered: true, mapped: false },
    },
    EngineInfo {
        name: "libaio",
        help: "Linux kernel AIO (io_submit/io_getevents); asynchronous only with direct=1",
        caps: Caps { is_async: true, diskless: false, inline_when_buffered: true, mapped: false },
    },
    EngineInfo {
        name: "io_uring",
        help: "Linux io_uring: batched submission and completion through shared rings (options: fixedbufs, registerfiles, sqthread_poll)",
        caps: Caps { is_async: true, diskless: false, inline_when_buffered: false, mapped: false },
    },
    EngineInfo {
        name: "mmap",
        help: "memcpy to/from a shared mapping of each file; syncs are msync(MS_SYNC)",
        caps: Caps { is_async: false, diskless: false, inline_when_buffered: false, mapped: true },
    },
    EngineInfo {
        name: "null",
        help: "no I/O at all; calibrates fsbench's own per-I/O overhead",
        caps: Caps { is_async: false, diskless: true, inline_when_buffered: false, mapped: false },
    },
];

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
