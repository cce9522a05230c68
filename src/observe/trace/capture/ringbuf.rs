//! The ftrace ring buffer's sub-buffer ("page") format, as `trace_pipe_raw`
//! hands it out: a 16-byte header (`events/header_page`: u64 timestamp,
//! then the committed length with two flag bits), then events, each a
//! 32-bit header (`events/header_event`: 5 bits type_len, 27 bits time
//! delta) and its data, 4-byte aligned. Reading the pages ourselves avoids
//! the kernel formatting every event for `trace_pipe`.

/// The committed-length word's flags: events were lost before this page,
/// and their count is stored after the data.
const MISSED_EVENTS: u64 = 1 << 31;
const MISSED_STORED: u64 = 1 << 30;
const LEN_MASK: u64 = (1 << 30) - 1;
pub const PAGE_HEADER: usize = 16;

const TYPE_PADDING: u32 = 29;
const TYPE_TIME_EXTEND: u32 = 30;
const TYPE_TIME_STAMP: u32 = 31;
/// Time deltas are 27 bits; longer gaps use an extend event.
const TS_SHIFT: u32 = 27;
/// An absolute time stamp event holds 59 bits; the top ones carry over.
const ABS_BITS: u32 = 59;

/// A page that does not follow the format, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageError(pub String);

/// What a page held besides its events.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageInfo {
    pub events: u64,
    /// The kernel flagged lost events before this page (count if it stored one).
    pub missed: Option<Option<u64>>,
}

/// Walk the data events of one page, calling `f(timestamp, data)` for
/// each; `data` is the event's payload (a `trace_entry` and its fields),
/// 4-byte padded.
pub fn for_each_event(page: &[u8], mut f: impl FnMut(u64, &[u8])) -> Result<PageInfo, PageError> {
    if page.len() < PAGE_HEADER {
        return Err(PageError(format!("a page of at least {PAGE_HEADER} bytes, got {}", page.len())));
    }
    let mut ts = u64::from_le_bytes(page[0..8].try_into().unwrap());
    let commit = u64::from_le_bytes(page[8..16].try_into().unwrap());
    let len = (commit & LEN_MASK) as usize;
    let end = PAGE_HEADER + len;
    if end > page.len() {
        return Err(PageError(format!("committed length {len} past the end of a {}-byte page", page.len())));
    }
    let mut info = PageInfo::default();
    if commit & MISSED_EVENTS != 0 {
        let stored =
            (commit & MISSED_STORED != 0 && end + 8 <= page.len()).then(|| u64::from_le_bytes(page[end..end + 8].try_into().unwrap()));
        info.missed = Some(stored);
    }
    let u32_at = |o: usize| u32::from_le_bytes(page[o..o + 4].try_into().unwrap());
    let mut pos = PAGE_HEADER;
    while pos + 4 <= end {
        let head = u32_at(pos);
        let type_len = head & 0x1f;
        let delta = (head >> 5) as u64;
        let need = |n: usize| {
            if pos + n > end {
                Err(PageError(format!("an event of {n} bytes at page offset {pos} runs past the committed {len} bytes")))
            } else {
                Ok(())
            }
        };
        match type_len {
            TYPE_PADDING => {
                // A padding event with no delta ends the page's data.
                if delta == 0 {
                    break;
                }
                need(8)?;
                let size = u32_at(pos + 4) as usize + 4;
                need(size.max(8))?;
                pos += size.max(8);
            }
            TYPE_TIME_EXTEND => {
                need(8)?;
                ts += ((u32_at(pos + 4) as u64) << TS_SHIFT) + delta;
                pos += 8;
            }
            TYPE_TIME_STAMP => {
                need(8)?;
                let abs = ((u32_at(pos + 4) as u64) << TS_SHIFT) | delta;
                let high = ts & !((1u64 << ABS_BITS) - 1);
                let mut full = high | abs;
                if full < ts {
                    full += 1 << ABS_BITS;
                }
                ts = full;
                pos += 8;
            }
            0 => {
                need(8)?;
                let size = u32_at(pos + 4) as usize;
                if size < 4 {
                    return Err(PageError(format!("an event length of {size} at page offset {pos}")));
                }
                need(4 + size)?;
                ts += delta;
                f(ts, &page[pos + 8..pos + 4 + size]);
                info.events += 1;
                pos += 4 + size;
            }
            n => {
                let size = n as usize * 4;
                need(4 + size)?;
                ts += delta;
                f(ts, &page[pos + 4..pos + 4 + size]);
                info.events += 1;
                pos += 4 + size;
            }
        }
    }
    Ok(info)
}

/// The `trace_entry` every event starts with: its type id and the pid of
/// the task that was running.
pub fn entry_type_pid(data: &[u8]) -> Option<(u16, u32)> {
    if data.len() < 8 {
        return None;
    }
    Some((u16::from_le_bytes([data[0], data[1]]), u32::from_le_bytes(data[4..8].try_into().unwrap())))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A page with these (delta, data) events; `type_len` 0 for sizes over 112.
    pub fn page(base: u64, events: &[(u32, Vec<u8>)]) -> Vec<u8> {
        let mut body = Vec::new();
        for (delta, data) in events {
            assert_eq!(data.len() % 4, 0);
            if data.len() <= 112 {
                body.extend_from_slice(&((delta << 5) | (data.len() as u32 / 4)).to_le_bytes());
            } else {
                body.extend_from_slice(&(delta << 5).to_le_bytes());
                body.extend_from_slice(&(data.len() as u32 + 4).to_le_bytes());
            }
            body.extend_from_slice(data);
        }
        let mut p = base.to_le_bytes().to_vec();
        p.extend_from_slice(&(body.len() as u64).to_le_bytes());
        p.extend_from_slice(&body);
        p.resize(4096, 0);
        p
    }

    #[test]
    fn events_and_times() {
        let mut p = page(1000, &[(5, vec![1; 8]), (7, vec![2; 200])]);
        let mut seen = Vec::new();
        let info = for_each_event(&p, |ts, d| seen.push((ts, d[0], d.len()))).unwrap();
        assert_eq!(seen, vec![(1005, 1, 8), (1012, 2, 200)]);
        assert_eq!(info.events, 2);
        // A time extend between them moves the second event by its whole value.
        let ext = ((3u32 << 5) | TYPE_TIME_EXTEND, 2u32);
        let mut body = p[16..16 + 12].to_vec();
        body.extend_from_slice(&ext.0.to_le_bytes());
        body.extend_from_slice(&ext.1.to_le_bytes());
        body.extend_from_slice(&((1u32 << 5) | 2).to_le_bytes());
        body.extend_from_slice(&[9; 8]);
        p = 1000u64.to_le_bytes().to_vec();
        p.extend_from_slice(&(body.len() as u64 | MISSED_EVENTS).to_le_bytes());
        p.extend_from_slice(&body);
        p.resize(4096, 0);
        seen.clear();
        let info = for_each_event(&p, |ts, d| seen.push((ts, d[0], d.len()))).unwrap();
        assert_eq!(seen, vec![(1005, 1, 8), (1005 + (2 << 27) + 3 + 1, 9, 8)]);
        assert_eq!(info.missed, Some(None));
    }

    #[test]
    fn broken_pages_are_errors() {
        let mut p = page(0, &[(0, vec![1; 8])]);
        // The committed length claims more than the page holds.
        p[8..16].copy_from_slice(&5000u64.to_le_bytes());
        assert!(for_each_event(&p, |_, _| {}).unwrap_err().0.contains("past the end"));
        assert!(for_each_event(&p[..10], |_, _| {}).is_err());
        // An event longer than what was committed.
        let mut q = page(0, &[(0, vec![1; 8])]);
        q[8..16].copy_from_slice(&8u64.to_le_bytes());
        assert!(for_each_event(&q, |_, _| {}).unwrap_err().0.contains("runs past"));
    }
}
