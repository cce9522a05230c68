//! Executes one `YcsbPlan` (a YCSB load or run phase) against a store.
//! (Being written.)

pub mod gen;
