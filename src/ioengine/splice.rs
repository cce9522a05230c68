//! splice: the data of each I/O goes through a pipe instead of a plain copy —
//! fio's `splice` engine. A write maps the buffer's pages into the pipe
//! (vmsplice) and splices them from the pipe into the file; a read splices
//! file pages into the pipe and reads them out into the buffer. An I/O
//! larger than the pipe goes through in pipe-sized pieces; `setup` asks for
//! a pipe as large as the largest buffer (F_SETPIPE_SZ, within
//! /proc/sys/fs/pipe-max-size). Syncs are fsync/fdatasync; trims are done
//! as by the synchronous engines (no data to move), as in fio.

use super::*;

pub struct Splice {
    fds: Vec<RawFd>,
    /// `[read end, write end]`, or -1 before setup.
    pipe: [RawFd; 2],
    /// Bytes the pipe holds.
    cap: usize,
    trimmer: Trimmer,
}

pub const IMPL: EngineImpl =
    EngineImpl { name: "splice", make: |_| Ok(Box::new(Splice { fds: Vec::new(), pipe: [-1, -1], cap: 0, trimmer: Trimmer::default() })) };

fn neg_errno() -> i64 {
    syscall_result(-1)
}

impl Splice {
    fn close_pipe(&mut self) {
        for fd in self.pipe {
            if fd >= 0 {
                // SAFETY: the descriptor is this engine's own pipe end, closed once (then set to -1).
                unsafe { libc::close(fd) };
            }
        }
        self.pipe = [-1, -1];
    }

    fn open_pipe(&mut self, want: usize) -> io::Result<()> {
        self.close_pipe();
        let mut p = [-1; 2];
        // SAFETY: pipe2 writes two descriptors into `p`, a live array of two c_ints.
        if unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(e.kind(), format!("splice: pipe2: {e}")));
        }
        self.pipe = p;
        // A smaller pipe only means more pieces per I/O, so a refusal is not an error.
        // SAFETY: fcntl on our own pipe descriptor with integer arguments.
        unsafe { libc::fcntl(p[1], libc::F_SETPIPE_SZ, want.min(i32::MAX as usize) as libc::c_int) };
        // SAFETY: as above.
        let cap = unsafe { libc::fcntl(p[1], libc::F_GETPIPE_SZ) };
        self.cap = if cap > 0 { cap as usize } else { 4096 };
        Ok(())
    }

    /// A failed write may leave bytes in the pipe; the next I/O must not see them.
    #[cold]
    fn reset_pipe(&mut self) {
        let cap = self.cap;
        if self.open_pipe(cap).is_err() {
            self.pipe = [-1, -1];
        }
    }

    #[inline]
    fn write(&mut self, fd: RawFd, io: &IoUnit) -> i64 {
        let [pr, pw] = self.pipe;
        let len = io.len as usize;
        let mut off = io.offset as libc::loff_t;
        let mut done = 0usize;
        while done < len {
            // SAFETY: `done < len`, so the piece lies inside `io.buf`, which has `len` initialised bytes (IoUnit
            // contract).
            let iov = libc::iovec { iov_base: unsafe { io.buf.add(done) }.cast(), iov_len: (len - done).min(self.cap) };
            // SAFETY: `iov` describes live memory that stays valid until the pages leave the pipe, which happens below,
            // before this call returns; `pw` is our pipe's write end.
            let n = unsafe { libc::vmsplice(pw, &iov, 1, 0) };
            if n <= 0 {
                let e = if n < 0 { neg_errno() } else { -(libc::EIO as i64) };
                self.reset_pipe();
                return e;
            }
            let mut left = n as usize;
            while left > 0 {
                // SAFETY: `off` is a live loff_t the kernel advances; both descriptors are open (ours and the job's).
                let m = unsafe { libc::splice(pr, std::ptr::null_mut(), fd, &mut off, left, libc::SPLICE_F_MOVE) };
                if m <= 0 {
                    let e = if m < 0 { neg_errno() } else { -(libc::EIO as i64) };
                    self.reset_pipe();
                    return if done > 0 { done as i64 } else { e };
                }
                left -= m as usize;
                done += m as usize;
            }
        }
        done as i64
    }

    #[inline]
    fn read(&mut self, fd: RawFd, io: &IoUnit) -> i64 {
        let [pr, pw] = self.pipe;
        let len = io.len as usize;
        let mut off = io.offset as libc::loff_t;
        let mut done = 0usize;
        while done < len {
            let want = (len - done).min(self.cap);
            // SAFETY: `off` is a live loff_t the kernel advances; both descriptors are open.
            let n = unsafe { libc::splice(fd, &mut off, pw, std::ptr::null_mut(), want, libc::SPLICE_F_MOVE) };
            if n < 0 {
                return if done > 0 { done as i64 } else { neg_errno() };
            }
            if n == 0 {
                break; // end of file: a short read
            }
            let mut left = n as usize;
            while left > 0 {
                // SAFETY: `done + left <= len`, so the target lies inside `io.buf`, writable for `len` bytes (IoUnit
                // contract); `pr` is our pipe's read end, holding at least `left` bytes.
                let m = unsafe { libc::read(pr, io.buf.add(done).cast(), left) };
                if m <= 0 {
                    let e = if m < 0 { neg_errno() } else { -(libc::EIO as i64) };
                    self.reset_pipe();
                    return e;
                }
                left -= m as usize;
                done += m as usize;
            }
        }
        done as i64
    }
}

impl Drop for Splice {
    fn drop(&mut self) {
        self.close_pipe();
    }
}

impl IoEngine for Splice {
    fn setup(&mut self, files: &[EngineFile], bufs: &[EngineBuf]) -> io::Result<()> {
        self.fds = files.iter().map(|f| f.fd).collect();
        self.trimmer = Trimmer::new(files);
        self.open_pipe(bufs.iter().map(|b| b.len).max().unwrap_or(65536))
    }
    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let fd = self.fds[io.file as usize];
        if self.pipe[0] < 0 {
            return Err(io::Error::other("splice: no pipe (setup failed to recreate it)"));
        }
        let res = match io.op {
            IoOp::Read => self.read(fd, io),
            IoOp::Write => self.write(fd, io),
            IoOp::Trim => self.trimmer.trim(io.file, fd, io.offset, io.len),
            op => do_sync(fd, op),
        };
        Ok(Queued::Done(res))
    }
}
