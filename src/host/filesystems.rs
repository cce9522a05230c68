//! `/proc/filesystems`: the file system types the running kernel knows, and
//! whether it could load the module of one it does not know yet.

use std::path::Path;

/// Whether the running kernel lists `fs` in /proc/filesystems (false when
/// the file cannot be read).
pub fn kernel_lists(fs: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems").unwrap_or_default().split_whitespace().any(|w| w == fs)
}

/// Whether the running kernel can mount a file system type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KernelFs {
    /// It is in /proc/filesystems.
    Listed,
    /// Not yet, but mounting it loads this module: the kernel asks modprobe
    /// for `fs-<type>`, which `modules.alias` maps to the module.
    Loadable { module: String },
    /// Neither; why, in words ("not in /proc/filesystems, and ...").
    Missing(String),
}

/// The running kernel's release (`uname -r`).
pub fn kernel_release() -> String {
    super::read_trim("/proc/sys/kernel/osrelease").unwrap_or_default()
}

/// Whether the running kernel has `fs` or would load its module at mount:
/// /proc/filesystems first; else, when the kernel loads modules on demand
/// (it has `/proc/sys/kernel/modprobe`, naming a helper, and modules are
/// not disabled), an `alias fs-<fs>` line in
/// `/lib/modules/$(uname -r)/modules.alias` (what `MODULE_ALIAS_FS` writes
/// and what the kernel's own request at mount time looks up).
pub fn kernel_support(fs: &str) -> KernelFs {
    if kernel_lists(fs) {
        return KernelFs::Listed;
    }
    let proc = Path::new("/proc/sys/kernel");
    match loadable(fs, proc, &Path::new("/lib/modules").join(kernel_release())) {
        Ok(module) => KernelFs::Loadable { module },
        Err(why) => KernelFs::Missing(format!("not in /proc/filesystems, and {why}")),
    }
}

/// The module that provides `fs`, given the kernel's sysctl directory and
/// its module directory; else why none can be loaded.
fn loadable(fs: &str, sysctl: &Path, modules: &Path) -> Result<String, String> {
    let Some(helper) = super::read_trim(sysctl.join("modprobe")) else {
        return Err("the kernel was built without module support, so it loads none".into());
    };
    if helper.is_empty() {
        return Err(format!("the kernel loads no module on demand: {}/modprobe is empty", sysctl.display()));
    }
    if super::read_trim(sysctl.join("modules_disabled")).as_deref() == Some("1") {
        return Err(format!("loading modules is disabled: {}/modules_disabled is 1", sysctl.display()));
    }
    let aliases = modules.join("modules.alias");
    let text =
        std::fs::read_to_string(&aliases).map_err(|e| format!("no module provides it: {} cannot be read: {e}", aliases.display()))?;
    let want = format!("fs-{fs}");
    text.lines()
        .filter_map(|l| l.strip_prefix("alias "))
        .find_map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [alias, module] if alias == want => Some(module.to_string()),
            _ => None,
        })
        .ok_or_else(|| format!("no module provides it: no `alias {want}` in {}", aliases.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_loads_when_the_kernel_can_load_one_and_has_its_alias() {
        let d = tempfile::tempdir().unwrap();
        let (sys, mods) = (d.path().join("sys"), d.path().join("mods"));
        std::fs::create_dir_all(&sys).unwrap();
        std::fs::create_dir_all(&mods).unwrap();
        let e = loadable("jfs", &sys, &mods).unwrap_err();
        assert!(e.contains("without module support"), "{e}");
        std::fs::write(sys.join("modprobe"), "/sbin/modprobe\n").unwrap();
        let e = loadable("jfs", &sys, &mods).unwrap_err();
        assert!(e.contains("modules.alias cannot be read"), "{e}");
        std::fs::write(mods.join("modules.alias"), "alias fs-vfat vfat\nalias fs-jfsx jfsx\nalias char-major-10-229 fuse\n").unwrap();
        assert_eq!(loadable("vfat", &sys, &mods), Ok("vfat".into()));
        let e = loadable("jfs", &sys, &mods).unwrap_err();
        assert!(e.contains("no `alias fs-jfs`"), "{e}");
        std::fs::write(sys.join("modules_disabled"), "1\n").unwrap();
        assert!(loadable("vfat", &sys, &mods).unwrap_err().contains("disabled"));
        std::fs::write(sys.join("modules_disabled"), "0\n").unwrap();
        std::fs::write(sys.join("modprobe"), "\n").unwrap();
        assert!(loadable("vfat", &sys, &mods).unwrap_err().contains("no module on demand"));
    }

    #[test]
    fn the_kernels_own_file_systems_are_listed() {
        // Every kernel that runs this has procfs.
        assert_eq!(kernel_support("proc"), KernelFs::Listed);
        assert!(matches!(kernel_support("nosuchfs"), KernelFs::Missing(_)));
    }
}
