//! Statements → `FlowPlan`.
//!
//! The script runs top to bottom like Filebench's: `set` binds variables
//! (arithmetic and randvar parameters are evaluated there), `echo`,
//! `system`, `sleep` and `create files` become prelude steps with their
//! variables substituted at that point, and `run`/`psrun`/`quit` end it.
//! Entities (filesets, processes, eventgen) are only collected on the way
//! and built afterwards against the final variable table, because Filebench
//! binds their attributes lazily. `--set` values win over every `set`.

use super::ast::*;
use super::entity::CompositeDef;
use super::lexer::{clip, MAX_INT};
use super::parser::parse_set_value;
use super::randvar::describe;
use super::scan::{scan, Facts};
use super::{suggest, Parsed, WmlError, WmlOptions, DEFAULT_SEED};
use crate::model::flow::*;
use crate::result::warning::{Code, Warning};
use std::cell::Cell;
use std::collections::HashMap;

/// Filebench's run length when neither the script nor `--runtime` gives one.
pub const DEFAULT_RUN_S: u64 = 60;
/// `psrun` without a period prints every 10 s, as Filebench does.
const DEFAULT_PSRUN_PERIOD_S: u64 = 10;
/// Bytes of text the script may produce in all (strings copied into the
/// plan, substitutions, `vars` listings). Real scripts need kilobytes; this
/// stops `set $a = "$a$a"` doublings and the like from exhausting memory.
const TEXT_BUDGET: usize = 64 << 20;

/// A variable's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Val {
    Int(i128),
    Bool(bool),
    Str(String),
    /// Index into `Lower::rand_defs`.
    Rand(usize),
}

/// A resolved value and, when it came through a variable, which one and
/// from where (for messages).
#[derive(Clone, Debug)]
pub struct Got {
    pub val: Val,
    pub via: Option<String>,
}

impl Got {
    fn plain(val: Val) -> Got {
        Got { val, via: None }
    }
}

/// A composite flowop's local variables, already resolved.
pub type Locals = HashMap<String, Got>;

struct Binding {
    val: Val,
    line: u32,
}

pub struct Lower<'a> {
    pub file: String,
    pub warnings: Vec<Warning>,
    pub facts: Facts,
    /// `--set` values with the text the user gave.
    overrides: HashMap<String, (Val, String)>,
    override_order: Vec<String>,
    vars: HashMap<String, Binding>,
    order: Vec<String>,
    /// Every randvar/cvar evaluated so far (set statements and `--set`).
    pub rand_defs: Vec<RandVar>,
    rand_map: HashMap<usize, usize>,
    /// The plan's random variables: the used ones, plus synthetic ones.
    pub randvars: Vec<RandVar>,
    pub mode: QuitMode,
    pub composites: HashMap<String, CompositeDef<'a>>,
    pub filesets: Vec<FilesetSpec>,
    /// Fileset name → (index, line of its definition).
    pub fileset_index: HashMap<String, (usize, u32)>,
    /// `target=` values, checked once every flowop is known.
    pub targets: Vec<(String, Pos)>,
    pub flowop_count: usize,
    pub locals_bound: usize,
    pub warned14: bool,
    /// The 1.4 finishon*-ends-the-run warning was given.
    pub warned_finish14: bool,
    /// What is left of `TEXT_BUDGET`.
    text_left: Cell<usize>,
}

/// What a `run` or `psrun` line said.
struct RunLine {
    keyword: &'static str,
    duration: Option<u64>,
    interval: Option<Interval>,
}

pub fn build(stmts: &[Stmt], origin: &str, name: &str, opts: &WmlOptions) -> Result<Parsed, WmlError> {
    let mut lw = Lower {
        file: origin.to_string(),
        warnings: Vec::new(),
        facts: scan(stmts),
        overrides: HashMap::new(),
        override_order: Vec::new(),
        vars: HashMap::new(),
        order: Vec::new(),
        rand_defs: Vec::new(),
        rand_map: HashMap::new(),
        randvars: Vec::new(),
        mode: QuitMode::Timeout,
        composites: HashMap::new(),
        filesets: Vec::new(),
        fileset_index: HashMap::new(),
        targets: Vec::new(),
        flowop_count: 0,
        locals_bound: 0,
        warned14: false,
        warned_finish14: false,
        text_left: Cell::new(TEXT_BUDGET),
    };
    lw.apply_sets(&opts.sets)?;

    let mut prelude = Vec::new();
    let mut filesets = Vec::new();
    let mut processes = Vec::new();
    let mut eventgen = None;
    let mut lathist = false;
    let mut warmup_s = 0;
    let mut run: Option<RunLine> = None;
    let mut ended: Option<&'static str> = None;
    for (i, st) in stmts.iter().enumerate() {
        if let Some(why) = ended {
            lw.warnings
                .push(Warning::new(Code::IgnoredOption, format!("line {}: ignored: after {why} ({})", st.pos.line, st.kind.keyword())));
            continue;
        }
        match &st.kind {
            StmtKind::Fileset { file, attrs } => filesets.push((st.pos, *file, attrs.as_slice())),
            StmtKind::Process { attrs, threads } => processes.push((i, st.pos, attrs.as_slice(), threads.as_slice())),
            StmtKind::Composite { attrs, body } => lw.define_composite(i, st.pos, attrs, body)?,
            StmtKind::Set { var, var_pos, value } => {
                let val = lw.eval_set(var, value)?;
                lw.bind(var, *var_pos, val);
            }
            StmtKind::DefineRandvar { var, var_pos, attrs } => {
                let rv = lw.randvar(var, attrs)?;
                lw.rand_defs.push(rv);
                lw.bind(var, *var_pos, Val::Rand(lw.rand_defs.len() - 1));
            }
            StmtKind::ModeQuit(m) => lw.mode = *m,
            StmtKind::NoUseStats => {}
            StmtKind::Run(arg) => {
                let duration = arg.as_ref().map(|v| lw.seconds("run", v)).transpose()?;
                run = Some(RunLine { keyword: "run", duration, interval: None });
                ended = Some("run");
            }
            StmtKind::Psrun { period, duration } => {
                let interval = match period {
                    None => Interval { period_s: DEFAULT_PSRUN_PERIOD_S, reset: false },
                    Some(v) => lw.psrun_period(v)?,
                };
                let duration = duration.as_ref().map(|v| lw.seconds("psrun", v)).transpose()?;
                run = Some(RunLine { keyword: "psrun", duration, interval: Some(interval) });
                ended = Some("psrun");
            }
            StmtKind::Create(CreateWhat::Files) => prelude.push(Step::CreateFiles),
            StmtKind::Create(CreateWhat::Processes) => lw.warnings.push(Warning::new(
                Code::IgnoredOption,
                format!("line {}: create processes: accepted, no effect (processes start at the run)", st.pos.line),
            )),
            StmtKind::Eventgen(attrs) => eventgen = Some(attrs.as_slice()),
            StmtKind::Sleep(v) => prelude.push(Step::Sleep(lw.uint_now("sleep", v)?)),
            StmtKind::System(v) => prelude.push(Step::System(lw.text_now(v)?)),
            StmtKind::Echo(v) => prelude.push(Step::Echo(lw.text_now(v)?)),
            StmtKind::Quit => ended = Some("quit"),
            StmtKind::Version => {
                prelude.push(Step::Echo(format!("fsbench {} (Filebench WML, 1.5 and 1.4 dialects)", env!("CARGO_PKG_VERSION"))))
            }
            StmtKind::Debug(v) => {
                lw.uint_now("debug", v)?;
                lw.warnings
                    .push(Warning::new(Code::IgnoredOption, format!("line {}: debug: ignored (fsbench has no debug levels)", st.pos.line)));
            }
            StmtKind::List(_) => lw
                .warnings
                .push(Warning::new(Code::IgnoredOption, format!("line {}: list: ignored (the plan is in the report)", st.pos.line))),
            StmtKind::EnableLathist => lathist = true,
            StmtKind::Usage(_) => {}
            StmtKind::Vars => {
                let lines: Vec<String> = lw.var_list().into_iter().map(|(n, v)| format!("${n} = {v}")).collect();
                let text = lines.join("\n");
                lw.spend(text.len(), st.pos)?;
                prelude.push(Step::Echo(text));
            }
            StmtKind::Warmup(v) => warmup_s = lw.uint_now("warmup", v)?,
        }
    }

    // Entities bind against the final table.
    for (pos, file, attrs) in filesets {
        lw.fileset(pos, file, attrs)?;
    }
    let mut procs = Vec::new();
    for (i, pos, attrs, threads) in processes {
        procs.push(lw.process(i, pos, attrs, threads)?);
    }
    if procs.is_empty() {
        let pos = stmts.last().map(|s| s.pos).unwrap_or(Pos { line: 1, col: 1 });
        return Err(lw.err(pos, "nothing to run: the script defines no process (define process name=... { thread ... })"));
    }
    lw.check_targets(&procs)?;
    let eventgen_rate = match eventgen {
        Some(attrs) => Some(lw.eventgen(attrs)?),
        None => None,
    };

    let (duration_s, duration_from) = match (opts.runtime_s, &run) {
        (Some(s), _) => (s, "--runtime"),
        (None, Some(r)) => (r.duration.unwrap_or(DEFAULT_RUN_S), r.keyword),
        (None, None) => {
            lw.warnings
                .push(Warning::new(Code::DefaultApplied, format!("no run line: running {DEFAULT_RUN_S} s (give --runtime to choose)")));
            (DEFAULT_RUN_S, "default")
        }
    };
    if duration_s == 0 {
        return Err(WmlError {
            file: "--runtime".into(),
            line: 0,
            col: 0,
            message: "--runtime: expected at least 1 second, found 0".into(),
        });
    }
    let vars = lw.var_list();
    let plan = FlowPlan {
        name: name.to_string(),
        source: origin.to_string(),
        vars,
        randvars: std::mem::take(&mut lw.randvars),
        filesets: std::mem::take(&mut lw.filesets),
        processes: procs,
        prelude,
        run: RunSpec { duration_s, duration_from: duration_from.to_string(), interval: run.and_then(|r| r.interval), warmup_s },
        mode: lw.mode,
        eventgen_rate,
        lathist,
        seed: opts.seed.unwrap_or(DEFAULT_SEED),
        content: opts.content.clone(),
    };
    Ok(Parsed { plan, warnings: lw.warnings })
}

impl<'a> Lower<'a> {
    pub fn err(&self, pos: Pos, message: impl Into<String>) -> WmlError {
        WmlError { file: self.file.clone(), line: pos.line, col: pos.col, message: message.into() }
    }

    fn set_err(name: &str, text: &str, message: impl Into<String>) -> WmlError {
        WmlError { file: "--set".into(), line: 0, col: 0, message: format!("--set {name}={}: {}", clip(text), message.into()) }
    }

    /// Parse and check every `--set name=value` before the script runs.
    fn apply_sets(&mut self, sets: &[(String, String)]) -> Result<(), WmlError> {
        for (raw, text) in sets {
            let name = raw.trim().trim_start_matches('$');
            let name = name.strip_prefix('{').and_then(|n| n.strip_suffix('}')).unwrap_or(name);
            let valid = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return Err(Self::set_err(raw, text, "expected a variable name (letters, digits, '_') before '='"));
            }
            if !self.facts.mentioned.contains(name) {
                let known: Vec<String> = self.facts.mentioned.iter().map(|n| format!("${n}")).collect();
                let hint = suggest(name, self.facts.mentioned.iter().map(String::as_str))
                    .map(|s| format!("did you mean {s}? "))
                    .unwrap_or_default();
                let list = if known.is_empty() { "none".to_string() } else { known.join(", ") };
                return Err(Self::set_err(name, text, format!("the script neither sets nor uses ${name}; {hint}its variables: {list}")));
            }
            let val = self.eval_set_text(name, text)?;
            if self.overrides.insert(name.to_string(), (val, text.clone())).is_none() {
                self.override_order.push(name.to_string());
            }
        }
        Ok(())
    }

    /// A `--set` value is read like the right-hand side of `set $v =`; text
    /// that is not WML (a path with blanks, say) is taken as a string.
    fn eval_set_text(&mut self, name: &str, text: &str) -> Result<Val, WmlError> {
        let trimmed = text.trim();
        let must_parse = trimmed.starts_with('"') || trimmed.starts_with("randvar(") || trimmed.starts_with("cvar(");
        let value = match parse_set_value(trimmed) {
            Ok(v) => v,
            Err(e) if must_parse => return Err(Self::set_err(name, text, format!("column {}: {}", e.pos.col, e.message))),
            Err(_) => return Ok(Val::Str(text.to_string())),
        };
        let saved = std::mem::replace(&mut self.file, "--set".into());
        // The script's variables are not visible to --set values.
        let vars = std::mem::take(&mut self.vars);
        let r = self.eval_set(name, &value);
        self.vars = vars;
        self.file = saved;
        r.map_err(|e| Self::set_err(name, text, format!("column {}: {}", e.col, e.message)))
    }

    fn bind(&mut self, var: &str, pos: Pos, val: Val) {
        if !self.vars.contains_key(var) {
            self.order.push(var.to_string());
        }
        self.vars.insert(var.to_string(), Binding { val, line: pos.line });
    }

    /// Evaluate the right-hand side of `set $var = ...` now.
    fn eval_set(&mut self, var: &str, v: &SetValue) -> Result<Val, WmlError> {
        Ok(match v {
            SetValue::Expr(Expr::Var(n, pos)) => {
                let g = self.lookup(n, *pos, None)?;
                if let Val::Str(s) = &g.val {
                    self.spend(s.len(), *pos)?;
                }
                g.val
            }
            SetValue::Expr(e) => Val::Int(self.eval_int(e, 0)?),
            SetValue::Bool(b) => Val::Bool(*b),
            SetValue::Word(w) => Val::Str(w.clone()),
            SetValue::Quoted(parts) => Val::Str(self.substitute(parts, None)?),
            SetValue::Randvar(attrs) => {
                let rv = self.randvar(var, attrs)?;
                self.rand_defs.push(rv);
                Val::Rand(self.rand_defs.len() - 1)
            }
            SetValue::Cvar(attrs) => {
                let rv = self.cvar(var, attrs)?;
                self.rand_defs.push(rv);
                Val::Rand(self.rand_defs.len() - 1)
            }
        })
    }

    /// 1.4 integer arithmetic; every intermediate result must fit in ±(2⁶⁴−1).
    fn eval_int(&self, e: &Expr, depth: u32) -> Result<i128, WmlError> {
        // The parser bounds nesting; this guards the recursion regardless.
        if depth > 256 {
            return Err(self.err(expr_pos(e), "expression nests too deeply"));
        }
        let fits = |v: i128, pos: Pos, what: &str| {
            if (-MAX_INT..=MAX_INT).contains(&v) {
                Ok(v)
            } else {
                Err(self.err(pos, format!("arithmetic overflow: {what} does not fit in 64 bits")))
            }
        };
        match e {
            Expr::Int(v, _) => Ok(*v),
            Expr::Var(n, pos) => {
                let g = self.lookup(n, *pos, None)?;
                match g.val {
                    Val::Int(v) => Ok(v),
                    _ => Err(self.err(*pos, format!("arithmetic: expected an integer, found {}", self.found(&g)))),
                }
            }
            Expr::Neg(x, _) => Ok(-self.eval_int(x, depth + 1)?),
            Expr::Bin(op, a, b, pos) => {
                let (a, b) = (self.eval_int(a, depth + 1)?, self.eval_int(b, depth + 1)?);
                let r = match op {
                    '+' => a + b,
                    '-' => a - b,
                    '*' => a.checked_mul(b).ok_or_else(|| self.err(*pos, format!("arithmetic overflow: {a} * {b}")))?,
                    _ if b == 0 => return Err(self.err(*pos, format!("division by zero: {a} / 0"))),
                    _ => a / b,
                };
                fits(r, *pos, &format!("{a} {op} {b}"))
            }
        }
    }

    /// The value of a variable: a composite's local, a `--set`, or the table.
    pub fn lookup(&self, name: &str, pos: Pos, locals: Option<&Locals>) -> Result<Got, WmlError> {
        if let Some(g) = locals.and_then(|l| l.get(name)) {
            return Ok(g.clone());
        }
        if let Some((val, text)) = self.overrides.get(name) {
            return Ok(Got { val: val.clone(), via: Some(format!("${name} from --set {name}={}", clip(text))) });
        }
        if let Some(b) = self.vars.get(name) {
            return Ok(Got { val: b.val.clone(), via: Some(format!("${name} set at line {}", b.line)) });
        }
        let hint = match self.facts.first_set.get(name) {
            Some(line) => format!("; the script sets it at line {line}, which comes after this use or after the run line"),
            None => format!("; set it in the script (set ${name} = ...) or with --set {name}=VALUE"),
        };
        Err(self.err(pos, format!("variable ${name} is not set{hint}")))
    }

    /// Account for `n` bytes of text produced at `pos`.
    fn spend(&self, n: usize, pos: Pos) -> Result<(), WmlError> {
        match self.text_left.get().checked_sub(n) {
            Some(left) => {
                self.text_left.set(left);
                Ok(())
            }
            None => {
                Err(self.err(pos, format!("the script produces more than {} MiB of text (strings, echo, system, vars)", TEXT_BUDGET >> 20)))
            }
        }
    }

    pub fn value(&self, v: &Value, locals: Option<&Locals>) -> Result<Got, WmlError> {
        let g = self.value_unspent(v, locals)?;
        if let Val::Str(s) = &g.val {
            self.spend(s.len(), v.pos)?;
        }
        Ok(g)
    }

    fn value_unspent(&self, v: &Value, locals: Option<&Locals>) -> Result<Got, WmlError> {
        Ok(match &v.kind {
            ValueKind::Int(i) => Got::plain(Val::Int(*i)),
            ValueKind::Bool(b) => Got::plain(Val::Bool(*b)),
            ValueKind::Word(w) => Got::plain(Val::Str(w.clone())),
            ValueKind::Quoted(parts) => Got::plain(Val::Str(self.substitute(parts, locals)?)),
            ValueKind::Var(n) => self.lookup(n, v.pos, locals)?,
            ValueKind::Table(_) => return Err(self.err(v.pos, "expected a value, found a table (tables are only for randtable=)")),
        })
    }

    /// `$var`s in quoted text replaced by their values.
    fn substitute(&self, parts: &[Part], locals: Option<&Locals>) -> Result<String, WmlError> {
        let mut s = String::new();
        for p in parts {
            match p {
                Part::Text(t) => s.push_str(t),
                Part::Var { name, pos } => {
                    let g = self.lookup(name, *pos, locals)?;
                    let t = self.text_of(&g, *pos, "text")?;
                    self.spend(t.len(), *pos)?;
                    s.push_str(&t);
                }
            }
        }
        Ok(s)
    }

    fn text_of(&self, g: &Got, pos: Pos, what: &str) -> Result<String, WmlError> {
        match &g.val {
            Val::Int(v) => Ok(v.to_string()),
            Val::Bool(b) => Ok(b.to_string()),
            Val::Str(s) => Ok(s.clone()),
            Val::Rand(_) => Err(self.err(pos, format!("{what}: expected a string, found {}", self.found(g)))),
        }
    }

    /// How a value reads in "expected X, found Y".
    pub fn found(&self, g: &Got) -> String {
        let what = match &g.val {
            Val::Int(v) => format!("integer {v}"),
            Val::Bool(b) => format!("boolean {b}"),
            Val::Str(s) => format!("string \"{}\"", clip(s)),
            Val::Rand(i) => {
                let d = self.rand_defs.get(*i).map(describe).unwrap_or_default();
                format!("random variable {d}")
            }
        };
        match &g.via {
            Some(via) => format!("{what} ({via})"),
            None => what,
        }
    }

    pub fn u64_of(&self, what: &str, g: &Got, pos: Pos) -> Result<u64, WmlError> {
        match g.val {
            Val::Int(v) if v >= 0 => u64::try_from(v).map_err(|_| self.err(pos, format!("{what}: {v} is too large"))),
            _ => Err(self.err(pos, format!("{what}: expected a non-negative integer, found {}", self.found(g)))),
        }
    }

    /// A number that may be a random variable.
    pub fn num_of(&mut self, what: &str, g: &Got, pos: Pos) -> Result<Num, WmlError> {
        match g.val {
            Val::Rand(i) => Ok(Num::Random(self.plan_randvar(i))),
            _ => Ok(Num::Fixed(self.u64_of(what, g, pos)?)),
        }
    }

    /// Booleans also accept integers (non-zero is true), as Filebench does.
    pub fn bool_of(&self, what: &str, g: &Got, pos: Pos) -> Result<bool, WmlError> {
        match g.val {
            Val::Bool(b) => Ok(b),
            Val::Int(v) => Ok(v != 0),
            _ => Err(self.err(pos, format!("{what}: expected true or false, found {}", self.found(g)))),
        }
    }

    pub fn string_of(&self, what: &str, g: &Got, pos: Pos) -> Result<String, WmlError> {
        match &g.val {
            Val::Str(s) => Ok(s.clone()),
            Val::Int(v) => Ok(v.to_string()),
            _ => Err(self.err(pos, format!("{what}: expected a string, found {}", self.found(g)))),
        }
    }

    /// The plan's index of randvar definition `i` (added on first use).
    fn plan_randvar(&mut self, i: usize) -> usize {
        if let Some(&j) = self.rand_map.get(&i) {
            return j;
        }
        let rv = self.rand_defs.get(i).cloned();
        self.randvars.extend(rv);
        let j = self.randvars.len().saturating_sub(1);
        self.rand_map.insert(i, j);
        j
    }

    fn uint_now(&self, what: &str, v: &Value) -> Result<u64, WmlError> {
        let g = self.value(v, None)?;
        self.u64_of(what, &g, v.pos)
    }

    fn seconds(&self, what: &str, v: &Value) -> Result<u64, WmlError> {
        let s = self.uint_now(what, v)?;
        if s == 0 {
            return Err(self.err(v.pos, format!("{what}: expected a duration of at least 1 second, found 0")));
        }
        Ok(s)
    }

    fn psrun_period(&self, v: &Value) -> Result<Interval, WmlError> {
        let g = self.value(v, None)?;
        let p = match g.val {
            Val::Int(p) if p != 0 => p,
            _ => return Err(self.err(v.pos, format!("psrun: expected a non-zero period in seconds, found {}", self.found(&g)))),
        };
        let period_s = u64::try_from(p.unsigned_abs()).map_err(|_| self.err(v.pos, "psrun: period too large"))?;
        Ok(Interval { period_s, reset: p < 0 })
    }

    fn text_now(&self, v: &Value) -> Result<String, WmlError> {
        let g = self.value(v, None)?;
        self.text_of(&g, v.pos, "text")
    }

    /// Variables and their values now: script order, then `--set`-only ones.
    fn var_list(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let shown = |v: &Val| match v {
            Val::Int(i) => i.to_string(),
            Val::Bool(b) => b.to_string(),
            Val::Str(s) => s.clone(),
            Val::Rand(i) => self.rand_defs.get(*i).map(describe).unwrap_or_default(),
        };
        for n in &self.order {
            let v = match (self.overrides.get(n), self.vars.get(n)) {
                (Some((v, _)), _) => v,
                (None, Some(b)) => &b.val,
                (None, None) => continue,
            };
            out.push((n.clone(), shown(v)));
        }
        for n in &self.override_order {
            if !self.vars.contains_key(n) {
                if let Some((v, _)) = self.overrides.get(n) {
                    out.push((n.clone(), shown(v)));
                }
            }
        }
        out
    }
}

fn expr_pos(e: &Expr) -> Pos {
    match e {
        Expr::Int(_, p) | Expr::Var(_, p) | Expr::Neg(_, p) | Expr::Bin(_, _, _, p) => *p,
    }
}
