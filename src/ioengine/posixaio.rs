//! posixaio: POSIX asynchronous I/O (aio_read/aio_write/aio_fsync, waiting
//! with aio_suspend, results by aio_error/aio_return) — fio's `posixaio`.
//!
//! glibc implements POSIX AIO in user space: each request is handed to a
//! pool of helper threads that do plain pread/pwrite. So it is truly
//! asynchronous with any file (buffered too), at the cost of thread hand-offs
//! that the kernel engines avoid; the helpers' CPU is counted in fsbench's
//! CPU figures. A trim is done inline (fio does the same), after what was
//! queued has been submitted.

use super::*;

// glibc (>= 2.34 in libc.so itself; x86_64 and other 64-bit targets have one
// 64-bit off_t ABI) provides these; the libc crate declares the struct only.
extern "C" {
    fn aio_read(cb: *mut libc::aiocb) -> libc::c_int;
    fn aio_write(cb: *mut libc::aiocb) -> libc::c_int;
    fn aio_fsync(op: libc::c_int, cb: *mut libc::aiocb) -> libc::c_int;
    fn aio_error(cb: *const libc::aiocb) -> libc::c_int;
    fn aio_return(cb: *mut libc::aiocb) -> libc::ssize_t;
    fn aio_suspend(list: *const *const libc::aiocb, n: libc::c_int, timeout: *const libc::timespec) -> libc::c_int;
    fn aio_cancel(fd: libc::c_int, cb: *mut libc::aiocb) -> libc::c_int;
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    /// Filled by `queue`, handed to glibc by `commit`.
    Queued,
    InFlight,
}

pub struct PosixAio {
    fds: Vec<RawFd>,
    trimmer: Trimmer,
    /// One control block per buffer slot, boxed so its address never moves
    /// while glibc holds it.
    cbs: Box<[libc::aiocb]>,
    ops: Box<[IoOp]>,
    state: Box<[State]>,
    queued: Vec<u32>,
    /// Completions known before `reap` asked: requests glibc refused.
    stash: Vec<Completion>,
    /// Scratch for aio_suspend's list.
    list: Vec<*const libc::aiocb>,
    in_flight: usize,
}

// SAFETY: the raw pointers point into this engine's own boxed control blocks; glibc's helper threads use them only
// between submission and completion, which the engine waits for (also in Drop); all use goes through `&mut self`.
unsafe impl Send for PosixAio {}

pub const IMPL: EngineImpl = EngineImpl { name: "posixaio", make };

fn make(cfg: &EngineConfig) -> io::Result<Box<dyn IoEngine>> {
    let depth = cfg.iodepth.max(1) as usize;
    Ok(Box::new(PosixAio::with_slots(depth)))
}

impl PosixAio {
    fn with_slots(n: usize) -> PosixAio {
        // SAFETY: aiocb is integers and pointers, for which all-zero bytes is a valid value (glibc's own AIO_INIT).
        let zero: libc::aiocb = unsafe { std::mem::zeroed() };
        PosixAio {
            fds: Vec::new(),
            trimmer: Trimmer::default(),
            cbs: vec![zero; n].into_boxed_slice(),
            ops: vec![IoOp::Read; n].into_boxed_slice(),
            state: vec![State::Free; n].into_boxed_slice(),
            queued: Vec::with_capacity(n),
            stash: Vec::with_capacity(n),
            list: Vec::with_capacity(n),
            in_flight: 0,
        }
    }

    fn submit(&mut self, slot: usize) -> i32 {
        let cb: *mut libc::aiocb = &mut self.cbs[slot];
        // SAFETY: `cb` is this slot's boxed control block, filled by `queue`; it stays put and untouched by us until
        // aio_error says it is done. Its buffer is the slot's, valid until completion (IoUnit contract).
        let r = unsafe {
            match self.ops[slot] {
                IoOp::Read => aio_read(cb),
                IoOp::Write => aio_write(cb),
                IoOp::Fsync => aio_fsync(libc::O_SYNC, cb),
                _ => aio_fsync(libc::O_DSYNC, cb),
            }
        };
        if r < 0 {
            io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO)
        } else {
            0
        }
    }

    /// Move finished requests into `out`; returns how many.
    fn collect(&mut self, out: &mut [Completion]) -> usize {
        let mut n = 0;
        while n < out.len() {
            let Some(c) = self.stash.pop() else { break };
            out[n] = c;
            n += 1;
        }
        for slot in 0..self.state.len() {
            if n == out.len() || self.in_flight == 0 {
                break;
            }
            if self.state[slot] != State::InFlight {
                continue;
            }
            // SAFETY: the control block of an in-flight slot, which glibc may be filling; aio_error reads its status.
            let err = unsafe { aio_error(&self.cbs[slot]) };
            if err == libc::EINPROGRESS {
                continue;
            }
            // SAFETY: the request is finished (aio_error != EINPROGRESS), so aio_return may collect it, once.
            let ret = unsafe { aio_return(&mut self.cbs[slot]) };
            let res = if err != 0 { -(err.max(1) as i64) } else { ret as i64 };
            out[n] = Completion { slot: slot as u32, res };
            n += 1;
            self.state[slot] = State::Free;
            self.in_flight -= 1;
        }
        n
    }
}

impl IoEngine for PosixAio {
    fn setup(&mut self, files: &[EngineFile], bufs: &[EngineBuf]) -> io::Result<()> {
        self.fds = files.iter().map(|f| f.fd).collect();
        self.trimmer = Trimmer::new(files);
        if bufs.len() > self.cbs.len() && self.in_flight == 0 && self.queued.is_empty() {
            let mut more = PosixAio::with_slots(bufs.len());
            std::mem::swap(&mut self.cbs, &mut more.cbs);
            std::mem::swap(&mut self.ops, &mut more.ops);
            std::mem::swap(&mut self.state, &mut more.state);
            std::mem::swap(&mut self.queued, &mut more.queued);
            std::mem::swap(&mut self.stash, &mut more.stash);
            std::mem::swap(&mut self.list, &mut more.list);
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let Some(&fd) = self.fds.get(io.file as usize) else {
            return Ok(Queued::Done(-(libc::EBADF as i64)));
        };
        if io.op == IoOp::Trim {
            return Ok(Queued::Done(self.trimmer.trim(io.file, fd, io.offset, io.len)));
        }
        let slot = io.slot as usize;
        match self.state.get(slot) {
            Some(State::Free) => {}
            Some(_) => return Err(io::Error::other("posixaio: buffer slot already in use")),
            None => return Err(io::Error::new(io::ErrorKind::InvalidInput, "posixaio: buffer slot out of range")),
        }
        if io.offset > i64::MAX as u64 {
            return Ok(Queued::Done(-(libc::EINVAL as i64)));
        }
        let cb = &mut self.cbs[slot];
        cb.aio_fildes = fd;
        cb.aio_buf = io.buf.cast();
        cb.aio_nbytes = io.len as usize;
        cb.aio_offset = io.offset as libc::off_t;
        cb.aio_reqprio = 0;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        self.ops[slot] = io.op;
        self.state[slot] = State::Queued;
        self.queued.push(io.slot);
        Ok(Queued::Pending)
    }

    fn commit(&mut self) -> io::Result<usize> {
        let n = self.queued.len();
        for i in 0..n {
            let slot = self.queued[i] as usize;
            match self.submit(slot) {
                0 => {
                    self.state[slot] = State::InFlight;
                    self.in_flight += 1;
                }
                // Refused (EAGAIN: glibc could not queue it): that I/O's result.
                e => {
                    self.state[slot] = State::Free;
                    self.stash.push(Completion { slot: slot as u32, res: -(e as i64) });
                }
            }
        }
        self.queued.clear();
        Ok(n)
    }

    fn reap(&mut self, min: usize, out: &mut [Completion]) -> io::Result<usize> {
        let min = min.min(out.len()).min(self.in_flight + self.stash.len());
        let mut n = self.collect(out);
        while n < min {
            self.list.clear();
            for (slot, st) in self.state.iter().enumerate() {
                if *st == State::InFlight {
                    self.list.push(&self.cbs[slot]);
                }
            }
            // SAFETY: `list` holds pointers to in-flight control blocks of this engine, `list.len()` of them; a null
            // timeout waits until one finishes.
            let r = unsafe { aio_suspend(self.list.as_ptr(), self.list.len() as libc::c_int, std::ptr::null()) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EINTR) {
                    return Err(io::Error::new(e.kind(), format!("posixaio: aio_suspend: {e}")));
                }
            }
            n += self.collect(&mut out[n..]);
        }
        Ok(n)
    }
}

impl Drop for PosixAio {
    /// Nothing may still write into the runner's buffers once the engine is
    /// gone: cancel what is in flight, then wait for what could not be cancelled.
    fn drop(&mut self) {
        for slot in 0..self.state.len() {
            if self.state[slot] == State::InFlight {
                // SAFETY: an in-flight control block of this engine; cancelling only changes its status.
                unsafe { aio_cancel(self.cbs[slot].aio_fildes, &mut self.cbs[slot]) };
            }
        }
        let mut out = vec![Completion::default(); self.state.len()];
        while self.in_flight > 0 {
            if self.reap(1, &mut out).is_err() {
                break;
            }
        }
    }
}
