//! fio's per-job logs (bw, lat/clat/slat, iops, clat_hist) in fio 3.33's
//! file names and line formats, so fio's tools read them.
//!
//! The measurement path only copies one fixed-size sample per I/O into a
//! preallocated chunk; a full chunk goes to this worker's writer thread,
//! which averages, bins, formats and writes, then hands the chunk back
//! for reuse. Lines of the per-I/O logs:
//! `time_ms, value, ddir, bs[, offset], prio`; of the histogram log:
//! `time_ms, ddir, bs, bin0, bin1, ...` (counts since the line before).

use crate::environment::safety::create_output;
use crate::measure::fio_bins;
use crate::model::job::JobSpec;
use crate::model::logs::LogSpec;
use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

/// One completed read or write, as the logs need it. Times in ns from the
/// start of the measured window.
#[derive(Clone, Copy, Default)]
pub struct Sample {
    pub t_ns: u64,
    pub lat: u64,
    pub clat: u64,
    pub slat: u64,
    pub offset: u64,
    pub len: u32,
    pub dir: u8,
    /// The ioprio value the I/O ran with (fits in the padding: still 48 bytes).
    pub prio: u16,
}

/// Samples per chunk handed to the writer: 8192 × 48 bytes.
const CHUNK: usize = 8192;
/// Chunks one worker may have allocated (about 100 MB): a writer that
/// cannot keep up (millions of I/Os per second, each a line in several
/// files) then holds the I/O back, as fio's inline logging does, rather
/// than let memory grow with the run.
const MAX_CHUNKS: usize = 256;
/// Bytes of formatted text gathered per file before one `write` (always
/// whole lines, so clones sharing a file with per_job_logs=0 never split
/// one another's lines).
const FLUSH_AT: usize = 256 * 1024;

/// The file names a clone writes (`LogSpec::files`).
pub fn file_names(spec: &JobSpec, thread_number: u32) -> Vec<PathBuf> {
    spec.logs.files(&spec.name, thread_number).into_iter().map(|(_, p)| p).collect()
}

/// Empty the files clones share (per_job_logs=0) once, before any of them
/// appends to it.
pub fn truncate_shared(spec: &JobSpec) -> Result<(), String> {
    if spec.logs.per_job_logs || !spec.logs.any() {
        return Ok(());
    }
    for (option, p) in spec.logs.files(&spec.name, 0) {
        create_output(option, &p, false).map_err(|e| format!("log file: {e}"))?;
    }
    Ok(())
}

/// The measurement side: the chunk being filled and the way to the writer.
pub struct Recorder {
    chunk: Vec<Sample>,
    full: Sender<Vec<Sample>>,
    spare: Receiver<Vec<Sample>>,
    /// Chunks allocated so far (the one being filled included).
    chunks: usize,
    writer: JoinHandle<Result<(), String>>,
}

impl Recorder {
    /// Open the clone's log files (an error names the file) and start the
    /// writer; `None` when the job writes no log.
    pub fn start(spec: &JobSpec, thread_number: u32, is_async: bool) -> Result<Option<Recorder>, String> {
        if !spec.logs.any() {
            return Ok(None);
        }
        let mut files = Vec::new();
        for (option, p) in spec.logs.files(&spec.name, thread_number) {
            let f = create_output(option, &p, !spec.logs.per_job_logs).map_err(|e| format!("log file: {e}"))?;
            files.push(Out { path: p, file: f, text: String::with_capacity(FLUSH_AT + 4096) });
        }
        let (full, full_rx) = channel::<Vec<Sample>>();
        let (spare_tx, spare) = channel::<Vec<Sample>>();
        let _ = spare_tx.send(Vec::with_capacity(CHUNK));
        let logs = spec.logs.clone();
        let used = [spec.rw.reads(), spec.rw.writes()];
        let writer = std::thread::Builder::new()
            .name(format!("fsb-log-{thread_number}"))
            .spawn(move || {
                let mut w = Writer::new(logs, files, used, is_async);
                let mut last_t = 0;
                for mut chunk in full_rx {
                    if let Some(s) = chunk.last() {
                        last_t = s.t_ns;
                    }
                    w.take(&chunk)?;
                    chunk.clear();
                    let _ = spare_tx.send(chunk);
                }
                w.finish(last_t)
            })
            .map_err(|e| format!("cannot start the log writer thread: {e}"))?;
        Ok(Some(Recorder { chunk: Vec::with_capacity(CHUNK), full, spare, chunks: 2, writer }))
    }

    #[inline]
    pub fn push(&mut self, s: Sample) {
        self.chunk.push(s);
        if self.chunk.len() == CHUNK {
            self.hand_over();
        }
    }

    #[cold]
    fn hand_over(&mut self) {
        // A writer that lags gets a new chunk rather than stalling the I/O,
        // up to MAX_CHUNKS.
        let next = match self.spare.try_recv() {
            Ok(c) => c,
            Err(_) if self.chunks < MAX_CHUNKS => {
                self.chunks += 1;
                Vec::with_capacity(CHUNK)
            }
            Err(_) => self.spare.recv().unwrap_or_else(|_| Vec::with_capacity(CHUNK)),
        };
        let full = std::mem::replace(&mut self.chunk, next);
        let _ = self.full.send(full);
    }

    /// Hand over what is left with the end of the measured window (ns),
    /// wait for the writer, and report a write error.
    pub fn finish(mut self, end_ns: u64) -> Result<(), String> {
        // A last sample that only carries the end time: the writer closes
        // its windows there and does not log it.
        self.chunk.push(Sample { t_ns: end_ns, dir: END, ..Sample::default() });
        let Recorder { chunk, full, writer, .. } = self;
        let _ = full.send(chunk);
        drop(full);
        writer.join().unwrap_or_else(|_| Err("the log writer thread panicked".into()))
    }
}

/// `dir` of the marker sample that ends the stream.
const END: u8 = u8::MAX;

struct Out {
    path: PathBuf,
    file: File,
    text: String,
}

impl Out {
    fn flush_if_full(&mut self) -> Result<(), String> {
        if self.text.len() >= FLUSH_AT {
            self.flush()?;
        }
        Ok(())
    }
    fn flush(&mut self) -> Result<(), String> {
        if !self.text.is_empty() {
            self.file.write_all(self.text.as_bytes()).map_err(|e| format!("log file {}: {e}", self.path.display()))?;
            self.text.clear();
        }
        Ok(())
    }
}

/// A log window being averaged (log_avg_msec), per direction.
#[derive(Clone, Copy, Default)]
struct Window {
    ios: u64,
    bytes: u64,
    lat_sum: [u128; 3],
    lat_max: [u64; 3],
}

struct Writer {
    spec: LogSpec,
    files: Vec<Out>,
    used: [bool; 2],
    /// Index in `files` of each log, in the order `file_names` opens them.
    bw: Option<usize>,
    lat: Option<usize>,
    iops: Option<usize>,
    hist: Option<usize>,
    slat: bool,
    /// End of the current averaging window, in ms.
    window_end: u64,
    windows: [Window; 2],
    /// Histogram counts since each direction's last line, and its time.
    bins: [Vec<u64>; 2],
    hist_last: [u64; 2],
    hist_bs: [u32; 2],
}

impl Writer {
    fn new(spec: LogSpec, files: Vec<Out>, used: [bool; 2], is_async: bool) -> Writer {
        let mut i = 0;
        let mut next = |present: bool, n: usize| {
            present.then(|| {
                let at = i;
                i += n;
                at
            })
        };
        let bw = next(spec.bw.is_some(), 1);
        let lat = next(spec.lat.is_some(), 3);
        let iops = next(spec.iops.is_some(), 1);
        let hist = next(spec.hist.is_some(), 1);
        let nbins = if hist.is_some() { fio_bins::NR } else { 0 };
        Writer {
            window_end: u64::from(spec.avg_msec),
            spec,
            files,
            used,
            bw,
            lat,
            iops,
            hist,
            slat: is_async,
            windows: [Window::default(); 2],
            bins: [vec![0; nbins], vec![0; nbins]],
            hist_last: [0; 2],
            hist_bs: [0; 2],
        }
    }

    fn take(&mut self, samples: &[Sample]) -> Result<(), String> {
        for s in samples {
            if s.dir == END {
                continue;
            }
            let t_ms = s.t_ns / 1_000_000;
            if self.spec.avg_msec == 0 {
                self.per_io(s, t_ms);
            } else {
                self.close_windows(t_ms);
                self.average(s);
            }
            if self.hist.is_some() {
                self.bin(s, t_ms);
            }
        }
        for f in &mut self.files {
            f.flush_if_full()?;
        }
        Ok(())
    }

    /// One line per I/O and log: `time, value, ddir, bs[, offset], prio`.
    fn per_io(&mut self, s: &Sample, t_ms: u64) {
        let d = s.dir as usize;
        let (len, offset) = (u64::from(s.len), s.offset);
        if let Some(i) = self.bw {
            // Bytes per ms of the I/O's completion time: fio's per-I/O bandwidth.
            let bw = (len * 1_000_000).checked_div(s.clat).unwrap_or(0);
            self.line(i, t_ms, bw, d, len, offset, s.prio);
        }
        if let Some(i) = self.lat {
            self.line(i, t_ms, s.lat, d, len, offset, s.prio);
            self.line(i + 1, t_ms, s.clat, d, len, offset, s.prio);
            if self.slat {
                self.line(i + 2, t_ms, s.slat, d, len, offset, s.prio);
            }
        }
        if let Some(i) = self.iops {
            self.line(i, t_ms, 1, d, len, offset, s.prio);
        }
    }

    /// `prio` is the I/O's ioprio value; fio 3.33 writes it as `0x%04x`
    /// with log_prio=1, else only whether its class is realtime (1) or not
    /// (0). Averaged lines carry priority 0, as in fio.
    #[allow(clippy::too_many_arguments)]
    fn line(&mut self, file: usize, t: u64, value: u64, dir: usize, bs: u64, offset: u64, prio: u16) {
        use std::fmt::Write as _;
        let text = &mut self.files[file].text;
        let _ = if self.spec.offset {
            write!(text, "{t}, {value}, {dir}, {bs}, {offset}, ")
        } else {
            write!(text, "{t}, {value}, {dir}, {bs}, ")
        };
        let _ = if self.spec.prio { writeln!(text, "0x{prio:04x}") } else { writeln!(text, "{}", u8::from(prio >> 13 == 1)) };
    }

    fn average(&mut self, s: &Sample) {
        let w = &mut self.windows[s.dir as usize];
        w.ios += 1;
        w.bytes += u64::from(s.len);
        for (k, v) in [s.lat, s.clat, s.slat].into_iter().enumerate() {
            w.lat_sum[k] += u128::from(v);
            w.lat_max[k] = w.lat_max[k].max(v);
        }
    }

    /// Write every averaging window that ended by `t_ms`: bandwidth (KiB/s)
    /// and IOPS of each direction the job does, and the mean (or maximum)
    /// latency of a direction that completed I/O in it; bs and offset are 0.
    fn close_windows(&mut self, t_ms: u64) {
        let avg = u64::from(self.spec.avg_msec);
        while t_ms >= self.window_end {
            let end = self.window_end;
            for d in 0..2 {
                let w = std::mem::take(&mut self.windows[d]);
                if !self.used[d] {
                    continue;
                }
                if let Some(i) = self.bw {
                    self.line(i, end, w.bytes * 1000 / avg / 1024, d, 0, 0, 0);
                }
                if let Some(i) = self.iops {
                    self.line(i, end, w.ios * 1000 / avg, d, 0, 0, 0);
                }
                if let (Some(i), true) = (self.lat, w.ios > 0) {
                    for k in 0..3 {
                        if k == 2 && !self.slat {
                            continue;
                        }
                        let v = if self.spec.max_value { w.lat_max[k] } else { (w.lat_sum[k] / u128::from(w.ios)) as u64 };
                        self.line(i + k, end, v, d, 0, 0, 0);
                    }
                }
            }
            self.window_end += avg;
        }
    }

    /// Count the completion latency in fio's bins; every log_hist_msec a
    /// direction's counts since its last line become a line (taken, as fio
    /// does, when an I/O completes after the interval has passed).
    fn bin(&mut self, s: &Sample, t_ms: u64) {
        let d = s.dir as usize;
        self.bins[d][fio_bins::index(s.clat)] += 1;
        self.hist_bs[d] = s.len;
        if self.spec.hist_msec > 0 && t_ms - self.hist_last[d] >= u64::from(self.spec.hist_msec) {
            self.hist_line(d, t_ms);
        }
    }

    fn hist_line(&mut self, d: usize, t_ms: u64) {
        use std::fmt::Write as _;
        let Some(i) = self.hist else { return };
        let group = 1usize << self.spec.hist_coarseness;
        let text = &mut self.files[i].text;
        let _ = write!(text, "{t_ms}, {d}, {}", self.hist_bs[d]);
        for c in self.bins[d].chunks(group) {
            let _ = write!(text, ", {}", c.iter().sum::<u64>());
        }
        text.push('\n');
        self.bins[d].iter_mut().for_each(|b| *b = 0);
        self.hist_last[d] = t_ms;
    }

    /// At the end of the measured window: the windows it completed and the
    /// histogram counts not yet written (so the histogram log holds every
    /// I/O; fio leaves the last partial interval out).
    fn finish(mut self, end_ns: u64) -> Result<(), String> {
        let end_ms = end_ns / 1_000_000;
        if self.spec.avg_msec > 0 {
            self.close_windows(end_ms);
        }
        if self.hist.is_some() && self.spec.hist_msec > 0 {
            for d in 0..2 {
                if self.bins[d].iter().any(|&b| b > 0) {
                    self.hist_line(d, end_ms.max(self.hist_last[d]));
                }
            }
        }
        for f in &mut self.files {
            f.flush()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::logs::LogName;

    fn spec() -> JobSpec {
        let mut s = JobSpec::new("j");
        s.rw = crate::model::job::RwKind::RandRw;
        s
    }

    #[test]
    fn names_follow_fio() {
        let mut s = spec();
        s.logs.bw = Some(LogName::JobName);
        s.logs.lat = Some(LogName::Prefix("x".into()));
        s.logs.hist = Some(LogName::Prefix("h".into()));
        let names: Vec<String> = file_names(&s, 3).iter().map(|p| p.display().to_string()).collect();
        assert_eq!(names, ["j_bw.3.log", "x_lat.3.log", "x_clat.3.log", "x_slat.3.log", "h_clat_hist.3.log"]);
        s.logs.per_job_logs = false;
        assert_eq!(file_names(&s, 3)[0], PathBuf::from("j_bw.log"));
    }

    fn run(logs: LogSpec, samples: &[Sample], end_ns: u64) -> Vec<String> {
        let n = file_names(&JobSpec { logs: logs.clone(), ..spec() }, 1).len();
        let dir = tempfile::tempdir().unwrap();
        let files: Vec<Out> = (0..n)
            .map(|i| {
                let path = dir.path().join(format!("{i}"));
                Out { file: File::create(&path).unwrap(), path, text: String::new() }
            })
            .collect();
        let paths: Vec<PathBuf> = files.iter().map(|f| f.path.clone()).collect();
        let mut w = Writer::new(logs, files, [true, true], false);
        w.take(samples).unwrap();
        w.finish(end_ns).unwrap();
        paths.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
    }

    fn io(t_ms: u64, clat: u64, dir: u8) -> Sample {
        Sample { t_ns: t_ms * 1_000_000 + 5, lat: clat + 100, clat, slat: 0, offset: 8192, len: 4096, dir, prio: 0 }
    }

    #[test]
    fn per_io_lines() {
        let logs = LogSpec { bw: Some(LogName::JobName), lat: Some(LogName::JobName), offset: true, ..LogSpec::default() };
        let out = run(logs, &[io(12, 12_286_165, 0), io(13, 1_000_000, 1)], 20_000_000);
        // fio: 4096 bytes in 12.286165 ms is logged as 333.
        assert_eq!(out[0], "12, 333, 0, 4096, 8192, 0\n13, 4096, 1, 4096, 8192, 0\n");
        assert_eq!(out[1], "12, 12286265, 0, 4096, 8192, 0\n13, 1000100, 1, 4096, 8192, 0\n");
        assert_eq!(out[2], "12, 12286165, 0, 4096, 8192, 0\n13, 1000000, 1, 4096, 8192, 0\n");
        assert_eq!(out[3], "", "a synchronous engine has no slat, as in fio");
    }

    #[test]
    fn averaged_windows() {
        let logs = LogSpec {
            bw: Some(LogName::JobName),
            lat: Some(LogName::JobName),
            iops: Some(LogName::JobName),
            avg_msec: 200,
            ..LogSpec::default()
        };
        // Five reads in the first window, one write in the second.
        let mut s: Vec<Sample> = (0..5).map(|k| io(10 + k, 1000 * (k + 1), 0)).collect();
        s.push(io(250, 7000, 1));
        let out = run(logs.clone(), &s, 450_000_000);
        assert_eq!(out[0], "200, 100, 0, 0, 0\n200, 0, 1, 0, 0\n400, 0, 0, 0, 0\n400, 20, 1, 0, 0\n");
        assert_eq!(out[4], "200, 25, 0, 0, 0\n200, 0, 1, 0, 0\n400, 0, 0, 0, 0\n400, 5, 1, 0, 0\n");
        assert_eq!(out[2], "200, 3000, 0, 0, 0\n400, 7000, 1, 0, 0\n");
        let out = run(LogSpec { max_value: true, ..logs }, &s, 450_000_000);
        assert_eq!(out[2], "200, 5000, 0, 0, 0\n400, 7000, 1, 0, 0\n");
    }

    #[test]
    fn histogram_lines_hold_the_counts_since_the_last_line() {
        let logs = LogSpec { hist: Some(LogName::JobName), hist_msec: 100, ..LogSpec::default() };
        let s = [io(10, 100, 0), io(50, 100, 0), io(120, 5000, 0), io(130, 100, 0)];
        let out = run(logs.clone(), &s, 300_000_000);
        let lines: Vec<Vec<u64>> = out[0].lines().map(|l| l.split(", ").map(|x| x.parse().unwrap()).collect()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), 3 + fio_bins::NR);
        assert_eq!(&lines[0][..3], &[120, 0, 4096]);
        assert_eq!(lines[0][3 + 100], 2);
        assert_eq!(lines[0][3 + fio_bins::index(5000)], 1);
        assert_eq!(lines[1][..3], [300, 0, 4096]);
        assert_eq!(lines[1][3..].iter().sum::<u64>(), 1);
        let out = run(LogSpec { hist_coarseness: 2, ..logs }, &s, 300_000_000);
        let first: Vec<u64> = out[0].lines().next().unwrap().split(", ").map(|x| x.parse().unwrap()).collect();
        assert_eq!(first.len(), 3 + fio_bins::NR / 4);
        assert_eq!(first[3 + 25], 2, "bins 100..103 are column 25");
    }
}
