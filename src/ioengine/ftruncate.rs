//! ftruncate: each write I/O sets the file's size to the I/O's offset —
//! fio's `ftruncate` engine, for measuring size changes (growing is cheap,
//! shrinking frees blocks). The block size only advances the offset; it is
//! counted as the I/O's bytes, as fio counts it. Reads and trims are refused
//! before a run (model::engine) and with EINVAL here, as in fio.

use super::*;

pub struct Ftruncate {
    fds: Vec<RawFd>,
}

pub const IMPL: EngineImpl = EngineImpl { name: "ftruncate", make: |_| Ok(Box::new(Ftruncate { fds: Vec::new() })) };

impl IoEngine for Ftruncate {
    fn setup(&mut self, files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        self.fds = files.iter().map(|f| f.fd).collect();
        Ok(())
    }
    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let fd = self.fds[io.file as usize];
        let res = match io.op {
            IoOp::Write => {
                // SAFETY: ftruncate takes a descriptor (one of the files given to setup) and an integer.
                let r = unsafe { libc::ftruncate(fd, io.offset as libc::off_t) };
                if r < 0 {
                    syscall_result(-1)
                } else {
                    io.len as i64
                }
            }
            IoOp::Read | IoOp::Trim => -(libc::EINVAL as i64),
            op => do_sync(fd, op),
        };
        Ok(Queued::Done(res))
    }
}
