//! Whole-parser tests: job files, command lines, bad input and fuzzing.

use super::*;
use crate::model::job::{BlockSize, RwKind, READ, WRITE};
use std::path::Path;
use std::time::Duration;

/// A fixed environment so tests never touch the process environment.
fn env(name: &str) -> Option<String> {
    match name {
        "FSB_DIR" => Some("/mnt/test".into()),
        "FSB_BS" => Some("8k".into()),
        _ => None,
    }
}

fn run(text: &str, args: &[&str], opts: &ParseOptions) -> Result<Parsed, FioError> {
    let entries = ini::read_text("job.fio", text.as_bytes(), Path::new("."))?;
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    parse_entries(vec![("job.fio".into(), entries)], &args, opts, &env)
}

fn jobs(text: &str) -> Vec<JobSpec> {
    run(text, &[], &ParseOptions::default()).unwrap_or_else(|e| panic!("{e}")).jobs
}

fn cli(args: &[&str]) -> Result<Parsed, FioError> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    parse_entries(Vec::new(), &args, &ParseOptions::default(), &env)
}

fn err(text: &str) -> FioError {
    match run(text, &[], &ParseOptions::default()) {
        Ok(p) => panic!("expected an error, got {:?}", p.jobs),
        Err(e) => e,
    }
}

/// Check an error's location and that its message contains `msg`.
fn assert_at(e: &FioError, line: u32, col: u32, section: Option<&str>, option: Option<&str>, msg: &str) {
    assert_eq!(e.source, "job.fio", "{e}");
    assert_eq!((e.line, e.col), (Some(line), Some(col)), "{e}");
    assert_eq!(e.section.as_deref(), section, "{e}");
    assert_eq!(e.option.as_deref(), option, "{e}");
    assert!(e.message.contains(msg), "'{}' lacks '{msg}'", e.message);
}

const SEED: &str = "\
[global]
ioengine=libaio
direct=1
ramp_time=60
size=40G
iodepth=1
runtime=3600
bs =4k
time_based
group_reporting
norandommap
stonewall
[read-4k-para]
filename=/tmp/ssd/rtest
rw=read
[write-4k-para]
filename=/tmp/ssd/wtest
rw=write
";

fn check_seed_common(j: &JobSpec, size: u64, runtime: u64) {
    assert_eq!(j.ioengine, "libaio");
    assert!(j.direct);
    assert_eq!(j.ramp_time, Duration::from_secs(60));
    assert_eq!(j.size, Some(size));
    assert_eq!(j.iodepth, 1);
    assert_eq!(j.runtime, Some(Duration::from_secs(runtime)));
    assert_eq!(j.bs, [BlockSize::Fixed(4096), BlockSize::Fixed(4096)]);
    assert!(j.time_based && j.group_reporting && j.norandommap && j.stonewall);
    // Untouched options keep fio's defaults.
    let d = JobSpec::new("x");
    assert_eq!((j.numjobs, j.loops, j.nrfiles, j.offset, j.io_size), (d.numjobs, d.loops, d.nrfiles, d.offset, d.io_size));
    assert_eq!((j.randrepeat, j.invalidate, j.fallocate, j.sync), (d.randrepeat, d.invalidate, d.fallocate, d.sync));
}

#[test]
fn seed_paper_job_file() {
    let js = jobs(SEED);
    assert_eq!(js.len(), 2);
    let (r, w) = (&js[0], &js[1]);
    assert_eq!((r.name.as_str(), r.rw), ("read-4k-para", RwKind::Read));
    assert_eq!((w.name.as_str(), w.rw), ("write-4k-para", RwKind::Write));
    assert_eq!(r.filenames, [PathBuf::from("/tmp/ssd/rtest")]);
    assert_eq!(w.filenames, [PathBuf::from("/tmp/ssd/wtest")]);
    for j in &js {
        check_seed_common(j, 40 << 30, 3600);
    }
    let keys: Vec<&str> = r.options.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        [
            "ioengine",
            "direct",
            "ramp_time",
            "size",
            "iodepth",
            "runtime",
            "bs",
            "time_based",
            "group_reporting",
            "norandommap",
            "stonewall",
            "filename",
            "rw"
        ]
    );
    assert_eq!(r.options[6], ("bs".to_string(), "4k".to_string()));
    assert_eq!(r.options[7], ("time_based".to_string(), String::new()));
}

#[test]
fn seed_paper_with_command_line_overrides() {
    let p = run(SEED, &["--size=64m", "--runtime=5"], &ParseOptions::default()).unwrap();
    for j in &p.jobs {
        check_seed_common(j, 64 << 20, 5);
        let last = &j.options[j.options.len() - 2..];
        assert_eq!(last, [("size".to_string(), "64m".to_string()), ("runtime".to_string(), "5".to_string())]);
    }
}

#[test]
fn bare_and_repeated_keys() {
    let j = &jobs("[j]\nbs=4k\nbs=8k\ntime_based\nruntime=10\nfilename=a\nfilename=b\nend_fsync\nsync\n")[0];
    assert_eq!(j.bs[READ], BlockSize::Fixed(8192));
    assert_eq!(j.sync, crate::model::job::SyncMode::Sync);
    assert_eq!(j.filenames, [PathBuf::from("b")]);
    assert!(j.time_based && j.end_fsync);
    assert_eq!(j.options.iter().filter(|(k, _)| k == "bs").count(), 2);
}

#[test]
fn comments_and_spacing() {
    let text = "; leading\n# hash\n[j]   # after header\n  bs =  16k   ; trailing\nfilename=/a#b\nrw = randread\t# tab\n\n";
    let j = &jobs(text)[0];
    assert_eq!(j.bs[WRITE], BlockSize::Fixed(16384));
    assert_eq!(j.filenames, [PathBuf::from("/a#b")]);
    assert_eq!(j.rw, RwKind::RandRead);
}

#[test]
fn global_applies_only_to_later_jobs() {
    let js = jobs("[a]\n[global]\nbs=8k\n[b]\n[global]\niodepth=4\n[c]\nbs=2k\n");
    assert_eq!(js[0].bs[READ], BlockSize::Fixed(4096));
    assert_eq!((js[1].bs[READ].clone(), js[1].iodepth), (BlockSize::Fixed(8192), 1));
    assert_eq!((js[2].bs[READ].clone(), js[2].iodepth), (BlockSize::Fixed(2048), 4));
    assert_eq!(js[2].options[0], ("bs".to_string(), "8k".to_string()));
}

#[test]
fn environment_keywords_and_arithmetic() {
    let j = &jobs(
        "[j]\ndirectory=${FSB_DIR}\nfilename=f\nbs=${FSB_BS}\nnumjobs=$ncpus\nsize=8*$mb_memory\nio_size=(1024*2)m\noffset=$pagesize\n",
    )[0];
    assert_eq!(j.filenames, [PathBuf::from("/mnt/test/f")]);
    assert_eq!(j.bs[READ], BlockSize::Fixed(8192));
    assert_eq!(u64::from(j.numjobs), expand::ncpus());
    assert_eq!(j.size, Some(8 * expand::mb_memory()));
    assert_eq!(j.io_size, Some(2048 << 20));
    assert_eq!(j.offset, expand::pagesize());
    assert_eq!(j.options[1], ("filename".to_string(), "f".to_string()));
    assert_eq!(j.options[2], ("bs".to_string(), "8k".to_string()));
    let j = &jobs("[j]\nbs=(2*4)k\niodepth=2^4\n")[0];
    assert_eq!((j.bs[READ].clone(), j.iodepth), (BlockSize::Fixed(8192), 16));
}

#[test]
fn kb_base_quirk() {
    let js = jobs("[a]\nsize=1kib\nbs=1k\n[global]\nkb_base=1000\n[b]\nsize=1kib\nbs=1k\n");
    assert_eq!((js[0].size, js[0].bs[READ].clone()), (Some(1000), BlockSize::Fixed(1024)));
    assert_eq!((js[1].size, js[1].bs[READ].clone()), (Some(1024), BlockSize::Fixed(1000)));
}

#[test]
fn filename_joined_with_later_directory() {
    let j = &jobs("[j]\nfilename=a:b\\:c:/abs\ndirectory=/d\nnumjobs=4\n")[0];
    assert_eq!(j.filenames, [PathBuf::from("/d/a"), PathBuf::from("/d/b:c"), PathBuf::from("/abs")]);
    assert_eq!(j.numjobs, 4);
}

#[test]
fn include_relative_to_the_including_file() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/common.fio"), "bs=64k\ninclude more.fio\n").unwrap();
    std::fs::write(dir.path().join("sub/more.fio"), "[second]\nrw=write\n").unwrap();
    let main = dir.path().join("main.fio");
    std::fs::write(&main, "[global]\ninclude sub/common.fio\n[first]\nrw=randwrite\n").unwrap();
    let p = parse(&[main], &[], &ParseOptions::default()).unwrap();
    // common.fio adds bs to [global]; more.fio adds job [second] before [first].
    let names: Vec<&str> = p.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["second", "first"]);
    assert!(p.jobs.iter().all(|j| j.bs[READ] == BlockSize::Fixed(65536)));
    assert_eq!(p.jobs[1].rw, RwKind::RandWrite);
}

#[test]
fn each_file_starts_with_fresh_globals() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.fio"), dir.path().join("b.fio"));
    std::fs::write(&a, "[global]\nbs=8k\n[a]\n").unwrap();
    std::fs::write(&b, "[b]\n").unwrap();
    let p = parse(&[a, b], &["--iodepth=8".to_string()], &ParseOptions::default()).unwrap();
    assert_eq!(p.jobs[0].bs[READ], BlockSize::Fixed(8192));
    assert_eq!(p.jobs[1].bs[READ], BlockSize::Fixed(4096));
    assert!(p.jobs.iter().all(|j| j.iodepth == 8));
}

#[test]
fn command_line_only_jobs() {
    let p = cli(&["--bs=8k", "--direct", "--name=a", "--rw=write", "--name=b", "--size=1m", "--rwmixwrite=20"]).unwrap();
    let (a, b) = (&p.jobs[0], &p.jobs[1]);
    assert_eq!((a.name.as_str(), a.rw, a.direct), ("a", RwKind::Write, true));
    assert_eq!((b.name.as_str(), b.rw, b.size, b.rwmixread), ("b", RwKind::Read, Some(1 << 20), 80));
    assert_eq!(b.bs[WRITE], BlockSize::Fixed(8192));
    let keys: Vec<&str> = b.options.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["bs", "direct", "name", "size", "rwmixwrite"]);
}

#[test]
fn ignore_unknown_turns_errors_into_warnings() {
    let opts = ParseOptions { ignore_unknown: true, ..ParseOptions::default() };
    let p = run("[a]\nfoo_bar=1\n[b]\n", &["--frobnicate=2"], &opts).unwrap();
    assert_eq!(p.jobs.len(), 2);
    assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
    assert!(p.warnings[0].message.starts_with("job.fio:2:1: [a]: option 'foo_bar': not a fio option"), "{:?}", p.warnings);
}

#[test]
fn name_option_renames_the_job() {
    let j = &jobs("[section]\nname=renamed\ndescription=hello world\n")[0];
    assert_eq!((j.name.as_str(), j.description.as_deref()), ("renamed", Some("hello world")));
}

// ---- bad input: each error names file, line, column, section and option ----

#[test]
fn bad_unknown_option_suggests() {
    let e = err("[global]\nioengine=psync\n[job]\niodepht=4\n");
    assert_at(&e, 4, 1, Some("job"), Some("iodepht"), "not a fio option; did you mean 'iodepth'?");
    assert_eq!(e.to_string(), "job.fio:4:1: [job]: option 'iodepht': not a fio option; did you mean 'iodepth'?");
}

#[test]
fn bad_size() {
    let e = err("[j]\nsize=12q\n");
    assert_at(&e, 2, 6, Some("j"), Some("size"), "expected a size such as 4096, 4k");
    assert!(e.message.contains("got '12q' (unknown unit 'q')"));
}

#[test]
fn bad_bool() {
    let e = err("[j]\ndirect=maybe\n");
    assert_at(&e, 2, 8, Some("j"), Some("direct"), "expected a boolean (0/1, true/false, yes/no, on/off), got 'maybe'");
}

#[test]
fn bad_rw() {
    let e = err("[j]\nrw=randomread\n");
    let form = "expected one of read, write, randread, randwrite, rw, readwrite, randrw, trim, randtrim, trimwrite, randtrimwrite";
    assert_at(&e, 2, 4, Some("j"), Some("rw"), &format!("{form}, got 'randomread'"));
    assert_at(
        &err("[j]\nreadwrite=trim\nioengine=ftruncate\n"),
        2,
        1,
        Some("j"),
        Some("rw"),
        "rw=trim with ioengine=ftruncate cannot trim; it can only write",
    );
    assert_at(&err("[j]\nioengine=ftruncate\n"), 2, 1, Some("j"), Some("ioengine"), "rw=read with ioengine=ftruncate cannot read");
    assert_at(&err("[j]\nioengine=e4defrag\nrw=write\n"), 2, 1, Some("j"), Some("ioengine"), "needs donorname=FILE");
    assert_at(&err("[j]\nrw=randread:0\n"), 2, 4, Some("j"), Some("rw"), "N >= 1 I/Os per random offset, got '0'");
    assert_at(&err("[j]\nrw=read:fast\n"), 2, 4, Some("j"), Some("rw"), "read:SIZE such as read:8k");
}

#[test]
fn bad_rwmix_over_100() {
    let e = err("[j]\nrw=randrw\nrwmixread=101\n");
    assert_at(&e, 3, 11, Some("j"), Some("rwmixread"), "expected a whole number from 0 to 100, got '101'");
}

#[test]
fn bad_bssplit_sum() {
    let e = err("[j]\nbssplit=4k/50:8k/40\n");
    assert_at(&e, 2, 9, Some("j"), Some("bssplit"), "percentages add up to 100, got '4k/50:8k/40' (they add up to 90)");
}

#[test]
fn bad_undefined_env_var() {
    let e = err("[j]\nfilename=/mnt/${NOPE_FSB}/f\n");
    assert_at(&e, 2, 15, Some("j"), Some("filename"), "environment variable 'NOPE_FSB' is not defined");
}

#[test]
fn bad_key_outside_section() {
    let e = err("\n  bs=4k\n[j]\n");
    assert_at(&e, 2, 3, None, Some("bs"), "option outside any section");
}

#[test]
fn bad_unterminated_section() {
    let e = err("[global]\nbs=4k\n  [abc\n");
    assert_at(&e, 3, 3, Some("global"), None, "unterminated section header '[abc': expected '[name]'");
}

#[test]
fn bad_time_based_without_runtime() {
    let e = err("[global]\ntime_based\n[j]\nrw=read\n");
    assert_at(&e, 2, 1, Some("global"), Some("time_based"), "time_based needs runtime");
    // runtime=0 means "no limit", so it does not satisfy time_based either.
    assert_at(&err("[j]\nruntime=0\ntime_based=1\n"), 3, 1, Some("j"), Some("time_based"), "time_based needs runtime");
}

#[test]
fn bad_ioengine_lists_engines() {
    let e = err("[j]\nioengine=spdk\n");
    assert_at(&e, 2, 10, Some("j"), Some("ioengine"), "unknown ioengine 'spdk'; expected one of: ");
    for name in crate::model::engine::names() {
        assert!(e.message.contains(name), "{} lacks {name}", e.message);
    }
}

#[test]
fn bad_iodepth_zero() {
    let e = err("[j]\niodepth=0\n");
    assert_at(&e, 2, 9, Some("j"), Some("iodepth"), "expected a whole number from 1 to 65536, got '0'");
}

#[test]
fn bad_include_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let main = dir.path().join("main.fio");
    std::fs::write(&main, "[j]\nbs=4k\ninclude   nothere.fio\n").unwrap();
    let e = parse(std::slice::from_ref(&main), &[], &ParseOptions::default()).unwrap_err();
    assert_eq!(e.source, main.display().to_string());
    assert_eq!((e.line, e.col, e.section.as_deref(), e.option.as_deref()), (Some(3), Some(11), Some("j"), None));
    assert!(e.message.contains("cannot read include file") && e.message.contains("nothere.fio"), "{e}");
}

#[test]
fn bad_include_cycle() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.fio"), dir.path().join("b.fio"));
    std::fs::write(&a, "[j]\ninclude b.fio\n").unwrap();
    std::fs::write(&b, "bs=4k\ninclude a.fio\n").unwrap();
    let e = parse(&[a], &[], &ParseOptions::default()).unwrap_err();
    assert_eq!(e.source, b.display().to_string());
    assert_eq!((e.line, e.col, e.section.as_deref()), (Some(2), Some(9), Some("j")));
    assert!(e.message.starts_with("include cycle: ") && e.message.contains("a.fio -> "), "{e}");
}

#[test]
fn bad_trailing_garbage_in_number() {
    let e = err("[j]\nbs=4kx\n");
    assert_at(&e, 2, 4, Some("j"), Some("bs"), "got '4kx' (unknown unit 'kx')");
}

#[test]
fn bad_empty_value() {
    let e = err("[j]\nbs=\n");
    assert_at(&e, 2, 4, Some("j"), Some("bs"), "empty value: expected block size");
    let e = err("[j]\nbs\n");
    assert_at(&e, 2, 1, Some("j"), Some("bs"), "needs a value: expected bs=VALUE");
}

#[test]
fn bad_percent_size() {
    assert_at(&err("[j]\nsize=50%\n"), 2, 6, Some("j"), Some("size"), "percent sizes are not supported");
}

#[test]
fn bad_bsrange_order() {
    assert_at(&err("[j]\nbsrange=64k-4k\n"), 2, 9, Some("j"), Some("bsrange"), "min <= max");
}

#[test]
fn bad_utf8() {
    let entries = ini::read_text("job.fio", b"[j]\nfilename=caf\xe9\n", Path::new("."));
    assert_at(&entries.unwrap_err(), 2, 13, Some("j"), None, "not valid UTF-8");
}

#[test]
fn bad_missing_job_file() {
    let e = parse(&[PathBuf::from("/nonexistent/fsb.fio")], &[], &ParseOptions::default()).unwrap_err();
    assert_eq!((e.source.as_str(), e.line), ("/nonexistent/fsb.fio", None));
    assert!(e.message.contains("cannot read job file"));
}

#[test]
fn bad_command_line() {
    let e = cli(&["--name=a", "--bs=4q"]).unwrap_err();
    assert_eq!((e.source.as_str(), e.section.as_deref(), e.option.as_deref()), ("command line", Some("a"), Some("bs")));
    assert_eq!(e.to_string(), "command line: [a]: option 'bs': expected a size such as 4096, 4k, 1.5g or (2*4)k (suffixes k, m, g, t, p), got '4q' (unknown unit 'q')");
    assert!(cli(&["--runtim=5", "--name=a"]).unwrap_err().message.contains("did you mean 'runtime'?"));
    assert!(cli(&["--bs=4k"]).unwrap_err().message.contains("no job defined"));
    assert!(cli(&["bs=4k"]).unwrap_err().message.contains("expected --option=value"));
    let e = run(SEED, &["--iodepth=0"], &ParseOptions::default()).unwrap_err();
    assert_eq!((e.source.as_str(), e.option.as_deref()), ("command line", Some("iodepth")));
}

#[test]
fn bad_only_global() {
    assert!(err("[global]\nbs=4k\n").message.contains("no jobs defined"));
}

// ---- fuzzing: the parser must never panic ----

/// xorshift64*: deterministic, no crates.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Bytes that matter to the grammar, plus some that should not.
const ALPHABET: &[u8] = b"[]=;# \t\n\r$(){}*/%^+-.,:\\0123456789kmgKMGibsuxyz_\xff\xc3\xa9";
const PIECES: &[&str] = &[
    "[global]\n",
    "[j]\n",
    "bs=",
    "size=",
    "rw=",
    "bssplit=",
    "bsrange=",
    "rate=",
    "${",
    "$ncpus",
    "$mb_memory",
    "(((",
    ")",
    "4k",
    "1e9",
    "2^99",
    "/0",
    "time_based\n",
    "runtime=",
    "filename=",
    "\\:",
    "include x\n",
    "kb_base=1000\n",
];

fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..=rng.below(8) {
        let at = rng.below(v.len() + 1);
        match rng.below(4) {
            0 if !v.is_empty() => {
                let end = (at + rng.below(6)).min(v.len());
                v.drain(at.min(end)..end);
            }
            1 => v.insert(at, ALPHABET[rng.below(ALPHABET.len())]),
            2 => v.splice(at..at, PIECES[rng.below(PIECES.len())].bytes()).for_each(drop),
            _ => v.insert(at, rng.next() as u8),
        }
    }
    v
}

#[test]
fn fuzz_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let opts = ParseOptions { ignore_unknown: true, ..ParseOptions::default() };
    let mut errors = 0;
    for i in 0..2000 {
        let bytes = if i % 4 == 0 {
            (0..rng.below(80)).map(|_| ALPHABET[rng.below(ALPHABET.len())]).collect()
        } else {
            mutate(&mut rng, SEED.as_bytes())
        };
        let result = ini::read_text("fuzz.fio", &bytes, dir.path()).and_then(|entries| {
            let arg = String::from_utf8_lossy(&mutate(&mut rng, b"--bs=4k")).into_owned();
            parse_entries(vec![("fuzz.fio".into(), entries)], std::slice::from_ref(&arg), &opts, &env)?;
            parse_entries(Vec::new(), &["--name=x".into(), arg], &opts, &env)
        });
        if let Err(e) = result {
            assert!(!e.message.is_empty());
            let _ = e.to_string();
            errors += 1;
        }
    }
    // Most mutations break something; the fuzzer must exercise error paths.
    assert!(errors > 100, "only {errors} errors");
}

#[test]
fn every_problem_is_reported_in_one_pass() {
    let e = err("[a]\nbs=4q\niodepth=0\n[b]\nrw=sideways\n");
    assert_at(&e, 2, 4, Some("a"), Some("bs"), "unknown unit");
    assert_eq!(e.also.len(), 2, "{e}");
    assert_at(&e.also[0], 3, 9, Some("a"), Some("iodepth"), "from 1 to 65536");
    assert_at(&e.also[1], 5, 4, Some("b"), Some("rw"), "expected one of");
    assert_eq!(e.to_string().lines().count(), 3, "one line per problem");
}

#[test]
fn a_real_fio_option_is_told_apart_from_a_typo() {
    let e = err("[a]\nnuma_cpu_nodes=0\n");
    assert_at(&e, 2, 1, Some("a"), Some("numa_cpu_nodes"), "fio option not supported by fsbench (yet)");
    assert!(e.message.contains("--ignore-unknown"), "{e}");
}

#[test]
fn wait_for_names_an_earlier_unique_job() {
    let j = jobs("[a]\n[b]\nwait_for=a\n");
    assert_eq!(j[1].misc.wait_for.as_deref(), Some("a"));
    assert_at(&err("[a]\nwait_for=b\n[b]\n"), 2, 1, Some("a"), Some("wait_for"), "defined after this one");
    assert_at(&err("[a]\nwait_for=zz\n"), 2, 1, Some("a"), Some("wait_for"), "no job named 'zz'");
    assert_at(&err("[a]\n[a]\n[b]\nwait_for=a\n"), 4, 1, Some("b"), Some("wait_for"), "must be unique");
}

#[test]
fn accepted_options_leave_one_note_each() {
    let p = run("[global]\ngtod_reduce=1\n[a]\n[b]\ndisable_slat=1\n", &[], &ParseOptions::default()).unwrap();
    assert_eq!(p.warnings.iter().filter(|w| w.message.contains("gtod_reduce")).count(), 1, "{:?}", p.warnings);
    assert_eq!(p.warnings.iter().filter(|w| w.message.contains("disable_slat")).count(), 1, "{:?}", p.warnings);
}

#[test]
fn exitall_is_one_switch_for_every_job_as_in_fio() {
    use crate::model::job_misc::ExitWhat;
    let j = jobs("[a]\n[b]\nstonewall\nexitall\nexit_what=all\n");
    assert!(j.iter().all(|s| s.misc.exitall), "fio's exitall applies to every job once one sets it");
    assert_eq!((j[0].misc.exit_what, j[1].misc.exit_what), (ExitWhat::Group, ExitWhat::All));
    // fio 3.33 turns it on whatever the value, and fsbench says so.
    let p = run("[a]\nexitall=0\n", &[], &ParseOptions::default()).unwrap();
    assert!(p.jobs[0].misc.exitall);
    assert!(p.warnings.iter().any(|w| w.message.contains("exitall=0")), "{:?}", p.warnings);
    assert!(!jobs("[a]\nexitall_on_error=1\n")[0].misc.exitall);
    assert_at(&err("[a]\nexit_what=some\n"), 2, 11, Some("a"), Some("exit_what"), "one of group, stonewall, all");
}

#[test]
fn minimum_rates_parse_and_are_checked_against_the_rates() {
    use crate::model::job_misc::RateProcess;
    let j = jobs("[a]\nrate_min=1m,2m\nratecycle=500\nrate_process=poisson\n");
    assert_eq!(j[0].misc.ratemin, [Some(1 << 20), Some(2 << 20)]);
    assert_eq!(j[0].misc.ratecycle_ms, 500);
    assert_eq!(j[0].misc.rate_process, RateProcess::Poisson);
    assert_eq!(jobs("[a]\nratecycle=2s\n")[0].misc.ratecycle_ms, 2000);
    assert_eq!(jobs("[a]\n")[0].misc.ratecycle_ms, 1000);
    assert_eq!(jobs("[a]\nrate_iops_min=,50\n")[0].misc.rate_iops_min, [None, Some(50)]);
    assert_at(&err("[a]\nrate=1m\nratemin=2m\n"), 3, 1, Some("a"), Some("ratemin"), "exceeds rate=1048576");
    assert_at(&err("[a]\nrate_iops=10\nrate_iops_min=,20\n"), 3, 1, Some("a"), Some("rate_iops_min"), "for writes exceeds");
    assert_at(&err("[a]\nratemin=1m\nrate_iops_min=5\n"), 3, 1, Some("a"), Some("rate_iops_min"), "cannot both");
    assert_at(&err("[a]\nrate_process=bursty\n"), 2, 14, Some("a"), Some("rate_process"), "one of linear, poisson");
    assert_at(&err("[a]\nratemin=fast\n"), 2, 9, Some("a"), Some("ratemin"), "expected a size");
}
