//! Replay in an experiment: the keys mirror `fsbench replay`'s flags, the
//! target is the experiment's, and a bad key is located.

use crate::frontend::experiment::{parse, Experiment, ExperimentError};
use crate::model::recipe::Placement;
use crate::model::replay::{ReplayPlan, Speed};
use crate::model::Workload;
use std::path::Path;

/// An experiment with a directory target and a device target, whose one
/// workload has `keys` (line 10 on), and the trace `t.iolog` beside it:
/// reads at 0 and 1 MiB, a write at 8 KiB.
fn exp(dir: &Path, keys: &str) -> Result<Experiment, ExperimentError> {
    std::fs::write(dir.join("t.iolog"), "fio version 3 iolog\n0 f read 0 4096\n10 f write 8192 4096\n20 f read 1048576 4096\n").unwrap();
    let text = format!(
        "name = \"r\"\n[[target]]\nlabel = \"d\"\ndirectory = \"/tmp\"\n[[target]]\nlabel = \"raw\"\ndevice = \"/dev/fsbench-none\"\n\
         [[workload]]\nlabel = \"r\"\n{keys}\n"
    );
    parse(&text, &dir.join("exp.toml"), &[])
}

fn plan(e: &Experiment, target: &Path, is_device: bool) -> Result<ReplayPlan, String> {
    let at = Placement { target: target.to_path_buf(), is_device, params: &e.params };
    match e.workloads[0].recipe.plan(&at).map_err(|e| e.message)?.plan.workload {
        Workload::Replay(p) => Ok(p),
        _ => panic!("a replay plan"),
    }
}

const READS: &str = "replay = \"t.iolog\"\ntarget = \"disk.img\"\nreads_only = true";

#[test]
fn the_keys_make_the_plan_the_flags_would() {
    let d = tempfile::tempdir().unwrap();
    let e = exp(d.path(), &format!("{READS}\nspeed = \"max\"\ndepth = 4\nengine = \"libaio\"")).unwrap();
    assert_eq!(e.workloads[0].family, "replay");
    // Before the file exists (the experiment's check, before set-up), the
    // fit is left to the runner.
    let p = plan(&e, d.path(), false).unwrap();
    assert_eq!(p.target, d.path().join("disk.img"));
    assert_eq!(p.ios.len(), 2, "reads only");
    assert_eq!((p.speed, p.depth, p.engine.as_str(), p.write), (Speed::Max, 4, "libaio", false));
    assert!(p.notes.iter().any(|n| n == "reads_only: 1 writes and trims left out"), "{:?}", p.notes);
    // Once it is there, an I/O past its end is refused, or skipped when asked.
    std::fs::File::create(d.path().join("disk.img")).unwrap().set_len(1 << 20).unwrap();
    let err = plan(&e, d.path(), false).unwrap_err();
    assert!(err.contains("past the end") && err.contains("beyond_end wrap|skip"), "{err}");
    let e = exp(d.path(), &format!("{READS}\nbeyond_end = \"skip\"")).unwrap();
    let p = plan(&e, d.path(), false).unwrap();
    assert_eq!(p.ios.len(), 1);
    assert_eq!(p.speed, Speed::AsRecorded);
}

#[test]
fn the_target_is_the_experiments() {
    let d = tempfile::tempdir().unwrap();
    let e = exp(d.path(), "replay = \"t.iolog\"\nreads_only = true").unwrap();
    let dev = Path::new("/dev/fsbench-none");
    assert_eq!(plan(&e, dev, true).unwrap().target, dev, "a raw-device target is replayed onto itself");
    assert!(plan(&e, d.path(), false).unwrap_err().contains("needs target = FILE"));
    let e = exp(d.path(), READS).unwrap();
    assert!(plan(&e, dev, true).unwrap_err().contains("leave out target"));
    let e = exp(d.path(), "replay = \"t.iolog\"\nreads_only = true\ntarget = \"../elsewhere\"").unwrap();
    assert!(plan(&e, d.path(), false).unwrap_err().contains("outside the target"));
    let e = exp(d.path(), "replay = \"t.iolog\"\nwrite = true").unwrap();
    assert!(plan(&e, dev, true).unwrap().write, "writes with write = true");
}

#[test]
fn bad_keys_are_located() {
    let d = tempfile::tempdir().unwrap();
    let cases: &[(&str, (usize, usize), &str, &str)] = &[
        ("replay = \"t.iolog\"", (10, 10), "replay", "pass write to replay them, or reads_only"),
        ("replay = \"missing\"", (10, 10), "replay", "missing"),
        ("replay = 3", (10, 10), "replay", "expected a string"),
        ("replay = \"t.iolog\"\nreads_only = \"yes\"", (11, 14), "reads_only", "true or false"),
        ("replay = \"t.iolog\"\nwrite = true\nreads_only = true", (12, 14), "reads_only", "give one of them"),
        ("replay = \"t.iolog\"\nwrite = true\ndepth = 0", (12, 9), "depth", "1 to 4096"),
        ("replay = \"t.iolog\"\nwrite = true\nspeed = \"slow\"", (12, 9), "speed", "as-recorded or max"),
        ("replay = \"t.iolog\"\nwrite = true\nengine = \"psync\"", (12, 10), "engine", "engine psync"),
        ("replay = \"t.iolog\"\nwrite = true\nbeyond_end = \"around\"", (12, 14), "beyond_end", "error, wrap, skip"),
        ("target = \"disk.img\"", (9, 9), "replay", "expected replay = \"TRACE\""),
    ];
    for &(keys, (line, col), key, says) in cases {
        let e = exp(d.path(), keys).unwrap_err();
        assert_eq!((e.line, e.col, e.key.as_deref()), (line, col, Some(key)), "{keys}: {e}");
        assert!(e.message.contains(says), "{keys}: {e}");
    }
}
