//! `expr`: evaluates its arguments as an expression (GNU coreutils grammar):
//! `| & < <= = == != >= > + - * / % :` and `match substr index length + (...)`.
//! Exit status 1 when the result is null or 0, 2 on syntax or usage errors.

use safesh_utils::posix_regex::{Dialect, Options, Target, translate_with};
use safesh_utils::{UtilCtx, UtilResult};
use std::cmp::Ordering;

/// An expression value: GNU keeps strings and integers apart.
#[derive(Clone, Debug)]
enum Val {
    Int(i128),
    Str(String),
}

/// Why evaluation stopped (message and exit status).
struct Fail(String, i32);

type R<T> = Result<T, Fail>;

fn syntax(msg: String) -> Fail {
    Fail(format!("syntax error: {msg}"), 2)
}

/// GNU's `looks_like_integer`: optional `-`, then one or more digits.
fn int_of(s: &str) -> Option<i128> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl Val {
    fn text(&self) -> String {
        match self {
            Val::Int(i) => i.to_string(),
            Val::Str(s) => s.clone(),
        }
    }

    /// True for the empty string and for zero (`0`, `-0`, `00`).
    fn null(&self) -> bool {
        match self {
            Val::Int(i) => *i == 0,
            Val::Str(s) => {
                let t = s.strip_prefix('-').unwrap_or(s);
                s.is_empty() || (!t.is_empty() && t.bytes().all(|b| b == b'0'))
            }
        }
    }

    fn int(&self) -> R<i128> {
        match self {
            Val::Int(i) => Ok(*i),
            Val::Str(s) => int_of(s).ok_or_else(|| Fail("non-integer argument".into(), 2)),
        }
    }
}

struct Parser<'a> {
    args: &'a [String],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.args.get(self.pos).map(String::as_str)
    }

    fn next_is(&mut self, s: &str) -> bool {
        if self.peek() == Some(s) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn next_in(&mut self, set: &[&'static str]) -> Option<&'static str> {
        let p = self.peek()?;
        let hit = set.iter().find(|s| **s == p).copied()?;
        self.pos += 1;
        Some(hit)
    }

    /// The argument before the current position, for messages.
    fn prev(&self) -> String {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.args.get(i))
            .cloned()
            .unwrap_or_default()
    }

    fn or(&mut self, ev: bool) -> R<Val> {
        let mut l = self.and(ev)?;
        while self.next_is("|") {
            let r = self.and(ev && l.null())?;
            if l.null() {
                l = if r.null() { Val::Int(0) } else { r };
            }
        }
        Ok(l)
    }

    fn and(&mut self, ev: bool) -> R<Val> {
        let mut l = self.cmp(ev)?;
        while self.next_is("&") {
            let r = self.cmp(ev && !l.null())?;
            if l.null() || r.null() {
                l = Val::Int(0);
            }
        }
        Ok(l)
    }

    fn cmp(&mut self, ev: bool) -> R<Val> {
        let mut l = self.add(ev)?;
        while let Some(op) = self.next_in(&["<", "<=", "=", "==", "!=", ">=", ">"]) {
            let r = self.add(ev)?;
            if !ev {
                continue;
            }
            let ord = match (int_of(&l.text()), int_of(&r.text())) {
                (Some(a), Some(b)) => a.cmp(&b),
                _ => l.text().as_bytes().cmp(r.text().as_bytes()),
            };
            let t = match op {
                "<" => ord == Ordering::Less,
                "<=" => ord != Ordering::Greater,
                "=" | "==" => ord == Ordering::Equal,
                "!=" => ord != Ordering::Equal,
                ">=" => ord != Ordering::Less,
                _ => ord == Ordering::Greater,
            };
            l = Val::Int(t as i128);
        }
        Ok(l)
    }

    fn add(&mut self, ev: bool) -> R<Val> {
        let mut l = self.mul(ev)?;
        while let Some(op) = self.next_in(&["+", "-"]) {
            let r = self.mul(ev)?;
            if ev {
                let (a, b) = (l.int()?, r.int()?);
                let v = if op == "+" {
                    a.checked_add(b)
                } else {
                    a.checked_sub(b)
                };
                l = Val::Int(v.ok_or_else(|| Fail("result too large".into(), 2))?);
            }
        }
        Ok(l)
    }

    fn mul(&mut self, ev: bool) -> R<Val> {
        let mut l = self.colon(ev)?;
        while let Some(op) = self.next_in(&["*", "/", "%"]) {
            let r = self.colon(ev)?;
            if ev {
                let (a, b) = (l.int()?, r.int()?);
                if op != "*" && b == 0 {
                    return Err(Fail("division by zero".into(), 2));
                }
                let v = match op {
                    "*" => a.checked_mul(b),
                    "/" => a.checked_div(b),
                    _ => a.checked_rem(b),
                };
                l = Val::Int(v.ok_or_else(|| Fail("result too large".into(), 2))?);
            }
        }
        Ok(l)
    }

    fn colon(&mut self, ev: bool) -> R<Val> {
        let mut l = self.unary(ev)?;
        while self.next_is(":") {
            let r = self.unary(ev)?;
            if ev {
                l = matches(&l.text(), &r.text())?;
            }
        }
        Ok(l)
    }

    fn unary(&mut self, ev: bool) -> R<Val> {
        if self.peek().is_none() {
            return Err(syntax(format!("missing argument after '{}'", self.prev())));
        }
        if self.next_is("+") {
            return match self.peek() {
                Some(t) => {
                    let t = t.to_string();
                    self.pos += 1;
                    Ok(Val::Str(t))
                }
                None => Err(syntax(format!("missing argument after '{}'", self.prev()))),
            };
        }
        if self.next_is("length") {
            let s = self.unary(ev)?.text();
            return Ok(Val::Int(s.len() as i128));
        }
        if self.next_is("match") {
            let s = self.unary(ev)?;
            let re = self.unary(ev)?;
            return if ev {
                matches(&s.text(), &re.text())
            } else {
                Ok(Val::Int(0))
            };
        }
        if self.next_is("index") {
            let s = self.unary(ev)?.text();
            let set = self.unary(ev)?.text();
            let pos = s.bytes().position(|b| set.as_bytes().contains(&b));
            return Ok(Val::Int(pos.map_or(0, |p| p as i128 + 1)));
        }
        if self.next_is("substr") {
            let s = self.unary(ev)?.text();
            let pos = self.unary(ev)?.text();
            let len = self.unary(ev)?.text();
            let (Some(pos), Some(len)) = (int_of(&pos), int_of(&len)) else {
                return Ok(Val::Str(String::new()));
            };
            let n = s.len() as i128;
            if pos < 1 || pos > n || len < 1 {
                return Ok(Val::Str(String::new()));
            }
            let start = (pos - 1) as usize;
            let end = (pos - 1).saturating_add(len).min(n) as usize;
            let bytes = s.as_bytes().get(start..end).unwrap_or(&[]);
            return Ok(Val::Str(String::from_utf8_lossy(bytes).into_owned()));
        }
        self.primary(ev)
    }

    fn primary(&mut self, ev: bool) -> R<Val> {
        if self.next_is("(") {
            let v = self.or(ev)?;
            match self.peek() {
                None => return Err(syntax(format!("expecting ')' after '{}'", self.prev()))),
                Some(")") => self.pos += 1,
                Some(t) => return Err(syntax(format!("expecting ')' instead of '{t}'"))),
            }
            return Ok(v);
        }
        if self.peek() == Some(")") {
            return Err(syntax("unexpected ')'".into()));
        }
        match self.peek() {
            Some(t) => {
                let t = t.to_string();
                self.pos += 1;
                Ok(Val::Str(t))
            }
            None => Err(syntax(format!("missing argument after '{}'", self.prev()))),
        }
    }
}

/// `STRING : REGEX`, anchored at the start: the first group's text when the
/// pattern has groups, else the length of the match.
fn matches(s: &str, pat: &str) -> R<Val> {
    let mut opts = Options::new(Dialect::Basic);
    // C locale: bytes are characters, so match lengths count bytes as GNU does.
    opts.target = Target::Bytes;
    let t = translate_with(pat, &opts).map_err(|e| Fail(e, 2))?;
    if t.backrefs {
        return Err(Fail("back-references are not supported".into(), 2));
    }
    let re = regex::bytes::Regex::new(&format!("^(?:{})", t.pattern))
        .map_err(|e| Fail(e.to_string(), 2))?;
    let text = |m: Option<regex::bytes::Match<'_>>| {
        Val::Str(String::from_utf8_lossy(m.map_or(&b""[..], |m| m.as_bytes())).into_owned())
    };
    match re.captures(s.as_bytes()) {
        Some(c) if t.groups > 0 => Ok(text(c.get(1))),
        Some(c) => Ok(Val::Int(c.get(0).map_or(0, |m| m.end()) as i128)),
        None if t.groups > 0 => Ok(Val::Str(String::new())),
        None => Ok(Val::Int(0)),
    }
}

/// Runs `expr`.
pub fn expr(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let owned: Vec<String> = ctx.args().to_vec();
    let mut args: &[String] = &owned;
    if args.first().is_some_and(|a| a == "--") {
        args = &args[1..];
    }
    if args.is_empty() {
        ctx.warn("missing operand");
        ctx.warn("Try 'expr --help' for more information.");
        return Ok(2);
    }
    let mut p = Parser { args, pos: 0 };
    let v = p.or(true).and_then(|v| match p.peek() {
        Some(t) => Err(syntax(format!("unexpected argument '{t}'"))),
        None => Ok(v),
    });
    match v {
        Ok(v) => {
            let line = format!("{}\n", v.text());
            if let Err(e) = ctx
                .stdout
                .write_all(line.as_bytes())
                .and_then(|_| ctx.stdout.flush())
            {
                return Ok(ctx.write_failed(&e));
            }
            Ok(if v.null() { 1 } else { 0 })
        }
        Err(Fail(msg, code)) => {
            ctx.warn(msg);
            Ok(code)
        }
    }
}
