//! `fsbench quick [DIR]`: the one-minute disk check (what CrystalDiskMark and
//! KDiskMark show), honest about caching: O_DIRECT when the file system
//! supports it, and a plain statement when it had to fall back. The tests
//! and their checks are the `quick` family's (`frontend::quick`), which
//! experiments run too; here is what a run in DIR adds: the scratch
//! directory, the O_DIRECT probe, and quick's own report.

use super::exit_code;
use super::CommonArgs;
use crate::frontend::quick::{QuickFlags, PREFIX};
use crate::report::export::{DocKind, Document};
use crate::runner::{self, RunOptions};
use clap::Args;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::Ordering;

#[derive(Args, Debug)]
pub struct QuickArgs {
    #[command(flatten)]
    flags: QuickFlags,
    #[command(flatten)]
    common: CommonArgs,
}

pub fn run(a: QuickArgs) -> i32 {
    let exporter = match super::exporter_for("quick", &a.common.output_format, DocKind::Run) {
        Ok(e) => e,
        Err(code) => return code,
    };
    if let Err(code) = super::check_output("quick", &a.common.output) {
        return code;
    }
    let recipe = match crate::frontend::quick::lower(&a.flags) {
        Ok(r) => r,
        Err(e) => {
            super::fail(format!("fsbench quick: {e}"));
            return 2;
        }
    };
    let dir = &a.flags.dir;
    let tmp = match tempfile::Builder::new().prefix(PREFIX).tempdir_in(dir) {
        Ok(t) => t,
        Err(e) => {
            super::fail(format!("fsbench quick: cannot create a directory in {}: {e}", dir.display()));
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
            dir.display()
        );
    }
    let plan = recipe.plan_in(tmp.path(), direct);
    eprintln!(
        "fsbench quick: {} tests x {} s on a {} file in {} ({}, QD>1 via {})",
        recipe.tests(),
        recipe.runtime,
        crate::report::format::bytes(recipe.size),
        dir.display(),
        if direct { "O_DIRECT" } else { "buffered" },
        recipe.qd32_engine
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
    let result = match runner::execute(&plan, &opts, &mut |_| {}) {
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
