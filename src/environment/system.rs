//! Snapshot of the system a run happened on: the machine, the kernel's
//! writeback settings, and for each target the mount and device under it.
//! Everything is read from /proc and /sys; what cannot be read is left empty.
use crate::observe::blockdev::{device_for_path, BlockDev, BlockKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SystemInfo {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: u32,
    pub memory_bytes: u64,
    pub page_size: u64,
    pub clocksource: String,
    /// `vm.*` writeback settings, `kernel.randomize_va_space`,
    /// `transparent_hugepage` (and `.defrag`): the values in force.
    pub vm: BTreeMap<String, String>,
    pub targets: Vec<TargetInfo>,
    /// Scaling governor(s) of the CPUs, comma-separated when they differ;
    /// None when there is no cpufreq (common in VMs).
    #[serde(default)]
    pub cpufreq_governor: Option<String>,
    /// Whether the run had effective uid 0.
    #[serde(default)]
    pub is_root: bool,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct TargetInfo {
    pub path: PathBuf,
    pub fs_type: String,
    pub mount_point: PathBuf,
    pub mount_source: String,
    pub mount_options: String,
    pub device: Option<String>,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub logical_block_size: Option<u64>,
    /// `disk`, `partition`, `loop`, `dm`, `zram` or `other`.
    #[serde(default)]
    pub device_kind: Option<String>,
}

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
    let (major, minor) = crate::observe::blockdev::parse_devnum(it.next()?)?;
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
/// missing tail is appended lexically.
pub fn canonical_or_nearest(path: &Path) -> PathBuf {
    let abs =
        if path.is_absolute() { path.to_path_buf() } else { std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")).join(path) };
    if let Ok(c) = std::fs::canonicalize(&abs) {
        return c;
    }
    let mut tail: Vec<OsString> = Vec::new();
    let mut cur = abs.as_path();
    loop {
        match cur.parent() {
            Some(parent) => {
                if let Some(name) = cur.file_name() {
                    tail.push(name.to_os_string());
                }
                if let Ok(c) = std::fs::canonicalize(parent) {
                    let mut p = c;
                    for t in tail.iter().rev() {
                        p.push(t);
                    }
                    return p;
                }
                cur = parent;
            }
            None => return abs,
        }
    }
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

/// The mount holding `path` (which need not exist yet).
pub fn mount_for_path(path: &Path) -> Option<MountEntry> {
    let p = canonical_or_nearest(path);
    let mounts = read_mountinfo();
    mount_for_path_in(&mounts, &p).cloned()
}

fn read_trim(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path).ok().map(|s| s.trim().to_string())
}

/// The bracketed choice in a sysfs selector (`none [mq-deadline] kyber`),
/// or the whole text when there are no brackets.
pub fn bracketed(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    match (t.find('['), t.find(']')) {
        (Some(a), Some(b)) if a < b => Some(t[a + 1..b].to_string()),
        _ => Some(t.to_string()),
    }
}

fn cstr_field(f: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = f.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// (hostname, "release version") from uname(2).
fn uname() -> (String, String) {
    // SAFETY: utsname is plain data; uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a valid utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return (read_trim("/proc/sys/kernel/hostname").unwrap_or_default(), String::new());
    }
    (cstr_field(&u.nodename), format!("{} {}", cstr_field(&u.release), cstr_field(&u.version)))
}

/// (model, logical CPUs) from /proc/cpuinfo text.
pub fn parse_cpuinfo(text: &str) -> (String, u32) {
    let mut model = String::new();
    let mut fallback = String::new();
    let mut cpus = 0u32;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "processor" => cpus += 1,
            "model name" | "cpu model" if model.is_empty() => model = v.to_string(),
            "Hardware" | "Model" | "cpu" | "uarch" if fallback.is_empty() => fallback = v.to_string(),
            _ => {}
        }
    }
    if model.is_empty() {
        model = fallback;
    }
    (model, cpus)
}

/// MemTotal in bytes from /proc/meminfo text.
pub fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut it = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = it.next()?.parse().ok()?;
    let mult = match it.next() {
        Some("kB") | Some("KB") => 1024,
        Some("mB") | Some("MB") => 1024 * 1024,
        _ => 1,
    };
    Some(n * mult)
}

fn cpufreq_governor() -> Option<String> {
    let mut govs: Vec<String> = Vec::new();
    let rd = std::fs::read_dir("/sys/devices/system/cpu").ok()?;
    let mut names: Vec<String> = rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for n in names {
        if !(n.starts_with("cpu") && n[3..].chars().all(|c| c.is_ascii_digit()) && n.len() > 3) {
            continue;
        }
        if let Some(g) = read_trim(format!("/sys/devices/system/cpu/{n}/cpufreq/scaling_governor")) {
            if !g.is_empty() && !govs.contains(&g) {
                govs.push(g);
            }
        }
    }
    if govs.is_empty() {
        None
    } else {
        Some(govs.join(","))
    }
}

fn vm_settings() -> BTreeMap<String, String> {
    let mut vm = BTreeMap::new();
    for key in [
        "vm.dirty_ratio",
        "vm.dirty_background_ratio",
        "vm.dirty_bytes",
        "vm.dirty_background_bytes",
        "vm.dirty_expire_centisecs",
        "vm.dirty_writeback_centisecs",
        "vm.swappiness",
        "kernel.randomize_va_space",
    ] {
        let file = Path::new("/proc/sys").join(key.replace('.', "/"));
        if let Some(v) = read_trim(file) {
            vm.insert(key.to_string(), v);
        }
    }
    for (key, file) in [
        ("transparent_hugepage", "/sys/kernel/mm/transparent_hugepage/enabled"),
        ("transparent_hugepage.defrag", "/sys/kernel/mm/transparent_hugepage/defrag"),
    ] {
        if let Some(v) = read_trim(file).and_then(|t| bracketed(&t)) {
            vm.insert(key.to_string(), v);
        }
    }
    vm
}

/// Describe the machine and, for each path, the mount and device under it.
pub fn snapshot(paths: &[&Path]) -> SystemInfo {
    let (hostname, kernel) = uname();
    let (cpu_model, mut cpus) = std::fs::read_to_string("/proc/cpuinfo").map(|t| parse_cpuinfo(&t)).unwrap_or_default();
    if cpus == 0 {
        // SAFETY: sysconf has no preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        cpus = if n > 0 { n as u32 } else { 0 };
    }
    let memory_bytes = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| parse_meminfo_total(&t)).unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let ps = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let mounts = read_mountinfo();
    SystemInfo {
        hostname,
        kernel,
        cpu_model,
        cpus,
        memory_bytes,
        page_size: if ps > 0 { ps as u64 } else { 0 },
        clocksource: read_trim("/sys/devices/system/clocksource/clocksource0/current_clocksource").unwrap_or_default(),
        vm: vm_settings(),
        targets: paths.iter().map(|p| target_info(&mounts, p)).collect(),
        cpufreq_governor: cpufreq_governor(),
        // SAFETY: geteuid has no preconditions.
        is_root: unsafe { libc::geteuid() } == 0,
    }
}

fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).map(|m| m.file_type().is_block_device()).unwrap_or(false)
}

/// Describe one target path: its mount and device.
pub fn target_info(mounts: &[MountEntry], path: &Path) -> TargetInfo {
    let canon = canonical_or_nearest(path);
    let mut t = TargetInfo { path: path.to_path_buf(), ..TargetInfo::default() };
    let dev = device_for_path(path);
    if is_block_device(&canon) {
        // The target is a device: describe where it is mounted, if anywhere.
        t.fs_type = "blockdev".to_string();
        if let Some(d) = &dev {
            if let Some(m) = mounts.iter().rev().find(|m| m.major == d.major && m.minor == d.minor) {
                t.mount_point = m.mount_point.clone();
                t.mount_source = m.source.clone();
                t.mount_options = m.options();
            }
        }
    } else if let Some(m) = mount_for_path_in(mounts, &canon) {
        t.fs_type = m.fs_type.clone();
        t.mount_point = m.mount_point.clone();
        t.mount_source = m.source.clone();
        t.mount_options = m.options();
    }
    if let Some(d) = dev {
        describe_device(&mut t, &d);
    }
    t
}

fn describe_device(t: &mut TargetInfo, d: &BlockDev) {
    t.device = Some(d.name.clone());
    t.device_kind = Some(d.kind_str().to_string());
    let disk = d.whole_disk();
    let q = disk.sysfs_dir.join("queue");
    t.model = match &d.kind {
        BlockKind::Loop { backing_file: Some(f) } => Some(format!("loop over {}", f.display())),
        BlockKind::Loop { backing_file: None } => Some("loop (nothing attached)".to_string()),
        BlockKind::DeviceMapper { slaves } => {
            let name = read_trim(d.sysfs_dir.join("dm/name")).unwrap_or_default();
            Some(format!("device-mapper {name} over {}", slaves.join(",")).trim().to_string())
        }
        BlockKind::Zram => {
            let alg = read_trim(d.sysfs_dir.join("comp_algorithm")).and_then(|a| bracketed(&a));
            Some(match alg {
                Some(a) => format!("zram ({a})"),
                None => "zram".to_string(),
            })
        }
        _ => read_trim(disk.sysfs_dir.join("device/model")).filter(|s| !s.is_empty()),
    };
    t.rotational = read_trim(q.join("rotational")).and_then(|s| match s.as_str() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    });
    t.scheduler = read_trim(q.join("scheduler")).and_then(|s| bracketed(&s));
    t.logical_block_size = read_trim(q.join("logical_block_size")).and_then(|s| s.parse().ok());
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn selectors_and_proc_parsing() {
        assert_eq!(bracketed("none [mq-deadline] kyber bfq \n").as_deref(), Some("mq-deadline"));
        assert_eq!(bracketed("always [madvise] never").as_deref(), Some("madvise"));
        assert_eq!(bracketed("none").as_deref(), Some("none"));
        assert_eq!(bracketed("  "), None);
        assert_eq!(parse_meminfo_total("MemTotal:       49368168 kB\nMemFree: 1 kB\n"), Some(49368168 * 1024));
        let (m, n) = parse_cpuinfo("processor\t: 0\nmodel name\t: Some CPU @ 2GHz\n\nprocessor\t: 1\nmodel name\t: Some CPU @ 2GHz\n");
        assert_eq!((m.as_str(), n), ("Some CPU @ 2GHz", 2));
    }

    #[test]
    fn snapshot_of_this_machine() {
        let t = std::env::temp_dir();
        let s = snapshot(&[t.as_path(), Path::new("/dev/shm")]);
        assert!(s.cpus >= 1);
        assert!(s.memory_bytes > 0);
        assert!(s.page_size >= 4096);
        assert!(!s.kernel.is_empty());
        assert!(s.vm.contains_key("vm.dirty_ratio"));
        assert!(s.vm.contains_key("vm.swappiness"));
        assert_eq!(s.targets.len(), 2);
        let tt = &s.targets[0];
        assert_eq!(tt.fs_type, "ext4", "{tt:?}");
        assert!(tt.device.is_some(), "{tt:?}");
        assert!(tt.logical_block_size.is_some());
        assert!(!tt.mount_options.is_empty());
        let shm = &s.targets[1];
        if Path::new("/dev/shm").exists() {
            assert_eq!(shm.fs_type, "tmpfs");
            assert_eq!(shm.device, None);
            assert_eq!(shm.model, None);
        }
        // It serialises.
        let j = serde_json::to_string(&s).unwrap();
        assert!(j.contains("\"targets\""));
        // A path that does not exist yet is described by its nearest ancestor.
        let s2 = snapshot(&[&t.join("fsbench-not-there/file")]);
        assert_eq!(s2.targets[0].fs_type, "ext4");
    }

    #[test]
    fn snapshot_of_a_loop_device() {
        use crate::observe::blockdev::testutil::{is_root, LoopDev};
        if !is_root() {
            eprintln!("skipping snapshot_of_a_loop_device: needs root to attach a loop device");
            return;
        }
        let Some(lo) = LoopDev::attach(64 << 20) else { return };
        let s = snapshot(&[lo.path()]);
        let t = &s.targets[0];
        assert_eq!(t.fs_type, "blockdev");
        assert_eq!(t.device.as_deref(), lo.path().file_name().and_then(|s| s.to_str()));
        assert_eq!(t.device_kind.as_deref(), Some("loop"));
        let model = t.model.as_deref().unwrap_or("");
        assert!(model.starts_with("loop over ") && model.ends_with("loop.img"), "{model}");
        assert_eq!(t.logical_block_size, Some(512));
    }
}
