//! blkparse's end-of-run summary as blkparse 1.2.0 prints it, byte for
//! byte, from the summary `observe::trace::summary` computes.
//!
//! blkparse prints its numbers with `%'8Lu` after asking for the `en_US`
//! locale: where that locale exists the digits are grouped with commas,
//! where it does not (most systems have only `en_US.UTF-8`, which is a
//! different name) they are not. `Grouping` picks which of the two to
//! reproduce. What blkparse prints after the summary ("Trace started at",
//! the "Input file ... added" lines) is not part of it.

use crate::result::trace::summary::{DeviceSummary, Flow, IoStats, Mode, Summary};
use crate::units::thousands;
use std::fmt::Write;

/// Whether numbers get thousands separators (blkparse with the `en_US`
/// locale installed) or not (without it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grouping {
    Plain,
    Thousands,
}

impl Grouping {
    /// What blkparse on this machine does: whether a locale named
    /// exactly `en_US` loads (`LOCPATH` counts, as it does for blkparse).
    pub fn of_this_machine() -> Grouping {
        if crate::host::locale::has_numeric_locale("en_US") {
            Grouping::Thousands
        } else {
            Grouping::Plain
        }
    }

    fn num(self, n: u64) -> String {
        match self {
            Grouping::Plain => n.to_string(),
            Grouping::Thousands => thousands(n),
        }
    }
}

/// blkparse's `size_cnv`: above 10^6 a value is divided by 1000 and gets
/// the next suffix (K, M, G, P; sizes start at K), right-aligned in 8.
fn size(g: Grouping, mut n: u64, kib: bool) -> String {
    const SUFFIX: [&str; 5] = ["", "K", "M", "G", "P"];
    let mut i = usize::from(kib);
    while n > 1_000_000 && i < SUFFIX.len() - 1 {
        i += 1;
        n /= 1000;
    }
    format!("{:>8}{}", g.num(n), SUFFIX[i])
}

fn flow_pair(out: &mut String, g: Grouping, left: &str, right: &str, r: &Flow, w: &Flow) {
    let _ = writeln!(
        out,
        " {left} {}, {}iB\t {right} {}, {}iB",
        size(g, r.count, false),
        size(g, r.shown_kib(), true),
        size(g, w.count, false),
        size(g, w.shown_kib(), true)
    );
}

fn count_pair(out: &mut String, g: Grouping, left: &str, right: &str, r: u64, w: u64) {
    let _ = writeln!(out, " {left} {}\t\t {right} {}", size(g, r, false), size(g, w, false));
}

/// One block: its header line and counters; `depth` only in CPU blocks.
fn block(out: &mut String, g: Grouping, header: &str, s: &IoStats, depth: Option<(u64, u64)>) {
    let _ = writeln!(out, "{header}");
    flow_pair(out, g, "Reads Queued:   ", "Writes Queued:   ", &s.queued.read, &s.queued.write);
    flow_pair(out, g, "Read Dispatches:", "Write Dispatches:", &s.dispatched.read, &s.dispatched.write);
    count_pair(out, g, "Reads Requeued: ", "Writes Requeued: ", s.requeued.read, s.requeued.write);
    flow_pair(out, g, "Reads Completed:", "Writes Completed:", &s.completed.read, &s.completed.write);
    flow_pair(out, g, "Read Merges:    ", "Write Merges:    ", &s.merged.read, &s.merged.write);
    if let Some((r, w)) = depth {
        // blkparse keeps depth in 32 bits.
        let _ = writeln!(out, " Read depth:      {:>8}{:8}\t Write depth:      {:>8}", g.num(r as u32 as u64), ' ', g.num(w as u32 as u64));
    }
    if s.has_pc() {
        flow_pair(out, g, "PC Reads Queued:", "PC Writes Queued:", &s.pc_queued.read, &s.pc_queued.write);
        flow_pair(out, g, "PC Read Disp.:  ", "PC Write Disp.:  ", &s.pc_dispatched.read, &s.pc_dispatched.write);
        count_pair(out, g, "PC Reads Req.:  ", "PC Writes Req.:  ", s.pc_requeued.read, s.pc_requeued.write);
        count_pair(out, g, "PC Reads Compl.:", "PC Writes Compl.:", s.pc_completed.read, s.pc_completed.write);
    }
    let _ = writeln!(out, " IO unplugs:      {:>8}{:8}\t Timer unplugs:    {:>8}", g.num(s.io_unplugs), ' ', g.num(s.timer_unplugs));
}

/// blkparse formats names into fixed buffers: the device name into 32
/// bytes (31 characters) for block headers, the header into 48 (46 used).
fn clip(s: &str, max: usize) -> &str {
    match s.char_indices().nth(max) {
        Some((at, _)) => &s[..at],
        None => s,
    }
}

fn device(out: &mut String, g: Grouping, d: &DeviceSummary, files: bool) {
    let short = clip(&d.label, 31);
    for c in &d.cpus {
        let header = format!("CPU{} ({short}):", c.cpu);
        block(out, g, clip(&header, 46), &c.stats, Some((d.depth.read, d.depth.write)));
    }
    if d.cpus.len() > 1 {
        out.push('\n');
        let header = format!("Total ({short}):");
        block(out, g, clip(&header, 46), &d.total, None);
    }
    let _ = writeln!(out, "\nThroughput (R/W): {}KiB/s / {}KiB/s", g.num(d.throughput_kib_s.read), g.num(d.throughput_kib_s.write));
    let _ = writeln!(out, "Events ({}): {} entries", clip(&d.label, 47), g.num(d.events));
    // Reading files, blkparse never checks sequence numbers.
    let (skips, skipped) = if files { (0, 0) } else { (d.skips, d.skipped_records) };
    let ratio = if skips == 0 && d.events == 0 { 0.0 } else { 100.0 * skipped as f64 / d.events.wrapping_add(skipped) as f64 };
    let _ = writeln!(out, "Skips: {} forward ({} - {:5.1}%)", g.num(skips), g.num(skipped), ratio);
}

/// The summary as blkparse prints it, from the first `CPUn (...)` line to
/// the last `Skips:` line.
pub fn render(s: &Summary, g: Grouping) -> String {
    let mut out = String::new();
    let files = matches!(s.mode, Mode::Files { .. });
    for (i, d) in s.devices.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        device(&mut out, g, d, files);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_step_up_past_a_million() {
        let g = Grouping::Plain;
        assert_eq!(size(g, 0, false), "       0");
        assert_eq!(size(g, 1_000_000, false), " 1000000");
        assert_eq!(size(g, 1_000_001, false), "    1000K");
        assert_eq!(size(g, 1_200_001_200, true), "    1200G");
        assert_eq!(size(g, u64::MAX - 1, true), "18446744073P");
        assert_eq!(size(Grouping::Thousands, 1_000_001, false), "   1,000K");
        assert_eq!(size(Grouping::Thousands, 1_234, true), "   1,234K");
    }

    #[test]
    fn long_names_are_clipped_like_blkparse() {
        let long = "a".repeat(40);
        assert_eq!(clip(&long, 31).len(), 31);
        assert_eq!(clip("abc", 31), "abc");
    }
}
