//! A record as one value blob, laid out as YCSB's RocksDB binding lays it
//! out, so a store's files hold what the Java binding would have written:
//! for each field, its name's length (4 bytes, big-endian), the name, the
//! value's length (4 bytes, big-endian), the value. No header, no count:
//! the blob ends after the last field.
//!
//! Used by every store that keeps a record as one value (fjall, redb,
//! rocksdb). Names are stored, indices are not, so a database loaded with
//! one `fieldnameprefix` cannot be read with another: `decode` says so.

use super::{Fields, Record};

/// Replace `out`'s contents with `record` encoded; field i is named
/// `field_names[i]`. Panics if a field index is not below
/// `field_names.len()`, which only a client bug produces.
pub fn encode(record: &Record, field_names: &[String], out: &mut Vec<u8>) {
    out.clear();
    for (f, v) in record.iter() {
        put(out, field_names[f as usize].as_bytes(), v);
    }
}

/// An update's new blob: `stored`'s fields with those `values` has replaced,
/// then `values`' other fields. The merge `Record::merge` does, written
/// straight into `out` so an update allocates nothing once buffers are warm.
pub fn encode_update(stored: &Record, values: &Record, field_names: &[String], out: &mut Vec<u8>) {
    out.clear();
    for (f, v) in stored.iter() {
        put(out, field_names[f as usize].as_bytes(), values.get(f).unwrap_or(v));
    }
    for (f, v) in values.iter() {
        if stored.get(f).is_none() {
            put(out, field_names[f as usize].as_bytes(), v);
        }
    }
}

fn put(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    out.extend_from_slice(&(name.len() as u32).to_be_bytes());
    out.extend_from_slice(name);
    out.extend_from_slice(&(value.len() as u32).to_be_bytes());
    out.extend_from_slice(value);
}

/// Replace `out`'s contents with the fields of `bytes` that `fields` wants,
/// in stored order, names mapped back to indices in `field_names`. A blob
/// that ends inside a field, or names a field not in `field_names`, is an
/// error saying where and what.
pub fn decode(bytes: &[u8], field_names: &[String], fields: Fields, out: &mut Record) -> Result<(), String> {
    out.clear();
    let mut at = 0;
    while at < bytes.len() {
        let name = chunk(bytes, &mut at, "name")?;
        let value = chunk(bytes, &mut at, "value")?;
        let Some(f) = field_names.iter().position(|n| n.as_bytes() == name) else {
            return Err(format!(
                "stored record has a field named {:?}, which is not one of this table's fields ({})",
                String::from_utf8_lossy(name),
                field_names.join(", ")
            ));
        };
        if fields.wants(f as u32) {
            out.push(f as u32, value);
        }
    }
    Ok(())
}

/// The length-prefixed chunk at `*at`, moving `*at` past it.
fn chunk<'a>(bytes: &'a [u8], at: &mut usize, what: &str) -> Result<&'a [u8], String> {
    let start = *at;
    let Some(len) = bytes.get(start..start + 4) else {
        return Err(format!(
            "stored record is truncated: a field {what}'s length at byte {start} needs 4 bytes, {} left",
            bytes.len() - start
        ));
    };
    let len = u32::from_be_bytes(len.try_into().unwrap()) as usize;
    let body = start + 4;
    match bytes.get(body..body.saturating_add(len)) {
        Some(b) => {
            *at = body + len;
            Ok(b)
        }
        None => Err(format!("stored record is truncated: a field {what} at byte {body} is {len} bytes long, {} left", bytes.len() - body)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        (0..3).map(|i| format!("field{i}")).collect()
    }

    #[test]
    fn round_trip_keeps_fields_and_order() {
        let mut r = Record::default();
        r.push(2, b"two");
        r.push(0, b"");
        r.push(1, &[0, 255, 10]);
        let mut blob = Vec::from(&b"stale"[..]);
        encode(&r, &names(), &mut blob);
        let mut back = Record::default();
        back.push(1, b"stale");
        decode(&blob, &names(), Fields::All, &mut back).unwrap();
        let got: Vec<(u32, &[u8])> = back.iter().collect();
        assert_eq!(got, vec![(2, &b"two"[..]), (0, &b""[..]), (1, &[0u8, 255, 10][..])]);
        decode(&blob, &names(), Fields::Some(&[1]), &mut back).unwrap();
        assert_eq!((back.len(), back.get(1)), (1, Some(&[0u8, 255, 10][..])));
    }

    #[test]
    fn layout_is_the_rocksdb_bindings() {
        let mut r = Record::default();
        r.push(1, b"ab");
        let mut blob = Vec::new();
        encode(&r, &names(), &mut blob);
        let want: Vec<u8> = [&[0, 0, 0, 6][..], b"field1", &[0, 0, 0, 2], b"ab"].concat();
        assert_eq!(blob, want);

        // Built by hand, two fields, the second with an empty value.
        let hand: Vec<u8> = [&[0, 0, 0, 6][..], b"field2", &[0, 0, 0, 1], b"z", &[0, 0, 0, 6], b"field0", &[0, 0, 0, 0]].concat();
        let mut out = Record::default();
        decode(&hand, &names(), Fields::All, &mut out).unwrap();
        let got: Vec<(u32, &[u8])> = out.iter().collect();
        assert_eq!(got, vec![(2, &b"z"[..]), (0, &b""[..])]);
    }

    #[test]
    fn truncated_or_foreign_blobs_are_errors() {
        let mut r = Record::default();
        r.push(0, b"value");
        let mut blob = Vec::new();
        encode(&r, &names(), &mut blob);
        let mut out = Record::default();
        for cut in 1..blob.len() {
            let e = decode(&blob[..cut], &names(), Fields::All, &mut out).unwrap_err();
            assert!(e.contains("truncated"), "cut at {cut}: {e}");
        }
        let e = decode(&blob, &["other".to_string()], Fields::All, &mut out).unwrap_err();
        assert!(e.contains("\"field0\"") && e.contains("other"), "{e}");
        // A length near u32::MAX must not overflow the bounds check.
        let e = decode(&[0, 0, 0, 1, b'x', 255, 255, 255, 255], &names(), Fields::All, &mut out).unwrap_err();
        assert!(e.contains("truncated"), "{e}");
    }

    #[test]
    fn update_replaces_given_fields_and_appends_new_ones() {
        let mut stored = Record::default();
        stored.push(0, b"a");
        stored.push(1, b"b");
        let mut values = Record::default();
        values.push(2, b"C");
        values.push(1, b"B");
        let mut blob = Vec::new();
        encode_update(&stored, &values, &names(), &mut blob);
        let mut out = Record::default();
        decode(&blob, &names(), Fields::All, &mut out).unwrap();
        let got: Vec<(u32, &[u8])> = out.iter().collect();
        assert_eq!(got, vec![(0, &b"a"[..]), (1, &b"B"[..]), (2, &b"C"[..])]);
    }
}
