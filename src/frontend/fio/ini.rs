//! The job-file reader: bytes → a flat list of section headers and options,
//! each with its file, line and column, with `include` lines resolved.
//!
//! Line rules (fio's, made precise):
//! - a line whose first non-blank character is `;` or `#` is a comment;
//! - after that, `;` or `#` *preceded by a blank* starts a trailing comment, so
//!   `bs=4k ; note` is `bs=4k` while `filename=/tmp/a#1` keeps its `#`;
//! - `[name]` starts a section; `include FILE` inserts FILE (relative to the
//!   including file's directory); anything else is `key=value` or a bare `key`;
//!   blanks around the key, `=` and the value are ignored.
//!
//! Values are returned unexpanded; `expand` handles `${VAR}` and `$ncpus`.

use super::FioError;
use crate::units::clip;
use std::path::{Path, PathBuf};

/// Includes deeper than this are surely a mistake (and would exhaust the stack).
const MAX_INCLUDE_DEPTH: usize = 32;

/// Where something is in a job file (1-based line and character column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pos {
    pub source: String,
    pub line: u32,
    pub col: u32,
}

/// One meaningful line of a job file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    Section {
        name: String,
        pos: Pos,
    },
    /// `value` is `None` for a bare key; `value_col` is where the value
    /// starts (just after `=` when it is empty).
    Option {
        key: String,
        value: Option<String>,
        pos: Pos,
        value_col: u32,
    },
}

/// Read a job file and everything it includes.
pub fn read_file(path: &Path) -> Result<Vec<Entry>, FioError> {
    let source = path.display().to_string();
    let bytes = crate::input::read(path, "job file").map_err(|e| FioError::whole(&source, None, format!("cannot read job file: {e}")))?;
    let mut stack = vec![path.canonicalize().unwrap_or_else(|_| path.to_path_buf())];
    let mut out = Vec::new();
    read_bytes(&source, &bytes, parent_dir(path), &mut stack, &mut out)?;
    Ok(out)
}

/// Read job-file text that has no file of its own (tests, fuzzing); includes
/// are relative to `dir`.
#[cfg(test)]
pub fn read_text(source: &str, bytes: &[u8], dir: &Path) -> Result<Vec<Entry>, FioError> {
    let mut out = Vec::new();
    read_bytes(source, bytes, dir, &mut Vec::new(), &mut out)?;
    Ok(out)
}

fn parent_dir(path: &Path) -> &Path {
    path.parent().unwrap_or(Path::new("."))
}

/// The state of one file being read.
struct Ctx<'a> {
    source: &'a str,
    dir: &'a Path,
    line: u32,
}

impl Ctx<'_> {
    fn pos(&self, col: u32) -> Pos {
        Pos { source: self.source.to_string(), line: self.line, col }
    }

    fn err(&self, col: u32, out: &[Entry], option: Option<&str>, message: String) -> FioError {
        FioError {
            source: self.source.to_string(),
            line: Some(self.line),
            col: Some(col),
            section: current_section(out),
            option: option.map(str::to_string),
            message,
            also: Vec::new(),
        }
    }
}

/// The section the next entry belongs to (for error messages).
fn current_section(out: &[Entry]) -> Option<String> {
    out.iter().rev().find_map(|e| match e {
        Entry::Section { name, .. } => Some(name.clone()),
        Entry::Option { .. } => None,
    })
}

fn read_bytes(source: &str, bytes: &[u8], dir: &Path, stack: &mut Vec<PathBuf>, out: &mut Vec<Entry>) -> Result<(), FioError> {
    for (i, raw) in bytes.split(|b| *b == b'\n').enumerate() {
        let ctx = Ctx { source, dir, line: u32::try_from(i + 1).unwrap_or(u32::MAX) };
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let text = std::str::from_utf8(raw).map_err(|e| {
            let col = String::from_utf8_lossy(&raw[..e.valid_up_to()]).chars().count() + 1;
            ctx.err(col as u32, out, None, "the line is not valid UTF-8 text".into())
        })?;
        read_line(&ctx, text, stack, out)?;
    }
    Ok(())
}

/// 1-based character column of byte offset `at` in `text`.
fn col_of(text: &str, at: usize) -> u32 {
    (text[..at].chars().count() + 1) as u32
}

/// `text` without a trailing comment: `;` or `#` preceded by a blank.
fn strip_comment(text: &str) -> &str {
    let mut prev_blank = false;
    for (i, c) in text.char_indices() {
        if prev_blank && (c == ';' || c == '#') {
            return &text[..i];
        }
        prev_blank = c.is_whitespace();
    }
    text
}

fn read_line(ctx: &Ctx, text: &str, stack: &mut Vec<PathBuf>, out: &mut Vec<Entry>) -> Result<(), FioError> {
    let body = strip_comment(text).trim_end();
    let trimmed = body.trim_start();
    if trimmed.is_empty() || trimmed.starts_with(';') || trimmed.starts_with('#') {
        return Ok(());
    }
    let start = body.len() - trimmed.len();
    if trimmed.starts_with('[') {
        return read_section(ctx, body, start, out);
    }
    if let Some(rest) = trimmed.strip_prefix("include") {
        if rest.starts_with([' ', '\t']) {
            let name_at = body.len() - rest.trim_start().len();
            return include(ctx, body, name_at, stack, out);
        }
    }
    read_option(ctx, body, start, out)
}

fn read_section(ctx: &Ctx, body: &str, start: usize, out: &mut Vec<Entry>) -> Result<(), FioError> {
    let col = col_of(body, start);
    let Some(inner) = body[start + 1..].strip_suffix(']') else {
        let msg = format!("unterminated section header '{}': expected '[name]'", clip(&body[start..]));
        return Err(ctx.err(col, out, None, msg));
    };
    let name = inner.trim();
    if name.is_empty() || name.contains(['[', ']']) {
        let msg = format!("bad section header '{}': expected '[name]' with a non-empty name", clip(&body[start..]));
        return Err(ctx.err(col, out, None, msg));
    }
    out.push(Entry::Section { name: name.to_string(), pos: ctx.pos(col) });
    Ok(())
}

fn read_option(ctx: &Ctx, body: &str, start: usize, out: &mut Vec<Entry>) -> Result<(), FioError> {
    let col = col_of(body, start);
    let (key, value, value_col) = match body[start..].split_once('=') {
        Some((k, v)) => {
            let eq = start + k.len();
            let v_trim = v.trim_start();
            let v_at = eq + 1 + (v.len() - v_trim.len());
            (k.trim_end(), Some(v_trim.to_string()), col_of(body, v_at))
        }
        None => (&body[start..], None, col),
    };
    if key.is_empty() || key.contains(char::is_whitespace) {
        let msg = format!("expected 'key=value' or a bare key, got '{}'", clip(&body[start..]));
        return Err(ctx.err(col, out, None, msg));
    }
    if current_section(out).is_none() {
        let msg = "option outside any section: expected a '[section]' header (such as [global]) before it".into();
        return Err(ctx.err(col, out, Some(key), msg));
    }
    out.push(Entry::Option { key: key.to_string(), value, pos: ctx.pos(col), value_col });
    Ok(())
}

fn include(ctx: &Ctx, body: &str, name_at: usize, stack: &mut Vec<PathBuf>, out: &mut Vec<Entry>) -> Result<(), FioError> {
    let col = col_of(body, name_at);
    let name = &body[name_at..];
    let path = ctx.dir.join(name);
    let canon = path.canonicalize().unwrap_or_else(|_| path.clone());
    if stack.contains(&canon) {
        let chain: Vec<String> = stack.iter().chain([&canon]).map(|p| p.display().to_string()).collect();
        return Err(ctx.err(col, out, None, format!("include cycle: {}", chain.join(" -> "))));
    }
    if stack.len() >= MAX_INCLUDE_DEPTH {
        return Err(ctx.err(col, out, None, format!("includes nested deeper than {MAX_INCLUDE_DEPTH}")));
    }
    let bytes = crate::input::read(&path, "job file")
        .map_err(|e| ctx.err(col, out, None, format!("cannot read include file '{}': {e}", path.display())))?;
    stack.push(canon);
    let source = path.display().to_string();
    let result = read_bytes(&source, &bytes, parent_dir(&path), stack, out);
    stack.pop();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<Vec<Entry>, FioError> {
        read_text("t.fio", text.as_bytes(), Path::new("."))
    }

    fn opt(e: &Entry) -> (&str, Option<&str>, u32, u32) {
        match e {
            Entry::Option { key, value, pos, value_col } => (key, value.as_deref(), pos.line, *value_col),
            other => panic!("not an option: {other:?}"),
        }
    }

    #[test]
    fn keys_values_and_spacing() {
        let e = read("[j]\nbs =4k\n  rw = read  \ntime_based\nfilename=\n").unwrap();
        assert_eq!(e.len(), 5);
        assert_eq!(opt(&e[1]), ("bs", Some("4k"), 2, 5));
        assert_eq!(opt(&e[2]), ("rw", Some("read"), 3, 8));
        assert_eq!(opt(&e[3]), ("time_based", None, 4, 1));
        assert_eq!(opt(&e[4]), ("filename", Some(""), 5, 10));
    }

    #[test]
    fn comments() {
        let e = read("; c1\n# c2\n[j] ; header comment\n  ;indented\nbs=4k ; trailing\nfilename=/a#b;c\nrw=read\t# tab\n\r\n").unwrap();
        assert_eq!(e.len(), 4);
        assert_eq!(opt(&e[1]).1, Some("4k"));
        assert_eq!(opt(&e[2]).1, Some("/a#b;c"));
        assert_eq!(opt(&e[3]).1, Some("read"));
    }

    #[test]
    fn crlf_and_section_names() {
        let e = read("[ my job ]\r\nbs=4k\r\n").unwrap();
        assert!(matches!(&e[0], Entry::Section { name, .. } if name == "my job"));
        assert_eq!(opt(&e[1]).1, Some("4k"));
    }

    #[test]
    fn bad_lines() {
        let e = read("[abc\n").unwrap_err();
        assert_eq!((e.line, e.col), (Some(1), Some(1)));
        assert!(e.message.contains("unterminated section header '[abc'"));
        let e = read("[j]\n  bs 4k\n").unwrap_err();
        assert_eq!((e.line, e.col, e.section.as_deref()), (Some(2), Some(3), Some("j")));
        let e = read("[]\n").unwrap_err();
        assert!(e.message.contains("non-empty name"));
        let e = read_text("t.fio", b"[j]\nbs=4\xffk\n", Path::new(".")).unwrap_err();
        assert_eq!((e.line, e.col), (Some(2), Some(5)));
        assert!(e.message.contains("UTF-8"));
    }
}
