//! A workload's own path options stay inside its target in an experiment.
//!
//! An experiment names where its runs happen (the target) and labels every
//! result with it; a workload whose own flags put its files elsewhere
//! (`bonnie -d /tmp`, Postmark's `set location /etc`, fio's
//! `filename=/elsewhere`) would write where nobody asked and report it as
//! the target's figure. Each family passes the paths its options name, as
//! its plan will use them, through [`in_target`]: relative paths start in
//! the target, and a path that resolves outside it is refused. The check
//! runs when a recipe is planned: for every target before anything is set
//! up (against a stand-in directory), and again on the real target before
//! each run, where a symlink a previous run left would show.
//!
//! Paths a run only writes its report to (IOzone's `-b`, YCSB's
//! `exportfile`) are outputs, checked where outputs are.

use crate::host::mountinfo::canonical_or_nearest;
use crate::model::recipe::Placement;
use std::path::{Path, PathBuf};

/// The path `option` names (`value`, as written) for a run at `at`:
/// relative to the target when relative; an error naming the option, the
/// value and the target when it resolves (`..` and symlinks followed as far
/// as they exist) outside the target. `option` is written as the user
/// writes it, with its separator: `"-d "`, `"filename="`.
pub fn in_target(at: &Placement, option: &str, value: &Path) -> Result<PathBuf, String> {
    let path = if value.is_relative() { at.target.join(value) } else { value.to_path_buf() };
    let target = canonical_or_nearest(&at.target);
    let real = canonical_or_nearest(&path);
    // The target itself counts: a job's directory, a raw device's filename.
    if real.starts_with(&target) {
        return Ok(path);
    }
    let via = if real != path { format!(" (resolves to {})", real.display()) } else { String::new() };
    Err(format!(
        "{option}{}{via}: outside the target {}; an experiment keeps a workload's files in its target: \
         give a path relative to the target, or one under ${{target}}",
        value.display(),
        at.target.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn relative_joins_absolute_inside_passes_outside_is_named() {
        let d = tempfile::tempdir().unwrap();
        let t = d.path().join("t");
        std::fs::create_dir(&t).unwrap();
        std::os::unix::fs::symlink(d.path(), t.join("up")).unwrap();
        let params = BTreeMap::new();
        let at = Placement { target: t.clone(), is_device: false, params: &params };
        assert_eq!(in_target(&at, "-d ", Path::new("sub/x")).unwrap(), t.join("sub/x"));
        assert_eq!(in_target(&at, "-d ", &t).unwrap(), t);
        assert_eq!(in_target(&at, "-d ", &t.join("a/../b")).unwrap(), t.join("a/../b"));
        let e = in_target(&at, "-d ", Path::new("/etc")).unwrap_err();
        assert!(e.starts_with("-d /etc: outside the target ") && e.contains(&t.display().to_string()), "{e}");
        for escape in ["../x", "new/../../x", "up/x", "up/t/../x"] {
            let e = in_target(&at, "filename=", Path::new(escape)).unwrap_err();
            assert!(e.starts_with(&format!("filename={escape} (resolves to ")), "{e}");
        }
        // A sibling whose name starts with the target's is not inside it.
        let e = in_target(&at, "-f ", &d.path().join("t2/x")).unwrap_err();
        assert!(e.contains("outside"), "{e}");
    }
}
