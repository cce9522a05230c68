//! Fuzzing every workload family's command line and input files through the
//! path a real command line takes (`fsbench::cli::lower_only`: clap, the
//! split of fsbench's flags from the tool's, the family's own parser, its
//! lowering and every step it yields), and experiment files through their
//! parser and the pre-run check. A mutated input must give a plan or an
//! error: never a panic, an abort, a hang, or a file written (a frontend
//! runs no I/O).
//!
//! Each family starts from valid command lines and, where it reads files
//! (fio job files, Filebench `.f`, Postmark command files, YCSB property
//! files, experiment TOML), valid files; one to four stacked mutations:
//! numbers swapped for extremes (0, -1, 2^31, 2^32, 2^63, 2^64, 1e308, NaN,
//! with and without size suffixes), tokens dropped, repeated, swapped or
//! taken from another entry, flags of the family inserted with odd values,
//! special characters, truncation; files also get lines dropped, repeated
//! and spliced, and bytes flipped.
//!
//! `FSBENCH_CLI_FUZZ_SECS` (else `FSBENCH_FUZZ_SECS`) is each family's
//! duration (default 5), `FSBENCH_FUZZ_SEED` the seed (default: from the
//! clock, printed). Before each input runs it is saved under
//! `CARGO_TARGET_TMPDIR` (`cli-fuzz-FAMILY.last`), so an abort leaves it
//! (the driver is `common::fuzz`).

mod common;

use common::fuzz::{secs, seed, Fuzz};
use fsbench::runner::rng::Rng;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// One input taking longer than this is a hang.
const INPUT_LIMIT: Duration = Duration::from_secs(5);
/// An input that would hold more than this is a defect: fsbench must refuse
/// what the machine cannot hold before it allocates (issue 31, item 12).
const MEMORY_LIMIT: u64 = 6 << 30;
const MAX_FILE: usize = 64 * 1024;

/// Values that find overflows, wrong signs and unparsed corners.
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "-0",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "1e308",
    "1e-308",
    "0.5",
    "-0.5",
    "nan",
    "inf",
    "0x10",
    "",
];
const SUFFIXES: &[&str] = &["", "", "", "k", "m", "g", "t", "p", "e", "K", "Ki", "%", "s", "ms", "us", ":", ","];
const SPECIALS: &[&str] = &[
    ":",
    "::",
    ",",
    ",,",
    "=",
    "==",
    "-",
    "--",
    "+",
    "${",
    "${x}",
    "$",
    "\\",
    "'",
    "\"",
    "\t",
    " ",
    "/",
    "..",
    "é",
    "💥",
    "\u{0}",
    "#",
    "[",
    "]",
    "{",
    "}",
    "/dev/null",
    "/nonexistent/x",
];

/// A family's valid starting points and what its mutations may insert.
struct Family {
    name: &'static str,
    /// Command lines (words after `fsbench`); `{D}` is a directory the
    /// family may use, `{F}` its input file.
    lines: Vec<Vec<String>>,
    /// Input files the `{F}` lines read (one is picked and mutated).
    files: Vec<String>,
    /// The file's name (its extension matters to some parsers).
    file_name: &'static str,
    /// Flags the mutations insert.
    flags: Vec<String>,
    /// Inputs never lowered. None today: lowering acts on nothing (Bonnie++'s
    /// `-p` lowers to a step the runner carries out, so it is fuzzed too).
    skip: fn(&[String]) -> bool,
}

fn no_skip(_: &[String]) -> bool {
    false
}

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(str::to_string).collect()
}

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn read_dir_texts(dir: &Path, ext: &str, max: usize) -> Vec<String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    files.sort();
    files.iter().filter(|p| p.extension().is_some_and(|e| e == ext)).filter_map(|p| std::fs::read_to_string(p).ok()).take(max).collect()
}

fn fio() -> Family {
    // The shipped tour names its directory through the environment.
    let mut files: Vec<String> =
        read_dir_texts(&repo("workloads/fio"), "fio", 10).iter().map(|t| t.replace("${FSBENCH_DIR}", "{D}")).collect();
    files.extend(read_dir_texts(Path::new("/usr/share/doc/fio/examples"), "fio", 200));
    files.push("[global]\nbs=4k\nsize=1m\ndirectory={D}\n[a]\nrw=randread\n[b]\nrw=write\nnumjobs=2\nstonewall\n".into());
    Family {
        name: "fio",
        lines: [
            "fio --name=a --rw=randread --bs=4k --size=1m --directory={D}",
            "fio --name=a --rw=randrw --rwmixread=70 --bssplit=4k/50:64k/50 --size=4m --numjobs=2 --iodepth=8 --ioengine=io_uring --directory={D}",
            "fio --name=a --rw=write --bs=1m --size=16m --fsync=4 --runtime=1 --time_based --directory={D} --repeat 2",
            "fio {F} --directory={D}",
            "fio {F} --size=2m --output-format=json --repeat 3",
            "fio --name=a --rw=read --size=1m --filename={D}/f --offset=4k --offset_increment=1m --nrfiles=3 --openfiles=3",
            "fio --name=a --rw=randwrite --size=1m --directory={D} --verify=crc32c --rate=1m --rate_iops=100 --thinktime=10",
            "fio --name=a --rw=randread --size=1m --directory={D} --random_distribution=zipf:1.2 --norandommap --lat_percentiles=1",
            "fio {F} --parse-only",
        ]
        .iter()
        .map(|s| words(s))
        .collect(),
        files,
        file_name: "job.fio",
        flags: [
            "--bs=", "--size=", "--iodepth=", "--numjobs=", "--nrfiles=", "--runtime=", "--rate=", "--rate_iops=", "--offset=",
            "--filesize=", "--io_size=", "--number_ios=", "--bsrange=", "--bssplit=", "--rwmixread=", "--ramp_time=", "--loops=",
            "--thinktime=", "--zonesize=", "--zonerange=", "--fsync=", "--write_bw_log=", "--log_avg_msec=", "--percentile_list=",
            "--random_distribution=zipf:", "--verify_interval=", "--ioengine=", "--rw=", "--cache", "--background", "--trace",
            "--repeat", "--output-format", "--section",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        skip: no_skip,
    }
}

fn filebench() -> Family {
    Family {
        name: "filebench",
        lines: [
            "filebench fileserver --set dir={D} --set nfiles=50 --set nthreads=2 --runtime 1",
            "filebench varmail --set dir={D} --set nfiles=20 --runtime 1 --output-format json",
            "filebench webserver --set dir={D} --set filesize=16k --set nfiles=10",
            "filebench -f {F} --set dir={D}",
            "filebench -f {F} --set dir={D} --runtime 2 --repeat 2",
            "filebench --list",
        ]
        .iter()
        .map(|s| words(s))
        .collect(),
        files: read_dir_texts(&repo("workloads/filebench"), "f", 100),
        file_name: "w.f",
        flags: ["--set", "dir=", "nfiles=", "nthreads=", "filesize=", "meandirwidth=", "iosize=", "--runtime", "-f"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        skip: no_skip,
    }
}

fn postmark() -> Family {
    Family {
        name: "postmark",
        // `-c` takes one command, spaces and all.
        lines: [
            &["-c", "set location {D}", "-c", "set number 20", "-c", "set transactions 50", "-c", "run", "-c", "quit"][..],
            &["{F}"],
            &["{F}", "-c", "show", "-c", "quit"],
            &["-c", "set size 500 10000", "-c", "set subdirectories 3", "-c", "set location {D}", "-c", "run"],
        ]
        .iter()
        .map(|l| std::iter::once("postmark").chain(l.iter().copied()).map(str::to_string).collect())
        .collect(),
        files: vec![
            "set location {D}\nset number 100\nset transactions 200\nset size 500 9770\nset read 512\nset write 512\nset buffering false\nset bias read 5\nset bias create 5\nset subdirectories 2\nrun\nquit\n".into(),
            "set location {D}\nset number 10\nset transactions 10\nshow\nrun {D}/report.txt\n".into(),
            "set seed 42\nset location {D}\nset report verbose\nrun\n".into(),
        ],
        file_name: "config.pm",
        flags: ["-c", "set number", "set transactions", "set size", "set read", "set write", "set bias read", "set subdirectories", "run", "show"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        skip: no_skip,
    }
}

fn iozone() -> Family {
    let mut lines: Vec<Vec<String>> = std::fs::read_dir(repo("tests/data/iozone"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        // The err-* samples are IOzone's refusals, not starting points.
        .filter(|p| p.extension().is_some_and(|e| e == "cmd") && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("err-")))
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .map(|s| words(&s.replace("/dev/shm/iozone-samples", "{D}")))
        .collect();
    lines.sort();
    lines.push(words("iozone -a -n 64k -g 1m -i 0 -i 1 -f {D}/t -b {D}/x.xls"));
    Family {
        name: "iozone",
        lines,
        files: Vec::new(),
        file_name: "unused",
        flags: [
            "-s", "-r", "-i", "-n", "-g", "-y", "-q", "-t", "-F", "-f", "-a", "-A", "-z", "-R", "-e", "-c", "-I", "-o", "-w", "-U", "-+n",
            "-+u", "-O", "-N", "-E", "-j", "-l", "-u", "-T", "-C", "-x", "-S", "-L", "-k", "-K", "-+w", "-+y", "-+C",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        skip: no_skip,
    }
}

fn bonnie() -> Family {
    Family {
        name: "bonnie",
        lines: [
            "bonnie -d {D} -s 4 -n 1 -r 0 -u root -q",
            "bonnie -d {D} -s 64:8192:100:4 -r 32 -u root",
            "bonnie -d {D} -s 0 -n 16:100:10:4:512 -u root -b",
            "bonnie -d {D} -s 8 -f1 -n 0 -r 0 -u root -D -z 7 -m host",
            "bonnie -d {D} -s 4 -n 1 -r 0 -u root:root -x 2 -q --output-format json",
            "bonnie -d {D} -s 4g -r 2048 -n 128:65536:0:16 -u root -c 2",
        ]
        .iter()
        .map(|s| words(s))
        .collect(),
        files: Vec::new(),
        file_name: "unused",
        flags: ["-s", "-n", "-r", "-x", "-m", "-d", "-u", "-g", "-b", "-D", "-f", "-c", "-z", "-Z", "-q", "-y", "-p"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        skip: no_skip,
    }
}

fn ycsb() -> Family {
    Family {
        name: "ycsb",
        lines: [
            "ycsb load null -P workloada -p recordcount=100",
            "ycsb run null -P workloadb -p recordcount=100 -p operationcount=100 -threads 2 -target 1000",
            "ycsb load fjall -P workloadc -p fjall.dir={D}/fj -p recordcount=50 -s -p fjall.cache=1m",
            "ycsb run sqlite -P workloadf -p sqlite.dir={D}/sq -p sqlite.journal_mode=WAL -p sqlite.synchronous=OFF",
            "ycsb load rocksdb -P workloadd -p rocksdb.dir={D}/rk -p rocksdb.compression=zstd -p rocksdb.blockcache=1m",
            "ycsb run redb -P workloade -p redb.dir={D}/r -p maxscanlength=10 -p redb.durability=none",
            "ycsb load null -P {F}",
            "ycsb run null -P {F} -p fieldcount=3 -p fieldlength=10",
        ]
        .iter()
        .map(|s| words(s))
        .collect(),
        files: vec![
            "recordcount=1000\noperationcount=1000\nworkload=site.ycsb.workloads.CoreWorkload\nreadallfields=true\nreadproportion=0.5\nupdateproportion=0.5\nscanproportion=0\ninsertproportion=0\nrequestdistribution=zipfian\n".into(),
            "recordcount=100\noperationcount=100\nfieldcount=4\nfieldlength=64\nfieldlengthdistribution=uniform\nminfieldlength=1\nreadproportion=0.2\nupdateproportion=0.2\nscanproportion=0.2\ninsertproportion=0.2\nreadmodifywriteproportion=0.2\nmaxscanlength=50\nscanlengthdistribution=zipfian\nrequestdistribution=hotspot\nhotspotdatafraction=0.2\nhotspotopnfraction=0.8\ninsertorder=ordered\nzeropadding=5\n".into(),
            "recordcount=10\noperationcount=10\nrequestdistribution=latest\ndataintegrity=true\nmeasurementtype=timeseries\ntimeseries.granularity=100\nstatus.interval=1\n".into(),
        ],
        file_name: "workload.properties",
        flags: [
            "-p",
            "-P",
            "-threads",
            "-target",
            "-s",
            "recordcount=",
            "operationcount=",
            "fieldcount=",
            "fieldlength=",
            "minfieldlength=",
            "maxscanlength=",
            "insertstart=",
            "insertcount=",
            "zipfian.constant=",
            "hotspotdatafraction=",
            "histogram.buckets=",
            "status.interval=",
            "readproportion=",
            "threadcount=",
            "maxexecutiontime=",
            "fieldlengthdistribution=histogram",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
        skip: no_skip,
    }
}

/// The process-wide set-up every fuzz test shares: standard input empty (so
/// Postmark's `pm>` prompt ends at once), the working directory an empty
/// directory that must stay empty, and the address space bounded so that
/// an input that makes fsbench allocate what no machine holds aborts here
/// instead of driving this one out of memory.
fn setup() -> &'static Path {
    static CWD: OnceLock<PathBuf> = OnceLock::new();
    CWD.get_or_init(|| {
        let dir = tempfile::Builder::new().prefix("cli-fuzz-cwd-").tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("tempdir").keep();
        std::env::set_current_dir(&dir).expect("chdir");
        let null = std::fs::File::open("/dev/null").expect("/dev/null");
        // SAFETY: dup2 onto descriptor 0 of this process, from a descriptor
        // that is open for the whole call; no memory of ours is involved.
        unsafe {
            use std::os::fd::AsRawFd;
            libc::dup2(null.as_raw_fd(), 0);
            let lim = libc::rlimit { rlim_cur: MEMORY_LIMIT, rlim_max: libc::RLIM_INFINITY };
            libc::setrlimit(libc::RLIMIT_AS, &lim);
        }
        dir
    })
}

/// One input to try: the command line with its file written.
struct Input {
    args: Vec<String>,
    file: Option<String>,
}

impl Input {
    fn show(&self) -> String {
        let args: Vec<String> = self.args.iter().map(|a| format!("{a:?}")).collect();
        match &self.file {
            Some(f) => format!("args: {}\nfile:\n{f}", args.join(" ")),
            None => format!("args: {}", args.join(" ")),
        }
    }
}

fn pick<'t, T>(rng: &mut Rng, items: &'t [T]) -> &'t T {
    &items[rng.below(items.len() as u64) as usize]
}

/// Swap a run of digits in `s` for an extreme value (with a suffix).
fn new_number(rng: &mut Rng, s: &str) -> String {
    let b = s.as_bytes();
    let digits: Vec<usize> = (0..b.len()).filter(|&i| b[i].is_ascii_digit() && (i == 0 || !b[i - 1].is_ascii_digit())).collect();
    let value = format!("{}{}", pick(rng, NUMBERS), pick(rng, SUFFIXES));
    let Some(&start) = digits.get(rng.below(digits.len().max(1) as u64) as usize) else {
        return format!("{s}{value}");
    };
    let end = (start..b.len()).find(|&i| !b[i].is_ascii_digit()).unwrap_or(b.len());
    let end = if rng.below(2) == 0 { (end..b.len()).find(|&i| !b[i].is_ascii_alphabetic()).unwrap_or(b.len()) } else { end };
    format!("{}{value}{}", &s[..start], &s[end..])
}

fn mutate_args(rng: &mut Rng, f: &Family, args: &mut Vec<String>) {
    // The subcommand (and YCSB's phase and store) stays: without it there is
    // nothing of the family's to reach.
    let fixed = if f.name == "ycsb" { 3 } else { 1 }.min(args.len());
    let free = args.len() - fixed;
    let at = |rng: &mut Rng| fixed + rng.below(free.max(1) as u64) as usize;
    match rng.below(9) {
        0..=2 if free > 0 => {
            let i = at(rng);
            args[i] = new_number(rng, &args[i]);
        }
        3 if free > 0 => {
            args.remove(at(rng));
        }
        4 if free > 0 => {
            let i = at(rng);
            let copy = args[i].clone();
            args.insert(at(rng).min(args.len()), copy);
        }
        5 if free > 1 => {
            let (i, j) = (at(rng), at(rng));
            args.swap(i, j);
        }
        6 => {
            let flag = pick(rng, &f.flags).clone();
            let value = format!("{}{}", pick(rng, NUMBERS), pick(rng, SUFFIXES));
            let i = if free > 0 { at(rng) } else { args.len() };
            if flag.ends_with('=') {
                args.insert(i, format!("{flag}{value}"));
            } else {
                args.insert(i, flag);
                args.insert(i + 1, value);
            }
        }
        7 if free > 0 => {
            let i = at(rng);
            let s = pick(rng, SPECIALS);
            let cut = args[i].char_indices().map(|(k, _)| k).nth(rng.below(args[i].chars().count() as u64 + 1) as usize);
            let cut = cut.unwrap_or(args[i].len());
            args[i].insert_str(cut, s);
        }
        _ => {
            // A tail from another line of the family.
            let other = pick(rng, &f.lines).clone();
            let from = rng.below(other.len() as u64 + 1) as usize;
            args.truncate(if free > 0 { at(rng) } else { args.len() });
            args.extend(other.into_iter().skip(from.max(fixed)));
        }
    }
}

fn mutate_text(rng: &mut Rng, f: &Family, text: &mut String) {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    let i = rng.below(n as u64) as usize;
    match rng.below(8) {
        0..=2 => lines[i] = new_number(rng, &lines[i]),
        3 => {
            lines.remove(i);
        }
        4 => {
            let copy = lines[i].clone();
            let times = if rng.below(8) == 0 { 1 + rng.below(2000) as usize } else { 1 };
            for _ in 0..times {
                lines.insert(rng.below(lines.len() as u64 + 1) as usize, copy.clone());
            }
        }
        5 => {
            let other = pick(rng, &f.files);
            let from: Vec<&str> = other.lines().collect();
            if !from.is_empty() {
                lines[i] = pick(rng, &from).to_string();
            }
        }
        6 => {
            let s = pick(rng, SPECIALS);
            let at = lines[i].char_indices().map(|(k, _)| k).nth(rng.below(lines[i].chars().count() as u64 + 1) as usize);
            let at = at.unwrap_or(lines[i].len());
            lines[i].insert_str(at, s);
        }
        _ => lines.truncate(i),
    }
    *text = lines.join("\n");
    text.truncate(text.floor_char_boundary_compat(MAX_FILE));
}

trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, i: usize) -> usize;
}

impl FloorCharBoundary for String {
    fn floor_char_boundary_compat(&self, i: usize) -> usize {
        let mut i = i.min(self.len());
        while !self.is_char_boundary(i) {
            i -= 1;
        }
        i
    }
}

fn next_input(rng: &mut Rng, f: &Family, dir: &Path, file: &Path) -> Input {
    let line = pick(rng, &f.lines);
    let mut args = fill(line, dir, file);
    let uses_file = line.iter().any(|w| w.contains("{F}")) && !f.files.is_empty();
    let mut text = uses_file.then(|| pick(rng, &f.files).replace("{D}", &dir.display().to_string()));
    for _ in 0..1 + rng.below(4) {
        match &mut text {
            Some(t) if rng.below(2) == 0 => mutate_text(rng, f, t),
            _ => mutate_args(rng, f, &mut args),
        }
    }
    Input { args, file: text }
}

/// A line with its directory and file filled in.
fn fill(line: &[String], dir: &Path, file: &Path) -> Vec<String> {
    let (d, f) = (dir.display().to_string(), file.display().to_string());
    line.iter().map(|w| w.replace("{D}", &d).replace("{F}", &f)).collect()
}

/// Run `try_one` on inputs from `make` for the family's time (see
/// `common::fuzz`). Returns how many inputs were tried and how many lowered.
fn fuzz(
    name: &'static str,
    mut make: impl FnMut(&mut Rng) -> Option<Input> + Send + 'static,
    try_one: impl Fn(&Input) -> bool + Send + 'static,
) -> (u64, u64) {
    let run = Fuzz { name: format!("cli-fuzz-{name}"), secs: secs(&["FSBENCH_CLI_FUZZ_SECS"], 5), seed: seed(), limit: INPUT_LIMIT };
    run.run(move |rng| make(rng).map(|i| (i.show(), i)), try_one)
}

/// A family's own directory under the shared working directory's parent
/// (not inside it: the working directory must stay empty).
fn family_dir(name: &str) -> PathBuf {
    let cwd = setup();
    let d = cwd.with_file_name(format!("{}-{name}", cwd.file_name().unwrap().to_string_lossy()));
    std::fs::create_dir_all(d.join("data")).expect("family dir");
    d
}

/// Lower one command line; its file (if any) is written first.
fn lower(input: &Input, file: &Path, fresh: &Path) -> bool {
    if let Some(text) = &input.file {
        std::fs::write(file, text).expect("write the input file");
    }
    fsbench::cli::lower_only(&input.args, fresh).is_ok()
}

/// Fuzz one family: every starting line must lower (else the corpus tests
/// nothing), then mutated ones must never panic, hang or write. Input files
/// that do not lower as they are (fio's examples use options fsbench
/// refuses) stay out of the corpus.
fn family(mut f: Family) {
    let base = family_dir(f.name);
    let data = base.join("data");
    let file = base.join(f.file_name);
    let fresh = base.join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let before = listing(&data);
    let d = data.display().to_string();
    let reads_file = |line: &Vec<String>| line.iter().any(|w| w.contains("{F}"));
    if let Some(line) = f.lines.iter().find(|l| reads_file(l)) {
        let args = fill(line, &data, &file);
        let n = f.files.len();
        f.files.retain(|t| lower(&Input { args: args.clone(), file: Some(t.replace("{D}", &d)) }, &file, &fresh));
        println!("{}: {} of {n} input files lower as they are", f.name, f.files.len());
        assert!(!f.files.is_empty(), "{}: no input file lowers", f.name);
    }
    for line in &f.lines {
        let input = Input { args: fill(line, &data, &file), file: reads_file(line).then(|| f.files[0].replace("{D}", &d)) };
        if !(f.skip)(&input.args) {
            assert!(lower(&input, &file, &fresh), "{}: a starting point does not lower:\n{}", f.name, input.show());
        }
    }
    let name = f.name;
    let (file2, data2, fresh2) = (file.clone(), data.clone(), fresh.clone());
    let make = move |rng: &mut Rng| {
        let input = next_input(rng, &f, &data2, &file2);
        (!(f.skip)(&input.args)).then_some(input)
    };
    let (n, ok) = fuzz(name, make, move |input| lower(input, &file, &fresh2));
    assert!(n > 0 && ok > 0, "{name}: {n} inputs tried, {ok} lowered: the mutations explore nothing valid");
    assert_eq!(listing(&data), before, "{name}: lowering wrote into the family's data directory");
    assert_eq!(listing(&fresh), Vec::<String>::new(), "{name}: lowering wrote into the fresh directory");
    assert_eq!(listing(setup()), Vec::<String>::new(), "lowering wrote into the working directory");
}

fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> =
        std::fs::read_dir(dir).into_iter().flatten().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[test]
fn fio_command_lines_and_job_files() {
    family(fio());
}

#[test]
fn filebench_command_lines_and_workload_files() {
    family(filebench());
}

#[test]
fn postmark_command_lines_and_command_files() {
    family(postmark());
}

#[test]
fn iozone_command_lines() {
    family(iozone());
}

#[test]
fn bonnie_command_lines() {
    family(bonnie());
}

#[test]
fn ycsb_command_lines_and_property_files() {
    family(ycsb());
}

/// Parse an experiment and check it as `fsbench experiment` does before it
/// sets anything up.
fn check_experiment(path: &Path, text: &str) -> Result<(), String> {
    let exp = fsbench::frontend::experiment::parse(text, path, &[]).map_err(|e| e.to_string())?;
    fsbench::runner::experiment::preflight(&exp, false, true).map_err(|problems| problems.join("\n"))
}

/// Experiment files: the TOML parser, every family's `[[workload]]`
/// lowering and the pre-run check of targets and workloads.
#[test]
fn experiment_files() {
    let base = family_dir("experiment");
    let data = base.join("data");
    let dir = repo("workloads/experiments");
    let mut files: Vec<(PathBuf, String)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter_map(|p| Some((p.clone(), std::fs::read_to_string(&p).ok()?)))
        .collect();
    files.sort();
    let d = data.display().to_string();
    files.push((
        dir.join("fuzz.toml"),
        format!(
            "name = \"fz\"\nrepeat = 2\ncache = [\"warm\"]\n[params]\nsize = \"1m\"\n[[target]]\nlabel = \"here\"\ndirectory = \"{d}\"\n\
             [[workload]]\nlabel = \"f\"\nargs = [\"--name=a\", \"--rw=read\", \"--size=${{size}}\"]\n\
             [[workload]]\nlabel = \"p\"\npostmark = [\"set number 10\", \"set transactions 10\"]\n\
             [[workload]]\nlabel = \"b\"\nbonnie = \"-s 4 -n 1 -r 0 -u root\"\n\
             [[workload]]\nlabel = \"i\"\niozone = \"-s 1m -r 64k -i 0 -i 1\"\n\
             [[workload]]\nlabel = \"y\"\nycsb = \"load null -P workloada -p recordcount=10\"\n\
             [[workload]]\nlabel = \"fb\"\nfilebench = \"varmail\"\nset = {{ nfiles = \"10\" }}\nruntime = 1\n\
             [[workload]]\nlabel = \"q\"\nquick = {{ size = \"1m\", runtime = 1 }}\n\
             [[workload]]\nlabel = \"r\"\nreplay = \"../../tests/data/replay/small.iolog\"\ntarget = \"disk.img\"\nreads_only = true\n"
        ),
    ));
    let fam = Family {
        name: "experiment",
        lines: Vec::new(),
        files: files.iter().map(|(_, t)| t.clone()).collect(),
        file_name: "exp.toml",
        flags: Vec::new(),
        skip: no_skip,
    };
    let before = listing(&data);
    for (p, t) in &files {
        // The shipped experiments need their [params] or name devices and
        // file systems a machine may lack: they must parse; the synthetic
        // one must also pass its check.
        if let Err(e) = fsbench::frontend::experiment::parse(t, p, &[]) {
            panic!("{} does not parse: {e}", p.display());
        }
    }
    let (last_path, last_text) = files.last().unwrap();
    if let Err(e) = check_experiment(last_path, last_text) {
        panic!("the synthetic experiment does not pass its check: {e}");
    }
    let paths: Vec<PathBuf> = files.iter().map(|(p, _)| p.clone()).collect();
    let make = move |rng: &mut Rng| {
        let i = rng.below(fam.files.len() as u64) as usize;
        let mut text = fam.files[i].clone();
        for _ in 0..1 + rng.below(4) {
            mutate_text(rng, &fam, &mut text);
        }
        Some(Input { args: vec![paths[i].display().to_string()], file: Some(text) })
    };
    let try_one = |input: &Input| check_experiment(Path::new(&input.args[0]), input.file.as_deref().unwrap_or_default()).is_ok();
    let (n, ok) = fuzz("experiment", make, try_one);
    assert!(n > 0 && ok > 0, "experiment: {n} inputs tried, {ok} passed their check: the mutations explore nothing valid");
    assert_eq!(listing(&data), before, "an experiment's check wrote into its target directory");
    assert_eq!(listing(setup()), Vec::<String>::new(), "an experiment's check wrote into the working directory");
}
