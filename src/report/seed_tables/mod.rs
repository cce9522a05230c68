//! The seeds' own tables at the top of an experiment's report.md, each
//! drawn when the experiment has its shape, from the summary alone (so the
//! terminal and `--output-format markdown` show them too): Filebench's ops/s
//! per personality × scenario × background with the write share (seed 000,
//! `filebench`), every level of the target against the first per workload
//! with blkparse's dispatches (seed 002, `targets`), throughput per block
//! size on each target (seed 003, `block_size`), and Bonnie++'s every test
//! with its `+++++` (seed 003, `bonnie`). Cells and columns follow the
//! experiment file's order.

mod block_size;
mod bonnie;
mod filebench;
mod targets;

use crate::report::format::num;
use crate::stats::experiment::{CellSummary, ExperimentSummary};
use crate::stats::factors::{level, Levels};
use crate::stats::summary::Summary;

/// Every table that fits the experiment, each a `###` section; empty when none does.
pub fn tables(s: &ExperimentSummary) -> String {
    let cells = crate::report::experiment::in_file_order(s);
    let levels = if s.factors.levels == Levels::default() { Levels::of_cells(&s.cells) } else { s.factors.levels.clone() };
    let ctx = Ctx { s, cells, levels };
    [filebench::table(&ctx), bonnie::table(&ctx), block_size::table(&ctx), targets::table(&ctx)].into_iter().flatten().collect()
}

struct Ctx<'a> {
    s: &'a ExperimentSummary,
    cells: Vec<&'a CellSummary>,
    levels: Levels,
}

impl Ctx<'_> {
    /// The factors among `from` with two or more levels: the columns that
    /// tell rows apart.
    fn varying<'f>(&self, from: &[&'f str]) -> Vec<&'f str> {
        from.iter().copied().filter(|f| self.levels.get(f).len() > 1).collect()
    }
}

/// A cell's levels of `factors`, as the first columns of a row.
fn levels_of(c: &CellSummary, factors: &[&str]) -> Vec<String> {
    factors.iter().map(|f| level(&c.cell, f).to_string()).collect()
}

/// The spread over the repeats as the seed tables show it: the median with
/// the smallest and largest repeat, `median [min–max]`; one repeat alone.
fn spread(x: &Summary) -> String {
    if x.n < 2 {
        return format!("{} (n=1)", num(x.median));
    }
    format!("{} [{}–{}]", num(x.median), num(x.min), num(x.max))
}

/// The total of a per-run count over the repeats (mean × n, back to the integer it was).
fn total(x: &Summary) -> u64 {
    (x.mean * x.n as f64).round().max(0.0) as u64
}
