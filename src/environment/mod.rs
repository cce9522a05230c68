//! The system around a run: what it is (snapshot) and what may be touched (safety).

pub mod safety;
pub mod system;
