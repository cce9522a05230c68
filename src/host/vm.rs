//! `/proc/sys/vm` and friends: the writeback and memory settings in force,
//! and `drop_caches`.

use super::{bracketed, is_root, read_trim};
use std::collections::BTreeMap;
use std::path::Path;

/// `vm.*` writeback settings, `kernel.randomize_va_space`,
/// `transparent_hugepage` (and `.defrag`): the values in force, keyed by
/// their sysctl names. Settings that cannot be read are left out.
pub fn settings() -> BTreeMap<String, String> {
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

/// sync and drop the page cache, dentries and inodes. Err when not root or
/// the write is refused.
pub fn drop_caches() -> Result<(), String> {
    if !is_root() {
        return Err("not root: cannot drop caches".into());
    }
    // SAFETY: sync takes no arguments and cannot fail; it only schedules writeback.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3").map_err(|e| format!("cannot write /proc/sys/vm/drop_caches: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writeback_settings_are_read() {
        let s = settings();
        assert!(s.contains_key("vm.dirty_ratio"), "{s:?}");
        assert!(s.contains_key("vm.swappiness"), "{s:?}");
    }
}
