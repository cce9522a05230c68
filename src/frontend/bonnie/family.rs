//! Bonnie++ as a workload family: `fsbench bonnie -d DIR -s 1g -n 16 -u root`
//! takes Bonnie++'s own flags (fsbench's start with `--`). `-x N` is N runs,
//! each its own result. In an experiment, `[[workload]] bonnie = "-s 64 -n 1
//! -r 32 -u root"` (or an array of words) runs in the target's directory
//! unless `-d` says otherwise.

use super::{parse, BonnieError, HostFacts, Invocation};
use crate::frontend::confine::in_target;
use crate::frontend::experiment::{expand, ExperimentError, WorkloadDef};
use crate::frontend::{input_error, Frontend, FrontendError, Session, Step};
use crate::model::bonnie::{BonniePlan, SemaphoreSet};
use crate::model::recipe::{Lowered, Placement, Recipe, RecipeError};
use crate::model::{Plan, Workload};
use std::sync::Arc;

/// The layout Bonnie++ runs are shown in.
pub const LAYOUT: &str = "bonnie";

fn lowered(plan: BonniePlan, warnings: Vec<crate::result::warning::Warning>) -> Lowered {
    Lowered { plan: Plan::new(Workload::Bonnie(plan), LAYOUT), warnings }
}

/// `-p N` / `-p -1`: the semaphore set to make or remove.
fn semaphores(n: i32) -> Result<SemaphoreSet, FrontendError> {
    if n < 0 {
        return Ok(SemaphoreSet::Remove);
    }
    let copies = u16::try_from(n)
        .map_err(|_| input_error(BonnieError { flag: "-p".into(), message: format!("{n}: expected at most {} copies", u16::MAX) }))?;
    Ok(SemaphoreSet::Make { copies })
}

pub struct Bonnie;

impl Frontend for Bonnie {
    fn name(&self) -> &'static str {
        "bonnie"
    }
    fn about(&self) -> &'static str {
        "Run Bonnie++'s tests from Bonnie++'s own flags (fsbench bonnie -d DIR -s 1g -n 16 -u root), printed as Bonnie++ prints them"
    }
    fn reads(&self) -> &'static str {
        "Bonnie++ 2.00a's flags: -d DIR -s size[:chunk[:seeks[:procs]]] -n num[:max[:min[:dirs[:chunk]]]] -m NAME -r MiB -x RUNS \
         -u user[:group] -g group -q -f[MiB] -b -D -c N -z SEED -Z FILE -p N -y s|p. Sizes are MiB, or with g (GiB); chunks bytes, or with k."
    }
    fn command(&self) -> clap::Command {
        clap::Command::new("bonnie").about(self.about())
    }
    fn raw_args(&self) -> bool {
        true
    }
    fn lower_cli(&self, _m: &clap::ArgMatches, raw: &[String]) -> Result<Session, FrontendError> {
        match parse(raw, &HostFacts::current()).map_err(input_error)? {
            Invocation::Semaphores(n) => Ok(Box::new(std::iter::once(Ok(Step::Semaphores(semaphores(n)?))))),
            Invocation::Run { plan, notes } => {
                let runs = plan.runs;
                Ok(Box::new((0..runs).map(move |i| {
                    let p = BonniePlan { run_index: i, ..plan.clone() };
                    let warnings = if i == 0 { notes.clone() } else { Vec::new() };
                    Ok(Step::Run { lowered: Box::new(lowered(p, warnings)), append_report_to: None })
                })))
            }
        }
    }
    fn workload_keys(&self) -> &'static [&'static str] {
        &["bonnie"]
    }
    fn lower_workload(&self, w: &WorkloadDef) -> Result<Arc<dyn Recipe>, ExperimentError> {
        let words = match w.string("bonnie") {
            Ok(Some(s)) => s.split_whitespace().map(str::to_string).collect(),
            _ => w.strings("bonnie").map_err(|_| w.error("bonnie", "expected Bonnie++'s flags as a string or an array of words"))?,
        };
        let recipe = BonnieRecipe { label: w.label.clone(), words };
        if !recipe.words.iter().any(|x| x.contains("${")) {
            recipe.check(&recipe.words).map_err(|e| w.error("bonnie", e))?;
        }
        Ok(Arc::new(recipe))
    }
}

/// A Bonnie++ workload of an experiment: its flags, `${…}` unexpanded.
#[derive(Debug)]
struct BonnieRecipe {
    label: String,
    words: Vec<String>,
}

impl BonnieRecipe {
    /// The plan the words make, refusing what an experiment cannot repeat
    /// itself (`-x`: the experiment's `repeat` does that) or run (`-p`).
    fn check(&self, words: &[String]) -> Result<(BonniePlan, Vec<crate::result::warning::Warning>), String> {
        match parse(words, &HostFacts::current()).map_err(|e| e.to_string())? {
            Invocation::Semaphores(_) => Err("-p makes or removes semaphores and runs nothing: not a workload".into()),
            Invocation::Run { plan, .. } if plan.runs > 1 => {
                Err(format!("-x {}: give the experiment's repeat instead, so every run is its own result", plan.runs))
            }
            Invocation::Run { plan, notes } => Ok((plan, notes)),
        }
    }
}

impl Recipe for BonnieRecipe {
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError> {
        let error = |e: String| RecipeError { workload: self.label.clone(), message: e };
        if at.is_device {
            return Err(error("Bonnie++ needs a directory or a managed file system, not a raw device".into()));
        }
        let words = self.words.iter().map(|w| expand(w, at.params, Some(&at.target))).collect::<Result<Vec<_>, _>>().map_err(error)?;
        let given_dir = words.iter().any(|w| w.starts_with("-d"));
        let (mut plan, notes) = self.check(&words).map_err(error)?;
        plan.dir = if given_dir { in_target(at, "-d ", &plan.dir).map_err(error)? } else { at.target.clone() };
        Ok(lowered(plan, notes))
    }
}
