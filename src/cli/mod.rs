//! Command-line entry.
pub fn main() -> i32 {
    0
}
