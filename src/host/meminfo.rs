//! `/proc/meminfo`: total memory and the page-cache figures.

/// The /proc/meminfo numbers fsbench looks at, in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemInfo {
    pub total: u64,
    pub cached: u64,
    pub dirty: u64,
    pub shmem: u64,
    /// File pages mapped into processes (running programs): drop_caches leaves them.
    pub mapped: u64,
    /// What the kernel estimates can be allocated without swapping.
    pub available: u64,
}

impl MemInfo {
    /// File cache that drop_caches can drop: not tmpfs/shmem pages, and not
    /// pages mapped by running programs (compilers, the benchmark itself).
    pub fn droppable(&self) -> u64 {
        self.cached.saturating_sub(self.shmem).saturating_sub(self.mapped)
    }
}

/// Parse /proc/meminfo text (kB values into bytes).
pub fn parse_meminfo(text: &str) -> MemInfo {
    let mut m = MemInfo::default();
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        let mut it = v.split_whitespace();
        let Some(n) = it.next().and_then(|n| n.parse::<u64>().ok()) else { continue };
        let n = match it.next() {
            Some("kB") | Some("KB") => n * 1024,
            Some("mB") | Some("MB") => n * 1024 * 1024,
            _ => n,
        };
        match k.trim() {
            "MemTotal" => m.total = n,
            "Cached" => m.cached = n,
            "Dirty" => m.dirty = n,
            "Shmem" => m.shmem = n,
            "Mapped" => m.mapped = n,
            "MemAvailable" => m.available = n,
            _ => {}
        }
    }
    m
}

/// /proc/meminfo now; zeros when it cannot be read.
pub fn read_meminfo() -> MemInfo {
    std::fs::read_to_string("/proc/meminfo").map(|t| parse_meminfo(&t)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_parsing() {
        let m = parse_meminfo("MemTotal: 1000 kB\nCached:  200 kB\nDirty: 3 kB\nShmem: 50 kB\nMapped: 30 kB\nSwapCached: 9 kB\n");
        assert_eq!(
            m,
            MemInfo { total: 1000 * 1024, cached: 200 * 1024, dirty: 3 * 1024, shmem: 50 * 1024, mapped: 30 * 1024, available: 0 }
        );
        assert_eq!(m.droppable(), 120 * 1024);
        assert_eq!(parse_meminfo("MemTotal:       49368168 kB\nMemFree: 1 kB\n").total, 49368168 * 1024);
        assert_eq!(parse_meminfo("MemTotal: 2 MB\n").total, 2 << 20);
        assert_eq!(parse_meminfo("garbage\nMemTotal: x kB\n"), MemInfo::default());
    }

    #[test]
    fn this_machine_has_memory() {
        assert!(read_meminfo().total > 0);
    }
}
