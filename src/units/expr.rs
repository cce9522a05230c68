//! Integer/decimal arithmetic for option values (`size=8*1024`, `bs=(2*4)k`).
//!
//! Whole numbers stay exact (`i128`) so large sizes do not lose bytes; a
//! decimal literal or a division that is not exact switches to `f64`.
//! Grammar, usual precedence, `^` right-associative and tighter than unary minus:
//! ```text
//! expr  := term (('+'|'-') term)*
//! term  := unary (('*'|'/'|'%') unary)*
//! unary := ('-'|'+') unary | power
//! power := atom ('^' unary)?
//! atom  := number | '(' expr ')'
//! ```

/// Nesting limit so input such as `((((...` cannot overflow the stack.
const MAX_DEPTH: u32 = 64;

/// A value: exact while it can be.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// Evaluate a whole expression; anything left over is an error.
pub fn eval(s: &str) -> Result<Num, String> {
    let mut p = Parser { s: s.as_bytes(), pos: 0, depth: 0 };
    let v = p.expr()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(format!("unexpected '{}' in expression", crate::units::clip(&s[p.pos..])));
    }
    match v {
        Num::Float(f) if !f.is_finite() => Err("the result is not a finite number".into()),
        v => Ok(v),
    }
}

/// Parse a plain literal: decimal digits with an optional fraction, or `0x` hex.
/// `None` when `s` is not exactly such a literal.
pub fn literal(s: &str) -> Option<Num> {
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return i128::from_str_radix(hex, 16).ok().filter(|_| !hex.starts_with(['+', '-'])).map(Num::Int);
    }
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (s, None),
    };
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    match frac {
        None if digits(int) => int.parse::<i128>().ok().map(Num::Int),
        Some(f) if digits(int) && digits(f) => s.parse::<f64>().ok().map(Num::Float),
        _ => None,
    }
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: u32,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while matches!(self.s.get(self.pos), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// Consume the next non-blank byte if it is one of `ops`.
    fn eat(&mut self, ops: &[u8]) -> Option<u8> {
        self.skip_ws();
        let c = *self.s.get(self.pos)?;
        if ops.contains(&c) {
            self.pos += 1;
            return Some(c);
        }
        None
    }

    fn expr(&mut self) -> Result<Num, String> {
        let mut v = self.term()?;
        while let Some(op) = self.eat(b"+-") {
            let r = self.term()?;
            v = arith(op, v, r)?;
        }
        Ok(v)
    }

    fn term(&mut self) -> Result<Num, String> {
        let mut v = self.unary()?;
        while let Some(op) = self.eat(b"*/%") {
            let r = self.unary()?;
            v = arith(op, v, r)?;
        }
        Ok(v)
    }

    fn unary(&mut self) -> Result<Num, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("expression nested too deeply".into());
        }
        let v = match self.eat(b"-+") {
            Some(b'-') => self.unary().and_then(|v| arith(b'-', Num::Int(0), v)),
            Some(_) => self.unary(),
            None => self.power(),
        };
        self.depth -= 1;
        v
    }

    fn power(&mut self) -> Result<Num, String> {
        let base = self.atom()?;
        if self.eat(b"^").is_some() {
            let exp = self.unary()?;
            return arith(b'^', base, exp);
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<Num, String> {
        if self.eat(b"(").is_some() {
            let v = self.expr()?;
            if self.eat(b")").is_none() {
                return Err("missing ')'".into());
            }
            return Ok(v);
        }
        let start = self.pos;
        while matches!(self.s.get(self.pos), Some(c) if c.is_ascii_alphanumeric() || *c == b'.') {
            self.pos += 1;
        }
        // Only ASCII was consumed, so this is valid UTF-8.
        let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
        if text.is_empty() {
            return Err("expected a number".into());
        }
        literal(text).ok_or_else(|| format!("'{text}' is not a number"))
    }
}

/// One binary operation; exact on integers, falling back to `f64`.
fn arith(op: u8, a: Num, b: Num) -> Result<Num, String> {
    if let (Num::Int(x), Num::Int(y)) = (a, b) {
        if let Some(v) = int_op(op, x, y)? {
            return Ok(Num::Int(v));
        }
    }
    let (x, y) = (a.as_f64(), b.as_f64());
    if matches!(op, b'/' | b'%') && y == 0.0 {
        return Err("division by zero".into());
    }
    let v = match op {
        b'+' => x + y,
        b'-' => x - y,
        b'*' => x * y,
        b'/' => x / y,
        b'%' => x % y,
        _ => x.powf(y),
    };
    if !v.is_finite() {
        return Err("the result is too large".into());
    }
    Ok(Num::Float(v))
}

/// Integer operation; `Ok(None)` means "not exact, redo in floating point".
fn int_op(op: u8, x: i128, y: i128) -> Result<Option<i128>, String> {
    let too_large = || "the result is too large".to_string();
    if matches!(op, b'/' | b'%') && y == 0 {
        return Err("division by zero".into());
    }
    let v = match op {
        b'+' => x.checked_add(y).ok_or_else(too_large)?,
        b'-' => x.checked_sub(y).ok_or_else(too_large)?,
        b'*' => x.checked_mul(y).ok_or_else(too_large)?,
        b'/' if x % y != 0 => return Ok(None),
        b'/' => x / y,
        b'%' => x % y,
        _ if y < 0 => return Ok(None),
        _ => {
            let e = u32::try_from(y).map_err(|_| too_large())?;
            x.checked_pow(e).ok_or_else(too_large)?
        }
    };
    Ok(Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(s: &str) -> i128 {
        match eval(s).unwrap() {
            Num::Int(i) => i,
            other => panic!("'{s}' gave {other:?}"),
        }
    }

    #[test]
    fn precedence_and_parentheses() {
        assert_eq!(int("1+2*3"), 7);
        assert_eq!(int("(1+2)*3"), 9);
        assert_eq!(int("2^3^2"), 512);
        assert_eq!(int("10-4-3"), 3);
        assert_eq!(int("17%5"), 2);
        assert_eq!(int("-3+5"), 2);
        assert_eq!(int("-2^2"), -4);
        assert_eq!(int(" 2 * ( 3 + 1 ) "), 8);
        assert_eq!(int("8/2"), 4);
        assert_eq!(int("0x10*2"), 32);
    }

    #[test]
    fn decimals_and_inexact_division() {
        assert_eq!(eval("1.5*2").unwrap().as_f64(), 3.0);
        assert_eq!(eval("7/2").unwrap(), Num::Float(3.5));
        assert_eq!(eval("2^-1").unwrap(), Num::Float(0.5));
    }

    #[test]
    fn errors() {
        for bad in ["", "k", "(1+2", "4/0", "4%0", "1..2", "2^200", "3)", "1+", "4k"] {
            assert!(eval(bad).is_err(), "'{bad}' should fail");
        }
        assert!(eval(&"(".repeat(10_000)).is_err());
        assert!(eval(&"-".repeat(10_000)).is_err());
        assert!(eval("1e308*1e308*10").is_err());
    }
}
