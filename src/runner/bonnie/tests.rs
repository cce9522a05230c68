use super::*;
use crate::model::bonnie::{FileKind, FileTests};
use crate::runner::events::Collect;
use std::path::Path;

fn plan(dir: &Path) -> BonniePlan {
    BonniePlan {
        dir: dir.to_path_buf(),
        size_mib: 4,
        chunk: 8192,
        seeks: 1000,
        seek_procs: 2,
        size_text: "4M".into(),
        char_mib: Some(1),
        files: None,
        ram_mib: 0,
        fsync: false,
        direct: false,
        quiet: false,
        machine: "t".into(),
        concurrency: 1,
        seed: Seed::Number(5),
        // SAFETY: getuid/getgid take no arguments and cannot fail.
        uid: unsafe { libc::getuid() },
        // SAFETY: as above.
        gid: unsafe { libc::getgid() },
        sync: None,
        run_index: 0,
        runs: 1,
    }
}

/// (read calls, write calls) this thread has made, from the kernel.
fn syscalls() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/thread-self/io").unwrap();
    let field = |k: &str| text.lines().find_map(|l| l.strip_prefix(k)).unwrap().trim().parse::<u64>().unwrap();
    (field("syscr:"), field("syscw:"))
}

fn phase(o: &Outcome, t: Test) -> &Phase {
    o.phases.iter().find(|p| p.figure.test == t).unwrap_or_else(|| panic!("{t:?} missing"))
}

#[test]
fn io_tests_make_bonnies_calls_and_leave_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let p = plan(dir.path());
    // Reading the counters costs read calls of its own: measured, then
    // taken off.
    let (a, _) = syscalls();
    let (b, _) = syscalls();
    let own_reads = b - a;
    let (r0, w0) = syscalls();
    let o = run_tests(&p, &AtomicBool::new(false), &Meter::default(), &Collect::default());
    let (r1, w1) = syscalls();
    assert!(o.error.is_none(), "{:?}", o.error);
    let chunks = 4 * 1024 * 1024 / 8192;
    let bytes = 1024 * 1024;
    // putc one write per byte, put_block and rewrite one per chunk, and the
    // seek tickets into their pipe (1,002 of 4 bytes: one call); getc one
    // read per byte, rewrite and get_block one per chunk (the seekers run
    // on threads of their own).
    assert_eq!(w1 - w0, bytes + 2 * chunks + 1, "write calls");
    assert_eq!(r1 - r0 - own_reads, bytes + 2 * chunks, "read calls");
    let order: Vec<Test> = o.phases.iter().map(|p| p.figure.test).collect();
    assert_eq!(order, vec![Test::Putc, Test::PutBlock, Test::Rewrite, Test::Getc, Test::GetBlock, Test::Seeks]);
    assert_eq!(phase(&o, Test::Putc).ops.ops, bytes / 8192, "one operation per chunk of one-byte calls");
    assert_eq!(phase(&o, Test::PutBlock).ops.bytes, 4 << 20);
    assert_eq!(phase(&o, Test::PutBlock).figure.amount, 4096, "KiB");
    assert_eq!(phase(&o, Test::Seeks).ops.ops, 1000);
    assert_eq!(phase(&o, Test::Seeks).figure.amount, 1000);
    for ph in &o.phases {
        assert!(ph.figure.elapsed_ns > 0 && ph.figure.max_latency_ns >= ph.ops.lat.percentile(50.0), "{:?}", ph.figure);
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "the IO file is removed");
}

#[test]
fn file_tests_read_back_what_they_wrote_and_remove_their_tree() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan(dir.path());
    p.size_mib = 0;
    p.files = Some(FileTests { num_k: 1, kind: FileKind::Files, max_size: 4096, min_size: 1024, dirs: 3, chunk: 512 });
    let o = run_tests(&p, &AtomicBool::new(false), &Meter::default(), &Collect::default());
    assert!(o.error.is_none(), "{:?}", o.error);
    let order: Vec<Test> = o.phases.iter().map(|p| p.figure.test).collect();
    assert_eq!(order, Test::ALL[6..].to_vec());
    for ph in &o.phases {
        assert_eq!(ph.ops.ops, 1024, "{:?}", ph.figure.test);
        assert_eq!(ph.figure.amount, 1024);
    }
    let created = phase(&o, Test::SeqCreate).ops.bytes;
    assert!((1024 * 1024..=4096 * 1024).contains(&created), "{created}");
    assert_eq!(phase(&o, Test::SeqStat).ops.bytes, created, "stat reads back every byte written");
    assert_eq!(phase(&o, Test::RanStat).ops.bytes, phase(&o, Test::RanCreate).ops.bytes);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "Bonnie.<pid> is removed");
}

#[test]
fn links_are_made_for_minus_one_and_minus_two() {
    for kind in [FileKind::HardLinks, FileKind::SymLinks] {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path());
        p.size_mib = 0;
        p.files = Some(FileTests { num_k: 1, kind, max_size: 0, min_size: 0, dirs: 1, chunk: 8192 });
        let o = run_tests(&p, &AtomicBool::new(false), &Meter::default(), &Collect::default());
        assert!(o.error.is_none(), "{kind:?}: {:?}", o.error);
        assert_eq!(o.phases.len(), 6);
        assert!(o.phases.iter().all(|p| p.ops.ops == 1024), "{kind:?}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

#[test]
fn names_follow_bonnies_rule() {
    let mut r = Rand::new(&Seed::Number(3)).unwrap();
    for i in [0u64, 1, 0xabcdef, 123456789] {
        let seq = files::name_for_test(&mut r, i, true);
        let ran = files::name_for_test(&mut r, i, false);
        let hex = format!("{i:010x}");
        assert!(seq.starts_with(&hex) && seq.len() <= 22, "{seq}");
        assert!(ran.ends_with(&hex) && ran.len() <= 22, "{ran}");
        assert!(seq.chars().chain(ran.chars()).all(|c| c.is_ascii_alphanumeric()));
    }
}

#[test]
fn the_name_table_gives_back_every_name_with_its_directory() {
    let mut r = Rand::new(&Seed::Number(5)).unwrap();
    let got = files::names_round_trip_for_test(&mut r, 1000, false);
    assert_eq!(got.len(), 1000);
    let mut seen = std::collections::HashSet::new();
    for (d, name) in &got {
        // The number is the name's last 10 hex digits; its directory, i % 7.
        let i = u64::from_str_radix(&name[name.len() - 10..], 16).unwrap();
        assert_eq!(*d as u64, i % 7, "{name}");
        assert!(name.len() <= 22 && seen.insert(i), "{name}");
    }
    let moved = got.iter().enumerate().filter(|(k, (_, n))| !n.ends_with(&format!("{k:010x}"))).count();
    assert!(moved > 900, "shuffled: {moved} of 1000 moved");
}

#[test]
fn a_stop_ends_the_run_early_and_still_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let p = plan(dir.path());
    let o = run_tests(&p, &AtomicBool::new(true), &Meter::default(), &Collect::default());
    assert!(o.partial && o.phases.is_empty() && o.error.is_none());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// The caller's side of `-y p`: every prompt, answered at once, or refused.
struct Answers {
    asked: std::sync::Mutex<Vec<String>>,
    refuse: bool,
}

impl Events for Answers {
    fn warning(&self, _: &crate::result::warning::Warning) {}
    fn note(&self, _: &str) {}
    fn measuring(&self, _: &str, _: &Expected, _: std::sync::Arc<Meter>) {}
    fn measured(&self) {}
    fn wait_for_user(&self, prompt: &str) -> Result<(), String> {
        self.asked.lock().unwrap().push(prompt.to_string());
        if self.refuse {
            return Err("no answer".into());
        }
        Ok(())
    }
}

#[test]
fn y_p_asks_the_caller_before_each_test() {
    for refuse in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan(dir.path());
        p.size_mib = 0;
        p.files = Some(FileTests { num_k: 1, kind: FileKind::Files, max_size: 0, min_size: 0, dirs: 1, chunk: 8192 });
        p.sync = Some(SyncMode::Prompt);
        let answers = Answers { asked: Default::default(), refuse };
        let o = run_tests(&p, &AtomicBool::new(false), &Meter::default(), &answers);
        let asked = answers.asked.into_inner().unwrap();
        let prompt = |t: &Test| format!("fsbench bonnie: press Enter to start {} ...", t.name());
        if refuse {
            assert_eq!(o.error.as_deref(), Some("-y p: no answer"));
            assert_eq!(asked, vec![prompt(&Test::ALL[6])]);
        } else {
            assert!(o.error.is_none(), "{:?}", o.error);
            assert_eq!(asked, Test::ALL[6..].iter().map(prompt).collect::<Vec<_>>());
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
