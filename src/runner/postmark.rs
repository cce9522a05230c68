//! Executes one `PostmarkPlan` with Postmark's algorithm:
//!
//! 1. when subdirectories > 1, make `s0..s(n-1)` in every location;
//! 2. t0; create `number` files;
//! 3. t1; the transactions: each reads a random file (whole, in read-block
//!    pieces plus the remainder) or appends to one (RND(high-size)+1 bytes,
//!    only while size < high), chosen by the read bias, then creates a file
//!    or deletes a random one, chosen by the create bias; a bias of -1 skips
//!    that half. With no file left the run ends with `OutOfFiles`, as
//!    Postmark ends with "out of files!" and no report;
//! 4. t2; delete every remaining file; t3; remove the subdirectories.
//!
//! Files are named `N` (the creation counter, from 1) in `sK/` (K uniform
//! among the subdirectories, when more than one) of a location chosen by
//! weight; sizes are uniform in [low, high-1] (exactly low when low ==
//! high). Postmark's file table has 2×number slots: a create that finds it
//! full does nothing, which caps the live files at 2×number.
//!
//! I/O as Postmark issues it: buffered runs go through a stdio-like buffer
//! of the directory's st_blksize (glibc's rules: fill, flush, whole buffers
//! straight from the caller, remainder at close), so the kernel sees
//! buffer-sized calls; unbuffered runs make one call per block. Written data
//! is printable random bytes (32 + RND(95)), every file starting at the same
//! place of one buffer, as in Postmark.
//!
//! Differences from Postmark, all outside what the kernel is asked to do
//! per operation except the first: files are created with O_EXCL (a name
//! that already exists is an error, never overwritten or later deleted);
//! no fstat per open and no lseek per append (stdio's, whose results
//! Postmark does not use); a read does not copy out of the stdio buffer;
//! names are relative to open directory descriptors (openat/unlinkat) rather
//! than paths from the current directory; random numbers come from
//! `runner::rng::Rng`, not Postmark's Mersenne Twister, so the same seed
//! gives a different (but equally distributed) sequence; a live file is
//! picked in O(1) from a dense table instead of probing the 2×number slots.
//!
//! Measurement: each create, read, append and delete is timed by two
//! monotonic clock reads into its `LatencyHist`; nothing is allocated,
//! locked or formatted per operation. t0..t3 are recorded on the monotonic
//! clock and as Unix seconds (what Postmark's report is computed from).
//!
//! Only what the run created is removed, and it is removed on success, on
//! error and when stopped (the stop flag is read once per created file and
//! per transaction; the deletion phase always completes).
//!
//! Where the files go: in each location, a directory of the run's own,
//! `fsbench-postmark-XXXXXXXX`, made before t0 and on record with its
//! identity (`environment::cleanup`), holds the files and the `sK`
//! subdirectories. A killed run (SIGKILL, a crash) thus leaves one
//! directory that `fsbench cleanup` removes whole, and no file of the
//! user's can be among them, whatever it is named: recording 20,000 names
//! one by one would cost the run a record rewrite per create and delete,
//! and a pattern of names (`N`, `sK/N`) cannot tell a user's file `17`
//! from the run's. What Postmark measures is unchanged: the same names,
//! the same sizes, the same calls, relative to open directory descriptors
//! as before; the files are one level deeper, in a fresh directory of the
//! same file system, which is where Postmark is usually pointed anyway.

use crate::environment::cleanup::{self, Token};
use crate::environment::lock::{lock_path, Lock, LockError};
use crate::environment::space::Need;
use crate::model::postmark::PostmarkPlan;
use crate::result::postmark::PostmarkDetails;
use crate::result::{GroupResult, Headline, JobResult, RunResult};
use crate::result::{OpClass, OpStats};
use crate::runner::events::{Expected, Meter, Warnings};
use crate::runner::lifecycle::{self, Finished, OneGroup};
use crate::runner::rng::Rng;
use crate::runner::{RunError, RunOptions};
use std::ffi::CString;
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// What one run measured. `ops` are "create", "read", "append", "delete",
/// in that order, with the bytes each moved.
#[derive(Clone, Debug)]
pub struct PostmarkOutcome {
    pub ops: Vec<OpStats>,
    pub details: PostmarkDetails,
    /// t0 to t3 on the monotonic clock.
    pub elapsed_ns: u64,
    /// Stopped early: the figures cover what ran.
    pub partial: bool,
}

#[derive(Debug)]
pub enum PostmarkRunError {
    /// A location or subdirectory could not be opened or made.
    Setup { path: PathBuf, what: &'static str, source: io::Error },
    /// A file the run was to create already exists; it is left alone.
    Exists { path: PathBuf },
    /// An operation failed (op is "create", "read", "append" or "delete").
    Io { op: &'static str, path: PathBuf, source: io::Error },
    /// No file was left for a transaction (Postmark's "out of files!").
    OutOfFiles { transaction: u64 },
    /// A buffer or the file table could not be allocated.
    Memory { bytes: u64 },
    /// Removing what the run created failed; `remaining` entries are left.
    /// `after` is the error that ended the run, if one did.
    Cleanup { path: PathBuf, source: io::Error, remaining: u64, after: Option<Box<PostmarkRunError>> },
}

impl fmt::Display for PostmarkRunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PostmarkRunError::Setup { path, what, source } => write!(f, "cannot {what} {}: {source}", path.display()),
            PostmarkRunError::Exists { path } => {
                write!(f, "{} already exists and was not created by this run (use an empty location; nothing there is overwritten or deleted)", path.display())
            }
            PostmarkRunError::Io { op, path, source } => write!(f, "{op} {}: {source}", path.display()),
            PostmarkRunError::OutOfFiles { transaction } => write!(
                f,
                "out of files at transaction {transaction}: every file was deleted (as Postmark, no report); use more files or fewer transactions"
            ),
            PostmarkRunError::Memory { bytes } => write!(f, "cannot allocate {bytes} bytes"),
            PostmarkRunError::Cleanup { path, source, remaining, after } => {
                if let Some(e) = after {
                    write!(f, "{e}; then ")?;
                }
                write!(f, "cleanup failed at {}: {source} ({remaining} entries the run created are left)", path.display())
            }
        }
    }
}

impl std::error::Error for PostmarkRunError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PostmarkRunError::Setup { source, .. } | PostmarkRunError::Io { source, .. } | PostmarkRunError::Cleanup { source, .. } => {
                Some(source)
            }
            _ => None,
        }
    }
}

/// Run the plan. `stop` ends the creation and transaction phases early (the
/// outcome is then partial); the files are deleted either way.
pub fn run(plan: &PostmarkPlan, stop: &AtomicBool) -> Result<PostmarkOutcome, PostmarkRunError> {
    run_with_hook(plan, stop, &mut |_| {})
}

/// Points at which `run_with_hook` calls its hook (for tests that look at
/// the files mid-run; the hook's time counts in the next phase).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The pool exists (t1 taken), before the first transaction.
    PoolCreated,
    /// The transactions are done (t2 taken), before the deletion phase.
    TransactionsDone,
    /// So many transactions are done (every 4096, for a progress display).
    Transactions(u64),
}

pub fn run_with_hook(plan: &PostmarkPlan, stop: &AtomicBool, hook: &mut dyn FnMut(Phase)) -> Result<PostmarkOutcome, PostmarkRunError> {
    let base = Instant::now();
    let mut r = Run::setup(plan, base, stop)?;
    let result = r.body(stop, hook);
    let cleanup = r.cleanup();
    match (result, cleanup) {
        (Ok(()), Ok(())) => Ok(r.outcome()),
        (Err(e), Ok(())) => Err(e),
        (res, Err(PostmarkRunError::Cleanup { path, source, remaining, .. })) => {
            Err(PostmarkRunError::Cleanup { path, source, remaining, after: res.err().map(Box::new) })
        }
        (_, Err(e)) => Err(e),
    }
}

/// Creating a file writes its content; appends write, reads read, and a
/// delete moves no data.
fn class_of(op: &str) -> OpClass {
    match op {
        "create" | "append" => OpClass::DataWrite,
        "read" => OpClass::DataRead,
        _ => OpClass::Metadata,
    }
}

const CREATE: usize = 0;
const READ: usize = 1;
const APPEND: usize = 2;
const DELETE: usize = 3;

/// At most this many directory descriptors are kept open; with more
/// location × subdirectory pairs, names are `sK/N` relative to the location.
const MAX_DIR_FDS: usize = 256;

/// The content buffer repeats after this many bytes (or the largest file
/// size, if smaller).
const CONTENT_PERIOD: u64 = 4 << 20;

#[derive(Clone, Copy)]
struct FileRec {
    id: u64,
    size: u64,
    /// Location index × subdirectory count + subdirectory.
    dir: u64,
}

struct Loc {
    /// The run's own directory in the location.
    path: PathBuf,
    fd: OwnedFd,
    /// st_blksize: the stdio buffer size for files here.
    blksize: usize,
    /// Removes `path` and what is left in it (after the run, on Ctrl-C, or
    /// by `fsbench cleanup` after a SIGKILL).
    own: Option<Token>,
}

impl Drop for Loc {
    /// A run that ends without its cleanup (a setup error) still removes
    /// its directory.
    fn drop(&mut self) {
        if let Some(t) = self.own.take() {
            let _ = t.done();
        }
    }
}

struct Run {
    plan: PostmarkPlan,
    locs: Vec<Loc>,
    /// Cumulative weights, one per location.
    cum: Vec<u64>,
    /// Subdirectories per location actually used (0: none).
    subs: u64,
    /// One descriptor per (location, subdirectory) when `subs` > 0 and
    /// their count allows it.
    sub_fds: Vec<OwnedFd>,
    /// Subdirectories this run made (location index, K), to remove.
    made_dirs: Vec<(u32, u64)>,
    live: Vec<FileRec>,
    cap: usize,
    next_id: u64,
    rng: Rng,
    content: Vec<u8>,
    period: usize,
    scratch: Vec<u8>,
    name: [u8; 64],
    ops: [OpStats; 4],
    d: PostmarkDetails,
    base: Instant,
    stopped: bool,
}

/// Make the run's own directory in `location`, on record with its
/// identity, and open it.
fn own_dir(location: &Path) -> Result<(PathBuf, OwnedFd, Token), PostmarkRunError> {
    let setup = |what, source| PostmarkRunError::Setup { path: location.to_path_buf(), what, source };
    let path = crate::environment::target::create_unique_dir(location, "fsbench-postmark-")
        .map_err(|e| setup("make the run's directory in", io::Error::other(e)))?;
    let own = cleanup::made_dir(&path);
    let c = cstr(&path)?;
    // SAFETY: c is NUL-terminated; the result is checked.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        let e = last_err();
        let _ = own.done();
        return Err(setup("open the run's directory in", e));
    }
    // SAFETY: fd was just opened and is owned here only.
    Ok((path, unsafe { OwnedFd::from_raw_fd(fd) }, own))
}

fn try_vec(len: usize) -> Result<Vec<u8>, PostmarkRunError> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|_| PostmarkRunError::Memory { bytes: len as u64 })?;
    v.resize(len, 0);
    Ok(v)
}

fn cstr(p: &Path) -> Result<CString, PostmarkRunError> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| PostmarkRunError::Setup {
        path: p.to_path_buf(),
        what: "use",
        source: io::Error::new(io::ErrorKind::InvalidInput, "NUL byte in path"),
    })
}

/// Decimal digits of `v` into `buf` at `pos`; returns the new end.
#[inline]
fn put_u64(buf: &mut [u8; 64], pos: usize, mut v: u64) -> usize {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let n = tmp.len() - i;
    buf[pos..pos + n].copy_from_slice(&tmp[i..]);
    pos + n
}

fn now_unix() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

#[inline]
fn last_err() -> io::Error {
    io::Error::last_os_error()
}

/// write(2) all of `buf`.
#[inline]
fn write_all(fd: RawFd, mut buf: &[u8]) -> io::Result<()> {
    while !buf.is_empty() {
        // SAFETY: buf is a valid readable slice for the call.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            let e = last_err();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(io::Error::new(io::ErrorKind::WriteZero, "write returned 0"));
        }
        buf = &buf[n as usize..];
    }
    Ok(())
}

/// read(2) once; 0 at end of file.
#[inline]
fn read_once(fd: RawFd, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: buf is a valid writable slice for the call.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = last_err();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Write `total` bytes of `content` (from the stream's start, wrapping every
/// `period` bytes) in pieces of `block`, as unbuffered writes (`buffer`
/// None) or fwrite through a stdio buffer of that many bytes would.
#[inline]
fn write_stream(fd: RawFd, content: &[u8], period: usize, total: u64, block: u64, buffer: Option<usize>) -> io::Result<()> {
    let mut off = 0usize;
    write_calls(total, block, buffer, |n| {
        let start = off % period;
        off += n;
        write_all(fd, &content[start..start + n])
    })
}

/// The write calls (their sizes, in order) that writing `total` bytes in
/// pieces of `block` makes: one per piece unbuffered; through a stdio buffer
/// of `buffer` bytes that starts unallocated (fopen's state), glibc's rules:
/// a piece that fits is copied; one that does not fills the buffer, flushes
/// it, goes straight out in whole buffers and leaves the rest buffered; the
/// first piece finds no buffer yet; fclose flushes what is left.
#[inline]
fn write_calls(total: u64, block: u64, buffer: Option<usize>, mut call: impl FnMut(usize) -> io::Result<()>) -> io::Result<()> {
    let mut left = total;
    let Some(cap) = buffer else {
        while left > 0 {
            let n = left.min(block) as usize;
            call(n)?;
            left -= n as u64;
        }
        return Ok(());
    };
    let mut fill = 0usize;
    let mut allocated = false;
    while left > 0 {
        let piece = left.min(block) as usize;
        left -= piece as u64;
        let space = if allocated { cap - fill } else { 0 };
        let copied = space.min(piece);
        fill += copied;
        let to_do = piece - copied;
        if to_do > 0 {
            if fill > 0 {
                call(fill)?;
            }
            allocated = true;
            let direct = if cap >= 128 { to_do - to_do % cap } else { to_do };
            if direct > 0 {
                call(direct)?;
            }
            fill = to_do - direct;
        }
    }
    if fill > 0 {
        call(fill)?;
    }
    Ok(())
}

/// Read `total` bytes in pieces of `block`, unbuffered or through a stdio
/// buffer; returns the bytes obtained (fewer at an early end of file).
/// `scratch` holds at least max(block, buffer) bytes.
#[inline]
fn read_stream(fd: RawFd, scratch: &mut [u8], total: u64, block: u64, buffer: Option<usize>) -> io::Result<u64> {
    read_calls(total, block, buffer, |n| read_once(fd, &mut scratch[..n]))
}

/// The read calls `read_stream` makes (`call(n)` reads up to n bytes and
/// returns how many it got, 0 at end of file): unbuffered, one per piece
/// (repeated while short); buffered, glibc's fread: serve from the buffer,
/// refill it with a buffer-sized read when less than a buffer is wanted,
/// else read whole buffers straight into the caller's memory.
#[inline]
fn read_calls(total: u64, block: u64, buffer: Option<usize>, mut call: impl FnMut(usize) -> io::Result<usize>) -> io::Result<u64> {
    let mut left = total;
    let mut got = 0u64;
    let mut have = 0usize; // unread bytes in the stdio buffer
    while left > 0 {
        let piece = left.min(block) as usize;
        left -= piece as u64;
        let mut want = piece;
        while want > 0 {
            let Some(cap) = buffer else {
                let n = call(want)?;
                if n == 0 {
                    return Ok(got);
                }
                want -= n;
                got += n as u64;
                continue;
            };
            if want <= have {
                have -= want;
                got += want as u64;
                break;
            }
            want -= have;
            got += have as u64;
            have = 0;
            if want < cap {
                let n = call(cap)?;
                if n == 0 {
                    return Ok(got);
                }
                have = n;
            } else {
                let n = call(if cap >= 128 { want - want % cap } else { want })?;
                if n == 0 {
                    return Ok(got);
                }
                want -= n;
                got += n as u64;
            }
        }
    }
    Ok(got)
}

impl Run {
    fn setup(plan: &PostmarkPlan, base: Instant, stop: &AtomicBool) -> Result<Run, PostmarkRunError> {
        // Open every location once; two spellings of one directory share it.
        let mut locs: Vec<Loc> = Vec::new();
        let mut weights: Vec<u64> = Vec::new();
        let mut seen: Vec<(u64, u64)> = Vec::new();
        for l in &plan.locations {
            let c = cstr(&l.path)?;
            // SAFETY: c is NUL-terminated; the result is checked.
            let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
            if fd < 0 {
                return Err(PostmarkRunError::Setup { path: l.path.clone(), what: "open location", source: last_err() });
            }
            // SAFETY: fd was just opened and is owned here only.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            // SAFETY: libc::stat is plain integers, for which all-zero is valid.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: st is a valid out-pointer.
            if unsafe { libc::fstat(fd.as_raw_fd(), &mut st) } != 0 {
                return Err(PostmarkRunError::Setup { path: l.path.clone(), what: "examine location", source: last_err() });
            }
            let key = (st.st_dev, st.st_ino);
            if let Some(i) = seen.iter().position(|k| *k == key) {
                weights[i] += u64::from(l.weight);
                continue;
            }
            seen.push(key);
            weights.push(u64::from(l.weight));
            let blksize = if st.st_blksize > 0 { st.st_blksize as usize } else { 8192 };
            drop(fd);
            // On an early return, dropping `locs` removes the ones made.
            let (path, fd, own) = own_dir(&l.path)?;
            locs.push(Loc { path, fd, blksize, own: Some(own) });
        }
        if locs.is_empty() {
            return Err(PostmarkRunError::Setup {
                path: PathBuf::from("."),
                what: "use locations of",
                source: io::Error::new(io::ErrorKind::InvalidInput, "the plan has no location"),
            });
        }
        let mut cum = Vec::with_capacity(weights.len());
        let mut acc = 0u64;
        for w in &weights {
            acc += (*w).max(1);
            cum.push(acc);
        }
        let subs = if plan.subdirectories > 1 { plan.subdirectories } else { 0 };
        let number = plan.number.max(1);
        let cap = number.checked_mul(2).and_then(|c| usize::try_from(c).ok()).ok_or(PostmarkRunError::Memory { bytes: u64::MAX })?;
        let mut live = Vec::new();
        live.try_reserve_exact(cap).map_err(|_| PostmarkRunError::Memory { bytes: (cap as u64).saturating_mul(24) })?;
        let high = plan.size_high.max(plan.size_low).max(1);
        let period = high.min(CONTENT_PERIOD) as usize;
        let max_blk = locs.iter().map(|l| l.blksize).max().unwrap_or(4096);
        let write_span = usize::try_from(plan.write_block.max(1)).unwrap_or(usize::MAX).max(max_blk);
        let mut content = try_vec(period.saturating_add(write_span))?;
        let mut crng = Rng::new(plan.seed ^ 0xC0_47E4_7000);
        for b in content.iter_mut() {
            *b = 32 + crng.below(95) as u8;
        }
        let scratch = try_vec(usize::try_from(plan.read_block.max(1)).unwrap_or(usize::MAX).max(max_blk))?;
        let names = ["create", "read", "append", "delete"];
        let mut r = Run {
            plan: plan.clone(),
            locs,
            cum,
            subs,
            sub_fds: Vec::new(),
            made_dirs: Vec::new(),
            live,
            cap,
            next_id: 1,
            rng: Rng::new(plan.seed),
            content,
            period,
            scratch,
            name: [0; 64],
            ops: names.map(|n| OpStats::new(n, class_of(n), false)),
            d: PostmarkDetails {
                settings: plan.clone(),
                t_ns: [0; 4],
                t_unix: [0; 4],
                transactions_done: 0,
                created_alone: 0,
                created_mixed: 0,
                deleted_mixed: 0,
                deleted_alone: 0,
                read: 0,
                appended: 0,
                bytes_read: 0,
                bytes_written: 0,
            },
            base,
            stopped: false,
        };
        if let Err(e) = r.make_subdirs(stop) {
            let _ = r.cleanup();
            return Err(e);
        }
        Ok(r)
    }

    fn make_subdirs(&mut self, stop: &AtomicBool) -> Result<(), PostmarkRunError> {
        if self.subs == 0 {
            return Ok(());
        }
        let keep_fds = (self.locs.len() as u64).saturating_mul(self.subs) <= MAX_DIR_FDS as u64;
        for li in 0..self.locs.len() {
            for k in 0..self.subs {
                if stop.load(Ordering::Relaxed) {
                    return Err(PostmarkRunError::Setup {
                        path: self.locs[li].path.clone(),
                        what: "make subdirectories in",
                        source: io::Error::new(io::ErrorKind::Interrupted, "stopped"),
                    });
                }
                self.name[0] = b's';
                let end = put_u64(&mut self.name, 1, k);
                self.name[end] = 0;
                let dfd = self.locs[li].fd.as_raw_fd();
                let path = || self.locs[li].path.join(format!("s{k}"));
                // SAFETY: name is NUL-terminated.
                if unsafe { libc::mkdirat(dfd, self.name.as_ptr().cast(), 0o777) } == 0 {
                    self.made_dirs.push((li as u32, k));
                } else {
                    let e = last_err();
                    if e.kind() != io::ErrorKind::AlreadyExists {
                        return Err(PostmarkRunError::Setup { path: path(), what: "make subdirectory", source: e });
                    }
                }
                if keep_fds {
                    // SAFETY: as above; O_DIRECTORY refuses a non-directory.
                    let fd = unsafe { libc::openat(dfd, self.name.as_ptr().cast(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
                    if fd < 0 {
                        return Err(PostmarkRunError::Setup { path: path(), what: "open subdirectory", source: last_err() });
                    }
                    // SAFETY: fd was just opened and is owned here only.
                    self.sub_fds.push(unsafe { OwnedFd::from_raw_fd(fd) });
                }
            }
        }
        Ok(())
    }

    /// The directory descriptor of `dir` and the name of file `id` in it
    /// (NUL-terminated in `self.name`).
    #[inline]
    fn locate(&mut self, dir: u64, id: u64) -> RawFd {
        let mut pos = 0;
        let fd = if self.subs == 0 {
            self.locs[dir as usize].fd.as_raw_fd()
        } else if !self.sub_fds.is_empty() {
            self.sub_fds[dir as usize].as_raw_fd()
        } else {
            let k = dir % self.subs;
            self.name[0] = b's';
            pos = put_u64(&mut self.name, 1, k);
            self.name[pos] = b'/';
            pos += 1;
            self.locs[(dir / self.subs) as usize].fd.as_raw_fd()
        };
        let end = put_u64(&mut self.name, pos, id);
        self.name[end] = 0;
        fd
    }

    /// The path of a file, for error messages only.
    fn path_of(&self, dir: u64, id: u64) -> PathBuf {
        match dir.checked_div(self.subs) {
            None => self.locs[dir as usize].path.join(id.to_string()),
            Some(li) => self.locs[li as usize].path.join(format!("s{}", dir % self.subs)).join(id.to_string()),
        }
    }

    fn stamp(&mut self, i: usize) {
        self.d.t_ns[i] = self.base.elapsed().as_nanos() as u64;
        self.d.t_unix[i] = now_unix();
    }

    fn body(&mut self, stop: &AtomicBool, hook: &mut dyn FnMut(Phase)) -> Result<(), PostmarkRunError> {
        self.stamp(0);
        for _ in 0..self.plan.number {
            if stop.load(Ordering::Relaxed) {
                self.stopped = true;
                break;
            }
            self.create()?;
            self.d.created_alone += 1;
        }
        self.stamp(1);
        hook(Phase::PoolCreated);
        let (br, bc) = (self.plan.bias_read, self.plan.bias_create);
        for t in 0..self.plan.transactions {
            if stop.load(Ordering::Relaxed) {
                self.stopped = true;
                break;
            }
            if self.live.is_empty() {
                return Err(PostmarkRunError::OutOfFiles { transaction: t + 1 });
            }
            if br != -1 {
                let i = self.rng.below(self.live.len() as u64) as usize;
                if (self.rng.below(10) as i64) < i64::from(br) {
                    self.read(i)?;
                } else {
                    self.append(i)?;
                }
            }
            if bc != -1 {
                if (self.rng.below(10) as i64) < i64::from(bc) {
                    // Postmark's table is full: the create does nothing.
                    if self.live.len() < self.cap {
                        self.create()?;
                        self.d.created_mixed += 1;
                    }
                } else {
                    let i = self.rng.below(self.live.len() as u64) as usize;
                    self.delete(i)?;
                    self.d.deleted_mixed += 1;
                }
            }
            self.d.transactions_done += 1;
            if t & 4095 == 4095 {
                hook(Phase::Transactions(t + 1));
            }
        }
        self.stamp(2);
        hook(Phase::TransactionsDone);
        while let Some(last) = self.live.len().checked_sub(1) {
            self.delete(last)?;
            self.d.deleted_alone += 1;
        }
        self.stamp(3);
        Ok(())
    }

    /// Create one file and enter it in the table.
    fn create(&mut self) -> Result<(), PostmarkRunError> {
        let r = self.rng.below(*self.cum.last().unwrap_or(&1));
        let li = self.cum.iter().position(|c| r < *c).unwrap_or(0);
        let k = if self.subs > 0 { self.rng.below(self.subs) } else { 0 };
        let (lo, hi) = (self.plan.size_low, self.plan.size_high);
        let size = lo + self.rng.below(hi.saturating_sub(lo));
        let id = self.next_id;
        self.next_id += 1;
        let dir = li as u64 * self.subs.max(1) + k;
        let dfd = self.locate(dir, id);
        let buffered = self.plan.buffering.then_some(self.locs[li].blksize);
        let (flags, mode) = if buffered.is_some() { (libc::O_WRONLY, 0o666) } else { (libc::O_RDWR, 0o644) };
        let t = Instant::now();
        // SAFETY: name is NUL-terminated; the result is checked.
        let fd = unsafe {
            libc::openat(dfd, self.name.as_ptr().cast(), flags | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC, mode as libc::c_uint)
        };
        if fd < 0 {
            let e = last_err();
            let path = self.path_of(dir, id);
            return Err(if e.kind() == io::ErrorKind::AlreadyExists {
                PostmarkRunError::Exists { path }
            } else {
                PostmarkRunError::Io { op: "create", path, source: e }
            });
        }
        let w = write_stream(fd, &self.content, self.period, size, self.plan.write_block.max(1), buffered);
        // SAFETY: fd is open and closed once.
        let c = unsafe { libc::close(fd) };
        let lat = t.elapsed().as_nanos() as u64;
        let res = w.and_then(|_| if c == 0 { Ok(()) } else { Err(last_err()) });
        if let Err(e) = res {
            // The file is ours (O_EXCL): remove it before reporting.
            let dfd = self.locate(dir, id);
            // SAFETY: name is NUL-terminated.
            unsafe { libc::unlinkat(dfd, self.name.as_ptr().cast(), 0) };
            return Err(PostmarkRunError::Io { op: "create", path: self.path_of(dir, id), source: e });
        }
        self.live.push(FileRec { id, size, dir });
        let o = &mut self.ops[CREATE];
        o.ops += 1;
        o.bytes += size;
        o.lat.record(lat);
        self.d.bytes_written += size;
        Ok(())
    }

    fn read(&mut self, i: usize) -> Result<(), PostmarkRunError> {
        let f = self.live[i];
        let dfd = self.locate(f.dir, f.id);
        let buffered = self.plan.buffering.then_some(self.locs[self.loc_of(f.dir)].blksize);
        let t = Instant::now();
        // SAFETY: name is NUL-terminated; the result is checked.
        let fd = unsafe { libc::openat(dfd, self.name.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(PostmarkRunError::Io { op: "read", path: self.path_of(f.dir, f.id), source: last_err() });
        }
        let r = read_stream(fd, &mut self.scratch, f.size, self.plan.read_block.max(1), buffered);
        // SAFETY: fd is open and closed once.
        unsafe { libc::close(fd) };
        let lat = t.elapsed().as_nanos() as u64;
        let n = r.map_err(|e| PostmarkRunError::Io { op: "read", path: self.path_of(f.dir, f.id), source: e })?;
        let o = &mut self.ops[READ];
        o.ops += 1;
        o.bytes += n;
        o.lat.record(lat);
        self.d.read += 1;
        self.d.bytes_read += n;
        Ok(())
    }

    fn append(&mut self, i: usize) -> Result<(), PostmarkRunError> {
        let f = self.live[i];
        let high = self.plan.size_high;
        if f.size >= high {
            return Ok(());
        }
        let n = self.rng.below(high - f.size) + 1;
        let dfd = self.locate(f.dir, f.id);
        let buffered = self.plan.buffering.then_some(self.locs[self.loc_of(f.dir)].blksize);
        let flags = if buffered.is_some() { libc::O_WRONLY } else { libc::O_RDWR };
        let t = Instant::now();
        // SAFETY: name is NUL-terminated; the result is checked.
        let fd = unsafe { libc::openat(dfd, self.name.as_ptr().cast(), flags | libc::O_APPEND | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(PostmarkRunError::Io { op: "append", path: self.path_of(f.dir, f.id), source: last_err() });
        }
        let w = write_stream(fd, &self.content, self.period, n, self.plan.write_block.max(1), buffered);
        // SAFETY: fd is open and closed once.
        let c = unsafe { libc::close(fd) };
        let lat = t.elapsed().as_nanos() as u64;
        w.and_then(|_| if c == 0 { Ok(()) } else { Err(last_err()) }).map_err(|e| PostmarkRunError::Io {
            op: "append",
            path: self.path_of(f.dir, f.id),
            source: e,
        })?;
        self.live[i].size += n;
        let o = &mut self.ops[APPEND];
        o.ops += 1;
        o.bytes += n;
        o.lat.record(lat);
        self.d.appended += 1;
        self.d.bytes_written += n;
        Ok(())
    }

    fn delete(&mut self, i: usize) -> Result<(), PostmarkRunError> {
        let f = self.live[i];
        let dfd = self.locate(f.dir, f.id);
        let t = Instant::now();
        // SAFETY: name is NUL-terminated.
        let rc = unsafe { libc::unlinkat(dfd, self.name.as_ptr().cast(), 0) };
        let lat = t.elapsed().as_nanos() as u64;
        if rc != 0 {
            let e = last_err();
            // Already gone is gone: it no longer needs removing.
            if e.kind() == io::ErrorKind::NotFound {
                self.live.swap_remove(i);
            }
            return Err(PostmarkRunError::Io { op: "delete", path: self.path_of(f.dir, f.id), source: e });
        }
        self.live.swap_remove(i);
        let o = &mut self.ops[DELETE];
        o.ops += 1;
        o.lat.record(lat);
        Ok(())
    }

    #[inline]
    fn loc_of(&self, dir: u64) -> usize {
        (dir / self.subs.max(1)) as usize
    }

    /// Remove every file still in the table and the subdirectories this run
    /// made. Untimed; keeps going past failures and reports the first.
    fn cleanup(&mut self) -> Result<(), PostmarkRunError> {
        let mut first: Option<(PathBuf, io::Error)> = None;
        let mut remaining = 0u64;
        while let Some(f) = self.live.pop() {
            let dfd = self.locate(f.dir, f.id);
            // SAFETY: name is NUL-terminated.
            if unsafe { libc::unlinkat(dfd, self.name.as_ptr().cast(), 0) } != 0 {
                let e = last_err();
                if e.kind() != io::ErrorKind::NotFound {
                    remaining += 1;
                    first.get_or_insert((self.path_of(f.dir, f.id), e));
                }
            }
        }
        self.sub_fds.clear();
        while let Some((li, k)) = self.made_dirs.pop() {
            self.name[0] = b's';
            let end = put_u64(&mut self.name, 1, k);
            self.name[end] = 0;
            let loc = &self.locs[li as usize];
            // SAFETY: name is NUL-terminated.
            if unsafe { libc::unlinkat(loc.fd.as_raw_fd(), self.name.as_ptr().cast(), libc::AT_REMOVEDIR) } != 0 {
                let e = last_err();
                if e.kind() != io::ErrorKind::NotFound {
                    remaining += 1;
                    first.get_or_insert((loc.path.join(format!("s{k}")), e));
                }
            }
        }
        if first.is_none() {
            for loc in &mut self.locs {
                if let Some(t) = loc.own.take() {
                    if let Err(e) = t.done() {
                        remaining += 1;
                        first.get_or_insert((loc.path.clone(), io::Error::other(e)));
                    }
                }
            }
        }
        match first {
            None => Ok(()),
            Some((path, source)) => Err(PostmarkRunError::Cleanup { path, source, remaining, after: None }),
        }
    }

    fn outcome(&self) -> PostmarkOutcome {
        PostmarkOutcome { ops: self.ops.to_vec(), details: self.d.clone(), elapsed_ns: self.d.span_ns(0, 3), partial: self.stopped }
    }
}

#[cfg(test)]
mod tests;

/// The layout `run_plan`'s results take when no frontend chose one.
pub const LAYOUT: &str = "postmark";

/// The pool's files, spread over the locations by weight: number × mean
/// size (transactions then create and delete about as many as they add).
fn space_needs(plan: &PostmarkPlan) -> Vec<Need> {
    let mean = (plan.size_low + plan.size_high.max(plan.size_low + 1) - 1) as f64 / 2.0;
    let total = plan.number as f64 * mean;
    let weights: u64 = plan.locations.iter().map(|l| l.weight as u64).sum::<u64>().max(1);
    plan.locations.iter().map(|l| Need::new_in(&l.path, (total * l.weight as f64 / weights as f64) as u64)).collect()
}

/// Two runs in one location would trip over each other's files (a name
/// one created is "already exists" to the other): each location directory
/// is locked, as itself, for the run. A location that cannot be examined is
/// left to the run's setup to report.
fn lock_locations(plan: &PostmarkPlan) -> Result<Vec<Lock>, RunError> {
    let mut seen = Vec::new();
    let mut locks = Vec::new();
    for l in &plan.locations {
        let Ok(m) = std::fs::metadata(&l.path) else { continue };
        // Two spellings of one directory are one lock (a second flock of it
        // from this process would conflict with the first).
        if seen.contains(&(m.dev(), m.ino())) {
            continue;
        }
        seen.push((m.dev(), m.ino()));
        match lock_path(&l.path) {
            Ok(k) => locks.push(k),
            Err(LockError::InUse(u)) => return Err(RunError::InUse(format!("location {u}; give this run another location"))),
            Err(LockError::Other(m)) => return Err(RunError::Workload(m)),
        }
    }
    Ok(locks)
}

/// Run the plan through the one-group lifecycle: inside a measured window
/// with its CPU, process I/O and device counters, progress on the meter, and
/// the result in the common envelope (the Postmark figures in `details`).
pub(crate) fn run_plan(
    plan: &PostmarkPlan,
    opts: &RunOptions,
    layout: &str,
    before_measure: &mut dyn FnMut(&[PathBuf]),
) -> Result<RunResult, RunError> {
    lifecycle::drive(Postmark { plan, locks: Vec::new() }, opts, layout, before_measure)
}

/// A Postmark run's stages. Postmark builds and removes its files inside
/// the measured run: nothing exists before it, so the cache scenario gets
/// no file.
struct Postmark<'a> {
    plan: &'a PostmarkPlan,
    locks: Vec<Lock>,
}

impl OneGroup for Postmark<'_> {
    type Ran = PostmarkOutcome;

    fn label(&self) -> String {
        "postmark".into()
    }

    fn places(&self) -> Vec<PathBuf> {
        self.plan.locations.iter().map(|l| l.path.clone()).collect()
    }

    fn expected(&self) -> Expected {
        Expected { ops: self.plan.transactions, ..Default::default() }
    }

    fn check(&mut self, opts: &RunOptions) -> Result<(), RunError> {
        Ok(crate::environment::space::check(&space_needs(self.plan), opts.allow_fill, "lower `set number` or `set size`")?)
    }

    fn claim(&mut self, _opts: &RunOptions) -> Result<(), RunError> {
        self.locks = lock_locations(self.plan)?;
        Ok(())
    }

    fn run(&mut self, opts: &RunOptions, meter: &Arc<Meter>, _warnings: &mut Warnings) -> Result<PostmarkOutcome, RunError> {
        let outcome = run_with_hook(self.plan, &opts.stop, &mut |p| {
            if let Phase::Transactions(n) = p {
                meter.ops.store(n, Ordering::Relaxed);
            }
        });
        Ok(outcome.map_err(|e| e.to_string())?)
    }

    fn tear_down(&mut self, _opts: &RunOptions, _ran: Option<&PostmarkOutcome>) -> Result<(), RunError> {
        self.locks.clear();
        Ok(())
    }

    fn finish(self, outcome: PostmarkOutcome, group: &mut GroupResult, _: &RunOptions, _: &mut Warnings) -> Result<Finished, RunError> {
        let plan = self.plan;
        // Postmark's own span (t0..t3), not the window's.
        let elapsed_ns = outcome.elapsed_ns;
        group.elapsed_ns = elapsed_ns;
        let d = &outcome.details;
        let secs = |a, b| d.span_ns(a, b) as f64 / 1e9;
        let per_s = |n: u64, s: f64| if s > 0.0 { n as f64 / s } else { 0.0 };
        let total_s = secs(0, 3);
        let headline = vec![
            Headline::new("transactions_s", "tx/s", per_s(d.transactions_done, secs(1, 2))),
            Headline::new("created_s", "files/s", per_s(d.created(), total_s)),
            Headline::new("deleted_s", "files/s", per_s(d.deleted(), total_s)),
            Headline::new("read_MiB_s", "MiB/s", per_s(d.bytes_read, total_s) / 1048576.0),
            Headline::new("write_MiB_s", "MiB/s", per_s(d.bytes_written, total_s) / 1048576.0),
        ];
        let job = JobResult {
            name: "postmark".into(),
            group: 0,
            threads: 1,
            engine: if plan.buffering { "stdio".into() } else { "sync".into() },
            elapsed_ns,
            ops: outcome.ops.to_vec(),
            timeline: Default::default(),
            options: Default::default(),
            resolved: serde_json::to_value(plan).unwrap_or_default(),
            partial: outcome.partial,
            error: None,
            headline,
            details: Some(serde_json::to_value(d).map_err(|e| e.to_string())?),
        };
        Ok(Finished { jobs: vec![job], partial: outcome.partial })
    }
}
