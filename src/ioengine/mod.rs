//! How an I/O is issued: one module per engine behind one trait.
//!
//! The shape follows fio's `ioengine_ops`: `queue` hands one I/O to the engine
//! (a synchronous engine performs it right there and reports it done), `commit`
//! submits what was queued, and `reap` collects completions. The runner owns
//! files and buffers; an engine only borrows them through raw descriptors and
//! pointers, so nothing is allocated per I/O.

use crate::model::job::{EngineOptions, MapAdvice};
use std::io;
use std::os::fd::RawFd;
use std::path::Path;

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod conformance_misc;
pub mod cpuio;
pub mod e4defrag;
pub mod exec;
pub mod falloc;
pub mod fileops;
pub mod ftruncate;
pub mod io_uring;
pub mod libaio;
pub mod mmap;
pub mod net;
pub mod null;
pub mod posixaio;
pub mod psync;
pub mod pvsync;
pub mod splice;
pub mod sync;
#[cfg(test)]
mod testkit;

/// What an I/O does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOp {
    Read,
    Write,
    Fsync,
    Fdatasync,
    /// Discard `len` bytes at `offset`: BLKDISCARD on a block device, a
    /// punched hole (size kept) in a regular file. No buffer.
    Trim,
}

/// One I/O as the runner hands it to an engine.
#[derive(Clone, Copy, Debug)]
pub struct IoUnit {
    pub op: IoOp,
    /// Index into the files given to `setup`.
    pub file: u32,
    pub offset: u64,
    pub len: u32,
    /// Start of the buffer; valid for `len` bytes until the I/O completes.
    pub buf: *mut u8,
    /// Index of the buffer slot (also the token that comes back on completion).
    pub slot: u32,
    /// Kernel ioprio value for this I/O alone (fio's cmdprio); 0 leaves it to
    /// the thread's priority. Only io_uring and libaio carry it.
    pub prio: u16,
}

/// What `queue` did with an I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// Performed already; the value is bytes transferred or a negative errno.
    Done(i64),
    /// Accepted; it completes through `commit` + `reap`.
    Pending,
}

/// A completed asynchronous I/O.
#[derive(Clone, Copy, Debug, Default)]
pub struct Completion {
    pub slot: u32,
    /// Bytes transferred, or a negative errno.
    pub res: i64,
}

/// A file the engine may address by index.
#[derive(Clone, Copy, Debug)]
pub struct EngineFile {
    pub fd: RawFd,
    /// Bytes of the file the job may touch (from offset 0).
    pub size: u64,
    /// Opened for writing as well as reading.
    pub writable: bool,
}

/// A file an engine works on by path (engines whose files the runner does
/// not open: file and directory operations, a unix socket's path).
#[derive(Clone, Copy, Debug)]
pub struct EnginePath<'a> {
    pub path: &'a Path,
    /// Bytes one pass over the file covers: an engine that does one
    /// operation per file and pass does it every `bytes` of I/O.
    pub bytes: u64,
}

/// A buffer slot, `iodepth` of them per worker.
#[derive(Clone, Copy, Debug)]
pub struct EngineBuf {
    pub ptr: *mut u8,
    pub len: usize,
}

/// Everything an engine needs to be constructed.
pub struct EngineConfig<'a> {
    pub iodepth: u32,
    pub options: &'a EngineOptions,
}

/// An engine's name, help and capabilities live in
/// `crate::model::engine::ENGINES`, not here.
pub trait IoEngine: Send {
    /// Called before `setup` instead of opening the files, for engines whose
    /// `Caps::files` says the runner does not open them.
    fn setup_paths(&mut self, _files: &[EnginePath]) -> io::Result<()> {
        Ok(())
    }
    /// Called once before the first I/O with the worker's files and buffers.
    fn setup(&mut self, files: &[EngineFile], bufs: &[EngineBuf]) -> io::Result<()>;
    /// The other side has finished (a network peer closed the connection or
    /// sent its end marker): the I/O that found out came back short, and
    /// that ends the job instead of failing it. Asked only after a short
    /// result, so it costs nothing per I/O.
    fn finished(&self) -> bool {
        false
    }
    /// Hand one I/O to the engine.
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued>;
    /// Submit everything queued since the last commit. Returns how many were
    /// submitted. A synchronous engine finishes every I/O in `queue`
    /// (`Queued::Done`), so it has nothing to submit or reap.
    fn commit(&mut self) -> io::Result<usize> {
        Ok(0)
    }
    /// Wait for at least `min` completions (0 = poll), store up to `out.len()`
    /// of them and return how many were stored.
    fn reap(&mut self, _min: usize, _out: &mut [Completion]) -> io::Result<usize> {
        Ok(0)
    }
    /// `commit`, then `reap(min, out)`: for the runner's steady state, where
    /// a batch goes out and the queue is full. An engine that can submit and
    /// wait in one system call (io_uring) overrides it. Returns (submitted,
    /// stored completions).
    fn commit_and_reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<(usize, usize)> {
        let n = self.commit()?;
        Ok((n, self.reap(min, out)?))
    }
}

/// An implementation, registered under the name its description has in
/// `crate::model::engine::ENGINES`.
pub struct EngineImpl {
    pub name: &'static str,
    pub make: fn(&EngineConfig) -> io::Result<Box<dyn IoEngine>>,
}

/// Every engine implementation, looked up by name (like fio's `ioengine_ops`).
pub static IMPLS: &[EngineImpl] = &[
    sync::IMPL,
    psync::IMPL,
    libaio::IMPL,
    io_uring::IMPL,
    mmap::IMPL,
    pvsync::IMPL,
    pvsync::IMPL2,
    sync::VSYNC,
    posixaio::IMPL,
    splice::IMPL,
    falloc::IMPL,
    ftruncate::IMPL,
    e4defrag::IMPL,
    null::IMPL,
    fileops::FILECREATE,
    fileops::FILESTAT,
    fileops::FILEDELETE,
    fileops::DIRCREATE,
    fileops::DIRSTAT,
    fileops::DIRDELETE,
    cpuio::IMPL,
    exec::IMPL,
    net::NET,
    net::NETSPLICE,
];

pub fn find(name: &str) -> Option<&'static EngineImpl> {
    IMPLS.iter().find(|e| e.name == name)
}

/// Convert a libc return value into bytes-or-negative-errno.
#[inline]
pub(crate) fn syscall_result(ret: isize) -> i64 {
    if ret < 0 {
        -(io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO) as i64)
    } else {
        ret as i64
    }
}

/// Perform a sync op on a descriptor; shared by the synchronous engines.
#[inline]
pub(crate) fn do_sync(fd: RawFd, op: IoOp) -> i64 {
    // SAFETY: fsync and fdatasync take a plain descriptor (one of the engine's files, open while it runs) and touch no
    // memory of ours.
    let r = unsafe {
        match op {
            IoOp::Fsync => libc::fsync(fd),
            _ => libc::fdatasync(fd),
        }
    };
    syscall_result(r as isize)
}

/// `_IO(0x12, 119)`: discard a byte range `[start, len]` of a block device.
const BLKDISCARD: libc::c_ulong = 0x1277;

/// How each file is trimmed, decided once in `setup` (one fstat per file) so
/// that a trim costs one system call. fio 3.33 only knows BLKDISCARD and so
/// fails trims on regular files with ENOTTY; punching a hole is what a
/// discard means for a file, and what its st_blocks then show.
#[derive(Default)]
pub(crate) struct Trimmer {
    block: Vec<bool>,
}

impl Trimmer {
    pub(crate) fn new(files: &[EngineFile]) -> Trimmer {
        let is_block = |fd: RawFd| {
            // SAFETY: libc::stat is plain integers, for which all-zero bytes is a valid value.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: `st` is a live, writable stat that fstat only writes into; a bad descriptor returns EBADF, and
            // such a file is then trimmed as a regular one, which reports the same EBADF per I/O.
            unsafe { libc::fstat(fd, &mut st) == 0 && st.st_mode & libc::S_IFMT == libc::S_IFBLK }
        };
        Trimmer { block: files.iter().map(|f| is_block(f.fd)).collect() }
    }

    /// Trim `len` bytes at `offset` of file `file` (descriptor `fd`): `len` or a negative errno.
    #[inline]
    pub(crate) fn trim(&self, file: u32, fd: RawFd, offset: u64, len: u32) -> i64 {
        let r = if self.block.get(file as usize).copied().unwrap_or(false) {
            let range: [u64; 2] = [offset, len as u64];
            // SAFETY: BLKDISCARD reads two u64 from `range`, a live local array of that type; `fd` is a plain descriptor.
            unsafe { libc::ioctl(fd, BLKDISCARD, range.as_ptr()) }
        } else {
            // SAFETY: fallocate takes a descriptor and integers and touches no memory of ours.
            unsafe {
                libc::fallocate(fd, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, offset as libc::off_t, len as libc::off_t)
            }
        };
        if r < 0 {
            syscall_result(-1)
        } else {
            len as i64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The descriptive table and the implementations name exactly the same
    /// engines: an engine added to one and forgotten in the other fails here.
    #[test]
    fn every_described_engine_is_implemented_and_vice_versa() {
        let mut described = crate::model::engine::names();
        let mut implemented: Vec<&str> = IMPLS.iter().map(|e| e.name).collect();
        described.sort_unstable();
        implemented.sort_unstable();
        let n = implemented.len();
        implemented.dedup();
        assert_eq!(implemented.len(), n, "an engine is registered twice in ioengine::IMPLS");
        assert_eq!(described, implemented, "model::engine::ENGINES and ioengine::IMPLS differ");
    }
}
