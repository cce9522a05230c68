//! Every workload family's subcommand, from `frontend::FRONTENDS`: the
//! family's own arguments plus the flags every workload command has
//! (output, repeats, cache scenario, background load), then each step the
//! frontend yields run as one cell (`runner::cell`) or `--repeat` cells,
//! and the document written through the exporters.

use super::events::Terminal;
use super::{emit_doc, exit_code, exporter_for, install_stop_handler, want_progress, CommonArgs, RepeatArgs};
use crate::environment::target::ActiveTarget;
use crate::frontend::environment::{parse_background_choice, parse_cache};
use crate::frontend::{Frontend, Session, Step};
use crate::model::experiment::BackgroundChoice;
use crate::model::recipe::{Lowered, Placement, Recipe};
use crate::report::export::{DocKind, Document, Formats};
use crate::runner::cell::{run_cell, CellRun, Environment};
use crate::runner::events::Events;
use crate::runner::{RunError, RunOptions};
use crate::stats::repeated::Repeated;
use clap::{Arg, ArgMatches, Args, Command, FromArgMatches};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The flags every workload command has, added to a family's command.
fn with_common_flags(c: Command) -> Command {
    // Augmenting takes the flag structs' doc comments as the command's
    // description: keep the family's.
    let about = c.get_about().cloned();
    let c = RepeatArgs::augment_args(CommonArgs::augment_args(c));
    match about {
        Some(a) => c.about(a),
        None => c,
    }
}

/// The subcommand as the top-level parser sees it. A family that takes its
/// tool's own `--key=value` options gets everything as one list, split
/// below.
pub fn command(f: &dyn Frontend) -> Command {
    if f.raw_args() {
        Command::new(f.name()).about(f.about()).disable_help_flag(true).arg(
            Arg::new("args").num_args(0..).trailing_var_arg(true).allow_hyphen_values(true).help("Job files, options and fsbench's flags"),
        )
    } else {
        with_common_flags(f.command())
    }
}

/// Separate fsbench's flags (those `own` defines, with their values) from
/// the tool's own arguments. The flags come from the clap definitions, so a
/// new common flag is never passed to the tool by mistake.
///
/// A flag whose value is optional (`--trace[=DEV]`) takes it only after
/// `=`: the next word is never its value.
fn split(args: &[String], own: &Command) -> (Vec<String>, Vec<String>) {
    let takes_value = |name: &str| -> Option<bool> { own.get_arguments().find(|a| a.get_long() == Some(name)).map(takes_next_word) };
    let (mut mine, mut rest) = (Vec::new(), Vec::new());
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let key = a.strip_prefix("--").map(|k| k.split('=').next().unwrap_or(k));
        match key.and_then(takes_value) {
            Some(true) => {
                mine.push(a.clone());
                if !a.contains('=') {
                    mine.extend(it.next().cloned());
                }
            }
            Some(false) => mine.push(a.clone()),
            None => rest.push(a.clone()),
        }
    }
    (mine, rest)
}

/// Whether the word after this flag is its value: a flag that takes one,
/// unless the value is optional or must be attached with `=`.
fn takes_next_word(a: &Arg) -> bool {
    let optional = a.get_num_args().is_some_and(|r| r.min_values() == 0);
    a.get_action().takes_values() && !optional && !a.is_require_equals_set()
}

/// A workload command line, checked and lowered: all `run` knows before
/// anything runs.
struct Prepared {
    common: CommonArgs,
    repeat: RepeatArgs,
    exporter: Formats,
    env: EnvFlags,
    session: Session,
}

/// Check a family's command line and lower it into its steps. Err is the
/// exit status, its reason already on stderr (0 after `--help`).
fn prepare(f: &dyn Frontend, m: &ArgMatches) -> Result<Prepared, i32> {
    let name = f.name();
    let (matches, raw) = if f.raw_args() {
        let args: Vec<String> = m.get_many::<String>("args").map(|v| v.cloned().collect()).unwrap_or_default();
        let mut own = with_common_flags(f.command()).bin_name(format!("fsbench {name}")).no_binary_name(true);
        if args.iter().any(|a| a == "--help" || a == "-h") {
            // A reader that stops early (`| head`) is no error: println! would panic on the closed pipe.
            let help = format!("Usage: fsbench {name} [ARGS...] [fsbench flags]\n\n{}\n\n{}", f.reads(), own.render_long_help());
            let _ = std::io::Write::write_all(&mut std::io::stdout().lock(), format!("{help}\n").as_bytes());
            return Err(0);
        }
        let (mine, rest) = split(&f.normalize_args(args), &own);
        match own.try_get_matches_from_mut(mine) {
            Ok(m) => (m, rest),
            Err(e) => {
                super::fail(format!("fsbench {name}: {e}"));
                return Err(2);
            }
        }
    } else {
        (m.clone(), Vec::new())
    };
    let (common, repeat) = match (CommonArgs::from_arg_matches(&matches), RepeatArgs::from_arg_matches(&matches)) {
        (Ok(c), Ok(r)) => (c, r),
        (Err(e), _) | (_, Err(e)) => {
            super::fail(format!("fsbench {name}: {e}"));
            return Err(2);
        }
    };
    let (exporter, env) = check_flags(name, &common, &repeat)?;
    let session = f.lower_cli(&matches, &raw).map_err(|e| {
        super::fail(format!("fsbench {name}: error: {e}"));
        2
    })?;
    Ok(Prepared { common, repeat, exporter, env, session })
}

/// Everything `run` does before anything runs, for every step the command
/// line asks for (a fresh-directory step planned in `fresh`): how many
/// steps it lowered, or the exit status of the first refusal.
pub(super) fn lower_only(f: &dyn Frontend, m: &ArgMatches, fresh: &std::path::Path) -> Result<usize, i32> {
    let p = prepare(f, m)?;
    let mut n = 0;
    for step in p.session {
        match step {
            Err(e) => {
                super::fail(format!("fsbench {}: error: {e}", f.name()));
                return Err(2);
            }
            Ok(Step::RunInFreshDir { recipe, .. }) => {
                let at = Placement { target: fresh.to_path_buf(), is_device: false, params: &Default::default() };
                recipe.plan(&at).map_err(|e| {
                    super::fail(format!("fsbench {}: error: {e}", f.name()));
                    2
                })?;
            }
            Ok(Step::Run { .. } | Step::Print { .. } | Step::Semaphores(_)) => {}
        }
        n += 1;
    }
    Ok(n)
}

pub fn run(f: &dyn Frontend, m: &ArgMatches) -> i32 {
    let name = f.name();
    let Prepared { common, repeat, exporter, env, session } = match prepare(f, m) {
        Ok(p) => p,
        Err(code) => return code,
    };
    super::cleanup::warn_leftovers();
    let stop = install_stop_handler();
    // The tool's own text streams when it is the report and goes to
    // stdout, as the tool prints it. With --output FILE the file gets the
    // whole report at the end (stdout carries nothing, as for every
    // format), and a --repeat report is fsbench's table over the runs.
    let stream = exporter.is_text() && common.output.is_none() && !repeat.wanted();
    let events: Arc<dyn Events> = Arc::new(Terminal::new(want_progress(&common)).streaming(stream));
    let opts = run_options(&common, stop.clone(), events.clone());
    let mut status = 0;
    for step in session {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        match step {
            Err(e) => {
                super::fail(format!("fsbench {name}: error: {e}"));
                status = 2;
            }
            // Listings and configurations go to stdout unless stdout
            // carries a machine-readable document.
            Ok(Step::Print { text, append_to: Some(path) }) => {
                if let Err(e) = append(name, &path, &text) {
                    super::fail(format!("fsbench {name}: error: {e}"));
                    status = status.max(1);
                }
            }
            Ok(Step::Print { text, append_to: None }) if exporter.is_text() => print!("{text}"),
            Ok(Step::Print { text, append_to: None }) => eprint!("{text}"),
            Ok(Step::Semaphores(set)) => match crate::runner::bonnie::semaphores(set) {
                Ok(text) if exporter.is_text() => print!("{text}"),
                Ok(text) => eprint!("{text}"),
                Err(e) => {
                    super::fail(format!("fsbench {name}: error: bonnie++ -p: {e}"));
                    status = 2;
                }
            },
            Ok(Step::Run { lowered, append_report_to }) => {
                if let Some(p) = &append_report_to {
                    if let Err(code) = super::check_outputs(name, &[(format!("{name}'s report file"), p.clone())]) {
                        status = status.max(code);
                        continue;
                    }
                }
                let out = append_report_to.map(Output::Append).unwrap_or(Output::Given(common.output.clone()));
                let code = run_plan(*lowered, &env, &repeat, &opts, &exporter, &out);
                status = status.max(code);
                if code == 130 {
                    break;
                }
            }
            Ok(Step::RunInFreshDir { recipe, prefix }) => {
                let code = run_in_fresh_dir(name, &*recipe, prefix, &env, &repeat, &opts, &exporter, &Output::Given(common.output.clone()));
                status = status.max(code);
                if code == 130 {
                    break;
                }
            }
        }
    }
    status
}

/// What every workload command checks before it lowers anything: the
/// output format for its document, the output file, the environment flags.
pub(super) fn check_flags(name: &str, common: &CommonArgs, repeat: &RepeatArgs) -> Result<(Formats, EnvFlags), i32> {
    let kind = if repeat.wanted() { DocKind::Repeated } else { DocKind::Run };
    let exporter = exporter_for(name, &common.output_format, kind)?;
    super::check_output(name, &common.output)?;
    let mut outputs: Vec<(String, PathBuf)> = repeat.charts.iter().map(|d| ("--charts".to_string(), d.clone())).collect();
    if repeat.trace.is_some() {
        let base = repeat.trace_output.clone().unwrap_or_else(crate::runner::trace::default_basename);
        outputs.push(("--trace-output".into(), base));
    }
    super::check_outputs(name, &outputs)?;
    let env = EnvFlags::check(repeat, common.allow_uncontrolled).map_err(|e| {
        super::fail(format!("fsbench {name}: {e}"));
        2
    })?;
    Ok((exporter, env))
}

/// The run options a workload command's flags give.
pub(super) fn run_options(common: &CommonArgs, stop: Arc<std::sync::atomic::AtomicBool>, events: Arc<dyn Events>) -> RunOptions {
    RunOptions {
        allow_device: common.allow_device,
        allow_fill: common.allow_fill,
        keep_files: common.keep_files,
        stop,
        events,
        cache_controlled: false,
        command: std::env::args().collect(),
    }
}

/// Where a report goes.
pub(super) enum Output {
    /// `--output FILE`, or stdout.
    Given(Option<PathBuf>),
    /// Appended to a file the workload named (Postmark's `run FILE`).
    Append(PathBuf),
}

/// `--cache` and `--background`, checked before anything runs; the
/// background load's directory is the workload's, known per plan.
pub(super) struct EnvFlags {
    cache: Option<crate::model::environment::CacheScenario>,
    background: Option<BackgroundChoice>,
    trace: Option<crate::model::environment::TraceSpec>,
}

impl EnvFlags {
    fn check(r: &RepeatArgs, allow_uncontrolled: bool) -> Result<EnvFlags, String> {
        let cache = r.cache.as_deref().map(parse_cache).transpose().map_err(|e| format!("--cache: {e}"))?;
        if let Some(why) = cache.as_ref().and_then(|c| crate::environment::cache::cannot_apply(c, false)) {
            if !allow_uncontrolled {
                return Err(format!("--cache: {why}; or pass --allow-uncontrolled to run it anyway, recorded as not applied"));
            }
        }
        let background = r.background.as_deref().map(parse_background_choice).transpose().map_err(|e| format!("--background: {e}"))?;
        let trace = r
            .trace
            .as_deref()
            .map(crate::model::environment::TraceSpec::parse)
            .transpose()
            .map_err(|e| format!("--trace: {e}"))?
            .map(|t| crate::model::environment::TraceSpec { output: r.trace_output.clone(), ..t });
        let trace = match (trace, r.trace_mask.as_deref()) {
            (Some(t), Some(m)) => {
                let mask = crate::observe::trace::record::cat::parse_mask(m).map_err(|e| format!("--trace-mask: {e}"))?;
                Some(crate::model::environment::TraceSpec { act_mask: Some(mask), ..t })
            }
            (t, _) => t,
        };
        Ok(EnvFlags { cache, background, trace })
    }
}

/// Run a recipe in a directory made for it under the current directory,
/// said on stderr, and removed afterwards unless `--keep-files`.
#[allow(clippy::too_many_arguments)]
fn run_in_fresh_dir(
    name: &str,
    recipe: &dyn Recipe,
    prefix: &str,
    env: &EnvFlags,
    repeat: &RepeatArgs,
    opts: &RunOptions,
    exporter: &Formats,
    out: &Output,
) -> i32 {
    let here = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let dir = match ActiveTarget::fresh_directory("fresh", &here, prefix) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("fsbench {name}: error: {e}; name a directory with --set dir=DIR");
            return 2;
        }
    };
    let at = Placement { target: dir.path.clone(), is_device: false, params: &Default::default() };
    let lowered = match recipe.plan(&at) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("fsbench {name}: error: {e}");
            return 2;
        }
    };
    let keep = opts.keep_files;
    opts.events.note(&format!(
        "fsbench {name}: files go to {}, made for this run ({}; --set dir=DIR to choose)",
        dir.path.display(),
        if keep { "kept: --keep-files" } else { "removed afterwards" }
    ));
    let code = run_plan(lowered, env, repeat, opts, exporter, out);
    if keep {
        dir.keep();
    } else if let Err(e) = dir.teardown() {
        eprintln!("fsbench {name}: warning: {e}");
    }
    code
}

/// Run one plan (`--repeat` times) and write its document.
pub(super) fn run_plan(lowered: Lowered, env: &EnvFlags, repeat: &RepeatArgs, opts: &RunOptions, exporter: &Formats, out: &Output) -> i32 {
    for w in &lowered.warnings {
        opts.events.warning(w);
    }
    let plan = lowered.plan;
    if let Err(code) = super::check_outputs(plan.layout, &crate::environment::safety::plan_outputs(&plan)) {
        return code;
    }
    let background = env.background.as_ref().map(|b| b.spec_in(&plan.data_dir().join("fsbench-background")));
    let mut cells: Vec<CellRun> = Vec::new();
    let trace_default = crate::runner::trace::default_basename();
    for i in 1..=repeat.repeat {
        if opts.stop.load(Ordering::Relaxed) {
            break;
        }
        let trace = env.trace.as_ref().map(|t| (t, trace_basename(t, &trace_default, i, repeat.repeat)));
        let cell_env = Environment { cache: env.cache.as_ref(), background: background.as_ref(), target: None, trace };
        match run_cell(&plan, cell_env, opts) {
            Ok(c) => cells.push(c),
            Err(e) => {
                let run = if repeat.wanted() { format!("run {i}: ") } else { String::new() };
                super::fail(format!("fsbench: error: {run}{e}"));
                // Refused before anything ran: like bad input, not a failed run.
                return if matches!(e, RunError::InUse(_)) { 2 } else { 1 };
            }
        }
        if repeat.wanted() {
            opts.events.note(&format!("fsbench: run {i}/{} done", repeat.repeat));
        }
    }
    let Some(last) = cells.last() else { return 130 };
    let mut status = exit_code(&last.result, opts.stop.load(Ordering::Relaxed));
    let failed = cells.iter().filter(|c| c.result.failed.is_some()).count();
    if status == 0 && failed > 0 {
        eprintln!("fsbench: {failed} of {} runs FAILED and are left out of the statistics", cells.len());
        status = 1;
    }
    let ok: Vec<&crate::result::RunResult> = cells.iter().map(|c| &c.result).filter(|r| r.failed.is_none()).collect();
    if let Err(e) = side_outputs(plan.layout, &ok, repeat.charts.as_deref()) {
        super::fail(format!("fsbench: error: {e}"));
        status = status.max(1);
    }
    let written = if repeat.wanted() {
        let cache_reports = cells.iter().filter_map(|c| c.cache.clone()).collect();
        let bg_reports = cells.iter().filter_map(|c| c.background.clone()).collect();
        let runs = cells.into_iter().map(|c| c.result).collect();
        let doc = Repeated::new(repeat.cache.clone(), repeat.background.clone(), cache_reports, bg_reports, runs);
        write(exporter, &Document::Repeated(&doc), out)
    } else {
        let streamed = opts.events.take_streamed();
        match out {
            Output::Given(None) if !streamed.is_empty() => rest_of_report(exporter, &Document::Run(&last.result), &streamed),
            _ => write(exporter, &Document::Run(&last.result), out),
        }
    };
    match written {
        Ok(()) => status,
        Err(code) => code,
    }
}

/// Run `i` of `n`'s trace files: the named base (or the default), with
/// `-runI` added when there are several runs.
fn trace_basename(t: &crate::model::environment::TraceSpec, default: &std::path::Path, i: u32, n: u32) -> PathBuf {
    let base = t.output.clone().unwrap_or_else(|| default.to_path_buf());
    if n == 1 {
        return base;
    }
    let name = base.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| "trace".into());
    base.with_file_name(format!("{name}-run{i}"))
}

/// What a run writes besides its report: its tool's own files (IOzone's
/// `-b`, from the last run) and, with `--charts DIR`, the layout's charts
/// over every run that did not fail.
fn side_outputs(layout: &str, runs: &[&crate::result::RunResult], charts: Option<&std::path::Path>) -> Result<(), String> {
    use crate::environment::safety::{check_output_path, write_output};
    let Some(l) = crate::report::layout::find(layout) else { return Ok(()) };
    if let Some(last) = runs.last() {
        for (path, text) in (l.files)(last) {
            write_output(&format!("{layout}'s file"), &path, text.as_bytes())?;
        }
    }
    let Some(dir) = charts else { return Ok(()) };
    let mut svgs = (l.charts)(runs);
    // A traced run's charts: its last run's trace (LBA over time, sizes, depth, D2C).
    if let Some(a) = runs.last().and_then(|r| r.trace.as_ref()).and_then(|t| t.analysis.as_ref()) {
        svgs.extend(crate::report::trace_charts::charts(a));
    }
    if svgs.is_empty() {
        eprintln!("fsbench: --charts: the {layout} layout has no charts yet; nothing written");
        return Ok(());
    }
    check_output_path("--charts", dir)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("--charts: cannot create {}: {e}", dir.display()))?;
    for (name, svg) in svgs {
        let path = dir.join(name);
        write_output("--charts", &path, svg.as_bytes())?;
        eprintln!("fsbench: wrote {}", path.display());
    }
    Ok(())
}

fn write(exporter: &Formats, doc: &Document, out: &Output) -> Result<(), i32> {
    match out {
        Output::Given(o) => emit_doc(exporter, doc, o),
        Output::Append(path) => {
            super::DOC_WRITTEN.store(true, Ordering::Relaxed);
            let text = exporter.render(doc).map_err(|e| {
                super::fail(format!("fsbench: error: {e}"));
                1
            })?;
            append("report", path, &text).map_err(|e| {
                super::fail(format!("fsbench: error: {e}"));
                1
            })
        }
    }
}

/// The report on stdout after the part of it already streamed there: what
/// came before that part (a FAILED or PARTIAL banner) and what follows it.
/// Were the streamed text not in the report, the whole report follows:
/// shown twice rather than lost.
fn rest_of_report(exporter: &Formats, doc: &Document, streamed: &str) -> Result<(), i32> {
    super::events::echo_warnings(&doc.warnings());
    let text = exporter.render(doc).map_err(|e| {
        super::fail(format!("fsbench: error: {e}"));
        1
    })?;
    let rest = match text.find(streamed) {
        Some(at) => format!("{}{}", &text[..at], &text[at + streamed.len()..]),
        None => text,
    };
    super::emit(&rest, &None).map_err(|e| {
        super::fail(format!("fsbench: error: {e}"));
        1
    })
}

/// Append `text` to a file the workload named (created if missing).
fn append(name: &str, path: &std::path::Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    let mut f = crate::environment::safety::create_output(&format!("{name}'s file"), path, true)?;
    f.write_all(text.as_bytes()).map_err(|e| format!("cannot append to {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fsbench_flags_are_split_from_the_tools_options_by_their_definitions() {
        let own = with_common_flags(crate::frontend::fio::Fio.command());
        let args: Vec<String> = [
            "job.fio",
            "--size=1g",
            "--output-format",
            "json",
            "--keep-files",
            "--runtime=5",
            "--output=x.json",
            "--repeat",
            "3",
            "--ignore-unknown",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let (mine, rest) = split(&args, &own);
        assert_eq!(mine, vec!["--output-format", "json", "--keep-files", "--output=x.json", "--repeat", "3", "--ignore-unknown"]);
        assert_eq!(rest, vec!["job.fio", "--size=1g", "--runtime=5"]);
    }

    #[test]
    fn an_optional_value_is_never_the_next_word() {
        let own = with_common_flags(crate::frontend::fio::Fio.command());
        let args: Vec<String> =
            ["--trace", "--trace-output", "/t/base", "--trace=loop3", "job.fio"].iter().map(|s| s.to_string()).collect();
        let (mine, rest) = split(&args, &own);
        assert_eq!(mine, vec!["--trace", "--trace-output", "/t/base", "--trace=loop3"]);
        assert_eq!(rest, vec!["job.fio"]);
    }

    /// Every flag of every command whose value may be left out takes it
    /// only with `=` (`--trace[=DEV]`): otherwise `--trace --trace-output X`
    /// reads `--trace-output` as the device. Today that is `--trace` alone,
    /// on every workload command.
    #[test]
    fn optional_values_need_an_equals_sign_on_every_command() {
        fn walk(c: &Command, path: &str, found: &mut Vec<String>) {
            for a in c.get_arguments() {
                let optional = a.get_num_args().is_some_and(|r| r.min_values() == 0 && r.max_values() > 0);
                if a.get_action().takes_values() && optional && a.get_long().is_some() {
                    assert!(a.is_require_equals_set(), "{path} --{} takes an optional value without `=`", a.get_long().unwrap());
                    found.push(format!("{path} --{}", a.get_long().unwrap()));
                }
            }
            for s in c.get_subcommands() {
                walk(s, &format!("{path} {}", s.get_name()), found);
            }
        }
        let mut found = Vec::new();
        walk(&super::super::command(), "fsbench", &mut found);
        // The families that take their tool's options as one list parse ours in a command of their own.
        for f in crate::frontend::FRONTENDS.iter().filter(|f| f.raw_args()) {
            walk(&with_common_flags(f.command()), &format!("fsbench {}", f.name()), &mut found);
        }
        assert!(found.iter().any(|f| f == "fsbench fio --trace"), "{found:?}");
        assert!(found.iter().all(|f| f.ends_with(" --trace")), "{found:?}");
    }
}
