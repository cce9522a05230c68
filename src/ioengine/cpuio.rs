//! cpuio: no I/O; every operation burns `cpuchunks` of this thread's CPU
//! time, and the rest of the cycle is the job's thinktime (the fio frontend
//! sets it from `cpuload`, as fio does), so the thread is busy `cpuload`
//! percent of the time. Operations count in the job's direction with no
//! bytes (`Caps::moves_no_data`).
//!
//! The burn is measured in thread CPU time, not wall time: on a busy
//! machine the operation takes longer but still does its share of work.

use super::*;
use crate::model::engine_misc::CpuMode;

pub struct CpuIo {
    chunk_ns: u64,
    mode: CpuMode,
    /// qsort's array, allocated once and reshuffled before every sort.
    data: Vec<u32>,
    seed: u32,
}

pub const IMPL: EngineImpl = EngineImpl {
    name: "cpuio",
    make: |c| {
        let m = &c.options.misc;
        if m.cpuload == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "cpuload is not set (1-100)"));
        }
        let data = if m.cpumode == CpuMode::Qsort { vec![0u32; 4096] } else { Vec::new() };
        Ok(Box::new(CpuIo { chunk_ns: m.cpuchunks.as_nanos().max(1) as u64, mode: m.cpumode, data, seed: 0x9e37_79b9 }))
    },
};

/// This thread's CPU time in nanoseconds.
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec into the live local `ts`.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl CpuIo {
    fn burn(&mut self) {
        let until = thread_cpu_ns() + self.chunk_ns;
        loop {
            match self.mode {
                CpuMode::Noop => {
                    // Enough spins that reading the clock is a small share.
                    for i in 0..20_000u32 {
                        std::hint::black_box(i);
                    }
                }
                CpuMode::Qsort => {
                    for x in self.data.iter_mut() {
                        self.seed ^= self.seed << 13;
                        self.seed ^= self.seed >> 17;
                        self.seed ^= self.seed << 5;
                        *x = self.seed;
                    }
                    self.data.sort_unstable();
                    std::hint::black_box(&self.data);
                }
            }
            if thread_cpu_ns() >= until {
                break;
            }
        }
    }
}

impl IoEngine for CpuIo {
    fn setup(&mut self, _files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        Ok(())
    }

    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        if matches!(io.op, IoOp::Read | IoOp::Write) {
            self.burn();
        }
        Ok(Queued::Done(io.len as i64))
    }
}
