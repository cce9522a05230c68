//! Page-cache scenarios applied before each run and checked afterwards.
//!
//! Each scenario is checked, not assumed. The caller passes the workload's
//! own data files (all of a fio plan's, a sample of each Filebench
//! fileset's); after the scenario, mincore counts how many of their pages
//! are in the page cache (`CacheReport::workload_pages`). `Cached` and
//! `Dirty` are read from /proc/meminfo before and after as well, and
//! `applied` says whether the evidence shows the scenario took effect.
//!
//! - `warm`: nothing is done; always applied.
//! - `cold`: `sync`, then `3 > /proc/sys/vm/drop_caches` (root only).
//!   Applied when no page of the workload's files is cached afterwards
//!   (files that do not exist yet count as not cached). Only when no file is
//!   given does it fall back to the system-wide figure, and says so in the
//!   note: the droppable file cache (`Cached - Shmem - Mapped`; tmpfs pages
//!   cannot be dropped) afterwards is at most half of what it was, or below
//!   64 MiB (already small: what remains is mapped executables and the like).
//!   That figure moves with whatever other processes do, which is why the
//!   files are preferred.
//! - `fresh-mount`: the managed target is unmounted and mounted again, which
//!   evicts every page of its files. Applied when the remount succeeded and
//!   no page of the workload's files is cached afterwards.
//! - `polluted:SIZE`: cold first (when root), then a SIZE-byte file of
//!   unrelated data is written, synced and read back in a directory on a
//!   disk file system outside the target (/var/tmp, else the temp dir; never
//!   tmpfs, whose pages are memory rather than cache of a disk file). It is
//!   kept until the end of the run (see [`CacheGuard`], [`release`]).
//!   Applied when `Cached` grew by at least 80% of SIZE.
//!
//! Every scenario notes when `Dirty` was above 1% of RAM at the start:
//! writeback of those pages will run during the measurement.

use crate::environment::cleanup::{self, Token};
use crate::environment::target::{create_unique_dir, ActiveTarget};
use crate::host::meminfo::{read_meminfo, MemInfo};
use crate::host::mountinfo::mount_for_path;
use crate::host::vm::drop_caches;
use crate::model::environment::CacheScenario;
use crate::result::cache::{CacheReport, CacheScope, WorkloadPages};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// mincore over each regular file of `files`.
pub fn workload_pages(files: &[PathBuf]) -> WorkloadPages {
    let mut p = WorkloadPages::default();
    for f in files {
        let regular = std::fs::metadata(f).map(|m| m.is_file()).unwrap_or(false);
        match resident_pages(f) {
            Ok((resident, total)) if regular => {
                p.files += 1;
                p.resident += resident as u64;
                p.total += total as u64;
            }
            _ => p.skipped += 1,
        }
    }
    p
}

/// "N of M pages of the workload's K files are cached".
fn describe_pages(p: &WorkloadPages) -> String {
    let mut s = format!("{} of {} pages of the workload's {} file(s) are cached", p.resident, p.total, p.files);
    if p.skipped > 0 {
        s.push_str(&format!(" ({} not examined: missing or not regular files)", p.skipped));
    }
    s
}

const MIB: u64 = 1 << 20;
/// Below this much droppable file cache, the cache counts as dropped.
const COLD_SMALL_BYTES: u64 = 64 * MIB;

fn mib(n: u64) -> String {
    format!("{:.0} MiB", n as f64 / MIB as f64)
}

/// The cold rule (see the module docs).
pub fn cold_rule(before: &MemInfo, after: &MemInfo) -> bool {
    after.droppable() <= before.droppable() / 2 || after.droppable() < COLD_SMALL_BYTES
}

/// Keeps a polluted scenario's file until the end of the run; dropping it
/// deletes the file. The file is also registered with cleanup, so it goes
/// away on panic or Ctrl-C.
#[derive(Debug, Default)]
pub struct CacheGuard {
    file: Option<PathBuf>,
    token: Option<Token>,
}

impl CacheGuard {
    /// The pollution file, if one was made.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }
}

impl Drop for CacheGuard {
    fn drop(&mut self) {
        if let Some(t) = self.token.take() {
            if let Err(e) = t.done() {
                eprintln!("fsbench: removing the page-cache pollution file: {e}");
            }
        }
    }
}

static HELD: Mutex<Vec<CacheGuard>> = Mutex::new(Vec::new());

/// Delete the files kept by earlier [`apply`] calls (call at the end of a run).
pub fn release() {
    let held: Vec<CacheGuard> = std::mem::take(&mut *HELD.lock().unwrap_or_else(|e| e.into_inner()));
    drop(held);
}

/// Apply a scenario; what it keeps (a pollution file) is held until
/// [`release`] or process exit (through cleanup). `files` are the workload's
/// data files the scenario is judged by (see the module docs).
pub fn apply(s: &CacheScenario, target: Option<&mut ActiveTarget>, files: &[PathBuf]) -> CacheReport {
    let (r, g) = apply_guarded(s, target, files);
    if g.token.is_some() {
        HELD.lock().unwrap_or_else(|e| e.into_inner()).push(g);
    }
    r
}

/// Why scenario `s` cannot take effect here, known before anything runs:
/// `cold` needs root to drop the cache, `fresh-mount` a file system fsbench
/// mounts itself (`managed_target`). A run in such a scenario would be
/// labelled with it while measuring something else.
pub fn cannot_apply(s: &CacheScenario, managed_target: bool) -> Option<String> {
    match s {
        CacheScenario::Cold if !crate::host::is_root() => {
            Some("cold needs root to drop the page cache (/proc/sys/vm/drop_caches); run as root".into())
        }
        CacheScenario::FreshMount if !managed_target => Some(
            "fresh-mount needs a managed target (a file system fsbench makes and mounts): use `fsbench experiment` with [[target]] fs = ..."
                .into(),
        ),
        _ => None,
    }
}

/// Apply a scenario; the guard keeps what it made until dropped. `files` are
/// the workload's data files the scenario is judged by.
pub fn apply_guarded(s: &CacheScenario, target: Option<&mut ActiveTarget>, files: &[PathBuf]) -> (CacheReport, CacheGuard) {
    let before = read_meminfo();
    let mut notes: Vec<String> = Vec::new();
    let mut guard = CacheGuard::default();
    let applied = match s {
        CacheScenario::Warm => true,
        CacheScenario::Cold => match drop_caches() {
            Err(e) => {
                notes.push(e);
                false
            }
            Ok(()) if files.is_empty() => {
                let after = read_meminfo();
                let ok = cold_rule(&before, &after);
                notes.push("no workload files given: judged by the system-wide Cached figure, which other processes move too".into());
                if !ok {
                    notes.push(format!(
                        "file cache only went from {} to {} (expected at most half, or under {})",
                        mib(before.droppable()),
                        mib(after.droppable()),
                        mib(COLD_SMALL_BYTES)
                    ));
                }
                ok
            }
            Ok(()) => none_cached(files, &mut notes, "after dropping caches"),
        },
        CacheScenario::FreshMount => match target {
            Some(t) if t.is_managed() => match t.remount() {
                Ok(()) if files.is_empty() => true,
                Ok(()) => none_cached(files, &mut notes, "after the fresh mount"),
                Err(e) => {
                    notes.push(e);
                    false
                }
            },
            Some(t) => {
                notes.push(format!(
                    "fresh-mount needs a managed target (a file system fsbench mounts); '{}' is a {} target",
                    t.label, t.info.kind
                ));
                false
            }
            None => {
                notes.push("fresh-mount needs a managed target; there is none".into());
                false
            }
        },
        CacheScenario::Polluted(size) => {
            let target_path = target.as_ref().map(|t| t.path.clone());
            if let Err(e) = drop_caches() {
                notes.push(format!("{e}; polluting without dropping the cache first"));
            }
            let start = read_meminfo();
            match pollute(*size, target_path.as_deref()) {
                Ok(g) => {
                    let after = read_meminfo();
                    let grew = after.cached.saturating_sub(start.cached);
                    let ok = grew as u128 * 10 >= *size as u128 * 8;
                    notes.push(format!(
                        "Cached grew by {} for {} of data in {}",
                        mib(grew),
                        mib(*size),
                        g.file.as_deref().map(|p| p.display().to_string()).unwrap_or_default()
                    ));
                    if !ok {
                        notes.push("less than 80% of it stayed cached (memory pressure?)".into());
                    }
                    guard = g;
                    ok
                }
                Err(e) => {
                    notes.push(e);
                    false
                }
            }
        }
    };
    let after = read_meminfo();
    // What matters is what is still dirty when the run starts, after the
    // scenario (cold syncs first).
    if after.total > 0 && after.dirty > after.total / 100 {
        notes.push(format!(
            "dirty pages pending: {} dirty at the start of the run (over 1% of RAM); their writeback overlaps the run",
            mib(after.dirty)
        ));
    }
    let report = CacheReport {
        scenario: s.label(),
        applied,
        scope: CacheScope::WholeRun,
        note: if notes.is_empty() { None } else { Some(notes.join("; ")) },
        cached_before_bytes: before.cached,
        cached_after_bytes: after.cached,
        dirty_before_bytes: before.dirty,
        dirty_after_bytes: after.dirty,
        workload_pages: (!files.is_empty()).then(|| workload_pages(files)),
    };
    (report, guard)
}

/// Whether no page of `files` is cached; if some are, a note saying how many.
fn none_cached(files: &[PathBuf], notes: &mut Vec<String>, when: &str) -> bool {
    let p = workload_pages(files);
    if p.resident > 0 {
        notes.push(format!("{} {when}", describe_pages(&p)));
        return false;
    }
    if p.files == 0 {
        notes.push(format!("none of the workload's {} file(s) exists yet", files.len()));
    }
    true
}

/// Where the pollution file goes: a directory on a disk file system (not
/// tmpfs/ramfs) that is not inside the target.
fn pollution_dir(target: Option<&Path>) -> Result<PathBuf, String> {
    let mut tried = Vec::new();
    for c in [PathBuf::from("/var/tmp"), std::env::temp_dir()] {
        if !c.is_dir() {
            continue;
        }
        let canon = c.canonicalize().unwrap_or(c.clone());
        if let Some(t) = target {
            let tc = t.canonicalize().unwrap_or(t.to_path_buf());
            if canon.starts_with(&tc) {
                tried.push(format!("{} is inside the target", c.display()));
                continue;
            }
        }
        match mount_for_path(&canon) {
            Some(m) if crate::host::mountinfo::lives_in_memory(&m.fs_type) => {
                tried.push(format!("{} is {}", c.display(), m.fs_type));
            }
            _ => return Ok(canon),
        }
    }
    Err(format!("no disk directory for the pollution file ({})", tried.join(", ")))
}

/// Write `size` bytes, sync them, read them back so they stay cached.
fn pollute(size: u64, target: Option<&Path>) -> Result<CacheGuard, String> {
    let parent = pollution_dir(target)?;
    // SAFETY: st is a valid statvfs to fill; the path is NUL-terminated.
    let free = unsafe {
        let c = std::ffi::CString::new(parent.as_os_str().as_encoded_bytes()).unwrap_or_default();
        let mut st: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(c.as_ptr(), &mut st) == 0 {
            Some(st.f_bavail as u64 * st.f_frsize as u64)
        } else {
            None
        }
    };
    if let Some(free) = free {
        if free < size + 256 * MIB {
            return Err(format!("{} has {} free, too little for {} of pollution", parent.display(), mib(free), mib(size)));
        }
    }
    let dir = create_unique_dir(&parent, "fsbench-pollute-")?;
    let token = cleanup::made_dir(&dir);
    let file = dir.join("pollution.dat");
    let mut guard = CacheGuard { file: Some(file.clone()), token: Some(token) };
    let werr = |e: std::io::Error| format!("writing {}: {e}", file.display());
    let mut f = std::fs::File::create(&file).map_err(werr)?;
    let mut buf = vec![0u8; MIB as usize];
    let mut x: u64 = 0x243F_6A88_85A3_08D3;
    let mut left = size;
    while left > 0 {
        for chunk in buf.chunks_exact_mut(8) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            chunk.copy_from_slice(&x.to_le_bytes());
        }
        let n = left.min(buf.len() as u64) as usize;
        f.write_all(&buf[..n]).map_err(werr)?;
        left -= n as u64;
    }
    // Clean pages, so the run does not pay for their writeback.
    f.sync_all().map_err(werr)?;
    drop(f);
    let mut f = std::fs::File::open(&file).map_err(werr)?;
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => return Err(format!("reading {} back: {e}", file.display())),
        }
    }
    guard.file = Some(file);
    Ok(guard)
}

/// The memory-speed warning every family gives: `set` bytes of buffered
/// data that fit in RAM can be served by the page cache. `holder` names
/// the data ("buffered I/O over a working set of"), `why` says why the
/// cache is not kept out of the measurement ("with the page cache not
/// controlled"), `remedies` what measures the storage instead. None when
/// the data does not fit in RAM (or /proc/meminfo cannot be read).
pub fn memory_speed_warning(holder: &str, set: u64, why: &str, remedies: &str) -> Option<String> {
    let ram = read_meminfo().total;
    (set > 0 && ram > 0 && set < ram).then(|| {
        format!(
            "{holder} {}, which fits in RAM ({}), {why}: results may show memory speed; use {remedies}",
            crate::units::bytes(set),
            crate::units::bytes(ram)
        )
    })
}

/// Pages of `path` in the page cache and its size in pages (mincore over
/// a read-only mapping; mapping does not fault pages in).
pub fn resident_pages(path: &Path) -> std::io::Result<(usize, usize)> {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path)?;
    let len = f.metadata()?.len() as usize;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    if len == 0 {
        return Ok((0, 0));
    }
    let pages = len.div_ceil(page);
    let mut vec = vec![0u8; pages];
    // SAFETY: a fresh shared read-only mapping of an open file, unmapped
    // before returning; vec has one byte per page of the mapping.
    unsafe {
        let p = libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, f.as_raw_fd(), 0);
        if p == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let r = libc::mincore(p, len, vec.as_mut_ptr());
        let err = std::io::Error::last_os_error();
        libc::munmap(p, len);
        if r != 0 {
            return Err(err);
        }
    }
    Ok((vec.iter().filter(|&&b| b & 1 == 1).count(), pages))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::environment::target::testutil::{loop_target, root_or_skip};
    use crate::host::is_root;

    /// Tests that drop or fill the page cache must not overlap.
    static CACHE_LOCK: Mutex<()> = Mutex::new(());

    fn lock() -> std::sync::MutexGuard<'static, ()> {
        CACHE_LOCK.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[test]
    fn cold_rule_on_droppable_cache() {
        let gib = |g: u64| MemInfo { cached: g << 30, ..MemInfo::default() };
        assert!(cold_rule(&gib(4), &gib(1)));
        assert!(!cold_rule(&gib(4), &gib(3)));
        // Already small counts as cold.
        let small = MemInfo { cached: 40 * MIB, ..MemInfo::default() };
        assert!(cold_rule(&small, &small));
    }

    #[test]
    fn warm_and_fresh_mount_without_managed_target() {
        let r = apply(&CacheScenario::Warm, None, &[]);
        assert!(r.applied);
        assert_eq!(r.scenario, "warm");
        assert!(r.cached_before_bytes > 0);
        assert_eq!(r.workload_pages, None);
        let r = apply(&CacheScenario::FreshMount, None, &[]);
        assert!(!r.applied);
        assert!(r.note.unwrap().contains("managed target"));
        let dir = tempfile::tempdir().unwrap();
        let mut t = ActiveTarget::setup("d", &crate::model::environment::TargetSpec::Directory(dir.path().into()), false).unwrap();
        let r = apply(&CacheScenario::FreshMount, Some(&mut t), &[]);
        assert!(!r.applied);
        assert!(r.note.unwrap().contains("directory target"));
    }

    #[test]
    fn workload_pages_count_regular_files_only() {
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, vec![1u8; 3 * 4096 + 1]).unwrap();
        let _ = std::fs::read(&f).unwrap();
        let p = workload_pages(&[f.clone(), dir.path().join("missing"), dir.path().to_path_buf()]);
        assert_eq!((p.files, p.skipped), (1, 2), "{p:?}");
        assert!(p.total >= 1 && p.resident <= p.total, "{p:?}");
        // Warm records the pages without judging by them.
        let r = apply(&CacheScenario::Warm, None, &[f]);
        assert!(r.applied);
        assert_eq!(r.workload_pages.as_ref().map(|p| p.files), Some(1));
    }

    #[test]
    fn cold_drops_the_cache() {
        if !is_root() {
            let r = apply(&CacheScenario::Cold, None, &[]);
            assert!(!r.applied);
            assert_eq!(r.note.as_deref(), Some("not root: cannot drop caches"));
            println!("SKIPPED: cold_drops_the_cache needs root");
            return;
        }
        let _l = lock();
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let f = dir.path().join("f");
        // Other tests create and delete files concurrently, so the system-wide
        // Cached figure is not this file's; mincore on the file is, and that
        // is what the scenario is judged by.
        std::fs::write(&f, vec![7u8; 64 << 20]).unwrap();
        let data = std::fs::read(&f).unwrap();
        assert_eq!(data.len(), 64 << 20);
        let (res, pages) = resident_pages(&f).unwrap();
        assert!(res * 10 >= pages * 9, "{res}/{pages}");
        let r = apply(&CacheScenario::Cold, None, std::slice::from_ref(&f));
        assert!(r.applied, "{r:?}");
        assert_eq!(r.workload_pages, Some(WorkloadPages { files: 1, skipped: 0, resident: 0, total: pages as u64 }), "{r:?}");
        assert_eq!(resident_pages(&f).unwrap().0, 0);

        // Without files it falls back to the system-wide figure and says so.
        let r = apply(&CacheScenario::Cold, None, &[]);
        assert!(r.note.as_deref().unwrap_or("").contains("no workload files given"), "{r:?}");
        assert_eq!(r.workload_pages, None);
    }

    #[test]
    fn cold_is_not_applied_while_the_files_stay_cached() {
        if !root_or_skip("cold_is_not_applied_while_the_files_stay_cached") {
            return;
        }
        use std::os::fd::AsRawFd;
        let _l = lock();
        let dir = tempfile::tempdir_in("/var/tmp").unwrap();
        let f = dir.path().join("f");
        let len = 1usize << 20;
        std::fs::write(&f, vec![5u8; len]).unwrap();
        let file = std::fs::File::open(&f).unwrap();
        // drop_caches leaves pages that are mapped into a process: map the
        // file and touch every page, so they stay cached.
        // SAFETY: a fresh read-only shared mapping of `len` bytes of an open
        // file that is `len` bytes long; it is unmapped below, before `file` closes.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0) };
        assert_ne!(p, libc::MAP_FAILED);
        let mut sum = 0u64;
        for off in (0..len).step_by(4096) {
            // SAFETY: `off < len`, so the byte lies inside the live mapping, which is readable.
            sum += u64::from(unsafe { std::ptr::read_volatile((p as *const u8).add(off)) });
        }
        assert!(sum > 0);
        let r = apply(&CacheScenario::Cold, None, std::slice::from_ref(&f));
        // SAFETY: `p` is the mapping made above with this length, and nothing refers to it any more.
        unsafe { libc::munmap(p, len) };
        assert!(!r.applied, "{r:?}");
        let pages = r.workload_pages.clone().unwrap();
        assert!(pages.resident > 0, "{r:?}");
        assert!(r.note.as_deref().unwrap_or("").contains("pages of the workload's 1 file(s) are cached after dropping caches"), "{r:?}");
    }

    #[test]
    fn polluted_fills_the_cache() {
        let _l = lock();
        let size = 128u64 << 20;
        let (r, g) = apply_guarded(&CacheScenario::Polluted(size), None, &[]);
        assert!(r.applied, "{r:?}");
        assert_eq!(r.scenario, "polluted:128m");
        assert!(r.cached_after_bytes * 10 >= size * 8, "{r:?}");
        let file = g.file().unwrap().to_path_buf();
        assert!(!file.starts_with("/dev/shm"));
        assert_eq!(std::fs::metadata(&file).unwrap().len(), size);
        let (res, pages) = resident_pages(&file).unwrap();
        assert!(res * 10 >= pages * 8, "{res}/{pages}");
        drop(g);
        assert!(!file.exists());
        assert!(!file.parent().unwrap().exists());

        // Through apply/release.
        let r = apply(&CacheScenario::Polluted(1 << 20), None, &[]);
        let note = r.note.unwrap();
        let held = HELD.lock().unwrap().iter().filter_map(|g| g.file().map(Path::to_path_buf)).collect::<Vec<_>>();
        let mine: Vec<_> = held.iter().filter(|p| note.contains(&p.display().to_string())).cloned().collect();
        assert_eq!(mine.len(), 1, "{note}");
        assert!(mine[0].exists());
        release();
        assert!(!mine[0].exists());
    }

    #[test]
    fn fresh_mount_evicts_the_target_files() {
        if !root_or_skip("fresh_mount_evicts_the_target_files") {
            return;
        }
        let _l = lock();
        let dir = tempfile::tempdir().unwrap();
        let mut t = loop_target(dir.path(), "ext4", 256 << 20, "nodelalloc").unwrap();
        let f = t.path.join("f");
        std::fs::write(&f, vec![3u8; 16 << 20]).unwrap();
        let mut h = std::fs::File::open(&f).unwrap();
        h.sync_all().unwrap();
        let mut v = Vec::new();
        h.read_to_end(&mut v).unwrap();
        drop(h);
        let (res, pages) = resident_pages(&f).unwrap();
        assert!(res * 10 >= pages * 9, "before: {res}/{pages}");
        let r = apply(&CacheScenario::FreshMount, Some(&mut t), std::slice::from_ref(&f));
        assert!(r.applied, "{r:?}");
        assert_eq!(r.scenario, "fresh-mount");
        assert_eq!(r.workload_pages, Some(WorkloadPages { files: 1, skipped: 0, resident: 0, total: pages as u64 }), "{r:?}");
        assert_eq!(resident_pages(&f).unwrap().0, 0, "cached after a fresh mount");
        assert!(t.info.mount_options_in_force.as_deref().unwrap().contains("nodelalloc"));
        // Reading again brings them back.
        let _ = std::fs::read(&f).unwrap();
        assert!(resident_pages(&f).unwrap().0 > 0);
    }
}
