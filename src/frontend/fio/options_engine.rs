//! Options of particular engines (fio's "ioengine-specific" options). An
//! engine that does not use one ignores it, as fio does, except where the
//! runner warns.

use super::options::opt;
use super::options::Kind::*;
use super::options::OptDef;
use crate::units::clip;

fn set_donorname(j: &mut super::options::JobState, v: &str) -> Result<(), String> {
    // fio joins the name with the job's directory; a path would escape it.
    if v.is_empty() || v.contains('/') {
        return Err(format!("expected a file name without '/', got '{}'", clip(v)));
    }
    j.spec.engine.donorname = Some(v.to_string());
    Ok(())
}

pub static ENGINE: &[OptDef] = &[
    opt!(
        "hipri",
        [],
        "pvsync2: polled completion (RWF_HIPRI), for direct I/O on polled queues (0/1)",
        Bool(|j, b| j.spec.engine.hipri = b)
    ),
    opt!("nowait", [], "pvsync2: RWF_NOWAIT, an I/O that would block fails with EAGAIN (0/1)", Bool(|j, b| j.spec.engine.nowait = b)),
    opt!("donorname", [], "e4defrag: donor file, in the job's directory", Value(set_donorname)),
    opt!("inplace", [], "e4defrag: allocate and free the donor's blocks per I/O (0/1)", Bool(|j, b| j.spec.engine.inplace = b)),
];

#[cfg(test)]
mod tests {
    use super::super::options::{find, JobState};

    #[test]
    fn engine_options_set_their_fields() {
        let mut j = JobState::new("j");
        for (k, v) in [("hipri", "1"), ("nowait", "1"), ("donorname", "file.def"), ("inplace", "1")] {
            find(k).unwrap().apply(&mut j, v).unwrap();
        }
        let e = &j.spec.engine;
        assert!(e.hipri && e.nowait && e.inplace);
        assert_eq!(e.donorname.as_deref(), Some("file.def"));
        assert!(find("donorname").unwrap().apply(&mut j, "../x").unwrap_err().contains("without '/'"));
        assert!(find("hipri").unwrap().bare_ok());
    }
}
