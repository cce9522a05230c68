//! Test helpers shared by the engine tests: aligned buffers, a temporary
//! file, one batch through an engine, and a write/fsync/read-back round trip.

use super::*;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

pub const BS: usize = 4096;

/// `n` buffers of `BS` bytes, 4096-aligned so O_DIRECT accepts them.
pub struct Bufs {
    pub ptrs: Vec<*mut u8>,
    layout: Layout,
}

impl Bufs {
    pub fn new(n: usize) -> Bufs {
        let layout = Layout::from_size_align(BS, 4096).unwrap();
        let ptrs = (0..n)
            .map(|_| {
                // SAFETY: `layout` is BS bytes, non-zero as alloc_zeroed requires; null is checked next.
                let p = unsafe { alloc_zeroed(layout) };
                assert!(!p.is_null());
                p
            })
            .collect();
        Bufs { ptrs, layout }
    }
    pub fn engine_bufs(&self) -> Vec<EngineBuf> {
        self.ptrs.iter().map(|&ptr| EngineBuf { ptr, len: BS }).collect()
    }
    pub fn get(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: `ptrs[i]` (bounds-checked by the index) is a live allocation of BS zero-initialised bytes, borrowed
        // mutably through `&mut self` for as long as the slice lives.
        unsafe { std::slice::from_raw_parts_mut(self.ptrs[i], BS) }
    }
}

impl Drop for Bufs {
    fn drop(&mut self) {
        for &p in &self.ptrs {
            // SAFETY: each pointer came from alloc_zeroed with `self.layout` and is freed once, here.
            unsafe { dealloc(p, self.layout) };
        }
    }
}

pub fn pattern(off: u64) -> u8 {
    (off ^ (off >> 12).wrapping_mul(131) ^ 0x5a) as u8
}

pub fn tmpfile(size: u64) -> tempfile::NamedTempFile {
    let f = tempfile::NamedTempFile::new_in(std::env::temp_dir()).unwrap();
    f.as_file().set_len(size).unwrap();
    f
}

/// Open read-write, with O_DIRECT if asked; `None` (and a note) if the
/// file system refuses O_DIRECT.
pub fn open(path: &Path, direct: bool) -> Option<File> {
    let flags = if direct { libc::O_DIRECT } else { 0 };
    match OpenOptions::new().read(true).write(true).custom_flags(flags).open(path) {
        Ok(f) => Some(f),
        Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => {
            eprintln!("skipping O_DIRECT case: {} does not support it", path.display());
            None
        }
        Err(e) => panic!("open {}: {e}", path.display()),
    }
}

pub fn unit(op: IoOp, file: u32, offset: u64, buf: *mut u8, slot: u32) -> IoUnit {
    let len = if matches!(op, IoOp::Read | IoOp::Write | IoOp::Trim) { BS as u32 } else { 0 };
    IoUnit { op, file, offset, len, buf, slot, prio: 0 }
}

/// Queue a batch (distinct slots 0..n), commit, reap everything; the
/// result of each I/O indexed by slot.
pub fn run(eng: &mut dyn IoEngine, ios: &[IoUnit]) -> Vec<i64> {
    let mut res = vec![i64::MIN; ios.len()];
    let mut pending = 0;
    for io in ios {
        match eng.queue(io).unwrap() {
            Queued::Done(r) => res[io.slot as usize] = r,
            Queued::Pending => pending += 1,
        }
    }
    assert_eq!(eng.commit().unwrap(), pending);
    let mut out = vec![Completion::default(); ios.len()];
    while pending > 0 {
        let n = eng.reap(1, &mut out).unwrap();
        assert!(n >= 1 && n <= pending);
        for c in &out[..n] {
            assert_eq!(res[c.slot as usize], i64::MIN, "slot {} completed twice", c.slot);
            res[c.slot as usize] = c.res;
        }
        pending -= n;
    }
    res
}

/// Write a pattern in scattered batches of `depth`, fsync, check the file
/// independently, read it back through the engine and compare.
pub fn roundtrip(mk: impl Fn(u32) -> Option<Box<dyn IoEngine>>, depth: usize, direct: bool) {
    let rounds = 3;
    let size = (depth * rounds * BS) as u64;
    let tmp = tmpfile(size);
    let Some(file) = open(tmp.path(), direct) else { return };
    let mut bufs = Bufs::new(depth);
    // Declared after the buffers, so dropped (and quiesced) before them.
    let Some(mut eng) = mk(depth as u32) else { return };
    let eng = &mut *eng;
    let files = [EngineFile { fd: file.as_raw_fd(), size, writable: true }];
    eng.setup(&files, &bufs.engine_bufs()).unwrap();
    // Round r, slot i covers block i*rounds + r: every batch is scattered.
    let off = |i: usize, r: usize| ((i * rounds + r) * BS) as u64;
    for r in 0..rounds {
        let ios: Vec<IoUnit> = (0..depth)
            .map(|i| {
                let o = off(i, r);
                for (k, b) in bufs.get(i).iter_mut().enumerate() {
                    *b = pattern(o + k as u64);
                }
                unit(IoOp::Write, 0, o, bufs.ptrs[i], i as u32)
            })
            .collect();
        assert!(run(eng, &ios).iter().all(|&r| r == BS as i64));
    }
    let res = run(eng, &[unit(IoOp::Fsync, 0, 0, bufs.ptrs[0], 0)]);
    assert_eq!(res[0], 0, "fsync");
    let on_disk = std::fs::read(tmp.path()).unwrap();
    assert_eq!(on_disk.len() as u64, size);
    assert!(on_disk.iter().enumerate().all(|(o, &b)| b == pattern(o as u64)), "file content");
    for r in 0..rounds {
        let ios: Vec<IoUnit> = (0..depth)
            .map(|i| {
                bufs.get(i).fill(0);
                unit(IoOp::Read, 0, off(i, r), bufs.ptrs[i], i as u32)
            })
            .collect();
        assert!(run(eng, &ios).iter().all(|&r| r == BS as i64));
        for i in 0..depth {
            let o = off(i, r);
            assert!(bufs.get(i).iter().enumerate().all(|(k, &b)| b == pattern(o + k as u64)), "block at {o}");
        }
    }
}
