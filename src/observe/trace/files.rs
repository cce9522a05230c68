//! blktrace's files: one `BASENAME.blktrace.CPU` per CPU, each a plain run
//! of records. `TraceWriter` splits captured records into them;
//! `read_trace` loads and checks a set and merges it back into time order.

use super::record::{cat, Record, RecordSink, Records};
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// What follows the base name in every per-CPU file's name.
const INFIX: &str = ".blktrace.";

/// The file of one CPU: `BASE.blktrace.CPU`.
pub fn cpu_path(base: &Path, cpu: u32) -> PathBuf {
    let mut name = base.as_os_str().to_owned();
    name.push(format!("{INFIX}{cpu}"));
    PathBuf::from(name)
}

/// The directory and file-name part of a base name; `dir/name.blktrace.3`
/// is taken as `dir/name`, as blkparse takes it.
fn split_base(base: &Path) -> Option<(PathBuf, String)> {
    let name = base.file_name()?.to_str()?;
    let name = match name.find(INFIX) {
        Some(at) => &name[..at],
        None => name,
    };
    if name.is_empty() {
        return None;
    }
    let dir = match base.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Some((dir, name.to_string()))
}

/// The CPU numbers of the existing `NAME.blktrace.N` files in `dir`.
fn existing_cpus(dir: &Path, name: &str) -> io::Result<Vec<u32>> {
    let prefix = format!("{name}{INFIX}");
    let mut cpus = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let file = entry.file_name();
        let Some(rest) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        // Only plain decimal numbers: `x.blktrace.1.bak` is not part of the trace.
        if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(cpu) = rest.parse::<u32>() {
                cpus.push(cpu);
            }
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Writes records into per-CPU blktrace files as they arrive.
///
/// Records of the ftrace `blk` tracer all carry sequence 0, and blkparse
/// counts gaps in a CPU's sequence numbers as lost events ("Skips"), so
/// each CPU's records are numbered again from 1. Notify records are left
/// at 0: blkparse does not look at their numbers.
pub struct TraceWriter {
    base: PathBuf,
    files: Vec<Option<BufWriter<File>>>,
    next_seq: Vec<u32>,
}

impl TraceWriter {
    /// Starts a trace named `basename` (a path: `dir/name` writes
    /// `dir/name.blktrace.N`). An older trace of that name is removed first,
    /// as blktrace overwrites its own: a stale higher-numbered CPU file
    /// would otherwise be read as part of the new trace.
    pub fn create(basename: &Path) -> io::Result<TraceWriter> {
        let (dir, name) = split_base(basename).ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("{}: not a trace base name (expected DIR/NAME)", basename.display()))
        })?;
        if !dir.is_dir() {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("{}: no such directory for the trace files", dir.display())));
        }
        let base = dir.join(&name);
        for cpu in existing_cpus(&dir, &name)? {
            let path = cpu_path(&base, cpu);
            std::fs::remove_file(&path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: cannot replace the old trace file: {e}", path.display())))?;
        }
        Ok(TraceWriter { base, files: Vec::new(), next_seq: Vec::new() })
    }

    fn file(&mut self, cpu: usize) -> io::Result<&mut BufWriter<File>> {
        if cpu >= self.files.len() {
            self.files.resize_with(cpu + 1, || None);
            self.next_seq.resize(cpu + 1, 1);
        }
        if self.files[cpu].is_none() {
            let path = cpu_path(&self.base, cpu as u32);
            let f = File::create(&path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            self.files[cpu] = Some(BufWriter::with_capacity(256 * 1024, f));
        }
        Ok(self.files[cpu].as_mut().expect("opened just above"))
    }

    /// Flushes every file and returns them all, CPU 0 upward. CPUs below the
    /// highest that saw no record get an empty file: blkparse stops looking
    /// at the first missing number, and skips empty files.
    pub fn finish(mut self) -> io::Result<Vec<PathBuf>> {
        if self.files.is_empty() {
            self.file(0)?;
        }
        let mut out = Vec::with_capacity(self.files.len());
        for cpu in 0..self.files.len() {
            let path = cpu_path(&self.base, cpu as u32);
            match self.files[cpu].take() {
                Some(mut w) => {
                    w.flush().map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
                    w.get_ref().sync_data().map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
                }
                None => {
                    File::create(&path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
                }
            }
            out.push(path);
        }
        Ok(out)
    }
}

impl RecordSink for TraceWriter {
    fn close(self: Box<Self>) -> io::Result<Vec<PathBuf>> {
        self.finish()
    }

    fn push(&mut self, rec: &Record<'_>) -> io::Result<()> {
        let cpu = rec.h.cpu as usize;
        let mut h = rec.h;
        self.file(cpu)?;
        if h.category() & cat::NOTIFY == 0 {
            h.sequence = self.next_seq[cpu];
            self.next_seq[cpu] = self.next_seq[cpu].wrapping_add(1);
        } else {
            h.sequence = 0;
        }
        let w = self.files[cpu].as_mut().expect("opened by file()");
        w.write_all(&h.encode())?;
        w.write_all(rec.pdu)
    }
}

/// A trace file set that cannot be used, and why.
#[derive(Debug)]
pub enum TraceFileError {
    /// No `BASENAME.blktrace.N` exists.
    NoFiles {
        basename: PathBuf,
    },
    Io {
        path: PathBuf,
        error: io::Error,
    },
    /// A file is not a run of records; `offset` is the byte in that file.
    Format {
        path: PathBuf,
        offset: u64,
        what: String,
    },
}

impl std::fmt::Display for TraceFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TraceFileError::NoFiles { basename } => {
                write!(
                    f,
                    "{}: no trace files (expected {}{INFIX}0, {}{INFIX}1, ...)",
                    basename.display(),
                    basename.display(),
                    basename.display()
                )
            }
            TraceFileError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            TraceFileError::Format { path, offset, what } => write!(f, "{}: at byte {offset}: expected {what}", path.display()),
        }
    }
}

impl std::error::Error for TraceFileError {}

/// One CPU's records, checked.
struct CpuData {
    cpu: u32,
    path: PathBuf,
    bytes: Vec<u8>,
    records: u64,
}

/// A whole trace in memory: every CPU's records, each file checked.
pub struct Trace {
    name: String,
    cpus: Vec<CpuData>,
}

/// Checks one CPU's bytes: every record whole and of that CPU.
fn check(path: &Path, cpu: u32, bytes: &[u8]) -> Result<u64, TraceFileError> {
    let mut n = 0u64;
    let mut offset = 0u64;
    for r in Records::new(bytes, 0) {
        let r = r.map_err(|e| TraceFileError::Format { path: path.to_path_buf(), offset: e.offset, what: e.what })?;
        if u32::from(r.h.cpu) != cpu {
            return Err(TraceFileError::Format {
                path: path.to_path_buf(),
                offset,
                what: format!("a record of CPU {cpu} (the file's number), found cpu {}", r.h.cpu),
            });
        }
        offset += r.h.record_len() as u64;
        n += 1;
    }
    Ok(n)
}

/// Reads the trace `basename` (`NAME` or `DIR/NAME`; `NAME.blktrace.N`
/// names the same set): every `NAME.blktrace.N` file, each checked record
/// by record.
pub fn read_trace(basename: &Path) -> Result<Trace, TraceFileError> {
    let no_files = || TraceFileError::NoFiles { basename: basename.to_path_buf() };
    let (dir, name) = split_base(basename).ok_or_else(no_files)?;
    let cpus = match existing_cpus(&dir, &name) {
        Ok(c) => c,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(no_files()),
        Err(error) => return Err(TraceFileError::Io { path: dir, error }),
    };
    if cpus.is_empty() {
        return Err(no_files());
    }
    let base = dir.join(&name);
    let mut data = Vec::with_capacity(cpus.len());
    for cpu in cpus {
        let path = cpu_path(&base, cpu);
        let meta = std::fs::metadata(&path).map_err(|error| TraceFileError::Io { path: path.clone(), error })?;
        if !meta.is_file() {
            return Err(TraceFileError::Io { path, error: io::Error::new(io::ErrorKind::InvalidInput, "not a regular file") });
        }
        let bytes = std::fs::read(&path).map_err(|error| TraceFileError::Io { path: path.clone(), error })?;
        let records = check(&path, cpu, &bytes)?;
        data.push(CpuData { cpu, path, bytes, records });
    }
    Ok(Trace { name, cpus: data })
}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Trace {} {:?}", self.name, self.records_per_cpu())
    }
}

impl Trace {
    /// A trace from per-CPU byte buffers, checked as files are; `name`
    /// stands for the file names in errors (`NAME.blktrace.CPU`).
    pub fn from_buffers(name: &str, buffers: Vec<(u32, Vec<u8>)>) -> Result<Trace, TraceFileError> {
        let mut buffers = buffers;
        buffers.sort_by_key(|(cpu, _)| *cpu);
        let mut cpus = Vec::with_capacity(buffers.len());
        for (cpu, bytes) in buffers {
            let path = PathBuf::from(format!("{name}{INFIX}{cpu}"));
            let records = check(&path, cpu, &bytes)?;
            cpus.push(CpuData { cpu, path, bytes, records });
        }
        Ok(Trace { name: name.to_string(), cpus })
    }

    /// The base name's file-name part: what blkparse calls the device when
    /// given these files.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The files read, CPU 0 upward.
    pub fn files(&self) -> impl Iterator<Item = &Path> {
        self.cpus.iter().map(|c| c.path.as_path())
    }

    /// `(cpu, records)` for every CPU file, empty ones included.
    pub fn records_per_cpu(&self) -> Vec<(u32, u64)> {
        self.cpus.iter().map(|c| (c.cpu, c.records)).collect()
    }

    pub fn total_records(&self) -> u64 {
        self.cpus.iter().map(|c| c.records).sum()
    }

    /// One CPU's records in file order.
    pub fn cpu_records(&self, cpu: u32) -> impl Iterator<Item = Record<'_>> {
        let bytes: &[u8] = self.cpus.iter().find(|c| c.cpu == cpu).map(|c| c.bytes.as_slice()).unwrap_or(&[]);
        // Checked when loaded, so nothing is dropped here.
        Records::new(bytes, 0).map_while(Result::ok)
    }

    /// Every record of every CPU in time order: each CPU's records keep
    /// their file order, the next record is the CPU head with the smallest
    /// time, ties going to the lower CPU and then the lower sequence.
    pub fn merged(&self) -> Merged<'_> {
        let mut m = Merged { heads: Vec::with_capacity(self.cpus.len()), heap: BinaryHeap::with_capacity(self.cpus.len()) };
        for c in &self.cpus {
            let mut it = Records::new(&c.bytes, 0);
            if let Some(Ok(r)) = it.next() {
                m.heap.push(Key::of(&r, m.heads.len()));
                m.heads.push((it, Some(r)));
            }
        }
        m
    }
}

/// The merge order: smallest time, then CPU, then sequence; `BinaryHeap`
/// is a max-heap, so the comparison is reversed.
#[derive(PartialEq, Eq)]
struct Key {
    time: u64,
    cpu: u16,
    seq: u32,
    slot: usize,
}

impl Key {
    fn of(r: &Record<'_>, slot: usize) -> Key {
        Key { time: r.h.time, cpu: r.h.cpu, seq: r.h.sequence, slot }
    }
}

impl Ord for Key {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.time, o.cpu, o.seq, o.slot).cmp(&(self.time, self.cpu, self.seq, self.slot))
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// See `Trace::merged`.
pub struct Merged<'a> {
    heads: Vec<(Records<'a>, Option<Record<'a>>)>,
    heap: BinaryHeap<Key>,
}

impl<'a> Iterator for Merged<'a> {
    type Item = Record<'a>;

    fn next(&mut self) -> Option<Record<'a>> {
        let key = self.heap.pop()?;
        let (it, head) = &mut self.heads[key.slot];
        let out = head.take()?;
        if let Some(Ok(r)) = it.next() {
            self.heap.push(Key::of(&r, key.slot));
            *head = Some(r);
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::record::{act, Header, MAGIC, VERSION};
    use super::*;

    fn rec(cpu: u16, time: u64, action: u16, category: u16) -> Header {
        Header {
            magic: MAGIC | VERSION,
            time,
            sector: time,
            bytes: 4096,
            action: (category as u32) << 16 | action as u32,
            pid: 7,
            device: 8 << 20,
            cpu,
            ..Header::default()
        }
    }

    fn write(dir: &Path, name: &str, recs: &[Header]) -> Vec<PathBuf> {
        let mut w = TraceWriter::create(&dir.join(name)).unwrap();
        for h in recs {
            w.push(&Record { h: *h, pdu: b"" }).unwrap();
        }
        w.finish().unwrap()
    }

    #[test]
    fn writes_per_cpu_renumbers_and_merges_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        let recs = [
            rec(2, 30, act::QUEUE, cat::QUEUE | cat::WRITE),
            rec(0, 10, act::QUEUE, cat::QUEUE | cat::WRITE),
            rec(2, 20, act::ISSUE, cat::ISSUE | cat::WRITE),
            rec(0, 20, act::ISSUE, cat::ISSUE | cat::WRITE),
            rec(0, 5, act::COMPLETE, cat::COMPLETE | cat::WRITE),
        ];
        let files = write(dir.path(), "t", &recs);
        assert_eq!(files.len(), 3, "cpu 1 gets an empty file so blkparse reaches cpu 2");
        assert_eq!(std::fs::metadata(&files[1]).unwrap().len(), 0);

        let t = read_trace(&dir.path().join("t")).unwrap();
        assert_eq!(t.records_per_cpu(), vec![(0, 3), (1, 0), (2, 2)]);
        let seqs: Vec<u32> = t.cpu_records(0).map(|r| r.h.sequence).collect();
        assert_eq!(seqs, vec![1, 2, 3]);
        // Each CPU keeps its file order: cpu 0's 5 waits behind its 20, cpu 2's 20 behind its 30.
        let order: Vec<(u16, u64)> = t.merged().map(|r| (r.h.cpu, r.h.time)).collect();
        assert_eq!(order, vec![(0, 10), (0, 20), (0, 5), (2, 30), (2, 20)]);
        // A name given as one of its files means the same trace.
        let again = read_trace(&dir.path().join("t.blktrace.2")).unwrap();
        assert_eq!(again.total_records(), 5);
    }

    #[test]
    fn ties_go_to_the_lower_cpu() {
        let dir = tempfile::tempdir().unwrap();
        let recs = [rec(1, 10, act::QUEUE, cat::QUEUE), rec(0, 10, act::QUEUE, cat::QUEUE), rec(1, 11, act::QUEUE, cat::QUEUE)];
        write(dir.path(), "x", &recs);
        let t = read_trace(&dir.path().join("x")).unwrap();
        let order: Vec<u16> = t.merged().map(|r| r.h.cpu).collect();
        assert_eq!(order, vec![0, 1, 1]);
    }

    #[test]
    fn create_replaces_an_older_trace() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "r", &[rec(3, 1, act::QUEUE, cat::QUEUE)]);
        write(dir.path(), "r", &[rec(0, 1, act::QUEUE, cat::QUEUE)]);
        let t = read_trace(&dir.path().join("r")).unwrap();
        assert_eq!(t.records_per_cpu(), vec![(0, 1)]);
    }

    #[test]
    fn errors_name_the_file_and_byte() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read_trace(&dir.path().join("none")).unwrap_err();
        assert!(matches!(missing, TraceFileError::NoFiles { .. }), "{missing}");
        assert!(missing.to_string().contains("none"), "{missing}");

        let recs = [rec(0, 1, act::QUEUE, cat::QUEUE), rec(0, 2, act::QUEUE, cat::QUEUE)];
        let files = write(dir.path(), "b", &recs);
        let good = std::fs::read(&files[0]).unwrap();

        // Truncated in the second record's header.
        std::fs::write(&files[0], &good[..70]).unwrap();
        let e = read_trace(&dir.path().join("b")).unwrap_err().to_string();
        assert!(e.contains("b.blktrace.0") && e.contains("at byte 48") && e.contains("truncated"), "{e}");

        // Wrong magic in the second record.
        let mut bad = good.clone();
        bad[51] ^= 0xff;
        std::fs::write(&files[0], &bad).unwrap();
        let e = read_trace(&dir.path().join("b")).unwrap_err().to_string();
        assert!(e.contains("at byte 48") && e.contains("magic"), "{e}");

        // A huge pdu_len in the first.
        let mut bad = good.clone();
        bad[46..48].copy_from_slice(&60000u16.to_le_bytes());
        std::fs::write(&files[0], &bad).unwrap();
        let e = read_trace(&dir.path().join("b")).unwrap_err().to_string();
        assert!(e.contains("at byte 0") && e.contains("pdu_len 60000"), "{e}");

        // A record of another CPU in this CPU's file.
        let mut bad = good.clone();
        bad[48 + 40] = 5;
        std::fs::write(&files[0], &bad).unwrap();
        let e = read_trace(&dir.path().join("b")).unwrap_err().to_string();
        assert!(e.contains("at byte 48") && e.contains("CPU 0") && e.contains("cpu 5"), "{e}");
    }
}
