//! Bonnie++'s six file tests in the directory `Bonnie.<pid>` (with
//! subdirectories `00000`, `00001`, ... when `-n` asks for several; file i
//! goes to subdirectory i × dirs / count, so each holds an even share):
//!
//! - sequential create: names are the index as 10 lowercase hex digits
//!   followed by 0-12 random letters and digits, created in index order;
//!   each file gets min + rand() mod (max − min + 1) bytes written in
//!   chunks (a hard or symbolic link to one file for max −1 / −2); sync(2)
//!   at the end, timed;
//! - sequential stat ("Read"): stat(2) every entry in readdir order, and
//!   read the file's data when it has any;
//! - sequential delete: unlink(2) in readdir order, then sync(2);
//! - random create: the random letters first, then the number, so the
//!   order looks random to the file system;
//! - random stat and delete: over the name list shuffled by one random
//!   swap per entry.
//!
//! With `-b` every create and unlink is followed by fsync(2) of the file
//! (creates) and of its directory. One operation is one file.

use super::{Ctx, Phase, Timer};
use crate::environment::cleanup::{self, Token};
use crate::model::bonnie::{FileKind, FileTests, Test};
use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::Ordering;
use std::time::Instant;

const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";

fn last_os() -> std::io::Error {
    std::io::Error::last_os_error()
}

/// A create's error, saying "inodes" when ENOSPC came from running out of
/// them rather than of blocks (the kernel says "No space left" for both).
fn create_error(what: &str, n: &CStr, top: &std::path::Path) -> String {
    let e = last_os();
    let inodes = e.raw_os_error() == Some(libc::ENOSPC) && crate::environment::space::out_of_inodes(top);
    format!("{what} {}: {e}{}", n.to_string_lossy(), if inodes { " (the file system has no free inodes left)" } else { "" })
}

/// The test directory and its subdirectories, open, and what was made.
struct Tree {
    top: std::path::PathBuf,
    /// One descriptor per directory the files go to.
    dirs: Vec<libc::c_int>,
    /// The top directory on record (`environment::cleanup`, with its
    /// identity): removed with everything in it at the end, on Ctrl-C, or
    /// by `fsbench cleanup` after a SIGKILL.
    made_top: Option<Token>,
    /// The target every link points to (max −1 / −2), relative to `top`.
    link_target: Option<CString>,
}

impl Tree {
    fn make(top: &std::path::Path, dirs: u64) -> Result<Tree, String> {
        let c = CString::new(top.as_os_str().as_bytes()).expect("no NUL in a path");
        // SAFETY: a valid C string.
        if unsafe { libc::mkdir(c.as_ptr(), 0o700) } != 0 {
            return Err(format!("cannot make {}: {}", top.display(), last_os()));
        }
        let mut t = Tree { top: top.to_path_buf(), dirs: Vec::new(), made_top: Some(cleanup::made_dir(top)), link_target: None };
        // SAFETY: a valid C string and plain flags.
        let topfd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if topfd < 0 {
            return Err(format!("cannot open {}: {}", top.display(), last_os()));
        }
        if dirs <= 1 {
            t.dirs.push(topfd);
            return Ok(t);
        }
        for d in 0..dirs {
            let name = CString::new(format!("{d:05}")).expect("digits");
            // SAFETY: topfd is an open directory; name a valid C string.
            let fd = unsafe {
                if libc::mkdirat(topfd, name.as_ptr(), 0o700) != 0 {
                    -1
                } else {
                    libc::openat(topfd, name.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC)
                }
            };
            if fd < 0 {
                let e = format!("cannot make {}/{d:05}: {}", top.display(), last_os());
                // SAFETY: our own descriptor.
                unsafe { libc::close(topfd) };
                t.remove();
                return Err(e);
            }
            t.dirs.push(fd);
        }
        // SAFETY: our own descriptor; the subdirectories keep their own.
        unsafe { libc::close(topfd) };
        Ok(t)
    }

    /// Remove whatever is left (files, links, subdirectories, the top).
    fn remove(&mut self) {
        for fd in self.dirs.drain(..) {
            // SAFETY: our own descriptor, closed once.
            unsafe { libc::close(fd) };
        }
        // Only this run's directory `Bonnie.<pid>`, which it made itself.
        if let Some(t) = self.made_top.take() {
            if let Err(e) = t.done() {
                eprintln!("fsbench bonnie: {e}");
            }
        }
    }
}

/// Also when a test panics: the tree goes with the unwinding.
impl Drop for Tree {
    fn drop(&mut self) {
        self.remove();
    }
}

/// Bonnie++'s name for file `i`, appended to `text` with its NUL: the
/// number first (sequential tests) or the random letters first (random
/// tests).
fn push_name(rand: &mut super::Rand, i: u64, number_first: bool, text: &mut Vec<u8>) {
    use std::io::Write as _;
    let letters = rand.below(13) as usize;
    if number_first {
        let _ = write!(text, "{i:010x}");
    }
    for _ in 0..letters {
        text.push(LETTERS[rand.below(LETTERS.len() as u64) as usize]);
    }
    if !number_first {
        let _ = write!(text, "{i:010x}");
    }
    text.push(0);
}

/// Every file test, pushed in order; the directory is removed afterwards
/// whatever happened.
pub(super) fn run(ctx: &mut Ctx, t: &FileTests, phases: &mut Vec<Phase>) -> Result<(), String> {
    let mut tree = Tree::make(&ctx.base, t.dirs)?;
    let r = tests(ctx, t, &mut tree, phases);
    tree.remove();
    r
}

fn tests(ctx: &mut Ctx, t: &FileTests, tree: &mut Tree, phases: &mut Vec<Phase>) -> Result<(), String> {
    if t.kind != FileKind::Files {
        // Every link points at one file in the top directory, made before
        // the clock starts.
        let target = tree.top.join("link-target");
        std::fs::write(&target, b"").map_err(|e| format!("cannot make {}: {e}", target.display()))?;
        let abs = CString::new(target.as_os_str().as_bytes()).expect("no NUL in a path");
        tree.link_target = Some(abs);
    }
    let mut data = vec![0u8; t.chunk as usize];
    for (i, b) in data.iter_mut().enumerate() {
        *b = b'a' + (i % 26) as u8;
    }
    for (number_first, create, stat, del) in
        [(true, Test::SeqCreate, Test::SeqStat, Test::SeqDel), (false, Test::RanCreate, Test::RanStat, Test::RanDel)]
    {
        if ctx.stopped() {
            return Ok(());
        }
        ctx.gate.before(create)?;
        let (phase, mut names) = create_files(ctx, t, tree, &data, number_first)?;
        phases.push(phase);
        if ctx.stopped() {
            return Ok(());
        }
        ctx.gate.before(stat)?;
        let phase = if number_first {
            in_dir_order(ctx, tree, stat, |dfd, n| stat_one(dfd, n, &mut data))?
        } else {
            listed(ctx, tree, &mut names, stat, |dfd, n| stat_one(dfd, n, &mut data))?
        };
        phases.push(phase);
        if ctx.stopped() {
            return Ok(());
        }
        ctx.gate.before(del)?;
        let fsync = ctx.plan.fsync;
        let phase = if number_first {
            in_dir_order(ctx, tree, del, |dfd, n| unlink_one(fsync, dfd, n))?
        } else {
            listed(ctx, tree, &mut names, del, |dfd, n| unlink_one(fsync, dfd, n))?
        };
        phases.push(phase);
        ctx.meter.ops.fetch_add(3 * t.count(), Ordering::Relaxed);
    }
    Ok(())
}

fn sync_all() {
    // SAFETY: sync takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

/// Every file created, in creation order: its directory's index and its
/// name, the names NUL-terminated in one buffer. About 8 bytes per file
/// plus its name, where a CString each cost about 56 (Bonnie++'s default
/// of 16 Ki files is small, but `-n 768` is 786,432 of them).
struct Names {
    text: Vec<u8>,
    /// (directory index, where the name starts in `text`).
    files: Vec<(u32, u32)>,
}

impl Names {
    fn with_capacity(count: u64) -> Names {
        // At most 10 digits, 12 letters and the NUL: never regrown (a
        // doubling would hold both copies at once). Only the pages the names
        // reach count.
        Names { text: Vec::with_capacity(count as usize * 23), files: Vec::with_capacity(count as usize) }
    }

    /// File `i`'s name, drawn (see `push_name`), in directory `dir`.
    fn push(&mut self, dir: u32, rand: &mut super::Rand, i: u64, number_first: bool) -> Result<(), String> {
        let at = u32::try_from(self.text.len()).map_err(|_| format!("-n: file {i}'s name is past the 4 GiB fsbench can hold"))?;
        self.files.push((dir, at));
        push_name(rand, i, number_first, &mut self.text);
        Ok(())
    }

    fn get(&self, k: usize) -> (usize, &CStr) {
        let (d, at) = self.files[k];
        let name = CStr::from_bytes_until_nul(&self.text[at as usize..]).expect("every name ends in a NUL");
        (d as usize, name)
    }
}

fn create_files(ctx: &mut Ctx, t: &FileTests, tree: &Tree, data: &[u8], number_first: bool) -> Result<(Phase, Names), String> {
    let count = t.count();
    let ndirs = tree.dirs.len() as u64;
    // Names and sizes are drawn before the clock starts, so the timed loop
    // allocates nothing.
    let mut names = Names::with_capacity(count);
    // Sizes only when files have data (`-n N:max:min`); by default all are empty.
    let sized = t.kind == FileKind::Files && t.max_size > 0;
    let mut sizes: Vec<u64> = Vec::with_capacity(if sized { count as usize } else { 0 });
    for i in 0..count {
        names.push((i * ndirs / count) as u32, &mut ctx.rand, i, number_first)?;
        if sized {
            sizes.push(t.min_size + ctx.rand.below(t.max_size - t.min_size + 1));
        }
    }
    let mut timer = Timer::start(if number_first { Test::SeqCreate } else { Test::RanCreate });
    let mut done = 0;
    for k in 0..names.files.len() {
        if ctx.stopped() {
            break;
        }
        let size = sizes.get(k).copied().unwrap_or(0);
        let (d, n) = names.get(k);
        let dfd = tree.dirs[d];
        let began = Instant::now();
        create_one(ctx, t, tree, dfd, n, size, data)?;
        timer.op(began, size);
        done += 1;
    }
    names.files.truncate(done);
    sync_all();
    Ok((timer.finish(done as u64), names))
}

/// One file (or link) of the create tests, with `-b`'s fsyncs.
fn create_one(ctx: &Ctx, t: &FileTests, tree: &Tree, dfd: libc::c_int, n: &CStr, size: u64, data: &[u8]) -> Result<(), String> {
    // SAFETY: dfd is an open directory; the names and buffer are ours.
    unsafe {
        match (t.kind, &tree.link_target) {
            (FileKind::HardLinks, Some(target)) => {
                if libc::linkat(libc::AT_FDCWD, target.as_ptr(), dfd, n.as_ptr(), 0) != 0 {
                    return Err(create_error("link", n, &tree.top));
                }
            }
            (FileKind::SymLinks, Some(target)) => {
                if libc::symlinkat(target.as_ptr(), dfd, n.as_ptr()) != 0 {
                    return Err(create_error("symlink", n, &tree.top));
                }
            }
            _ => {
                let fd = libc::openat(dfd, n.as_ptr(), libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC, 0o600);
                if fd < 0 {
                    return Err(create_error("create", n, &tree.top));
                }
                let mut left = size as usize;
                while left > 0 {
                    let k = left.min(data.len());
                    if libc::write(fd, data.as_ptr() as *const libc::c_void, k) != k as isize {
                        let e = format!("write {}: {}", n.to_string_lossy(), last_os());
                        libc::close(fd);
                        return Err(e);
                    }
                    left -= k;
                }
                if ctx.plan.fsync && libc::fsync(fd) != 0 {
                    let e = format!("fsync {}: {}", n.to_string_lossy(), last_os());
                    libc::close(fd);
                    return Err(e);
                }
                libc::close(fd);
            }
        }
        if ctx.plan.fsync && libc::fsync(dfd) != 0 {
            return Err(format!("fsync of the directory: {}", last_os()));
        }
    }
    Ok(())
}

/// stat one entry and read its data, if any; the bytes read.
fn stat_one(dfd: libc::c_int, n: &CStr, data: &mut [u8]) -> Result<u64, String> {
    // SAFETY: a zeroed stat is a valid out-parameter; dfd open; n a C string.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: dfd is an open directory, n a C string, st ours.
    if unsafe { libc::fstatat(dfd, n.as_ptr(), &mut st, 0) } != 0 {
        return Err(format!("stat {}: {}", n.to_string_lossy(), last_os()));
    }
    if st.st_size <= 0 || st.st_mode & libc::S_IFMT != libc::S_IFREG {
        return Ok(0);
    }
    // SAFETY: as above; the buffer is ours.
    unsafe {
        let fd = libc::openat(dfd, n.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(format!("open {}: {}", n.to_string_lossy(), last_os()));
        }
        let mut total = 0u64;
        loop {
            let r = libc::read(fd, data.as_mut_ptr() as *mut libc::c_void, data.len());
            if r < 0 {
                let e = format!("read {}: {}", n.to_string_lossy(), last_os());
                libc::close(fd);
                return Err(e);
            }
            if r == 0 {
                break;
            }
            total += r as u64;
        }
        libc::close(fd);
        Ok(total)
    }
}

/// A sequential stat or delete test: `op` on every entry of every
/// directory as readdir(3) returns it (`.`, `..` and the links' target
/// left out), as Bonnie++ does; the delete test ends with sync(2).
fn in_dir_order(
    ctx: &Ctx,
    tree: &Tree,
    test: Test,
    mut op: impl FnMut(libc::c_int, &CStr) -> Result<u64, String>,
) -> Result<Phase, String> {
    let mut timer = Timer::start(test);
    let mut n = 0;
    for &dfd in &tree.dirs {
        // SAFETY: dup of an open descriptor; fdopendir takes ownership of the dup.
        let dir = unsafe { libc::fdopendir(libc::dup(dfd)) };
        if dir.is_null() {
            return Err(format!("opendir: {}", last_os()));
        }
        let mut result = Ok(());
        // SAFETY: dir is a valid DIR* until closedir; each entry's name is
        // read before the next readdir.
        unsafe {
            libc::rewinddir(dir);
            while !ctx.stopped() {
                let e = libc::readdir(dir);
                if e.is_null() {
                    break;
                }
                let name = CStr::from_ptr((*e).d_name.as_ptr());
                let b = name.to_bytes();
                if b == b"." || b == b".." || b == b"link-target" {
                    continue;
                }
                let began = Instant::now();
                match op(dfd, name) {
                    Ok(bytes) => timer.op(began, bytes),
                    Err(e) => {
                        result = Err(e);
                        break;
                    }
                }
                n += 1;
            }
            libc::closedir(dir);
        }
        result?;
    }
    if test == Test::SeqDel {
        sync_all();
    }
    Ok(timer.finish(n))
}

/// A random stat or delete test: `op` on the names created, shuffled first.
fn listed(
    ctx: &mut Ctx,
    tree: &Tree,
    names: &mut Names,
    test: Test,
    mut op: impl FnMut(libc::c_int, &CStr) -> Result<u64, String>,
) -> Result<Phase, String> {
    shuffle(&mut ctx.rand, names);
    let mut timer = Timer::start(test);
    let mut n = 0;
    for k in 0..names.files.len() {
        if ctx.stopped() {
            break;
        }
        let (d, name) = names.get(k);
        let began = Instant::now();
        let bytes = op(tree.dirs[d], name)?;
        timer.op(began, bytes);
        n += 1;
    }
    if test == Test::RanDel {
        sync_all();
    }
    Ok(timer.finish(n))
}

fn unlink_one(fsync: bool, dfd: libc::c_int, n: &CStr) -> Result<u64, String> {
    // SAFETY: dfd open; n a C string.
    unsafe {
        if libc::unlinkat(dfd, n.as_ptr(), 0) != 0 {
            return Err(format!("unlink {}: {}", n.to_string_lossy(), last_os()));
        }
        if fsync && libc::fsync(dfd) != 0 {
            return Err(format!("fsync of the directory: {}", last_os()));
        }
    }
    Ok(0)
}

/// One random swap per entry, as Bonnie++ shuffles before each random test.
fn shuffle(rand: &mut super::Rand, names: &mut Names) {
    let n = names.files.len() as u64;
    for i in 0..names.files.len() {
        let j = rand.below(n) as usize;
        names.files.swap(i, j);
    }
}

/// A name as a string, for tests of the naming rule.
#[cfg(test)]
pub(super) fn name_for_test(rand: &mut super::Rand, i: u64, number_first: bool) -> String {
    let mut text = Vec::new();
    push_name(rand, i, number_first, &mut text);
    assert_eq!(text.pop(), Some(0), "NUL-terminated");
    String::from_utf8(text).expect("ASCII")
}

/// The table of names as the create test builds it, each name read back
/// through it after a shuffle, for tests.
#[cfg(test)]
pub(super) fn names_round_trip_for_test(rand: &mut super::Rand, count: u64, number_first: bool) -> Vec<(usize, String)> {
    let mut names = Names::with_capacity(count);
    for i in 0..count {
        names.push((i % 7) as u32, rand, i, number_first).expect("small");
    }
    shuffle(rand, &mut names);
    (0..names.files.len()).map(|k| names.get(k)).map(|(d, n)| (d, n.to_str().expect("ASCII").to_string())).collect()
}
