//! The machine's load: /proc/loadavg, the CPU time in /proc/stat, and this
//! process's own CPU time (/proc/self/stat), all in clock ticks (USER_HZ).

use std::fs;

/// One reading of the machine's load.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LoadReading {
    pub load1: f64,
    pub load5: f64,
    /// All CPUs' time since boot, busy (everything but idle and iowait) and in all.
    pub busy_ticks: u64,
    pub total_ticks: u64,
    /// This process's user + system time (all its threads).
    pub self_ticks: u64,
}

/// `(load1, load5)` from /proc/loadavg's text.
pub fn parse_loadavg(text: &str) -> Option<(f64, f64)> {
    let mut f = text.split_whitespace();
    Some((f.next()?.parse().ok()?, f.next()?.parse().ok()?))
}

/// `(busy, total)` ticks from /proc/stat's aggregate `cpu` line. Guest time
/// is already inside user and nice, so it is not added again.
pub fn parse_cpu_line(text: &str) -> Option<(u64, u64)> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line.split_whitespace().skip(1).take(8).map(|x| x.parse().unwrap_or(0)).collect();
    if v.len() < 4 {
        return None;
    }
    let total: u64 = v.iter().sum();
    let idle = v[3] + v.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

/// utime + stime from a /proc/PID/stat text (fields 14 and 15; the command
/// name in parentheses may hold spaces, so count from the last ')').
pub fn parse_self_ticks(text: &str) -> Option<u64> {
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After ')': state is field 3, so utime (14) and stime (15) are at 11 and 12.
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// Tasks runnable right now (running or waiting for a CPU), from /proc/stat.
pub fn parse_procs_running(text: &str) -> Option<u32> {
    text.lines().find_map(|l| l.strip_prefix("procs_running ")).and_then(|v| v.trim().parse().ok())
}

/// Tasks runnable on the machine now.
pub fn procs_running() -> Option<u32> {
    parse_procs_running(&fs::read_to_string("/proc/stat").ok()?)
}

/// The machine's load now; `None` when /proc cannot be read.
pub fn read() -> Option<LoadReading> {
    let (load1, load5) = parse_loadavg(&fs::read_to_string("/proc/loadavg").ok()?)?;
    let (busy_ticks, total_ticks) = parse_cpu_line(&fs::read_to_string("/proc/stat").ok()?)?;
    let self_ticks = parse_self_ticks(&fs::read_to_string("/proc/self/stat").ok()?)?;
    Some(LoadReading { load1, load5, busy_ticks, total_ticks, self_ticks })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_texts() {
        assert_eq!(parse_loadavg("2.50 1.25 0.75 3/456 7890\n"), Some((2.5, 1.25)));
        let stat = "cpu  100 5 50 800 20 1 2 3 0 0\ncpu0 50 2 25 400 10 0 1 1 0 0\n";
        // busy = user+nice+system+irq+softirq+steal = 100+5+50+1+2+3; idle+iowait = 820.
        assert_eq!(parse_cpu_line(stat), Some((161, 981)));
        let me = "1234 (my (odd) name) R 1 1234 1234 0 -1 4194560 100 0 0 0 70 30 0 0 20 0 3 0 555";
        assert_eq!(parse_self_ticks(me), Some(100));
        assert_eq!(parse_self_ticks("garbage"), None);
        assert_eq!(parse_procs_running("ctxt 5\nprocs_running 3\nprocs_blocked 0\n"), Some(3));
    }

    #[test]
    fn reads_this_machine() {
        let r = read().expect("/proc is readable");
        assert!(r.total_ticks >= r.busy_ticks && r.total_ticks > 0 && r.load1 >= 0.0, "{r:?}");
        assert!(procs_running().is_some_and(|n| n >= 1), "this test is running");
    }
}
