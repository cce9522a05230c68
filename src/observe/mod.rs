//! Watching what reaches the devices (the devices themselves are read
//! through `crate::host`).

pub mod blockdev;
pub mod trace;
