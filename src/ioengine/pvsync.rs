//! pvsync and pvsync2: one preadv/pwritev (pvsync) or preadv2/pwritev2
//! (pvsync2) call per I/O with a single iovec, done inline — fio's engines of
//! the same names. pvsync2 exists for its per-call flags: `hipri`
//! (RWF_HIPRI, completion by polling, which only polled queues of direct I/O
//! honour) and `nowait` (RWF_NOWAIT: an I/O that would block fails with
//! EAGAIN instead, reported like any failed I/O, as fio does).

use super::*;

pub struct Pvsync {
    fds: Vec<RawFd>,
    trimmer: Trimmer,
    /// RWF_* flags for preadv2/pwritev2; `None` means pvsync (preadv/pwritev).
    flags: Option<libc::c_int>,
}

pub const IMPL: EngineImpl = EngineImpl { name: "pvsync", make: |cfg| make(cfg, false) };
pub const IMPL2: EngineImpl = EngineImpl { name: "pvsync2", make: |cfg| make(cfg, true) };

fn make(cfg: &EngineConfig, v2: bool) -> io::Result<Box<dyn IoEngine>> {
    let o = cfg.options;
    let flags = v2.then_some((if o.hipri { libc::RWF_HIPRI } else { 0 }) | (if o.nowait { libc::RWF_NOWAIT } else { 0 }));
    Ok(Box::new(Pvsync { fds: Vec::new(), trimmer: Trimmer::default(), flags }))
}

impl IoEngine for Pvsync {
    fn setup(&mut self, files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        self.fds = files.iter().map(|f| f.fd).collect();
        self.trimmer = Trimmer::new(files);
        Ok(())
    }
    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let fd = self.fds[io.file as usize];
        let off = io.offset as libc::off_t;
        let iov = libc::iovec { iov_base: io.buf.cast(), iov_len: io.len as usize };
        // SAFETY: `iov` describes `io.buf`, valid for `io.len` bytes (IoUnit contract: writable for a read,
        // initialised for a write) until this synchronous call returns; `fd` is one of the files given to setup.
        let r = unsafe {
            match (io.op, self.flags) {
                (IoOp::Read, None) => libc::preadv(fd, &iov, 1, off),
                (IoOp::Write, None) => libc::pwritev(fd, &iov, 1, off),
                (IoOp::Read, Some(f)) => libc::preadv2(fd, &iov, 1, off, f),
                (IoOp::Write, Some(f)) => libc::pwritev2(fd, &iov, 1, off, f),
                (IoOp::Trim, _) => return Ok(Queued::Done(self.trimmer.trim(io.file, fd, io.offset, io.len))),
                (op, _) => return Ok(Queued::Done(do_sync(fd, op))),
            }
        };
        Ok(Queued::Done(syscall_result(r)))
    }
}
