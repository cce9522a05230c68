//! The documentation is part of the product: the README stays a front door
//! that links a guide for every command, every link in the docs resolves,
//! the benchmarks page is what `bench/report` generates, and the man page
//! and completion scripts come from the binary and cover every command.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fsbench(args: &[&str]) -> std::process::Output {
    Command::new(assert_cmd::cargo::cargo_bin("fsbench")).args(args).output().unwrap()
}

/// The commands `fsbench --help` lists (hidden ones are not listed), `help` aside.
fn commands() -> Vec<String> {
    let out = fsbench(&["--help"]);
    let text = String::from_utf8(out.stdout).unwrap();
    let list: Vec<String> = text
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|c| c != "help")
        .collect();
    assert!(list.len() >= 15, "fsbench --help lists {} commands: {text}", list.len());
    list
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn readme_is_a_short_front_door_with_both_commands() {
    let readme = read(&root().join("README.md"));
    assert!(readme.len() <= 25_000, "README.md is {} bytes; the front door stays within 25,000", readme.len());
    for cmd in ["scripts/setup.sh", "scripts/test.sh"] {
        assert!(readme.contains(cmd), "README.md does not give the set-up command {cmd}");
    }
    let ci = read(&root().join(".ci/run"));
    assert!(ci.contains("scripts/test.sh"), ".ci/run does not run the test command the README names");
}

#[test]
fn every_command_has_a_guide_linked_from_the_readme() {
    let readme = read(&root().join("README.md"));
    let mut missing = Vec::new();
    for c in commands() {
        // The man page and the completions share one guide.
        let g = if c == "completions" { "man" } else { c.as_str() };
        let guide = root().join("docs").join(format!("{g}.md"));
        if !guide.exists() {
            missing.push(format!("docs/{g}.md does not exist"));
            continue;
        }
        if !read(&guide).contains(&format!("fsbench {c}")) {
            missing.push(format!("docs/{g}.md never shows `fsbench {c}`"));
        }
        if !readme.contains(&format!("](docs/{g}.md")) {
            missing.push(format!("README.md does not link docs/{g}.md"));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces
/// as hyphens; a repeated heading gets -1, -2, ...
fn anchors(markdown: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#').trim();
        let slug: String = title
            .to_lowercase()
            .chars()
            .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
            .map(|c| if c == ' ' { '-' } else { c })
            .collect();
        let mut s = slug.clone();
        let mut n = 0;
        while seen.contains(&s) {
            n += 1;
            s = format!("{slug}-{n}");
        }
        seen.insert(s);
    }
    seen
}

/// The targets of inline links `[text](target)` outside code.
fn links(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced || line.starts_with("    ") {
            continue;
        }
        // Inline code spans can hold `](`; drop them first.
        let plain: String = line.split('`').step_by(2).collect::<Vec<_>>().join("");
        let mut rest = plain.as_str();
        while let Some(i) = rest.find("](") {
            rest = &rest[i + 2..];
            if let Some(end) = rest.find(')') {
                out.push(rest[..end].to_string());
                rest = &rest[end..];
            }
        }
    }
    out
}

#[test]
fn every_link_in_the_docs_resolves() {
    let mut files = vec![root().join("README.md"), root().join("ARCHITECTURE.md"), root().join("bench/README.md")];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(p);
        }
    }
    let mut broken = Vec::new();
    let mut checked = 0;
    for f in &files {
        let text = read(f);
        for l in links(&text) {
            if l.starts_with("http://") || l.starts_with("https://") || l.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match l.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (l.as_str(), None),
            };
            let target = if path.is_empty() { f.clone() } else { f.parent().unwrap().join(path) };
            if !target.exists() {
                broken.push(format!("{}: link to {l}: no {}", f.display(), target.display()));
                continue;
            }
            if let Some(a) = anchor {
                if target.is_file() && !anchors(&read(&target)).contains(a) {
                    broken.push(format!("{}: link to {l}: no heading with anchor #{a}", f.display()));
                }
            }
        }
    }
    assert!(checked > 20, "only {checked} links found in {} files: the link parser is broken", files.len());
    assert!(broken.is_empty(), "{} broken links:\n{}", broken.len(), broken.join("\n"));
}

#[test]
fn the_benchmarks_page_is_generated_not_typed() {
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("SKIPPED: no python3 to run bench/report --check");
        return;
    }
    let out = Command::new("python3").arg(root().join("bench/report")).arg("--check").output().unwrap();
    assert!(out.status.success(), "bench/report --check: {}", String::from_utf8_lossy(&out.stderr));
    // And the check can fail: a page edited by hand is caught.
    let tmp = tempfile::tempdir().unwrap();
    let edited = tmp.path().join("benchmarks.md");
    std::fs::write(&edited, read(&root().join("docs/benchmarks.md")) + "\n| typed | 1.00 |\n").unwrap();
    let out = Command::new("python3").arg(root().join("bench/report")).arg("--check").arg("--out").arg(&edited).output().unwrap();
    assert!(!out.status.success(), "bench/report --check accepted a hand-edited page");
}

#[test]
fn man_page_names_every_command_and_renders() {
    let out = fsbench(&["man"]);
    assert!(out.status.success(), "fsbench man: {}", String::from_utf8_lossy(&out.stderr));
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains("\n.TH fsbench 1"), "not a roff man page: {}", &page[..page.len().min(300)]);
    for c in commands() {
        assert!(page.contains(&c), "fsbench man does not name the command {c}");
    }
    let fio = String::from_utf8(fsbench(&["man", "fio"]).stdout).unwrap();
    assert!(fio.contains(".TH fsbench-fio 1"), "fsbench man fio is not fsbench-fio(1): {}", &fio[..fio.len().min(300)]);
    let bad = fsbench(&["man", "nosuch"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no command 'nosuch'"));
    // groff renders it without a warning (clap's text can break roff with a stray leading dot);
    // -P-cbou: plain text, no overstrike, so the page can be searched.
    if Command::new("groff").arg("--version").output().is_ok() {
        let tmp = tempfile::tempdir().unwrap();
        let src = tmp.path().join("fsbench.1");
        std::fs::write(&src, &page).unwrap();
        let r = Command::new("groff").args(["-k", "-man", "-Tutf8", "-ww", "-P-cbou"]).arg(&src).output().unwrap();
        let text = String::from_utf8_lossy(&r.stdout);
        assert!(r.status.success() && text.contains("SYNOPSIS"), "groff: {}", String::from_utf8_lossy(&r.stderr));
        assert!(r.stderr.is_empty(), "groff warns: {}", String::from_utf8_lossy(&r.stderr));
        for c in commands() {
            std::fs::write(&src, fsbench(&["man", &c]).stdout).unwrap();
            let r = Command::new("groff").args(["-k", "-man", "-Tutf8", "-ww", "-P-cbou"]).arg(&src).output().unwrap();
            assert!(r.status.success() && r.stderr.is_empty(), "fsbench man {c}: groff: {}", String::from_utf8_lossy(&r.stderr));
        }
    } else {
        eprintln!("SKIPPED (rendering only): no groff");
    }
}

#[test]
fn completions_complete_every_command() {
    let bash = fsbench(&["completions", "bash"]);
    assert!(bash.status.success());
    let tmp = tempfile::tempdir().unwrap();
    let script = tmp.path().join("fsbench.bash");
    std::fs::write(&script, &bash.stdout).unwrap();
    // Load it in a real bash and ask what `fsbench <TAB>` offers.
    let probe = format!(
        "source {}; COMP_WORDS=(fsbench ''); COMP_CWORD=1; COMP_LINE='fsbench '; COMP_POINT=8; _fsbench fsbench '' fsbench; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display()
    );
    let out = Command::new("bash").arg("-c").arg(&probe).output().unwrap();
    let offered: HashSet<String> = String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect();
    for c in commands() {
        assert!(
            offered.contains(&c),
            "bash completion of `fsbench ` does not offer {c}: {offered:?} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for (shell, mark) in [("zsh", "#compdef fsbench"), ("fish", "complete -c fsbench")] {
        let out = fsbench(&["completions", shell]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains(mark), "fsbench completions {shell}: no `{mark}`");
        assert!(text.contains("experiment"), "fsbench completions {shell} lacks the experiment command");
    }
    let bad = fsbench(&["completions", "tcsh"]);
    assert_eq!(bad.status.code(), Some(2), "an unknown shell is refused");
}
