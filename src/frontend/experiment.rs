//! Experiment files (TOML): a matrix of targets × workloads × cache
//! scenarios × background loads × repeats, checked into an `Experiment`.
//!
//! ```toml
//! name = "delalloc"
//! repeat = 3                     # or "${repeats}", a [params] value
//! cache = ["cold", "fresh-mount"]           # top-level keys come before any [table]
//! background = ["none", "files:fsync"]
//! trace = true                   # a block trace of every run (or a device name)
//! order = "interleaved"          # or "sequential" (every run of one target, then the next)
//! seed = 42                      # the interleaved order's shuffle (drawn and recorded when absent)
//! [params]                       # ${name} in args; --set name=value overrides
//! size = "256m"
//! [[target]]
//! label = "ext4-nodelalloc"
//! fs = "ext4"                    # managed: mkfs + mount on a loop/zram/named device
//! mount = "nodelalloc"
//! loop = { dir = "/var/tmp", size = "2g" }
//! [[target]]
//! label = "raw"
//! loop = { dir = "/var/tmp", size = "2g" }  # no fs: the loop device itself, written raw
//! [[workload]]
//! label = "seq-write"
//! fio = "../fio/seed-002-delalloc.fio"      # relative to this file (optional)
//! args = ["--size=${size}", "--filename=${target}/f"]
//! [[workload]]
//! label = "fileserver"
//! targets = ["ext4-nodelalloc"]  # only on these targets (default: every target)
//! filebench = "fileserver"       # a shipped personality, or a .f file relative to this file
//! set = { nfiles = "${nfiles}" } # `set $name` overrides; $dir defaults to ${target}
//! runtime = 30                   # seconds (optional)
//! ```
//!
//! The keys of a `[[workload]]` besides `label` belong to the workload
//! families (`frontend::FRONTENDS`): each family checks its own and returns
//! a recipe, planned per target when the experiment runs.
//!
//! Every error names the file, line, column and key.

use crate::frontend::environment::{parse_background_choice, parse_cache};
use crate::frontend::FRONTENDS;
use crate::model::environment::TraceSpec;
use crate::model::environment::{CacheScenario, DeviceSource, TargetSpec, MANAGED_FS};
use crate::model::experiment::{draw_seed, MAX_REPEAT};
pub use crate::model::experiment::{BackgroundChoice, Experiment, MatrixWorkload, Order, Target};
use crate::units::parse_size;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use toml::Spanned;

/// An error with its place in the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExperimentError {
    pub file: String,
    pub line: usize,
    pub col: usize,
    pub key: Option<String>,
    pub message: String,
}

impl std::error::Error for ExperimentError {}

impl std::fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}: ", self.file, self.line, self.col)?;
        if let Some(k) = &self.key {
            write!(f, "key '{k}': ")?;
        }
        write!(f, "{}", self.message)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawExperiment {
    name: Spanned<String>,
    description: Option<String>,
    repeat: Option<Spanned<toml::Value>>,
    #[serde(default)]
    params: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    target: Vec<RawTarget>,
    #[serde(default)]
    workload: Vec<RawWorkload>,
    #[serde(default)]
    cache: Vec<Spanned<String>>,
    #[serde(default)]
    background: Vec<Spanned<String>>,
    /// `true` (the workload's device) or a device name.
    trace: Option<Spanned<toml::Value>>,
    /// The blktrace categories to keep, comma-separated (`--trace-mask`).
    trace_mask: Option<Spanned<String>>,
    /// "interleaved" (default) or "sequential".
    order: Option<Spanned<String>>,
    /// What the interleaved order is shuffled from (drawn when absent).
    seed: Option<Spanned<toml::Value>>,
    /// What of the seed's tables cannot be filled here (`experiment_gap`).
    #[serde(default)]
    gap: Vec<super::experiment_gap::RawGap>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTarget {
    label: Spanned<String>,
    /// An existing directory.
    directory: Option<Spanned<String>>,
    /// A raw block device, written directly.
    device: Option<Spanned<String>>,
    /// Managed file system type.
    fs: Option<Spanned<String>>,
    #[serde(default)]
    mkfs: Vec<String>,
    #[serde(default)]
    mount: String,
    #[serde(rename = "loop")]
    loop_dev: Option<Spanned<RawLoop>>,
    zram: Option<Spanned<String>>,
    blockdev: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoop {
    dir: String,
    size: Spanned<String>,
}

/// A `[[workload]]` table: `label` and the keys of one family.
type RawWorkload = BTreeMap<String, Spanned<toml::Value>>;

/// Maps byte offsets of the text to line and column.
pub(super) struct Locator<'a> {
    file: String,
    text: &'a str,
}

impl Locator<'_> {
    pub(super) fn at(&self, offset: usize, key: Option<&str>, message: impl Into<String>) -> ExperimentError {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
        ExperimentError { file: self.file.clone(), line, col, key: key.map(str::to_string), message: message.into() }
    }
    pub(super) fn span<T>(&self, s: &Spanned<T>, key: &str, message: impl Into<String>) -> ExperimentError {
        self.at(s.span().start, Some(key), message)
    }
}

/// Read and check an experiment file; `sets` (`name=value`) override `[params]`.
pub fn load(path: &Path, sets: &[String]) -> Result<Experiment, ExperimentError> {
    parse(&read(path)?, path, sets)
}

/// An experiment file's text, unchecked.
pub fn read(path: &Path) -> Result<String, ExperimentError> {
    crate::input::read_text(path, "experiment file").map_err(|e| ExperimentError {
        file: path.display().to_string(),
        line: 0,
        col: 0,
        key: None,
        message: format!("cannot read: {e}"),
    })
}

pub fn parse(text: &str, path: &Path, sets: &[String]) -> Result<Experiment, ExperimentError> {
    let loc = Locator { file: path.display().to_string(), text };
    let raw: RawExperiment = toml::from_str(text).map_err(|e| {
        let at = e.span().map(|s| s.start).unwrap_or(0);
        loc.at(at, None, e.message().trim().to_string())
    })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = raw.name.get_ref().trim().to_string();
    if name.is_empty() || name.contains('/') {
        return Err(loc.span(&raw.name, "name", "expected a non-empty name without '/'"));
    }
    let mut params = BTreeMap::new();
    for (k, v) in &raw.params {
        let s = match v.get_ref() {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            toml::Value::Boolean(b) => b.to_string(),
            _ => return Err(loc.span(v, &format!("params.{k}"), "expected a string, number or boolean")),
        };
        params.insert(k.clone(), s);
    }
    // `--set repeat=N` sets the repeats of any experiment, unless its
    // [params] has a `repeat` of its own (which `repeat = "${repeat}"` reads).
    let mut repeat_set: Option<&str> = None;
    for s in sets {
        let Some((k, v)) = s.split_once('=') else {
            return Err(set_error(&loc, s, "expected --set NAME=VALUE"));
        };
        if k == REPEAT_SET && !params.contains_key(k) {
            repeat_set = Some(v);
            continue;
        }
        if !params.contains_key(k) {
            let known: Vec<&str> = params.keys().map(String::as_str).collect();
            return Err(set_error(&loc, s, &format!("no parameter '{k}' in [params] (have: {})", known.join(", "))));
        }
        params.insert(k.to_string(), v.to_string());
    }
    // A number, or "${name}" so `--set name=20` changes it.
    let repeat = match &raw.repeat {
        None => 1,
        Some(r) => {
            let text = match r.get_ref() {
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::String(s) => expand(s, &params, None).map_err(|e| loc.span(r, "repeat", e))?,
                other => other.to_string(),
            };
            match text.trim().parse::<u32>() {
                Ok(n) if (1..=MAX_REPEAT).contains(&n) => n,
                _ => return Err(loc.span(r, "repeat", format!("expected 1 to {MAX_REPEAT} (or \"${{param}}\"), got {text}"))),
            }
        }
    };
    let repeat = match repeat_set {
        None => repeat,
        Some(v) => match v.trim().parse::<u32>() {
            Ok(n) if (1..=MAX_REPEAT).contains(&n) => n,
            _ => return Err(set_error(&loc, &format!("{REPEAT_SET}={v}"), &format!("expected 1 to {MAX_REPEAT} repeats"))),
        },
    };
    let order = match &raw.order {
        None => Order::default(),
        Some(o) => Order::parse(o.get_ref().trim()).map_err(|e| loc.span(o, "order", e))?,
    };
    let seed = match &raw.seed {
        None => draw_seed(),
        Some(v) => match v.get_ref() {
            toml::Value::Integer(i) if *i >= 0 => *i as u64,
            toml::Value::String(s) => {
                s.trim().parse::<u64>().map_err(|_| loc.span(v, "seed", format!("expected a whole number 0 or more, got \"{s}\"")))?
            }
            other => return Err(loc.span(v, "seed", format!("expected a whole number 0 or more, got {other}"))),
        },
    };
    let caches = if raw.cache.is_empty() {
        vec![CacheScenario::Warm]
    } else {
        let parse_one = |c: &Spanned<String>| {
            let text = expand(c.get_ref(), &params, None).map_err(|e| loc.span(c, "cache", e))?;
            parse_cache(&text).map_err(|e| loc.span(c, "cache", e))
        };
        raw.cache.iter().map(parse_one).collect::<Result<_, _>>()?
    };
    let mut backgrounds = Vec::new();
    for b in &raw.background {
        let text = expand(b.get_ref().trim(), &params, None).map_err(|e| loc.span(b, "background", e))?;
        let text = text.as_str();
        if text == "none" {
            backgrounds.push(None);
            continue;
        }
        // The directory is the target's unless the load names one (dir=).
        backgrounds.push(Some(parse_background_choice(text).map_err(|e| loc.span(b, "background", e))?));
    }
    if backgrounds.is_empty() {
        backgrounds.push(None);
    }
    if raw.target.is_empty() {
        return Err(loc.at(0, Some("target"), "expected at least one [[target]]"));
    }
    if raw.workload.is_empty() {
        return Err(loc.at(0, Some("workload"), "expected at least one [[workload]]"));
    }
    let targets = raw.target.iter().map(|t| target(&loc, t, &params)).collect::<Result<Vec<_>, _>>()?;
    unique(&loc, raw.target.iter().map(|t| &t.label), "target.label")?;
    let mut labels = Vec::new();
    for (i, w) in raw.workload.iter().enumerate() {
        let Some(l) = w.get("label") else {
            return Err(loc.at(0, Some("workload"), format!("[[workload]] number {} has no label", i + 1)));
        };
        match l.get_ref() {
            toml::Value::String(s) => labels.push(Spanned::new(l.span(), s.clone())),
            _ => return Err(loc.span(l, "label", "expected a string")),
        }
    }
    let target_labels: Vec<&str> = targets.iter().map(|t| t.label.as_str()).collect();
    let workloads =
        raw.workload.iter().zip(&labels).map(|(w, l)| workload(&loc, w, l, &base, &target_labels)).collect::<Result<Vec<_>, _>>()?;
    unique(&loc, labels.iter(), "workload.label")?;
    let trace = match &raw.trace {
        None => None,
        Some(v) => match v.get_ref() {
            toml::Value::Boolean(false) => None,
            toml::Value::Boolean(true) => Some(TraceSpec::default()),
            toml::Value::String(s) => Some(TraceSpec::parse(s).map_err(|e| loc.span(v, "trace", e))?),
            other => return Err(loc.span(v, "trace", format!("expected true, false or a device name, found {}", other.type_str()))),
        },
    };
    let trace = match (trace, &raw.trace_mask) {
        (_, Some(m)) if raw.trace.is_none() => return Err(loc.span(m, "trace_mask", "trace_mask needs trace = true (or a device)")),
        (Some(t), Some(m)) => {
            let mask = crate::observe::trace::record::cat::parse_mask(m.get_ref()).map_err(|e| loc.span(m, "trace_mask", e))?;
            Some(TraceSpec { act_mask: Some(mask), ..t })
        }
        (t, _) => t,
    };
    let gaps = super::experiment_gap::gaps(&loc, &raw.gap)?;
    Ok(Experiment {
        name,
        description: raw.description,
        file: path.to_path_buf(),
        repeat,
        params,
        targets,
        workloads,
        caches,
        backgrounds,
        trace,
        order,
        seed,
        gaps,
    })
}

/// The `--set` name that sets the repeats of any experiment.
pub const REPEAT_SET: &str = "repeat";

fn set_error(loc: &Locator, s: &str, msg: &str) -> ExperimentError {
    ExperimentError {
        file: "command line".into(),
        line: 0,
        col: 0,
        key: Some(format!("--set {s}")),
        message: format!("{msg} (experiment {})", loc.file),
    }
}

fn unique<'a>(loc: &Locator, labels: impl Iterator<Item = &'a Spanned<String>>, key: &str) -> Result<(), ExperimentError> {
    let mut seen = std::collections::HashSet::new();
    for l in labels {
        let v = l.get_ref();
        if v.is_empty() || v.contains('/') || v.contains("__") {
            return Err(loc.span(l, key, "expected a non-empty label without '/' or '__'"));
        }
        if !seen.insert(v.clone()) {
            return Err(loc.span(l, key, format!("label '{v}' is used twice")));
        }
    }
    Ok(())
}

fn size_of(loc: &Locator, s: &Spanned<String>, key: &str, params: &BTreeMap<String, String>) -> Result<u64, ExperimentError> {
    let text = expand(s.get_ref(), params, None).map_err(|e| loc.span(s, key, e))?;
    parse_size(&text, 1024).map_err(|e| loc.span(s, key, format!("{e}; expected a size like 2g")))
}

fn target(loc: &Locator, t: &RawTarget, params: &BTreeMap<String, String>) -> Result<Target, ExperimentError> {
    let label = t.label.get_ref().clone();
    // A loop or zram source without fs is a raw device fsbench creates.
    let created = t.fs.is_none() && (t.loop_dev.is_some() || t.zram.is_some());
    let kinds = [t.directory.is_some(), t.device.is_some(), t.fs.is_some(), created].iter().filter(|&&b| b).count();
    if kinds != 1 {
        return Err(loc.span(
            &t.label,
            "target",
            "expected exactly one of directory = DIR, device = DEV, fs = TYPE (with its device), or a raw device fsbench creates \
             (loop = { dir, size } or zram = SIZE without fs)",
        ));
    }
    let spec = if created {
        if t.loop_dev.is_some() && t.zram.is_some() {
            return Err(loc.span(&t.label, "target", "a raw device is either loop = { dir, size } or zram = SIZE, not both"));
        }
        if let Some(b) = &t.blockdev {
            return Err(loc.span(b, "blockdev", "blockdev names the device of fs = TYPE; a raw device of yours is device = DEV"));
        }
        if !t.mkfs.is_empty() || !t.mount.is_empty() {
            return Err(loc.span(&t.label, "target", "mkfs and mount need fs = TYPE; without fs the device is written raw"));
        }
        TargetSpec::ManagedDevice(device_source(loc, t, params)?)
    } else if let Some(d) = &t.directory {
        TargetSpec::Directory(PathBuf::from(expand(d.get_ref(), params, None).map_err(|e| loc.span(d, "directory", e))?))
    } else if let Some(d) = &t.device {
        TargetSpec::Device(PathBuf::from(d.get_ref()))
    } else {
        let fs = t.fs.as_ref().expect("counted above");
        if !MANAGED_FS.contains(&fs.get_ref().as_str()) {
            return Err(loc.span(fs, "fs", unmanaged_fs(fs.get_ref())));
        }
        let sources = [t.loop_dev.is_some(), t.zram.is_some(), t.blockdev.is_some()].iter().filter(|&&b| b).count();
        if sources != 1 {
            return Err(loc.span(
                fs,
                "fs",
                "a managed file system needs exactly one of loop = { dir, size }, zram = SIZE or blockdev = DEV",
            ));
        }
        let device = device_source(loc, t, params)?;
        TargetSpec::Managed { fs: fs.get_ref().clone(), mkfs_options: t.mkfs.clone(), mount_options: t.mount.clone(), device }
    };
    Ok(Target { label, spec })
}

/// Why `fs` cannot be a managed target's file system: fsbench formats only
/// those whose mkfs it runs unattended; and, when the running kernel lacks
/// it too, that as well (reiserfs, which Linux 6.13 dropped).
fn unmanaged_fs(fs: &str) -> String {
    let mut m = format!(
        "expected one of {}, got '{fs}': fsbench formats only these file systems (it knows how to run their mkfs unattended)",
        MANAGED_FS.join(", ")
    );
    if let crate::host::filesystems::KernelFs::Missing(why) = crate::host::filesystems::kernel_support(fs) {
        m.push_str(&format!(
            ", and the running kernel ({}) has no {fs} file system either ({why})",
            crate::host::filesystems::kernel_release()
        ));
    }
    m
}

/// The device under a target: its loop, zram or blockdev key (the caller
/// made sure there is exactly one).
fn device_source(loc: &Locator, t: &RawTarget, params: &BTreeMap<String, String>) -> Result<DeviceSource, ExperimentError> {
    Ok(if let Some(l) = &t.loop_dev {
        let at = l.span().start;
        let l = l.get_ref();
        let dir = expand(&l.dir, params, None).map_err(|e| loc.at(at, Some("loop.dir"), e))?;
        DeviceSource::Loop { dir: PathBuf::from(dir), size: size_of(loc, &l.size, "loop.size", params)? }
    } else if let Some(z) = &t.zram {
        DeviceSource::Zram { size: size_of(loc, z, "zram", params)? }
    } else {
        DeviceSource::Device(PathBuf::from(t.blockdev.as_ref().expect("one device source").get_ref()))
    })
}

/// The keys every `[[workload]]` may have, whatever its family.
const COMMON_WORKLOAD_KEYS: [&str; 2] = ["label", "targets"];

/// One `[[workload]]`: the family whose keys it uses checks it.
fn workload(
    loc: &Locator,
    w: &RawWorkload,
    label: &Spanned<String>,
    base: &Path,
    target_labels: &[&str],
) -> Result<MatrixWorkload, ExperimentError> {
    let owner = |k: &str| FRONTENDS.iter().copied().find(|f| f.workload_keys().contains(&k));
    let mut family: Option<(&'static dyn crate::frontend::Frontend, &str)> = None;
    for (k, v) in w.iter().filter(|(k, _)| !COMMON_WORKLOAD_KEYS.contains(&k.as_str())) {
        let Some(f) = owner(k) else {
            let known: Vec<String> = FRONTENDS.iter().map(|f| format!("{} ({})", f.workload_keys().join(", "), f.name())).collect();
            return Err(loc.span(
                v,
                k,
                format!("unknown workload key '{k}'; expected label, targets and the keys of one family: {}", known.join("; ")),
            ));
        };
        match family {
            Some((g, first)) if g.name() != f.name() => {
                return Err(loc.span(
                    v,
                    k,
                    format!(
                        "'{k}' is a {} key but '{first}' is a {} key: a workload is either {} ({}) or {} ({}), not both",
                        f.name(),
                        g.name(),
                        g.name(),
                        g.workload_keys().join(", "),
                        f.name(),
                        f.workload_keys().join(", ")
                    ),
                ));
            }
            Some(_) => {}
            None => family = Some((f, k.as_str())),
        }
    }
    let Some((f, _)) = family else {
        let how: Vec<String> = FRONTENDS.iter().map(|f| format!("{} = ... ({})", f.workload_keys()[0], f.name())).collect();
        return Err(loc.span(label, "workload", format!("the workload names no family: expected one of {}", how.join(", "))));
    };
    let only = w.get("targets").map(|v| only_targets(loc, v, target_labels)).transpose()?;
    let def = WorkloadDef { label: label.get_ref().clone(), base: base.to_path_buf(), keys: w, loc, label_at: label.span().start };
    Ok(MatrixWorkload { label: def.label.clone(), family: f.name(), recipe: f.lower_workload(&def)?, only })
}

/// `targets = ["raw", "ext2"]`: the `[[target]]` labels a workload runs on,
/// each once. An empty list would plan a workload that never runs, which is
/// a mistake rather than a way to switch it off (comment it out instead).
fn only_targets(loc: &Locator, v: &Spanned<toml::Value>, target_labels: &[&str]) -> Result<Vec<String>, ExperimentError> {
    let have = || format!("the [[target]] labels are: {}", target_labels.join(", "));
    let toml::Value::Array(items) = v.get_ref() else {
        return Err(loc.span(v, "targets", format!("expected an array of target labels, e.g. [\"{}\"]; {}", target_labels[0], have())));
    };
    if items.is_empty() {
        return Err(loc.span(v, "targets", format!("an empty list runs the workload nowhere; {}", have())));
    }
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let toml::Value::String(t) = item else {
            return Err(loc.span(v, "targets", format!("expected target labels (strings), found {}; {}", item.type_str(), have())));
        };
        if !target_labels.contains(&t.as_str()) {
            let hint = crate::frontend::suggest::nearest(t, target_labels.iter().copied(), 2).map(|s| format!(" (did you mean '{s}'?)"));
            return Err(loc.span(v, "targets", format!("no target '{t}'{}; {}", hint.unwrap_or_default(), have())));
        }
        if out.contains(t) {
            return Err(loc.span(v, "targets", format!("target '{t}' is listed twice")));
        }
        out.push(t.clone());
    }
    Ok(out)
}

/// One `[[workload]]` table as its family reads it: typed getters whose
/// errors point at the key in the file.
pub struct WorkloadDef<'a> {
    pub label: String,
    /// The experiment file's directory: relative paths start there.
    pub base: PathBuf,
    keys: &'a RawWorkload,
    loc: &'a Locator<'a>,
    label_at: usize,
}

impl WorkloadDef<'_> {
    pub fn has(&self, key: &str) -> bool {
        self.keys.contains_key(key)
    }

    /// An error at `key` (or at the label when the key is absent).
    pub fn error(&self, key: &str, message: impl Into<String>) -> ExperimentError {
        let at = self.keys.get(key).map(|v| v.span().start).unwrap_or(self.label_at);
        self.loc.at(at, Some(key), message)
    }

    /// A string value.
    pub fn string(&self, key: &str) -> Result<Option<String>, ExperimentError> {
        match self.keys.get(key).map(|v| v.get_ref()) {
            None => Ok(None),
            Some(toml::Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(self.error(key, "expected a string")),
        }
    }

    /// An array of strings (absent: empty).
    pub fn strings(&self, key: &str) -> Result<Vec<String>, ExperimentError> {
        match self.keys.get(key).map(|v| v.get_ref()) {
            None => Ok(Vec::new()),
            Some(toml::Value::Array(a)) => a
                .iter()
                .map(|x| match x {
                    toml::Value::String(s) => Ok(s.clone()),
                    _ => Err(self.error(key, "expected an array of strings")),
                })
                .collect(),
            Some(_) => Err(self.error(key, "expected an array of strings")),
        }
    }

    /// A string, integer or boolean, as text.
    pub fn scalar(&self, key: &str) -> Result<Option<String>, ExperimentError> {
        match self.keys.get(key).map(|v| v.get_ref()) {
            None => Ok(None),
            Some(v) => scalar_text(v).map(Some).ok_or_else(|| self.error(key, "expected a string, integer or boolean")),
        }
    }

    /// An inline table of strings, integers or booleans (absent: empty).
    pub fn scalar_table(&self, key: &str) -> Result<Vec<(String, String)>, ExperimentError> {
        match self.keys.get(key).map(|v| v.get_ref()) {
            None => Ok(Vec::new()),
            Some(toml::Value::Table(t)) => t
                .iter()
                .map(|(k, v)| {
                    scalar_text(v)
                        .map(|s| (k.clone(), s))
                        .ok_or_else(|| self.error(key, format!("'{key}.{k}': expected a string, integer or boolean")))
                })
                .collect(),
            Some(_) => Err(self.error(key, "expected a table, e.g. { name = value }")),
        }
    }

    /// A path relative to the experiment file that must be a file.
    pub fn existing_file(&self, key: &str, what: &str) -> Result<Option<PathBuf>, ExperimentError> {
        let Some(name) = self.string(key)? else { return Ok(None) };
        let p = self.base.join(&name);
        if !p.is_file() {
            return Err(self.error(key, format!("{what} {} does not exist", p.display())));
        }
        Ok(Some(p))
    }
}

fn scalar_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Seconds given as `runtime` (a number ≥ 1), once `${…}` is expanded.
pub fn runtime_seconds(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("runtime '{text}': expected a number of seconds ≥ 1")),
    }
}

/// Replace `${name}` with a parameter (or `${target}` with the target path).
pub fn expand(s: &str, params: &BTreeMap<String, String>, target: Option<&Path>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("${") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 2..];
        let Some(j) = after.find('}') else { return Err(format!("unterminated ${{ in '{s}'")) };
        let name = &after[..j];
        match (name, target) {
            ("target", Some(t)) => out.push_str(&t.display().to_string()),
            ("target", None) => return Err("${target} is only known inside workload args".into()),
            _ => match params.get(name) {
                Some(v) => out.push_str(v),
                None => return Err(format!("unknown parameter ${{{name}}}; define it in [params]")),
            },
        }
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Experiment, ExperimentError> {
        parse(text, Path::new("exp.toml"), &[])
    }

    const GOOD: &str = r#"
name = "t"
repeat = 2
cache = ["cold", "polluted:64m"]
background = ["none", "files:fsync"]
[params]
size = "64m"
[[target]]
label = "dir"
directory = "/tmp"
[[target]]
label = "ext4"
fs = "ext4"
mount = "nodelalloc"
loop = { dir = "/var/tmp", size = "1g" }
[[workload]]
label = "w"
args = ["--name=w", "--rw=write", "--size=${size}", "--directory=${target}"]
"#;

    #[test]
    fn a_full_matrix_parses() {
        let e = parse_str(GOOD).unwrap();
        assert_eq!(e.repeat, 2);
        assert_eq!(e.targets.len(), 2);
        assert!(matches!(&e.targets[1].spec, TargetSpec::Managed { fs, mount_options, device: DeviceSource::Loop { size, .. }, .. }
            if fs == "ext4" && mount_options == "nodelalloc" && *size == 1 << 30));
        assert_eq!(e.caches.len(), 2);
        assert_eq!(e.backgrounds.len(), 2);
        assert!(e.backgrounds[0].is_none());
    }

    #[test]
    fn set_overrides_params_and_unknown_set_is_an_error() {
        let e = parse(GOOD, Path::new("exp.toml"), &["size=8m".into()]).unwrap();
        assert_eq!(e.params["size"], "8m");
        let err = parse(GOOD, Path::new("exp.toml"), &["sise=8m".into()]).unwrap_err();
        assert!(err.message.contains("sise") && err.message.contains("size"), "{err}");
    }

    #[test]
    fn shipped_experiments_parse() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/experiments");
        for f in ["seed-000.toml", "seed-002.toml"] {
            let e = load(&dir.join(f), &[]).unwrap_or_else(|e| panic!("{e}"));
            assert!(e.repeat >= 3 && !e.workloads.is_empty(), "{f}");
        }
        let e = load(&dir.join("seed-000.toml"), &["pollute=2g".into()]).unwrap();
        assert!(e.caches.contains(&CacheScenario::Polluted(2 << 30)));
    }

    #[test]
    fn a_workload_runs_on_the_targets_it_lists() {
        let text = GOOD.replace("[[workload]]\nlabel = \"w\"", "[[workload]]\nlabel = \"w\"\ntargets = [\"ext4\"]");
        let e = parse_str(&text).unwrap();
        assert_eq!(e.workloads[0].only.as_deref(), Some(&["ext4".to_string()][..]));
        assert!(e.workloads[0].runs_on("ext4") && !e.workloads[0].runs_on("dir"));
        let all = parse_str(GOOD).unwrap();
        assert!(all.workloads[0].only.is_none() && all.workloads[0].runs_on("dir"));
    }

    #[test]
    fn a_workload_naming_no_such_target_is_located() {
        let with = |v: &str| GOOD.replace("[[workload]]\nlabel = \"w\"", &format!("[[workload]]\nlabel = \"w\"\ntargets = {v}"));
        let e = err_at(&with("[\"dir\", \"nope\"]"));
        assert_eq!((e.line, e.col, e.key.as_deref()), (18, 11, Some("targets")), "{e}");
        assert!(e.message.contains("'nope'") && e.message.contains("dir, ext4"), "the labels there are: {e}");
        let e = err_at(&with("[\"ext\"]"));
        assert!(e.message.contains("did you mean 'ext4'"), "{e}");
        let e = err_at(&with("[]"));
        assert!(e.message.contains("empty") && e.line == 18, "{e}");
        let e = err_at(&with("\"ext4\""));
        assert!(e.message.contains("expected an array"), "{e}");
        let e = err_at(&with("[\"ext4\", \"ext4\"]"));
        assert!(e.message.contains("twice"), "{e}");
        let e = err_at(&with("[1]"));
        assert!(e.message.contains("integer"), "{e}");
    }

    #[test]
    fn expand_params_and_target() {
        let mut p = BTreeMap::new();
        p.insert("size".to_string(), "1g".to_string());
        assert_eq!(expand("--size=${size} x=${target}/f", &p, Some(Path::new("/mnt"))).unwrap(), "--size=1g x=/mnt/f");
        assert!(expand("${nope}", &p, None).unwrap_err().contains("nope"));
        assert!(expand("${size", &p, None).is_err());
    }

    fn err_at(text: &str) -> ExperimentError {
        parse_str(text).unwrap_err()
    }

    #[test]
    fn unknown_key_names_line_and_column() {
        let e = err_at("name = \"x\"\n[[target]]\nlabel = \"a\"\ndirectory = \"/tmp\"\nbogus = 1\n");
        assert_eq!(e.line, 5, "{e}");
        assert!(e.message.contains("bogus"), "{e}");
    }

    #[test]
    fn bad_cache_scenario_is_located() {
        let mut t = GOOD.replace("\"polluted:64m\"", "\"lukewarm\"");
        t.push('\n');
        let e = err_at(&t);
        assert_eq!(e.key.as_deref(), Some("cache"));
        assert_eq!(e.line, 4, "{e}");
    }

    #[test]
    fn bad_fs_lists_the_choices() {
        let e = err_at(&GOOD.replace("fs = \"ext4\"", "fs = \"ntfs\""));
        assert!(e.message.contains("xfs") && e.message.contains("ntfs"), "{e}");
        assert_eq!(e.line, 13);
    }

    #[test]
    fn target_needs_exactly_one_kind() {
        let e = err_at(&GOOD.replace("directory = \"/tmp\"", "directory = \"/tmp\"\nfs = \"ext4\""));
        assert!(e.message.contains("exactly one"), "{e}");
    }

    #[test]
    fn a_loop_or_zram_without_fs_is_a_raw_device_fsbench_creates() {
        let raw = "[[target]]\nlabel = \"raw\"\nloop = { dir = \"/var/tmp\", size = \"${size}\" }\n";
        let e = parse_str(&GOOD.replace("[[workload]]", &format!("{raw}[[workload]]"))).unwrap();
        assert_eq!(e.targets[2].spec, TargetSpec::ManagedDevice(DeviceSource::Loop { dir: "/var/tmp".into(), size: 64 << 20 }));
        let z = parse_str(&GOOD.replace("[[workload]]", "[[target]]\nlabel = \"z\"\nzram = \"1g\"\n[[workload]]")).unwrap();
        assert_eq!(z.targets[2].spec, TargetSpec::ManagedDevice(DeviceSource::Zram { size: 1 << 30 }));
        for (extra, says) in [
            ("mount = \"noatime\"\n", "need fs"),
            ("zram = \"1g\"\n", "not both"),
            ("blockdev = \"/dev/sdx\"\n", "device = DEV"),
            ("directory = \"/tmp\"\n", "exactly one"),
        ] {
            let e = err_at(&GOOD.replace("[[workload]]", &format!("{raw}{extra}[[workload]]")));
            assert!(e.message.contains(says) && e.line >= 16, "{extra}: {e}");
        }
    }

    #[test]
    fn managed_target_needs_a_device_source() {
        let e = err_at(&GOOD.replace("loop = { dir = \"/var/tmp\", size = \"1g\" }", ""));
        assert!(e.message.contains("loop"), "{e}");
    }

    #[test]
    fn trace_mask_needs_trace_and_known_categories() {
        let with = |keys: &str| GOOD.replace("repeat = 2", &format!("repeat = 2\n{keys}"));
        let e = parse_str(&with("trace = true\ntrace_mask = \"issue,complete\"")).unwrap();
        let mask = crate::observe::trace::record::cat::ISSUE | crate::observe::trace::record::cat::COMPLETE;
        assert_eq!(e.trace.and_then(|t| t.act_mask), Some(mask));
        let e = err_at(&with("trace_mask = \"issue\""));
        assert_eq!((e.line, e.key.as_deref()), (4, Some("trace_mask")), "{e}");
        assert!(e.message.contains("needs trace"), "{e}");
        let e = err_at(&with("trace = true\ntrace_mask = \"issue,dispatch\""));
        assert_eq!((e.line, e.key.as_deref()), (5, Some("trace_mask")), "{e}");
        assert!(e.message.contains("'dispatch'"), "{e}");
    }

    #[test]
    fn repeat_out_of_range() {
        let e = err_at(&GOOD.replace("repeat = 2", "repeat = 0"));
        assert_eq!((e.line, e.key.as_deref()), (3, Some("repeat")));
    }

    #[test]
    fn order_and_seed_from_the_file_or_drawn() {
        let e = parse_str(GOOD).unwrap();
        assert_eq!(e.order, Order::Interleaved, "interleaved unless the file says otherwise");
        let with = |keys: &str| GOOD.replace("repeat = 2", &format!("repeat = 2\n{keys}"));
        let e = parse_str(&with("order = \"sequential\"\nseed = 42")).unwrap();
        assert_eq!((e.order, e.seed), (Order::Sequential, 42));
        let e = err_at(&with("order = \"random\""));
        assert_eq!((e.line, e.key.as_deref()), (4, Some("order")));
        assert!(e.message.contains("interleaved"), "{e}");
        let e = err_at(&with("seed = -1"));
        assert_eq!((e.line, e.key.as_deref()), (4, Some("seed")));
        // Without a seed each parse draws its own.
        let seeds: std::collections::BTreeSet<u64> = (0..4).map(|_| parse_str(GOOD).unwrap().seed).collect();
        assert!(seeds.len() > 1, "{seeds:?}");
    }

    #[test]
    fn set_repeat_works_on_any_experiment_and_is_bounded() {
        assert_eq!(parse(GOOD, Path::new("exp.toml"), &["repeat=5".into()]).unwrap().repeat, 5);
        for bad in ["repeat=0", "repeat=1001", "repeat=x"] {
            let e = parse(GOOD, Path::new("exp.toml"), &[bad.into()]).unwrap_err();
            assert_eq!(e.key.as_deref(), Some(format!("--set {bad}").as_str()), "{e}");
            assert!(e.message.contains("1 to 1000"), "{e}");
        }
    }

    #[test]
    fn repeat_from_a_param_follows_set() {
        let text = GOOD.replace("repeat = 2", "repeat = \"${reps}\"").replace("size = \"64m\"", "size = \"64m\"\nreps = 3");
        assert_eq!(parse_str(&text).unwrap().repeat, 3);
        assert_eq!(parse(&text, Path::new("exp.toml"), &["reps=20".into()]).unwrap().repeat, 20);
        let e = parse(&text, Path::new("exp.toml"), &["reps=0".into()]).unwrap_err();
        assert_eq!((e.line, e.key.as_deref()), (3, Some("repeat")));
    }

    #[test]
    fn duplicate_labels_and_missing_sections() {
        let e = err_at(&GOOD.replace("label = \"ext4\"", "label = \"dir\""));
        assert!(e.message.contains("twice"), "{e}");
        assert!(err_at("name = \"x\"\n").message.contains("target"));
    }

    #[test]
    fn syntax_error_is_located() {
        let e = err_at("name = \"x\"\nrepeat = = 3\n");
        assert_eq!(e.line, 2, "{e}");
    }

    #[test]
    fn workload_without_job_file_or_name() {
        let e = err_at(&GOOD.replace("\"--name=w\", ", ""));
        assert!(e.message.contains("--name"), "{e}");
    }

    const FB: &str = "name = \"t\"\n[[target]]\nlabel = \"dir\"\ndirectory = \"/tmp\"\n[[workload]]\nlabel = \"fs\"\n";

    #[test]
    fn filebench_workload_by_personality_with_sets() {
        let e = parse_str(&format!("{FB}filebench = \"fileserver\"\nset = {{ nfiles = 100, dir = \"${{target}}/x\" }}\nruntime = 5\n"))
            .unwrap();
        let w = &e.workloads[0];
        assert_eq!(w.family, "filebench");
        // Planned for a target: the sets and runtime are in the plan.
        let at = crate::model::recipe::Placement { target: "/mnt/t".into(), is_device: false, params: &e.params };
        let plan = w.recipe.plan(&at).unwrap().plan;
        let crate::model::Workload::Flow(f) = &plan.workload else { panic!("a flow") };
        assert_eq!(f.source, "builtin:fileserver");
        assert_eq!(f.filesets[0].path, std::path::Path::new("/mnt/t/x"), "dir = ${{target}}/x");
        assert!(f.vars.contains(&("nfiles".into(), "100".into())), "{:?}", f.vars);
        assert_eq!(f.run.duration_s, 5);
        assert_eq!(plan.layout, "filebench");
    }

    #[test]
    fn filebench_workload_errors_are_located() {
        let e = err_at(&format!("{FB}filebench = \"filesrever\"\n"));
        assert_eq!(e.line, 7, "{e}");
        assert!(e.message.contains("did you mean 'fileserver'"), "{e}");
        let e = err_at(&format!("{FB}filebench = \"varmail\"\nargs = [\"--name=x\"]\n"));
        assert!(e.message.contains("not both"), "{e}");
        let e = err_at(&format!("{FB}filebench = \"varmail\"\nruntime = 0\n"));
        assert_eq!(e.line, 8, "{e}");
        let e = err_at(&format!("{FB}filebench = \"missing/x.f\"\n"));
        assert!(e.message.contains("does not exist"), "{e}");
        let e = err_at(&format!("{FB}args = [\"--name=x\"]\nruntime = 3\n"));
        assert!(e.message.contains("not both") && e.line == 8, "{e}");
        let e = err_at(&format!("{FB}bogus = 1\n"));
        assert!(e.message.contains("unknown workload key 'bogus'") && e.message.contains("filebench, set, runtime (filebench)"), "{e}");
        let e = err_at(FB);
        assert!(e.message.contains("names no family") && e.line == 6, "{e}");
    }
}
