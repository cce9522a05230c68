//! Conformance cases of the engines that do no plain data I/O, as
//! `(engine name, case)` pairs so they can join the conformance table keyed
//! by engine name. Each case drives the engine through the trait alone and
//! checks a real effect: files on disk, the stat call chosen, CPU time
//! burnt, a program started and stopped, bytes received equal to bytes sent.

use super::*;
use crate::model::engine_misc::{MiscEngineOptions, NetProtocol, StatType};
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub static CASES: &[(&str, fn())] = &[
    ("filecreate", filecreate_creates_each_file_once_per_pass),
    ("filestat", filestat_uses_the_stat_type),
    ("filedelete", filedelete_unlinks_each_file),
    ("dircreate", dircreate_makes_directories),
    ("dirstat", dirstat_stats_directories),
    ("dirdelete", dirdelete_removes_directories),
    ("cpuio", cpuio_burns_the_cpu_time_asked),
    ("exec", exec_runs_the_program_and_stops_it),
    ("net", net_tcp_receives_what_was_sent),
    ("net", net_udp_receives_datagrams_and_the_end_marker),
    ("net", net_unix_socket_with_pingpong),
    ("netsplice", netsplice_tcp_receives_what_was_sent),
];

#[test]
fn every_case_passes() {
    for (name, case) in CASES {
        eprintln!("conformance_misc: {name}");
        case();
    }
}

const BS: u32 = 4096;

fn engine(name: &str, misc: MiscEngineOptions) -> Box<dyn IoEngine> {
    let options = EngineOptions { misc, ..EngineOptions::default() };
    (find(name).unwrap().make)(&EngineConfig { iodepth: 1, options: &options }).unwrap()
}

/// An engine set up on `paths` of `bytes` per pass, as the runner does for
/// engines that work by path.
fn by_path(name: &str, misc: MiscEngineOptions, paths: &[PathBuf], bytes: u64) -> Box<dyn IoEngine> {
    let mut e = engine(name, misc);
    let eps: Vec<EnginePath> = paths.iter().map(|p| EnginePath { path: p, bytes }).collect();
    e.setup_paths(&eps).unwrap();
    let files: Vec<EngineFile> = paths.iter().map(|_| EngineFile { fd: -1, size: bytes, writable: false }).collect();
    e.setup(&files, &[]).unwrap();
    e
}

fn op(e: &mut Box<dyn IoEngine>, op: IoOp, file: u32, buf: *mut u8, len: u32) -> i64 {
    match e.queue(&IoUnit { op, file, offset: 0, len, buf, slot: 0, prio: 0 }).unwrap() {
        Queued::Done(r) => r,
        Queued::Pending => panic!("a synchronous engine left an I/O pending"),
    }
}

fn read(e: &mut Box<dyn IoEngine>, file: u32) -> i64 {
    op(e, IoOp::Read, file, std::ptr::null_mut(), BS)
}

fn names(dir: &std::path::Path, n: usize) -> Vec<PathBuf> {
    (0..n).map(|i| dir.join(format!("f.{i}"))).collect()
}

fn filecreate_creates_each_file_once_per_pass() {
    let dir = tempfile::tempdir().unwrap();
    let paths = names(dir.path(), 3);
    // Two blocks per file: the create happens on the first of each pass.
    let mut e = by_path("filecreate", MiscEngineOptions::default(), &paths, 2 * BS as u64);
    for f in 0..3 {
        assert_eq!(read(&mut e, f), BS as i64);
    }
    for p in &paths {
        let m = std::fs::metadata(p).unwrap();
        assert_eq!(m.len(), 0, "filecreate writes no data");
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777, 0o600);
    }
    std::fs::remove_file(&paths[0]).unwrap();
    // The second block of the pass: no new create.
    assert_eq!(read(&mut e, 0), BS as i64);
    assert!(!paths[0].exists(), "created twice in one pass");
    // The next pass creates it again.
    assert_eq!(read(&mut e, 0), BS as i64);
    assert!(paths[0].exists());
}

fn filestat_uses_the_stat_type() {
    let dir = tempfile::tempdir().unwrap();
    let target = dir.path().join("missing");
    let link = dir.path().join("link");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let paths = vec![link];
    // stat follows the dangling link and fails; lstat looks at the link.
    let mut stat = by_path("filestat", MiscEngineOptions::default(), &paths, BS as u64);
    assert_eq!(read(&mut stat, 0), -(libc::ENOENT as i64));
    let lstat = MiscEngineOptions { stat_type: StatType::Lstat, ..Default::default() };
    let mut l = by_path("filestat", lstat, &paths, BS as u64);
    assert_eq!(read(&mut l, 0), BS as i64);
    let statx = MiscEngineOptions { stat_type: StatType::Statx, ..Default::default() };
    let mut x = by_path("filestat", statx, &paths, BS as u64);
    assert_eq!(read(&mut x, 0), -(libc::ENOENT as i64), "statx follows links like stat");
    std::fs::write(&target, b"x").unwrap();
    assert_eq!(read(&mut x, 0), BS as i64);
}

fn filedelete_unlinks_each_file() {
    let dir = tempfile::tempdir().unwrap();
    let paths = names(dir.path(), 4);
    for p in &paths {
        std::fs::write(p, vec![0u8; BS as usize]).unwrap();
    }
    let mut e = by_path("filedelete", MiscEngineOptions::default(), &paths, BS as u64);
    for f in 0..4 {
        assert_eq!(op(&mut e, IoOp::Write, f, std::ptr::null_mut(), BS), BS as i64);
    }
    assert!(paths.iter().all(|p| !p.exists()), "every file is gone");
    assert_eq!(read(&mut e, 0), -(libc::ENOENT as i64), "a second pass has nothing to delete");
}

fn dircreate_makes_directories() {
    let dir = tempfile::tempdir().unwrap();
    let paths = names(dir.path(), 3);
    let mut e = by_path("dircreate", MiscEngineOptions::default(), &paths, BS as u64);
    for f in 0..3 {
        assert_eq!(read(&mut e, f), BS as i64);
    }
    assert!(paths.iter().all(|p| p.is_dir()));
    assert_eq!(read(&mut e, 0), -(libc::EEXIST as i64), "mkdir of an existing directory fails, as in fio");
}

fn dirstat_stats_directories() {
    let dir = tempfile::tempdir().unwrap();
    let paths = names(dir.path(), 2);
    std::fs::create_dir(&paths[0]).unwrap();
    let mut e = by_path("dirstat", MiscEngineOptions::default(), &paths, BS as u64);
    assert_eq!(read(&mut e, 0), BS as i64);
    assert_eq!(read(&mut e, 1), -(libc::ENOENT as i64), "a missing directory is an error");
}

fn dirdelete_removes_directories() {
    let dir = tempfile::tempdir().unwrap();
    let paths = names(dir.path(), 3);
    for p in &paths {
        std::fs::create_dir(p).unwrap();
    }
    let mut e = by_path("dirdelete", MiscEngineOptions::default(), &paths, BS as u64);
    for f in 0..3 {
        assert_eq!(read(&mut e, f), BS as i64);
    }
    assert!(paths.iter().all(|p| !p.exists()));
}

fn cpuio_burns_the_cpu_time_asked() {
    let chunk = Duration::from_millis(20);
    let misc = MiscEngineOptions { cpuload: 50, cpuchunks: chunk, ..Default::default() };
    assert_eq!(misc.cpu_rest(), chunk, "50% load rests as long as it burns");
    assert_eq!(MiscEngineOptions { cpuload: 25, ..misc.clone() }.cpu_rest(), chunk * 3);
    let mut e = engine("cpuio", misc);
    e.setup(&[EngineFile { fd: -1, size: 1 << 30, writable: false }], &[]).unwrap();
    let before = super::cpuio::thread_cpu_ns();
    let wall = Instant::now();
    for _ in 0..5 {
        assert_eq!(read(&mut e, 0), BS as i64);
    }
    let burnt = Duration::from_nanos(super::cpuio::thread_cpu_ns() - before);
    assert!(burnt >= chunk * 5, "5 operations burnt {burnt:?} of CPU, expected at least {:?}", chunk * 5);
    // Burning is all it does: CPU time is (nearly) all the wall time it
    // took, unless the machine's other threads took turns.
    assert!(burnt <= wall.elapsed() + Duration::from_millis(5));
    assert!(burnt < chunk * 5 + Duration::from_millis(50), "burnt far more than asked: {burnt:?}");
    let mut none = (find("cpuio").unwrap().make)(&EngineConfig { iodepth: 1, options: &EngineOptions::default() });
    assert!(none.as_mut().is_err(), "cpuio without cpuload is refused");
}

fn exec_runs_the_program_and_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("ran");
    let script = dir.path().join("prog.sh");
    // The program records its arguments, then waits for SIGTERM and records that too.
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$@\" > {m}\ntrap 'echo term >> {m}; exit 0' TERM\nwhile :; do sleep 0.05; done\n", m = mark.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let misc = MiscEngineOptions {
        program: Some(script.display().to_string()),
        arguments: Some("job  2".into()),
        std_redirect: false,
        grace_time: Duration::from_secs(2),
        ..Default::default()
    };
    let mut e = engine("exec", misc);
    e.setup(&[EngineFile { fd: -1, size: 1 << 30, writable: false }], &[]).unwrap();
    assert_eq!(read(&mut e, 0), BS as i64);
    let t = Instant::now();
    assert_eq!(read(&mut e, 0), BS as i64);
    assert!(t.elapsed() >= Duration::from_millis(45), "a check-in pauses 50 ms, as in fio");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !std::fs::read_to_string(&mark).is_ok_and(|s| s.ends_with('\n')) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(std::fs::read_to_string(&mark).unwrap(), "job 2\n", "arguments split on spaces");
    drop(e);
    let log = std::fs::read_to_string(&mark).unwrap();
    assert_eq!(log, "job 2\nterm\n", "the program got SIGTERM and exited within grace_time");

    // grace_time is an upper bound: a program that exits on SIGTERM ends the wait.
    let misc = MiscEngineOptions {
        program: Some("/bin/sleep".into()),
        arguments: Some("30".into()),
        std_redirect: false,
        grace_time: Duration::from_secs(5),
        ..Default::default()
    };
    let mut e = engine("exec", misc);
    e.setup(&[], &[]).unwrap();
    read(&mut e, 0);
    let pid = e_pid(e.as_ref());
    assert!(std::path::Path::new(&format!("/proc/{pid}")).exists());
    let t = Instant::now();
    drop(e);
    assert!(t.elapsed() < Duration::from_secs(2), "sleep stops on SIGTERM at once");
    assert!(!std::path::Path::new(&format!("/proc/{pid}")).exists(), "stopped and reaped");
}

/// The pid of the program the last exec engine started, found by its
/// parent (this process) and its name.
fn e_pid(_e: &dyn IoEngine) -> u32 {
    let me = std::process::id();
    for d in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = d.file_name().to_string_lossy().parse::<u32>() else { continue };
        let stat = std::fs::read_to_string(d.path().join("stat")).unwrap_or_default();
        let fields: Vec<&str> = stat.rsplit(") ").next().unwrap_or("").split(' ').collect();
        let cmdline = std::fs::read(d.path().join("cmdline")).unwrap_or_default();
        if fields.get(1).and_then(|p| p.parse::<u32>().ok()) == Some(me) && cmdline.starts_with(b"/bin/sleep\0") {
            return pid;
        }
    }
    panic!("the exec'd program is not running");
}

/// A port nobody listens on right now.
fn free_port(udp: bool) -> u16 {
    if udp {
        std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    } else {
        std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
    }
}

/// Run a reader and a writer engine in two threads: the writer sends
/// `blocks` blocks of distinct content and ends; the reader reads until
/// the end. Returns (bytes sent, bytes received, received content equal).
fn transfer(
    name: &'static str,
    reader: MiscEngineOptions,
    writer: MiscEngineOptions,
    blocks: u32,
    paths: Vec<PathBuf>,
) -> (u64, u64, bool) {
    let recv_paths = paths.clone();
    let r = std::thread::spawn(move || {
        let mut e = engine(name, reader);
        let eps: Vec<EnginePath> = recv_paths.iter().map(|p| EnginePath { path: p, bytes: 1 << 30 }).collect();
        e.setup_paths(&eps).unwrap();
        e.setup(&[EngineFile { fd: -1, size: 1 << 30, writable: false }], &[]).unwrap();
        let mut buf = vec![0u8; BS as usize];
        let (mut got, mut same) = (0u64, true);
        for i in 0..blocks + 1 {
            let n = op(&mut e, IoOp::Read, 0, buf.as_mut_ptr(), BS);
            if n == 0 {
                assert!(e.finished(), "an empty read is the end only when the peer finished");
                break;
            }
            assert_eq!(n, BS as i64);
            same &= buf.iter().all(|&b| b == i as u8);
            got += n as u64;
        }
        (got, same)
    });
    let mut e = engine(name, writer);
    let eps: Vec<EnginePath> = paths.iter().map(|p| EnginePath { path: p, bytes: 1 << 30 }).collect();
    e.setup_paths(&eps).unwrap();
    e.setup(&[EngineFile { fd: -1, size: 1 << 30, writable: true }], &[]).unwrap();
    let mut buf = vec![0u8; BS as usize];
    let mut sent = 0u64;
    for i in 0..blocks {
        buf.iter_mut().for_each(|b| *b = i as u8);
        let n = op(&mut e, IoOp::Write, 0, buf.as_mut_ptr(), BS);
        assert_eq!(n, BS as i64);
        sent += n as u64;
        // Paced, so loopback UDP does not drop what a slower reader's
        // buffer cannot hold.
        std::thread::sleep(Duration::from_micros(200));
    }
    drop(e);
    let (got, same) = r.join().unwrap();
    (sent, got, same)
}

fn net_tcp_receives_what_was_sent() {
    let port = free_port(false);
    let reader = MiscEngineOptions { port, listen: true, nodelay: true, ..Default::default() };
    let writer = MiscEngineOptions { port, hostname: Some("127.0.0.1".into()), window_size: 1 << 16, ..Default::default() };
    let (sent, got, same) = transfer("net", reader, writer, 200, vec![]);
    assert_eq!(sent, 200 * BS as u64);
    assert_eq!(got, sent, "the listener received every byte sent");
    assert!(same, "in order and intact");
}

fn net_udp_receives_datagrams_and_the_end_marker() {
    let port = free_port(true);
    let reader = MiscEngineOptions { port, protocol: NetProtocol::Udp, ..Default::default() };
    let writer = MiscEngineOptions { port, protocol: NetProtocol::Udp, hostname: Some("127.0.0.1".into()), ..Default::default() };
    let t = Instant::now();
    let (sent, got, _) = transfer("net", reader, writer, 50, vec![]);
    assert_eq!(sent, 50 * BS as u64);
    assert!(got > 0 && got <= sent, "received {got} of {sent} bytes");
    assert!(t.elapsed() < Duration::from_secs(4), "the end marker ended the reader, not its idle timeout");
}

fn net_unix_socket_with_pingpong() {
    let dir = tempfile::tempdir().unwrap();
    let sock = dir.path().join("s.sock");
    let reader = MiscEngineOptions { protocol: NetProtocol::Unix, listen: true, pingpong: true, ..Default::default() };
    let writer = MiscEngineOptions { protocol: NetProtocol::Unix, pingpong: true, ..Default::default() };
    let (sent, got, same) = transfer("net", reader, writer, 100, vec![sock.clone()]);
    assert_eq!((sent, got), (100 * BS as u64, 100 * BS as u64));
    assert!(same);
    assert!(!sock.exists(), "the listener removes the socket it bound");
}

fn netsplice_tcp_receives_what_was_sent() {
    let port = free_port(false);
    let reader = MiscEngineOptions { port, listen: true, ..Default::default() };
    let writer = MiscEngineOptions { port, hostname: Some("localhost".into()), ..Default::default() };
    let (sent, got, same) = transfer("netsplice", reader, writer, 300, vec![]);
    assert_eq!(got, sent);
    assert_eq!(sent, 300 * BS as u64);
    assert!(same, "spliced data arrives intact");
    let udp = MiscEngineOptions { protocol: NetProtocol::Udp, ..Default::default() };
    let opts = EngineOptions { misc: udp, ..EngineOptions::default() };
    assert!((find("netsplice").unwrap().make)(&EngineConfig { iodepth: 1, options: &opts }).is_err(), "netsplice refuses UDP");
}
