//! mmap engine: to be written.
use super::*;
pub const INFO: EngineInfo = EngineInfo {
    name: "mmap",
    help: "not yet implemented",
    caps: Caps { is_async: false, diskless: false, inline_when_buffered: true, mapped: false },
    make: |_| Err(io::Error::new(io::ErrorKind::Unsupported, "mmap: not implemented yet")),
};
