//! The data flowops: read, write, append, whole-file reads and writes, and
//! asynchronous writes through a per-thread io_uring.

use super::program::Node;
use super::thread::{errno, Aio, Outcome, Worker, AIO_MAX};
use crate::model::flow::FlowopKind;
use std::time::Instant;

impl Worker<'_, '_> {
    // ---- data flowops ----------------------------------------------------

    pub(super) fn read(&mut self, node: &Node) -> Result<(), Outcome> {
        let i = self.file_for(node)?;
        let n = self.iosize(node)?;
        let fd = self.fds[i].fd;
        let cap = self.rbuf.len() as u64;
        let buf = self.rbuf.ptr() as *mut libc::c_void;
        if node.spec.random {
            let wss = self.wss(node, i);
            let off = self.offset(wss, n);
            let t0 = Instant::now();
            let mut done = 0u64;
            while done < n {
                let c = (n - done).min(cap) as usize;
                // SAFETY: buf has cap bytes.
                let r = unsafe { libc::pread(fd, buf, c, (off + done) as libc::off_t) };
                if r < 0 {
                    return Err(self.slot_fatal(node, i, "read of", errno()));
                }
                done += r as u64;
                if (r as usize) < c {
                    break;
                }
            }
            self.record(node, t0, done);
        } else {
            let t0 = Instant::now();
            let mut done = 0u64;
            let mut wrapped = false;
            while done < n {
                let c = (n - done).min(cap) as usize;
                // SAFETY: buf has cap bytes.
                let r = unsafe { libc::read(fd, buf, c) };
                if r < 0 {
                    return Err(self.slot_fatal(node, i, "read of", errno()));
                }
                if r == 0 {
                    // At the end of the file: back to its start, once.
                    if done > 0 || wrapped {
                        break;
                    }
                    wrapped = true;
                    // SAFETY: lseek takes the open descriptor `fd` and integers; no memory of ours is involved.
                    unsafe { libc::lseek(fd, 0, libc::SEEK_SET) };
                    continue;
                }
                done += r as u64;
                if (r as usize) < c {
                    break;
                }
            }
            self.record(node, t0, done);
        }
        Ok(())
    }

    pub(super) fn write(&mut self, node: &Node) -> Result<(), Outcome> {
        let i = self.file_for(node)?;
        let n = self.iosize(node)?;
        let fd = self.fds[i].fd;
        let at = if node.spec.random {
            let wss = self.wss(node, i);
            Some(self.offset(wss, n))
        } else {
            None
        };
        let src = self.src(n);
        let t0 = Instant::now();
        match Self::write_n(fd, src, n, at) {
            Ok(b) => self.record(node, t0, b),
            Err(e) => return Err(self.slot_fatal(node, i, "write to", e)),
        }
        Ok(())
    }

    /// appendfile: `iosize` bytes at the end. appendfilerand: uniform in
    /// [0, iosize-1] bytes (Filebench's quirk, kept: the mean is iosize/2).
    pub(super) fn append(&mut self, node: &Node) -> Result<(), Outcome> {
        let i = self.file_for(node)?;
        let size = self.iosize(node)?;
        let n = if node.kind == FlowopKind::AppendFileRand { self.rng.below(size) } else { size };
        let fd = self.fds[i].fd;
        let src = self.src(n);
        let t0 = Instant::now();
        // SAFETY: lseek takes slot `i`'s descriptor and integers; no memory of ours is involved.
        if unsafe { libc::lseek(fd, 0, libc::SEEK_END) } < 0 {
            return Err(self.slot_fatal(node, i, "seek in", errno()));
        }
        match Self::write_n(fd, src, n, None) {
            Ok(b) => self.record(node, t0, b),
            Err(e) => return Err(self.slot_fatal(node, i, "append to", e)),
        }
        Ok(())
    }

    /// The whole file from offset 0 in `iosize` chunks, as one op. pread
    /// until a short read, so the file offset stays where it was and EOF
    /// costs no extra call.
    pub(super) fn read_whole(&mut self, node: &Node) -> Result<(), Outcome> {
        let i = self.file_for(node)?;
        let chunk = match self.value(node.spec.iosize) {
            0 => self.rbuf.len(),
            n => (n as usize).min(self.rbuf.len()),
        };
        let fd = self.fds[i].fd;
        let buf = self.rbuf.ptr() as *mut libc::c_void;
        let t0 = Instant::now();
        let mut off = 0u64;
        loop {
            // SAFETY: buf has at least chunk bytes.
            let r = unsafe { libc::pread(fd, buf, chunk, off as libc::off_t) };
            if r < 0 {
                return Err(self.slot_fatal(node, i, "read of", errno()));
            }
            off += r as u64;
            if (r as usize) < chunk {
                break;
            }
        }
        self.record(node, t0, off);
        Ok(())
    }

    /// N bytes from the current offset in `iosize` chunks, as one op: N is
    /// the drawn size of the `srcfd` file, else `workingset`, else the drawn
    /// size of this file.
    pub(super) fn write_whole(&mut self, node: &Node) -> Result<(), Outcome> {
        let i = self.file_for(node)?;
        let from_src = node.spec.srcfd.map(|s| self.size_of(s as usize)).unwrap_or(0);
        let n = if from_src > 0 {
            from_src
        } else {
            match self.value(node.spec.workingset) {
                0 => self.size_of(i),
                w => w,
            }
        };
        let chunk = match self.value(node.spec.iosize) {
            0 => n.max(1),
            c => c,
        };
        let fd = self.fds[i].fd;
        let (p, len) = self.src(chunk.min(n.max(1)));
        let src = (p, len.min(chunk as usize));
        let t0 = Instant::now();
        match Self::write_n(fd, src, n, None) {
            Ok(b) => self.record(node, t0, b),
            Err(e) => return Err(self.slot_fatal(node, i, "write to", e)),
        }
        Ok(())
    }

    // ---- asynchronous writes ---------------------------------------------

    pub(super) fn reap(&mut self, node: &Node, want: u32) -> Result<(), Outcome> {
        let Some(aio) = self.aio.as_mut() else { return Ok(()) };
        let mut got = 0u32;
        let mut failed: Option<i32> = None;
        while got < want && aio.outstanding > 0 {
            if let Err(e) = aio.ring.submit_and_wait(1) {
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(self.misuse(node, &format!("io_uring wait: {e}")));
                }
            }
            for c in aio.ring.completion() {
                got += 1;
                aio.outstanding = aio.outstanding.saturating_sub(1);
                if c.result() < 0 && failed.is_none() {
                    failed = Some(-c.result());
                }
            }
        }
        match failed {
            Some(e) => Err(self.misuse(node, &format!("asynchronous write failed: {}", std::io::Error::from_raw_os_error(e)))),
            None => Ok(()),
        }
    }

    /// One asynchronous pwrite at a random offset through this thread's
    /// io_uring; the op times the submission.
    pub(super) fn aiowrite(&mut self, node: &Node) -> Result<(), Outcome> {
        let i = self.file_for(node)?;
        let n = self.iosize(node)?;
        let fd = self.fds[i].fd;
        let wss = self.wss(node, i);
        let off = self.offset(wss, n);
        if self.aio.is_none() {
            match io_uring::IoUring::new(AIO_MAX) {
                Ok(ring) => self.aio = Some(Aio { ring, outstanding: 0 }),
                Err(e) => return Err(self.misuse(node, &format!("cannot set up io_uring: {e}"))),
            }
        }
        if self.aio.as_ref().is_some_and(|a| a.outstanding >= AIO_MAX) {
            self.reap(node, AIO_MAX / 2)?;
        }
        let (p, len) = self.src(n);
        let n = n.min(len as u64) as u32;
        let sqe = io_uring::opcode::Write::new(io_uring::types::Fd(fd), p, n).offset(off).build().user_data(n as u64);
        let Some(aio) = self.aio.as_mut() else { return Ok(()) };
        let t0 = Instant::now();
        // SAFETY: the buffer is the shared source, alive until all threads
        // joined (every ring is drained before its thread ends).
        let pushed = unsafe { aio.ring.submission().push(&sqe).is_ok() };
        if !pushed {
            return Err(self.misuse(node, "io_uring submission queue full"));
        }
        if let Err(e) = aio.ring.submit() {
            return Err(self.misuse(node, &format!("io_uring submit: {e}")));
        }
        aio.outstanding += 1;
        self.record(node, t0, n as u64);
        Ok(())
    }

    /// Reap half of the outstanding writes (at least one).
    pub(super) fn aiowait(&mut self, node: &Node) -> Result<(), Outcome> {
        let outstanding = self.aio.as_ref().map(|a| a.outstanding).unwrap_or(0);
        if outstanding == 0 {
            return Ok(());
        }
        let t0 = Instant::now();
        self.reap(node, (outstanding / 2).max(1))?;
        self.record(node, t0, 0);
        Ok(())
    }
}
