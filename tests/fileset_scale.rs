//! What a Filebench fileset costs per entry (issue 15: flat cost per file up
//! to 10 M files, at most 64 bytes of RSS per file), measured with a
//! counting allocator: the peak heap of building a fileset of N entries,
//! population included, at two sizes; the slope between them is the cost of
//! one more entry, whatever the fixed buffers. The population itself is
//! checked on disk: exactly the entries marked existing are files of the
//! drawn size.

use fsbench::model::flow::{Dist, FilesetSpec, FlowPlan, Num, QuitMode, RandVar, RunSpec};
use fsbench::model::job::BufferContent;
use fsbench::runner::flow::fileset::{populate, EXISTS};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;
use std::sync::atomic::Ordering;

/// Counts this thread's live heap bytes and their peak.
struct Counting;

thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn add(d: isize) {
    let now = LIVE.with(|c| {
        c.set(c.get() + d);
        c.get()
    });
    PEAK.with(|p| p.set(p.get().max(now)));
}

// SAFETY: forwards every call to the system allocator unchanged; the counts
// are const-initialised thread-locals without destructors, which need no
// allocation themselves.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        add(l.size() as isize);
        // SAFETY: the caller's layout, as GlobalAlloc requires.
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        add(l.size() as isize);
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        add(-(l.size() as isize));
        // SAFETY: `p` came from this allocator with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        // Old and new blocks may coexist while the data moves: count the
        // new one first, so the peak includes the copy.
        add(n as isize);
        // SAFETY: as for `dealloc`, and `n` is the caller's new size.
        let q = unsafe { System.realloc(p, l, n) };
        add(-(l.size() as isize));
        q
    }
}

#[global_allocator]
static A: Counting = Counting;

fn plan(dir: &Path, entries: u64, size: Num, randvars: Vec<RandVar>) -> FlowPlan {
    FlowPlan {
        name: "scale".into(),
        source: "builtin:test".into(),
        vars: Vec::new(),
        randvars,
        filesets: vec![FilesetSpec {
            name: "set".into(),
            path: dir.to_path_buf(),
            single_file: false,
            entries,
            leafdirs: 0,
            dirwidth: Num::Fixed(20),
            dirgamma: 0.0,
            dirdepthrv: None,
            size,
            prealloc_pct: 80,
            paralloc: false,
            reuse: false,
            trusttree: false,
            readonly: false,
            writeonly: false,
            cached: true,
        }],
        processes: Vec::new(),
        prelude: Vec::new(),
        run: RunSpec { duration_s: 1, duration_from: "run".into(), interval: None, warmup_s: 0 },
        mode: QuitMode::Timeout,
        eventgen_rate: None,
        lathist: false,
        seed: 1,
        content: BufferContent::default(),
    }
}

/// (peak heap bytes while populating, heap bytes the fileset keeps) for a
/// fileset of `entries`; checks the tree on disk before removing it.
fn measure(entries: u64, size: Num, randvars: Vec<RandVar>) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let p = plan(dir.path(), entries, size, randvars);
    let base = LIVE.with(|c| c.get());
    PEAK.with(|c| c.set(base));
    let mut fs = populate(&p, 0, false).unwrap();
    let peak = PEAK.with(|c| c.get()) - base;
    let kept = LIVE.with(|c| c.get()) - base;

    // Exactly the entries marked existing are on disk, each of its size.
    let mut marked = 0u64;
    for i in 0..fs.len() {
        let path = fs.file_pathbuf(i);
        if fs.state[i].load(Ordering::Relaxed) & EXISTS != 0 {
            marked += 1;
            assert_eq!(std::fs::metadata(&path).unwrap().len(), fs.size(i), "{}", path.display());
        } else {
            assert!(!path.exists(), "{} exists but is not marked", path.display());
        }
    }
    let mut on_disk = 0u64;
    let mut stack = vec![dir.path().join("set")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let t = e.file_type().unwrap();
            if t.is_dir() {
                stack.push(e.path());
            } else if e.file_name() != fsbench::runner::flow::fileset::MARKER {
                on_disk += 1;
            }
        }
    }
    assert_eq!((on_disk, marked), (fs.report.existing_at_start, fs.report.existing_at_start));
    // Binomial(entries, 0.8): within 1% for these sizes.
    let share = marked as f64 / entries as f64;
    assert!((share - 0.8).abs() < 0.01, "{marked} of {entries} preallocated");
    fs.cleanup(false).unwrap();
    (peak as f64, kept as f64)
}

fn per_entry(size: Num, randvars: Vec<RandVar>) -> (f64, f64) {
    let (small, large) = (10_000u64, 100_000u64);
    let (p1, k1) = measure(small, size, randvars.clone());
    let (p2, k2) = measure(large, size, randvars);
    let n = (large - small) as f64;
    let (peak, kept) = ((p2 - p1) / n, (k2 - k1) / n);
    eprintln!("per entry: peak {peak:.1} B, kept {kept:.1} B (peaks {p1} and {p2} B at {small} and {large} entries)");
    (peak, kept)
}

#[test]
fn a_fixed_size_entry_costs_a_few_bytes() {
    // State word (4 B), the population's to-do byte, the tree (8 B per
    // directory of ~20 entries); no per-entry path, place or size.
    let (peak, kept) = per_entry(Num::Fixed(1024), Vec::new());
    assert!(kept > 3.0 && kept <= 6.0, "kept {kept:.1} B per entry");
    assert!(peak <= 12.0, "peak {peak:.1} B per entry");
}

#[test]
fn a_drawn_size_adds_four_bytes() {
    let gamma =
        RandVar { name: "size".into(), dist: Dist::CvarGamma { mean: 1024.0, shape: 1.5 }, round: 0, min: 0.0, max: None, seed: None };
    let (peak, kept) = per_entry(Num::Random(0), vec![gamma]);
    assert!(kept > 7.0 && kept <= 10.0, "kept {kept:.1} B per entry");
    assert!(peak <= 16.0, "peak {peak:.1} B per entry");
}
