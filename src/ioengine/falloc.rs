//! falloc: each I/O is a fallocate(2) of its range instead of a transfer —
//! fio's `falloc` engine, for fragmenting files and measuring allocation.
//! A write allocates (mode 0, which may extend the file), a read allocates
//! keeping the size (FALLOC_FL_KEEP_SIZE), a trim punches a hole
//! (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE). No data moves and the buffer
//! is never touched; syncs are fsync/fdatasync.

use super::*;

pub struct Falloc {
    fds: Vec<RawFd>,
}

pub const IMPL: EngineImpl = EngineImpl { name: "falloc", make: |_| Ok(Box::new(Falloc { fds: Vec::new() })) };

impl IoEngine for Falloc {
    fn setup(&mut self, files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        self.fds = files.iter().map(|f| f.fd).collect();
        Ok(())
    }
    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let fd = self.fds[io.file as usize];
        let mode = match io.op {
            IoOp::Write => 0,
            IoOp::Read => libc::FALLOC_FL_KEEP_SIZE,
            IoOp::Trim => libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            op => return Ok(Queued::Done(do_sync(fd, op))),
        };
        // SAFETY: fallocate takes a descriptor (one of the files given to setup) and integers; no memory of ours.
        let r = unsafe { libc::fallocate(fd, mode, io.offset as libc::off_t, io.len as libc::off_t) };
        Ok(Queued::Done(if r < 0 { syscall_result(-1) } else { io.len as i64 }))
    }
}
