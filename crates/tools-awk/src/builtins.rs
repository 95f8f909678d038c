//! Builtin functions (string, math, I/O helpers).

use crate::ast::{Builtin, Expr, LValue};
use crate::fields::{Splitter, split_spans};
use crate::interp::{Cell, Ctl, Interp, Res};
use crate::regex::AwkRegex as Regex;
use crate::value::Value;
use std::rc::Rc;

/// mawk's double to int conversion (clamped to the int range).
fn d_to_i(d: f64) -> i32 {
    const MAX: f64 = i32::MAX as f64;
    if d >= MAX {
        i32::MAX
    } else if d > -MAX {
        d as i32
    } else {
        -i32::MAX
    }
}

/// A match range with `start()`/`end()` accessors.
struct Span(std::ops::Range<usize>);

impl Span {
    pub(crate) fn start(&self) -> usize {
        self.0.start
    }
    pub(crate) fn end(&self) -> usize {
        self.0.end
    }
}

/// Replaces matches of `re` in `s` (all when `global`), expanding `&` and `\&`.
/// Stops early once the result is longer than `max` (the caller refuses it).
fn substitute(re: &Regex, s: &[u8], repl: &[u8], global: bool, max: usize) -> (Vec<u8>, usize) {
    let mut out = Vec::with_capacity(s.len());
    let mut count = 0;
    let mut pos = 0;
    let mut last_nonempty_end: Option<usize> = None;
    let expand = |out: &mut Vec<u8>, m: &[u8]| {
        let mut i = 0;
        while i < repl.len() {
            match repl[i] {
                b'\\' if repl.get(i + 1) == Some(&b'&') => {
                    out.push(b'&');
                    i += 2;
                }
                b'\\' if repl.get(i + 1) == Some(&b'\\') => {
                    out.push(b'\\');
                    i += 2;
                }
                b'&' => {
                    out.extend_from_slice(m);
                    i += 1;
                }
                c => {
                    out.push(c);
                    i += 1;
                }
            }
        }
    };
    while pos <= s.len() {
        let Some(m) = re.find_at(s, pos) else {
            break;
        };
        let m = Span(m);
        if m.start() == m.end() {
            if last_nonempty_end == Some(m.start()) {
                // An empty match right after a replaced one is skipped.
                if m.start() < s.len() {
                    out.push(s[m.start()]);
                }
                out.extend_from_slice(&s[pos..m.start()]);
                pos = m.start() + 1;
                last_nonempty_end = None;
                continue;
            }
            out.extend_from_slice(&s[pos..m.start()]);
            expand(&mut out, b"");
            count += 1;
            if m.start() < s.len() {
                out.push(s[m.start()]);
            }
            pos = m.start() + 1;
        } else {
            out.extend_from_slice(&s[pos..m.start()]);
            expand(&mut out, &s[m.start()..m.end()]);
            count += 1;
            pos = m.end();
            last_nonempty_end = Some(pos);
        }
        if !global || out.len() > max {
            break;
        }
    }
    if pos < s.len() {
        out.extend_from_slice(&s[pos..]);
    }
    (out, count)
}

impl Interp<'_, '_> {
    pub(crate) fn arg_num(&mut self, args: &[Expr], i: usize) -> Res<f64> {
        match args.get(i) {
            Some(e) => self.eval_num(e),
            None => Ok(0.0),
        }
    }

    pub(crate) fn arg_str(&mut self, args: &[Expr], i: usize) -> Res<Rc<[u8]>> {
        match args.get(i) {
            Some(e) => self.eval_str(e),
            None => Ok(Rc::from(&b""[..])),
        }
    }

    /// Evaluates a builtin call.
    pub(crate) fn builtin(&mut self, b: Builtin, args: &[Expr]) -> Res<Value> {
        let num = Value::Num;
        Ok(match b {
            Builtin::Length => match args.first() {
                None => num(self.record.len() as f64),
                Some(Expr::Var(v)) => {
                    if let Cell::Arr(a) = self.cell(*v) {
                        num(a.borrow().len() as f64)
                    } else {
                        num(self.eval_str(&Expr::Var(*v))?.len() as f64)
                    }
                }
                Some(e) => num(self.eval_str(e)?.len() as f64),
            },
            Builtin::Substr => {
                // mawk's C int arithmetic, overflow included (substr(s, -1, 3) is
                // 4 characters; a NaN start gives "").
                let s = self.arg_str(args, 0)?;
                let len = i32::try_from(s.len()).unwrap_or(i32::MAX);
                if len == 0 {
                    return Ok(Value::str(b""));
                }
                let start = self.arg_num(args, 1)?;
                let mut n = if args.len() > 2 {
                    d_to_i(self.arg_num(args, 2)?)
                } else {
                    len
                };
                let mut i = d_to_i(start).wrapping_sub(1);
                if i > len {
                    n = 0;
                }
                if i < 0 {
                    n = n.wrapping_sub(i.wrapping_add(1));
                    i = 0;
                }
                if n > len - i {
                    n = len - i;
                }
                if n <= 0 {
                    Value::str(b"")
                } else {
                    let (a, b) = (i as usize, (i + n) as usize);
                    Value::str(s.get(a..b).unwrap_or(b""))
                }
            }
            Builtin::Index => {
                let s = self.arg_str(args, 0)?;
                let t = self.arg_str(args, 1)?;
                let r = if t.is_empty() {
                    1
                } else {
                    memchr::memmem::find(&s, &t).map(|p| p + 1).unwrap_or(0)
                };
                num(r as f64)
            }
            Builtin::Split => {
                let s = self.arg_str(args, 0)?;
                let sp = match args.get(2) {
                    None => self.fs.clone(),
                    Some(Expr::Regex(i)) => match self.regexes.get(*i) {
                        Some(r) => Splitter::Regex(r.clone()),
                        None => Splitter::Space,
                    },
                    Some(e) => {
                        let sep = self.eval_str(e)?;
                        match &sep[..] {
                            b" " => Splitter::Space,
                            b"" => Splitter::Chars,
                            [c] => Splitter::Byte(*c),
                            _ => Splitter::Regex(self.regex_for(&sep)?),
                        }
                    }
                };
                let mut spans = Vec::new();
                split_spans(&s, &sp, &mut spans);
                let Some(Expr::Var(v)) = args.get(1) else {
                    return Err(Ctl::Err("split: bad array".into()));
                };
                let a = self.get_array(*v)?;
                let mut a = a.borrow_mut();
                a.load(
                    spans
                        .iter()
                        .map(|(x, y)| Value::strnum(&s[*x..*y]))
                        .collect(),
                );
                num(spans.len() as f64)
            }
            Builtin::Sub | Builtin::Gsub => {
                let re = match args.first() {
                    Some(e) => self.regex_of(e)?,
                    None => return Ok(num(0.0)),
                };
                let repl = self.arg_str(args, 1)?;
                let target = match args.get(2) {
                    Some(Expr::Var(v)) => LValue::Var(*v),
                    Some(Expr::Index(v, s)) => LValue::Index(*v, s.clone()),
                    Some(Expr::Field(e)) => LValue::Field(e.clone()),
                    _ => LValue::Field(Box::new(Expr::Num(0.0))),
                };
                let loc = self.locate(&target)?;
                let cur = self.get_loc(&loc)?;
                let s = cur.to_bytes(&self.convfmt);
                let max = usize::try_from(crate::budget::budget()).unwrap_or(usize::MAX);
                let (out, n) = substitute(&re, &s, &repl, b == Builtin::Gsub, max);
                crate::budget::check_string(out.len()).map_err(Ctl::Interrupt)?;
                if n > 0 {
                    self.set_loc(loc, Value::Str(Rc::from(out)))?;
                }
                num(n as f64)
            }
            Builtin::Match => {
                let s = self.arg_str(args, 0)?;
                let re = match args.get(1) {
                    Some(e) => self.regex_of(e)?,
                    None => return Ok(num(0.0)),
                };
                let (st, ln) = match re.find_at(&s, 0) {
                    Some(m) => ((m.start + 1) as f64, (m.end - m.start) as f64),
                    None => (0.0, -1.0),
                };
                self.globals[crate::interp::slot::RSTART] = Cell::Val(num(st));
                self.globals[crate::interp::slot::RLENGTH] = Cell::Val(num(ln));
                num(st)
            }
            Builtin::Sprintf => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(self.eval(a)?);
                }
                if vals.is_empty() {
                    return Ok(Value::str(b""));
                }
                let fmt = vals.remove(0).to_bytes(&self.convfmt);
                match crate::format::sprintf(&fmt, &vals, &self.convfmt) {
                    Ok(v) => Value::Str(Rc::from(v)),
                    Err((_, m)) => {
                        return Err(Ctl::Err(format!(
                            "run time error: {}",
                            m.replace("printf", "sprintf")
                        )));
                    }
                }
            }
            Builtin::Tolower | Builtin::Toupper => {
                let s = self.arg_str(args, 0)?;
                let v: Vec<u8> = if b == Builtin::Tolower {
                    s.to_ascii_lowercase()
                } else {
                    s.to_ascii_uppercase()
                };
                Value::Str(Rc::from(v))
            }
            Builtin::Int => num(self.arg_num(args, 0)?.trunc()),
            Builtin::Sqrt => num(self.arg_num(args, 0)?.sqrt()),
            Builtin::Exp => num(self.arg_num(args, 0)?.exp()),
            Builtin::Log => num(self.arg_num(args, 0)?.ln()),
            Builtin::Sin => num(self.arg_num(args, 0)?.sin()),
            Builtin::Cos => num(self.arg_num(args, 0)?.cos()),
            Builtin::Atan2 => {
                let y = self.arg_num(args, 0)?;
                let x = self.arg_num(args, 1)?;
                num(y.atan2(x))
            }
            Builtin::Rand => num(self.rng.next_f64()),
            Builtin::Srand => {
                let arg = match args.first() {
                    Some(e) => self.eval(e)?,
                    None => Value::Num(
                        std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map(|d| d.as_secs() as f64)
                            .unwrap_or(0.0),
                    ),
                };
                // mawk seeds from the cell's number, clamped to int. A string
                // constant's cell has no number (mawk reads a stale slot: 0 on
                // the first call); `-v s=42` is a number there, so strnums are.
                let n = match &arg {
                    Value::Num(_) | Value::StrNum(_) => arg.num(),
                    Value::Str(_) | Value::Uninit => 0.0,
                };
                self.rng = crate::random::Random::new(d_to_i(n) as u32);
                std::mem::replace(&mut self.seed, arg)
            }
            Builtin::Close => {
                let name = self.arg_str(args, 0)?;
                num(self.close_stream(&name)?)
            }
            Builtin::Fflush => {
                self.flush_all()?;
                num(0.0)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(crate) fn gsub_empty() {
        let re = Regex::new(b"b*").unwrap_or_else(|_| unreachable!());
        assert_eq!(substitute(&re, b"abc", b"-", true, usize::MAX).0, b"-a-c-");
        let re = Regex::new(b"x*").unwrap_or_else(|_| unreachable!());
        assert_eq!(
            substitute(&re, b"abxc", b"-", true, usize::MAX).0,
            b"-a-b-c-"
        );
    }
}
