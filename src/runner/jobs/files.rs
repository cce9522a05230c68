//! The files a job works on: naming, safety checks, layout, cache invalidation
//! and opening. Everything here happens before the measured window.

use super::offsets::Region;
use crate::environment::lock::{lock_open, lock_path, Lock, LockError};
use crate::environment::safety;
use crate::environment::space::Need;
use crate::model::engine::FileUse;
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
}

/// Files fsbench created in this run: the only ones it may delete. And
/// the locks on the files it uses (each file itself), so a second run on
/// the same files is refused instead of writing into the first one's.
#[derive(Default, Debug)]
pub struct Ledger {
    pub created: Vec<PathBuf>,
    laid_out: HashSet<PathBuf>,
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
        self.created.retain(|p| {
            if !pred(p) {
                return true;
            }
            // Directories are the dir* engines' files.
            let removed = if p.is_dir() { std::fs::remove_dir(p) } else { std::fs::remove_file(p) };
            match removed {
                Ok(()) => false,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
                Err(e) => {
                    errors.push(format!("could not remove {}: {e}", p.display()));
                    true
                }
            }
        });
        errors
    }
}

/// The paths clone `clone` of `spec` uses.
pub fn paths(spec: &JobSpec, clone: u32) -> Vec<PathBuf> {
    if !spec.filenames.is_empty() {
        return spec.filenames.clone();
    }
    let dir = spec.directory.clone().unwrap_or_else(|| PathBuf::from("."));
    (0..spec.nrfiles).map(|n| dir.join(format!("{}.{}.{}", spec.name, clone, n))).collect()
}

/// How the job's engine uses its files (`Data` for an unknown engine, which
/// the worker then refuses).
pub fn file_use(spec: &JobSpec) -> FileUse {
    crate::model::engine::find(&spec.ioengine).map_or(FileUse::Data, |e| e.caps.files)
}

/// Bytes of each of `n` files: fio's `filesize`, else `size` shared out.
pub fn per_file(spec: &JobSpec, n: usize) -> Option<u64> {
    spec.filesize.or(spec.size.map(|total| total / n.max(1) as u64))
}

/// Smallest block size over the directions the job uses: regions and random
/// offsets are multiples of it.
pub fn granularity(spec: &JobSpec) -> u64 {
    let mut g = u64::MAX;
    if spec.rw.reads() {
        g = g.min(spec.bs[READ].min());
    }
    if spec.rw.writes() {
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
        if spec.size.is_none() && spec.filesize.is_none() || file_use(spec) != FileUse::Data {
            continue;
        }
        let gran = granularity(spec);
        for clone in 0..spec.numjobs {
            let paths = paths(spec, clone);
            let per_file = per_file(spec, paths.len()).unwrap_or(0) / gran * gran;
            for path in paths {
                let bytes = spec.offset + per_file;
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
    let paths = paths(spec, clone);
    let per_file = per_file(spec, paths.len());
    let gran = granularity(spec);
    let mut out = Vec::with_capacity(paths.len());
    for path in paths {
        if uses != FileUse::Data {
            let size = per_file.ok_or_else(|| {
                format!("job '{}': ioengine={} needs filesize= (or size=) to count its files' I/O", spec.name, spec.ioengine)
            })?;
            out.push(by_path(spec, path, size, uses, ledger)?);
            continue;
        }
        let is_device = safety::is_block_device(&path);
        if is_device && spec.modifies_files() {
            safety::check_device_usable(&path, allow_device)?;
        }
        let size = match per_file {
            Some(s) => s,
            None => existing_size(&path, is_device)
                .map_err(|e| format!("job '{}': size is not set and {} {e}", spec.name, path.display()))?
                .saturating_sub(spec.offset),
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
        let region = Region { start: spec.offset, end: spec.offset + usable };
        let create = if is_device {
            check_device_size(&path, region.end)?;
            ledger.lock(&path, None)?;
            false
        } else {
            lay_out(spec, &path, region.end, ledger)?
        };
        out.push(PreparedFile { path, region, create });
    }
    Ok(out)
}

/// The stand-in file of an engine that has none (cpuio, exec, net): it
/// carries the job's byte budget and, for a unix socket, its path.
fn no_file(spec: &JobSpec, clone: u32) -> PreparedFile {
    let gran = granularity(spec);
    let end = spec.size.map_or(u64::MAX / 2, |s| (s / gran * gran).max(gran));
    let path = spec.filenames.first().cloned().unwrap_or_else(|| PathBuf::from(format!("{}.{clone}", spec.name)));
    PreparedFile { path, region: Region { start: 0, end }, create: false }
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
            if !exists && ledger.laid_out.insert(path.clone()) {
                ledger.created.push(path.clone());
            }
            Ok(PreparedFile { path, region, create: true })
        }
        FileUse::DirsByPath => {
            if !exists {
                std::fs::create_dir(&path).map_err(|e| format!("cannot create directory {}: {e}", path.display()))?;
                ledger.created.push(path.clone());
            } else if !path.is_dir() {
                return Err(format!("job '{}': {} exists and is not a directory", spec.name, path.display()).into());
            }
            ledger.laid_out.insert(path.clone());
            Ok(PreparedFile { path, region, create: false })
        }
        _ => {
            let create = lay_out(spec, &path, usable, ledger)?;
            Ok(PreparedFile { path, region, create })
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
    if ledger.laid_out.contains(path) {
        return Ok(false);
    }
    let exists = path.exists();
    safety::check_not_new_in_dev(path)?;
    if !exists && spec.create_on_open && !spec.rw.reads() {
        ledger.created.push(path.to_path_buf());
        ledger.laid_out.insert(path.to_path_buf());
        return Ok(true);
    }
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() && !parent.is_dir() {
            return Err(format!("directory {} does not exist", parent.display()).into());
        }
    }
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    if !exists {
        ledger.created.push(path.to_path_buf());
    }
    // Before anything is written: the file may be another run's.
    ledger.lock(path, Some(&f))?;
    let have = f.metadata().map(|m| m.len()).unwrap_or(0);
    if have < needed {
        if spec.rw.reads() {
            fill_file(&f, have, needed, spec, path)?;
        } else {
            preallocate(&f, needed, spec.fallocate);
            f.set_len(needed).map_err(|e| format!("cannot extend {}: {e}", path.display()))?;
        }
    }
    ledger.laid_out.insert(path.to_path_buf());
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
    if file.create {
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
pub fn open(spec: &JobSpec, file: &PreparedFile, mapped: bool) -> Result<File, String> {
    let writes = spec.modifies_files();
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
        // mmap needs read access even to write through a mapping.
        .read(spec.rw.reads() || mapped || !writes)
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
