//! `/proc/self/mountinfo`: the mounts this process sees, the kernel's octal
//! escapes undone, and the mount that holds a path.
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};

/// One line of `/proc/self/mountinfo` (see proc(5)).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MountEntry {
    pub mount_id: u32,
    pub parent_id: u32,
    pub major: u32,
    pub minor: u32,
    /// The directory of the file system that is the root of this mount (bind mounts).
    pub root: PathBuf,
    pub mount_point: PathBuf,
    pub mount_options: String,
    /// Optional fields (`shared:1`, `master:2`, ...).
    pub optional: Vec<String>,
    pub fs_type: String,
    pub source: String,
    pub super_options: String,
}

impl MountEntry {
    /// Per-mount and super-block options merged: the options in force.
    pub fn options(&self) -> String {
        merge_mount_options(&self.mount_options, &self.super_options)
    }
}

/// Undo the octal escapes the kernel puts in mountinfo fields (`\040` for a
/// space, `\011` tab, `\012` newline, `\134` backslash).
pub fn unescape_mount_bytes(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 4 <= b.len() {
            let oct = &b[i + 1..i + 4];
            if oct.iter().all(|c| (b'0'..=b'7').contains(c)) {
                let v = (oct[0] - b'0') as u32 * 64 + (oct[1] - b'0') as u32 * 8 + (oct[2] - b'0') as u32;
                if v <= 255 {
                    out.push(v as u8);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// `unescape_mount_bytes` as a String (lossy for non-UTF-8).
pub fn unescape_mount(s: &str) -> String {
    String::from_utf8_lossy(&unescape_mount_bytes(s)).into_owned()
}

fn unescape_path(s: &str) -> PathBuf {
    PathBuf::from(OsString::from_vec(unescape_mount_bytes(s)))
}

/// Parse one mountinfo line:
/// `36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue`.
pub fn parse_mountinfo_line(line: &str) -> Option<MountEntry> {
    let mut it = line.split(' ').filter(|s| !s.is_empty());
    let mount_id = it.next()?.parse().ok()?;
    let parent_id = it.next()?.parse().ok()?;
    let (major, minor) = super::blockdev::parse_devnum(it.next()?)?;
    let root = unescape_path(it.next()?);
    let mount_point = unescape_path(it.next()?);
    let mount_options = it.next()?.to_string();
    let mut optional = Vec::new();
    loop {
        let f = it.next()?;
        if f == "-" {
            break;
        }
        optional.push(f.to_string());
    }
    let fs_type = unescape_mount(it.next()?);
    let source = unescape_mount(it.next().unwrap_or(""));
    let super_options = it.next().unwrap_or("").to_string();
    Some(MountEntry { mount_id, parent_id, major, minor, root, mount_point, mount_options, optional, fs_type, source, super_options })
}

/// Parse a whole mountinfo text; unparsable lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    text.lines().filter_map(parse_mountinfo_line).collect()
}

/// The mounts this process sees, in kernel order (later mounts are on top).
pub fn read_mountinfo() -> Vec<MountEntry> {
    std::fs::read_to_string("/proc/self/mountinfo").map(|t| parse_mountinfo(&t)).unwrap_or_default()
}

/// Merge per-mount options with super-block options: per-mount first, then
/// super-block options not already present. `ro` wins over `rw` from
/// either side, since either makes the mount read-only.
pub fn merge_mount_options(per_mount: &str, super_opts: &str) -> String {
    let mut out: Vec<String> = Vec::new();
    let ro = per_mount.split(',').chain(super_opts.split(',')).any(|o| o == "ro");
    for o in per_mount.split(',').chain(super_opts.split(',')) {
        if o.is_empty() {
            continue;
        }
        let o = if o == "rw" || o == "ro" {
            if ro {
                "ro"
            } else {
                "rw"
            }
        } else {
            o
        };
        if !out.iter().any(|x| x == o) {
            out.push(o.to_string());
        }
    }
    out.join(",")
}

/// Make `path` absolute and resolve symlinks as far as it exists; the
/// missing tail is appended lexically, `..` in it taking off the name
/// before it, as `create_dir_all` would make it (`/tmp/new/../../dev/x` is
/// `/dev/x`, not `/tmp/new/dev/x`). A dangling symlink is followed to where
/// creating it would create its target.
pub fn canonical_or_nearest(path: &Path) -> PathBuf {
    resolve_nearest(path, 0)
}

/// Symlinks followed at most, as the kernel's ELOOP limit.
const MAX_LINKS: u32 = 40;

fn resolve_nearest(path: &Path, links: u32) -> PathBuf {
    use std::path::Component;
    let abs =
        if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")).join(path) };
    if let Ok(c) = std::fs::canonicalize(&abs) {
        return c;
    }
    let mut out = PathBuf::from("/");
    for c in abs.components() {
        match c {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => continue,
            // `out` is canonical while it exists, so its parent is the real one.
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
        if let Ok(real) = std::fs::canonicalize(&out) {
            out = real;
        } else if let Ok(target) = std::fs::read_link(&out) {
            if links < MAX_LINKS {
                out.pop();
                out = resolve_nearest(&out.join(target), links + 1);
            }
        }
    }
    out
}

/// The mount holding `path` among `mounts`: longest mount-point prefix
/// (component-wise) of the canonicalised path; of stacked mounts on the
/// same point, the last (topmost).
pub fn mount_for_path_in<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for m in mounts {
        if path.starts_with(&m.mount_point) {
            let better = match best {
                None => true,
                Some(b) => m.mount_point.components().count() >= b.mount_point.components().count(),
            };
            if better {
                best = Some(m);
            }
        }
    }
    best
}

/// File systems whose files are pages in RAM: no disk is behind them.
pub fn lives_in_memory(fs_type: &str) -> bool {
    matches!(fs_type, "tmpfs" | "ramfs" | "devtmpfs" | "hugetlbfs")
}

/// The mount holding `path` (which need not exist yet).
pub fn mount_for_path(path: &Path) -> Option<MountEntry> {
    let p = canonical_or_nearest(path);
    let mounts = read_mountinfo();
    mount_for_path_in(&mounts, &p).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_existing_parent_takes_dotdot_and_dangling_links_as_creating_would() {
        let d = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(d.path()).unwrap();
        assert_eq!(canonical_or_nearest(&root.join("new/x")), root.join("new/x"));
        // `new` would be made, then `..` leaves it.
        assert_eq!(canonical_or_nearest(&root.join("new/../y")), root.join("y"));
        let up = root.components().count() - 1;
        let escape: PathBuf = std::iter::once("new").chain(std::iter::repeat_n("..", up + 1)).chain(["dev", "x"]).collect();
        assert_eq!(canonical_or_nearest(&root.join(escape)), PathBuf::from("/dev/x"));
        std::os::unix::fs::symlink("/nonexistent-fsbench/z", root.join("dangling")).unwrap();
        assert_eq!(canonical_or_nearest(&root.join("dangling")), PathBuf::from("/nonexistent-fsbench/z"));
        std::os::unix::fs::symlink("loop", root.join("loop")).unwrap();
        assert!(canonical_or_nearest(&root.join("loop/x")).starts_with(&root), "a symlink loop ends");
    }

    #[test]
    fn canonical_or_nearest_follows_symlinks_and_dotdot_past_missing_names() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().canonicalize().unwrap();
        std::fs::create_dir(root.join("t")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("t/out")).unwrap();
        let t = root.join("t");
        assert_eq!(canonical_or_nearest(&t.join("new/deeper")), t.join("new/deeper"));
        // `new` does not exist: `new/../..` leaves t, as mkdir -p would.
        assert_eq!(canonical_or_nearest(&t.join("new/../../x")), root.join("x"));
        assert_eq!(canonical_or_nearest(&t.join("new/../new2/./y")), t.join("new2/y"));
        // A symlink is followed, also below a missing name's `..`.
        let etc = Path::new("/etc").canonicalize().unwrap();
        assert_eq!(canonical_or_nearest(&t.join("out/nonexistent-x")), etc.join("nonexistent-x"));
        assert_eq!(canonical_or_nearest(&t.join("new/../out/nonexistent-x")), etc.join("nonexistent-x"));
        assert_eq!(canonical_or_nearest(Path::new("/")), PathBuf::from("/"));
    }

    #[test]
    fn mountinfo_plain_line() {
        let m = parse_mountinfo_line("27 1 254:0 / / rw,relatime - ext4 /dev/vda rw,discard,resv_strict").unwrap();
        assert_eq!((m.mount_id, m.parent_id, m.major, m.minor), (27, 1, 254, 0));
        assert_eq!(m.root, PathBuf::from("/"));
        assert_eq!(m.mount_point, PathBuf::from("/"));
        assert!(m.optional.is_empty());
        assert_eq!(m.fs_type, "ext4");
        assert_eq!(m.source, "/dev/vda");
        assert_eq!(m.options(), "rw,relatime,discard,resv_strict");
    }

    #[test]
    fn mountinfo_escapes_and_optional_fields() {
        let line = r"36 35 98:0 /mnt\0401 /mnt/my\040disk\011x rw,noatime shared:1 master:2 - ext3 /dev/disk\040a ro,errors=continue";
        let m = parse_mountinfo_line(line).unwrap();
        assert_eq!(m.root, PathBuf::from("/mnt 1"));
        assert_eq!(m.mount_point, PathBuf::from("/mnt/my disk\tx"));
        assert_eq!(m.optional, vec!["shared:1".to_string(), "master:2".to_string()]);
        assert_eq!(m.fs_type, "ext3");
        assert_eq!(m.source, "/dev/disk a");
        assert_eq!(m.mount_options, "rw,noatime");
        assert_eq!(m.super_options, "ro,errors=continue");
        // A read-only super block makes the mount read-only.
        assert_eq!(m.options(), "ro,noatime,errors=continue");
        assert_eq!(unescape_mount(r"a\134b\\c\04"), r"a\b\\c\04");
        assert!(parse_mountinfo_line("garbage").is_none());
        assert!(parse_mountinfo_line("1 2 3:4 / /x rw no-separator").is_none());
    }

    #[test]
    fn longest_prefix_and_stacking() {
        let text = "\
1 0 254:0 / / rw - ext4 /dev/vda rw
2 1 0:23 / /dev/shm rw - tmpfs tmpfs rw
3 1 0:30 / /mnt/a\\040b rw - xfs /dev/vdb rw
4 2 0:27 / /dev/shm rw - tmpfs tmpfs2 rw
5 1 0:31 / /mnt/a rw - btrfs /dev/vdc rw
";
        let ms = parse_mountinfo(text);
        assert_eq!(ms.len(), 5);
        let f = |p: &str| mount_for_path_in(&ms, Path::new(p)).map(|m| m.mount_id);
        assert_eq!(f("/home/x"), Some(1));
        assert_eq!(f("/dev/shm/x"), Some(4), "topmost of stacked mounts");
        assert_eq!(f("/mnt/a b/file"), Some(3));
        assert_eq!(f("/mnt/a/file"), Some(5));
        assert_eq!(f("/mnt/ab"), Some(1), "prefix is by component, not by string");
    }

    #[test]
    fn option_merging() {
        assert_eq!(merge_mount_options("rw,relatime", "rw,size=4k"), "rw,relatime,size=4k");
        assert_eq!(merge_mount_options("ro,nosuid", "rw"), "ro,nosuid");
        assert_eq!(merge_mount_options("", ""), "");
    }
}
