//! Page-aligned buffers from anonymous mappings. Untouched pages are never
//! resident, so a thread's 1 MiB whole-file read buffer costs only the pages
//! its reads actually fill (Filebench zeroes `memsize` per thread instead).

use std::ptr::NonNull;

pub struct MapBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a MapBuf owns its anonymous mapping alone (unmapped in Drop), and a mapping is not tied to the thread that
// made it.
unsafe impl Send for MapBuf {}
// SAFETY: through `&MapBuf` only `as_slice` and the raw `ptr()` are available; the shared source buffer is written once
// (through `&mut`) before the threads start and only read afterwards, and per-thread buffers are used by one thread.
unsafe impl Sync for MapBuf {}

impl MapBuf {
    pub fn new(len: usize) -> Result<MapBuf, String> {
        let len = len.max(4096).div_ceil(4096) * 4096;
        // SAFETY: an anonymous private mapping with no address hint.
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return Err(format!("cannot map a {len}-byte I/O buffer: {}", std::io::Error::last_os_error()));
        }
        NonNull::new(p as *mut u8).map(|ptr| MapBuf { ptr, len }).ok_or_else(|| "mmap returned null".to_string())
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never: a mapping has at least one page.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: the mapping is len bytes and exclusively borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the mapping is len bytes.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for MapBuf {
    fn drop(&mut self) {
        // SAFETY: ptr/len came from mmap and are unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr() as *mut libc::c_void, self.len) };
    }
}
