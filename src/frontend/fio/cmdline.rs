//! fio's command line as people type it: `fio -name=x -rw=randread
//! -iodepth 1 -thread job.fio --runtime 30`. fio reads it with
//! `getopt_long_only`: one dash or two, `=value` or the next word, and an
//! option that needs a value takes the next word whatever it is. A word that
//! is not an option (nor an option's value) is a job file.
//!
//! This module turns those words into job files plus `--key=value`
//! arguments for `build`, and knows fio's own option names (generated in
//! `fio_names`) so a real fio option fsbench lacks is told apart from a typo.

use super::fio_names::FIO_OPTIONS;
use super::options;
use crate::frontend::suggest::nearest;
use std::path::PathBuf;

/// fio's own flags (not job options) that fsbench does not offer, with why.
const UNSUPPORTED_FLAGS: &[(&str, &str)] = &[
    ("server", "fsbench has no client/server mode; run it on each machine"),
    ("client", "fsbench has no client/server mode; run it on each machine"),
    ("daemonize", "fsbench has no server to put in the background"),
    ("remote-config", "fsbench has no client/server mode"),
    ("idle-prof", "fsbench records CPU use per run instead (the result's cpu section)"),
    ("inflate-log", "fsbench does not write compressed logs"),
    ("trigger-file", "fsbench has no triggers"),
    ("trigger-timeout", "fsbench has no triggers"),
    ("trigger", "fsbench has no triggers"),
    ("trigger-remote", "fsbench has no triggers"),
    ("merge-blktrace-only", "fsbench does not merge blktraces; `fsbench replay` re-issues one trace"),
    ("cpuclock-test", "fsbench reads CLOCK_MONOTONIC, which needs no calibration"),
    ("crctest", "not a benchmark of the file system"),
    ("cmdhelp", "see `fsbench fio --help`, `fsbench man fio` and docs/fio.md"),
    ("enghelp", "see `fsbench engines`"),
    ("bandwidth-log", "use write_bw_log= per job"),
    ("version", "this is fsbench: `fsbench --version`"),
];

/// Is `name` (or an alias) an option of fio itself, job or engine option?
pub fn is_fio_option(name: &str) -> bool {
    fio_bare(name).is_some()
}

/// fio's own answer to "may `name` stand without a value?", if fio knows it.
fn fio_bare(name: &str) -> Option<bool> {
    FIO_OPTIONS.iter().find(|(n, _)| *n == name).map(|(_, bare)| *bare)
}

/// The closest fio option name, for a word that is neither fsbench's nor fio's.
pub fn suggest_fio_option(name: &str) -> Option<&'static str> {
    nearest(name, FIO_OPTIONS.iter().map(|(n, _)| *n), 2)
}

/// Does `key` take the next word as its value when given without `=`?
/// fio's rule (its own table) first; an option only fsbench has follows
/// fsbench's table. fsbench is kinder than fio in one case: an option that
/// may stand alone does not swallow a following option (`--direct --rw=read`).
fn takes_next(key: &str, next: &str) -> bool {
    let ours = options::find(key);
    let needs = match (fio_bare(key), ours) {
        (Some(bare), _) => !bare,
        (None, Some(def)) => !def.bare_ok(),
        (None, None) => false,
    };
    needs && !(next.starts_with('-') && ours.is_some_and(|d| d.bare_ok()))
}

/// The words after fsbench's own flags are taken out.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Words {
    pub files: Vec<PathBuf>,
    /// Options as `--key=value` or `--key`, in order.
    pub args: Vec<String>,
}

/// Split fio-style words into job files and options.
pub fn words(raw: &[String]) -> Result<Words, String> {
    let mut out = Words::default();
    let mut it = raw.iter().peekable();
    while let Some(a) = it.next() {
        let Some(body) = a.strip_prefix("--").or_else(|| a.strip_prefix('-')).filter(|b| !b.is_empty()) else {
            out.files.push(PathBuf::from(a));
            continue;
        };
        let (key, value) = match body.split_once('=') {
            Some((k, v)) => (k, Some(v.to_string())),
            None => (body, None),
        };
        if let Some((_, why)) = UNSUPPORTED_FLAGS.iter().find(|(f, _)| *f == key) {
            return Err(format!("fio's --{key} is not supported by fsbench: {why}"));
        }
        let value = match value {
            None if it.peek().is_some_and(|next| takes_next(key, next)) => it.next().cloned(),
            v => v,
        };
        out.args.push(match value {
            Some(v) => format!("--{key}={v}"),
            None => format!("--{key}"),
        });
    }
    Ok(out)
}

/// fio's spellings of flags that fsbench has under its own name, turned
/// into fsbench's before its flags are parsed: one dash as well as two,
/// `--eta=never` as `--no-progress`, `--minimal` as the terse format.
pub fn normalize(raw: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(raw.len());
    let mut it = raw.into_iter().peekable();
    while let Some(a) = it.next() {
        // `-1` may be a value; only a dash before a letter makes an option.
        let long = match a.strip_prefix('-') {
            Some(b) if b.len() > 1 && b.starts_with(|c: char| c.is_ascii_alphabetic()) => format!("--{b}"),
            _ => a,
        };
        match long.as_str() {
            "--eta" => {
                if it.next().as_deref() == Some("never") {
                    out.push("--no-progress".into());
                }
            }
            "--eta=never" => out.push("--no-progress".into()),
            s if s.starts_with("--eta=") => {}
            "--minimal" => out.push("--output-format=terse".into()),
            _ => out.push(long),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(args: &[&str]) -> Words {
        words(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn values_come_with_equals_or_as_the_next_word() {
        let got = w(&["-name=x", "-rw", "randread", "--iodepth", "1", "-thread", "job.fio", "--runtime", "30", "--time_based"]);
        assert_eq!(got.files, [PathBuf::from("job.fio")]);
        assert_eq!(got.args, ["--name=x", "--rw=randread", "--iodepth=1", "--thread", "--runtime=30", "--time_based"]);
    }

    #[test]
    fn a_value_that_looks_like_a_file_is_still_a_value() {
        let got = w(&["--name", "job.fio", "--filename", "/dev/null"]);
        assert!(got.files.is_empty(), "{got:?}");
        assert_eq!(got.args, ["--name=job.fio", "--filename=/dev/null"]);
    }

    #[test]
    fn a_bare_boolean_does_not_swallow_the_next_option() {
        assert_eq!(w(&["--direct", "--rw=read"]).args, ["--direct", "--rw=read"]);
        assert_eq!(w(&["--direct", "1"]).args, ["--direct=1"]);
    }

    #[test]
    fn fio_only_flags_are_refused_with_a_reason() {
        let e = words(&["--server".to_string()]).unwrap_err();
        assert!(e.contains("--server is not supported by fsbench"), "{e}");
    }

    #[test]
    fn fio_spellings_of_fsbench_flags() {
        let n = |a: &[&str]| normalize(a.iter().map(|s| s.to_string()).collect());
        assert_eq!(n(&["-output-format=json", "--eta", "never", "-x", "-"]), ["--output-format=json", "--no-progress", "-x", "-"]);
        assert_eq!(n(&["--eta=auto", "--minimal", "-1"]), ["--output-format=terse", "-1"]);
    }

    #[test]
    fn fio_names_are_known() {
        assert!(is_fio_option("thread") && is_fio_option("ratemin") && is_fio_option("hipri"));
        assert!(!is_fio_option("iodepht"));
        assert_eq!(suggest_fio_option("numa_cpu_node"), Some("numa_cpu_nodes"));
    }
}
