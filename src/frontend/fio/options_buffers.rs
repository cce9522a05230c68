//! Write-buffer content beyond zero/refill/compress: `buffer_pattern`,
//! `scramble_buffers` and the dedupe options, with fio 3.33's interplay.
//!
//! fio's option callbacks change other options as they are parsed, so the
//! order of a job's lines matters as it does in fio: `buffer_pattern` turns
//! scrambling and zeroing off and sets refilling to "the job reads or
//! compresses (so far)"; `dedupe_percentage` turns refilling on. `finish`
//! then applies what fio decides once the whole job is known.

use super::build::Job;
use super::options::opt;
use super::options::{expected, JobState, OptDef};
use super::options_verify::parse_pattern_with;
use crate::model::job::JobSpec;

use super::options::Kind::{Bool, Uint, Value};

fn set_buffer_pattern(j: &mut JobState, v: &str) -> Result<(), String> {
    // fio 3.33 has no formats (%o) in buffer_pattern.
    j.spec.buffer.pattern = parse_pattern_with(v, false)?.bytes;
    // Reads land in the same buffers, and compression mixes random data in:
    // either way the pattern must be written again before each write.
    j.spec.buffer.refill = j.spec.buffer.compress_percentage > 0 || j.spec.rw.reads();
    j.spec.buffer.scramble = false;
    j.spec.buffer.zero = false;
    Ok(())
}

fn set_dedupe_mode(j: &mut JobState, v: &str) -> Result<(), String> {
    j.spec.buffer.dedupe_working_set = match v.trim().to_ascii_lowercase().as_str() {
        "repeat" => false,
        "working_set" => true,
        _ => return Err(expected("repeat or working_set", v)),
    };
    Ok(())
}

/// Buffer content: fio's names and forms.
pub static BUFFERS: &[OptDef] = &[
    opt!(
        "buffer_pattern",
        [],
        "fill write buffers with this pattern: 0xhex, decimal, \"text\", 'file', one after another",
        Value(set_buffer_pattern)
    ),
    opt!(
        "scramble_buffers",
        [],
        "stamp offset and time into every 512 bytes of a write that is not refilled (0/1, default 1)",
        Bool(|j, b| j.spec.buffer.scramble = b)
    ),
    opt!(
        "dedupe_percentage",
        [],
        "percent of written buffers that copy an earlier one (0-100); refills buffers",
        Uint(0, 100, |j, n| {
            j.spec.buffer.dedupe_percentage = n;
            j.spec.buffer.refill = true;
        })
    ),
    opt!("dedupe_mode", [], "how copies are chosen: repeat (the previous buffer) or working_set", Value(set_dedupe_mode)),
    opt!(
        "dedupe_working_set_percentage",
        [],
        "working set for dedupe_mode=working_set, as percent of size (default 5)",
        Uint(0, 100, |j, n| j.spec.buffer.dedupe_working_set_percentage = n)
    ),
    opt!(
        "dedupe_global",
        [],
        "share the dedupe working set among the jobs that set this (0/1)",
        Bool(|j, b| j.spec.buffer.dedupe_global = b)
    ),
];

/// fio's decisions once the job is complete: an error names its option.
pub(super) fn finish(job: &Job, spec: &mut JobSpec) -> Result<(), (&'static str, String)> {
    let given = |n: &str| job.set_at.contains_key(n);
    let verifies = spec.verify.method.is_some();
    let b = &mut spec.buffer;
    if b.compress_percentage == 100 {
        // fio: fully compressible is zeros (or the pattern, which wins).
        b.zero = true;
        b.compress_percentage = 0;
    } else if b.compress_percentage > 0 && !given("refill_buffers") && !verifies {
        // fio refills so neighbouring blocks do not compress together; with
        // verify the verifier owns the content and its seeds.
        b.refill = true;
    }
    // fio scrambles unless zeros were asked for explicitly, and only writes
    // that are not refilled, compressed, deduplicated or verified.
    let compressing = given("buffer_compress_percentage") || given("dedupe_percentage");
    let zeros_asked = b.zero && given("zero_buffers") && !given("scramble_buffers");
    b.scramble = b.scramble && !zeros_asked && !b.refill && !compressing && !verifies;
    if b.dedupe_percentage > 0 && b.dedupe_working_set {
        if spec.size.is_none() {
            return Err(("dedupe_mode", "dedupe_mode=working_set needs size= as well: the working set is a share of it".into()));
        }
        if spec.nrfiles > 1 || spec.filenames.len() > 1 {
            return Err(("dedupe_mode", "dedupe_mode=working_set works on one file per job (fio's rule); expected nrfiles=1".into()));
        }
        if b.dedupe_working_set_percentage + b.dedupe_percentage > 100 {
            let msg = format!(
                "dedupe_percentage={} cannot be reached with dedupe_working_set_percentage={} of the size kept unique; expected the two to add up to at most 100",
                b.dedupe_percentage, b.dedupe_working_set_percentage
            );
            return Err(("dedupe_working_set_percentage", msg));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::options::apply_for_test as apply;
    use super::*;

    #[test]
    fn buffer_pattern_parses_as_fio_and_resets_what_fio_resets() {
        let mut j = JobState::new("j");
        apply(&mut j, "rw", "write").unwrap();
        apply(&mut j, "zero_buffers", "1").unwrap();
        apply(&mut j, "buffer_pattern", "0xdeadface\"abc\"-12").unwrap();
        assert_eq!(j.spec.buffer.pattern, [0xde, 0xad, 0xfa, 0xce, b'a', b'b', b'c', 0xf4, 0xff, 0xff, 0xff]);
        assert!(!j.spec.buffer.zero && !j.spec.buffer.scramble && !j.spec.buffer.refill);
        apply(&mut j, "buffer_pattern", "0xff0x14").unwrap();
        assert_eq!(j.spec.buffer.pattern, [0xff, 0x14]);
        apply(&mut j, "rw", "randrw").unwrap();
        apply(&mut j, "buffer_pattern", "1").unwrap();
        assert!(j.spec.buffer.refill, "a job that reads refills its pattern");
    }

    #[test]
    fn buffer_pattern_reads_a_quoted_file_up_to_fios_limit() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("pat");
        std::fs::write(&f, vec![7u8; 2000]).unwrap();
        let mut j = JobState::new("j");
        apply(&mut j, "buffer_pattern", &format!("0xab'{}'", f.display())).unwrap();
        assert_eq!(j.spec.buffer.pattern.len(), 512);
        assert_eq!(j.spec.buffer.pattern[..2], [0xab, 7]);
    }

    #[test]
    fn bad_patterns_say_what_was_expected() {
        let mut j = JobState::new("j");
        for (v, why) in [
            ("%o", "%o has no meaning here"),
            ("4294967296", "outside -2147483648..2147483647"),
            ("'/nonexistent/p'", "no such file"),
            ("\"abc", "not closed"),
            ("0x", "without hex digits"),
            ("zz", "unexpected 'z'"),
        ] {
            let e = apply(&mut j, "buffer_pattern", v).unwrap_err();
            assert!(e.starts_with("expected a pattern of hex") && e.contains(why), "{v}: {e}");
        }
        let long = format!("\"{}\"", "a".repeat(513));
        assert!(apply(&mut j, "buffer_pattern", &long).unwrap_err().contains("more than fio's 512 bytes"));
        assert!(apply(&mut j, "dedupe_mode", "often").unwrap_err().contains("repeat or working_set"));
        assert!(apply(&mut j, "dedupe_percentage", "101").is_err());
    }

    #[test]
    fn dedupe_turns_refill_on() {
        let mut j = JobState::new("j");
        apply(&mut j, "dedupe_percentage", "0").unwrap();
        assert!(j.spec.buffer.refill);
    }
}
