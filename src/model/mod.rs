//! The model every frontend produces and the runner consumes.

pub mod job;
pub mod flow;
