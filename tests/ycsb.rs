//! `fsbench ycsb` through the CLI: YCSB's final figures and their order,
//! the operation mix, throttling with intended latency, status lines,
//! dataintegrity after a load, "load first", the JSON exporters, the common
//! JSON result, and the figures' names and order against Java YCSB's own
//! output when the peer is built.

mod common;

use common::fsbench;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn ycsb(args: &[&str]) -> std::process::Output {
    fsbench().arg("ycsb").args(args).arg("--no-progress").output().unwrap()
}

fn ok(out: &std::process::Output) -> String {
    assert!(out.status.success(), "{}\n{}", String::from_utf8_lossy(&out.stderr), String::from_utf8_lossy(&out.stdout));
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// `[METRIC], Measurement, value` lines as ((metric, measurement), value).
fn figures(text: &str) -> Vec<((String, String), String)> {
    text.lines()
        .filter(|l| l.starts_with('['))
        .map(|l| {
            let mut p = l.splitn(3, ", ");
            let m = p.next().unwrap().trim_matches(['[', ']']).to_string();
            ((m, p.next().unwrap().to_string()), p.next().unwrap_or("").to_string())
        })
        .collect()
}

fn value(f: &[((String, String), String)], metric: &str, what: &str) -> Option<f64> {
    f.iter().find(|((m, w), _)| m == metric && w == what).map(|(_, v)| v.parse().unwrap())
}

#[test]
fn null_store_load_prints_ycsbs_figures() {
    let text = ok(&ycsb(&["load", "null", "-P", "workloada", "-p", "recordcount=5000"]));
    let f = figures(&text);
    assert_eq!(f[0].0, ("OVERALL".into(), "RunTime(ms)".into()));
    assert_eq!(f[1].0, ("OVERALL".into(), "Throughput(ops/sec)".into()));
    assert_eq!(value(&f, "INSERT", "Operations"), Some(5000.0));
    assert_eq!(value(&f, "INSERT", "Return=OK"), Some(5000.0));
    assert_eq!(value(&f, "CLEANUP", "Operations"), Some(1.0));
    // CLEANUP's bin comes before INSERT's in YCSB's map, as Java prints it.
    let metrics: Vec<&str> = f.iter().map(|((m, _), _)| m.as_str()).filter(|m| *m != "OVERALL" && !m.starts_with("FSBENCH")).collect();
    assert_eq!(metrics.first(), Some(&"CLEANUP"));
    let names: Vec<&str> = f.iter().filter(|((m, _), _)| m == "INSERT").map(|((_, w), _)| w.as_str()).collect();
    assert_eq!(
        names,
        [
            "Operations",
            "AverageLatency(us)",
            "MinLatency(us)",
            "MaxLatency(us)",
            "50thPercentileLatency(us)",
            "95thPercentileLatency(us)",
            "99thPercentileLatency(us)",
            "Return=OK"
        ]
    );
}

#[test]
fn operation_mix_follows_the_proportions() {
    for (w, expect) in [("workloada", [("READ", 0.5), ("UPDATE", 0.5)]), ("workloadb", [("READ", 0.95), ("UPDATE", 0.05)])] {
        let text = ok(&ycsb(&["run", "null", "-P", w, "-p", "operationcount=100000"]));
        let f = figures(&text);
        for (op, share) in expect {
            let n = value(&f, op, "Operations").unwrap_or(0.0);
            assert!((n / 100_000.0 - share).abs() < 0.01, "{w}: {op} {n} of 100000, expected {share}");
        }
    }
    // Workload F: every read-modify-write is a READ and an UPDATE too, as
    // YCSB's DBWrapper measures them.
    let f = figures(&ok(&ycsb(&["run", "null", "-P", "workloadf", "-p", "operationcount=20000", "-threads", "2"])));
    let rmw = value(&f, "READ-MODIFY-WRITE", "Operations").unwrap();
    assert_eq!(value(&f, "READ", "Operations").unwrap(), 20_000.0);
    assert_eq!(value(&f, "UPDATE", "Operations").unwrap(), rmw);
    assert!((rmw / 20_000.0 - 0.5).abs() < 0.02, "{rmw}");
}

#[test]
fn target_throttles_and_intended_latency_is_measured_from_the_schedule() {
    let text = ok(&ycsb(&[
        "run",
        "null",
        "-P",
        "workloadc",
        "-p",
        "operationcount=600",
        "-target",
        "1000",
        "-threads",
        "2",
        "-p",
        "measurement.interval=both",
    ]));
    let f = figures(&text);
    let ms = value(&f, "OVERALL", "RunTime(ms)").unwrap();
    // 600 operations at 1000/s: at least 0.6 s less one tick of each thread.
    assert!((590.0..3000.0).contains(&ms), "runtime {ms} ms");
    assert_eq!(value(&f, "Intended-READ", "Operations"), Some(600.0));
    assert!(value(&f, "Intended-READ", "AverageLatency(us)").unwrap() >= value(&f, "READ", "AverageLatency(us)").unwrap());
}

#[test]
fn status_lines_in_ycsbs_format() {
    let out = ycsb(&[
        "run",
        "null",
        "-P",
        "workloada",
        "-p",
        "operationcount=0",
        "-p",
        "maxexecutiontime=2",
        "-target",
        "2000",
        "-s",
        "-p",
        "status.interval=1",
    ]);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.contains(" sec: ")).collect();
    assert!(lines.len() >= 3, "{err}");
    // "2026-11-26 08:42:13:649 1 sec: 1000 operations; 1000.5 current ops/sec; [READ: Count=…"
    let l = lines[1];
    let words: Vec<&str> = l.split(' ').collect();
    assert_eq!(words[0].len(), 10, "{l}");
    assert_eq!(words[1].len(), 12, "{l}");
    assert!(l.contains(" sec: ") && l.contains(" operations; ") && l.contains(" current ops/sec; "), "{l}");
    assert!(l.contains("[READ: Count=") && l.contains(", 99.99="), "{l}");
}

#[test]
fn exporters_write_ycsbs_json_and_exportfile() {
    let out = ok(&ycsb(&[
        "run",
        "null",
        "-P",
        "workloada",
        "-p",
        "operationcount=100",
        "-p",
        "exporter=site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter",
    ]));
    let v: Value = serde_json::from_str(&out).unwrap();
    let a = v.as_array().unwrap();
    assert_eq!(a[0]["metric"], "OVERALL");
    assert_eq!(a[0]["measurement"], "RunTime(ms)");
    let out = ok(&ycsb(&[
        "run",
        "null",
        "-P",
        "workloada",
        "-p",
        "operationcount=100",
        "-p",
        "exporter=site.ycsb.measurements.exporter.JSONMeasurementsExporter",
    ]));
    let objs: Vec<Value> = serde_json::Deserializer::from_str(&out).into_iter::<Value>().map(|x| x.unwrap()).collect();
    assert!(objs.len() > 10 && objs.iter().all(|o| o["metric"].is_string()));
    let d = tempfile::tempdir().unwrap();
    let file = d.path().join("figures.txt");
    let out = ok(&ycsb(&["run", "null", "-P", "workloada", "-p", "operationcount=100", "-p", &format!("exportfile={}", file.display())]));
    assert!(!out.contains("[OVERALL]"), "with exportfile the figures go to the file");
    assert!(std::fs::read_to_string(&file).unwrap().starts_with("[OVERALL], RunTime(ms), "));
}

#[test]
fn common_json_result() {
    let out = ok(&fsbench()
        .args(["ycsb", "run", "null", "-P", "workloada", "-p", "operationcount=1000", "--no-progress", "--output-format=json"])
        .output()
        .unwrap());
    let v: Value = serde_json::from_str(&out).unwrap();
    let job = &v["jobs"][0];
    assert_eq!(job["engine"], "null");
    let reads = job["ops"].as_array().unwrap().iter().find(|o| o["name"] == "READ").unwrap();
    let updates = job["ops"].as_array().unwrap().iter().find(|o| o["name"] == "UPDATE").unwrap();
    assert_eq!(reads["ops"].as_u64().unwrap() + updates["ops"].as_u64().unwrap(), 1000);
    assert_eq!(job["details"]["operations"], 1000);
    assert!(job["headline"][0]["value"].as_f64().unwrap() > 0.0);
}

#[test]
fn bad_input_is_refused_before_running() {
    let out = ycsb(&["run", "null", "-P", "workloada", "-p", "insertproportion=-1"]);
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("insertproportion=-1: expected a proportion of zero or more"));
}

/// The stores that keep data, as the CLI names them, with a directory property.
fn data_stores() -> Vec<&'static str> {
    let out = fsbench().args(["ycsb", "run", "nosuchstore", "-P", "workloada"]).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    ["fjall", "redb", "sqlite", "rocksdb"].into_iter().filter(|s| err.contains(s)).collect()
}

fn built(store: &str, dir: &Path) -> bool {
    let out = ycsb(&["run", store, "-P", "workloadc", "-p", &format!("{store}.dir={}", dir.display())]);
    let err = String::from_utf8_lossy(&out.stderr);
    !err.contains("built without") && !err.contains("not built into")
}

#[test]
fn run_on_an_empty_store_says_load_first_and_integrity_holds_after_a_load() {
    for store in data_stores() {
        let d = tempfile::tempdir().unwrap();
        if !built(store, d.path()) {
            eprintln!("skipped {store}: this fsbench was built without it");
            continue;
        }
        let dirp = format!("{store}.dir={}", d.path().join("db").display());
        let out = ycsb(&["run", store, "-P", "workloadc", "-p", &dirp]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("load first"), "{store}: {}", String::from_utf8_lossy(&out.stderr));
        let common = [
            "-P",
            "workloadc",
            "-p",
            "recordcount=500",
            "-p",
            "operationcount=2000",
            "-p",
            "dataintegrity=true",
            "-p",
            "fieldcount=4",
            "-threads",
            "2",
        ];
        let f = figures(&ok(&ycsb(&[&["load", store, "-p", &dirp][..], &common[..]].concat())));
        assert_eq!(value(&f, "INSERT", "Return=OK"), Some(500.0), "{store}");
        let f = figures(&ok(&ycsb(&[&["run", store, "-p", &dirp][..], &common[..]].concat())));
        assert_eq!(value(&f, "READ", "Return=OK"), Some(2000.0), "{store}");
        assert_eq!(value(&f, "VERIFY", "Return=OK"), Some(2000.0), "{store}: every field read back as written");
        assert_eq!(value(&f, "VERIFY", "Return=UNEXPECTED_STATE"), None, "{store}");
    }
}

/// The figures' names in Java YCSB's order, from the peer itself.
#[test]
fn figure_names_and_order_match_java_ycsb() {
    let cp = Path::new("/var/tmp/fsbench-peers/ycsb/classpath");
    let d = tempfile::tempdir().unwrap();
    if !cp.exists() || !built("rocksdb", d.path()) {
        eprintln!("skipped: Java YCSB (scripts/build-ycsb.sh) or fsbench's rocksdb store is missing");
        return;
    }
    let classpath = std::fs::read_to_string(cp).unwrap().trim().to_string();
    let java_dir = d.path().join("java");
    let ours_dir = d.path().join("ours");
    let wl = "/var/tmp/fsbench-peers/ycsb/workloads/workloadf";
    let java = |phase: &str| {
        let out = std::process::Command::new("java")
            .args(["-cp", &classpath, "site.ycsb.Client", phase, "-db", "site.ycsb.db.rocksdb.RocksDBClient", "-P", wl])
            .args(["-p", &format!("rocksdb.dir={}", java_dir.display()), "-p", "recordcount=300", "-p", "operationcount=300"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let ours = |phase: &str| {
        ok(&ycsb(&[
            phase,
            "rocksdb",
            "-P",
            "workloadf",
            "-p",
            &format!("rocksdb.dir={}", ours_dir.display()),
            "-p",
            "recordcount=300",
            "-p",
            "operationcount=300",
        ]))
    };
    for (j, o) in [(java("-load"), ours("load")), (java("-t"), ours("run"))] {
        let keep = |t: &str| -> Vec<(String, String)> {
            figures(t).into_iter().map(|(k, _)| k).filter(|(m, _)| !m.starts_with("TOTAL_GC") && !m.starts_with("FSBENCH")).collect()
        };
        let (jk, ok_) = (keep(&j), keep(&o));
        // The same metrics and measurements, in the same order; Return
        // lines only where both have the status.
        let strip =
            |v: Vec<(String, String)>| -> Vec<(String, String)> { v.into_iter().filter(|(_, w)| !w.starts_with("Return=")).collect() };
        assert_eq!(strip(ok_.clone()), strip(jk.clone()), "fsbench:\n{o}\njava:\n{j}");
        let counts = |t: &str| -> BTreeMap<String, f64> {
            figures(t).into_iter().filter(|((_, w), _)| w == "Operations").map(|((m, _), v)| (m, v.parse().unwrap())).collect()
        };
        assert_eq!(counts(&o).get("INSERT"), counts(&j).get("INSERT"));
    }
}

/// Every file under `dir` (relative name → bytes; directories as empty).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.strip_prefix(dir).unwrap().display().to_string();
            if p.is_dir() {
                out.insert(format!("{name}/"), Vec::new());
                todo.push(p);
            } else {
                out.insert(name, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// Issue 31 item 5: RocksDB took a user's `000001.sst` and `LOG` for its
/// own. A directory holding anything but a database of the chosen store is
/// refused by every store, and left byte for byte as it was; the store's
/// own directory (a run after a load) is still opened.
#[test]
fn a_directory_of_other_files_is_refused_by_every_store() {
    let stores: Vec<&str> = data_stores();
    assert!(stores.contains(&"fjall") && stores.contains(&"redb"), "{stores:?}");
    for store in stores {
        let d = tempfile::tempdir().unwrap();
        if !built(store, &d.path().join("probe")) {
            eprintln!("skipped {store}: this fsbench was built without it");
            continue;
        }
        let users = d.path().join("users");
        std::fs::create_dir(&users).unwrap();
        std::fs::write(users.join("000001.sst"), b"a user's table, not RocksDB's").unwrap();
        std::fs::write(users.join("LOG"), b"a user's log").unwrap();
        // And one of files with random names and bytes (a seeded generator).
        let random = d.path().join("random");
        std::fs::create_dir_all(random.join("sub")).unwrap();
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for i in 0..12 {
            let ext = ["sst", "log", "db", "redb", "jnl", ""][(next() % 6) as usize];
            let bytes: Vec<u8> = (0..next() % 3000).map(|_| next() as u8).collect();
            let at = if i % 4 == 0 { random.join("sub") } else { random.clone() };
            std::fs::write(at.join(format!("{:06}.{ext}", next() % 1_000_000)), bytes).unwrap();
        }
        for dir in [&users, &random] {
            let before = tree(dir);
            let dirp = format!("{store}.dir={}", dir.display());
            for phase in ["load", "run"] {
                let out = ycsb(&[phase, store, "-P", "workloada", "-p", "recordcount=100", "-p", &dirp]);
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(!out.status.success(), "{store} {phase} in {}: {err}", dir.display());
                assert!(err.contains(&format!("is not a {store} database")), "{store}: {err}");
            }
            assert_eq!(tree(dir), before, "{store}: the directory's files are as they were");
        }
        // Its own directory: a run after the load.
        let own = format!("{store}.dir={}", d.path().join("own").display());
        for phase in ["load", "run"] {
            ok(&ycsb(&[phase, store, "-P", "workloada", "-p", "recordcount=100", "-p", &own]));
        }
    }
}

/// `[OVERALL], RunTime(ms)` of `args`, the least of three tries.
fn least_runtime(args: &[&str]) -> f64 {
    (0..3).map(|_| value(&figures(&ok(&ycsb(args))), "OVERALL", "RunTime(ms)").unwrap()).fold(f64::MAX, f64::min)
}

/// Issue 31 item 8: the run's clock was read by a watcher that polled every
/// 50 ms, so RunTime was the op count's true span rounded up to the poll.
/// Throttled to 1000 ops/s a single thread's operations are due 1 ms
/// apart: RunTime must follow the schedule (N operations take N-1 ms and
/// up) and grow with N by the schedule's difference, not by a poll's.
#[test]
fn runtime_is_the_threads_own_span() {
    let run = |n: &str| least_runtime(&["run", "null", "-P", "workloadc", "-p", &format!("operationcount={n}"), "-target", "1000"]);
    let (short, long) = (run("5"), run("45"));
    assert!(short >= 4.0 && long >= 44.0, "the schedule's floor: 5 ops took {short} ms, 45 took {long} ms");
    let grew = long - short;
    assert!((25.0..=55.0).contains(&grew), "40 more operations due 1 ms apart added {grew} ms ({short} -> {long} ms)");
    // Unthrottled, short runs have a rate: never 0, never above the
    // operations over the process's own wall time's lower bound.
    for n in ["10", "1000"] {
        let t = std::time::Instant::now();
        let text = ok(&ycsb(&["load", "null", "-P", "workloada", "-p", &format!("recordcount={n}")]));
        let wall_ms = t.elapsed().as_secs_f64() * 1000.0;
        let f = figures(&text);
        let (ms, rate) = (value(&f, "OVERALL", "RunTime(ms)").unwrap(), value(&f, "OVERALL", "Throughput(ops/sec)").unwrap());
        assert!(ms <= wall_ms, "RunTime {ms} ms is within the process's {wall_ms} ms");
        let ops: f64 = n.parse().unwrap();
        assert!(rate > 0.0 && rate.is_finite() && rate >= ops / (ms + 1.0) * 1000.0, "{n} inserts: {rate} ops/s over {ms} ms");
    }
}

/// Issue 31 item 8: a run whose every operation failed (reads of keys the
/// load did not write: loaded in order, read hashed) is not a measurement:
/// warned, marked failed in the result, exit status non-zero.
#[test]
fn a_run_whose_every_operation_failed_is_a_failed_run() {
    let d = tempfile::tempdir().unwrap();
    let dirp = format!("fjall.dir={}", d.path().join("db").display());
    ok(&ycsb(&["load", "fjall", "-P", "workloadc", "-p", "recordcount=100", "-p", "insertorder=ordered", "-p", &dirp]));
    let run = |extra: &[&str]| {
        let base =
            ["run", "fjall", "-P", "workloadc", "-p", "recordcount=100", "-p", "operationcount=300", "-p", &dirp, "--output-format=json"];
        ycsb(&[&base[..], extra].concat())
    };
    let out = run(&[]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("every one of the 300 operations failed"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(v["failed"].as_str().is_some_and(|f| f.contains("READ NOT_FOUND 300")), "{}", v["failed"]);
    // Loaded as it is read, the same run is a result.
    let ordered = run(&["-p", "insertorder=ordered"]);
    let v: Value = serde_json::from_str(&ok(&ordered)).unwrap();
    assert!(v["failed"].is_null(), "{}", v["failed"]);
}

/// Issue 31 item 9: the experiment's attribution said the benchmark issued
/// no writes after a YCSB load. The client's keys and fields are the
/// benchmark's issued writes (and what reads return, its reads).
#[test]
fn a_loads_issued_writes_are_the_clients_bytes() {
    let work = common::disk_tempdir();
    let (records, fields, length) = (2000u64, 4u64, 250u64);
    let exp = common::write_exp(
        work.path(),
        &format!(
            "name = \"y\"\n[[target]]\nlabel = \"d\"\ndirectory = \"{}\"\n[[workload]]\nlabel = \"load\"\n\
             ycsb = \"load fjall -P workloadc -p recordcount={records} -p fieldcount={fields} -p fieldlength={length}\"\n\
             [[workload]]\nlabel = \"read\"\n\
             ycsb = \"run fjall -P workloadc -p recordcount={records} -p operationcount=500 -p fieldcount={fields} -p fieldlength={length}\"\n",
            work.path().display()
        ),
    );
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let runs = common::run_files(&out);
    let run = |label: &str| -> Value {
        let f = runs.iter().find(|f| f.contains(&format!("__{label}__"))).unwrap_or_else(|| panic!("{label}: {runs:?}"));
        serde_json::from_str(&std::fs::read_to_string(out.join("runs").join(f)).unwrap()).unwrap()
    };
    let load = run("load");
    let written = load["attribution"]["benchmark_write_bytes"].as_u64().unwrap();
    assert!(written >= records * fields * length, "a load of {records} × {fields} × {length} B issued {written} B");
    let read = run("read");
    let got = read["attribution"]["benchmark_read_bytes"].as_u64().unwrap();
    assert!(got >= 500 * fields * length, "500 reads of {fields} × {length} B returned {got} B");
}

/// The mount `path` is on: (mount point, source).
fn mount_of(path: &Path) -> (std::path::PathBuf, String) {
    let path = path.canonicalize().unwrap();
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let mut best = (std::path::PathBuf::new(), String::new());
    for l in info.lines() {
        let f: Vec<&str> = l.split(' ').collect();
        let dash = f.iter().position(|x| *x == "-").unwrap();
        let mp = std::path::PathBuf::from(f[4].replace("\\040", " "));
        if path.starts_with(&mp) && mp.components().count() >= best.0.components().count() {
            best = (mp, f[dash + 2].to_string());
        }
    }
    best
}

/// Issue 31 item 9: a store on the root file system's device printed a
/// write amplification from counters every process on the machine moves,
/// with no word of it. Such a device is named shared, on stderr and in the
/// result, and the figure is marked as not the store's own.
#[test]
fn a_store_on_the_root_file_systems_device_is_flagged_shared() {
    let work = common::disk_tempdir();
    let (mp, source) = mount_of(work.path());
    if mp != Path::new("/") || !source.starts_with("/dev/") {
        common::skip(&format!("{} is on {} ({source}), not the root file system on a block device", work.path().display(), mp.display()));
        return;
    }
    let dirp = format!("fjall.dir={}", work.path().join("db").display());
    let out = ycsb(&["load", "fjall", "-P", "workloada", "-p", "recordcount=2000", "-p", &dirp]);
    let text = ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("holds the root file system (/)") && err.contains("upper bounds"), "{err}");
    assert!(text.contains("[FSBENCH], WriteAmplification(shared device), "), "{text}");
    assert!(!text.contains("[FSBENCH], WriteAmplification, "), "{text}");
    let json = ycsb(&["load", "fjall", "-P", "workloada", "-p", "recordcount=100", "-p", &dirp, "--output-format=json"]);
    let v: Value = serde_json::from_str(&ok(&json)).unwrap();
    assert!(
        v["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["code"] == "device-shared" && w["message"].as_str().unwrap().contains("root file system")),
        "{}",
        v["warnings"]
    );
    assert!(v["jobs"][0]["details"]["shared_device"].is_string());
}

/// The other side of the shared-device warning: on an experiment's managed
/// file system (a loop device fsbench made) the device is the run's own, so
/// nothing is flagged and the device's bytes are the store's.
#[test]
fn a_store_on_a_device_of_its_own_is_not_flagged() {
    if !common::is_root() || !common::have("mkfs.ext4") {
        common::skip("needs root and mkfs.ext4 for a managed loop-device target");
        return;
    }
    let work = common::disk_tempdir();
    let exp = common::write_exp(
        work.path(),
        &format!(
            "name = \"own\"\n[[target]]\nlabel = \"ext4\"\nfs = \"ext4\"\nloop = {{ dir = \"{}\", size = \"256m\" }}\n\
             [[workload]]\nlabel = \"load\"\nycsb = \"load fjall -P workloada -p recordcount=5000 -p fjall.sync=true\"\n",
            work.path().display()
        ),
    );
    let out = work.path().join("out");
    let o = fsbench().args(["experiment", exp.to_str().unwrap(), "--out", out.to_str().unwrap(), "--no-progress"]).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("upper bounds"), "{err}");
    let runs = common::run_files(&out);
    let run: Value = serde_json::from_str(&std::fs::read_to_string(out.join("runs").join(&runs[0])).unwrap()).unwrap();
    assert!(run["result"]["jobs"][0]["details"]["shared_device"].is_null(), "{}", run["result"]["jobs"][0]["details"]["shared_device"]);
    let a = &run["attribution"];
    assert!(a["device_write_bytes"].as_u64().is_some_and(|d| d > 0), "{a}");
    assert!(a["benchmark_write_bytes"].as_u64().is_some_and(|b| b >= 5000 * 1000), "{a}");
}

/// Issue 31 items 12-13, YCSB's part: absurd values panicked (a u32 length
/// overflowing), aborted on allocations of gigabytes, overflowed the clock
/// or hung in a generator's set-up. Each is refused before anything runs,
/// naming the property, its value and what was expected.
#[test]
fn absurd_property_values_are_refused_naming_them() {
    let d = tempfile::tempdir().unwrap();
    let hist = d.path().join("hist.txt");
    std::fs::write(&hist, "BlockSize\t1\n1000000000000\t5\n").unwrap();
    let histp = format!("fieldlengthhistogram={}", hist.display());
    let cases: &[(&[&str], &str)] = &[
        (&["-p", "fieldlength=1000000000"], "fieldlength=1000000000"),
        (&["-p", "fieldcount=100000000"], "fieldcount=100000000"),
        (&["-p", "fieldlength=5000000000"], "fieldlength=5000000000"),
        // Each record fits, but not one per thread in this machine's memory.
        (&["-p", "fieldcount=1000", "-p", "fieldlength=1000000", "-threads", "4096"], "threadcount=4096"),
        (&["-p", "recordcount=9223372036854775807"], "recordcount=9223372036854775807"),
        (&["-p", "operationcount=9223372036854775807"], "operationcount=9223372036854775807"),
        (&["-p", "maxexecutiontime=9223372036854775807"], "maxexecutiontime=9223372036854775807"),
        (&["-s", "-p", "status.interval=9223372036854775807"], "status.interval=9223372036854775807"),
        (&["-target", "1e-300"], "target=1e-300"),
        (&["-p", "requestdistribution=exponential", "-p", "exponential.frac=1e300"], "exponential.frac=1e300"),
        (&["-p", "requestdistribution=latest", "-p", "recordcount=4000000000000"], "recordcount"),
        (&["-p", "fieldlengthdistribution=zipfian", "-p", "fieldlength=2000000000", "-p", "fieldcount=1"], "fieldlength"),
        (&["-p", "scanproportion=1", "-p", "maxscanlength=9223372036854775807"], "maxscanlength=9223372036854775807"),
        (&["-p", "readproportion=1e308", "-p", "updateproportion=1e308"], "sum to inf"),
        (&["-p", "core_workload_insertion_retry_limit=99999999999"], "core_workload_insertion_retry_limit=99999999999"),
        (&["-p", "core_workload_insertion_retry_interval=9223372036854775807"], "core_workload_insertion_retry_interval"),
        (&["-p", "measurementtype=timeseries", "-p", "timeseries.granularity=9223372036854775807"], "timeseries.granularity"),
        (&["-p", "histogram.buckets=0"], "histogram.buckets=0"),
        (&["-p", "fieldlengthdistribution=histogram", "-p", &histp], "bucket 1000000000000"),
    ];
    for (extra, names) in cases {
        for phase in ["load", "run"] {
            let args = [&[phase, "null", "-P", "workloada", "-p", "recordcount=1000", "-p", "operationcount=1000"][..], extra].concat();
            let mut cmd = fsbench();
            let out = cmd.arg("ycsb").args(&args).arg("--no-progress").timeout(std::time::Duration::from_secs(60)).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert!(err.contains(names) && err.contains("expected") && !err.contains("panicked"), "{args:?}: {err}");
        }
    }
}

/// Issue 31 item 13, YCSB's part: a load larger than the directory's file
/// system failed mid-run (or filled the disk). It is refused before the
/// store is made, naming the need and the free space, and an experiment
/// records the run as FAILED.
#[test]
fn a_load_larger_than_the_free_space_is_refused_before_it_starts() {
    let work = common::disk_tempdir();
    let db = work.path().join("db");
    let args = [
        "load",
        "fjall",
        "-P",
        "workloada",
        "-p",
        "recordcount=1099511627776",
        "-p",
        &format!("fjall.dir={}", db.display()),
        "--no-progress",
    ];
    let out = fsbench().arg("ycsb").args(args).timeout(std::time::Duration::from_secs(60)).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("needs about") && err.contains(" free") && err.contains("recordcount"), "{err}");
    assert!(!db.exists(), "nothing was made: {:?}", db.exists().then(|| tree(&db).into_keys().collect::<Vec<_>>()));
    let exp = common::write_exp(
        work.path(),
        &format!(
            "name = \"big\"\n[[target]]\nlabel = \"d\"\ndirectory = \"{}\"\n[[workload]]\nlabel = \"load\"\n\
             ycsb = \"load fjall -P workloada -p recordcount=1099511627776\"\n",
            work.path().display()
        ),
    );
    let out_dir = work.path().join("out");
    let o = fsbench()
        .args(["experiment", exp.to_str().unwrap(), "--out", out_dir.to_str().unwrap(), "--no-progress"])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let runs = common::run_files(&out_dir);
    let run: Value = serde_json::from_str(&std::fs::read_to_string(out_dir.join("runs").join(&runs[0])).unwrap()).unwrap();
    assert!(run["result"]["failed"].as_str().is_some_and(|f| f.contains("needs about")), "{}", run["result"]["failed"]);
}

/// A tmpfs of `inodes` inodes mounted on a directory of its own, unmounted
/// when dropped.
struct SmallTmpfs {
    dir: tempfile::TempDir,
}

impl SmallTmpfs {
    fn mount(inodes: u32) -> Option<SmallTmpfs> {
        let dir = common::disk_tempdir();
        let opts = format!("size=64m,nr_inodes={inodes}");
        let st = std::process::Command::new("mount").args(["-t", "tmpfs", "-o", &opts, "fsbench-test"]).arg(dir.path()).status().ok()?;
        st.success().then_some(SmallTmpfs { dir })
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(self.dir.path()).status();
    }
}

/// Issue 31 item 13, YCSB's part: a store on a file system out of inodes
/// failed mid-run. The files a store makes are checked against the free
/// inodes before it starts.
#[test]
fn a_store_on_a_file_system_without_free_inodes_is_refused_before_it_starts() {
    if !common::is_root() {
        common::skip("needs root to mount a tmpfs with few inodes");
        return;
    }
    let Some(fs) = SmallTmpfs::mount(16) else {
        common::skip("cannot mount a tmpfs");
        return;
    };
    // Take all but a few of its inodes.
    let mut n = 0;
    while std::fs::write(fs.dir.path().join(format!("f{n}")), b"x").is_ok() {
        n += 1;
    }
    for i in 0..2 {
        std::fs::remove_file(fs.dir.path().join(format!("f{i}"))).unwrap();
    }
    let before = tree(fs.dir.path());
    let db = fs.dir.path().join("db");
    let out = ycsb(&["load", "fjall", "-P", "workloada", "-p", "recordcount=100", "-p", &format!("fjall.dir={}", db.display())]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("free inodes"), "{err}");
    assert_eq!(tree(fs.dir.path()), before, "nothing was made");
}
