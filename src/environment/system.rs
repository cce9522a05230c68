//! Snapshot of the system a run happened on: the machine, the kernel's
//! writeback settings, and for each target the mount and device under it.
//! The facts come from `crate::host` (/proc and /sys); what cannot be read
//! is left empty.
use crate::environment::safety::is_block_device;
use crate::host::blockdev::{device_for_path, BlockDev, BlockKind};
use crate::host::mountinfo::{canonical_or_nearest, mount_for_path_in, read_mountinfo, MountEntry};
use crate::result::system::{SystemInfo, TargetInfo};
use std::path::Path;

/// Describe the machine and, for each path, the mount and device under it.
pub fn snapshot(paths: &[&Path]) -> SystemInfo {
    let (hostname, kernel) = crate::host::kernel::uname();
    let (cpu_model, cpus) = crate::host::cpuinfo::read_cpuinfo();
    // SAFETY: sysconf only reads the constant it is given; no memory of ours is involved.
    let ps = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    let mounts = read_mountinfo();
    SystemInfo {
        hostname,
        kernel,
        cpu_model,
        cpus,
        memory_bytes: crate::host::meminfo::read_meminfo().total,
        page_size: if ps > 0 { ps as u64 } else { 0 },
        clocksource: crate::host::kernel::clocksource(),
        vm: crate::host::vm::settings(),
        targets: paths.iter().map(|p| target_info(&mounts, p)).collect(),
        cpufreq_governor: crate::host::cpufreq::governor(),
        is_root: crate::host::is_root(),
    }
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
    t.model = match &d.kind {
        BlockKind::Loop { backing_file: Some(f) } => Some(format!("loop over {}", f.display())),
        BlockKind::Loop { backing_file: None } => Some("loop (nothing attached)".to_string()),
        BlockKind::DeviceMapper { slaves } => {
            let name = d.dm_name().unwrap_or_default();
            Some(format!("device-mapper {name} over {}", slaves.join(",")).trim().to_string())
        }
        BlockKind::Zram => Some(match d.zram_comp_algorithm() {
            Some(a) => format!("zram ({a})"),
            None => "zram".to_string(),
        }),
        _ => disk.model(),
    };
    t.rotational = disk.rotational();
    t.scheduler = disk.scheduler();
    t.logical_block_size = disk.logical_block_size();
}

#[cfg(test)]
mod tests {
    use super::*;

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
        use crate::host::is_root;
        use crate::host::testutil::LoopDev;
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
