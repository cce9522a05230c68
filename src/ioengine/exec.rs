//! exec: no I/O; runs `program` alongside the other jobs for the job's
//! runtime (a monitor, a load generator), as fio's exec engine does.
//!
//! The first operation starts the program; every operation after it is a
//! 50 ms check-in, paced further by the job's thinktime (50 ms, set by the
//! fio frontend), as fio does. When the job ends the engine is dropped: the program gets
//! SIGTERM, `grace_time` to exit, then SIGKILL, and is reaped, all by its
//! pid. Arguments are split on spaces (fio's rule: no quoting); `%r` and
//! `%n` were replaced by the frontend.

use super::*;
use std::fs::File;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const CHECK_IN: Duration = Duration::from_millis(50);

pub struct Exec {
    program: String,
    args: Vec<String>,
    grace: Duration,
    /// `<job>.stdout` / `<job>.stderr`, or None to send both to fsbench's
    /// stderr (fsbench's stdout is the report).
    redirect: Option<(String, String)>,
    child: Option<Child>,
}

pub const IMPL: EngineImpl = EngineImpl {
    name: "exec",
    make: |c| {
        let m = &c.options.misc;
        let program = m.program.clone().ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "program is not set"))?;
        let args = m.arguments.as_deref().unwrap_or("").split(' ').filter(|a| !a.is_empty()).map(str::to_string).collect();
        let redirect = m.std_redirect.then(|| (format!("{}.stdout", m.redirect_name), format!("{}.stderr", m.redirect_name)));
        Ok(Box::new(Exec { program, args, grace: m.grace_time, redirect, child: None }))
    },
};

impl Exec {
    fn start(&mut self) -> io::Result<()> {
        let mut cmd = Command::new(&self.program);
        cmd.args(&self.args).stdin(Stdio::null());
        match &self.redirect {
            Some((out, err)) => {
                cmd.stdout(File::create(out)?).stderr(File::create(err)?);
            }
            None => {
                let err = std::io::stderr();
                let fd = std::os::fd::AsFd::as_fd(&err).try_clone_to_owned()?;
                cmd.stdout(Stdio::from(fd)).stderr(Stdio::inherit());
            }
        }
        let child = cmd.spawn().map_err(|e| io::Error::new(e.kind(), format!("cannot run {}: {e}", self.program)))?;
        self.child = Some(child);
        Ok(())
    }
}

impl IoEngine for Exec {
    fn setup(&mut self, _files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        Ok(())
    }

    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        if self.child.is_none() {
            self.start()?;
        } else {
            // fio's check-in also pauses inside the operation, on top of
            // the thinktime: about ten operations a second, as fio counts.
            std::thread::sleep(CHECK_IN);
        }
        Ok(Queued::Done(io.len as i64))
    }
}

impl Drop for Exec {
    fn drop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        if let Ok(None) = child.try_wait() {
            // SAFETY: kill takes a pid and a signal; the pid is our own
            // child's, not yet reaped (try_wait just saw it running), so it
            // cannot name another process.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
            let deadline = Instant::now() + self.grace;
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let _ = child.kill();
        }
        let _ = child.wait();
    }
}
