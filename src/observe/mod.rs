//! Watching what reaches the devices.

pub mod blockdev;
