//! Seed 003's Bonnie++ table: every test Bonnie++ prints, per target (and
//! cache scenario and background load where they vary), as Bonnie++'s rate,
//! with `+++++` where the phase took too short a time to be timed, by
//! Bonnie++'s own rule (`result::bonnie::too_short`).

use super::{levels_of, Ctx};
use crate::model::bonnie::Test;
use crate::report::export::markdown::table_padded;
use crate::result::bonnie::too_short;
use crate::stats::experiment::CellSummary;
use crate::units::thousands;
use std::fmt::Write;

/// Bonnie++'s column headings, in its order.
fn heading(t: Test) -> &'static str {
    match t {
        Test::Putc => "Seq Output Per Chr K/s",
        Test::PutBlock => "Seq Output Block K/s",
        Test::Rewrite => "Seq Output Rewrite K/s",
        Test::Getc => "Seq Input Per Chr K/s",
        Test::GetBlock => "Seq Input Block K/s",
        Test::Seeks => "Random Seeks /s",
        Test::SeqCreate => "Seq Create /s",
        Test::SeqStat => "Seq Read (stat) /s",
        Test::SeqDel => "Seq Delete /s",
        Test::RanCreate => "Random Create /s",
        Test::RanStat => "Random Read (stat) /s",
        Test::RanDel => "Random Delete /s",
    }
}

/// `JOB/put_block_KiB_s` of a Bonnie++ cell, and that test's phase time.
fn metric(c: &CellSummary, t: Test) -> Option<(&str, String)> {
    let name = format!("/{}", t.headline_name());
    let m = c.headline_order.iter().find(|m| m.ends_with(&name))?;
    let job = m.strip_suffix(&name)?;
    Some((job, format!("{job}/{}/active_s", t.name())))
}

pub(super) fn table(x: &Ctx) -> Option<String> {
    let cells: Vec<&&CellSummary> = x.cells.iter().filter(|c| Test::ALL.iter().any(|&t| metric(c, t).is_some())).collect();
    let tests: Vec<Test> = Test::ALL.into_iter().filter(|&t| cells.iter().any(|c| metric(c, t).is_some())).collect();
    if cells.is_empty() {
        return None;
    }
    // The factors that vary among the Bonnie++ cells: in an experiment that
    // also holds other workloads on other targets, those add no column.
    let varies = |f: &&str| {
        let mut v: Vec<&str> = cells.iter().map(|c| crate::stats::factors::level(&c.cell, f)).collect();
        v.sort_unstable();
        v.dedup();
        v.len() > 1
    };
    let factors: Vec<&str> = ["target", "workload", "cache", "background"].into_iter().filter(varies).collect();
    let factors = if factors.is_empty() { vec!["target"] } else { factors };
    let header: Vec<&str> = factors.iter().copied().chain(["n"]).chain(tests.iter().map(|&t| heading(t))).collect();
    let right: Vec<bool> = (0..header.len()).map(|i| i >= factors.len()).collect();
    let mut some_short = false;
    let rows: Vec<Vec<String>> = cells
        .iter()
        .map(|c| {
            let figures = tests.iter().map(|&t| {
                let Some((job, time)) = metric(c, t) else { return String::new() };
                let (Some(rate), Some(secs)) = (c.metrics.get(&format!("{job}/{}", t.headline_name())), c.metrics.get(&time)) else {
                    return "–".into();
                };
                if too_short(secs.max) {
                    return "+++++".into();
                }
                let mut v = thousands(rate.median.round() as u64);
                if too_short(secs.min) {
                    some_short = true;
                    v.push_str(" (+)");
                }
                v
            });
            let figures: Vec<String> = figures.collect();
            levels_of(c, &factors).into_iter().chain([c.runs.to_string()]).chain(figures).collect()
        })
        .collect();
    let mut t = String::new();
    let _ = writeln!(t, "\n## Bonnie++ (seed 003)\n");
    let _ = writeln!(
        t,
        "Every test Bonnie++ prints, as its rate (K/s = KiB per second; seeks and files per second), the median over the repeats. \
         `+++++` where every repeat's phase took under half a second, which Bonnie++ does not time{}; each phase's own figure \
         and time are in summary.csv (`bonnie/TEST/active_s`).\n",
        if some_short { "; (+) where some repeats did, and the median includes them" } else { "" }
    );
    t += &table_padded(&header, &right, &rows, true);
    Some(t)
}
