//! A warning as a value: a stable code a script can match and a short
//! message a person reads. It lives in the model, the lowest layer that
//! makes warnings (a frontend's `Lowered`), so every layer above can carry
//! the same type; `result::warning` is its name in the result.
//!
//! Messages stay short because they are printed one per line: a warning
//! about many things (files, jobs, cells, metrics) names a few and counts
//! the rest (`few`), and keeps the whole list in `details` for the JSON.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// The longest message a warning prints; a longer one is cut here and
/// kept whole in `details` (a net: the warnings that list things are
/// shortened where they are made).
pub const MAX_CHARS: usize = 240;

/// How many items of a list a message names before "and N more".
pub const FEW: usize = 3;

macro_rules! codes {
    ($($variant:ident = $name:literal: $meaning:literal,)*) => {
        /// What a warning is about. The names are stable: results keep them
        /// and scripts match them; docs/output.md lists every one.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code {
            $($variant,)*
        }

        impl Code {
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as JSON and stderr write it (kebab-case).
            pub fn name(self) -> &'static str {
                match self {
                    $(Code::$variant => $name,)*
                }
            }

            /// One sentence for the docs' table.
            pub fn meaning(self) -> &'static str {
                match self {
                    $(Code::$variant => $meaning,)*
                }
            }
        }
    };
}

codes! {
    IgnoredOption = "ignored-option": "an option, property or line is accepted but does nothing here",
    DefaultApplied = "default-applied": "the input left a setting out and fsbench chose it (a Filebench workload without a run line)",
    DiffersFromTool = "differs-from-tool": "fsbench does this differently from the tool it replaces; the figures mean what the message says",
    IodepthNoEffect = "iodepth-no-effect": "the queue depth asked for cannot be reached with this engine and these settings",
    ReadsFromMemory = "reads-from-memory": "the files' cached pages cannot be or are not dropped, so reads may measure memory",
    WorkingSetFitsInRam = "working-set-fits-in-ram": "buffered I/O over a working set that fits in RAM, with the page cache not controlled",
    VerifyLimited = "verify-limited": "data verification will not check what it seems to (clones overwrite each other, no read phase, no data)",
    JobsNotRun = "jobs-not-run": "fio's exitall ended the run before some jobs ran",
    CleanupFailed = "cleanup-failed": "a file, directory or fileset the run made could not be removed",
    SystemCommandFailed = "system-command-failed": "a Filebench `system` command failed or could not run",
    FlowopNoEffect = "flowop-no-effect": "a Filebench flowop limits or records nothing as written",
    OutOfFiles = "out-of-files": "a Filebench flowop found no file or directory to act on",
    WorkloadNote = "workload-note": "something a Filebench thread reported while it ran",
    RunStoppedOnError = "run-stopped-on-error": "the workload stopped on an error; what ran before it is kept",
    NoODirect = "no-o-direct": "the target refuses O_DIRECT, so the I/O is buffered",
    DeviceShared = "device-shared": "the device under the data also holds other file systems or swap, so its counters include their I/O",
    OperationsFailed = "operations-failed": "some or all of the store's operations failed",
    CacheNotApplied = "cache-not-applied": "the cache scenario did not take effect",
    CacheBeforeRunOnly = "cache-before-run-only": "the cache scenario holds at the run's start only (the run reads what it wrote)",
    DirtyPagesPending = "dirty-pages-pending": "dirty pages were still being written back when the cache scenario was applied",
    BackgroundLoadFailed = "background-load-failed": "the background load failed during the run",
    TraceLostEvents = "trace-lost-events": "the kernel lost block-trace events; the trace's figures are incomplete",
    TraceNotRestored = "trace-not-restored": "a tracing setting could not be put back after the capture (the records are complete)",
    RunFailed = "run-failed": "an experiment's run failed and is left out of every figure",
    PartialRun = "partial-run": "the run was interrupted; its figures cover part of it",
    DataRebuilt = "data-rebuilt": "a resumed experiment ran an earlier workload again to rebuild the data this run reads",
    WritesInPageCache = "writes-in-page-cache": "most buffered writes were still in the page cache when the run ended",
    OtherDeviceWrites = "other-device-writes": "the device saw far more writes than the benchmark issued",
    Unsteady = "unsteady": "the repeats disagree (coefficient of variation above 5%) on some metrics",
    NoAllocationEffect = "no-allocation-effect": "a workload cannot show the effect of the targets' allocation settings",
    SettingsDiffer = "settings-differ": "the runs compared did not run the same settings",
    NoSharedWorkloadMetric = "no-shared-workload-metric": "the sides of a comparison share no workload metric",
    NoSpread = "no-spread": "a side of a comparison is a single run, so no difference can be marked significant",
    Unclassified = "unclassified": "a warning from a result saved before warnings had codes",
}

impl Code {
    /// The code named `name`; an unknown name (a newer fsbench's) is `Unclassified`.
    pub fn from_name(name: &str) -> Code {
        Code::ALL.iter().copied().find(|c| c.name() == name).unwrap_or(Code::Unclassified)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Code, D::Error> {
        Ok(Code::from_name(&String::deserialize(d)?))
    }
}

/// One warning: `{"code": "...", "message": "...", "details": [...]}` in
/// JSON (`details` only when there are any).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Warning {
    pub code: Code,
    pub message: String,
    /// The whole list a short message names a few of, or a cut message whole.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
}

impl Warning {
    /// A warning; a message longer than `MAX_CHARS` is cut and kept whole in `details`.
    pub fn new(code: Code, message: impl Into<String>) -> Warning {
        let message = message.into();
        match message.char_indices().nth(MAX_CHARS) {
            Some((cut, _)) => Warning { code, message: format!("{}…", &message[..cut]), details: vec![message] },
            None => Warning { code, message, details: Vec::new() },
        }
    }

    /// A warning with the whole list behind its message.
    pub fn with_details(mut self, details: Vec<String>) -> Warning {
        self.details.extend(details);
        self
    }

    /// The same warning, said of `place` (an experiment's cell).
    pub fn at(&self, place: &str) -> Warning {
        Warning { message: format!("{place}: {}", self.message), ..self.clone() }
    }

    /// The line stderr shows: `warning[CODE]: MESSAGE`.
    pub fn line(&self) -> String {
        format!("warning[{}]: {}", self.code, self.message)
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Results saved before warnings had codes hold plain strings: such a
/// string loads as an `unclassified` warning with the string as message.
impl<'de> Deserialize<'de> for Warning {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Warning, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Saved {
            Text(String),
            Typed {
                code: Code,
                message: String,
                #[serde(default)]
                details: Vec<String>,
            },
        }
        Ok(match Saved::deserialize(d)? {
            Saved::Text(message) => Warning { code: Code::Unclassified, message, details: Vec::new() },
            Saved::Typed { code, message, details } => Warning { code, message, details },
        })
    }
}

/// "a, b, c and N more" (or all of them when there are `FEW` or fewer),
/// each item cut to 40 characters: for a message about many things.
pub fn few<S: AsRef<str>>(items: &[S]) -> String {
    few_of(items, FEW, 40, ", ")
}

/// The first `shown` of `items`, each cut to `width` characters, joined by
/// `sep`, then "and N more" when there are more.
pub fn few_of<S: AsRef<str>>(items: &[S], shown: usize, width: usize, sep: &str) -> String {
    let cut = |s: &str| match s.char_indices().nth(width) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    };
    let named: Vec<String> = items.iter().take(shown).map(|s| cut(s.as_ref())).collect();
    match items.len().saturating_sub(shown) {
        0 => named.join(sep),
        more => format!("{} and {more} more", named.join(sep)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_kebab_case_and_round_trip() {
        let mut names: Vec<&str> = Code::ALL.iter().map(|c| c.name()).collect();
        for n in &names {
            assert!(!n.is_empty() && n.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "{n}");
            assert!(!n.starts_with('-') && !n.ends_with('-') && !n.contains("--"), "{n}");
        }
        for c in Code::ALL {
            let json = serde_json::to_string(c).unwrap();
            assert_eq!(serde_json::from_str::<Code>(&json).unwrap(), *c, "{json}");
            assert!(!c.meaning().is_empty(), "{c}");
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Code::ALL.len(), "two codes share a name");
    }

    #[test]
    fn json_shape_and_old_strings() {
        let w = Warning::new(Code::NoODirect, "x refuses O_DIRECT");
        assert_eq!(serde_json::to_value(&w).unwrap(), serde_json::json!({"code": "no-o-direct", "message": "x refuses O_DIRECT"}));
        let back: Vec<Warning> = serde_json::from_str(r#"["an old warning", {"code": "no-o-direct", "message": "m"}]"#).unwrap();
        assert_eq!(back[0], Warning { code: Code::Unclassified, message: "an old warning".into(), details: vec![] });
        assert_eq!(back[1], Warning::new(Code::NoODirect, "m"));
        let newer: Warning = serde_json::from_str(r#"{"code": "from-a-later-fsbench", "message": "m"}"#).unwrap();
        assert_eq!(newer.code, Code::Unclassified);
    }

    #[test]
    fn long_messages_are_cut_and_kept_whole() {
        let long = "é".repeat(MAX_CHARS * 3);
        let w = Warning::new(Code::Unclassified, long.clone());
        assert_eq!(w.message.chars().count(), MAX_CHARS + 1);
        assert_eq!(w.details, vec![long]);
        let short = Warning::new(Code::Unclassified, "short");
        assert!(short.details.is_empty());
    }

    #[test]
    fn few_names_three_and_counts_the_rest() {
        assert_eq!(few(&["a", "b"]), "a, b");
        assert_eq!(few(&["a", "b", "c"]), "a, b, c");
        let many: Vec<String> = (0..1000).map(|i| format!("job{i}")).collect();
        assert_eq!(few(&many), "job0, job1, job2 and 997 more");
        assert!(few(&["x".repeat(500)]).chars().count() <= 41);
    }

    #[test]
    fn docs_list_every_code_with_its_meaning() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/output.md");
        let doc = std::fs::read_to_string(path).unwrap();
        let table = doc.split("<!-- warning-codes:").nth(1).expect("docs/output.md has the warning-codes table");
        let rows: Vec<&str> = table.lines().skip(3).take_while(|l| l.starts_with("| `")).collect();
        let want: Vec<String> = Code::ALL.iter().map(|c| format!("| `{}` | {} |", c.name(), c.meaning())).collect();
        assert_eq!(rows, want, "docs/output.md's table of warning codes is not Code's (regenerate it from Code::ALL)");
    }
}
