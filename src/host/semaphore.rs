//! Bonnie++'s SysV semaphore set, so several copies (of fsbench or of
//! Bonnie++ itself) start each test together: `bonnie++ -p N` makes a set
//! of 12 semaphores (one per test) under key 4711, each set to N; a copy
//! run with `-y s` takes one from the test's semaphore and waits for it to
//! reach zero, that is, for the other copies.

/// Bonnie++'s key (0x1267).
pub const KEY: libc::key_t = 4711;
/// One semaphore per test.
pub const COUNT: i32 = 12;

fn os_error(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Make (or reset) the set for `copies` copies.
pub fn create(copies: u16) -> Result<(), String> {
    // SAFETY: semget takes plain values.
    let id = unsafe { libc::semget(KEY, COUNT, libc::IPC_CREAT | 0o666) };
    if id < 0 {
        return Err(os_error("semget (key 4711)"));
    }
    for n in 0..COUNT {
        // SAFETY: SETVAL takes the value as the variadic int argument.
        if unsafe { libc::semctl(id, n, libc::SETVAL, copies as libc::c_int) } < 0 {
            return Err(os_error("semctl SETVAL"));
        }
    }
    Ok(())
}

/// Remove the set.
pub fn remove() -> Result<(), String> {
    // SAFETY: semget takes plain values.
    let id = unsafe { libc::semget(KEY, 0, 0) };
    if id < 0 {
        return Err(os_error("no semaphore set with key 4711 (make it with -p N)"));
    }
    // SAFETY: IPC_RMID takes no further argument.
    if unsafe { libc::semctl(id, 0, libc::IPC_RMID) } < 0 {
        return Err(os_error("semctl IPC_RMID"));
    }
    Ok(())
}

/// The set's id, when it exists.
pub fn open() -> Result<i32, String> {
    // SAFETY: semget takes plain values.
    let id = unsafe { libc::semget(KEY, COUNT, 0o666) };
    if id < 0 {
        return Err(os_error("no semaphore set with key 4711 (make it first with -p N)"));
    }
    Ok(id)
}

extern "C" {
    // glibc's; the libc crate has no binding for it on every target.
    fn semtimedop(semid: libc::c_int, sops: *mut libc::sembuf, nsops: libc::size_t, timeout: *const libc::timespec) -> libc::c_int;
}

/// How often a waiting copy looks at its stop flag: a signal goes to
/// another thread, so the wait is never interrupted by it.
const POLL: libc::timespec = libc::timespec { tv_sec: 0, tv_nsec: 100_000_000 };

/// Arrive at test `n` and wait until every copy has, or until `stop` is
/// set (Ok(false): stopped before the others arrived).
pub fn arrive_and_wait(id: i32, n: u16, stop: &std::sync::atomic::AtomicBool) -> Result<bool, String> {
    let mut take = libc::sembuf { sem_num: n, sem_op: -1, sem_flg: libc::IPC_NOWAIT as i16 };
    // SAFETY: one valid sembuf.
    if unsafe { libc::semop(id, &mut take, 1) } < 0 {
        return Err(os_error("semop (more copies than -p made the set for?)"));
    }
    let mut wait = libc::sembuf { sem_num: n, sem_op: 0, sem_flg: libc::SEM_UNDO as i16 };
    loop {
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            return Ok(false);
        }
        // SAFETY: one valid sembuf and a valid timeout.
        if unsafe { semtimedop(id, &mut wait, 1, &POLL) } == 0 {
            return Ok(true);
        }
        if !matches!(std::io::Error::last_os_error().raw_os_error(), Some(libc::EINTR) | Some(libc::EAGAIN)) {
            return Err(os_error("semop wait"));
        }
    }
}
