//! Where a run happens: a directory, a raw block device (the user's, or a
//! loop or zram device fsbench creates), or a managed file system that
//! fsbench creates, mounts and tears down.
//!
//! Every step that creates something (a subdirectory, an image file, a loop
//! or zram device, a mount point, a mount) registers its undo action with
//! [`crate::environment::cleanup`] before or right after it happens. Teardown
//! runs those actions in reverse through their tokens, so an action runs
//! once whether the target is dropped, torn down explicitly, or the process
//! is dying and `cleanup::run_all()` gets there first. A setup that fails
//! half-way undoes what it had done.
//!
//! fsbench formats and mounts only devices it created itself (loop over its
//! own image file, a zram device it hot-added) or a device the user named
//! with allow_device that passes `check_device_usable`.

use crate::environment::cleanup::{self, Action, Token};
use crate::environment::identity::MountRef;
use crate::environment::lock::{lock_path, private, Lock, Private};
use crate::environment::mkfs;
use crate::environment::safety::{check_device_usable, is_block_device};
use crate::host::blockdev::{device_for_path, loop_backing_file, loop_direct_io};
use crate::host::mountinfo::mount_for_path;
use crate::host::{is_root, zram};
use crate::model::environment::{DeviceSource, TargetSpec};
use crate::result::target::TargetRecord;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A target that is set up; dropping it tears down what fsbench created.
#[derive(Debug)]
pub struct ActiveTarget {
    pub label: String,
    /// The directory (or raw device path) workloads put their files in.
    pub path: PathBuf,
    pub info: TargetRecord,
    /// Undo actions in the order things were created; run in reverse.
    undo: Vec<Token>,
    /// Set for managed targets: what remount needs.
    managed: Option<Managed>,
    /// A device the user named for a managed file system, locked for as
    /// long as the target lives: two runs formatting one device would
    /// destroy each other's file systems.
    device_lock: Option<Lock>,
    /// Its directory or mount point is this process's alone (see
    /// `lock::private`).
    _private: Option<Private>,
}

#[derive(Debug, Clone)]
struct Managed {
    fs: String,
    mount_options: String,
    device: PathBuf,
    mount_point: PathBuf,
}

/// A name `prefix` + 8 hex digits that is unlikely to exist; callers create
/// it exclusively and retry on a clash.
fn unique_name(prefix: &str, suffix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec to write into.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    let mut x = (ts.tv_nsec as u64) ^ ((ts.tv_sec as u64) << 30) ^ ((std::process::id() as u64) << 40);
    x = x.wrapping_add(COUNTER.fetch_add(1, Ordering::Relaxed).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // splitmix64 finaliser
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^= x >> 31;
    format!("{prefix}{:08x}{suffix}", x as u32)
}

/// Create a fresh directory `prefix` + random in `parent`.
pub(crate) fn create_unique_dir(parent: &Path, prefix: &str) -> Result<PathBuf, String> {
    for _ in 0..100 {
        let p = parent.join(unique_name(prefix, ""));
        match std::fs::create_dir(&p) {
            Ok(()) => return Ok(p),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create a directory in {}: {e}", parent.display())),
        }
    }
    Err(format!("cannot find a free name for a directory in {}", parent.display()))
}

/// Create a fresh file `prefix` + random + `suffix` in `dir`.
fn create_unique_file(dir: &Path, prefix: &str, suffix: &str) -> Result<(PathBuf, std::fs::File), String> {
    for _ in 0..100 {
        let p = dir.join(unique_name(prefix, suffix));
        match std::fs::OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(f) => return Ok((p, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(format!("cannot create a file in {}: {e}", dir.display())),
        }
    }
    Err(format!("cannot find a free name for a file in {}", dir.display()))
}

fn device_size(dev: &Path) -> Option<u64> {
    device_for_path(dev)?.size_bytes()
}

/// What can be known about a target without creating anything: the
/// directory exists, the device may be written, the file system can be
/// made. `setup` starts with it; experiments run it for every target before
/// any is set up, so a typo in the last one does not wait for the others.
pub fn check(spec: &TargetSpec, allow_device: bool) -> Result<(), String> {
    match spec {
        TargetSpec::Directory(dir) => match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(format!("target {} is not a directory", dir.display())),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Err(format!("target directory {} does not exist", dir.display())),
            Err(e) => Err(format!("target directory {}: {e}", dir.display())),
        },
        TargetSpec::Device(dev) => {
            if !is_block_device(dev) {
                return Err(match std::fs::metadata(dev) {
                    Err(e) => format!("target device {}: {e}", dev.display()),
                    Ok(_) => format!("{} is not a block device; use a directory target for files", dev.display()),
                });
            }
            check_device_usable(dev, allow_device)
        }
        TargetSpec::Managed { fs, device, .. } => {
            // First: a file system this machine cannot make or mount is
            // refused whoever asks.
            mkfs::check_fs(fs)?;
            if !is_root() {
                return Err(
                    "managed file systems need root: mkfs, mount and loop devices are privileged; use a directory target instead".into()
                );
            }
            check_device_source(device, allow_device)
        }
        TargetSpec::ManagedDevice(DeviceSource::Device(p)) => {
            Err(format!("{} is a device fsbench did not create: name it as a raw device target (device = DEV)", p.display()))
        }
        TargetSpec::ManagedDevice(source) => {
            if !is_root() {
                return Err("a loop or zram device needs root to create; use a directory target instead".into());
            }
            check_device_source(source, allow_device)
        }
    }
}

fn check_device_source(source: &DeviceSource, allow_device: bool) -> Result<(), String> {
    match source {
        DeviceSource::Loop { size: 0, .. } => Err("a loop device needs a size above 0".into()),
        DeviceSource::Loop { dir, .. } => match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => Ok(()),
            Ok(_) => Err(format!("loop image directory {} is not a directory", dir.display())),
            Err(e) => Err(format!("loop image directory {}: {e}", dir.display())),
        },
        DeviceSource::Zram { size: 0 } => Err("a zram device needs a size above 0".into()),
        DeviceSource::Zram { .. } if !zram::control_available() => {
            Err("zram is not available: /sys/class/zram-control is missing (load the zram module)".into())
        }
        DeviceSource::Zram { .. } => Ok(()),
        DeviceSource::Device(p) => {
            if !is_block_device(p) {
                return Err(format!("{} is not a block device", p.display()));
            }
            check_device_usable(p, allow_device)?;
            if device_size(p) == Some(0) {
                return Err(format!("{} has no capacity (an unconfigured zram or empty loop device?)", p.display()));
            }
            Ok(())
        }
    }
}

impl ActiveTarget {
    fn empty(label: &str, kind: &str) -> ActiveTarget {
        ActiveTarget {
            label: label.to_string(),
            path: PathBuf::new(),
            info: TargetRecord { label: label.to_string(), kind: kind.to_string(), ..TargetRecord::default() },
            undo: Vec::new(),
            managed: None,
            device_lock: None,
            _private: None,
        }
    }

    fn register(&mut self, a: Action) {
        self.undo.push(cleanup::register(a));
    }

    pub fn setup(label: &str, spec: &TargetSpec, allow_device: bool) -> Result<ActiveTarget, String> {
        check(spec, allow_device)?;
        match spec {
            TargetSpec::Directory(dir) => Self::setup_directory(label, dir),
            TargetSpec::Device(dev) => {
                // Not locked here: the workload locks the device while it
                // runs on it (a lock from here would be a second, conflicting
                // one of this process).
                let mut t = Self::empty(label, "device");
                t.path = dev.to_path_buf();
                t.info.device = Some(dev.to_path_buf());
                Ok(t)
            }
            TargetSpec::Managed { fs, mkfs_options, mount_options, device } => {
                Self::setup_managed(label, fs, mkfs_options, mount_options, device)
            }
            TargetSpec::ManagedDevice(source) => Self::setup_managed_device(label, source),
        }
    }

    /// A loop or zram device of its own, benchmarked raw: `path` is the
    /// device; teardown detaches or resets it and removes the image file.
    fn setup_managed_device(label: &str, source: &DeviceSource) -> Result<ActiveTarget, String> {
        // An early return drops `t`, which undoes what was created so far.
        let mut t = Self::empty(label, "device");
        let device = match source {
            DeviceSource::Loop { dir, size } => t.create_loop(dir, *size)?,
            DeviceSource::Zram { size } => t.create_zram(*size)?,
            DeviceSource::Device(p) => return Err(format!("{} is not a device fsbench creates", p.display())),
        };
        t.info.device = Some(device.clone());
        t.path = device;
        Ok(t)
    }

    /// A raw device that fsbench created for this target: nobody's data
    /// can be on it, so writing it needs no allow_device.
    pub fn owns_device(&self) -> bool {
        self.info.kind == "device" && self.info.device_source.is_some()
    }

    /// A fresh directory `prefix` + random in `parent`, removed at teardown
    /// (`keep` leaves it).
    pub fn fresh_directory(label: &str, parent: &Path, prefix: &str) -> Result<ActiveTarget, String> {
        Self::setup_directory_named(label, parent, prefix)
    }

    fn setup_directory(label: &str, dir: &Path) -> Result<ActiveTarget, String> {
        Self::setup_directory_named(label, dir, "fsbench-")
    }

    fn setup_directory_named(label: &str, dir: &Path, prefix: &str) -> Result<ActiveTarget, String> {
        let mut t = Self::empty(label, "directory");
        let sub = create_unique_dir(dir, prefix)?;
        t.register(Action::made_dir(&sub));
        t._private = Some(private(&sub));
        t.path = sub;
        if let Some(m) = mount_for_path(&t.path) {
            t.info.fs_type = Some(m.fs_type.clone());
            t.info.mount_point = Some(m.mount_point.clone());
            t.info.mount_options_in_force = Some(m.options());
        }
        t.info.device = device_for_path(&t.path).map(|d| d.dev_path());
        Ok(t)
    }

    fn setup_managed(
        label: &str,
        fs: &str,
        mkfs_options: &[String],
        mount_options: &str,
        source: &DeviceSource,
    ) -> Result<ActiveTarget, String> {
        // From here on, `t` owns what is created; an early return drops it,
        // which undoes everything registered so far.
        let mut t = Self::empty(label, "managed");
        t.info.fs_type = Some(fs.to_string());
        t.info.mount_options_requested = Some(mount_options.to_string());
        let device = match source {
            DeviceSource::Loop { dir, size } => t.create_loop(dir, *size)?,
            DeviceSource::Zram { size } => t.create_zram(*size)?,
            DeviceSource::Device(p) => {
                t.info.device_source = Some("device".into());
                t.device_lock = Some(lock_path(p)?);
                p.clone()
            }
        };
        t.info.device = Some(device.clone());

        t.info.mkfs_command = mkfs::make_fs(fs, mkfs_options, &device)?;

        let mp = create_unique_dir(Path::new("/tmp"), "fsbench-mnt-")?;
        let mp = mp.canonicalize().unwrap_or(mp);
        t.register(Action::made_dir(&mp));
        // Registered before mounting: unmounting what is not mounted is a
        // no-op, and only this device with this type is ever unmounted there.
        t.register(Action::Unmount(MountRef::new(&mp, &device, fs)));
        t._private = Some(private(&mp));
        mkfs::mount(&device, &mp, fs, mount_options)?;
        t.info.mount_point = Some(mp.clone());
        t.info.mount_options_in_force = mkfs::options_in_force(&mp);
        t.path = mp.clone();
        t.managed = Some(Managed { fs: fs.to_string(), mount_options: mount_options.to_string(), device, mount_point: mp });
        Ok(t)
    }

    /// Sparse image file + loop device (direct I/O when the kernel allows,
    /// so the image's own page cache does not hide device reads).
    fn create_loop(&mut self, dir: &Path, size: u64) -> Result<PathBuf, String> {
        self.info.device_source = Some("loop".into());
        let (img, f) = create_unique_file(dir, "fsbench-loop-", ".img")?;
        self.register(Action::made_file(&img));
        f.set_len(size).map_err(|e| format!("cannot size {} to {size} bytes: {e}", img.display()))?;
        drop(f);
        let img = img.canonicalize().unwrap_or(img);
        self.info.backing_file = Some(img.clone());

        let losetup = mkfs::find_program("losetup").ok_or("losetup is not installed (package util-linux)")?;
        let attach = |dio: bool| -> Result<PathBuf, String> {
            let mut c = Command::new(&losetup);
            c.arg("--find").arg("--show");
            if dio {
                c.arg("--direct-io=on");
            }
            let out = c.arg(&img).output().map_err(|e| format!("cannot run losetup: {e}"))?;
            if !out.status.success() {
                return Err(format!("losetup --find --show {} failed: {}", img.display(), String::from_utf8_lossy(&out.stderr).trim()));
            }
            let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
            if !dev.to_string_lossy().starts_with("/dev/loop") {
                return Err(format!("losetup printed '{}', not a loop device", dev.display()));
            }
            Ok(dev)
        };
        let dev = match attach(true) {
            Ok(d) => d,
            Err(_) => {
                self.info.notes.push("loop device without direct I/O: the image file's page cache can serve reads".into());
                attach(false)?
            }
        };
        self.register(Action::DetachLoop { device: dev.clone(), backing: img.clone() });
        let name = dev.file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        if !loop_direct_io(&name) && !self.info.notes.iter().any(|n| n.contains("direct I/O")) {
            self.info.notes.push("loop device without direct I/O: the image file's page cache can serve reads".into());
        }
        // The device we got must be backed by our image and nothing else.
        let bf = loop_backing_file(&name).unwrap_or_default();
        if Path::new(&bf) != img {
            return Err(format!("{} is backed by '{bf}', not by {}; refusing to use it", dev.display(), img.display()));
        }
        Ok(dev)
    }

    /// A new zram device (never zram0 or any other existing one).
    fn create_zram(&mut self, size: u64) -> Result<PathBuf, String> {
        self.info.device_source = Some("zram".into());
        let idx = zram::hot_add().map_err(|e| format!("zram hot_add: {e}"))?;
        let n: u32 = idx.trim().parse().map_err(|_| format!("zram hot_add returned '{}'", idx.trim()))?;
        if n == 0 {
            return Err("zram hot_add returned zram0, which fsbench never uses; refusing".into());
        }
        self.register(Action::ResetZram(n));
        let algs = zram::comp_algorithms(n);
        if algs.split_whitespace().any(|a| a.trim_matches(|c| c == '[' || c == ']') == "lzo-rle") {
            zram::set_comp_algorithm(n, "lzo-rle").map_err(|e| format!("zram{n} comp_algorithm: {e}"))?;
        }
        zram::set_disksize(n, size).map_err(|e| format!("zram{n} disksize {size}: {e}"))?;
        let dev = PathBuf::from(format!("/dev/zram{n}"));
        for _ in 0..100 {
            if is_block_device(&dev) {
                return Ok(dev);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(format!("{} did not appear", dev.display()))
    }

    /// Unmount and mount again (the fresh-mount cache scenario); managed targets only.
    /// The unmount is not lazy: a busy file system fails the remount, since
    /// a lazily detached one would keep its page cache.
    pub fn remount(&mut self) -> Result<(), String> {
        let Some(m) = self.managed.clone() else {
            return Err(format!(
                "remount needs a managed target (a file system fsbench made and mounted); '{}' is a {} target",
                self.label, self.info.kind
            ));
        };
        // SAFETY: sync has no preconditions.
        unsafe { libc::sync() };
        cleanup::unmount(&m.mount_point, false).map_err(|e| format!("remount of {}: {e}", m.mount_point.display()))?;
        if mkfs::is_mounted(&m.mount_point) {
            return Err(format!("remount: {} is still mounted after unmounting", m.mount_point.display()));
        }
        // The Unmount action registered at setup still covers this mount point.
        mkfs::mount(&m.device, &m.mount_point, &m.fs, &m.mount_options)
            .map_err(|e| format!("{e}; the target is no longer mounted, do not run on {}", m.mount_point.display()))?;
        self.info.mount_options_in_force = mkfs::options_in_force(&m.mount_point);
        Ok(())
    }

    /// Whether this is a managed target (remount works).
    pub fn is_managed(&self) -> bool {
        self.managed.is_some()
    }

    /// Leave what setup created in place (`--keep-files` on a directory
    /// fsbench made): nothing is undone, now or at exit.
    pub fn keep(mut self) {
        for tok in self.undo.drain(..) {
            tok.forget();
        }
    }

    fn teardown_inner(&mut self) -> Vec<String> {
        let mut errs = Vec::new();
        while let Some(tok) = self.undo.pop() {
            if let Err(e) = tok.done() {
                errs.push(e);
            }
        }
        errs
    }

    /// Tear down what setup created (unmount, remove the mount point, detach
    /// the loop device or reset the zram device, remove the image file or the
    /// directory), reporting every failure.
    pub fn teardown(mut self) -> Result<(), String> {
        let errs = self.teardown_inner();
        if errs.is_empty() {
            Ok(())
        } else {
            Err(format!("tearing down target '{}': {}", self.label, errs.join("; ")))
        }
    }
}

impl Drop for ActiveTarget {
    fn drop(&mut self) {
        for e in self.teardown_inner() {
            eprintln!("fsbench: tearing down target '{}': {e}", self.label);
        }
    }
}

/// Test helpers for managed targets, shared with cache.rs tests.
#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    pub fn root_or_skip(what: &str) -> bool {
        if !is_root() {
            println!("SKIPPED: {what} needs root");
            return false;
        }
        true
    }

    /// A managed target over a loop device on a sparse file in `dir`.
    pub fn loop_target(dir: &Path, fs: &str, size: u64, opts: &str) -> Result<ActiveTarget, String> {
        let spec = TargetSpec::Managed {
            fs: fs.into(),
            mkfs_options: vec![],
            mount_options: opts.into(),
            device: DeviceSource::Loop { dir: dir.to_path_buf(), size },
        };
        ActiveTarget::setup(fs, &spec, false)
    }

    pub fn losetup_lists(img: &Path) -> bool {
        let out = Command::new("losetup").arg("-a").output().unwrap();
        String::from_utf8_lossy(&out.stdout).contains(&img.display().to_string())
    }

    /// What `t` left behind after being dropped.
    pub struct Remains {
        pub mount_point: PathBuf,
        pub device: PathBuf,
        pub image: Option<PathBuf>,
    }

    impl Remains {
        pub fn of(t: &ActiveTarget) -> Remains {
            Remains {
                mount_point: t.info.mount_point.clone().unwrap(),
                device: t.info.device.clone().unwrap(),
                image: t.info.backing_file.clone(),
            }
        }
        pub fn assert_gone(&self) {
            assert!(!mkfs::is_mounted(&self.mount_point), "{} still mounted", self.mount_point.display());
            let mi = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
            assert!(!mi.contains(&self.mount_point.display().to_string()));
            assert!(!self.mount_point.exists(), "mount point {} left", self.mount_point.display());
            if let Some(img) = &self.image {
                assert!(!img.exists(), "image {} left", img.display());
                assert!(!losetup_lists(img), "loop device over {} left", img.display());
            }
            assert!(
                !cleanup::pending().iter().any(|a| match a {
                    Action::Unmount(m) => m.point == self.mount_point,
                    Action::RemoveDir(o) => o.path == self.mount_point,
                    _ => false,
                }),
                "undo actions left registered"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::testutil::*;
    use super::*;
    use crate::host::blockdev::read_stat;
    use std::io::Write;

    #[test]
    fn directory_target_creates_and_removes_its_subdirectory() {
        let dir = tempfile::tempdir().unwrap();
        let t = ActiveTarget::setup("d", &TargetSpec::Directory(dir.path().to_path_buf()), false).unwrap();
        let sub = t.path.clone();
        assert!(sub.is_dir());
        assert_eq!(sub.parent(), Some(dir.path()));
        let name = sub.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("fsbench-") && name.len() == "fsbench-".len() + 8, "{name}");
        assert_eq!(t.info.kind, "directory");
        assert!(t.info.fs_type.is_some() && t.info.mount_options_in_force.is_some(), "{:?}", t.info);
        std::fs::create_dir(sub.join("nested")).unwrap();
        std::fs::write(sub.join("nested/file"), b"data").unwrap();
        // A second target in the same directory gets its own subdirectory.
        let t2 = ActiveTarget::setup("d2", &TargetSpec::Directory(dir.path().to_path_buf()), false).unwrap();
        assert_ne!(t2.path, sub);
        drop(t);
        assert!(!sub.exists());
        assert!(t2.path.exists());
        t2.teardown().unwrap();
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn directory_target_errors() {
        let dir = tempfile::tempdir().unwrap();
        let e = ActiveTarget::setup("x", &TargetSpec::Directory(dir.path().join("missing")), false).unwrap_err();
        assert!(e.contains("does not exist") && e.contains("missing"), "{e}");
        let f = dir.path().join("file");
        std::fs::write(&f, b"").unwrap();
        let e = ActiveTarget::setup("x", &TargetSpec::Directory(f), false).unwrap_err();
        assert!(e.contains("is not a directory"), "{e}");
        let mut t = ActiveTarget::setup("x", &TargetSpec::Directory(dir.path().into()), false).unwrap();
        let e = t.remount().unwrap_err();
        assert!(e.contains("managed"), "{e}");
    }

    #[test]
    fn device_target() {
        let e = ActiveTarget::setup("x", &TargetSpec::Device("/etc/hostname".into()), true).unwrap_err();
        assert!(e.contains("not a block device"), "{e}");
        if !root_or_skip("device_target with a loop device") {
            return;
        }
        let Some(lo) = crate::host::testutil::LoopDev::attach(16 << 20) else { return };
        let e = ActiveTarget::setup("x", &TargetSpec::Device(lo.path().into()), false).unwrap_err();
        assert!(e.contains("--allow-device"), "{e}");
        let t = ActiveTarget::setup("x", &TargetSpec::Device(lo.path().into()), true).unwrap();
        assert_eq!(t.path, lo.path());
        assert_eq!(t.info.kind, "device");
        drop(t);
        assert!(is_block_device(lo.path()), "a raw device target is not touched on teardown");
    }

    #[test]
    fn managed_raw_loop_device_is_created_written_raw_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let named = TargetSpec::ManagedDevice(DeviceSource::Device("/dev/sda".into()));
        assert!(check(&named, true).unwrap_err().contains("device = DEV"));
        if !root_or_skip("managed_raw_loop_device_is_created_written_raw_and_removed") {
            return;
        }
        let spec = TargetSpec::ManagedDevice(DeviceSource::Loop { dir: dir.path().into(), size: 16 << 20 });
        let t = ActiveTarget::setup("raw", &spec, false).unwrap();
        assert!(t.owns_device() && t.info.kind == "device" && t.info.device_source.as_deref() == Some("loop"), "{:?}", t.info);
        assert!(is_block_device(&t.path) && t.info.mount_point.is_none() && t.info.mkfs_command.is_empty());
        assert_eq!(t.info.device.as_ref(), Some(&t.path));
        let img = t.info.backing_file.clone().unwrap();
        assert!(losetup_lists(&img));
        // No file system on it: the device itself is what a run writes.
        std::fs::OpenOptions::new().write(true).open(&t.path).unwrap().write_all(&[7u8; 4096]).unwrap();
        drop(t);
        assert!(!img.exists() && !losetup_lists(&img), "loop device or image left");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn managed_needs_mkfs() {
        let dir = tempfile::tempdir().unwrap();
        let e = loop_target(dir.path(), "nosuchfs", 64 << 20, "").unwrap_err();
        assert!(e.contains("unknown file system 'nosuchfs'") && e.contains("no nosuchfs file system"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "nothing created");
    }

    #[test]
    fn managed_ext4_on_loop() {
        if !root_or_skip("managed_ext4_on_loop") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let mut t = loop_target(dir.path(), "ext4", 256 << 20, "nodelalloc").unwrap();
        let rem = Remains::of(&t);
        assert_eq!(t.info.kind, "managed");
        println!("record: {}", serde_json::to_string(&t.info).unwrap());
        assert_eq!(t.info.device_source.as_deref(), Some("loop"));
        assert!(t.info.mkfs_command[0].ends_with("mkfs.ext4"), "{:?}", t.info.mkfs_command);
        assert_eq!(&t.info.mkfs_command[1..], ["-F", "-q", &rem.device.display().to_string()]);
        assert!(mkfs::is_mounted(&t.path));
        let opts = t.info.mount_options_in_force.clone().unwrap();
        assert!(opts.split(',').any(|o| o == "nodelalloc"), "{opts}");
        let img = rem.image.clone().unwrap();
        assert!(img.file_name().unwrap().to_string_lossy().starts_with("fsbench-loop-"));
        assert!(losetup_lists(&img));
        assert!(t.path.file_name().unwrap().to_string_lossy().starts_with("fsbench-mnt-"));

        // A file written there lands on the loop device.
        let name = rem.device.file_name().unwrap().to_string_lossy().into_owned();
        let before = read_stat(&name).unwrap();
        let fpath = t.path.join("data");
        let mut f = std::fs::File::create(&fpath).unwrap();
        f.write_all(&vec![0x5au8; 4 << 20]).unwrap();
        f.sync_all().unwrap();
        drop(f);
        assert_eq!(device_for_path(&fpath).unwrap().name, name);
        let after = read_stat(&name).unwrap();
        assert!(after.write_bytes() - before.write_bytes() >= 4 << 20, "{before:?} -> {after:?}");

        // remount keeps the options and the data.
        t.remount().unwrap();
        let opts = t.info.mount_options_in_force.clone().unwrap();
        assert!(opts.split(',').any(|o| o == "nodelalloc"), "{opts}");
        assert_eq!(std::fs::metadata(&fpath).unwrap().len(), 4 << 20);

        drop(t);
        rem.assert_gone();
        assert!(!losetup_lists(&img));
    }

    fn other_fs(fs: &str, pkg: &str, size: u64) {
        if !root_or_skip(fs) {
            return;
        }
        if mkfs::find_program(&format!("mkfs.{fs}")).is_none() {
            println!("SKIPPED: mkfs.{fs} is not installed (package {pkg})");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let t = loop_target(dir.path(), fs, size, "noatime").unwrap();
        let rem = Remains::of(&t);
        let m = mount_for_path(&t.path).unwrap();
        assert_eq!(m.fs_type, fs);
        assert!(t.info.mount_options_in_force.as_deref().unwrap().contains("noatime"));
        std::fs::write(t.path.join("f"), b"hello").unwrap();
        t.teardown().unwrap();
        rem.assert_gone();
    }

    #[test]
    fn managed_xfs_on_loop() {
        // mkfs.xfs refuses file systems below 300 MiB.
        other_fs("xfs", "xfsprogs", 320 << 20);
    }

    #[test]
    fn managed_btrfs_on_loop() {
        other_fs("btrfs", "btrfs-progs", 256 << 20);
    }

    #[test]
    fn bad_mount_option_is_explained_and_undone() {
        if !root_or_skip("bad_mount_option_is_explained_and_undone") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let e = loop_target(dir.path(), "ext4", 64 << 20, "nosuchoption").unwrap_err();
        assert!(e.contains("nosuchoption"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "image removed");
        assert!(!losetup_lists(dir.path()));
        println!("error was: {e}");
    }

    #[test]
    fn mkfs_failure_is_reported() {
        if !root_or_skip("mkfs_failure_is_reported") {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let spec = TargetSpec::Managed {
            fs: "ext4".into(),
            mkfs_options: vec!["-O".into(), "nosuchfeature".into()],
            mount_options: String::new(),
            device: DeviceSource::Loop { dir: dir.path().into(), size: 64 << 20 },
        };
        let e = ActiveTarget::setup("bad", &spec, false).unwrap_err();
        assert!(e.contains("mkfs.ext4") && e.contains("nosuchfeature") && e.contains("failed"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "image removed");
    }

    #[test]
    fn managed_ext4_on_zram() {
        if !root_or_skip("managed_ext4_on_zram") {
            return;
        }
        if !Path::new("/sys/class/zram-control").exists() {
            println!("SKIPPED: /sys/class/zram-control is missing (no zram module)");
            return;
        }
        let zram0_before = std::fs::read_to_string("/sys/block/zram0/disksize").ok();
        let spec = TargetSpec::Managed {
            fs: "ext4".into(),
            mkfs_options: vec![],
            mount_options: String::new(),
            device: DeviceSource::Zram { size: 64 << 20 },
        };
        let t = ActiveTarget::setup("z", &spec, false).unwrap();
        let rem = Remains::of(&t);
        let name = rem.device.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.starts_with("zram") && name != "zram0", "{name}");
        let alg = std::fs::read_to_string(format!("/sys/block/{name}/comp_algorithm")).unwrap();
        if alg.contains("lzo-rle") {
            assert!(alg.contains("[lzo-rle]"), "{alg}");
        }
        std::fs::write(t.path.join("f"), vec![1u8; 1 << 20]).unwrap();
        assert_eq!(device_for_path(&t.path.join("f")).unwrap().name, name);
        drop(t);
        rem.assert_gone();
        assert!(!Path::new(&format!("/sys/block/{name}")).exists(), "{name} not removed");
        assert_eq!(std::fs::read_to_string("/sys/block/zram0/disksize").ok(), zram0_before, "zram0 untouched");
    }
}
