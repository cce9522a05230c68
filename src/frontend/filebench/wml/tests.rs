//! Whole-frontend tests: scripts in, plans or located errors out.

use super::*;
use crate::model::flow::*;
use crate::result::warning::Warning;

fn opts() -> WmlOptions {
    WmlOptions::default()
}

fn with_sets(sets: &[(&str, &str)]) -> WmlOptions {
    WmlOptions { sets: sets.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(), ..WmlOptions::default() }
}

fn parse_with(text: &str, o: &WmlOptions) -> Parsed {
    parse(text, "t.f", "t", o).unwrap_or_else(|e| panic!("{e}"))
}

fn plan(text: &str) -> FlowPlan {
    parse_with(text, &opts()).plan
}

fn err_with(text: &str, o: &WmlOptions) -> WmlError {
    match parse(text, "t.f", "t", o) {
        Ok(p) => panic!("expected an error, got {:#?}", p.plan),
        Err(e) => e,
    }
}

/// The error is at `line:col` of t.f and its message contains every `parts`.
fn err_at(text: &str, line: u32, col: u32, parts: &[&str]) -> WmlError {
    let e = err_with(text, &opts());
    assert_eq!((e.file.as_str(), e.line, e.col), ("t.f", line, col), "{e}");
    for p in parts {
        assert!(e.message.contains(p), "'{}' lacks '{p}'", e.message);
    }
    e
}

/// The error points at the first occurrence of `needle` in `text`.
fn err_on(text: &str, needle: &str, parts: &[&str]) -> WmlError {
    let at = text.find(needle).unwrap_or_else(|| panic!("'{needle}' not in the text"));
    let line = text[..at].matches('\n').count() as u32 + 1;
    let col = text[..at].rsplit('\n').next().unwrap().chars().count() as u32 + 1;
    err_at(text, line, col, parts)
}

/// A minimal valid process, to append to scripts that test other things.
const PROC: &str = "define process name=p { thread name=t { flowop hog name=h, value=1 } }\n";

fn flowops(p: &FlowPlan) -> &[FlowopSpec] {
    &p.processes[0].threads[0].flowops
}

/// Written from the fileserver description in the reference (§3), with the
/// size variable set after the fileset that uses it.
const FILESERVER: &str = r#"
# fileserver-like: create/write/append/read/delete/stat over 10000 files
set $dir=/tmp/fsb
set $nfiles=10000
set $meandirwidth=20
set $nthreads=50
set $iosize=1m
set $meanappendsize=16k
set $runtime=60

define fileset name=bigfileset,path=$dir,size=$filesize,entries=$nfiles,dirwidth=$meandirwidth,prealloc=80

define process name=filereader,instances=1
{
  thread name=filereaderthread,memsize=10m,instances=$nthreads
  {
    flowop createfile name=createfile1,filesetname=bigfileset,fd=1
    flowop writewholefile name=wrtfile1,srcfd=1,fd=1,iosize=$iosize
    flowop closefile name=closefile1,fd=1
    flowop openfile name=openfile1,filesetname=bigfileset,fd=1
    flowop appendfilerand name=appendfilerand1,iosize=$meanappendsize,fd=1
    flowop closefile name=closefile2,fd=1
    flowop openfile name=openfile2,filesetname=bigfileset,fd=1
    flowop readwholefile name=readfile1,fd=1,iosize=$iosize
    flowop closefile name=closefile3,fd=1
    flowop deletefile name=deletefile1,filesetname=bigfileset
    flowop statfile name=statfile1,filesetname=bigfileset
  }
}

set $filesize=cvar(type=cvar-gamma,parameters=mean:131072;gamma:1.5)
echo "File-server personality loaded: $nthreads threads"
run $runtime
"#;

#[test]
fn fileserver_lowers_into_the_expected_plan() {
    let p = parse(FILESERVER, "fileserver.f", "fileserver", &opts()).unwrap().plan;
    assert_eq!((p.name.as_str(), p.source.as_str()), ("fileserver", "fileserver.f"));
    assert_eq!(p.filesets.len(), 1);
    let fs = &p.filesets[0];
    assert_eq!((fs.name.as_str(), fs.path.to_str().unwrap()), ("bigfileset", "/tmp/fsb"));
    assert_eq!((fs.entries, fs.dirwidth, fs.prealloc_pct, fs.single_file), (10000, Num::Fixed(20), 80, false));
    assert_eq!((fs.leafdirs, fs.dirgamma, fs.cached), (0, 1.5, true));
    let Num::Random(i) = fs.size else { panic!("size should be random: {:?}", fs.size) };
    assert_eq!(p.randvars[i].dist, Dist::CvarGamma { mean: 131072.0, shape: 1.5 });
    assert_eq!(p.randvars[i].name, "filesize");
    assert_eq!(p.randvars.len(), 1);

    assert_eq!(p.processes.len(), 1);
    let pr = &p.processes[0];
    assert_eq!((pr.name.as_str(), pr.instances, pr.threads.len()), ("filereader", 1, 1));
    let t = &pr.threads[0];
    assert_eq!((t.instances, t.memsize, t.ioprio), (50, 10 << 20, None));
    use FlowopKind::*;
    let kinds: Vec<FlowopKind> = t.flowops.iter().map(|f| f.kind).collect();
    assert_eq!(
        kinds,
        [
            CreateFile,
            WriteWholeFile,
            CloseFile,
            OpenFile,
            AppendFileRand,
            CloseFile,
            OpenFile,
            ReadWholeFile,
            CloseFile,
            DeleteFile,
            StatFile
        ]
    );
    let names: Vec<&str> = t.flowops.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names[1], "wrtfile1");
    assert_eq!(names[10], "statfile1");
    let w = &t.flowops[1];
    assert_eq!((w.srcfd, w.fd, w.iosize, w.fileset), (Some(1), 1, Num::Fixed(1 << 20), None));
    assert_eq!(t.flowops[0].fileset, Some(0));
    assert_eq!(t.flowops[4].iosize, Num::Fixed(16 << 10));
    assert_eq!(t.flowops[9].fd, 0);

    assert_eq!((p.run.duration_s, p.run.duration_from.as_str(), p.run.interval, p.run.warmup_s), (60, "run", None, 0));
    assert_eq!(p.mode, QuitMode::Timeout);
    assert_eq!(p.prelude, vec![Step::Echo("File-server personality loaded: 50 threads".into())]);
    assert_eq!(p.seed, DEFAULT_SEED);
    let var = |n: &str| p.vars.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
    assert_eq!(var("nfiles").as_deref(), Some("10000"));
    assert_eq!(var("filesize").as_deref(), Some("cvar(cvar-gamma, mean=131072, gamma=1.5)"));
}

#[test]
fn every_statement_kind() {
    let text = r#"
set $d = "/data/x y"
set $n = 4
set $flag = false
set $w = word
set mode quit alldone
set mode nousestats
version
debug 1
list filesets
usage "fsbench test"
enable lathist
eventgen rate=$n
define file name=f1, path=$d, size=1g, prealloc, reuse, paralloc, trusttree, readonly, cached=$flag
define fileset name=fs, path=/x, entries=$n, dirwidth=2, leafdirs=3, dirgamma=0, prealloc=50, writeonly
create files
create processes
system "sync; echo $w"
sleep $n
echo "n=$n \$n"
vars
warmup 5
define process name=p, instances=2, nice=5 {
  thread name=t, instances=3, memsize=1m, useism, ioprio=3 {
    flowop read name=r, filesetname=f1, iosize=8k, random, directio, dsync, noreadahead, fd=2, opennext, workingset=1m
    flowop eventlimit name=lim
    flowop print name=pr, value="hello"
    flowop sempost name=sp, target=sb, value=2, blocking
    flowop semblock name=sb, value=3, highwater=1000
    flowop makedir name=mk, filesetname=fs
    flowop finishoncount name=fin, value=100, target=r
  }
}
psrun -5 30
"#;
    let parsed = parse_with(text, &opts());
    let p = &parsed.plan;
    assert_eq!(p.mode, QuitMode::AllDone);
    assert!(p.lathist);
    assert_eq!(p.eventgen_rate, Some(4));
    assert_eq!(p.run.warmup_s, 5);
    assert_eq!((p.run.duration_s, p.run.duration_from.as_str()), (30, "psrun"));
    assert_eq!(p.run.interval, Some(Interval { period_s: 5, reset: true }));
    assert_eq!(p.prelude.len(), 6, "{:?}", p.prelude);
    assert!(matches!(&p.prelude[0], Step::Echo(v) if v.starts_with("fsbench ")));
    assert_eq!(p.prelude[1], Step::CreateFiles);
    assert_eq!(p.prelude[2], Step::System("sync; echo word".into()));
    assert_eq!(p.prelude[3], Step::Sleep(4));
    assert_eq!(p.prelude[4], Step::Echo("n=4 $n".into()));
    assert_eq!(p.prelude[5], Step::Echo("$d = /data/x y\n$n = 4\n$flag = false\n$w = word".into()));
    for w in ["debug", "list", "create processes"] {
        assert!(parsed.warnings.iter().any(|x| x.message.contains(w)), "no warning about {w}: {:?}", parsed.warnings);
    }

    let f1 = &p.filesets[0];
    assert!(f1.single_file && f1.reuse && f1.paralloc && f1.trusttree && f1.readonly && !f1.cached);
    assert_eq!((f1.entries, f1.size, f1.prealloc_pct, f1.path.to_str().unwrap()), (1, Num::Fixed(1 << 30), 100, "/data/x y"));
    let fs = &p.filesets[1];
    assert_eq!((fs.entries, fs.leafdirs, fs.dirgamma, fs.prealloc_pct, fs.writeonly, fs.size), (4, 3, 0.0, 50, true, Num::Fixed(1024)));

    let pr = &p.processes[0];
    assert_eq!((pr.instances, pr.nice), (2, 5));
    let t = &pr.threads[0];
    assert_eq!((t.instances, t.memsize, t.useism, t.ioprio), (3, 1 << 20, true, Some(3)));
    let r = &t.flowops[0];
    assert!(r.random && r.directio && r.dsync && r.noreadahead && r.opennext);
    assert_eq!((r.fd, r.iosize, r.workingset, r.fileset, r.iters), (2, Num::Fixed(8192), Num::Fixed(1 << 20), Some(0), Num::Fixed(1)));
    assert_eq!(t.flowops[1].kind, FlowopKind::EventLimit);
    assert_eq!((t.flowops[2].kind, t.flowops[2].text.as_deref()), (FlowopKind::Print, Some("hello")));
    let sp = &t.flowops[3];
    assert_eq!((sp.target.as_deref(), sp.value, sp.blocking), (Some("sb"), Num::Fixed(2), true));
    assert_eq!((t.flowops[4].value, t.flowops[4].highwater), (Num::Fixed(3), 1000));
    assert_eq!(t.flowops[5].fileset, Some(1));
    assert_eq!((t.flowops[6].kind, t.flowops[6].value), (FlowopKind::FinishOnCount, Num::Fixed(100)));
}

#[test]
fn defaults_of_every_entity() {
    let p = plan("define fileset name=a,path=/p\ndefine process name=p { thread name=t { flowop read name=r } }");
    let fs = &p.filesets[0];
    assert_eq!((fs.entries, fs.leafdirs, fs.dirgamma, fs.size, fs.prealloc_pct, fs.dirdepthrv), (0, 0, 1.5, Num::Fixed(1024), 0, None));
    assert!(!fs.reuse && !fs.paralloc && !fs.readonly && !fs.writeonly && fs.cached);
    let t = &p.processes[0].threads[0];
    assert_eq!((p.processes[0].instances, p.processes[0].nice, t.instances, t.memsize, t.ioprio), (1, 0, 1, 0, None));
    let f = &t.flowops[0];
    assert_eq!(
        (f.fd, f.iosize, f.iters, f.value, f.highwater, f.srcfd, f.fileset),
        (0, Num::Fixed(0), Num::Fixed(1), Num::Fixed(0), 1, None, None)
    );
    assert_eq!(p.mode, QuitMode::Timeout);
    assert_eq!((p.eventgen_rate, p.lathist), (None, false));
}

#[test]
fn repeated_attribute_last_wins_and_aliases() {
    let p = plan(
        "define fileset name=a,path=/p,filesize=5,size=7,entries=2,dirwidth=2\n\
         define process name=p { thread name=t { flowop read name=r, iosize=1, iosize=2, filename=a, rotatefd, workingset=9 } }",
    );
    assert_eq!(p.filesets[0].size, Num::Fixed(7));
    let f = &flowops(&p)[0];
    assert_eq!((f.iosize, f.fileset, f.opennext, f.workingset), (Num::Fixed(2), Some(0), true, Num::Fixed(9)));
}

#[test]
fn lazy_binding_uses_the_final_value() {
    let text = format!("set $n=1\ndefine fileset name=a,path=$dir,entries=$n,dirwidth=10\nset $n=100\nset $dir=/late\n{PROC}run 5");
    let p = plan(&text);
    assert_eq!((p.filesets[0].entries, p.filesets[0].path.to_str().unwrap()), (100, "/late"));
    // ... but echo sees the value at its own line.
    let p = plan(&format!("set $n=1\necho \"n=$n\"\nset $n=2\n{PROC}"));
    assert_eq!(p.prelude, vec![Step::Echo("n=1".into())]);
}

#[test]
fn variables_set_only_after_run_or_never_are_errors_at_the_use() {
    let e = err_on(&format!("define fileset name=a,path=$dir\n{PROC}run 5\nset $dir=/x"), "$dir", &["$dir is not set", "line 4"]);
    assert!(e.message.contains("after the run line"), "{e}");
    err_at(&format!("{PROC}echo \"x=$never\""), 2, 9, &["$never is not set", "--set never="]);
    err_at(&format!("{PROC}sleep $later\nset $later=1"), 2, 7, &["$later is not set", "line 3"]);
}

#[test]
fn set_overrides_win_and_typos_are_caught() {
    let text = format!("set $n=10\nset $dir=/a\nset $sz=cvar(type=cvar-exponential,parameters=mean:100)\ndefine fileset name=a,path=$dir,entries=$n,dirwidth=5,size=$sz\n{PROC}");
    let p = parse_with(&text, &with_sets(&[("n", "20"), ("$dir", "/mnt/my data"), ("sz", "4k")])).plan;
    assert_eq!((p.filesets[0].entries, p.filesets[0].path.to_str().unwrap(), p.filesets[0].size), (20, "/mnt/my data", Num::Fixed(4096)));
    assert!(p.randvars.is_empty(), "the overridden cvar is not used: {:?}", p.randvars);
    assert!(p.vars.contains(&("n".to_string(), "20".to_string())), "{:?}", p.vars);

    // A --set randvar replaces a constant.
    let p = parse_with(&text, &with_sets(&[("sz", "randvar(type=uniform, mean=100, min=10)")])).plan;
    let Num::Random(i) = p.filesets[0].size else { panic!() };
    assert_eq!((p.randvars[i].dist.clone(), p.randvars[i].min), (Dist::Uniform { mean: 100.0 }, 10.0));

    // Overrides win over sets that come later in the script, too.
    let p = parse_with(&format!("{PROC}set $x=1\neventgen rate=$x\nset $x=2"), &with_sets(&[("x", "7")])).plan;
    assert_eq!(p.eventgen_rate, Some(7));

    let e = err_with(&text, &with_sets(&[("nn", "5")]));
    assert_eq!((e.file.as_str(), e.line, e.col), ("--set", 0, 0));
    assert!(e.message.contains("$nn") && e.message.contains("did you mean n?") && e.message.contains("$dir, $n, $sz"), "{e}");
    let e = err_with(&text, &with_sets(&[("n", "ten")]));
    assert_eq!((e.file.as_str(), e.line, e.col), ("t.f", 4, 41), "{e}");
    assert!(e.message.contains("expected a non-negative integer, found string \"ten\" ($n from --set n=ten)"), "{e}");
    let e = err_with(&text, &with_sets(&[("sz", "cvar(type=cvar-normal, parameters=mean:1)")]));
    assert_eq!(e.file, "--set");
    assert!(e.message.contains("--set sz=") && e.message.contains("missing parameter sigma"), "{e}");
    let e = err_with(&text, &with_sets(&[("1x", "5")]));
    assert!(e.message.contains("expected a variable name"), "{e}");
}

#[test]
fn set_override_provides_a_variable_the_script_only_uses() {
    let p = parse_with(&format!("define fileset name=a,path=$dir\n{PROC}"), &with_sets(&[("dir", "/given")])).plan;
    assert_eq!(p.filesets[0].path.to_str(), Some("/given"));
    assert_eq!(p.vars, vec![("dir".to_string(), "/given".to_string())]);
}

#[test]
fn runtime_with_and_without_a_run_line() {
    let o = WmlOptions { runtime_s: Some(7), ..WmlOptions::default() };
    let p = parse_with(&format!("{PROC}run 30"), &o).plan;
    assert_eq!((p.run.duration_s, p.run.duration_from.as_str()), (7, "--runtime"));
    let p = parse_with(PROC, &o).plan;
    assert_eq!((p.run.duration_s, p.run.duration_from.as_str()), (7, "--runtime"));
    let parsed = parse_with(PROC, &opts());
    assert_eq!((parsed.plan.run.duration_s, parsed.plan.run.duration_from.as_str()), (60, "default"));
    assert!(parsed.warnings.iter().any(|w| w.message.contains("no run line") && w.message.contains("60")), "{:?}", parsed.warnings);
    let p = plan(&format!("{PROC}run"));
    assert_eq!((p.run.duration_s, p.run.duration_from.as_str()), (60, "run"));
    let e = err_with(PROC, &WmlOptions { runtime_s: Some(0), ..WmlOptions::default() });
    assert_eq!(e.file, "--runtime");
    err_at(&format!("{PROC}run 0"), 2, 5, &["at least 1 second"]);
}

#[test]
fn psrun_periods() {
    let p = plan(&format!("{PROC}psrun"));
    assert_eq!((p.run.interval, p.run.duration_s), (Some(Interval { period_s: 10, reset: false }), 60));
    let p = plan(&format!("set $p=-3\n{PROC}psrun $p"));
    assert_eq!(p.run.interval, Some(Interval { period_s: 3, reset: true }));
    let p = plan(&format!("{PROC}psrun 2 9"));
    assert_eq!((p.run.interval, p.run.duration_s), (Some(Interval { period_s: 2, reset: false }), 9));
    err_at(&format!("{PROC}psrun 0"), 2, 7, &["non-zero period"]);
}

#[test]
fn statements_after_run_or_quit_are_ignored_with_warnings() {
    let parsed = parse_with(&format!("{PROC}run 5\necho \"late\"\nset $x=1"), &opts());
    assert!(parsed.plan.prelude.is_empty());
    let said: Vec<&str> = parsed.warnings.iter().map(|w| w.message.as_str()).collect();
    assert_eq!(said, ["line 3: ignored: after run (echo)", "line 4: ignored: after run (set)"]);
    let parsed = parse_with(&format!("{PROC}quit\ndefine process name=q {{ thread name=t {{ flowop hog name=h }} }}"), &opts());
    assert_eq!(parsed.plan.processes.len(), 1);
    assert!(parsed.warnings.iter().any(|w| w.message.contains("line 3: ignored: after quit")), "{:?}", parsed.warnings);
    // Syntax errors after the run line still count.
    err_at(&format!("{PROC}run 5\nset = 4"), 3, 5, &["expected a $variable or mode"]);
}

#[test]
fn arithmetic_of_the_14_dialect() {
    let p = plan(&format!("set $a=10\nset $b = $a * 2 + 3 * (4 - 1) / 2 - -1\nset $c=$a/3\n{PROC}eventgen rate=$b"));
    assert_eq!(p.eventgen_rate, Some(10 * 2 + 9 / 2 + 1));
    assert!(p.vars.contains(&("c".to_string(), "3".to_string())));
    err_at(&format!("set $z=0\nset $x = 5 / $z\n{PROC}"), 2, 12, &["division by zero"]);
    err_at(&format!("set $x = 16g * 16g * 16g\n{PROC}"), 1, 14, &["overflow", "17179869184 * 17179869184"]);
    err_at(&format!("set $x = 18446744073709551615 + 1\n{PROC}"), 1, 31, &["overflow"]);
    err_at(&format!("set $s=abc\nset $x = $s + 1\n{PROC}"), 2, 10, &["expected an integer, found string \"abc\""]);
    let deep = format!("set $x = {}1{}\n{PROC}", "(".repeat(200), ")".repeat(200));
    err_at(&deep, 1, 74, &["nests deeper"]);
    // A negative result is fine for psrun, not for a size.
    let p = plan(&format!("set $a=2\nset $p = $a - 7\n{PROC}psrun $p 10"));
    assert_eq!(p.run.interval, Some(Interval { period_s: 5, reset: true }));
    err_at(
        &format!("set $n = 1 - 2\ndefine fileset name=a,path=/x,entries=$n\n{PROC}"),
        2,
        39,
        &["expected a non-negative integer, found integer -1"],
    );
}

#[test]
fn randvar_conversion() {
    let text = "set $g = randvar(type=gamma, mean=4k, gamma=500, min=100, round=512, seed=7)\n\
         set $d = randvar()\n\
         set $u = randvar(type=uniform, randsrc=urandom, seed=3, mean=20, min=10)\n\
         set $t = randvar(type=tabular, randtable={{50, 10, 20}, {50, 30, 40}})\n\
         set $ts = randvar(type=tabular, mean=50, randtable={{100, 0, 50}})\n\
         define process name=p { thread name=t { flowop read name=r, iosize=$g, workingset=$d, iters=$u, value=$t, indexed=$ts } }";
    let p = plan(text);
    let f = &flowops(&p)[0];
    let rv = |n: Num| match n {
        Num::Random(i) => p.randvars[i].clone(),
        Num::Fixed(v) => panic!("fixed {v}"),
    };
    let g = rv(f.iosize);
    assert_eq!(
        (g.dist, g.min, g.round, g.seed, g.max, g.name.as_str()),
        (Dist::Gamma { mean: 4096.0, shape: 0.5 }, 100.0, 512, Some(7), None, "g")
    );
    // Filebench's defaults: gamma 1500, mean = gamma/1000.
    assert_eq!(rv(f.workingset).dist, Dist::Gamma { mean: 1.5, shape: 1.5 });
    let u = rv(f.iters);
    assert_eq!((u.dist, u.min, u.seed), (Dist::Uniform { mean: 20.0 }, 10.0, None));
    assert_eq!(rv(f.value).dist, Dist::Tabular { rows: vec![(50, 10.0, 20.0), (50, 30.0, 40.0)] });
    assert_eq!(rv(f.indexed.unwrap()).dist, Dist::Tabular { rows: vec![(100, 0.0, 100.0)] });
    assert_eq!(p.randvars.len(), 5);

    // The needle marks where the error must point.
    let bad = |rhs: &str, needle: &str, msg: &str| {
        err_on(&format!("set $x = {rhs}\n{PROC}"), needle, &[msg]);
    };
    bad("randvar(type=normal)", "normal", "expected uniform, gamma or tabular");
    bad("randvar(gamma=0)", "0)", "gamma must be at least 1");
    bad("randvar(mean=5, min=10)", "5,", "must be at least min");
    bad("randvar(type=tabular)", "tabular", "needs randtable");
    bad("randvar(type=tabular, randtable={{50,1,2},{40,1,2}})", "{{", "add up to 100");
    bad("randvar(type=tabular, randtable={{100,5,2}})", "5,2", "must not exceed high");
    bad("randvar(randtable={{100,1,2}})", "randtable", "only to type=tabular");
    bad("randvar(randsrc=dev)", "dev", "rand48 or urandom");
    bad("randvar(typo=1)", "typo", "unknown attribute 'typo' for randvar: did you mean 'type'?");
}

#[test]
fn cvar_conversion() {
    let cases: &[(&str, Dist)] = &[
        ("type=cvar-gamma", Dist::CvarGamma { mean: 4096.0, shape: 1.5 }),
        ("type=cvar-gamma, parameters=\"gamma:0.5\"", Dist::CvarGamma { mean: 4096.0, shape: 0.5 }),
        ("type=cvar-normal, parameters=mean:100;sigma:2.5", Dist::CvarNormal { mean: 100.0, sigma: 2.5 }),
        ("type=cvar-uniform, parameters=lower:1;upper:8k", Dist::CvarUniform { lower: 1.0, upper: 8192.0 }),
        ("type=cvar-lognormal, parameters=shape:0.5;scale:9", Dist::CvarLognormal { shape: 0.5, scale: 9.0 }),
        ("type=cvar-exponential, parameters=mean:3", Dist::CvarExponential { mean: 3.0 }),
        ("type=cvar-triangular, parameters=lower:1;upper:9;mode:2", Dist::CvarTriangular { lower: 1.0, upper: 9.0, mode: 2.0 }),
        ("type=cvar-weibull, parameters=shape:2;scale:5", Dist::CvarWeibull { shape: 2.0, scale: 5.0 }),
        ("type=cvar-erlang, parameters=shape:3;rate:0.25", Dist::CvarErlang { shape: 3, rate: 0.25 }),
    ];
    for (args, want) in cases {
        let p = plan(&format!(
            "set $c = cvar({args}, min=1, max=100000, round=4)\n\
             define process name=p {{ thread name=t {{ flowop read name=r, iosize=$c }} }}"
        ));
        let rv = &p.randvars[0];
        assert_eq!((&rv.dist, rv.min, rv.max, rv.round, rv.seed), (want, 1.0, Some(100000.0), 4, None), "{args}");
    }
    let bad = |args: &str, msg: &str| {
        let e = err_with(&format!("set $c = cvar({args})\n{PROC}"), &opts());
        assert!(e.message.contains(msg) && e.line == 1, "{args}: {e}");
    };
    bad("type=cvar-normal, parameters=mean:1", "missing parameter sigma");
    bad("type=cvar-normal, parameters=mean:1;sigma:1;tau:3", "unknown parameter 'tau'");
    bad("type=cvar-gama", "did you mean 'cvar-gamma'?");
    bad("parameters=mean:1", "missing required attribute type");
    bad("type=cvar-erlang, parameters=shape:1.5;rate:1", "whole number");
    bad("type=cvar-triangular, parameters=lower:5;upper:1;mode:2", "lower < upper");
    bad("type=cvar-exponential, parameters=mean:0", "greater than 0");
    bad("type=cvar-gamma, min=10, max=5", "max (5) must be at least min (10)");
    bad("type=cvar-uniform, parameters=lower:x;upper:1", "expected a number");
}

#[test]
fn random_variables_only_where_numbers_may_be_random() {
    let rv = "set $r = randvar(mean=5)\n";
    err_on(
        &format!("{rv}define fileset name=a,path=/x,entries=$r\n{PROC}"),
        "$r\n",
        &["entries", "found random variable randvar(gamma, mean=5"],
    );
    err_on(&format!("{rv}define fileset name=$r,path=/x\n{PROC}"), "$r,", &["name: expected a string, found random variable"]);
    err_on(
        &format!("{rv}define process name=p {{ thread name=t {{ flowop read name=r, random=$r }} }}"),
        "$r }",
        &["random: expected true or false"],
    );
    err_on(&format!("{rv}{PROC}echo \"$r\""), "$r\"", &["expected a string, found random variable"]);
    // Random sizes, widths and depths are fine.
    let p = plan(&format!("{rv}define fileset name=a,path=/x,entries=10,dirwidth=$r,dirdepthrv=$r,size=$r\n{PROC}"));
    let fs = &p.filesets[0];
    assert_eq!((fs.dirwidth, fs.dirdepthrv, fs.size), (Num::Random(0), Some(Num::Random(0)), Num::Random(0)));
    assert_eq!(p.randvars.len(), 1);
}

#[test]
fn composite_flowops() {
    let text = r#"
set $g = 4k
define fileset name=fs, path=/x, entries=10, dirwidth=5
define flowop name=rmw, iters=2, $sz=8k, $fs=fs, $g {
  flowop openfile name=open, filesetname=$fs, fd=1
  flowop read name=rd, fd=1, iosize=$sz
  flowop write name=wr, fd=1, iosize=$g
  flowop closefile name=close, fd=1
}
define flowop name=outer, $inner {
  flowop rmw name=nested, $sz=$inner
}
define process name=p {
  thread name=t {
    flowop rmw name=a
    flowop rmw name=b, iters=5, $sz=64k, $g=1m
    flowop outer name=o, $inner=2k
  }
}
"#;
    let p = plan(text);
    let f = flowops(&p);
    assert_eq!(f.len(), 3);
    let a = &f[0];
    assert_eq!((a.kind, a.name.as_str(), a.iters, a.children.len()), (FlowopKind::Composite, "a", Num::Fixed(2), 4));
    let names: Vec<&str> = a.children.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["a.open", "a.rd", "a.wr", "a.close"]);
    assert_eq!((a.children[0].fileset, a.children[1].iosize, a.children[2].iosize), (Some(0), Num::Fixed(8192), Num::Fixed(4096)));
    let b = &f[1];
    assert_eq!((b.iters, b.children[1].iosize, b.children[2].iosize), (Num::Fixed(5), Num::Fixed(65536), Num::Fixed(1 << 20)));
    let o = &f[2];
    assert_eq!((o.children[0].name.as_str(), o.children[0].kind), ("o.nested", FlowopKind::Composite));
    let inner = &o.children[0].children;
    assert_eq!((inner[1].name.as_str(), inner[1].iosize), ("o.nested.rd", Num::Fixed(2048)));

    let c = |body: &str| format!("define fileset name=fs, path=/x\ndefine flowop name=c, $v=1 {{ flowop hog name=h, value=$v }}\n{body}");
    let proc = |f: &str| c(&format!("define process name=p {{ thread name=t {{ {f} }} }}"));
    err_on(&proc("flowop c name=x, $w=2"), "$w", &["has no local variable $w", "$v"]);
    err_on(&proc("flowop c name=x, iosize=2"), "iosize", &["unknown attribute 'iosize' for composite flowop c"]);
    err_at(
        "define process name=p { thread name=t { flowop late name=x } }\ndefine flowop name=late { flowop hog name=h }",
        1,
        48,
        &["defined at line 2, after this use"],
    );
    err_at(&c("define flowop name=c { flowop hog name=h }"), 3, 20, &["already defined at line 2"]);
    err_at("define flowop name=read { flowop hog name=h }", 1, 20, &["built-in"]);
    err_at("define flowop name=e, iters=2 { }", 1, 1, &["at least one flowop"]);
}

#[test]
fn composite_expansion_is_bounded() {
    // Each level doubles the flowops: 2^20 children would be far too many.
    let mut text = String::from("define flowop name=c0 { flowop hog name=h }\n");
    for i in 1..=20 {
        text.push_str(&format!("define flowop name=c{i} {{ flowop c{} name=a\nflowop c{} name=b }}\n", i - 1, i - 1));
    }
    text.push_str("define process name=p { thread name=t { flowop c20 name=top } }");
    let e = err_with(&text, &opts());
    assert!(e.message.contains("nest deeper") || e.message.contains("more than"), "{e}");
}

#[test]
fn fileset_without_dirwidth_gets_filebenchs_default_with_a_located_warning() {
    let parsed = parse_with(&format!("set $dir=/x\n\ndefine fileset name=flat,path=$dir,entries=12\n{PROC}"), &opts());
    assert_eq!(parsed.plan.filesets[0].dirwidth, Num::Fixed(0));
    let w: Vec<&Warning> = parsed.warnings.iter().filter(|w| w.message.contains("dirwidth")).collect();
    assert_eq!(w.len(), 1, "{:?}", parsed.warnings);
    assert!(w[0].message.starts_with("t.f:3:1: fileset flat has no dirwidth") && w[0].message.contains("default 0"), "{}", w[0]);
    // One entry needs no width and gets no warning; an explicit width below 2 stays an error.
    let parsed = parse_with(&format!("define fileset name=one,path=/x,entries=1\n{PROC}"), &opts());
    assert!(parsed.warnings.iter().all(|w| !w.message.contains("dirwidth")), "{:?}", parsed.warnings);
    err_on(&format!("define fileset name=a,path=/y,entries=2,dirwidth=0\n{PROC}"), "0\n", &["dirwidth must be at least 2"]);
}

#[test]
fn finishon_without_quit_mode_runs_in_a_14_script_only() {
    let body = "define process name=p { thread name=t {\n flowop hog name=h, value=1\n flowop finishoncount name=fin, value=5 } }\n";
    // 1.4 (a fileset's `cached`): accepted in timeout mode, with one located warning.
    let text = format!("define fileset name=a,path=/x,entries=1,cached=false\n{body}");
    let parsed = parse_with(&text, &opts());
    assert_eq!(parsed.plan.mode, QuitMode::Timeout);
    assert_eq!(flowops(&parsed.plan)[1].kind, FlowopKind::FinishOnCount);
    let w: Vec<&Warning> = parsed.warnings.iter().filter(|w| w.message.contains("finishoncount")).collect();
    assert_eq!(w.len(), 1, "{:?}", parsed.warnings);
    assert!(
        w[0].message.starts_with("t.f:4:9: Filebench 1.4 script (fileset attribute cached at line 1)")
            && w[0].message.contains("ends the run"),
        "{}",
        w[0]
    );
    // The same flow in a 1.5 script is refused, as Filebench 1.5 does.
    err_on(
        &format!("define fileset name=a,path=/x,entries=1\n{body}"),
        "finishoncount",
        &["finishoncount needs 'set mode quit firstdone'"],
    );
}

#[test]
fn dialect_14() {
    let text = r#"
usage "usage: set $nfiles=<n>"
set $dir=/tmp
set $nfiles=100
set $half=$nfiles / 2
set $cached=false
define randvar name=$iosz, type=gamma, mean=8k, gamma=1000
define fileset name=big,path=$dir,size=16k,entries=$half,dirwidth=10,cached=$cached
define fileset name=exact,path=$dir,size=16k,entries=1,filesizegamma=0
define fileset name=steep,path=$dir,size=32k,entries=1,filesizegamma=500
define file name=one,path=$dir,size=1m
define process name=p { thread name=t { flowop read name=r, filesetname=big, iosize=$iosz, wss=64k } }
vars
warmup 3
"#;
    let parsed = parse_with(text, &opts());
    let p = &parsed.plan;
    let big = &p.filesets[0];
    assert_eq!((big.entries, big.cached), (50, false));
    let rv = |n: Num| match n {
        Num::Random(i) => p.randvars[i].dist.clone(),
        Num::Fixed(v) => panic!("fixed {v}"),
    };
    assert_eq!(rv(big.size), Dist::Gamma { mean: 16384.0, shape: 1.5 });
    assert_eq!(p.filesets[1].size, Num::Fixed(16384));
    assert_eq!(rv(p.filesets[2].size), Dist::Gamma { mean: 32768.0, shape: 0.5 });
    assert_eq!(p.filesets[3].size, Num::Fixed(1 << 20), "define file keeps its exact size");
    let f = &flowops(p)[0];
    assert_eq!((rv(f.iosize), f.workingset), (Dist::Gamma { mean: 8192.0, shape: 1.0 }, Num::Fixed(65536)));
    assert_eq!(p.run.warmup_s, 3);
    let Some(Step::Echo(vars)) = p.prelude.first() else { panic!("{:?}", p.prelude) };
    assert!(vars.contains("$half = 50") && vars.contains("$iosz = randvar(gamma, mean=8192, shape=1)"), "{vars}");
    let w: Vec<&Warning> = parsed.warnings.iter().filter(|w| w.message.contains("1.4")).collect();
    assert_eq!(w.len(), 1, "{:?}", parsed.warnings);
    assert!(w[0].message.contains("usage at line 2") && w[0].message.contains("big"), "{}", w[0]);

    // A 1.5 script keeps constant sizes constant.
    let p = plan(&format!("define fileset name=a,path=/x,size=16k\n{PROC}"));
    assert_eq!(p.filesets[0].size, Num::Fixed(16384));
    // filesizegamma alone (explicit) also works in an otherwise 1.5 script, and needs a constant size.
    err_on(
        &format!("set $r=randvar(mean=9)\ndefine fileset name=a,path=/x,size=$r,filesizegamma=5\n{PROC}"),
        "filesizegamma",
        &["fileset a: filesizegamma needs a constant size"],
    );
}

#[test]
fn located_semantic_errors() {
    let fs = "define fileset name=fs,path=/x,entries=10,dirwidth=5\n";
    let flow = |f: &str| format!("{fs}define process name=p {{ thread name=t {{ {f} }} }}");
    // The needle marks where the error must point.
    let on = |f: &str, needle: &str, parts: &[&str]| err_on(&flow(f), needle, parts);
    on(
        "flowop read name=r, iosiz=5",
        "iosiz",
        &["unknown attribute 'iosiz' for flowop read", "did you mean 'iosize'?", "valid attributes: name,"],
    );
    on(
        "flowop closefile name=c, directio",
        "directio",
        &["directio has effect only on a flowop that opens the file (createfile, openfile, read, write, ...)"],
    );
    on("flowop fsync name=c, dsync=true", "dsync", &["dsync has effect only"]);
    on("flowop hog name=c, noreadahead", "noreadahead", &["noreadahead has effect only"]);
    let p = plan(&flow("flowop closefile name=c, directio=false"));
    assert!(!flowops(&p)[0].directio);
    on("flowop fsync name=c, filesetname=fs", "filesetname", &["filesetname has no effect on flowop fsync"]);
    for ty in ["createfile", "openfile", "makedir", "removedir", "listdir"] {
        on(&format!("flowop {ty} name=c"), ty, &[&format!("flowop {ty} needs filesetname")]);
    }
    on("flowop read name=c, filesetname=fss", "fss", &["no fileset or file named 'fss'", "did you mean 'fs'?"]);
    on("flowop wakeup name=w, target=nobody", "nobody", &["target: no flowop named 'nobody'"]);
    on("flowop raed name=c", "raed", &["unknown flowop type 'raed'", "did you mean 'read'?"]);
    on("flowop aiowrite name=c", "aiowrite", &["aiowrite needs random"]);
    assert!(plan(&flow("flowop aiowrite name=c, random")).processes[0].threads[0].flowops[0].random);
    on("flowop finishoncount name=c, value=5", "finishoncount", &["finishoncount needs 'set mode quit firstdone'"]);
    on("flowop finishonbytes name=c, value=5", "finishonbytes", &["in timeout mode"]);
    let p = plan(&format!("set mode quit firstdone\n{}", flow("flowop finishonbytes name=c, value=5")));
    assert_eq!(flowops(&p)[0].kind, FlowopKind::FinishOnBytes);
    on("flowop read name=c, fd=128", "128", &["fd: expected at most 127, found 128"]);
    on("flowop writewholefile name=c, srcfd=200", "200", &["srcfd: expected at most 127"]);
    on("flowop read name=c, iosize=big", "big", &["iosize: expected a non-negative integer, found string \"big\""]);
    on("flowop read name=c, random=maybe", "maybe", &["random: expected true or false, found string \"maybe\""]);
    on("flowop read iosize=5", "read iosize", &["flowop read: missing required attribute name"]);
    on("flowop read name=c, iosize", "iosize", &["iosize needs a value"]);
    on("flowop read name=c, $x=1", "$x", &["only composite flowops"]);

    err_on(&format!("{fs}define fileset name=fs,path=/y\n{PROC}"), "fs,path=/y", &["'fs' is already defined at line 1"]);
    err_on(&format!("{fs}define file name=fs,path=/y\n{PROC}"), "fs,path=/y", &["already defined"]);
    err_at(&format!("define fileset path=/y\n{PROC}"), 1, 1, &["fileset: missing required attribute name"]);
    err_at(&format!("define fileset name=a\n{PROC}"), 1, 1, &["fileset a: missing required attribute path"]);
    err_on(&format!("define fileset name=a,path=/y,leafdirs=20,dirwidth=1\n{PROC}"), "1\n", &["dirwidth must be at least 2"]);
    err_on(&format!("define fileset name=a,path=/y,prealloc=101\n{PROC}"), "101", &["prealloc is a percentage", "101"]);
    err_on(&format!("define file name=a,path=/y,entries=5\n{PROC}"), "entries", &["unknown attribute 'entries' for file"]);
    err_on(&format!("define fileset name=a,path=/y,sise=5\n{PROC}"), "sise", &["did you mean 'size'?"]);
    err_on(&format!("define fileset name=a,path=/y,readonly,writeonly\n{PROC}"), "writeonly", &["exclude each other"]);

    err_at("define process name=p { }", 1, 1, &["process p has no threads"]);
    err_at("define process name=p {\n thread name=t { } }", 2, 2, &["thread t has no flowops"]);
    err_on("define process name=p, instances=0 { thread name=t { flowop hog name=h } }", "instances", &["instances must be at least 1"]);
    err_on("define process name=p, nice=40 { thread name=t { flowop hog name=h } }", "40", &["nice: expected an integer from -20 to 19"]);
    err_on("define process name=p { thread name=t, ioprio=9 { flowop hog name=h } }", "9", &["ioprio: expected at most 8"]);
    err_at("set $x=1", 1, 1, &["nothing to run"]);
    err_on(&format!("eventgen rat=5\n{PROC}"), "rat", &["unknown attribute 'rat' for eventgen", "did you mean 'rate'?"]);
}

#[test]
fn syntax_errors_say_what_was_expected() {
    err_at("define fileset name=a,\n", 2, 1, &["expected an attribute name, found end of file"]);
    err_at("define process name=p { flowop read name=r }", 1, 25, &["expected thread or '}', found 'flowop'"]);
    err_at("define process name=p thread", 1, 23, &["expected '{' to open the process's threads, found 'thread'"]);
    err_at("set $x = 5 +\n", 2, 1, &["expected an integer, a $variable or '(' in the expression, found end of file"]);
    err_at("set mode quit sometimes", 1, 15, &["expected timeout, alldone or firstdone"]);
    err_at("  ruun 5", 1, 3, &["unknown command 'ruun'", "did you mean 'run'?"]);
    err_at("enable multi master=x", 1, 8, &["'enable multi' is not supported"]);
    err_at("domultisync value=1", 1, 1, &["'domultisync' is not supported"]);
    err_at("stats clear", 1, 1, &["'stats' is not supported"]);
    err_at("foreach $x in 1,2", 1, 1, &["'foreach' is not supported"]);
    err_at("load webserver", 1, 1, &["'load' is not supported"]);
    err_at("define randvar type=gamma", 1, 8, &["needs name=$variable"]);
    err_at("create stuff", 1, 8, &["expected files or processes"]);
    err_at("echo \"unterminated\n", 1, 6, &["unterminated string"]);
    err_at("set $x = randvar(type=gamma", 1, 28, &["')' to close randvar("]);
    err_at("set $x = randvar(type=tabular, randtable={{1,2}})", 1, 47, &["between table cells"]);
    err_at("define fileset name=a,path=/x,size=12q", 1, 36, &["malformed number '12q'"]);
    err_at("sleep", 1, 6, &["a number of seconds"]);
    let e = err_with("run 99999999999999999999", &opts());
    assert_eq!(e.to_string(), "t.f:1:5: integer 99999999999999999999 is too large: the limit is 18446744073709551615");
}

#[test]
fn semicolons_separate_and_comments_vanish() {
    let p = plan("set $a=1; set $b=2 # set $c=3\n;;\ndefine process name=p { thread name=t { flowop hog name=h, value=$b } }; run 3;");
    assert_eq!((flowops(&p)[0].value, p.run.duration_s), (Num::Fixed(2), 3));
    assert_eq!(p.vars.len(), 2);
}

#[test]
fn options_are_copied_into_the_plan() {
    let content = crate::model::job::BufferContent { zero: true, ..Default::default() };
    let o = WmlOptions { seed: Some(42), content: content.clone(), ..WmlOptions::default() };
    let p = parse_with(PROC, &o).plan;
    assert_eq!((p.seed, p.content.zero), (42, true));
}

#[test]
fn load_names_the_plan_after_the_file_and_reports_unreadable_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("my-load.f");
    std::fs::write(&path, PROC).unwrap();
    let parsed = load(&path, &opts()).unwrap();
    assert_eq!((parsed.plan.name.as_str(), parsed.plan.source), ("my-load", path.display().to_string()));
    let missing = dir.path().join("nope.f");
    let e = load(&missing, &opts()).unwrap_err();
    assert_eq!((e.line, e.col, e.file.clone()), (0, 0, missing.display().to_string()));
    assert!(e.message.contains("cannot read"), "{e}");
    let bad = dir.path().join("bad.f");
    std::fs::write(&bad, b"set $a=1\nset $b=\xff\n").unwrap();
    let e = load(&bad, &opts()).unwrap_err();
    assert_eq!((e.line, e.col), (2, 8), "{e}");
}

#[test]
fn hostile_input_gives_errors_not_crashes() {
    // Deep braces: the grammar has fixed nesting, so the first extra brace is an error.
    err_at(&format!("define process name=p {}", "{".repeat(100_000)), 1, 24, &["expected thread or '}', found '{'"]);
    err_at(
        &format!("set $x = randvar(type=tabular, randtable={})", "{".repeat(100_000)),
        1,
        44,
        &["expected an integer or $variable in the table"],
    );
    // Long operator chains would make deep trees (recursion when evaluated or dropped).
    let chain = format!("set $x = 1{}\n{PROC}", " + 1".repeat(100_000));
    err_at(&chain, 1, 10 + 4 * 256 + 2, &["more than 256 operators"]);
    err_at(&format!("set $x = {}1\n{PROC}", "- ".repeat(100_000)), 1, 10 + 2 * 64, &["nests deeper"]);
    // (Without blanks, "---1" is a bare string, as in Filebench.)
    assert!(plan(&format!("set $x = ---1\n{PROC}")).vars.contains(&("x".to_string(), "---1".to_string())));
    // Doubling a string each line would need terabytes.
    let mut bomb = String::from("set $a = \"0123456789abcdef\"\n");
    for _ in 0..40 {
        bomb.push_str("set $a = \"$a$a\"\n");
    }
    bomb.push_str(PROC);
    let e = err_with(&bomb, &opts());
    assert!(e.message.contains("more than 64 MiB of text"), "{e}");
    assert!((20..=40).contains(&e.line), "{e}");
    // Many `vars` listings of many variables.
    let mut text: String = (0..2000).map(|i| format!("set $v{i} = \"{}\"\n", "x".repeat(100))).collect();
    text.push_str(&"vars\n".repeat(2000));
    text.push_str(PROC);
    assert!(err_with(&text, &opts()).message.contains("MiB of text"));
}

#[test]
fn composite_locals_cannot_blow_up() {
    // 2^16 uses of a composite with many locals: bounded work, an error.
    let locals: Vec<String> = (0..2000).map(|i| format!("$l{i}=1")).collect();
    let mut text = format!("define flowop name=c0, {} {{ flowop hog name=h }}\n", locals.join(", "));
    for i in 1..=15 {
        text.push_str(&format!("define flowop name=c{i} {{ flowop c{} name=a\nflowop c{} name=b }}\n", i - 1, i - 1));
    }
    text.push_str("define process name=p { thread name=t { flowop c15 name=top } }");
    let t = std::time::Instant::now();
    let e = err_with(&text, &opts());
    assert!(e.message.contains("expand too far"), "{e}");
    assert!(t.elapsed() < std::time::Duration::from_secs(2), "{:?}", t.elapsed());
}
