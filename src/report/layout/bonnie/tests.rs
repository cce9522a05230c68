//! The layout against Bonnie++ 2.00a's own output: each file in
//! tests/data/bonnie holds a command and what Bonnie++ printed; the figures
//! of its CSV line are turned back into phases, and the text and CSV
//! rendered from them must be Bonnie++'s, byte for byte.

use super::*;
use crate::frontend::bonnie::{parse, HostFacts, Invocation};
use crate::result::bonnie::BonnieDetails;

fn host() -> HostFacts {
    HostFacts { ram_mib: 1024, open_files: 1024, hostname: "h".into(), is_root: true, pid: 1, now_unix: 0 }
}

fn latency_ns(s: &str) -> u64 {
    if let Some(v) = s.strip_suffix("us") {
        v.parse::<u64>().unwrap() * 1000
    } else if let Some(v) = s.strip_suffix("ms") {
        v.parse::<u64>().unwrap() * 1_000_000
    } else {
        s.strip_suffix('s').unwrap().parse::<u64>().unwrap() * 1_000_000_000
    }
}

/// Phases whose figures give back the CSV's rate, %CPU and latency.
fn details_from(cmd: &str, csv: &str) -> BonnieDetails {
    let words: Vec<String> = cmd.split_whitespace().skip(1).map(|w| if w == "DIR" { "/tmp".into() } else { w.into() }).collect();
    let Invocation::Run { plan, .. } = parse(&words, &host()).unwrap() else { panic!("a run") };
    let f: Vec<&str> = csv.split(',').collect();
    assert_eq!(f.len(), 50, "{csv}");
    let mut phases = Vec::new();
    for (k, t) in Test::ALL.iter().enumerate() {
        let (rate, cpu) = if k < 6 { (f[9 + 2 * k], f[10 + 2 * k]) } else { (f[26 + 2 * (k - 6)], f[27 + 2 * (k - 6)]) };
        if rate.is_empty() {
            continue;
        }
        let lat = latency_ns(f[38 + k]);
        let count = plan.files.as_ref().map(|t| t.count()).unwrap_or(0);
        let p = if rate == "+++++" {
            PhaseFigure { test: *t, elapsed_ns: 100_000_000, amount: if t.is_io() { 1 } else { count }, cpu_s: 0.0, max_latency_ns: lat }
        } else {
            let r: f64 = rate.parse().unwrap();
            let pct: f64 = cpu.parse().unwrap();
            let (amount, elapsed_ns) = if t.is_io() { (r as u64, 1_000_000_000) } else { (count, (count as f64 * 1e9 / (r + 0.5)) as u64) };
            PhaseFigure { test: *t, elapsed_ns, amount, cpu_s: (pct + 0.5) / 100.0 * elapsed_ns as f64 / 1e9, max_latency_ns: lat }
        };
        phases.push(p);
    }
    BonnieDetails { seed_text: f[4].to_string(), settings: plan, phases }
}

#[test]
fn text_and_csv_are_bonnies_own() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/bonnie");
    let mut checked = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let (cmd, printed) = text.split_once('\n').unwrap();
        let csv_lines: Vec<&str> = printed.lines().filter(|l| l.starts_with("1.98,")).collect();
        let mut runs = Vec::new();
        for (i, line) in csv_lines.iter().enumerate() {
            let mut d = details_from(cmd, line);
            d.settings.run_index = i as u32;
            runs.push(d);
        }
        let mut out = String::new();
        for d in &runs {
            let s = &d.settings;
            let csv_only = s.quiet || s.runs > 1;
            if !csv_only {
                out.push_str(&super::text(d));
            }
            if s.runs > 1 && s.run_index == 0 {
                out.push_str(CSV_HEADER);
                out.push('\n');
            }
            out.push_str(&csv_line(d));
            out.push('\n');
        }
        assert_eq!(out, printed, "{}", path.display());
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} fixtures");
}

#[test]
fn rates_and_latencies_take_bonnies_units() {
    assert_eq!(io_rate(601.9), "601k");
    assert_eq!(io_rate(9999.0), "9999k");
    assert_eq!(io_rate(10240.0), "10.0m");
    assert_eq!(io_rate(669962.0), "654m");
    assert_eq!(io_rate(1168939.0), "1.1g");
    assert_eq!(latency(28_044_000), "28044us");
    assert_eq!(latency(99_000_000), "99000us");
    assert_eq!(latency(123_400_000), "123ms");
    assert_eq!(latency(150_000_000_000), "150s");
}
