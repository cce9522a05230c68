//! `fsbench iozone` against output of the real IOzone 3.471 stored in
//! `tests/data/iozone/` (see its README.md and NOTES.md): the -R report's
//! layout line by line with the numbers masked, the table's columns, the
//! auto-mode matrix with its crossover, and the bad-input cases.
//!
//! Only the fsbench binary and the stored files are used, nothing of
//! fsbench's internals. IOzone itself is needed only by the last test, which
//! checks the stored samples against a live IOzone when
//! `scripts/build-iozone.sh` has built one, and skips with the reason
//! otherwise.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/iozone").join(name)
}

fn sample(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap_or_else(|e| panic!("{}: {e}", data(name).display()))
}

/// The flags of a stored sample: its `.cmd` line without `iozone` and
/// without the `-f FILE` (the caller adds its own file).
fn sample_flags(name: &str) -> Vec<String> {
    let cmd = sample(&format!("{name}.cmd"));
    let mut words: Vec<String> = cmd.split_whitespace().skip(1).map(String::from).collect();
    if let Some(i) = words.iter().position(|w| w == "-f") {
        words.drain(i..i + 2);
    }
    words
}

/// Run `prog ARGS` with cwd `dir`, killing it after `limit` (IOzone's own
/// -U on a directory retries for hours; a hang must fail, not stall).
fn run_in(prog: &Path, args: &[String], dir: &Path, limit: Duration) -> Output {
    let mut child = Command::new(prog)
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", prog.display()));
    // Drain the pipes in threads so a chatty child cannot block on them.
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut so, &mut v).ok();
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        std::io::Read::read_to_end(&mut se, &mut v).ok();
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("{} {} did not finish within {limit:?}", prog.display(), args.join(" "));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output { status, stdout: t_out.join().unwrap(), stderr: t_err.join().unwrap() }
}

fn fsbench_iozone(args: &[String], dir: &Path, limit: Duration) -> Output {
    let mut all = vec!["iozone".to_string()];
    all.extend(args.iter().cloned());
    run_in(Path::new(env!("CARGO_BIN_EXE_fsbench")), &all, dir, limit)
}

/// Run `fsbench iozone` with a stored sample's flags and `-f DIR/iozone.tmp`;
/// expect success and return stdout.
fn fsbench_like(name: &str, dir: &Path) -> String {
    let mut args = sample_flags(name);
    args.push("-f".into());
    args.push(dir.join("iozone.tmp").display().to_string());
    let out = fsbench_iozone(&args, dir, Duration::from_secs(300));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "fsbench iozone {} failed ({:?}):\nstderr: {}\nstdout: {stdout}",
        args.join(" "),
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The -R report: from "Excel output is below:" to the end of IOzone's
/// text (fsbench's own section follows it, after a line starting
/// "fsbench:").
fn excel_block(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let i = lines.iter().position(|l| *l == "Excel output is below:").unwrap_or_else(|| panic!("no -R report in:\n{text}"));
    let end = lines[i..].iter().position(|l| l.starts_with("fsbench:")).map_or(lines.len(), |n| i + n);
    // The blank line that separates the two is fsbench's.
    let end = if end < lines.len() && end > i && lines[end - 1].is_empty() { end - 1 } else { end };
    lines[i..end].to_vec()
}

/// A line with every number outside double quotes replaced by `#`, except
/// a lone `0` (a cell IOzone did not run), which is kept. Quoted labels
/// (titles, record sizes, file sizes) and all spacing stay as they are.
fn mask(line: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    let mut num = String::new();
    let flush = |num: &mut String, out: &mut String| {
        if !num.is_empty() {
            out.push_str(if num == "0" { "0" } else { "#" });
            num.clear();
        }
    };
    for c in line.chars() {
        if !quoted && (c.is_ascii_digit() || (c == '.' && !num.is_empty())) {
            num.push(c);
            continue;
        }
        flush(&mut num, &mut out);
        if c == '"' {
            quoted = !quoted;
        }
        out.push(c);
    }
    flush(&mut num, &mut out);
    out
}

fn assert_same_lines(what: &str, want: &[String], got: &[String], got_text: &str) {
    for (i, (w, g)) in want.iter().zip(got).enumerate() {
        assert_eq!(g, w, "{what}: line {} differs (masked; left = fsbench, right = IOzone)\nfsbench's output:\n{got_text}", i + 1);
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: {} lines from fsbench, {} in IOzone's\nfsbench's output:\n{got_text}",
        got.len(),
        want.len()
    );
}

/// A table row: kB, reclen, the end column of every number, the line length.
type Row = (u64, u64, Vec<usize>, usize);

/// Per -R block: its title line and, per file-size row, its label and which
/// cells are `0`.
type ExcelCells = Vec<(String, Vec<(String, Vec<bool>)>)>;

/// The table: its two header lines, and per row (kB, reclen, the end column
/// of every number, the line length) -- numbers are right-aligned in fixed
/// fields and blank runs stand for tests not run, so this is the layout.
fn table(text: &str) -> (Vec<String>, Vec<Row>) {
    let lines: Vec<&str> = text.lines().collect();
    let h = lines.iter().position(|l| l.contains("kB  reclen")).unwrap_or_else(|| panic!("no table header in:\n{text}"));
    let headers = vec![lines[h - 1].to_string(), lines[h].to_string()];
    let mut rows = Vec::new();
    for l in &lines[h + 1..] {
        let nums: Vec<(usize, &str)> =
            l.match_indices(|c: char| c.is_ascii_digit()).fold(Vec::new(), |mut v: Vec<(usize, &str)>, (i, _)| {
                match v.last_mut() {
                    Some((s, n)) if *s + n.len() == i => *n = &l[*s..=i],
                    _ => v.push((i, &l[i..=i])),
                }
                v
            });
        if nums.len() < 2 || !l.starts_with(' ') {
            break;
        }
        rows.push((nums[0].1.parse().unwrap(), nums[1].1.parse().unwrap(), nums.iter().map(|(s, n)| s + n.len()).collect(), l.len()));
    }
    (headers, rows)
}

/// The -R report's cells: per block title, per file-size row, which cells
/// are 0 (`true`) and which hold a figure.
fn excel_cells(text: &str) -> ExcelCells {
    let mut blocks: ExcelCells = Vec::new();
    for l in excel_block(text).iter().skip(1) {
        if l.starts_with("\"") && l.ends_with("report\"") {
            blocks.push((l.to_string(), Vec::new()));
        } else if let Some(quoted) = l.strip_prefix('"') {
            let (label, rest) = quoted.split_once('"').unwrap();
            let cells = rest.split_whitespace().map(|c| c == "0").collect();
            blocks.last_mut().expect("a row after a title").1.push((label.to_string(), cells));
        }
    }
    blocks
}

#[test]
fn excel_report_layout_matches_iozones_line_by_line() {
    let d = tempfile::tempdir().unwrap();
    let got = fsbench_like("a-auto-R", d.path());
    let want: Vec<String> = excel_block(&sample("a-auto-R.out")).iter().map(|l| mask(l)).collect();
    let have: Vec<String> = excel_block(&got).iter().map(|l| mask(l)).collect();
    assert_same_lines("-R report of a-auto-R", &want, &have, &got);
}

#[test]
fn no_retest_excel_report_keeps_the_re_blocks_with_zeros() {
    let d = tempfile::tempdir().unwrap();
    let got = fsbench_like("b-auto-R-noretest", d.path());
    let want: Vec<String> = excel_block(&sample("b-auto-R-noretest.out")).iter().map(|l| mask(l)).collect();
    let have: Vec<String> = excel_block(&got).iter().map(|l| mask(l)).collect();
    assert_same_lines("-R report of b-auto-R-noretest (-+n)", &want, &have, &got);
}

#[test]
fn auto_table_has_iozones_headers_rows_and_column_positions() {
    let d = tempfile::tempdir().unwrap();
    let got = fsbench_like("a-auto-R", d.path());
    let (wh, wr) = table(&sample("a-auto-R.out"));
    let (gh, gr) = table(&got);
    assert_eq!(gh, wh, "the two header lines, byte for byte (trailing spaces included)");
    let cells = |r: &[Row]| r.iter().map(|(k, r, _, _)| (*k, *r)).collect::<Vec<_>>();
    assert_eq!(cells(&gr), cells(&wr), "the (kB, reclen) rows, in order");
    for (g, w) in gr.iter().zip(&wr) {
        assert_eq!((&g.2, g.3), (&w.2, w.3), "row {} {}: number end columns and line length\n{got}", w.0, w.1);
    }
}

#[test]
fn auto_mode_crossover_matrix_equals_iozones() {
    // 16 and 32 MiB with the default records 4 kB..16 MiB: at 32 MiB the
    // records 4-32 kB are not run (no table row, `0` in -R).
    let d = tempfile::tempdir().unwrap();
    let got = fsbench_like("c-crossover-32m", d.path());
    let want = sample("c-crossover-32m.out");
    let (_, wr) = table(&want);
    let (_, gr) = table(&got);
    let cells = |r: &[Row]| r.iter().map(|(k, r, _, _)| (*k, *r)).collect::<Vec<_>>();
    assert_eq!(cells(&gr), cells(&wr), "the cells run, in order\n{got}");
    assert!(!cells(&wr).contains(&(32768, 32)) && cells(&wr).contains(&(32768, 64)), "the sample shows the crossover");
    assert_eq!(excel_cells(&got), excel_cells(&want), "-R blocks, rows and which cells are 0\n{got}");
    let w: Vec<String> = excel_block(&want).iter().map(|l| mask(l)).collect();
    let g: Vec<String> = excel_block(&got).iter().map(|l| mask(l)).collect();
    assert_same_lines("-R report of c-crossover-32m", &w, &g, &got);
}

/// Bad input: fsbench exits non-zero (IOzone exits 0 or hangs on some of
/// these, see tests/data/iozone/ERRORS.md), does not panic, and says which
/// flag is wrong -- outside an echo of the command line.
fn rejects(args: &[&str], flags: &[&str]) {
    let d = tempfile::tempdir().unwrap();
    let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    a.push("-f".into());
    a.push(d.path().join("iozone.tmp").display().to_string());
    let out = fsbench_iozone(&a, d.path(), Duration::from_secs(60));
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code();
    assert!(code.is_some_and(|c| c != 0), "fsbench iozone {} should fail, got {:?}\nstdout: {so}\nstderr: {se}", a.join(" "), code);
    assert!(!se.contains("panicked"), "panic: {se}");
    let said: String = so.lines().chain(se.lines()).filter(|l| !l.contains("Command line used")).collect::<Vec<_>>().join("\n");
    assert!(
        flags.iter().any(|f| said.split(|c: char| c.is_whitespace() || "'\"`,:;()".contains(c)).any(|w| w == *f)),
        "the message should name {} (fsbench iozone {}):\nstdout: {so}\nstderr: {se}",
        flags.join(" or "),
        a.join(" ")
    );
    assert!(!so.contains("iozone test complete."), "nothing ran: {so}");
}

#[test]
fn throughput_mode_with_auto_mode_is_refused() {
    rejects(&["-t", "2", "-a"], &["-t", "-a"]);
}

#[test]
fn record_size_above_16_mib_is_refused() {
    rejects(&["-q", "32m"], &["-q"]);
}

#[test]
fn record_larger_than_the_file_is_refused() {
    rejects(&["-r", "128k", "-s", "64k"], &["-r", "-s"]);
}

#[test]
fn unknown_test_number_is_refused() {
    rejects(&["-i", "99"], &["-i"]);
}

#[test]
fn remount_of_a_directory_that_is_not_a_mount_point_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("notmnt");
    std::fs::create_dir(&dir).unwrap();
    rejects(&["-U", dir.to_str().unwrap(), "-s", "64k", "-r", "4k", "-i", "0"], &["-U"]);
}

/// The stored samples still describe the IOzone that scripts/build-iozone.sh
/// builds: same -R layout and matrix for the flags of a-auto-R and
/// c-crossover-32m. Skips when that IOzone has not been built.
#[test]
fn stored_samples_match_a_live_iozone() {
    let iz = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/peers/iozone/iozone");
    if !iz.exists() {
        eprintln!("SKIPPED: no IOzone at {} (run scripts/build-iozone.sh)", iz.display());
        return;
    }
    for name in ["a-auto-R", "c-crossover-32m"] {
        let d = tempfile::tempdir().unwrap();
        let mut args = sample_flags(name);
        args.push("-f".into());
        args.push(d.path().join("iozone.tmp").display().to_string());
        let out = run_in(&iz, &args, d.path(), Duration::from_secs(300));
        assert!(out.status.success(), "IOzone {name}: {:?}", out.status);
        let live = String::from_utf8_lossy(&out.stdout).into_owned();
        let stored = sample(&format!("{name}.out"));
        let w: Vec<String> = excel_block(&stored).iter().map(|l| mask(l)).collect();
        let g: Vec<String> = excel_block(&live).iter().map(|l| mask(l)).collect();
        assert_same_lines(&format!("live IOzone vs stored {name}"), &w, &g, &live);
        assert_eq!(
            table(&live).1.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>(),
            table(&stored).1.iter().map(|r| (r.0, r.1)).collect::<Vec<_>>()
        );
    }
}
