//! One pass of one IOzone test over one file: IOzone's access pattern for
//! the column, timed as IOzone 3.471 times it (traced with gdb: from after
//! the open, the fsync that follows it and, for read and reread, a read of
//! the first record, to after the last I/O, with the fsync and the close
//! inside only when `-e`/`-c` ask; a written file is fsynced after the span
//! unless `-c`).
//!
//! The loop is generic over a `Recorder`, which production instantiates with
//! `NoRecord` (every call compiles to nothing) and the tests with one that
//! keeps each (op, offset, length), fsync and close. Per operation there are
//! two clock reads, one histogram update and one or two relaxed atomic
//! loads (Ctrl-C, the stonewall): no allocation, lock, formatting or
//! syscall beyond the I/O itself (and the lseek IOzone issues with it).

use crate::environment::cleanup::Token;
use crate::measure::hist::LatencyHist;
use crate::model::iozone::Column;
use crate::runner::buffers::Buffers;
use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The call that moved the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    Read,
    Write,
    Fread,
    Fwrite,
    Pread,
    Pwrite,
    Preadv,
    Pwritev,
}

/// What a pass reports besides its figures; everything is a no-op unless a
/// test wants to look.
pub(crate) trait Recorder {
    #[inline(always)]
    fn io(&mut self, _op: Op, _offset: u64, _len: u64) {}
    /// `timed`: inside the timed span.
    #[inline(always)]
    fn fsync(&mut self, _timed: bool) {}
    #[inline(always)]
    fn close(&mut self, _timed: bool) {}
}

/// Production: records nothing.
pub(crate) struct NoRecord;
impl Recorder for NoRecord {}

/// Records per call (IOzone's PVECMAX) of pwritev/preadv.
pub(crate) const PVECMAX: u64 = 16;

/// Everything one pass needs.
pub(crate) struct PassCtx<'a> {
    pub path: &'a Path,
    pub file_bytes: u64,
    pub rec: u64,
    pub direct: bool,
    pub osync: bool,
    pub fsync_in_timing: bool,
    pub close_in_timing: bool,
    /// Test 5's stride, in records.
    pub stride: u64,
    /// The record order of random passes; the group order (groups of
    /// PVECMAX records) of vector passes; the mixed workload's order.
    pub order: &'a [u64],
    /// Ctrl-C: stop, the figures cover what ran.
    pub stop: &'a AtomicBool,
    /// Throughput mode's stonewall: set by the first child to finish.
    pub wall: Option<&'a AtomicBool>,
    /// The mixed workload: this child reads (else writes); random order
    /// unless `mixed_sequential`.
    pub mixed_reads: bool,
    pub mixed_sequential: bool,
    /// Throughput mode (`-t`): its children neither fsync at open nor read
    /// ahead of the clock, unlike the single-process tests.
    pub throughput: bool,
    /// The undo step that removes the file: a pass that creates it gives
    /// it the new file's identity, before the clock starts (a recreated
    /// file is another inode, and `fsbench cleanup` removes only the one
    /// recorded).
    pub owner: Option<&'a Token>,
}

impl PassCtx<'_> {
    pub(crate) fn records(&self) -> u64 {
        self.file_bytes / self.rec.max(1)
    }
}

/// What one pass measured.
#[derive(Clone, Debug)]
pub(crate) struct PassOut {
    pub start: Instant,
    /// End of the timed span (or the moment the stonewall was seen).
    pub end: Instant,
    pub bytes: u64,
    /// Calls that moved data (records; vectors for pwritev/preadv).
    pub ops: u64,
    pub lat: LatencyHist,
    /// This thread's CPU seconds over the timed span.
    pub cpu_s: f64,
    /// Ctrl-C ended it early.
    pub stopped: bool,
}

impl PassOut {
    pub(crate) fn elapsed_ns(&self) -> u64 {
        self.end.duration_since(self.start).as_nanos() as u64
    }
}

/// Where the next record is and which call moves it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Walk {
    /// read/write at the file position.
    Seq,
    /// Read, lseek −2·reclen from the current position.
    Backward,
    /// lseek to the record, then read/write.
    Random,
    /// Write, lseek to 0.
    RecordRewrite,
    /// lseek to the stride position, read.
    Stride,
    /// pread/pwrite at the record.
    Positional,
    /// preadv/pwritev of a group of up to PVECMAX records.
    Vector,
}

/// How the file is opened for a pass (always before the clock starts, as
/// IOzone 3.471 does: traced, its timer starts after the open and the
/// fsync that follows it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Open {
    /// unlink, then O_CREAT|O_TRUNC|O_WRONLY: the writes allocate anew.
    Recreate,
    /// O_CREAT|O_TRUNC|O_WRONLY without the unlink (vector writes).
    Create,
    /// O_CREAT|O_WRONLY: the existing file is overwritten in place.
    Write,
    Read,
}

/// A column's pattern: (open, walk, writes).
fn shape(col: Column, ctx: &PassCtx) -> (Open, Walk, bool) {
    use Column::*;
    match col {
        Write => (Open::Recreate, Walk::Seq, true),
        Rewrite => (Open::Write, Walk::Seq, true),
        Read | Reread => (Open::Read, Walk::Seq, false),
        RandomRead => (Open::Read, Walk::Random, false),
        RandomWrite => (Open::Write, Walk::Random, true),
        BkwdRead => (Open::Read, Walk::Backward, false),
        RecordRewrite => (Open::Write, Walk::RecordRewrite, true),
        StrideRead => (Open::Read, Walk::Stride, false),
        // IOzone's pwrite opens the write test's file without truncating it.
        Pwrite => (Open::Write, Walk::Positional, true),
        RePwrite => (Open::Write, Walk::Positional, true),
        Pread | RePread => (Open::Read, Walk::Positional, false),
        Pwritev => (Open::Create, Walk::Vector, true),
        RePwritev => (Open::Write, Walk::Vector, true),
        Preadv | RePreadv => (Open::Read, Walk::Vector, false),
        Mixed => {
            let walk = if ctx.mixed_sequential { Walk::Seq } else { Walk::Random };
            if ctx.mixed_reads {
                (Open::Read, walk, false)
            } else {
                (Open::Write, walk, true)
            }
        }
        // The stdio columns go through `stdio_pass`.
        Fwrite | Frewrite | Fread | Freread => (Open::Read, Walk::Seq, false),
    }
}

pub(crate) fn is_stdio(col: Column) -> bool {
    matches!(col, Column::Fwrite | Column::Frewrite | Column::Fread | Column::Freread)
}

/// Whether a stonewalled child goes on (untimed) to the end of the file:
/// the passes that make the file, so the tests after them find it whole.
fn finishes_after_wall(col: Column) -> bool {
    matches!(col, Column::Write | Column::Pwrite | Column::Pwritev | Column::Fwrite)
}

/// Run one pass. `buf` is at least one record, page-aligned.
pub(crate) fn run_pass<R: Recorder>(ctx: &PassCtx, col: Column, buf: &mut Buffers, rec: &mut R) -> Result<PassOut, String> {
    let stdio = is_stdio(col);
    if buf.len < ctx.rec as usize || buf.slots < 1 + stdio as usize {
        return Err(format!("{}: the I/O buffers are not {} record(s)", ctx.path.display(), 1 + stdio as usize));
    }
    if stdio {
        stdio_pass(ctx, col, buf, rec)
    } else {
        fd_pass(ctx, col, buf, rec)
    }
}

pub(crate) fn cpath(p: &Path) -> Result<CString, String> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| format!("{}: NUL byte in the path", p.display()))
}

fn errno() -> io::Error {
    io::Error::last_os_error()
}

fn extra_flags(ctx: &PassCtx, writes: bool) -> libc::c_int {
    let mut f = libc::O_CLOEXEC;
    if ctx.direct {
        f |= libc::O_DIRECT;
    }
    if ctx.osync && writes {
        f |= libc::O_SYNC;
    }
    f
}

/// Give the run's undo step the identity of the file just opened with
/// O_CREAT (untimed: the clock starts later; the record is rewritten only
/// when the file is a new one).
fn note_created(ctx: &PassCtx, fd: libc::c_int) {
    if let Some(t) = ctx.owner {
        t.created_fd(fd);
    }
}

/// Remove the file before a pass that recreates it (IOzone times the
/// allocation); gone already is fine.
fn unlink(path: &CString, shown: &Path) -> Result<(), String> {
    // SAFETY: path is NUL-terminated.
    if unsafe { libc::unlink(path.as_ptr()) } != 0 {
        let e = errno();
        if e.kind() != io::ErrorKind::NotFound {
            return Err(format!("unlink {}: {e}", shown.display()));
        }
    }
    Ok(())
}

/// Stops the loop on Ctrl-C, and notes when the stonewall went up: the
/// figures stop there (a pass that makes the file goes on untimed).
struct Gate<'a> {
    stop: &'a AtomicBool,
    wall: Option<&'a AtomicBool>,
    go_on: bool,
    /// (time, bytes, ops) when the stonewall was seen.
    snap: Option<(Instant, u64, u64)>,
    stopped: bool,
}

impl<'a> Gate<'a> {
    fn new(ctx: &'a PassCtx, col: Column) -> Gate<'a> {
        Gate { stop: ctx.stop, wall: ctx.wall, go_on: finishes_after_wall(col), snap: None, stopped: false }
    }

    /// True: leave the loop now.
    #[inline(always)]
    fn halt(&mut self, bytes: u64, ops: u64) -> bool {
        if self.stop.load(Ordering::Relaxed) {
            self.stopped = true;
            return true;
        }
        if self.snap.is_none() {
            if let Some(w) = self.wall {
                if w.load(Ordering::Relaxed) {
                    self.snap = Some((Instant::now(), bytes, ops));
                    return !self.go_on;
                }
            }
        }
        false
    }

    #[inline(always)]
    fn counting(&self) -> bool {
        self.snap.is_none()
    }

    fn finish(self, (start, cpu0): (Instant, f64), end: Instant, bytes: u64, ops: u64, lat: Latencies) -> PassOut {
        let cpu_s = (thread_cpu_s() - cpu0).max(0.0);
        let (end, bytes, ops) = self.snap.unwrap_or((end, bytes, ops));
        PassOut { start, end, bytes, ops, lat: lat.into_hist(), cpu_s, stopped: self.stopped }
    }
}

/// Latencies kept in the pass as raw values, in a per-thread array whose
/// pages were faulted in once, and put into a histogram after the clock
/// stops. Recording straight into a fresh histogram faulted in a page of
/// its bucket array at each new magnitude, inside the span: a few
/// microseconds on passes of a few microseconds (64 kB files ran at 0.6×
/// IOzone's rate). A pass longer than the array records the rest into the
/// histogram directly, where those faults are lost in its length.
struct Latencies {
    raw: Vec<u64>,
    k: usize,
    /// Made only when the raw array is full, or after the clock (growable,
    /// sized to the values).
    hist: Option<LatencyHist>,
}

/// Values kept raw per pass: 512 KiB per thread.
const RAW_LATENCIES: usize = 1 << 16;

thread_local! {
    /// Lent to one pass at a time and given back at its end (a pass that
    /// fails drops it; the next one makes another).
    static RAW: std::cell::Cell<Vec<u64>> = const { std::cell::Cell::new(Vec::new()) };
}

impl Latencies {
    fn new() -> Latencies {
        let mut raw = RAW.with(|r| r.take());
        if raw.len() < RAW_LATENCIES {
            // Written, not just reserved, so its pages are faulted in now.
            raw = vec![1u64; RAW_LATENCIES];
        }
        Latencies { raw, k: 0, hist: None }
    }

    #[inline(always)]
    fn record(&mut self, ns: u64) {
        if let Some(slot) = self.raw.get_mut(self.k) {
            *slot = ns;
            self.k += 1;
        } else {
            // Full range: a pass this long records in the clock's span.
            self.hist.get_or_insert_with(LatencyHist::new).record(ns);
        }
    }

    fn into_hist(self) -> LatencyHist {
        let mut hist = self.hist.unwrap_or_default();
        for &v in &self.raw[..self.k] {
            hist.record(v);
        }
        RAW.with(|r| r.set(self.raw));
        hist
    }
}

/// This thread's CPU time (user + system) in seconds, to the nanosecond:
/// getrusage's per-thread figures move in scheduler ticks, which reads 0
/// for a pass of a few microseconds.
pub(crate) fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec, which `ts` is.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Test 5's walk as IOzone 3.471 makes it (traced: the sequences are in
/// tests/data/iozone/stride-walks.txt): after reading record p, the next is
/// p + stride, unless p + 1 + stride ≥ records − 1, when the k-th such wrap
/// goes to record k. So records near the end are skipped and a few early
/// ones read twice (128 records at stride 17: 2 never read). A stride not
/// below the record count reads record 0 every time (16 records at the
/// default 17: one cached record, 16 times).
pub(crate) struct StrideWalk {
    n: u64,
    stride: u64,
    pos: u64,
    wraps: u64,
}

impl StrideWalk {
    pub(crate) fn new(n: u64, stride: u64) -> StrideWalk {
        StrideWalk { n, stride: stride.max(1), pos: 0, wraps: 0 }
    }

    /// The record to read now; advances.
    #[inline]
    pub(crate) fn next_record(&mut self) -> u64 {
        let here = self.pos;
        if self.stride >= self.n {
            return 0;
        }
        if here + 1 + self.stride >= self.n - 1 {
            self.wraps += 1;
            self.pos = self.wraps % self.n;
        } else {
            self.pos += self.stride;
        }
        here
    }
}

/// An open descriptor closed exactly once (on every error path too).
struct Fd(libc::c_int);

impl Fd {
    fn close(mut self) -> io::Result<()> {
        let fd = std::mem::replace(&mut self.0, -1);
        // SAFETY: fd is open and, taken out of self, closed only here.
        if unsafe { libc::close(fd) } == 0 {
            Ok(())
        } else {
            Err(errno())
        }
    }
}

impl Drop for Fd {
    fn drop(&mut self) {
        if self.0 >= 0 {
            // SAFETY: fd is open and closed once.
            unsafe { libc::close(self.0) };
        }
    }
}

fn io_err(what: &str, ctx: &PassCtx, off: u64, e: io::Error) -> String {
    format!("{what} {} at offset {off}: {e}", ctx.path.display())
}

fn seek(fd: &Fd, off: i64, whence: libc::c_int, ctx: &PassCtx) -> Result<(), String> {
    // SAFETY: lseek on an open descriptor.
    if unsafe { libc::lseek(fd.0, off, whence) } < 0 {
        return Err(io_err("lseek", ctx, off as u64, errno()));
    }
    Ok(())
}

/// One read(2) or write(2) of `r` bytes at the descriptor's position.
#[inline(always)]
fn transfer(fd: &Fd, p: *mut u8, r: u64, writes: bool) -> isize {
    // SAFETY: p points at a buffer of at least r bytes (checked in
    // run_pass) and fd is open.
    unsafe {
        if writes {
            libc::write(fd.0, p.cast(), r as usize)
        } else {
            libc::read(fd.0, p.cast(), r as usize)
        }
    }
}

/// Check that a call moved `want` bytes.
#[inline]
fn moved(n: isize, want: u64, what: &str, ctx: &PassCtx, off: u64) -> Result<(), String> {
    if n < 0 {
        return Err(io_err(what, ctx, off, errno()));
    }
    if n as u64 != want {
        return Err(format!("short {what} of {} at offset {off}: {n} of {want} bytes", ctx.path.display()));
    }
    Ok(())
}

fn fd_pass<R: Recorder>(ctx: &PassCtx, col: Column, buf: &mut Buffers, rec: &mut R) -> Result<PassOut, String> {
    let (open, walk, writes) = shape(col, ctx);
    let c = cpath(ctx.path)?;
    if open == Open::Recreate {
        unlink(&c, ctx.path)?;
    }
    let flags = extra_flags(ctx, writes)
        | match open {
            Open::Recreate | Open::Create => libc::O_CREAT | libc::O_TRUNC | libc::O_WRONLY,
            Open::Write => libc::O_CREAT | libc::O_WRONLY,
            Open::Read => libc::O_RDONLY,
        };
    let n = ctx.records();
    let r = ctx.rec;
    // SAFETY: c is NUL-terminated; the result is checked.
    let fd = Fd(unsafe { libc::open(c.as_ptr(), flags, 0o644 as libc::c_uint) });
    if fd.0 < 0 {
        return Err(format!("open {}: {}", ctx.path.display(), errno()));
    }
    if flags & libc::O_CREAT != 0 {
        note_created(ctx, fd.0);
    }
    let p = buf.slot(0);
    if !ctx.throughput {
        if fsyncs_at_open(col) {
            untimed_fsync(fd.0, ctx, rec)?;
        }
        // IOzone's read and reread read the first record and seek back
        // before starting the clock, so record 0 is cached (and the buffer
        // warm) when the timed walk begins.
        if matches!(col, Column::Read | Column::Reread) && n > 0 {
            moved(transfer(&fd, p, r, false), r, "read", ctx, 0)?;
            rec.io(Op::Read, 0, r);
            seek(&fd, 0, libc::SEEK_SET, ctx)?;
        }
    }
    let mut lat = Latencies::new();
    let cpu0 = thread_cpu_s();
    let start = Instant::now();
    let calls = if walk == Walk::Vector { n.div_ceil(PVECMAX) } else { n };
    if walk == Walk::Backward && n > 0 {
        seek(&fd, ((n - 1) * r) as i64, libc::SEEK_SET, ctx)?;
    }
    let mut stride = StrideWalk::new(n, ctx.stride);
    // One iovec per record of a vector call, all over the one buffer: the
    // kernel copies them in turn (reads land in it one after another).
    let iov = [libc::iovec { iov_base: p.cast(), iov_len: r as usize }; PVECMAX as usize];
    let mut gate = Gate::new(ctx, col);
    let (mut bytes, mut ops) = (0u64, 0u64);
    // One clock read per record: each record's latency runs from the end of
    // the one before (the loop's own few nanoseconds included), so the span
    // holds no more clock reads than IOzone's.
    let mut t = start;
    for i in 0..calls {
        if gate.halt(bytes, ops) {
            break;
        }
        let (off, len) = match walk {
            Walk::Seq => {
                let off = i * r;
                moved(transfer(&fd, p, r, writes), r, if writes { "write" } else { "read" }, ctx, off)?;
                (off, r)
            }
            Walk::Backward => {
                let off = (n - 1 - i) * r;
                moved(transfer(&fd, p, r, false), r, "read", ctx, off)?;
                // The last record read is record 0: no seek below it.
                if i + 1 < n {
                    seek(&fd, -2 * r as i64, libc::SEEK_CUR, ctx)?;
                }
                (off, r)
            }
            Walk::Random | Walk::Stride => {
                let recno = if walk == Walk::Stride { stride.next_record() } else { ctx.order.get(i as usize).copied().unwrap_or(i) };
                let off = recno * r;
                seek(&fd, off as i64, libc::SEEK_SET, ctx)?;
                moved(transfer(&fd, p, r, writes), r, if writes { "write" } else { "read" }, ctx, off)?;
                (off, r)
            }
            Walk::RecordRewrite => {
                moved(transfer(&fd, p, r, true), r, "write", ctx, 0)?;
                seek(&fd, 0, libc::SEEK_SET, ctx)?;
                (0, r)
            }
            Walk::Positional => {
                let off = i * r;
                // SAFETY: as above; off is within the file's size.
                let k = unsafe {
                    if writes {
                        libc::pwrite(fd.0, p.cast(), r as usize, off as libc::off_t)
                    } else {
                        libc::pread(fd.0, p.cast(), r as usize, off as libc::off_t)
                    }
                };
                moved(k, r, if writes { "pwrite" } else { "pread" }, ctx, off)?;
                (off, r)
            }
            Walk::Vector => {
                let group = ctx.order.get(i as usize).copied().unwrap_or(i);
                let first = group * PVECMAX;
                let count = PVECMAX.min(n - first.min(n));
                let off = first * r;
                // SAFETY: iov holds PVECMAX valid iovecs over the buffer; count ≤ PVECMAX.
                let k = unsafe {
                    if writes {
                        libc::pwritev(fd.0, iov.as_ptr(), count as libc::c_int, off as libc::off_t)
                    } else {
                        libc::preadv(fd.0, iov.as_ptr(), count as libc::c_int, off as libc::off_t)
                    }
                };
                moved(k, count * r, if writes { "pwritev" } else { "preadv" }, ctx, off)?;
                (off, count * r)
            }
        };
        let now = Instant::now();
        let dt = now.duration_since(t).as_nanos() as u64;
        t = now;
        rec.io(op_of(walk, writes), off, len);
        if gate.counting() {
            lat.record(dt);
            bytes += len;
            ops += 1;
        }
    }
    // The last record's clock read ends the span.
    let mut end = t;
    if writes && ctx.fsync_in_timing {
        // SAFETY: fsync on an open descriptor.
        if unsafe { libc::fsync(fd.0) } != 0 {
            return Err(format!("fsync {}: {}", ctx.path.display(), errno()));
        }
        rec.fsync(true);
        end = Instant::now();
    }
    if writes && !ctx.close_in_timing {
        untimed_fsync(fd.0, ctx, rec)?;
    }
    fd.close().map_err(|e| format!("close {}: {e}", ctx.path.display()))?;
    rec.close(ctx.close_in_timing);
    if ctx.close_in_timing {
        end = Instant::now();
    }
    Ok(gate.finish((start, cpu0), end, bytes, ops, lat))
}

/// The passes IOzone (single-process mode) opens with an fsync, untimed:
/// all but random read/write and pread (traced in 3.471; the vector tests
/// do not run there, so they follow pread).
fn fsyncs_at_open(col: Column) -> bool {
    use Column::*;
    !matches!(col, RandomRead | RandomWrite | Pread | RePread | Pwritev | RePwritev | Preadv | RePreadv | Mixed)
}

/// IOzone fsyncs every written file before closing it, outside the timed
/// span unless `-e` (then once inside and once more after): the next pass
/// starts with nothing dirty. With `-c` it closes at once, inside the span.
fn untimed_fsync<R: Recorder>(fd: libc::c_int, ctx: &PassCtx, rec: &mut R) -> Result<(), String> {
    // SAFETY: fsync on an open descriptor.
    if unsafe { libc::fsync(fd) } != 0 {
        return Err(format!("fsync {}: {}", ctx.path.display(), errno()));
    }
    rec.fsync(false);
    Ok(())
}

fn op_of(walk: Walk, writes: bool) -> Op {
    match (walk, writes) {
        (Walk::Positional, true) => Op::Pwrite,
        (Walk::Positional, false) => Op::Pread,
        (Walk::Vector, true) => Op::Pwritev,
        (Walk::Vector, false) => Op::Preadv,
        (_, true) => Op::Write,
        (_, false) => Op::Read,
    }
}

/// A stdio stream closed exactly once.
struct Stream(*mut libc::FILE);

impl Stream {
    fn close(mut self) -> io::Result<()> {
        let f = std::mem::replace(&mut self.0, std::ptr::null_mut());
        // SAFETY: f is an open stream, taken out of self, closed only here.
        if unsafe { libc::fclose(f) } == 0 {
            Ok(())
        } else {
            Err(errno())
        }
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: an open stream, closed once.
            unsafe { libc::fclose(self.0) };
        }
    }
}

/// Tests 6 and 7: fopen ("w+" to write the file, "r+" to write it again,
/// "r" to read it), setvbuf with a full buffer of one record, N fwrite or
/// fread calls of one record. The stream is opened with open(2) + fdopen so
/// that `-I` and `-o` apply to it too.
fn stdio_pass<R: Recorder>(ctx: &PassCtx, col: Column, buf: &mut Buffers, rec: &mut R) -> Result<PassOut, String> {
    let writes = col.writes();
    // IOzone's fwrite opens "w+" only when there is no file yet; after the
    // write test (which always runs first) it opens "r+" and overwrites the
    // file in place, so fwrite measures no block allocation.
    let (flags, mode) = match col {
        Column::Fwrite if !ctx.path.exists() => (libc::O_RDWR | libc::O_CREAT | libc::O_TRUNC, c"w+"),
        Column::Fwrite | Column::Frewrite => (libc::O_RDWR, c"r+"),
        _ => (libc::O_RDONLY, c"r"),
    };
    let c = cpath(ctx.path)?;
    let n = ctx.records();
    let r = ctx.rec;
    let p = buf.slot(0);
    let mut lat = Latencies::new();
    // SAFETY: c is NUL-terminated; the result is checked.
    let fd = unsafe { libc::open(c.as_ptr(), flags | extra_flags(ctx, writes), 0o644 as libc::c_uint) };
    if fd < 0 {
        return Err(format!("open {}: {}", ctx.path.display(), errno()));
    }
    if flags & libc::O_CREAT != 0 {
        note_created(ctx, fd);
    }
    // SAFETY: fd is open; on failure it is still ours to close.
    let fp = unsafe { libc::fdopen(fd, mode.as_ptr()) };
    if fp.is_null() {
        let e = errno();
        // SAFETY: fdopen failed, so fd is still open and ours.
        unsafe { libc::close(fd) };
        return Err(format!("fdopen {}: {e}", ctx.path.display()));
    }
    let fp = Stream(fp);
    if !ctx.throughput {
        untimed_fsync(fd, ctx, rec)?;
    }
    // The stream's buffer is the cell's slot 1 (aligned, so O_DIRECT
    // reaches it). SAFETY: `buf` outlives the stream, which is closed in
    // this function (below, or by Stream's Drop on an error path).
    if unsafe { libc::setvbuf(fp.0, buf.slot(1).cast(), libc::_IOFBF, r as usize) } != 0 {
        return Err(format!("setvbuf {}: {}", ctx.path.display(), errno()));
    }
    // The clock starts once the stream is open and buffered, as IOzone's
    // does; the last record, still in the stream's buffer, is flushed after
    // it stops (unless -e).
    let cpu0 = thread_cpu_s();
    let start = Instant::now();
    let mut gate = Gate::new(ctx, col);
    let (mut bytes, mut ops) = (0u64, 0u64);
    // One clock read per record, as in `fd_pass`.
    let mut t = start;
    for i in 0..n {
        if gate.halt(bytes, ops) {
            break;
        }
        let off = i * r;
        // SAFETY: p points at r bytes; fp is open.
        let k = unsafe {
            if writes {
                libc::fwrite(p.cast(), r as usize, 1, fp.0)
            } else {
                libc::fread(p.cast(), r as usize, 1, fp.0)
            }
        };
        if k != 1 {
            let what = if writes { "fwrite" } else { "fread" };
            // SAFETY: fp is open.
            let eof = !writes && unsafe { libc::feof(fp.0) } != 0;
            return Err(if eof {
                format!("{what} {} at offset {off}: end of file", ctx.path.display())
            } else {
                io_err(what, ctx, off, errno())
            });
        }
        let now = Instant::now();
        let dt = now.duration_since(t).as_nanos() as u64;
        t = now;
        rec.io(if writes { Op::Fwrite } else { Op::Fread }, off, r);
        if gate.counting() {
            lat.record(dt);
            bytes += r;
            ops += 1;
        }
    }
    // The last record's clock read ends the span.
    let mut end = t;
    if writes && ctx.fsync_in_timing {
        // SAFETY: fp is open.
        if unsafe { libc::fflush(fp.0) } != 0 || unsafe { libc::fsync(libc::fileno(fp.0)) } != 0 {
            return Err(format!("fflush/fsync {}: {}", ctx.path.display(), errno()));
        }
        rec.fsync(true);
        end = Instant::now();
    }
    if writes && !ctx.close_in_timing {
        // SAFETY: fp is open; its descriptor is flushed after its buffer.
        if unsafe { libc::fflush(fp.0) } != 0 {
            return Err(format!("fflush {}: {}", ctx.path.display(), errno()));
        }
        // SAFETY: fp is open.
        untimed_fsync(unsafe { libc::fileno(fp.0) }, ctx, rec)?;
    }
    fp.close().map_err(|e| format!("fclose {}: {e}", ctx.path.display()))?;
    rec.close(ctx.close_in_timing);
    if ctx.close_in_timing {
        end = Instant::now();
    }
    Ok(gate.finish((start, cpu0), end, bytes, ops, lat))
}
