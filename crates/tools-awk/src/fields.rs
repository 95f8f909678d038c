//! Field splitting and the record's fields (`$0`, `$i`, `NF`).

use crate::ast::Expr;
use crate::interp::{Ctl, Interp, Res};
use crate::regex::AwkRegex;
use crate::value::Value;
use std::rc::Rc;

/// Largest field index accepted (mawk crashes on huge ones; we refuse).
pub const MAX_FIELD: usize = 1 << 20;

/// How fields are split.
#[derive(Clone)]
pub enum Splitter {
    /// Runs of blanks; leading/trailing ignored.
    Space,
    /// A literal byte.
    Byte(u8),
    /// A regex.
    Regex(Rc<AwkRegex>),
    /// Every character is a field (`FS = ""`).
    Chars,
}

fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\n'
}

/// Splits `s` with `sp`, pushing (start, end) spans.
pub fn split_spans(s: &[u8], sp: &Splitter, out: &mut Vec<(usize, usize)>) {
    out.clear();
    if s.is_empty() {
        return;
    }
    match sp {
        Splitter::Space => {
            let mut i = 0;
            loop {
                while i < s.len() && is_blank(s[i]) {
                    i += 1;
                }
                if i >= s.len() {
                    break;
                }
                let st = i;
                while i < s.len() && !is_blank(s[i]) {
                    i += 1;
                }
                out.push((st, i));
            }
        }
        Splitter::Byte(c) => {
            let mut st = 0;
            for p in memchr::memchr_iter(*c, s) {
                out.push((st, p));
                st = p + 1;
            }
            out.push((st, s.len()));
        }
        Splitter::Regex(re) => {
            let mut st = 0;
            while let Some(m) = re.next_nonempty(s, st) {
                out.push((st, m.start));
                st = m.end;
            }
            out.push((st, s.len()));
        }
        Splitter::Chars => {
            for i in 0..s.len() {
                out.push((i, i + 1));
            }
        }
    }
}

impl Interp<'_, '_> {
    pub(crate) fn set_record(&mut self, rec: &[u8]) {
        self.record.clear();
        self.record.extend_from_slice(rec);
        self.split_done = false;
        self.fvals = None;
    }

    pub(crate) fn ensure_split(&mut self) {
        if self.split_done {
            return;
        }
        split_spans(&self.record, &self.fs, &mut self.spans);
        self.nf = self.spans.len();
        self.fvals = None;
        self.split_done = true;
    }

    pub(crate) fn materialize(&mut self) {
        self.ensure_split();
        if self.fvals.is_none() {
            let v = self
                .spans
                .iter()
                .map(|&(a, b)| Value::strnum(&self.record[a..b]))
                .collect();
            self.fvals = Some(v);
        }
    }

    pub(crate) fn rebuild(&mut self) {
        let mut rec = Vec::new();
        if let Some(f) = &self.fvals {
            for (i, v) in f.iter().take(self.nf).enumerate() {
                if i > 0 {
                    rec.extend_from_slice(&self.ofs);
                }
                v.write_to(&mut rec, &self.convfmt);
            }
        }
        self.record = rec;
    }

    pub(crate) fn set_nf(&mut self, n: usize) -> Res<()> {
        self.materialize();
        if let Some(f) = &mut self.fvals {
            f.resize(n, Value::Uninit);
        }
        self.nf = n;
        self.rebuild();
        Ok(())
    }

    pub(crate) fn field_index(&mut self, e: &Expr) -> Res<usize> {
        let n = self.eval_num(e)?;
        if n < 0.0 {
            return Err(Ctl::Err(format!("negative field index ${}", n as i64)));
        }
        if n > MAX_FIELD as f64 {
            let shown = crate::value::num_to_str(n, b"%.6g");
            return Err(Ctl::Err(format!(
                "${} is invalid field index",
                String::from_utf8_lossy(&shown)
            )));
        }
        Ok(n as usize)
    }

    /// The bytes of field `i` (no allocation when unmodified).
    /// `None` when the field holds a number (assigned), which needs formatting.
    pub(crate) fn field_bytes(&mut self, i: usize) -> Option<&[u8]> {
        if i == 0 {
            return Some(&self.record);
        }
        self.ensure_split();
        if i > self.nf {
            return Some(b"");
        }
        if let Some(f) = &self.fvals {
            return match f.get(i - 1) {
                Some(Value::Str(s) | Value::StrNum(s)) => Some(s),
                Some(Value::Uninit) | None => Some(b""),
                Some(Value::Num(_)) => None,
            };
        }
        match self.spans.get(i - 1) {
            Some(&(a, b)) => Some(&self.record[a..b]),
            None => Some(b""),
        }
    }

    pub(crate) fn get_field(&mut self, i: usize) -> Value {
        if i == 0 {
            return Value::strnum(&self.record);
        }
        self.ensure_split();
        if let Some(f) = &self.fvals {
            return f.get(i - 1).cloned().unwrap_or_else(|| Value::str(b""));
        }
        match self.spans.get(i - 1) {
            Some(&(a, b)) => Value::strnum(&self.record[a..b]),
            // mawk: a field past NF is the empty string (compares as a string).
            None => Value::str(b""),
        }
    }

    pub(crate) fn set_field(&mut self, i: usize, v: Value) -> Res<()> {
        if i == 0 {
            let b = v.to_bytes(&self.convfmt);
            self.set_record(&b);
            return Ok(());
        }
        self.materialize();
        if let Some(f) = &mut self.fvals {
            if f.len() < i {
                f.resize(i, Value::Uninit);
            }
            f[i - 1] = v;
            if i > self.nf {
                self.nf = i;
            }
        }
        self.rebuild();
        Ok(())
    }
}
