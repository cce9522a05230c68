//! io_uring: Linux's submission/completion rings (`io_uring_setup(2)`,
//! `io_uring_enter(2)`), fio's `io_uring` engine, through the `io-uring` crate.
//!
//! What it is for: the lowest per-I/O cost an application can get from the
//! kernel. `queue` only writes a submission entry into shared memory, `commit`
//! is one `io_uring_enter` for the whole batch, and `reap` reads completions
//! from shared memory, entering the kernel only when it has to wait.
//!
//! Options (fio's names):
//! * `fixedbufs`: the slot buffers are registered once, so the kernel does not
//!   pin and unpin pages per I/O; I/O uses `READ_FIXED`/`WRITE_FIXED` with the
//!   slot as buffer index.
//! * `registerfiles`: the descriptors are registered once, saving the file
//!   reference count per I/O.
//! * `sqthread_poll`: a kernel thread polls the submission ring, so `commit`
//!   usually makes no system call at all; that thread's CPU is not the
//!   worker's.
//!
//! Kernel quirks worth knowing:
//! * Buffered I/O is first tried non-blocking inside the submit call (a read
//!   of cached pages completes right there); what would block is handed to
//!   io-wq worker threads, which really run in parallel, so unlike libaio a
//!   deeper queue does change buffered results (`inline_when_buffered` is
//!   false), and those workers' CPU time is spent outside the worker thread.
//! * Without IORING_SETUP_SUBMIT_ALL (Linux 5.18) the kernel stops consuming a
//!   batch at the first entry it cannot start; `commit` then enters again for
//!   the rest. A refused entry always produces a completion with a negative
//!   errno, never an error of the batch.
//! * Outside SQPOLL mode the ring is created with COOP_TASKRUN,
//!   SINGLE_ISSUER and DEFER_TASKRUN when the kernel knows them (as fio does):
//!   completions are posted only when this thread enters the kernel with
//!   GETEVENTS, which saves an interrupt per I/O. It also means the engine
//!   must be driven from the thread that created it, which is how the runner
//!   uses engines.
//!
//! System calls per I/O (what decides its cost next to fio):
//! * `commit` enters with GETEVENTS and no minimum, as fio does, so the
//!   deferred completions are posted while submitting and `reap` finds them
//!   in the ring without a system call. With fio's default
//!   `iodepth_batch_submit=1` that is one enter per I/O, plus one per wait
//!   that found the ring empty.
//! * `commit_and_reap` (the runner's full-queue step with a batch pending,
//!   i.e. `iodepth_batch_submit` > 1) submits and waits in one enter.
//! * Every enter goes through the ring's registered index (Linux 5.18)
//!   instead of its descriptor, skipping the descriptor-table lookup and its
//!   reference count.
//! * How often the worker sleeps in the wait is not the engine's choice:
//!   with `iodepth_batch_complete_min=1` it sleeps whenever no completion is
//!   pending, and a faster submitter finds none more often (README, "fio
//!   comparison").

use super::*;
use ::io_uring::{opcode, squeue, types, IoUring};
use std::os::fd::AsRawFd;

/// How long the SQPOLL thread spins idle before it sleeps (and the next
/// `commit` has to wake it with a system call).
const SQPOLL_IDLE_MS: u32 = 1000;

/// The kernel's limit on registered buffers (IORING_MAX_REG_BUFFERS).
const MAX_FIXED_BUFS: usize = 1 << 14;

/// How often an `io_uring_enter` answering EAGAIN/EBUSY (transient lack of
/// kernel memory) is retried before `commit` gives up.
const BUSY_RETRIES: u32 = 10_000;

pub struct Uring {
    ring: IoUring,
    depth: usize,
    fixedbufs: bool,
    registerfiles: bool,
    sqpoll: bool,
    /// Completions are posted only when we enter the kernel with GETEVENTS.
    defer_taskrun: bool,
    fds: Vec<RawFd>,
    /// Buffers registered by `setup` (fixedbufs).
    nbufs: usize,
    /// Entries pushed since the last `commit`.
    queued: usize,
    trimmer: Trimmer,
    /// The ring's index in this thread's registered ring descriptors
    /// (IORING_REGISTER_RING_FDS, Linux 5.18), or -1: every enter then
    /// skips the descriptor lookup (an atomic reference count in a
    /// multi-threaded process such as fsbench).
    ring_index: i32,
    /// The thread that registered `ring_index` (registration is per thread).
    ring_owner: libc::pid_t,
    /// `io_uring_enter` calls made, and how many asked to wait: what the
    /// tests look at.
    #[cfg(test)]
    enters: u64,
    #[cfg(test)]
    waits: u64,
}

pub const IMPL: EngineImpl = EngineImpl { name: "io_uring", make: Uring::make };

fn setup_hint(e: &io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => " (the kernel has no io_uring)",
        Some(libc::EPERM) => {
            " (io_uring is disabled for this process: see /proc/sys/kernel/io_uring_disabled, or a seccomp/container policy)"
        }
        Some(libc::ENOMEM) => " (out of locked memory: raise RLIMIT_MEMLOCK, `ulimit -l`)",
        _ => "",
    }
}

/// Whether a loop that enters the kernel until its work is done goes round
/// again after `e`: after a signal, yes; after a transient EAGAIN/EBUSY
/// (lack of kernel memory), when `busy` counts them, up to BUSY_RETRIES,
/// yielding the CPU first. Any other error is the caller's.
#[cold]
fn again(e: io::Error, busy: Option<&mut u32>) -> io::Result<()> {
    if e.raw_os_error() == Some(libc::EINTR) {
        return Ok(());
    }
    match busy {
        Some(n) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EBUSY)) && *n < BUSY_RETRIES => {
            *n += 1;
            // SAFETY: sched_yield takes no arguments and touches no memory.
            unsafe { libc::sched_yield() };
            Ok(())
        }
        _ => Err(e),
    }
}

impl Uring {
    fn make(cfg: &EngineConfig) -> io::Result<Box<dyn IoEngine>> {
        Ok(Box::new(Uring::new(cfg)?))
    }

    fn new(cfg: &EngineConfig) -> io::Result<Uring> {
        let o = cfg.options;
        let depth = cfg.iodepth.max(1) as usize;
        // With SQPOLL the ring gets twice the room, so the kernel thread's lag
        // in freeing entries (see `wait_for_room`) rarely costs a system call.
        let entries = (depth as u32).next_power_of_two() * if o.sqthread_poll { 2 } else { 1 };
        let (ring, defer_taskrun) = if o.sqthread_poll {
            // Try with SUBMIT_ALL, then without for kernels before 5.18.
            let mut last = None;
            let mut ring = None;
            for submit_all in [true, false] {
                let mut b = IoUring::builder();
                b.setup_sqpoll(SQPOLL_IDLE_MS);
                if submit_all {
                    b.setup_submit_all();
                }
                match b.build(entries) {
                    Ok(r) => {
                        ring = Some(r);
                        break;
                    }
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
                    Err(e) => {
                        last = Some(e);
                        break;
                    }
                }
            }
            match ring {
                Some(r) => (r, false),
                None => {
                    let e = last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL));
                    let hint = match e.raw_os_error() {
                        Some(libc::EPERM) => " (SQPOLL needs Linux 5.11+ or CAP_SYS_NICE, and io_uring must be enabled)",
                        Some(libc::EINVAL) => " (the kernel does not support SQPOLL with these flags)",
                        _ => setup_hint(&e),
                    };
                    return Err(io::Error::new(e.kind(), format!("sqthread_poll: io_uring_setup with SQPOLL failed: {e}{hint}")));
                }
            }
        } else {
            // Newest flags first; an older kernel answers EINVAL to flags it does not know.
            const COOP: u8 = 1;
            const SINGLE_DEFER: u8 = 2;
            const SUBMIT_ALL: u8 = 4;
            let mut built = None;
            let mut last = None;
            for flags in [COOP | SINGLE_DEFER | SUBMIT_ALL, COOP | SUBMIT_ALL, SUBMIT_ALL, 0] {
                let mut b = IoUring::builder();
                if flags & COOP != 0 {
                    b.setup_coop_taskrun();
                }
                if flags & SINGLE_DEFER != 0 {
                    b.setup_single_issuer().setup_defer_taskrun();
                }
                if flags & SUBMIT_ALL != 0 {
                    b.setup_submit_all();
                }
                match b.build(entries) {
                    Ok(r) => {
                        built = Some((r, flags & SINGLE_DEFER != 0));
                        break;
                    }
                    Err(e) if e.raw_os_error() == Some(libc::EINVAL) => last = Some(e),
                    Err(e) => {
                        last = Some(e);
                        break;
                    }
                }
            }
            match built {
                Some(b) => b,
                None => {
                    let e = last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL));
                    return Err(io::Error::new(e.kind(), format!("io_uring_setup({entries}): {e}{}", setup_hint(&e))));
                }
            }
        };
        Ok(Uring {
            ring,
            depth,
            fixedbufs: o.fixedbufs,
            registerfiles: o.registerfiles,
            sqpoll: o.sqthread_poll,
            defer_taskrun,
            fds: Vec::new(),
            nbufs: 0,
            queued: 0,
            trimmer: Trimmer::default(),
            ring_index: -1,
            ring_owner: 0,
            #[cfg(test)]
            enters: 0,
            #[cfg(test)]
            waits: 0,
        })
    }

    /// One `io_uring_enter`: submit the `to_submit` entries the ring holds
    /// and, with GETEVENTS, run deferred completion work and wait until
    /// `min_complete` completions are in the ring. Through the registered
    /// ring index when there is one.
    #[inline]
    fn enter(&mut self, to_submit: u32, min_complete: u32, flags: u32) -> io::Result<usize> {
        let (fd, flags) =
            if self.ring_index >= 0 { (self.ring_index, flags | IORING_ENTER_REGISTERED_RING) } else { (self.ring.as_raw_fd(), flags) };
        #[cfg(test)]
        {
            self.enters += 1;
            self.waits += (min_complete > 0) as u64;
        }
        // SAFETY: io_uring_enter on this engine's own ring (its descriptor, or its index registered by this thread),
        // with a null signal mask of size 0. The kernel reads the submission entries `queue` pushed, whose buffers and
        // descriptors stay valid until they complete (IoUnit and EngineFile contracts).
        let r = unsafe {
            libc::syscall(libc::SYS_io_uring_enter, fd, to_submit, min_complete, flags, std::ptr::null::<libc::c_void>(), 0usize)
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }

    /// Register the ring's descriptor for this thread (Linux 5.18); an older
    /// kernel, or a thread with all 16 slots taken, keeps using the descriptor.
    fn register_ring(&mut self) {
        let mut up = RsrcUpdate { offset: u32::MAX, resv: 0, data: self.ring.as_raw_fd() as u64 };
        // SAFETY: IORING_REGISTER_RING_FDS reads and writes one io_uring_rsrc_update, `up`, a live local of that layout.
        let r = unsafe {
            libc::syscall(libc::SYS_io_uring_register, self.ring.as_raw_fd(), IORING_REGISTER_RING_FDS, &mut up as *mut RsrcUpdate, 1u32)
        };
        if r == 1 {
            self.ring_index = up.offset as i32;
            // SAFETY: gettid takes no arguments and touches no memory.
            self.ring_owner = unsafe { libc::gettid() };
        }
    }
}

/// `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

const IORING_REGISTER_RING_FDS: u32 = 20;
const IORING_UNREGISTER_RING_FDS: u32 = 21;
const IORING_ENTER_GETEVENTS: u32 = 1;
const IORING_ENTER_REGISTERED_RING: u32 = 1 << 4;

impl Drop for Uring {
    fn drop(&mut self) {
        // The registration holds a reference to the ring until the thread
        // exits; drop it now so the ring is freed with the engine. Another
        // thread's table is not ours to change.
        // SAFETY: gettid takes no arguments and touches no memory.
        if self.ring_index >= 0 && self.ring_owner == unsafe { libc::gettid() } {
            let mut up = RsrcUpdate { offset: self.ring_index as u32, resv: 0, data: 0 };
            // SAFETY: IORING_UNREGISTER_RING_FDS reads one io_uring_rsrc_update, `up`, a live local of that layout.
            unsafe {
                libc::syscall(
                    libc::SYS_io_uring_register,
                    self.ring.as_raw_fd(),
                    IORING_UNREGISTER_RING_FDS,
                    &mut up as *mut RsrcUpdate,
                    1u32,
                )
            };
        }
    }
}

impl Uring {
    /// The submission ring is full. Without SQPOLL that means more I/O was
    /// queued than `iodepth`. With SQPOLL it can happen legitimately: the
    /// kernel thread posts the completions of a batch before it moves the
    /// ring's head past it, so a slot the runner has reaped may not be free
    /// in the ring yet. Wait for the thread (IORING_ENTER_SQ_WAIT, Linux 5.10).
    #[cold]
    fn wait_for_room(&mut self, entry: &squeue::Entry) -> io::Result<()> {
        if !self.sqpoll {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "submission ring full: more I/O queued than iodepth"));
        }
        let mut busy = 0;
        loop {
            // Wakes the thread if it went idle (no system call otherwise).
            if let Err(e) = self.ring.submit() {
                again(e, Some(&mut busy))?;
            }
            if let Err(e) = self.ring.submitter().squeue_wait() {
                again(e, None)?;
            }
            // SAFETY: `entry` is the one `queue` built: its buffer is valid for its length until the I/O completes
            // (IoUnit contract) and its descriptor or fixed-file index stays open and registered while the engine runs
            // (EngineFile contract), as push requires.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
        }
    }
}

/// Build the entry for `io` with `$fd` (a `types::Fd` or `types::Fixed`).
macro_rules! sqe {
    ($self:ident, $io:ident, $fd:expr) => {{
        let (buf, len, off, slot, prio) = ($io.buf, $io.len, $io.offset, $io.slot, $io.prio);
        match $io.op {
            IoOp::Read if $self.fixedbufs => opcode::ReadFixed::new($fd, buf, len, slot as u16).offset(off).ioprio(prio).build(),
            IoOp::Read => opcode::Read::new($fd, buf, len).offset(off).ioprio(prio).build(),
            IoOp::Write if $self.fixedbufs => opcode::WriteFixed::new($fd, buf, len, slot as u16).offset(off).ioprio(prio).build(),
            IoOp::Write => opcode::Write::new($fd, buf, len).offset(off).ioprio(prio).build(),
            IoOp::Fsync => opcode::Fsync::new($fd).build(),
            IoOp::Fdatasync => opcode::Fsync::new($fd).flags(types::FsyncFlags::DATASYNC).build(),
            IoOp::Trim => unreachable!("trims are done inline by queue"),
        }
    }};
}

impl IoEngine for Uring {
    fn setup(&mut self, files: &[EngineFile], bufs: &[EngineBuf]) -> io::Result<()> {
        if !self.sqpoll {
            self.register_ring();
        }
        self.fds = files.iter().map(|f| f.fd).collect();
        self.trimmer = Trimmer::new(files);
        if self.fixedbufs {
            if bufs.len() > MAX_FIXED_BUFS {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("fixedbufs: the kernel registers at most {MAX_FIXED_BUFS} buffers; iodepth is {}", bufs.len()),
                ));
            }
            let iov: Vec<libc::iovec> = bufs.iter().map(|b| libc::iovec { iov_base: b.ptr.cast(), iov_len: b.len }).collect();
            // SAFETY: every iovec is one of the runner's buffer slots, valid for its length and neither moved nor freed
            // until after this engine (and its ring) is dropped, as registration requires.
            unsafe { self.ring.submitter().register_buffers(&iov) }.map_err(|e| {
                let hint = if e.raw_os_error() == Some(libc::ENOMEM) {
                    " (registered buffers are locked memory: raise RLIMIT_MEMLOCK, `ulimit -l`)"
                } else {
                    ""
                };
                io::Error::new(e.kind(), format!("fixedbufs: registering {} buffers failed: {e}{hint}", iov.len()))
            })?;
            self.nbufs = iov.len();
        }
        if self.registerfiles {
            self.ring
                .submitter()
                .register_files(&self.fds)
                .map_err(|e| io::Error::new(e.kind(), format!("registerfiles: registering {} files failed: {e}", self.fds.len())))?;
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let Some(&fd) = self.fds.get(io.file as usize) else {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "file index out of range"));
        };
        if io.offset > i64::MAX as u64 {
            // Would read as a negative offset, and -1 means "the file position".
            return Ok(Queued::Done(-(libc::EINVAL as i64)));
        }
        if io.op == IoOp::Trim {
            // Like fio: a block device's discard has no opcode before Linux 6.12's
            // uring_cmd, so trims are done inline, one system call each.
            return Ok(Queued::Done(self.trimmer.trim(io.file, fd, io.offset, io.len)));
        }
        if self.fixedbufs && io.slot as usize >= self.nbufs && matches!(io.op, IoOp::Read | IoOp::Write) {
            return Ok(Queued::Done(-(libc::EFAULT as i64)));
        }
        let entry: squeue::Entry = if self.registerfiles { sqe!(self, io, types::Fixed(io.file)) } else { sqe!(self, io, types::Fd(fd)) }
            .user_data(io.slot as u64);
        // SAFETY: the entry's buffer is valid for `len` bytes until this I/O completes (IoUnit contract), `fd` is one
        // of the files given to setup and open until the engine is dropped (EngineFile contract), and a fixed buffer
        // index was checked against `nbufs` above.
        if unsafe { self.ring.submission().push(&entry) }.is_err() {
            self.wait_for_room(&entry)?;
        }
        self.queued += 1;
        Ok(Queued::Pending)
    }

    fn commit(&mut self) -> io::Result<usize> {
        if self.sqpoll {
            return self.commit_sqpoll();
        }
        // GETEVENTS without a minimum, as fio's commit does: the kernel also
        // runs the deferred completion work (DEFER_TASKRUN), so what finished
        // since the last enter is in the ring when the runner reaps, and a
        // reap that finds enough there makes no system call. Without it
        // every reap is an enter (about 0.1 more per I/O at QD32 on a loop
        // device, where completions arrive one by one).
        let mut busy = 0;
        loop {
            let pending = self.ring.submission().len() as u32;
            if pending == 0 {
                break;
            }
            if let Err(e) = self.enter(pending, 0, IORING_ENTER_GETEVENTS) {
                // What stays in the ring is submitted by the next enter (reap).
                again(e, Some(&mut busy))?;
            }
        }
        Ok(std::mem::take(&mut self.queued))
    }

    fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize> {
        let min = min.min(out.len()).min(self.depth);
        if self.sqpoll {
            self.wait_sqpoll(min)?;
        } else if min > 0 {
            while self.ring.completion().len() < min {
                let pending = self.ring.submission().len() as u32;
                if let Err(e) = self.enter(pending, min as u32, IORING_ENTER_GETEVENTS) {
                    again(e, None)?;
                }
            }
        } else if self.defer_taskrun && self.ring.completion().is_empty() {
            if let Err(e) = self.enter(0, 0, IORING_ENTER_GETEVENTS) {
                again(e, None)?;
            }
        }
        Ok(self.drain(out))
    }

    /// One enter submits the batch and waits (the kernel waits only once
    /// everything was submitted); entered again only after a signal, a
    /// transient EAGAIN/EBUSY, or a kernel without SUBMIT_ALL stopping at a
    /// refused entry.
    fn commit_and_reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<(usize, usize)> {
        if self.sqpoll {
            let n = self.commit()?;
            return Ok((n, self.reap(min, out)?));
        }
        let min = min.min(out.len()).min(self.depth);
        let mut busy = 0;
        loop {
            let pending = self.ring.submission().len() as u32;
            let ready = self.ring.completion().len();
            if pending == 0 && ready >= min {
                break;
            }
            let want = if ready >= min { 0 } else { min as u32 };
            if let Err(e) = self.enter(pending, want, IORING_ENTER_GETEVENTS) {
                again(e, Some(&mut busy))?;
            }
        }
        Ok((std::mem::take(&mut self.queued), self.drain(out)))
    }
}

impl Uring {
    /// Copy the ring's completions into `out`, as many as fit.
    #[inline]
    fn drain(&mut self, out: &mut [Completion]) -> usize {
        let mut cq = self.ring.completion();
        let mut n = 0;
        while n < out.len() {
            let Some(cqe) = cq.next() else { break };
            out[n] = Completion { slot: cqe.user_data() as u32, res: cqe.result() as i64 };
            n += 1;
        }
        n
    }

    /// `commit` with SQPOLL: the kernel thread consumes the ring; a system
    /// call is needed only to wake it.
    fn commit_sqpoll(&mut self) -> io::Result<usize> {
        let mut busy = 0;
        loop {
            match self.ring.submit() {
                Ok(_) => break,
                Err(e) => again(e, Some(&mut busy))?,
            }
        }
        Ok(std::mem::take(&mut self.queued))
    }

    fn wait_sqpoll(&mut self, min: usize) -> io::Result<()> {
        while min > 0 && self.ring.completion().len() < min {
            if let Err(e) = self.ring.submit_and_wait(min) {
                again(e, None)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::EngineOptions;
    use std::alloc::{alloc_zeroed, dealloc, Layout};
    use std::fs::{File, OpenOptions};
    use std::os::unix::fs::OpenOptionsExt;

    const BS: usize = 8192;

    struct Bufs {
        ptr: *mut u8,
        layout: Layout,
        n: usize,
    }
    impl Bufs {
        fn new(n: usize) -> Bufs {
            assert!(n >= 1);
            let layout = Layout::from_size_align(n * BS, 4096).unwrap();
            // SAFETY: `n >= 1` (asserted), so the layout's size n * BS is non-zero, as alloc_zeroed requires; null is
            // checked next.
            let ptr = unsafe { alloc_zeroed(layout) };
            assert!(!ptr.is_null());
            Bufs { ptr, layout, n }
        }
        // Test helper: distinct slots never overlap, and a slot is only looked at
        // while the engine is not using it.
        #[allow(clippy::mut_from_ref)]
        fn slot(&self, i: usize) -> &mut [u8] {
            assert!(i < self.n);
            // SAFETY: `i < n` (asserted) keeps the slot's BS bytes inside the zero-initialised n * BS allocation; slots
            // do not overlap, and the tests look at a slot only while the engine does not use it (see above).
            unsafe { std::slice::from_raw_parts_mut(self.ptr.add(i * BS), BS) }
        }
        fn engine_bufs(&self) -> Vec<EngineBuf> {
            (0..self.n).map(|i| EngineBuf { ptr: self.slot(i).as_mut_ptr(), len: BS }).collect()
        }
    }
    impl Drop for Bufs {
        fn drop(&mut self) {
            // SAFETY: `ptr` came from alloc_zeroed with this same `layout` in `new` and is freed once, here.
            unsafe { dealloc(self.ptr, self.layout) }
        }
    }

    fn pattern(off: u64, buf: &mut [u8]) {
        for (i, b) in buf.iter_mut().enumerate() {
            let x = off + i as u64;
            *b = (x.wrapping_mul(2654435761) >> 13) as u8 ^ (x >> 12) as u8;
        }
    }

    /// The engine, or None (with the reason printed) where io_uring is unavailable.
    fn make(depth: u32, o: &EngineOptions) -> Option<Box<dyn IoEngine>> {
        match (IMPL.make)(&EngineConfig { iodepth: depth, options: o }) {
            Ok(e) => Some(e),
            Err(e) => {
                eprintln!("skipping: io_uring unavailable here: {e}");
                None
            }
        }
    }

    fn open(path: &std::path::Path, direct: bool) -> File {
        let flags = if direct { libc::O_DIRECT } else { 0 };
        OpenOptions::new().read(true).write(true).create(true).custom_flags(flags).open(path).unwrap()
    }

    fn check(bufs: &Bufs, op: IoOp, off: u64, slot: u32, res: i64, expect: &mut [u8]) {
        assert_eq!(res, BS as i64, "{op:?} at {off}");
        if op == IoOp::Read {
            pattern(off, expect);
            assert!(bufs.slot(slot as usize) == expect, "data mismatch at {off}");
        }
    }

    fn drive(e: &mut dyn IoEngine, bufs: &Bufs, op: IoOp, blocks: u64) {
        let depth = bufs.n;
        let mut free: Vec<u32> = (0..depth as u32).collect();
        let mut offs = vec![0u64; depth];
        let mut comps = vec![Completion::default(); depth];
        let mut expect = vec![0u8; BS];
        let (mut next, mut inflight) = (0u64, 0usize);
        while next < blocks || inflight > 0 {
            let mut queued = 0;
            while next < blocks {
                let Some(slot) = free.pop() else { break };
                let off = next * BS as u64;
                let b = bufs.slot(slot as usize);
                if op == IoOp::Write {
                    pattern(off, b);
                } else {
                    b.fill(0);
                }
                offs[slot as usize] = off;
                let io = IoUnit { op, file: 0, offset: off, len: BS as u32, buf: b.as_mut_ptr(), slot, prio: 0 };
                match e.queue(&io).unwrap() {
                    Queued::Done(r) => {
                        check(bufs, op, off, slot, r, &mut expect);
                        free.push(slot);
                    }
                    Queued::Pending => {
                        queued += 1;
                        inflight += 1;
                    }
                }
                next += 1;
            }
            if queued > 0 {
                assert_eq!(e.commit().unwrap(), queued);
            }
            if inflight > 0 {
                let n = e.reap(1, &mut comps).unwrap();
                assert!(n >= 1);
                for c in &comps[..n] {
                    inflight -= 1;
                    check(bufs, op, offs[c.slot as usize], c.slot, c.res, &mut expect);
                    free.push(c.slot);
                }
            }
        }
    }

    fn one(e: &mut dyn IoEngine, io: IoUnit) -> i64 {
        match e.queue(&io).unwrap() {
            Queued::Done(r) => r,
            Queued::Pending => {
                assert_eq!(e.commit().unwrap(), 1);
                let mut c = [Completion::default()];
                assert_eq!(e.reap(1, &mut c).unwrap(), 1);
                assert_eq!(c[0].slot, io.slot);
                c[0].res
            }
        }
    }

    fn roundtrip(depth: u32, direct: bool, o: EngineOptions) {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("data");
        let blocks = depth as u64 * 5 + 3;
        let size = blocks * BS as u64;
        let bufs = Bufs::new(depth as usize);
        {
            let f = open(&path, direct);
            f.set_len(size).unwrap();
            let Some(mut e) = make(depth, &o) else { return };
            e.setup(&[EngineFile { fd: f.as_raw_fd(), size, writable: true }], &bufs.engine_bufs()).unwrap();
            drive(e.as_mut(), &bufs, IoOp::Write, blocks);
            let sync = IoUnit { op: IoOp::Fsync, file: 0, offset: 0, len: 0, buf: bufs.ptr, slot: 0, prio: 0 };
            assert_eq!(one(e.as_mut(), sync), 0);
        }
        let f = open(&path, direct);
        let Some(mut e) = make(depth, &o) else { return };
        e.setup(&[EngineFile { fd: f.as_raw_fd(), size, writable: false }], &bufs.engine_bufs()).unwrap();
        drive(e.as_mut(), &bufs, IoOp::Read, blocks);
        let data = std::fs::read(&path).unwrap();
        let mut expect = vec![0u8; BS];
        for (i, chunk) in data.chunks(BS).enumerate() {
            pattern((i * BS) as u64, &mut expect);
            assert!(chunk == &expect[..], "file content at block {i}");
        }
    }

    fn plain() -> EngineOptions {
        EngineOptions::default()
    }

    #[test]
    fn roundtrip_buffered_qd4() {
        roundtrip(4, false, plain());
    }
    #[test]
    fn roundtrip_buffered_qd32() {
        roundtrip(32, false, plain());
    }
    #[test]
    fn roundtrip_direct_qd4() {
        roundtrip(4, true, plain());
    }
    #[test]
    fn roundtrip_direct_qd32() {
        roundtrip(32, true, plain());
    }
    #[test]
    fn roundtrip_odd_depth() {
        // 5 rounds up to a ring of 8 entries.
        roundtrip(5, true, plain());
    }
    #[test]
    fn roundtrip_fixedbufs() {
        for (depth, direct) in [(4, false), (32, true)] {
            roundtrip(depth, direct, EngineOptions { fixedbufs: true, ..plain() });
        }
    }
    #[test]
    fn roundtrip_registerfiles() {
        for (depth, direct) in [(4, false), (32, true)] {
            roundtrip(depth, direct, EngineOptions { registerfiles: true, ..plain() });
        }
    }
    #[test]
    fn roundtrip_fixedbufs_and_registerfiles() {
        roundtrip(32, true, EngineOptions { fixedbufs: true, registerfiles: true, ..plain() });
    }
    #[test]
    fn roundtrip_sqpoll() {
        let o = EngineOptions { sqthread_poll: true, ..plain() };
        if let Err(e) = (IMPL.make)(&EngineConfig { iodepth: 4, options: &o }) {
            // Must be a clear error, not a panic; skip the data check.
            assert!(e.to_string().contains("sqthread_poll"), "{e}");
            eprintln!("skipping: {e}");
            return;
        }
        roundtrip(4, true, o.clone());
        roundtrip(32, false, EngineOptions { fixedbufs: true, registerfiles: true, ..o });
    }

    #[test]
    fn fsync_and_fdatasync_complete_with_zero() {
        for o in [plain(), EngineOptions { registerfiles: true, ..plain() }] {
            let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
            let f = open(&dir.path().join("s"), false);
            let bufs = Bufs::new(2);
            let Some(mut e) = make(2, &o) else { return };
            e.setup(&[EngineFile { fd: f.as_raw_fd(), size: BS as u64, writable: true }], &bufs.engine_bufs()).unwrap();
            pattern(0, bufs.slot(0));
            let w = IoUnit { op: IoOp::Write, file: 0, offset: 0, len: BS as u32, buf: bufs.ptr, slot: 0, prio: 0 };
            assert_eq!(one(e.as_mut(), w), BS as i64);
            for op in [IoOp::Fsync, IoOp::Fdatasync] {
                let s = IoUnit { op, file: 0, offset: 0, len: 0, buf: bufs.ptr, slot: 1, prio: 0 };
                assert_eq!(one(e.as_mut(), s), 0, "{op:?}");
            }
        }
    }

    #[test]
    fn bad_io_completes_with_negative_errno() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let f = open(&dir.path().join("bad"), true);
        f.set_len(4 * BS as u64).unwrap();
        let bufs = Bufs::new(4);
        let Some(mut e) = make(4, &plain()) else { return };
        let files = [
            EngineFile { fd: f.as_raw_fd(), size: 4 * BS as u64, writable: true },
            EngineFile { fd: -1, size: 4 * BS as u64, writable: true },
        ];
        e.setup(&files, &bufs.engine_bufs()).unwrap();
        let io = |slot: u32, file: u32, offset: u64, len: u32| IoUnit {
            op: IoOp::Read,
            file,
            offset,
            len,
            buf: bufs.slot(slot as usize).as_mut_ptr(),
            slot,
            prio: 0,
        };
        // good, bad fd, unmapped buffer, good: in one batch.
        let unmapped = IoUnit { buf: 8 as *mut u8, ..io(2, 0, 0, BS as u32) };
        for u in [io(0, 0, 0, BS as u32), io(1, 1, 0, BS as u32), unmapped, io(3, 0, BS as u64, BS as u32)] {
            assert_eq!(e.queue(&u).unwrap(), Queued::Pending);
        }
        assert_eq!(e.commit().unwrap(), 4);
        let mut res = [0i64; 4];
        let mut comps = [Completion::default(); 4];
        let mut got = 0;
        while got < 4 {
            let n = e.reap(1, &mut comps).unwrap();
            for c in &comps[..n] {
                res[c.slot as usize] = c.res;
            }
            got += n;
        }
        assert_eq!(res, [BS as i64, -(libc::EBADF as i64), -(libc::EFAULT as i64), BS as i64]);
        // An offset past i64::MAX is refused without reaching the kernel.
        assert_eq!(one(e.as_mut(), io(0, 0, u64::MAX, BS as u32)), -(libc::EINVAL as i64));
        assert_eq!(one(e.as_mut(), io(0, 0, u64::MAX - 4095, BS as u32)), -(libc::EINVAL as i64));
    }

    #[test]
    fn full_depth_in_flight_before_reaping() {
        for (depth, o) in [(4u32, plain()), (32, plain()), (32, EngineOptions { fixedbufs: true, registerfiles: true, ..plain() })] {
            let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
            let path = dir.path().join("qd");
            std::fs::write(&path, vec![7u8; depth as usize * BS]).unwrap();
            let f = open(&path, true);
            let bufs = Bufs::new(depth as usize);
            let Some(mut e) = make(depth, &o) else { return };
            e.setup(&[EngineFile { fd: f.as_raw_fd(), size: depth as u64 * BS as u64, writable: true }], &bufs.engine_bufs()).unwrap();
            for s in 0..depth {
                let u = IoUnit {
                    op: IoOp::Read,
                    file: 0,
                    offset: s as u64 * BS as u64,
                    len: BS as u32,
                    buf: bufs.slot(s as usize).as_mut_ptr(),
                    slot: s,
                    prio: 0,
                };
                assert_eq!(e.queue(&u).unwrap(), Queued::Pending);
            }
            assert_eq!(e.commit().unwrap(), depth as usize);
            let mut comps = vec![Completion::default(); depth as usize];
            assert_eq!(e.reap(depth as usize, &mut comps).unwrap(), depth as usize);
            let mut seen = vec![false; depth as usize];
            for c in &comps {
                assert_eq!(c.res, BS as i64);
                seen[c.slot as usize] = true;
            }
            assert!(seen.iter().all(|&s| s));
            assert!(bufs.slot(depth as usize - 1).iter().all(|&b| b == 7));
            assert_eq!(e.reap(0, &mut comps).unwrap(), 0);
        }
    }

    #[test]
    fn reap_respects_out_len() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("small");
        std::fs::write(&path, vec![3u8; 8 * BS]).unwrap();
        let f = open(&path, false);
        let bufs = Bufs::new(8);
        let Some(mut e) = make(8, &plain()) else { return };
        e.setup(&[EngineFile { fd: f.as_raw_fd(), size: 8 * BS as u64, writable: false }], &bufs.engine_bufs()).unwrap();
        for s in 0..8u32 {
            let buf = bufs.slot(s as usize).as_mut_ptr();
            let u = IoUnit { op: IoOp::Read, file: 0, offset: s as u64 * BS as u64, len: BS as u32, buf, slot: s, prio: 0 };
            e.queue(&u).unwrap();
        }
        e.commit().unwrap();
        let mut comps = [Completion::default(); 3];
        let mut total = 0;
        while total < 8 {
            let n = e.reap(1, &mut comps).unwrap();
            assert!(n <= 3);
            total += n;
        }
        assert_eq!(total, 8);
    }

    /// Not an assertion: how much of a batch the kernel finished inside the
    /// submit call.
    #[test]
    fn report_inline_completion() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("inline");
        std::fs::write(&path, vec![1u8; 16 * BS]).unwrap();
        for (direct, op) in [(false, IoOp::Read), (false, IoOp::Write), (true, IoOp::Read), (true, IoOp::Write), (false, IoOp::Fsync)] {
            let f = open(&path, direct);
            let bufs = Bufs::new(16);
            let Some(mut e) = make(16, &plain()) else { return };
            e.setup(&[EngineFile { fd: f.as_raw_fd(), size: 16 * BS as u64, writable: true }], &bufs.engine_bufs()).unwrap();
            let n = if op == IoOp::Fsync { 1 } else { 16 };
            for s in 0..n {
                let len = if op == IoOp::Fsync { 0 } else { BS as u32 };
                let buf = bufs.slot(s).as_mut_ptr();
                let u = IoUnit { op, file: 0, offset: (s * BS) as u64, len, buf, slot: s as u32, prio: 0 };
                assert_eq!(e.queue(&u).unwrap(), Queued::Pending);
            }
            e.commit().unwrap();
            let mut comps = vec![Completion::default(); 16];
            let ready = e.reap(0, &mut comps).unwrap();
            let mut rest = 0;
            while ready + rest < n {
                rest += e.reap(n - ready - rest, &mut comps[ready + rest..]).unwrap();
            }
            eprintln!("io_uring direct={direct} {op:?}: {ready} of {n} complete when io_uring_enter returned");
        }
    }

    /// The concrete engine (for its counters), or None with the reason printed.
    fn make_uring(depth: u32) -> Option<Uring> {
        match Uring::new(&EngineConfig { iodepth: depth, options: &plain() }) {
            Ok(e) => Some(e),
            Err(e) => {
                eprintln!("skipping: io_uring unavailable here: {e}");
                None
            }
        }
    }

    fn read_at(bufs: &Bufs, slot: u32, block: u64) -> IoUnit {
        let buf = bufs.slot(slot as usize).as_mut_ptr();
        IoUnit { op: IoOp::Read, file: 0, offset: block * BS as u64, len: BS as u32, buf, slot, prio: 0 }
    }

    /// With DEFER_TASKRUN a finished I/O's completion waits in the kernel
    /// until the thread enters with GETEVENTS. `commit` does (as fio's
    /// does), so the next `reap` finds the completion in the ring and makes
    /// no system call.
    #[test]
    fn commit_posts_deferred_completions_so_reap_needs_no_enter() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("deferred");
        std::fs::write(&path, vec![5u8; 2 * BS]).unwrap();
        File::open(&path).unwrap().sync_all().unwrap();
        let f = open(&path, true);
        let bufs = Bufs::new(2);
        let Some(mut e) = make_uring(2) else { return };
        if !e.defer_taskrun {
            eprintln!("skipping: the kernel has no IORING_SETUP_DEFER_TASKRUN (Linux 6.1)");
            return;
        }
        e.setup(&[EngineFile { fd: f.as_raw_fd(), size: 2 * BS as u64, writable: false }], &bufs.engine_bufs()).unwrap();
        assert_eq!(e.queue(&read_at(&bufs, 0, 0)).unwrap(), Queued::Pending);
        assert_eq!(e.commit().unwrap(), 1);
        // Long enough for one direct 8 KiB read from the test's own disk.
        std::thread::sleep(std::time::Duration::from_millis(300));
        if !e.ring.completion().is_empty() {
            eprintln!("skipping: the direct read completed inside the submit call here, nothing was deferred");
            return;
        }
        assert_eq!(e.queue(&read_at(&bufs, 1, 1)).unwrap(), Queued::Pending);
        assert_eq!(e.commit().unwrap(), 1);
        let before = e.enters;
        let mut comps = [Completion::default(); 2];
        let n = e.reap(1, &mut comps).unwrap();
        assert!(n >= 1);
        assert_eq!(e.enters, before, "reap entered the kernel although commit had posted the first read's completion");
        assert!(comps[..n].iter().any(|c| c.slot == 0));
        let mut got = n;
        while got < 2 {
            got += e.reap(1, &mut comps[got..]).unwrap();
        }
        for c in &comps {
            assert_eq!(c.res, BS as i64, "slot {}", c.slot);
        }
        assert!(bufs.slot(0).iter().chain(bufs.slot(1).iter()).all(|&b| b == 5));
    }

    /// `commit_and_reap` submits a batch and waits for it in one
    /// `io_uring_enter`; `commit` then `reap` of cached reads also needs
    /// only one, since the completions are there when `reap` looks.
    #[test]
    fn commit_and_reap_is_one_enter() {
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("cached");
        std::fs::write(&path, vec![9u8; 4 * BS]).unwrap();
        // Buffered reads of pages just written complete inside the submit.
        let f = open(&path, false);
        let bufs = Bufs::new(4);
        let Some(mut e) = make_uring(4) else { return };
        e.setup(&[EngineFile { fd: f.as_raw_fd(), size: 4 * BS as u64, writable: false }], &bufs.engine_bufs()).unwrap();
        let mut comps = [Completion::default(); 4];
        for round in 0..3 {
            for s in 0..4 {
                assert_eq!(e.queue(&read_at(&bufs, s, s as u64)).unwrap(), Queued::Pending);
            }
            let before = (e.enters, e.waits);
            let n = if round == 2 {
                assert_eq!(e.commit().unwrap(), 4);
                e.reap(4, &mut comps).unwrap()
            } else {
                let (sub, n) = e.commit_and_reap(4, &mut comps).unwrap();
                assert_eq!(sub, 4);
                assert_eq!(e.waits - before.1, 1, "round {round}: the submit carried the wait");
                n
            };
            assert_eq!(n, 4, "round {round}");
            assert_eq!(e.enters - before.0, 1, "round {round}: system calls for 4 I/Os");
            let mut seen = [false; 4];
            for c in &comps {
                assert_eq!(c.res, BS as i64);
                seen[c.slot as usize] = true;
            }
            assert!(seen.iter().all(|&x| x), "round {round}");
        }
        // Direct reads complete later: still all four, through the same call.
        let f = open(&path, true);
        let Some(mut e) = make_uring(4) else { return };
        e.setup(&[EngineFile { fd: f.as_raw_fd(), size: 4 * BS as u64, writable: false }], &bufs.engine_bufs()).unwrap();
        for s in 0..4 {
            e.queue(&read_at(&bufs, s, s as u64)).unwrap();
        }
        let (sub, n) = e.commit_and_reap(4, &mut comps).unwrap();
        assert_eq!((sub, n), (4, 4));
        assert!(comps.iter().all(|c| c.res == BS as i64));
    }

    /// Each engine registers its ring for the thread and gives the slot back
    /// when dropped: a thread has 16 slots, and 40 engines in a row all get
    /// one (without the unregistering the 17th would not, and every ring
    /// would live until the thread exits).
    #[test]
    fn registered_ring_slot_is_released_on_drop() {
        let bufs = Bufs::new(1);
        let dir = tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).unwrap();
        let path = dir.path().join("reg");
        std::fs::write(&path, vec![1u8; BS]).unwrap();
        let f = open(&path, false);
        for i in 0..40 {
            let Some(mut e) = make_uring(1) else { return };
            e.setup(&[EngineFile { fd: f.as_raw_fd(), size: BS as u64, writable: false }], &bufs.engine_bufs()).unwrap();
            if i == 0 && e.ring_index < 0 {
                eprintln!("skipping: the kernel cannot register ring descriptors (Linux 5.18)");
                return;
            }
            assert!(e.ring_index >= 0, "engine {i} got no registered ring slot");
            // And enters through the index work.
            let mut one = [Completion::default()];
            let (sub, n) = e.commit_and_reap(0, &mut one).unwrap();
            assert_eq!((sub, n), (0, 0));
            assert_eq!(one_read(&mut e, &bufs), BS as i64);
        }
    }

    fn one_read(e: &mut Uring, bufs: &Bufs) -> i64 {
        assert_eq!(e.queue(&read_at(bufs, 0, 0)).unwrap(), Queued::Pending);
        let mut c = [Completion::default()];
        assert_eq!(e.commit_and_reap(1, &mut c).unwrap(), (1, 1));
        c[0].res
    }
}
