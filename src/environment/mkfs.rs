//! Making and mounting file systems for managed targets: the mkfs command
//! line for each file system, the Debian package that provides it, mount
//! with the kernel's explanation on failure, and the options in force.
//!
//! Nothing here checks whether a device may be formatted; target.rs does
//! that before calling in.

use crate::host::filesystems::{kernel_release, kernel_support, KernelFs};
use crate::host::mountinfo::read_mountinfo;
use crate::model::environment::MANAGED_FS;
use std::io::Read;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The Debian package with `mkfs.<fs>`.
pub fn package_for(fs: &str) -> Option<&'static str> {
    Some(match fs {
        "ext2" | "ext3" | "ext4" => "e2fsprogs",
        "xfs" => "xfsprogs",
        "btrfs" => "btrfs-progs",
        "f2fs" => "f2fs-tools",
        "nilfs2" => "nilfs-tools",
        "jfs" => "jfsutils",
        "vfat" => "dosfstools",
        _ => return None,
    })
}

/// Flags that make `mkfs.<fs>` run without asking and without chatter
/// (it would otherwise stop at an existing signature).
pub fn force_flags(fs: &str) -> &'static [&'static str] {
    match fs {
        "ext2" | "ext3" | "ext4" => &["-F", "-q"],
        "xfs" | "btrfs" | "f2fs" | "nilfs2" => &["-f", "-q"],
        "jfs" => &["-q"],
        _ => &[],
    }
}

/// Where to look for programs beyond $PATH (root's sbin directories are
/// often missing from a user's PATH, and sudo keeps the user's).
const SBIN: &[&str] = &["/usr/local/sbin", "/usr/sbin", "/sbin"];

/// The full path of an executable `name` on $PATH or in the sbin directories.
pub fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).chain(SBIN.iter().map(PathBuf::from)).collect();
    dirs.into_iter()
        .map(|d| d.join(name))
        .find(|p| std::fs::metadata(p).map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0).unwrap_or(false))
}

/// The mkfs command line: program, force flags, the user's options, device.
pub fn mkfs_command(program: &Path, fs: &str, options: &[String], device: &Path) -> Vec<String> {
    let mut v = vec![program.display().to_string()];
    v.extend(force_flags(fs).iter().map(|s| s.to_string()));
    v.extend(options.iter().cloned());
    v.push(device.display().to_string());
    v
}

/// Check that `fs` is a sensible file system name and find its mkfs.
pub fn find_mkfs(fs: &str) -> Result<PathBuf, String> {
    if fs.is_empty() || !fs.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.') {
        return Err(format!("'{fs}' is not a file system name; expected one of {}", MANAGED_FS.join(", ")));
    }
    let prog = format!("mkfs.{fs}");
    if let Some(p) = find_program(&prog) {
        return Ok(p);
    }
    Err(match package_for(fs) {
        Some(pkg) => format!("{prog} is not installed; install the {pkg} package (apt-get install {pkg})"),
        None => format!("unknown file system '{fs}': there is no {prog} on this system; expected one of {}", MANAGED_FS.join(", ")),
    })
}

/// That `fs` can be made and mounted here, before anything is created: its
/// mkfs is installed and the running kernel has it, or would load its
/// module at mount (see `host::filesystems::kernel_support`). Otherwise why
/// not, both halves told, so one message says all that is missing.
pub fn check_fs(fs: &str) -> Result<PathBuf, String> {
    let mkfs = find_mkfs(fs);
    let KernelFs::Missing(why) = kernel_support(fs) else { return mkfs };
    let tool = match &mkfs {
        Ok(p) => format!("{} is installed", p.display()),
        Err(e) => e.clone(),
    };
    Err(format!(
        "{fs}: the running kernel ({}) has no {fs} file system ({why}); {tool}. Run on a kernel with {fs}, or choose another file system",
        kernel_release()
    ))
}

/// Run mkfs; the command line is returned for the record.
pub fn make_fs(fs: &str, options: &[String], device: &Path) -> Result<Vec<String>, String> {
    let program = find_mkfs(fs)?;
    let cmd = mkfs_command(&program, fs, options, device);
    let out = Command::new(&cmd[0]).args(&cmd[1..]).output().map_err(|e| format!("cannot run {}: {e}", cmd[0]))?;
    if !out.status.success() {
        let mut msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if msg.is_empty() {
            msg = String::from_utf8_lossy(&out.stdout).trim().to_string();
        }
        return Err(format!("`{}` failed ({}): {}", cmd.join(" "), out.status, msg));
    }
    Ok(cmd)
}

/// A reader of kernel log records written after it was opened (the kernel
/// says why a mount failed there: "Unrecognized mount option", "bad
/// superblock"...). Inert when /dev/kmsg cannot be read.
pub struct KernelLog {
    f: Option<std::fs::File>,
}

impl KernelLog {
    /// Start listening: later [`KernelLog::since`] sees only newer records.
    pub fn open() -> KernelLog {
        let f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open("/dev/kmsg").ok();
        if let Some(f) = &f {
            use std::os::fd::AsRawFd;
            // SAFETY: lseek on an fd we own; SEEK_END on /dev/kmsg moves past the last record.
            unsafe { libc::lseek(f.as_raw_fd(), 0, libc::SEEK_END) };
        }
        KernelLog { f }
    }

    /// The last few records since `open` that mention one of `words`.
    pub fn since(&mut self, words: &[String]) -> Vec<String> {
        let Some(f) = &mut self.f else { return Vec::new() };
        let mut out = Vec::new();
        let mut buf = vec![0u8; 8192];
        // One record per read; EAGAIN at the end; EPIPE when records were overwritten.
        for _ in 0..10_000 {
            let n = match f.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
                Err(_) => break,
            };
            let rec = String::from_utf8_lossy(&buf[..n]);
            let Some((head, msg)) = rec.split_once(';') else { continue };
            // Warnings and errors only (syslog level 0-4): the reasons, not
            // the routine "mounted filesystem" lines of other mounts.
            let level = head.split(',').next().and_then(|p| p.parse::<u32>().ok()).map(|p| p & 7).unwrap_or(7);
            if level > 4 {
                continue;
            }
            let msg = msg.lines().next().unwrap_or("").trim();
            let lower = msg.to_lowercase();
            if words.iter().any(|w| !w.is_empty() && lower.contains(&w.to_lowercase())) {
                out.push(msg.to_string());
            }
        }
        let keep = out.len().saturating_sub(4);
        out.split_off(keep)
    }
}

/// `mount -t fs [-o options] device mount_point`; on failure the error has
/// mount's message and what the kernel logged about it.
pub fn mount(device: &Path, mount_point: &Path, fs: &str, options: &str) -> Result<(), String> {
    let prog = find_program("mount").unwrap_or_else(|| PathBuf::from("mount"));
    let mut cmd = Command::new(prog);
    cmd.arg("-t").arg(fs);
    if !options.is_empty() {
        cmd.arg("-o").arg(options);
    }
    cmd.arg(device).arg(mount_point);
    let mut klog = KernelLog::open();
    let out = cmd.output().map_err(|e| format!("cannot run mount: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let msg = String::from_utf8_lossy(&out.stderr).trim().to_string();
    let dev_name = device.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let kmsg = klog.since(&[dev_name, fs.to_string()]);
    let mut e = format!(
        "mounting {} ({fs}{}) on {} failed: {msg}",
        device.display(),
        if options.is_empty() { String::new() } else { format!(", -o {options}") },
        mount_point.display()
    );
    if !kmsg.is_empty() {
        e.push_str(&format!("; the kernel says: {}", kmsg.join(" | ")));
    } else if !options.is_empty() {
        e.push_str(&format!(
            "; check the mount options '{options}' (an option {fs} does not know is the usual cause; see the {fs} man page)"
        ));
    }
    if !crate::host::filesystems::kernel_lists(fs) {
        e.push_str(&format!("; the running kernel does not list {fs} in /proc/filesystems (modprobe {fs}?)"));
    }
    Err(e)
}

/// The options in force on the topmost mount at `mount_point`.
pub fn options_in_force(mount_point: &Path) -> Option<String> {
    let canon = mount_point.canonicalize().unwrap_or_else(|_| mount_point.to_path_buf());
    read_mountinfo().into_iter().rev().find(|m| m.mount_point == canon).map(|m| m.options())
}

/// Whether something is mounted exactly at `mount_point`.
pub fn is_mounted(mount_point: &Path) -> bool {
    let canon = mount_point.canonicalize().unwrap_or_else(|_| mount_point.to_path_buf());
    read_mountinfo().iter().any(|m| m.mount_point == canon)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines() {
        let dev = Path::new("/dev/loop9");
        let c = mkfs_command(Path::new("/sbin/mkfs.ext4"), "ext4", &["-O".into(), "^has_journal".into()], dev);
        assert_eq!(c, ["/sbin/mkfs.ext4", "-F", "-q", "-O", "^has_journal", "/dev/loop9"]);
        assert_eq!(mkfs_command(Path::new("mkfs.xfs"), "xfs", &[], dev), ["mkfs.xfs", "-f", "-q", "/dev/loop9"]);
        assert_eq!(mkfs_command(Path::new("mkfs.jfs"), "jfs", &[], dev), ["mkfs.jfs", "-q", "/dev/loop9"]);
        assert_eq!(mkfs_command(Path::new("mkfs.vfat"), "vfat", &[], dev), ["mkfs.vfat", "/dev/loop9"]);
        assert_eq!(package_for("btrfs"), Some("btrfs-progs"));
        assert_eq!(package_for("nilfs2"), Some("nilfs-tools"));
        assert_eq!(package_for("ext3"), Some("e2fsprogs"));
        assert_eq!(package_for("nosuchfs"), None);
    }

    #[test]
    fn missing_mkfs_is_explained() {
        let e = find_mkfs("nosuchfs").unwrap_err();
        assert!(e.contains("unknown file system 'nosuchfs'") && e.contains("ext4"), "{e}");
        let e = find_mkfs("../../bin/sh").unwrap_err();
        assert!(e.contains("not a file system name"), "{e}");
        // Every known fs either has its mkfs or names its package.
        for fs in MANAGED_FS {
            if let Err(e) = find_mkfs(fs) {
                assert!(e.contains(package_for(fs).unwrap()), "{e}");
            }
        }
    }
}
