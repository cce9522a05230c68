//! Renders results.
