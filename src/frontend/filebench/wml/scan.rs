//! Whole-script facts gathered before anything runs: which variables the
//! script sets or uses (for the `--set` typo guard and "set too late"
//! hints), and whether it is written in the Filebench 1.4 dialect.

use super::ast::*;
use std::collections::{BTreeSet, HashMap};

#[derive(Default)]
pub struct Facts {
    /// Every variable the script sets or mentions (composite locals included).
    pub mentioned: BTreeSet<String>,
    /// Line of the first `set` (or `define randvar`) of each variable.
    pub first_set: HashMap<String, u32>,
    /// The first sign of the 1.4 dialect, as "WHAT at line N".
    pub dialect14: Option<String>,
}

impl Facts {
    fn evidence(&mut self, what: &str, line: u32) {
        if self.dialect14.is_none() {
            self.dialect14 = Some(format!("{what} at line {line}"));
        }
    }

    fn set(&mut self, var: &str, line: u32) {
        self.mentioned.insert(var.to_string());
        self.first_set.entry(var.to_string()).or_insert(line);
    }

    fn value(&mut self, v: &Value) {
        match &v.kind {
            ValueKind::Var(n) => {
                self.mentioned.insert(n.clone());
            }
            ValueKind::Quoted(parts) => self.parts(parts),
            ValueKind::Table(rows) => rows.iter().flatten().for_each(|c| self.value(c)),
            ValueKind::Int(_) | ValueKind::Bool(_) | ValueKind::Word(_) => {}
        }
    }

    fn parts(&mut self, parts: &[Part]) {
        for p in parts {
            if let Part::Var { name, .. } = p {
                self.mentioned.insert(name.clone());
            }
        }
    }

    fn attrs(&mut self, attrs: &[Attr]) {
        for a in attrs {
            if a.local {
                self.mentioned.insert(a.name.clone());
            }
            if let Some(v) = &a.value {
                self.value(v);
            }
        }
    }

    fn flowops(&mut self, flowops: &[Flowop]) {
        for f in flowops {
            if let Some(a) = f.attrs.iter().find(|a| a.name == "wss" && !a.local) {
                self.evidence("flowop attribute wss", a.pos.line);
            }
            self.attrs(&f.attrs);
        }
    }

    /// Returns whether the expression has arithmetic in it.
    fn expr(&mut self, e: &Expr) -> bool {
        match e {
            Expr::Int(..) => false,
            Expr::Var(n, _) => {
                self.mentioned.insert(n.clone());
                false
            }
            Expr::Neg(x, _) => self.expr(x),
            Expr::Bin(_, a, b, _) => {
                self.expr(a);
                self.expr(b);
                true
            }
        }
    }
}

pub fn scan(stmts: &[Stmt]) -> Facts {
    let mut f = Facts::default();
    for st in stmts {
        let line = st.pos.line;
        match &st.kind {
            StmtKind::Fileset { attrs, .. } => {
                for a in attrs.iter().filter(|a| !a.local) {
                    if a.name == "cached" || a.name == "filesizegamma" {
                        f.evidence(&format!("fileset attribute {}", a.name), a.pos.line);
                    }
                }
                f.attrs(attrs);
            }
            StmtKind::Process { attrs, threads } => {
                f.attrs(attrs);
                for t in threads {
                    f.attrs(&t.attrs);
                    f.flowops(&t.flowops);
                }
            }
            StmtKind::Composite { attrs, body } => {
                f.attrs(attrs);
                f.flowops(body);
            }
            StmtKind::Set { var, value, .. } => {
                f.set(var, line);
                match value {
                    SetValue::Expr(e) => {
                        if f.expr(e) {
                            f.evidence("arithmetic in set", line);
                        }
                    }
                    SetValue::Quoted(parts) => f.parts(parts),
                    SetValue::Randvar(a) | SetValue::Cvar(a) => f.attrs(a),
                    SetValue::Bool(_) | SetValue::Word(_) => {}
                }
            }
            StmtKind::DefineRandvar { var, attrs, .. } => {
                f.evidence("define randvar", line);
                f.set(var, line);
                f.attrs(attrs);
            }
            StmtKind::Run(v) => v.iter().for_each(|v| f.value(v)),
            StmtKind::Psrun { period, duration } => period.iter().chain(duration.iter()).for_each(|v| f.value(v)),
            StmtKind::Eventgen(attrs) => f.attrs(attrs),
            StmtKind::Sleep(v) | StmtKind::System(v) | StmtKind::Echo(v) | StmtKind::Debug(v) => f.value(v),
            StmtKind::Usage(v) => {
                f.evidence("usage", line);
                f.value(v);
            }
            StmtKind::Warmup(v) => {
                f.evidence("warmup", line);
                f.value(v);
            }
            StmtKind::Vars => f.evidence("vars", line),
            StmtKind::ModeQuit(_)
            | StmtKind::NoUseStats
            | StmtKind::Create(_)
            | StmtKind::Quit
            | StmtKind::Version
            | StmtKind::List(_)
            | StmtKind::EnableLathist => {}
        }
    }
    f
}
