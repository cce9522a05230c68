//! The same checks for every engine of `model::engine::ENGINES`, picked by
//! the engine's name from `CASES`. An engine in the table without a case
//! (here, or in `conformance_misc` for the engines that move no file data)
//! fails `every_engine_has_a_case`, so a new engine comes with its checks:
//! add one `(name, check)` line, reusing a check of its class where one fits.
//!
//! What the checks hold an engine to (the `IoEngine` contract):
//! * data engines: a pattern written at scattered offsets is on disk byte
//!   for byte and reads back through the engine; fsync and fdatasync return
//!   0; a failed I/O returns a negative errno, a short one fewer bytes than
//!   asked, never the full length; an asynchronous engine takes `iodepth`
//!   I/Os as `Pending`, `commit` counts them, `reap` hands each back once and
//!   a poll with nothing in flight returns 0 at once; an engine that trims
//!   punches a hole (st_blocks drop, zeros read back);
//! * `null`: full results and no I/O at all;
//! * space engines (falloc, ftruncate, e4defrag): the file's size and
//!   allocation change as fio's engine of the same name changes them.

use super::testkit::*;
use super::*;
use crate::model::engine::{EngineInfo, ENGINES};
use crate::model::job::EngineOptions;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

type Check = fn(&'static EngineInfo);

/// One line per engine.
static CASES: &[(&str, Check)] = &[
    ("sync", data),
    ("psync", data),
    ("pvsync", data),
    ("pvsync2", data),
    ("vsync", data),
    ("libaio", data),
    ("io_uring", data),
    ("posixaio", data),
    ("mmap", data),
    ("splice", data),
    ("null", null),
    ("falloc", falloc),
    ("ftruncate", ftruncate),
    ("e4defrag", e4defrag),
];

#[test]
fn every_engine_has_a_case() {
    // The engines that move no file data keep their cases in conformance_misc.
    let has_case = |n: &str| CASES.iter().any(|c| c.0 == n) || super::conformance_misc::CASES.iter().any(|c| c.0 == n);
    let missing: Vec<&str> = ENGINES.iter().map(|e| e.name).filter(|n| !has_case(n)).collect();
    assert!(missing.is_empty(), "engines without a conformance case in ioengine/conformance.rs: {missing:?}");
    let unknown: Vec<&str> = CASES.iter().map(|c| c.0).filter(|n| crate::model::engine::find(n).is_none()).collect();
    assert!(unknown.is_empty(), "conformance cases for engines not in model::engine::ENGINES: {unknown:?}");
}

#[test]
fn every_engine_conforms() {
    let mut failed = Vec::new();
    for (name, check) in CASES {
        let Some(info) = crate::model::engine::find(name) else { continue };
        if std::panic::catch_unwind(|| check(info)).is_err() {
            failed.push(*name);
        }
    }
    assert!(failed.is_empty(), "engines failing their conformance checks (see the panics above): {failed:?}");
}

/// The engine, or None (reason printed) where the kernel does not offer it.
fn make(info: &EngineInfo, depth: u32, options: &EngineOptions) -> Option<Box<dyn IoEngine>> {
    let imp = find(info.name).unwrap_or_else(|| panic!("{}: not in ioengine::IMPLS", info.name));
    match (imp.make)(&EngineConfig { iodepth: depth, options }) {
        Ok(e) => Some(e),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) || e.to_string().contains("ENOSYS") => {
            eprintln!("skipping {}: unavailable here: {e}", info.name);
            None
        }
        Err(e) => panic!("{}: make: {e}", info.name),
    }
}

fn depth_of(info: &EngineInfo) -> u32 {
    if info.caps.is_async {
        4
    } else {
        1
    }
}

fn ro(path: &Path) -> File {
    File::open(path).unwrap()
}

fn data(info: &'static EngineInfo) {
    let name = info.name;
    let depth = depth_of(info);
    let opts = EngineOptions::default();
    // Pattern out, bytes on disk, pattern back, fsync in between.
    roundtrip(|d| make(info, d, &opts), depth as usize, false);
    let Some(mut eng) = make(info, depth, &opts) else { return };

    // One writable file and one read-only view of it.
    let blocks = 8u64;
    let size = blocks * BS as u64;
    let tmp = tmpfile(size);
    let rw = open(tmp.path(), false).unwrap();
    let r = ro(tmp.path());
    let mut bufs = Bufs::new(depth as usize);
    let files = [EngineFile { fd: rw.as_raw_fd(), size, writable: true }, EngineFile { fd: r.as_raw_fd(), size, writable: false }];
    eng.setup(&files, &bufs.engine_bufs()).unwrap();
    let p = bufs.ptrs.clone();

    // Syncs.
    for op in [IoOp::Fsync, IoOp::Fdatasync] {
        assert_eq!(run(&mut *eng, &[unit(op, 0, 0, p[0], 0)]), [0], "{name}: {op:?}");
    }
    // A write through a read-only descriptor (or mapping) fails with an errno.
    let res = run(&mut *eng, &[unit(IoOp::Write, 1, 0, p[0], 0)])[0];
    assert!(res < 0 && res > -4096, "{name}: write on a read-only file gave {res}, expected a negative errno");
    // A read straddling the end is short or an error, never the full length.
    let tail = IoUnit { op: IoOp::Read, file: 0, offset: size - BS as u64 / 2, len: BS as u32, buf: p[0], slot: 0, prio: 0 };
    let res = run(&mut *eng, &[tail])[0];
    assert!(res != BS as i64 && res > -4096, "{name}: read across the end gave {res}");
    assert!(res < 0 || res == BS as i64 / 2, "{name}: a short read returns the bytes there were ({res})");

    if info.caps.is_async {
        // `depth` I/Os in flight at once, each completed once.
        let ios: Vec<IoUnit> = (0..depth).map(|i| unit(IoOp::Read, 0, i as u64 * BS as u64, p[i as usize], i)).collect();
        for io in &ios {
            assert_eq!(eng.queue(io).unwrap(), Queued::Pending, "{name}: an async engine queues");
        }
        assert_eq!(eng.commit().unwrap(), depth as usize, "{name}: commit counts what was queued");
        let mut out = vec![Completion::default(); depth as usize];
        let mut seen = vec![false; depth as usize];
        let mut got = 0;
        while got < depth as usize {
            let n = eng.reap(depth as usize - got, &mut out).unwrap();
            assert!(n >= 1, "{name}: reap(min) returned nothing");
            for c in &out[..n] {
                assert!(!seen[c.slot as usize], "{name}: slot {} completed twice", c.slot);
                seen[c.slot as usize] = true;
                assert_eq!(c.res, BS as i64, "{name}: read of slot {}", c.slot);
            }
            got += n;
        }
        let t = std::time::Instant::now();
        assert_eq!(eng.reap(0, &mut out).unwrap(), 0, "{name}: a poll with nothing in flight");
        assert!(t.elapsed() < std::time::Duration::from_secs(1), "{name}: a poll does not wait");
    }

    if info.caps.dirs.trim {
        trim_punches(info, &mut *eng, &rw, tmp.path(), &mut bufs);
    } else {
        assert!(info.caps.dirs.refuses(name, false, false, true).is_some());
    }
}

/// Write the whole file, trim its middle block: st_blocks drop and it reads zeros.
fn trim_punches(info: &EngineInfo, eng: &mut dyn IoEngine, f: &File, path: &Path, bufs: &mut Bufs) {
    let name = info.name;
    let p = bufs.ptrs.clone();
    let size = f.metadata().unwrap().len();
    bufs.get(0).fill(0xa5);
    for o in (0..size).step_by(BS) {
        assert_eq!(run(eng, &[unit(IoOp::Write, 0, o, p[0], 0)]), [BS as i64]);
    }
    assert_eq!(run(eng, &[unit(IoOp::Fsync, 0, 0, p[0], 0)]), [0]);
    let before = f.metadata().unwrap().blocks();
    let trim = IoUnit { op: IoOp::Trim, file: 0, offset: 2 * BS as u64, len: 2 * BS as u32, buf: p[0], slot: 0, prio: 0 };
    assert_eq!(run(eng, &[trim]), [2 * BS as i64], "{name}: trim");
    let after = f.metadata().unwrap().blocks();
    assert!(after < before, "{name}: trim left st_blocks at {after} (was {before})");
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(bytes.len() as u64, size, "{name}: a trim keeps the size");
    assert!(bytes[2 * BS..4 * BS].iter().all(|&b| b == 0), "{name}: trimmed range reads as zeros");
    assert!(bytes[..2 * BS].iter().chain(&bytes[4 * BS..]).all(|&b| b == 0xa5), "{name}: the rest is untouched");
}

fn null(info: &'static EngineInfo) {
    assert!(info.caps.diskless);
    let Some(mut eng) = make(info, 1, &EngineOptions::default()) else { return };
    let tmp = tmpfile(4 * BS as u64);
    let f = open(tmp.path(), false).unwrap();
    let mut bufs = Bufs::new(1);
    eng.setup(&[EngineFile { fd: f.as_raw_fd(), size: 4 * BS as u64, writable: true }], &bufs.engine_bufs()).unwrap();
    bufs.get(0).fill(0x77);
    let p = bufs.ptrs[0];
    for op in [IoOp::Write, IoOp::Read, IoOp::Trim] {
        assert_eq!(run(&mut *eng, &[unit(op, 0, 0, p, 0)]), [BS as i64], "null {op:?} reports the full length");
    }
    assert_eq!(run(&mut *eng, &[unit(IoOp::Fsync, 0, 0, p, 0)]), [0]);
    assert!(bufs.get(0).iter().all(|&b| b == 0x77), "null read touched the buffer");
    let m = f.metadata().unwrap();
    assert_eq!((m.len(), m.blocks()), (4 * BS as u64, 0), "null wrote to the file");
}

fn falloc(info: &'static EngineInfo) {
    let Some(mut eng) = make(info, 1, &EngineOptions::default()) else { return };
    let tmp = tmpfile(0);
    let f = open(tmp.path(), false).unwrap();
    let r = ro(tmp.path());
    let bufs = Bufs::new(1);
    let region = 16 * BS as u64;
    let files =
        [EngineFile { fd: f.as_raw_fd(), size: region, writable: true }, EngineFile { fd: r.as_raw_fd(), size: region, writable: false }];
    eng.setup(&files, &bufs.engine_bufs()).unwrap();
    let p = bufs.ptrs[0];
    let io = |op, file, offset, len| IoUnit { op, file, offset, len, buf: p, slot: 0, prio: 0 };
    // A write allocates and extends.
    assert_eq!(run(&mut *eng, &[io(IoOp::Write, 0, 4 * BS as u64, 4 * BS as u32)]), [4 * BS as i64]);
    let m = f.metadata().unwrap();
    assert_eq!(m.len(), 8 * BS as u64, "falloc write extends the file");
    assert!(m.blocks() * 512 >= 4 * BS as u64, "falloc write allocates");
    // A read allocates beyond the end but keeps the size.
    assert_eq!(run(&mut *eng, &[io(IoOp::Read, 0, 8 * BS as u64, 4 * BS as u32)]), [4 * BS as i64]);
    let m2 = f.metadata().unwrap();
    assert_eq!(m2.len(), 8 * BS as u64, "falloc read keeps the size");
    assert!(m2.blocks() > m.blocks(), "falloc read allocates");
    // A trim punches.
    assert_eq!(run(&mut *eng, &[io(IoOp::Trim, 0, 4 * BS as u64, 4 * BS as u32)]), [4 * BS as i64]);
    let m3 = f.metadata().unwrap();
    assert!(m3.blocks() < m2.blocks() && m3.len() == 8 * BS as u64, "falloc trim punches a hole keeping the size");
    assert_eq!(run(&mut *eng, &[io(IoOp::Fsync, 0, 0, 0)]), [0]);
    let res = run(&mut *eng, &[io(IoOp::Write, 1, 0, BS as u32)])[0];
    assert!(res < 0 && res > -4096, "falloc on a read-only file: {res}");
}

fn ftruncate(info: &'static EngineInfo) {
    let Some(mut eng) = make(info, 1, &EngineOptions::default()) else { return };
    let tmp = tmpfile(64 * BS as u64);
    let f = open(tmp.path(), false).unwrap();
    let bufs = Bufs::new(1);
    eng.setup(&[EngineFile { fd: f.as_raw_fd(), size: 64 * BS as u64, writable: true }], &bufs.engine_bufs()).unwrap();
    let p = bufs.ptrs[0];
    for off in [3 * BS as u64, 40 * BS as u64 + 5, 0] {
        assert_eq!(run(&mut *eng, &[unit(IoOp::Write, 0, off, p, 0)]), [BS as i64]);
        assert_eq!(f.metadata().unwrap().len(), off, "ftruncate write sets the size to the offset");
    }
    for op in [IoOp::Read, IoOp::Trim] {
        assert_eq!(run(&mut *eng, &[unit(op, 0, 0, p, 0)]), [-(libc::EINVAL as i64)], "ftruncate {op:?}");
    }
    assert_eq!(run(&mut *eng, &[unit(IoOp::Fdatasync, 0, 0, p, 0)]), [0]);
    assert!(info.caps.dirs.refuses("ftruncate", true, false, false).is_some());
}

/// On ext4, blocks move to the donor and back and the data stays; anywhere
/// else every I/O is an errno, as with fio.
fn e4defrag(info: &'static EngineInfo) {
    let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
    let donor = dir.path().join("donor");
    let opts = EngineOptions { donorname: Some(donor.display().to_string()), ..EngineOptions::default() };
    let Some(mut eng) = make(info, 1, &opts) else { return };
    let path = dir.path().join("orig");
    let size = 8 * BS as u64;
    let content: Vec<u8> = (0..size).map(pattern).collect();
    std::fs::write(&path, &content).unwrap();
    let f = open(&path, false).unwrap();
    f.sync_all().unwrap();
    // As the runner's invalidate=1 does: a move within a cached folio that an
    // earlier move dirtied is refused with EBUSY by recent kernels.
    // SAFETY: posix_fadvise takes a descriptor and integers.
    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    let bufs = Bufs::new(1);
    eng.setup(&[EngineFile { fd: f.as_raw_fd(), size, writable: true }], &bufs.engine_bufs()).unwrap();
    assert!(donor.exists(), "the donor is created");
    let p = bufs.ptrs[0];
    let res: Vec<i64> = (0..8).map(|b| run(&mut *eng, &[unit(IoOp::Write, 0, b * BS as u64, p, 0)])[0]).collect();
    if is_ext4(dir.path()) {
        assert!(res.iter().all(|&r| r == BS as i64), "e4defrag on ext4: {res:?}");
    } else {
        eprintln!("e4defrag: {} is not ext4; checking that each I/O fails with an errno", dir.path().display());
        assert!(res.iter().all(|&r| r < 0 && r > -4096), "e4defrag off ext4: {res:?}");
    }
    assert_eq!(std::fs::read(&path).unwrap(), content, "moving extents keeps the data");
    assert_eq!(run(&mut *eng, &[unit(IoOp::Read, 0, 0, p, 0)]), [-(libc::EINVAL as i64)]);
    drop(eng);
    assert!(!donor.exists(), "a donor the engine created is removed");
}

fn is_ext4(path: &Path) -> bool {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: libc::statfs is plain integers, for which all-zero bytes is a valid value.
    let mut s: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a NUL-terminated path and `s` a live statfs that the call writes into.
    unsafe { libc::statfs(c.as_ptr(), &mut s) == 0 && s.f_type == 0xEF53 }
}
