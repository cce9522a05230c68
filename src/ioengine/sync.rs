//! sync and vsync: lseek(2), then read(2)/write(2) (sync) or readv(2)/writev(2)
//! with one iovec (vsync), done inline — fio's engines of the same names.
//! fio's vsync may merge adjacent I/Os into one vector; with one I/O in
//! flight there is nothing to merge.

use super::*;

pub struct Sync {
    fds: Vec<RawFd>,
    /// Where each file's descriptor points now, so a sequential stream needs no lseek.
    pos: Vec<u64>,
    trimmer: Trimmer,
    /// readv/writev (vsync) instead of read/write (sync).
    vectored: bool,
}

pub const IMPL: EngineImpl = EngineImpl { name: "sync", make: |_| Ok(Sync::boxed(false)) };
pub const VSYNC: EngineImpl = EngineImpl { name: "vsync", make: |_| Ok(Sync::boxed(true)) };

impl Sync {
    fn boxed(vectored: bool) -> Box<dyn IoEngine> {
        Box::new(Sync { fds: Vec::new(), pos: Vec::new(), trimmer: Trimmer::default(), vectored })
    }
}

impl IoEngine for Sync {
    fn setup(&mut self, files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        self.fds = files.iter().map(|f| f.fd).collect();
        // u64::MAX forces an lseek before the first I/O on each file.
        self.pos = vec![u64::MAX; files.len()];
        self.trimmer = Trimmer::new(files);
        Ok(())
    }
    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let i = io.file as usize;
        let fd = self.fds[i];
        match io.op {
            IoOp::Fsync | IoOp::Fdatasync => return Ok(Queued::Done(do_sync(fd, io.op))),
            // A trim neither uses nor moves the file position.
            IoOp::Trim => return Ok(Queued::Done(self.trimmer.trim(io.file, fd, io.offset, io.len))),
            IoOp::Read | IoOp::Write => {}
        }
        if self.pos[i] != io.offset {
            // SAFETY: lseek takes plain integers and touches no memory; `fd` is one of the files given to setup.
            let r = unsafe { libc::lseek(fd, io.offset as libc::off_t, libc::SEEK_SET) };
            if r < 0 {
                self.pos[i] = u64::MAX;
                return Ok(Queued::Done(syscall_result(-1)));
            }
        }
        let iov = libc::iovec { iov_base: io.buf.cast(), iov_len: io.len as usize };
        // SAFETY: `io.buf` (which `iov` describes) is valid for `io.len` bytes (IoUnit contract: writable for a
        // read, initialised for a write) until this synchronous call returns, and `fd` is one of the files given
        // to setup.
        let r = unsafe {
            match (io.op, self.vectored) {
                (IoOp::Read, false) => libc::read(fd, io.buf.cast(), io.len as usize),
                (_, false) => libc::write(fd, io.buf.cast(), io.len as usize),
                (IoOp::Read, true) => libc::readv(fd, &iov, 1),
                (_, true) => libc::writev(fd, &iov, 1),
            }
        };
        let res = syscall_result(r);
        self.pos[i] = if res >= 0 { io.offset + res as u64 } else { u64::MAX };
        Ok(Queued::Done(res))
    }
}
