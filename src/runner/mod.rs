//! Executes jobs.
