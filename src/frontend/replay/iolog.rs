//! fio's iolog, versions 2 and 3, read into a replay's I/Os and written
//! from them (what `read_iolog=` replays).
//!
//! The grammar, as fio 3.33 reads it: a first line `fio version 2 iolog`
//! or `fio version 3 iolog`; then per line `FILE ACTION` (add, open, close)
//! or `FILE ACTION OFFSET LENGTH` (read, write, trim, sync, datasync, and in
//! version 2 wait), version 3 leading each line with a timestamp in µs from
//! the start. Version 2's `wait OFFSET` takes OFFSET as milliseconds since
//! fio started (what fio 3.33 does; its manual says µs since the last
//! wait), and needs the LENGTH field like any I/O line.

use super::Trace;
use crate::model::replay::{Dir, TraceIo};
use std::fmt::Write;
use std::path::Path;

const V2: &str = "fio version 2 iolog";
const V3: &str = "fio version 3 iolog";

pub fn parse(text: &str, path: &Path) -> Result<Trace, String> {
    let at = |n: usize, what: String| format!("{} line {n}: {what}", path.display());
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let first = lines.next().map(|(_, l)| l.trim_end()).unwrap_or("");
    let version = if first.starts_with(V2) {
        2
    } else if first.starts_with(V3) {
        3
    } else {
        return Err(at(1, format!("expected \"{V2}\" or \"{V3}\", found {first:?}")));
    };
    let (mut ios, mut files, mut syncs) = (Vec::new(), Vec::<String>::new(), 0u64);
    let mut now_ns = 0u64;
    for (n, line) in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.is_empty() {
            continue;
        }
        let num = |s: &str, what: &str| s.parse::<u64>().map_err(|_| at(n, format!("expected {what} (a whole number), found {s:?}")));
        let rest: &[&str] = if version == 3 {
            // Times that go backwards keep the order, not the time.
            now_ns = now_ns.max(num(f[0], "a timestamp in µs")?.saturating_mul(1000));
            &f[1..]
        } else {
            &f
        };
        match rest {
            [file, "add" | "open" | "close"] => {
                if !files.iter().any(|x| x == file) {
                    files.push(file.to_string());
                }
            }
            [_, "wait", off, _] if version == 2 => now_ns = now_ns.max(num(off, "a wait in ms")?.saturating_mul(1_000_000)),
            [_, "sync" | "datasync", _, _] => syncs += 1,
            [_, act @ ("read" | "write" | "trim"), off, len] => {
                let dir = match *act {
                    "read" => Dir::Read,
                    "write" => Dir::Write,
                    _ => Dir::Trim,
                };
                let len = num(len, "a length in bytes")?;
                let len = u32::try_from(len).map_err(|_| at(n, format!("a length of at most 4 GiB, found {len}")))?;
                if len == 0 {
                    return Err(at(n, "a length of at least 1 byte, found 0".into()));
                }
                ios.push(TraceIo { at_ns: now_ns, offset: num(off, "an offset in bytes")?, len, dir });
            }
            _ => {
                let want = if version == 3 {
                    "TIME FILE add|open|close or TIME FILE read|write|trim|sync|datasync OFFSET LENGTH"
                } else {
                    "FILE add|open|close or FILE read|write|trim|sync|datasync|wait OFFSET LENGTH"
                };
                return Err(at(n, format!("expected {want}, found {:?}", line.trim())));
            }
        }
    }
    let t0 = ios.first().map(|i: &TraceIo| i.at_ns).unwrap_or(0);
    for io in &mut ios {
        io.at_ns -= t0;
    }
    let mut notes = Vec::new();
    if syncs > 0 {
        notes.push(format!("{syncs} sync/datasync lines left out (replay issues reads, writes and trims)"));
    }
    if files.len() > 1 {
        notes.push(format!("the log names {} files ({}); all their I/O goes to the one target", files.len(), files.join(", ")));
    }
    Ok(Trace { ios, source: format!("fio iolog v{version} {}", path.display()), device: None, notes })
}

/// `ios` as an iolog of `version` (2 or 3) whose I/O all goes to `file`.
/// Version 2 keeps the timing with a `wait` wherever a millisecond has
/// passed; version 3 gives every line its µs.
pub fn write(ios: &[TraceIo], file: &str, version: u8) -> Result<String, String> {
    if file.is_empty() || file.chars().any(char::is_whitespace) {
        return Err(format!("the file name in an iolog cannot be empty or hold white space (fio splits lines at it): {file:?}"));
    }
    let mut s = String::with_capacity(ios.len() * (file.len() + 32));
    let end_us = ios.last().map(|i| i.at_ns / 1000).unwrap_or(0);
    if version == 2 {
        let _ = writeln!(s, "{V2}\n{file} add\n{file} open");
        let mut waited_ms = 0;
        for io in ios {
            let ms = io.at_ns / 1_000_000;
            if ms > waited_ms {
                let _ = writeln!(s, "{file} wait {ms} 0");
                waited_ms = ms;
            }
            let _ = writeln!(s, "{file} {} {} {}", io.dir.name(), io.offset, io.len);
        }
        let _ = writeln!(s, "{file} close");
    } else {
        let _ = writeln!(s, "{V3}\n0 {file} add\n0 {file} open");
        for io in ios {
            let _ = writeln!(s, "{} {file} {} {} {}", io.at_ns / 1000, io.dir.name(), io.offset, io.len);
        }
        let _ = writeln!(s, "{end_us} {file} close");
    }
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(at_ns: u64, offset: u64, len: u32, dir: Dir) -> TraceIo {
        TraceIo { at_ns, offset, len, dir }
    }

    #[test]
    fn both_versions_round_trip_at_their_resolution() {
        let ios = vec![io(0, 0, 4096, Dir::Read), io(2_500_000, 8192, 512, Dir::Write), io(7_000_000, 1 << 20, 65536, Dir::Trim)];
        let p = Path::new("log");
        let v3 = parse(&write(&ios, "/dev/loop9", 3).unwrap(), p).unwrap();
        assert_eq!(v3.ios, ios);
        let v2 = parse(&write(&ios, "/dev/loop9", 2).unwrap(), p).unwrap();
        let ms: Vec<u64> = v2.ios.iter().map(|i| i.at_ns / 1_000_000).collect();
        assert_eq!(ms, vec![0, 2, 7]);
        assert_eq!(
            v2.ios.iter().map(|i| (i.offset, i.len, i.dir)).collect::<Vec<_>>(),
            ios.iter().map(|i| (i.offset, i.len, i.dir)).collect::<Vec<_>>()
        );
    }

    #[test]
    fn what_fio_writes_is_read() {
        let text = "fio version 3 iolog\n43 /tmp/f add\n169 /tmp/f open\n174 /tmp/f read 61440 4096\n646 /tmp/f write 491520 4096\n700 /tmp/f sync 0 0\n904 /tmp/f close\n";
        let t = parse(text, Path::new("x.log")).unwrap();
        assert_eq!(t.ios, vec![io(0, 61440, 4096, Dir::Read), io(472_000, 491520, 4096, Dir::Write)]);
        assert!(t.notes[0].contains("1 sync"), "{:?}", t.notes);
    }

    #[test]
    fn bad_lines_are_named() {
        let e = parse("fio version 1 iolog\n", Path::new("a.log")).unwrap_err();
        assert!(e.contains("a.log line 1") && e.contains("fio version 2 iolog"), "{e}");
        let e = parse("fio version 2 iolog\n/f add\n/f read x 4096\n", Path::new("a.log")).unwrap_err();
        assert!(e.contains("line 3") && e.contains("offset"), "{e}");
        let e = parse("fio version 3 iolog\n/f read 0 4096\n", Path::new("a.log")).unwrap_err();
        assert!(e.contains("line 2") && e.contains("timestamp"), "{e}");
        let e = parse("fio version 2 iolog\n/f wait 10\n", Path::new("a.log")).unwrap_err();
        assert!(e.contains("line 2"), "{e}");
        assert!(write(&[], "a b", 3).is_err());
    }
}
