//! What fsbench made, in a form it can recognise again: a file or
//! directory by its absolute path and its identity (device, inode, birth
//! time), a mount by its point, source and file-system type. Undoing
//! something (at the end of a run, on Ctrl-C, or in `fsbench cleanup` after
//! a SIGKILL) first checks that what is there now is still that thing
//! ([`check_file`], [`check_dir`], [`check_mounted`], [`check_remount`]);
//! anything else is someone else's and is refused, with the reason.
//!
//! A path alone proves nothing: a user's file can take the name of one
//! fsbench removed, a relative path means something else from another
//! directory, a hand-made mount can sit on a mount point fsbench once used.
//! The inode alone is not enough either: a file system hands a freed inode
//! number to the next file created, so a user's file made after fsbench's
//! was deleted can have its number; the birth time (statx) tells them
//! apart where the file system keeps one.

use crate::host::mountinfo::{canonical_or_nearest, read_mountinfo, MountEntry};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io;
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Device and inode of a file or directory, and its birth time when the
/// file system keeps one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identity {
    pub dev: u64,
    pub ino: u64,
    /// Nanoseconds since the Unix epoch (statx's btime).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub born_ns: Option<u64>,
}

impl Identity {
    pub fn of_meta(m: &std::fs::Metadata) -> Identity {
        let born_ns =
            m.created().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).and_then(|d| u64::try_from(d.as_nanos()).ok());
        Identity { dev: m.dev(), ino: m.ino(), born_ns }
    }

    /// The identity of `path` itself (a symbolic link is not followed).
    pub fn of(path: &Path) -> io::Result<Identity> {
        std::fs::symlink_metadata(path).map(|m| Identity::of_meta(&m))
    }

    /// The identity of the open file `fd` (one statx on it).
    pub fn of_fd(fd: RawFd) -> io::Result<Identity> {
        // SAFETY: the File is never dropped (ManuallyDrop), so `fd` stays
        // open and the caller's; metadata() only reads through it.
        let f = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        f.metadata().map(|m| Identity::of_meta(&m))
    }

    /// Whether `now` is the same file: device and inode, and the birth time
    /// when both sides have one.
    pub fn same(&self, now: &Identity) -> bool {
        self.dev == now.dev && self.ino == now.ino && (self.born_ns.is_none() || now.born_ns.is_none() || self.born_ns == now.born_ns)
    }
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "device {}:{} inode {}", crate::host::blockdev::dev_major(self.dev), crate::host::blockdev::dev_minor(self.dev), self.ino)
    }
}

/// A file or directory fsbench made: its absolute path and, once it exists,
/// its identity. Records of fsbench before 2 kept a bare path (often
/// relative); they read as an `Owned` without identity, which is never
/// removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "OwnedRecord")]
pub struct Owned {
    pub path: PathBuf,
    #[serde(flatten)]
    pub id: Option<Identity>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum OwnedRecord {
    Path(PathBuf),
    Full {
        path: PathBuf,
        #[serde(flatten)]
        id: Option<Identity>,
    },
}

impl From<OwnedRecord> for Owned {
    fn from(r: OwnedRecord) -> Owned {
        match r {
            OwnedRecord::Path(path) => Owned { path, id: None },
            OwnedRecord::Full { path, id } => Owned { path, id },
        }
    }
}

impl Owned {
    /// Something about to be created at `path` (identity to follow).
    pub fn to_create(path: &Path) -> Owned {
        Owned { path: absolute(path), id: None }
    }

    /// Something that exists at `path` now and is the caller's own (it has
    /// just made it): its identity is taken now.
    pub fn made(path: &Path) -> Owned {
        let path = absolute(path);
        let id = Identity::of(&path).ok();
        Owned { path, id }
    }
}

/// A mount fsbench made (or found and will make again): where, what and
/// which file-system type. Records of fsbench before 2 kept only the
/// point; they read with neither source nor type, and are never acted on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "MountRecord")]
pub struct MountRef {
    pub point: PathBuf,
    #[serde(default)]
    pub source: Option<PathBuf>,
    #[serde(default)]
    pub fstype: Option<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum MountRecord {
    Point(PathBuf),
    Full {
        point: PathBuf,
        #[serde(default)]
        source: Option<PathBuf>,
        #[serde(default)]
        fstype: Option<String>,
    },
}

impl From<MountRecord> for MountRef {
    fn from(r: MountRecord) -> MountRef {
        match r {
            MountRecord::Point(point) => MountRef { point, source: None, fstype: None },
            MountRecord::Full { point, source, fstype } => MountRef { point, source, fstype },
        }
    }
}

impl MountRef {
    pub fn new(point: &Path, source: &Path, fstype: &str) -> MountRef {
        MountRef { point: absolute(point), source: Some(source.to_path_buf()), fstype: Some(fstype.to_string()) }
    }
}

/// A mount taken down for a while (IOzone's `-U`), to be put back as it
/// was: recorded before the unmount.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Remount {
    pub source: PathBuf,
    pub point: PathBuf,
    pub fstype: String,
    /// The options in force before the unmount (per-mount and super-block).
    pub options: String,
}

impl Remount {
    pub fn of(m: &MountEntry) -> Remount {
        Remount { source: PathBuf::from(&m.source), point: m.mount_point.clone(), fstype: m.fs_type.clone(), options: m.options() }
    }
}

/// `path` made absolute, its directory resolved (symbolic links, `..`) but
/// not its last component, which is what the record names: a record made
/// from a relative path must not mean another file when read from another
/// directory.
pub fn absolute(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => {
            let parent = if parent.as_os_str().is_empty() { Path::new(".") } else { parent };
            canonical_or_nearest(parent).join(name)
        }
        _ => canonical_or_nearest(path),
    }
}

const OLD_RELATIVE: &str =
    "recorded as a relative path by an older fsbench: it cannot be told which one it meant; remove it by hand if it is fsbench's";

/// What is at `path` now, compared with `expected` (a directory or a
/// file). Ok(false): nothing is there (already undone).
fn check_owned(o: &Owned, dir: bool) -> Result<bool, String> {
    let what = if dir { "directory" } else { "file" };
    if !o.path.is_absolute() {
        return Err(OLD_RELATIVE.into());
    }
    let meta = match std::fs::symlink_metadata(&o.path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(format!("cannot examine it: {e}")),
    };
    let Some(expected) = o.id else {
        return Err(format!(
            "its identity (device and inode) was never recorded — fsbench stopped between creating it and recording it, or an older fsbench made the record — so it cannot be told from someone else's {what}; remove it by hand if it is fsbench's"
        ));
    };
    let kind_ok = if dir { meta.is_dir() } else { meta.file_type().is_file() };
    if !kind_ok {
        let now = if meta.is_dir() {
            "a directory"
        } else if meta.file_type().is_symlink() {
            "a symbolic link"
        } else if meta.file_type().is_file() {
            "a regular file"
        } else {
            "a special file"
        };
        return Err(format!("it is {now} now, not the {what} fsbench made"));
    }
    let now = Identity::of_meta(&meta);
    if expected.same(&now) {
        return Ok(true);
    }
    let mounted = dir && now.dev != expected.dev && is_mount_point(&o.path);
    if mounted {
        return Err(format!("a file system is mounted on it now ({now}; fsbench's {what} was {expected})"));
    }
    Err(format!("it is not the {what} fsbench made ({expected} was recorded, {now} is there now): someone else's {what} has its name"))
}

/// May `o` be removed as fsbench's file? Ok(false): it is gone already.
pub fn check_file(o: &Owned) -> Result<bool, String> {
    check_owned(o, false)
}

/// May `o` be removed as fsbench's directory (and what is in it)?
/// Ok(false): it is gone already.
pub fn check_dir(o: &Owned) -> Result<bool, String> {
    check_owned(o, true)
}

fn is_mount_point(p: &Path) -> bool {
    let canon = canonical_or_nearest(p);
    read_mountinfo().iter().any(|m| m.mount_point == canon)
}

/// The topmost mount on `point`, if any.
fn mounted_on(point: &Path) -> Option<MountEntry> {
    read_mountinfo().into_iter().rev().find(|m| m.mount_point == point)
}

/// Whether `m` is `source` with `fstype`: the same file-system type, and
/// the same source by name or, for a block device, by device number.
fn is_source(m: &MountEntry, source: &Path, fstype: &str) -> bool {
    if m.fs_type != fstype {
        return false;
    }
    if Path::new(&m.source) == source {
        return true;
    }
    match std::fs::metadata(source) {
        Ok(meta) if meta.file_type().is_block_device() => {
            let rdev = meta.rdev();
            let (maj, min) = (crate::host::blockdev::dev_major(rdev), crate::host::blockdev::dev_minor(rdev));
            (m.major, m.minor) == (maj, min)
                || std::fs::metadata(&m.source).is_ok_and(|s| s.file_type().is_block_device() && s.rdev() == rdev)
        }
        _ => false,
    }
}

/// May the mount `r` made be unmounted? Ok(false): nothing is mounted there.
pub fn check_mounted(r: &MountRef) -> Result<bool, String> {
    if !r.point.is_absolute() {
        return Err(OLD_RELATIVE.into());
    }
    let Some(m) = mounted_on(&r.point) else { return Ok(false) };
    let (Some(source), Some(fstype)) = (&r.source, &r.fstype) else {
        return Err(format!(
            "recorded by an older fsbench without what it mounted there, and {} ({}) is mounted there now; unmount it by hand if it is fsbench's",
            m.source, m.fs_type
        ));
    };
    if is_source(&m, source, fstype) {
        return Ok(true);
    }
    Err(format!(
        "{} ({}) is mounted there now, not the {} ({fstype}) fsbench mounted: someone else's mount",
        m.source,
        m.fs_type,
        source.display()
    ))
}

/// May `r` be mounted again? Ok(false): it is mounted already.
pub fn check_remount(r: &Remount) -> Result<bool, String> {
    if !r.point.is_absolute() {
        return Err(OLD_RELATIVE.into());
    }
    let mounts = read_mountinfo();
    if let Some(m) = mounts.iter().rev().find(|m| m.mount_point == r.point) {
        if is_source(m, &r.source, &r.fstype) {
            return Ok(false);
        }
        return Err(format!("{} ({}) is mounted there now; {} is left unmounted", m.source, m.fs_type, r.source.display()));
    }
    match std::fs::metadata(&r.source) {
        Ok(m) if m.file_type().is_block_device() => {}
        Ok(_) => return Err(format!("{} is not a block device now", r.source.display())),
        Err(e) => return Err(format!("{}: {e}", r.source.display())),
    }
    if let Some(m) = mounts.iter().find(|m| is_source(m, &r.source, &r.fstype)) {
        return Err(format!("{} is mounted on {} now", r.source.display(), m.mount_point.display()));
    }
    match std::fs::metadata(&r.point) {
        Ok(m) if m.is_dir() => Ok(true),
        Ok(_) => Err(format!("{} is not a directory now", r.point.display())),
        Err(e) => Err(format!("{}: {e}", r.point.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_are_recorded_absolute_with_their_directory_resolved() {
        let cwd = std::env::current_dir().unwrap().canonicalize().unwrap();
        assert_eq!(absolute(Path::new("iozone.tmp")), cwd.join("iozone.tmp"));
        assert_eq!(absolute(Path::new("./iozone.tmp")), cwd.join("iozone.tmp"));
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(d.path(), d.path().join("link")).unwrap();
        // The last component is not followed: a link is recorded as the link.
        assert_eq!(absolute(&d.path().join("link")), d.path().canonicalize().unwrap().join("link"));
    }

    #[test]
    fn old_records_read_without_identity_and_are_refused() {
        let o: Owned = serde_json::from_str("\"iozone.tmp\"").unwrap();
        assert_eq!(o, Owned { path: "iozone.tmp".into(), id: None });
        assert!(check_file(&o).unwrap_err().contains("relative path"));
        let o: Owned = serde_json::from_str("\"/nonexistent/x\"").unwrap();
        assert_eq!(check_file(&o), Ok(false), "gone is undone");
        let m: MountRef = serde_json::from_str("\"/tmp/fsbench-mnt-x\"").unwrap();
        assert_eq!((m.source, m.fstype), (None, None));
        let full = Owned { path: "/a/b".into(), id: Some(Identity { dev: 2049, ino: 12, born_ns: Some(5) }) };
        let text = serde_json::to_string(&full).unwrap();
        assert_eq!(text, r#"{"path":"/a/b","dev":2049,"ino":12,"born_ns":5}"#);
        assert_eq!(serde_json::from_str::<Owned>(&text).unwrap(), full);
        let bare = Owned { path: "/a/b".into(), id: None };
        assert_eq!(serde_json::to_string(&bare).unwrap(), r#"{"path":"/a/b"}"#);
        assert_eq!(serde_json::from_str::<Owned>(r#"{"path":"/a/b"}"#).unwrap(), bare);
    }

    #[test]
    fn a_file_or_directory_is_recognised_by_identity_not_by_name() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        std::fs::write(&f, b"x").unwrap();
        let mine = Owned::made(&f);
        assert!(mine.id.is_some());
        assert_eq!(check_file(&mine), Ok(true));
        // Someone else's file under the same name: refused.
        std::fs::remove_file(&f).unwrap();
        std::fs::write(d.path().join("other"), b"keep the inode busy").unwrap();
        std::fs::write(&f, b"theirs").unwrap();
        let e = check_file(&mine).unwrap_err();
        assert!(e.contains("someone else's file"), "{e}");
        // Never recorded: refused.
        assert!(check_file(&Owned::to_create(&f)).unwrap_err().contains("never recorded"));
        // A directory where the file was.
        std::fs::remove_file(&f).unwrap();
        std::fs::create_dir(&f).unwrap();
        assert!(check_file(&mine).unwrap_err().contains("a directory now"));
        let dir = Owned::made(&f);
        assert_eq!(check_dir(&dir), Ok(true));
        std::fs::remove_dir(&f).unwrap();
        assert_eq!(check_dir(&dir), Ok(false));
    }
}
