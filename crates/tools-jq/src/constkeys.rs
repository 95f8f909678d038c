//! jq 1.6 folds constants at compile time, so an object built with a constant
//! key that is not a string (`{(1): 2}`, `{(1+1): 2}`, `{([1]): 2}`,
//! `{(null): 1}`) is a compile error there, not a run-time one. This walks
//! the parsed program for such keys, and for a constant division whose
//! result is infinite (`1/0`: `Division by zero?`).

use crate::val::{Map, Val, desc};
use jaq_core::load::lex::StrPart;
use jaq_core::load::parse::{BinaryOp, Pattern, Term};
use jaq_core::path::Part;

/// The first constant non-string object key in `code`, as jq words it
/// (`Cannot use number (1) as object key`), and where in `code` jq places
/// it. `None` when there is none or the program does not parse as one term
/// (modules: jq's own checks apply).
pub fn first_bad_key(code: &str) -> Option<(String, usize)> {
    let term = jaq_core::load::parse(code, |p| p.term())?;
    let mut found = Found { code, hit: None };
    walk(&term, &mut found, 0);
    found.hit
}

/// The error found so far, with its byte offset in `code`.
struct Found<'c> {
    code: &'c str,
    hit: Option<(String, usize)>,
}

impl Found<'_> {
    /// Offset of `s`, a slice of the code (0 if it is not one).
    fn offset(&self, s: Option<&str>) -> usize {
        let base = self.code.as_ptr() as usize;
        s.map(|s| s.as_ptr() as usize)
            .filter(|&p| p >= base && p <= base + self.code.len())
            .map_or(0, |p| p - base)
    }
}

/// The leftmost piece of source text of a term, where jq locates it.
fn start<'a>(t: &Term<&'a str>) -> Option<&'a str> {
    match t {
        Term::Num(s) | Term::Call(s, _) | Term::Var(s) | Term::Fold(s, ..) => Some(s),
        Term::Str(Some(f), _) => Some(f),
        Term::BinOp(l, ..) | Term::Path(l, _) => start(l),
        _ => None,
    }
}

/// Deep enough for any program a person writes; past it we stop looking
/// rather than risk the stack (the run-time check still applies).
const MAX_DEPTH: usize = 512;

fn walk(t: &Term<&str>, found: &mut Found, depth: usize) {
    if found.hit.is_some() || depth > MAX_DEPTH {
        return;
    }
    let d = depth + 1;
    match t {
        Term::Id | Term::Recurse | Term::Num(_) | Term::Break(_) | Term::Var(_) => {}
        Term::Str(_, parts) => {
            for p in parts {
                if let StrPart::Term(t) = p {
                    walk(t, found, d);
                }
            }
        }
        Term::Arr(a) => {
            if let Some(a) = a {
                walk(a, found, d);
            }
        }
        Term::Obj(pairs) => {
            for (k, v) in pairs {
                if let Some(c) = constant(k, 0)
                    && !matches!(c, Val::Str(_))
                {
                    // jq places the error at the `(` of `(key)`.
                    let at = found.offset(start(k));
                    let before = found.code[..at].trim_end();
                    let at = if before.ends_with('(') {
                        before.len() - 1
                    } else {
                        at
                    };
                    found.hit = Some((format!("Cannot use {} as object key", desc(&c)), at));
                    return;
                }
                walk(k, found, d);
                if let Some(v) = v {
                    walk(v, found, d);
                }
            }
        }
        Term::Neg(x) | Term::Label(_, x) => walk(x, found, d),
        Term::BinOp(l, op, r) => {
            if let BinaryOp::Pipe(Some(p)) = op {
                pattern(p, found, d);
            }
            // jq 1.6 folds `/` of two constant numbers and rejects an
            // infinite result (`1/0`, `(1+1)/0`; `0/0` is NaN and passes).
            if matches!(op, BinaryOp::Math(jaq_core::ops::Math::Div))
                && let Some(Val::Num(q)) = constant(t, d)
                && q.is_infinite()
            {
                let at = found.offset(start(l));
                found.hit = Some(("Division by zero?".to_string(), at));
                return;
            }
            walk(l, found, d);
            walk(r, found, d);
        }
        Term::Fold(_, x, p, args) => {
            walk(x, found, d);
            pattern(p, found, d);
            for a in args {
                walk(a, found, d);
            }
        }
        Term::TryCatch(x, c) => {
            walk(x, found, d);
            if let Some(c) = c {
                walk(c, found, d);
            }
        }
        Term::IfThenElse(branches, els) => {
            for (c, t) in branches {
                walk(c, found, d);
                walk(t, found, d);
            }
            if let Some(e) = els {
                walk(e, found, d);
            }
        }
        Term::Def(defs, body) => {
            for def in defs {
                walk(&def.body, found, d);
            }
            walk(body, found, d);
        }
        Term::Call(_, args) => {
            for a in args {
                walk(a, found, d);
            }
        }
        Term::Path(x, path) => {
            walk(x, found, d);
            for (part, _) in &path.0 {
                match part {
                    Part::Index(i) => walk(i, found, d),
                    Part::Range(a, b) => {
                        for x in [a, b].into_iter().flatten() {
                            walk(x, found, d);
                        }
                    }
                }
            }
        }
    }
}

fn pattern(p: &Pattern<&str>, found: &mut Found, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match p {
        Pattern::Var(_) => {}
        Pattern::Arr(ps) => ps.iter().for_each(|p| pattern(p, found, depth + 1)),
        Pattern::Obj(pairs) => {
            for (k, p) in pairs {
                walk(k, found, depth + 1);
                pattern(p, found, depth + 1);
            }
        }
    }
}

/// The value of a term jq 1.6 folds to a constant: number literals, `true`,
/// `false`, `null`, arithmetic of number literals, strings without
/// interpolation, arrays of constants, and objects with constant string keys
/// and constant values (`-x` is a call in jq, not folded).
pub(crate) fn constant(t: &Term<&str>, depth: usize) -> Option<Val> {
    if depth > 64 {
        return None;
    }
    match t {
        Term::Num(s) => s.parse::<f64>().ok().map(Val::Num),
        Term::Call("true", a) if a.is_empty() => Some(Val::Bool(true)),
        Term::Call("false", a) if a.is_empty() => Some(Val::Bool(false)),
        Term::Call("null", a) if a.is_empty() => Some(Val::Null),
        Term::Str(None, parts) => {
            let mut s = String::new();
            for p in parts {
                match p {
                    StrPart::Str(x) => s.push_str(x),
                    StrPart::Char(c) => s.push(*c),
                    StrPart::Term(_) => return None,
                }
            }
            Some(Val::from(s))
        }
        Term::Arr(None) => Some(Val::from_iter(Vec::new())),
        Term::Arr(Some(items)) => {
            let mut out = Vec::new();
            comma_items(items, &mut out, depth + 1)?;
            Some(Val::from_iter(out))
        }
        Term::Obj(pairs) => {
            let mut m = Map::default();
            for (k, v) in pairs {
                let k @ Val::Str(_) = constant(k, depth + 1)? else {
                    return None;
                };
                m.insert(k, constant(v.as_ref()?, depth + 1)?);
            }
            Some(Val::obj(m))
        }
        Term::BinOp(l, BinaryOp::Math(op), r) => {
            let (Val::Num(a), Val::Num(b)) = (constant(l, depth + 1)?, constant(r, depth + 1)?)
            else {
                return None;
            };
            use jaq_core::ops::Math;
            Some(Val::Num(match op {
                Math::Add => a + b,
                Math::Sub => a - b,
                Math::Mul => a * b,
                Math::Div => a / b,
                Math::Rem => return None,
            }))
        }
        _ => None,
    }
}

fn comma_items(t: &Term<&str>, out: &mut Vec<Val>, depth: usize) -> Option<()> {
    if let Term::BinOp(l, BinaryOp::Comma, r) = t {
        comma_items(l, out, depth + 1)?;
        comma_items(r, out, depth + 1)
    } else {
        out.push(constant(t, depth)?);
        Some(())
    }
}
