//! Filebench workload files (WML, `.f`) → `FlowPlan`.
//!
//! - `lexer`: characters → tokens with positions (two modes: attributes, arithmetic)
//! - `parser`: tokens → statements (`ast`), syntax only
//! - `scan`: whole-script facts (variables mentioned, 1.4 dialect)
//! - `lower`: runs the script (variables, prelude, run line) and builds the plan
//! - `entity`, `attrs`, `randvar`: filesets/processes/flowops, attribute
//!   lists, random variables, with Filebench's rules checked
//!
//! Both the Filebench 1.5 language and the 1.4 dialect still found in stock
//! workloads are accepted. Where fsbench differs from Filebench 1.5:
//! - lexing: `${name}` and `$(name)` are the same variable as `$name`, and
//!   one-letter names work; upper-case K/M/G suffixes are accepted; a bare
//!   string may start with `.` or `_` (so `./data` needs no quotes);
//!   integers must fit in 64 bits (larger ones are errors, never wrapped);
//! - a quoted attribute value may contain `$var`s (substituted when the plan
//!   is built; Filebench rejects them); `\"` is a literal quote;
//! - 1.4 commands and attributes are accepted: `set $v = $a * $b` (+ - * /,
//!   integers, overflow and division by zero are errors), `define randvar`,
//!   `usage` (ignored), `vars` (an echo step listing the variables),
//!   `warmup N` (`RunSpec::warmup_s`), `create processes` (no effect),
//!   fileset `cached` and `filesizegamma`, flowop `wss`;
//! - 1.4 sizes: an explicit `filesizegamma=G` makes a fileset's constant
//!   `size` the mean of a gamma distribution of shape G/1000 (G=0: fixed). A
//!   script otherwise recognised as 1.4 gets 1.4's default G=1500 for every
//!   `define fileset` with an explicit constant size (not `define file`), with
//!   one warning;
//! - `version` becomes an echo step; `debug` and `list` are accepted and
//!   ignored with a warning; `set mode nousestats` is accepted (no effect);
//! - statements after `run`/`psrun`/`quit` are parsed (syntax errors are
//!   reported) but ignored with a warning; without a run line the duration is
//!   `--runtime` or 60 s, with a warning;
//! - checks Filebench lacks: unknown attributes (with a suggestion),
//!   open-time flags on flowops that never
//!   open a file, missing or unknown filesets and targets, `aiowrite` without
//!   `random`, fd slots outside 0–127, `prealloc` over 100, a `--set` for a
//!   variable the script never mentions, a variable used but never set;
//! - composite flowops (`define flowop`) must be defined before their use;
//!   a local `$var` takes the use's value, else the definition's, else the
//!   global variable of that name;
//! - randvar `seed=` is kept only with randsrc rand48 (urandom and cvars draw
//!   from the thread's seeded stream instead); a tabular randvar with `mean=`
//!   has its rows rescaled to that mean; cvar `min` defaults to 0, `max` to
//!   none, and the `parameters` numbers may be fractions or carry k/m/g;
//! - boolean attributes also take integers (non-zero: true), string
//!   attributes take integers, `prealloc=true|false` means 100|0;
//! - more checks: `instances` of at least 1, `nice` in −20..=19, `ioprio`
//!   0–7 (8: unset), `dirwidth` of at least 2 when there is a tree to shape,
//!   not both `readonly` and `writeonly`, a script must define a process;
//! - a fileset without `dirwidth` gets Filebench's default 0 (each entry in
//!   a directory of its own under the root, as Filebench lays it out), with
//!   a warning naming file, line and fileset as Filebench logs one;
//! - `finishoncount`/`finishonbytes` without `set mode quit`: in a 1.4
//!   script they end the run when reached, as 1.4 did (with a warning); in
//!   a 1.5 script they are an error, as 1.5 makes them;
//! - `;` is a separator where a token ends (after a number, `}` or a quote);
//!   inside a bare string it is part of the string (as in Filebench, so
//!   `parameters=mean:1;gamma:1.5` works);
//! - hostile input is bounded: at most 64 nested parentheses and 256
//!   operators in an expression, composite flowops nested 16 deep and 65 536
//!   flowops after expansion, 64 MiB of text produced in all.

mod ast;
mod attrs;
mod entity;
mod lexer;
mod lower;
mod parser;
mod randvar;
mod scan;
#[cfg(test)]
mod tests;

use crate::frontend::suggest::nearest;
use crate::model::flow::FlowPlan;
use crate::model::job::BufferContent;
use std::fmt;
use std::path::Path;

/// Seed of a run when the user gives none, so runs are reproducible.
pub const DEFAULT_SEED: u64 = 0x5EED;

/// What the command line adds to a workload file.
#[derive(Clone, Debug, Default)]
pub struct WmlOptions {
    /// `--set name=value` (name without `$`): wins over every `set` of that
    /// variable in the file. The value is read like the right-hand side of
    /// `set` (integer, boolean, string, `"quoted"`, `randvar(...)`,
    /// `cvar(...)`); text that is not WML is taken as a string.
    pub sets: Vec<(String, String)>,
    /// `--runtime`: overrides `run N`/`psrun P N`, or supplies a duration.
    pub runtime_s: Option<u64>,
    /// Recorded in `FlowPlan::seed`; `DEFAULT_SEED` when absent.
    pub seed: Option<u64>,
    pub content: BufferContent,
}

/// A plan and the warnings for stderr.
#[derive(Debug)]
pub struct Parsed {
    pub plan: FlowPlan,
    pub warnings: Vec<crate::result::warning::Warning>,
}

/// An error with its location: `file` is the workload's origin (or
/// `--set`, `--runtime` with line 0 for command-line values).
#[derive(Debug, Clone)]
pub struct WmlError {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub message: String,
}

impl fmt::Display for WmlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Errors of a flag (file "--set", "--runtime") have no position,
        // and their message names the flag already.
        if self.line == 0 && self.file.starts_with("--") {
            return write!(f, "{}", self.message);
        }
        if self.line == 0 {
            return write!(f, "{}: {}", self.file, self.message);
        }
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.message)
    }
}

impl std::error::Error for WmlError {}

/// Parse workload text. `origin` names it in errors and in the plan's
/// `source`; `name` becomes the plan's name.
pub fn parse(text: &str, origin: &str, name: &str, opts: &WmlOptions) -> Result<Parsed, WmlError> {
    let stmts = parser::parse_script(text).map_err(|e| WmlError {
        file: origin.to_string(),
        line: e.pos.line,
        col: e.pos.col,
        message: e.message,
    })?;
    lower::build(&stmts, origin, name, opts)
}

/// Read and parse a workload file; the plan is named after the file's stem.
pub fn load(path: &Path, opts: &WmlOptions) -> Result<Parsed, WmlError> {
    let origin = path.display().to_string();
    let bytes = crate::input::read(path, "Filebench workload file").map_err(|e| WmlError {
        file: origin.clone(),
        line: 0,
        col: 0,
        message: format!("cannot read the workload file: {e}"),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let good = String::from_utf8_lossy(good);
        let line = good.matches('\n').count() + 1;
        let col = good.rsplit('\n').next().map(|l| l.chars().count()).unwrap_or(0) + 1;
        WmlError {
            file: origin.clone(),
            line: u32::try_from(line).unwrap_or(u32::MAX),
            col: u32::try_from(col).unwrap_or(u32::MAX),
            message: "the file is not valid UTF-8 text".into(),
        }
    })?;
    let name = path.file_stem().map(|s| s.to_string_lossy().to_string()).unwrap_or_else(|| "workload".into());
    parse(&text, &origin, &name, opts)
}

/// The closest of `candidates` to `name`, if it is a plausible typo.
fn suggest<'c>(name: &str, candidates: impl Iterator<Item = &'c str>) -> Option<&'c str> {
    let n = name.chars().count();
    let limit = if n <= 3 { 1 } else { (n / 3).clamp(2, 3) };
    nearest(name, candidates.filter(|c| *c != name), limit)
}
