//! `randvar(...)` and `cvar(...)` → `RandVar` in natural units (gamma shapes
//! no longer ×1000), with Filebench's defaults and its missing checks added.

use super::ast::*;
use super::attrs::Spec;
use super::lexer::clip;
use super::lower::Lower;
use super::{suggest, WmlError};
use crate::model::flow::{Dist, RandVar};

const RANDVAR_ATTRS: Spec = &[
    ("type", "type"),
    ("randsrc", "randsrc"),
    ("seed", "seed"),
    ("min", "min"),
    ("mean", "mean"),
    ("gamma", "gamma"),
    ("round", "round"),
    ("randtable", "randtable"),
];

const CVAR_ATTRS: Spec = &[("type", "type"), ("parameters", "parameters"), ("min", "min"), ("max", "max"), ("round", "round")];

/// A parameter's name and default (None: required).
type Param = (&'static str, Option<f64>);

/// Each cvar type with its parameters.
const CVAR_TYPES: &[(&str, &[Param])] = &[
    ("cvar-gamma", &[("mean", Some(4096.0)), ("gamma", Some(1.5))]),
    ("cvar-normal", &[("mean", None), ("sigma", None)]),
    ("cvar-uniform", &[("lower", None), ("upper", None)]),
    ("cvar-lognormal", &[("shape", None), ("scale", None)]),
    ("cvar-exponential", &[("mean", None)]),
    ("cvar-triangular", &[("lower", None), ("upper", None), ("mode", None)]),
    ("cvar-weibull", &[("shape", None), ("scale", None)]),
    ("cvar-erlang", &[("shape", None), ("rate", None)]),
];

impl Lower<'_> {
    pub fn randvar(&mut self, var: &str, attrs: &[Attr]) -> Result<RandVar, WmlError> {
        let a = self.collect("randvar", attrs, RANDVAR_ATTRS, false)?;
        let (ty, ty_pos) = self.a_string(&a, "type", None)?.unwrap_or_else(|| ("gamma".into(), Pos::default()));
        let (src, src_pos) = self.a_string(&a, "randsrc", None)?.unwrap_or_else(|| ("rand48".into(), Pos::default()));
        if src != "rand48" && src != "urandom" {
            return Err(self.err(src_pos, format!("randvar: randsrc: expected rand48 or urandom, found '{}'", clip(&src))));
        }
        // urandom is unseeded in Filebench; here it draws from the thread's stream.
        let seed = if src == "urandom" { None } else { self.a_opt_u64(&a, "seed", None)? };
        let min = self.a_u64(&a, "min", 0, None)? as f64;
        let round = self.a_u64(&a, "round", 0, None)?;
        let gamma = self.a_u64(&a, "gamma", 1500, None)?;
        let mean = self.a_opt_u64(&a, "mean", None)?.map(|m| m as f64);
        let mean_pos = a.get("mean").and_then(|m| m.value.as_ref()).map(|v| v.pos).unwrap_or(ty_pos);
        if ty != "tabular" {
            if let Some(t) = a.get("randtable") {
                return Err(self.err(t.pos, format!("randvar: randtable applies only to type=tabular, not {}", clip(&ty))));
            }
        }
        let dist = match ty.as_str() {
            "gamma" => {
                if gamma == 0 {
                    let p = a.get("gamma").and_then(|g| g.value.as_ref()).map(|v| v.pos).unwrap_or(ty_pos);
                    return Err(self.err(p, "randvar: gamma must be at least 1 (the shape is gamma/1000)"));
                }
                let shape = gamma as f64 / 1000.0;
                // Filebench's default mean is the shape itself (gamma/1000).
                let mean = mean.unwrap_or(shape);
                if mean < min {
                    return Err(self.err(mean_pos, format!("randvar: mean ({mean}) must be at least min ({min})")));
                }
                Dist::Gamma { mean, shape }
            }
            "uniform" => {
                let mean = mean.unwrap_or(0.0);
                if mean < min {
                    return Err(self.err(mean_pos, format!("randvar: mean ({mean}) must be at least min ({min})")));
                }
                Dist::Uniform { mean }
            }
            "tabular" => Dist::Tabular { rows: self.randtable(&a, ty_pos, mean)? },
            other => {
                return Err(self.err(ty_pos, format!("randvar: type: expected uniform, gamma or tabular, found '{}'", clip(other))));
            }
        };
        Ok(RandVar { name: var.to_string(), dist, round, min, max: None, seed })
    }

    /// Rows of percent, low, high; the percentages must add up to 100. A
    /// given `mean` rescales the table to it.
    fn randtable(&self, a: &super::attrs::Attrs, ty_pos: Pos, mean: Option<f64>) -> Result<Vec<(u32, f64, f64)>, WmlError> {
        let Some(attr) = a.get("randtable") else {
            return Err(self.err(ty_pos, "randvar type=tabular needs randtable={{percent, low, high}, ...}"));
        };
        let Some(Value { kind: ValueKind::Table(table), pos }) = &attr.value else {
            return Err(self.err(attr.pos, "randtable: expected a table {{percent, low, high}, ...}"));
        };
        let mut rows = Vec::new();
        let mut total = 0u64;
        for [p, lo, hi] in table {
            let cell = |v: &Value, what: &str| -> Result<u64, WmlError> {
                let g = self.value(v, None)?;
                self.u64_of(what, &g, v.pos)
            };
            let pct = cell(p, "randtable percent")?;
            let (l, h) = (cell(lo, "randtable low")?, cell(hi, "randtable high")?);
            if pct > 100 {
                return Err(self.err(p.pos, format!("randtable: a row's percent must be at most 100, found {pct}")));
            }
            if l > h {
                return Err(self.err(lo.pos, format!("randtable: low ({l}) must not exceed high ({h})")));
            }
            total += pct;
            rows.push((pct as u32, l as f64, h as f64));
        }
        if total != 100 {
            return Err(self.err(*pos, format!("randtable: the percentages must add up to 100, found {total}")));
        }
        if let Some(m) = mean {
            let table_mean: f64 = rows.iter().map(|(p, l, h)| f64::from(*p) / 100.0 * (l + h) / 2.0).sum();
            if table_mean <= 0.0 {
                return Err(self.err(*pos, "randvar: cannot rescale a table whose mean is 0 to the given mean"));
            }
            let k = m / table_mean;
            for r in &mut rows {
                r.1 *= k;
                r.2 *= k;
            }
        }
        Ok(rows)
    }

    pub fn cvar(&mut self, var: &str, attrs: &[Attr]) -> Result<RandVar, WmlError> {
        let a = self.collect("cvar", attrs, CVAR_ATTRS, false)?;
        let first = attrs.first().map(|x| x.pos).unwrap_or_default();
        let Some((ty, ty_pos)) = self.a_string(&a, "type", None)? else {
            let names: Vec<&str> = CVAR_TYPES.iter().map(|(n, _)| *n).collect();
            return Err(self.err(first, format!("cvar: missing required attribute type (one of {})", names.join(", "))));
        };
        let Some((_, params)) = CVAR_TYPES.iter().find(|(n, _)| *n == ty) else {
            let names: Vec<&str> = CVAR_TYPES.iter().map(|(n, _)| *n).collect();
            let hint = suggest(&ty, names.iter().copied()).map(|s| format!("did you mean '{s}'? ")).unwrap_or_default();
            return Err(self.err(ty_pos, format!("cvar: unknown type '{}': {hint}expected one of {}", clip(&ty), names.join(", "))));
        };
        let (text, ppos) = self.a_string(&a, "parameters", None)?.unwrap_or_else(|| (String::new(), ty_pos));
        let given = parse_parameters(&text).map_err(|m| self.err(ppos, format!("cvar parameters: {m}")))?;
        let mut values = Vec::new();
        for (k, default) in params.iter() {
            match given.iter().rev().find(|(n, _)| n == k).map(|(_, v)| *v).or(*default) {
                Some(v) => values.push(v),
                None => {
                    let form: Vec<String> = params.iter().map(|(n, _)| format!("{n}:N")).collect();
                    return Err(self.err(ppos, format!("{ty}: missing parameter {k} (expected parameters=\"{}\")", form.join(";"))));
                }
            }
        }
        if let Some((bad, _)) = given.iter().find(|(n, _)| !params.iter().any(|(p, _)| p == n)) {
            let names: Vec<&str> = params.iter().map(|(n, _)| *n).collect();
            return Err(self.err(ppos, format!("{ty}: unknown parameter '{}' (valid: {})", clip(bad), names.join(", "))));
        }
        let dist = self.cvar_dist(&ty, &values).map_err(|m| self.err(ppos, format!("{ty}: {m}")))?;
        let min = self.a_u64(&a, "min", 0, None)? as f64;
        let max = self.a_opt_u64(&a, "max", None)?.map(|m| m as f64);
        if let Some(mx) = max {
            if mx < min {
                let p = a.get("max").map(|m| m.pos).unwrap_or(first);
                return Err(self.err(p, format!("cvar: max ({mx}) must be at least min ({min})")));
            }
        }
        let round = self.a_u64(&a, "round", 0, None)?;
        Ok(RandVar { name: var.to_string(), dist, round, min, max, seed: None })
    }

    fn cvar_dist(&self, ty: &str, v: &[f64]) -> Result<Dist, String> {
        let at = |i: usize| v.get(i).copied().unwrap_or(0.0);
        let positive = |name: &str, x: f64| if x > 0.0 { Ok(x) } else { Err(format!("{name} must be greater than 0, found {x}")) };
        Ok(match ty {
            "cvar-gamma" => Dist::CvarGamma { mean: positive("mean", at(0))?, shape: positive("gamma", at(1))? },
            "cvar-normal" => {
                if at(1) < 0.0 {
                    return Err(format!("sigma must not be negative, found {}", at(1)));
                }
                Dist::CvarNormal { mean: at(0), sigma: at(1) }
            }
            "cvar-uniform" => {
                if at(0) > at(1) {
                    return Err(format!("lower ({}) must not exceed upper ({})", at(0), at(1)));
                }
                Dist::CvarUniform { lower: at(0), upper: at(1) }
            }
            "cvar-lognormal" => Dist::CvarLognormal { shape: positive("shape", at(0))?, scale: at(1) },
            "cvar-exponential" => Dist::CvarExponential { mean: positive("mean", at(0))? },
            "cvar-triangular" => {
                let (lower, upper, mode) = (at(0), at(1), at(2));
                if !(lower < upper && lower <= mode && mode <= upper) {
                    return Err(format!("expected lower < upper and lower <= mode <= upper, found {lower}, {upper}, {mode}"));
                }
                Dist::CvarTriangular { lower, upper, mode }
            }
            "cvar-weibull" => Dist::CvarWeibull { shape: positive("shape", at(0))?, scale: positive("scale", at(1))? },
            "cvar-erlang" => {
                let k = at(0);
                if k < 1.0 || k.fract() != 0.0 || k > u32::MAX as f64 {
                    return Err(format!("shape must be a whole number of at least 1, found {k}"));
                }
                Dist::CvarErlang { shape: k as u64, rate: positive("rate", at(1))? }
            }
            _ => return Err("unknown type".into()),
        })
    }
}

/// `k:v;k:v` with decimal (possibly fractional, k/m/g-suffixed) values.
fn parse_parameters(text: &str) -> Result<Vec<(String, f64)>, String> {
    let mut out = Vec::new();
    for item in text.split(';').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = item.split_once(':') else {
            return Err(format!("expected name:value, found '{}'", clip(item)));
        };
        let (k, v) = (k.trim(), v.trim());
        let (digits, mult) = match v.char_indices().last() {
            Some((i, 'k' | 'K')) => (&v[..i], 1024.0),
            Some((i, 'm' | 'M')) => (&v[..i], 1024.0 * 1024.0),
            Some((i, 'g' | 'G')) => (&v[..i], 1024.0 * 1024.0 * 1024.0),
            _ => (v, 1.0),
        };
        let x: f64 = match digits.parse::<f64>() {
            Ok(x) if x.is_finite() && !digits.contains(['e', 'E', 'i', 'n', 'I', 'N']) => x * mult,
            _ => return Err(format!("{k}: expected a number, found '{}'", clip(v))),
        };
        if !x.is_finite() {
            return Err(format!("{k}: {v} is too large"));
        }
        out.push((k.to_string(), x));
    }
    Ok(out)
}

/// One line for the plan's variable list and messages.
pub fn describe(rv: &RandVar) -> String {
    let mut s = match &rv.dist {
        Dist::Gamma { mean, shape } => format!("randvar(gamma, mean={mean}, shape={shape}"),
        Dist::Uniform { mean } => format!("randvar(uniform, mean={mean}"),
        Dist::Tabular { rows } => {
            let r: Vec<String> = rows.iter().map(|(p, l, h)| format!("{{{p},{l},{h}}}")).collect();
            format!("randvar(tabular, {{{}}}", r.join(","))
        }
        Dist::CvarGamma { mean, shape } => format!("cvar(cvar-gamma, mean={mean}, gamma={shape}"),
        Dist::CvarNormal { mean, sigma } => format!("cvar(cvar-normal, mean={mean}, sigma={sigma}"),
        Dist::CvarUniform { lower, upper } => format!("cvar(cvar-uniform, lower={lower}, upper={upper}"),
        Dist::CvarLognormal { shape, scale } => format!("cvar(cvar-lognormal, shape={shape}, scale={scale}"),
        Dist::CvarExponential { mean } => format!("cvar(cvar-exponential, mean={mean}"),
        Dist::CvarTriangular { lower, upper, mode } => format!("cvar(cvar-triangular, lower={lower}, upper={upper}, mode={mode}"),
        Dist::CvarWeibull { shape, scale } => format!("cvar(cvar-weibull, shape={shape}, scale={scale}"),
        Dist::CvarErlang { shape, rate } => format!("cvar(cvar-erlang, shape={shape}, rate={rate}"),
    };
    if rv.min != 0.0 {
        s.push_str(&format!(", min={}", rv.min));
    }
    if let Some(m) = rv.max {
        s.push_str(&format!(", max={m}"));
    }
    if rv.round != 0 {
        s.push_str(&format!(", round={}", rv.round));
    }
    if let Some(seed) = rv.seed {
        s.push_str(&format!(", seed={seed}"));
    }
    s.push(')');
    s
}

#[cfg(test)]
mod tests {
    use super::parse_parameters;

    #[test]
    fn parameters_accept_fractions_suffixes_and_blanks() {
        let p = parse_parameters(" mean:128k ; gamma:1.5;").unwrap();
        assert_eq!(p, vec![("mean".to_string(), 131072.0), ("gamma".to_string(), 1.5)]);
        assert!(parse_parameters("mean=5").unwrap_err().contains("name:value"));
        assert!(parse_parameters("mean:abc").unwrap_err().contains("expected a number"));
        assert!(parse_parameters("mean:inf").is_err());
        assert!(parse_parameters("mean:1e999").is_err());
    }
}
