//! fio's logs and json+ from fsbench, read by fio's own tools (Debian's
//! `fio` package ships them): fiologparser_hist.py, fio2gnuplot and
//! fio_jsonplus_clat2csv. A missing tool skips its part with the reason.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Run fsbench in `dir` (logs go to the working directory, as in fio).
fn run_in(dir: &Path, args: &[&str]) -> std::process::Output {
    let out = fsbench().current_dir(dir).arg("fio").args(args).arg("--no-progress").output().unwrap();
    assert!(out.status.success(), "fsbench failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// Lines of a log as numbers.
fn rows(path: &Path) -> Vec<Vec<u64>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split(", ").map(|x| x.trim().parse().unwrap_or_else(|_| panic!("{}: bad field in '{l}'", path.display()))).collect())
        .collect()
}

/// A Python with numpy and pandas (fiologparser_hist.py needs both).
fn python_with_pandas() -> Option<&'static str> {
    ["/usr/bin/python3", "python3"]
        .into_iter()
        .find(|py| Command::new(py).args(["-c", "import numpy, pandas"]).output().map(|o| o.status.success()).unwrap_or(false))
}

/// fiologparser_hist.py, unpacked from the fio package's documentation.
fn fiologparser_hist(dir: &Path) -> Option<PathBuf> {
    for p in ["/usr/bin/fiologparser_hist.py", "/usr/share/fio/fiologparser_hist.py"] {
        if Path::new(p).exists() {
            return Some(PathBuf::from(p));
        }
    }
    let out = Command::new("gzip").arg("-dc").arg("/usr/share/doc/fio/fiologparser_hist.py.gz").output().ok()?;
    if !out.status.success() {
        return None;
    }
    let p = dir.join("fiologparser_hist.py");
    std::fs::write(&p, out.stdout).ok()?;
    Some(p)
}

#[test]
fn per_io_logs_have_one_line_per_io_in_fios_names_and_format() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let out = run_in(
        dir.path(),
        &[
            "--name=job",
            "--rw=randrw",
            "--bs=4k",
            "--size=1m",
            "--ioengine=psync",
            "--write_bw_log=job",
            "--write_lat_log=job",
            "--write_iops_log",
            "--log_offset=1",
            "--output-format=json",
            &d,
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ops = |name: &str| v["jobs"][0]["ops"].as_array().unwrap().iter().find(|o| o["name"] == name).unwrap()["ops"].as_u64().unwrap();
    let (reads, writes) = (ops("read"), ops("write"));
    assert_eq!(reads + writes, 256);
    for kind in ["bw", "lat", "clat", "iops"] {
        let r = rows(&dir.path().join(format!("job_{kind}.1.log")));
        assert_eq!(r.len() as u64, reads + writes, "{kind}: one line per I/O");
        // time, value, ddir, bs, offset, prio
        assert!(r.iter().all(|l| l.len() == 6 && l[3] == 4096 && l[4] % 4096 == 0 && l[4] < 1 << 20 && l[5] == 0), "{kind}");
        assert_eq!(r.iter().filter(|l| l[2] == 0).count() as u64, reads, "{kind}: reads");
        assert!(r.windows(2).all(|w| w[0][0] <= w[1][0]), "{kind}: times ascend");
    }
    // Every block once (random map): the offsets of the lat log are a permutation.
    let mut offs: Vec<u64> = rows(&dir.path().join("job_lat.1.log")).iter().map(|l| l[4]).collect();
    offs.sort_unstable();
    offs.dedup();
    assert_eq!(offs.len(), 256);
    assert!(rows(&dir.path().join("job_iops.1.log")).iter().all(|l| l[1] == 1));
    // lat >= clat, line by line; bw is the I/O's bytes per ms of completion time.
    let lat = rows(&dir.path().join("job_lat.1.log"));
    let clat = rows(&dir.path().join("job_clat.1.log"));
    let bw = rows(&dir.path().join("job_bw.1.log"));
    for ((l, c), b) in lat.iter().zip(&clat).zip(&bw) {
        assert!(l[1] >= c[1] && c[1] > 0);
        assert_eq!(b[1], 4096 * 1_000_000 / c[1]);
    }
    // A synchronous engine has no submission latency: an empty slat log, as fio.
    assert_eq!(std::fs::read_to_string(dir.path().join("job_slat.1.log")).unwrap(), "");
}

#[test]
fn averaged_logs_and_fio2gnuplot() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    // 50 I/Os per second for 2 s: 10 per 200 ms window, 200 KiB/s.
    run_in(
        dir.path(),
        &[
            "--name=avg",
            "--rw=write",
            "--bs=4k",
            "--size=4m",
            "--rate_iops=50",
            "--runtime=2",
            "--time_based",
            "--write_bw_log=avg",
            "--write_iops_log=avg",
            "--log_avg_msec=200",
            "--numjobs=2",
            &d,
        ],
    );
    for n in [1, 2] {
        let iops = rows(&dir.path().join(format!("avg_iops.{n}.log")));
        assert!((9..=10).contains(&iops.len()), "{} windows", iops.len());
        for (k, l) in iops.iter().enumerate() {
            assert_eq!(l[0], 200 * (k as u64 + 1), "window ends");
            assert_eq!(&l[2..], &[1, 0, 0], "ddir write, bs and prio 0 when averaged");
        }
        let mid: Vec<u64> = iops[1..iops.len() - 1].iter().map(|l| l[1]).collect();
        assert!(mid.iter().all(|&x| (30..=70).contains(&x)), "{mid:?}");
        let bw = rows(&dir.path().join(format!("avg_bw.{n}.log")));
        assert!(bw[1..bw.len() - 1].iter().all(|l| (120..=280).contains(&l[1])), "{bw:?}");
    }
    if !have("fio2gnuplot") {
        skip("fio2gnuplot not installed (Debian package fio)");
        return;
    }
    let g = dir.path().join("g");
    std::fs::create_dir(&g).unwrap();
    let out = Command::new("fio2gnuplot").current_dir(dir.path()).args(["-i", "-d", "g"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("avg_iops.1.log") && said.contains("avg_iops.2.log"), "{said}");
    let global = std::fs::read_to_string(g.join("result.global")).unwrap_or_else(|e| panic!("{e}: {said}"));
    let field = |k: &str| global.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).unwrap().parse::<f64>().unwrap();
    assert_eq!(field("disks_count"), 2.0, "{global}");
    assert!(field("values_count") >= 18.0, "{global}");
    assert!((35.0..=65.0).contains(&field("avg")), "{global}");
}

#[test]
fn histogram_log_through_fiologparser_hist() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let out = run_in(
        dir.path(),
        &[
            "--name=h",
            "--rw=read",
            "--bs=4k",
            "--size=2m",
            "--ioengine=psync",
            "--write_hist_log=h",
            "--log_hist_msec=100",
            "--output-format=json",
            &d,
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let total = v["jobs"][0]["ops"][0]["ops"].as_u64().unwrap();
    assert_eq!(total, 512);
    let r = rows(&dir.path().join("h_clat_hist.1.log"));
    assert!(!r.is_empty());
    assert!(r.iter().all(|l| l.len() == 3 + 1856 && l[1] == 0 && l[2] == 4096), "time, ddir, bs and fio's 1856 bins");
    let counted: u64 = r.iter().map(|l| l[3..].iter().sum::<u64>()).sum();
    assert_eq!(counted, total, "every I/O is in one line's bins");
    let Some(py) = python_with_pandas() else {
        skip("no python3 with numpy and pandas for fiologparser_hist.py (Debian: python3-pandas)");
        return;
    };
    let Some(tool) = fiologparser_hist(dir.path()) else {
        skip("fiologparser_hist.py not found (Debian package fio)");
        return;
    };
    // One interval longer than the run: one row that holds every I/O.
    let out = Command::new(py).arg(&tool).arg("--interval=100000").arg(dir.path().join("h_clat_hist.1.log")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("end-time, samples, min, avg, median"), "{text}");
    let data: Vec<Vec<f64>> = lines.map(|l| l.split(", ").map(|x| x.trim().parse().unwrap()).collect()).collect();
    assert!(!data.is_empty(), "{text}");
    assert_eq!(data.iter().map(|l| l[1]).sum::<f64>() as u64, total, "{text}");
    let (min, max) = (data[0][2], data[0][8]);
    let median_clat = v["jobs"][0]["ops"][0]["lat"]["percentiles_ns"]["50"].as_f64().unwrap();
    assert!(min <= median_clat * 1.02 && median_clat <= max * 1.02, "fsbench median {median_clat} outside {min}..{max}");
}

#[test]
fn json_plus_bins_through_fio_jsonplus_clat2csv() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let json = dir.path().join("plus.json");
    let o = format!("--output={}", s(&json));
    run_in(dir.path(), &["--name=p", "--rw=randread", "--bs=4k", "--size=1m", "--output-format=json+", &o, &d]);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let bins = v["jobs"][0]["read"]["clat_ns"]["bins"].as_object().unwrap();
    assert_eq!(bins.values().map(|c| c.as_u64().unwrap()).sum::<u64>(), 256);
    if !have("fio_jsonplus_clat2csv") {
        skip("fio_jsonplus_clat2csv not installed (Debian package fio)");
        return;
    }
    let out = Command::new("fio_jsonplus_clat2csv").current_dir(dir.path()).args(["plus.json", "plus.csv"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(dir.path().join("plus_job0.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
    let col = header.iter().position(|h| *h == "read_clat_ns_count").unwrap();
    let cum = header.iter().position(|h| *h == "read_clat_ns_cumulative").unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').map(str::trim).collect()).collect();
    assert_eq!(rows.len(), bins.len(), "one row per bin");
    let counts: u64 = rows.iter().map(|r| r[col].parse::<u64>().unwrap()).sum();
    assert_eq!(counts, 256);
    assert_eq!(rows.last().unwrap()[cum], "256");
    for r in &rows {
        assert!(bins.contains_key(r[0]), "nsec {} is one of the bins", r[0]);
    }
}

#[test]
fn normal_and_json_in_one_run_json_first() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let out = run_in(dir.path(), &["--name=two", "--rw=read", "--size=256k", "--output-format=normal,fio-json", &d]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with('{'), "fio writes json before normal: {text}");
    let end = text.find("\n}\n").unwrap() + 3;
    let v: Value = serde_json::from_str(&text[..end]).unwrap();
    assert_eq!(v["jobs"][0]["read"]["total_ios"], 64);
    let rest = &text[end..];
    assert!(rest.starts_with("two:") && rest.contains("64 ops"), "then the text report: {rest}");
}

/// Every key fio 3.33 writes per job (and in each direction and latency
/// object) is in fsbench's json+ for the same job file, and the options
/// are split between "global options" and "job options" as fio splits them.
#[test]
fn fio_json_has_every_key_fio_writes() {
    if !have("fio") {
        skip("fio not installed");
        return;
    }
    let dir = disk_tempdir();
    let job = dir.path().join("k.fio");
    let text = format!("[global]\ndirectory={}\nsize=1m\nbs=4k\n\n[k]\nrw=randrw\nioengine=libaio\niodepth=4\n", s(dir.path()));
    std::fs::write(&job, text).unwrap();
    let fio = Command::new("fio").arg(&job).arg("--output-format=json+").output().unwrap();
    assert!(fio.status.success(), "{}", String::from_utf8_lossy(&fio.stderr));
    let text = String::from_utf8_lossy(&fio.stdout);
    let fio: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    let ours = fsbench().arg("fio").arg(&job).args(["--output-format=json+", "--no-progress"]).output().unwrap();
    let ours: Value = serde_json::from_slice(&ours.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&ours.stderr)));
    fn walk(path: &str, f: &Value, o: &Value, missing: &mut Vec<String>) {
        let (Some(fm), Some(om)) = (f.as_object(), o.as_object()) else { return };
        for (k, fv) in fm {
            // Keyed by measured values or by the job, not by fio's schema.
            if ["bins", "percentile", "job options"].contains(&k.as_str()) {
                continue;
            }
            match om.get(k) {
                None => missing.push(format!("{path}/{k}")),
                Some(ov) => walk(&format!("{path}/{k}"), fv, ov, missing),
            }
        }
    }
    let mut missing: Vec<String> = fio.as_object().unwrap().keys().filter(|k| ours.get(k.as_str()).is_none()).cloned().collect();
    // [global] is listed once, apart from the job's own options, as fio does.
    assert_eq!(ours["global options"], fio["global options"]);
    assert_eq!(ours["jobs"][0]["job options"], fio["jobs"][0]["job options"]);
    walk("jobs/0", &fio["jobs"][0], &ours["jobs"][0], &mut missing);
    assert!(missing.is_empty(), "keys fio writes that fsbench does not: {missing:?}");
    assert!(ours["jobs"][0]["read"]["clat_ns"]["bins"].as_object().is_some_and(|b| !b.is_empty()));
    // The latency maps split every I/O.
    let sum: f64 = ["latency_ns", "latency_us", "latency_ms"]
        .iter()
        .flat_map(|m| ours["jobs"][0][m].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).collect::<Vec<_>>())
        .sum();
    assert!((sum - 100.0).abs() < 0.01, "{sum}");
    let depth_total: f64 = ours["jobs"][0]["iodepth_level"].as_object().unwrap().values().map(|v| v.as_f64().unwrap()).sum();
    assert!((depth_total - 100.0).abs() < 0.01, "{depth_total}");
}

/// fio-plot (a pip package, so usually absent: then skipped) draws
/// fsbench's logs (-g) and json's latency maps (-H). Its own naming rules:
/// files named RW-iodepth-D-numjobs-N, and rw, iodepth and numjobs among
/// the job options. `FIO_PLOT` may name the program.
#[test]
fn fio_plot_draws_the_logs_and_the_latency_histogram() {
    let prog = std::env::var("FIO_PLOT").unwrap_or_else(|_| "fio-plot".into());
    if Command::new(&prog).arg("--help").output().map(|o| !o.status.success()).unwrap_or(true) {
        skip("fio-plot not installed (pip install fio-plot; or set FIO_PLOT)");
        return;
    }
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let p = "randread-iodepth-1-numjobs-1";
    let o = format!("--output={p}.json");
    let logs: Vec<String> = ["bw", "lat", "iops"].iter().map(|k| format!("--write_{k}_log={p}")).collect();
    let mut args = vec!["--name=p", "--rw=randread", "--iodepth=1", "--numjobs=1", "--bs=4k", "--size=8m", "--runtime=1", "--time_based"];
    args.extend(["--log_avg_msec=100", "--output-format=fio-json", &o, &d]);
    args.extend(logs.iter().map(String::as_str));
    run_in(dir.path(), &args);
    let json = std::fs::read_to_string(dir.path().join(format!("{p}.json"))).unwrap();
    assert!(json.contains("\"fio version\""), "fio-plot reads fio's layout: {}", &json[..200.min(json.len())]);
    for (flag, png) in [("-g", "g.png"), ("-H", "h.png")] {
        let mut c = Command::new(&prog);
        c.args(["-i", &s(dir.path()), "-T", "t", flag, "-r", "randread", "-d", "1", "-n", "1", "-o", &s(&dir.path().join(png))]);
        if flag == "-g" {
            c.args(["-t", "bw", "iops", "lat"]);
        }
        let out = c.output().unwrap();
        let size = std::fs::metadata(dir.path().join(png)).map(|m| m.len()).unwrap_or(0);
        assert!(
            size > 10_000,
            "fio-plot {flag}: no picture: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// The priority column (the last) of a log, as written.
fn prio_column(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.rsplit(", ").next().unwrap_or("").trim().to_string())
        .collect()
}

/// Distinct values of the column with their share of the lines.
fn shares(col: &[String]) -> std::collections::BTreeMap<String, f64> {
    let mut m = std::collections::BTreeMap::new();
    for v in col {
        *m.entry(v.clone()).or_insert(0.0) += 1.0 / col.len() as f64;
    }
    m
}

/// Run `args` in `dir` with fio itself; false when it cannot (not installed or refused).
fn fio_in(dir: &Path, args: &[&str]) -> bool {
    Command::new("fio").current_dir(dir).args(args).arg("--output=/dev/null").status().map(|s| s.success()).unwrap_or(false)
}

/// cmdprio's share of I/Os and the priority column of the per-I/O logs,
/// with and without log_prio, against fio 3.33 on the same job.
#[test]
fn cmdprio_priority_column_matches_fio() {
    for engine in ["io_uring", "libaio"] {
        for (log_prio, extra) in [("1", &["--cmdprio_class=2", "--cmdprio=3", "--prio=6"][..]), ("0", &["--prioclass=2"][..])] {
            let engine_opt = format!("--ioengine={engine}");
            // fio's command line knows an engine's options only after its ioengine.
            let mut job = vec![
                "--name=job",
                engine_opt.as_str(),
                "--rw=randrw",
                "--bs=4k",
                "--size=2m",
                "--direct=1",
                "--iodepth=4",
                "--cmdprio_percentage=40,70",
                "--write_lat_log=p",
                "--write_iops_log=p",
            ];
            let lp = format!("--log_prio={log_prio}");
            job.push(lp.as_str());
            job.extend(extra);
            let ours = disk_tempdir();
            let dir_opt = format!("--directory={}", s(ours.path()));
            let mut a = job.clone();
            a.push(&dir_opt);
            let out = fsbench().current_dir(ours.path()).arg("fio").args(&a).arg("--no-progress").output().unwrap();
            if !out.status.success() {
                let err = String::from_utf8_lossy(&out.stderr);
                if err.contains(engine)
                    && (err.contains("not supported") || err.contains("ENOSYS") || err.contains("Function not implemented"))
                {
                    skip(&format!("{engine} is not available here: {err}"));
                    continue;
                }
                panic!("fsbench {a:?}: {err}");
            }
            let (want_high, want_low) = if log_prio == "1" { ("0x4003", "0x4006") } else { ("1", "0") };
            for kind in ["lat", "clat", "slat", "iops"] {
                let col = prio_column(&ours.path().join(format!("p_{kind}.1.log")));
                assert_eq!(col.len(), 512, "{engine} {kind}: one line per I/O");
                let sh = shares(&col);
                let keys: Vec<&str> = sh.keys().map(String::as_str).collect();
                assert_eq!(
                    keys,
                    [want_low, want_high].iter().copied().collect::<std::collections::BTreeSet<_>>().into_iter().collect::<Vec<_>>(),
                    "{engine} {kind} log_prio={log_prio}"
                );
                // Reads 40 %, writes 70 %, about half of each: about 55 % overall.
                assert!((0.45..0.65).contains(&sh[want_high]), "{engine} {kind}: high share {}", sh[want_high]);
            }
            // Per direction: column 3 is the direction.
            let text = std::fs::read_to_string(ours.path().join("p_clat.1.log")).unwrap();
            for (dir, lo, hi) in [("0", 0.28, 0.52), ("1", 0.58, 0.82)] {
                let lines: Vec<&str> = text.lines().filter(|l| l.split(", ").nth(2) == Some(dir)).collect();
                let high = lines.iter().filter(|l| l.ends_with(&format!(", {want_high}"))).count() as f64 / lines.len() as f64;
                assert!((lo..hi).contains(&high), "{engine} ddir {dir}: high share {high}");
            }
            let theirs = disk_tempdir();
            let dir_opt = format!("--directory={}", s(theirs.path()));
            let mut b = job.clone();
            b.push(&dir_opt);
            if !fio_in(theirs.path(), &b) {
                skip(&format!("fio did not run {b:?}: the column is not compared with fio's"));
                continue;
            }
            for kind in ["lat", "clat", "slat", "iops"] {
                let mine = shares(&prio_column(&ours.path().join(format!("p_{kind}.1.log"))));
                let fio = shares(&prio_column(&theirs.path().join(format!("p_{kind}.1.log"))));
                assert_eq!(mine.keys().collect::<Vec<_>>(), fio.keys().collect::<Vec<_>>(), "{engine} {kind} log_prio={log_prio}: values");
                for (k, v) in &mine {
                    assert!((v - fio[k]).abs() < 0.1, "{engine} {kind}: share of {k}: fsbench {v}, fio {}", fio[k]);
                }
            }
        }
    }
}

/// The `prios` of fio-json: per direction, the priorities fio lists (none
/// when every I/O ran at one), each with as many I/Os as the clat log has
/// lines at that priority and the log's largest value as its max; the same
/// priorities as fio 3.33 lists for the job, with about its shares.
#[test]
fn cmdprio_latency_per_priority_as_fio_json() {
    let run = |dir: &Path, extra: &[&str], fio: bool| -> Option<Value> {
        let d = format!("--directory={}", s(dir));
        let mut a = vec!["--name=job", "--ioengine=io_uring", "--rw=randrw", "--bs=4k", "--size=2m", "--direct=1", "--iodepth=4"];
        a.extend(["--cmdprio_class=2", "--cmdprio=3", "--write_lat_log=p", "--log_prio=1", &d]);
        a.extend(extra);
        let out = if fio {
            Command::new("fio").current_dir(dir).args(&a).arg("--output-format=json").output().ok()?
        } else {
            fsbench().current_dir(dir).arg("fio").args(&a).args(["--output-format=fio-json", "--no-progress"]).output().unwrap()
        };
        if !out.status.success() {
            assert!(fio, "fsbench {a:?}: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        Some(serde_json::from_slice(&out.stdout).unwrap())
    };
    let prios = |v: &Value, dir: &str, key: &str| -> Vec<(u64, u64, u64)> {
        let list = v["jobs"][0][dir]["prios"].as_array().cloned().unwrap_or_default();
        list.iter().map(|p| (p["prioclass"].as_u64().unwrap(), p["prio"].as_u64().unwrap(), p[key]["N"].as_u64().unwrap())).collect()
    };
    let ours = disk_tempdir();
    let Some(v) = run(ours.path(), &["--cmdprio_percentage=40,70"], false) else { unreachable!() };
    let log = std::fs::read_to_string(ours.path().join("p_clat.1.log")).unwrap();
    for (d, dir) in ["read", "write"].into_iter().enumerate() {
        let got = prios(&v, dir, "clat_ns");
        assert_eq!(got.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(), [(0, 0), (2, 3)], "{dir}: {got:?}");
        assert_eq!(got.iter().map(|p| p.2).sum::<u64>(), v["jobs"][0][dir]["total_ios"].as_u64().unwrap(), "{dir}");
        for (i, p) in got.iter().enumerate() {
            let want = format!("0x{:04x}", p.0 << 13 | p.1);
            let vals: Vec<u64> = log
                .lines()
                .map(|l| l.split(", ").collect::<Vec<_>>())
                .filter(|f| f[2] == d.to_string() && f.last() == Some(&want.as_str()))
                .map(|f| f[1].parse().unwrap())
                .collect();
            assert_eq!(vals.len() as u64, p.2, "{dir} {want}: I/Os in the log");
            let max = v["jobs"][0][dir]["prios"][i]["clat_ns"]["max"].as_u64().unwrap();
            let log_max = *vals.iter().max().unwrap();
            assert!(max.abs_diff(log_max) <= log_max / 500 + 1, "{dir} {want}: max {max}, log's {log_max}");
        }
    }
    // One priority per direction: no prios, as fio; lat_percentiles: total latency.
    let one = disk_tempdir();
    let v1 = run(one.path(), &["--cmdprio_percentage=100"], false).unwrap();
    assert!(v1["jobs"][0]["read"].get("prios").is_none() && v1["jobs"][0]["write"].get("prios").is_none(), "{}", v1["jobs"][0]["read"]);
    let total = disk_tempdir();
    let vt = run(total.path(), &["--cmdprio_percentage=40,70", "--lat_percentiles=1"], false).unwrap();
    assert_eq!(prios(&vt, "read", "lat_ns").len(), 2, "{}", vt["jobs"][0]["read"]);
    let theirs = disk_tempdir();
    let Some(f) = run(theirs.path(), &["--cmdprio_percentage=40,70"], true) else {
        skip("fio did not run the job: prios not compared with fio's");
        return;
    };
    for dir in ["read", "write"] {
        let (a, b) = (prios(&v, dir, "clat_ns"), prios(&f, dir, "clat_ns"));
        assert_eq!(a.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(), b.iter().map(|p| (p.0, p.1)).collect::<Vec<_>>(), "{dir}");
        let share = |l: &[(u64, u64, u64)]| l[1].2 as f64 / l.iter().map(|p| p.2).sum::<u64>() as f64;
        assert!((share(&a) - share(&b)).abs() < 0.12, "{dir}: high share fsbench {} fio {}", share(&a), share(&b));
    }
}
