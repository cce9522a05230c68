//! The crate's top-level modules form layers, checked here rather than
//! remembered. Bottom to top (`LAYERS`):
//!
//! ```text
//! units · input · model · measure · result · host · ioengine · kvstore · observe
//!       · environment · stats · frontend · report · runner · cli
//! ```
//!
//! `result` sits just above `measure` (whose histograms it holds) and below
//! everything that acts on the machine: the result owns every record its
//! JSON holds, those of the machine and the environment included (the
//! device counters and `DeviceReport`, the process's I/O, the block trace's
//! capture, summary and analysis, `TargetRecord`, `CacheReport`,
//! `BackgroundReport`, `SystemInfo`), and `host`, `observe` and
//! `environment` fill them in as they read and act, so no record depends on
//! the code that reads /proc, /sys or tracefs, sets targets, caches and
//! loads up.
//!
//! A module may use only modules below it: an edge that goes up (stats →
//! frontend, ioengine → environment, measure → ioengine) fails. Some edges
//! that go down are refused as well, because a module sits above another
//! for one reason and must still not lean on it for another (a frontend
//! sits above environment to read experiment files but never touches the
//! system): those are `EXCEPTIONS`, each with its reason. Every top-level
//! module must have its place in `LAYERS`, so a new one is placed on
//! purpose.
//!
//! Every file under `src/` belongs to its top-level module (`src/x.rs` or
//! `src/x/**`; `lib.rs` and `main.rs` are the crate root and exempt). Each
//! reference to another top-level module is an edge: `use crate::x`, grouped
//! `use crate::{a, b::c}` (nested, over several lines), and inline paths
//! `crate::x::...` anywhere in code, `#[cfg(test)]` code included. Comments
//! and string literals do not count; `self::`/`super::` stay inside a module.
//!
//! The test fails, naming FILE:LINE, when an edge goes up the order or is
//! an exception, or when the module graph has a cycle (it prints the cycle
//! with one FILE:LINE per edge; a cycle always holds an edge that goes up,
//! reported as well). Run with `--nocapture` to see every edge.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, bottom to top: each module may use only those before it.
const LAYERS: &[&str] = &[
    "units",
    "input",
    "model",
    "measure",
    "result",
    "host",
    "ioengine",
    "kvstore",
    "observe",
    "environment",
    "stats",
    "frontend",
    "report",
    "runner",
    "cli",
];

/// Which modules below it a module may not use all the same.
enum Refused {
    /// None of the crate's modules (a leaf).
    All,
    /// Every module but these.
    AllBut(&'static [&'static str]),
    /// These.
    Only(&'static [&'static str]),
}

/// Downward edges refused anyway, with why: what the order alone would let through.
const EXCEPTIONS: &[(&str, Refused, &str)] = &[
    ("units", Refused::All, "units is the leaf: it imports nothing from the crate"),
    ("input", Refused::All, "input reads text and imports nothing from the crate"),
    ("model", Refused::All, "model imports nothing else from the crate"),
    (
        "host",
        Refused::AllBut(&["units", "result"]),
        "host imports nothing from the crate but units and result (the records it reads the machine into)",
    ),
    ("kvstore", Refused::Only(&["ioengine"]), "a store is below the runner: it knows only the model, units, host and measure"),
    (
        "frontend",
        Refused::Only(&["ioengine", "kvstore", "environment"]),
        "a frontend translates input into the model; it never runs, issues I/O or touches the system",
    ),
    (
        "stats",
        Refused::Only(&["ioengine", "kvstore", "environment"]),
        "statistics are drawn from results alone; they never run, issue I/O or touch the system",
    ),
    ("runner", Refused::Only(&["frontend"]), "the runner executes the model; it never parses a peer's syntax"),
    ("report", Refused::Only(&["ioengine", "kvstore"]), "a reporter renders results; it never runs or issues I/O"),
];

/// Edges that break the layering today and are being removed by work in
/// progress elsewhere. They are exempt from the rules and from the cycle
/// check. THIS LIST MUST SHRINK TO EMPTY: remove an entry when its edge is
/// gone (the test fails on an entry whose edge no longer occurs), never add
/// one to get a new edge through.
const KNOWN_VIOLATIONS: &[(&str, &str)] = &[];

/// Why `from` may not use `to`, or None when it may (cycles are checked apart).
fn forbidden(from: &str, to: &str) -> Option<String> {
    let place = |m: &str| LAYERS.iter().position(|l| *l == m);
    let (Some(f), Some(t)) = (place(from), place(to)) else {
        return Some(format!("LAYERS places no module '{}': give it its layer", if place(from).is_none() { from } else { to }));
    };
    if t > f {
        return Some(format!("{to} is above {from} in LAYERS: a module uses only the layers below it"));
    }
    EXCEPTIONS.iter().find_map(|(m, refused, why)| {
        let hit = *m == from
            && match refused {
                Refused::All => true,
                Refused::AllBut(allowed) => !allowed.contains(&to),
                Refused::Only(these) => these.contains(&to),
            };
        hit.then(|| why.to_string())
    })
}

/// Where a reference is: file relative to the crate root, and line.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Site {
    file: String,
    line: usize,
}

impl std::fmt::Display for Site {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// Every edge between two top-level modules with every place it occurs.
type Graph = BTreeMap<(String, String), Vec<Site>>;

// ---------------------------------------------------------------- parsing

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The text with comments, string and character literals blanked out
/// (newlines kept, so line numbers stay), leaving only code.
fn code_only(src: &str) -> String {
    let s: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        let next = s.get(i + 1).copied();
        let prev_ident = i > 0 && is_ident(s[i - 1]);
        // Line comment (doc comments included).
        if c == '/' && next == Some('/') {
            while i < s.len() && s[i] != '\n' {
                out.push(' ');
                i += 1;
            }
            continue;
        }
        // Block comment; they nest.
        if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < s.len() {
                if s[i] == '/' && s.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if s[i] == '*' && s.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, s[i]);
                    i += 1;
                }
            }
            continue;
        }
        // Raw strings: r"..", r#".."#, br"..", cr#".."#.
        if !prev_ident && (c == 'r' || ((c == 'b' || c == 'c') && next == Some('r'))) {
            let start = if c == 'r' { i + 1 } else { i + 2 };
            let mut j = start;
            while s.get(j) == Some(&'#') {
                j += 1;
            }
            if s.get(j) == Some(&'"') {
                let hashes = j - start;
                for &ch in &s[i..=j] {
                    blank(&mut out, ch);
                }
                i = j + 1;
                while i < s.len() {
                    if s[i] == '"' && (0..hashes).all(|k| s.get(i + 1 + k) == Some(&'#')) {
                        for _ in 0..=hashes {
                            out.push(' ');
                        }
                        i += 1 + hashes;
                        break;
                    }
                    blank(&mut out, s[i]);
                    i += 1;
                }
                continue;
            }
        }
        // Strings: "..", b"..", c"..", with escapes.
        if c == '"' {
            out.push(' ');
            i += 1;
            while i < s.len() && s[i] != '"' {
                if s[i] == '\\' && i + 1 < s.len() {
                    blank(&mut out, s[i]);
                    i += 1;
                }
                blank(&mut out, s[i]);
                i += 1;
            }
            out.push(' ');
            i += 1;
            continue;
        }
        // Character literals ('x', '\n', '\u{1F600}', b'"'); a lifetime or a
        // label ('a, 'static) has no closing quote right after its first char.
        if c == '\'' {
            // The escaped character (at i + 2) is never the closing quote.
            let lit_end = if next == Some('\\') {
                (i + 3..s.len()).find(|&j| s[j] == '\'')
            } else if s.get(i + 2) == Some(&'\'') {
                Some(i + 2)
            } else {
                None
            };
            if let Some(end) = lit_end {
                for &ch in &s[i..=end] {
                    blank(&mut out, ch);
                }
                i = end + 1;
                continue;
            }
        }
        out.push(c);
        i += 1;
    }
    out
}

/// The top-level modules a piece of Rust refers to through `crate::`, each
/// with the line of the reference (1-based). Names that are not in `modules`
/// (items of the crate root) are left out.
fn crate_refs(src: &str, modules: &BTreeSet<String>) -> Vec<(String, usize)> {
    let code: Vec<char> = code_only(src).chars().collect();
    let line_at = |pos: usize| 1 + code[..pos].iter().filter(|&&c| c == '\n').count();
    let skip_ws = |mut j: usize| {
        while j < code.len() && code[j].is_whitespace() {
            j += 1;
        }
        j
    };
    let ident_at = |j: usize| -> (String, usize) {
        let mut k = j;
        while k < code.len() && is_ident(code[k]) {
            k += 1;
        }
        (code[j..k].iter().collect(), k)
    };
    let mut out = Vec::new();
    let mut i = 0;
    while i + 5 <= code.len() {
        let boundary_before = i == 0 || !is_ident(code[i - 1]);
        let boundary_after = code.get(i + 5).is_none_or(|&c| !is_ident(c));
        if code[i..i + 5] != ['c', 'r', 'a', 't', 'e'] || !boundary_before || !boundary_after {
            i += 1;
            continue;
        }
        let j = skip_ws(i + 5);
        if code.get(j) != Some(&':') || code.get(j + 1) != Some(&':') {
            i += 5; // `pub(crate)`, `crate` as a visibility or the root path alone
            continue;
        }
        let j = skip_ws(j + 2);
        if code.get(j) == Some(&'{') {
            group(&code, j, &mut |name, pos| {
                if modules.contains(name) {
                    out.push((name.to_string(), line_at(pos)));
                }
            });
        } else {
            let (name, _) = ident_at(j);
            if modules.contains(&name) {
                out.push((name, line_at(j)));
            }
        }
        i = j;
    }
    out
}

/// The first path segment of every item of the `{...}` group opening at
/// `open` (nested groups belong to their item).
fn group(code: &[char], open: usize, found: &mut dyn FnMut(&str, usize)) {
    let mut depth = 0;
    let mut at_item_start = true;
    let mut j = open;
    while j < code.len() {
        let c = code[j];
        match c {
            '{' => {
                depth += 1;
                if depth == 1 {
                    at_item_start = true;
                }
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return;
                }
            }
            ',' if depth == 1 => at_item_start = true,
            c if c.is_whitespace() => {}
            c if depth == 1 && at_item_start && is_ident(c) => {
                let mut k = j;
                while k < code.len() && is_ident(code[k]) {
                    k += 1;
                }
                let name: String = code[j..k].iter().collect();
                found(&name, j);
                at_item_start = false;
                j = k;
                continue;
            }
            _ if depth == 1 => at_item_start = false,
            _ => {}
        }
        j += 1;
    }
}

// ---------------------------------------------------------------- the crate

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).expect("src is readable").map(|e| e.expect("dir entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// `src/x.rs` and `src/x/` name the top-level modules.
fn top_level_modules(src: &Path) -> BTreeSet<String> {
    let mut m = BTreeSet::new();
    for e in std::fs::read_dir(src).expect("src is readable") {
        let p = e.expect("dir entry").path();
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
        if p.is_dir() || (p.extension().is_some_and(|e| e == "rs") && stem != "lib" && stem != "main") {
            m.insert(stem);
        }
    }
    m
}

/// The top-level module a file belongs to; None for the crate root.
fn module_of(rel: &Path) -> Option<String> {
    let mut parts = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned());
    let first = parts.next()?;
    if parts.next().is_some() {
        return Some(first);
    }
    let stem = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (stem != "lib" && stem != "main").then_some(stem)
}

fn crate_graph() -> (BTreeSet<String>, Graph) {
    let src = src_dir();
    let modules = top_level_modules(&src);
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut graph = Graph::new();
    for f in files {
        let rel = f.strip_prefix(&src).expect("under src").to_path_buf();
        let Some(from) = module_of(&rel) else { continue };
        let text = std::fs::read_to_string(&f).expect("source is readable");
        for (to, line) in crate_refs(&text, &modules) {
            if to != from {
                let site = Site { file: format!("src/{}", rel.display()), line };
                graph.entry((from.clone(), to)).or_default().push(site);
            }
        }
    }
    (modules, graph)
}

/// A cycle through the edges of `graph`, as a list of (from, to) edges.
fn find_cycle(nodes: &BTreeSet<String>, edges: &BTreeSet<(String, String)>) -> Option<Vec<(String, String)>> {
    // Depth-first search with the path on a stack; a back edge closes a cycle.
    fn visit(
        n: &str,
        edges: &BTreeSet<(String, String)>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<(String, String)>> {
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for (_, to) in edges.iter().filter(|(f, _)| f == n) {
            match state.get(to).copied().unwrap_or(0) {
                1 => {
                    let start = path.iter().position(|p| p == to).expect("on the path");
                    let mut cyc: Vec<(String, String)> = path[start..].windows(2).map(|w| (w[0].clone(), w[1].clone())).collect();
                    cyc.push((n.to_string(), to.clone()));
                    return Some(cyc);
                }
                0 => {
                    if let Some(c) = visit(to, edges, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in nodes {
        if state.get(n).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(n, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

/// Every way `graph` breaks the layering, one message each, naming FILE:LINE.
fn violations(modules: &BTreeSet<String>, graph: &Graph) -> Vec<String> {
    let known = |from: &str, to: &str| KNOWN_VIOLATIONS.contains(&(from, to));
    let mut failures: Vec<String> = Vec::new();
    for ((from, to), sites) in graph {
        if known(from, to) {
            continue;
        }
        if let Some(why) = forbidden(from, to) {
            let mut msg = format!("{from} -> {to} is forbidden ({why}):");
            for s in sites {
                msg.push_str(&format!("\n    {s}"));
            }
            failures.push(msg);
        }
    }
    for (from, to) in KNOWN_VIOLATIONS {
        if !graph.contains_key(&(from.to_string(), to.to_string())) {
            failures.push(format!(
                "KNOWN_VIOLATIONS lists {from} -> {to}, which no longer occurs: remove the entry so the edge cannot come back"
            ));
        }
    }
    let edges: BTreeSet<(String, String)> = graph.keys().filter(|(f, t)| !known(f, t)).cloned().collect();
    if let Some(cycle) = find_cycle(modules, &edges) {
        let mut msg = String::from("the module graph has a cycle:");
        for (from, to) in &cycle {
            msg.push_str(&format!("\n    {from} -> {to} at {}", graph[&(from.clone(), to.clone())][0]));
        }
        failures.push(msg);
    }
    failures
}

#[test]
fn top_level_modules_form_layers() {
    let (modules, graph) = crate_graph();
    assert!(modules.contains("model") && modules.contains("runner"), "module discovery found {modules:?}");

    println!("top-level module edges (from -> to: first reference, number of references):");
    for ((from, to), sites) in &graph {
        let mark = if KNOWN_VIOLATIONS.contains(&(from.as_str(), to.as_str())) { "  [KNOWN_VIOLATIONS]" } else { "" };
        println!("  {from} -> {to}: {} ({}){mark}", sites[0], sites.len());
    }

    let mut failures = violations(&modules, &graph);
    let layers: BTreeSet<String> = LAYERS.iter().map(|s| s.to_string()).collect();
    for m in modules.difference(&layers) {
        failures.push(format!("src/{m}: a top-level module LAYERS does not place: give it its layer"));
    }
    for m in layers.difference(&modules) {
        failures.push(format!("LAYERS names '{m}', which is no top-level module under src/: remove it"));
    }
    assert_eq!(layers.len(), LAYERS.len(), "LAYERS names a module twice");
    for (m, _, _) in EXCEPTIONS {
        assert!(layers.contains(*m), "EXCEPTIONS names '{m}', which LAYERS does not place");
    }
    assert!(failures.is_empty(), "layering violations:\n  {}", failures.join("\n  "));
}

/// A graph of the given edges, each at a made-up site.
fn synthetic(edges: &[(&str, &str)]) -> (BTreeSet<String>, Graph) {
    let mut graph = Graph::new();
    for (i, (f, t)) in edges.iter().enumerate() {
        let site = Site { file: format!("src/{f}/x.rs"), line: i + 1 };
        graph.entry((f.to_string(), t.to_string())).or_default().push(site);
    }
    let modules = LAYERS.iter().map(|s| s.to_string()).collect();
    (modules, graph)
}

#[test]
fn the_order_refuses_upward_edges_and_the_exceptions() {
    // Downward edges the order allows.
    let (m, g) = synthetic(&[
        ("stats", "result"),
        ("runner", "ioengine"),
        ("host", "units"),
        ("host", "result"),
        ("observe", "result"),
        ("result", "measure"),
        ("cli", "frontend"),
    ]);
    assert_eq!(violations(&m, &g), Vec::<String>::new());
    // Upward edges, each refused at its site; a result never leans on what
    // reads or acts on the machine.
    let upward = [
        ("stats", "frontend"),
        ("ioengine", "environment"),
        ("measure", "ioengine"),
        ("measure", "host"),
        ("result", "host"),
        ("result", "observe"),
        ("result", "ioengine"),
        ("result", "kvstore"),
        ("result", "environment"),
    ];
    for (i, (from, to)) in upward.into_iter().enumerate() {
        let (m, g) = synthetic(&[("cli", "runner"), (from, to)]);
        let v = violations(&m, &g);
        assert_eq!(v.len(), 1, "{from} -> {to}: {v:?}");
        assert!(v[0].starts_with(&format!("{from} -> {to} is forbidden ({to} is above {from}")), "{}", v[0]);
        assert!(v[0].contains(&format!("src/{from}/x.rs:2")), "{} (case {i})", v[0]);
    }
    // Downward edges refused by an exception, with its reason.
    for (from, to, why) in [
        ("frontend", "environment", "never runs, issues I/O or touches the system"),
        ("model", "units", "imports nothing else"),
        ("host", "input", "nothing from the crate but units and result"),
        ("host", "measure", "nothing from the crate but units and result"),
        ("runner", "frontend", "never parses a peer's syntax"),
    ] {
        let (m, g) = synthetic(&[(from, to)]);
        let v = violations(&m, &g);
        assert!(v.len() == 1 && v[0].contains(why) && v[0].contains(&format!("src/{from}/x.rs:1")), "{from} -> {to}: {v:?}");
    }
    // A module the order does not place.
    assert!(forbidden("newmod", "units").is_some_and(|w| w.contains("newmod")));
    // An upward edge closing a cycle is reported both ways.
    let (m, g) = synthetic(&[("report", "stats"), ("stats", "report")]);
    let v = violations(&m, &g);
    assert!(v.iter().any(|x| x.starts_with("stats -> report is forbidden")), "{v:?}");
    assert!(v.iter().any(|x| x.starts_with("the module graph has a cycle")), "{v:?}");
}

// ---------------------------------------------------------------- the parser

fn mods(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

fn refs(src: &str) -> Vec<(String, usize)> {
    crate_refs(src, &mods(&["model", "runner", "frontend", "report", "units", "host"]))
}

fn pairs(v: &[(&str, usize)]) -> Vec<(String, usize)> {
    v.iter().map(|(m, l)| (m.to_string(), *l)).collect()
}

#[test]
fn parser_plain_and_inline_paths() {
    assert_eq!(refs("use crate::model::job::JobSpec;\n"), pairs(&[("model", 1)]));
    assert_eq!(refs("fn f() {\n    let x = crate::runner::rng::Rng::new(1);\n}\n"), pairs(&[("runner", 2)]));
    assert_eq!(refs("type T = Vec<crate::report::OutputFormat>;"), pairs(&[("report", 1)]));
    assert_eq!(refs("use crate :: units :: bytes;"), pairs(&[("units", 1)]));
    assert_eq!(refs("use crate::model as m;"), pairs(&[("model", 1)]));
    // Not modules, or not the crate.
    assert!(refs("use crate::VERSION;\nuse mycrate::model;\nuse super::model;\nuse self::runner;\n").is_empty());
    assert!(refs("let notcrate::model = 1;").is_empty());
}

#[test]
fn parser_grouped_uses() {
    assert_eq!(refs("use crate::{model, runner::RunOptions};"), pairs(&[("model", 1), ("runner", 1)]));
    let multi = "use crate::{\n    model::{job::JobSpec, Plan},\n    report::{self, format::bytes},\n    units,\n};\n";
    assert_eq!(refs(multi), pairs(&[("model", 2), ("report", 3), ("units", 4)]));
    // `self` in the root group and unknown names are skipped; nested groups belong to their item.
    assert_eq!(refs("use crate::{self, model::{runner, report}};"), pairs(&[("model", 1)]));
}

#[test]
fn parser_visibility_forms() {
    assert_eq!(refs("pub(crate) use crate::host::is_root;"), pairs(&[("host", 1)]));
    assert_eq!(refs("pub(crate) fn f() {}\npub(in crate::model) struct S;\n"), pairs(&[("model", 2)]));
    assert!(refs("pub(crate) mod x;\npub(crate) struct Y;").is_empty());
}

#[test]
fn parser_skips_comments_and_strings() {
    let src = r####"
// use crate::runner;
/// Calls crate::runner::execute.
//! crate::report is above.
/* crate::frontend /* nested crate::units */ still comment crate::host */
let a = "crate::runner::x";
let b = "escaped \" crate::runner";
let c = r"crate::frontend";
let d = r#"crate::report " still raw"#;
let e = br##"crate::units "# still raw"##;
let f = b"crate::host";
let g = '"'; let h = '\''; let i = b'"';
use crate::model;
"####;
    assert_eq!(refs(src), pairs(&[("model", 13)]));
}

#[test]
fn parser_tells_lifetimes_from_char_literals() {
    let src = "fn f<'a>(x: &'a str) -> &'static str { let c = 'x'; 'outer: loop { break 'outer; } crate::units::bytes(1) }";
    assert_eq!(refs(src), pairs(&[("units", 1)]));
    // A lifetime followed by a string must not hide the string's end.
    assert_eq!(refs("fn g<'a>() -> &'a str { \"crate::runner\" }\nuse crate::host;"), pairs(&[("host", 2)]));
}

#[test]
fn module_of_files_and_cycles() {
    assert_eq!(module_of(Path::new("runner/flow/mod.rs")).as_deref(), Some("runner"));
    assert_eq!(module_of(Path::new("units.rs")).as_deref(), Some("units"));
    assert_eq!(module_of(Path::new("units/expr.rs")).as_deref(), Some("units"));
    assert_eq!(module_of(Path::new("lib.rs")), None);
    assert_eq!(module_of(Path::new("main.rs")), None);
    let e = |v: &[(&str, &str)]| v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect::<BTreeSet<_>>();
    let nodes = mods(&["a", "b", "c"]);
    assert_eq!(find_cycle(&nodes, &e(&[("a", "b"), ("b", "c")])), None);
    let c = find_cycle(&nodes, &e(&[("a", "b"), ("b", "c"), ("c", "a")])).expect("a cycle");
    assert_eq!(c.len(), 3);
    assert!(c.iter().all(|(f, t)| e(&[("a", "b"), ("b", "c"), ("c", "a")]).contains(&(f.clone(), t.clone()))));
}
