//! The words of a command line split as C's getopt splits them, for the
//! peers whose flags are single letters (IOzone, Bonnie++): letters may be
//! clustered (`-qb`), a value may be attached (`-s64m`) or be the next
//! word, and IOzone's `-+x` family is one flag. Errors are (flag, what was
//! expected); each frontend words them in its own type.

pub type GetoptError = (String, String);

pub struct Words<'a> {
    args: &'a [String],
    i: usize,
    /// `-+x` is one flag (IOzone).
    plus_flags: bool,
    /// The rest of a cluster of letters (`-az` after `-a`).
    pending: Option<(String, usize)>,
}

impl<'a> Words<'a> {
    pub fn new(args: &'a [String], plus_flags: bool) -> Self {
        Words { args, i: 0, plus_flags, pending: None }
    }

    /// The next flag: `-x` (or `-+x`). A word that is not a flag is an
    /// error naming that word.
    pub fn next_flag(&mut self) -> Result<Option<String>, GetoptError> {
        if let Some((word, at)) = self.pending.take() {
            return Ok(Some(self.take_letter(word, at)));
        }
        let Some(word) = self.args.get(self.i) else { return Ok(None) };
        self.i += 1;
        if !word.starts_with('-') || word.len() < 2 {
            return Err((word.clone(), "not a flag".into()));
        }
        Ok(Some(self.take_letter(word.clone(), 1)))
    }

    fn take_letter(&mut self, word: String, at: usize) -> String {
        let mut chars = word[at..].chars();
        let c = chars.next().expect("a letter");
        let mut end = at + c.len_utf8();
        let flag = if c == '+' && self.plus_flags {
            // `-+n`: the letter after the plus is the flag.
            match chars.next() {
                Some(d) => {
                    end += d.len_utf8();
                    format!("-+{d}")
                }
                None => "-+".to_string(),
            }
        } else {
            format!("-{c}")
        };
        if end < word.len() {
            self.pending = Some((word, end));
        }
        flag
    }

    /// The flag's value: the rest of its word (`-s64m`) or the next word.
    pub fn value(&mut self, flag: &str) -> Result<String, GetoptError> {
        if let Some((word, at)) = self.pending.take() {
            return Ok(word[at..].to_string());
        }
        match self.args.get(self.i) {
            Some(v) => {
                self.i += 1;
                Ok(v.clone())
            }
            None => Err((flag.to_string(), "needs a value".into())),
        }
    }

    /// An optional value, which getopt's `x::` takes only when attached
    /// (`-f2`, never `-f 2`).
    pub fn attached_value(&mut self) -> Option<String> {
        self.pending.take().map(|(word, at)| word[at..].to_string())
    }

    /// `-F`: every following word up to the next flag; none is an error.
    pub fn values_until_flag(&mut self, flag: &str) -> Result<Vec<String>, GetoptError> {
        let mut out = Vec::new();
        if let Some((word, at)) = self.pending.take() {
            out.push(word[at..].to_string());
        }
        while let Some(w) = self.args.get(self.i).filter(|w| !w.starts_with('-')) {
            out.push(w.clone());
            self.i += 1;
        }
        if out.is_empty() {
            return Err((flag.to_string(), "needs a value".into()));
        }
        Ok(out)
    }
}
