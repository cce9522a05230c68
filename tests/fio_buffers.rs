//! Write-buffer content (buffer_pattern, scramble_buffers, dedupe_*),
//! measured from the bytes on disk and compared with the real fio where it
//! is installed: the pattern at its offsets, the share of duplicate blocks,
//! scrambled blocks that differ where fio's do.

mod common;
use common::*;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;

const BS: usize = 4096;

/// Run `args` (fio command-line options, files relative to `dir`) with
/// fsbench, or with fio when `fio` is set; false when fio is missing.
fn write_with(fio: bool, dir: &Path, args: &[&str]) -> bool {
    let out = if fio {
        if !have("fio") {
            skip("fio is not installed");
            return false;
        }
        Command::new("fio").args(args).arg("--output=/dev/null").current_dir(dir).output().expect("fio runs")
    } else {
        fsbench().arg("fio").args(args).args(["--no-progress"]).current_dir(dir).output().expect("fsbench runs")
    };
    assert!(out.status.success(), "{} {args:?} failed: {}", if fio { "fio" } else { "fsbench" }, String::from_utf8_lossy(&out.stderr));
    true
}

fn refs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn blocks(path: &Path) -> Vec<Vec<u8>> {
    std::fs::read(path).unwrap().chunks(BS).map(<[u8]>::to_vec).collect()
}

/// Percent of blocks that are copies of another block in `b`.
fn dup_share(b: &[Vec<u8>]) -> f64 {
    let distinct: HashSet<&Vec<u8>> = b.iter().collect();
    100.0 * (b.len() - distinct.len()) as f64 / b.len() as f64
}

fn pattern_block(p: &[u8], len: usize) -> Vec<u8> {
    p.iter().copied().cycle().take(len).collect()
}

/// One sequential 4 KiB writer of `size` into `name`, plus `extra` options.
fn job(name: &str, size: &str, extra: &[&str]) -> Vec<String> {
    let mut v = vec!["--name=a".to_string(), format!("--filename={name}"), "--rw=write".into(), "--bs=4k".into(), format!("--size={size}")];
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// fsbench's blocks, fio's blocks, and the directory holding both files.
type Both = (Vec<Vec<u8>>, Vec<Vec<u8>>, tempfile::TempDir);

fn run_both(extra: &[&str], size: &str) -> Option<Both> {
    let d = disk_tempdir();
    let ours = job("ours", size, extra);
    let theirs = job("theirs", size, extra);
    write_with(false, d.path(), &refs(&ours));
    if !write_with(true, d.path(), &refs(&theirs)) {
        return None;
    }
    Some((blocks(&d.path().join("ours")), blocks(&d.path().join("theirs")), d))
}

#[test]
fn buffer_pattern_is_on_disk_as_fio_writes_it() {
    let d = disk_tempdir();
    std::fs::write(d.path().join("pat.bin"), b"XYZ").unwrap();
    let pattern = [&[0xde, 0xad, 0xfa, 0xce][..], b"abc", &[0xf4, 0xff, 0xff, 0xff], b"XYZ"].concat();
    let opt = "--buffer_pattern=0xdeadface\"abc\"-12'pat.bin'";
    let a = job("ours", "64k", &[opt]);
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    write_with(false, d.path(), &refs);
    let ours = std::fs::read(d.path().join("ours")).unwrap();
    assert_eq!(ours.len(), 65536);
    // Every block starts the pattern afresh (fio fills each buffer from its start).
    for b in ours.chunks(BS) {
        assert_eq!(b, pattern_block(&pattern, BS), "a block differs from the pattern");
    }
    let f = job("theirs", "64k", &[opt]);
    let refs: Vec<&str> = f.iter().map(String::as_str).collect();
    if write_with(true, d.path(), &refs) {
        assert_eq!(std::fs::read(d.path().join("theirs")).unwrap(), ours, "fio wrote other bytes");
    }
}

#[test]
fn buffer_pattern_fills_the_compressible_part_and_verify_keeps_fios_content() {
    let Some((ours, theirs, _d)) = run_both(&["--buffer_pattern=0xabcd", "--buffer_compress_percentage=50"], "64k") else { return };
    for (who, file) in [("fsbench", &ours), ("fio", &theirs)] {
        for b in file {
            for c in b.chunks(512) {
                assert_eq!(c[256..], pattern_block(&[0xab, 0xcd], 256)[..], "{who}: second half of a 512-byte chunk");
                assert!(c[..256].windows(2).filter(|w| w == &[0xab, 0xcd]).count() < 8, "{who}: first half is random");
            }
        }
    }
    // Under verify=crc32c fio writes random data (the pattern only fills a
    // compressible part): the blocks check out and carry no pattern.
    let d = disk_tempdir();
    let a = job("v", "64k", &["--buffer_pattern=0xabcd", "--verify=crc32c"]);
    let refs: Vec<&str> = a.iter().map(String::as_str).collect();
    let out = fsbench().arg("fio").args(&refs).arg("--no-progress").current_dir(d.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("0 mismatches"), "{}", String::from_utf8_lossy(&out.stdout));
    let v = std::fs::read(d.path().join("v")).unwrap();
    assert!(v.windows(4).filter(|w| w == &[0xab, 0xcd, 0xab, 0xcd]).count() < 16, "verify content is random, as fio's");
}

#[test]
fn dedupe_percentage_makes_that_share_of_blocks_copies() {
    for (extra, want) in [
        (vec!["--dedupe_percentage=30"], 30.0),
        (vec!["--dedupe_percentage=30", "--dedupe_mode=working_set", "--dedupe_working_set_percentage=20"], 30.0),
        (vec!["--dedupe_percentage=60", "--buffer_compress_percentage=50"], 60.0),
        (vec!["--dedupe_percentage=0"], 0.0),
        (vec!["--dedupe_percentage=100"], 100.0 * (4095.0 / 4096.0)),
    ] {
        let Some((ours, theirs, _d)) = run_both(&extra, "16m") else { return };
        assert_eq!(ours.len(), 4096);
        let (o, t) = (dup_share(&ours), dup_share(&theirs));
        assert!((o - want).abs() < 3.0, "{extra:?}: fsbench {o:.1}% duplicate blocks, want {want}");
        assert!((o - t).abs() < 4.0, "{extra:?}: fsbench {o:.1}%, fio {t:.1}%");
    }
}

#[test]
fn dedupe_global_shares_the_working_set_between_jobs() {
    let d = disk_tempdir();
    let cross = |global: &str| {
        let args = [
            "--rw=write",
            "--bs=4k",
            "--size=8m",
            "--dedupe_percentage=40",
            "--dedupe_mode=working_set",
            "--dedupe_working_set_percentage=20",
            global,
            "--name=a",
            "--filename=ga",
            "--name=b",
            "--filename=gb",
        ];
        write_with(false, d.path(), &args);
        let (a, b) = (blocks(&d.path().join("ga")), blocks(&d.path().join("gb")));
        let in_a: HashSet<&Vec<u8>> = a.iter().collect();
        let shared = b.iter().filter(|x| in_a.contains(x)).count();
        let both: Vec<Vec<u8>> = a.iter().chain(&b).cloned().collect();
        (shared, dup_share(&a), dup_share(&both))
    };
    let (shared, _, both) = cross("--dedupe_global=0");
    assert_eq!(shared, 0, "jobs without dedupe_global share no block");
    assert!((both - 40.0).abs() < 3.0, "{both:.1}%");
    let (shared, own, both) = cross("--dedupe_global=1");
    assert!(shared > 100, "with dedupe_global, b copies blocks of a: {shared}");
    assert!(own < 35.0, "a's copies are spread over both jobs: {own:.1}% within a alone");
    assert!((both - 40.0).abs() < 3.0, "{both:.1}% over both files");
}

/// Byte positions (within 512) where consecutive blocks differ.
fn differing_positions(b: &[Vec<u8>]) -> HashSet<usize> {
    let mut at = HashSet::new();
    for w in b.windows(2) {
        at.extend((0..BS).filter(|&i| w[0][i] != w[1][i]).map(|i| i % 512));
    }
    at
}

#[test]
fn scramble_buffers_stamps_blocks_where_fio_does() {
    let Some((ours, theirs, _d)) = run_both(&[], "256k") else { return };
    for (who, file) in [("fsbench", &ours), ("fio", &theirs)] {
        assert_eq!(dup_share(file), 0.0, "{who}: scrambled blocks never repeat");
        let at = differing_positions(file);
        // The time at bytes 48..64 and the offset in one 64-byte line.
        assert!(at.iter().any(|&p| (48..64).contains(&p)), "{who}: {at:?}");
        let stamp = |p: &usize| (48..64).contains(p) || p % 64 < 8;
        assert!(at.iter().all(stamp), "{who}: only the stamps differ: {at:?}");
    }
    // Off, or zero_buffers given alone: fio repeats its one buffer; with
    // scramble_buffers=1 given as well the zeros carry the stamps.
    for (extra, dups) in
        [(vec!["--scramble_buffers=0"], true), (vec!["--zero_buffers=1"], true), (vec!["--zero_buffers=1", "--scramble_buffers=1"], false)]
    {
        let Some((ours, theirs, _d)) = run_both(&extra, "64k") else { return };
        for (who, file) in [("fsbench", &ours), ("fio", &theirs)] {
            let distinct: HashSet<&Vec<u8>> = file.iter().collect();
            assert_eq!(distinct.len() == 1, dups, "{who} {extra:?}: {} distinct blocks", distinct.len());
        }
    }
    let Some((ours, _, _d)) = run_both(&["--zero_buffers=1", "--scramble_buffers=1"], "64k") else { return };
    let mut nonzero: HashMap<usize, usize> = HashMap::new();
    for b in &ours {
        for (i, _) in b.iter().enumerate().filter(|(_, &x)| x != 0) {
            *nonzero.entry(i % 512).or_default() += 1;
        }
    }
    assert!(!nonzero.is_empty() && nonzero.keys().all(|&p| (48..64).contains(&p) || p % 64 < 8), "stamps only: {nonzero:?}");
}

fn fails(args: &[&str]) -> String {
    let d = tempfile::tempdir().unwrap();
    let out = fsbench().arg("fio").args(args).arg("--no-progress").current_dir(d.path()).output().unwrap();
    assert!(!out.status.success(), "{args:?} ran");
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn bad_buffer_options_name_the_option_and_what_was_expected() {
    let e = fails(&["--name=a", "--size=1m", "--buffer_pattern=%o"]);
    assert!(e.contains("buffer_pattern") && e.contains("expected a pattern of hex"), "{e}");
    let e = fails(&["--name=a", "--size=1m", "--buffer_pattern='/nonexistent/pattern'"]);
    assert!(e.contains("buffer_pattern") && e.contains("no such file"), "{e}");
    let e = fails(&["--name=a", "--filesize=1m", "--dedupe_percentage=10", "--dedupe_mode=working_set"]);
    assert!(e.contains("dedupe_mode") && e.contains("size="), "{e}");
    let e = fails(&["--name=a", "--size=1m", "--dedupe_percentage=90", "--dedupe_mode=working_set", "--dedupe_working_set_percentage=20"]);
    assert!(e.contains("dedupe_working_set_percentage") && e.contains("at most 100"), "{e}");
    let e = fails(&["--name=a", "--size=1m", "--dedupe_mode=sometimes"]);
    assert!(e.contains("dedupe_mode") && e.contains("repeat or working_set"), "{e}");
}
