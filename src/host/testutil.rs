//! Test helpers shared by every module's tests: a loop device attached for
//! the test and detached on drop.
use std::path::{Path, PathBuf};
use std::process::Command;

/// A loop device attached by the test; detached on drop, even on panic.
pub struct LoopDev {
    pub dev: PathBuf,
    pub file: PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopDev {
    /// A sparse file of `bytes` in a fresh temporary directory, attached
    /// with `losetup --find --show`. None (with the reason printed) when
    /// that is not possible here.
    pub fn attach(bytes: u64) -> Option<LoopDev> {
        let dir = tempfile::tempdir().ok()?;
        let file = dir.path().join("loop.img");
        let f = std::fs::File::create(&file).ok()?;
        f.set_len(bytes).ok()?;
        drop(f);
        let out = match Command::new("losetup").arg("--find").arg("--show").arg(&file).output() {
            Ok(o) => o,
            Err(e) => {
                eprintln!("skipping: cannot run losetup: {e}");
                return None;
            }
        };
        if !out.status.success() {
            eprintln!("skipping: losetup failed: {}", String::from_utf8_lossy(&out.stderr).trim());
            return None;
        }
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        // Guard first, so the device is detached whatever happens next.
        let lo = LoopDev { dev, file, _dir: dir };
        assert!(lo.dev.to_string_lossy().starts_with("/dev/loop"), "losetup printed {}", lo.dev.display());
        Some(lo)
    }

    pub fn path(&self) -> &Path {
        &self.dev
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let ok = Command::new("losetup").arg("-d").arg(&self.dev).status().map(|s| s.success()).unwrap_or(false);
        if !ok {
            eprintln!("WARNING: could not detach {}", self.dev.display());
        }
    }
}
