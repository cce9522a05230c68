//! Free space and inodes before laying out. A plan that needs more than the
//! file system holds would otherwise write until the disk is full (the root
//! file system of the machine, when the user forgot `--directory`) or
//! preallocate for minutes before failing; runners ask here first, with what
//! each of their files or trees will occupy once laid out. A plan that makes
//! many files also says how many, since a file system can run out of inodes
//! with blocks to spare (and then says "No space left on device" too).

use crate::units::bytes as format_bytes;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Something a runner lays out: a file or a directory tree, and the bytes
/// it will hold.
#[derive(Clone, Debug)]
pub struct Need {
    pub path: PathBuf,
    pub bytes: u64,
    /// What is at `path` now is the runner's to reuse or replace (a job's
    /// file, fsbench's own tree), so its blocks count as available.
    pub replaces: bool,
    /// Files, directories and links it makes (each takes an inode).
    pub inodes: u64,
}

impl Need {
    /// New files in `dir`, next to whatever else is there.
    pub fn new_in(dir: &Path, bytes: u64) -> Need {
        Need { path: dir.to_path_buf(), bytes, replaces: false, inodes: 0 }
    }
    /// A file or tree at `path` that the runner reuses or rebuilds.
    pub fn replacing(path: &Path, bytes: u64) -> Need {
        Need { path: path.to_path_buf(), bytes, replaces: true, inodes: 0 }
    }
    /// The same, making `inodes` files, directories and links.
    pub fn with_inodes(self, inodes: u64) -> Need {
        Need { inodes, ..self }
    }
}

/// Refuse when what the needs add up to exceeds the free space of any file
/// system they land on, naming both numbers; `allow_fill` lets the user fill
/// it on purpose (an ENOSPC experiment); `reduce` says which of the
/// workload's own settings make it smaller, in its tool's words. Block
/// devices are not this check's concern (their size is checked where they
/// are opened).
pub fn check(needs: &[Need], allow_fill: bool, reduce: &str) -> Result<(), String> {
    if allow_fill {
        return Ok(());
    }
    for w in to_write(needs).values() {
        let Some(free) = free_of(&w.anchor) else { continue };
        if w.bytes > free.bytes {
            return Err(format!(
                "the workload needs about {} under {} but its file system has {} free; {reduce}, choose another directory, or pass --allow-fill to fill it on purpose",
                format_bytes(w.bytes),
                w.anchor.display(),
                format_bytes(free.bytes)
            ));
        }
        if let Some(inodes) = free.inodes.filter(|&i| w.inodes > i) {
            return Err(format!(
                "the workload makes {} files and directories under {} but its file system has {} free inodes; {reduce}, choose another directory, or pass --allow-fill to fill it on purpose",
                crate::units::thousands(w.inodes),
                w.anchor.display(),
                crate::units::thousands(inodes)
            ));
        }
    }
    Ok(())
}

/// What a file system still takes: bytes and, where it counts them, inodes.
struct Free {
    bytes: u64,
    /// None on file systems that report no inode limit (btrfs, tmpfs
    /// without nr_inodes: statvfs gives 0 of 0).
    inodes: Option<u64>,
}

/// What is still to be written to one file system, and one path to name
/// in a message.
struct ToWrite {
    bytes: u64,
    inodes: u64,
    anchor: PathBuf,
}

/// Per file system (st_dev of the nearest existing ancestor): the bytes
/// and inodes still to take, and one path to name in a message.
fn to_write(needs: &[Need]) -> BTreeMap<u64, ToWrite> {
    let mut per_fs: BTreeMap<u64, ToWrite> = BTreeMap::new();
    for n in needs {
        if crate::environment::safety::is_block_device(&n.path) {
            continue;
        }
        let Some((dev, anchor)) = existing_ancestor(&n.path) else { continue };
        let have = if n.replaces { allocated(&n.path, dev) } else { 0 };
        let e = per_fs.entry(dev).or_insert(ToWrite { bytes: 0, inodes: 0, anchor });
        e.bytes = e.bytes.saturating_add(n.bytes.saturating_sub(have));
        e.inodes = e.inodes.saturating_add(n.inodes);
    }
    per_fs
}

/// The device number and path of `p` or its nearest existing ancestor.
fn existing_ancestor(p: &Path) -> Option<(u64, PathBuf)> {
    let abs = if p.is_absolute() { p.to_path_buf() } else { std::env::current_dir().ok()?.join(p) };
    let mut cur: &Path = &abs;
    loop {
        if let Ok(m) = std::fs::metadata(cur) {
            return Some((m.dev(), cur.to_path_buf()));
        }
        cur = cur.parent()?;
    }
}

/// Bytes already allocated at `p` on device `dev`: a file's blocks, or a
/// tree's (not crossing into other file systems).
fn allocated(p: &Path, dev: u64) -> u64 {
    let Ok(m) = std::fs::symlink_metadata(p) else { return 0 };
    if m.dev() != dev {
        return 0;
    }
    if !m.is_dir() {
        return m.blocks() * 512;
    }
    let Ok(rd) = std::fs::read_dir(p) else { return 0 };
    rd.flatten().map(|e| allocated(&e.path(), dev)).sum::<u64>() + m.blocks() * 512
}

/// Bytes and inodes an unprivileged writer may still use (statvfs f_bavail,
/// f_favail).
fn free_of(p: &Path) -> Option<Free> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(p.as_os_str().as_bytes()).ok()?;
    // SAFETY: libc::statvfs is a struct of integers, for which all-zero bytes is a valid value.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: statvfs reads the NUL-terminated path `c` (alive for the call)
    // and writes only into the live local `s`.
    let r = unsafe { libc::statvfs(c.as_ptr(), &mut s) };
    (r == 0).then(|| Free { bytes: s.f_bavail as u64 * s.f_frsize as u64, inodes: (s.f_files > 0).then_some(s.f_favail as u64) })
}

/// Bytes an unprivileged writer may still write on the file system
/// holding `p` (or its nearest existing ancestor).
pub fn free_bytes(p: &Path) -> Option<u64> {
    free_of(&existing_ancestor(p)?.1).map(|f| f.bytes)
}

/// Whether the file system holding `p` has no inode left (a create's ENOSPC
/// then means inodes, not blocks).
pub fn out_of_inodes(p: &Path) -> bool {
    free_of(p).and_then(|f| f.inodes) == Some(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_than_free_is_refused_with_both_numbers() {
        let d = tempfile::tempdir().unwrap();
        let free = free_of(d.path()).unwrap().bytes;
        let need = Need::new_in(d.path(), free.saturating_mul(2).max(1 << 40));
        let e = check(std::slice::from_ref(&need), false, "reduce it").unwrap_err();
        assert!(e.contains("--allow-fill") && e.contains(" free") && e.contains(&d.path().display().to_string()), "{e}");
        assert!(check(&[need], true, "reduce it").is_ok());
        assert!(check(&[Need::new_in(d.path(), 4096)], false, "reduce it").is_ok());
    }

    #[test]
    fn more_inodes_than_free_are_refused_as_inodes() {
        let d = tempfile::tempdir().unwrap();
        let Some(free) = free_of(d.path()).unwrap().inodes else {
            println!("SKIPPED: the temporary directory's file system reports no inode limit");
            return;
        };
        let e = check(&[Need::new_in(d.path(), 0).with_inodes(free + 1_000_000)], false, "reduce it").unwrap_err();
        assert!(e.contains("free inodes") && !e.contains(" free;"), "{e}");
        assert!(check(&[Need::new_in(d.path(), 0).with_inodes(1)], false, "reduce it").is_ok());
    }

    #[test]
    fn what_is_already_there_counts_as_available() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, vec![1u8; 1 << 20]).unwrap();
        let dev = std::fs::metadata(d.path()).unwrap().dev();
        assert!(allocated(&f, dev) >= 1 << 20);
        assert!(allocated(d.path(), dev) >= 1 << 20);
        assert_eq!(allocated(&d.path().join("missing"), dev), 0);
        // A file the runner reuses needs only what it lacks; new files in the
        // same directory need all of it. (Other tests write to the same file
        // system meanwhile, so this looks at what is to be written, not at
        // the free space.)
        let still = |n: Need| to_write(&[n]).into_values().next().unwrap().bytes;
        assert!(still(Need::replacing(&f, (1 << 20) + 4096)) <= 4096);
        assert_eq!(still(Need::new_in(d.path(), 1 << 20)), 1 << 20);
    }
}
