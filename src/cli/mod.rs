//! Command-line entry: clap definitions and dispatch. The workload
//! families' subcommands come from `frontend::FRONTENDS` (`workload.rs`);
//! the other commands are one file each.

mod cleanup;
mod compare;
mod events;
mod experiment;
mod experiment_check;
mod manual;
mod quick;
mod replay;
mod resume;
mod surface;
mod trace;
mod workload;

use crate::report::export::{self, DocKind, Document, Formats};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

#[derive(Parser, Debug)]
#[command(name = "fsbench", version, about = "File-system and storage benchmark", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The commands that are not workload families.
#[derive(Subcommand, Debug)]
enum Command {
    /// A one-minute disk check: sequential 1 MiB bandwidth, random 4 KiB IOPS
    /// at queue depth 1 and 32 with latency percentiles, and fsync latency.
    Quick(quick::QuickArgs),
    /// Compare two results per metric: relative difference with its 95% confidence interval and Welch's t-test
    Compare(compare::CompareArgs),
    /// Run an experiment file: targets × workloads × cache scenarios ×
    /// background loads × repeats, with statistics, CSV and charts.
    Experiment(experiment::ExperimentArgs),
    /// Re-issue a captured block trace (blktrace files or a fio iolog) against a device or file, or convert it to a fio iolog.
    ///
    /// From blktrace files it replays the D (issue) events, or the Q (queue) events of a trace that has no D
    /// (a bio-based device such as zram): reads and writes, and discards as trims; flushes without data and
    /// passthrough commands are left out. From a fio iolog (version 2 or 3) its reads, writes and trims;
    /// syncs are left out. Writes and trims are refused without --write (and on a block device without
    /// --allow-device); I/Os past the target's end are refused before any I/O unless --beyond-end wrap|skip.
    Replay(replay::ReplayArgs),
    /// Surface scan: read chunks across a block device's whole LBA range; throughput and latency per position.
    Surface(surface::SurfaceArgs),
    /// List the I/O engines and what they can do.
    Engines,
    /// Undo what fsbench runs that died (SIGKILL, crash, power loss) left
    /// behind: mounts, loop and zram devices, image files, directories.
    Cleanup(cleanup::CleanupArgs),
    /// Capture the block trace of a device (blktrace records) for a time,
    /// while a command runs, or until Ctrl-C.
    Trace(trace::TraceArgs),
    /// Print fsbench's man page (roff), or one command's: `fsbench man | man -l -`.
    Man(manual::ManArgs),
    /// Print a shell completion script: `fsbench completions bash > /etc/bash_completion.d/fsbench`.
    Completions(manual::CompletionsArgs),
    /// (internal) the background load process fsbench starts during runs
    #[command(hide = true, name = "background-load")]
    BackgroundLoad(crate::environment::background::ChildArgs),
}

/// The whole command line: the commands above and one subcommand per
/// workload family.
fn command() -> clap::Command {
    workload_families().fold(Cli::command(), |c, f| c.subcommand(workload::command(f)))
}

/// The families whose command is a generic workload command (`workload.rs`);
/// quick and replay have their own above.
fn workload_families() -> impl Iterator<Item = &'static dyn crate::frontend::Frontend> {
    crate::frontend::FRONTENDS.iter().copied().filter(|f| !f.own_command())
}

/// The generic workload command `name` runs, if it is one.
fn workload_family(name: &str) -> Option<&'static dyn crate::frontend::Frontend> {
    workload_families().find(|f| f.name() == name)
}

/// Flags shared by the commands that run a workload.
#[derive(Args, Debug, Clone)]
pub struct CommonArgs {
    /// Output format on stdout (or in --output); several separated by
    /// commas (normal,json) write the report in each, text last.
    #[arg(long, default_value = "text", value_parser = export::FormatsParser)]
    pub output_format: String,
    /// Write the report to this file instead of stdout.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Allow writing to block devices named as job files (destroys their data).
    #[arg(long)]
    pub allow_device: bool,
    /// Lay out files even when the workload needs more than the free space
    /// of their file system (an out-of-space experiment).
    #[arg(long)]
    pub allow_fill: bool,
    /// Run even when a cache scenario cannot take effect here (cold without
    /// root, fresh-mount without a managed target); the run is recorded as
    /// not applied.
    #[arg(long)]
    pub allow_uncontrolled: bool,
    /// Keep the files fsbench created, even on Ctrl-C.
    #[arg(long)]
    pub keep_files: bool,
    /// No progress line on stderr.
    #[arg(long)]
    pub no_progress: bool,
}

pub fn main() -> i32 {
    let code = dispatch();
    // Whatever is still registered would otherwise stay behind, and on
    // record as left by a dead process.
    crate::environment::cleanup::run_all();
    if code != 0 && !DOC_WRITTEN.load(Ordering::Relaxed) && json_wanted(std::env::args()) {
        print_error_object(code);
    }
    code
}

/// Check a workload command line (the words after `fsbench`) as `fsbench`
/// would and lower every step it asks for, running nothing (a
/// fresh-directory step is planned in `fresh`): how many steps, or the exit
/// status of the refusal with its reason on stderr. The fuzz tests drive
/// every family's parsers through this, the path a real command line takes.
pub fn lower_only(args: &[String], fresh: &std::path::Path) -> Result<usize, i32> {
    let words = std::iter::once("fsbench".to_string()).chain(args.iter().cloned());
    let m = command().try_get_matches_from(words).map_err(|e| if e.use_stderr() { 2 } else { 0 })?;
    match m.subcommand().and_then(|(name, sub)| Some((workload_family(name)?, sub))) {
        Some((f, sub)) => workload::lower_only(f, sub, fresh),
        None => Err(2),
    }
}

fn dispatch() -> i32 {
    let matches = match command().try_get_matches() {
        Ok(m) => m,
        Err(e) if !e.use_stderr() => {
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            fail(e.render().to_string());
            return 2;
        }
    };
    if let Some((name, sub)) = matches.subcommand() {
        if let Some(f) = workload_family(name) {
            return workload::run(f, sub);
        }
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => {
            fail(e.render().to_string());
            return 2;
        }
    };
    match cli.command {
        Command::Quick(a) => quick::run(a),
        Command::Compare(a) => compare::run(a),
        Command::BackgroundLoad(a) => crate::environment::background::child_main_args(a),
        Command::Experiment(a) => experiment::run_cmd(a),
        Command::Cleanup(a) => cleanup::run(a),
        Command::Trace(a) => trace::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Surface(a) => surface::run(a),
        Command::Man(a) => manual::man(a, command()),
        Command::Completions(a) => manual::completions(a, command()),
        Command::Engines => {
            println!("{:<10} {:<5} {:<8} {:<15} WHAT IT DOES", "ENGINE", "MODE", "CLASS", "DIRECTIONS");
            for e in crate::model::engine::ENGINES {
                let c = e.caps;
                let class = if c.diskless { "no I/O" } else { c.class.name() };
                let mode = if c.is_async { "async" } else { "sync" };
                println!("{:<10} {mode:<5} {class:<8} {:<15} {}", e.name, c.dirs.names(), e.help);
            }
            0
        }
    }
}

/// The flags that make a workload command repeat its workload in a chosen
/// environment.
#[derive(clap::Args, Debug, Clone)]
pub struct RepeatArgs {
    /// Run the workload N times and report statistics over the runs.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=crate::model::MAX_RUNS as i64))]
    pub repeat: u32,
    /// Cache scenario applied before each measured run, once the workload's
    /// files exist: warm, cold, polluted:SIZE (fresh-mount needs a managed
    /// target: use `fsbench experiment`).
    #[arg(long)]
    pub cache: Option<String>,
    /// Background load during each run, e.g. files or files:fsync.
    #[arg(long)]
    pub background: Option<String>,
    /// Write the run's charts (SVG) into DIR: IOzone's heat map of each
    /// column over file size and record size (the mean over --repeat).
    #[arg(long, value_name = "DIR")]
    pub charts: Option<PathBuf>,
    /// Trace the block device under the workload's files (or DEV) during
    /// each run: blktrace files that blkparse and btt read, blkparse's
    /// summary and the trace's analysis in the result.
    #[arg(long, value_name = "DEV", num_args = 0..=1, default_missing_value = "auto", require_equals = true)]
    pub trace: Option<String>,
    /// BASENAME of the blktrace files, BASENAME.blktrace.CPU (default:
    /// fsbench-trace-TIME/trace in the current directory).
    #[arg(long, value_name = "BASENAME", requires = "trace")]
    pub trace_output: Option<PathBuf>,
    /// Keep only these blktrace categories (blktrace's -a), comma-separated:
    /// read, write, flush, sync, queue, requeue, issue, complete, fs, pc,
    /// notify, ahead, meta, discard, drv_data, fua. `issue,complete` costs
    /// far less than all (see bench/trace-overhead) and still gives
    /// dispatches, sizes, seeks, queue depth and D2C per request; btt's
    /// Q-based phases need `queue`.
    #[arg(long, value_name = "LIST", requires = "trace")]
    pub trace_mask: Option<String>,
}

impl RepeatArgs {
    /// Any of the flags given: the output is a repeated-run document. One
    /// warm run (nothing done to the cache) is an ordinary run and keeps
    /// its tool's report.
    pub fn wanted(&self) -> bool {
        self.repeat > 1 || self.cache.as_deref().is_some_and(|c| c.trim() != "warm") || self.background.is_some()
    }
}

/// 130 when interrupted, 1 when a job failed, else 0 (and why on stderr).
pub fn exit_code(result: &crate::result::RunResult, stopped: bool) -> i32 {
    if stopped {
        eprintln!("fsbench: interrupted; the results above are partial");
        return 130;
    }
    for j in &result.jobs {
        if let Some(e) = &j.error {
            eprintln!("fsbench: job '{}' failed: {e}", j.name);
            return 1;
        }
    }
    0
}

/// Ctrl-C and SIGTERM set the flag (workers stop, partial results are
/// printed, files and devices cleaned up by the normal path). A second
/// signal undoes mounts, loop and zram devices at once and exits.
pub fn install_stop_handler() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM]);
    match signals {
        Ok(mut signals) => {
            // The watcher takes its own descriptor table while this thread
            // waits, so the copy holds nothing but stdio and the signal
            // socket pair made just above (see `host::private_fd_table`).
            let (ready, wait) = std::sync::mpsc::channel();
            let spawned = std::thread::Builder::new().name("fsb-signals".into()).spawn(move || {
                crate::host::private_fd_table(true);
                let _ = ready.send(());
                for _ in signals.forever() {
                    if flag.swap(true, Ordering::SeqCst) {
                        eprintln!("fsbench: second signal: cleaning up and exiting now");
                        crate::environment::cleanup::run_all();
                        std::process::exit(130);
                    }
                    eprintln!("fsbench: stopping (again to abort)");
                }
            });
            if spawned.is_ok() {
                let _ = wait.recv();
            }
        }
        Err(e) => eprintln!("fsbench: warning: cannot catch Ctrl-C ({e}); an interrupted run leaves its files"),
    }
    stop
}

/// The errors that ended the command, for the error object JSON modes print
/// when no document came out.
static ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// A document was written (stdout or --output): no error object then.
pub(super) static DOC_WRITTEN: AtomicBool = AtomicBool::new(false);

/// An error on stderr, kept for the error object. Each line is bounded, so
/// that input quoted by a library (a TOML parser shows the line) cannot
/// flood the terminal.
pub fn fail(text: String) {
    let text: Vec<String> = text.trim_end().lines().map(|l| crate::units::clip_at(l, 400)).collect();
    let text = text.join("\n");
    eprintln!("{text}");
    ERRORS.lock().unwrap_or_else(|e| e.into_inner()).push(text);
}

/// `--output-format` names a JSON format on this command line (looked up in
/// the raw arguments, since the error may be that they do not parse).
fn json_wanted(args: impl Iterator<Item = String>) -> bool {
    let args: Vec<String> = args.collect();
    let format = args.iter().enumerate().rev().find_map(|(i, a)| match a.strip_prefix("--output-format") {
        Some(v) if v.starts_with('=') => Some(v[1..].to_string()),
        Some("") => args.get(i + 1).cloned(),
        _ => None,
    });
    format.is_some_and(|f| f.contains("json"))
}

/// A JSON reader gets an object, not an empty stdout, when the command
/// failed before it produced its document.
fn print_error_object(code: i32) {
    let errors = ERRORS.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let message = errors.last().cloned().unwrap_or_else(|| format!("fsbench exited with status {code}"));
    #[derive(serde::Serialize)]
    struct ErrorDoc {
        schema: &'static str,
        error: String,
        errors: Vec<String>,
        exit_status: i32,
        command: Vec<String>,
    }
    let doc = ErrorDoc { schema: ERROR_SCHEMA, error: message, errors, exit_status: code, command: std::env::args().collect() };
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
    // A closed stdout (a reader that went away) is no reason to panic.
    let _ = emit(&text, &None);
}

/// The schema tag of the error object.
pub const ERROR_SCHEMA: &str = "fsbench-error/1";

/// Print the report where the user asked; diagnostics never go to stdout.
pub fn emit(text: &str, output: &Option<PathBuf>) -> Result<(), String> {
    DOC_WRITTEN.store(true, Ordering::Relaxed);
    match output {
        Some(p) => crate::environment::safety::write_output("--output", p, text.as_bytes()),
        None => {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes()).and_then(|_| out.flush()).map_err(|e| format!("stdout: {e}"))
        }
    }
}

/// The formats of `format` (one, or several separated by commas) on a
/// command that produces `kind`, checked before anything runs; the error
/// (exit status 2) names the formats that can show it.
pub fn exporter_for(command: &str, format: &str, kind: DocKind) -> Result<Formats, i32> {
    export::formats_for(format, kind).map_err(|e| {
        fail(format!("fsbench {command}: {e}"));
        2
    })
}

/// `--output FILE` must be a place for an output (see
/// [`check_outputs`]) and writable before anything runs, or the results of
/// a long run would be lost at its end. A file the check had to create is
/// removed again: a run refused later (a bad flag, a failed check) leaves
/// no empty output behind, and an existing file is left as it was.
pub fn check_output(command: &str, output: &Option<PathBuf>) -> Result<(), i32> {
    let Some(p) = output else { return Ok(()) };
    check_outputs(command, &[("--output".into(), p.clone())])?;
    let existed = std::fs::symlink_metadata(p).is_ok();
    match std::fs::OpenOptions::new().write(true).create(true).truncate(false).open(p) {
        Ok(_) if !existed => {
            let _ = std::fs::remove_file(p);
            Ok(())
        }
        Ok(_) => Ok(()),
        Err(e) => {
            fail(format!("fsbench {command}: --output {}: {e}; nothing was run", p.display()));
            Err(2)
        }
    }
}

/// The outputs a command will write, each with the flag or option that
/// names it, refused before anything runs when one is a device or under
/// /dev (`environment::safety::check_output_path`); exit status 2.
pub fn check_outputs(command: &str, outputs: &[(String, PathBuf)]) -> Result<(), i32> {
    crate::environment::safety::check_output_paths(outputs).map_err(|e| {
        fail(format!("fsbench {command}: {e}; nothing was run"));
        2
    })
}

/// Render a document and write it where the user asked, its warnings also
/// on stderr; 1 on failure.
pub fn emit_doc(exporter: &Formats, doc: &Document, output: &Option<PathBuf>) -> Result<(), i32> {
    events::echo_warnings(&doc.warnings());
    let text = exporter.render(doc).map_err(|e| {
        fail(format!("fsbench: error: {e}"));
        1
    })?;
    emit(&text, output).map_err(|e| {
        fail(format!("fsbench: error: {e}"));
        1
    })
}

/// Show progress only when a person is watching both streams.
pub fn want_progress(common: &CommonArgs) -> bool {
    use std::io::IsTerminal;
    !common.no_progress && std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
}
