//! Descriptor slots and the namespace flowops: picking files, implicit
//! opens, create/open/close/delete/stat/fsync, leaf directories and listdir.

use super::fileset::{Fileset, Start, BUSY, EXISTS, REF};
use super::program::{Node, FDS};
use super::thread::{errno, show, FdSlot, LastFile, Outcome, Worker, EMPTY, NONE, NO_FILE};
use crate::model::flow::FlowopKind;
use std::os::raw::c_char;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl Worker<'_, '_> {
    // ---- files and descriptors -------------------------------------------

    pub(super) fn fatal(&self, node: &Node, what: &str, err: std::io::Error) -> Outcome {
        let path = show(&self.path);
        let hint = if err.raw_os_error() == Some(libc::EINVAL) && node.spec.directio {
            " (the file system may not support O_DIRECT; drop directio)"
        } else {
            ""
        };
        Outcome::Fatal(format!("flowop {} '{}': {what} {path}: {err}{hint}", node.kind.wml_name(), node.spec.name))
    }

    /// An error on the file in descriptor slot `i`, naming that file.
    pub(super) fn slot_fatal(&mut self, node: &Node, i: usize, what: &str, err: std::io::Error) -> Outcome {
        let s = self.fds[i];
        self.path.clear();
        if s.entry != NONE {
            self.sh.filesets[s.fileset as usize].file_path(s.entry as usize, &mut self.path);
        }
        self.fatal(node, what, err)
    }

    pub(super) fn misuse(&self, node: &Node, what: &str) -> Outcome {
        Outcome::Fatal(format!("flowop {} '{}': {what}", node.kind.wml_name(), node.spec.name))
    }

    pub(super) fn open_flags(fs: &Fileset, node: &Node) -> i32 {
        let mut f = if fs.readonly {
            libc::O_RDONLY
        } else if fs.writeonly {
            libc::O_WRONLY
        } else {
            libc::O_RDWR
        };
        f |= libc::O_CLOEXEC;
        if node.spec.directio {
            f |= libc::O_DIRECT;
        }
        if node.spec.dsync {
            f |= libc::O_SYNC;
        }
        f
    }

    pub(super) fn after_open(fd: i32, node: &Node) {
        if node.spec.noreadahead {
            // SAFETY: advice on an open descriptor.
            unsafe { libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_RANDOM) };
        }
    }

    /// Where the node's pick starts: with `indexed=` at the variable's
    /// value; an open with `opennext` from the thread's own rotor of that
    /// fileset; else from the fileset's shared rotor.
    #[inline]
    pub(super) fn start(&mut self, node: &Node, open: bool) -> Start<'_> {
        if let Some(n) = node.spec.indexed {
            return Start::At(self.value(n));
        }
        match node.fileset {
            Some(f) if open && node.spec.opennext => Start::Own(&mut self.own_rotors[f]),
            _ => Start::Rotor,
        }
    }

    /// The descriptor slot of a flowop: its `fd`, or with `opennext` the next
    /// slot of a per-thread rotor running down from the top of the table,
    /// one slot per file of the fileset (at most half the table).
    pub(super) fn fd_index(&mut self, node: &Node) -> usize {
        let fd = node.spec.fd as usize;
        if fd > 0 || !node.spec.opennext {
            return fd;
        }
        let entries = node.fileset.map(|f| self.sh.filesets[f].len()).unwrap_or(1).clamp(1, FDS / 2);
        if self.fd_rotor == 0 || FDS - self.fd_rotor >= entries {
            self.fd_rotor = FDS;
        }
        self.fd_rotor -= 1;
        self.fd_rotor
    }

    pub(super) fn close_slot(&mut self, i: usize) {
        let s = self.fds[i];
        // SAFETY: the descriptor is ours and closed once.
        unsafe { libc::close(s.fd) };
        if s.entry != NONE {
            self.sh.filesets[s.fileset as usize].release(s.entry as usize);
        }
        self.fds[i] = EMPTY;
    }

    /// Open an existing file of the node's fileset into slot `i`.
    pub(super) fn open_existing(&mut self, node: &Node, i: usize, timed: bool) -> Result<(), Outcome> {
        let Some(fsx) = node.fileset else {
            return Err(self.misuse(node, &format!("fd {i} is not open and no fileset is named")));
        };
        let sh = self.sh;
        let fs = &sh.filesets[fsx];
        let Some(e) = fs.take_existing(self.start(node, true)) else { return Err(Outcome::NoFile) };
        fs.file_path(e, &mut self.path);
        let flags = Self::open_flags(fs, node);
        let t0 = Instant::now();
        // SAFETY: path is NUL-terminated.
        let fd = unsafe { libc::open(self.path.as_ptr() as *const c_char, flags, 0o644) };
        if fd < 0 {
            let err = errno();
            fs.release(e);
            return Err(self.fatal(node, "cannot open", err));
        }
        if timed {
            self.record(node, t0, 0);
        }
        Self::after_open(fd, node);
        self.fds[i] = FdSlot { fd, fileset: fsx as u32, entry: e as u32, deleted: false };
        self.last[i] = LastFile { fileset: fsx as u32, entry: e as u32 };
        Ok(())
    }

    /// The slot an I/O flowop works on, opening a file there first when it
    /// is empty (untimed; Filebench never closes such a file either).
    #[inline]
    pub(super) fn file_for(&mut self, node: &Node) -> Result<usize, Outcome> {
        let i = self.fd_index(node);
        if self.fds[i].fd < 0 {
            self.open_existing(node, i, false)?;
        }
        Ok(i)
    }

    /// Drawn size of the file in slot `i` (0 when unknown).
    #[inline]
    pub(super) fn size_of(&self, i: usize) -> u64 {
        let s = self.fds[i];
        if s.fd < 0 || s.entry == NONE {
            return 0;
        }
        self.sh.filesets[s.fileset as usize].size(s.entry as usize)
    }

    pub(super) fn iosize(&mut self, node: &Node) -> Result<u64, Outcome> {
        match self.value(node.spec.iosize) {
            0 => Err(self.misuse(node, "iosize came out as 0")),
            n => Ok(n),
        }
    }

    /// A uniform offset aligned to `n` with the I/O inside [0, wss).
    #[inline]
    pub(super) fn offset(&mut self, wss: u64, n: u64) -> u64 {
        if wss <= n || n == 0 {
            0
        } else {
            self.rng.below((wss - n) / n + 1) * n
        }
    }

    pub(super) fn wss(&mut self, node: &Node, i: usize) -> u64 {
        match self.value(node.spec.workingset) {
            0 => self.size_of(i),
            w => w,
        }
    }

    /// Where write data comes from: a random page-aligned offset inside the
    /// thread's `memsize` of the shared buffer (as Filebench picks a random
    /// offset in its per-thread buffer), and the longest chunk from there.
    #[inline]
    pub(super) fn src(&mut self, n: u64) -> (*const u8, usize) {
        let src = &self.sh.src;
        let mem = self.def.spec.memsize.min(src.len() as u64);
        let off = if mem > n && n > 0 { self.rng.below((mem - n) / 4096 + 1) * 4096 } else { 0 };
        // SAFETY: off < src.len().
        (unsafe { src.ptr().add(off as usize) }, src.len() - off as usize)
    }

    /// write() or pwrite() of `n` bytes in chunks the source buffer holds.
    #[inline]
    pub(super) fn write_n(fd: i32, src: (*const u8, usize), n: u64, at: Option<u64>) -> Result<u64, std::io::Error> {
        let mut done = 0u64;
        while done < n {
            let c = ((n - done) as usize).min(src.1);
            // SAFETY: src.0 has src.1 readable bytes.
            let r = unsafe {
                match at {
                    Some(off) => libc::pwrite(fd, src.0 as *const libc::c_void, c, (off + done) as libc::off_t),
                    None => libc::write(fd, src.0 as *const libc::c_void, c),
                }
            };
            if r < 0 {
                let e = errno();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if r == 0 {
                return Err(std::io::Error::new(std::io::ErrorKind::WriteZero, "wrote nothing"));
            }
            done += r as u64;
        }
        Ok(done)
    }

    // ---- namespace flowops -----------------------------------------------

    /// Create parent directories of the path in `self.path` (a removed
    /// leaf directory, or a tree someone tidied); untimed.
    pub(super) fn make_parents(&self) {
        let p = self.path.strip_suffix(&[0]).unwrap_or(&self.path);
        if let Some(pos) = p.iter().rposition(|&b| b == b'/') {
            let dir = std::path::Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(&p[..pos]));
            let _ = std::fs::create_dir_all(dir);
        }
    }

    pub(super) fn create(&mut self, node: &Node) -> Result<(), Outcome> {
        let fsx = node.fileset.unwrap_or(0);
        let sh = self.sh;
        let fs = &sh.filesets[fsx];
        if fs.device {
            return Err(self.misuse(node, "createfile cannot work on a raw device"));
        }
        let slot = node.spec.fd as usize;
        // Filebench refuses to create into an open slot; closing it (untimed)
        // keeps the loop going.
        if self.fds[slot].fd >= 0 {
            self.close_slot(slot);
        }
        let Some(e) = fs.take_free(self.start(node, false)) else { return Err(Outcome::NoFile) };
        fs.file_path(e, &mut self.path);
        let flags = Self::open_flags(fs, node) | libc::O_CREAT | libc::O_TRUNC;
        let mut t0 = Instant::now();
        // SAFETY: path is NUL-terminated.
        let mut fd = unsafe { libc::open(self.path.as_ptr() as *const c_char, flags, 0o644) };
        if fd < 0 && errno().raw_os_error() == Some(libc::ENOENT) {
            self.make_parents();
            t0 = Instant::now();
            // SAFETY: as above: `self.path` is a NUL-terminated buffer alive for the call.
            fd = unsafe { libc::open(self.path.as_ptr() as *const c_char, flags, 0o644) };
        }
        if fd < 0 {
            let err = errno();
            fs.state[e].store(0, Ordering::Release);
            return Err(self.fatal(node, "cannot create", err));
        }
        self.record(node, t0, 0);
        fs.state[e].store(EXISTS | REF, Ordering::Release);
        Self::after_open(fd, node);
        self.fds[slot] = FdSlot { fd, fileset: fsx as u32, entry: e as u32, deleted: false };
        self.last[slot] = LastFile { fileset: fsx as u32, entry: e as u32 };
        Ok(())
    }

    pub(super) fn open(&mut self, node: &Node) -> Result<(), Outcome> {
        let i = self.fd_index(node);
        if self.fds[i].fd >= 0 {
            self.close_slot(i);
        }
        self.open_existing(node, i, true)
    }

    pub(super) fn close(&mut self, node: &Node) -> Result<(), Outcome> {
        let i = node.spec.fd as usize;
        let s = self.fds[i];
        if s.fd < 0 {
            return Err(self.misuse(node, &format!("fd {i} is not open")));
        }
        let t0 = Instant::now();
        // SAFETY: our descriptor, closed once.
        unsafe { libc::close(s.fd) };
        self.record(node, t0, 0);
        if s.entry != NONE {
            self.sh.filesets[s.fileset as usize].release(s.entry as usize);
        }
        self.fds[i] = EMPTY;
        Ok(())
    }

    /// Unlink the `fd` file (fd > 0: the file open there, or the one last
    /// opened there and since closed), else a rotor pick among the existing
    /// files nobody has open. Filebench picks open files too and then
    /// silently does nothing; fsbench skips them (counted as busy skips), so
    /// creates and deletes stay balanced.
    pub(super) fn delete(&mut self, node: &Node) -> Result<(), Outcome> {
        let sh = self.sh;
        let slot = node.spec.fd as usize;
        let s = self.fds[slot];
        if slot > 0 && s.fd < 0 && self.last[slot].entry != NONE {
            return self.delete_closed(node, slot);
        }
        if slot > 0 && s.fd >= 0 && s.entry != NONE && !s.deleted {
            self.last[slot] = NO_FILE;
            let fs = &sh.filesets[s.fileset as usize];
            if fs.device {
                return Err(self.misuse(node, "deletefile cannot work on a raw device"));
            }
            let st = &fs.state[s.entry as usize];
            loop {
                let cur = st.load(Ordering::Acquire);
                if cur & EXISTS == 0 {
                    return Ok(());
                }
                if cur & BUSY != 0 {
                    std::thread::yield_now();
                    continue;
                }
                if st.compare_exchange_weak(cur, (cur & !EXISTS) | BUSY, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                    break;
                }
            }
            fs.file_path(s.entry as usize, &mut self.path);
            let t0 = Instant::now();
            // SAFETY: path is NUL-terminated.
            let r = unsafe { libc::unlink(self.path.as_ptr() as *const c_char) };
            if r < 0 {
                let err = errno();
                st.fetch_and(!BUSY, Ordering::Release);
                st.fetch_or(EXISTS, Ordering::Release);
                return Err(self.fatal(node, "cannot delete", err));
            }
            self.record(node, t0, 0);
            st.fetch_and(!BUSY, Ordering::Release);
            self.fds[slot].deleted = true;
            return Ok(());
        }
        let Some(fsx) = node.fileset else {
            return Err(self.misuse(node, "no fileset named and no open fd to delete"));
        };
        let fs = &sh.filesets[fsx];
        if fs.device {
            return Err(self.misuse(node, "deletefile cannot work on a raw device"));
        }
        let mut skipped = 0;
        let picked = fs.take_deletable(self.start(node, false), &mut skipped);
        self.stats[node.slot].busy_skips += skipped;
        let Some(e) = picked else { return Err(Outcome::NoFile) };
        fs.file_path(e, &mut self.path);
        let t0 = Instant::now();
        // SAFETY: path is NUL-terminated.
        let r = unsafe { libc::unlink(self.path.as_ptr() as *const c_char) };
        if r < 0 {
            let err = errno();
            fs.state[e].store(EXISTS, Ordering::Release);
            return Err(self.fatal(node, "cannot delete", err));
        }
        self.record(node, t0, 0);
        fs.state[e].store(0, Ordering::Release);
        Ok(())
    }

    /// `deletefile fd=N` after `closefile fd=N`: the file last opened on
    /// slot N, as in Filebench (which keeps `tf_fse[fd]` across the close).
    /// The memory is used up either way. Like Filebench, nothing is deleted
    /// while another thread has the file open (a busy skip here), nor when
    /// it no longer exists (another thread deleted it).
    fn delete_closed(&mut self, node: &Node, slot: usize) -> Result<(), Outcome> {
        let last = std::mem::replace(&mut self.last[slot], NO_FILE);
        let sh = self.sh;
        let fs = &sh.filesets[last.fileset as usize];
        if fs.device {
            return Err(self.misuse(node, "deletefile cannot work on a raw device"));
        }
        let e = last.entry as usize;
        let st = &fs.state[e];
        // Only a file that exists with no descriptor and no transition on it.
        if st.compare_exchange(EXISTS, BUSY, Ordering::AcqRel, Ordering::Relaxed).is_err() {
            if st.load(Ordering::Acquire) & EXISTS != 0 {
                self.stats[node.slot].busy_skips += 1;
            }
            return Ok(());
        }
        fs.file_path(e, &mut self.path);
        let t0 = Instant::now();
        // SAFETY: path is NUL-terminated.
        let r = unsafe { libc::unlink(self.path.as_ptr() as *const c_char) };
        if r < 0 {
            let err = errno();
            st.store(EXISTS, Ordering::Release);
            return Err(self.fatal(node, "cannot delete", err));
        }
        self.record(node, t0, 0);
        st.store(0, Ordering::Release);
        Ok(())
    }

    pub(super) fn stat(&mut self, node: &Node) -> Result<(), Outcome> {
        let slot = node.spec.fd as usize;
        // SAFETY: stat buffers are plain data.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        if self.fds[slot].fd >= 0 {
            let fd = self.fds[slot].fd;
            let t0 = Instant::now();
            // SAFETY: valid descriptor and buffer.
            if unsafe { libc::fstat(fd, &mut st) } < 0 {
                return Err(self.slot_fatal(node, slot, "cannot fstat", errno()));
            }
            self.record(node, t0, 0);
            return Ok(());
        }
        let Some(fsx) = node.fileset else {
            return Err(self.misuse(node, &format!("fd {slot} is not open and no fileset is named")));
        };
        let sh = self.sh;
        let fs = &sh.filesets[fsx];
        let Some(e) = fs.take_existing(self.start(node, false)) else { return Err(Outcome::NoFile) };
        fs.file_path(e, &mut self.path);
        let t0 = Instant::now();
        // SAFETY: NUL-terminated path, valid buffer.
        let r = unsafe { libc::stat(self.path.as_ptr() as *const c_char, &mut st) };
        if r < 0 {
            let err = errno();
            fs.release(e);
            return Err(self.fatal(node, "cannot stat", err));
        }
        self.record(node, t0, 0);
        fs.release(e);
        Ok(())
    }

    pub(super) fn fsync(&mut self, node: &Node) -> Result<(), Outcome> {
        let i = node.spec.fd as usize;
        let fd = self.fds[i].fd;
        if fd < 0 {
            return Err(self.misuse(node, &format!("fd {i} is not open")));
        }
        let t0 = Instant::now();
        // SAFETY: fsync takes a descriptor (slot `i`'s, checked open above) and touches no memory of ours.
        if unsafe { libc::fsync(fd) } < 0 {
            return Err(self.slot_fatal(node, i, "fsync of", errno()));
        }
        self.record(node, t0, 0);
        Ok(())
    }

    /// fsync every descriptor of this thread on the fileset, one op each.
    pub(super) fn fsyncset(&mut self, node: &Node) -> Result<(), Outcome> {
        for i in 0..FDS {
            let s = self.fds[i];
            if s.fd < 0 || node.fileset.is_some_and(|f| f as u32 != s.fileset) {
                continue;
            }
            let t0 = Instant::now();
            // SAFETY: fsync takes a descriptor (an open slot's, checked above) and touches no memory of ours.
            if unsafe { libc::fsync(s.fd) } < 0 {
                return Err(self.slot_fatal(node, i, "fsync of", errno()));
            }
            self.record(node, t0, 0);
        }
        Ok(())
    }

    pub(super) fn leafdir(&mut self, node: &Node) -> Result<(), Outcome> {
        let make = node.kind == FlowopKind::MakeDir;
        let sh = self.sh;
        let fs = &sh.filesets[node.fileset.unwrap_or(0)];
        let Some(e) = fs.take_leaf(self.start(node, false), !make) else { return Err(Outcome::NoFile) };
        fs.leafdir_path(e, &mut self.path);
        let p = self.path.as_ptr() as *const c_char;
        let mut t0 = Instant::now();
        // SAFETY: NUL-terminated path.
        let mut r = unsafe {
            if make {
                libc::mkdir(p, 0o755)
            } else {
                libc::rmdir(p)
            }
        };
        if r < 0 && make && errno().raw_os_error() == Some(libc::ENOENT) {
            self.make_parents();
            t0 = Instant::now();
            // SAFETY: as above: `p` is a NUL-terminated path alive for the call.
            r = unsafe { libc::mkdir(p, 0o755) };
        }
        if r < 0 {
            let err = errno();
            fs.leaf_state[e].store(if make { 0 } else { EXISTS }, Ordering::Release);
            return Err(self.fatal(node, if make { "cannot create directory" } else { "cannot remove directory" }, err));
        }
        self.record(node, t0, 0);
        fs.leaf_state[e].store(if make { EXISTS } else { 0 }, Ordering::Release);
        Ok(())
    }

    /// open + getdents64 until the end + close of a directory of the tree
    /// (round robin), as one op; bytes are the directory entries read.
    pub(super) fn listdir(&mut self, node: &Node) -> Result<(), Outcome> {
        let sh = self.sh;
        let fs = &sh.filesets[node.fileset.unwrap_or(0)];
        fs.dir_path(fs.next_dir(), &mut self.path);
        self.path.push(0);
        let buf = self.rbuf.ptr() as *mut libc::c_void;
        let len = self.rbuf.len().min(64 << 10);
        let t0 = Instant::now();
        // SAFETY: NUL-terminated path.
        let fd = unsafe { libc::open(self.path.as_ptr() as *const c_char, libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(self.fatal(node, "cannot open directory", errno()));
        }
        let mut bytes = 0u64;
        loop {
            // SAFETY: buf has len bytes.
            let r = unsafe { libc::syscall(libc::SYS_getdents64, fd, buf, len) };
            if r < 0 {
                let err = errno();
                // SAFETY: `fd` was opened above by this function and is closed once, here.
                unsafe { libc::close(fd) };
                return Err(self.fatal(node, "cannot list", err));
            }
            if r == 0 {
                break;
            }
            bytes += r as u64;
        }
        // SAFETY: `fd` was opened above by this function and is closed once, here.
        unsafe { libc::close(fd) };
        self.record(node, t0, bytes);
        Ok(())
    }
}
