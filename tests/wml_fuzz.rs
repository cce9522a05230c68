//! Fuzzing the WML parser for a bounded time: mutated workload files must
//! give a plan or an error, never a panic, and never take long.
//!
//! The corpus is every `workloads/filebench/*.f` of the repository plus the
//! samples below (together they cover the whole grammar). Each input is one
//! to four stacked mutations of a corpus entry: byte flips, token deletion,
//! duplication and replacement, splicing two entries, truncation, special
//! characters, huge numbers and deep nesting.
//!
//! `FSBENCH_FUZZ_SECS` sets the duration (default 20), `FSBENCH_FUZZ_SEED`
//! the seed (default: from the clock, printed). A failing input is saved
//! under `CARGO_TARGET_TMPDIR` and shown in the failure message (the driver
//! is `common::fuzz`).

mod common;

use common::fuzz::{secs, seed, Fuzz};
use fsbench::frontend::filebench::wml::{self, WmlOptions};
use fsbench::runner::rng::Rng;
use std::time::Duration;

/// One parse taking longer than this is a hang.
const PARSE_LIMIT: Duration = Duration::from_secs(2);
/// Mutated inputs are cut to this size so throughput stays high.
const MAX_INPUT: usize = 256 * 1024;

const SAMPLES: &[&str] = &[
    // 1.5 fileserver-like with a cvar bound after its use.
    r#"set $dir=/tmp/fz
set $nfiles=1000
set $nthreads=4
define fileset name=bigfileset,path=$dir,size=$filesize,entries=$nfiles,dirwidth=20,prealloc=80
define process name=filereader,instances=1 {
  thread name=filereaderthread,memsize=10m,instances=$nthreads {
    flowop createfile name=createfile1,filesetname=bigfileset,fd=1
    flowop writewholefile name=wrtfile1,srcfd=1,fd=1,iosize=1m
    flowop closefile name=closefile1,fd=1
    flowop openfile name=openfile1,filesetname=bigfileset,fd=1
    flowop appendfilerand name=appendfilerand1,iosize=16k,fd=1
    flowop closefile name=closefile2,fd=1
    flowop readwholefile name=readfile1,fd=1,iosize=1m
    flowop deletefile name=deletefile1,filesetname=bigfileset
    flowop statfile name=statfile1,filesetname=bigfileset
  }
}
set $filesize=cvar(type=cvar-gamma,parameters=mean:131072;gamma:1.5)
echo "fileserver loaded"
run 60
"#,
    // varmail-like with fsync and a flat directory.
    r#"set $dir=/tmp
define fileset name=mail,path=$dir,size=16k,entries=1000,dirwidth=1000000,prealloc=80
define process name=filereader {
  thread name=t,instances=16 {
    flowop deletefile name=del,filesetname=mail
    flowop createfile name=cr,filesetname=mail,fd=1
    flowop appendfilerand name=app,iosize=16k,fd=1
    flowop fsync name=fs,fd=1
    flowop closefile name=cl,fd=1
    flowop openfile name=op,filesetname=mail,fd=1
    flowop readwholefile name=rd,fd=1,iosize=1m
    flowop closefile name=cl2,fd=1
  }
}
psrun -10 30
"#,
    // webserver-like with a single log file and opennext.
    r#"set $dir=/tmp
define fileset name=pages,path=$dir,size=16k,entries=100,dirwidth=20,prealloc=100,readonly
define file name=logfile,path=$dir,size=0,prealloc
define process name=web { thread name=w,memsize=1m,instances=10 {
  flowop openfile name=o1,filesetname=pages,fd=1
  flowop readwholefile name=r1,fd=1,iosize=1m
  flowop closefile name=c1,fd=1
  flowop appendfilerand name=log,filesetname=logfile,iosize=16k,fd=2
} }
"#,
    // oltp-like: semaphores, aio, eventgen, ISM, several processes.
    r#"set $dir=/tmp
set $runtime=30
define file name=log,path=$dir,size=10m,reuse,prealloc
define fileset name=data,path=$dir,size=10m,entries=10,dirwidth=1024,prealloc=100,reuse
eventgen rate=0
define process name=lgwr,instances=1 { thread name=lgwr,memsize=1m,useism {
  flowop aiowrite name=lg-write,filesetname=log,iosize=256k,random,dsync
  flowop aiowait name=lg-aiowait
  flowop semblock name=lg-block,value=3200,highwater=1000
} }
define process name=shadow,instances=20 { thread name=sh,memsize=1m,ioprio=4 {
  flowop read name=shadowread,filesetname=data,iosize=2k,random,opennext,directio
  flowop hog name=shadowhog,value=200000
  flowop sempost name=shadow-post-lg,value=1,target=lg-block,blocking
  flowop eventlimit name=random-rate
} }
run $runtime
"#,
    // Composite flowops with locals, nested.
    r#"define fileset name=fs,path=/tmp,entries=10,dirwidth=5,prealloc
define flowop name=rmw, iters=2, $sz=8k, $fs=fs {
  flowop openfile name=open, filesetname=$fs, fd=1
  flowop read name=rd, fd=1, iosize=$sz
  flowop write name=wr, fd=1, iosize=$sz
  flowop closefile name=close, fd=1
}
define flowop name=outer, $inner { flowop rmw name=n, $sz=$inner }
define process name=p { thread name=t {
  flowop rmw name=a
  flowop outer name=b, $inner=2k, iters=3
} }
"#,
    // The 1.4 dialect.
    r#"usage "set $nfiles=<n> to change the fileset"
set $dir=/tmp
set $nfiles=100
set $half=$nfiles / 2 + 3 * (4 - 1)
set $cached=false
define randvar name=$iosz, type=gamma, mean=8k, gamma=1000, min=512, round=512
define fileset name=big,path=$dir,size=16k,entries=$half,dirwidth=10,cached=$cached,filesizegamma=1500
define process name=p { thread name=t { flowop read name=r, filesetname=big, iosize=$iosz, wss=64k, random } }
vars
warmup 3
create processes
"#,
    // Random variables of every kind.
    r#"set $g = randvar(type=gamma, mean=4k, gamma=500, min=100, round=512, seed=7)
set $u = randvar(type=uniform, randsrc=urandom, mean=20, min=10)
set $t = randvar(type=tabular, mean=64k, randtable={{50, 1k, 4k}, {30, 8k, 16k}, {20, 64k, 1m}})
set $n = cvar(type=cvar-normal, parameters="mean:100;sigma:2.5", min=1, max=1000)
set $e = cvar(type=cvar-exponential, parameters=mean:3)
set $w = cvar(type=cvar-weibull, parameters=shape:2;scale:5, round=2)
set $k = cvar(type=cvar-erlang, parameters=shape:3;rate:0.25)
set $tri = cvar(type=cvar-triangular, parameters=lower:1;upper:9;mode:2)
define process name=p { thread name=t {
  flowop read name=r, iosize=$g, workingset=$t, iters=$u, value=$n, indexed=$e
  flowop testrandvar name=tr, value=$w
  flowop delay name=d, value=$k
} }
"#,
    // Quit modes, finishon*, limits, print.
    r#"set mode quit firstdone
set mode nousestats
define file name=bigfile,path=/tmp,size=1g,prealloc,reuse,paralloc
define process name=p { thread name=t {
  flowop write name=wr, filename=bigfile, iosize=1m, dsync
  flowop finishonbytes name=fin, value=1g, target=wr
  flowop bwlimit name=lim, target=wr
  flowop print name=pr, value="done"
} }
eventgen rate=96
"#,
    // Prelude commands and quoted strings.
    r#"set $dir="/tmp/dir with blanks"
set $msg = "cost \$5 at ${dir}"
version
debug 1
list filesets
enable lathist
create files
system "sync; echo 3 > /proc/sys/vm/drop_caches"
sleep 1
echo "msg=$msg"
define fileset name=d,path=$dir,leafdirs=100,dirwidth=10
define process name=p { thread name=t { flowop makedir name=mk, filesetname=d
  flowop removedir name=rm, filesetname=d
  flowop listdir name=ls, filesetname=d } }
run 5
echo "after the run"
"#,
    // alldone with fsyncset, block/wakeup, statfile on fd, semicolons.
    r#"set mode quit alldone
set $x=1; ;
define fileset name=f,path=/tmp,entries=50000,dirwidth=100,size=0
define process name=p,nice=5 { thread name=a,instances=2 { flowop block name=blk
  flowop statfile name=st,fd=3 }
  thread name=b { flowop wakeup name=wk,target=blk
    flowop fsyncset name=fss,filesetname=f
    flowop finishoncount name=fc,value=$x } }
quit
run 10
"#,
    // Stream I/O with directio and a dirdepth randvar.
    r#"set $depth = randvar(type=uniform, mean=3)
define fileset name=streams,path=/tmp,entries=5,dirwidth=2,dirdepthrv=$depth,size=1g,prealloc,trusttree,reuse
define process name=seqread,instances=1 { thread name=s,instances=5,memsize=10m {
  flowop read name=seqread, filesetname=streams, iosize=1m, directio, noreadahead, opennext
  flowop iopslimit name=l
  flowop opslimit name=l2
} }
psrun 2 10
"#,
    // 1.4 arithmetic on many variables, psrun without a period.
    r#"set $a = 3
set $b = $a * $a - 1
set ${c} = ($b + $a) / 2
set $d = -$c
define fileset name=x, path=/tmp, entries=$b, dirwidth=$c
define process name=p { thread name=t { flowop appendfile name=ap, filesetname=x, iosize=$a
  flowop delay name=dl, value=$c } }
psrun
"#,
];

/// Text that stresses the lexer and parser when inserted anywhere.
const SPECIALS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "=",
    ",",
    "$",
    "\"",
    "\\",
    "#",
    ";",
    "-",
    "+",
    "*",
    "/",
    "\n",
    "\0",
    "\t",
    "é",
    "💥",
    "${",
    "$(",
    "{{",
    "}}",
    ":",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999999999999999999g",
    "-9223372036854775808",
    "16g",
    "0",
    "-0",
    "4294967296",
    "true",
    "false",
    "$x",
    "${missing}",
    "randvar(",
    "cvar(",
    "flowop",
    "thread",
    "define",
    "run",
    "psrun -",
];

fn corpus() -> Vec<String> {
    let mut out: Vec<String> = SAMPLES.iter().map(|s| s.to_string()).collect();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/filebench");
    let mut files: Vec<_> = std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    files.sort();
    for f in files.iter().filter(|p| p.extension().is_some_and(|e| e == "f")) {
        if let Ok(text) = std::fs::read_to_string(f) {
            out.push(text);
        }
    }
    out
}

fn pick<'t>(rng: &mut Rng, items: &'t [String]) -> &'t str {
    &items[rng.below(items.len() as u64) as usize]
}

/// Byte offsets of whitespace-separated tokens.
fn tokens(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let s = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i > s {
            out.push((s, i));
        }
    }
    out
}

fn mutate(rng: &mut Rng, corpus: &[String], input: &mut Vec<u8>) {
    let at = |rng: &mut Rng, len: usize| rng.below(len as u64 + 1) as usize;
    match rng.below(10) {
        0 if !input.is_empty() => {
            let i = at(rng, input.len() - 1);
            input[i] ^= 1 << rng.below(8);
        }
        1 | 2 => {
            let t = tokens(input);
            if !t.is_empty() {
                let (s, e) = t[rng.below(t.len() as u64) as usize];
                if rng.below(2) == 0 {
                    input.drain(s..e);
                } else {
                    let copy = input[s..e].to_vec();
                    let dst = at(rng, input.len());
                    input.splice(dst..dst, copy.into_iter().chain([b' ']));
                }
            }
        }
        3 => {
            // Replace a token with one from another corpus entry.
            let other = pick(rng, corpus).as_bytes();
            let (t, o) = (tokens(input), tokens(other));
            if !t.is_empty() && !o.is_empty() {
                let (s, e) = t[rng.below(t.len() as u64) as usize];
                let (os, oe) = o[rng.below(o.len() as u64) as usize];
                input.splice(s..e, other[os..oe].iter().copied());
            }
        }
        4 => {
            let other = pick(rng, corpus).as_bytes();
            let cut = at(rng, input.len());
            let from = at(rng, other.len());
            input.truncate(cut);
            input.extend_from_slice(&other[from..]);
        }
        5 => {
            let cut = at(rng, input.len());
            input.truncate(cut);
        }
        6 | 7 => {
            let s = SPECIALS[rng.below(SPECIALS.len() as u64) as usize].as_bytes();
            let dst = at(rng, input.len());
            input.splice(dst..dst, s.iter().copied());
        }
        8 => {
            let unit: &[u8] = match rng.below(6) {
                0 => b"(",
                1 => b"{",
                2 => b"{{1,2,3},",
                3 => b"- ",
                4 => b"define flowop name=n { flowop n name=m ",
                _ => b"$a * (",
            };
            let n = 1 + rng.below(20_000) as usize;
            let dst = at(rng, input.len());
            input.splice(dst..dst, unit.iter().copied().cycle().take(unit.len() * n));
        }
        _ => {
            // Repeat a whole line many times.
            let lines: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
            let line = lines[rng.below(lines.len() as u64) as usize].to_vec();
            let n = 1 + rng.below(500) as usize;
            for _ in 0..n {
                input.extend_from_slice(b"\n");
                input.extend_from_slice(&line);
            }
        }
    }
    input.truncate(MAX_INPUT);
}

fn options(rng: &mut Rng) -> WmlOptions {
    let mut o = WmlOptions::default();
    if rng.below(4) == 0 {
        o.runtime_s = Some(rng.below(3));
    }
    if rng.below(4) == 0 {
        let v = ["16k", "/x", "randvar(mean=5)", "cvar(type=cvar-gamma)", "\"q", "", "1 2", "99999999999999999999999"];
        o.sets.push(("dir".into(), v[rng.below(v.len() as u64) as usize].into()));
    }
    o
}

#[test]
fn wml_parser_survives_mutated_workloads() {
    let corpus = corpus();
    // The samples are meant to be valid: a fuzz corpus of errors explores little.
    for (i, s) in SAMPLES.iter().enumerate() {
        if let Err(e) = wml::parse(s, &format!("sample{i}.f"), "sample", &WmlOptions::default()) {
            panic!("sample {i} does not parse: {e}");
        }
    }
    println!("wml fuzz: corpus of {} entries", corpus.len());
    let run = Fuzz { name: "wml-fuzz".into(), secs: secs(&[], 20), seed: seed(), limit: PARSE_LIMIT };
    let make = move |rng: &mut Rng| {
        let mut input = pick(rng, &corpus).as_bytes().to_vec();
        for _ in 0..1 + rng.below(4) {
            mutate(rng, &corpus, &mut input);
        }
        let text = String::from_utf8_lossy(&input).into_owned();
        let opts = options(rng);
        Some((format!("options {:?}, {:?}\n{text}", opts.sets, opts.runtime_s), (text, opts)))
    };
    let (n, _) = run.run(make, |(text, opts): &(String, WmlOptions)| wml::parse(text, "fuzz.f", "fuzz", opts).is_ok());
    assert!(n > 0, "no input was tried");
}
