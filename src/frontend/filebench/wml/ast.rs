//! The script as written: statements with the position of every name and
//! value, nothing resolved yet (variables bind when the plan is built).

pub use super::lexer::{Part, Pos};

#[derive(Clone, Debug, PartialEq)]
pub enum ValueKind {
    Int(i128),
    Bool(bool),
    /// A bare string.
    Word(String),
    Quoted(Vec<Part>),
    Var(String),
    /// `randtable={{pct,lo,hi},...}`: rows of three values.
    Table(Vec<[Value; 3]>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Value {
    pub kind: ValueKind,
    pub pos: Pos,
}

/// `name=value`, a bare `name`, or a composite flowop's `$local[=value]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Attr {
    pub name: String,
    /// Spelled `$name`: a composite flowop's local variable.
    pub local: bool,
    pub pos: Pos,
    pub value: Option<Value>,
}

/// Integer arithmetic of 1.4 `set` (also a plain integer or variable).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Int(i128, Pos),
    Var(String, Pos),
    Neg(Box<Expr>, Pos),
    Bin(char, Box<Expr>, Box<Expr>, Pos),
}

#[derive(Clone, Debug, PartialEq)]
pub enum SetValue {
    Expr(Expr),
    Bool(bool),
    Word(String),
    Quoted(Vec<Part>),
    /// `randvar(...)` (or 1.4 `define randvar`).
    Randvar(Vec<Attr>),
    Cvar(Vec<Attr>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Flowop {
    pub ty: String,
    pub ty_pos: Pos,
    pub attrs: Vec<Attr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Thread {
    pub pos: Pos,
    pub attrs: Vec<Attr>,
    pub flowops: Vec<Flowop>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateWhat {
    Files,
    Processes,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// `define fileset` (`file: false`) or `define file`.
    Fileset {
        file: bool,
        attrs: Vec<Attr>,
    },
    Process {
        attrs: Vec<Attr>,
        threads: Vec<Thread>,
    },
    /// `define flowop name=N ... { flowops }`.
    Composite {
        attrs: Vec<Attr>,
        body: Vec<Flowop>,
    },
    Set {
        var: String,
        var_pos: Pos,
        value: SetValue,
    },
    /// 1.4 `define randvar name=$x, ...`, kept apart to detect the dialect.
    DefineRandvar {
        var: String,
        var_pos: Pos,
        attrs: Vec<Attr>,
    },
    ModeQuit(crate::model::flow::QuitMode),
    NoUseStats,
    Run(Option<Value>),
    Psrun {
        period: Option<Value>,
        duration: Option<Value>,
    },
    Create(CreateWhat),
    Eventgen(Vec<Attr>),
    Sleep(Value),
    System(Value),
    Echo(Value),
    Quit,
    Version,
    Debug(Value),
    List(Option<String>),
    EnableLathist,
    Usage(Value),
    Vars,
    Warmup(Value),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// Where its keyword starts.
    pub pos: Pos,
    pub kind: StmtKind,
}

impl StmtKind {
    /// The command as a user would name it in a message.
    pub fn keyword(&self) -> &'static str {
        match self {
            StmtKind::Fileset { file: false, .. } => "define fileset",
            StmtKind::Fileset { file: true, .. } => "define file",
            StmtKind::Process { .. } => "define process",
            StmtKind::Composite { .. } => "define flowop",
            StmtKind::Set { .. } => "set",
            StmtKind::DefineRandvar { .. } => "define randvar",
            StmtKind::ModeQuit(_) | StmtKind::NoUseStats => "set mode",
            StmtKind::Run(_) => "run",
            StmtKind::Psrun { .. } => "psrun",
            StmtKind::Create(_) => "create",
            StmtKind::Eventgen(_) => "eventgen",
            StmtKind::Sleep(_) => "sleep",
            StmtKind::System(_) => "system",
            StmtKind::Echo(_) => "echo",
            StmtKind::Quit => "quit",
            StmtKind::Version => "version",
            StmtKind::Debug(_) => "debug",
            StmtKind::List(_) => "list",
            StmtKind::EnableLathist => "enable lathist",
            StmtKind::Usage(_) => "usage",
            StmtKind::Vars => "vars",
            StmtKind::Warmup(_) => "warmup",
        }
    }
}
