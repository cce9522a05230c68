//! Short runs of hand-built plans through `run`.

use super::testkit::*;
use super::*;
use crate::model::flow::{FlowopKind as K, Interval, Num, QuitMode};
use crate::result::JobResult;

fn ops(j: &JobResult, name: &str) -> u64 {
    j.op(name).map(|o| o.ops).unwrap_or_else(|| panic!("no op {name}"))
}

fn flow(j: &JobResult) -> FlowReport {
    j.details_as::<FlowReport>().expect("a Filebench unit carries its FlowReport in details")
}

fn info(j: &JobResult, name: &str) -> crate::result::flow::FlowopInfo {
    flow(j).flowops.into_iter().find(|f| f.name == name).unwrap()
}

fn ended_by(j: &JobResult) -> String {
    flow(j).ended_by
}

/// fileserver's loop on a small fileset.
fn fileserver_ops() -> Vec<crate::model::flow::FlowopSpec> {
    vec![
        op(K::CreateFile, "createfile1").fd(1),
        op(K::WriteWholeFile, "wrtfile1").fd(1).io(1 << 20).no_fileset(),
        op(K::CloseFile, "closefile1").fd(1),
        op(K::OpenFile, "openfile1").fd(1),
        op(K::AppendFileRand, "appendfilerand1").fd(1).io(16384).no_fileset(),
        op(K::CloseFile, "closefile2").fd(1),
        op(K::OpenFile, "openfile2").fd(1),
        op(K::ReadWholeFile, "readfile1").fd(1).io(1 << 20).no_fileset(),
        op(K::CloseFile, "closefile3").fd(1),
        op(K::DeleteFile, "deletefile1"),
        op(K::StatFile, "statfile1"),
    ]
}

#[test]
fn fileserver_loop_balances_and_cleans_up() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 200);
    p.filesets[0].prealloc_pct = 80;
    p.filesets[0].size = Num::Fixed(16384);
    p.processes = vec![process("filereader", 4, fileserver_ops())];
    let r = run(&p, &options()).unwrap();
    let j = &r.jobs[0];
    assert_eq!(j.threads, 4);
    assert!(j.error.is_none(), "{:?}", j.error);
    assert_eq!(ended_by(j), "duration");
    let names: Vec<&str> = j.ops.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names[0], "createfile1");
    assert_eq!(names[10], "statfile1");
    let c = ops(j, "createfile1");
    assert!(c > 50, "only {c} creates in 1 s");
    for o in &j.ops {
        assert!(o.ops + 4 >= c && o.ops <= c + 4, "{}: {} ops vs {c} creates", o.name, o.ops);
        assert_eq!(o.lat.count(), o.ops, "{}", o.name);
    }
    // Deletes skip open files instead of failing, so they balance creates.
    assert!(ops(j, "deletefile1") + 4 >= c);
    assert_eq!(info(j, "createfile1").out_of_files, 0);
    // Every created file gets its drawn size written in one op.
    assert_eq!(j.op("wrtfile1").unwrap().bytes, ops(j, "wrtfile1") * 16384);
    let app = j.op("appendfilerand1").unwrap();
    let mean = app.bytes as f64 / app.ops as f64;
    assert!(mean > 8192.0 * 0.8 && mean < 8192.0 * 1.2, "appendfilerand mean {mean}");
    let tl = &j.timeline.ops["createfile1"];
    assert!(tl.len() <= 1);
    assert!(!dir.path().join("set").exists(), "the fileset tree was not removed");
    let g = &r.groups[0];
    assert!(g.cpu.user_s + g.cpu.system_s > 0.0);
    assert!(j.elapsed_ns >= 1_000_000_000 && j.elapsed_ns < 1_500_000_000);
}

#[test]
fn readwholefile_bytes_are_the_file_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 50);
    p.filesets[0].prealloc_pct = 100;
    p.filesets[0].size = Num::Fixed(12345);
    p.filesets[0].readonly = true;
    p.processes = vec![process(
        "web",
        2,
        vec![
            op(K::OpenFile, "openfile1").fd(1),
            op(K::ReadWholeFile, "readfile1").fd(1).io(4096).no_fileset(),
            op(K::CloseFile, "closefile1").fd(1),
        ],
    )];
    let r = run(&p, &options()).unwrap();
    let j = &r.jobs[0];
    let rd = j.op("readfile1").unwrap();
    assert!(rd.ops > 100);
    assert_eq!(rd.bytes, rd.ops * 12345);
}

#[test]
fn varmail_fsyncs_match_appends_and_deletes_balance() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 100);
    p.filesets[0].prealloc_pct = 80;
    p.filesets[0].dirwidth = Num::Fixed(1_000_000);
    p.processes = vec![process(
        "mail",
        3,
        vec![
            op(K::DeleteFile, "deletefile1"),
            op(K::CreateFile, "createfile2").fd(1),
            op(K::AppendFileRand, "appendfilerand2").fd(1).io(4096).no_fileset(),
            op(K::Fsync, "fsyncfile2").fd(1).no_fileset(),
            op(K::CloseFile, "closefile2").fd(1),
        ],
    )];
    let r = run(&p, &options()).unwrap();
    let j = &r.jobs[0];
    assert!(j.error.is_none(), "{:?}", j.error);
    let a = ops(j, "appendfilerand2");
    assert!(a > 10);
    assert!(ops(j, "fsyncfile2").abs_diff(a) <= 3);
    assert!(ops(j, "createfile2").abs_diff(ops(j, "deletefile1")) <= 3);
    assert_eq!(info(j, "createfile2").out_of_files, 0, "creates drained the fileset");
    assert_eq!(flow(j).filesets[0].mean_depth, 1.0);
}

fn create_only(dir: &std::path::Path, mode: QuitMode, secs: u64) -> FlowPlan {
    let mut p = plan_with(dir, 5);
    p.mode = mode;
    p.run.duration_s = secs;
    p.processes = vec![process("c", 1, vec![op(K::CreateFile, "createfile1").fd(1), op(K::CloseFile, "closefile1").fd(1)])];
    p
}

#[test]
fn out_of_files_is_counted_in_timeout_mode() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&create_only(dir.path(), QuitMode::Timeout, 1), &options()).unwrap();
    let j = &r.jobs[0];
    assert_eq!(ended_by(j), "duration");
    assert_eq!(ops(j, "createfile1"), 5);
    assert!(info(j, "createfile1").out_of_files > 100);
    assert!(r.warnings.iter().any(|w| w.message.contains("createfile1 found no free file")), "{:?}", r.warnings);
}

#[test]
fn firstdone_ends_the_run_at_the_first_shortage() {
    let dir = tempfile::tempdir().unwrap();
    let r = run(&create_only(dir.path(), QuitMode::FirstDone, 10), &options()).unwrap();
    let j = &r.jobs[0];
    assert_eq!(ended_by(j), "firstdone");
    assert!(j.elapsed_ns < 2_000_000_000);
    assert_eq!(ops(j, "createfile1"), 5);
    assert_eq!(info(j, "createfile1").out_of_files, 1);
}

#[test]
fn alldone_waits_for_every_thread() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = create_only(dir.path(), QuitMode::AllDone, 10);
    p.processes[0].threads[0].instances = 3;
    let r = run(&p, &options()).unwrap();
    let j = &r.jobs[0];
    assert_eq!(ended_by(j), "alldone");
    assert_eq!(info(j, "createfile1").out_of_files, 3);
}

#[test]
fn finishoncount_stops_at_its_value() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 20);
    p.filesets[0].prealloc_pct = 100;
    p.mode = QuitMode::FirstDone;
    p.run.duration_s = 10;
    p.processes = vec![process("s", 1, vec![op(K::StatFile, "statfile1"), op(K::FinishOnCount, "finish").target("statfile1").value(300)])];
    let r = run(&p, &options()).unwrap();
    let j = &r.jobs[0];
    assert_eq!(ended_by(j), "firstdone");
    assert_eq!(ops(j, "statfile1"), 300);
}

#[test]
fn finishon_in_timeout_mode_ends_the_whole_run() {
    // Filebench 1.4: the limit of one thread ends everyone's run, here a
    // second process that would hog forever.
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 20);
    p.filesets[0].prealloc_pct = 100;
    p.run.duration_s = 20;
    p.processes = vec![
        process("s", 1, vec![op(K::StatFile, "statfile1"), op(K::FinishOnCount, "finish").target("statfile1").value(300)]),
        process("h", 1, vec![op(K::Hog, "hog1").value(1000)]),
    ];
    let r = run(&p, &options()).unwrap();
    let j = &r.jobs[0];
    assert!(j.error.is_none(), "{:?}", j.error);
    assert_eq!(ended_by(j), "finishon");
    assert!(j.elapsed_ns < 5_000_000_000, "ran {} ns of 20 s", j.elapsed_ns);
    assert_eq!(ops(j, "statfile1"), 300);
    // Not `hog1 > 0`: 300 stats can be done before the hog's first op
    // (CI saw it); the short elapsed time is what shows the hog was stopped.
}

/// Regular files under `root` (the marker aside), recursively.
fn files_under(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![root.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                todo.push(e.path());
            } else if e.file_name() != fileset::MARKER {
                out.push(e.path());
            }
        }
    }
    out
}

#[test]
fn deletefile_fd_deletes_the_file_last_opened_there_after_its_close() {
    // netsfs/networkfs: open fd=1, close fd=1, deletefile fd=1 (no fileset).
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 20);
    p.filesets[0].prealloc_pct = 100;
    p.mode = QuitMode::FirstDone;
    p.run.duration_s = 10;
    p.processes = vec![process(
        "d",
        1,
        vec![op(K::OpenFile, "openfile1").fd(1), op(K::CloseFile, "closefile1").fd(1), op(K::DeleteFile, "deletefile1").fd(1).no_fileset()],
    )];
    let mut o = options();
    o.keep_files = true;
    let r = run(&p, &o).unwrap();
    let j = &r.jobs[0];
    assert!(j.error.is_none(), "{:?}", j.error);
    // Every file opened was deleted, then the open found none left.
    assert_eq!(ended_by(j), "firstdone");
    assert_eq!((ops(j, "openfile1"), ops(j, "deletefile1")), (20, 20));
    assert_eq!(info(j, "openfile1").out_of_files, 1);
    let left = files_under(&dir.path().join("set"));
    assert!(left.is_empty(), "files left: {left:?}");

    // A delete through the slot uses the memory up: a second one has no
    // file and no fileset, which is an error (as in Filebench).
    p.mode = QuitMode::Timeout;
    p.processes[0].threads[0].flowops.push(op(K::DeleteFile, "deletefile2").fd(1).no_fileset());
    let dir2 = tempfile::tempdir().unwrap();
    p.filesets[0].path = dir2.path().to_path_buf();
    let r = run(&p, &options()).unwrap();
    let e = r.jobs[0].error.clone().unwrap_or_default();
    assert!(e.contains("deletefile2") && e.contains("no fileset named and no open fd to delete"), "{e}");
    assert_eq!(ops(&r.jobs[0], "deletefile1"), 1);
}

#[test]
fn a_fileset_without_dirwidth_puts_each_file_in_a_directory_of_its_own() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 7);
    p.filesets[0].dirwidth = Num::Fixed(0);
    p.filesets[0].prealloc_pct = 100;
    p.processes = vec![process("s", 1, vec![op(K::StatFile, "statfile1")])];
    p.run.duration_s = 1;
    let mut o = options();
    o.keep_files = true;
    let r = run(&p, &o).unwrap();
    let j = &r.jobs[0];
    assert!(j.error.is_none(), "{:?}", j.error);
    assert!(ops(j, "statfile1") > 0);
    let root = dir.path().join("set");
    let files = files_under(&root);
    assert_eq!(files.len(), 7, "{files:?}");
    let mut parents: Vec<_> = files.iter().map(|f| f.parent().unwrap().to_path_buf()).collect();
    parents.sort();
    parents.dedup();
    assert_eq!(parents.len(), 7, "one directory per file: {files:?}");
    assert!(parents.iter().all(|d| d.parent() == Some(root.as_path())), "directly under the root: {parents:?}");
    assert_eq!(flow(j).filesets[0].mean_depth, 1.0);
}

#[test]
fn eventgen_limits_the_rate() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 0);
    p.run.duration_s = 2;
    p.eventgen_rate = Some(50);
    p.processes = vec![process("e", 2, vec![op(K::EventLimit, "limit")])];
    let r = run(&p, &options()).unwrap();
    let n = ops(&r.jobs[0], "limit");
    assert!((70..=130).contains(&n), "{n} events in 2 s at 50/s");
}

#[test]
fn limits_without_eventgen_do_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 10);
    p.filesets[0].prealloc_pct = 100;
    p.processes = vec![process("e", 1, vec![op(K::StatFile, "statfile1"), op(K::OpsLimit, "limit")])];
    let r = run(&p, &options()).unwrap();
    assert_eq!(ops(&r.jobs[0], "limit"), 0);
    assert!(ops(&r.jobs[0], "statfile1") > 1000);
    assert!(r.warnings.iter().any(|w| w.message.contains("no eventgen")));
}

#[test]
fn aiowrite_and_aiowait_complete() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 1);
    p.filesets[0].single_file = true;
    p.filesets[0].prealloc_pct = 100;
    p.filesets[0].size = Num::Fixed(1 << 20);
    let mut w = op(K::AioWrite, "aiowrite1").io(4096);
    w.random = true;
    p.processes = vec![process("a", 2, vec![w, op(K::AioWrite, "x").io(4096), op(K::AioWait, "aiowait1")])];
    // Sequential aiowrite is refused before anything runs.
    let e = run(&p, &options()).err().unwrap();
    assert!(e.contains("random"), "{e}");
    p.processes[0].threads[0].flowops.remove(1);
    let r = run(&p, &options()).unwrap();
    let j = &r.jobs[0];
    assert!(j.error.is_none(), "{:?}", j.error);
    assert!(ops(j, "aiowrite1") > 100);
    assert!(ops(j, "aiowait1") > 100);
    assert_eq!(j.op("aiowrite1").unwrap().bytes, ops(j, "aiowrite1") * 4096);
}

#[test]
fn semaphores_and_blocks_end_with_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 0);
    let mut post = op(K::SemPost, "post").target("sem").value(1);
    post.blocking = true;
    let mut sem = op(K::SemBlock, "sem").value(5);
    sem.highwater = 10;
    p.processes = vec![
        process("producer", 3, vec![post, op(K::Hog, "hog").value(1000)]),
        process("consumer", 2, vec![sem, op(K::Wakeup, "wake").target("blk")]),
        process("sleeper", 2, vec![op(K::Block, "blk")]),
    ];
    let t = Instant::now();
    let r = run(&p, &options()).unwrap();
    assert!(t.elapsed() < Duration::from_secs(3));
    let j = &r.jobs[0];
    assert!(ops(j, "post") > 10);
    assert!(ops(j, "sem") > 2);
    // Every post reaches both consumers; each block takes 5.
    assert!(ops(j, "sem") * 5 <= ops(j, "post") * 2 + 10);
    assert!(ops(j, "blk") > 0);
}

#[test]
fn ctrl_c_ends_promptly_and_removes_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 100);
    p.filesets[0].prealloc_pct = 50;
    p.run.duration_s = 30;
    p.processes = vec![process("f", 2, fileserver_ops()), process("d", 1, vec![op(K::Delay, "delay").value(20)])];
    let opts = options();
    let stop = opts.stop.clone();
    let t = Instant::now();
    let h = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        stop.store(true, Ordering::SeqCst);
    });
    let r = run(&p, &opts).unwrap();
    h.join().unwrap();
    assert!(t.elapsed() < Duration::from_secs(3), "took {:?}", t.elapsed());
    assert!(r.partial && r.jobs[0].partial);
    assert_eq!(ended_by(&r.jobs[0]), "interrupted");
    assert!(ops(&r.jobs[0], "createfile1") > 0);
    assert!(!dir.path().join("set").exists());
}

#[test]
fn psrun_intervals_reset_or_accumulate() {
    for reset in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan_with(dir.path(), 10);
        p.filesets[0].prealloc_pct = 100;
        p.run.duration_s = 3;
        p.run.interval = Some(Interval { period_s: 1, reset });
        p.processes = vec![process("s", 1, vec![op(K::StatFile, "statfile1"), op(K::Delay, "nap").value(0)])];
        let r = run(&p, &options()).unwrap();
        let j = &r.jobs[0];
        let iv = &flow(j).intervals;
        assert!(iv.len() >= 2, "{} intervals", iv.len());
        let total = ops(j, "statfile1");
        let firsts: Vec<u64> = iv.iter().map(|i| i.ops[0]).collect();
        if reset {
            assert!(iv.iter().all(|i| (i.span_s - 1.0).abs() < 0.2));
            assert!(firsts.iter().sum::<u64>() <= total);
            assert!(firsts.iter().sum::<u64>() * 3 >= total, "{firsts:?} vs {total}");
        } else {
            assert!(firsts.windows(2).all(|w| w[1] > w[0]), "{firsts:?}");
            assert!((iv[1].span_s - 2.0).abs() < 0.2);
        }
        assert!(j.timeline.ops["statfile1"].len() >= 2);
    }
}

#[test]
fn leafdirs_and_listdir() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 0);
    p.filesets[0].leafdirs = 60;
    p.filesets[0].dirwidth = Num::Fixed(5);
    p.mode = QuitMode::FirstDone;
    p.run.duration_s = 10;
    p.processes = vec![process("m", 2, vec![op(K::MakeDir, "makedir1"), op(K::ListDir, "listdir1")])];
    let r = run(&p, &options()).unwrap();
    let j = &r.jobs[0];
    assert_eq!(ended_by(j), "firstdone");
    assert_eq!(ops(j, "makedir1"), 60);
    let l = j.op("listdir1").unwrap();
    assert!(l.ops > 0 && l.bytes > 0);

    p.filesets[0].prealloc_pct = 100;
    p.processes = vec![process("m", 2, vec![op(K::RemoveDir, "removedir1")])];
    let r = run(&p, &options()).unwrap();
    assert_eq!(ops(&r.jobs[0], "removedir1"), 60);
}

#[test]
fn warmup_resets_statistics() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 0);
    p.run.warmup_s = 1;
    p.eventgen_rate = Some(100);
    p.processes = vec![process("e", 1, vec![op(K::EventLimit, "limit")])];
    let r = run(&p, &options()).unwrap();
    let n = ops(&r.jobs[0], "limit");
    // One second measured at 100/s, not two.
    assert!((60..=140).contains(&n), "{n}");
}

#[test]
fn composite_children_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = plan_with(dir.path(), 10);
    p.filesets[0].prealloc_pct = 100;
    let mut c = op(K::Composite, "combo").no_fileset();
    c.iters = Num::Fixed(2);
    c.children = vec![op(K::StatFile, "combo.stat"), op(K::Hog, "combo.hog").value(10)];
    p.processes = vec![process("c", 1, vec![c, op(K::Print, "hello")])];
    p.processes[0].threads[0].flowops[1].text = Some("hi".into());
    let r = run(&p, &options()).unwrap();
    let j = &r.jobs[0];
    let names: Vec<&str> = j.ops.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["combo", "combo.stat", "combo.hog", "hello"]);
    assert_eq!(ops(j, "combo.stat"), ops(j, "combo"));
    assert!(ops(j, "combo") / 2 <= ops(j, "hello") + 1);
}

#[test]
fn a_foreign_directory_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("set")).unwrap();
    let mut p = plan_with(dir.path(), 10);
    p.processes = vec![process("s", 1, vec![op(K::StatFile, "statfile1")])];
    let e = run(&p, &options()).err().unwrap();
    assert!(e.contains("not created by fsbench"), "{e}");
    assert!(dir.path().join("set").is_dir());
}

/// Side-by-side figures for the stock personalities on tmpfs (run one at a
/// time: `cargo test --release --lib flow::tests::bench -- --ignored
/// --nocapture --test-threads 1`; FSB_BENCH_SECS sets the length).
mod bench {
    use super::*;
    use crate::model::flow::{Dist, FlowopSpec, RandVar};

    fn gamma(name: &str, mean: f64) -> RandVar {
        RandVar { name: name.into(), dist: Dist::CvarGamma { mean, shape: 1.5 }, round: 0, min: 0.0, max: None, seed: None }
    }

    fn go(p: &mut FlowPlan, threads: u32, flowops: Vec<FlowopSpec>) {
        p.run.duration_s = std::env::var("FSB_BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
        let mut pr = process("proc", threads, flowops);
        pr.threads[0].memsize = 10 << 20;
        p.processes = vec![pr];
        let r = run(p, &options()).unwrap();
        let j = &r.jobs[0];
        let g = &r.groups[0];
        let s = flow(j).io_summary(j);
        let cpu = g.cpu.user_s + g.cpu.system_s;
        // SAFETY: libc::rusage is integers and timevals, for which all-zero bytes is a valid value.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: `ru` is a live, writable rusage that getrusage(RUSAGE_SELF) only writes into.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        for o in &j.ops {
            eprintln!(
                "{:<16} {:>9} ops {:>8.3} ms/op {:>8.1} MiB/s",
                o.name,
                o.ops,
                o.lat.mean() / 1e6,
                o.bytes_per_sec(j.elapsed_ns) / 1048576.0
            );
        }
        eprintln!(
            "{}: {} ops {:.0} ops/s {:.0}/{:.0} rd/wr {:.1} MiB/s {:.3} ms/op; CPU {:.1} s ({:.1}+{:.1}) = {:.0} ops per CPU-s; max RSS {} MB; error {:?}",
            p.name,
            s.ops,
            s.ops_per_s,
            s.reads_per_s,
            s.writes_per_s,
            s.mib_per_s,
            s.ms_per_op,
            cpu,
            g.cpu.user_s,
            g.cpu.system_s,
            s.ops as f64 / cpu,
            ru.ru_maxrss / 1024,
            j.error
        );
        for f in &flow(j).flowops.clone() {
            if f.out_of_files + f.busy_skips > 0 {
                eprintln!("  {}: out of files {}, busy skips {}", f.name, f.out_of_files, f.busy_skips);
            }
        }
    }

    fn shm() -> tempfile::TempDir {
        tempfile::tempdir_in("/dev/shm").unwrap()
    }

    #[test]
    #[ignore]
    fn bench_fileserver() {
        let dir = shm();
        let mut p = plan_with(dir.path(), 10_000);
        p.name = "fileserver".into();
        p.randvars = vec![gamma("filesize", 131072.0)];
        let f = &mut p.filesets[0];
        f.size = Num::Random(0);
        f.prealloc_pct = 80;
        f.dirgamma = 1.5;
        let mut ops = fileserver_ops();
        ops[2 - 1].iosize = Num::Fixed(1 << 20);
        go(&mut p, 50, ops);
    }

    #[test]
    #[ignore]
    fn bench_webserver() {
        let dir = shm();
        let mut p = plan_with(dir.path(), 1000);
        p.name = "webserver".into();
        p.randvars = vec![gamma("filesize", 16384.0)];
        let f = &mut p.filesets[0];
        f.size = Num::Random(0);
        f.prealloc_pct = 100;
        f.dirgamma = 1.5;
        f.readonly = true;
        let mut log = fileset("logfiles", dir.path(), 1);
        log.size = Num::Random(0);
        log.prealloc_pct = 100;
        p.filesets.push(log);
        let mut ops = Vec::new();
        for i in 1..=10 {
            ops.push(op(K::OpenFile, &format!("openfile{i}")).fd(1));
            ops.push(op(K::ReadWholeFile, &format!("readfile{i}")).fd(1).io(1 << 20).no_fileset());
            ops.push(op(K::CloseFile, &format!("closefile{i}")).fd(1));
        }
        let mut app = op(K::AppendFileRand, "appendlog").fd(2).io(16384);
        app.fileset = Some(1);
        ops.push(app);
        go(&mut p, 100, ops);
    }

    #[test]
    #[ignore]
    fn bench_webproxy() {
        let dir = shm();
        let mut p = plan_with(dir.path(), 10_000);
        p.name = "webproxy".into();
        let f = &mut p.filesets[0];
        f.size = Num::Fixed(16384);
        f.prealloc_pct = 80;
        f.dirwidth = Num::Fixed(1_000_000);
        f.dirgamma = 1.5;
        let mut ops = vec![
            op(K::DeleteFile, "deletefile1"),
            op(K::CreateFile, "createfile1").fd(1),
            op(K::AppendFileRand, "appendfilerand1").fd(1).io(16384).no_fileset(),
            op(K::CloseFile, "closefile1").fd(1),
        ];
        for i in 2..=6 {
            ops.push(op(K::OpenFile, &format!("openfile{i}")).fd(1));
            ops.push(op(K::ReadWholeFile, &format!("readfile{i}")).fd(1).io(1 << 20).no_fileset());
            ops.push(op(K::CloseFile, &format!("closefile{i}")).fd(1));
        }
        ops.push(op(K::OpsLimit, "limit"));
        go(&mut p, 100, ops);
    }

    /// oltp's three process types (directio off: tmpfs has none).
    #[test]
    #[ignore]
    fn bench_oltp() {
        let dir = shm();
        let mut p = plan_with(dir.path(), 10);
        p.name = "oltp".into();
        p.run.duration_s = std::env::var("FSB_BENCH_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
        p.eventgen_rate = Some(0);
        let f = &mut p.filesets[0];
        f.name = "datafiles".into();
        f.size = Num::Fixed(10 << 20);
        f.prealloc_pct = 100;
        f.reuse = true;
        let mut log = fileset("logfile", dir.path(), 1);
        log.size = Num::Fixed(10 << 20);
        log.prealloc_pct = 100;
        p.filesets.push(log);
        let mut lw = op(K::AioWrite, "lg-write").io(256 << 10);
        lw.fileset = Some(1);
        lw.random = true;
        lw.dsync = true;
        let mut lb = op(K::SemBlock, "lg-block").value(3200);
        lb.highwater = 1000;
        let mut dw = op(K::AioWrite, "dbwrite-a").io(2048);
        dw.random = true;
        dw.workingset = Num::Fixed(10 << 30);
        dw.iters = Num::Fixed(100);
        dw.opennext = true;
        dw.dsync = true;
        let mut db = op(K::SemBlock, "dbwr-block").value(1000);
        db.highwater = 2000;
        let mut sr = op(K::Read, "shadowread").io(2048);
        sr.random = true;
        sr.workingset = Num::Fixed(10 << 30);
        sr.opennext = true;
        let mut p1 = op(K::SemPost, "shadow-post-lg").value(1).target("lg-block");
        p1.blocking = true;
        let mut p2 = op(K::SemPost, "shadow-post-dbwr").value(1).target("dbwr-block");
        p2.blocking = true;
        let mut lgwr = process("lgwr", 1, vec![lw, op(K::AioWait, "lg-aiowait"), lb]);
        let mut dbwr = process("dbwr", 1, vec![dw, op(K::Hog, "dbwr-hog").value(10000), db, op(K::AioWait, "dbwr-aiowait")]);
        dbwr.instances = 10;
        let mut shadow = process("shadow", 1, vec![sr, op(K::Hog, "shadowhog").value(200000), p1, p2, op(K::EventLimit, "random-rate")]);
        shadow.instances = 200;
        for pr in [&mut lgwr, &mut dbwr, &mut shadow] {
            pr.threads[0].memsize = 1 << 20;
        }
        p.processes = vec![lgwr, dbwr, shadow];
        let t = Instant::now();
        let r = run(&p, &options()).unwrap();
        let j = &r.jobs[0];
        for o in &j.ops {
            eprintln!("{:<18} {:>9} ops {:>8.3} ms/op", o.name, o.ops, o.lat.mean() / 1e6);
        }
        let g = &r.groups[0];
        eprintln!("oltp: wall {:?}, CPU {:.1}+{:.1} s, error {:?}", t.elapsed(), g.cpu.user_s, g.cpu.system_s, j.error);
        assert!(j.error.is_none());
        assert!(ops(j, "lg-block") > 0 && ops(j, "dbwr-block") > 0);
        assert!(t.elapsed() < Duration::from_secs(p.run.duration_s + 5));
    }
}

#[test]
fn define_file_on_a_block_device_needs_permission() {
    use crate::host::is_root;
    use crate::host::testutil::LoopDev;
    if !is_root() {
        eprintln!("skipping: needs root for a loop device");
        return;
    }
    let Some(lo) = LoopDev::attach(64 << 20) else { return };
    let dev = lo.path().to_path_buf();
    let mut p = plan_with(dev.parent().unwrap(), 1);
    p.filesets[0].name = dev.file_name().unwrap().to_string_lossy().into_owned();
    p.filesets[0].single_file = true;
    p.filesets[0].size = Num::Fixed(32 << 20);
    let mut rd = op(K::Read, "randread").io(4096);
    rd.random = true;
    let mut wr = op(K::Write, "randwrite").io(4096);
    wr.random = true;
    p.processes = vec![process("d", 1, vec![rd, wr])];
    let e = run(&p, &options()).err().unwrap();
    assert!(e.contains("--allow-device"), "{e}");
    let mut opts = options();
    opts.allow_device = true;
    let r = run(&p, &opts).unwrap();
    let j = &r.jobs[0];
    assert!(j.error.is_none(), "{:?}", j.error);
    assert!(ops(j, "randread") > 100 && ops(j, "randwrite") > 100);
    assert!(dev.exists(), "the device node must stay");
}

fn single_file(dir: &std::path::Path, size: u64) -> FlowPlan {
    let mut p = plan_with(dir, 1);
    p.filesets[0].single_file = true;
    p.filesets[0].prealloc_pct = 100;
    p.filesets[0].size = Num::Fixed(size);
    p
}

#[test]
fn bwlimit_paces_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = single_file(dir.path(), 1 << 20);
    p.run.duration_s = 2;
    p.eventgen_rate = Some(10);
    let mut w = op(K::Write, "write1").io(65536);
    w.random = true;
    p.processes = vec![process("w", 2, vec![w, op(K::BwLimit, "bw")])];
    let r = run(&p, &options()).unwrap();
    let mib = r.jobs[0].op("write1").unwrap().bytes as f64 / 1048576.0;
    assert!((12.0..=30.0).contains(&mib), "{mib} MiB in 2 s at 10 MiB/s");
}

#[test]
fn sequential_writes_appends_fsyncset_testrandvar_finishonbytes() {
    use crate::model::flow::{Dist, RandVar};
    let dir = tempfile::tempdir().unwrap();
    let mut p = single_file(dir.path(), 4096);
    p.mode = QuitMode::FirstDone;
    p.run.duration_s = 20;
    p.randvars = vec![RandVar { name: "u".into(), dist: Dist::Uniform { mean: 100.0 }, round: 0, min: 0.0, max: None, seed: Some(9) }];
    let mut t = op(K::TestRandVar, "trv");
    t.value = Num::Random(0);
    p.processes = vec![process(
        "w",
        1,
        vec![
            op(K::Write, "write1").io(4096).fd(1),
            op(K::AppendFile, "append1").io(4096).fd(1),
            op(K::FsyncSet, "fsyncset1"),
            t,
            op(K::FinishOnBytes, "enough").value(1 << 20),
        ],
    )];
    let r = run(&p, &options()).unwrap();
    let j = &r.jobs[0];
    assert_eq!(ended_by(j), "firstdone");
    let w = ops(j, "write1");
    assert_eq!(w, 128, "1 MiB of 4 KiB writes and appends");
    assert_eq!(ops(j, "append1"), w);
    assert_eq!(ops(j, "fsyncset1"), w);
    let trv = j.op("trv").unwrap();
    let mean = trv.bytes as f64 / trv.ops as f64;
    assert!((80.0..=120.0).contains(&mean), "uniform mean {mean}");
    let size = std::fs::metadata(dir.path().join("set/00000001/00000001"));
    assert!(size.is_err(), "the file should be gone after the run");
}
