//! Filesets as Filebench builds them: a directory tree of 8-digit serial
//! names under `path/name/`, files only in leaf directories, each file with a
//! size drawn once, a share of them existing at the start. At run time every
//! entry has one atomic state word, so threads pick files without a lock.
//!
//! Safety: fsbench only ever deletes a tree it created. Creating one writes a
//! marker file at its root first; an existing `path/name` without the marker
//! is refused, and the tree is removed after the run through the process-wide
//! cleanup registry (so a second Ctrl-C still removes it). The marker is
//! also the tree's lock (`environment::lock`): held for the run, so a second
//! run on the same tree is refused instead of rebuilding it under the
//! first; a marker whose run died is free and taken over.

use super::dist;
use crate::environment::cleanup::{self, Token};
use crate::environment::lock::{lock_file, Lock, LockError};
use crate::environment::safety;
use crate::environment::space::Need;
use crate::model::flow::{Dist, FilesetSpec, FlowPlan, Num, RandVar};
use crate::result::flow::FilesetReport;
use crate::runner::buffers;
use crate::runner::jobs::files::device_size;
use crate::runner::rng::Rng;
use crate::runner::RunError;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

/// Marks a tree fsbench created (and may therefore delete).
pub const MARKER: &str = ".fsbench-fileset";

/// Entry state bits: the file (or leaf directory) exists; a thread is
/// creating or deleting it; the rest counts the descriptors open on it.
pub const EXISTS: u32 = 1;
pub const BUSY: u32 = 2;
pub const REF: u32 = 4;

/// Where an entry lives: its directory and its serial number in it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Place {
    pub dir: u32,
    pub serial: u32,
}

/// The drawn shape of a fileset, before anything exists on disk.
///
/// Sized for millions of entries (issue 15: at most 64 bytes of RSS per
/// file): nothing here is per entry but the drawn sizes (none when the size
/// is fixed). Items are the files, then the leaf directories; every leaf
/// group holds a run of consecutive items, so an item's place is found from
/// the groups (8 bytes per directory) instead of being stored per item.
pub struct Layout {
    /// `(parent, serial)` per directory; index 0 is the root, parents come
    /// before their children.
    pub dirs: Vec<(u32, u32)>,
    /// `(first item, directory)` per leaf group, by first item: items
    /// `first..next first` are serials 1, 2, ... of that directory.
    groups: Vec<(u32, u32)>,
    pub entries: usize,
    pub leafdirs: usize,
    pub sizes: Sizes,
    /// Mean number of directories between the root and a file.
    pub mean_depth: f64,
}

impl Layout {
    /// Where item `t` (a file, or leaf directory `t - entries`) lives.
    #[inline]
    fn place(&self, t: usize) -> Place {
        let g = self.groups.partition_point(|&(first, _)| first as usize <= t) - 1;
        let (first, dir) = self.groups[g];
        Place { dir, serial: (t - first as usize) as u32 + 1 }
    }

    pub fn file(&self, i: usize) -> Place {
        self.place(i)
    }

    pub fn leafdir(&self, i: usize) -> Place {
        self.place(self.entries + i)
    }

    pub fn files(&self) -> impl Iterator<Item = Place> + '_ {
        (0..self.entries).map(|i| self.place(i))
    }
}

/// The drawn size of every file: one figure when the size is fixed, else
/// 4 bytes per file while every size fits (8 when one does not).
pub enum Sizes {
    Same(u64),
    Small(Box<[u32]>),
    Large(Box<[u64]>),
}

impl Sizes {
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            Sizes::Same(v) => *v,
            Sizes::Small(v) => v[i] as u64,
            Sizes::Large(v) => v[i],
        }
    }

    /// `n` sizes of `size`, drawn in order (a fixed size draws nothing).
    fn draw(n: usize, size: Num, vars: &[RandVar], rng: &mut Rng) -> Sizes {
        if let Num::Fixed(v) = size {
            return Sizes::Same(v);
        }
        let mut small: Vec<u32> = Vec::with_capacity(n);
        for k in 0..n {
            let v = dist::value(size, vars, rng);
            match u32::try_from(v) {
                Ok(x) => small.push(x),
                Err(_) => {
                    // Exact capacity: no doubling peak on the way.
                    let mut large: Vec<u64> = Vec::with_capacity(n);
                    large.extend(small.iter().map(|&x| x as u64));
                    drop(small);
                    large.push(v);
                    large.extend((k + 1..n).map(|_| dist::value(size, vars, rng)));
                    return Sizes::Large(large.into_boxed_slice());
                }
            }
        }
        Sizes::Small(small.into_boxed_slice())
    }

    fn sum(&self, n: usize) -> u64 {
        match self {
            Sizes::Same(v) => v * n as u64,
            Sizes::Small(v) => v.iter().map(|&x| x as u64).sum(),
            Sizes::Large(v) => v.iter().sum(),
        }
    }
}

fn gamma_var(mean: f64, shape: f64) -> RandVar {
    RandVar { name: "dirwidth".into(), dist: Dist::Gamma { mean, shape }, round: 0, min: 0.0, max: None, seed: None }
}

/// Lay out a fileset. The mean depth comes out as ln(entries + leafdirs) /
/// ln(dirwidth) (at least one level): leaf directories of about `dirwidth`
/// entries sit at the two depths around that value, in the proportion that
/// gives that mean, and the levels above group about `dirwidth` directories
/// each. With `dirgamma` > 0 every directory's width is drawn from a gamma
/// distribution of that shape around `dirwidth`; `dirdepthrv` sets each
/// leaf directory's depth directly. Without `dirwidth` (0) every entry gets
/// a directory of its own under the root, as in Filebench.
pub fn layout(spec: &FilesetSpec, vars: &[RandVar], rng: &mut Rng) -> Result<Layout, String> {
    if spec.single_file {
        let size = dist::value(spec.size, vars, rng);
        return Ok(Layout {
            dirs: vec![(0, 0), (0, 1)],
            groups: vec![(0, 1)],
            entries: 1,
            leafdirs: 0,
            sizes: Sizes::Same(size),
            mean_depth: 1.0,
        });
    }
    let n = spec.entries + spec.leafdirs;
    if n > u32::MAX as u64 {
        return Err(format!("fileset '{}': {n} entries are more than fsbench supports", spec.name));
    }
    let mean_w = match spec.dirwidth {
        Num::Fixed(w) => w as f64,
        Num::Random(i) => vars.get(i).map(dist::mean).unwrap_or(0.0),
    };
    // A fileset without dirwidth gets Filebench's default, 0
    // (parser_gram.y, parser_fileset_define: "Fileset has no directory
    // width"). Its populate then computes a mean depth of ln(n)/ln(0) = -0
    // and rounds depth and width up to 1 (fileset.c,
    // fileset_populate_subdir): every entry in a directory of its own under
    // the root. The frontend refuses an explicit dirwidth below 2.
    let unset = spec.dirwidth == Num::Fixed(0);
    // Also catches NaN from a broken variable.
    if !unset && (mean_w.is_nan() || mean_w < 2.0) {
        return Err(format!("fileset '{}': dirwidth must be at least 2 (it is {mean_w})", spec.name));
    }
    let gamma = (spec.dirgamma > 0.0).then(|| gamma_var(mean_w, spec.dirgamma));
    let draw_width = |rng: &mut Rng| -> u64 {
        let w = match (spec.dirwidth, &gamma) {
            (Num::Random(_), _) => dist::value(spec.dirwidth, vars, rng),
            (Num::Fixed(_), Some(g)) => dist::sample(g, rng),
            (Num::Fixed(w), None) => w,
        };
        w.max(1)
    };
    let raw = if n > 1 { (n as f64).ln() / mean_w.ln() } else { 0.0 };
    let depth = raw.max(1.0);

    // Leaf groups: (first item, items, level). Items are the files, then
    // the leaf directories.
    let mut groups: Vec<(u64, u64, u32)> = Vec::new();
    if unset {
        groups.extend((0..n).map(|i| (i, 1, 1)));
    } else if raw <= 1.0 && spec.dirdepthrv.is_none() {
        if n > 0 {
            groups.push((0, n, 1));
        }
    } else {
        let d0 = depth.floor() as u32;
        let frac = depth - d0 as f64;
        let (mut at, mut deep) = (0u64, 0u64);
        while at < n {
            let c = draw_width(rng).min(n - at);
            let level = match spec.dirdepthrv {
                Some(d) => dist::value(d, vars, rng).clamp(1, 64) as u32,
                None => {
                    // Error diffusion: the deeper level takes its share of
                    // the items so far.
                    if (deep as f64 + c as f64 * 0.5) < frac * (at + c) as f64 {
                        deep += c;
                        d0 + 1
                    } else {
                        d0
                    }
                }
            };
            groups.push((at, c, level));
            at += c;
        }
    }

    // Bottom-up: the nodes of each level grouped into parents one level up.
    struct TNode {
        first: u64,
        group: Option<usize>,
        children: Vec<usize>,
    }
    let mut nodes: Vec<TNode> = Vec::new();
    let max_level = groups.iter().map(|g| g.2).max().unwrap_or(1);
    let mut carry: Vec<usize> = Vec::new();
    let mut top: Vec<usize> = Vec::new();
    for level in (1..=max_level).rev() {
        let mut here = std::mem::take(&mut carry);
        for (gi, g) in groups.iter().enumerate().filter(|(_, g)| g.2 == level) {
            nodes.push(TNode { first: g.0, group: Some(gi), children: Vec::new() });
            here.push(nodes.len() - 1);
        }
        here.sort_by_key(|&id| nodes[id].first);
        if level == 1 {
            top = here;
            break;
        }
        let mut i = 0;
        while i < here.len() {
            let w = (draw_width(rng) as usize).min(here.len() - i);
            let first = nodes[here[i]].first;
            nodes.push(TNode { first, group: None, children: here[i..i + w].to_vec() });
            carry.push(nodes.len() - 1);
            i += w;
        }
    }

    drop(carry);
    let mut out = Layout {
        dirs: Vec::new(),
        groups: Vec::with_capacity(groups.len()),
        entries: spec.entries as usize,
        leafdirs: spec.leafdirs as usize,
        sizes: Sizes::Same(0),
        mean_depth: 0.0,
    };
    out.dirs.push((0, 0));
    // Depth-first, so parents precede children and serials follow item order.
    let mut stack: Vec<(usize, u32, u32)> = top.iter().rev().enumerate().map(|(k, &id)| (id, 0, (top.len() - k) as u32)).collect();
    while let Some((id, parent, serial)) = stack.pop() {
        out.dirs.push((parent, serial));
        let me = (out.dirs.len() - 1) as u32;
        let node = &nodes[id];
        if let Some(gi) = node.group {
            // n <= u32::MAX was checked above.
            out.groups.push((groups[gi].0 as u32, me));
        }
        let c = node.children.len();
        for (k, &child) in node.children.iter().rev().enumerate() {
            stack.push((child, me, (c - k) as u32));
        }
    }
    let (mut weighted, mut counted) = (0f64, 0u64);
    for &(first, count, level) in &groups {
        let files = spec.entries.saturating_sub(first).min(count);
        weighted += files as f64 * level as f64;
        counted += files;
    }
    out.mean_depth = if counted > 0 { weighted / counted as f64 } else { depth };
    // Depth-first order is not item order where a shallower group sits
    // between a deeper subtree's groups.
    out.groups.sort_unstable_by_key(|g| g.0);
    drop((nodes, groups, top, stack));
    out.dirs.shrink_to_fit();
    out.sizes = Sizes::draw(out.entries, spec.size, vars, rng);
    Ok(out)
}

#[repr(align(64))]
#[derive(Default)]
struct Rotor(AtomicU64);

/// Which shared round-robin pointer a pick advances. As in Filebench,
/// openfile, deletefile and statfile all advance the one rotor of existing
/// files (its `fs_file_exrotor[0]`), so in varmail the files read are the
/// ones right after the file just deleted; createfile has its own.
#[derive(Clone, Copy)]
pub enum Pick {
    Existing = 0,
    Create = 1,
    Dir = 2,
    LeafDir = 3,
}

/// Where a pick starts looking.
pub enum Start<'a> {
    /// The fileset's shared rotor for this kind of pick.
    Rotor,
    /// The thread's own rotor (openfile with `opennext`, Filebench's
    /// per-thread `fs_file_exrotor[tid]`), advanced past the pick.
    Own(&'a mut u64),
    /// `indexed=`: this entry, or the next suitable one after it; no rotor
    /// moves.
    At(u64),
}

/// A populated fileset, shared by all threads during the run.
pub struct Fileset {
    pub name: String,
    pub root: PathBuf,
    /// `define file` on a block device: I/O goes to the device itself.
    pub device: bool,
    /// The tree and every entry's place and size; paths are built from it
    /// on demand (no per-entry path strings).
    lay: Layout,
    /// Bytes of the root path, which every path starts with.
    root_bytes: Box<[u8]>,
    pub state: Box<[AtomicU32]>,
    pub leaf_state: Box<[AtomicU32]>,
    rotors: [Rotor; 4],
    pub readonly: bool,
    pub writeonly: bool,
    pub report: FilesetReport,
    /// Sum of the drawn sizes of all entries (the nominal dataset).
    pub dataset_bytes: u64,
    pub mean_depth: f64,
    /// Removes the tree fsbench created; None when the tree stays.
    token: Option<Token>,
    /// Held while the run uses the tree (on its marker).
    lock: Option<Lock>,
}

/// `/` and the serial as at least 8 digits, as Filebench's `%08u`.
#[inline]
pub fn push_serial(buf: &mut Vec<u8>, serial: u32) {
    let mut digits = [b'0'; 10];
    let mut v = serial;
    let mut i = digits.len();
    while v > 0 {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
    }
    let start = i.min(digits.len() - 8);
    buf.push(b'/');
    buf.extend_from_slice(&digits[start..]);
}

impl Fileset {
    fn new(spec: &FilesetSpec, root: PathBuf, device: bool, lay: Layout) -> Fileset {
        let atomics = |n: usize| (0..n).map(|_| AtomicU32::new(0)).collect::<Vec<_>>().into_boxed_slice();
        let dataset_bytes = lay.sizes.sum(lay.entries);
        let mean_depth = lay.mean_depth;
        Fileset {
            name: spec.name.clone(),
            root_bytes: root.as_os_str().as_bytes().into(),
            root,
            device,
            state: atomics(lay.entries),
            leaf_state: atomics(lay.leafdirs),
            lay,
            rotors: Default::default(),
            readonly: spec.readonly,
            writeonly: spec.writeonly,
            report: FilesetReport::default(),
            dataset_bytes,
            mean_depth,
            token: None,
            lock: None,
        }
    }

    pub fn dirs(&self) -> usize {
        self.lay.dirs.len()
    }

    /// Number of files (entries).
    pub fn len(&self) -> usize {
        self.lay.entries
    }

    pub fn is_empty(&self) -> bool {
        self.lay.entries == 0
    }

    /// Number of leaf directories.
    pub fn leafdirs(&self) -> usize {
        self.lay.leafdirs
    }

    /// File `i`'s drawn size.
    #[inline]
    pub fn size(&self, i: usize) -> u64 {
        self.lay.sizes.get(i)
    }

    /// Directory `d`'s path into `buf` (replacing its content), no NUL:
    /// the root, then each ancestor's serial, walked up from `d` (at most
    /// 64 levels deep plus the root's).
    #[inline]
    pub fn dir_path(&self, d: usize, buf: &mut Vec<u8>) {
        let mut chain = [0u32; 72];
        let (mut n, mut at) = (0, d);
        while at != 0 && n < chain.len() {
            let (parent, serial) = self.lay.dirs[at];
            chain[n] = serial;
            n += 1;
            at = parent as usize;
        }
        buf.clear();
        buf.extend_from_slice(&self.root_bytes);
        for &serial in chain[..n].iter().rev() {
            push_serial(buf, serial);
        }
    }

    /// File `i`'s path into `buf`, NUL-terminated for libc.
    #[inline]
    pub fn file_path(&self, i: usize, buf: &mut Vec<u8>) {
        if self.device {
            buf.clear();
            buf.extend_from_slice(self.root.as_os_str().as_bytes());
        } else {
            let p = self.lay.file(i);
            self.dir_path(p.dir as usize, buf);
            push_serial(buf, p.serial);
        }
        buf.push(0);
    }

    /// Leaf directory `i`'s path into `buf`, NUL-terminated.
    #[inline]
    pub fn leafdir_path(&self, i: usize, buf: &mut Vec<u8>) {
        let p = self.lay.leafdir(i);
        self.dir_path(p.dir as usize, buf);
        push_serial(buf, p.serial);
        buf.push(0);
    }

    /// Up to `max` files that exist now, spread evenly over the fileset
    /// (none for a fileset on a block device).
    pub fn sample_existing(&self, max: usize) -> Vec<PathBuf> {
        if self.device || max == 0 {
            return Vec::new();
        }
        // Counted, then walked: no list of every existing entry.
        let exists = |i: &usize| self.state[*i].load(Ordering::Relaxed) & EXISTS != 0;
        let count = (0..self.len()).filter(exists).count();
        let step = count.div_ceil(max).max(1);
        (0..self.len()).filter(exists).step_by(step).map(|i| self.file_pathbuf(i)).collect()
    }

    pub fn file_pathbuf(&self, i: usize) -> PathBuf {
        let mut b = Vec::new();
        self.file_path(i, &mut b);
        b.pop();
        PathBuf::from(std::ffi::OsStr::from_bytes(&b))
    }

    /// Pick an entry of `states` from `start`. A pick from a rotor that had
    /// to pass k unsuitable entries moves the rotor past them too, so picks
    /// spread over the suitable entries instead of piling onto the first
    /// one after a gap.
    #[inline]
    fn pick(
        &self,
        which: Pick,
        start: Start,
        states: &[AtomicU32],
        want: impl FnMut(u32) -> Option<u32>,
        skipped: impl FnMut(u32),
    ) -> Option<usize> {
        match start {
            Start::At(at) => scan(states, at, want, skipped).map(|(i, _)| i),
            Start::Own(rotor) => {
                let (i, k) = scan(states, *rotor, want, skipped)?;
                *rotor += 1 + k as u64;
                Some(i)
            }
            Start::Rotor => {
                let rotor = &self.rotors[which as usize].0;
                let (i, k) = scan(states, rotor.fetch_add(1, Ordering::Relaxed), want, skipped)?;
                if k > 0 {
                    rotor.fetch_add(k as u64, Ordering::Relaxed);
                }
                Some(i)
            }
        }
    }

    /// Take a reference on an existing entry that nobody is creating or
    /// deleting (open, stat).
    #[inline]
    pub fn take_existing(&self, start: Start) -> Option<usize> {
        self.pick(Pick::Existing, start, &self.state, |s| (s & EXISTS != 0 && s & BUSY == 0).then_some(s + REF), |_| {})
    }

    /// Claim an entry that does not exist (create).
    #[inline]
    pub fn take_free(&self, start: Start) -> Option<usize> {
        self.pick(Pick::Create, start, &self.state, |s| (s == 0).then_some(BUSY), |_| {})
    }

    /// Claim an existing entry nobody has open (delete); existing ones that
    /// are open or in transition are counted in `skipped`.
    #[inline]
    pub fn take_deletable(&self, start: Start, skipped: &mut u64) -> Option<usize> {
        self.pick(
            Pick::Existing,
            start,
            &self.state,
            |s| (s == EXISTS).then_some(BUSY),
            |s| {
                if s & EXISTS != 0 {
                    *skipped += 1
                }
            },
        )
    }

    /// Claim a leaf directory that exists (removedir) or not (makedir).
    #[inline]
    pub fn take_leaf(&self, start: Start, existing: bool) -> Option<usize> {
        let want = if existing { EXISTS } else { 0 };
        self.pick(Pick::LeafDir, start, &self.leaf_state, |s| (s == want).then_some(BUSY), |_| {})
    }

    /// The next directory of the tree for listdir (round robin, root last).
    #[inline]
    pub fn next_dir(&self) -> usize {
        let n = self.lay.dirs.len() as u64;
        if n <= 1 {
            return 0;
        }
        (1 + self.rotors[Pick::Dir as usize].0.fetch_add(1, Ordering::Relaxed) % (n - 1)) as usize
    }

    #[inline]
    pub fn release(&self, i: usize) {
        self.state[i].fetch_sub(REF, Ordering::Release);
    }

    /// Delete files (and the tree) fsbench created, unless kept; returns a
    /// note for stderr when something stays.
    pub fn cleanup(&mut self, keep: bool) -> Result<Option<String>, String> {
        // Released after the tree is gone (or kept): the tree is no longer
        // this run's either way.
        let _lock = self.lock.take();
        match self.token.take() {
            Some(t) if keep => {
                t.forget();
                Ok(Some(format!("kept fileset '{}' at {}", self.name, self.root.display())))
            }
            Some(t) => t.done().map(|_| None),
            None => Ok(None),
        }
    }
}

#[inline]
fn scan(
    states: &[AtomicU32],
    start: u64,
    mut want: impl FnMut(u32) -> Option<u32>,
    mut skipped: impl FnMut(u32),
) -> Option<(usize, usize)> {
    let n = states.len();
    if n == 0 {
        return None;
    }
    let s0 = (start % n as u64) as usize;
    for k in 0..n {
        let i = if s0 + k >= n { s0 + k - n } else { s0 + k };
        let mut cur = states[i].load(Ordering::Relaxed);
        loop {
            match want(cur) {
                None => {
                    skipped(cur);
                    break;
                }
                Some(new) => match states[i].compare_exchange_weak(cur, new, Ordering::AcqRel, Ordering::Relaxed) {
                    Ok(_) => return Some((i, k)),
                    Err(c) => cur = c,
                },
            }
        }
    }
    None
}

/// What preallocating every fileset will occupy: entries × mean size ×
/// prealloc%, for the free-space check before anything is written. An
/// existing tree of fsbench's own is replaced, so its blocks count as free.
pub fn space_needs(plan: &FlowPlan) -> Vec<Need> {
    plan.filesets
        .iter()
        .map(|s| {
            let mean = match s.size {
                Num::Fixed(v) => v as f64,
                Num::Random(i) => plan.randvars.get(i).map_or(0.0, dist::mean),
            };
            let bytes = s.entries as f64 * mean.max(0.0) * s.prealloc_pct.min(100) as f64 / 100.0;
            Need::replacing(&s.path.join(&s.name), bytes as u64)
        })
        .collect()
}

/// Build fileset `j` of `plan` on disk (or check the device it names).
/// Refused with `RunError::InUse` while another fsbench run holds the tree.
pub fn populate(plan: &FlowPlan, j: usize, allow_device: bool) -> Result<Fileset, RunError> {
    let spec = &plan.filesets[j];
    let t0 = Instant::now();
    let root = spec.path.join(&spec.name);
    let mut rng = Rng::new(plan.seed ^ ((j as u64) << 32));
    let lay = layout(spec, &plan.randvars, &mut rng)?;
    let who = format!("fileset '{}'", spec.name);

    if safety::is_block_device(&root) {
        if !spec.single_file {
            return Err(format!("{who}: {} is a block device; only `define file` may name one", root.display()).into());
        }
        safety::check_device_usable(&root, allow_device).map_err(|e| format!("{who}: {e}"))?;
        let dev_size = device_size(&root)?;
        if lay.sizes.get(0) > dev_size {
            return Err(format!("{who}: size {} is larger than {} ({dev_size} bytes)", lay.sizes.get(0), root.display()).into());
        }
        let mut fs = Fileset::new(spec, root, true, lay);
        fs.state[0].store(EXISTS, Ordering::Relaxed);
        fs.report = report(spec, &fs, 1, 0, 0, t0);
        return Ok(fs);
    }

    safety::check_not_new_in_dev(&root).map_err(|e| format!("{who}: {e}"))?;
    let claim = claim(spec, &root, &who)?;
    let keep_existing = claim.existed && spec.reuse;
    if claim.existed && !spec.reuse {
        if let Err(e) = cleanup::empty_tree(&root, MARKER) {
            claim.token.forget();
            return Err(format!("{who}: cannot remove the previous tree {}: {e}", root.display()).into());
        }
    }
    let mut fs = Fileset::new(spec, root, false, lay);
    fs.token = Some(claim.token);
    fs.lock = Some(claim.lock);
    let built = build_tree(plan, j, &fs, keep_existing, &mut rng);
    match built {
        Ok((existing, written)) => {
            fs.report = report(spec, &fs, existing, written, fs.dirs() as u64 - 1, t0);
            Ok(fs)
        }
        Err(e) => {
            if let Some(t) = fs.token.take() {
                let _ = t.done();
            }
            Err(format!("{who}: {e}").into())
        }
    }
}

/// A fileset's tree, locked by this run through its marker.
struct Claim {
    lock: Lock,
    /// Removes the tree after the run.
    token: Token,
    /// The tree was there before (kept by an earlier run, or left by one
    /// that died).
    existed: bool,
}

/// Create the tree's root with its marker, or take over one that carries
/// the marker and that no live run holds. An existing root without the
/// marker is not fsbench's and is refused.
fn claim(spec: &FilesetSpec, root: &Path, who: &str) -> Result<Claim, RunError> {
    if !spec.path.is_dir() {
        return Err(format!("{who}: directory {} does not exist", spec.path.display()).into());
    }
    let marker = root.join(MARKER);
    let note = format!("Created by fsbench for Filebench fileset '{}'; fsbench removes this tree after the run.", spec.name);
    let lock_marker = || {
        lock_file(&marker, root, &note).map_err(|e| match e {
            LockError::InUse(u) => RunError::InUse(format!("{who}: {u}; choose another $dir, or wait for it to finish")),
            LockError::Other(m) => RunError::Workload(format!("{who}: {m}")),
        })
    };
    let existed = match std::fs::create_dir(root) {
        Ok(()) => false,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => true,
        Err(e) => return Err(format!("{who}: cannot create {}: {e}", root.display()).into()),
    };
    if !existed {
        // Its identity is taken now: `fsbench cleanup` removes this tree,
        // and no other that later takes its name.
        let token = cleanup::made_dir(root);
        return match lock_marker() {
            Ok(lock) => Ok(Claim { lock, token, existed }),
            Err(e) => {
                let _ = token.done();
                Err(e)
            }
        };
    }
    let is_ours = std::fs::symlink_metadata(root).is_ok_and(|m| m.is_dir()) && marker.is_file();
    if !is_ours {
        return Err(format!("{who}: {} exists and was not created by fsbench; remove it or choose another $dir", root.display()).into());
    }
    // A tree that carries fsbench's marker is fsbench's to remove: it
    // stays only with --keep-files, like any other tree, so `reuse` saves
    // the population of a tree kept by an earlier run.
    let lock = lock_marker()?;
    Ok(Claim { lock, token: cleanup::made_dir(root), existed })
}

fn report(spec: &FilesetSpec, fs: &Fileset, existing: u64, written: u64, dirs: u64, t0: Instant) -> FilesetReport {
    let n = fs.len();
    FilesetReport {
        name: spec.name.clone(),
        path: fs.root.display().to_string(),
        entries: n as u64,
        existing_at_start: existing,
        leafdirs: fs.leafdirs() as u64,
        directories: dirs,
        mean_size_bytes: if n == 0 { 0.0 } else { fs.dataset_bytes as f64 / n as f64 },
        mean_depth: fs.mean_depth,
        preallocated_bytes: written,
        populate_s: t0.elapsed().as_secs_f64(),
    }
}

fn mkdir_ok(p: &Path) -> Result<(), String> {
    match std::fs::create_dir(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && p.is_dir() => Ok(()),
        Err(e) => Err(format!("cannot create directory {}: {e}", p.display())),
    }
}

fn os_path(bytes: &[u8]) -> &Path {
    Path::new(std::ffi::OsStr::from_bytes(bytes))
}

/// What one preallocated file needs: one byte per entry during population
/// (the list of files to write is not kept as indices).
const TODO_WRITE: u8 = 1;
const TODO_TRUNCATE: u8 = 2;

/// Directories, preallocated files and leaf directories; returns the
/// entries existing at the start and the bytes written.
fn build_tree(plan: &FlowPlan, j: usize, fs: &Fileset, reuse: bool, rng: &mut Rng) -> Result<(u64, u64), String> {
    let spec = &plan.filesets[j];
    let mut buf = Vec::new();
    for d in 1..fs.dirs() {
        fs.dir_path(d, &mut buf);
        mkdir_ok(os_path(&buf))?;
    }
    let pct = spec.prealloc_pct.min(100) as u64;
    // Drawn in the same order as ever: every file, then every leaf dir.
    let mut todo: Vec<u8> = vec![0; fs.len()];
    let mut existing = 0u64;
    for (i, what) in todo.iter_mut().enumerate() {
        let e = rng.below(100) < pct;
        if e {
            fs.state[i].store(EXISTS, Ordering::Relaxed);
            existing += 1;
        }
        if !reuse {
            if e {
                *what = TODO_WRITE;
            }
            continue;
        }
        if spec.trusttree {
            continue;
        }
        let p = fs.file_pathbuf(i);
        let have = std::fs::symlink_metadata(&p).ok().filter(|m| m.is_file()).map(|m| m.len());
        let size = fs.size(i);
        match (e, have) {
            (true, Some(len)) if len == size => {}
            (true, Some(len)) if len > size => *what = TODO_TRUNCATE,
            (true, _) => *what = TODO_WRITE,
            (false, Some(_)) => std::fs::remove_file(&p).map_err(|e| format!("cannot remove {}: {e}", p.display()))?,
            (false, None) => {}
        }
    }
    for i in 0..fs.leafdirs() {
        if rng.below(100) < pct {
            fs.leaf_state[i].store(EXISTS, Ordering::Relaxed);
        }
    }

    let mut content = vec![0u8; (1 << 20) + (64 << 10)];
    let mut crng = Rng::new(plan.seed ^ ((j as u64) << 32) ^ 0xC0_7E47);
    buffers::fill(&mut content, &plan.content, &mut crng);
    let workers = if spec.paralloc { (existing as usize).clamp(1, 4) } else { 1 };
    let written = AtomicU64::new(0);
    let results: Vec<Result<(), String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let (todo, content, written) = (&todo, &content, &written);
                s.spawn(move || -> Result<(), String> {
                    crate::runner::workers::note_this_thread();
                    let mut path = Vec::new();
                    for i in (w..todo.len()).step_by(workers).filter(|&i| todo[i] != 0) {
                        fs.file_path(i, &mut path);
                        path.pop();
                        let what = if todo[i] == TODO_TRUNCATE { Todo::Truncate } else { Todo::Write };
                        let n = prealloc_file(os_path(&path), fs.size(i), what, content, i, spec.cached)?;
                        written.fetch_add(n, Ordering::Relaxed);
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a preallocation thread panicked".into()))).collect()
    });
    for r in results {
        r?;
    }
    if !spec.cached && reuse {
        // Files kept as they were still need their cached pages dropped.
        for (i, &what) in todo.iter().enumerate() {
            if what == 0 && fs.state[i].load(Ordering::Relaxed) & EXISTS != 0 {
                if let Ok(f) = File::open(fs.file_pathbuf(i)) {
                    drop_cache(&f);
                }
            }
        }
    }
    drop(todo);

    for i in 0..fs.leafdirs() {
        let e = fs.leaf_state[i].load(Ordering::Relaxed) & EXISTS != 0;
        fs.leafdir_path(i, &mut buf);
        buf.pop();
        let p = os_path(&buf);
        if e {
            mkdir_ok(p)?;
        } else if reuse && p.is_dir() {
            std::fs::remove_dir(p).map_err(|err| format!("cannot remove {}: {err}", p.display()))?;
        }
    }
    Ok((existing, written.load(Ordering::Relaxed)))
}

/// What one preallocated file needs.
#[derive(Clone, Copy, PartialEq)]
enum Todo {
    Write,
    Truncate,
}

fn drop_cache(f: &File) {
    // SAFETY: plain syscalls on an open descriptor.
    unsafe {
        libc::fdatasync(f.as_raw_fd());
        libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
    }
}

/// Write (or cut) one preallocated file; returns the bytes written.
fn prealloc_file(path: &Path, size: u64, what: Todo, content: &[u8], i: usize, cached: bool) -> Result<u64, String> {
    let err = |e: std::io::Error| format!("preallocating {}: {e}", path.display());
    let f = OpenOptions::new().write(true).create(true).truncate(what == Todo::Write).open(path).map_err(err)?;
    let mut written = 0u64;
    if what == Todo::Truncate {
        f.set_len(size).map_err(err)?;
    } else {
        // Start each file elsewhere in the content so files differ.
        let chunk = 1usize << 20;
        let mut off = (i * 4096) % (content.len() - chunk);
        let mut w = &f;
        while written < size {
            let n = ((size - written) as usize).min(chunk);
            w.write_all(&content[off..off + n]).map_err(err)?;
            written += n as u64;
            off = (off + 4096) % (content.len() - chunk);
        }
    }
    if !cached {
        drop_cache(&f);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::flow::testkit::{fileset, plan_with};

    fn lay(entries: u64, width: u64, gamma: f64) -> Layout {
        let mut s = fileset("t", Path::new("/nonexistent"), entries);
        s.dirwidth = Num::Fixed(width);
        s.dirgamma = gamma;
        layout(&s, &[], &mut Rng::new(5)).unwrap()
    }

    fn depth_of(l: &Layout, p: Place) -> u32 {
        let mut d = 0;
        let mut at = p.dir;
        while at != 0 {
            d += 1;
            at = l.dirs[at as usize].0;
        }
        d
    }

    #[test]
    fn mean_depth_follows_log_rule() {
        for (n, w) in [(10_000u64, 20u64), (1000, 5)] {
            for gamma in [0.0, 1.5] {
                let l = lay(n, w, gamma);
                assert_eq!(l.files().count() as u64, n);
                let measured: f64 = l.files().map(|p| depth_of(&l, p) as f64).sum::<f64>() / n as f64;
                let want = (n as f64).ln() / (w as f64).ln();
                assert!((measured - want).abs() < want * 0.1, "n={n} w={w} g={gamma}: depth {measured} want {want}");
                assert!((l.mean_depth - measured).abs() < 1e-9);
                // Files only in leaf directories, never in the root.
                let parents: std::collections::HashSet<u32> = l.dirs.iter().skip(1).map(|d| d.0).collect();
                assert!(l.files().all(|p| p.dir != 0 && !parents.contains(&p.dir)));
                // Every (dir, serial) is unique.
                let mut seen = std::collections::HashSet::new();
                assert!(l.files().all(|p| seen.insert((p.dir, p.serial))));
            }
        }
    }

    #[test]
    fn open_delete_and_stat_share_one_rotor_and_opennext_has_its_own() {
        let spec = fileset("t", Path::new("/nonexistent"), 6);
        let l = layout(&spec, &[], &mut Rng::new(5)).unwrap();
        let fs = Fileset::new(&spec, PathBuf::from("/nonexistent"), false, l);
        for s in fs.state.iter() {
            s.store(EXISTS, Ordering::Relaxed);
        }
        let open = fs.take_existing(Start::Rotor).unwrap();
        fs.release(open);
        let mut skipped = 0;
        // Separate rotors would delete entry 0 again: Filebench's delete
        // takes the entry after the last open.
        let deleting = fs.take_deletable(Start::Rotor, &mut skipped).unwrap();
        let stat = fs.take_existing(Start::Rotor).unwrap();
        assert_eq!((open, deleting, stat), (0, 1, 2));
        // A thread's own rotor starts at 0 and passes the entry being deleted.
        let mut own = 0;
        assert_eq!(fs.take_existing(Start::Own(&mut own)), Some(0));
        assert_eq!(fs.take_existing(Start::Own(&mut own)), Some(2));
        assert_eq!(own, 3);
        // ... without moving the shared one; creates have their own.
        assert_eq!(fs.take_existing(Start::Rotor), Some(3));
        assert_eq!(fs.take_free(Start::Rotor), None);
        fs.state[1].store(0, Ordering::Relaxed);
        assert_eq!(fs.take_free(Start::Rotor), Some(1));
        assert_eq!(fs.take_existing(Start::At(1)), Some(2));
    }

    #[test]
    fn huge_width_puts_everything_in_one_directory() {
        let l = lay(1000, 1_000_000, 1.5);
        assert_eq!(l.dirs.len(), 2);
        assert!(l.files().all(|p| p.dir == 1));
        assert_eq!(l.mean_depth, 1.0);
    }

    #[test]
    fn gamma_widths_vary_around_the_mean() {
        let l = lay(20_000, 20, 1.5);
        let mut per_dir = std::collections::HashMap::new();
        for p in l.files() {
            *per_dir.entry(p.dir).or_insert(0u64) += 1;
        }
        let counts: Vec<u64> = per_dir.values().copied().collect();
        let mean = counts.iter().sum::<u64>() as f64 / counts.len() as f64;
        assert!(mean > 14.0 && mean < 26.0, "mean width {mean}");
        assert!(counts.iter().max() > Some(&40), "gamma 1.5 should give some wide directories");
    }

    #[test]
    fn names_are_eight_digits_and_single_file_path_matches_filebench() {
        let mut b = Vec::new();
        push_serial(&mut b, 7);
        assert_eq!(b, b"/00000007");
        b.clear();
        push_serial(&mut b, 123_456_789);
        assert_eq!(b, b"/123456789");
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan_with(dir.path(), 0);
        p.filesets[0].single_file = true;
        p.filesets[0].entries = 1;
        p.filesets[0].prealloc_pct = 100;
        let mut fs = populate(&p, 0, false).unwrap();
        assert_eq!(fs.file_pathbuf(0), dir.path().join("set/00000001/00000001"));
        assert!(fs.file_pathbuf(0).is_file());
        fs.cleanup(false).unwrap();
    }

    #[test]
    fn populate_preallocates_share_with_drawn_sizes_and_real_data() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan_with(dir.path(), 2000);
        p.filesets[0].prealloc_pct = 80;
        p.filesets[0].paralloc = true;
        p.filesets[0].size = Num::Random(0);
        p.randvars = vec![RandVar {
            name: "fs".into(),
            dist: Dist::CvarGamma { mean: 8192.0, shape: 1.5 },
            round: 0,
            min: 0.0,
            max: None,
            seed: None,
        }];
        let mut fs = populate(&p, 0, false).unwrap();
        let existing = fs.report.existing_at_start;
        // Binomial(2000, 0.8): sd ~ 17.9; 5 sd.
        assert!((existing as f64 - 1600.0).abs() < 90.0, "{existing}");
        let mut on_disk = 0;
        let mut total = 0;
        for i in 0..fs.len() {
            let path = fs.file_pathbuf(i);
            match std::fs::metadata(&path) {
                Ok(m) => {
                    on_disk += 1;
                    assert_eq!(m.len(), fs.size(i), "{}", path.display());
                    assert_eq!(fs.state[i].load(Ordering::Relaxed), EXISTS);
                    total += m.len();
                }
                Err(_) => assert_eq!(fs.state[i].load(Ordering::Relaxed), 0),
            }
        }
        assert_eq!(on_disk, existing);
        assert_eq!(total, fs.report.preallocated_bytes);
        let mean = fs.report.mean_size_bytes;
        assert!((mean - 8192.0).abs() < 8192.0 * 0.05, "mean size {mean}");
        let big = (0..fs.len()).find(|&i| fs.state[i].load(Ordering::Relaxed) == EXISTS && fs.size(i) > 4096).unwrap();
        let data = std::fs::read(fs.file_pathbuf(big)).unwrap();
        assert!(data.iter().filter(|&&b| b == 0).count() < data.len() / 10, "preallocated data is mostly zeros");
        // The cache check's sample: 64 existing files spread over the set.
        let sample = fs.sample_existing(64);
        assert!(sample.len() <= 64 && sample.len() >= 50, "{}", sample.len());
        assert!(sample.iter().all(|f| f.is_file()));
        let last = (0..fs.len()).filter(|&i| sample.contains(&fs.file_pathbuf(i))).max().unwrap();
        assert!(last >= fs.len() / 2, "spread over the set, not its first 64 files: last index {last}");
        assert!(dir.path().join("set").join(MARKER).is_file());
        fs.cleanup(false).unwrap();
        assert!(!dir.path().join("set").exists());
    }

    #[test]
    fn refuses_a_foreign_tree_and_cleanup_leaves_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan_with(dir.path(), 10);
        std::fs::create_dir(dir.path().join("set")).unwrap();
        std::fs::write(dir.path().join("set/precious"), b"x").unwrap();
        let e = populate(&p, 0, false).err().unwrap();
        assert!(matches!(&e, RunError::Workload(m) if m.contains("was not created by fsbench")), "{e}");
        assert!(dir.path().join("set/precious").is_file());
        std::fs::remove_dir_all(dir.path().join("set")).unwrap();

        std::fs::write(dir.path().join("beside"), b"keep me").unwrap();
        let mut fs = populate(&p, 0, false).unwrap();
        fs.cleanup(false).unwrap();
        assert!(!dir.path().join("set").exists());
        assert_eq!(std::fs::read(dir.path().join("beside")).unwrap(), b"keep me");
    }

    #[test]
    fn a_tree_in_use_is_refused_and_a_dead_runs_tree_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan_with(dir.path(), 10);
        let mut first = populate(&p, 0, false).unwrap();
        let root = dir.path().join("set");
        // A rebuild would empty the tree.
        std::fs::write(root.join("probe"), b"x").unwrap();
        let e = populate(&p, 0, false).err().unwrap();
        let RunError::InUse(m) = &e else { panic!("{e:?}") };
        assert!(m.starts_with(&format!("fileset 'set': {} is in use by fsbench pid {}", root.display(), std::process::id())), "{m}");
        assert!(root.join("probe").exists(), "the refused run touched nothing");
        first.cleanup(false).unwrap();

        // A run that died leaves its tree and marker, with nobody holding it.
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join(MARKER), "pid 1\nstart_ticks 1\n").unwrap();
        std::fs::write(root.join("stale"), b"x").unwrap();
        let mut again = populate(&p, 0, false).unwrap();
        assert!(!root.join("stale").exists(), "rebuilt, not adopted as it was");
        let marker = std::fs::read_to_string(root.join(MARKER)).unwrap();
        assert!(marker.contains(&format!("pid {}", std::process::id())), "{marker}");
        again.cleanup(false).unwrap();
        assert!(!root.exists());
    }

    #[test]
    fn reuse_keeps_matching_files_and_fixes_others() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan_with(dir.path(), 50);
        p.filesets[0].reuse = true;
        p.filesets[0].prealloc_pct = 100;
        let mut fs = populate(&p, 0, false).unwrap();
        assert_eq!(fs.report.preallocated_bytes, fs.dataset_bytes);
        let a = fs.file_pathbuf(0);
        let b = fs.file_pathbuf(1);
        let before = std::fs::metadata(&a).unwrap().modified().unwrap();
        std::fs::OpenOptions::new().write(true).open(&b).unwrap().set_len(fs.size(1) + 100).unwrap();
        assert!(fs.cleanup(true).unwrap().is_some(), "kept trees are announced");
        assert!(a.is_file());
        std::thread::sleep(std::time::Duration::from_millis(20));
        let mut fs = populate(&p, 0, false).unwrap();
        assert_eq!(std::fs::metadata(&a).unwrap().modified().unwrap(), before, "matching file rewritten");
        assert_eq!(std::fs::metadata(&b).unwrap().len(), fs.size(1));
        assert_eq!(fs.report.preallocated_bytes, 0);
        fs.cleanup(false).unwrap();
        assert!(!dir.path().join("set").exists(), "a reused tree goes unless kept");
    }

    #[test]
    fn uncached_filesets_start_cold() {
        let dir = tempfile::tempdir().unwrap();
        let mut p = plan_with(dir.path(), 4);
        p.filesets[0].prealloc_pct = 100;
        p.filesets[0].size = Num::Fixed(1 << 20);
        p.filesets[0].cached = false;
        let mut fs = populate(&p, 0, false).unwrap();
        let (resident, total) = crate::environment::cache::resident_pages(&fs.file_pathbuf(0)).unwrap();
        assert_eq!(total, 256);
        // tmpfs keeps file pages in memory whatever one advises.
        // SAFETY: libc::statfs is plain integers, for which all-zero bytes is a valid value.
        let mut sf: libc::statfs = unsafe { std::mem::zeroed() };
        let c = std::ffi::CString::new(dir.path().as_os_str().as_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path alive for the call; `sf` is a live, writable statfs that statfs fills.
        assert_eq!(unsafe { libc::statfs(c.as_ptr(), &mut sf) }, 0);
        if sf.f_type != libc::TMPFS_MAGIC {
            assert_eq!(resident, 0, "pages left in the cache after cached=false");
        }
        p.filesets[0].cached = true;
        fs.cleanup(false).unwrap();
        let mut fs = populate(&p, 0, false).unwrap();
        let (warm, _) = crate::environment::cache::resident_pages(&fs.file_pathbuf(0)).unwrap();
        assert!(warm > resident, "cached {warm} vs uncached {resident} resident pages");
        fs.cleanup(false).unwrap();
    }
}
