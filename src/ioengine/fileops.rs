//! filecreate, filestat, filedelete, dircreate, dirstat, dirdelete: one
//! metadata operation per file and pass instead of data I/O, to measure
//! file creation, lookup and deletion.
//!
//! The six share one implementation because they differ only in the call.
//! Accounting follows fio: a file of `filesize` bytes still counts as
//! `filesize / bs` I/Os of `bs` bytes in the job's direction; the operation
//! happens on the first of them and the others are free. The runner lays
//! out the files that must exist (stat, delete) and nothing for the
//! create engines, and opens none of them (`Caps::files`).

use super::*;
use crate::model::engine_misc::StatType;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Create,
    Stat,
    Delete,
    Mkdir,
    Rmdir,
}

pub struct FileOps {
    op: Op,
    stat: StatType,
    paths: Vec<CString>,
    /// Bytes of one pass over each file, and what is left of the current one.
    pass: Vec<u64>,
    left: Vec<u64>,
}

fn make(op: Op, cfg: &EngineConfig) -> io::Result<Box<dyn IoEngine>> {
    Ok(Box::new(FileOps { op, stat: cfg.options.misc.stat_type, paths: Vec::new(), pass: Vec::new(), left: Vec::new() }))
}

pub const FILECREATE: EngineImpl = EngineImpl { name: "filecreate", make: |c| make(Op::Create, c) };
pub const FILESTAT: EngineImpl = EngineImpl { name: "filestat", make: |c| make(Op::Stat, c) };
pub const FILEDELETE: EngineImpl = EngineImpl { name: "filedelete", make: |c| make(Op::Delete, c) };
pub const DIRCREATE: EngineImpl = EngineImpl { name: "dircreate", make: |c| make(Op::Mkdir, c) };
pub const DIRSTAT: EngineImpl = EngineImpl { name: "dirstat", make: |c| make(Op::Stat, c) };
pub const DIRDELETE: EngineImpl = EngineImpl { name: "dirdelete", make: |c| make(Op::Rmdir, c) };

impl FileOps {
    /// The operation on file `f`: 0 or a negative errno.
    fn perform(&self, f: usize) -> i64 {
        let p = self.paths[f].as_ptr();
        // SAFETY: `p` is a NUL-terminated path owned by `self.paths` for the
        // whole call; the stat buffers are locals of the type each call
        // writes; the descriptor from open is closed right after.
        let r = unsafe {
            match self.op {
                Op::Create => {
                    let fd = libc::open(p, libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC, 0o600 as libc::c_uint);
                    if fd >= 0 {
                        libc::close(fd);
                    }
                    fd.min(0)
                }
                Op::Stat => match self.stat {
                    StatType::Stat => {
                        let mut st: libc::stat = std::mem::zeroed();
                        libc::stat(p, &mut st)
                    }
                    StatType::Lstat => {
                        let mut st: libc::stat = std::mem::zeroed();
                        libc::lstat(p, &mut st)
                    }
                    StatType::Statx => {
                        let mut st: libc::statx = std::mem::zeroed();
                        libc::statx(libc::AT_FDCWD, p, 0, libc::STATX_ALL, &mut st)
                    }
                },
                Op::Delete => libc::unlink(p),
                Op::Mkdir => libc::mkdir(p, 0o700),
                Op::Rmdir => libc::rmdir(p),
            }
        };
        syscall_result(r as isize)
    }
}

impl IoEngine for FileOps {
    fn setup_paths(&mut self, files: &[EnginePath]) -> io::Result<()> {
        for f in files {
            self.paths.push(CString::new(f.path.as_os_str().as_bytes()).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?);
            self.pass.push(f.bytes.max(1));
        }
        self.left = vec![0; files.len()];
        Ok(())
    }

    fn setup(&mut self, files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        if files.len() != self.paths.len() {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "the file engines work by path: setup_paths first"));
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        if !matches!(io.op, IoOp::Read | IoOp::Write) {
            return Ok(Queued::Done(0));
        }
        let f = io.file as usize;
        if self.left[f] == 0 {
            let r = self.perform(f);
            if r < 0 {
                return Ok(Queued::Done(r));
            }
            self.left[f] = self.pass[f];
        }
        self.left[f] = self.left[f].saturating_sub(io.len as u64);
        Ok(Queued::Done(io.len as i64))
    }
}
