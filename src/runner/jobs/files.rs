//! The files a job works on: naming, safety checks, layout, cache invalidation
//! and opening. Everything here happens before the measured window.

use super::offsets::Region;
use crate::environment::cleanup::{self, Token};
use crate::environment::lock::{lock_open, lock_path, Lock, LockError};
use crate::environment::safety;
use crate::environment::space::Need;
use crate::model::engine::{Caps, Class, FileUse};
use crate::model::job::{Fallocate, JobSpec, SyncMode, READ, WRITE};
use crate::runner::rng::Rng;
use crate::runner::RunError;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// One file of one worker, with the region its I/O covers.
#[derive(Clone, Debug)]
pub struct PreparedFile {
    pub path: PathBuf,
    pub region: Region,
    /// Missing until the worker opens it (create_on_open).
    pub create: bool,
    /// The engine does no I/O (ioengine=null): never laid out or opened.
    pub diskless: bool,
    /// A character device such as /dev/null: opened as it is, never laid out.
    pub chardev: bool,
}

/// Files fsbench created in this run: the only ones it may delete. And
/// the locks on the files it uses (each file itself), so a second run on
/// the same files is refused instead of writing into the first one's.
#[derive(Default, Debug)]
pub struct Ledger {
    /// Each with the undo step that removes it, on record with its identity
    /// (so `fsbench cleanup` removes it after a SIGKILL); None for what the
    /// engine creates itself during the run (`create_on_open`, the file
    /// engines), which this run removes by name and no record lists.
    pub created: Vec<(PathBuf, Option<Token>)>,
    /// Files laid out in this run, with the length they were given.
    laid_out: std::collections::HashMap<PathBuf, u64>,
    locks: Vec<Lock>,
    /// Device and inode of each locked file: two spellings of one file are
    /// one lock (a second flock from this process would conflict).
    locked: HashSet<(u64, u64)>,
}

impl Ledger {
    /// Lock `path` (open as `file`, or opened here when None) for the run.
    fn lock(&mut self, path: &Path, file: Option<&File>) -> Result<(), RunError> {
        let meta = match file {
            Some(f) => f.metadata(),
            None => std::fs::metadata(path),
        }
        .map_err(|e| format!("cannot examine {}: {e}", path.display()))?;
        if !self.locked.insert((meta.dev(), meta.ino())) {
            return Ok(());
        }
        let held = match file {
            Some(f) => f.try_clone().map_err(|e| LockError::Other(format!("{}: {e}", path.display()))).and_then(|f| lock_open(f, path)),
            None => lock_path(path),
        };
        match held {
            Ok(l) => {
                self.locks.push(l);
                Ok(())
            }
            Err(LockError::InUse(u)) => Err(RunError::InUse(format!("{u}; two runs on one file would mix their I/O"))),
            Err(LockError::Other(m)) => Err(RunError::Workload(m)),
        }
    }

    /// Delete the created files for which `pred` holds; returns what failed.
    pub fn remove_where(&mut self, pred: impl Fn(&Path) -> bool) -> Vec<String> {
        let mut errors = Vec::new();
        let mut kept = Vec::new();
        for (p, token) in self.created.drain(..) {
            if !pred(&p) {
                kept.push((p, token));
                continue;
            }
            if let Some(t) = token {
                if let Err(e) = t.done() {
                    errors.push(e);
                }
                continue;
            }
            // Directories are the dir* engines' files.
            let removed = if p.is_dir() { std::fs::remove_dir(&p) } else { std::fs::remove_file(&p) };
            match removed {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    errors.push(format!("could not remove {}: {e}", p.display()));
                    kept.push((p, None));
                }
            }
        }
        self.created = kept;
        errors
    }

    /// The created files that stay (fio keeps its files): the user's from
    /// now on, off this run's record.
    pub fn hand_over(&mut self) {
        for (_, t) in self.created.drain(..) {
            if let Some(t) = t {
                t.forget();
            }
        }
    }
}

/// Is `path` a character device (/dev/null, /dev/zero)?
pub fn is_char_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).map(|m| m.file_type().is_char_device()).unwrap_or(false)
}

/// Does the job's engine do no I/O at all (ioengine=null)?
pub fn diskless(spec: &JobSpec) -> bool {
    crate::model::engine::find(&spec.ioengine).is_some_and(|e| e.caps.diskless)
}

/// Bytes of each of a clone's files: `filesize` (a range is drawn per
/// file, reproducibly from the seed), else `size` shared among the files.
fn file_sizes(spec: &JobSpec, clone: u32, nfiles: usize) -> Vec<Option<u64>> {
    match spec.misc.filesize {
        Some((lo, hi)) => {
            let mut rng = Rng::new(spec.randseed ^ 0xf11e ^ u64::from(clone) << 32);
            (0..nfiles).map(|_| Some(lo + rng.below(hi - lo + 1))).collect()
        }
        None => vec![spec.size.map(|total| total / nfiles.max(1) as u64); nfiles],
    }
}

/// Where clone `clone`'s region starts in each file (fio `offset_increment`).
fn start_offset(spec: &JobSpec, clone: u32) -> u64 {
    spec.offset + u64::from(clone) * spec.misc.offset_increment
}

/// How the job's engine uses its files (`Data` for an unknown engine, which
/// the worker then refuses).
pub fn file_use(spec: &JobSpec) -> FileUse {
    crate::model::engine::find(&spec.ioengine).map_or(FileUse::Data, |e| e.caps.files)
}

/// Smallest block size over the directions the job uses: regions and random
/// offsets are multiples of it.
pub fn granularity(spec: &JobSpec) -> u64 {
    let mut g = u64::MAX;
    if spec.rw.reads() {
        g = g.min(spec.bs[READ].min());
    }
    if spec.rw.writes() || spec.rw.trims() {
        g = g.min(spec.bs[WRITE].min());
    }
    g.max(1)
}

/// What laying out every clone's files will occupy, file by file (a file
/// named by several jobs counts once, at its largest), for the free-space
/// check before anything is written. Files whose size comes from what
/// exists need nothing new.
pub fn space_needs(jobs: &[JobSpec]) -> Vec<Need> {
    let mut needs: Vec<Need> = Vec::new();
    let mut index: std::collections::HashMap<PathBuf, usize> = Default::default();
    for spec in jobs {
        // Only laid-out data takes space; created, stat'ed or deleted
        // files take an inode each.
        if diskless(spec) || spec.misc.fill_device || file_use(spec) != FileUse::Data {
            continue;
        }
        let gran = granularity(spec);
        for clone in 0..spec.numjobs {
            let paths = spec.file_paths(clone);
            let sizes = file_sizes(spec, clone, paths.len());
            for (path, size) in paths.into_iter().zip(sizes) {
                let Some(size) = size else { continue };
                if is_char_device(&path) {
                    continue;
                }
                let bytes = start_offset(spec, clone) + size / gran * gran;
                match index.get(&path) {
                    Some(&i) => needs[i].bytes = needs[i].bytes.max(bytes),
                    None => {
                        index.insert(path.clone(), needs.len());
                        needs.push(Need::replacing(&path, bytes));
                    }
                }
            }
        }
    }
    needs
}

/// Check, create and lay out the files of one clone.
pub fn prepare(spec: &JobSpec, clone: u32, allow_device: bool, ledger: &mut Ledger) -> Result<Vec<PreparedFile>, RunError> {
    let uses = file_use(spec);
    if uses == FileUse::None {
        return Ok(vec![no_file(spec, clone)]);
    }
    let paths = spec.file_paths(clone);
    let sizes = file_sizes(spec, clone, paths.len());
    let gran = granularity(spec);
    let start = start_offset(spec, clone);
    let no_io = diskless(spec);
    let mut out = Vec::with_capacity(paths.len());
    for (path, per_file) in paths.into_iter().zip(sizes) {
        if uses != FileUse::Data {
            let size = per_file.ok_or_else(|| {
                format!("job '{}': ioengine={} needs filesize= (or size=) to count its files' I/O", spec.name, spec.ioengine)
            })?;
            out.push(by_path(spec, path, size, uses, ledger)?);
            continue;
        }
        let is_device = !no_io && safety::is_block_device(&path);
        let chardev = !no_io && !is_device && is_char_device(&path);
        if is_device && spec.modifies_files() {
            safety::check_device_usable(&path, allow_device)?;
        }
        let size = match per_file {
            Some(s) => s,
            None if spec.misc.fill_device && !is_device => free_space(&path)? / spec.nrfiles.max(1) as u64,
            None if no_io || chardev => {
                let what = if no_io { format!("ioengine={}", spec.ioengine) } else { format!("the character device {}", path.display()) };
                return Err(format!(
                    "job '{}': {what} has no size of its own: expected size= (as fio: 'you need to specify size=')",
                    spec.name
                )
                .into());
            }
            None => existing_size(&path, is_device)
                .map_err(|e| format!("job '{}': size is not set and {} {e}", spec.name, path.display()))?
                .saturating_sub(start),
        };
        let usable = size / gran * gran;
        if usable < spec.max_bs() {
            return Err(format!(
                "job '{}': {} gives {size} bytes per file, less than one block of {} bytes",
                spec.name,
                path.display(),
                spec.max_bs()
            )
            .into());
        }
        let region = Region { start, end: start + usable };
        let create = if no_io || chardev {
            false
        } else if is_device {
            check_device_size(&path, region.end)?;
            ledger.lock(&path, None)?;
            false
        } else {
            lay_out(spec, &path, region.end, ledger)?
        };
        out.push(PreparedFile { path, region, create, diskless: no_io, chardev });
    }
    Ok(out)
}

/// Free bytes where `path` is (or will be): what fill_device writes.
fn free_space(path: &Path) -> Result<u64, String> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).map_err(|e| e.to_string())?;
    // SAFETY: statvfs writes one struct statvfs into `st`, a zeroed local of that type, and reads the NUL-terminated
    // path `c`, alive for the call.
    let (r, st) = unsafe {
        let mut st: libc::statvfs = std::mem::zeroed();
        (libc::statvfs(c.as_ptr(), &mut st), st)
    };
    if r != 0 {
        return Err(format!("fill_device: cannot read the free space of {}: {}", dir.display(), std::io::Error::last_os_error()));
    }
    Ok(st.f_bavail.saturating_mul(st.f_frsize))
}

/// The stand-in file of an engine that has none (cpuio, exec, net): it
/// carries the job's byte budget and, for a unix socket, its path.
fn no_file(spec: &JobSpec, clone: u32) -> PreparedFile {
    let gran = granularity(spec);
    let end = spec.size.map_or(u64::MAX / 2, |s| (s / gran * gran).max(gran));
    let path = spec.filenames.first().cloned().unwrap_or_else(|| PathBuf::from(format!("{}.{clone}", spec.name)));
    PreparedFile { path, region: Region { start: 0, end }, create: false, diskless: false, chardev: false }
}

/// A file (or directory) an engine works on by path: laid out unless the
/// engine creates it; never locked, as no data of it is read or written.
fn by_path(spec: &JobSpec, path: PathBuf, size: u64, uses: FileUse, ledger: &mut Ledger) -> Result<PreparedFile, RunError> {
    let gran = granularity(spec);
    let usable = size / gran * gran;
    if usable < spec.max_bs() {
        return Err(format!("job '{}': {size} bytes per file is less than one block of {} bytes", spec.name, spec.max_bs()).into());
    }
    let region = Region { start: 0, end: usable };
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() && !parent.is_dir() {
            return Err(format!("directory {} does not exist", parent.display()).into());
        }
    }
    safety::check_not_new_in_dev(&path)?;
    let exists = path.symlink_metadata().is_ok();
    match uses {
        FileUse::MadeByEngine => {
            if !exists && ledger.laid_out.insert(path.clone(), 0).is_none() {
                ledger.created.push((path.clone(), None));
            }
            Ok(PreparedFile { path, region, create: true, diskless: false, chardev: false })
        }
        FileUse::DirsByPath => {
            if !exists {
                std::fs::create_dir(&path).map_err(|e| format!("cannot create directory {}: {e}", path.display()))?;
                ledger.created.push((path.clone(), Some(cleanup::made_dir(&path))));
            } else if !path.is_dir() {
                return Err(format!("job '{}': {} exists and is not a directory", spec.name, path.display()).into());
            }
            ledger.laid_out.insert(path.clone(), 0);
            Ok(PreparedFile { path, region, create: false, diskless: false, chardev: false })
        }
        _ => {
            let create = lay_out(spec, &path, usable, ledger)?;
            Ok(PreparedFile { path, region, create, diskless: false, chardev: false })
        }
    }
}

fn existing_size(path: &Path, is_device: bool) -> Result<u64, String> {
    if is_device {
        return device_size(path);
    }
    match std::fs::metadata(path) {
        Ok(m) if m.len() > 0 => Ok(m.len()),
        Ok(_) => Err("is empty".into()),
        Err(_) => Err("does not exist".into()),
    }
}

/// A block device's size in bytes (BLKGETSIZE64).
pub(crate) fn device_size(path: &Path) -> Result<u64, String> {
    let f = File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    let mut size: u64 = 0;
    // BLKGETSIZE64 = _IOR(0x12, 114, size_t)
    const BLKGETSIZE64: libc::c_ulong = 0x8008_1272;
    // SAFETY: BLKGETSIZE64 writes one u64 into `size`, a live local of that type; `f` is open for the whole call.
    let r = unsafe { libc::ioctl(f.as_raw_fd(), BLKGETSIZE64, &mut size) };
    if r < 0 {
        return Err(format!("cannot read the size of {}: {}", path.display(), std::io::Error::last_os_error()));
    }
    Ok(size)
}

fn check_device_size(path: &Path, needed: u64) -> Result<(), String> {
    let size = device_size(path)?;
    if size < needed {
        return Err(format!("{} has {size} bytes; the job needs {needed}", path.display()));
    }
    Ok(())
}

/// Make sure `path` exists with at least `needed` bytes the job can use.
/// Reads need real data (written here, random, then synced); write-only jobs
/// only need the size, so they get fallocate + ftruncate as with fio.
/// Returns true when the file is left for the worker to create on open.
fn lay_out(spec: &JobSpec, path: &Path, needed: u64, ledger: &mut Ledger) -> Result<bool, RunError> {
    if ledger.laid_out.get(path).is_some_and(|&have| have >= needed) {
        return Ok(false);
    }
    let exists = path.exists();
    safety::check_not_new_in_dev(path)?;
    if !exists && !spec.misc.allow_file_create {
        return Err(format!("{} does not exist and allow_file_create=0 forbids creating it", path.display()).into());
    }
    if !exists && spec.create_on_open && !spec.rw.reads() {
        ledger.created.push((path.to_path_buf(), None));
        ledger.laid_out.insert(path.to_path_buf(), needed);
        return Ok(true);
    }
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() && !parent.is_dir() {
            return Err(format!("directory {} does not exist", parent.display()).into());
        }
    }
    // A file that is not there yet is made here (O_EXCL: it is this run's,
    // and goes on record with its identity).
    let token = (!exists).then(|| cleanup::file_to_create(path));
    let opened = OpenOptions::new().read(true).write(true).create(true).create_new(!exists).truncate(false).open(path);
    let f = match opened {
        Ok(f) => f,
        Err(e) => {
            if let Some(t) = token {
                t.forget();
            }
            return Err(format!("cannot create {}: {e}", path.display()).into());
        }
    };
    if let Some(t) = token {
        t.created_fd(f.as_raw_fd());
        ledger.created.push((path.to_path_buf(), Some(t)));
    }
    // Before anything is written: the file may be another run's.
    ledger.lock(path, Some(&f))?;
    let have = f.metadata().map(|m| m.len()).unwrap_or(0);
    if have < needed {
        if spec.misc.fill_device {
            // Sparse: the writes themselves take the space, until ENOSPC.
            f.set_len(needed).map_err(|e| format!("cannot extend {}: {e}", path.display()))?;
        } else if spec.rw.reads() || spec.misc.overwrite || (spec.rw.trims() && !spec.rw.writes()) {
            // A trim needs allocated blocks to discard, as a read needs data.
            fill_file(&f, have, needed, spec, path)?;
        } else {
            preallocate(&f, needed, spec.fallocate);
            f.set_len(needed).map_err(|e| format!("cannot extend {}: {e}", path.display()))?;
        }
    }
    ledger.laid_out.insert(path.to_path_buf(), needed.max(have));
    Ok(false)
}

fn fill_file(f: &File, from: u64, to: u64, spec: &JobSpec, path: &Path) -> Result<(), String> {
    let mut rng = Rng::new(spec.randseed ^ 0x1a1d0);
    let mut buf = vec![0u8; 1 << 20];
    crate::runner::buffers::fill(&mut buf, &spec.buffer, &mut rng);
    let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
    use std::io::Seek;
    w.seek(std::io::SeekFrom::Start(from)).map_err(|e| e.to_string())?;
    let mut at = from;
    while at < to {
        let n = ((to - at) as usize).min(buf.len());
        w.write_all(&buf[..n]).map_err(|e| format!("laying out {}: {e}", path.display()))?;
        at += n as u64;
    }
    w.flush().map_err(|e| format!("laying out {}: {e}", path.display()))?;
    f.sync_all().map_err(|e| format!("syncing {}: {e}", path.display()))
}

fn preallocate(f: &File, len: u64, how: Fallocate) {
    let fd = f.as_raw_fd();
    // A file system without fallocate (tmpfs before 3.5, vfat) still gets
    // its size from ftruncate; preallocation is only an optimisation.
    // SAFETY: fallocate and posix_fallocate take `f`'s descriptor (open for
    // the whole call) and integers; no memory of ours is involved.
    unsafe {
        match how {
            Fallocate::None => {}
            Fallocate::Native => {
                libc::fallocate(fd, 0, 0, len as libc::off_t);
            }
            Fallocate::Keep => {
                libc::fallocate(fd, libc::FALLOC_FL_KEEP_SIZE, 0, len as libc::off_t);
            }
            Fallocate::Posix => {
                libc::posix_fallocate(fd, 0, len as libc::off_t);
            }
        }
    }
}

/// Drop the file's cached pages (fio's invalidate=1), so reads start cold.
pub fn invalidate(file: &PreparedFile) -> Result<(), String> {
    if file.create || file.diskless || file.chardev {
        return Ok(());
    }
    let f = File::open(&file.path).map_err(|e| format!("cannot open {}: {e}", file.path.display()))?;
    let fd = f.as_raw_fd();
    // SAFETY: fdatasync and posix_fadvise take `f`'s descriptor (open for the
    // whole call) and integers; no memory of ours is involved.
    unsafe {
        libc::fdatasync(fd);
        libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
    }
    Ok(())
}

/// Open a worker's file with the job's flags.
pub fn open(spec: &JobSpec, file: &PreparedFile, caps: &Caps) -> Result<File, String> {
    let writes = spec.modifies_files();
    let mapped = caps.mapped;
    let mut flags = 0;
    if spec.direct && !mapped {
        flags |= libc::O_DIRECT;
    }
    flags |= match spec.sync {
        SyncMode::None => 0,
        SyncMode::Sync => libc::O_SYNC,
        SyncMode::Dsync => libc::O_DSYNC,
    };
    let f = OpenOptions::new()
        // mmap needs read access even to write through a mapping, and
        // EXT4_IOC_MOVE_EXT wants the file open for reading and writing.
        .read(spec.rw.reads() || mapped || caps.class == Class::Space || !writes || spec.verify.enabled())
        .write(writes)
        .create(file.create)
        .custom_flags(flags)
        .open(&file.path);
    match f {
        Ok(f) => {
            if file.create && mapped {
                f.set_len(file.region.end).map_err(|e| e.to_string())?;
            }
            Ok(f)
        }
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) && spec.direct => Err(format!(
            "{}: the file system does not support O_DIRECT (direct=1); use direct=0 to measure buffered I/O",
            file.path.display()
        )),
        Err(e) => Err(format!("cannot open {}: {e}", file.path.display())),
    }
}

/// fio's `fadvise_hint` at open: RANDOM for random jobs (no readahead),
/// SEQUENTIAL otherwise, or what the job names. Advice only: a file system
/// that ignores it changes nothing, so failures are not errors.
pub fn advise(spec: &JobSpec, f: &File, file: &PreparedFile) {
    use crate::model::job_misc::Fadvise;
    if file.chardev {
        return;
    }
    let advice = match spec.misc.fadvise {
        Fadvise::None => return,
        Fadvise::ByPattern if spec.rw.is_random() => libc::POSIX_FADV_RANDOM,
        Fadvise::ByPattern | Fadvise::Sequential => libc::POSIX_FADV_SEQUENTIAL,
        Fadvise::Random => libc::POSIX_FADV_RANDOM,
        Fadvise::Normal => libc::POSIX_FADV_NORMAL,
    };
    let len = file.region.end - file.region.start;
    // SAFETY: posix_fadvise takes `f`'s descriptor (open for the call) and integers.
    unsafe {
        libc::posix_fadvise(f.as_raw_fd(), file.region.start as libc::off_t, len as libc::off_t, advice);
    }
}

/// `fadvise_hint` for a mapped engine, applied with madvise to its mapping.
pub fn map_advice(spec: &JobSpec) -> crate::model::job::MapAdvice {
    use crate::model::job::MapAdvice;
    use crate::model::job_misc::Fadvise;
    match spec.misc.fadvise {
        Fadvise::None => MapAdvice::None,
        Fadvise::ByPattern if spec.rw.is_random() => MapAdvice::Random,
        Fadvise::ByPattern | Fadvise::Sequential => MapAdvice::Sequential,
        Fadvise::Random => MapAdvice::Random,
        Fadvise::Normal => MapAdvice::Normal,
    }
}

/// Drop a file's clean cached pages: fio does this each time a time-based
/// job starts over on a file (invalidate=1). Not on the per-I/O path: once
/// per pass over the file.
pub fn drop_cache(fd: i32) {
    if fd < 0 {
        return;
    }
    // SAFETY: posix_fadvise on a descriptor the worker keeps open; integers only.
    unsafe {
        libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}
