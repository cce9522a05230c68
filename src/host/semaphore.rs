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

/// Arrive at test `n` and wait until every copy has.
pub fn arrive_and_wait(id: i32, n: u16) -> Result<(), String> {
    let mut take = libc::sembuf { sem_num: n, sem_op: -1, sem_flg: libc::IPC_NOWAIT as i16 };
    // SAFETY: one valid sembuf.
    if unsafe { libc::semop(id, &mut take, 1) } < 0 {
        return Err(os_error("semop (more copies than -p made the set for?)"));
    }
    let mut wait = libc::sembuf { sem_num: n, sem_op: 0, sem_flg: libc::SEM_UNDO as i16 };
    loop {
        // SAFETY: one valid sembuf.
        if unsafe { libc::semop(id, &mut wait, 1) } == 0 {
            return Ok(());
        }
        if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return Err(os_error("semop wait"));
        }
    }
}
