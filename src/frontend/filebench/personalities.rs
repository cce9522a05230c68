//! The Filebench personalities fsbench ships: workload files written for
//! this project in Filebench 1.5 WML (workloads/filebench/*.f), compiled
//! into the binary so `fsbench filebench NAME` needs no file on disk.

use crate::frontend::suggest::edit_distance;
use crate::frontend::Preset;

/// A personality is the family's preset.
pub type Personality = Preset;

macro_rules! personality {
    ($name:literal, $summary:literal) => {
        Preset { name: $name, summary: $summary, text: include_str!(concat!("../../../workloads/filebench/", $name, ".f")) }
    };
}

pub const ALL: &[Personality] = &[
    personality!("fileserver", "file server: create+write, append, read whole, delete, stat; 50 threads, 10 000 files of 128 KiB mean"),
    personality!("varmail", "mail server: delete, create+append+fsync, read+append+fsync, read; 16 threads, 1 000 files in one directory"),
    personality!("webserver", "web server: 10 whole-file reads per append to one shared log; 100 threads, 1 000 files"),
    personality!("webproxy", "web proxy cache: delete, create+append, 5 whole-file reads; 100 threads, 10 000 files in one directory"),
    personality!("oltp", "database: 200 random-reading shadows, 10 async random writers, 1 log writer, synchronized by semaphores"),
    personality!("videoserver", "video server: 48 rate-limited sequential readers, 1 writer replacing a video every 10 s"),
    personality!("randomrw", "random 8 KiB reads and writes of one 5 GiB file, one thread each"),
    personality!("randomread", "random 8 KiB reads of one 5 GiB file"),
    personality!("randomwrite", "random 8 KiB writes to one 5 GiB file"),
    personality!("singlestreamread", "sequential 1 MiB reads of one 5 GiB file"),
    personality!("singlestreamwrite", "sequential 1 MiB writes growing one file"),
    personality!("singlestreamreaddirect", "sequential 1 MiB O_DIRECT reads of one 5 GiB file"),
    personality!("singlestreamwritedirect", "sequential 1 MiB O_DIRECT writes growing one file"),
    personality!("fivestreamread", "five threads, each reading its own 1 GiB file sequentially in 1 MiB reads"),
    personality!("fivestreamwrite", "five threads, each writing its own file sequentially in 1 MiB writes"),
    personality!("fivestreamreaddirect", "five threads, each reading its own 1 GiB file sequentially with O_DIRECT"),
    personality!("fivestreamwritedirect", "five threads, each writing its own file sequentially with O_DIRECT"),
    personality!("createfiles", "16 threads create and write 50 000 files of 16 KiB; ends when all exist"),
    personality!("copyfiles", "copy a tree of 1 000 files of 16 KiB file by file; ends when all are copied"),
    personality!("mongo", "document store: append, read whole, delete from a second set; ends when that set is empty"),
    personality!("netsfs", "network file server clients: launches, read-modify-writes, appends, stats; table-driven sizes"),
    personality!("makedirs", "16 threads mkdir 10 000 leaf directories; ends when all exist"),
    personality!("removedirs", "16 threads rmdir 10 000 leaf directories; ends when none is left"),
    personality!("listdirs", "16 threads list the directories of a deep tree of 50 000 empty files"),
    personality!("openfiles", "16 threads open and close 50 000 empty files"),
    personality!("filemicro_create", "build one file with 1024 appends of 1 MiB"),
    personality!("filemicro_createfiles", "create and write 5 000 files of 1 KiB in a half-full flat fileset"),
    personality!("filemicro_createrand", "append random sizes below 1 MiB to one file, fsync every 10, until 1 GiB"),
    personality!("filemicro_delete", "16 threads delete 1 000 files of a 5 000-file set"),
    personality!("filemicro_rread", "random 2 KiB reads of a 1 GiB file until 128 MiB are read"),
    personality!("filemicro_rwrite", "random 2 KiB writes to a 1 GiB file until 128 MiB are written"),
    personality!("filemicro_rwritedsync", "65 536 random 2 KiB O_SYNC writes to a 1 GiB file"),
    personality!("filemicro_rwritefsync", "16 384 random 8 KiB writes to a 1 GiB file, then one fsync"),
    personality!("filemicro_seqread", "sequential 1 MiB reads of one 1 GiB file"),
    personality!("filemicro_seqwrite", "write one 1 GiB file in 1024 appends of 1 MiB"),
    personality!("filemicro_seqwriterand", "131 072 appends of random size below 8 KiB to one file"),
    personality!("filemicro_seqwriterandvargam", "131 072 appends to one file, gamma sizes (min 1 KiB, mean 5.5 KiB)"),
    personality!("filemicro_seqwriterandvartab", "131 072 appends to one file, sizes from a 1-64 KiB table"),
    personality!("filemicro_statfile", "20 threads stat the files of a 10 000-file set"),
    personality!("filemicro_writefsync", "8 KiB appends with an fsync every 8 MiB, until 128 fsyncs"),
];

pub fn find(name: &str) -> Option<&'static Personality> {
    ALL.iter().find(|p| p.name == name)
}

/// The personality name nearest to a mistyped one ("did you mean"), if one
/// is close enough to be a plausible typo: at most a third of its length in
/// edits, and at least 2 edits allowed for short names.
pub fn closest(name: &str) -> Option<&'static str> {
    ALL.iter()
        .map(|p| (edit_distance(name, p.name), p.name))
        .filter(|(d, n)| *d <= (n.len() / 3).max(2))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::flow::FlowopKind;
    use std::collections::BTreeSet;

    #[test]
    fn every_workload_file_is_registered_and_every_entry_has_a_file() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/workloads/filebench");
        let files: BTreeSet<String> = std::fs::read_dir(dir)
            .expect("workloads/filebench exists")
            .map(|e| e.expect("readable entry").file_name().to_string_lossy().to_string())
            .collect();
        let registered: BTreeSet<String> = ALL.iter().map(|p| format!("{}.f", p.name)).collect();
        assert_eq!(files, registered, "workloads/filebench and personalities::ALL differ");
        for p in ALL {
            let on_disk = std::fs::read_to_string(format!("{dir}/{}.f", p.name)).unwrap();
            assert_eq!(on_disk, p.text, "{} is compiled from its own file", p.name);
        }
    }

    #[test]
    fn names_are_unique_and_entries_complete() {
        let names: BTreeSet<&str> = ALL.iter().map(|p| p.name).collect();
        assert_eq!(names.len(), ALL.len(), "duplicate personality name");
        for p in ALL {
            assert!(!p.summary.is_empty(), "{} has no summary", p.name);
            assert!(p.text.starts_with(&format!("# {}:", p.name)), "{} opens with its own name", p.name);
            assert!(p.text.contains("set $dir=/tmp"), "{} lets the user choose $dir", p.name);
        }
    }

    #[test]
    fn run_lines_use_runtime_and_define_it() {
        for p in ALL {
            let runs: Vec<&str> = p.text.lines().filter(|l| l.trim_start().starts_with("run")).collect();
            match runs.as_slice() {
                [] => assert!(!p.text.contains("set $runtime"), "{}: $runtime set but no run line uses it", p.name),
                [line] => {
                    assert_eq!(line.trim(), "run $runtime", "{}", p.name);
                    assert!(p.text.contains("set $runtime=60"), "{}: run $runtime needs a default", p.name);
                }
                _ => panic!("{}: more than one run line", p.name),
            }
        }
    }

    /// The text without comments.
    fn code(text: &str) -> String {
        text.lines().map(|l| l.split('#').next().unwrap_or("")).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn every_variable_used_is_set_in_the_same_file() {
        for p in ALL {
            let code = code(p.text);
            let set: BTreeSet<&str> = code
                .lines()
                .filter_map(|l| l.trim().strip_prefix("set $"))
                .map(|rest| rest.split(|c: char| c == '=' || c.is_whitespace()).next().unwrap_or(""))
                .collect();
            for (i, _) in code.match_indices('$') {
                let name: String = code[i + 1..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                assert!(set.contains(name.as_str()), "{}: ${name} is used but never set", p.name);
            }
        }
    }

    #[test]
    fn flowop_types_exist_and_open_flags_sit_on_opening_flowops() {
        for p in ALL {
            let code = code(p.text);
            let composites: BTreeSet<&str> = code
                .lines()
                .filter_map(|l| l.trim().strip_prefix("define flowop name="))
                .map(|rest| rest.split(|c: char| c == ',' || c.is_whitespace()).next().unwrap_or(""))
                .collect();
            for line in code.lines().map(str::trim).filter(|l| l.starts_with("flowop ")) {
                let mut words = line.split_whitespace().skip(1);
                let kind = words.next().unwrap_or("");
                let joined = words.collect::<Vec<_>>().join("");
                let attrs: Vec<&str> = joined.split(',').map(|a| a.split('=').next().unwrap_or("")).collect();
                assert!(attrs.first().is_some_and(|a| *a == "name"), "{}: flowop without a leading name: {line}", p.name);
                match FlowopKind::from_wml(kind) {
                    Some(k) => {
                        for flag in ["directio", "dsync", "noreadahead"] {
                            assert!(!attrs.contains(&flag) || k.opens_file(), "{}: {flag} on {kind}, which opens nothing: {line}", p.name);
                        }
                    }
                    None => assert!(composites.contains(kind), "{}: unknown flowop type {kind}", p.name),
                }
            }
        }
    }

    #[test]
    fn find_and_closest() {
        assert_eq!(find("varmail").map(|p| p.name), Some("varmail"));
        assert!(find("nosuch").is_none());
        assert_eq!(closest("fileservr"), Some("fileserver"));
        assert_eq!(closest("webprox"), Some("webproxy"));
        assert_eq!(closest("randread"), Some("randomread"));
        assert_eq!(closest("filemicro_seqwrit"), Some("filemicro_seqwrite"));
        assert_eq!(closest("zzzzzzzzzz"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }
}
