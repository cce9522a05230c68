//! Repetition statistics and comparisons. (stub, being written)
