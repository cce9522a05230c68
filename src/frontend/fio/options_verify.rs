//! fio's data verification options (`verify=` and its companions).

use super::options::opt;
use super::options::{block_size, expected, JobState, OptDef};
use crate::model::verify::{VerifyPattern, METHODS};
use crate::units::{clip, parse_size, parse_uint};

use super::options::Kind::{Bool, Uint, Value};

fn set_verify(j: &mut JobState, v: &str) -> Result<(), String> {
    let name = v.trim().to_ascii_lowercase();
    if matches!(name.as_str(), "0" | "none") {
        j.spec.verify.method = None;
        return Ok(());
    }
    match METHODS.iter().find(|(n, _)| *n == name) {
        Some((_, m)) => {
            j.spec.verify.method = Some(*m);
            Ok(())
        }
        None => {
            let names: Vec<&str> = METHODS.iter().map(|(n, _)| *n).collect();
            Err(format!("expected 0 or one of {}, got '{}'", names.join(", "), clip(v)))
        }
    }
}

const PATTERN_FORM: &str =
    "a pattern of hex (0xdeadbeef), decimal (17, -12), quoted text (\"abc\"), a file's bytes ('file') and %o (the block offset), written one after another";

/// fio's pattern buffer (MAX_PATTERN_SIZE in 3.33): longer patterns are
/// refused, a file's bytes past it are left out.
pub(super) const MAX_PATTERN: usize = 512;

/// fio's pattern syntax: pieces written one after another, each a hex
/// number (bytes in the order written; `0xff0x14` is two), a decimal number
/// in the int range (little-endian, as few bytes as it needs; negative ones
/// as 4 bytes), a double-quoted string (its bytes, no escapes), a
/// single-quoted file name (its bytes) or, where `formats` allows it, `%o`
/// (the block's offset, 8 bytes).
pub(super) fn parse_pattern(v: &str) -> Result<VerifyPattern, String> {
    parse_pattern_with(v, true)
}

pub(super) fn parse_pattern_with(v: &str, formats: bool) -> Result<VerifyPattern, String> {
    let s = v.trim().as_bytes();
    let mut bytes = Vec::new();
    let mut offset_at = Vec::new();
    let mut i = 0;
    let form = if formats { PATTERN_FORM } else { PATTERN_FORM.trim_end_matches(" and %o (the block offset), written one after another") };
    let bad = |why: &str| format!("expected {form}, got '{}' ({why})", clip(v));
    while i < s.len() {
        match s[i] {
            b' ' | b',' => i += 1,
            b'"' => {
                let end = s[i + 1..].iter().position(|&c| c == b'"').ok_or_else(|| bad("a quote is not closed"))?;
                bytes.extend_from_slice(&s[i + 1..i + 1 + end]);
                i += end + 2;
            }
            b'\'' => {
                let end = s[i + 1..].iter().position(|&c| c == b'\'').ok_or_else(|| bad("a quote is not closed"))?;
                let name = String::from_utf8_lossy(&s[i + 1..i + 1 + end]).to_string();
                let room = MAX_PATTERN.saturating_sub(bytes.len());
                let data = crate::input::read_prefix(std::path::Path::new(&name), room)
                    .map_err(|e| bad(&format!("pattern file '{}': {e}", clip(&name))))?;
                if data.is_empty() {
                    return Err(bad(&format!("pattern file '{}' is empty", clip(&name))));
                }
                bytes.extend_from_slice(&data);
                i += end + 2;
            }
            b'%' if formats && s.get(i + 1) == Some(&b'o') => {
                offset_at.push(bytes.len());
                bytes.extend_from_slice(&[0; 8]);
                i += 2;
            }
            b'0' if matches!(s.get(i + 1), Some(b'x' | b'X')) => {
                let mut n = s[i + 2..].iter().take_while(|c| c.is_ascii_hexdigit()).count();
                // `0xff0x14`: the 0 before the next x starts a new number.
                if n > 1 && s[i + 1 + n] == b'0' && matches!(s.get(i + 2 + n), Some(b'x' | b'X')) {
                    n -= 1;
                }
                if n == 0 {
                    return Err(bad("0x without hex digits"));
                }
                let nib = |c: u8| (c as char).to_digit(16).expect("hex digit") as u8;
                let mut d: Vec<u8> = s[i + 2..i + 2 + n].iter().map(|&c| nib(c)).collect();
                if d.len() % 2 == 1 {
                    d.insert(0, 0);
                }
                bytes.extend(d.chunks(2).map(|p| p[0] << 4 | p[1]));
                i += 2 + n;
            }
            b'-' | b'0'..=b'9' => {
                let neg = s[i] == b'-';
                let start = if neg { i + 1 } else { i };
                let len = s[start..].iter().take_while(|c| c.is_ascii_digit()).count();
                if len == 0 {
                    return Err(bad("'-' without digits"));
                }
                let text = std::str::from_utf8(&s[start..start + len]).expect("ascii digits");
                let too_large = || bad("a decimal number outside -2147483648..2147483647");
                let n: i64 = text.parse().map_err(|_| too_large())?;
                let x = if neg { -n } else { n };
                let x = i32::try_from(x).map_err(|_| too_large())? as u32;
                let need = (4 - x.leading_zeros() as usize / 8).max(1);
                bytes.extend_from_slice(&x.to_le_bytes()[..need]);
                i = start + len;
            }
            b'%' => return Err(bad("%o has no meaning here")),
            _ => return Err(bad(&format!("unexpected '{}'", s[i] as char))),
        }
        if bytes.len() > MAX_PATTERN {
            return Err(bad(&format!("more than fio's {MAX_PATTERN} bytes")));
        }
    }
    if bytes.is_empty() {
        return Err(bad("it is empty"));
    }
    Ok(VerifyPattern { bytes, offset_at })
}

fn set_pattern(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.verify.pattern = Some(parse_pattern(v)?);
    Ok(())
}

fn set_interval(j: &mut JobState, v: &str) -> Result<(), String> {
    let b = block_size(j, v)?;
    if b < 80 {
        return Err(expected("a size of at least 80 bytes (two headers), such as 512 or 4k", v));
    }
    j.spec.verify.interval = b;
    Ok(())
}

fn set_verify_offset(j: &mut JobState, v: &str) -> Result<(), String> {
    let b = parse_size(v, j.kb_base)?;
    if b != 0 && b < 40 {
        return Err(expected("0 or an offset of at least 40 bytes (one header)", v));
    }
    j.spec.verify.offset = b;
    Ok(())
}

fn set_backlog(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.verify.backlog = parse_uint(v, 0, u32::MAX as u64)?;
    Ok(())
}

/// Accepted for job files that name them; `verify_async_cpus` only places
/// fio's verifier threads, which fsbench does not start.
fn accept_cpus(_: &mut JobState, v: &str) -> Result<(), String> {
    if v.trim().is_empty() {
        return Err(expected("a CPU list such as 0-3", v));
    }
    Ok(())
}

/// Verification: fio's names and forms.
pub static VERIFY: &[OptDef] = &[
    opt!("verify", [], "check written data: md5, crc32c, crc64, sha256, xxhash, meta, pattern, null, ... or 0", Value(set_verify)),
    opt!("verify_pattern", [], "fill pattern: 0xhex, decimal, \"text\", 'file', %o (block offset)", Value(set_pattern)),
    opt!("verify_interval", [], "bytes per verify header (>= 80), such as 512", Value(set_interval)),
    opt!("verify_offset", [], "move the verify header this many bytes into each interval", Value(set_verify_offset)),
    opt!("do_verify", [], "read back and check after writing (0/1)", Bool(|j, b| j.spec.verify.do_verify = b)),
    opt!("verify_only", [], "only check data an earlier identical job wrote (0/1)", Bool(|j, b| j.spec.verify.only = b)),
    opt!("verify_backlog", [], "check after every N blocks written", Value(set_backlog)),
    opt!("verify_backlog_batch", [], "blocks checked per backlog check", Uint(0, u32::MAX, |j, n| j.spec.verify.backlog_batch = n as u64)),
    opt!(
        "verify_async",
        [],
        "verifier threads (fsbench checks in the job's thread)",
        Uint(0, 1024, |j, n| j.spec.verify.async_threads = n)
    ),
    opt!("verify_async_cpus", [], "CPUs of the verifier threads (accepted, not used)", Value(accept_cpus)),
    opt!("verify_fatal", [], "stop checking a block at its first bad interval (0/1)", Bool(|j, b| j.spec.verify.fatal = b)),
    opt!("verify_dump", [], "write the received and expected data of a bad block to files (0/1)", Bool(|j, b| j.spec.verify.dump = b)),
    opt!("verify_state_save", [], "save verify state at the end (accepted, not saved)", Bool(|j, b| j.spec.verify.state_save = b)),
    opt!("verify_state_load", [], "load verify state (accepted, ignored with a warning)", Bool(|j, b| j.spec.verify.state_load = b)),
];

#[cfg(test)]
mod tests {
    use super::super::options::apply_for_test as apply;
    use super::*;
    use crate::model::verify::VerifyMethod;

    #[test]
    fn patterns_as_fio_writes_them() {
        assert_eq!(parse_pattern("0xdeadbeef").unwrap().bytes, [0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(parse_pattern("0x123").unwrap().bytes, [0x01, 0x23]);
        assert_eq!(parse_pattern("17").unwrap().bytes, [0x11]);
        assert_eq!(parse_pattern("258").unwrap().bytes, [0x02, 0x01]);
        assert_eq!(parse_pattern("\"ab\"").unwrap().bytes, b"ab");
        let p = parse_pattern("0xff%o\"abcd\"-12").unwrap();
        assert_eq!(p.offset_at, [1]);
        assert_eq!(p.bytes.len(), 1 + 8 + 4 + 4);
        assert_eq!(&p.bytes[13..], &[0xf4, 0xff, 0xff, 0xff]);
        assert!(parse_pattern("0x").unwrap_err().contains("without hex digits"));
        assert!(parse_pattern("'/nonexistent/ab'").unwrap_err().contains("no such file"));
        assert!(parse_pattern("2147483648").unwrap_err().contains("outside -2147483648..2147483647"));
        assert_eq!(parse_pattern("0xff0x14").unwrap().bytes, [0xff, 0x14]);
        assert!(parse_pattern("\"ab").unwrap_err().contains("not closed"));
    }

    #[test]
    fn methods_and_limits() {
        let mut j = JobState::new("j");
        apply(&mut j, "verify", "crc32c-intel").unwrap();
        assert_eq!(j.spec.verify.method, Some(VerifyMethod::Crc32cIntel));
        apply(&mut j, "verify", "0").unwrap();
        assert_eq!(j.spec.verify.method, None);
        let e = apply(&mut j, "verify", "crc33").unwrap_err();
        assert!(e.contains("expected 0 or one of md5") && e.contains("'crc33'"), "{e}");
        assert!(apply(&mut j, "verify_interval", "64").unwrap_err().contains("at least 80"));
        assert!(apply(&mut j, "verify_offset", "8").unwrap_err().contains("at least 40"));
        apply(&mut j, "verify_backlog", "16").unwrap();
        assert_eq!(j.spec.verify.backlog, 16);
    }
}
