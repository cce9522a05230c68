//! `fsbench fio`: fio job files and fio-style options.

use super::CommonArgs;
use crate::frontend::fio::{self as frontend, ParseOptions};
use crate::report::export::{DocKind, Document};
use crate::runner::{self, RunOptions};
use clap::{Args, Parser};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

#[derive(Args, Debug)]
#[command(disable_help_flag = true)]
pub struct FioArgs {
    /// Job files, fio options (`--key=value`) and the fsbench flags
    /// --output-format=normal|json|fio-json, --output=FILE, --allow-device,
    /// --keep-files, --no-progress, --ignore-unknown.
    #[arg(allow_hyphen_values = true, trailing_var_arg = true, num_args = 0..)]
    args: Vec<String>,
}

/// fsbench's own flags, split out of the fio arguments.
#[derive(Parser, Debug)]
#[command(name = "fsbench fio", no_binary_name = true)]
struct OwnFlags {
    #[command(flatten)]
    common: CommonArgs,
    /// Warn about unknown fio options instead of stopping.
    #[arg(long)]
    ignore_unknown: bool,
    #[command(flatten)]
    repeat: super::repeat::RepeatArgs,
}

const VALUE_FLAGS: &[&str] = &["--output-format", "--output", "--repeat", "--cache", "--background"];
const BOOL_FLAGS: &[&str] = &["--allow-device", "--keep-files", "--no-progress", "--ignore-unknown"];

/// Separate job files, fsbench flags and fio options.
fn split(args: &[String]) -> (Vec<PathBuf>, Vec<String>, Vec<String>) {
    let (mut files, mut own, mut fio) = (Vec::new(), Vec::new(), Vec::new());
    let mut it = args.iter().peekable();
    while let Some(a) = it.next() {
        let key = a.split('=').next().unwrap_or(a);
        if VALUE_FLAGS.contains(&key) {
            own.push(a.clone());
            if !a.contains('=') {
                if let Some(v) = it.next() {
                    own.push(v.clone());
                }
            }
        } else if BOOL_FLAGS.contains(&key) {
            own.push(a.clone());
        } else if a.starts_with('-') {
            fio.push(a.clone());
        } else {
            files.push(PathBuf::from(a));
        }
    }
    (files, own, fio)
}

const HELP: &str = "\
Usage: fsbench fio [JOBFILE...] [--fio-option=value ...] [fsbench flags]

Runs fio job files, or a job described by fio options on the command line
(--name=NAME starts a job; options before the first --name apply to all).
With job files, fio options given on the command line override every job's
value (e.g. --size=64m --runtime=5).

fsbench flags:
  --output-format=normal|json|fio-json   report layout on stdout (default normal)
  --output=FILE                          write the report to FILE
  --allow-device                         allow writing to block devices named as files
  --keep-files                           keep created files even on Ctrl-C
  --ignore-unknown                       warn about unknown fio options instead of failing
  --no-progress                          no progress line on stderr
  --repeat=N                             run N times; statistics over the runs
  --cache=warm|cold|polluted:SIZE        page-cache state applied before each run
  --background=files[:fsync,...]         a background process creating 100 KB files during each run
";

pub fn run(a: FioArgs) -> i32 {
    if a.args.iter().any(|x| x == "--help" || x == "-h") {
        print!("{HELP}");
        return 0;
    }
    let (files, own, fio_args) = split(&a.args);
    let flags = match OwnFlags::try_parse_from(&own) {
        Ok(f) => f,
        Err(e) => {
            eprint!("fsbench fio: {e}");
            return 2;
        }
    };
    let kind = if flags.repeat.wanted() { DocKind::Repeated } else { DocKind::Run };
    if let Err(code) = super::exporter_for("fio", &flags.common.output_format, kind) {
        return code;
    }
    if files.is_empty() && fio_args.is_empty() {
        eprintln!("fsbench fio: no job file and no --name=...; see `fsbench fio --help`");
        return 2;
    }
    let parsed = match frontend::parse(&files, &fio_args, &ParseOptions { ignore_unknown: flags.ignore_unknown }) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("fsbench: error: {e}");
            return 2;
        }
    };
    for w in &parsed.warnings {
        eprintln!("fsbench: warning: {w}");
    }
    let mut command = vec!["fsbench".to_string(), "fio".to_string()];
    command.extend(a.args.iter().cloned());
    if flags.repeat.wanted() {
        return super::repeat::run(crate::model::Plan::Jobs(parsed.jobs), &flags.common, &flags.repeat, command);
    }
    execute(crate::model::Plan::Jobs(parsed.jobs), &flags.common, command)
}

/// Run jobs and print the report; shared with `quick`'s JSON path.
pub fn execute(plan: crate::model::Plan, common: &CommonArgs, command: Vec<String>) -> i32 {
    let opts = RunOptions {
        cache_controlled: false,
        allow_device: common.allow_device,
        keep_files: common.keep_files,
        stop: super::install_stop_handler(),
        progress: super::want_progress(common),
        command,
    };
    let exporter = match super::exporter_for("run", &common.output_format, DocKind::Run) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let result = match runner::execute(&plan, &opts, &mut |_| {}) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("fsbench: error: {e}");
            return 1;
        }
    };
    if let Err(code) = super::emit_doc(exporter, &Document::Run(&result), &common.output) {
        return code;
    }
    exit_code(&result, opts.stop.load(Ordering::Relaxed))
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_separates_files_own_flags_and_fio_options() {
        let args: Vec<String> = ["job.fio", "--size=1g", "--output-format", "json", "--keep-files", "--runtime=5", "--output=x.json"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (files, own, fio) = split(&args);
        assert_eq!(files, vec![PathBuf::from("job.fio")]);
        assert_eq!(own, vec!["--output-format", "json", "--keep-files", "--output=x.json"]);
        assert_eq!(fio, vec!["--size=1g", "--runtime=5"]);
    }
}
