//! Expansion inside option values: `${VAR}` from the environment and fio's
//! keywords `$ncpus`, `$mb_memory` (total RAM in MiB) and `$pagesize`.
//!
//! A `$` followed by anything else is kept as written, as fio does, so
//! paths containing `$` survive.

/// Looks up an environment variable; injectable so tests need not mutate
/// the process environment.
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The real process environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// An expansion error: character offset of the `$` within the value, and why.
#[derive(Debug, PartialEq, Eq)]
pub struct ExpandError {
    pub offset: usize,
    pub message: String,
}

/// Expand `value`; errors carry the character offset of the failing `$`.
pub fn expand(value: &str, env: Env) -> Result<String, ExpandError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let offset = value[..value.len() - rest.len() + at].chars().count();
        let after = &rest[at + 1..];
        let (text, used) = if let Some(braced) = after.strip_prefix('{') {
            env_var(braced, env).map_err(|message| ExpandError { offset, message })?
        } else {
            keyword(after)
        };
        out.push_str(&text);
        rest = &after[used..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `NAME}...` → the variable's value and the bytes used (counting the `{`).
fn env_var(braced: &str, env: Env) -> Result<(String, usize), String> {
    let Some(end) = braced.find('}') else {
        return Err("unterminated '${': expected '${NAME}'".into());
    };
    let name = &braced[..end];
    if name.is_empty() {
        return Err("empty '${}': expected '${NAME}'".into());
    }
    match env(name) {
        Some(v) => Ok((v, end + 2)),
        None => Err(format!("environment variable '{name}' is not defined (used as '${{{name}}}')")),
    }
}

/// A keyword after `$`, or the `$` itself when none matches.
fn keyword(after: &str) -> (String, usize) {
    let len = after.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(after.len());
    let value = match &after[..len] {
        "ncpus" => ncpus(),
        "mb_memory" => mb_memory(),
        "pagesize" => pagesize(),
        _ => return ("$".to_string(), 0),
    };
    (value.to_string(), len)
}

/// Online CPUs.
pub fn ncpus() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    u64::try_from(n).ok().filter(|n| *n > 0).unwrap_or(1)
}

/// Page size in bytes.
pub fn pagesize() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(n).ok().filter(|n| *n > 0).unwrap_or(4096)
}

/// Total RAM in MiB.
pub fn mb_memory() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
    u64::try_from(pages).unwrap_or(0).saturating_mul(pagesize()) >> 20
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        (name == "DEV").then(|| "/dev/nvme0n1".to_string())
    }

    #[test]
    fn env_and_keywords() {
        assert_eq!(expand("${DEV}", &env).unwrap(), "/dev/nvme0n1");
        assert_eq!(expand("a${DEV}:b", &env).unwrap(), "a/dev/nvme0n1:b");
        assert_eq!(expand("$ncpus", &env).unwrap(), ncpus().to_string());
        assert_eq!(expand("8*$mb_memory", &env).unwrap(), format!("8*{}", mb_memory()));
        assert_eq!(expand("$pagesize", &env).unwrap(), pagesize().to_string());
        assert!(ncpus() >= 1 && mb_memory() >= 1 && pagesize() >= 512);
    }

    #[test]
    fn other_dollars_are_kept() {
        assert_eq!(expand("/tmp/$x/$", &env).unwrap(), "/tmp/$x/$");
        assert_eq!(expand("$ncpusx", &env).unwrap(), "$ncpusx");
    }

    #[test]
    fn errors_point_at_the_dollar() {
        let e = expand("ab${NOPE}", &env).unwrap_err();
        assert_eq!(e.offset, 2);
        assert!(e.message.contains("'NOPE' is not defined"));
        assert_eq!(expand("é${X", &env).unwrap_err().offset, 1);
        assert!(expand("${}", &env).is_err());
    }
}
