//! e4defrag: each write I/O moves the blocks under its range into a donor
//! file's blocks with EXT4_IOC_MOVE_EXT, the online defragmenter's ioctl —
//! fio's `e4defrag` engine. Options: `donorname` (required; the donor lives
//! in the job's directory, the frontend joins the two) and `inplace` (0:
//! the donor is fallocated once over the whole region; 1: each I/O
//! fallocates the donor's range before the move and truncates the donor to
//! 0 after it). The ioctl exists only on ext4: elsewhere every I/O fails
//! (ENOTTY or EOPNOTSUPP), reported as the job's error as fio reports it.
//! A donor this engine created is removed when it is dropped; fio leaves it.

use super::*;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// `struct move_extent` from the ext4 headers.
#[repr(C)]
#[derive(Default)]
struct MoveExtent {
    reserved: u32,
    donor_fd: u32,
    orig_start: u64,
    donor_start: u64,
    len: u64,
    moved_len: u64,
}

const _: () = assert!(std::mem::size_of::<MoveExtent>() == 40);

/// `_IOWR('f', 15, struct move_extent)`.
const EXT4_IOC_MOVE_EXT: libc::c_ulong = 0xC028_660F;

pub struct E4defrag {
    fds: Vec<RawFd>,
    donor: PathBuf,
    donor_fd: RawFd,
    created: bool,
    inplace: bool,
    /// The donor's block size (st_blksize), the ioctl's unit.
    bsz: u64,
}

pub const IMPL: EngineImpl = EngineImpl { name: "e4defrag", make };

fn make(cfg: &EngineConfig) -> io::Result<Box<dyn IoEngine>> {
    let Some(name) = &cfg.options.donorname else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "e4defrag needs donorname=FILE"));
    };
    Ok(Box::new(E4defrag {
        fds: Vec::new(),
        donor: PathBuf::from(name),
        donor_fd: -1,
        created: false,
        inplace: cfg.options.inplace,
        bsz: 4096,
    }))
}

fn os_err(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

impl IoEngine for E4defrag {
    fn setup(&mut self, files: &[EngineFile], _bufs: &[EngineBuf]) -> io::Result<()> {
        self.fds = files.iter().map(|f| f.fd).collect();
        let shown = self.donor.display().to_string();
        let c = CString::new(self.donor.as_os_str().as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "donorname contains a NUL byte"))?;
        let existed = self.donor.exists();
        // SAFETY: `c` is a NUL-terminated path that outlives the call.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0o644) };
        if fd < 0 {
            return Err(os_err(&format!("donor file {shown}")));
        }
        self.donor_fd = fd;
        self.created = !existed;
        // SAFETY: libc::stat is plain integers, for which all-zero bytes is a valid value.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `st` is a live stat that fstat writes into; `fd` was just opened.
        if unsafe { libc::fstat(fd, &mut st) } < 0 {
            return Err(os_err(&format!("fstat donor {shown}")));
        }
        self.bsz = (st.st_blksize as u64).max(1);
        if !self.inplace {
            let len = files.iter().map(|f| f.size).max().unwrap_or(0);
            // SAFETY: fallocate on our own donor descriptor with integers.
            if len > 0 && unsafe { libc::fallocate(fd, 0, 0, len as libc::off_t) } < 0 {
                return Err(os_err(&format!("fallocate of {len} bytes of donor {shown}")));
            }
        }
        Ok(())
    }

    #[inline]
    fn queue(&mut self, io: &IoUnit) -> io::Result<Queued> {
        let fd = self.fds[io.file as usize];
        match io.op {
            IoOp::Write => {}
            IoOp::Read | IoOp::Trim => return Ok(Queued::Done(-(libc::EINVAL as i64))),
            op => return Ok(Queued::Done(do_sync(fd, op))),
        }
        let len = io.len as u64;
        if self.inplace {
            // SAFETY: fallocate on our own donor descriptor with integers.
            if unsafe { libc::fallocate(self.donor_fd, 0, io.offset as libc::off_t, len as libc::off_t) } < 0 {
                return Ok(Queued::Done(syscall_result(-1)));
            }
        }
        let first = io.offset / self.bsz;
        let mut me = MoveExtent {
            donor_fd: self.donor_fd as u32,
            orig_start: first,
            donor_start: first,
            len: (io.offset + len).div_ceil(self.bsz) - first,
            ..MoveExtent::default()
        };
        // SAFETY: the ioctl reads and writes `me`, a live struct of the layout the kernel expects; `fd` is one of the
        // files given to setup.
        let r = unsafe { libc::ioctl(fd, EXT4_IOC_MOVE_EXT, &mut me as *mut MoveExtent) };
        let mut res = if r < 0 {
            syscall_result(-1)
        } else {
            match (me.moved_len * self.bsz).min(len) {
                // Nothing moved: the range lies beyond the end of the file (fio says EINVAL too).
                0 => -(libc::EINVAL as i64),
                moved => moved as i64,
            }
        };
        if self.inplace {
            // SAFETY: ftruncate on our own donor descriptor.
            if unsafe { libc::ftruncate(self.donor_fd, 0) } < 0 && res >= 0 {
                res = syscall_result(-1);
            }
        }
        Ok(Queued::Done(res))
    }
}

impl Drop for E4defrag {
    fn drop(&mut self) {
        if self.donor_fd >= 0 {
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(self.donor_fd) };
            if self.created {
                let _ = std::fs::remove_file(&self.donor);
            }
        }
    }
}
