//! fio's data verification (`verify=`) through the CLI: clean runs for every
//! method, blocks corrupted or moved behind fsbench's back, and the amount
//! of I/O compared with the real fio.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

fn s(p: &Path) -> String {
    p.display().to_string()
}

const METHODS: &[&str] = &[
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "sha1",
    "sha256",
    "sha512",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "xxhash",
    "meta",
    "null",
];

fn verify_of(v: &Value, job: usize) -> &Value {
    &v["jobs"][job]["details"]["verify"]
}

/// Bitwise CRC-32C, independent of fsbench's table and SSE4.2 versions.
fn crc32c(data: &[u8]) -> u32 {
    let mut c = !0u32;
    for &b in data {
        c ^= b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 { (c >> 1) ^ 0x82F6_3B78 } else { c >> 1 };
        }
    }
    !c
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn every_method_writes_reads_back_and_finds_no_mismatch() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let mut cases: Vec<Vec<String>> = METHODS.iter().map(|m| vec![format!("--verify={m}")]).collect();
    cases.push(vec!["--verify=pattern".into(), "--verify_pattern=0xdeadbeef".into()]);
    cases.push(vec!["--verify_pattern=0xff%o\"abcd\"-12".into()]);
    cases.push(vec!["--verify=sha256".into(), "--verify_interval=512".into(), "--verify_offset=200".into()]);
    for (i, case) in cases.iter().enumerate() {
        let name = format!("--name=v{i}");
        let mut args: Vec<&str> = vec![&name, "--rw=randwrite", "--bs=4k", "--size=256k", &d];
        args.extend(case.iter().map(String::as_str));
        let v = fio_json(&args);
        let ver = verify_of(&v, 0);
        assert_eq!(ver["blocks"], 64, "{case:?}: {ver}");
        assert_eq!(ver["bytes"], 256 << 10, "{case:?}");
        assert_eq!(ver["mismatches"], 0, "{case:?}");
        assert_eq!(op(&v, 0, "write")["bytes"], 256 << 10, "{case:?}");
        assert_eq!(op(&v, 0, "read")["bytes"], 256 << 10, "{case:?}: the read-back is counted as reads, as in fio");
        assert!(v["jobs"][0]["error"].is_null(), "{case:?}");
    }
}

#[test]
fn blocks_on_disk_carry_the_header_and_checksum() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    fio_json(&["--name=h", "--rw=write", "--bs=4k", "--size=64k", "--verify=crc32c", &d]);
    let data = std::fs::read(dir.path().join("h.0.0")).unwrap();
    for (i, b) in data.chunks(4096).enumerate() {
        assert_eq!(&b[0..2], &[0xca, 0xac], "magic of block {i}");
        assert_eq!(u32::from_le_bytes(b[4..8].try_into().unwrap()), 4096);
        assert_eq!(u64::from_le_bytes(b[16..24].try_into().unwrap()), i as u64 * 4096, "offset in block {i}'s header");
        assert_eq!(u16::from_le_bytes(b[34..36].try_into().unwrap()), i as u16, "sequence number");
        assert_eq!(u32::from_le_bytes(b[36..40].try_into().unwrap()), crc32c(&b[..36]), "header crc");
        assert_eq!(u32::from_le_bytes(b[40..44].try_into().unwrap()), crc32c(&b[44..]), "data checksum");
    }
}

/// Write with do_verify=0, change the file, then check it with verify_only.
fn write_then(dir: &Path, extra: &[&str], change: impl FnOnce(&Path)) -> std::process::Output {
    let d = format!("--directory={}", s(dir));
    let mut base = vec!["--name=c", "--rw=randwrite", "--bs=4k", "--size=256k", &d];
    base.extend_from_slice(extra);
    let mut w = base.clone();
    w.push("--do_verify=0");
    let v = fio_json(&w);
    assert!(verify_of(&v, 0).is_object(), "the write run records its verify settings");
    change(&dir.join("c.0.0"));
    let mut r = base.clone();
    r.push("--verify_only");
    fsbench().current_dir(dir).arg("fio").args(&r).args(["--output-format=fio-json", "--no-progress"]).output().unwrap()
}

#[test]
fn a_corrupted_block_is_reported_with_offset_and_both_checksums() {
    let dir = disk_tempdir();
    let block = 9u64;
    let mut stored = Vec::new();
    let mut actual = Vec::new();
    let out = write_then(dir.path(), &["--verify=crc32c", "--verify_dump=1"], |f| {
        let mut data = std::fs::read(f).unwrap();
        let b = &mut data[(block * 4096) as usize..((block + 1) * 4096) as usize];
        b[1000] ^= 0x5a;
        stored = b[40..44].to_vec();
        actual = crc32c(&b[44..]).to_le_bytes().to_vec();
        std::fs::write(f, &data).unwrap();
    });
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "a mismatch fails the run: {err}");
    let file = s(&dir.path().join("c.0.0"));
    let off = block * 4096;
    let line = format!("crc32c: verify failed at file {file} offset {off}, length 4096 (requested block: offset={off}, length=4096)");
    assert!(err.contains(&line), "{line}\nnot in:\n{err}");
    assert!(err.contains(&format!("Expected CRC: {}", hex(&stored))), "{err}");
    assert!(err.contains(&format!("Received CRC: {}", hex(&actual))), "{err}");
    // fio's EILSEQ in fio's field, and the count in fsbench's.
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"][0]["error"], 84);
    assert_eq!(v["jobs"][0]["verify"]["mismatches"], 1);
    // verify_dump: what was read and what should have been, in the current directory.
    let received = std::fs::read(dir.path().join(format!("c.0.0.{off}.received"))).unwrap();
    let expected = std::fs::read(dir.path().join(format!("c.0.0.{off}.expected"))).unwrap();
    let on_disk = std::fs::read(dir.path().join("c.0.0")).unwrap();
    assert_eq!(received, on_disk[off as usize..off as usize + 4096]);
    let differ: Vec<usize> = (0..4096).filter(|&i| received[i] != expected[i]).collect();
    assert_eq!(differ, [1000], "the expected block is the received one with the byte restored");
}

#[test]
fn a_block_copied_elsewhere_fails_the_header_offset_check() {
    let dir = disk_tempdir();
    let out = write_then(dir.path(), &["--verify=meta"], |f| {
        let mut data = std::fs::read(f).unwrap();
        let src = data[3 * 4096..4 * 4096].to_vec();
        data[7 * 4096..8 * 4096].copy_from_slice(&src);
        std::fs::write(f, &data).unwrap();
    });
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let file = s(&dir.path().join("c.0.0"));
    let want = format!("verify: bad header offset 12288, wanted 28672 at file {file} offset 28672, length 4096");
    assert!(err.contains(&want), "{want}\nnot in:\n{err}");
}

#[test]
fn a_zeroed_header_is_a_bad_magic_and_an_untouched_file_verifies() {
    let dir = disk_tempdir();
    let out = write_then(dir.path(), &["--verify=md5"], |f| {
        let mut data = std::fs::read(f).unwrap();
        data[5 * 4096..5 * 4096 + 2].fill(0);
        std::fs::write(f, &data).unwrap();
    });
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("verify: bad magic header 0, wanted acca"), "{err}");
    assert!(err.contains("offset 20480, length 4096"), "{err}");

    let clean = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let out = write_then(clean.path(), &["--verify=md5", "--ioengine=libaio", "--iodepth=8"], |_| {});
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["jobs"][0]["verify"]["verified_blocks"], 64);
    assert_eq!(v["jobs"][0]["read"]["io_bytes"], 256 << 10);
    assert_eq!(v["jobs"][0]["write"]["io_bytes"], 0, "verify_only writes nothing");
}

#[test]
fn a_read_job_checks_what_a_write_job_left() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    fio_json(&["--name=r", "--rw=write", "--bs=8k", "--size=256k", "--verify=sha1", "--verify_interval=1k", "--do_verify=0", &d]);
    let v = fio_json(&["--name=r", "--rw=randread", "--bs=8k", "--size=256k", "--verify=sha1", "--verify_interval=1k", &d]);
    assert_eq!(verify_of(&v, 0)["blocks"], 32);
    assert_eq!(verify_of(&v, 0)["mismatches"], 0);
    let f = dir.path().join("r.0.0");
    let mut data = std::fs::read(&f).unwrap();
    data[3 * 1024 + 500] ^= 1;
    std::fs::write(&f, &data).unwrap();
    let out = fsbench()
        .arg("fio")
        .args(["--name=r", "--rw=read", "--bs=8k", "--size=256k", "--verify=sha1", "--verify_interval=1k", &d, "--no-progress"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("sha1: verify failed at file") && err.contains("offset 3072, length 1024 (requested block: offset=0, length=8192)"),
        "{err}"
    );
    // The text layout says what was checked.
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("verify sha1: 1 block (8.0 KiB) checked, 1 mismatch"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn backlog_and_loops_read_back_what_they_wrote() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    let v = fio_json(&["--name=b", "--rw=randwrite", "--bs=4k", "--size=256k", "--verify=xxhash", "--verify_backlog=5", "--loops=2", &d]);
    assert_eq!(verify_of(&v, 0)["blocks"], 128);
    assert_eq!(op(&v, 0, "read")["bytes"], 512 << 10);
    assert_eq!(op(&v, 0, "write")["bytes"], 512 << 10);
}

#[test]
fn verify_input_errors_name_the_place() {
    let dir = disk_tempdir();
    let job = dir.path().join("j.fio");
    std::fs::write(&job, "[j]\nrw=write\nsize=64k\nverify=pattern\n").unwrap();
    let out = fsbench().arg("fio").arg(&job).arg("--no-progress").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("j.fio:4:1") && err.contains("verify=pattern needs verify_pattern"), "{err}");
    std::fs::write(&job, "[j]\nrw=write\nsize=64k\nverify=crc33\n").unwrap();
    let out = fsbench().arg("fio").arg(&job).arg("--no-progress").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("j.fio:4:8") && err.contains("expected 0 or one of md5"), "{err}");
    std::fs::write(&job, "[j]\nrw=write\nsize=64k\nbs=512\nverify=sha512\nverify_offset=450\n").unwrap();
    let out = fsbench().arg("fio").arg(&job).arg("--no-progress").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("j.fio:6:1") && err.contains("past the end of the 512-byte interval"), "{err}");
}

/// fio's and fsbench's read and write bytes for the same job file and arguments.
fn both(job: &Path, args: &[String], dir: &Path) -> Option<((u64, u64), (u64, u64))> {
    let sum = |v: &Value| {
        let jobs = v["jobs"].as_array().unwrap();
        let f = |d: &str| jobs.iter().map(|j| j[d]["io_bytes"].as_u64().unwrap()).sum::<u64>();
        (f("read"), f("write"))
    };
    let a = dir.join("fio");
    let b = dir.join("fsbench");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let out = fsbench()
        .current_dir(&b)
        .arg("fio")
        .arg(job)
        .args(args)
        .arg(format!("--directory={}", s(&b)))
        .args(["--output-format=fio-json", "--no-progress"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && (err.contains("is not supported") || err.contains("unknown option")) {
        skip(&format!("fsbench does not run {} yet: {}", job.display(), err.trim()));
        return None;
    }
    assert!(out.status.success(), "{err}");
    let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
    let out = std::process::Command::new("fio")
        .current_dir(&a)
        .arg(job)
        .args(args)
        .arg(format!("--directory={}", s(&a)))
        .arg("--output-format=json")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let fio: Value = serde_json::from_str(&text[text.find('{').expect("fio JSON")..]).unwrap();
    Some((sum(&fio), sum(&ours)))
}

#[test]
fn basic_verify_example_does_the_io_fio_does() {
    let job = Path::new("/usr/share/doc/fio/examples/basic-verify.fio");
    if !have("fio") || !job.exists() {
        skip("fio or its examples are not installed");
        return;
    }
    let dir = disk_tempdir();
    let args = vec!["--filename=f".to_string(), "--size=16m".to_string()];
    let (fio, ours) = both(job, &args, dir.path()).expect("basic-verify runs");
    assert_eq!(fio, (16 << 20, 16 << 20));
    assert_eq!(ours, fio);
}

#[test]
fn cross_stripe_verify_example_does_the_io_fio_does() {
    if !have("fio") {
        skip("fio is not installed");
        return;
    }
    let dir = disk_tempdir();
    // The example's own shape without the two options it needs from
    // elsewhere (rw=write:112k holes, offset_increment): a check after every
    // block, dumps, two loops, group reporting, three clones.
    let job = dir.path().join("cross-stripe-like.fio");
    std::fs::write(
        &job,
        "[global]\nbs=16k\ndirect=1\nrw=write\nverify=crc32c\nverify_backlog=1\noffset=120k\nio_size=1m\ngroup_reporting\nverify_dump=1\nloops=2\n\n[write-verify]\nnumjobs=3\n",
    )
    .unwrap();
    let (fio, ours) = both(&job, &["--size=16m".to_string()], dir.path()).unwrap();
    assert_eq!(fio, (6 << 20, 6 << 20));
    assert_eq!(ours, fio);

    // The example file itself runs in tests/fio_corpus.rs, scaled inside
    // the file: fio keeps a job file's own values over the command line's,
    // so --size and --offset_increment cannot shrink it (it wrote 74 GB).
}

#[test]
fn each_direction_is_rated_over_its_own_phase() {
    let dir = disk_tempdir();
    let d = format!("--directory={}", s(dir.path()));
    // Writes held to 1 MiB/s (about 0.25 s), the read-back unpaced.
    let out = fsbench()
        .arg("fio")
        .args(["--name=p", "--rw=write", "--bs=4k", "--size=256k", "--verify=crc32c", "--rate=,1m", &d])
        .args(["--output-format=fio-json", "--no-progress"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let j = &v["jobs"][0];
    let (r, w) = (j["read"]["runtime"].as_u64().unwrap(), j["write"]["runtime"].as_u64().unwrap());
    assert!(w >= 200, "write phase {w} ms");
    assert!(r < w, "read-back {r} ms after writes of {w} ms");
    assert!(r + w <= j["job_runtime"].as_u64().unwrap() + 1, "{j}");
    let wbw = j["write"]["bw_bytes"].as_u64().unwrap() as f64;
    assert!((0.8e6..1.2e6).contains(&wbw), "write bandwidth {wbw} over the write phase, near the 1 MiB/s cap");
}
