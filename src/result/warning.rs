//! The result's warnings: each a stable code and a short message, saved as
//! `{"code": "...", "message": "..."}` (plain strings from older results
//! load as `unclassified`). The type is defined in `model::warning`, the
//! lowest layer that makes warnings (a frontend's `Lowered`), so that every
//! layer above carries the same one; this is its name where results are read.

pub use crate::model::warning::{few, few_of, Code, Warning, FEW, MAX_CHARS};
