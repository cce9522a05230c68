//! Hand-built plans for the flow runner's tests.

use crate::model::flow::*;
use crate::model::job::BufferContent;
use crate::runner::RunOptions;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn fileset(name: &str, path: &Path, entries: u64) -> FilesetSpec {
    FilesetSpec {
        name: name.into(),
        path: path.to_path_buf(),
        single_file: false,
        entries,
        leafdirs: 0,
        dirwidth: Num::Fixed(20),
        dirgamma: 0.0,
        dirdepthrv: None,
        size: Num::Fixed(4096),
        prealloc_pct: 0,
        paralloc: false,
        reuse: false,
        trusttree: false,
        readonly: false,
        writeonly: false,
        cached: true,
    }
}

/// A plan with one fileset "set" of `entries` files under `dir` and no
/// processes yet.
pub fn plan_with(dir: &Path, entries: u64) -> FlowPlan {
    FlowPlan {
        name: "test".into(),
        source: "builtin:test".into(),
        vars: vec![("dir".into(), dir.display().to_string())],
        randvars: Vec::new(),
        filesets: vec![fileset("set", dir, entries)],
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

/// A flowop of `kind` named `name` on fileset 0 (when it takes one).
pub fn op(kind: FlowopKind, name: &str) -> FlowopSpec {
    FlowopSpec { fileset: kind.uses_fileset().then_some(0), ..FlowopSpec::new(name, kind) }
}

pub trait OpExt {
    fn fd(self, fd: u32) -> Self;
    fn io(self, n: u64) -> Self;
    fn value(self, v: u64) -> Self;
    fn target(self, t: &str) -> Self;
    fn no_fileset(self) -> Self;
}

impl OpExt for FlowopSpec {
    fn fd(mut self, fd: u32) -> Self {
        self.fd = fd;
        self
    }
    fn io(mut self, n: u64) -> Self {
        self.iosize = Num::Fixed(n);
        self
    }
    fn value(mut self, v: u64) -> Self {
        self.value = Num::Fixed(v);
        self
    }
    fn target(mut self, t: &str) -> Self {
        self.target = Some(t.into());
        self
    }
    fn no_fileset(mut self) -> Self {
        self.fileset = None;
        self
    }
}

/// One process of one thread spec with `instances` thread instances.
pub fn process(name: &str, instances: u32, flowops: Vec<FlowopSpec>) -> ProcessSpec {
    ProcessSpec {
        name: name.into(),
        instances: 1,
        nice: 0,
        threads: vec![ThreadSpec { name: format!("{name}-t"), instances, memsize: 0, useism: false, ioprio: None, flowops }],
    }
}

pub fn options() -> RunOptions {
    RunOptions {
        allow_device: false,
        allow_fill: false,
        keep_files: false,
        stop: Arc::new(AtomicBool::new(false)),
        events: Arc::new(crate::runner::events::Collect::default()),
        cache_controlled: true,
        command: vec!["test".into()],
    }
}
