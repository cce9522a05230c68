//! io_uring: the `io-uring` crate's raw rings, no runtime.
//!
//! `queue` writes one SQE (user_data = buffer slot) into the shared
//! submission ring without a system call, `commit` is one `io_uring_enter`
//! for the whole batch, and `reap` reads completions straight from the shared
//! completion ring, entering the kernel only when it has to wait. With
//! `sqthread_poll` a kernel thread consumes the SQ, so even `commit` usually
//! makes no system call.
//!
//! Options (fio's names): `fixedbufs` registers the slot buffers once and
//! uses READ_FIXED/WRITE_FIXED (no page pinning per I/O), `registerfiles`
//! registers the descriptors (no fd table lookup per I/O), `sqthread_poll`
//! starts the kernel SQ polling thread (root/CAP_SYS_NICE before Linux 5.11).
//!
//! Kernel quirks worth knowing:
//! * Unlike libaio, buffered I/O is not done inline: what cannot complete
//!   without blocking (a page-cache miss, a write needing allocation) is
//!   punted to io-wq worker threads, which run in parallel — so a buffered
//!   queue depth above one does add concurrency, paid for in kernel threads.
//! * An SQE that fails while the kernel prepares it (e.g. a bad fixed-file
//!   index) makes `io_uring_enter` stop consuming the SQ right after it (its
//!   error still arrives as a CQE); `commit` enters again for the rest.
//! * An offset of -1 (u64::MAX) means "the file position" to io_uring, so
//!   offsets above i64::MAX are refused in `queue` with -EINVAL.

use super::*;
use ::io_uring::{opcode, squeue, types};

/// Idle time before the SQ polling thread sleeps (the kernel's own default).
const SQPOLL_IDLE_MS: u32 = 1000;

pub struct IoUring {
    ring: ::io_uring::IoUring,
    fixedbufs: bool,
    registerfiles: bool,
    sqpoll: bool,
    fds: Vec<RawFd>,
    /// Pushed since the last commit.
    queued: usize,
    /// Committed and not reaped yet.
    in_flight: usize,
    /// A commit left SQEs in the ring (EAGAIN/EBUSY); the next reap enters.
    unsubmitted: bool,
}

pub const INFO: EngineInfo = EngineInfo {
    name: "io_uring",
    help: "Linux io_uring; options fixedbufs, registerfiles, sqthread_poll",
    caps: Caps { is_async: true, diskless: false, inline_when_buffered: false, mapped: false },
    make,
};

fn make(cfg: &EngineConfig) -> io::Result<Box<dyn IoEngine>> {
    Ok(Box::new(IoUring::new(cfg)?))
}

fn os_err(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

fn with_context(e: io::Error, what: &str, hint: &str) -> io::Error {
    io::Error::new(e.kind(), format!("io_uring: {what}: {e}{hint}"))
}

impl IoUring {
    fn new(cfg: &EngineConfig) -> io::Result<IoUring> {
        let o = cfg.options;
        let depth = cfg.iodepth.max(1);
        let entries = depth.checked_next_power_of_two().unwrap_or(u32::MAX);
        let mut builder = ::io_uring::IoUring::builder();
        if o.sqthread_poll {
            builder.setup_sqpoll(SQPOLL_IDLE_MS);
        }
        let ring = builder.build(entries).map_err(|e| {
            let hint = match os_err(&e) {
                libc::EPERM if o.sqthread_poll => {
                    " (sqthread_poll needs root or CAP_SYS_NICE before Linux 5.11; or io_uring is disabled by kernel.io_uring_disabled)"
                }
                libc::EPERM => " (io_uring is disabled by kernel.io_uring_disabled or a seccomp filter)",
                libc::ENOSYS => " (kernel without io_uring, or blocked by a seccomp filter)",
                libc::EINVAL => " (iodepth above the kernel's 32768 ring entries?)",
                libc::ENOMEM => " (RLIMIT_MEMLOCK too low for the ring on kernels before 5.12)",
                _ => "",
            };
            with_context(e, &format!("ring setup with {entries} entries failed"), hint)
        })?;
        Ok(IoUring {
            ring,
            fixedbufs: o.fixedbufs,
            registerfiles: o.registerfiles,
            sqpoll: o.sqthread_poll,
            fds: Vec::new(),
            queued: 0,
            in_flight: 0,
            unsubmitted: false,
        })
    }

    /// Enter the kernel for SQEs still in the ring; waits for `want` CQEs.
    #[inline]
    fn enter(&mut self, want: usize) -> io::Result<()> {
        match self.ring.submit_and_wait(want) {
            Ok(_) => {
                self.unsubmitted = !self.sqpoll && !self.ring.submission().is_empty();
                Ok(())
            }
            // Interrupted, or the kernel wants us to drain the CQ first (EBUSY)
            // or is short of memory (EAGAIN): the caller drains and retries.
            Err(e) if matches!(os_err(&e), libc::EINTR | libc::EBUSY | libc::EAGAIN) => {
                self.unsubmitted = !self.sqpoll && !self.ring.submission().is_empty();
                Ok(())
            }
            Err(e) => Err(with_context(e, "io_uring_enter", "")),
        }
    }

    /// Move ready CQEs into `out`.
    #[inline]
    fn drain(&mut self, out: &mut [Completion]) -> usize {
        let mut n = 0;
        for (o, cqe) in out.iter_mut().zip(self.ring.completion()) {
            *o = Completion { slot: cqe.user_data() as u32, res: cqe.result() as i64 };
            n += 1;
        }
        self.in_flight -= n;
        n
    }
}

impl IoEngine for IoUring {
    fn name(&self) -> &'static str {
        INFO.name
    }
    fn caps(&self) -> Caps {
        INFO.caps
    }

    fn setup(&mut self, files: &[EngineFile], bufs: &[EngineBuf]) -> io::Result<()> {
        self.fds = files.iter().map(|f| f.fd).collect();
        let submitter = self.ring.submitter();
        if self.fixedbufs && !bufs.is_empty() {
            if bufs.len() > u16::MAX as usize + 1 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "io_uring: fixedbufs allows at most 65536 buffers",
                ));
            }
            let iov: Vec<libc::iovec> =
                bufs.iter().map(|b| libc::iovec { iov_base: b.ptr.cast(), iov_len: b.len }).collect();
            // SAFETY: the runner keeps the buffers alive for the engine's lifetime.
            unsafe { submitter.register_buffers(&iov) }.map_err(|e| {
                let hint = match os_err(&e) {
                    libc::ENOMEM => " (pinned buffers exceed RLIMIT_MEMLOCK; raise `ulimit -l`)",
                    libc::EFAULT => " (buffers must be ordinary anonymous or file-backed memory)",
                    _ => "",
                };
                with_context(e, &format!("fixedbufs: registering {} buffers failed", bufs.len()), hint)
            })?;
        }
        if self.registerfiles && !self.fds.is_empty() {
            submitter.register_files(&self.fds).map_err(|e| {
                with_context(e, &format!("registerfiles: registering {} files failed", self.fds.len()), "")
            })?;
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let Some(&fd) = self.fds.get(io.file as usize) else {
            return Ok(Queued::Done(-(libc::EBADF as i64)));
        };
        if io.offset > i64::MAX as u64 {
            return Ok(Queued::Done(-(libc::EINVAL as i64)));
        }
        let fixedbufs = self.fixedbufs;
        macro_rules! sqe {
            ($target:expr) => {
                match io.op {
                    IoOp::Read if fixedbufs => {
                        opcode::ReadFixed::new($target, io.buf, io.len, io.slot as u16).offset(io.offset).build()
                    }
                    IoOp::Read => opcode::Read::new($target, io.buf, io.len).offset(io.offset).build(),
                    IoOp::Write if fixedbufs => {
                        opcode::WriteFixed::new($target, io.buf, io.len, io.slot as u16).offset(io.offset).build()
                    }
                    IoOp::Write => opcode::Write::new($target, io.buf, io.len).offset(io.offset).build(),
                    IoOp::Fsync => opcode::Fsync::new($target).build(),
                    IoOp::Fdatasync => opcode::Fsync::new($target).flags(types::FsyncFlags::DATASYNC).build(),
                }
            };
        }
        let sqe: squeue::Entry = if self.registerfiles { sqe!(types::Fixed(io.file)) } else { sqe!(types::Fd(fd)) }
            .user_data(io.slot as u64);
        // SAFETY: the buffer stays valid until the I/O completes (IoUnit contract).
        if unsafe { self.ring.submission().push(&sqe) }.is_err() {
            return Err(io::Error::other("io_uring: submission queue full (more I/Os than iodepth)"));
        }
        self.queued += 1;
        Ok(Queued::Pending)
    }

    fn commit(&mut self) -> io::Result<usize> {
        let n = std::mem::take(&mut self.queued);
        if n == 0 {
            return Ok(0);
        }
        self.in_flight += n;
        loop {
            match self.ring.submit() {
                Ok(_) => {}
                Err(e) if os_err(&e) == libc::EINTR => continue,
                Err(e) if matches!(os_err(&e), libc::EBUSY | libc::EAGAIN) => {
                    // The rest goes in with the next enter (reap).
                    self.unsubmitted = true;
                    break;
                }
                Err(e) => return Err(with_context(e, "io_uring_enter (submit)", "")),
            }
            // The kernel stops consuming after an SQE that failed in prep; go on.
            if self.sqpoll || self.ring.submission().is_empty() {
                self.unsubmitted = false;
                break;
            }
        }
        Ok(n)
    }

    fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize> {
        let min = min.min(self.in_flight).min(out.len());
        if self.unsubmitted {
            self.enter(0)?;
        }
        let mut n = self.drain(out);
        while n < min {
            self.enter(min - n)?;
            n += self.drain(&mut out[n..]);
        }
        Ok(n)
    }
}

impl Drop for IoUring {
    fn drop(&mut self) {
        // Closing the ring does not wait for I/Os in flight; wait here so the
        // kernel never writes into buffers the runner frees after us.
        // Queued-but-uncommitted SQEs would go in with the first enter below.
        self.in_flight += std::mem::take(&mut self.queued);
        let mut sink = [Completion::default(); 64];
        while self.in_flight > 0 {
            if self.enter(1).is_err() {
                break;
            }
            self.drain(&mut sink);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::job::EngineOptions;
    use std::alloc::{alloc_zeroed, dealloc, Layout};
    use std::fs::{File, OpenOptions};
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::Path;

    const BS: usize = 4096;

    /// `n` buffers of `BS` bytes, 4096-aligned so O_DIRECT accepts them.
    struct Bufs {
        ptrs: Vec<*mut u8>,
        layout: Layout,
    }

    impl Bufs {
        fn new(n: usize) -> Bufs {
            let layout = Layout::from_size_align(BS, 4096).unwrap();
            let ptrs = (0..n)
                .map(|_| {
                    let p = unsafe { alloc_zeroed(layout) };
                    assert!(!p.is_null());
                    p
                })
                .collect();
            Bufs { ptrs, layout }
        }
        fn engine_bufs(&self) -> Vec<EngineBuf> {
            self.ptrs.iter().map(|&ptr| EngineBuf { ptr, len: BS }).collect()
        }
        fn get(&mut self, i: usize) -> &mut [u8] {
            unsafe { std::slice::from_raw_parts_mut(self.ptrs[i], BS) }
        }
    }

    impl Drop for Bufs {
        fn drop(&mut self) {
            for &p in &self.ptrs {
                unsafe { dealloc(p, self.layout) };
            }
        }
    }

    fn pattern(off: u64) -> u8 {
        (off ^ (off >> 12).wrapping_mul(131) ^ 0x5a) as u8
    }

    fn tmpfile(size: u64) -> tempfile::NamedTempFile {
        let f = tempfile::NamedTempFile::new_in(std::env::temp_dir()).unwrap();
        f.as_file().set_len(size).unwrap();
        f
    }

    /// Open read-write, with O_DIRECT if asked; `None` (and a note) if the
    /// file system refuses O_DIRECT.
    fn open(path: &Path, direct: bool) -> Option<File> {
        let flags = if direct { libc::O_DIRECT } else { 0 };
        match OpenOptions::new().read(true).write(true).custom_flags(flags).open(path) {
            Ok(f) => Some(f),
            Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => {
                eprintln!("skipping O_DIRECT case: {} does not support it", path.display());
                None
            }
            Err(e) => panic!("open {}: {e}", path.display()),
        }
    }

    fn unit(op: IoOp, file: u32, offset: u64, buf: *mut u8, slot: u32) -> IoUnit {
        let len = if matches!(op, IoOp::Read | IoOp::Write) { BS as u32 } else { 0 };
        IoUnit { op, file, offset, len, buf, slot }
    }

    /// Queue a batch (distinct slots 0..n), commit, reap everything; the
    /// result of each I/O indexed by slot.
    fn run(eng: &mut dyn IoEngine, ios: &[IoUnit]) -> Vec<i64> {
        let mut res = vec![i64::MIN; ios.len()];
        let mut pending = 0;
        for io in ios {
            match eng.queue(io).unwrap() {
                Queued::Done(r) => res[io.slot as usize] = r,
                Queued::Pending => pending += 1,
            }
        }
        assert_eq!(eng.commit().unwrap(), pending);
        let mut out = vec![Completion::default(); ios.len()];
        while pending > 0 {
            let n = eng.reap(1, &mut out).unwrap();
            assert!(n >= 1 && n <= pending);
            for c in &out[..n] {
                assert_eq!(res[c.slot as usize], i64::MIN, "slot {} completed twice", c.slot);
                res[c.slot as usize] = c.res;
            }
            pending -= n;
        }
        res
    }

    /// Write a pattern in scattered batches of `depth`, fsync, check the file
    /// independently, read it back through the engine and compare.
    fn roundtrip(mk: impl Fn(u32) -> Option<Box<dyn IoEngine>>, depth: usize, direct: bool) {
        let rounds = 3;
        let size = (depth * rounds * BS) as u64;
        let tmp = tmpfile(size);
        let Some(file) = open(tmp.path(), direct) else { return };
        let mut bufs = Bufs::new(depth);
        // Declared after the buffers, so dropped (and quiesced) before them.
        let Some(mut eng) = mk(depth as u32) else { return };
        let eng = &mut *eng;
        let files = [EngineFile { fd: file.as_raw_fd(), size, writable: true }];
        eng.setup(&files, &bufs.engine_bufs()).unwrap();
        // Round r, slot i covers block i*rounds + r: every batch is scattered.
        let off = |i: usize, r: usize| ((i * rounds + r) * BS) as u64;
        for r in 0..rounds {
            let ios: Vec<IoUnit> = (0..depth)
                .map(|i| {
                    let o = off(i, r);
                    for (k, b) in bufs.get(i).iter_mut().enumerate() {
                        *b = pattern(o + k as u64);
                    }
                    unit(IoOp::Write, 0, o, bufs.ptrs[i], i as u32)
                })
                .collect();
            assert!(run(eng, &ios).iter().all(|&r| r == BS as i64));
        }
        let res = run(eng, &[unit(IoOp::Fsync, 0, 0, bufs.ptrs[0], 0)]);
        assert_eq!(res[0], 0, "fsync");
        let on_disk = std::fs::read(tmp.path()).unwrap();
        assert_eq!(on_disk.len() as u64, size);
        assert!(on_disk.iter().enumerate().all(|(o, &b)| b == pattern(o as u64)), "file content");
        for r in 0..rounds {
            let ios: Vec<IoUnit> = (0..depth)
                .map(|i| {
                    bufs.get(i).fill(0);
                    unit(IoOp::Read, 0, off(i, r), bufs.ptrs[i], i as u32)
                })
                .collect();
            assert!(run(eng, &ios).iter().all(|&r| r == BS as i64));
            for i in 0..depth {
                let o = off(i, r);
                assert!(bufs.get(i).iter().enumerate().all(|(k, &b)| b == pattern(o + k as u64)), "block at {o}");
            }
        }
    }

    fn opts(fixedbufs: bool, registerfiles: bool, sqthread_poll: bool) -> EngineOptions {
        EngineOptions { fixedbufs, registerfiles, sqthread_poll, ..EngineOptions::default() }
    }

    /// The engine, or `None` with a printed reason when the sandbox has no io_uring.
    fn engine_with(depth: u32, o: &EngineOptions) -> Option<Box<dyn IoEngine>> {
        match (INFO.make)(&EngineConfig { iodepth: depth, options: o }) {
            Ok(e) => Some(e),
            Err(e) => {
                eprintln!("skipping io_uring test: {e}");
                None
            }
        }
    }

    fn engine(depth: u32) -> Option<Box<dyn IoEngine>> {
        engine_with(depth, &EngineOptions::default())
    }

    fn all_roundtrips(o: EngineOptions) {
        for depth in [4, 32] {
            for direct in [false, true] {
                roundtrip(|d| engine_with(d, &o), depth, direct);
            }
        }
    }

    #[test]
    fn roundtrip_plain() {
        all_roundtrips(opts(false, false, false));
    }
    #[test]
    fn roundtrip_fixedbufs() {
        all_roundtrips(opts(true, false, false));
    }
    #[test]
    fn roundtrip_registerfiles() {
        all_roundtrips(opts(false, true, false));
    }
    #[test]
    fn roundtrip_fixedbufs_registerfiles() {
        all_roundtrips(opts(true, true, false));
    }
    #[test]
    fn roundtrip_sqthread_poll() {
        all_roundtrips(opts(true, true, true));
    }

    #[test]
    fn odd_iodepth_rounds_up() {
        roundtrip(engine, 5, true);
        roundtrip(engine, 1, false);
    }

    #[test]
    fn fsync_and_fdatasync_complete_with_zero() {
        for o in [opts(false, false, false), opts(false, true, false)] {
            let tmp = tmpfile(BS as u64);
            let file = open(tmp.path(), false).unwrap();
            let bufs = Bufs::new(2);
            let Some(mut eng) = engine_with(2, &o) else { return };
            eng.setup(&[EngineFile { fd: file.as_raw_fd(), size: BS as u64, writable: true }], &bufs.engine_bufs())
                .unwrap();
            let p = &bufs.ptrs;
            let res = run(&mut *eng, &[unit(IoOp::Fsync, 0, 0, p[0], 0), unit(IoOp::Fdatasync, 0, 0, p[1], 1)]);
            assert_eq!(res, vec![0, 0]);
        }
    }

    #[test]
    fn bad_io_gives_negative_result() {
        let (ebadf, einval) = (-libc::EBADF as i64, -libc::EINVAL as i64);
        for o in [opts(false, false, false), opts(true, true, false)] {
            let tmp = tmpfile(BS as u64);
            let file = open(tmp.path(), false).unwrap();
            let ro = File::open(tmp.path()).unwrap();
            let bufs = Bufs::new(4);
            let Some(mut eng) = engine_with(4, &o) else { return };
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
            assert_eq!(res, vec![ebadf, einval, ebadf, ebadf], "{o:?}");
            // The engine still works; a read past EOF returns 0.
            let res = run(&mut *eng, &[unit(IoOp::Read, 0, 0, p[0], 0), unit(IoOp::Read, 0, 1 << 20, p[1], 1)]);
            assert_eq!(res, vec![BS as i64, 0], "{o:?}");
            if o.fixedbufs {
                // A buffer outside the registered one fails in the kernel, not here.
                let mut stray = vec![0u8; BS];
                let res = run(&mut *eng, &[unit(IoOp::Read, 0, 0, stray.as_mut_ptr(), 0)]);
                assert!(res[0] < 0, "unregistered buffer with fixedbufs: {}", res[0]);
            }
        }
    }

    /// With iodepth N, N I/Os can be in flight at once: queue N, one commit, reap N.
    fn full_depth(depth: usize, direct: bool, o: &EngineOptions) {
        let size = (depth * BS) as u64;
        let tmp = tmpfile(size);
        let Some(file) = open(tmp.path(), direct) else { return };
        let bufs = Bufs::new(depth);
        let Some(mut eng) = engine_with(depth as u32, o) else { return };
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
            eprintln!(
                "io_uring {op:?} direct={direct} depth={depth} sqpoll={}: {early}/{depth} complete when commit returned",
                o.sqthread_poll
            );
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
        let plain = opts(false, false, false);
        full_depth(4, true, &plain);
        full_depth(32, true, &plain);
        full_depth(32, false, &plain);
        full_depth(32, true, &opts(true, true, false));
        full_depth(32, true, &opts(false, false, true));
    }

    #[test]
    fn reap_with_short_output_keeps_the_rest() {
        let depth = 8;
        let tmp = tmpfile((depth * BS) as u64);
        let file = open(tmp.path(), false).unwrap();
        let bufs = Bufs::new(depth);
        let Some(mut eng) = engine(depth as u32) else { return };
        eng.setup(
            &[EngineFile { fd: file.as_raw_fd(), size: (depth * BS) as u64, writable: true }],
            &bufs.engine_bufs(),
        )
        .unwrap();
        for i in 0..depth {
            eng.queue(&unit(IoOp::Read, 0, (i * BS) as u64, bufs.ptrs[i], i as u32)).unwrap();
        }
        eng.commit().unwrap();
        let mut got = 0;
        let mut out = [Completion::default(); 3];
        while got < depth {
            let n = eng.reap(1, &mut out).unwrap();
            assert!((1..=3).contains(&n));
            got += n;
        }
        assert_eq!(got, depth);
    }
}
