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
