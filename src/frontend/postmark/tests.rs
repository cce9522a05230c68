use super::*;
use std::io::Cursor;

/// The plan of the first `run` in `text`.
fn plan_of(text: &str) -> PostmarkPlan {
    match steps("t", &format!("{text}\nrun\n")).unwrap_or_else(|e| panic!("{e}")).pop() {
        Some(Step::Run { plan, .. }) => plan,
        other => panic!("no run step: {other:?}"),
    }
}

fn err_of(text: &str) -> PostmarkError {
    steps("t", text).expect_err("an error")
}

/// Asserts position and that the message mentions `needle`.
fn assert_err(text: &str, line: u32, col: u32, needle: &str) {
    let e = err_of(text);
    assert_eq!((e.line, e.col), (line, col), "{e}");
    assert!(e.message.contains(needle), "'{needle}' not in: {e}");
    assert_eq!(e.to_string(), format!("t:{line}:{col}: {}", e.message));
}

fn tmp() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn defaults_are_postmarks() {
    let p = Session::new().plan().clone();
    assert_eq!(p, PostmarkPlan::default());
    assert_eq!((p.size_low, p.size_high, p.number, p.transactions, p.seed), (500, 10_000, 500, 500, 42));
    assert_eq!(p.locations, vec![Location { path: ".".into(), weight: 1 }]);
    assert_eq!((p.subdirectories, p.read_block, p.write_block, p.buffering), (0, 512, 512, true));
    assert_eq!((p.bias_read, p.bias_create, p.report), (5, 5, ReportStyle::Verbose));
}

#[test]
fn every_set_command() {
    let p = plan_of(
        "set size 100 2000\nset number 7\nset seed 9\nset transactions 11\nset subdirectories 3\nset read 4096\n\
         set write 1024\nset buffering false\nset bias read 2\nset bias create -1\nset report terse",
    );
    assert_eq!((p.size_low, p.size_high, p.number, p.seed, p.transactions), (100, 2000, 7, 9, 11));
    assert_eq!((p.subdirectories, p.read_block, p.write_block, p.buffering), (3, 4096, 1024, false));
    assert_eq!((p.bias_read, p.bias_create, p.report), (2, -1, ReportStyle::Terse));
    let p = plan_of("set buffering false\nset buffering true\nset report terse\nset report verbose\nset bias read 10\nset bias create 0");
    assert_eq!((p.buffering, p.report, p.bias_read, p.bias_create), (true, ReportStyle::Verbose, 10, 0));
    // One size value: fixed size.
    let p = plan_of("set size 300");
    assert_eq!((p.size_low, p.size_high), (300, 300));
    let p = plan_of("set size 300 300");
    assert_eq!((p.size_low, p.size_high), (300, 300));
    assert_eq!(plan_of("set subdirectories 0").subdirectories, 0);
}

#[test]
fn matching_is_postmarks_prefix_rule() {
    // The input word may extend the command's name...
    let p = plan_of("set numbers 9\nset bias reads 3\nset sizes 10 20\nsetting transactions 4");
    assert_eq!((p.number, p.bias_read, p.size_low, p.size_high, p.transactions), (9, 3, 10, 20, 4));
    assert!(matches!(steps("t", "showx").unwrap()[0], Step::Print { .. }));
    assert_eq!(steps("t", "quitting\nrun").unwrap(), vec![Step::Quit]);
    assert_eq!(steps("t", "exit\nrun").unwrap(), vec![Step::Quit]);
    // ...but abbreviations are not commands, and case matters.
    assert_err("set num 7", 1, 5, "did you mean 'number'");
    assert_err("sh", 1, 1, "unknown command 'sh'");
    assert_err("SHOW", 1, 1, "unknown command 'SHOW'");
    assert_err("set bias cr 2", 1, 10, "read or create");
    // Blanks and tabs of any length separate words.
    let p = plan_of("  set \t number   11  ");
    assert_eq!(p.number, 11);
}

#[test]
fn comments_and_blank_lines_are_skipped() {
    let s = steps("t", "# a comment\n\n   \n\t# indented comment\nset number 3\n\nrun\n").unwrap();
    assert_eq!(s.len(), 1);
    // Errors after comments still count lines from the top.
    assert_err("# c\n\nbogus", 3, 1, "unknown command");
}

#[test]
fn run_snapshots_the_plan_and_names_the_report_file() {
    let s = steps("t", "set number 1\nrun\nset number 2\nrun out.txt\nquit\nrun\n").unwrap();
    assert_eq!(s.len(), 3);
    match (&s[0], &s[1]) {
        (Step::Run { plan: a, append_report_to: None }, Step::Run { plan: b, append_report_to: Some(f) }) => {
            assert_eq!((a.number, b.number), (1, 2));
            assert_eq!(f, &PathBuf::from("out.txt"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(s[2], Step::Quit);
    assert_err("run a b", 1, 7, "run [FILE]");
}

#[test]
fn show_and_help_print() {
    let s = steps("t", "set number 77\nshow\nshow cfg.txt\nhelp\nhelp set bias\n?\nhelp quit").unwrap();
    let texts: Vec<(&String, &Option<PathBuf>)> = s
        .iter()
        .map(|st| match st {
            Step::Print { text, append_to } => (text, append_to),
            o => panic!("{o:?}"),
        })
        .collect();
    assert!(texts[0].0.starts_with("Current configuration is:\nThe base number of files is 77\n"));
    assert!(texts[0].0.contains("Working directory: /"), "{}", texts[0].0);
    assert_eq!(texts[1].1, &Some(PathBuf::from("cfg.txt")));
    assert_eq!(texts[2].0.lines().count(), HELP.len());
    assert_eq!(texts[3].0.lines().count(), 2);
    assert!(texts[3].0.lines().all(|l| l.starts_with("set bias ")));
    assert_eq!(texts[4].0, texts[2].0);
    assert!(texts[5].0.starts_with("quit"));
    assert_err("help shw", 1, 6, "did you mean 'show'");
    assert_err("show a b", 1, 8, "show [FILE]");
}

#[test]
fn location_replace_add_remove_and_weights() {
    let (a, b, c) = (tmp(), tmp(), tmp());
    let (a, b, c) = (a.path().display().to_string(), b.path().display().to_string(), c.path().display().to_string());
    let locs =
        |text: &str| -> Vec<(String, u32)> { plan_of(text).locations.iter().map(|l| (l.path.display().to_string(), l.weight)).collect() };
    assert_eq!(locs(&format!("set location {a}")), vec![(a.clone(), 1)]);
    assert_eq!(locs(&format!("set location {a} 4")), vec![(a.clone(), 4)]);
    // +DIR adds; a plain DIR replaces the whole list.
    assert_eq!(locs(&format!("set location {a}\nset location +{b} 3")), vec![(a.clone(), 1), (b.clone(), 3)]);
    assert_eq!(locs(&format!("set location {a}\nset location +{b} 3\nset location {c} 2")), vec![(c.clone(), 2)]);
    // The implicit current directory is replaced by the first +DIR.
    assert_eq!(locs(&format!("set location +{b} 3")), vec![(b.clone(), 3)]);
    // -DIR removes; removing the last one restores the current directory.
    assert_eq!(locs(&format!("set location {a}\nset location +{b}\nset location -{a}")), vec![(b.clone(), 1)]);
    assert_eq!(locs(&format!("set location {a}\nset location -{a}")), vec![(".".to_string(), 1)]);
    // Show: listed with weights, "directories" for more than one.
    let s = steps("t", &format!("set location {a} 2\nset location +{b}\nshow")).unwrap();
    let Step::Print { text, .. } = &s[0] else { panic!() };
    assert!(text.contains(&format!("Working directories: \n\t{a} (weight=2)\n\t{b} (weight=1)\n")), "{text}");
    let s = steps("t", "set location .\nshow").unwrap();
    let Step::Print { text, .. } = &s[0] else { panic!() };
    assert!(text.contains("Working directory: \n\t. (weight=1)\n"), "{text}");
}

#[test]
fn location_errors() {
    let d = tmp();
    let file = d.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let a = d.path().display().to_string();
    assert_err("set location /no/such/dir", 1, 14, "does not exist");
    assert_err(&format!("set location +{}", file.display()), 1, 14, "is not a directory");
    assert_err("set location", 1, 14, "needs a directory");
    assert_err("set location +", 1, 15, "directory name");
    assert_err(&format!("set location {a} 0"), 1, 15 + a.len() as u32, "at least 1");
    assert_err(&format!("set location {a} x"), 1, 15 + a.len() as u32, "whole number");
    assert_err(&format!("set location {a} 2 3"), 1, 17 + a.len() as u32, "unexpected '3'");
    assert_err(&format!("set location {a}\nset location -/elsewhere"), 2, 14, "not in the list");
    assert_err("set location -.", 1, 14, "none set");
    assert_err(&format!("set location {a}\nset location -{a} 2"), 2, 16 + a.len() as u32, "unexpected '2'");
}

#[test]
fn number_errors_name_position_and_expectation() {
    assert_err("set number", 1, 12, "needs the number of files");
    assert_err("set number x", 1, 12, "whole number, found 'x'");
    assert_err("set number 0", 1, 12, "at least 1");
    assert_err("set number -3", 1, 12, "whole number");
    assert_err("set number 5 6", 1, 14, "unexpected '6'");
    assert_err("set number 99999999999999999999999", 1, 12, "too large");
    assert_err("set seed 0", 1, 10, "at least 1");
    assert_err("set transactions 0", 1, 18, "at least 1");
    assert_err("set read 0", 1, 10, "at least 1");
    assert_err("set write", 1, 11, "write block size");
    assert_err("set read 2000000000", 1, 10, "more than fsbench allows");
    assert_err("set subdirectories many", 1, 20, "whole number");
    assert_err("set size", 1, 10, "smallest file size");
    assert_err("set size 0 10", 1, 10, "at least 1");
    assert_err("set size 10 x", 1, 13, "largest file size");
    assert_err("set size 1 2 3", 1, 14, "unexpected '3'");
    assert_err("set buffering", 1, 15, "true or false");
    assert_err("set buffering yes", 1, 15, "not 'yes'");
    assert_err("set report loud", 1, 12, "verbose or terse");
    assert_err("set report terse x", 1, 18, "unexpected 'x'");
    assert_err("set", 1, 5, "needs a setting");
    assert_err("set colour 3", 1, 5, "unknown setting 'colour'");
    assert_err("set sise 3", 1, 5, "did you mean 'size'");
    assert_err("quit now", 1, 6, "unexpected 'now'");
    assert_err("!ls", 1, 1, "shell escapes");
    assert_err("shw", 1, 1, "did you mean 'show'");
}

#[test]
fn size_range_high_below_low_is_an_error() {
    let e = err_of("set number 3\nset size 300 200");
    assert_eq!((e.line, e.col), (2, 14));
    assert!(e.message.contains("below the low one") && e.message.contains("silently"), "{e}");
}

#[test]
fn bias_range_and_off() {
    assert_eq!(plan_of("set bias read -1").bias_read, -1);
    assert_eq!(plan_of("set bias create -1").bias_create, -1);
    for bad in ["11", "-2", "x", "5.5"] {
        let e = err_of(&format!("set bias create {bad}"));
        assert_eq!((e.line, e.col), (1, 17), "{e}");
        assert!(e.message.contains("0 to 10") && e.message.contains("-1 to turn that choice off"), "{e}");
    }
    assert_err("set bias read", 1, 15, "bias from 0 to 10");
    assert_err("set bias", 1, 10, "read or create");
    assert_err("set bias read 3 4", 1, 17, "unexpected '4'");
}

#[test]
fn load_reads_files_relative_to_nothing_but_their_path() {
    let d = tmp();
    let inner = d.path().join("inner.pm");
    std::fs::write(&inner, "set number 12\n# c\nset seed 5\n").unwrap();
    let outer = d.path().join("outer.pm");
    std::fs::write(&outer, format!("set number 1\nload {}\nrun\n", inner.display())).unwrap();
    let mut s = Session::new();
    s.push_file(&outer).unwrap();
    let Some(Ok(Step::Run { plan, .. })) = s.next_step() else { panic!() };
    assert_eq!((plan.number, plan.seed), (12, 5));
    assert!(s.next_step().is_none());
    // An error inside a loaded file names that file and its line.
    std::fs::write(&inner, "set number 2\n\nset numbr 4\n").unwrap();
    let mut s = Session::new();
    s.push_file(&outer).unwrap();
    let e = s.next_step().unwrap().unwrap_err();
    assert_eq!((e.source.as_str(), e.line, e.col), (inner.to_str().unwrap(), 3, 5), "{e}");
    assert!(s.next_step().is_none(), "input after an error is dropped");
}

#[test]
fn load_errors() {
    assert_err("load", 1, 6, "needs the name of a command file");
    assert_err("load /no/such/file.pm", 1, 6, "cannot read command file '/no/such/file.pm'");
    assert_err("load a b", 1, 8, "unexpected 'b'");
    let d = tmp();
    let a = d.path().join("a.pm");
    let b = d.path().join("b.pm");
    std::fs::write(&a, format!("set number 2\nload {}\n", b.display())).unwrap();
    std::fs::write(&b, format!("# b\nload {}\n", a.display())).unwrap();
    let mut s = Session::new();
    s.push_file(&a).unwrap();
    let e = s.next_step().unwrap().unwrap_err();
    assert_eq!((e.source.as_str(), e.line, e.col), (b.to_str().unwrap(), 2, 6), "{e}");
    assert!(e.message.contains("already being read"), "{e}");
    // A file loading itself.
    std::fs::write(&a, format!("load {}\n", a.display())).unwrap();
    let mut s = Session::new();
    s.push_file(&a).unwrap();
    assert!(s.next_step().unwrap().unwrap_err().message.contains("already being read"));
    // Loading the same file twice in a row is not recursion.
    std::fs::write(&b, "set number 3\n").unwrap();
    let p = plan_of(&format!("load {}\nload {}", b.display(), b.display()));
    assert_eq!(p.number, 3);
    // Not UTF-8.
    std::fs::write(&b, b"set number 3\n\xff\n").unwrap();
    let e = err_of(&format!("load {}", b.display()));
    assert!(e.message.contains("UTF-8"), "{e}");
    // A missing top-level file has no line.
    let e = Session::new().push_file(Path::new("/no/such.pm")).unwrap_err();
    assert_eq!(e.line, 0);
    assert!(e.to_string().starts_with("/no/such.pm: cannot read command file"), "{e}");
}

#[test]
fn command_line_strings_and_stdin_name_their_source() {
    let mut s = Session::new();
    s.push_text(COMMAND_LINE, 1, "set number 4\nset seed x");
    let e = s.next_step().unwrap().unwrap_err();
    assert_eq!(e.to_string(), "command line:2:10: 'set seed' needs the seed as a whole number, found 'x'");
}

#[test]
fn interactive_prompt_continues_after_errors() {
    let mut s = Session::new();
    let mut input = Cursor::new("set number 5\nbogus\nrun\nshow\nquit\nrun\n");
    let mut prompt: Vec<u8> = Vec::new();
    let mut got = Vec::new();
    let mut errors = Vec::new();
    interact(
        &mut s,
        &mut input,
        Some(&mut prompt),
        &mut |st| {
            got.push(st);
            true
        },
        &mut |e| {
            errors.push(e);
            true
        },
    )
    .unwrap();
    assert_eq!(String::from_utf8(prompt).unwrap(), "pm>".repeat(5));
    assert_eq!(errors.len(), 1);
    assert_eq!((errors[0].source.as_str(), errors[0].line, errors[0].col), (STDIN, 2, 1));
    assert_eq!(got.len(), 2);
    assert!(matches!(&got[0], Step::Run { plan, .. } if plan.number == 5));
    // A queued command file runs before the prompt; no prompt without a writer.
    let d = tmp();
    let f = d.path().join("c.pm");
    std::fs::write(&f, "set number 8\nrun\n").unwrap();
    let mut s = Session::new();
    s.push_file(&f).unwrap();
    let mut n = Vec::new();
    interact(
        &mut s,
        &mut Cursor::new("run\n"),
        None,
        &mut |st| {
            if let Step::Run { plan, .. } = st {
                n.push(plan.number);
            }
            true
        },
        &mut |e| panic!("{e}"),
    )
    .unwrap();
    assert_eq!(n, vec![8, 8]);
    // An error handler that says stop ends reading.
    let mut s = Session::new();
    let mut runs = 0;
    interact(
        &mut s,
        &mut Cursor::new("bogus\nrun\n"),
        None,
        &mut |_| {
            runs += 1;
            true
        },
        &mut |_| false,
    )
    .unwrap();
    assert_eq!(runs, 0);
}

#[test]
fn hostile_input_never_panics() {
    // A small xorshift of the test's own: frontends do not use the runner.
    struct Xs(u64);
    impl Xs {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }
    let mut rng = Xs(0x9E37_79B9_7F4A_7C15);
    let words = [
        "set",
        "size",
        "number",
        "seed",
        "transactions",
        "location",
        "subdirectories",
        "read",
        "write",
        "buffering",
        "bias",
        "create",
        "report",
        "run",
        "show",
        "load",
        "help",
        "quit",
        "?",
        "-1",
        "0",
        "1",
        "99999999999999999999",
        "+",
        "-",
        "+/",
        "-/",
        "/",
        "é",
        "\u{0}",
        "#",
        "!",
        "true",
        "terse",
        "\t",
        "  ",
        "x",
    ];
    for _ in 0..3000 {
        let n = rng.below(6) as usize;
        let line: Vec<&str> = (0..n).map(|_| words[rng.below(words.len() as u64) as usize]).collect();
        let line = line.join(" ");
        if line.contains("load") || line.contains("quit") {
            continue;
        }
        let _ = steps("fuzz", &line);
    }
}
