//! YCSB as a workload family: `fsbench ycsb load rocksdb -P workloada -p
//! rocksdb.dir=/mnt/db` takes YCSB's own flags (fsbench's start with
//! `--`). In an experiment, `[[workload]] ycsb = "run rocksdb -P workloadc"`
//! (or an array of words) keeps the store's files in the target's
//! directory unless `-p <store>.dir` names a place in the target.

use super::{parse, workloads};
use crate::frontend::confine::in_target;
use crate::frontend::experiment::{expand, ExperimentError, WorkloadDef};
use crate::frontend::{input_error, one_run, Frontend, FrontendError, Session};
use crate::model::recipe::{Lowered, Placement, Recipe, RecipeError};
use crate::model::ycsb::YcsbPlan;
use crate::model::{Plan, Workload};
use std::sync::Arc;

/// The layout YCSB runs are shown in.
pub const LAYOUT: &str = "ycsb";

fn lowered(plan: YcsbPlan, warnings: Vec<crate::result::warning::Warning>) -> Lowered {
    Lowered { plan: Plan::new(Workload::Ycsb(plan), LAYOUT), warnings }
}

pub struct Ycsb;

impl Frontend for Ycsb {
    fn name(&self) -> &'static str {
        "ycsb"
    }
    fn about(&self) -> &'static str {
        "Run YCSB's core workloads on an embedded store (fsbench ycsb load|run rocksdb -P workloada -p rocksdb.dir=DIR), printed as YCSB prints them"
    }
    fn reads(&self) -> &'static str {
        "YCSB's Client flags: load|run (or -load|-t), the store (rocksdb, sqlite, fjall, redb, null; or -db CLASS), -P FILE (repeatable; \
         workloada..workloadf are built in), -p KEY=VALUE (over every file), -threads N, -target OPS/S, -s (status lines), -l LABEL"
    }
    fn command(&self) -> clap::Command {
        let names: Vec<&str> = workloads::CORE.iter().map(|(n, _, _)| *n).collect();
        clap::Command::new("ycsb").about(self.about()).after_help(format!("Built-in workloads: {}", names.join(", ")))
    }
    fn raw_args(&self) -> bool {
        true
    }
    fn lower_cli(&self, _m: &clap::ArgMatches, raw: &[String]) -> Result<Session, FrontendError> {
        let parsed = parse(raw, None).map_err(input_error)?;
        Ok(one_run(lowered(parsed.plan, parsed.warnings)))
    }
    fn workload_keys(&self) -> &'static [&'static str] {
        &["ycsb"]
    }
    fn lower_workload(&self, w: &WorkloadDef) -> Result<Arc<dyn Recipe>, ExperimentError> {
        let words = match w.string("ycsb") {
            Ok(Some(s)) => s.split_whitespace().map(str::to_string).collect(),
            _ => w.strings("ycsb").map_err(|_| w.error("ycsb", "expected YCSB's flags as a string or an array of words"))?,
        };
        let recipe = YcsbRecipe { label: w.label.clone(), words };
        if !recipe.words.iter().any(|x| x.contains("${")) {
            parse(&recipe.words, Some(std::path::Path::new("."))).map_err(|e| w.error("ycsb", e.to_string()))?;
        }
        Ok(Arc::new(recipe))
    }
}

/// A YCSB phase of an experiment: its flags, `${…}` unexpanded.
#[derive(Debug)]
struct YcsbRecipe {
    label: String,
    words: Vec<String>,
}

impl Recipe for YcsbRecipe {
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError> {
        let error = |e: String| RecipeError { workload: self.label.clone(), message: e };
        if at.is_device {
            return Err(error("YCSB's stores need a directory or a managed file system, not a raw device".into()));
        }
        let words = self.words.iter().map(|w| expand(w, at.params, Some(&at.target))).collect::<Result<Vec<_>, _>>().map_err(error)?;
        let mut parsed = parse(&words, Some(&at.target)).map_err(|e| error(e.to_string()))?;
        if let Some(d) = &parsed.plan.store.dir {
            let prefix = crate::model::store::find(&parsed.plan.store.name).map_or("", |s| s.prefix);
            parsed.plan.store.dir = Some(in_target(at, &format!("-p {prefix}dir="), d).map_err(error)?);
        }
        Ok(lowered(parsed.plan, parsed.warnings))
    }
}
