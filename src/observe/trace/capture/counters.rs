//! Method (d): no records at all, only what the device's I/O counters
//! (`/sys/block/DEV/stat`) moved by during the capture.

use super::{Running, Started, Stopped, Target};
use crate::host::blockdev::read_stat;
use crate::observe::trace::record::RecordSink;
use crate::result::device::DiskStat;
use std::collections::BTreeMap;

pub(crate) fn start(t: &Target, sink: Box<dyn RecordSink>) -> Started {
    match read_stat(&t.dev.name) {
        Ok(before) => {
            let note = format!("counters only: no records; what {}'s I/O counters moved by is in `counters`", t.dev.name);
            Ok((Box::new(CountersRunning { name: t.dev.name.clone(), before, sink }), vec![note]))
        }
        Err(e) => Err((format!("cannot read the counters of {}: {e}", t.dev.name), sink)),
    }
}

struct CountersRunning {
    name: String,
    before: DiskStat,
    sink: Box<dyn RecordSink>,
}

impl Running for CountersRunning {
    fn stop(self: Box<Self>) -> Result<Stopped, (String, Option<Box<dyn RecordSink>>)> {
        match read_stat(&self.name) {
            Ok(after) => Ok(Stopped {
                sink: self.sink,
                records: 0,
                lost_per_cpu: Vec::new(),
                pids: BTreeMap::new(),
                counters: Some(after.delta(&self.before)),
                notes: Vec::new(),
                ring_events: 0,
                undo_failed: Vec::new(),
            }),
            Err(e) => Err((format!("cannot read the counters of {}: {e}", self.name), Some(self.sink))),
        }
    }
}
