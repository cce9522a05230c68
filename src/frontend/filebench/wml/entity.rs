//! Filesets, processes, threads and flowops built from their attributes
//! (against the final variable table), with Filebench's semantic rules
//! checked where Filebench would break silently or at run time.

use super::ast::*;
use super::attrs::{Attrs, Spec};
use super::lexer::clip;
use super::lower::{Got, Locals, Lower};
use super::{suggest, WmlError};
use crate::model::flow::*;
use crate::result::warning::{Code, Warning};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

const FILESET_ATTRS: Spec = &[
    ("name", "name"),
    ("path", "path"),
    ("entries", "entries"),
    ("leafdirs", "leafdirs"),
    ("dirwidth", "dirwidth"),
    ("dirgamma", "dirgamma"),
    ("dirdepthrv", "dirdepthrv"),
    ("size", "size"),
    ("filesize", "size"),
    ("prealloc", "prealloc"),
    ("paralloc", "paralloc"),
    ("reuse", "reuse"),
    ("trusttree", "trusttree"),
    ("readonly", "readonly"),
    ("writeonly", "writeonly"),
    ("cached", "cached"),
    ("filesizegamma", "filesizegamma"),
];

const FILE_ATTRS: Spec = &[
    ("name", "name"),
    ("path", "path"),
    ("size", "size"),
    ("filesize", "size"),
    ("prealloc", "prealloc"),
    ("paralloc", "paralloc"),
    ("reuse", "reuse"),
    ("trusttree", "trusttree"),
    ("readonly", "readonly"),
    ("writeonly", "writeonly"),
    ("cached", "cached"),
    ("filesizegamma", "filesizegamma"),
];

const PROCESS_ATTRS: Spec = &[("name", "name"), ("instances", "instances"), ("nice", "nice")];

const THREAD_ATTRS: Spec =
    &[("name", "name"), ("instances", "instances"), ("memsize", "memsize"), ("useism", "useism"), ("ioprio", "ioprio")];

const FLOWOP_ATTRS: Spec = &[
    ("name", "name"),
    ("filesetname", "filesetname"),
    ("filename", "filesetname"),
    ("fd", "fd"),
    ("srcfd", "srcfd"),
    ("opennext", "opennext"),
    ("rotatefd", "opennext"),
    ("indexed", "indexed"),
    ("iosize", "iosize"),
    ("workingset", "workingset"),
    ("wss", "workingset"),
    ("random", "random"),
    ("dsync", "dsync"),
    ("directio", "directio"),
    ("noreadahead", "noreadahead"),
    ("iters", "iters"),
    ("value", "value"),
    ("target", "target"),
    ("blocking", "blocking"),
    ("highwater", "highwater"),
];

const COMPOSITE_ATTRS: Spec = &[("name", "name"), ("iters", "iters")];
const EVENTGEN_ATTRS: Spec = &[("rate", "rate")];

/// Filebench's default filesizegamma in 1.4 (gamma shape ×1000).
const FILESIZEGAMMA_14: u64 = 1500;
/// Composite flowops may use composites at most this deep.
const MAX_COMPOSITE_DEPTH: u32 = 16;
/// Flowops after expanding composites, over all threads (Filebench: 16 384).
pub const MAX_FLOWOPS: usize = 65_536;
/// Local variables bound over all composite uses.
const MAX_LOCALS_BOUND: usize = 1 << 20;
/// Descriptor slots per thread.
const MAX_FD: u64 = 127;

/// `define flowop`: a composite flowop usable as a type.
pub struct CompositeDef<'a> {
    /// Statement index of the definition: users must come later.
    pub at: usize,
    pub line: u32,
    pub iters: Option<&'a Value>,
    /// Declared `$locals` with their default values.
    pub locals: Vec<&'a Attr>,
    pub body: &'a [Flowop],
}

/// Where a flowop is being built.
struct FlowCtx<'l> {
    /// Statement index of the definition that contains it.
    at: usize,
    locals: Option<&'l Locals>,
    /// `parent.` for composite children.
    prefix: String,
    depth: u32,
}

impl<'a> Lower<'a> {
    pub fn define_composite(&mut self, at: usize, pos: Pos, attrs: &'a [Attr], body: &'a [Flowop]) -> Result<(), WmlError> {
        let a = self.collect("define flowop", attrs, COMPOSITE_ATTRS, true)?;
        let (name, name_pos) = self.a_required(&a, "name", pos, None)?;
        if FlowopKind::from_wml(&name).is_some() {
            return Err(self.err(name_pos, format!("define flowop: '{name}' is a built-in flowop type; choose another name")));
        }
        if let Some(old) = self.composites.get(&name) {
            return Err(self.err(name_pos, format!("define flowop: '{name}' is already defined at line {}", old.line)));
        }
        if body.is_empty() {
            return Err(self.err(pos, format!("define flowop {name}: expected at least one flowop in its body")));
        }
        let iters = a
            .get("iters")
            .map(|i| i.value.as_ref().ok_or_else(|| self.err(i.pos, "attribute iters needs a value (iters=...)")))
            .transpose()?;
        let locals = a.locals.clone();
        self.composites.insert(name, CompositeDef { at, line: pos.line, iters, locals, body });
        Ok(())
    }

    pub fn fileset(&mut self, pos: Pos, file: bool, attrs: &[Attr]) -> Result<(), WmlError> {
        let entity = if file { "file" } else { "fileset" };
        let mut a = self.collect(entity, attrs, if file { FILE_ATTRS } else { FILESET_ATTRS }, false)?;
        let (name, name_pos) = self.a_required(&a, "name", pos, None)?;
        let entity = format!("{entity} {name}");
        a.entity = entity.clone();
        let (path, _) = self.a_required(&a, "path", pos, None)?;
        if let Some((_, line)) = self.fileset_index.get(&name) {
            return Err(self.err(name_pos, format!("a fileset or file named '{name}' is already defined at line {line}")));
        }
        let entries = if file { 1 } else { self.a_u64(&a, "entries", 0, None)? };
        let leafdirs = self.a_u64(&a, "leafdirs", 0, None)?;
        let dirwidth = match self.a_opt_num(&a, "dirwidth", None)? {
            Some(Num::Fixed(w)) if w < 2 && entries.saturating_add(leafdirs) > 1 => {
                let p = a.get("dirwidth").and_then(|d| d.value.as_ref()).map(|v| v.pos).unwrap_or(pos);
                return Err(self.err(p, format!("{entity}: dirwidth must be at least 2 with {entries} entries, found {w}")));
            }
            Some(w) => w,
            None if entries.saturating_add(leafdirs) > 1 => {
                // Filebench's default is 0 (parser_gram.y,
                // parser_fileset_define, which logs "Fileset has no
                // directory width"): each entry in a directory of its own
                // (see runner::flow::fileset::layout).
                let at = self.err(pos, "").to_string();
                self.warnings.push(Warning::new(
                    Code::DefaultApplied,
                    format!(
                        "{at}{entity} has no dirwidth: using Filebench's default 0, which puts each of its {} entries \
                     in a directory of its own under the fileset's root (give dirwidth=N for N entries per directory)",
                        entries.saturating_add(leafdirs)
                    ),
                ));
                Num::Fixed(0)
            }
            // Only one entry: there is no tree to shape.
            None => Num::Fixed(0),
        };
        let dirgamma = self.a_u64(&a, "dirgamma", 1500, None)? as f64 / 1000.0;
        let dirdepthrv = self.a_opt_num(&a, "dirdepthrv", None)?;
        let size = self.fileset_size(&a, &name, file)?;
        let prealloc_pct = self.prealloc(&a)?;
        let readonly = self.a_bool(&a, "readonly", false, None)?;
        let writeonly = self.a_bool(&a, "writeonly", false, None)?;
        if readonly && writeonly {
            let p = a.get("writeonly").map(|w| w.pos).unwrap_or(pos);
            return Err(self.err(p, format!("{entity}: readonly and writeonly exclude each other")));
        }
        let spec = FilesetSpec {
            name: name.clone(),
            path: PathBuf::from(path),
            single_file: file,
            entries,
            leafdirs,
            dirwidth,
            dirgamma,
            dirdepthrv,
            size,
            prealloc_pct,
            paralloc: self.a_bool(&a, "paralloc", false, None)?,
            reuse: self.a_bool(&a, "reuse", false, None)?,
            trusttree: self.a_bool(&a, "trusttree", false, None)?,
            readonly,
            writeonly,
            cached: self.a_bool(&a, "cached", true, None)?,
        };
        self.fileset_index.insert(name, (self.filesets.len(), pos.line));
        self.filesets.push(spec);
        Ok(())
    }

    /// `size`, made a gamma random variable by 1.4's `filesizegamma`
    /// (explicit, or its default 1500 in a script written in 1.4).
    fn fileset_size(&mut self, a: &Attrs, name: &str, file: bool) -> Result<Num, WmlError> {
        let size = self.a_num(a, "size", 1024, None)?;
        let (shape_k, explicit) = match a.get("filesizegamma") {
            Some(_) => (self.a_u64(a, "filesizegamma", 0, None)?, true),
            None if !file && a.get("size").is_some() && self.facts.dialect14.is_some() => (FILESIZEGAMMA_14, false),
            None => return Ok(size),
        };
        let mean = match size {
            _ if shape_k == 0 => return Ok(size),
            Num::Fixed(m) => m,
            Num::Random(_) => {
                if !explicit {
                    return Ok(size);
                }
                let p = a.get("filesizegamma").map(|f| f.pos).unwrap_or_default();
                return Err(self.err(p, format!("{}: filesizegamma needs a constant size (size is already a random variable)", a.entity)));
            }
        };
        if !explicit && !self.warned14 {
            self.warned14 = true;
            let why = self.facts.dialect14.clone().unwrap_or_default();
            self.warnings.push(Warning::new(
                Code::DefaultApplied,
                format!(
                    "Filebench 1.4 script ({why}): a fileset's size is the mean of a gamma distribution with shape 1.5 \
                 (1.4's default filesizegamma=1500), first for {name} (size={mean}); add filesizegamma=0 for fixed sizes"
                ),
            ));
        }
        self.randvars.push(RandVar {
            name: format!("{name}:filesizegamma"),
            dist: Dist::Gamma { mean: mean as f64, shape: shape_k as f64 / 1000.0 },
            round: 0,
            min: 0.0,
            max: None,
            seed: None,
        });
        Ok(Num::Random(self.randvars.len() - 1))
    }

    /// `prealloc` (bare: 100), `prealloc=P` with P a percentage.
    fn prealloc(&self, a: &Attrs) -> Result<u32, WmlError> {
        let Some(attr) = a.get("prealloc") else { return Ok(0) };
        let Some(v) = &attr.value else { return Ok(100) };
        let g = self.value(v, None)?;
        if let super::lower::Val::Bool(b) = g.val {
            return Ok(if b { 100 } else { 0 });
        }
        let p = self.u64_of("prealloc", &g, v.pos)?;
        if p > 100 {
            return Err(self.err(v.pos, format!("prealloc is a percentage: expected 0 to 100, found {p}")));
        }
        Ok(p as u32)
    }

    pub fn eventgen(&self, attrs: &[Attr]) -> Result<u64, WmlError> {
        let a = self.collect("eventgen", attrs, EVENTGEN_ATTRS, false)?;
        match a.get("rate") {
            Some(_) => self.a_u64(&a, "rate", 0, None),
            None => Err(self.err(attrs.first().map(|a| a.pos).unwrap_or_default(), "eventgen: missing required attribute rate (rate=N)")),
        }
    }

    fn instances(&self, what: &str, pos: Pos, v: u64) -> Result<u32, WmlError> {
        if v == 0 {
            return Err(self.err(pos, format!("{what}: instances must be at least 1")));
        }
        u32::try_from(v).map_err(|_| self.err(pos, format!("{what}: instances: expected at most {}, found {v}", u32::MAX)))
    }

    pub fn process(&mut self, at: usize, pos: Pos, attrs: &[Attr], threads: &[Thread]) -> Result<ProcessSpec, WmlError> {
        let a = self.collect("process", attrs, PROCESS_ATTRS, false)?;
        let (name, _) = self.a_required(&a, "name", pos, None)?;
        let entity = format!("process {name}");
        let ipos = a.get("instances").map(|i| i.pos).unwrap_or(pos);
        let instances = self.instances(&entity, ipos, self.a_u64(&a, "instances", 1, None)?)?;
        let nice = match a.get("nice") {
            None => 0,
            Some(attr) => {
                let v = attr.value.as_ref().ok_or_else(|| self.err(attr.pos, "attribute nice needs a value (nice=...)"))?;
                let g = self.value(v, None)?;
                match g.val {
                    super::lower::Val::Int(n) if (-20..=19).contains(&n) => n as i32,
                    _ => {
                        return Err(self.err(v.pos, format!("{entity}: nice: expected an integer from -20 to 19, found {}", self.found(&g))))
                    }
                }
            }
        };
        if threads.is_empty() {
            return Err(self.err(pos, format!("{entity} has no threads: expected thread name=... {{ flowop ... }}")));
        }
        let mut out = Vec::new();
        for t in threads {
            out.push(self.thread(at, t)?);
        }
        Ok(ProcessSpec { name, instances, nice, threads: out })
    }

    fn thread(&mut self, at: usize, t: &Thread) -> Result<ThreadSpec, WmlError> {
        let a = self.collect("thread", &t.attrs, THREAD_ATTRS, false)?;
        let (name, _) = self.a_required(&a, "name", t.pos, None)?;
        let entity = format!("thread {name}");
        let ipos = a.get("instances").map(|i| i.pos).unwrap_or(t.pos);
        let instances = self.instances(&entity, ipos, self.a_u64(&a, "instances", 1, None)?)?;
        let ioprio = self.a_range(&a, "ioprio", 8, 8, None)?;
        if t.flowops.is_empty() {
            return Err(self.err(t.pos, format!("{entity} has no flowops: expected flowop TYPE name=... inside {{ }}")));
        }
        let mut flowops = Vec::new();
        for f in &t.flowops {
            let cx = FlowCtx { at, locals: None, prefix: String::new(), depth: 0 };
            flowops.push(self.flowop(f, &cx)?);
        }
        Ok(ThreadSpec {
            name,
            instances,
            memsize: self.a_u64(&a, "memsize", 0, None)?,
            useism: self.a_bool(&a, "useism", false, None)?,
            ioprio: (ioprio < 8).then_some(ioprio as u8),
            flowops,
        })
    }

    fn flowop(&mut self, f: &Flowop, cx: &FlowCtx) -> Result<FlowopSpec, WmlError> {
        self.flowop_count += 1;
        if self.flowop_count > MAX_FLOWOPS {
            return Err(self.err(f.ty_pos, format!("more than {MAX_FLOWOPS} flowops (after expanding composite flowops)")));
        }
        let kind = match FlowopKind::from_wml(&f.ty) {
            Some(k) => k,
            None => return self.composite_use(f, cx),
        };
        let ty = f.ty.as_str();
        let locals = cx.locals;
        let a = self.collect(&format!("flowop {ty}"), &f.attrs, FLOWOP_ATTRS, false)?;
        let (name, _) = self.a_required(&a, "name", f.ty_pos, locals)?;
        let mut spec = FlowopSpec::new(format!("{}{name}", cx.prefix), kind);

        match a.get("filesetname") {
            Some(attr) if !kind.uses_fileset() => {
                return Err(self.err(attr.pos, format!("filesetname has no effect on flowop {ty}: it works on its fd, not on a fileset")))
            }
            Some(_) => {
                if let Some((fs, p)) = self.a_string(&a, "filesetname", locals)? {
                    match self.fileset_index.get(&fs) {
                        Some((i, _)) => spec.fileset = Some(*i),
                        None => {
                            let names: Vec<&str> = self.filesets.iter().map(|s| s.name.as_str()).collect();
                            let hint = suggest(&fs, names.iter().copied()).map(|s| format!("did you mean '{s}'? ")).unwrap_or_default();
                            let list = if names.is_empty() { "none".to_string() } else { clip(&names.join(", ")) };
                            return Err(
                                self.err(p, format!("filesetname: no fileset or file named '{}'; {hint}defined: {list}", clip(&fs)))
                            );
                        }
                    }
                }
            }
            None if matches!(
                kind,
                FlowopKind::CreateFile | FlowopKind::OpenFile | FlowopKind::MakeDir | FlowopKind::RemoveDir | FlowopKind::ListDir
            ) =>
            {
                return Err(self.err(f.ty_pos, format!("flowop {ty} needs filesetname=... (the fileset it picks from)")));
            }
            None => {}
        }
        spec.fd = self.a_range(&a, "fd", 0, MAX_FD, locals)? as u32;
        spec.srcfd = match a.get("srcfd") {
            Some(_) => Some(self.a_range(&a, "srcfd", 0, MAX_FD, locals)? as u32),
            None => None,
        };
        spec.opennext = self.a_bool(&a, "opennext", false, locals)?;
        spec.indexed = self.a_opt_num(&a, "indexed", locals)?;
        spec.iosize = self.a_num(&a, "iosize", 0, locals)?;
        spec.workingset = self.a_num(&a, "workingset", 0, locals)?;
        spec.random = self.a_bool(&a, "random", false, locals)?;
        spec.dsync = self.open_flag(&a, "dsync", kind, locals)?;
        spec.directio = self.open_flag(&a, "directio", kind, locals)?;
        spec.noreadahead = self.open_flag(&a, "noreadahead", kind, locals)?;
        spec.iters = self.a_num(&a, "iters", 1, locals)?;
        if kind == FlowopKind::Print {
            spec.text = self.a_string(&a, "value", locals)?.map(|(s, _)| s);
        } else {
            spec.value = self.a_num(&a, "value", 0, locals)?;
        }
        if let Some((t, p)) = self.a_string(&a, "target", locals)? {
            self.targets.push((t.clone(), p));
            spec.target = Some(t);
        }
        spec.blocking = self.a_bool(&a, "blocking", false, locals)?;
        spec.highwater = self.a_u64(&a, "highwater", 1, locals)?;

        if kind == FlowopKind::AioWrite && !spec.random {
            return Err(self.err(f.ty_pos, "flowop aiowrite needs random: Filebench's aiowrite only writes at random offsets"));
        }
        if matches!(kind, FlowopKind::FinishOnCount | FlowopKind::FinishOnBytes) && self.mode == QuitMode::Timeout {
            // Filebench 1.4 ended the run when the limit was reached (its
            // stock filemicro_* files rely on it); 1.5 made it an error.
            let Some(why) = self.facts.dialect14.clone() else {
                return Err(self.err(
                    f.ty_pos,
                    format!(
                        "flowop {ty} needs 'set mode quit firstdone' or 'alldone': in timeout mode its stop is an error (as in Filebench)"
                    ),
                ));
            };
            if !self.warned_finish14 {
                self.warned_finish14 = true;
                let at = self.err(f.ty_pos, "").to_string();
                self.warnings.push(Warning::new(
                    Code::DiffersFromTool,
                    format!(
                        "{at}Filebench 1.4 script ({why}): flowop {ty} without 'set mode quit' ends the run when it reaches its value, \
                     as in Filebench 1.4 (1.5 refuses it)"
                    ),
                ));
            }
        }
        Ok(spec)
    }

    /// dsync, directio and noreadahead act at open time only.
    fn open_flag(&self, a: &Attrs, key: &str, kind: FlowopKind, locals: Option<&Locals>) -> Result<bool, WmlError> {
        let on = self.a_bool(a, key, false, locals)?;
        if on && !kind.opens_file() {
            let p = a.get(key).map(|x| x.pos).unwrap_or_default();
            return Err(self.err(
                p,
                format!(
                    "{key} has effect only on a flowop that opens the file (createfile, openfile, read, write, ...), not on {}",
                    kind.wml_name()
                ),
            ));
        }
        Ok(on)
    }

    /// A `define flowop` used as a type: its body, with its local variables
    /// bound (the use's values over the definition's defaults).
    fn composite_use(&mut self, f: &Flowop, cx: &FlowCtx) -> Result<FlowopSpec, WmlError> {
        let ty = f.ty.as_str();
        let (def_at, def_iters, def_locals, body) = match self.composites.get(ty) {
            Some(d) if d.at < cx.at => (d.at, d.iters, d.locals.clone(), d.body),
            Some(d) => {
                return Err(
                    self.err(f.ty_pos, format!("composite flowop '{ty}' is defined at line {}, after this use; define it first", d.line))
                )
            }
            None => {
                let mut names: Vec<&str> = FlowopKind::ALL.iter().map(|(_, n)| *n).collect();
                names.extend(self.composites.iter().filter(|(_, d)| d.at < cx.at).map(|(n, _)| n.as_str()));
                let hint = suggest(ty, names.iter().copied()).map(|s| format!("did you mean '{s}'? ")).unwrap_or_default();
                return Err(self.err(f.ty_pos, format!("unknown flowop type '{}': {hint}valid types: {}", clip(ty), names.join(", "))));
            }
        };
        if cx.depth >= MAX_COMPOSITE_DEPTH {
            return Err(self.err(f.ty_pos, format!("composite flowops nest deeper than {MAX_COMPOSITE_DEPTH} levels")));
        }
        // Binding locals costs work per use even when the body is small.
        self.locals_bound += def_locals.len();
        if self.locals_bound > MAX_LOCALS_BOUND {
            return Err(self.err(f.ty_pos, "composite flowops expand too far (too many uses of too many local variables)"));
        }
        let a = self.collect(&format!("composite flowop {ty}"), &f.attrs, COMPOSITE_ATTRS, true)?;
        let (name, _) = self.a_required(&a, "name", f.ty_pos, cx.locals)?;
        let declared: HashSet<&str> = def_locals.iter().map(|d| d.name.as_str()).collect();
        let given: HashMap<&str, &Attr> = a.locals.iter().map(|l| (l.name.as_str(), *l)).collect();
        for l in &a.locals {
            if !declared.contains(l.name.as_str()) {
                let declared: Vec<String> = def_locals.iter().map(|d| format!("${}", d.name)).collect();
                let list = if declared.is_empty() { "none".to_string() } else { declared.join(", ") };
                return Err(self.err(l.pos, format!("composite flowop {ty} has no local variable ${}; it declares: {list}", l.name)));
            }
        }
        let mut locals = Locals::new();
        for d in &def_locals {
            let got: Option<Got> = match (given.get(d.name.as_str()), &d.value) {
                (Some(l), _) => match &l.value {
                    Some(v) => Some(self.value(v, cx.locals)?),
                    None => return Err(self.err(l.pos, format!("${} needs a value here (${}=...)", l.name, l.name))),
                },
                (None, Some(v)) => Some(self.value(v, None)?),
                // No value anywhere: the body falls back to the global variable.
                (None, None) => None,
            };
            if let Some(g) = got {
                locals.insert(d.name.clone(), g);
            }
        }
        let iters = match (a.get("iters"), def_iters) {
            (Some(_), _) => self.a_num(&a, "iters", 1, cx.locals)?,
            (None, Some(v)) => {
                let g = self.value(v, None)?;
                self.num_of("iters", &g, v.pos)?
            }
            (None, None) => Num::Fixed(1),
        };
        let full = format!("{}{name}", cx.prefix);
        let inner = FlowCtx { at: def_at, locals: Some(&locals), prefix: format!("{full}."), depth: cx.depth + 1 };
        let mut children = Vec::new();
        for child in body {
            children.push(self.flowop(child, &inner)?);
        }
        let mut spec = FlowopSpec::new(full, FlowopKind::Composite);
        spec.iters = iters;
        spec.children = children;
        Ok(spec)
    }

    /// Every `target=` names a flowop somewhere in the plan.
    pub fn check_targets(&self, procs: &[ProcessSpec]) -> Result<(), WmlError> {
        fn walk<'s>(f: &'s FlowopSpec, names: &mut HashSet<&'s str>) {
            names.insert(f.name.as_str());
            f.children.iter().for_each(|c| walk(c, names));
        }
        let mut names = HashSet::new();
        procs.iter().flat_map(|p| &p.threads).flat_map(|t| &t.flowops).for_each(|f| walk(f, &mut names));
        for (t, pos) in &self.targets {
            if !names.contains(t.as_str()) {
                let hint = suggest(t, names.iter().copied()).map(|s| format!("; did you mean '{s}'?")).unwrap_or_default();
                return Err(self.err(*pos, format!("target: no flowop named '{}'{hint}", clip(t))));
            }
        }
        Ok(())
    }
}
