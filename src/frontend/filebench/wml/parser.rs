//! Tokens → statements (recursive descent). Only syntax is checked here;
//! names of attributes, types and variables are checked when the plan is
//! built, because variables bind late.

use super::ast::*;
use super::lexer::{clip, describe, Lexer, Mode, SyntaxError, Tok, Token};
use super::suggest;
use crate::model::flow::QuitMode;

/// Parentheses and unary minus nest at most this deep in a `set` expression
/// (recursion depth, so hostile input cannot exhaust the stack).
const MAX_EXPR_DEPTH: u32 = 64;
/// Operators in one expression: the tree is as deep as its operator chain,
/// and evaluating or dropping it recurses.
const MAX_EXPR_OPS: u32 = 256;

/// Commands fsbench runs (for "did you mean").
pub const COMMANDS: &[&str] = &[
    "define", "set", "run", "psrun", "create", "eventgen", "sleep", "system", "echo", "quit", "version", "debug", "list", "enable",
    "usage", "vars", "warmup",
];

/// Filebench commands fsbench knows but does not run.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("domultisync", "multi-client synchronisation"),
    ("stats", "statistics are cleared and reported by fsbench itself"),
    ("load", "loading other workload files"),
    ("foreach", "loops over values"),
    ("help", "interactive help"),
    ("log", "log levels"),
    ("fscheck", "file-system checks"),
    ("fsflush", "file-system flushes"),
    ("shutdown", "interactive shutdown"),
    ("exit", "interactive exit"),
    ("enable_osprof", "OS profiling"),
    ("disable_osprof", "OS profiling"),
    ("disable", "disabling features"),
];

pub struct Parser<'a> {
    lx: Lexer<'a>,
    depth: u32,
    ops: u32,
}

type Res<T> = Result<T, SyntaxError>;

fn err<T>(pos: Pos, message: String) -> Res<T> {
    Err(SyntaxError { pos, message })
}

fn expected<T>(what: &str, found: &Token) -> Res<T> {
    err(found.pos, format!("expected {what}, found {}", describe(&found.tok)))
}

/// The whole script.
pub fn parse_script(src: &str) -> Res<Vec<Stmt>> {
    let mut p = Parser { lx: Lexer::new(src), depth: 0, ops: 0 };
    let mut out = Vec::new();
    loop {
        let t = p.next(Mode::Normal)?;
        match t.tok {
            Tok::Eof => return Ok(out),
            Tok::Punct(';') => continue,
            Tok::Word(ref w) => {
                let kind = p.statement(w, &t)?;
                out.push(Stmt { pos: t.pos, kind });
            }
            _ => return expected("a command (define, set, run, ...)", &t),
        }
    }
}

/// The value of `--set name=VALUE`: anything that may follow `set $v =`,
/// with nothing after it.
pub fn parse_set_value(src: &str) -> Res<SetValue> {
    let mut p = Parser { lx: Lexer::new(src), depth: 0, ops: 0 };
    let v = p.set_value()?;
    let t = p.next(Mode::Normal)?;
    if t.tok != Tok::Eof {
        return expected("the end of the value", &t);
    }
    Ok(v)
}

impl Parser<'_> {
    fn next(&mut self, mode: Mode) -> Res<Token> {
        self.lx.next(mode)
    }

    fn peek(&self, mode: Mode) -> Res<Token> {
        let mut lx = self.lx;
        lx.next(mode)
    }

    fn peek_is(&self, tok: &Tok) -> Res<bool> {
        Ok(&self.peek(Mode::Normal)?.tok == tok)
    }

    fn punct(&mut self, c: char, context: &str) -> Res<Pos> {
        let t = self.next(Mode::Normal)?;
        if t.tok == Tok::Punct(c) {
            return Ok(t.pos);
        }
        expected(&format!("'{c}' {context}"), &t)
    }

    fn word(&mut self, what: &str) -> Res<(String, Pos)> {
        let t = self.next(Mode::Normal)?;
        match t.tok {
            Tok::Word(w) => Ok((w, t.pos)),
            _ => expected(what, &t),
        }
    }

    fn statement(&mut self, kw: &str, at: &Token) -> Res<StmtKind> {
        Ok(match kw {
            "define" => self.define()?,
            "set" => self.set()?,
            "run" => StmtKind::Run(self.opt_number()?),
            "psrun" => {
                let period = self.opt_number()?;
                let duration = if period.is_some() { self.opt_number()? } else { None };
                StmtKind::Psrun { period, duration }
            }
            "create" => {
                let (w, pos) = self.word("files or processes after create")?;
                match w.as_str() {
                    "files" | "filesets" | "fileset" => StmtKind::Create(CreateWhat::Files),
                    "processes" | "process" => StmtKind::Create(CreateWhat::Processes),
                    _ => return err(pos, format!("expected files or processes after create, found '{}'", clip(&w))),
                }
            }
            "eventgen" => StmtKind::Eventgen(self.attrs()?),
            "sleep" => StmtKind::Sleep(self.number("a number of seconds or a $variable after sleep")?),
            "system" => StmtKind::System(self.text("a quoted command after system")?),
            "echo" => StmtKind::Echo(self.text("a quoted text after echo")?),
            "usage" => StmtKind::Usage(self.text("a quoted text after usage")?),
            "quit" => StmtKind::Quit,
            "version" => StmtKind::Version,
            "vars" => StmtKind::Vars,
            "debug" => StmtKind::Debug(self.number("a debug level after debug")?),
            "warmup" => StmtKind::Warmup(self.number("a number of seconds or a $variable after warmup")?),
            "list" => {
                let t = self.peek(Mode::Normal)?;
                match t.tok {
                    Tok::Word(w) if matches!(w.as_str(), "filesets" | "fileset" | "flowops" | "flowop") => {
                        self.next(Mode::Normal)?;
                        StmtKind::List(Some(w))
                    }
                    _ => StmtKind::List(None),
                }
            }
            "enable" => {
                let (w, pos) = self.word("lathist after enable")?;
                if w != "lathist" {
                    return err(pos, format!("'enable {}' is not supported by fsbench (only 'enable lathist' is)", clip(&w)));
                }
                StmtKind::EnableLathist
            }
            _ => {
                if let Some((_, what)) = UNSUPPORTED.iter().find(|(n, _)| *n == kw) {
                    return err(at.pos, format!("'{kw}' is not supported by fsbench ({what})"));
                }
                let hint = suggest(kw, COMMANDS.iter().copied()).map(|s| format!("; did you mean '{s}'?")).unwrap_or_default();
                return err(at.pos, format!("unknown command '{}': expected one of {}{hint}", clip(kw), COMMANDS.join(", ")));
            }
        })
    }

    fn define(&mut self) -> Res<StmtKind> {
        let (what, pos) = self.word("fileset, file, process, flowop or randvar after define")?;
        Ok(match what.as_str() {
            "fileset" => StmtKind::Fileset { file: false, attrs: self.attrs()? },
            "file" => StmtKind::Fileset { file: true, attrs: self.attrs()? },
            "process" => {
                let attrs = self.attrs()?;
                self.punct('{', "to open the process's threads")?;
                let mut threads = Vec::new();
                loop {
                    let t = self.next(Mode::Normal)?;
                    match &t.tok {
                        Tok::Punct('}') => break,
                        Tok::Word(w) if w == "thread" => {
                            let attrs = self.attrs()?;
                            self.punct('{', "to open the thread's flowops")?;
                            let flowops = self.flowops()?;
                            threads.push(Thread { pos: t.pos, attrs, flowops });
                        }
                        _ => return expected("thread or '}'", &t),
                    }
                }
                StmtKind::Process { attrs, threads }
            }
            "flowop" => {
                let attrs = self.attrs()?;
                self.punct('{', "to open the composite flowop's body")?;
                StmtKind::Composite { attrs, body: self.flowops()? }
            }
            "randvar" => {
                let mut attrs = self.attrs()?;
                let Some(i) = attrs.iter().rposition(|a| a.name == "name" && !a.local) else {
                    return err(pos, "define randvar needs name=$variable".into());
                };
                let name = attrs.remove(i);
                match name.value {
                    Some(Value { kind: ValueKind::Var(var), pos: var_pos }) => StmtKind::DefineRandvar { var, var_pos, attrs },
                    _ => return err(name.pos, "define randvar: expected name=$variable".into()),
                }
            }
            "posset" => return err(pos, "'define posset' is not supported by fsbench".into()),
            _ => return err(pos, format!("expected fileset, file, process, flowop or randvar after define, found '{}'", clip(&what))),
        })
    }

    /// `flowop TYPE attrs` ... up to and including `}`.
    fn flowops(&mut self) -> Res<Vec<Flowop>> {
        let mut out = Vec::new();
        loop {
            let t = self.next(Mode::Normal)?;
            match &t.tok {
                Tok::Punct('}') => return Ok(out),
                Tok::Word(w) if w == "flowop" => {
                    let (ty, ty_pos) = self.word("a flowop type after flowop")?;
                    out.push(Flowop { ty, ty_pos, attrs: self.attrs()? });
                }
                _ => return expected("flowop or '}'", &t),
            }
        }
    }

    fn set(&mut self) -> Res<StmtKind> {
        let t = self.next(Mode::Normal)?;
        match t.tok {
            Tok::Var(var) => {
                self.punct('=', &format!("after set ${var}"))?;
                Ok(StmtKind::Set { var, var_pos: t.pos, value: self.set_value()? })
            }
            Tok::Word(w) if w == "mode" => {
                let (w, pos) = self.word("quit or nousestats after set mode")?;
                match w.as_str() {
                    "nousestats" => Ok(StmtKind::NoUseStats),
                    "quit" => {
                        let (m, pos) = self.word("timeout, alldone or firstdone after set mode quit")?;
                        match m.as_str() {
                            "timeout" => Ok(StmtKind::ModeQuit(QuitMode::Timeout)),
                            "alldone" => Ok(StmtKind::ModeQuit(QuitMode::AllDone)),
                            "firstdone" => Ok(StmtKind::ModeQuit(QuitMode::FirstDone)),
                            _ => err(pos, format!("expected timeout, alldone or firstdone after set mode quit, found '{}'", clip(&m))),
                        }
                    }
                    _ => err(pos, format!("expected quit or nousestats after set mode, found '{}'", clip(&w))),
                }
            }
            _ => expected("a $variable or mode after set", &t),
        }
    }

    fn set_value(&mut self) -> Res<SetValue> {
        self.ops = 0;
        let t = self.peek(Mode::Normal)?;
        match t.tok {
            Tok::Int(_) | Tok::Var(_) | Tok::Punct('(') => Ok(SetValue::Expr(self.expr()?)),
            // A lone '-' (as in `-$a` or `- 5`) negates; `-foo` stays a string.
            Tok::Word(w) if w == "-" => Ok(SetValue::Expr(self.expr()?)),
            Tok::Word(w)
                if (w == "randvar" || w == "cvar") && {
                    let mut lx = self.lx;
                    lx.next(Mode::Normal)?;
                    lx.next(Mode::Normal)?.tok == Tok::Punct('(')
                } =>
            {
                self.next(Mode::Normal)?;
                self.next(Mode::Normal)?;
                let attrs = if self.peek_is(&Tok::Punct(')'))? { Vec::new() } else { self.attrs()? };
                self.punct(')', &format!("to close {w}("))?;
                Ok(if w == "randvar" { SetValue::Randvar(attrs) } else { SetValue::Cvar(attrs) })
            }
            Tok::Word(w) => {
                self.next(Mode::Normal)?;
                Ok(SetValue::Word(w))
            }
            Tok::Bool(b) => {
                self.next(Mode::Normal)?;
                Ok(SetValue::Bool(b))
            }
            Tok::Quoted(parts) => {
                self.next(Mode::Normal)?;
                Ok(SetValue::Quoted(parts))
            }
            _ => expected("a value (integer, true/false, string, $variable, randvar(...) or cvar(...))", &t),
        }
    }

    fn nested<T>(&mut self, pos: Pos, f: impl FnOnce(&mut Self) -> Res<T>) -> Res<T> {
        if self.depth >= MAX_EXPR_DEPTH {
            return err(pos, format!("expression nests deeper than {MAX_EXPR_DEPTH} levels"));
        }
        self.depth += 1;
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn operator(&mut self, pos: Pos) -> Res<()> {
        self.ops += 1;
        if self.ops > MAX_EXPR_OPS {
            return err(pos, format!("expression has more than {MAX_EXPR_OPS} operators"));
        }
        self.next(Mode::Expr).map(|_| ())
    }

    /// `term (('+'|'-') term)*`
    fn expr(&mut self) -> Res<Expr> {
        let mut left = self.term()?;
        loop {
            let t = self.peek(Mode::Expr)?;
            match t.tok {
                Tok::Op(op @ ('+' | '-')) => {
                    self.operator(t.pos)?;
                    left = Expr::Bin(op, Box::new(left), Box::new(self.term()?), t.pos);
                }
                _ => return Ok(left),
            }
        }
    }

    /// `atom (('*'|'/') atom)*`
    fn term(&mut self) -> Res<Expr> {
        let mut left = self.atom()?;
        loop {
            let t = self.peek(Mode::Expr)?;
            match t.tok {
                Tok::Op(op @ ('*' | '/')) => {
                    self.operator(t.pos)?;
                    left = Expr::Bin(op, Box::new(left), Box::new(self.atom()?), t.pos);
                }
                _ => return Ok(left),
            }
        }
    }

    fn atom(&mut self) -> Res<Expr> {
        let t = self.next(Mode::Expr)?;
        match t.tok {
            Tok::Int(v) => Ok(Expr::Int(v, t.pos)),
            Tok::Var(v) => Ok(Expr::Var(v, t.pos)),
            Tok::Op('-') => {
                self.ops += 1;
                self.nested(t.pos, |p| Ok(Expr::Neg(Box::new(p.atom()?), t.pos)))
            }
            Tok::Punct('(') => {
                let e = self.nested(t.pos, |p| p.expr())?;
                self.punct(')', "to close the parenthesis")?;
                Ok(e)
            }
            _ => expected("an integer, a $variable or '(' in the expression", &t),
        }
    }

    /// `attr (',' attr)*`: at least one.
    fn attrs(&mut self) -> Res<Vec<Attr>> {
        let mut out = vec![self.attr()?];
        while self.peek_is(&Tok::Punct(','))? {
            self.next(Mode::Normal)?;
            out.push(self.attr()?);
        }
        Ok(out)
    }

    fn attr(&mut self) -> Res<Attr> {
        let t = self.next(Mode::Normal)?;
        let (name, local) = match t.tok {
            Tok::Word(w) => (w, false),
            Tok::Var(v) => (v, true),
            // `cached=false` and the like never start with a boolean, but a
            // bare `true` is surely a slip for an attribute name.
            _ => return expected("an attribute name", &t),
        };
        let value = if self.peek_is(&Tok::Punct('='))? {
            self.next(Mode::Normal)?;
            Some(self.value()?)
        } else {
            None
        };
        Ok(Attr { name, local, pos: t.pos, value })
    }

    fn value(&mut self) -> Res<Value> {
        let t = self.next(Mode::Normal)?;
        let kind = match t.tok {
            Tok::Int(v) => ValueKind::Int(v),
            Tok::Bool(b) => ValueKind::Bool(b),
            Tok::Word(w) => ValueKind::Word(w),
            Tok::Quoted(p) => ValueKind::Quoted(p),
            Tok::Var(v) => ValueKind::Var(v),
            Tok::Punct('{') => ValueKind::Table(self.table()?),
            _ => return expected("a value (integer, true/false, string or $variable)", &t),
        };
        Ok(Value { kind, pos: t.pos })
    }

    /// After the outer `{`: `{a,b,c} (',' {a,b,c})* '}'`.
    fn table(&mut self) -> Res<Vec<[Value; 3]>> {
        let mut rows = Vec::new();
        loop {
            self.punct('{', "to open a table row {percent, low, high}")?;
            let a = self.cell()?;
            self.punct(',', "between table cells")?;
            let b = self.cell()?;
            self.punct(',', "between table cells")?;
            let c = self.cell()?;
            self.punct('}', "to close the table row (rows have three cells)")?;
            rows.push([a, b, c]);
            let t = self.next(Mode::Normal)?;
            match t.tok {
                Tok::Punct(',') => continue,
                Tok::Punct('}') => return Ok(rows),
                _ => return expected("',' or '}' after a table row", &t),
            }
        }
    }

    fn cell(&mut self) -> Res<Value> {
        let t = self.next(Mode::Normal)?;
        let kind = match t.tok {
            Tok::Int(v) => ValueKind::Int(v),
            Tok::Var(v) => ValueKind::Var(v),
            _ => return expected("an integer or $variable in the table", &t),
        };
        Ok(Value { kind, pos: t.pos })
    }

    /// An optional integer or variable (run, psrun).
    fn opt_number(&mut self) -> Res<Option<Value>> {
        let t = self.peek(Mode::Normal)?;
        Ok(match t.tok {
            Tok::Int(_) | Tok::Var(_) => Some(self.value()?),
            _ => None,
        })
    }

    fn number(&mut self, what: &str) -> Res<Value> {
        match self.opt_number()? {
            Some(v) => Ok(v),
            None => expected(what, &self.peek(Mode::Normal)?),
        }
    }

    fn text(&mut self, what: &str) -> Res<Value> {
        let t = self.peek(Mode::Normal)?;
        match t.tok {
            Tok::Quoted(_) | Tok::Word(_) | Tok::Int(_) | Tok::Var(_) => self.value(),
            _ => expected(what, &t),
        }
    }
}
