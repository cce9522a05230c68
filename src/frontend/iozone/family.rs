//! IOzone as a workload family: `fsbench iozone -a -i 0 -i 1 ...` takes
//! IOzone's own flags (fsbench's start with `--`). In an experiment,
//! `[[workload]] iozone = "-a -n 64k -g 16m -i 0 -i 1"` (or an array of
//! words) runs in the target's directory; `-U ${target}` remounts a
//! managed target before each test.

use super::{check_host, parse, IozoneError};
use crate::frontend::confine::in_target;
use crate::frontend::experiment::{expand, ExperimentError, WorkloadDef};
use crate::frontend::{input_error, one_run, Frontend, FrontendError, Session};
use crate::model::iozone::IozonePlan;
use crate::model::recipe::{Lowered, Placement, Recipe, RecipeError};
use crate::model::{Plan, Workload};
use crate::result::warning::{Code, Warning};
use std::sync::Arc;

/// The layout IOzone runs are shown in.
pub const LAYOUT: &str = "iozone";

fn lowered(plan: IozonePlan) -> Lowered {
    let mut warnings = Vec::new();
    if plan.throughput.as_ref().is_some_and(|t| !t.threads) {
        warnings.push(Warning::new(
            Code::DiffersFromTool,
            "iozone -t: fsbench runs the children as threads (IOzone's -T); the figures are per child alike",
        ));
    }
    Lowered { plan: Plan::new(Workload::Iozone(plan), LAYOUT), warnings }
}

pub struct Iozone;

impl Frontend for Iozone {
    fn name(&self) -> &'static str {
        "iozone"
    }
    fn about(&self) -> &'static str {
        "Run IOzone's tests from IOzone's own flags (fsbench iozone -a -i 0 -i 1 -R), printed in IOzone's layout"
    }
    fn reads(&self) -> &'static str {
        "IOzone's flags: -a -A -z -n -g -y -q -s -r (repeatable) -i N (repeatable) -f -F -I -o -e -c -w -j -E -O -N -R -b FILE \
         -U MOUNTPOINT -t N -l N -u N -T -x -+n -+u -+p PCT -+B. Sizes are kB (1024 bytes) or take k, m, g."
    }
    fn command(&self) -> clap::Command {
        clap::Command::new("iozone").about(self.about())
    }
    fn raw_args(&self) -> bool {
        true
    }
    fn lower_cli(&self, _m: &clap::ArgMatches, raw: &[String]) -> Result<Session, FrontendError> {
        let plan = parse(raw).map_err(input_error)?;
        check_host(&plan).map_err(input_error)?;
        Ok(one_run(lowered(plan)))
    }
    fn workload_keys(&self) -> &'static [&'static str] {
        &["iozone"]
    }
    fn lower_workload(&self, w: &WorkloadDef) -> Result<Arc<dyn Recipe>, ExperimentError> {
        let words = match w.string("iozone") {
            Ok(Some(s)) => s.split_whitespace().map(str::to_string).collect(),
            _ => w.strings("iozone").map_err(|_| w.error("iozone", "expected IOzone's flags as a string or an array of words"))?,
        };
        let recipe = IozoneRecipe { label: w.label.clone(), words };
        // Without `${…}` the flags can be checked now.
        if !recipe.words.iter().any(|x| x.contains("${")) {
            parse(&recipe.words).map_err(|e| w.error("iozone", e.to_string()))?;
        }
        Ok(Arc::new(recipe))
    }
}

/// An IOzone workload of an experiment: its flags, `${…}` unexpanded.
#[derive(Debug)]
struct IozoneRecipe {
    label: String,
    words: Vec<String>,
}

impl Recipe for IozoneRecipe {
    /// One run; file names (`-f`, `-F`, the defaults) and `-U` are in the
    /// target (relative ones start there).
    fn plan(&self, at: &Placement) -> Result<Lowered, RecipeError> {
        let error = |e: String| RecipeError { workload: self.label.clone(), message: e };
        if at.is_device {
            return Err(error("IOzone needs a directory or a managed file system, not a raw device".into()));
        }
        let words = self.words.iter().map(|w| expand(w, at.params, Some(&at.target))).collect::<Result<Vec<_>, _>>().map_err(error)?;
        let mut plan = parse(&words).map_err(|e: IozoneError| error(e.to_string()))?;
        if let Some(mp) = &plan.remount {
            plan.remount = Some(in_target(at, "-U ", mp).map_err(error)?);
        }
        // `-U ${target}` names the file system the experiment mounts itself,
        // which is not mounted yet when every workload is checked before the
        // run (against a stand-in directory): the remount checks it then.
        if plan.remount.as_deref() != Some(at.target.as_path()) {
            check_host(&plan).map_err(|e| error(e.to_string()))?;
        }
        plan.file = in_target(at, "-f ", &plan.file).map_err(error)?;
        if let Some(t) = plan.throughput.as_mut() {
            if t.files.is_empty() {
                let most = t.children.iter().copied().max().unwrap_or(1);
                t.files = (0..most).map(|i| at.target.join(format!("iozone.DUMMY.{i}"))).collect();
            } else {
                t.files = t.files.iter().map(|f| in_target(at, "-F ", f)).collect::<Result<_, _>>().map_err(error)?;
            }
        }
        Ok(lowered(plan))
    }
}
