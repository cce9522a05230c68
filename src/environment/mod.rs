//! The system around a run: what it is (snapshot), what may be touched
//! (safety), the targets fsbench builds and tears down, the page-cache state
//! before a run, and the background load during it; the locks on what a
//! run owns, and the on-disk record of what it created (`state`) for
//! `fsbench cleanup`.

pub mod background;
pub mod cache;
pub mod cleanup;
pub mod identity;
pub mod lock;
pub mod mkfs;
pub mod safety;
pub mod space;
pub mod state;
pub mod system;
pub mod target;
pub mod trace;
