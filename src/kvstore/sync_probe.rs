//! Whether a store's "sync every write" setting reaches the disk, counted
//! rather than trusted: the test binary runs one of its own ignored tests
//! (the child, which opens the store with the given properties and inserts
//! `WRITES` records) under `strace -f -c -e trace=fsync,fdatasync`, and
//! reads the call counts from strace's summary. Needs strace and ptrace;
//! without them `syncs` says so and the caller skips.

use super::{Record, Status, Store, StoreConfig};
use std::process::Command;

/// Inserts the child makes: well above the syncs that creating, opening
/// and closing a store cost (33 for a new fjall database), so a setting
/// that syncs each write stands out from one that does not.
pub const WRITES: u64 = 100;

const PROPS_VAR: &str = "FSBENCH_SYNC_PROBE_PROPS";

/// fsync + fdatasync calls of the test `child_test` (a full test path) run
/// with `props`; None when strace cannot run here.
pub fn syncs(child_test: &str, props: &str) -> Option<u64> {
    let out = tempfile::NamedTempFile::new().unwrap();
    let exe = std::env::current_exe().unwrap();
    let status = Command::new("strace")
        .args(["-f", "-c", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(out.path())
        .arg(exe)
        .args(["--exact", child_test, "--ignored", "--test-threads=1", "--quiet"])
        .env(PROPS_VAR, props)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => {
            // An empty summary: strace itself could not run (no ptrace).
            // A summary: the child ran and failed, which is no skip.
            let summary = std::fs::read_to_string(out.path()).unwrap_or_default();
            assert!(summary.is_empty(), "{child_test} failed ({s}) under strace");
            return None;
        }
        Err(_) => return None,
    }
    let summary = std::fs::read_to_string(out.path()).unwrap();
    Some(
        summary
            .lines()
            .filter_map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                match w.last() {
                    Some(&"fsync") | Some(&"fdatasync") => w.get(3)?.parse::<u64>().ok(),
                    _ => None,
                }
            })
            .sum(),
    )
}

/// The child's body: open with the properties the parent passed, insert,
/// close. Does nothing when run by hand without them.
pub fn child(open: fn(&StoreConfig) -> Result<Box<dyn Store>, String>) {
    let Ok(props) = std::env::var(PROPS_VAR) else { return };
    let props: Vec<(&str, &str)> = props.split(',').filter_map(|kv| kv.split_once('=')).collect();
    // strace counts the calls whatever the file system does with them:
    // tmpfs, where there is one, spares the disk a few hundred fsyncs.
    let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
    let store = open(&super::conformance::config(dir.path(), &props)).unwrap();
    let mut s = store.session().unwrap();
    let mut r = Record::default();
    for f in 0..4 {
        r.push(f, b"some value");
    }
    for i in 0..WRITES {
        assert_eq!(s.insert(format!("user{i}").as_bytes(), &r), Status::Ok, "{:?}", s.last_error());
    }
    drop(s);
    store.close().unwrap();
}
