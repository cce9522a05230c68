use super::mt::{permutation, Mt64, IOZONE_KEY};
use super::pass::{run_pass, Op, Recorder, StrideWalk, PVECMAX};
use super::*;
use crate::model::iozone::Throughput;
use crate::result::iozone::IozoneDetails;
use crate::runner::events::Collect;
use std::sync::Arc;

/// Keeps every call a pass makes.
#[derive(Default)]
struct Rec {
    ios: Vec<(Op, u64, u64)>,
    /// One entry per fsync / close: inside the timed span or not.
    fsyncs: Vec<bool>,
    closes: Vec<bool>,
}

impl Recorder for Rec {
    fn io(&mut self, op: Op, offset: u64, len: u64) {
        self.ios.push((op, offset, len));
    }
    fn fsync(&mut self, timed: bool) {
        self.fsyncs.push(timed);
    }
    fn close(&mut self, timed: bool) {
        self.closes.push(timed);
    }
}

fn disk_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_MANIFEST_DIR")).expect("temp dir")
}

const FILE_KB: u64 = 64;
const REC_KB: u64 = 4;
const N: u64 = FILE_KB / REC_KB;
const REC: u64 = REC_KB * 1024;

fn plan_in(dir: &Path) -> IozonePlan {
    IozonePlan { file: dir.join("iozone.tmp"), cells: vec![(FILE_KB, REC_KB)], ..Default::default() }
}

/// Run one pass of `col` on the plan's file with a fresh recorder.
fn pass(plan: &IozonePlan, col: Column) -> (Rec, PassOut) {
    let (file_bytes, rec) = cell_bytes(plan.cells[0].0, plan.cells[0].1).unwrap();
    let stop = AtomicBool::new(false);
    let cell = Cell { plan, file_bytes, rec, stop: &stop };
    let order = order_for(col, file_bytes / rec, false);
    let ctx = cell.ctx(&plan.file, &order, None);
    let mut r = Rec::default();
    let mut buf = buffer_for(col, rec, super::pass::is_stdio(col));
    let out = run_pass(&ctx, col, &mut buf, &mut r).unwrap_or_else(|e| panic!("{col:?}: {e}"));
    (r, out)
}

fn offsets(r: &Rec) -> Vec<u64> {
    r.ios.iter().map(|x| x.1).collect()
}

#[test]
fn mt19937_64_matches_the_reference_output() {
    let mut g = Mt64::by_array(&IOZONE_KEY);
    assert_eq!(g.next_u64(), 7266447313870364031);
    assert_eq!(g.next_u64(), 4946485549665804864);
    assert_eq!(g.next_u64(), 16945909448695747420);
    // Past the first twist, still the same stream as a fresh generator.
    let mut a = Mt64::by_array(&IOZONE_KEY);
    let mut b = Mt64::by_array(&IOZONE_KEY);
    for _ in 0..1000 {
        assert_eq!(a.next_u64(), b.next_u64());
    }
}

#[test]
fn permutation_is_a_permutation_and_repeats() {
    let p = permutation(1000);
    let mut s = p.clone();
    s.sort_unstable();
    assert_eq!(s, (0..1000).collect::<Vec<_>>());
    assert_ne!(p, (0..1000).collect::<Vec<_>>());
    assert_eq!(p, permutation(1000));
    assert!(permutation(0).is_empty());
    assert_eq!(permutation(1), vec![0]);
}

/// The walk equals the real IOzone's, traced for several record counts
/// and strides (tests/data/iozone/stride-walks.txt).
#[test]
fn stride_walk_is_iozones() {
    let traced = include_str!("../../../tests/data/iozone/stride-walks.txt");
    let mut checked = 0;
    for line in traced.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (head, seq) = line.split_once(':').expect("RECORDS STRIDE: SEQ");
        let mut h = head.split_whitespace().map(|x| x.parse::<u64>().unwrap());
        let (n, stride) = (h.next().unwrap(), h.next().unwrap());
        let want: Vec<u64> = seq.split_whitespace().map(|x| x.parse().unwrap()).collect();
        let mut w = StrideWalk::new(n, stride);
        let got: Vec<u64> = (0..n).map(|_| w.next_record()).collect();
        assert_eq!(got, want, "{n} records, stride {stride}");
        checked += 1;
    }
    assert!(checked >= 10, "{checked} traced walks");
}

#[test]
fn write_then_rewrite_put_their_bytes_on_disk() {
    let d = disk_dir();
    let plan = plan_in(d.path());
    let (r, out) = pass(&plan, Column::Write);
    assert_eq!(offsets(&r), (0..N).map(|i| i * REC).collect::<Vec<_>>());
    assert!(r.ios.iter().all(|x| x.0 == Op::Write && x.2 == REC));
    assert_eq!((out.ops, out.bytes), (N, N * REC));
    assert_eq!(out.lat.count(), N);
    let data = std::fs::read(&plan.file).unwrap();
    assert_eq!(data.len() as u64, FILE_KB * 1024);
    assert!(data.iter().all(|&b| b == fill_byte(Column::Write)));

    let (r, _) = pass(&plan, Column::Rewrite);
    assert_eq!(offsets(&r), (0..N).map(|i| i * REC).collect::<Vec<_>>());
    let data = std::fs::read(&plan.file).unwrap();
    assert_eq!(data.len() as u64, FILE_KB * 1024);
    assert!(data.iter().all(|&b| b == fill_byte(Column::Rewrite)));
}

#[test]
fn reads_backward_stride_and_record_rewrite_walk_as_iozone() {
    let d = disk_dir();
    let mut plan = plan_in(d.path());
    pass(&plan, Column::Write);

    let (r, _) = pass(&plan, Column::Read);
    assert_eq!(offsets(&r)[1..], (0..N).map(|i| i * REC).collect::<Vec<_>>());
    assert!(r.ios.iter().all(|x| x.0 == Op::Read));

    // Backward: from filesize − reclen down to 0.
    let (r, out) = pass(&plan, Column::BkwdRead);
    assert_eq!(offsets(&r), (0..N).rev().map(|i| i * REC).collect::<Vec<_>>());
    assert_eq!(out.bytes, N * REC);

    // Stride 17 over a 128-record file: IOzone's walk, one read per record
    // count, the stride's own records in the recorded I/O log.
    plan.cells = vec![(512, 4)];
    pass(&plan, Column::Write);
    let (r, _) = pass(&plan, Column::StrideRead);
    let offs = offsets(&r);
    let mut w = StrideWalk::new(128, 17);
    assert_eq!(offs, (0..128).map(|_| w.next_record() * REC).collect::<Vec<_>>());
    assert_eq!(&offs[..9], &[0, 17 * REC, 34 * REC, 51 * REC, 68 * REC, 85 * REC, 102 * REC, 119 * REC, REC]);

    // Record rewrite: offset 0, N times; the file keeps its size.
    plan.cells = vec![(FILE_KB, REC_KB)];
    pass(&plan, Column::Write);
    let (r, _) = pass(&plan, Column::RecordRewrite);
    assert_eq!(r.ios.len() as u64, N);
    assert!(r.ios.iter().all(|x| x.0 == Op::Write && x.1 == 0 && x.2 == REC));
    assert_eq!(std::fs::metadata(&plan.file).unwrap().len(), FILE_KB * 1024);
}

#[test]
fn random_read_and_write_visit_the_same_permutation() {
    let d = disk_dir();
    let plan = plan_in(d.path());
    pass(&plan, Column::Write);
    let (rr, _) = pass(&plan, Column::RandomRead);
    let (rw, _) = pass(&plan, Column::RandomWrite);
    let want: Vec<u64> = permutation(N).iter().map(|r| r * REC).collect();
    assert_eq!(offsets(&rr), want);
    assert_eq!(offsets(&rw), want);
    let mut s = offsets(&rr);
    s.sort_unstable();
    assert_eq!(s, (0..N).map(|i| i * REC).collect::<Vec<_>>());
    assert!(rr.ios.iter().all(|x| x.0 == Op::Read) && rw.ios.iter().all(|x| x.0 == Op::Write));
}

#[test]
fn fsync_and_close_are_timed_only_when_asked() {
    // As traced in IOzone 3.471: an untimed fsync right after the open (not
    // for random read/write or pread), one inside the span with -e, and one
    // after it before the close of a written file unless -c closes inside.
    let d = disk_dir();
    let mut plan = plan_in(d.path());
    let cases = [
        (Column::Write, true),
        (Column::Rewrite, true),
        (Column::RandomWrite, false),
        (Column::RecordRewrite, true),
        (Column::Pwrite, true),
        (Column::Fwrite, true),
        (Column::Frewrite, true),
        (Column::Read, true),
        (Column::RandomRead, false),
        (Column::Pread, false),
        (Column::Fread, true),
    ];
    let expect = |col: Column, at_open: bool, e: bool, c: bool| {
        let mut v = Vec::new();
        if at_open {
            v.push(false);
        }
        if col.writes() && e {
            v.push(true);
        }
        if col.writes() && !c {
            v.push(false);
        }
        v
    };
    for (e, c) in [(false, false), (true, false), (false, true)] {
        plan.fsync_in_timing = e;
        plan.close_in_timing = c;
        for (col, at_open) in cases {
            let (r, _) = pass(&plan, col);
            assert_eq!(r.fsyncs, expect(col, at_open, e, c), "{col:?} -e {e} -c {c}");
            assert_eq!(r.closes, vec![c], "{col:?} -e {e} -c {c}");
        }
    }
}

#[test]
fn read_passes_read_the_first_record_before_the_clock() {
    let d = disk_dir();
    let plan = plan_in(d.path());
    pass(&plan, Column::Write);
    for col in [Column::Read, Column::Reread] {
        let (r, out) = pass(&plan, col);
        let mut want = vec![0];
        want.extend((0..N).map(|i| i * REC));
        assert_eq!(offsets(&r), want, "{col:?}");
        // The timed figures cover the walk alone.
        assert_eq!((out.ops, out.bytes), (N, N * REC), "{col:?}");
    }
    let (r, _) = pass(&plan, Column::BkwdRead);
    assert_eq!(r.ios.len() as u64, N, "only read and reread read ahead");
}

#[test]
fn fwrite_overwrites_an_existing_file_in_place() {
    // IOzone opens "r+" once the write test has made the file: no
    // truncation, so no new blocks are allocated (and a longer file stays).
    let d = disk_dir();
    let plan = plan_in(d.path());
    std::fs::write(&plan.file, vec![7u8; (2 * N * REC) as usize]).unwrap();
    let ino = std::os::unix::fs::MetadataExt::ino(&std::fs::metadata(&plan.file).unwrap());
    pass(&plan, Column::Fwrite);
    let meta = std::fs::metadata(&plan.file).unwrap();
    assert_eq!(meta.len(), 2 * N * REC, "fwrite truncated the file");
    assert_eq!(std::os::unix::fs::MetadataExt::ino(&meta), ino);
    let data = std::fs::read(&plan.file).unwrap();
    assert!(data[..(N * REC) as usize].iter().all(|&b| b == fill_byte(Column::Fwrite)));
    assert!(data[(N * REC) as usize..].iter().all(|&b| b == 7));
}

#[test]
fn stdio_passes_call_fwrite_and_fread_with_a_record() {
    let d = disk_dir();
    let plan = plan_in(d.path());
    let (r, out) = pass(&plan, Column::Fwrite);
    assert_eq!(r.ios.len() as u64, N);
    assert!(r.ios.iter().enumerate().all(|(i, x)| x.0 == Op::Fwrite && x.1 == i as u64 * REC && x.2 == REC));
    assert_eq!(out.bytes, N * REC);
    let data = std::fs::read(&plan.file).unwrap();
    assert_eq!(data.len() as u64, N * REC);
    assert!(data.iter().all(|&b| b == fill_byte(Column::Fwrite)));
    let (r, _) = pass(&plan, Column::Frewrite);
    assert!(r.ios.iter().all(|x| x.0 == Op::Fwrite && x.2 == REC));
    assert!(std::fs::read(&plan.file).unwrap().iter().all(|&b| b == fill_byte(Column::Frewrite)));
    let (r, out) = pass(&plan, Column::Fread);
    assert_eq!(r.ios.len() as u64, N);
    assert!(r.ios.iter().all(|x| x.0 == Op::Fread && x.2 == REC));
    assert_eq!(out.bytes, N * REC);
}

#[test]
fn positional_and_vector_passes_cover_the_file_once() {
    let d = disk_dir();
    let mut plan = plan_in(d.path());
    plan.cells = vec![(72, 4)]; // 18 records: one full vector and one of 2.
    let (r, _) = pass(&plan, Column::Pwrite);
    assert!(r.ios.iter().enumerate().all(|(i, x)| x.0 == Op::Pwrite && x.1 == i as u64 * REC));
    let (r, _) = pass(&plan, Column::Pread);
    assert_eq!(r.ios.len(), 18);
    for col in [Column::Pwritev, Column::Preadv] {
        let (r, out) = pass(&plan, col);
        assert_eq!(r.ios.len(), 2, "{col:?}");
        let mut got: Vec<(u64, u64)> = r.ios.iter().map(|x| (x.1, x.2)).collect();
        got.sort_unstable();
        assert_eq!(got, vec![(0, PVECMAX * REC), (PVECMAX * REC, 2 * REC)]);
        assert_eq!(out.bytes, 18 * REC);
    }
    assert_eq!(std::fs::metadata(&plan.file).unwrap().len(), 18 * REC);
}

#[test]
fn run_cells_follows_the_plan_and_removes_its_file() {
    let d = disk_dir();
    let mut plan = plan_in(d.path());
    plan.tests = Test::ALL[..=Test::Mixed.number() as usize].to_vec();
    plan.cells = vec![(64, 4), (64, 16)];
    plan.no_retest = true;
    let stop = AtomicBool::new(false);
    let mut created = Created::default();
    let out = run_cells(&plan, &stop, &mut created, &Meter::default(), &mut NoRecord, None).unwrap();
    assert!(!out.partial);
    assert_eq!(out.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>(), ["64k/4k", "64k/16k"]);
    let want = ["write", "read", "random_read", "random_write", "bkwd_read", "record_rewrite", "stride_read", "fwrite", "fread"];
    assert_eq!(out.jobs[0].ops.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), want);
    assert_eq!(out.details.cells.len(), 2 * want.len());
    let f = &out.details.cells[want.len()];
    assert_eq!((f.file_kb, f.rec_kb, f.column, f.bytes, f.ops), (64, 16, Column::Write, 65536, 4));
    let w = out.jobs[1].op("write").unwrap();
    assert_eq!((w.class, w.ops, w.bytes, w.lat.count()), (OpClass::DataWrite, 4, 65536, 4));
    assert_eq!(w.active_ns, Some(f.elapsed_ns));
    assert_eq!(out.jobs[0].op("read").unwrap().class, OpClass::DataRead);
    assert!(plan.file.exists());
    created.finish(false).unwrap();
    assert!(!plan.file.exists());
}

#[derive(Default)]
struct Reads(u64);
impl Recorder for Reads {
    fn io(&mut self, op: Op, _offset: u64, _len: u64) {
        self.0 += u64::from(op == Op::Read);
    }
}

#[test]
fn backward_read_runs_a_second_unreported_pass_unless_no_retest() {
    let d = disk_dir();
    let mut plan = plan_in(d.path());
    plan.tests = vec![Test::Write, Test::Backward];
    for (no_retest, passes) in [(false, 2), (true, 1)] {
        plan.no_retest = no_retest;
        let mut created = Created::default();
        let mut reads = Reads::default();
        let out = run_cells(&plan, &AtomicBool::new(false), &mut created, &Meter::default(), &mut reads, None).unwrap();
        assert_eq!(reads.0, passes * N, "-+n {no_retest}");
        let bk = out.jobs[0].op("bkwd_read").unwrap();
        assert_eq!((bk.ops, bk.lat.count()), (N, N), "one pass is reported");
        created.finish(false).unwrap();
    }
}

#[test]
fn a_stopped_run_is_partial_and_stops_early() {
    let d = disk_dir();
    let mut plan = plan_in(d.path());
    plan.tests = vec![Test::Write, Test::Read];
    let stop = AtomicBool::new(true);
    let mut created = Created::default();
    let out = run_cells(&plan, &stop, &mut created, &Meter::default(), &mut NoRecord, None).unwrap();
    assert!(out.partial);
    assert!(out.details.cells.is_empty());
    created.finish(false).unwrap();
    assert!(!plan.file.exists());
}

fn options(stop: bool) -> RunOptions {
    RunOptions {
        allow_device: false,
        keep_files: false,
        allow_fill: false,
        stop: Arc::new(AtomicBool::new(stop)),
        events: Arc::new(Collect::default()),
        cache_controlled: false,
        command: vec!["iozone".into()],
    }
}

#[test]
fn run_plan_gives_one_job_per_cell_with_the_details() {
    let d = disk_dir();
    let mut plan = plan_in(d.path());
    plan.tests = vec![Test::Write, Test::Read];
    let r = run_plan(&plan, &options(false), LAYOUT, &mut |_| {}).unwrap();
    assert!(!r.partial && r.failed.is_none());
    assert_eq!(r.jobs.len(), 1);
    let j = &r.jobs[0];
    assert_eq!(j.name, "64k/4k");
    assert_eq!(j.ops.iter().map(|o| o.name.as_str()).collect::<Vec<_>>(), ["write", "rewrite", "read", "reread"]);
    assert_eq!(j.headline[0].unit, "kB/s");
    let det: IozoneDetails = serde_json::from_value(j.details.clone().unwrap()).unwrap();
    assert_eq!(det.settings, plan);
    assert_eq!(det.cells.iter().map(|c| c.column).collect::<Vec<_>>(), [Column::Write, Column::Rewrite, Column::Read, Column::Reread]);
    assert!(det.cells.iter().all(|c| c.bytes == 65536 && c.elapsed_ns > 0));
    assert!(!plan.file.exists(), "the run removes its file");

    // -w keeps it; a second run then refuses the file it did not create.
    plan.keep_files = true;
    run_plan(&plan, &options(false), LAYOUT, &mut |_| {}).unwrap();
    assert!(plan.file.exists());
    let e = run_plan(&plan, &options(false), LAYOUT, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("already exists"), "{e}");
    assert!(plan.file.exists(), "a file the run did not create is left alone");
}

#[test]
fn a_failed_pass_names_the_file() {
    let d = disk_dir();
    let mut plan = plan_in(d.path());
    // Reading a file test 0 never wrote.
    plan.tests = vec![Test::Read];
    let e = run_plan(&plan, &options(false), LAYOUT, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("iozone.tmp"), "{e}");
    // A record larger than the file.
    plan.tests = vec![Test::Write];
    plan.cells = vec![(4, 8)];
    assert!(run_plan(&plan, &options(false), LAYOUT, &mut |_| {}).is_err());
}

fn throughput_plan(dir: &Path, stonewall: bool) -> IozonePlan {
    IozonePlan {
        file: dir.join("iozone.tmp"),
        tests: vec![Test::Write, Test::Read, Test::Random, Test::Mixed],
        cells: vec![(1024, 4)],
        throughput: Some(Throughput {
            children: vec![2],
            threads: true,
            stonewall,
            mixed_read_pct: None,
            mixed_sequential: false,
            files: Vec::new(),
        }),
        ..Default::default()
    }
}

#[test]
fn throughput_mode_records_each_child() {
    let d = disk_dir();
    for stonewall in [true, false] {
        let plan = throughput_plan(d.path(), stonewall);
        let r = run_plan(&plan, &options(false), LAYOUT, &mut |_| {}).unwrap();
        assert_eq!(r.jobs.len(), 1);
        assert_eq!(r.jobs[0].name, "2children");
        assert_eq!(r.jobs[0].threads, 2);
        let det: IozoneDetails = serde_json::from_value(r.jobs[0].details.clone().unwrap()).unwrap();
        let cols: Vec<Column> = det.throughput.iter().map(|t| t.column).collect();
        assert_eq!(
            cols,
            [Column::Write, Column::Rewrite, Column::Read, Column::Reread, Column::RandomRead, Column::Mixed, Column::RandomWrite]
        );
        for t in &det.throughput {
            assert_eq!(t.per_child_kb_s.len(), 2);
            assert_eq!(t.per_child_kb.len(), 2);
            assert!(t.min_xfer_kb() <= 1024.0, "{t:?}");
            assert!(t.parent_kb_s > 0.0 && t.wall_s > 0.0);
            if !stonewall {
                assert!(t.per_child_kb.iter().all(|&k| k == 1024.0), "{t:?}");
            }
        }
        for i in 0..2 {
            assert!(!d.path().join(format!("iozone.DUMMY.{i}")).exists());
        }
    }
}

#[test]
fn mixed_workload_splits_readers_and_writers() {
    let t = throughput_plan(Path::new("."), true).throughput.unwrap();
    assert_eq!((0..4).map(|i| mixed_reader_of(&t, i, 4)).collect::<Vec<_>>(), [true, false, true, false]);
    let t = Throughput { mixed_read_pct: Some(75), ..t };
    assert_eq!((0..4).map(|i| mixed_reader_of(&t, i, 4)).collect::<Vec<_>>(), [true, true, true, false]);
}

fn mixed_reader_of(t: &Throughput, i: usize, n: usize) -> bool {
    throughput::mixed_reader(t, i, n)
}

#[test]
fn direct_io_on_disk() {
    let d = disk_dir();
    let mut plan = plan_in(d.path());
    plan.direct = true;
    plan.tests = vec![Test::Write, Test::Read, Test::Random, Test::Fwrite, Test::Fread];
    match run_plan(&plan, &options(false), LAYOUT, &mut |_| {}) {
        Ok(r) => assert_eq!(r.jobs[0].op("read").unwrap().bytes, 65536),
        Err(e) if e.to_string().contains("Invalid argument") => {
            println!("skipped: O_DIRECT is not supported where the crate lives ({e})");
        }
        Err(e) => panic!("{e}"),
    }
    assert!(!plan.file.exists());
}

#[test]
fn remount_needs_a_mount_point() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: -U needs root");
        return;
    }
    let d = disk_dir();
    let mut plan = plan_in(d.path());
    plan.remount = Some(d.path().to_path_buf());
    let e = run_plan(&plan, &options(false), LAYOUT, &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("not a mount point"), "{e}");
}

/// A small ext4 on a loop device, unmounted when dropped.
struct LoopMount {
    mnt: PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopMount {
    fn new() -> Result<LoopMount, String> {
        let dir = disk_dir();
        let img = dir.path().join("fs.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).map_err(|e| e.to_string())?;
        std::fs::File::create(&img).and_then(|f| f.set_len(32 << 20)).map_err(|e| e.to_string())?;
        let run = |prog: &str, args: &[&std::ffi::OsStr]| -> Result<(), String> {
            let out = std::process::Command::new(prog).args(args).output().map_err(|e| format!("{prog}: {e}"))?;
            if out.status.success() {
                Ok(())
            } else {
                Err(format!("{prog}: {}", String::from_utf8_lossy(&out.stderr).trim()))
            }
        };
        run("mkfs.ext4", &["-q".as_ref(), "-F".as_ref(), img.as_os_str()])?;
        run("mount", &["-o".as_ref(), "loop".as_ref(), img.as_os_str(), mnt.as_os_str()])?;
        Ok(LoopMount { mnt, _dir: dir })
    }
}

impl Drop for LoopMount {
    fn drop(&mut self) {
        let _ = cleanup::unmount(&self.mnt, true);
    }
}

#[test]
fn remount_before_each_test_on_a_loop_mount() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: -U needs root");
        return;
    }
    let m = match LoopMount::new() {
        Ok(m) => m,
        Err(e) => {
            println!("skipped: cannot make a loop mount here ({e})");
            return;
        }
    };
    let mut plan = plan_in(&m.mnt);
    plan.tests = vec![Test::Write, Test::Read, Test::Backward];
    plan.remount = Some(m.mnt.clone());
    let r = run_plan(&plan, &options(false), LAYOUT, &mut |_| {}).unwrap();
    assert_eq!(r.jobs[0].op("bkwd_read").unwrap().bytes, FILE_KB * 1024);
    assert!(crate::environment::mkfs::is_mounted(&m.mnt), "mounted again after the run");
    assert!(!plan.file.exists());
}

#[test]
fn a_stonewalled_child_stops_counting_and_a_writer_still_finishes_its_file() {
    let d = disk_dir();
    let plan = plan_in(d.path());
    let (file_bytes, rec) = cell_bytes(FILE_KB, REC_KB).unwrap();
    let stop = AtomicBool::new(false);
    let wall = AtomicBool::new(true);
    let cell = Cell { plan: &plan, file_bytes, rec, stop: &stop };
    for col in [Column::Write, Column::Read] {
        let mut ctx = cell.ctx(&plan.file, &[], Some(&wall));
        // A stonewall exists only among throughput mode's children.
        ctx.throughput = true;
        let mut r = Rec::default();
        let out = run_pass(&ctx, col, &mut buffer_for(col, rec, super::pass::is_stdio(col)), &mut r).unwrap();
        assert_eq!((out.bytes, out.ops, out.lat.count()), (0, 0, 0), "{col:?}: nothing counts after the stonewall");
        assert!(!out.stopped);
        if col == Column::Write {
            assert_eq!(r.ios.len() as u64, N, "the writer makes the whole file");
            assert_eq!(std::fs::metadata(&plan.file).unwrap().len(), file_bytes);
        } else {
            assert!(r.ios.is_empty(), "a reader stops at once");
        }
    }
}

#[test]
fn only_a_run_with_stdio_passes_holds_a_stream_buffer() {
    let d = disk_dir();
    let plan = plan_in(d.path());
    let (file_bytes, rec) = cell_bytes(FILE_KB, REC_KB).unwrap();
    assert_eq!(buffer_for(Column::Write, rec, false).slots, 1);
    assert_eq!(buffer_for(Column::Write, rec, true).slots, 2);
    // A stdio pass given one record's room refuses, it does not write past it.
    let stop = AtomicBool::new(false);
    let cell = Cell { plan: &plan, file_bytes, rec, stop: &stop };
    let ctx = cell.ctx(&plan.file, &[], None);
    let err = run_pass(&ctx, Column::Fwrite, &mut buffer_for(Column::Fwrite, rec, false), &mut Rec::default()).unwrap_err();
    assert!(err.contains("not 2 record(s)"), "{err}");
    // The plan decides: -i 0 -i 1 alone has no stdio column, -i 6 has.
    assert!(!has_stdio(&[Test::Write, Test::Read]) && has_stdio(&[Test::Write, Test::Fwrite]) && has_stdio(&[Test::Fread]));
}
