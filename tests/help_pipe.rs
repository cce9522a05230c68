//! `fsbench FAMILY --help | head` ends quietly: a reader that closes the pipe
//! early is no error, and never a panic.

use std::process::{Command, Stdio};

#[test]
fn help_into_a_closed_pipe_is_no_panic() {
    for family in ["fio", "filebench", "postmark", "iozone", "bonnie", "ycsb", "experiment", "compare", "cleanup", "quick"] {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("fsbench"))
            .args([family, "--help"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Close the read end before the child has started: its help meets a broken pipe.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "fsbench {family} --help: {stderr}");
        assert_eq!(out.status.code(), Some(0), "fsbench {family} --help: {stderr}");
    }
}
