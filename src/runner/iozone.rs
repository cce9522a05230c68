//! IOzone's tests over its matrix of file sizes and record sizes.
//! (Being written: see the iozone branch's helpers.)

use super::{RunError, RunOptions};
use crate::model::iozone::IozonePlan;
use crate::result::RunResult;
use std::path::PathBuf;

pub(crate) fn run_plan(
    _plan: &IozonePlan,
    _opts: &RunOptions,
    _layout: &str,
    _before_measure: &mut dyn FnMut(&[PathBuf]),
) -> Result<RunResult, RunError> {
    Err(RunError::Workload("the IOzone runner is not written yet".into()))
}
