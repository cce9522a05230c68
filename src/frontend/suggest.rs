//! "Did you mean": the known name nearest to a mistyped one, for every
//! frontend's errors (fio options, WML attributes and variables,
//! personality names).

/// The candidate nearest to `name` within `limit` edits, if any.
pub fn nearest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>, limit: usize) -> Option<&'c str> {
    candidates.into_iter().map(|c| (edit_distance(name, c), c)).filter(|(d, _)| *d <= limit).min_by_key(|(d, _)| *d).map(|(_, c)| c)
}

/// Levenshtein distance over characters; inputs longer than 64 bytes are
/// not typos (and would make a hostile input quadratic).
pub fn edit_distance(a: &str, b: &str) -> usize {
    if a.len() > 64 || b.len() > 64 {
        return usize::MAX;
    }
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diag = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let up = row[j + 1];
            row[j + 1] = (diag + usize::from(ca != *cb)).min(row[j] + 1).min(up + 1);
            diag = up;
        }
    }
    row[b.len()]
}
