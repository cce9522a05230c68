//! `fsbench filebench`: Filebench workloads, by personality name or from a
//! `.f` file, with `--set` overrides and the same repeats, cache scenarios
//! and background loads as fio jobs.

use super::CommonArgs;
use crate::frontend::personalities;
use crate::frontend::wml::{self, WmlOptions};
use crate::model::job::BufferContent;
use crate::model::Plan;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct FilebenchArgs {
    /// A personality shipped with fsbench (see --list).
    #[arg(conflicts_with = "file")]
    personality: Option<String>,
    /// A Filebench workload file (.f), 1.5 or 1.4 dialect.
    #[arg(short = 'f', long)]
    file: Option<PathBuf>,
    /// Override `set $NAME` of the workload (repeatable), e.g. --set nfiles=1000 --set dir=/mnt/x.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    sets: Vec<String>,
    /// Seconds to measure: overrides `run N`/`psrun` and supplies a length where the file has no `run` (default 60).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    runtime: Option<u64>,
    /// Seed of every random stream (file sizes, offsets, picks); recorded in the result.
    #[arg(long)]
    seed: Option<u64>,
    /// What written and preallocated data contains: random, zero, or compress:PCT (PCT% of each 4 KiB is zeros).
    #[arg(long, default_value = "random")]
    content: String,
    /// List the shipped personalities and exit.
    #[arg(long)]
    list: bool,
    /// Print the workload's text (a personality's .f file) and exit.
    #[arg(long)]
    show: bool,
    #[command(flatten)]
    repeat: super::repeat::RepeatArgs,
    #[command(flatten)]
    common: CommonArgs,
}

pub fn run(a: FilebenchArgs) -> i32 {
    if a.list {
        for p in personalities::ALL {
            println!("{:<28} {}", p.name, p.summary);
        }
        return 0;
    }
    let kind = if a.repeat.wanted() { crate::report::export::DocKind::Repeated } else { crate::report::export::DocKind::Run };
    if let Err(code) = super::exporter_for("filebench", &a.common.output_format, kind) {
        return code;
    }
    let opts = match options(&a) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("fsbench filebench: {e}");
            return 2;
        }
    };
    let (text, origin, name) = match (&a.personality, &a.file) {
        (Some(n), None) => match personalities::find(n) {
            Some(p) => (p.text.to_string(), format!("builtin:{}", p.name), p.name.to_string()),
            None => {
                let hint = personalities::closest(n).map(|c| format!("; did you mean '{c}'?")).unwrap_or_default();
                eprintln!("fsbench filebench: no personality named '{n}'{hint} (`fsbench filebench --list` shows them)");
                return 2;
            }
        },
        (None, Some(f)) => match std::fs::read_to_string(f) {
            Ok(t) => {
                let stem = f.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "workload".into());
                (t, f.display().to_string(), stem)
            }
            Err(e) => {
                eprintln!("fsbench filebench: cannot read {}: {e}", f.display());
                return 2;
            }
        },
        _ => {
            eprintln!("fsbench filebench: name a personality (see --list) or give -f FILE.f");
            return 2;
        }
    };
    if a.show {
        print!("{text}");
        return 0;
    }
    let parsed = match wml::parse(&text, &origin, &name, &opts) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("fsbench: error: {e}");
            return 2;
        }
    };
    for w in &parsed.warnings {
        eprintln!("fsbench: warning: {w}");
    }
    let mut command = vec!["fsbench".to_string()];
    command.extend(std::env::args().skip(1));
    let plan = Plan::Flow(parsed.plan);
    if a.repeat.wanted() {
        return super::repeat::run(plan, &a.common, &a.repeat, command);
    }
    super::fio::execute(plan, &a.common, command)
}

fn options(a: &FilebenchArgs) -> Result<WmlOptions, String> {
    let mut sets = Vec::new();
    for s in &a.sets {
        let Some((k, v)) = s.split_once('=') else {
            return Err(format!("--set {s}: expected NAME=VALUE"));
        };
        let k = k.trim().trim_start_matches('$');
        if k.is_empty() {
            return Err(format!("--set {s}: the variable name is empty"));
        }
        sets.push((k.to_string(), v.to_string()));
    }
    Ok(WmlOptions { sets, runtime_s: a.runtime, seed: a.seed, content: content(&a.content)? })
}

/// `random`, `zero` or `compress:PCT`.
pub fn content(s: &str) -> Result<BufferContent, String> {
    let mut c = BufferContent::default();
    match s {
        "random" => {}
        "zero" => c.zero = true,
        _ => {
            let pct = s
                .strip_prefix("compress:")
                .and_then(|p| p.trim_end_matches('%').parse::<u32>().ok())
                .filter(|p| *p <= 100)
                .ok_or_else(|| format!("--content {s}: expected random, zero or compress:PCT with PCT in 0..=100"))?;
            c.compress_percentage = pct;
            c.compress_chunk = 4096;
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_forms() {
        assert!(content("zero").unwrap().zero);
        assert_eq!(content("compress:50").unwrap().compress_percentage, 50);
        assert_eq!(content("random").unwrap(), BufferContent::default());
        for bad in ["compress:101", "compress:", "ones", "compress:x"] {
            assert!(content(bad).unwrap_err().contains("--content"), "{bad}");
        }
    }
}
