//! mmap: each file is mapped once (`MAP_SHARED`) and every read or write is
//! a `memcpy` between the mapping and the I/O buffer — fio's `mmap` engine.
//!
//! What it is for: measuring the page-cache and page-fault path that
//! memory-mapped applications (databases, LMDB-style stores, loaders) see,
//! with no system call per I/O once the pages are resident. A read of a page
//! that is not cached is a major fault; the first write to a clean page is a
//! write-protect fault that dirties it.
//!
//! Kernel quirks worth knowing:
//! * O_DIRECT and O_SYNC/O_DSYNC do not apply to a mapping (`mapped` cap);
//!   data reaches the disk through writeback or an explicit sync.
//! * Fsync and Fdatasync are both `msync(MS_SYNC)` of the whole mapping, as in
//!   fio. On Linux that is a data-integrity sync of the mapped range
//!   (`vfs_fsync_range(.., datasync=1)`).
//! * Touching a mapped page beyond the end of the file raises SIGBUS, so
//!   `setup` refuses a regular file shorter than the region the job maps.
//!   Block devices are mapped as they are.

use super::*;
use std::ptr;

/// One mapped file; `ptr` is null when nothing is mapped (size 0).
struct Map {
    ptr: *mut u8,
    len: u64,
    writable: bool,
    fd: RawFd,
}

pub struct Mmap {
    maps: Vec<Map>,
    advice: MapAdvice,
    trimmer: Trimmer,
}

// SAFETY: the mappings belong to this engine alone and are not tied to the thread that made them; all access goes
// through `&mut self`, so moving the engine to another thread cannot race.
unsafe impl Send for Mmap {}

pub const IMPL: EngineImpl = EngineImpl {
    name: "mmap",
    make: |c| Ok(Box::new(Mmap { maps: Vec::new(), advice: c.options.map_advice, trimmer: Trimmer::default() })),
};

const EINVAL: i64 = -(libc::EINVAL as i64);
const EBADF: i64 = -(libc::EBADF as i64);

impl Mmap {
    fn unmap_all(&mut self) {
        for m in self.maps.drain(..) {
            if !m.ptr.is_null() {
                // SAFETY: `m.ptr`/`m.len` are a mapping made by map_file and not unmapped yet (the maps are drained, so
                // each is unmapped once); nothing refers to it afterwards.
                unsafe { libc::munmap(m.ptr.cast(), m.len as usize) };
            }
        }
    }
}

fn map_file(f: &EngineFile, advice: MapAdvice) -> io::Result<Map> {
    let mut map = Map { ptr: ptr::null_mut(), len: 0, writable: f.writable, fd: f.fd };
    if f.size == 0 {
        return Ok(map);
    }
    let len = usize::try_from(f.size)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "mmap: file region larger than the address space"))?;
    // SAFETY: libc::stat is plain integers, for which all-zero bytes is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a live, writable stat that fstat only writes into; a bad descriptor just returns EBADF.
    if unsafe { libc::fstat(f.fd, &mut st) } < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("mmap: fstat(fd {}): {e}", f.fd)));
    }
    if st.st_mode & libc::S_IFMT == libc::S_IFREG && (st.st_size as u64) < f.size {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "mmap: file is {} bytes but the job maps {}; access past the end would raise SIGBUS \
                 (lay the file out to its full size first)",
                st.st_size, f.size
            ),
        ));
    }
    let prot = if f.writable { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ };
    // SAFETY: a new MAP_SHARED mapping of `len` bytes of `f.fd` with no address hint replaces no existing mapping; it
    // is unmapped in unmap_all.
    let p = unsafe { libc::mmap(ptr::null_mut(), len, prot, libc::MAP_SHARED, f.fd, 0) };
    if p == libc::MAP_FAILED {
        let e = io::Error::last_os_error();
        let hint = match e.raw_os_error() {
            Some(libc::EACCES) => " (mapping needs the file opened for reading, and for writing if the job writes)",
            Some(libc::ENODEV) => " (this file system or device cannot be memory-mapped)",
            _ => "",
        };
        return Err(io::Error::new(e.kind(), format!("mmap: mapping {} bytes of fd {}: {e}{hint}", f.size, f.fd)));
    }
    map.ptr = p.cast();
    map.len = f.size;
    // As fio: random advice turns off read-around, so a fault on a page that
    // is not cached (dropped by invalidate, or by a direct writer to the same
    // file) reads that page alone. Advice only: failure changes nothing.
    let a = match advice {
        MapAdvice::None => None,
        MapAdvice::Sequential => Some(libc::POSIX_MADV_SEQUENTIAL),
        MapAdvice::Random => Some(libc::POSIX_MADV_RANDOM),
        MapAdvice::Normal => Some(libc::POSIX_MADV_NORMAL),
    };
    if let Some(a) = a {
        // SAFETY: `p`/`len` are the mapping just made; posix_madvise only sets the kernel's advice for it.
        unsafe { libc::posix_madvise(p, len, a) };
    }
    Ok(map)
}

impl IoEngine for Mmap {
    fn setup(&mut self, files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        self.unmap_all();
        self.trimmer = Trimmer::new(files);
        self.maps.reserve(files.len());
        for f in files {
            match map_file(f, self.advice) {
                Ok(m) => self.maps.push(m),
                Err(e) => {
                    self.unmap_all();
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let Some(m) = self.maps.get(io.file as usize) else {
            return Ok(Queued::Done(EBADF));
        };
        let res = match io.op {
            IoOp::Read | IoOp::Write => {
                let len = io.len as u64;
                match io.offset.checked_add(len) {
                    Some(end) if end <= m.len && !m.ptr.is_null() => {
                        // SAFETY: `offset + len <= m.len` (checked above), so `at` stays inside the live mapping.
                        let at = unsafe { m.ptr.add(io.offset as usize) };
                        if io.op == IoOp::Read {
                            // SAFETY: `at` has `len` readable bytes inside the mapping and `io.buf` is valid for `len`
                            // writable bytes (IoUnit contract); a runner buffer never lies inside a file mapping, so
                            // they do not overlap.
                            unsafe { ptr::copy_nonoverlapping(at, io.buf, len as usize) };
                            len as i64
                        } else if m.writable {
                            // SAFETY: `io.buf` has `len` initialised bytes (IoUnit contract) and `at` has `len` bytes
                            // inside a mapping made with PROT_WRITE (`m.writable`); a runner buffer never lies inside a
                            // file mapping, so they do not overlap.
                            unsafe { ptr::copy_nonoverlapping(io.buf, at, len as usize) };
                            len as i64
                        } else {
                            EBADF
                        }
                    }
                    _ if len == 0 => 0,
                    _ => EINVAL,
                }
            }
            // Through the descriptor, as fio does; the mapping then reads the hole's zeros.
            IoOp::Trim => self.trimmer.trim(io.file, m.fd, io.offset, io.len),
            IoOp::Fsync | IoOp::Fdatasync if m.ptr.is_null() => do_sync(m.fd, io.op),
            IoOp::Fsync | IoOp::Fdatasync => {
                // SAFETY: `m.ptr`/`m.len` are a live mapping of this engine (not null on this arm); msync only flushes
                // it.
                let r = unsafe { libc::msync(m.ptr.cast(), m.len as usize, libc::MS_SYNC) };
                syscall_result(r as isize)
            }
        };
        Ok(Queued::Done(res))
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        self.unmap_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ioengine::testkit::*;
    use crate::model::job::EngineOptions;
    use std::fs::File;
    use std::os::fd::AsRawFd;

    fn engine(depth: u32) -> Option<Box<dyn IoEngine>> {
        let options = EngineOptions::default();
        Some((IMPL.make)(&EngineConfig { iodepth: depth, options: &options }).expect("mmap engine"))
    }

    #[test]
    fn roundtrip_depth4() {
        roundtrip(engine, 4, false);
    }
    #[test]
    fn roundtrip_depth32() {
        roundtrip(engine, 32, false);
    }
    /// The runner does not pass O_DIRECT to mapped engines, but a mapping of
    /// an O_DIRECT descriptor works all the same.
    #[test]
    fn roundtrip_o_direct_descriptor() {
        roundtrip(engine, 4, true);
        roundtrip(engine, 32, true);
    }

    #[test]
    fn everything_completes_inline() {
        let depth = 8;
        let size = (depth * BS) as u64;
        let tmp = tmpfile(size);
        let file = open(tmp.path(), false).unwrap();
        let bufs = Bufs::new(depth);
        let mut eng = engine(depth as u32).unwrap();
        eng.setup(&[EngineFile { fd: file.as_raw_fd(), size, writable: true }], &bufs.engine_bufs()).unwrap();
        for i in 0..depth {
            let io = unit(IoOp::Write, 0, (i * BS) as u64, bufs.ptrs[i], i as u32);
            assert_eq!(eng.queue(&io).unwrap(), Queued::Done(BS as i64));
        }
        assert_eq!(eng.commit().unwrap(), 0);
        let mut out = [Completion::default(); 8];
        assert_eq!(eng.reap(0, &mut out).unwrap(), 0);
    }

    #[test]
    fn fsync_and_fdatasync_complete_with_zero() {
        let tmp = tmpfile(2 * BS as u64);
        let empty = tmpfile(0);
        let file = open(tmp.path(), false).unwrap();
        let efile = open(empty.path(), false).unwrap();
        let mut bufs = Bufs::new(2);
        let mut eng = engine(2).unwrap();
        let files = [
            EngineFile { fd: file.as_raw_fd(), size: 2 * BS as u64, writable: true },
            EngineFile { fd: efile.as_raw_fd(), size: 0, writable: true },
        ];
        eng.setup(&files, &bufs.engine_bufs()).unwrap();
        bufs.get(0).fill(0xab);
        let p = &bufs.ptrs;
        let res = run(&mut *eng, &[unit(IoOp::Write, 0, BS as u64, p[0], 0), unit(IoOp::Fsync, 0, 0, p[1], 1)]);
        assert_eq!(res, vec![BS as i64, 0]);
        assert_eq!(eng.queue(&unit(IoOp::Fdatasync, 0, 0, p[1], 1)).unwrap(), Queued::Done(0));
        // Nothing is mapped for an empty file; its syncs go to the descriptor.
        assert_eq!(eng.queue(&unit(IoOp::Fsync, 1, 0, p[1], 1)).unwrap(), Queued::Done(0));
        let on_disk = std::fs::read(tmp.path()).unwrap();
        assert!(on_disk[BS..].iter().all(|&b| b == 0xab) && on_disk[..BS].iter().all(|&b| b == 0));
    }

    #[test]
    fn bad_io_gives_negative_result() {
        let tmp = tmpfile(2 * BS as u64);
        let empty = tmpfile(0);
        let file = open(tmp.path(), false).unwrap();
        let ro = File::open(tmp.path()).unwrap();
        let efile = open(empty.path(), false).unwrap();
        let bufs = Bufs::new(1);
        let mut eng = engine(1).unwrap();
        let files = [
            EngineFile { fd: file.as_raw_fd(), size: 2 * BS as u64, writable: true },
            EngineFile { fd: ro.as_raw_fd(), size: 2 * BS as u64, writable: false },
            EngineFile { fd: efile.as_raw_fd(), size: 0, writable: true },
        ];
        eng.setup(&files, &bufs.engine_bufs()).unwrap();
        let p = bufs.ptrs[0];
        let done = |eng: &mut Box<dyn IoEngine>, io: IoUnit| match eng.queue(&io).unwrap() {
            Queued::Done(r) => r,
            Queued::Pending => panic!("mmap never leaves an I/O pending"),
        };
        let (ebadf, einval) = (-libc::EBADF as i64, -libc::EINVAL as i64);
        assert_eq!(done(&mut eng, unit(IoOp::Read, 0, BS as u64 + 1, p, 0)), einval, "straddles the end");
        assert_eq!(done(&mut eng, unit(IoOp::Write, 0, 2 * BS as u64, p, 0)), einval, "starts at the end");
        assert_eq!(done(&mut eng, unit(IoOp::Read, 0, u64::MAX - 10, p, 0)), einval, "offset overflow");
        assert_eq!(done(&mut eng, unit(IoOp::Read, 2, 0, p, 0)), einval, "nothing mapped");
        assert_eq!(done(&mut eng, unit(IoOp::Read, 9, 0, p, 0)), ebadf, "no such file");
        assert_eq!(done(&mut eng, unit(IoOp::Write, 1, 0, p, 0)), ebadf, "read-only mapping");
        assert_eq!(done(&mut eng, unit(IoOp::Read, 1, BS as u64, p, 0)), BS as i64, "read-only mapping reads");
        assert_eq!(done(&mut eng, unit(IoOp::Read, 0, BS as u64, p, 0)), BS as i64, "last block");
    }

    #[test]
    fn short_file_is_refused_instead_of_sigbus() {
        let tmp = tmpfile(BS as u64);
        let file = open(tmp.path(), false).unwrap();
        let mut eng = engine(1).unwrap();
        let err = eng.setup(&[EngineFile { fd: file.as_raw_fd(), size: 4 * BS as u64, writable: true }], &[]);
        assert!(err.unwrap_err().to_string().contains("SIGBUS"));
    }
}
