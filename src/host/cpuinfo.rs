//! `/proc/cpuinfo`: the CPU model and how many logical CPUs there are.

/// (model, logical CPUs) from /proc/cpuinfo text.
pub fn parse_cpuinfo(text: &str) -> (String, u32) {
    let mut model = String::new();
    let mut fallback = String::new();
    let mut cpus = 0u32;
    for line in text.lines() {
        let Some((k, v)) = line.split_once(':') else { continue };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "processor" => cpus += 1,
            "model name" | "cpu model" if model.is_empty() => model = v.to_string(),
            "Hardware" | "Model" | "cpu" | "uarch" if fallback.is_empty() => fallback = v.to_string(),
            _ => {}
        }
    }
    if model.is_empty() {
        model = fallback;
    }
    (model, cpus)
}

/// (model, logical CPUs) of this machine; the count falls back to the
/// online CPUs when /proc/cpuinfo lists no processor.
pub fn read_cpuinfo() -> (String, u32) {
    let (model, mut cpus) = std::fs::read_to_string("/proc/cpuinfo").map(|t| parse_cpuinfo(&t)).unwrap_or_default();
    if cpus == 0 {
        // SAFETY: sysconf only reads the constant it is given; no memory of ours is involved.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        cpus = if n > 0 { n as u32 } else { 0 };
    }
    (model, cpus)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_parsing() {
        let (m, n) = parse_cpuinfo("processor\t: 0\nmodel name\t: Some CPU @ 2GHz\n\nprocessor\t: 1\nmodel name\t: Some CPU @ 2GHz\n");
        assert_eq!((m.as_str(), n), ("Some CPU @ 2GHz", 2));
        let (m, n) = parse_cpuinfo("processor : 0\nHardware : Board X\n");
        assert_eq!((m.as_str(), n), ("Board X", 1));
    }
}
