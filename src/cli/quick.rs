//! `fsbench quick [DIR]`: the one-minute disk check (what CrystalDiskMark and
//! KDiskMark show), honest about caching: O_DIRECT when the file system
//! supports it, and a plain statement when it had to fall back.

use super::exit_code;
use super::CommonArgs;
use crate::model::job::{BlockSize, JobSpec, RwKind};
use crate::model::{Plan, Workload};
use crate::report::export::{DocKind, Document};
use crate::runner::{self, RunOptions};
use clap::Args;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The layout of quick's table.
const LAYOUT: &str = "quick";

#[derive(Args, Debug)]
pub struct QuickArgs {
    /// Directory to test in; a temporary directory is made inside it and removed afterwards.
    #[arg(default_value = ".")]
    dir: PathBuf,
    /// Size of the test file (k/m/g suffixes, powers of 1024).
    #[arg(long, default_value = "1g", value_parser = parse_size_arg)]
    size: u64,
    /// Seconds per test (7 tests).
    #[arg(long, default_value_t = 8)]
    runtime: u64,
    /// Engine for the queue-depth-32 tests (default: io_uring if the kernel allows it, else libaio).
    #[arg(long)]
    qd32_engine: Option<String>,
    #[command(flatten)]
    common: CommonArgs,
}

fn parse_size_arg(s: &str) -> Result<u64, String> {
    crate::units::parse_size(s, 1024)
}

/// The seven tests, in the order they run and are shown.
struct Test {
    label: &'static str,
    rw: RwKind,
    bs: u64,
    qd: u32,
    fsync: bool,
}

const TESTS: &[Test] = &[
    Test { label: "SEQ 1MiB Q8 read", rw: RwKind::Read, bs: 1 << 20, qd: 8, fsync: false },
    Test { label: "SEQ 1MiB Q8 write", rw: RwKind::Write, bs: 1 << 20, qd: 8, fsync: false },
    Test { label: "RND 4KiB Q1 read", rw: RwKind::RandRead, bs: 4096, qd: 1, fsync: false },
    Test { label: "RND 4KiB Q1 write", rw: RwKind::RandWrite, bs: 4096, qd: 1, fsync: false },
    Test { label: "RND 4KiB Q32 read", rw: RwKind::RandRead, bs: 4096, qd: 32, fsync: false },
    Test { label: "RND 4KiB Q32 write", rw: RwKind::RandWrite, bs: 4096, qd: 32, fsync: false },
    Test { label: "4KiB write+fsync", rw: RwKind::Write, bs: 4096, qd: 1, fsync: true },
];

pub fn run(a: QuickArgs) -> i32 {
    let exporter = match super::exporter_for("quick", &a.common.output_format, DocKind::Run) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if let Err(code) = super::check_output("quick", &a.common.output) {
        return code;
    }
    if !a.dir.is_dir() {
        super::fail(format!("fsbench quick: {} is not a directory", a.dir.display()));
        return 2;
    }
    if a.size < (1 << 20) || a.runtime == 0 {
        super::fail("fsbench quick: --size must be at least 1m and --runtime at least 1".into());
        return 2;
    }
    let tmp = match tempfile::Builder::new().prefix("fsbench-quick-").tempdir_in(&a.dir) {
        Ok(t) => t,
        Err(e) => {
            super::fail(format!("fsbench quick: cannot create a directory in {}: {e}", a.dir.display()));
            return 1;
        }
    };
    // On record, so a killed run's 1 GiB file is found by `fsbench cleanup`;
    // the registry runs it (a no-op after the TempDir's own removal) at exit.
    let _on_record = crate::environment::cleanup::made_dir(tmp.path());
    super::cleanup::warn_leftovers();
    let direct = supports_direct(tmp.path());
    if !direct {
        eprintln!(
            "fsbench quick: {} does not support O_DIRECT; falling back to buffered I/O — reads may come from the page cache and writes may only reach memory",
            a.dir.display()
        );
    }
    let qd_engine = a.qd32_engine.clone().unwrap_or_else(default_async_engine);
    match crate::model::engine::find(&qd_engine) {
        None => {
            super::fail(format!("fsbench quick: unknown engine '{qd_engine}' (have: {})", crate::model::engine::names().join(", ")));
            return 2;
        }
        // A synchronous engine keeps one I/O in flight whatever the depth:
        // its "Q32" rows would be Q1 rows under a false label.
        Some(e) if !e.caps.keeps_a_queue() => {
            let good: Vec<&str> = crate::model::engine::ENGINES.iter().filter(|e| e.caps.keeps_a_queue()).map(|e| e.name).collect();
            super::fail(format!(
                "fsbench quick: --qd32-engine {qd_engine} cannot keep 32 I/Os in flight to a disk; the queue-depth tests need one of: {}",
                good.join(", ")
            ));
            return 2;
        }
        Some(_) => {}
    }
    let file = tmp.path().join("fsbench-quick.dat");
    let jobs: Vec<JobSpec> = TESTS.iter().map(|t| job(t, &file, a.size, a.runtime, direct, &qd_engine)).collect();
    eprintln!(
        "fsbench quick: {} tests x {} s on a {} file in {} ({}, QD>1 via {qd_engine})",
        TESTS.len(),
        a.runtime,
        crate::report::format::bytes(a.size),
        a.dir.display(),
        if direct { "O_DIRECT" } else { "buffered" }
    );
    let opts = RunOptions {
        cache_controlled: false,
        allow_device: false,
        allow_fill: a.common.allow_fill,
        keep_files: false,
        stop: super::install_stop_handler(),
        events: std::sync::Arc::new(super::events::Terminal::new(super::want_progress(&a.common))),
        command: std::env::args().collect(),
    };
    let result = match runner::execute(&Plan::new(Workload::Jobs(jobs), LAYOUT), &opts, &mut |_| {}) {
        Ok(r) => r,
        Err(e) => {
            super::fail(format!("fsbench quick: error: {e}"));
            return 1;
        }
    };
    drop(tmp);
    if let Err(code) = super::emit_doc(&exporter, &Document::Run(&result), &a.common.output) {
        return code;
    }
    exit_code(&result, opts.stop.load(Ordering::Relaxed))
}

fn job(t: &Test, file: &Path, size: u64, runtime: u64, direct: bool, qd_engine: &str) -> JobSpec {
    let mut j = JobSpec::new(t.label);
    j.filenames = vec![file.to_path_buf()];
    j.size = Some(size);
    j.rw = t.rw;
    j.bs = [BlockSize::Fixed(t.bs), BlockSize::Fixed(t.bs)];
    j.iodepth = t.qd;
    j.ioengine = if t.qd > 1 { qd_engine.to_string() } else { "psync".to_string() };
    j.direct = direct;
    j.runtime = Some(Duration::from_secs(runtime));
    j.time_based = true;
    j.stonewall = true;
    j.fsync = t.fsync as u32;
    // Random writes wander over the whole file; a fresh permutation per pass
    // costs nothing and avoids rewriting hot blocks.
    j.norandommap = false;
    j
}

pub(super) fn default_async_engine() -> String {
    match io_uring::IoUring::new(2) {
        Ok(_) => "io_uring".into(),
        Err(_) => "libaio".into(),
    }
}

/// Can a file in `dir` be opened with O_DIRECT and written with it?
fn supports_direct(dir: &Path) -> bool {
    let p = dir.join(".direct-probe");
    let ok = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_DIRECT)
        .open(&p)
        .and_then(|f| {
            let buf = crate::runner::buffers::Buffers::new(1, 4096);
            // SAFETY: `f` is open for the whole call, and slot 0 of `buf` (Buffers::new(1, 4096)) is 4096 initialised
            // (zeroed) bytes that live until `buf` drops after the call; pwrite only reads them.
            let r = unsafe { libc::pwrite(std::os::fd::AsRawFd::as_raw_fd(&f), buf.slot(0).cast(), 4096, 0) };
            if r == 4096 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        })
        .is_ok();
    let _ = std::fs::remove_file(&p);
    ok
}
