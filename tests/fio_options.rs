//! fio options beyond the common ones, compared with the real fio on this
//! machine: size-based jobs must do the same I/O (bytes and count per
//! direction, within 1%), random distributions must have fio's shape, and
//! the start/stop/file options must have fio's effect on disk.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// Per job: (name, read bytes, read ios, write bytes, write ios).
type Counts = Vec<(String, u64, u64, u64, u64)>;

fn counts(doc: &Value) -> Counts {
    let n = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"));
    doc["jobs"]
        .as_array()
        .expect("jobs")
        .iter()
        .map(|j| {
            let name = j["jobname"].as_str().expect("jobname").to_string();
            (name, n(&j["read"]["io_bytes"]), n(&j["read"]["total_ios"]), n(&j["write"]["io_bytes"]), n(&j["write"]["total_ios"]))
        })
        .collect()
}

/// The JSON document in `out`, after any notes fio prints before it.
fn json_doc(out: &[u8], who: &str) -> Value {
    let t = String::from_utf8_lossy(out);
    let at = t.find('{').unwrap_or_else(|| panic!("{who} printed no JSON: {t}"));
    serde_json::from_str(&t[at..]).unwrap_or_else(|e| panic!("{who}: bad JSON ({e}): {t}"))
}

/// Write `job` (with `@DIR@` replaced by a fresh directory) and run it with
/// the real fio. None (and a printed reason) when fio is not installed.
fn run_fio(job: &str) -> Option<(Value, tempfile::TempDir)> {
    if !have("fio") {
        skip("fio is not installed");
        return None;
    }
    let dir = disk_tempdir();
    let file = dir.path().join("job.fio");
    std::fs::write(&file, job.replace("@DIR@", &dir.path().display().to_string())).unwrap();
    let out = Command::new("fio").arg("--output-format=json").arg(&file).current_dir(dir.path()).output().expect("fio runs");
    assert!(out.status.success(), "fio failed: {}", String::from_utf8_lossy(&out.stderr));
    Some((json_doc(&out.stdout, "fio"), dir))
}

fn run_fsbench(job: &str) -> (Value, tempfile::TempDir) {
    let dir = disk_tempdir();
    let file = dir.path().join("job.fio");
    std::fs::write(&file, job.replace("@DIR@", &dir.path().display().to_string())).unwrap();
    let out = fsbench()
        .arg("fio")
        .arg(&file)
        .args(["--output-format=fio-json", "--no-progress"])
        .current_dir(dir.path())
        .output()
        .expect("fsbench runs");
    assert!(out.status.success(), "fsbench failed: {}", String::from_utf8_lossy(&out.stderr));
    (json_doc(&out.stdout, "fsbench"), dir)
}

fn close(a: u64, b: u64) -> bool {
    a.abs_diff(b) as f64 <= 0.01 * a.max(b) as f64
}

/// Both tools, same job file: every job's bytes and I/O count per direction
/// within 1%.
fn same_work_as_fio(job: &str) {
    let Some((fio, _d)) = run_fio(job) else { return };
    let (ours, _e) = run_fsbench(job);
    let (want, got) = (counts(&fio), counts(&ours));
    assert_eq!(want.len(), got.len(), "job count: fio {want:?}, fsbench {got:?}");
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(w.0, g.0);
        let ok = close(w.1, g.1) && close(w.2, g.2) && close(w.3, g.3) && close(w.4, g.4);
        assert!(
            ok,
            "job {}: fio R {} B/{} ios W {} B/{} ios; fsbench R {} B/{} ios W {} B/{} ios",
            w.0, w.1, w.2, w.3, w.4, g.1, g.2, g.3, g.4
        );
    }
}

#[test]
fn variable_block_sizes_do_the_same_io_as_fio() {
    // The null engine does fio's offset and size arithmetic without files,
    // so 2 GiB gives ~10^5 I/Os: enough for 1% on random block sizes.
    same_work_as_fio(
        "[global]\nioengine=null\nsize=2g\n\
         [bsrange_map]\nrw=randread\nbsrange=4k-64k\n\
         [bssplit_map]\nrw=randwrite\nbssplit=4k/30:16k/50:64k/20\n\
         [bssplit_seq]\nrw=write\nbssplit=4k/30:16k/50:60k/20\n\
         [bsrange_seq]\nrw=read\nbsrange=4k-64k\n\
         [bsrange_nomap]\nrw=randread\nbsrange=4k-64k\nnorandommap\n\
         [mixed_split]\nrw=randrw\nbssplit=4k/30:16k/50:64k/20,4k/50:32k/50\n",
    );
}

#[test]
fn offset_and_count_options_do_the_same_io_as_fio() {
    same_work_as_fio(
        "[global]\ndirectory=@DIR@\nsize=4m\nbs=4k\n\
         [backwards]\nrw=read:-8k\n\
         [holes]\nrw=write:4k\n\
         [every8]\nrw=randread:8\n\
         [filesize]\nfilesize=1m\nnrfiles=3\nrw=read\n\
         [number_ios]\nrw=randread\nnumber_ios=100\n\
         [blockalign]\nrw=randread\nblockalign=64k\n\
         [strided]\nrw=read\nsize=16m\nzonemode=strided\nzonesize=1m\nzoneskip=3m\n\
         [zoned]\nrw=randread\nnorandommap\nrandom_distribution=zoned:50/5:30/15:20/\n",
    );
}

#[test]
fn offset_increment_places_clones_like_fio() {
    let job = "[oi]\nfilename=@DIR@/shared\nrw=write\nbs=4k\nsize=1m\noffset_increment=2m\nnumjobs=3\n";
    let Some((fio, fdir)) = run_fio(job) else { return };
    let (ours, odir) = run_fsbench(job);
    assert_eq!(counts(&fio), counts(&ours));
    let len = |d: &Path| std::fs::metadata(d.join("shared")).unwrap().len();
    // Clone 2 writes [4m, 5m): the file ends there with both tools.
    assert_eq!(len(fdir.path()), 5 << 20);
    assert_eq!(len(odir.path()), 5 << 20);
}

/// `op offset` pairs of the reads in an fsbench I/O log.
fn logged_offsets(log: &Path) -> Vec<u64> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // fsbench: "FILE read OFF LEN"; fio 3: "TIME FILE read OFF LEN".
            let at = f.iter().position(|w| *w == "read")?;
            (f.len() == at + 3).then(|| f[at + 1].parse().unwrap())
        })
        .collect()
}

/// Blocks per hit count, hottest first.
fn block_hits(offs: &[u64], bs: u64) -> Vec<u64> {
    let mut m = std::collections::HashMap::new();
    for o in offs {
        *m.entry(o / bs).or_insert(0u64) += 1;
    }
    let mut v: Vec<u64> = m.into_values().collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v
}

fn distribution_offsets(dist: &str, tool_fio: bool) -> Option<Vec<u64>> {
    let job =
        format!("[d]\nioengine=null\nrw=randread\nbs=4k\nsize=64m\nnorandommap\nrandom_distribution={dist}\nwrite_iolog=@DIR@/io.log\n");
    let (_, dir) = if tool_fio { run_fio(&job)? } else { run_fsbench(&job) };
    Some(logged_offsets(&dir.path().join("io.log")))
}

#[test]
fn random_distributions_have_fios_shape() {
    let size = 64u64 << 20;
    // zoned: half the I/O in the first 5% of the file, 30% in the next 15%.
    for fio in [false, true] {
        let Some(offs) = distribution_offsets("zoned:50/5:30/15:20/80", fio) else { return };
        assert_eq!(offs.len(), 16384, "fio={fio}");
        let share =
            |lo: u64, hi: u64| offs.iter().filter(|&&o| o >= lo * size / 100 && o < hi * size / 100).count() as f64 / offs.len() as f64;
        assert!((0.47..0.53).contains(&share(0, 5)), "fio={fio}: first zone {}", share(0, 5));
        assert!((0.27..0.33).contains(&share(5, 20)), "fio={fio}: second zone {}", share(5, 20));
    }
    // zipf:1.2: the hottest block takes about a fifth of all reads (uniform:
    // 1/16384 each, so a handful at most).
    let top = |offs: &[u64]| block_hits(offs, 4096)[0] as f64 / offs.len() as f64;
    let ours = top(&distribution_offsets("zipf:1.2", false).unwrap());
    assert!(ours > 0.15, "zipf hottest block {ours}");
    if let Some(f) = distribution_offsets("zipf:1.2", true) {
        assert!((ours - top(&f)).abs() < 0.05, "zipf hottest block: fsbench {ours}, fio {}", top(&f));
    }
    let uniform = top(&distribution_offsets("random", false).unwrap());
    assert!(uniform < 0.001, "uniform hottest block {uniform}");
    // pareto:0.9: a small set of blocks takes most reads.
    let p = distribution_offsets("pareto:0.9", false).unwrap();
    let hits = block_hits(&p, 4096);
    let top_tenth: u64 = hits.iter().take(1638).sum();
    assert!(top_tenth as f64 > 0.6 * p.len() as f64, "pareto top 10% of blocks: {top_tenth} of {}", p.len());
    // normal:10: fio scatters the drawn blocks over the file (hashed), so
    // the shape is in the counts: the hottest fifth of the blocks takes
    // about 80% of the reads.
    let hot_fifth = |offs: &[u64]| block_hits(offs, 4096).iter().take(3277).sum::<u64>() as f64 / offs.len() as f64;
    let ours = hot_fifth(&distribution_offsets("normal:10", false).unwrap());
    assert!((0.70..0.88).contains(&ours), "normal: hottest fifth of blocks {ours}");
    if let Some(f) = distribution_offsets("normal:10", true) {
        assert!((ours - hot_fifth(&f)).abs() < 0.06, "normal hottest fifth: fsbench {ours}, fio {}", hot_fifth(&f));
    }
}

#[test]
fn null_engine_creates_no_file_and_char_devices_work() {
    let (v, dir) = run_fsbench("[n]\nioengine=null\ndirectory=@DIR@\nrw=write\nsize=8m\n");
    assert_eq!(counts(&v)[0].3, 8 << 20);
    let names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["job.fio"], "the null engine touches no file");
    let (v, _d) = run_fsbench("[w]\nfilename=/dev/null\nrw=write\nsize=1m\n[r]\nfilename=/dev/zero\nrw=randread\nsize=1m\n");
    let c = counts(&v);
    assert_eq!((c[0].3, c[0].4), (1 << 20, 256));
    assert_eq!((c[1].1, c[1].2), (1 << 20, 256));
}

#[test]
fn ramp_inside_a_size_based_job_reports_the_whole_job() {
    // The job ends long before its ramp would: fio then reports all it did.
    let (v, _d) = run_fsbench("[r]\ndirectory=@DIR@\nrw=write\nsize=2m\nramp_time=30\n");
    assert_eq!(counts(&v)[0], ("r".to_string(), 0, 0, 2 << 20, 512));
}

#[test]
fn wait_for_starts_a_job_after_the_one_it_names() {
    // 50 I/Os 10 ms apart: each job takes about half a second.
    let job = "[global]\ndirectory=@DIR@\nsize=200k\nbs=4k\nthinktime=10ms\n\
               [a]\nrw=write\nwrite_iolog=@DIR@/a.log\n[b]\nwait_for=a\nrw=write\nwrite_iolog=@DIR@/b.log\n";
    let dir = disk_tempdir();
    let file = dir.path().join("job.fio");
    std::fs::write(&file, job.replace("@DIR@", &dir.path().display().to_string())).unwrap();
    let out = fsbench().arg("fio").arg(&file).args(["--output-format=json", "--no-progress"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v = json_doc(&out.stdout, "fsbench");
    let wall = v["groups"][0]["elapsed_ns"].as_u64().unwrap() as f64 / 1e9;
    let job_s = |i: usize| v["jobs"][i]["elapsed_ns"].as_u64().unwrap() as f64 / 1e9;
    assert!(wall >= 0.95 * (job_s(0) + job_s(1)), "one group, but b ran after a: wall {wall} s, jobs {} s + {} s", job_s(0), job_s(1));
    // b's log is created when b starts, after a's last write to its own.
    let created = |n: &str| std::fs::metadata(dir.path().join(n)).unwrap().modified().unwrap();
    let a_end = created("a.log");
    let b_end = created("b.log");
    assert!(b_end.duration_since(a_end).expect("b ends after a") >= std::time::Duration::from_millis(300));
}

#[test]
fn continue_on_error_goes_past_listed_errors_and_counts_them_as_fio() {
    // /dev/full fails every write with ENOSPC.
    let job = "[full]\nfilename=/dev/full\nrw=write\nsize=1m\ncontinue_on_error=write\nignore_error=,ENOSPC\n";
    let (ours, _d) = run_fsbench(job);
    let j = &ours["jobs"][0];
    assert_eq!(
        (j["total_err"].as_u64(), j["write"]["io_bytes"].as_u64(), j["write"]["total_ios"].as_u64()),
        (Some(256), Some(0), Some(256))
    );
    if let Some((fio, _e)) = run_fio(job) {
        assert_eq!(fio["jobs"][0]["total_err"], j["total_err"]);
        assert_eq!(counts(&fio), counts(&ours));
    }
    // Without ENOSPC in the list (the default is EIO, EILSEQ) the first error stops the job.
    let dir = disk_tempdir();
    let file = dir.path().join("job.fio");
    std::fs::write(&file, "[full]\nfilename=/dev/full\nrw=write\nsize=1m\ncontinue_on_error=write\n").unwrap();
    let out = fsbench().arg("fio").arg(&file).args(["--output-format=json", "--no-progress"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(text.contains("No space left on device"), "{text}");
    let v = json_doc(&out.stdout, "fsbench");
    assert_eq!(op(&v, 0, "write")["errors"], 1);
}

#[test]
fn allow_file_create_0_refuses_a_missing_file() {
    let dir = disk_tempdir();
    let file = dir.path().join("job.fio");
    std::fs::write(&file, format!("[j]\ndirectory={}\nrw=write\nsize=1m\nallow_file_create=0\n", dir.path().display())).unwrap();
    let out = fsbench().arg("fio").arg(&file).arg("--no-progress").output().unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("allow_file_create=0"), "{err}");
    assert!(!dir.path().join("j.0.0").exists());
}

#[test]
fn time_based_bssplit_moves_fios_bytes_per_io() {
    // Issue 10: a time-based bssplit job once moved 16.6x fio's bytes for
    // the same I/O count. The count depends on the machine; the mean size
    // of an I/O does not.
    let job = "[global]\ndirectory=@DIR@\nsize=16m\ntime_based\nruntime=1\n[s]\nrw=randrw\nbssplit=4k/50:64k/30:256k/20\n";
    let Some((fio, _d)) = run_fio(job) else { return };
    let (ours, _e) = run_fsbench(job);
    let per_io = |c: &Counts| (c[0].1 + c[0].3) as f64 / (c[0].2 + c[0].4) as f64;
    let (f, o) = (per_io(&counts(&fio)), per_io(&counts(&ours)));
    assert!((o / f - 1.0).abs() < 0.05, "bytes per I/O: fio {f}, fsbench {o}");
}

/// flow: two jobs of one flow keep their I/O counts in their weights'
/// proportion (1:8), as fio's do. The band is wide below 8: a job that
/// ends takes its weight out, so whichever clone's window ends last runs
/// free for the moments between the two ends, which a loaded machine
/// stretches (6.05 seen over 1 s with four builds running).
#[test]
fn flow_keeps_the_weights_proportion() {
    let dir = tempfile::tempdir().unwrap();
    let f = format!("--filename={}", dir.path().join("f").display());
    let out = common::fsbench()
        .arg("fio")
        .args([&f, "--size=8m", "--bs=8k", "--runtime=2", "--time_based", "--name=a", "--rw=write", "--flow=1"])
        .args(["--name=b", "--rw=randread", "--flow=8", "--output-format=fio-json", "--no-progress"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let a = v["jobs"][0]["write"]["total_ios"].as_f64().unwrap();
    let b = v["jobs"][1]["read"]["total_ios"].as_f64().unwrap();
    assert!(a > 100.0, "job a ran: {a}");
    let ratio = b / a;
    assert!((6.5..9.0).contains(&ratio), "b/a = {ratio} ({b} / {a}), expected about 8");
}

/// Write `job` (with `@DIR@` replaced by a fresh directory) and run it with
/// fsbench, success or not; its fio-json document, exit status and stderr.
fn run_fsbench_any(job: &str, format: &str) -> (Value, bool, String, tempfile::TempDir) {
    let dir = disk_tempdir();
    let file = dir.path().join("job.fio");
    std::fs::write(&file, job.replace("@DIR@", &dir.path().display().to_string())).unwrap();
    let out = fsbench()
        .arg("fio")
        .arg(&file)
        .arg(format!("--output-format={format}"))
        .arg("--no-progress")
        .current_dir(dir.path())
        .output()
        .expect("fsbench runs");
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    (json_doc(&out.stdout, "fsbench"), out.status.success(), err, dir)
}

/// fio, success or not: its JSON document, exit status and all it printed.
fn run_fio_any(job: &str) -> Option<(Value, bool, String)> {
    if !have("fio") {
        skip("fio is not installed");
        return None;
    }
    let dir = disk_tempdir();
    let file = dir.path().join("job.fio");
    std::fs::write(&file, job.replace("@DIR@", &dir.path().display().to_string())).unwrap();
    let out = Command::new("fio").arg("--output-format=json").arg(&file).current_dir(dir.path()).output().expect("fio runs");
    let text = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    Some((json_doc(&out.stdout, "fio"), out.status.success(), text))
}

/// A fio-json job's runtime in ms, by name; None when it is not listed.
fn job_ms(doc: &Value, name: &str) -> Option<u64> {
    doc["jobs"].as_array()?.iter().find(|j| j["jobname"] == name).map(|j| j["job_runtime"].as_u64().expect("job_runtime"))
}

/// A short job with exitall stops the long one of its group near its own
/// end (thinktime keeps the jobs from taking a CPU each from the tests
/// alongside); the next group runs after exit_what=group and =stonewall, not after
/// =all (fio lists it with no runtime; fsbench leaves it out and says so).
#[test]
fn exitall_stops_the_group_and_exit_what_decides_whether_the_next_runs() {
    let job = |what: &str| {
        format!(
            "[global]\nioengine=null\nsize=1g\nbs=4k\nrw=write\ntime_based\nthinktime=1ms\n\
             [short]\nruntime=500ms\nexitall\nexit_what={what}\n[long]\nruntime=8\n[next]\nstonewall\nruntime=500ms\n"
        )
    };
    for what in ["group", "stonewall", "all"] {
        let (v, ok, err, _d) = run_fsbench_any(&job(what), "fio-json");
        assert!(ok, "exit_what={what}: {err}");
        let long = job_ms(&v, "long").expect("long is reported");
        assert!((300..2000).contains(&long), "exit_what={what}: long ran {long} ms, short 500 ms");
        assert_eq!(v["jobs"][1]["error"], 0, "a stopped job has not failed");
        let next = job_ms(&v, "next");
        if what == "all" {
            assert_eq!(next, None, "exit_what=all: the next group must not run");
            assert!(err.contains("did not run"), "{err}");
        } else {
            assert!(next.is_some_and(|ms| ms >= 400), "exit_what={what}: next ran {next:?} ms");
        }
    }
    let Some((fio, ok, text)) = run_fio_any(&job("all")) else { return };
    assert!(ok, "{text}");
    assert!(job_ms(&fio, "long").is_some_and(|ms| ms < 2000), "fio's long job: {:?}", job_ms(&fio, "long"));
    assert_eq!(job_ms(&fio, "next"), Some(0), "fio does not run the next group either");
}

/// A job's total I/Os in a fio-json document, by name; None when it is not listed.
fn job_ios(doc: &Value, name: &str) -> Option<u64> {
    let j = doc["jobs"].as_array()?.iter().find(|j| j["jobname"] == name)?;
    Some(j["read"]["total_ios"].as_u64().expect("total_ios") + j["write"]["total_ios"].as_u64().expect("total_ios"))
}

fn groupids(doc: &Value) -> Vec<u64> {
    doc["jobs"].as_array().expect("jobs").iter().map(|j| j["groupid"].as_u64().expect("groupid")).collect()
}

/// new_group starts a reporting group, not a wait: two 2 s jobs run at the
/// same time (about 2 s in all, not 4) and report as groups 0 and 1, in
/// fsbench's own JSON (one run-together group holding both), in fio-json,
/// terse and the text layout, as fio does. stonewall still waits.
#[test]
fn new_group_reports_apart_but_runs_alongside() {
    let job = |extra: &str| {
        format!("[global]\nioengine=null\nsize=1g\nbs=4k\nrw=write\ntime_based\nruntime=2\nthinktime=1ms\n[a]\n[b]\n{extra}\n")
    };
    let t = std::time::Instant::now();
    let (v, ok, err, _d) = run_fsbench_any(&job("new_group"), "json");
    let took = t.elapsed().as_secs_f64();
    assert!(ok, "{err}");
    assert!(took < 3.2, "new_group jobs must overlap: the run took {took:.2} s");
    let jobs = v["jobs"].as_array().unwrap();
    assert_eq!(jobs.iter().map(|j| j["group"].as_u64().unwrap()).collect::<Vec<_>>(), [0, 1]);
    for j in jobs {
        let ms = j["elapsed_ns"].as_u64().unwrap() / 1_000_000;
        assert!((1900..2300).contains(&ms), "{} ran {ms} ms", j["name"]);
    }
    assert_eq!(v["groups"].as_array().unwrap().len(), 1, "one window measured: {}", v["groups"]);
    assert_eq!(v["groups"][0]["group"], 0);
    assert_eq!(v["groups"][0]["ran_with"], serde_json::json!([1]));
    // The other formats, over shorter runs.
    let short = |extra: &str| job(extra).replace("runtime=2", "runtime=500ms");
    let (f, ok, err, d) = run_fsbench_any(&short("new_group"), "fio-json");
    assert!(ok, "{err}");
    assert_eq!(groupids(&f), [0, 1]);
    let file = d.path().join("job.fio");
    let out = fsbench().arg("fio").arg(&file).args(["--output-format=fio-terse", "--no-progress"]).output().unwrap();
    let terse = String::from_utf8_lossy(&out.stdout);
    let gids: Vec<&str> = terse.lines().filter_map(|l| l.split(';').nth(3)).collect();
    assert_eq!(gids, ["0", "1"], "terse groupid: {terse}");
    let out = fsbench().arg("fio").arg(&file).arg("--no-progress").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("group 0 (ran alongside group 1):") && text.contains("group 1 (ran alongside group 0):"), "{text}");
    assert!(text.contains("group 0+1: "), "{text}");

    let t = std::time::Instant::now();
    let (v, ok, err, _d) = run_fsbench_any(&short("stonewall"), "json");
    let took = t.elapsed().as_secs_f64();
    assert!(ok, "{err}");
    assert!(took >= 0.95, "stonewall must wait for a: the run took {took:.2} s");
    assert_eq!(v["groups"].as_array().unwrap().len(), 2);

    let t = std::time::Instant::now();
    let Some((fio, ok, text)) = run_fio_any(&job("new_group")) else { return };
    assert!(ok, "{text}");
    assert_eq!(groupids(&fio), [0, 1]);
    assert!(t.elapsed().as_secs_f64() < 3.5, "fio runs them together too");
}

/// fio's exitwhat.fio, scaled down (150 I/Os 2 ms apart for the slow jobs,
/// 1 s runtimes, rate=300k for 300, as fio notices a stop only after a rate
/// sleep of up to 2 s): slow1 and fast1 are reporting groups 0 and 1 that
/// run together; slow2, fast2 and runsnever run after them as group 2.
fn exitwhat(slow1_exit_what: &str) -> String {
    let fast = "rw=randrw\nnumjobs=3\nioengine=libaio\niodepth=32\nrate=300k,300k,300k\nruntime=1\n";
    format!(
        "[global]\nfilename=@DIR@/test\nfilesize=16m\nblocksize=4096\ngroup_reporting\nexitall=1\n\
         [slow1]\nrw=read\nnumjobs=1\nioengine=sync\nnew_group=1\nthinktime=2000\nnumber_ios=150\nexit_what={slow1_exit_what}\n\
         [fast1]\nnew_group=1\n{fast}\
         [slow2]\nstonewall\nrw=write\nnumjobs=1\nioengine=sync\nnew_group=1\nthinktime=2000\nnumber_ios=150\nexit_what=all\n\
         [fast2]\n{fast}[runsnever]\n{fast}"
    )
}

/// Per tool: the units reported (name, groupid) and fast1's and slow2's I/Os.
fn exitwhat_check(doc: &Value, who: &str, what: &str) {
    let units: Vec<(String, u64)> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| (j["jobname"].as_str().unwrap().to_string(), j["groupid"].as_u64().unwrap()))
        .collect();
    let want: &[(&str, u64)] =
        if what == "all" && who == "fsbench" { &[("slow1", 0), ("fast1", 1)] } else { &[("slow1", 0), ("fast1", 1), ("slow2", 2)] };
    let want: Vec<(String, u64)> = want.iter().map(|(n, g)| (n.to_string(), *g)).collect();
    assert_eq!(units, want, "{who}, exit_what={what}: the reporting groups, merged by group_reporting");
    assert_eq!(job_ios(doc, "slow1"), Some(150), "{who}, exit_what={what}");
    // fast1's 3 clones move about 146 I/Os a second each at 300k per direction.
    let fast1 = job_ios(doc, "fast1").unwrap();
    if what == "group" {
        assert!(fast1 > 350, "{who}: exit_what=group leaves fast1 (another group) to its runtime: {fast1} I/Os");
    } else {
        assert!(fast1 < 250, "{who}: exit_what={what} stops fast1 when slow1 ends: {fast1} I/Os");
    }
    let slow2 = job_ios(doc, "slow2");
    if what == "all" {
        assert!(slow2.is_none_or(|n| n == 0), "{who}: exit_what=all: nothing after slow1's group runs: {slow2:?}");
    } else {
        // slow2's own 150, with fast2 and runsnever (the same reporting group) stopped when it ends.
        assert!(slow2.is_some_and(|n| (151..800).contains(&n)), "{who}, exit_what={what}: slow2's group: {slow2:?}");
    }
}

fn exitwhat_as_fio(what: &str) {
    let job = exitwhat(what);
    let (v, ok, err, _d) = run_fsbench_any(&job, "fio-json");
    assert!(ok, "{err}");
    exitwhat_check(&v, "fsbench", what);
    if what == "all" {
        assert!(err.contains("job(s) slow2, fast2, runsnever did not run"), "{err}");
    }
    if let Some((fio, ok, text)) = run_fio_any(&job) {
        assert!(ok, "{text}");
        exitwhat_check(&fio, "fio", what);
    }
}

#[test]
fn exitwhat_fio_with_exit_what_group_leaves_the_other_reporting_group_running() {
    exitwhat_as_fio("group");
}

#[test]
fn exitwhat_fio_with_exit_what_stonewall_stops_every_running_job() {
    exitwhat_as_fio("stonewall");
}

#[test]
fn exitwhat_fio_with_exit_what_all_stops_everything() {
    exitwhat_as_fio("all");
}

/// A job below its ratemin fails with fio's words (the job's error is EIO
/// in fio-json, the run exits non-zero); exitall_on_error stops its group's
/// other job then, and the next group still runs (exit_what=group).
#[test]
fn ratemin_not_met_fails_the_job_as_in_fio() {
    // thinktime=10ms keeps a 4k job near 400 KiB/s, below 1m; 1 ms keeps
    // the others from taking a CPU each from the tests alongside.
    let job = "[global]\nioengine=null\nsize=1g\nbs=4k\nrw=write\ntime_based\nthinktime=1ms\n\
               [slow]\nthinktime=10ms\nratemin=1m\nratecycle=500\nruntime=10\nexitall_on_error\n\
               [long]\nruntime=10\n[next]\nstonewall\nruntime=300ms\n";
    let (v, ok, err, _d) = run_fsbench_any(job, "fio-json");
    assert!(!ok, "a job below its minimum rate fails the run");
    assert!(err.contains("job 'slow'") && err.contains("rate_min=1048576B/s not met, got "), "{err}");
    assert_eq!(v["jobs"][0]["error"], libc::EIO);
    // 2 s to settle, a ratecycle to measure.
    let slow = job_ms(&v, "slow").unwrap();
    assert!((2400..4500).contains(&slow), "slow failed after {slow} ms");
    let long = job_ms(&v, "long").unwrap();
    assert!(long < slow + 1500, "exitall_on_error stops long: {long} ms, slow {slow} ms");
    assert_eq!(v["jobs"][1]["error"], 0);
    assert!(job_ms(&v, "next").is_some_and(|ms| ms >= 250), "the next group runs: {:?}", job_ms(&v, "next"));
    if let Some((fio, ok, text)) = run_fio_any(job) {
        assert!(!ok && text.contains("slow: rate_min=1048576B/s not met, got "), "{text}");
        assert_eq!(fio["jobs"][0]["error"], libc::EIO);
        assert!(job_ms(&fio, "long").unwrap() < job_ms(&fio, "slow").unwrap() + 1500);
    }
    // The I/O count kind, in fio's words too.
    let job = "[i]\nioengine=null\nsize=1g\nbs=4k\nrw=read\nthinktime=10ms\nrate_iops_min=200\nratecycle=500\nruntime=10\ntime_based\n";
    let (_v, ok, err, _d) = run_fsbench_any(job, "fio-json");
    assert!(!ok && err.contains("rate_iops_min=200 not met, got ") && err.contains(" IOPS"), "{err}");
}

/// A minimum the job keeps passes: rate=2m against ratemin=1m, per direction.
#[test]
fn ratemin_met_passes() {
    let job = "[r]\nioengine=null\nsize=1g\nbs=4k\nrw=rw\nrate=2m\nratemin=1m\nratecycle=400\nruntime=3\ntime_based\n";
    let (v, ok, err, _d) = run_fsbench_any(job, "fio-json");
    assert!(ok, "{err}");
    assert_eq!(v["jobs"][0]["error"], 0);
    let bw = v["jobs"][0]["write"]["bw_bytes"].as_f64().unwrap();
    assert!(bw > 1.5e6, "the rate held: {bw} B/s");
}

/// The gaps between I/O completions (ms, from a lat log of every I/O).
fn gaps_ms(log: &Path) -> Vec<f64> {
    let t: Vec<f64> = std::fs::read_to_string(log)
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()))
        .lines()
        .filter_map(|l| l.split(',').next()?.trim().parse().ok())
        .collect();
    t.windows(2).map(|w| w[1] - w[0]).collect()
}

/// (mean, coefficient of variation)
fn mean_cv(x: &[f64]) -> (f64, f64) {
    let n = x.len() as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    (mean, var.sqrt() / mean)
}

/// rate_process=poisson spaces I/Os by exponential gaps (coefficient of
/// variation near 1) at the same mean rate; linear spaces them evenly.
#[test]
fn poisson_rate_process_has_exponential_gaps_at_the_same_mean() {
    let job = |process: &str| {
        format!(
            "[p]\nioengine=null\nsize=1g\nbs=4k\nrw=randwrite\nrate_iops=250\nrate_process={process}\n\
             runtime=2\ntime_based\nwrite_lat_log=@DIR@/p\nlog_avg_msec=0\n"
        )
    };
    let (_v, ok, err, d) = run_fsbench_any(&job("poisson"), "fio-json");
    assert!(ok, "{err}");
    let (mean, cv) = mean_cv(&gaps_ms(&d.path().join("p_lat.1.log")));
    assert!((3.4..4.6).contains(&mean), "poisson: mean gap {mean} ms, expected 4 (250 IOPS)");
    assert!((0.75..1.3).contains(&cv), "poisson: coefficient of variation {cv}, expected about 1");
    let (_v, ok, err, d) = run_fsbench_any(&job("linear"), "fio-json");
    assert!(ok, "{err}");
    let (mean, cv) = mean_cv(&gaps_ms(&d.path().join("p_lat.1.log")));
    assert!((3.6..4.4).contains(&mean), "linear: mean gap {mean} ms");
    assert!(cv < 0.5, "linear: coefficient of variation {cv}, expected near 0");
    if !have("fio") {
        return;
    }
    let fdir = disk_tempdir();
    let file = fdir.path().join("job.fio");
    std::fs::write(&file, job("poisson").replace("@DIR@", &fdir.path().display().to_string())).unwrap();
    let out = Command::new("fio").arg(&file).current_dir(fdir.path()).output().expect("fio runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (mean, cv) = mean_cv(&gaps_ms(&fdir.path().join("p_lat.1.log")));
    assert!((3.4..4.6).contains(&mean) && (0.75..1.3).contains(&cv), "fio's poisson: mean {mean} ms, cv {cv}");
}
