//! `/sys/devices/system/cpu/cpuN/cpufreq`: the CPUs' scaling governors.

use super::read_trim;

/// Scaling governor(s) of the CPUs, comma-separated when they differ;
/// None when there is no cpufreq (common in VMs).
pub fn governor() -> Option<String> {
    let mut govs: Vec<String> = Vec::new();
    let rd = std::fs::read_dir("/sys/devices/system/cpu").ok()?;
    let mut names: Vec<String> = rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    for n in names {
        if !(n.starts_with("cpu") && n[3..].chars().all(|c| c.is_ascii_digit()) && n.len() > 3) {
            continue;
        }
        if let Some(g) = read_trim(format!("/sys/devices/system/cpu/{n}/cpufreq/scaling_governor")) {
            if !g.is_empty() && !govs.contains(&g) {
                govs.push(g);
            }
        }
    }
    if govs.is_empty() {
        None
    } else {
        Some(govs.join(","))
    }
}
