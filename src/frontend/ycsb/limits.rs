//! The bounds of YCSB's numeric properties beyond each one's own range: what
//! the keys' arithmetic, a stored record's lengths, the generators' set-up
//! and this machine's memory can hold. YCSB itself reads most of these as
//! Java ints and longs and fails late (an exception, an OutOfMemoryError);
//! fsbench refuses before anything runs, naming the properties, their
//! values and what was expected.

use super::{err, YcsbError};
use crate::model::ycsb::{FieldLength, Phase, YcsbPlan};
use crate::units::bytes as format_bytes;

/// Records and operations stay below 2^62, so that key numbers, and the
/// insert keys a run adds past `recordcount`, never wrap YCSB's signed
/// 64-bit long.
pub const MAX_KEYS: u64 = 1 << 62;
pub const KEYS: &str = "a positive number of records, at most 2^62 (4611686018427387904)";
pub const OPERATIONS: &str = "a number of operations, at most 2^62 (4611686018427387904)";
/// YCSB's int, which it reads lengths, counts of buckets and retries as.
pub const MAX_INT: u64 = i32::MAX as u64;
pub const INT: &str = "a whole number up to 2147483647 (YCSB's int)";
pub const FIELD: &str = "a length in bytes up to 2147483647 (YCSB's int)";
/// Times in seconds: a year.
pub const MAX_SECONDS: u64 = 365 * 86_400;
pub const SECONDS: &str = "seconds, at most a year (31536000); 0 for no limit";
pub const MAX_RETRY_INTERVAL_S: u64 = 86_400;
/// `-target` below this is a thread waiting for days for its next operation.
pub const MIN_TARGET: f64 = 0.001;
/// A `fieldlengthhistogram` file's buckets (each is a count in memory).
pub const MAX_HISTOGRAM_BUCKETS: usize = 1 << 20;
/// A record's fields together: a stored value's lengths are 32-bit (the
/// RocksDB binding's layout) and so are the offsets of fsbench's record
/// buffer.
const MAX_RECORD: u64 = u32::MAX as u64;
/// A zipfian sums ζ over every item before the first operation (tens of
/// nanoseconds each, with Ctrl-C not yet watched): a billion is most of a
/// minute.
const MAX_ZIPFIAN_ITEMS: u64 = 1_000_000_000;
/// What a client thread holds besides its record buffers: its stack, its
/// latency histograms.
const THREAD_BYTES: u64 = 1 << 20;
/// A thread's live bucket counts for the status lines (`-s`).
const STATUS_BYTES: u64 = 512 << 10;

/// `fieldcount` fields of up to the longest length must fit one record.
pub fn record(fieldcount: u64, len: &FieldLength) -> Result<(), YcsbError> {
    let bytes = fieldcount.saturating_mul(len.max());
    if bytes > MAX_RECORD {
        return err(format!(
            "fieldcount={fieldcount} × fieldlength={} = {bytes} bytes per record: expected a record of at most {MAX_RECORD} bytes \
             (4 GiB: the 32-bit lengths a stored value and the client's record buffer hold)",
            len.max()
        ));
    }
    Ok(())
}

/// A zipfian over `items` items is set up in time linear in them.
pub fn zipfian_items(what: &str, items: u64) -> Result<(), YcsbError> {
    if items > MAX_ZIPFIAN_ITEMS {
        return err(format!(
            "{what}: {items} items; expected at most {MAX_ZIPFIAN_ITEMS}: YCSB's zipfian sums ζ over every item before the first operation"
        ));
    }
    Ok(())
}

/// The exponential chooser counts back from the newest key and draws again
/// while it lands before the first: the share of draws that land on a key
/// must not be vanishing, or the client draws for ever.
pub fn exponential(percentile: f64, frac: f64) -> Result<(), YcsbError> {
    // P(draw < keys) with γ = -ln(1 - p)/(keys × frac).
    let hit = 1.0 - (1.0 - percentile / 100.0).powf(1.0 / frac);
    if hit.is_nan() || hit < 0.01 {
        return err(format!(
            "exponential.percentile={}, exponential.frac={}: only {hit:.1e} of the draws would land on a loaded key \
             (the client draws again until one does); expected values that put at least 1% of them there",
            short(percentile),
            short(frac)
        ));
    }
    Ok(())
}

/// A number as a person reads it: huge and tiny ones in exponent form.
fn short(x: f64) -> String {
    if x != 0.0 && !(1e-4..1e15).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// What the client's buffers take against `available` bytes (MemAvailable;
/// 0 when unknown, which checks nothing): per thread, the record buffers
/// (values written, fields read, the store's encoding and the record it
/// merges into) and, with scans, a row per record of the longest scan; the
/// field names, which the plan, the store and its sessions each hold.
pub fn memory(plan: &YcsbPlan, available: u64) -> Result<(), YcsbError> {
    if available == 0 {
        return Ok(());
    }
    let fields = u64::from(plan.fieldcount);
    let name = plan.fieldnameprefix.len() as u64 + 10;
    // Values, then per field its (index, offset, length) and its encoded name.
    let record = fields.saturating_mul(plan.fieldlength.max()).saturating_add(fields.saturating_mul(12 + 8 + name));
    let scans = if plan.phase == Phase::Run && plan.proportions.scan > 0.0 { plan.maxscanlength } else { 0 };
    let status = if plan.status_interval_s.is_some() { STATUS_BYTES } else { 0 };
    let per_thread = record.saturating_mul(scans.saturating_add(4)).saturating_add(THREAD_BYTES + status);
    let names = fields.saturating_mul(40 + name).saturating_mul(3);
    let need = per_thread.saturating_mul(u64::from(plan.threads)).saturating_add(names);
    if need <= available {
        return Ok(());
    }
    let scan = if scans > 0 { format!(", maxscanlength={scans}") } else { String::new() };
    let rows = if scans > 0 { " and a row per record of the longest scan" } else { "" };
    err(format!(
        "fieldcount={fields}, fieldlength={}, threadcount={}{scan}: the client would need about {} of memory (records of {} in four buffers per thread{rows}, \
         and the field names), but this machine has {} available; expected fewer or shorter fields, fewer threads or shorter scans",
        plan.fieldlength.max(),
        plan.threads,
        format_bytes(need),
        format_bytes(record),
        format_bytes(available)
    ))
}
