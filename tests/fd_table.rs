//! fsbench's helper threads (the signal watcher, the progress drawer) keep
//! a descriptor table of their own, so the thread doing I/O alone uses its
//! table and the kernel's fast path for it (see `host::private_fd_table`).
//! Seen from outside: while an IOzone pass has its file open on the main
//! thread, /proc lists it among the main thread's descriptors and not among
//! the signal watcher's, which holds nothing beyond stdio and its sockets.

mod common;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The descriptors the task's table holds (`/proc/PID/task/TID/fd`), with
/// what each names.
fn open_files(pid: u32, tid: &str) -> Vec<(u32, String)> {
    let dir = format!("/proc/{pid}/task/{tid}/fd");
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, std::fs::read_link(e.path()).ok()?.display().to_string())))
        .collect()
}

fn thread_named(pid: u32, name: &str) -> Option<String> {
    std::fs::read_dir(format!("/proc/{pid}/task")).ok()?.flatten().find_map(|e| {
        let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
        (comm.trim() == name).then(|| e.file_name().to_string_lossy().into_owned())
    })
}

#[test]
fn the_signal_watcher_does_not_share_the_io_threads_descriptors() {
    let dir = common::disk_tempdir();
    let file = dir.path().join("shared.tmp");
    // Long enough to be seen: a 1 GiB file in 4 kB records, written then
    // read (stopped by SIGINT once the check is done).
    let mut child = Command::new(env!("CARGO_BIN_EXE_fsbench"))
        .args(["iozone", "-s", "1g", "-r", "4k", "-i", "0", "-i", "1", "-f"])
        .arg(&file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("fsbench starts");
    let pid = child.id();
    let main = pid.to_string();
    let want = file.display().to_string();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = None;
    while Instant::now() < deadline && seen.is_none() {
        if let Some(watcher) = thread_named(pid, "fsb-signals") {
            if open_files(pid, &main).iter().any(|(_, f)| Path::new(f) == Path::new(&want)) {
                seen = Some(open_files(pid, &watcher));
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill takes the pid of the child this test started and a signal number.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGINT);
    }
    let _ = child.wait();
    let watcher_files = seen.expect("the pass's file was never seen open on the main thread beside a signal watcher");
    assert!(!watcher_files.is_empty(), "the watcher's table is readable (it holds at least stdio)");
    // Beyond stdio only the signal socket pair: a copied file or pipe end
    // would stay open as long as the watcher lives (a child's pipe held so
    // would never reach its end).
    let extra: Vec<_> = watcher_files.iter().filter(|(fd, f)| *fd > 2 && !f.starts_with("socket:")).collect();
    assert!(extra.is_empty(), "the watcher holds the main thread's descriptors: {extra:?} of {watcher_files:?}");
}

/// IOzone's `-t` children are processes; fsbench's are threads, each with
/// a table of its own: child 0's file is in child 0's table and not in
/// child 1's.
#[test]
fn throughput_children_each_hold_only_their_own_file() {
    let dir = common::disk_tempdir();
    let f0 = dir.path().join("c0.tmp");
    let f1 = dir.path().join("c1.tmp");
    let mut child = Command::new(env!("CARGO_BIN_EXE_fsbench"))
        .args(["iozone", "-t", "2", "-s", "1g", "-r", "4k", "-i", "0", "-F"])
        .args([&f0, &f1])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("fsbench starts");
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut seen = None;
    while Instant::now() < deadline && seen.is_none() {
        if let (Some(a), Some(b)) = (thread_named(pid, "iozone-0"), thread_named(pid, "iozone-1")) {
            let (ta, tb) = (open_files(pid, &a), open_files(pid, &b));
            let has = |t: &[(u32, String)], f: &Path| t.iter().any(|(_, x)| Path::new(x) == f);
            if has(&ta, &f0) && has(&tb, &f1) {
                seen = Some((ta, tb));
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: kill takes the pid of the child this test started and a signal number.
    unsafe {
        libc::kill(pid as libc::pid_t, libc::SIGINT);
    }
    let _ = child.wait();
    let (ta, tb) = seen.expect("both children's files were never seen open in their own tables");
    assert!(!ta.iter().any(|(_, x)| Path::new(x) == f1), "child 0 holds child 1's file: {ta:?}");
    assert!(!tb.iter().any(|(_, x)| Path::new(x) == f0), "child 1 holds child 0's file: {tb:?}");
}
