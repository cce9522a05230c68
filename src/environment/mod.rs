//! The system around a run: what it is (snapshot), what may be touched
//! (safety), the targets fsbench builds and tears down, the page-cache state
//! before a run, and the background load during it.

pub mod background;
pub mod cache;
pub mod cleanup;
pub mod mkfs;
pub mod safety;
pub mod space;
pub mod system;
pub mod target;
