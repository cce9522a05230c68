//! null: accepts every I/O and does nothing, to measure fsbench's own cost
//! per I/O (fio keeps the same engine for the same reason).

use super::*;

pub struct Null;

pub const IMPL: EngineImpl = EngineImpl { name: "null", make: |_| Ok(Box::new(Null)) };

impl IoEngine for Null {
    fn setup(&mut self, _files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        Ok(())
    }
    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        Ok(Queued::Done(match io.op {
            IoOp::Read | IoOp::Write | IoOp::Trim => io.len as i64,
            _ => 0,
        }))
    }
}
