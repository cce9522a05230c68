//! Java `.properties` files as YCSB reads them (java.util.Properties.load):
//! `key=value`, `key: value` or `key value`; `#` and `!` comment lines; a
//! line ending in an odd number of backslashes continues on the next; the
//! escapes `\t \n \r \f \uXXXX`, and a backslash before any other character
//! stands for that character. Each value keeps where it came from, so a bad
//! value can be reported at its file, line and column.

use std::fmt;
use std::path::Path;

/// Where a property was given: a file's line and column, or `-p`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    File { file: String, line: usize, column: usize },
    Flag,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File { file, line, column } => write!(f, "{file}:{line}:{column}"),
            Origin::Flag => f.write_str("-p"),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    pub key: String,
    pub value: String,
    /// Where the value starts.
    pub origin: Origin,
}

/// Read a properties text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Vec<Property>, String> {
    let lines: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let first = i;
        let trimmed = lines[i].trim_start_matches([' ', '\t', '\x0c']);
        i += 1;
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
            continue;
        }
        // The logical line: continuation lines lose their leading white space.
        let mut logical = String::from(trimmed);
        let mut col0 = lines[first].len() - trimmed.len() + 1;
        while ends_in_odd_backslashes(&logical) && i < lines.len() {
            logical.pop();
            logical.push_str(lines[i].trim_start_matches([' ', '\t', '\x0c']));
            i += 1;
        }
        if ends_in_odd_backslashes(&logical) {
            logical.pop();
        }
        let at = |col: usize| Origin::File { file: file.to_string(), line: first + 1, column: col };
        let (key_raw, value_raw, value_col) = split_key_value(&logical);
        let key = unescape(key_raw).map_err(|e| format!("{}: {e}", at(col0)))?;
        col0 += value_col;
        let value = unescape(value_raw).map_err(|e| format!("{}: {e}", at(col0)))?;
        out.push(Property { key, value, origin: at(col0) });
    }
    Ok(out)
}

/// Read a properties file.
pub fn read(path: &Path) -> Result<Vec<Property>, String> {
    let text = crate::input::read_text(path, "property file").map_err(|e| format!("-P {}: {e}", path.display()))?;
    parse(&text, &path.display().to_string())
}

fn ends_in_odd_backslashes(s: &str) -> bool {
    s.bytes().rev().take_while(|&b| b == b'\\').count() % 2 == 1
}

/// The key (up to the first unescaped `=`, `:` or white space), the value
/// (after that separator and the white space around it), and the value's
/// offset in `line`.
fn split_key_value(line: &str) -> (&str, &str, usize) {
    let b = line.as_bytes();
    let mut k = 0;
    while k < b.len() {
        match b[k] {
            b'\\' => k += 2,
            b'=' | b':' | b' ' | b'\t' | b'\x0c' => break,
            _ => k += 1,
        }
    }
    let k = k.min(b.len());
    let mut v = k;
    while v < b.len() && matches!(b[v], b' ' | b'\t' | b'\x0c') {
        v += 1;
    }
    if v < b.len() && matches!(b[v], b'=' | b':') {
        v += 1;
        while v < b.len() && matches!(b[v], b' ' | b'\t' | b'\x0c') {
            v += 1;
        }
    }
    (&line[..k], &line[v..], v)
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\x0c'),
            Some('u') => {
                let hex: String = chars.by_ref().take(4).collect();
                let code = u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                    .ok_or_else(|| format!("\\u{hex}: expected four hexadecimal digits after \\u"))?;
                out.push(char::from_u32(code).ok_or_else(|| format!("\\u{hex}: not a character"))?);
            }
            Some(other) => out.push(other),
            None => {}
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(text: &str) -> Vec<(String, String)> {
        parse(text, "t").unwrap().into_iter().map(|p| (p.key, p.value)).collect()
    }

    #[test]
    fn separators_comments_and_white_space() {
        let got = kv("# comment\n! also\n\n  a=1\nb : two words \nc\t3\nd\n e = \n");
        let want = [("a", "1"), ("b", "two words "), ("c", "3"), ("d", ""), ("e", "")];
        assert_eq!(got, want.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<Vec<_>>());
    }

    #[test]
    fn continuation_and_escapes() {
        assert_eq!(kv("list=a,\\\n    b,\\\n c\n"), vec![("list".into(), "a,b,c".into())]);
        assert_eq!(kv("k\\=x=v\\tw\\u0041\n"), vec![("k=x".into(), "v\twA".into())]);
        // An even number of backslashes does not continue the line.
        assert_eq!(kv("p=c:\\\\\nq=1\n"), vec![("p".into(), "c:\\".into()), ("q".into(), "1".into())]);
    }

    #[test]
    fn locations() {
        let p = parse("a=1\n\n   recordcount = 100\n", "w").unwrap();
        assert_eq!(p[1].origin, Origin::File { file: "w".into(), line: 3, column: 18 });
        let e = parse("\nx=\\u12g4\n", "w").unwrap_err();
        assert!(e.starts_with("w:2:3: ") && e.contains("four hexadecimal digits"), "{e}");
    }
}
