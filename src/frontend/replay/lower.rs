//! A trace's I/Os as a replay plan: the directions chosen, writes allowed
//! or refused, then the I/Os fitted to the target's size. One path for
//! `fsbench replay`'s flags and an experiment's keys; messages name the
//! option the way the user gave it (`Spelling`).

use super::Trace;
use crate::model::replay::{fit, BeyondEnd, ReplayPlan, Speed, TraceIo};
use std::path::PathBuf;
use std::sync::Arc;

/// What a replay does with its trace, as the flags or keys say.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    pub speed: Speed,
    /// Most I/Os in flight at once.
    pub depth: u32,
    /// None: the default engine.
    pub engine: Option<String>,
    /// The trace's writes and trims are allowed.
    pub write: bool,
    /// Only the trace's reads are replayed.
    pub reads_only: bool,
    pub beyond_end: BeyondEnd,
}

/// How the user named the options: `fsbench replay`'s flags
/// (`--reads-only`) or an experiment's keys (`reads_only`).
#[derive(Clone, Copy, Debug)]
pub enum Spelling {
    Flags,
    Keys,
}

impl Spelling {
    /// `flag` (`--beyond-end`) as this spelling writes it.
    pub fn of(self, flag: &str) -> String {
        match self {
            Spelling::Flags => flag.to_string(),
            Spelling::Keys => flag.trim_start_matches("--").replace('-', "_"),
        }
    }
}

/// A trace's I/Os chosen for a replay, before its target's size is known.
#[derive(Clone)]
pub struct Chosen {
    /// Shared: each plan of an experiment's workload clones the Arc unless
    /// fitting its target changes the I/Os.
    pub ios: Arc<Vec<TraceIo>>,
    pub engine: String,
    pub source: String,
    /// What was left out, and why.
    pub notes: Vec<String>,
}

impl std::fmt::Debug for Chosen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} I/Os of {} through {}", self.ios.len(), self.source, self.engine)
    }
}

/// The engine named, or the default; only engines that keep a queue.
pub fn engine(name: Option<&str>, sp: Spelling) -> Result<String, String> {
    match name {
        None => Ok(crate::frontend::quick::default_async_engine()),
        Some(e @ ("io_uring" | "libaio")) => Ok(e.to_string()),
        Some(e) => Err(format!("{} {e}: replay issues through io_uring or libaio (an engine that keeps a queue)", sp.of("--engine"))),
    }
}

/// The trace's I/Os the options keep; writes refused unless allowed
/// (`target` names where they would land, for the message).
pub fn choose(trace: Trace, o: &ReplayOptions, target: &str, sp: Spelling) -> Result<Chosen, String> {
    let engine = engine(o.engine.as_deref(), sp)?;
    let mut notes = trace.notes;
    let mut ios = trace.ios;
    if o.reads_only {
        let before = ios.len();
        ios.retain(|i| !i.dir.modifies());
        notes.push(format!("{}: {} writes and trims left out", sp.of("--reads-only"), before - ios.len()));
    }
    if ios.is_empty() {
        return Err(format!("{}: no I/O to replay (after the events and directions chosen)", trace.source));
    }
    let writes = ios.iter().filter(|i| i.dir.modifies()).count();
    if writes > 0 && !o.write {
        return Err(format!(
            "the trace has {writes} writes or trims, which would destroy data on {target}: pass {} to replay them, or {} to leave them out",
            sp.of("--write"),
            sp.of("--reads-only")
        ));
    }
    Ok(Chosen { ios: Arc::new(ios), engine, source: trace.source, notes })
}

/// The chosen I/Os as a plan for `target`, fitted to its `size` when it is
/// known (when not, the runner refuses an I/O past the end before any I/O).
pub fn place(c: &Chosen, o: &ReplayOptions, target: PathBuf, size: Option<u64>, sp: Spelling) -> Result<ReplayPlan, String> {
    let mut notes = c.notes.clone();
    let ios = match size {
        Some(size) if c.ios.iter().any(|io| io.offset + io.len as u64 > size) => {
            let mut ios = c.ios.as_ref().clone();
            fit(&mut ios, size, &target, o.beyond_end, &sp.of("--beyond-end"), &mut notes)?;
            Arc::new(ios)
        }
        _ => c.ios.clone(),
    };
    Ok(ReplayPlan {
        target,
        ios,
        speed: o.speed,
        depth: o.depth,
        engine: c.engine.clone(),
        source: c.source.clone(),
        write: o.write,
        surface: None,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::replay::Dir;

    fn trace() -> Trace {
        let io = |offset, dir| TraceIo { at_ns: 0, offset, len: 4096, dir };
        Trace {
            ios: vec![io(0, Dir::Read), io(8192, Dir::Write), io(1 << 20, Dir::Read)],
            source: "t".into(),
            device: None,
            notes: Vec::new(),
        }
    }

    fn opts() -> ReplayOptions {
        ReplayOptions {
            speed: Speed::Max,
            depth: 4,
            engine: Some("libaio".into()),
            write: false,
            reads_only: true,
            beyond_end: BeyondEnd::Error,
        }
    }

    #[test]
    fn writes_need_permission_and_messages_follow_the_spelling() {
        let o = ReplayOptions { reads_only: false, ..opts() };
        let flags = choose(trace(), &o, "/f", Spelling::Flags).unwrap_err();
        assert!(flags.contains("1 writes") && flags.contains("--write") && flags.contains("--reads-only"), "{flags}");
        let keys = choose(trace(), &o, "the target", Spelling::Keys).unwrap_err();
        assert!(keys.contains("pass write") && keys.contains("reads_only") && !keys.contains("--"), "{keys}");
        let c = choose(trace(), &opts(), "/f", Spelling::Keys).unwrap();
        assert_eq!(c.ios.len(), 2);
        assert!(c.notes[0].starts_with("reads_only: 1 writes"), "{:?}", c.notes);
    }

    #[test]
    fn the_ios_are_fitted_to_a_known_size_and_left_to_the_runner_otherwise() {
        let c = choose(trace(), &opts(), "/f", Spelling::Flags).unwrap();
        let e = place(&c, &opts(), "/f".into(), Some(1 << 20), Spelling::Flags).unwrap_err();
        assert!(e.contains("past the end") && e.contains("--beyond-end wrap|skip"), "{e}");
        let skip = ReplayOptions { beyond_end: BeyondEnd::Skip, ..opts() };
        let p = place(&c, &skip, "/f".into(), Some(1 << 20), Spelling::Keys).unwrap();
        assert_eq!(p.ios.len(), 1);
        assert!(p.notes.iter().any(|n| n.starts_with("beyond_end skip: 1 I/Os")), "{:?}", p.notes);
        let wrap = ReplayOptions { beyond_end: BeyondEnd::Wrap, ..opts() };
        let p = place(&c, &wrap, "/f".into(), Some(1 << 20), Spelling::Flags).unwrap();
        assert!(p.ios.iter().all(|io| io.offset + io.len as u64 <= 1 << 20 && io.offset % 512 == 0));
        let p = place(&c, &opts(), "/f".into(), None, Spelling::Flags).unwrap();
        assert!(Arc::ptr_eq(&p.ios, &c.ios), "no size: the chosen I/Os as they are");
    }
}
