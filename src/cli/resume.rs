//! `fsbench experiment --resume DIR`: the experiment DIR was started with,
//! reloaded from what DIR recorded (its copy of the experiment file and the
//! `--set` in plan.json), never from a file that may have changed since; and
//! the command that finishes an experiment, as the user would type it.

use super::experiment::{ExperimentArgs, Loaded};
use crate::frontend::experiment;
use crate::result::experiment::{ExperimentPlan, EXPERIMENT_COPY};
use crate::result::load::load_experiment_plan;
use crate::runner::experiment::record;
use std::path::Path;

/// The recorded experiment; FILE and `--set`, when given, must agree with it.
pub(super) fn load(dir: &Path, a: &ExperimentArgs) -> Result<Loaded, String> {
    let plan = load_experiment_plan(dir).map_err(|e| format!("--resume {}: {e}", dir.display()))?;
    let copy = dir.join(EXPERIMENT_COPY);
    let text = experiment::read(&copy).map_err(|e| format!("--resume {}: {e}", dir.display()))?;
    if let Some(file) = &a.file {
        same_text(file, &text, dir)?;
    }
    check_sets(&a.sets, &plan, dir)?;
    // Relative paths in the file start at the original's directory.
    let mut exp = experiment::parse(&text, &plan.file, &plan.sets).map_err(|e| format!("{e} (read from its copy {})", copy.display()))?;
    // The recorded order and seed, so the runs left are those of its schedule.
    check_order(a, &plan, dir)?;
    exp.order = plan.order;
    exp.seed = plan.seed;
    let now = record(&exp, &plan.sets);
    if now != plan {
        return Err(format!(
            "--resume {0}: {0}/plan.json does not match what {1} with the recorded --set gives now ({2} differ): \
             the missing runs would not be those of the recorded experiment; start a new experiment with --out",
            dir.display(),
            copy.display(),
            difference(&now, &plan)
        ));
    }
    Ok(Loaded { exp, text, sets: plan.sets, out: dir.to_path_buf() })
}

/// A file given with `--resume` is the recorded one, unchanged.
fn same_text(file: &Path, recorded: &str, dir: &Path) -> Result<(), String> {
    let given = experiment::read(file).map_err(|e| e.to_string())?;
    if given == recorded {
        return Ok(());
    }
    let (g, r): (Vec<&str>, Vec<&str>) = (given.lines().collect(), recorded.lines().collect());
    let line = g.iter().zip(&r).position(|(a, b)| a != b).unwrap_or(g.len().min(r.len())) + 1;
    Err(format!(
        "{}: not the experiment {} was started with (they differ from line {line} on; the recorded copy is {}): \
         --resume finishes the recorded experiment; leave the file out to use its copy, \
         or run the changed file as a new experiment with --out",
        file.display(),
        dir.display(),
        dir.join(EXPERIMENT_COPY).display()
    ))
}

/// `--seed` and `--order` given with `--resume` may only repeat the recorded ones.
fn check_order(a: &ExperimentArgs, plan: &ExperimentPlan, dir: &Path) -> Result<(), String> {
    let keep = "a resumed experiment keeps its schedule: leave it out, or start a new experiment with --out";
    if let Some(seed) = a.seed.filter(|&s| s != plan.seed) {
        return Err(format!("--seed {seed}: {} was started with seed {}; {keep}", dir.display(), plan.seed));
    }
    if let Some(o) = a.order.as_deref().filter(|&o| o != plan.order.name()) {
        return Err(format!("--order {o}: {} was started with order {}; {keep}", dir.display(), plan.order.name()));
    }
    Ok(())
}

/// A `--set` given with `--resume` may only repeat a recorded value.
fn check_sets(sets: &[String], plan: &ExperimentPlan, dir: &Path) -> Result<(), String> {
    for s in sets {
        let Some((name, value)) = s.split_once('=') else {
            return Err(format!("--set {s}: expected --set NAME=VALUE"));
        };
        let repeat = plan.repeat.to_string();
        let recorded = plan.params.get(name).or((name == experiment::REPEAT_SET).then_some(&repeat));
        match recorded {
            None => {
                let known: Vec<&str> = plan.params.keys().map(String::as_str).collect();
                return Err(format!("--set {s}: no parameter '{name}' in the experiment's [params] (have: {})", known.join(", ")));
            }
            Some(recorded) if recorded != value => {
                return Err(format!(
                    "--set {name}={value}: {} was started with {name}={recorded}; a resumed experiment keeps its parameters \
                     (runs with both values would be mixed): leave out --set, or start a new experiment with --out",
                    dir.display()
                ));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Which part of two plans differs first, for the message.
fn difference(a: &ExperimentPlan, b: &ExperimentPlan) -> &'static str {
    if a.params != b.params {
        "the parameters"
    } else if a.targets != b.targets {
        "the targets"
    } else if a.workloads != b.workloads {
        "the workloads"
    } else if a.caches != b.caches {
        "the cache scenarios"
    } else if a.backgrounds != b.backgrounds {
        "the background loads"
    } else if a.runs != b.runs || a.repeat != b.repeat || a.order != b.order || a.seed != b.seed {
        "the runs"
    } else {
        "the name or file"
    }
}

/// The command that finishes the experiment in `out`: every recorded
/// `--set` and every flag that changes what happens, quoted for the shell.
pub(super) fn command(a: &ExperimentArgs, file: &Path, sets: &[String], out: &Path) -> String {
    let file = a.file.as_deref().unwrap_or(file);
    let mut words: Vec<String> = vec!["fsbench".into(), "experiment".into(), quote(&file.display().to_string())];
    words.extend(["--resume".into(), quote(&out.display().to_string())]);
    for s in sets {
        words.extend(["--set".into(), quote(s)]);
    }
    if a.common.allow_device {
        words.push("--allow-device".into());
    }
    if a.fail_fast {
        words.push("--fail-fast".into());
    }
    if a.common.output_format != "text" {
        words.extend(["--output-format".into(), quote(&a.common.output_format)]);
    }
    if let Some(o) = &a.common.output {
        words.extend(["--output".into(), quote(&o.display().to_string())]);
    }
    words.join(" ")
}

/// What to do about an incomplete experiment, never a command that cannot
/// help: `--resume` runs what was not run and runs failed ones again, which
/// finishes them only when what made them fail has changed. Runs that
/// failed again on this resume say so, with their error, and the command
/// comes after fixing it.
pub(super) fn hint(finish: &str, failed: usize, failed_again: &[(String, String)]) -> String {
    if let Some((run, error)) = failed_again.first() {
        let others = match failed_again.len() {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        };
        return format!(
            "{run}{others} failed again on this resume as it did before ({error}): resuming alone repeats the failure; \
             fix its cause (report.md lists every failed run's error), then finish with: {finish}"
        );
    }
    if failed > 0 {
        return format!(
            "--resume runs what was not run and the failed runs again, which helps a failed run only once its cause \
             (its error is in report.md) is fixed or was passing: {finish}"
        );
    }
    format!("finish with: {finish}")
}

/// `s` as one shell word: unchanged when it has nothing the shell reads
/// specially, else in single quotes.
fn quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-+=:,./@%".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn shell_words() {
        assert_eq!(quote("size=1m"), "size=1m");
        assert_eq!(quote("/tmp/out dir"), "'/tmp/out dir'");
        assert_eq!(quote("tag=it's"), r"'tag=it'\''s'");
        assert_eq!(quote("x=${y}"), "'x=${y}'");
        assert_eq!(quote(""), "''");
    }
}
