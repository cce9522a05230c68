//! `fsbench bonnie` stopped while it waits on Bonnie++'s semaphore set
//! (`-y s`): SIGTERM ends it promptly, and a second signal (which undoes
//! at once and exits) leaves no `Bonnie.<pid>` behind (issue 31, item 6).
//!
//! The set (key 4711) is made with `-p 1`, then the test raises the rewrite
//! test's semaphore to 2: one copy passes the block write (so its file
//! exists) and waits at the rewrite for a copy that never comes.

mod common;
use common::killed::*;
use common::*;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const KEY: libc::key_t = 4711;
const REWRITE: i32 = 2;

/// The semaphore set for the test's lifetime (removed when dropped).
struct Set(i32);

impl Set {
    fn make() -> Set {
        let o = fsbench().args(["bonnie", "-u", "root", "-p", "1"]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // SAFETY: semget and semctl take plain integers.
        let id = unsafe { libc::semget(KEY, 12, 0o666) };
        assert!(id >= 0);
        // SAFETY: SETVAL takes the value as the variadic int.
        assert_eq!(unsafe { libc::semctl(id, REWRITE, libc::SETVAL, 2) }, 0);
        Set(id)
    }

    /// Copies waiting for the rewrite test's semaphore to reach zero.
    fn waiting(&self) -> i32 {
        // SAFETY: GETZCNT takes no further argument.
        unsafe { libc::semctl(self.0, REWRITE, libc::GETZCNT) }
    }
}

impl Drop for Set {
    fn drop(&mut self) {
        let _ = fsbench().args(["bonnie", "-u", "root", "-p", "-1"]).output();
    }
}

fn waiting_copy(dir: &std::path::Path, state: &std::path::Path) -> Child {
    Command::new(bin())
        .env("FSBENCH_STATE_DIR", state)
        .args(["bonnie", "-d", dir.to_str().unwrap()])
        .args("-s 16 -r 8 -f -n 0 -u root -y s -q --no-progress".split(' '))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: kill takes plain integers; `child` has not been reaped.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// The exit status within `secs`, or None (then the child is killed).
fn ends_within(child: &mut Child, secs: u64) -> Option<std::process::ExitStatus> {
    let t = Instant::now();
    while t.elapsed() < Duration::from_secs(secs) {
        if let Some(s) = child.try_wait().unwrap() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    kill(child);
    None
}

/// The set is one for the machine: one test at a time uses it.
static SET: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A copy that waits at the rewrite test gets `signals`: it must end within
/// 10 s with 130, and leave neither its file nor a record.
fn stop_waiting_copy(signals: &[libc::c_int]) -> Result<(), String> {
    if !is_root() {
        skip("needs root: Bonnie++ runs as root only with -u, and the test uses -u root");
        return Ok(());
    }
    let _one = SET.lock().unwrap_or_else(|e| e.into_inner());
    let state = tempfile::tempdir().unwrap();
    let set = Set::make();
    let dir = tempfile::tempdir_in("/dev/shm").or_else(|_| tempfile::tempdir()).unwrap();
    let mut child = waiting_copy(dir.path(), state.path());
    wait_until(&mut child, 60, "the copy waiting at the rewrite test", || set.waiting() == 1);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1, "Bonnie.<pid> exists while it waits");
    // Signals do not queue: each after the last was seen ("stopping ...").
    let said = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let mut err = child.stderr.take().unwrap();
    let sink = said.clone();
    std::thread::spawn(move || {
        let mut buf = [0u8; 256];
        while let Ok(n @ 1..) = std::io::Read::read(&mut err, &mut buf) {
            sink.lock().unwrap().push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    for (i, &s) in signals.iter().enumerate() {
        let seen = || said.lock().unwrap().matches("stopping").count();
        let t = Instant::now();
        while seen() < i && t.elapsed() < Duration::from_secs(10) && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(20));
        }
        signal(&child, s);
    }
    let status = ends_within(&mut child, 10).ok_or("still waiting 10 s later")?;
    if status.code() != Some(130) {
        return Err(format!("ended with {status}"));
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    if !left.is_empty() {
        return Err(format!("left {left:?}"));
    }
    if !records(state.path()).is_empty() {
        return Err(format!("left records {:?}", records(state.path())));
    }
    Ok(())
}

#[test]
fn a_copy_waiting_on_the_semaphore_stops_promptly_on_sigterm() {
    stop_waiting_copy(&[libc::SIGTERM]).unwrap();
}

#[test]
fn a_second_signal_while_waiting_leaves_no_bonnie_file() {
    stop_waiting_copy(&[libc::SIGINT, libc::SIGINT]).unwrap();
}
