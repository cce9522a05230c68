//! Attribute lists: which names an entity accepts (with aliases), the last
//! of repeated ones, and typed getters with located errors.

use super::ast::{Attr, Pos};
use super::lexer::clip;
use super::lower::{Locals, Lower};
use super::suggest;
use crate::model::flow::Num;
use std::collections::HashMap;

/// (spelling, canonical name)
pub type Spec = &'static [(&'static str, &'static str)];

/// An entity's attributes by canonical name; a repeated one: the last wins.
pub struct Attrs<'x> {
    map: HashMap<&'static str, &'x Attr>,
    pub locals: Vec<&'x Attr>,
    /// What the errors call the entity ("fileset", "flowop read", ...).
    pub entity: String,
}

impl<'x> Attrs<'x> {
    pub fn get(&self, key: &str) -> Option<&'x Attr> {
        self.map.get(key).copied()
    }
}

impl Lower<'_> {
    /// Sort `attrs` by `spec`; `$name` attributes are allowed only with
    /// `locals_ok` (composite flowops).
    pub fn collect<'x>(&self, entity: &str, attrs: &'x [Attr], spec: Spec, locals_ok: bool) -> Result<Attrs<'x>, super::WmlError> {
        let mut out = Attrs { map: HashMap::new(), locals: Vec::new(), entity: entity.to_string() };
        let mut local_at: HashMap<&str, usize> = HashMap::new();
        for a in attrs {
            if a.local {
                if locals_ok {
                    match local_at.get(a.name.as_str()) {
                        Some(&i) => out.locals[i] = a,
                        None => {
                            local_at.insert(a.name.as_str(), out.locals.len());
                            out.locals.push(a);
                        }
                    }
                    continue;
                }
                return Err(self.err(a.pos, format!("{entity}: unexpected ${}: only composite flowops take $variable attributes", a.name)));
            }
            match spec.iter().find(|(s, _)| *s == a.name) {
                Some((_, canon)) => {
                    out.map.insert(canon, a);
                }
                None => {
                    let hint = suggest(&a.name, spec.iter().map(|(s, _)| *s)).map(|s| format!("did you mean '{s}'? ")).unwrap_or_default();
                    let mut valid: Vec<&str> = spec.iter().map(|(s, _)| *s).collect();
                    valid.dedup();
                    return Err(self.err(
                        a.pos,
                        format!("unknown attribute '{}' for {entity}: {hint}valid attributes: {}", clip(&a.name), valid.join(", ")),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The value of a non-boolean attribute; a bare one is an error.
    fn needs_value<'x>(&self, a: &'x Attr) -> Result<&'x super::ast::Value, super::WmlError> {
        a.value.as_ref().ok_or_else(|| self.err(a.pos, format!("attribute {} needs a value ({}=...)", a.name, a.name)))
    }

    pub fn a_u64(&self, at: &Attrs, key: &str, default: u64, locals: Option<&Locals>) -> Result<u64, super::WmlError> {
        match at.get(key) {
            None => Ok(default),
            Some(a) => {
                let v = self.needs_value(a)?;
                let g = self.value(v, locals)?;
                self.u64_of(key, &g, v.pos)
            }
        }
    }

    /// A u64 attribute with a range check.
    pub fn a_range(&self, at: &Attrs, key: &str, default: u64, max: u64, locals: Option<&Locals>) -> Result<u64, super::WmlError> {
        let v = self.a_u64(at, key, default, locals)?;
        if v > max {
            let pos = at.get(key).and_then(|a| a.value.as_ref()).map(|v| v.pos).unwrap_or_default();
            return Err(self.err(pos, format!("{key}: expected at most {max}, found {v}")));
        }
        Ok(v)
    }

    pub fn a_opt_u64(&self, at: &Attrs, key: &str, locals: Option<&Locals>) -> Result<Option<u64>, super::WmlError> {
        match at.get(key) {
            None => Ok(None),
            Some(_) => Ok(Some(self.a_u64(at, key, 0, locals)?)),
        }
    }

    pub fn a_num(&mut self, at: &Attrs, key: &str, default: u64, locals: Option<&Locals>) -> Result<Num, super::WmlError> {
        Ok(self.a_opt_num(at, key, locals)?.unwrap_or(Num::Fixed(default)))
    }

    pub fn a_opt_num(&mut self, at: &Attrs, key: &str, locals: Option<&Locals>) -> Result<Option<Num>, super::WmlError> {
        match at.get(key) {
            None => Ok(None),
            Some(a) => {
                let v = self.needs_value(a)?;
                let g = self.value(v, locals)?;
                Ok(Some(self.num_of(key, &g, v.pos)?))
            }
        }
    }

    /// A bare boolean attribute means true.
    pub fn a_bool(&self, at: &Attrs, key: &str, default: bool, locals: Option<&Locals>) -> Result<bool, super::WmlError> {
        match at.get(key) {
            None => Ok(default),
            Some(Attr { value: None, .. }) => Ok(true),
            Some(Attr { value: Some(v), .. }) => {
                let g = self.value(v, locals)?;
                self.bool_of(key, &g, v.pos)
            }
        }
    }

    pub fn a_string(&self, at: &Attrs, key: &str, locals: Option<&Locals>) -> Result<Option<(String, Pos)>, super::WmlError> {
        match at.get(key) {
            None => Ok(None),
            Some(a) => {
                let v = self.needs_value(a)?;
                let g = self.value(v, locals)?;
                Ok(Some((self.string_of(key, &g, v.pos)?, v.pos)))
            }
        }
    }

    /// A required string attribute; missing is an error at `pos`.
    pub fn a_required(&self, at: &Attrs, key: &str, pos: Pos, locals: Option<&Locals>) -> Result<(String, Pos), super::WmlError> {
        match self.a_string(at, key, locals)? {
            Some((s, p)) if !s.is_empty() => Ok((s, p)),
            Some((_, p)) => Err(self.err(p, format!("{}: {key} must not be empty", at.entity))),
            None => Err(self.err(pos, format!("{}: missing required attribute {key} ({key}=...)", at.entity))),
        }
    }
}
