//! What fsbench may touch. Writing to a block device destroys what is on it,
//! so a device is refused unless the user confirmed it and nothing on the
//! system uses it: not mounted (itself, a partition, or its parent disk),
//! no holders (dm, md, LVM, bcache), not swap, not behind a loop device,
//! and the kernel grants an exclusive open.
use crate::host::blockdev::{dev_major, dev_minor, device_for_path, loop_backings, BlockDev};
use crate::host::mountinfo::read_mountinfo;
use crate::host::swaps::swap_devices;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

pub fn is_block_device(path: &Path) -> bool {
    std::fs::metadata(path).map(|m| m.file_type().is_block_device()).unwrap_or(false)
}

/// A missing path in devtmpfs (/dev, not /dev/shm) is a device name this
/// machine lacks (a job file written for another machine), never a place
/// for a data file: creating it would benchmark a RAM file and call it the
/// disk.
pub fn check_not_new_in_dev(path: &Path) -> Result<(), String> {
    if path.exists() {
        return Ok(());
    }
    let at = crate::host::mountinfo::canonical_or_nearest(path);
    if crate::host::mountinfo::mount_for_path(&at).is_some_and(|m| m.fs_type == "devtmpfs") {
        return Err(format!(
            "{} does not exist, and fsbench does not create files under /dev (a device this machine does not have?)",
            path.display()
        ));
    }
    Ok(())
}

/// Whether fsbench may write an output the user named (a report, an
/// export, a log, a chart, a trace, a results directory) at `path`, given
/// with `flag`. Refused: a block or character device, and anything under
/// /dev (devtmpfs, devpts, mqueue, ...: a new name there is a RAM file in
/// place of a device, or worse), except a tmpfs mounted there for files
/// (/dev/shm). Symlinks and `..` are resolved as far as the path exists,
/// the rest as creating it would go, so neither leads there unseen. The
/// error names the flag, the path, where it leads and why. Reads only.
pub fn check_output_path(flag: &str, path: &Path) -> Result<(), String> {
    check_output_in(&read_mountinfo(), flag, path)
}

/// [`check_output_path`] for each `(flag, path)`, reading the mounts once.
pub fn check_output_paths(outputs: &[(String, PathBuf)]) -> Result<(), String> {
    let mounts = read_mountinfo();
    outputs.iter().try_for_each(|(flag, path)| check_output_in(&mounts, flag, path))
}

fn check_output_in(mounts: &[crate::host::mountinfo::MountEntry], flag: &str, path: &Path) -> Result<(), String> {
    let real = crate::host::mountinfo::canonical_or_nearest(path);
    let named = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let shown = if real == named { path.display().to_string() } else { format!("{} (which leads to {})", path.display(), real.display()) };
    let refuse = |why: &str| {
        Err(format!(
            "{flag} {shown}: {why}; fsbench writes its outputs only to files and directories of an ordinary file system, never to a device or under /dev"
        ))
    };
    if let Ok(m) = std::fs::metadata(&real) {
        if m.file_type().is_block_device() {
            return refuse("it is a block device, which writing would overwrite");
        }
        if m.file_type().is_char_device() {
            return refuse("it is a character device");
        }
    }
    // The name as given and where it leads: either under /dev is refused.
    for p in [&named, &real] {
        let fs = crate::host::mountinfo::mount_for_path_in(mounts, p).map(|m| (m.fs_type.as_str(), m.mount_point.clone()));
        let under_dev = p.starts_with("/dev");
        let files_here = matches!(&fs, Some(("tmpfs", mp)) if mp.starts_with("/dev") && mp != Path::new("/dev"));
        if (under_dev && !files_here) || fs.as_ref().is_some_and(|(t, _)| *t == "devtmpfs") {
            return refuse("it is under /dev");
        }
    }
    Ok(())
}

/// The files a plan writes besides its data, each with the option that
/// names it: fio's logs and `write_iolog`, the exec engine's output files,
/// IOzone's `-b`, YCSB's `exportfile`.
pub fn plan_outputs(plan: &crate::model::Plan) -> Vec<(String, PathBuf)> {
    use crate::model::Workload;
    let mut out = Vec::new();
    match &plan.workload {
        Workload::Jobs(jobs) => {
            for j in jobs {
                for (option, file) in j.logs.files(&j.name, 1) {
                    out.push((format!("job '{}': {option}", j.name), file));
                }
                if let Some(p) = &j.write_iolog {
                    out.push((format!("job '{}': write_iolog", j.name), p.clone()));
                }
                let m = &j.engine.misc;
                if j.ioengine == "exec" && m.std_redirect {
                    for kind in ["stdout", "stderr"] {
                        out.push((format!("job '{}': std_redirect", j.name), PathBuf::from(format!("{}.{kind}", m.redirect_name))));
                    }
                }
            }
        }
        Workload::Iozone(p) => out.extend(p.excel_file.iter().map(|f| ("-b".to_string(), f.clone()))),
        Workload::Ycsb(p) => out.extend(p.exportfile.iter().map(|f| ("-p exportfile".to_string(), f.clone()))),
        Workload::Flow(_) | Workload::Postmark(_) | Workload::Bonnie(_) | Workload::Replay(_) => {}
    }
    out
}

/// Open an output file for writing (created, emptied, or appended to),
/// checked first as [`check_output_path`]: the check before the run covers
/// what the plan names, this what is made at the time.
pub fn create_output(flag: &str, path: &Path, append: bool) -> Result<std::fs::File, String> {
    check_output_path(flag, path)?;
    let mut o = std::fs::OpenOptions::new();
    if append {
        o.append(true);
    } else {
        o.write(true).truncate(true);
    }
    o.create(true).open(path).map_err(|e| format!("{flag} {}: {e}", path.display()))
}

/// Write a whole output file, checked as [`create_output`].
pub fn write_output(flag: &str, path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::io::Write;
    create_output(flag, path, false)?.write_all(bytes).map_err(|e| format!("{flag} {}: {e}", path.display()))
}

/// `(major, minor, mount point)` of every mount, from /proc/self/mountinfo.
/// When a mount's source is a block device node whose number differs from
/// the mount's (btrfs and others report an anonymous device), that device
/// is listed too.
pub fn mounted_devices() -> Vec<(u32, u32, PathBuf)> {
    let mut out = Vec::new();
    for m in read_mountinfo() {
        out.push((m.major, m.minor, m.mount_point.clone()));
        if m.source.starts_with('/') {
            if let Ok(sm) = std::fs::metadata(&m.source) {
                if sm.file_type().is_block_device() {
                    let (ma, mi) = (dev_major(sm.rdev()), dev_minor(sm.rdev()));
                    if (ma, mi) != (m.major, m.minor) {
                        out.push((ma, mi, m.mount_point.clone()));
                    }
                }
            }
        }
    }
    out
}

fn describe(path: &Path, dev: &BlockDev) -> String {
    let p = path.display().to_string();
    if path.file_name().and_then(|s| s.to_str()) == Some(dev.name.as_str()) {
        p
    } else {
        format!("{p} ({})", dev.name)
    }
}

/// Whether fsbench may write to `path`. Regular files and anything that is
/// not a block device are not this function's concern and pass. For a block
/// device, refuses with a message naming the device and the reason. Only
/// reads; never writes.
pub fn check_device_usable(path: &Path, allow_device: bool) -> Result<(), String> {
    let meta = match std::fs::metadata(path) {
        Ok(m) => m,
        Err(e) => return Err(format!("cannot inspect {}: {e}", path.display())),
    };
    if !meta.file_type().is_block_device() {
        return Ok(());
    }
    if !allow_device {
        return Err(format!("writing to {} destroys its data; pass --allow-device to confirm", path.display()));
    }
    let (major, minor) = (dev_major(meta.rdev()), dev_minor(meta.rdev()));
    let Some(dev) = BlockDev::from_devnum(major, minor) else {
        return Err(format!(
            "{} is block device {major}:{minor}, which is not in /sys/dev/block; refusing to write to a device that cannot be checked",
            path.display()
        ));
    };
    let who = describe(path, &dev);

    // The device and its relatives: partitions of a whole disk, the parent of a partition.
    let mut related: Vec<(BlockDev, &'static str)> = vec![(dev.clone(), "")];
    for p in dev.partitions() {
        related.push((p, "its partition "));
    }
    if let Some(parent) = dev.parent() {
        related.push((parent, "its parent disk "));
    }

    let mounts = mounted_devices();
    for (r, rel) in &related {
        if let Some((_, _, mp)) = mounts.iter().find(|(ma, mi, _)| (*ma, *mi) == (r.major, r.minor)) {
            let what = if rel.is_empty() { "it".to_string() } else { format!("{rel}{}", r.name) };
            return Err(format!("{who} is in use: {what} is mounted at {}", mp.display()));
        }
    }

    for (r, rel) in &related {
        let holders = r.holders();
        if !holders.is_empty() {
            let what = if rel.is_empty() { "it".to_string() } else { format!("{rel}{}", r.name) };
            return Err(format!("{who} is in use: {what} is held by {} (device-mapper, md or LVM)", holders.join(", ")));
        }
    }

    for (ma, mi, name) in swap_devices() {
        if let Some((r, rel)) = related.iter().find(|(r, _)| (r.major, r.minor) == (ma, mi)) {
            let what = if rel.is_empty() { "it".to_string() } else { format!("{rel}{}", r.name) };
            return Err(format!("{who} is in use: {what} is active swap ({})", name.display()));
        }
    }

    if let Some((lo, r)) = loop_over(&related) {
        return Err(format!("{who} is in use: {lo} is a loop device over {}", r.dev_path().display()));
    }

    // Last word to the kernel: an exclusive open fails with EBUSY while a
    // file system, dm/md, or another exclusive opener holds the device.
    match std::fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL | libc::O_CLOEXEC).open(path) {
        Ok(_) => {}
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
            return Err(format!(
                "{who} is in use: the kernel refused an exclusive open (held by a file system, dm, md or another program)"
            ));
        }
        Err(_) => {} // e.g. EACCES: opening it for the run will report that.
    }
    Ok(())
}

/// Why the device under `path` is not the run's alone, if it is not: it
/// (or the disk it is a partition of, or what it is stacked on) also holds
/// the root file system, another mount, or swap, whose writers' I/O its
/// counters count and whose load its timings feel. Device figures of a run
/// there (bytes written, write amplification) are then upper bounds, not
/// the run's own. None when nothing else is on it, or when `path` has no
/// block device (tmpfs: no device counters to misread). A loop or zram
/// device is its own: its counters are its I/O alone, whatever disk holds a
/// loop device's backing file.
pub fn shared_device(path: &Path) -> Option<String> {
    let dev = device_for_path(path)?;
    let own = crate::host::mountinfo::mount_for_path(path).map(|m| m.mount_point);
    if own.as_deref() == Some(Path::new("/")) {
        return Some(format!("{} holds the root file system (/), which the system and other processes write to", dev.name));
    }
    // The devices whose I/O reaches the same media: this one and what it is
    // stacked on (a partition's disk, dm/md slaves), each with its
    // partitions and what is stacked on it.
    let mut base: Vec<BlockDev> = vec![dev.clone()];
    let mut i = 0;
    while i < base.len() && base.len() < 64 {
        let d = base[i].clone();
        for n in d.parent().map(|p| p.name).into_iter().chain(d.slaves()) {
            if !base.iter().any(|b| b.name == n) {
                if let Some(b) = BlockDev::from_name(&n) {
                    base.push(b);
                }
            }
        }
        i += 1;
    }
    let mut related: Vec<BlockDev> = base.clone();
    for b in &base {
        for r in b.partitions().into_iter().chain(b.holders().iter().filter_map(|h| BlockDev::from_name(h))) {
            if !related.iter().any(|x| x.name == r.name) {
                related.push(r);
            }
        }
    }
    let on = |ma: u32, mi: u32| related.iter().find(|r| (r.major, r.minor) == (ma, mi));
    let mut others: Vec<(PathBuf, String)> = mounted_devices()
        .into_iter()
        .filter(|(_, _, mp)| Some(mp) != own.as_ref())
        .filter_map(|(ma, mi, mp)| on(ma, mi).map(|r| (mp, r.name.clone())))
        .collect();
    // The root file system first: it is the one that always has writers.
    others.sort_by_key(|(mp, _)| mp != Path::new("/"));
    others.dedup_by(|a, b| a.0 == b.0);
    if let Some((mp, name)) = others.first() {
        let via = if *name == dev.name { String::new() } else { format!(" (through {name})") };
        let what = if mp == Path::new("/") { "the root file system (/)".to_string() } else { format!("{} as well", mp.display()) };
        let more = if others.len() > 1 { format!(" and {} other mount(s)", others.len() - 1) } else { String::new() };
        return Some(format!("{} holds {what}{via}{more}, whose writers' I/O reaches the same device", dev.name));
    }
    if let Some((_, _, swap)) = swap_devices().into_iter().find(|(ma, mi, _)| on(*ma, *mi).is_some()) {
        return Some(format!("{} also holds active swap ({})", dev.name, swap.display()));
    }
    None
}

/// A loop device whose backing file is one of the `related` device nodes.
fn loop_over<'a>(related: &'a [(BlockDev, &'static str)]) -> Option<(String, &'a BlockDev)> {
    for (name, bf) in loop_backings() {
        let Ok(m) = std::fs::metadata(&bf) else { continue };
        if !m.file_type().is_block_device() {
            continue;
        }
        let num = (dev_major(m.rdev()), dev_minor(m.rdev()));
        if let Some((r, _)) = related.iter().find(|(r, _)| (r.major, r.minor) == num) {
            return Some((name, r));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::blockdev::device_for_path;
    use crate::host::is_root;
    use crate::host::testutil::LoopDev;

    #[test]
    fn regular_files_are_not_devices() {
        let f = tempfile::NamedTempFile::new().unwrap();
        assert!(!is_block_device(f.path()));
        assert_eq!(check_device_usable(f.path(), false), Ok(()));
    }

    #[test]
    fn no_new_files_under_dev() {
        let e = check_not_new_in_dev(Path::new("/dev/fsbench-no-such-disk")).unwrap_err();
        assert!(e.contains("/dev/fsbench-no-such-disk") && e.contains("does not exist"), "{e}");
        assert!(check_not_new_in_dev(Path::new("/dev/null")).is_ok());
        assert!(check_not_new_in_dev(Path::new("/dev/shm/fsbench-new")).is_ok(), "/dev/shm is a tmpfs for files");
        let d = tempfile::tempdir().unwrap();
        assert!(check_not_new_in_dev(&d.path().join("new")).is_ok());
    }

    #[test]
    fn outputs_go_nowhere_under_dev_nor_into_a_device() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(check_output_path("--output", &d.path().join("r.json")), Ok(()));
        assert_eq!(check_output_path("--charts", &d.path().join("new/deeper")), Ok(()));
        let e = check_output_path("--output", Path::new("/dev/null")).unwrap_err();
        assert!(e.starts_with("--output /dev/null: it is a character device"), "{e}");
        let e = check_output_path("--charts", Path::new("/dev/fsbench-no-such")).unwrap_err();
        assert!(e.starts_with("--charts /dev/fsbench-no-such: it is under /dev"), "{e}");
        // Through a symlink, a dangling one, and `..` past a directory not made yet.
        std::os::unix::fs::symlink("/dev/null", d.path().join("null")).unwrap();
        let e = check_output_path("-b", &d.path().join("null")).unwrap_err();
        assert!(e.contains("(which leads to /dev/null): it is a character device"), "{e}");
        std::os::unix::fs::symlink("/dev/fsbench-no-such", d.path().join("dangling")).unwrap();
        assert!(check_output_path("-b", &d.path().join("dangling")).unwrap_err().contains("under /dev"));
        let up = "../".repeat(d.path().components().count() + 1);
        let e = check_output_path("--out", &d.path().join(format!("new/{up}dev/x"))).unwrap_err();
        assert!(e.contains("(which leads to /dev/x): it is under /dev"), "{e}");
        // A tmpfs mounted under /dev is a file system for files.
        if let Ok(shm) = tempfile::tempdir_in("/dev/shm") {
            assert_eq!(check_output_path("--output", &shm.path().join("r.json")), Ok(()));
        }
    }

    #[test]
    fn mounted_root_device_is_refused() {
        let mounts = mounted_devices();
        assert!(mounts.iter().any(|(_, _, mp)| mp == Path::new("/")));
        let Some(d) = device_for_path(&std::env::temp_dir()) else { panic!("temp dir has no device") };
        let mut candidates = vec![d.dev_path()];
        if Path::new("/dev/vda").exists() {
            candidates.push(PathBuf::from("/dev/vda"));
        }
        for p in candidates {
            if !is_block_device(&p) {
                continue;
            }
            let e = check_device_usable(&p, false).unwrap_err();
            assert!(e.contains("--allow-device") && e.contains(&p.display().to_string()), "{e}");
            let e = check_device_usable(&p, true).unwrap_err();
            assert!(e.contains(&p.display().to_string()) && e.contains("in use"), "{e}");
            assert!(e.contains("mounted"), "{e}");
        }
    }

    #[test]
    fn loop_device_checks() {
        if !is_root() {
            eprintln!("skipping loop_device_checks: needs root to attach a loop device");
            return;
        }
        let Some(lo) = LoopDev::attach(64 << 20) else { return };
        assert!(is_block_device(lo.path()));
        let e = check_device_usable(lo.path(), false).unwrap_err();
        assert!(e.contains(&lo.path().display().to_string()) && e.contains("--allow-device"), "{e}");
        assert_eq!(check_device_usable(lo.path(), true), Ok(()));
        // While someone holds it exclusively, it is refused (read-only open, no writes).
        let held = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_EXCL).open(lo.path());
        if let Ok(_h) = held {
            let e = check_device_usable(lo.path(), true).unwrap_err();
            assert!(e.contains("exclusive"), "{e}");
        }
    }
}
