//! Fuzzing the blktrace reader and the summary for a bounded time: random
//! bytes and mutated valid traces must load or give an error naming a byte
//! inside the input, never a panic; whatever loads must summarize and
//! render.
//!
//! Mutations, one to four stacked on one CPU's bytes: bit flips, truncation,
//! records spliced in from another trace (at record boundaries or anywhere),
//! a huge or wrong `pdu_len`, a wrong cpu, magic or version, duplicated and
//! dropped records, random bytes inserted.
//!
//! `FSBENCH_TRACE_FUZZ_SECS` (else `FSBENCH_FUZZ_SECS`) sets the duration
//! (default 10), `FSBENCH_FUZZ_SEED` the seed (default: from the clock,
//! printed). A failing input is saved under `CARGO_TARGET_TMPDIR`.

use fsbench::observe::trace::files::{read_trace, Trace, TraceFileError};
use fsbench::observe::trace::record::{act, cat, notify, Header, Records, HEADER_LEN, MAGIC, VERSION};
use fsbench::observe::trace::summary::summarize;
use fsbench::report::blkparse::{render, Grouping};
use fsbench::result::trace::summary::Mode;
use fsbench::runner::rng::Rng;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// One input taking longer than this is a hang.
const INPUT_LIMIT: Duration = Duration::from_secs(2);
const MAX_CPU_BYTES: usize = 64 * 1024;

type Cpus = Vec<(u32, Vec<u8>)>;

/// A valid trace: requests of every kind spread over `ncpu` CPUs, with
/// payloads (messages, process names, split targets, PC commands).
fn valid_trace(rng: &mut Rng, ncpu: u32, n: usize) -> Cpus {
    let mut cpus: Cpus = (0..ncpu).map(|c| (c, Vec::new())).collect();
    let codes = [
        act::QUEUE,
        act::BACKMERGE,
        act::FRONTMERGE,
        act::GETRQ,
        act::INSERT,
        act::ISSUE,
        act::COMPLETE,
        act::REQUEUE,
        act::PLUG,
        act::UNPLUG_IO,
        act::UNPLUG_TIMER,
        act::SPLIT,
        act::REMAP,
    ];
    let mut t = 1_000u64;
    for _ in 0..n {
        let cpu = rng.below(u64::from(ncpu)) as u32;
        t += rng.below(5_000_000);
        let (code, mut category, pdu): (u16, u16, Vec<u8>) = match rng.below(20) {
            0 => (notify::MESSAGE, cat::NOTIFY, b"a message".to_vec()),
            1 => (notify::PROCESS, cat::NOTIFY, b"fio\0\0\0\0\0\0\0\0\0\0\0\0\0".to_vec()),
            2 => (act::ISSUE, cat::ISSUE | cat::PC, vec![0x28, 0, 0, 0, 0, 8, 0, 0, 8, 0]),
            3 => (act::SPLIT, cat::QUEUE, rng.next_u64().to_be_bytes().to_vec()),
            _ => {
                let code = codes[rng.below(codes.len() as u64) as usize];
                (code, [cat::QUEUE, cat::ISSUE, cat::COMPLETE, cat::REQUEUE, 0][rng.below(5) as usize], Vec::new())
            }
        };
        if category & cat::NOTIFY == 0 {
            category |= if rng.below(2) == 0 { cat::READ } else { cat::WRITE };
        }
        let h = Header {
            magic: MAGIC | VERSION,
            sequence: rng.below(3) as u32,
            time: t,
            sector: rng.below(1 << 30),
            bytes: (rng.below(256) as u32) * 512,
            action: u32::from(category) << 16 | u32::from(code),
            pid: rng.below(70_000) as u32,
            device: [8 << 20, 259 << 20 | 1][rng.below(2) as usize],
            cpu: cpu as u16,
            error: if rng.below(50) == 0 { 5 } else { 0 },
            pdu_len: pdu.len() as u16,
        };
        let buf = &mut cpus[cpu as usize].1;
        buf.extend_from_slice(&h.encode());
        buf.extend_from_slice(&pdu);
    }
    cpus
}

/// Record start offsets of a (possibly broken) buffer, as far as it reads.
fn boundaries(buf: &[u8]) -> Vec<usize> {
    let mut out = vec![0];
    let mut at = 0usize;
    for r in Records::new(buf, 0) {
        let Ok(r) = r else { break };
        at += r.h.record_len();
        out.push(at);
    }
    out
}

fn mutate(rng: &mut Rng, corpus: &[Cpus], cpus: &mut Cpus) {
    let which = rng.below(cpus.len() as u64) as usize;
    let cpu = cpus[which].0;
    let buf = &mut cpus[which].1;
    let at = |rng: &mut Rng, len: usize| rng.below(len as u64 + 1) as usize;
    let recs = boundaries(buf);
    let rec_at = |rng: &mut Rng| recs[rng.below(recs.len() as u64) as usize];
    match rng.below(11) {
        0 if !buf.is_empty() => {
            let i = at(rng, buf.len() - 1);
            buf[i] ^= 1 << rng.below(8);
        }
        1 => {
            let cut = at(rng, buf.len());
            buf.truncate(cut);
        }
        2 | 3 => {
            // Records of another trace, spliced at a boundary or anywhere.
            let other = &corpus[rng.below(corpus.len() as u64) as usize];
            let src = &other[rng.below(other.len() as u64) as usize].1;
            let ob = boundaries(src);
            let a = ob[rng.below(ob.len() as u64) as usize];
            let b = ob[rng.below(ob.len() as u64) as usize];
            let (a, b) = (a.min(b), a.max(b));
            let dst = if rng.below(2) == 0 { rec_at(rng) } else { at(rng, buf.len()) };
            buf.splice(dst..dst, src[a..b].iter().copied());
        }
        4 => {
            // A huge or merely wrong pdu_len.
            let r = rec_at(rng);
            if r + HEADER_LEN <= buf.len() {
                let v: u16 = match rng.below(3) {
                    0 => u16::MAX,
                    1 => 4097 + rng.below(60_000) as u16,
                    _ => rng.below(200) as u16,
                };
                buf[r + 46..r + 48].copy_from_slice(&v.to_le_bytes());
            }
        }
        5 => {
            // cpu, magic, version or the cpu field's upper half.
            let r = rec_at(rng);
            if r + HEADER_LEN <= buf.len() {
                match rng.below(4) {
                    0 => buf[r + 40] = (cpu as u8).wrapping_add(1 + rng.below(3) as u8),
                    1 => buf[r + 3] ^= 0x10,
                    2 => buf[r] = rng.below(256) as u8,
                    _ => buf[r + 42] = 1,
                }
            }
        }
        6 => {
            // Duplicate a record.
            let (a, b) = (rec_at(rng), rec_at(rng));
            let (a, b) = (a.min(b), a.max(b));
            let copy = buf[a..b].to_vec();
            let dst = rec_at(rng).min(buf.len());
            buf.splice(dst..dst, copy);
        }
        7 => {
            let (a, b) = (rec_at(rng), rec_at(rng));
            buf.drain(a.min(b)..a.max(b));
        }
        8 => {
            let mut junk = vec![0u8; 1 + rng.below(100) as usize];
            rng.fill(&mut junk);
            let dst = at(rng, buf.len());
            buf.splice(dst..dst, junk);
        }
        9 => {
            // Times and sizes at their extremes keep the sums honest.
            let r = rec_at(rng);
            if r + HEADER_LEN <= buf.len() {
                let field = [8usize, 24, 4][rng.below(3) as usize];
                let len = if field == 8 { 8 } else { 4 };
                for b in &mut buf[r + field..r + field + len] {
                    *b = 0xff;
                }
            }
        }
        _ => {
            // Drop a CPU or add an empty one.
            if rng.below(2) == 0 && cpus.len() > 1 {
                cpus.remove(which);
            } else {
                let next = cpus.iter().map(|c| c.0).max().unwrap_or(0) + 1;
                cpus.push((next, Vec::new()));
            }
        }
    }
    for c in cpus.iter_mut() {
        c.1.truncate(MAX_CPU_BYTES);
    }
}

/// Loads, summarizes and renders; checks what an error says.
fn exercise(cpus: &Cpus) -> Result<(), String> {
    match Trace::from_buffers("fuzz", cpus.clone()) {
        Ok(t) => {
            let n = t.merged().count() as u64;
            if n != t.total_records() {
                return Err(format!("merged() gave {n} records of {}", t.total_records()));
            }
            for mode in [Mode::Files { name: "fuzz".into() }, Mode::Stream] {
                let s = summarize(t.merged(), mode);
                let text = render(&s, Grouping::Thousands);
                if s.devices.iter().any(|d| d.events > 0) && !text.contains("Events (") {
                    return Err(format!("a summary without its Events line:\n{text}"));
                }
            }
            Ok(())
        }
        Err(TraceFileError::Format { path, offset, what }) => {
            let name = path.display().to_string();
            let cpu: u32 =
                name.rsplit('.').next().and_then(|c| c.parse().ok()).ok_or_else(|| format!("error names no CPU file: {name}"))?;
            let len = cpus
                .iter()
                .find(|c| c.0 == cpu)
                .map(|c| c.1.len())
                .ok_or_else(|| format!("error names a file not in the input: {name}"))?;
            if offset >= len as u64 {
                return Err(format!("{name}: offset {offset} is outside its {len} bytes ({what})"));
            }
            if what.is_empty() {
                return Err(format!("{name}: at byte {offset}: the error says nothing"));
            }
            Ok(())
        }
        Err(e) => Err(format!("an in-memory trace failed with a non-format error: {e}")),
    }
}

/// `Records` on one raw buffer with a base offset: errors stay inside it.
fn raw_records(buf: &[u8], base: u64) -> Result<(), String> {
    for r in Records::new(buf, base) {
        if let Err(e) = r {
            if e.offset < base || e.offset >= base + buf.len() as u64 {
                return Err(format!("error offset {} outside [{base}, {})", e.offset, base + buf.len() as u64));
            }
        }
    }
    Ok(())
}

fn save(name: &str, cpus: &Cpus) -> String {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::create_dir_all(&dir);
    for (cpu, bytes) in cpus {
        let _ = std::fs::write(dir.join(format!("fuzz.blktrace.{cpu}")), bytes);
    }
    format!("{}/fuzz", dir.display())
}

#[test]
fn trace_reader_survives_random_and_mutated_traces() {
    let secs: u64 = ["FSBENCH_TRACE_FUZZ_SECS", "FSBENCH_FUZZ_SECS"].iter().find_map(|v| std::env::var(v).ok()?.parse().ok()).unwrap_or(10);
    let seed: u64 = std::env::var("FSBENCH_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1));
    println!("trace fuzz: seed {seed} (FSBENCH_FUZZ_SEED), {secs} s");
    let mut rng = Rng::new(seed);
    let corpus: Vec<Cpus> = (0..8).map(|i| valid_trace(&mut rng, 1 + i % 4, 50 + 40 * i as usize)).collect();
    for (i, c) in corpus.iter().enumerate() {
        if let Err(e) = Trace::from_buffers("corpus", c.clone()) {
            panic!("corpus entry {i} does not load: {e}");
        }
    }

    let dir = tempfile::tempdir().unwrap();
    let deadline = Instant::now() + Duration::from_secs(secs);
    let (mut runs, mut loaded) = (0u64, 0u64);
    while Instant::now() < deadline {
        runs += 1;
        let mut input: Cpus = if rng.below(10) == 0 {
            // Plain random bytes, sometimes starting with a valid header.
            let mut b = vec![0u8; rng.below(600) as usize];
            rng.fill(&mut b);
            if rng.below(2) == 0 && b.len() >= HEADER_LEN {
                b[..4].copy_from_slice(&(MAGIC | VERSION).to_le_bytes());
                b[40..44].copy_from_slice(&0u32.to_le_bytes());
            }
            vec![(0, b)]
        } else {
            corpus[rng.below(corpus.len() as u64) as usize].clone()
        };
        for _ in 0..1 + rng.below(4) {
            mutate(&mut rng, &corpus, &mut input);
        }
        let started = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let base = rng.below(1 << 40);
            for (_, b) in &input {
                raw_records(b, base)?;
            }
            exercise(&input)
        }));
        let problem = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e),
            Err(p) => Some(format!(
                "panic: {}",
                p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
            )),
        };
        let problem = problem.or_else(|| (started.elapsed() > INPUT_LIMIT).then(|| format!("took {:?}", started.elapsed())));
        if let Some(p) = problem {
            let saved = save(&format!("trace_fuzz_fail_{seed}_{runs}"), &input);
            panic!("seed {seed}, input {runs}: {p}\ninput saved as trace {saved}");
        }
        if Trace::from_buffers("fuzz", input.clone()).is_ok() {
            loaded += 1;
        }
        // Now and then the same input through real files and read_trace.
        if runs % 100 == 0 {
            // A fresh directory each time, removed at once, so that cleaning up
            // stays inside the time budget.
            let round = dir.path().join(format!("r{runs}"));
            std::fs::create_dir(&round).unwrap();
            for (cpu, bytes) in &input {
                std::fs::write(round.join(format!("f.blktrace.{cpu}")), bytes).unwrap();
            }
            match read_trace(&round.join("f")) {
                Ok(t) => assert_eq!(t.merged().count() as u64, t.total_records()),
                Err(TraceFileError::Format { path, offset, .. }) => {
                    let len = std::fs::metadata(&path).unwrap().len();
                    assert!(offset < len, "{}: offset {offset} outside its {len} bytes (seed {seed})", path.display());
                }
                Err(e) => panic!("seed {seed}: read_trace failed with {e}"),
            }
            std::fs::remove_dir_all(&round).unwrap();
        }
    }
    println!("trace fuzz: {runs} inputs, {loaded} loaded");
    assert!(runs > 100, "only {runs} inputs in {secs} s");
    assert!(loaded > 0 && loaded < runs, "the mutations should give both loading and failing inputs ({loaded} of {runs} loaded)");
}
