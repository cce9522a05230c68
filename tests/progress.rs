//! The progress line, drawn by the CLI from the events every runner
//! reports, for every workload family: run under a pseudo-terminal
//! (`script`), the terminal sees the bar with the family's label; without a
//! terminal (every other test) nothing is drawn.

mod common;

use common::{have, skip};

fn under_a_terminal(dir: &std::path::Path, cmd: &str) -> String {
    let log = dir.join("typescript");
    let st = std::process::Command::new("script").arg("-qec").arg(cmd).arg(&log).output().expect("script runs");
    assert!(st.status.success(), "{cmd}: {}", String::from_utf8_lossy(&st.stderr));
    String::from_utf8_lossy(&std::fs::read(&log).unwrap()).replace('\r', "\n")
}

#[test]
fn every_family_draws_a_progress_line_on_a_terminal() {
    if !have("script") && skip("no `script` (util-linux) to give fsbench a terminal") {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let bin = assert_cmd::cargo::cargo_bin("fsbench");
    let fb = d.path().join("fb");
    let pm = d.path().join("pm");
    std::fs::create_dir_all(&pm).unwrap();
    std::fs::create_dir_all(&fb).unwrap();
    let cases = [
        (
            format!(
                "{} fio --name=seqjob --rw=read --bs=4k --size=8m --time_based --runtime=2 --directory={}",
                bin.display(),
                d.path().display()
            ),
            "group 0 [",
        ),
        (
            format!("{} filebench fileserver --set nfiles=100 --set nthreads=2 --set dir={} --runtime 2", bin.display(), fb.display()),
            "fileserver [",
        ),
        (
            format!(
                "{} postmark -c 'set location {}' -c 'set number 2000' -c 'set transactions 60000' -c run -c quit",
                bin.display(),
                pm.display()
            ),
            "postmark [",
        ),
    ];
    for (cmd, label) in &cases {
        let screen = under_a_terminal(d.path(), cmd);
        let bars: Vec<&str> = screen.lines().filter(|l| l.contains(label) && l.contains('%')).collect();
        assert!(!bars.is_empty(), "{cmd}: no progress line with '{label}' on the terminal:\n{screen}");
    }
    // Without a terminal, stderr stays free of it.
    let out = std::process::Command::new(&bin)
        .args(["fio", "--name=seqjob", "--rw=read", "--bs=4k", "--size=1m"])
        .arg(format!("--directory={}", d.path().display()))
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("group 0 ["));
}
