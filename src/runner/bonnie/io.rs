//! Bonnie++'s six IO tests on one file:
//!
//! - putc: create it (O_EXCL; O_DIRECT with `-D`) and write `-f` MiB one
//!   byte per write(2), timed per chunk of `chunk` calls;
//! - put_block: recreate it and write the whole size in chunk-size
//!   write(2)s, one byte of the buffer changed per chunk;
//! - rewrite: per chunk read(2) it, change a byte, lseek(2) back one chunk
//!   and write(2) it;
//! - getc: read `-f` MiB one byte per read(2);
//! - get_block: read the whole file in chunk-size read(2)s;
//! - seeks: `procs` seeker threads take `seeks` random tickets from a
//!   pipe, one read(2) each; a ticket is an lseek(2) to chunk (ticket mod
//!   chunks) and a read(2) of it, and every
//!   ticket divisible by 10 also changes a byte, seeks back and writes the
//!   chunk (fsync(2) after it with `-b`).
//!
//! Every test's clock starts once its file is open and stops after the
//! fsync(2) and close(2) that end it, as Bonnie++ 2.00a's does (strace: its
//! getrusage follows the open and the close), so put_block's time leaves
//! out the unlink of putc's file and the create; the seekers also unlink(2)
//! the file, so the seek test's time includes freeing it, as Bonnie++'s
//! does. A byte test's operation is its
//! chunk of one-byte calls; a block test's, one chunk; a seek's, the
//! lseek, read (and update).

use super::{Ctx, Phase, Timer};
use crate::environment::cleanup::{self, Token};
use crate::model::bonnie::Test;
use crate::runner::buffers::Buffers;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The most bytes in one file. Bonnie++ 2.00a writes one file whatever
/// the size (strace of a 4 GiB run: one file, one fsync per test); its
/// manual's 1 GiB pieces are from older versions. Kept as a bound so a
/// size past it would still map chunks to pieces.
const FILE_MAX: u64 = 1 << 62;

fn os_err(what: &str, path: &std::path::Path) -> String {
    format!("{what} {}: {}", path.display(), std::io::Error::last_os_error())
}

/// The IO file's pieces: paths, sizes, and the ones this run created, each
/// on record (`environment::cleanup`) with its identity, so that a run
/// killed mid-test leaves what `fsbench cleanup` removes, and a second
/// Ctrl-C (which undoes at once and exits) removes it too.
struct DataFiles {
    paths: Vec<PathBuf>,
    sizes: Vec<u64>,
    created: Vec<Option<Token>>,
}

impl DataFiles {
    fn new(base: &std::path::Path, total: u64) -> DataFiles {
        let n = total.div_ceil(FILE_MAX).max(1);
        let paths: Vec<PathBuf> =
            (0..n).map(|i| if i == 0 { base.to_path_buf() } else { PathBuf::from(format!("{}.{i:03}", base.display())) }).collect();
        let sizes = (0..n).map(|i| (total - i * FILE_MAX).min(FILE_MAX)).collect();
        DataFiles { created: paths.iter().map(|_| None).collect(), paths, sizes }
    }

    fn cpath(&self, i: usize) -> CString {
        CString::new(self.paths[i].as_os_str().as_bytes()).expect("no NUL in a path")
    }

    /// Open piece `i`; `create` makes it anew (O_EXCL), removing this run's
    /// earlier copy first. The new file's identity goes on record before
    /// the test's clock starts.
    fn open(&mut self, i: usize, flags: libc::c_int, create: bool) -> Result<libc::c_int, String> {
        let p = self.cpath(i);
        let token = match (create, self.created[i].take()) {
            (false, earlier) => {
                self.created[i] = earlier;
                None
            }
            (true, Some(t)) => {
                // SAFETY: a valid C string; the file is this run's own
                // (made by the previous test). Its record keeps the old
                // identity until the new file's replaces it below.
                unsafe { libc::unlink(p.as_ptr()) };
                Some(t)
            }
            (true, None) => Some(cleanup::file_to_create(&self.paths[i])),
        };
        let flags = if create { flags | libc::O_CREAT | libc::O_EXCL } else { flags };
        // SAFETY: a valid C string and plain flags.
        let fd = unsafe { libc::open(p.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
        if fd < 0 {
            let e = os_err(if create { "cannot create" } else { "cannot open" }, &self.paths[i]);
            // O_EXCL failed: whatever is there is not this run's.
            if let Some(t) = token {
                t.forget();
            }
            return Err(e);
        }
        if let Some(t) = token {
            // One statx and one rewrite of the record, inside the span as
            // the create is (Bonnie++ times its create too).
            t.created_fd(fd);
            self.created[i] = Some(t);
        }
        Ok(fd)
    }

    /// Remove the pieces this run created.
    fn remove(&mut self) {
        for t in self.created.iter_mut().filter_map(Option::take) {
            if let Err(e) = t.done() {
                eprintln!("fsbench bonnie: {e}");
            }
        }
    }
}

/// Also when a test panics: the file goes with the unwinding.
impl Drop for DataFiles {
    fn drop(&mut self) {
        self.remove();
    }
}

/// fsync and close, as every test ends.
fn sync_close(fd: libc::c_int, path: &std::path::Path) -> Result<(), String> {
    // SAFETY: fd is open and ours.
    let r = unsafe { libc::fsync(fd) };
    let e = (r != 0).then(|| os_err("fsync", path));
    // SAFETY: closes our own descriptor once.
    unsafe { libc::close(fd) };
    e.map_or(Ok(()), Err)
}

fn full(r: isize, want: usize, what: &str, path: &std::path::Path) -> Result<(), String> {
    if r < 0 {
        return Err(os_err(what, path));
    }
    if r as usize != want {
        return Err(format!("{what} {}: {r} of {want} bytes", path.display()));
    }
    Ok(())
}

/// Every test of the plan's IO half, pushed in order; the file is removed
/// afterwards whatever happened.
pub(super) fn run(ctx: &mut Ctx, phases: &mut Vec<Phase>) -> Result<(), String> {
    let mut files = DataFiles::new(&ctx.base, ctx.plan.size_bytes());
    let r = tests(ctx, &mut files, phases);
    files.remove();
    r
}

fn tests(ctx: &mut Ctx, files: &mut DataFiles, phases: &mut Vec<Phase>) -> Result<(), String> {
    let plan = ctx.plan;
    let chunk = plan.chunk as usize;
    let mut bufs = Buffers::new(1, chunk);
    let buf = &mut bufs.slot_mut(0)[..chunk];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = b'a' + (i % 26) as u8;
    }
    let direct = if plan.direct { libc::O_DIRECT } else { 0 };
    let char_bytes = plan.char_mib.map(|m| (m << 20).min(plan.size_bytes()));
    let steps: [(Test, bool); 6] = [
        (Test::Putc, char_bytes.is_some()),
        (Test::PutBlock, true),
        (Test::Rewrite, true),
        (Test::Getc, char_bytes.is_some()),
        (Test::GetBlock, true),
        (Test::Seeks, true),
    ];
    for (test, wanted) in steps {
        if !wanted || ctx.stopped() {
            continue;
        }
        ctx.gate.before(test)?;
        let phase = match test {
            Test::Putc => bytewise(ctx, files, char_bytes.unwrap_or(0), true, direct)?,
            Test::PutBlock => put_block(ctx, files, buf, direct)?,
            Test::Rewrite => rewrite(ctx, files, buf)?,
            Test::Getc => bytewise(ctx, files, char_bytes.unwrap_or(0), false, 0)?,
            Test::GetBlock => get_block(ctx, files, buf)?,
            _ => seeks(ctx, files)?,
        };
        if let Some(p) = phase {
            ctx.meter.bytes.fetch_add(p.ops.bytes, Ordering::Relaxed);
            phases.push(p);
        }
    }
    Ok(())
}

/// putc (`write`) or getc: `total` bytes one byte per call, in the pieces
/// in order, timed per chunk of calls. None when stopped.
fn bytewise(ctx: &Ctx, files: &mut DataFiles, total: u64, write: bool, direct: libc::c_int) -> Result<Option<Phase>, String> {
    let chunk = ctx.plan.chunk;
    let mut timer = None;
    let mut left = total;
    let mut byte = [0u8; 1];
    for i in 0..files.paths.len() {
        if left == 0 {
            break;
        }
        let fd = if write { files.open(i, libc::O_RDWR | direct, true)? } else { files.open(i, libc::O_RDWR, false)? };
        let t = timer.get_or_insert_with(|| Timer::start(if write { Test::Putc } else { Test::Getc }));
        let here = left.min(files.sizes[i]);
        let mut done = 0;
        while done < here {
            if ctx.stopped() {
                // SAFETY: our own descriptor, closed once.
                unsafe { libc::close(fd) };
                return Ok(None);
            }
            let n = chunk.min(here - done);
            let began = Instant::now();
            for k in 0..n {
                // SAFETY: one byte of our own buffer, fd open.
                let r = unsafe {
                    if write {
                        byte[0] = (k & 0x7f) as u8;
                        libc::write(fd, byte.as_ptr() as *const libc::c_void, 1)
                    } else {
                        libc::read(fd, byte.as_mut_ptr() as *mut libc::c_void, 1)
                    }
                };
                if r != 1 {
                    let e = os_err(if write { "putc: write" } else { "getc: read" }, &files.paths[i]);
                    // SAFETY: our own descriptor, closed once.
                    unsafe { libc::close(fd) };
                    return Err(e);
                }
            }
            t.op(began, n);
            done += n;
        }
        sync_close(fd, &files.paths[i])?;
        left -= here;
    }
    Ok(timer.map(|t| t.finish(total / 1024)))
}

/// A block test: every chunk of every piece in order, `step` doing the
/// chunk's calls on the piece's descriptor; None when stopped.
fn blocks(
    ctx: &Ctx,
    files: &mut DataFiles,
    buf: &mut [u8],
    test: Test,
    (flags, create): (libc::c_int, bool),
    mut step: impl FnMut(libc::c_int, &mut [u8], u64, &std::path::Path) -> Result<(), String>,
) -> Result<Option<Phase>, String> {
    let chunk = buf.len() as u64;
    let mut timer = None;
    for i in 0..files.paths.len() {
        let fd = files.open(i, flags, create)?;
        let t = timer.get_or_insert_with(|| Timer::start(test));
        let path = files.paths[i].clone();
        for c in 0..files.sizes[i] / chunk {
            let r = if ctx.stopped() {
                Ok(false)
            } else {
                let began = Instant::now();
                step(fd, buf, c, &path).map(|()| {
                    t.op(began, chunk);
                    true
                })
            };
            if !matches!(r, Ok(true)) {
                // SAFETY: our own descriptor, closed once.
                unsafe { libc::close(fd) };
                return r.map(|_| None);
            }
        }
        sync_close(fd, &path)?;
    }
    Ok(timer.map(|t| t.finish(ctx.plan.size_bytes() / 1024)))
}

/// Bytes of `buf` written at the descriptor's position: the whole chunk.
fn write_chunk(fd: libc::c_int, buf: &[u8], what: &str, path: &std::path::Path) -> Result<(), String> {
    // SAFETY: `buf.len()` bytes of our own buffer, fd open.
    let r = unsafe { libc::write(fd, buf.as_ptr() as *const libc::c_void, buf.len()) };
    full(r, buf.len(), what, path)
}

fn read_chunk(fd: libc::c_int, buf: &mut [u8], what: &str, path: &std::path::Path) -> Result<(), String> {
    // SAFETY: `buf.len()` bytes of our own buffer, fd open.
    let r = unsafe { libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, buf.len()) };
    full(r, buf.len(), what, path)
}

/// Recreate the file and write it: one byte of the buffer changed per chunk.
fn put_block(ctx: &Ctx, files: &mut DataFiles, buf: &mut [u8], direct: libc::c_int) -> Result<Option<Phase>, String> {
    blocks(ctx, files, buf, Test::PutBlock, (libc::O_RDWR | direct, true), |fd, buf, c, path| {
        let at = (c as usize) % buf.len();
        buf[at] ^= 1;
        write_chunk(fd, buf, "put_block: write", path)
    })
}

/// Read a chunk, change a byte, seek back, write it.
fn rewrite(ctx: &Ctx, files: &mut DataFiles, buf: &mut [u8]) -> Result<Option<Phase>, String> {
    blocks(ctx, files, buf, Test::Rewrite, (libc::O_RDWR, false), |fd, buf, c, path| {
        read_chunk(fd, buf, "rewrite: read", path)?;
        let at = (c as usize) % buf.len();
        buf[at] ^= 1;
        // SAFETY: fd open; a relative seek back over what was read.
        if unsafe { libc::lseek(fd, -(buf.len() as libc::off_t), libc::SEEK_CUR) } < 0 {
            return Err(os_err("rewrite: lseek", path));
        }
        write_chunk(fd, buf, "rewrite: write", path)
    })
}

fn get_block(ctx: &Ctx, files: &mut DataFiles, buf: &mut [u8]) -> Result<Option<Phase>, String> {
    blocks(ctx, files, buf, Test::GetBlock, (libc::O_RDWR, false), |fd, buf, _, path| read_chunk(fd, buf, "get_block: read", path))
}

/// What one seeker did.
struct Seeker {
    /// When it got its first ticket (None: it got none).
    started: Option<Instant>,
    ended: Instant,
    ops: crate::result::OpStats,
    error: Option<String>,
}

/// A seeker's "no more tickets".
const END: u32 = u32::MAX;

/// The shape of the seek test, shared by the seekers.
struct SeekShape<'a> {
    paths: &'a [PathBuf],
    chunk: u64,
    total_chunks: u64,
    per_file: u64,
    fsync_each: bool,
    /// Seekers that have opened the file: no ticket goes out before every
    /// one has, or the first to finish would unlink the file under the
    /// last (Bonnie++ pauses 3 s for this).
    opened: AtomicUsize,
}

/// Bonnie++ 2.00a's seek test as it makes it (strace shows it): `procs`
/// threads of the one process, each with its own descriptor of the file in
/// the shared table, take 4-byte rand() tickets from one pipe, one read(2)
/// per seek, which the main thread fills and ends with one end mark per
/// seeker. Each seeker's clock starts at its first ticket; the test spans
/// the earliest start to the latest end. A seeker that cannot start fails
/// the test: the ones already running get their end marks and are joined
/// first, so the file's removal finds no one using it.
fn seeks(ctx: &mut Ctx, files: &mut DataFiles) -> Result<Option<Phase>, String> {
    let plan = ctx.plan;
    let chunk = plan.chunk;
    let procs = plan.seek_procs as usize;
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: fds has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(format!("seeks: pipe: {}", std::io::Error::last_os_error()));
    }
    let (rd, wr) = (fds[0], fds[1]);
    let shape = SeekShape {
        paths: &files.paths,
        chunk,
        total_chunks: (plan.size_bytes() / chunk).max(1),
        per_file: FILE_MAX / chunk,
        fsync_each: plan.fsync,
        opened: AtomicUsize::new(0),
    };
    let stop = ctx.stop;
    let rand = &mut ctx.rand;
    let mut timer = Timer::start(Test::Seeks);
    let (seekers, fed): (Vec<Seeker>, Result<(), String>) = std::thread::scope(|s| {
        let mut handles = Vec::with_capacity(procs);
        let mut spawn_error = None;
        for i in 0..procs {
            let started = std::thread::Builder::new().name(format!("fsb-seeker-{i}")).spawn_scoped(s, || {
                crate::runner::workers::note_this_thread();
                seeker(&shape, rd, stop)
            });
            match started {
                Ok(h) => handles.push(h),
                Err(e) => {
                    spawn_error = Some(format!("seeks: cannot start seeker {} of {procs}: {e}", i + 1));
                    break;
                }
            }
        }
        // Before the clock: every seeker started holds its descriptor.
        while shape.opened.load(Ordering::Acquire) < handles.len() {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        // After a failed start only the end marks go: the seekers running end.
        let fed = feed(wr, rand, if spawn_error.is_some() { 0 } else { plan.seeks }, handles.len(), stop);
        let done = handles.into_iter().map(|h| h.join().unwrap_or_else(|_| panic!("a seeker thread panicked"))).collect();
        (done, spawn_error.map_or(fed, Err))
    });
    // SAFETY: our own descriptors, closed once, after every seeker ended.
    unsafe {
        libc::close(rd);
        libc::close(wr);
    }
    fed?;
    if let Some(e) = seekers.iter().find_map(|s| s.error.clone()) {
        return Err(e);
    }
    if ctx.stopped() {
        return Ok(None);
    }
    let start = seekers.iter().filter_map(|s| s.started).min().unwrap_or_else(Instant::now);
    let end = seekers.iter().map(|s| s.ended).max().expect("at least one seeker");
    for s in &seekers {
        timer.ops.merge(&s.ops);
    }
    let mut phase = timer.finish(plan.seeks);
    phase.figure.elapsed_ns = end.saturating_duration_since(start).as_nanos() as u64;
    phase.ops.active_ns = Some(phase.figure.elapsed_ns);
    Ok(Some(phase))
}

/// Tickets drawn and written at a time: a pipe's default capacity, so the
/// seekers always have the next batch waiting while this one is drawn, and
/// the run holds 64 KiB of tickets however many seeks it makes.
const TICKET_BATCH: usize = 16 * 1024;

/// Draw `seeks` tickets and write them into the pipe (blocking while it is
/// full), the last batch followed by one end mark per seeker (so up to a
/// batch of seeks is one write, as Bonnie++ makes it); when stopped, only
/// the end marks, so every seeker ends.
fn feed(wr: libc::c_int, rand: &mut super::Rand, seeks: u64, procs: usize, stop: &std::sync::atomic::AtomicBool) -> Result<(), String> {
    let mut batch: Vec<u8> = Vec::with_capacity((TICKET_BATCH + procs) * 4);
    let mut left = seeks;
    while left > 0 && !stop.load(Ordering::Relaxed) {
        batch.clear();
        let n = left.min(TICKET_BATCH as u64);
        for _ in 0..n {
            batch.extend_from_slice(&rand.next().to_ne_bytes());
        }
        left -= n;
        if left > 0 {
            write_all(wr, &batch, stop)?;
        }
    }
    if stop.load(Ordering::Relaxed) {
        batch.clear();
    }
    for _ in 0..procs {
        batch.extend_from_slice(&END.to_ne_bytes());
    }
    write_all(wr, &batch, &std::sync::atomic::AtomicBool::new(false))
}

/// All of `bytes` into the pipe, in as few calls as it takes (the kernel
/// copies a page at a time, whole tickets, and waits for room in between);
/// the rest is dropped once `stop` is set.
fn write_all(wr: libc::c_int, bytes: &[u8], stop: &std::sync::atomic::AtomicBool) -> Result<(), String> {
    let mut at = 0;
    while at < bytes.len() && !stop.load(Ordering::Relaxed) {
        // SAFETY: the rest of our own buffer; wr is the pipe's write end.
        let r = unsafe { libc::write(wr, bytes[at..].as_ptr() as *const libc::c_void, bytes.len() - at) };
        if r < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(format!("seeks: writing tickets: {}", std::io::Error::last_os_error()));
        }
        at += r as usize;
    }
    Ok(())
}

fn seeker(shape: &SeekShape, rd: libc::c_int, stop: &std::sync::atomic::AtomicBool) -> Seeker {
    let chunk = shape.chunk;
    let mut ops = crate::result::OpStats::new(Test::Seeks.name(), crate::result::OpClass::DataRead, false);
    let mut bufs = Buffers::new(1, chunk as usize);
    let buf = &mut bufs.slot_mut(0)[..chunk as usize];
    let mut fds = Vec::with_capacity(shape.paths.len());
    let mut error = None;
    for p in shape.paths {
        let c = CString::new(p.as_os_str().as_bytes()).expect("no NUL in a path");
        // SAFETY: a valid C string and plain flags.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) };
        if fd < 0 && error.is_none() {
            error = Some(os_err("seeks: cannot open", p));
        }
        fds.push(fd);
    }
    shape.opened.fetch_add(1, Ordering::Release);
    let mut started = None;
    let mut k = 0usize;
    loop {
        let mut t = [0u8; 4];
        // SAFETY: 4 bytes of our own; rd is the pipe's read end. Pipe reads
        // of at most PIPE_BUF bytes are whole, and tickets are written whole.
        let r = unsafe { libc::read(rd, t.as_mut_ptr() as *mut libc::c_void, 4) };
        if r != 4 {
            if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            error.get_or_insert_with(|| "seeks: the ticket pipe ended early".into());
            break;
        }
        let ticket = u32::from_ne_bytes(t);
        if ticket == END {
            break;
        }
        let began = Instant::now();
        started.get_or_insert(began);
        // After an error or a stop, tickets are only drained, so the feeder
        // never waits on a full pipe.
        if error.is_some() || stop.load(Ordering::Relaxed) {
            continue;
        }
        let c = ticket as u64 % shape.total_chunks;
        let (f, off) = ((c / shape.per_file) as usize, (c % shape.per_file * chunk) as libc::off_t);
        let fd = fds[f];
        let len = chunk as usize;
        // SAFETY: fd is open (checked above); the buffer holds `chunk` bytes.
        let ok = unsafe {
            libc::lseek(fd, off, libc::SEEK_SET) == off && libc::read(fd, buf.as_mut_ptr() as *mut libc::c_void, len) == len as isize
        };
        if !ok {
            error = Some(os_err("seeks: read", &shape.paths[f]));
            continue;
        }
        if ticket % 10 == 0 {
            buf[k % len] ^= 1;
            // SAFETY: as above.
            let ok = unsafe {
                libc::lseek(fd, off, libc::SEEK_SET) == off
                    && libc::write(fd, buf.as_ptr() as *const libc::c_void, len) == len as isize
                    && (!shape.fsync_each || libc::fsync(fd) == 0)
            };
            if !ok {
                error = Some(os_err("seeks: update", &shape.paths[f]));
                continue;
            }
        }
        ops.lat.record(began.elapsed().as_nanos() as u64);
        ops.ops += 1;
        ops.bytes += chunk;
        k += 1;
    }
    // As in Bonnie++, each seeker ends with fsync, close and unlink of the
    // file inside its time, so the last one out pays for freeing it.
    for (fd, p) in fds.into_iter().zip(shape.paths) {
        if fd >= 0 {
            if let Err(e) = sync_close(fd, p) {
                error.get_or_insert(e);
            }
        }
        let c = CString::new(p.as_os_str().as_bytes()).expect("no NUL in a path");
        // SAFETY: a valid C string; the file is this run's own. The other
        // seekers' unlinks find it gone (ENOENT), as in Bonnie++.
        unsafe { libc::unlink(c.as_ptr()) };
    }
    Seeker { started, ended: Instant::now(), ops, error }
}
