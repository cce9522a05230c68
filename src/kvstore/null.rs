//! The null store: every operation answers OK at once and stores nothing,
//! so a run against it measures the client alone (key choice, value
//! generation, throttling and measurement), as YCSB's BasicDB without
//! verbose output does.

use super::{Fields, Record, Rows, Session, Status, Store, StoreConfig};

pub struct Null;

pub fn open(_cfg: &StoreConfig) -> Result<Box<dyn Store>, String> {
    Ok(Box::new(Null))
}

impl Store for Null {
    fn session(&self) -> Result<Box<dyn Session + '_>, String> {
        Ok(Box::new(NullSession))
    }
    /// Never empty: `run` works without a load, as against BasicDB.
    fn is_empty(&self) -> Result<bool, String> {
        Ok(false)
    }
    fn close(self: Box<Self>) -> Result<(), String> {
        Ok(())
    }
}

struct NullSession;

impl Session for NullSession {
    #[inline]
    fn read(&mut self, _key: &[u8], _fields: Fields, out: &mut Record) -> Status {
        out.clear();
        Status::Ok
    }
    #[inline]
    fn scan(&mut self, _start: &[u8], _count: usize, _fields: Fields, out: &mut Rows) -> Status {
        out.clear();
        Status::Ok
    }
    #[inline]
    fn update(&mut self, _key: &[u8], _values: &Record) -> Status {
        Status::Ok
    }
    #[inline]
    fn insert(&mut self, _key: &[u8], _values: &Record) -> Status {
        Status::Ok
    }
    #[inline]
    fn delete(&mut self, _key: &[u8]) -> Status {
        Status::Ok
    }
    fn last_error(&self) -> Option<String> {
        None
    }
}
