//! Characters → tokens, each with its 1-based line and column.
//!
//! The parser pulls one token at a time and names the mode, because WML's
//! lexical classes overlap: in an attribute `/tmp/x` and `-x` are bare
//! strings and `-10` is an integer (psrun), while in a 1.4 arithmetic `set`
//! `/` and `-` are operators. Peeking is a copy of the cursor, so a token can
//! be read again in the other mode.
//!
//! Rules (Filebench's, with the leniencies documented in `mod.rs`):
//! - `#` starts a comment to the end of the line; blanks and newlines separate tokens;
//! - integers are decimal with an optional `k`/`m`/`g` (any case) suffix, ×1024ⁿ,
//!   and must fit in 64 bits; `-` directly before a digit makes them negative;
//! - `true`/`false` are booleans;
//! - a bare string starts with `[/A-Za-z._-]` and goes on with `[/A-Za-z0-9._:;-]`;
//! - `"..."` is a quoted string; inside it `$name`/`${name}` are variable
//!   references, `\$` is a literal `$` and `\"` a literal quote;
//! - `$name`, `${name}` and `$(name)` are the same variable; names are
//!   `[A-Za-z_][A-Za-z0-9_]*`;
//! - punctuation: `= , { } ( ) ;` and, in expression mode, `+ - * /`.

/// Where a token starts: 1-based line and character column.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

/// A piece of a quoted string.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Text(String),
    Var { name: String, pos: Pos },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Within ±(2⁶⁴−1); wider than u64 so arithmetic can detect overflow.
    Int(i128),
    Bool(bool),
    Word(String),
    Quoted(Vec<Part>),
    Var(String),
    Punct(char),
    /// `+ - * /`, only in expression mode.
    Op(char),
    Eof,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Normal,
    Expr,
}

/// A lexical or syntax error at a position in the text.
#[derive(Clone, Debug, PartialEq)]
pub struct SyntaxError {
    pub pos: Pos,
    pub message: String,
}

pub const MAX_INT: i128 = u64::MAX as i128;

#[derive(Clone, Copy)]
pub struct Lexer<'a> {
    src: &'a str,
    at: usize,
    pos: Pos,
}

fn bare_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '/' | '-' | '.' | '_')
}

fn bare_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '/' | '.' | '_' | ':' | ';' | '-')
}

fn name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// How a token reads in an error message.
pub fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Int(v) => format!("integer {v}"),
        Tok::Bool(b) => format!("boolean {b}"),
        Tok::Word(w) => format!("'{}'", clip(w)),
        Tok::Quoted(parts) => {
            let mut s = String::new();
            for p in parts {
                match p {
                    Part::Text(t) => s.push_str(t),
                    Part::Var { name, .. } => {
                        s.push('$');
                        s.push_str(name);
                    }
                }
            }
            format!("string \"{}\"", clip(&s))
        }
        Tok::Var(v) => format!("variable ${}", clip(v)),
        Tok::Punct(c) | Tok::Op(c) => format!("'{c}'"),
        Tok::Eof => "end of file".into(),
    }
}

pub use crate::units::clip;

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        Lexer { src, at: 0, pos: Pos { line: 1, col: 1 } }
    }

    fn peek_char(&self) -> Option<char> {
        self.src[self.at..].chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        let mut it = self.src[self.at..].chars();
        it.next();
        it.next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek_char()?;
        self.at += c.len_utf8();
        if c == '\n' {
            self.pos.line = self.pos.line.saturating_add(1);
            self.pos.col = 1;
        } else {
            self.pos.col = self.pos.col.saturating_add(1);
        }
        Some(c)
    }

    fn skip_blanks(&mut self) {
        while let Some(c) = self.peek_char() {
            if c == '#' {
                while let Some(c) = self.peek_char() {
                    if c == '\n' {
                        break;
                    }
                    self.bump();
                }
            } else if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn err<T>(pos: Pos, message: String) -> Result<T, SyntaxError> {
        Err(SyntaxError { pos, message })
    }

    pub fn next(&mut self, mode: Mode) -> Result<Token, SyntaxError> {
        self.skip_blanks();
        let pos = self.pos;
        let Some(c) = self.peek_char() else {
            return Ok(Token { tok: Tok::Eof, pos });
        };
        let tok = match c {
            '0'..='9' => self.int(mode, false)?,
            '-' if mode == Mode::Normal && self.peek_second().is_some_and(|d| d.is_ascii_digit()) => {
                self.bump();
                self.int(mode, true)?
            }
            '+' | '-' | '*' | '/' if mode == Mode::Expr => {
                self.bump();
                Tok::Op(c)
            }
            '=' | ',' | '{' | '}' | '(' | ')' | ';' => {
                self.bump();
                Tok::Punct(c)
            }
            '$' => {
                self.bump();
                Tok::Var(self.var_name(pos)?)
            }
            '"' => self.quoted(pos)?,
            c if bare_start(c) => {
                let start = self.at;
                while self.peek_char().is_some_and(bare_char) {
                    self.bump();
                }
                match &self.src[start..self.at] {
                    "true" => Tok::Bool(true),
                    "false" => Tok::Bool(false),
                    w => Tok::Word(w.to_string()),
                }
            }
            c => return Self::err(pos, format!("unexpected character {c:?} (U+{:04X})", c as u32)),
        };
        Ok(Token { tok, pos })
    }

    fn int(&mut self, mode: Mode, negative: bool) -> Result<Tok, SyntaxError> {
        let pos = self.pos;
        let start = self.at;
        let mut v: i128 = 0;
        let mut overflow = false;
        while let Some(d) = self.peek_char().and_then(|c| c.to_digit(10)) {
            self.bump();
            v = v * 10 + i128::from(d);
            // Clamp so the accumulator cannot overflow; the text is reported instead.
            if v > MAX_INT {
                overflow = true;
                v = MAX_INT + 1;
            }
        }
        let shift = match self.peek_char() {
            Some('k' | 'K') => 10,
            Some('m' | 'M') => 20,
            Some('g' | 'G') => 30,
            _ => 0,
        };
        if shift > 0 {
            self.bump();
        }
        let junk = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.' || (mode == Mode::Normal && matches!(c, '/' | '-'));
        if self.peek_char().is_some_and(junk) {
            while self.peek_char().is_some_and(|c| bare_char(c) && junk(c)) {
                self.bump();
            }
            let text = clip(&self.src[start..self.at]);
            return Self::err(pos, format!("malformed number '{text}': expected digits with an optional k, m or g suffix"));
        }
        let text = clip(&self.src[start..self.at]);
        let v = if overflow { None } else { v.checked_mul(1i128 << shift) };
        match v {
            Some(v) if v <= MAX_INT => Ok(Tok::Int(if negative { -v } else { v })),
            _ => Self::err(pos, format!("integer {}{text} is too large: the limit is {}", if negative { "-" } else { "" }, u64::MAX)),
        }
    }

    /// After `$`: `name`, `{name}` or `(name)`.
    fn var_name(&mut self, dollar: Pos) -> Result<String, SyntaxError> {
        let close = match self.peek_char() {
            Some('{') => Some('}'),
            Some('(') => Some(')'),
            _ => None,
        };
        if close.is_some() {
            self.bump();
        }
        let start = self.at;
        if !self.peek_char().is_some_and(name_start) {
            let found = self.peek_char().map(|c| format!("{c:?}")).unwrap_or_else(|| "end of file".into());
            return Self::err(dollar, format!("expected a variable name after '$' (a letter or '_' first), found {found}"));
        }
        while self.peek_char().is_some_and(name_char) {
            self.bump();
        }
        let name = self.src[start..self.at].to_string();
        if let Some(close) = close {
            if self.peek_char() != Some(close) {
                return Self::err(dollar, format!("expected '{close}' to close the variable name ${name}"));
            }
            self.bump();
        }
        Ok(name)
    }

    fn quoted(&mut self, open: Pos) -> Result<Tok, SyntaxError> {
        self.bump();
        let mut parts = Vec::new();
        let mut text = String::new();
        loop {
            let Some(c) = self.peek_char() else {
                return Self::err(open, "unterminated string: expected a closing '\"'".into());
            };
            match c {
                '"' => {
                    self.bump();
                    break;
                }
                '\\' if matches!(self.peek_second(), Some('$' | '"')) => {
                    self.bump();
                    if let Some(c) = self.bump() {
                        text.push(c);
                    }
                }
                '$' if self.peek_second().is_some_and(|c| name_start(c) || c == '{') => {
                    let pos = self.pos;
                    self.bump();
                    let name = self.var_name(pos)?;
                    if !text.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut text)));
                    }
                    parts.push(Part::Var { name, pos });
                }
                c => {
                    self.bump();
                    text.push(c);
                }
            }
        }
        if !text.is_empty() || parts.is_empty() {
            parts.push(Part::Text(text));
        }
        Ok(Tok::Quoted(parts))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(src: &str, mode: Mode) -> Result<Vec<Tok>, SyntaxError> {
        let mut lx = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let t = lx.next(mode)?;
            if t.tok == Tok::Eof {
                return Ok(out);
            }
            out.push(t.tok);
        }
    }

    fn word(s: &str) -> Tok {
        Tok::Word(s.into())
    }

    #[test]
    fn classes_and_suffixes() {
        let toks = all("set $dir=/tmp/x # comment\nrun 60 16k 2M 1g -10 true mean:1;gamma:1.5 ./rel", Mode::Normal).unwrap();
        assert_eq!(
            toks,
            vec![
                word("set"),
                Tok::Var("dir".into()),
                Tok::Punct('='),
                word("/tmp/x"),
                word("run"),
                Tok::Int(60),
                Tok::Int(16 << 10),
                Tok::Int(2 << 20),
                Tok::Int(1 << 30),
                Tok::Int(-10),
                Tok::Bool(true),
                word("mean:1;gamma:1.5"),
                word("./rel"),
            ]
        );
    }

    #[test]
    fn variables_in_all_spellings() {
        let toks = all("$a ${a} $(a) $long_name1", Mode::Normal).unwrap();
        assert_eq!(toks, vec![Tok::Var("a".into()), Tok::Var("a".into()), Tok::Var("a".into()), Tok::Var("long_name1".into())]);
        let e = all("x $9", Mode::Normal).unwrap_err();
        assert_eq!(e.pos, Pos { line: 1, col: 3 });
        let e = all("${ab", Mode::Normal).unwrap_err();
        assert!(e.message.contains("'}'"), "{}", e.message);
    }

    #[test]
    fn quoted_parts_and_escapes() {
        let toks = all("\"cost \\$5 at $dir/${f}x \\\"q\\\" \\n\"", Mode::Normal).unwrap();
        assert_eq!(
            toks,
            vec![Tok::Quoted(vec![
                Part::Text("cost $5 at ".into()),
                Part::Var { name: "dir".into(), pos: Pos { line: 1, col: 14 } },
                Part::Text("/".into()),
                Part::Var { name: "f".into(), pos: Pos { line: 1, col: 19 } },
                Part::Text("x \"q\" \\n".into()),
            ])]
        );
        assert_eq!(all("\"\"", Mode::Normal).unwrap(), vec![Tok::Quoted(vec![Part::Text(String::new())])]);
        let e = all("\n  \"open", Mode::Normal).unwrap_err();
        assert_eq!((e.pos, e.message.contains("unterminated")), (Pos { line: 2, col: 3 }, true));
    }

    #[test]
    fn expression_mode_operators() {
        let toks = all("$a*2-3/$b+(1)", Mode::Expr).unwrap();
        assert_eq!(
            toks,
            vec![
                Tok::Var("a".into()),
                Tok::Op('*'),
                Tok::Int(2),
                Tok::Op('-'),
                Tok::Int(3),
                Tok::Op('/'),
                Tok::Var("b".into()),
                Tok::Op('+'),
                Tok::Punct('('),
                Tok::Int(1),
                Tok::Punct(')'),
            ]
        );
        // The same text is one malformed number in normal mode.
        assert!(all("2-3", Mode::Normal).unwrap_err().message.contains("malformed number"));
    }

    #[test]
    fn overflow_and_bad_characters_are_errors() {
        assert_eq!(all("18446744073709551615", Mode::Normal).unwrap(), vec![Tok::Int(MAX_INT)]);
        let e = all("run 18446744073709551616", Mode::Normal).unwrap_err();
        assert_eq!(e.pos.col, 5);
        assert!(e.message.contains("too large"), "{}", e.message);
        assert!(all("99999999999999999999999999999999999999999999999", Mode::Normal).is_err());
        assert!(all("17179869184g", Mode::Normal).unwrap_err().message.contains("too large"));
        let e = all("a\n b @", Mode::Normal).unwrap_err();
        assert_eq!(e.pos, Pos { line: 2, col: 4 });
        assert!(all("10x", Mode::Normal).unwrap_err().message.contains("malformed number '10x'"));
        assert!(all("é", Mode::Normal).is_err());
    }
}
