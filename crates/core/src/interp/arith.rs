//! Arithmetic: `$((…))`, `((…))`, `let`, array indices and C-style `for`.

use super::{Shell, Stop};
use brush_parser::ast::{
    ArithmeticExpr as E, ArithmeticTarget, BinaryOperator as B, UnaryAssignmentOperator as UA,
    UnaryOperator as U,
};
use safesh_label::Label;

type R = Result<i64, Stop>;

impl Shell {
    /// Expands and evaluates an indexed array's subscript (`a[i]=`, `unset
    /// 'a[i]'`, `printf -v 'a[i]'`): see [`Shell::eval_subscript_labeled`].
    pub(crate) fn eval_subscript(&mut self, text: &str) -> R {
        Ok(self.eval_subscript_labeled(text)?.0)
    }

    /// Evaluates arithmetic text already expanded.
    fn eval_arith_expanded(&mut self, expanded: &str) -> R {
        let t = expanded.trim();
        if t.is_empty() {
            return Ok(0);
        }
        if let Some(at) = comment_start(t) {
            // bash has no comments in arithmetic: `#` there is an operator error.
            let token = t[at..].to_string();
            return Err(self.arith_fail(
                t,
                &format!("syntax error: invalid arithmetic operator (error token is \"{token}\")"),
            ));
        }
        let t = self.encode_assoc_keys(t);
        let t = safesh_syntax::arith::unquote_subscripts(&t);
        let t = self.flatten_subscripts(&t, 0)?;
        let parsed = safesh_syntax::catch_quietly(|| brush_parser::arithmetic::parse(&t));
        match parsed {
            Ok(Ok(expr)) => self.eval_arith(&expr, 0),
            _ => {
                let what = match bad_number(&t) {
                    Some(n) => format!("value too great for base (error token is \"{n}\")"),
                    None => "syntax error in expression".to_string(),
                };
                let stop = self.arith_fail(&t, &what);
                // The shape holds with every subscript read as `0`: the error
                // is inside a subscript (`a['1']`, `a[1 + ]`).
                if safesh_syntax::arith::parse(&t).is_ok() {
                    return self.fatal_in_subscript(Err(stop));
                }
                Err(stop)
            }
        }
    }

    /// Writes the subscript of each associative array in `t` as one name the
    /// grammar reads (see [`ASSOC_KEY`]): bash takes the subscript's text as
    /// the key, quotes removed and blanks kept (`m["a b"]`, `m[ k ]`, `m[1+2]`).
    fn encode_assoc_keys<'t>(&self, t: &'t str) -> std::borrow::Cow<'t, str> {
        if !t.contains('[') {
            return std::borrow::Cow::Borrowed(t);
        }
        let b = t.as_bytes();
        let mut out = String::with_capacity(t.len());
        let mut done = 0;
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'[' {
                i += 1;
                continue;
            }
            let name_len = b[..i]
                .iter()
                .rev()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count();
            let name = &t[i - name_len..i];
            let assoc = name_len > 0
                && self
                    .vars
                    .get(self.vars.resolve(name))
                    .is_some_and(super::Var::is_assoc);
            let close = assoc
                .then(|| {
                    let mut depth = 0usize;
                    b[i..].iter().position(|&c| {
                        match c {
                            b'[' => depth += 1,
                            b']' => depth -= 1,
                            _ => {}
                        }
                        depth == 0
                    })
                })
                .flatten();
            let Some(len) = close else {
                i += 1;
                continue;
            };
            let key: String = {
                let raw = &t[i + 1..i + len];
                let mut k = String::with_capacity(raw.len());
                let mut chars = raw.chars().peekable();
                while let Some(c) = chars.next() {
                    match c {
                        '\'' | '"' => {}
                        '\\' if matches!(chars.peek(), Some('\'' | '"')) => {}
                        _ => k.push(c),
                    }
                }
                k
            };
            out.push_str(&t[done..=i]);
            out.push_str(ASSOC_KEY);
            for byte in key.bytes() {
                out.push_str(&format!("{byte:02x}"));
            }
            out.push(']');
            i += len + 1;
            done = i;
        }
        if done == 0 {
            return std::borrow::Cow::Borrowed(t);
        }
        out.push_str(&t[done..]);
        std::borrow::Cow::Owned(out)
    }

    /// Evaluates subscripted references nested in other subscripts first,
    /// innermost out, and puts their values in their place: the arithmetic
    /// grammar backtracks exponentially on nesting (see `safesh_syntax::arith`).
    fn flatten_subscripts<'t>(
        &mut self,
        t: &'t str,
        depth: u32,
    ) -> Result<std::borrow::Cow<'t, str>, Stop> {
        let Some(mut r) = safesh_syntax::arith::nested_subscript(t) else {
            return Ok(std::borrow::Cow::Borrowed(t));
        };
        let mut t = t.to_string();
        loop {
            self.check_cancel()?;
            // One level: `name[expr]` with no bracket in `expr`.
            let reference = t[r.clone()].to_string();
            let expr = match safesh_syntax::catch_quietly(|| {
                brush_parser::arithmetic::parse(&reference)
            }) {
                Ok(Ok(e)) => e,
                _ => return Err(self.arith_fail(&reference, "syntax error in expression")),
            };
            let v = self.eval_arith(&expr, depth)?;
            // Parenthesized: a negative value stays one operand.
            t.replace_range(r, &format!("({v})"));
            match safesh_syntax::arith::nested_subscript(&t) {
                Some(next) => r = next,
                None => return Ok(std::borrow::Cow::Owned(t)),
            }
        }
    }

    /// An indexed array's subscript, evaluated as arithmetic script text. An
    /// error in it (`a[1+]`, `${a[1/0]}`, `a['1']`) ends the (sub)shell with
    /// status 1, as in bash, where one elsewhere abandons only the command.
    pub(crate) fn eval_subscript_labeled(&mut self, text: &str) -> Result<(i64, Label), Stop> {
        let r = self.eval_arith_labeled(text);
        self.fatal_in_subscript(r)
    }

    /// `r`, with an abandoned command (an arithmetic error, already reported,
    /// status 1) turned into leaving the shell when the script is a string:
    /// what an error in a subscript does under `bash -c` (from a file, bash
    /// abandons the line only).
    fn fatal_in_subscript<T>(&self, r: Result<T, Stop>) -> Result<T, Stop> {
        match r {
            Err(Stop::Abort) if self.script_is_string => Err(Stop::Exit),
            r => r,
        }
    }

    /// Arithmetic script text evaluated, with the label of the result: what the text
    /// expanded (`a[$(cat f)]=1`) and every variable the expression read
    /// (`$((x + 1))` of a secret `x` is secret).
    pub(crate) fn eval_arith_labeled(&mut self, text: &str) -> Result<(i64, Label), Stop> {
        let text = safesh_syntax::arith::remove_script_quotes(text);
        self.eval_arith_seeded(&text, Label::empty())
    }

    /// [`Shell::eval_arith_labeled`] of text that itself carries `seed` (a value,
    /// not script text: `let "$n=1"` names its variable with data).
    fn eval_arith_seeded(&mut self, text: &str, seed: Label) -> Result<(i64, Label), Stop> {
        let (expanded, label) = if text.contains(['$', '`']) {
            let f = self.expand_heredoc(text)?;
            (std::borrow::Cow::Owned(f.text), f.label.join(&seed))
        } else {
            (std::borrow::Cow::Borrowed(text), seed)
        };
        // Variables read while evaluating join `arith_label` (an enclosing
        // evaluation sees them too).
        let outer = std::mem::replace(&mut self.arith_label, label);
        let r = self.eval_arith_expanded(&expanded);
        let read = std::mem::replace(&mut self.arith_label, outer);
        self.arith_label.join_assign(&read);
        Ok((r?, read))
    }

    /// Arithmetic on a value rather than script text (`let "$x"`, `declare -i`,
    /// `[[ $x -eq 1 ]]`): like bash, `$(…)` inside it is expanded and run again, so
    /// the value runs as code and must be trusted (the exec commit point).
    pub(crate) fn eval_arith_data(&mut self, text: &str, label: &Label) -> R {
        if text.contains(['$', '`']) {
            let as_code = super::expand::Field {
                text: text.to_string(),
                label: label.clone(),
            };
            self.commit_exec(
                safesh_flow::ExecKind::Eval,
                label,
                std::slice::from_ref(&as_code),
            )?;
        }
        Ok(self.eval_arith_seeded(text, label.clone())?.0)
    }

    fn arith_fail(&mut self, text: &str, what: &str) -> Stop {
        self.abort(format!("{}: {what}", decode_assoc_keys(text)))
    }

    fn var_number(&mut self, name: &str, depth: u32) -> R {
        let s = match name {
            "RANDOM" | "LINENO" | "SECONDS" => {
                let f = self.expand_raw_single(&format!("${name}"))?;
                f.text
            }
            _ => self.var_str(name),
        };
        if let Some(v) = self.vars.get(self.vars.resolve(name)) {
            self.arith_label.join_assign(&v.label);
        }
        if self.opts.nounset && self.vars.get(name).is_none() {
            self.diag(format!("{name}: unbound variable"));
            self.last_status = 127;
            return Err(Stop::Exit);
        }
        self.value_number(&s, depth)
    }

    fn value_number(&mut self, s: &str, depth: u32) -> R {
        let t = s.trim();
        if t.is_empty() {
            return Ok(0);
        }
        if let Some(n) = parse_int(t) {
            return Ok(n);
        }
        if depth > 64 {
            return Err(self.arith_fail(t, "expression recursion level exceeded"));
        }
        let t = self.flatten_subscripts(t, depth + 1)?;
        match safesh_syntax::catch_quietly(|| brush_parser::arithmetic::parse(&t)) {
            Ok(Ok(expr)) => self.eval_arith(&expr, depth + 1),
            _ => Err(self.arith_fail(&t, "syntax error: operand expected")),
        }
    }

    fn target_get(&mut self, t: &ArithmeticTarget, depth: u32) -> R {
        match t {
            ArithmeticTarget::Variable(n) => self.var_number(n, depth),
            ArithmeticTarget::ArrayElement(n, idx)
                if self.vars.get(n).is_some_and(super::Var::is_assoc) =>
            {
                let key = assoc_key(idx);
                if let Some(v) = self.vars.get(n) {
                    self.arith_label.join_assign(&v.label);
                }
                let s = match self.vars.get(n).map(|v| v.value.clone()) {
                    Some(super::Value::Assoc(a)) => a.get(&key).cloned().unwrap_or_default(),
                    _ => String::new(),
                };
                self.value_number(&s, depth)
            }
            ArithmeticTarget::ArrayElement(n, idx) => {
                let i = {
                    let r = self.eval_arith(idx, depth);
                    self.fatal_in_subscript(r)?
                };
                let i = self.vars.element_index(n, i);
                if let Some(v) = self.vars.get(n) {
                    self.arith_label.join_assign(&v.label);
                }
                let s = match self.vars.get(n).map(|v| v.value.clone()) {
                    Some(super::Value::Array(a)) => a.get(&i).cloned().unwrap_or_default(),
                    Some(super::Value::Str(s)) if i == 0 => s,
                    _ => String::new(),
                };
                self.value_number(&s, depth)
            }
        }
    }

    fn target_set(&mut self, t: &ArithmeticTarget, v: i64, depth: u32) -> Result<(), Stop> {
        // The value assigned depends on everything read so far (and the PC).
        let label = Label::agent().join(&self.arith_label).join(&self.pc);
        match t {
            ArithmeticTarget::Variable(n) => self.assign_scalar(n, v.to_string(), label),
            ArithmeticTarget::ArrayElement(n, idx)
                if self.vars.get(n).is_some_and(super::Var::is_assoc) =>
            {
                let key = assoc_key(idx);
                self.vars
                    .set_key(n, key, v.to_string(), label)
                    .map_err(|e| self.readonly_stop(&e.0))
            }
            ArithmeticTarget::ArrayElement(n, idx) => {
                let i = {
                    let r = self.eval_arith(idx, depth);
                    self.fatal_in_subscript(r)?
                };
                let i = self.vars.element_index(n, i);
                self.vars
                    .set_index(n, i, v.to_string(), label)
                    .map_err(|e| self.readonly_stop(&e.0))
            }
        }
    }

    /// Evaluates a parsed arithmetic expression.
    pub(crate) fn eval_arith(&mut self, e: &E, depth: u32) -> R {
        Ok(match e {
            E::Literal(n) => *n,
            E::Reference(t) => self.target_get(t, depth)?,
            E::UnaryOp(op, a) => {
                let a = self.eval_arith(a, depth)?;
                match op {
                    U::UnaryPlus => a,
                    U::UnaryMinus => a.wrapping_neg(),
                    U::BitwiseNot => !a,
                    U::LogicalNot => (a == 0) as i64,
                }
            }
            E::BinaryOp(op, a, b) => match op {
                B::LogicalAnd => {
                    let a = self.eval_arith(a, depth)?;
                    if a == 0 {
                        0
                    } else {
                        (self.eval_arith(b, depth)? != 0) as i64
                    }
                }
                B::LogicalOr => {
                    let a = self.eval_arith(a, depth)?;
                    if a != 0 {
                        1
                    } else {
                        (self.eval_arith(b, depth)? != 0) as i64
                    }
                }
                _ => {
                    let x = self.eval_arith(a, depth)?;
                    let y = self.eval_arith(b, depth)?;
                    self.binop(*op, x, y)?
                }
            },
            E::Conditional(c, a, b) => {
                if self.eval_arith(c, depth)? != 0 {
                    self.eval_arith(a, depth)?
                } else {
                    self.eval_arith(b, depth)?
                }
            }
            E::Assignment(t, v) => {
                let v = self.eval_arith(v, depth)?;
                self.target_set(t, v, depth)?;
                v
            }
            E::BinaryAssignment(op, t, v) => {
                let cur = self.target_get(t, depth)?;
                let v = self.eval_arith(v, depth)?;
                let r = self.binop(*op, cur, v)?;
                self.target_set(t, r, depth)?;
                r
            }
            E::UnaryAssignment(op, t) => {
                let cur = self.target_get(t, depth)?;
                let (new, ret) = match op {
                    UA::PrefixIncrement => (cur.wrapping_add(1), cur.wrapping_add(1)),
                    UA::PrefixDecrement => (cur.wrapping_sub(1), cur.wrapping_sub(1)),
                    UA::PostfixIncrement => (cur.wrapping_add(1), cur),
                    UA::PostfixDecrement => (cur.wrapping_sub(1), cur),
                };
                self.target_set(t, new, depth)?;
                ret
            }
        })
    }

    fn binop(&mut self, op: B, x: i64, y: i64) -> R {
        Ok(match op {
            B::Power => {
                if y < 0 {
                    return Err(self.arith_fail(&format!("{x}**{y}"), "exponent less than 0"));
                }
                x.wrapping_pow(y.min(u32::MAX as i64) as u32)
            }
            B::Multiply => x.wrapping_mul(y),
            B::Divide | B::Modulo => {
                if y == 0 {
                    let op = if matches!(op, B::Divide) { '/' } else { '%' };
                    return Err(self.arith_fail(
                        &format!("{x}{op}{y}"),
                        "division by 0 (error token is \"0\")",
                    ));
                }
                if matches!(op, B::Divide) {
                    x.wrapping_div(y)
                } else {
                    x.wrapping_rem(y)
                }
            }
            B::Comma => y,
            B::Add => x.wrapping_add(y),
            B::Subtract => x.wrapping_sub(y),
            B::ShiftLeft => x.wrapping_shl(y as u32),
            B::ShiftRight => x.wrapping_shr(y as u32),
            B::LessThan => (x < y) as i64,
            B::LessThanOrEqualTo => (x <= y) as i64,
            B::GreaterThan => (x > y) as i64,
            B::GreaterThanOrEqualTo => (x >= y) as i64,
            B::Equals => (x == y) as i64,
            B::NotEquals => (x != y) as i64,
            B::BitwiseAnd => x & y,
            B::BitwiseXor => x ^ y,
            B::BitwiseOr => x | y,
            B::LogicalAnd => (x != 0 && y != 0) as i64,
            B::LogicalOr => (x != 0 || y != 0) as i64,
        })
    }
}

/// The key of an associative-array element inside arithmetic: the index text was
/// already expanded, so a bare name is the key itself, not a variable.
fn assoc_key(idx: &E) -> String {
    match idx {
        E::Literal(n) => n.to_string(),
        E::Reference(ArithmeticTarget::Variable(name)) => match name.strip_prefix(ASSOC_KEY) {
            Some(hex) => decode_key(hex),
            None => name.clone(),
        },
        other => other.to_string(),
    }
}

/// How an associative array's key travels through the arithmetic grammar:
/// this prefix and the key's bytes in hex, one name.
const ASSOC_KEY: &str = "__safesh_assoc_key_";

/// The key [`Shell::encode_assoc_keys`] wrote as `hex`.
fn decode_key(hex: &str) -> String {
    let bytes: Vec<u8> = hex
        .as_bytes()
        .chunks(2)
        .filter_map(|p| {
            std::str::from_utf8(p)
                .ok()
                .and_then(|s| u8::from_str_radix(s, 16).ok())
        })
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `text` with every encoded key written back as its text (for messages).
fn decode_assoc_keys(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(ASSOC_KEY) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(ASSOC_KEY) {
        out.push_str(&rest[..at]);
        let hex_start = at + ASSOC_KEY.len();
        let hex_len = rest[hex_start..]
            .bytes()
            .take_while(u8::is_ascii_hexdigit)
            .count();
        out.push_str(&decode_key(&rest[hex_start..hex_start + hex_len]));
        rest = &rest[hex_start + hex_len..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// Where a `#` starts a would-be comment in arithmetic text: a `#` not right
/// after the base of a `BASE#digits` constant.
fn comment_start(t: &str) -> Option<usize> {
    let b = t.as_bytes();
    b.iter()
        .enumerate()
        .find_map(|(i, c)| (*c == b'#' && !(i > 0 && b[i - 1].is_ascii_digit())).then_some(i))
}

/// The first number-like token of `t` that is not a valid constant (`08`,
/// `2#12`, `1x`): the token bash names in "value too great for base".
fn bad_number(t: &str) -> Option<String> {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let starts = b[i].is_ascii_digit()
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'));
        if !starts {
            i += 1;
            continue;
        }
        let end = t[i..]
            .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '#' | '@' | '_')))
            .map(|k| i + k)
            .unwrap_or(t.len());
        let token = &t[i..end];
        if parse_int(token).is_none() {
            return Some(token.to_string());
        }
        i = end;
    }
    None
}

/// Parses a shell integer constant: decimal, `0x…`, octal `0…`, or `BASE#digits`.
pub(crate) fn parse_int(t: &str) -> Option<i64> {
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    if body.is_empty() {
        return None;
    }
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some((base, digits)) = body.split_once('#') {
        let base: u32 = base.parse().ok()?;
        if !(2..=64).contains(&base) {
            return None;
        }
        if base <= 36 {
            i64::from_str_radix(digits, base).ok()?
        } else {
            return None;
        }
    } else if body.len() > 1 && body.starts_with('0') {
        i64::from_str_radix(&body[1..], 8).ok()?
    } else if body.bytes().all(|b| b.is_ascii_digit()) {
        body.parse::<i64>()
            .ok()
            .or_else(|| Some(body.parse::<u64>().ok()? as i64))?
    } else {
        return None;
    };
    Some(if neg { v.wrapping_neg() } else { v })
}
