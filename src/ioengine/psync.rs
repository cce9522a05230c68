//! psync: one pread(2)/pwrite(2) per I/O, done inline. The baseline engine.

use super::*;

pub struct Psync {
    fds: Vec<RawFd>,
    trimmer: Trimmer,
}

pub const IMPL: EngineImpl = EngineImpl { name: "psync", make: |_| Ok(Box::new(Psync { fds: Vec::new(), trimmer: Trimmer::default() })) };

impl IoEngine for Psync {
    fn setup(&mut self, files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        self.fds = files.iter().map(|f| f.fd).collect();
        self.trimmer = Trimmer::new(files);
        Ok(())
    }
    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let fd = self.fds[io.file as usize];
        let off = io.offset as libc::off_t;
        // SAFETY: `io.buf` is valid for `io.len` bytes (IoUnit contract: writable for a read, initialised for a write)
        // until this synchronous call returns, and `fd` is one of the files given to setup.
        let r = unsafe {
            match io.op {
                IoOp::Read => libc::pread(fd, io.buf.cast(), io.len as usize, off),
                IoOp::Write => libc::pwrite(fd, io.buf.cast(), io.len as usize, off),
                IoOp::Trim => return Ok(Queued::Done(self.trimmer.trim(io.file, fd, io.offset, io.len))),
                op => return Ok(Queued::Done(do_sync(fd, op))),
            }
        };
        Ok(Queued::Done(syscall_result(r)))
    }
}
