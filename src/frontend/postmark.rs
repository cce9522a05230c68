//! Postmark's command language → `PostmarkPlan`s.
//!
//! A `Session` holds the current configuration and a stack of pending input
//! (a command file, command-line strings, lines typed at the `pm>` prompt,
//! files pulled in by `load`). `next_step` reads until a command produces a
//! step: `run` (the plan as configured at that point, to run at once), `show`
//! and `help` (text), or `quit`. So a driver runs each `run` as soon as it is
//! read, as Postmark does. The frontend reads command files and checks
//! locations; it writes nothing.
//!
//! Commands are Postmark's: `set size LO [HI]`, `set number N`, `set seed N`,
//! `set transactions N`, `set location [+|-]DIR [WEIGHT]`,
//! `set subdirectories N`, `set read N`, `set write N`,
//! `set buffering true|false`, `set bias read N`, `set bias create N`,
//! `set report verbose|terse`, `run [FILE]`, `show [FILE]`, `load FILE`,
//! `help [CMD]` (or `?`), `quit` or `exit`. A word matches a command when it
//! begins with the command's full name (Postmark compares that many
//! characters: `set numbers 9` sets `number`; abbreviations such as `set num`
//! are not commands there either). Case matters, as in Postmark.
//!
//! Where fsbench differs from Postmark 1.53 on purpose:
//! - every mistake is an error with its position, where Postmark prints
//!   "Eh?" or an error and carries on, or silently ignores it: unknown
//!   commands (with the nearest one suggested), non-numbers (Postmark reads
//!   them as 0), extra arguments (ignored there), `set size` with HI < LO
//!   (Postmark makes the size fixed at LO), a bias outside -1..=10, a weight
//!   of 0 (Postmark uses 1), a location that does not exist or is not a
//!   writable directory (Postmark fails only when it runs), removing a
//!   location that is not in the list, `load` of a file already being read;
//! - words may be separated by any run of blanks and tabs, leading blanks
//!   are allowed, and lines whose first non-blank character is `#` are
//!   comments (Postmark needs exactly one space between words and has no
//!   comments);
//! - `set subdirectories 0` is accepted (none, the default; Postmark rejects
//!   0 and needs 1 for none); `set transactions` below 10 works (Postmark
//!   divides by zero drawing its progress dots);
//! - `show FILE` appends the whole configuration to FILE (Postmark writes
//!   its location lines to the screen instead); `!cmd` shell escapes are not
//!   run (an error); the help text is fsbench's own wording;
//! - a location path cannot contain blanks (there is no quoting, as in
//!   Postmark).
//!
//! Values Postmark rejects are rejected too: size, number, seed,
//! transactions, read and write must be at least 1.

use crate::frontend::suggest::nearest;
use crate::model::postmark::{Location, PostmarkPlan, ReportStyle};
use crate::units::clip;
use std::fmt;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

/// What reading commands produced.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// `run [FILE]`: run this plan now; append the report to the file if given.
    Run { plan: PostmarkPlan, append_report_to: Option<PathBuf> },
    /// `show [FILE]` and `help`: text for the user, appended to the file if given.
    Print { text: String, append_to: Option<PathBuf> },
    /// `quit` / `exit`: stop reading commands.
    Quit,
}

/// A mistake in the commands, with where it is: `source` is the command
/// file's path, `command line` or `stdin`; line and column count from 1
/// (line 0: the source as a whole, e.g. a file that cannot be read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostmarkError {
    pub source: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for PostmarkError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.source, self.message)
        } else {
            write!(f, "{}:{}:{}: {}", self.source, self.line, self.col, self.message)
        }
    }
}

impl std::error::Error for PostmarkError {}

/// Source name of strings given on fsbench's command line.
pub const COMMAND_LINE: &str = "command line";
/// Source name of lines read from standard input.
pub const STDIN: &str = "stdin";

/// Nested `load`s deeper than this are refused (cycles are caught earlier).
const MAX_DEPTH: usize = 64;

const COMMANDS: &[&str] = &["set", "run", "show", "load", "help", "quit", "exit", "?"];
const SETTINGS: &[&str] =
    &["size", "number", "seed", "transactions", "location", "subdirectories", "read", "write", "buffering", "bias", "report"];

/// fsbench's help text: (command as typed, what it does).
const HELP: &[(&str, &str)] = &[
    ("set size LOW [HIGH]", "file sizes in bytes: uniform from LOW to HIGH-1 (one value: all files that size)"),
    ("set number N", "files created before the transactions start"),
    ("set seed N", "seed of the random choices"),
    ("set transactions N", "transactions to perform"),
    ("set location DIR [WEIGHT]", "files go to DIR only; +DIR [WEIGHT] adds a directory, -DIR drops one"),
    ("set subdirectories N", "spread the files over N subdirectories of every location"),
    ("set read N", "bytes per read call"),
    ("set write N", "bytes per write call"),
    ("set buffering true|false", "stdio-style buffered calls, or one system call per block"),
    ("set bias read N", "chance in 10 that a transaction reads rather than appends (-1: does neither)"),
    ("set bias create N", "chance in 10 that a transaction creates rather than deletes (-1: does neither)"),
    ("set report verbose|terse", "labelled report, or one line of 13 numbers"),
    ("run [FILE]", "run the benchmark once (the report is appended to FILE if given)"),
    ("load FILE", "read commands from FILE"),
    ("show [FILE]", "print the configuration (appended to FILE if given)"),
    ("help [COMMAND]", "this list, or the entries that start with COMMAND"),
    ("quit", "leave (also: exit)"),
];

struct Frame {
    source: String,
    lines: Vec<String>,
    next: usize,
    first_line: u32,
    /// Canonical path of a command file, to refuse loading it again inside itself.
    file: Option<PathBuf>,
}

/// The configuration so far and the input still to read.
pub struct Session {
    plan: PostmarkPlan,
    frames: Vec<Frame>,
    /// A `set location` has been given (otherwise the current directory is
    /// implied, and `show` prints it by name).
    explicit_locations: bool,
    /// `set location` checks the directory now (Postmark's own behaviour,
    /// relative to the current directory); an experiment's locations are in
    /// a target that is not up yet, and checked there when the run starts.
    check_locations: bool,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

/// One word of a line and the column (in characters, from 1) it starts at.
#[derive(Clone, Copy)]
struct Word<'a> {
    text: &'a str,
    col: u32,
}

/// Where in which source the line being read is.
struct Here<'a> {
    source: &'a str,
    line: u32,
    /// Column just past the line's last word, for missing arguments.
    end_col: u32,
}

impl Here<'_> {
    fn err(&self, col: u32, message: impl Into<String>) -> PostmarkError {
        PostmarkError { source: self.source.to_string(), line: self.line, col, message: message.into() }
    }
}

fn words(line: &str) -> (Vec<Word<'_>>, u32) {
    let mut out = Vec::new();
    let mut start: Option<(usize, u32)> = None;
    let mut col = 0u32;
    for (i, c) in line.char_indices() {
        col = col.saturating_add(1);
        if c == ' ' || c == '\t' {
            if let Some((s, sc)) = start.take() {
                out.push(Word { text: &line[s..i], col: sc });
            }
        } else if start.is_none() {
            start = Some((i, col));
        }
    }
    if let Some((s, sc)) = start {
        out.push(Word { text: &line[s..], col: sc });
    }
    let end = out.last().map(|w| w.col.saturating_add(w.text.chars().count() as u32).saturating_add(1)).unwrap_or(1);
    (out, end)
}

/// Postmark's matching: the word begins with the keyword.
fn find<'k>(word: &str, keywords: &[&'k str]) -> Option<&'k str> {
    keywords.iter().copied().find(|k| word.starts_with(k))
}

fn hint(word: &str, keywords: &[&str]) -> String {
    // An abbreviation first (Postmark takes none), then the nearest spelling.
    let abbreviated = (!word.is_empty()).then(|| keywords.iter().copied().find(|k| k.starts_with(word))).flatten();
    match abbreviated.or_else(|| nearest(word, keywords.iter().copied().filter(|k| *k != "?"), 2)) {
        Some(k) => format!("; did you mean '{k}'?"),
        None => String::new(),
    }
}

fn list(keywords: &[&str]) -> String {
    let k: Vec<&str> = keywords.iter().copied().filter(|k| *k != "?" && *k != "exit").collect();
    match k.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => k.join(""),
    }
}

fn read_text(path: &Path) -> Result<String, String> {
    let bytes = crate::input::read(path, "Postmark command file")?;
    match String::from_utf8(bytes) {
        Ok(t) => Ok(t),
        Err(e) => {
            let good = String::from_utf8_lossy(&e.as_bytes()[..e.utf8_error().valid_up_to()]).into_owned();
            Err(format!("not valid UTF-8 text (line {})", good.matches('\n').count() + 1))
        }
    }
}

impl Session {
    /// Postmark's start-up configuration, nothing to read yet.
    pub fn new() -> Session {
        Session { plan: PostmarkPlan::default(), frames: Vec::new(), explicit_locations: false, check_locations: true }
    }

    /// A session whose `set location` does not look at the directory: it is
    /// relative to a target that is not set up yet.
    pub fn in_target() -> Session {
        Session { check_locations: false, ..Session::new() }
    }

    /// The configuration as set so far.
    pub fn plan(&self) -> &PostmarkPlan {
        &self.plan
    }

    /// Queue a command file (Postmark's first argument). Its lines are read
    /// before anything queued earlier that is still unread.
    pub fn push_file(&mut self, path: &Path) -> Result<(), PostmarkError> {
        let source = path.display().to_string();
        let text = read_text(path).map_err(|m| PostmarkError {
            source: source.clone(),
            line: 0,
            col: 0,
            message: format!("cannot read command file: {m}"),
        })?;
        let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.frames.push(Frame { source, lines: text.lines().map(str::to_string).collect(), next: 0, first_line: 1, file: Some(canon) });
        Ok(())
    }

    /// Queue text whose lines are numbered from `first_line` in `source`
    /// (e.g. `COMMAND_LINE` with one string per line, or one `STDIN` line).
    pub fn push_text(&mut self, source: &str, first_line: u32, text: &str) {
        self.frames.push(Frame {
            source: source.to_string(),
            lines: text.lines().map(str::to_string).collect(),
            next: 0,
            first_line,
            file: None,
        });
    }

    /// Drop everything queued and not yet read.
    pub fn clear_pending(&mut self) {
        self.frames.clear();
    }

    /// Read queued lines until one yields a step. `None`: nothing left to
    /// read. After an error or `quit` the rest of the queued input is dropped.
    pub fn next_step(&mut self) -> Option<Result<Step, PostmarkError>> {
        loop {
            let frame = self.frames.last_mut()?;
            if frame.next >= frame.lines.len() {
                self.frames.pop();
                continue;
            }
            let text = std::mem::take(&mut frame.lines[frame.next]);
            let line = frame.first_line.saturating_add(u32::try_from(frame.next).unwrap_or(u32::MAX));
            frame.next += 1;
            let source = frame.source.clone();
            match self.command(&source, line, &text) {
                Ok(None) => continue,
                Ok(Some(step)) => {
                    if step == Step::Quit {
                        self.frames.clear();
                    }
                    return Some(Ok(step));
                }
                Err(e) => {
                    self.frames.clear();
                    return Some(Err(e));
                }
            }
        }
    }

    /// Execute one line; `Some` when it produced a step.
    fn command(&mut self, source: &str, line: u32, text: &str) -> Result<Option<Step>, PostmarkError> {
        let (w, end_col) = words(text);
        let here = Here { source, line, end_col };
        let Some(first) = w.first() else { return Ok(None) };
        if first.text.starts_with('#') {
            return Ok(None);
        }
        if first.text.starts_with('!') {
            return Err(here.err(first.col, "shell escapes ('!command') are not run by fsbench"));
        }
        let Some(cmd) = find(first.text, COMMANDS) else {
            return Err(here.err(
                first.col,
                format!("unknown command '{}' (expected {}){}", clip(first.text), list(COMMANDS), hint(first.text, COMMANDS)),
            ));
        };
        match cmd {
            "set" => {
                self.set(&here, &w)?;
                Ok(None)
            }
            "run" => {
                let file = optional_file(&here, &w, "run")?;
                Ok(Some(Step::Run { plan: self.plan.clone(), append_report_to: file }))
            }
            "show" => {
                let file = optional_file(&here, &w, "show")?;
                let cwd = (!self.explicit_locations).then(|| std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
                Ok(Some(Step::Print { text: show::show(&self.plan, cwd.as_deref()), append_to: file }))
            }
            "help" | "?" => Ok(Some(Step::Print { text: help(&here, &w[1..])?, append_to: None })),
            "quit" | "exit" => {
                no_more(&here, &w, 1, cmd)?;
                Ok(Some(Step::Quit))
            }
            _ => {
                // load
                let Some(arg) = w.get(1) else { return Err(here.err(here.end_col, "'load' needs the name of a command file")) };
                no_more(&here, &w, 2, "load FILE")?;
                self.load(&here, arg)?;
                Ok(None)
            }
        }
    }

    fn load(&mut self, here: &Here<'_>, arg: &Word<'_>) -> Result<(), PostmarkError> {
        let path = Path::new(arg.text);
        let text = read_text(path).map_err(|m| here.err(arg.col, format!("cannot read command file '{}': {m}", clip(arg.text))))?;
        let canon = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(i) = self.frames.iter().position(|f| f.file.as_ref() == Some(&canon)) {
            let chain: Vec<&str> = self.frames[i..].iter().map(|f| f.source.as_str()).chain([arg.text]).collect();
            return Err(
                here.err(arg.col, format!("'load {}' would read a file that is already being read: {}", arg.text, chain.join(" → ")))
            );
        }
        if self.frames.len() >= MAX_DEPTH {
            return Err(here.err(arg.col, format!("'load' nested more than {MAX_DEPTH} files deep")));
        }
        self.frames.push(Frame {
            source: arg.text.to_string(),
            lines: text.lines().map(str::to_string).collect(),
            next: 0,
            first_line: 1,
            file: Some(canon),
        });
        Ok(())
    }

    fn set(&mut self, here: &Here<'_>, w: &[Word<'_>]) -> Result<(), PostmarkError> {
        let Some(what) = w.get(1) else {
            return Err(here.err(here.end_col, format!("'set' needs a setting: {}", list(SETTINGS))));
        };
        let Some(key) = find(what.text, SETTINGS) else {
            return Err(here.err(
                what.col,
                format!("unknown setting '{}' (expected {}){}", clip(what.text), list(SETTINGS), hint(what.text, SETTINGS)),
            ));
        };
        let args = &w[2..];
        let p = &mut self.plan;
        match key {
            "size" => {
                let lo = number(here, args.first(), "set size", "the smallest file size in bytes", 1)?;
                let hi = match args.get(1) {
                    Some(h) => {
                        let hi = number(here, Some(h), "set size", "the largest file size in bytes", 1)?;
                        if hi < lo {
                            return Err(here.err(
                                h.col,
                                format!("size range {lo} to {hi}: the high bound is below the low one (Postmark would silently make every file {lo} bytes; write 'set size {lo}' for that)"),
                            ));
                        }
                        hi
                    }
                    None => lo,
                };
                no_more(here, w, 4, "set size LOW [HIGH]")?;
                p.size_low = lo;
                p.size_high = hi;
            }
            "number" => p.number = one_number(here, w, "set number", "the number of files", 1)?,
            "seed" => p.seed = one_number(here, w, "set seed", "the seed", 1)?,
            "transactions" => p.transactions = one_number(here, w, "set transactions", "the number of transactions", 1)?,
            "subdirectories" => p.subdirectories = one_number(here, w, "set subdirectories", "the number of subdirectories", 0)?,
            "read" => p.read_block = block(here, w, "set read", "the read block size in bytes")?,
            "write" => p.write_block = block(here, w, "set write", "the write block size in bytes")?,
            "buffering" => {
                let v = word(here, args.first(), "set buffering", "true or false")?;
                p.buffering = match v.text {
                    "true" => true,
                    "false" => false,
                    other => return Err(here.err(v.col, format!("'set buffering' takes true or false, not '{other}'"))),
                };
                no_more(here, w, 3, "set buffering true|false")?;
            }
            "report" => {
                let v = word(here, args.first(), "set report", "verbose or terse")?;
                p.report = match v.text {
                    "verbose" => ReportStyle::Verbose,
                    "terse" => ReportStyle::Terse,
                    other => return Err(here.err(v.col, format!("'set report' takes verbose or terse, not '{other}'"))),
                };
                no_more(here, w, 3, "set report verbose|terse")?;
            }
            "bias" => {
                let which = word(here, args.first(), "set bias", "read or create")?;
                let Some(kind) = find(which.text, &["read", "create"]) else {
                    return Err(here.err(
                        which.col,
                        format!("'set bias' takes read or create, not '{}'{}", clip(which.text), hint(which.text, &["read", "create"])),
                    ));
                };
                let v = word(here, args.get(1), &format!("set bias {kind}"), "a bias from 0 to 10, or -1")?;
                let bias = v.text.parse::<i64>().ok().filter(|b| (-1..=10).contains(b)).ok_or_else(|| {
                    here.err(
                        v.col,
                        format!(
                            "'set bias {kind}' takes 0 to 10 (chances out of 10), or -1 to turn that choice off; found '{}'",
                            clip(v.text)
                        ),
                    )
                })?;
                no_more(here, w, 4, &format!("set bias {kind} N"))?;
                if kind == "read" {
                    p.bias_read = bias as i32;
                } else {
                    p.bias_create = bias as i32;
                }
            }
            _ => self.location(here, w)?,
        }
        Ok(())
    }

    /// `set location DIR [W]` replaces the list, `+DIR [W]` adds to it,
    /// `-DIR` removes DIR from it. Until a location is set the list is
    /// Postmark's implicit current directory, which `+DIR` replaces and
    /// `-DIR` cannot remove; removing the last location restores it.
    fn location(&mut self, here: &Here<'_>, w: &[Word<'_>]) -> Result<(), PostmarkError> {
        let dir = word(here, w.get(2), "set location", "a directory")?;
        if let Some(name) = dir.text.strip_prefix('-') {
            no_more(here, w, 3, "set location -DIR")?;
            let path = PathBuf::from(name);
            let found = if self.explicit_locations { self.plan.locations.iter().position(|l| l.path == path) } else { None };
            let Some(i) = found else {
                let have: Vec<String> = self.plan.locations.iter().map(|l| l.path.display().to_string()).collect();
                let have = if self.explicit_locations { have.join(", ") } else { "none set".to_string() };
                return Err(here.err(dir.col, format!("location '{name}' is not in the list ({have})")));
            };
            self.plan.locations.remove(i);
            if self.plan.locations.is_empty() {
                self.plan.locations = PostmarkPlan::default().locations;
                self.explicit_locations = false;
            }
            return Ok(());
        }
        let (add, name) = match dir.text.strip_prefix('+') {
            Some(n) => (true, n),
            None => (false, dir.text),
        };
        if name.is_empty() {
            return Err(here.err(dir.col.saturating_add(1), "'set location' needs a directory name after '+'"));
        }
        let weight = match w.get(3) {
            Some(x) => {
                let n = number(here, Some(x), "set location", "a weight", 1)?;
                u32::try_from(n).map_err(|_| here.err(x.col, format!("weight {n} is too large (at most {})", u32::MAX)))?
            }
            None => 1,
        };
        no_more(here, w, 4, "set location DIR [WEIGHT]")?;
        let path = PathBuf::from(name);
        if self.check_locations {
            check_dir(&path).map_err(|m| here.err(dir.col, format!("location '{name}' {m}")))?;
        }
        let loc = Location { path, weight };
        if add && self.explicit_locations {
            self.plan.locations.push(loc);
        } else {
            self.plan.locations = vec![loc];
        }
        self.explicit_locations = true;
        Ok(())
    }
}

/// Blocks above this are refused: fsbench allocates one buffer of the size.
const MAX_BLOCK: u64 = 1 << 30;

fn block(here: &Here<'_>, w: &[Word<'_>], cmd: &str, what: &str) -> Result<u64, PostmarkError> {
    let n = one_number(here, w, cmd, what, 1)?;
    if n > MAX_BLOCK {
        return Err(here.err(w[2].col, format!("'{cmd}': {n} bytes is more than fsbench allows for a block ({MAX_BLOCK})")));
    }
    Ok(n)
}

fn check_dir(path: &Path) -> Result<(), String> {
    use std::os::unix::ffi::OsStrExt;
    let md = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "does not exist".to_string(),
        _ => format!("cannot be examined: {e}"),
    })?;
    if !md.is_dir() {
        return Err("is not a directory".into());
    }
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(|_| "contains a NUL byte".to_string())?;
    // SAFETY: c is a valid NUL-terminated string for the call's duration.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(format!("is not writable ({})", std::io::Error::last_os_error()));
    }
    Ok(())
}

fn word<'a>(here: &Here<'_>, w: Option<&Word<'a>>, cmd: &str, what: &str) -> Result<Word<'a>, PostmarkError> {
    w.copied().ok_or_else(|| here.err(here.end_col, format!("'{cmd}' needs {what}")))
}

fn number(here: &Here<'_>, w: Option<&Word<'_>>, cmd: &str, what: &str, min: u64) -> Result<u64, PostmarkError> {
    let w = word(here, w, cmd, what)?;
    let n: u64 = w.text.parse().map_err(|_| {
        if !w.text.is_empty() && w.text.bytes().all(|b| b.is_ascii_digit()) {
            here.err(w.col, format!("'{cmd}': {} is too large", w.text))
        } else {
            here.err(w.col, format!("'{cmd}' needs {what} as a whole number, found '{}'", clip(w.text)))
        }
    })?;
    if n < min {
        return Err(here.err(w.col, format!("'{cmd}' needs {what} of at least {min}, found {n}")));
    }
    Ok(n)
}

/// `set KEY N` with nothing after N.
fn one_number(here: &Here<'_>, w: &[Word<'_>], cmd: &str, what: &str, min: u64) -> Result<u64, PostmarkError> {
    let n = number(here, w.get(2), cmd, what, min)?;
    no_more(here, w, 3, &format!("{cmd} N"))?;
    Ok(n)
}

/// Words from index `max` on are extra.
fn no_more(here: &Here<'_>, w: &[Word<'_>], max: usize, usage: &str) -> Result<(), PostmarkError> {
    match w.get(max) {
        Some(x) => Err(here.err(x.col, format!("unexpected '{}': the command is '{usage}'", clip(x.text)))),
        None => Ok(()),
    }
}

fn optional_file(here: &Here<'_>, w: &[Word<'_>], cmd: &str) -> Result<Option<PathBuf>, PostmarkError> {
    no_more(here, w, 2, &format!("{cmd} [FILE]"))?;
    Ok(w.get(1).map(|f| PathBuf::from(f.text)))
}

fn help(here: &Here<'_>, topic: &[Word<'_>]) -> Result<String, PostmarkError> {
    let query: Vec<&str> = topic.iter().map(|w| w.text).collect();
    let query = query.join(" ");
    let width = HELP.iter().map(|(c, _)| c.len()).max().unwrap_or(0);
    let mut s = String::new();
    for (cmd, what) in HELP {
        if cmd.starts_with(&query) || (query == "exit" && *cmd == "quit") {
            s.push_str(&format!("{cmd:<width$}  {what}\n"));
        }
    }
    if s.is_empty() {
        let first = topic.first().map(|w| w.text).unwrap_or_default();
        let col = topic.first().map(|w| w.col).unwrap_or(here.end_col);
        return Err(here.err(col, format!("no help for '{query}' (commands: {}){}", list(COMMANDS), hint(first, COMMANDS))));
    }
    Ok(s)
}

/// Every step of `text` (no interaction): for tests and scripted use.
/// Stops at `quit`.
pub fn steps(source: &str, text: &str) -> Result<Vec<Step>, PostmarkError> {
    let mut s = Session::new();
    s.push_text(source, 1, text);
    let mut out = Vec::new();
    while let Some(step) = s.next_step() {
        let step = step?;
        let quit = step == Step::Quit;
        out.push(step);
        if quit {
            break;
        }
    }
    Ok(out)
}

/// Postmark's prompt loop: read `input` line by line (source `STDIN`),
/// writing the `pm>` prompt to `prompt` before each line when given (a
/// driver passes stderr when stdin is a terminal, and nothing otherwise).
/// Each step goes to `on_step`, each error to `on_error`; either returns
/// false to stop (true after an error carries on, as Postmark's prompt
/// does). Returns at `quit`, at the end of input, or when reading fails.
pub fn interact(
    session: &mut Session,
    input: &mut dyn BufRead,
    mut prompt: Option<&mut dyn Write>,
    on_step: &mut dyn FnMut(Step) -> bool,
    on_error: &mut dyn FnMut(PostmarkError) -> bool,
) -> std::io::Result<()> {
    let mut line_no = 0u32;
    let mut buf = Vec::new();
    loop {
        // Steps queued before the prompt (a command file) run first.
        while let Some(step) = session.next_step() {
            match step {
                Ok(Step::Quit) => return Ok(()),
                Ok(step) => {
                    if !on_step(step) {
                        return Ok(());
                    }
                }
                Err(e) => {
                    if !on_error(e) {
                        return Ok(());
                    }
                }
            }
        }
        if let Some(p) = prompt.as_mut() {
            p.write_all(b"pm>")?;
            p.flush()?;
        }
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            return Ok(());
        }
        line_no = line_no.saturating_add(1);
        let text = String::from_utf8_lossy(&buf);
        let text = text.trim_end_matches(['\n', '\r']);
        // An empty line still needs a frame of its own to keep numbering.
        session.push_text(STDIN, line_no, if text.is_empty() { " " } else { text });
    }
}

mod family;
mod show;
#[cfg(test)]
mod tests;

pub use family::{Postmark, LAYOUT};
