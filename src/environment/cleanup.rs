//! Undo actions (unmount, detach loop, reset zram, remove files) registered
//! while a target is built, run on success, error, panic and Ctrl-C. (stub)

/// Run every registered undo action, newest first. Safe to call twice.
pub fn run_all() {}

/// Run the undo actions after a panic too.
pub fn install_panic_hook() {}
