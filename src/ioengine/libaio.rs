//! libaio: Linux kernel AIO (io_setup/io_submit/io_getevents) through raw
//! syscalls, without the libaio library.
//!
//! This is the classic engine for measuring a device with `direct=1` and a
//! queue depth above one: each `commit` is one `io_submit(2)` for everything
//! queued, each blocking `reap` at most one `io_getevents(2)`.
//!
//! Kernel quirks worth knowing:
//! * Only O_DIRECT I/O is really asynchronous. Buffered reads and writes are
//!   performed inside `io_submit` (the call returns after the copy is done),
//!   so without `direct=1` a deeper queue buys nothing; `inline_when_buffered`
//!   says so.
//! * `IOCB_CMD_FSYNC`/`IOCB_CMD_FDSYNC` only work since Linux 4.18 (and only on
//!   file systems with an fsync method). The first time the kernel rejects one
//!   with EINVAL the engine performs that sync inline (its result arrives
//!   through `reap` like any other completion) and does every later sync
//!   inline from `queue`, returning `Done`.
//! * `io_submit` reports an error only for the first iocb it could not
//!   accept (bad descriptor, negative offset, write on a read-only fd...) and
//!   stops there. That is a property of that one I/O, so it becomes that
//!   I/O's completion with `-errno` and the rest of the batch is submitted
//!   after it; an `Err` from `commit` would leave the runner waiting for I/O
//!   that never started.
//! * The completion ring the kernel fills is mapped into our address space
//!   (the context id is its address). Like fio's `userspace_reap`, `reap`
//!   reads completions straight from it and only calls `io_getevents` when it
//!   must wait, so polling (`min == 0`) costs no system call at all.

use super::*;
use std::ptr;
use std::sync::atomic::{AtomicU32, Ordering};

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;
/// `aio_reqprio` holds an ioprio value for this iocb (Linux 5.0).
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;

/// How often an `io_submit` that keeps answering EAGAIN is retried. With at
/// most `iodepth` I/Os in a context sized for `iodepth` it never happens.
const EAGAIN_RETRIES: u32 = 10_000;

/// `struct iocb` from `<linux/aio_abi.h>` (64 bytes on every 64-bit target).
/// `aio_key` and `aio_rw_flags` swap places on big-endian machines; both are
/// always zero here, so the order does not matter.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    aio_data: u64,
    aio_key: u32,
    aio_rw_flags: i32,
    aio_lio_opcode: u16,
    aio_reqprio: i16,
    aio_fildes: u32,
    aio_buf: u64,
    aio_nbytes: u64,
    aio_offset: i64,
    aio_reserved2: u64,
    aio_flags: u32,
    aio_resfd: u32,
}

/// `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// Header of the completion ring the kernel maps at the context address
/// (`struct aio_ring` in fs/aio.c); the `io_event`s follow it.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: AtomicU32,
    tail: AtomicU32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

const AIO_RING_MAGIC: u32 = 0xa10a_10a1;

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);
const _: () = assert!(std::mem::size_of::<AioRing>() == 32);

pub struct Libaio {
    /// `aio_context_t`: the kernel's handle, which is also the ring's address.
    ctx: libc::c_ulong,
    /// The ring can be read from user space (checked once in `make`).
    user_ring: bool,
    depth: usize,
    fds: Vec<RawFd>,
    /// One control block per buffer slot; `aio_data` carries the slot back.
    iocbs: Box<[Iocb]>,
    /// Queued since the last commit (pointers into `iocbs`).
    pending: Vec<*mut Iocb>,
    /// Scratch for `io_getevents`.
    events: Box<[IoEvent]>,
    /// Completions known before `reap` asked: I/Os the kernel refused at
    /// submission, syncs done inline as a fallback, events collected while
    /// `io_submit` said EAGAIN. Never grows beyond its capacity (`depth`).
    stash: Vec<Completion>,
    /// Submitted to the kernel and not reaped yet.
    in_flight: usize,
    /// Submitted by an inline-sync fallback ahead of `commit`; `commit` adds them.
    submitted_early: usize,
    /// The kernel accepts IOCB_CMD_FSYNC/FDSYNC (assumed until it says EINVAL).
    aio_fsync: bool,
    trimmer: Trimmer,
}

// SAFETY: the raw pointers point into this struct's own boxed arrays and into the kernel ring owned by `ctx`, none of
// which is tied to a thread; all use goes through `&mut self`, so moving the engine to another thread cannot race.
unsafe impl Send for Libaio {}

pub const IMPL: EngineImpl = EngineImpl { name: "libaio", make };

fn make(cfg: &EngineConfig) -> io::Result<Box<dyn IoEngine>> {
    Ok(Box::new(Libaio::new(cfg)?))
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
}

impl Libaio {
    fn new(cfg: &EngineConfig) -> io::Result<Libaio> {
        let o = cfg.options;
        if o.fixedbufs || o.registerfiles || o.sqthread_poll {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "libaio: fixedbufs, registerfiles and sqthread_poll are io_uring options",
            ));
        }
        let depth = cfg.iodepth.max(1) as usize;
        let mut ctx: libc::c_ulong = 0;
        // SAFETY: io_setup writes one context id into `ctx`, a live local c_ulong; `depth` is a plain integer.
        let r = unsafe { libc::syscall(libc::SYS_io_setup, depth as libc::c_long, &mut ctx as *mut libc::c_ulong) };
        if r < 0 {
            let e = io::Error::last_os_error();
            let hint = match e.raw_os_error() {
                Some(libc::EAGAIN) => " (iodepth exceeds what /proc/sys/fs/aio-max-nr still allows)",
                Some(libc::ENOSYS) => " (kernel built without AIO support, or blocked by seccomp)",
                _ => "",
            };
            return Err(io::Error::new(e.kind(), format!("libaio: io_setup({depth}) failed: {e}{hint}")));
        }
        let ring = ctx as *const AioRing;
        // SAFETY: io_setup succeeded, so `ctx` is the address of the aio_ring header the kernel mapped readable into
        // this process; the header fields are only read, to decide whether the ring can be used.
        let user_ring = unsafe {
            (*ring).magic == AIO_RING_MAGIC
                && (*ring).incompat_features == 0
                && (*ring).header_length as usize == std::mem::size_of::<AioRing>()
                && (*ring).nr > 0
        };
        Ok(Libaio {
            ctx,
            user_ring,
            depth,
            fds: Vec::new(),
            iocbs: vec![Iocb::default(); depth].into_boxed_slice(),
            pending: Vec::with_capacity(depth),
            events: vec![IoEvent::default(); depth].into_boxed_slice(),
            stash: Vec::with_capacity(depth),
            in_flight: 0,
            submitted_early: 0,
            aio_fsync: true,
            trimmer: Trimmer::default(),
        })
    }

    /// Copy completions out of the kernel's ring without a system call.
    #[inline]
    fn user_reap(&mut self, out: &mut [Completion]) -> usize {
        if out.is_empty() || self.in_flight == 0 {
            return 0;
        }
        // SAFETY: `ctx` is a live context whose ring header was validated in
        // `new`; this engine is its only consumer.
        unsafe {
            let ring = self.ctx as *const AioRing;
            let nr = (*ring).nr;
            let evs = (ring as *const u8).add(std::mem::size_of::<AioRing>()) as *const IoEvent;
            let mut head = (*ring).head.load(Ordering::Relaxed) % nr;
            let tail = (*ring).tail.load(Ordering::Acquire) % nr;
            let mut n = 0;
            while head != tail && n < out.len() {
                let ev = ptr::read_volatile(evs.add(head as usize));
                out[n] = Completion { slot: ev.data as u32, res: ev.res };
                n += 1;
                head = (head + 1) % nr;
            }
            if n > 0 {
                (*ring).head.store(head, Ordering::Release);
                self.in_flight -= n;
            }
            n
        }
    }

    /// `io_getevents` into `out`: how many were stored, or an errno.
    #[inline]
    fn getevents(&mut self, min: usize, out: &mut [Completion]) -> Result<usize, i32> {
        let max = out.len().min(self.events.len());
        let min = min.min(max);
        // SAFETY: `ctx` is this engine's live context; `events` has `events.len()` slots and `max <= events.len()`, so
        // the kernel writes only inside it; a null timeout means wait.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_getevents,
                self.ctx,
                min as libc::c_long,
                max as libc::c_long,
                self.events.as_mut_ptr(),
                ptr::null_mut::<libc::timespec>(),
            )
        };
        if r < 0 {
            return Err(errno());
        }
        let n = r as usize;
        for (o, ev) in out.iter_mut().zip(&self.events[..n]) {
            *o = Completion { slot: ev.data as u32, res: ev.res };
        }
        self.in_flight -= n;
        Ok(n)
    }

    /// `io_submit` said EAGAIN: make room by moving completions into the stash.
    #[cold]
    fn drain_for_room(&mut self) -> io::Result<()> {
        if self.in_flight == 0 {
            // Nothing of ours to wait for; the shortage is elsewhere. Back off.
            std::thread::yield_now();
            return Ok(());
        }
        let mut tmp = [Completion::default(); 16];
        let room = (self.stash.capacity() - self.stash.len()).min(tmp.len());
        let got = loop {
            match self.getevents(1, &mut tmp[..room]) {
                Ok(n) => break n,
                Err(libc::EINTR) => {}
                Err(e) => return Err(io::Error::from_raw_os_error(e)),
            }
        };
        self.stash.extend_from_slice(&tmp[..got]);
        Ok(())
    }

    /// Submit everything in `pending`; returns how many were handed over
    /// (refused ones included: their completion waits in the stash).
    fn submit_pending(&mut self) -> io::Result<usize> {
        let total = self.pending.len();
        let mut done = 0;
        let mut eagain = 0u32;
        while done < total {
            // SAFETY: `pending[done..]` are `total - done` pointers to iocbs in `self.iocbs`, which is neither moved
            // nor resized while they are pending; each iocb's buffer is valid until its I/O completes (IoUnit contract)
            // and its descriptor is open (EngineFile contract).
            let r = unsafe {
                libc::syscall(libc::SYS_io_submit, self.ctx, (total - done) as libc::c_long, self.pending.as_mut_ptr().add(done))
            };
            if r > 0 {
                done += r as usize;
                self.in_flight += r as usize;
                eagain = 0;
                continue;
            }
            let e = if r == 0 { libc::EAGAIN } else { errno() };
            match e {
                libc::EINTR => {}
                libc::EAGAIN if eagain < EAGAIN_RETRIES => {
                    eagain += 1;
                    if let Err(err) = self.drain_for_room() {
                        self.pending.drain(..done);
                        return Err(err);
                    }
                }
                libc::EFAULT => {
                    self.pending.drain(..done);
                    return Err(io::Error::other("libaio: io_submit: EFAULT (bad iocb)"));
                }
                e => {
                    // The first remaining iocb was refused; it completes with -e.
                    // SAFETY: the pointer points into `self.iocbs`, alive and written by nobody while this shared
                    // reference is used (the kernel refused this iocb, so it holds no reference to it).
                    let cb = unsafe { &*self.pending[done] };
                    let res = if e == libc::EINVAL && matches!(cb.aio_lio_opcode, IOCB_CMD_FSYNC | IOCB_CMD_FDSYNC) {
                        self.aio_fsync = false;
                        let op = if cb.aio_lio_opcode == IOCB_CMD_FSYNC { IoOp::Fsync } else { IoOp::Fdatasync };
                        do_sync(cb.aio_fildes as RawFd, op)
                    } else {
                        -(e as i64)
                    };
                    self.stash.push(Completion { slot: cb.aio_data as u32, res });
                    done += 1;
                    eagain = 0;
                }
            }
        }
        self.pending.clear();
        Ok(total)
    }
}

impl IoEngine for Libaio {
    fn setup(&mut self, files: &[EngineFile], bufs: &[EngineBuf]) -> io::Result<()> {
        self.fds = files.iter().map(|f| f.fd).collect();
        self.trimmer = Trimmer::new(files);
        let slots = bufs.len().max(self.depth);
        if slots > self.iocbs.len() {
            self.iocbs = vec![Iocb::default(); slots].into_boxed_slice();
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let Some(&fd) = self.fds.get(io.file as usize) else {
            return Ok(Queued::Done(-(libc::EBADF as i64)));
        };
        let (opcode, buf, len) = match io.op {
            IoOp::Read => (IOCB_CMD_PREAD, io.buf as u64, io.len as u64),
            IoOp::Write => (IOCB_CMD_PWRITE, io.buf as u64, io.len as u64),
            // Kernel AIO has no discard command; like fio, trim inline.
            IoOp::Trim => return Ok(Queued::Done(self.trimmer.trim(io.file, fd, io.offset, io.len))),
            IoOp::Fsync | IoOp::Fdatasync if !self.aio_fsync => {
                // Fallback: queued I/Os go to the kernel first so the sync
                // covers them (buffered AIO completes inside io_submit).
                if !self.pending.is_empty() {
                    self.submitted_early += self.submit_pending()?;
                }
                return Ok(Queued::Done(do_sync(fd, io.op)));
            }
            // The kernel insists a sync iocb has no buffer, length or offset.
            IoOp::Fsync => (IOCB_CMD_FSYNC, 0, 0),
            IoOp::Fdatasync => (IOCB_CMD_FDSYNC, 0, 0),
        };
        if self.pending.len() == self.pending.capacity() {
            return Err(io::Error::other("libaio: more I/Os queued than iodepth"));
        }
        let Some(cb) = self.iocbs.get_mut(io.slot as usize) else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "libaio: buffer slot out of range"));
        };
        *cb = Iocb {
            aio_data: io.slot as u64,
            aio_lio_opcode: opcode,
            aio_fildes: fd as u32,
            aio_buf: buf,
            aio_nbytes: len,
            aio_offset: if opcode >= IOCB_CMD_FSYNC { 0 } else { io.offset as i64 },
            // Without the flag the kernel ignores aio_reqprio: an I/O with
            // prio 0 keeps the thread's priority, as without cmdprio.
            aio_reqprio: io.prio as i16,
            aio_flags: if io.prio != 0 { IOCB_FLAG_IOPRIO } else { 0 },
            ..Iocb::default()
        };
        self.pending.push(cb as *mut Iocb);
        Ok(Queued::Pending)
    }

    fn commit(&mut self) -> io::Result<usize> {
        let early = std::mem::take(&mut self.submitted_early);
        if self.pending.is_empty() {
            return Ok(early);
        }
        Ok(early + self.submit_pending()?)
    }

    fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize> {
        // Never wait for more than can possibly arrive.
        let min = min.min(self.in_flight + self.stash.len()).min(out.len());
        let mut n = 0;
        if !self.stash.is_empty() {
            n = self.stash.len().min(out.len());
            out[..n].copy_from_slice(&self.stash[..n]);
            self.stash.drain(..n);
        }
        if self.user_ring {
            n += self.user_reap(&mut out[n..]);
            if n >= min {
                return Ok(n);
            }
        }
        loop {
            match self.getevents(min.saturating_sub(n), &mut out[n..]) {
                Ok(got) => n += got,
                Err(libc::EINTR) => {}
                Err(e) => {
                    let e = io::Error::from_raw_os_error(e);
                    return Err(io::Error::new(e.kind(), format!("libaio: io_getevents: {e}")));
                }
            }
            if n >= min {
                return Ok(n);
            }
        }
    }
}

impl Drop for Libaio {
    fn drop(&mut self) {
        // SAFETY: io_destroy on this engine's own context, once (in drop); it waits for the I/Os still in flight,
        // so the kernel never writes into buffers the runner frees after us.
        unsafe {
            libc::syscall(libc::SYS_io_destroy, self.ctx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ioengine::testkit::*;
    use crate::model::job::EngineOptions;
    use std::fs::File;
    use std::os::fd::AsRawFd;

    fn engine(depth: u32) -> Option<Box<dyn IoEngine>> {
        let options = EngineOptions::default();
        Some((IMPL.make)(&EngineConfig { iodepth: depth, options: &options }).expect("libaio engine"))
    }

    #[test]
    fn roundtrip_buffered_depth4() {
        roundtrip(engine, 4, false);
    }
    #[test]
    fn roundtrip_buffered_depth32() {
        roundtrip(engine, 32, false);
    }
    #[test]
    fn roundtrip_direct_depth4() {
        roundtrip(engine, 4, true);
    }
    #[test]
    fn roundtrip_direct_depth32() {
        roundtrip(engine, 32, true);
    }

    #[test]
    fn fsync_and_fdatasync_complete_with_zero() {
        let tmp = tmpfile(BS as u64);
        let file = open(tmp.path(), false).unwrap();
        let bufs = Bufs::new(2);
        let files = [EngineFile { fd: file.as_raw_fd(), size: BS as u64, writable: true }];
        let options = EngineOptions::default();
        let mut aio = Libaio::new(&EngineConfig { iodepth: 2, options: &options }).unwrap();
        aio.setup(&files, &bufs.engine_bufs()).unwrap();
        let p = &bufs.ptrs;
        let res = run(&mut aio, &[unit(IoOp::Fsync, 0, 0, p[0], 0), unit(IoOp::Fdatasync, 0, 0, p[1], 1)]);
        assert_eq!(res, vec![0, 0]);
        eprintln!("libaio: kernel took IOCB_CMD_FSYNC: {}, user-space reaping: {}", aio.aio_fsync, aio.user_ring);
        assert!(aio.user_ring, "aio ring header not recognised");
        // The inline fallback (what a kernel before 4.18 gets) behaves the same.
        aio.aio_fsync = false;
        assert_eq!(aio.queue(&unit(IoOp::Fdatasync, 0, 0, p[0], 0)).unwrap(), Queued::Done(0));
    }

    #[test]
    fn bad_io_gives_negative_result() {
        let tmp = tmpfile(BS as u64);
        let file = open(tmp.path(), false).unwrap();
        let ro = File::open(tmp.path()).unwrap();
        let bufs = Bufs::new(4);
        let mut eng = engine(4).unwrap();
        let files = [
            EngineFile { fd: file.as_raw_fd(), size: BS as u64, writable: true },
            EngineFile { fd: -1, size: BS as u64, writable: true },
            EngineFile { fd: ro.as_raw_fd(), size: BS as u64, writable: false },
        ];
        eng.setup(&files, &bufs.engine_bufs()).unwrap();
        let p = &bufs.ptrs;
        let res = run(
            &mut *eng,
            &[
                unit(IoOp::Read, 1, 0, p[0], 0),          // bad descriptor
                unit(IoOp::Read, 0, 1u64 << 63, p[1], 1), // negative offset
                unit(IoOp::Write, 2, 0, p[2], 2),         // write on a read-only fd
                unit(IoOp::Read, 7, 0, p[3], 3),          // no such file
            ],
        );
        let (ebadf, einval) = (-libc::EBADF as i64, -libc::EINVAL as i64);
        assert_eq!(res, vec![ebadf, einval, ebadf, ebadf]);
        // The engine still works after refusals; a read past EOF returns 0.
        let res = run(&mut *eng, &[unit(IoOp::Read, 0, 0, p[0], 0), unit(IoOp::Read, 0, 1 << 20, p[1], 1)]);
        assert_eq!(res, vec![BS as i64, 0]);
    }

    /// With iodepth N, N I/Os can be in flight at once: queue N, one commit, reap N.
    fn full_depth(depth: usize, direct: bool) {
        let size = (depth * BS) as u64;
        let tmp = tmpfile(size);
        let Some(file) = open(tmp.path(), direct) else { return };
        let bufs = Bufs::new(depth);
        let mut eng = engine(depth as u32).unwrap();
        eng.setup(&[EngineFile { fd: file.as_raw_fd(), size, writable: true }], &bufs.engine_bufs()).unwrap();
        let mut out = vec![Completion::default(); depth];
        assert_eq!(eng.reap(0, &mut out).unwrap(), 0, "nothing in flight");
        for op in [IoOp::Write, IoOp::Read] {
            for i in 0..depth {
                let io = unit(op, 0, (i * BS) as u64, bufs.ptrs[i], i as u32);
                assert_eq!(eng.queue(&io).unwrap(), Queued::Pending);
            }
            assert_eq!(eng.commit().unwrap(), depth);
            let early = eng.reap(0, &mut out).unwrap();
            eprintln!("libaio {op:?} direct={direct} depth={depth}: {early}/{depth} complete when io_submit returned");
            let n = early + eng.reap(depth - early, &mut out[early..]).unwrap();
            assert_eq!(n, depth);
            let mut seen = vec![false; depth];
            for c in &out {
                assert_eq!(c.res, BS as i64);
                assert!(!std::mem::replace(&mut seen[c.slot as usize], true));
            }
            assert_eq!(eng.reap(0, &mut out).unwrap(), 0);
        }
    }

    #[test]
    fn full_depth_in_flight() {
        full_depth(4, true);
        full_depth(32, true);
        full_depth(32, false);
    }

    #[test]
    fn rejects_io_uring_options() {
        let options = EngineOptions { fixedbufs: true, ..EngineOptions::default() };
        assert!((IMPL.make)(&EngineConfig { iodepth: 4, options: &options }).is_err());
    }
}
