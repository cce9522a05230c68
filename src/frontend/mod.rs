//! Frontends translate a peer tool's input into the model. They never run I/O.

pub mod environment;
pub mod experiment;
pub mod fio;
pub mod personalities;
pub mod suggest;
pub mod wml;
