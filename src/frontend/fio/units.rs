//! temporary stub until the frontend lands
pub fn parse_size(s: &str, _kb_base: u64) -> Result<u64, String> {
    let s = s.trim().to_ascii_lowercase();
    let (num, mult) = match s.chars().last() {
        Some('k') => (&s[..s.len() - 1], 1u64 << 10),
        Some('m') => (&s[..s.len() - 1], 1 << 20),
        Some('g') => (&s[..s.len() - 1], 1 << 30),
        _ => (&s[..], 1),
    };
    num.parse::<u64>().map(|n| n * mult).map_err(|_| format!("bad size '{s}'"))
}
