//! Awk values: numbers, strings, and "strnums" (input text that may compare
//! numerically), with awk's conversion rules.

use std::rc::Rc;

/// An immutable shared byte string.
pub type Str = Rc<[u8]>;

/// A scalar awk value.
#[derive(Clone, Debug, Default)]
pub enum Value {
    /// Never assigned: both "" and 0.
    #[default]
    Uninit,
    /// A number.
    Num(f64),
    /// A string (constant or computed).
    Str(Str),
    /// Text from input (fields, getline, split, ARGV, -v): numeric if it looks numeric.
    StrNum(Str),
}

impl Value {
    /// A string value from bytes.
    pub fn str(b: &[u8]) -> Value {
        Value::Str(Rc::from(b))
    }

    /// A strnum value from bytes.
    pub fn strnum(b: &[u8]) -> Value {
        Value::StrNum(Rc::from(b))
    }

    /// The numeric value.
    pub fn num(&self) -> f64 {
        match self {
            Value::Uninit => 0.0,
            Value::Num(n) => *n,
            Value::Str(s) | Value::StrNum(s) => str_to_num(s),
        }
    }

    /// Awk truth: numbers and numeric strnums by value, strings by non-emptiness.
    pub fn truth(&self) -> bool {
        match self {
            Value::Uninit => false,
            Value::Num(n) => *n != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::StrNum(s) => {
                if looks_numeric(s) {
                    str_to_num(s) != 0.0
                } else {
                    !s.is_empty()
                }
            }
        }
    }

    /// True when the value compares as a number.
    pub fn is_numeric(&self) -> bool {
        match self {
            Value::Uninit | Value::Num(_) => true,
            Value::Str(_) => false,
            Value::StrNum(s) => looks_numeric(s),
        }
    }

    /// The string value, numbers converted with `fmt` (CONVFMT or OFMT).
    pub fn to_bytes(&self, fmt: &[u8]) -> Str {
        match self {
            Value::Uninit => Rc::from(&b""[..]),
            Value::Num(n) => Rc::from(num_to_str(*n, fmt)),
            Value::Str(s) | Value::StrNum(s) => s.clone(),
        }
    }

    /// Appends the string value to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>, fmt: &[u8]) {
        match self {
            Value::Uninit => {}
            Value::Num(n) => out.extend_from_slice(&num_to_str(*n, fmt)),
            Value::Str(s) | Value::StrNum(s) => out.extend_from_slice(s),
        }
    }
}

/// Converts a number to its string form: integral values within int range print as
/// integers (mawk's rule), others through the format `fmt`.
pub fn num_to_str(n: f64, fmt: &[u8]) -> Vec<u8> {
    const MAX_INT: f64 = 2147483647.0;
    if n == n.trunc() && (-MAX_INT..=MAX_INT).contains(&n) {
        return format!("{}", n as i64).into_bytes();
    }
    crate::format::format_number(fmt, n)
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Parses the longest numeric prefix like C `strtod` (decimal, hex, inf, nan);
/// returns the value and the bytes consumed (0 when no number).
pub fn strtod(s: &[u8]) -> (f64, usize) {
    let mut i = 0;
    while i < s.len() && is_space(s[i]) {
        i += 1;
    }
    let start = i;
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let rest = &s[i..];
    let starts = |w: &[u8]| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w);
    let sign = if neg { -1.0 } else { 1.0 };
    if starts(b"inf") {
        let n = if starts(b"infinity") { 8 } else { 3 };
        return (sign * f64::INFINITY, i + n);
    }
    if starts(b"nan") {
        return (sign * f64::NAN, i + 3);
    }
    if starts(b"0x") && rest.get(2).is_some_and(|b| b.is_ascii_hexdigit()) {
        let mut j = 2;
        let mut v = 0.0f64;
        while let Some(d) = rest.get(j).and_then(|b| (*b as char).to_digit(16)) {
            v = v * 16.0 + d as f64;
            j += 1;
        }
        return (sign * v, i + j);
    }
    let mut j = 0;
    let mut digits = 0;
    while rest.get(j).is_some_and(u8::is_ascii_digit) {
        j += 1;
        digits += 1;
    }
    if rest.get(j) == Some(&b'.') {
        j += 1;
        while rest.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return (0.0, 0);
    }
    if matches!(rest.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(rest.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if rest.get(k).is_some_and(u8::is_ascii_digit) {
            while rest.get(k).is_some_and(u8::is_ascii_digit) {
                k += 1;
            }
            j = k;
        }
    }
    let text = std::str::from_utf8(&s[start..i + j]).unwrap_or("0");
    let text = text.strip_prefix('+').unwrap_or(text);
    let v = text.parse::<f64>().unwrap_or(0.0);
    let _ = start;
    (v, i + j)
}

/// The numeric value of a string (its numeric prefix, else 0).
pub fn str_to_num(s: &[u8]) -> f64 {
    if let Some(v) = fast_int(s) {
        return v;
    }
    strtod(s).0
}

/// Fast path for plain decimal integers (the common case for CSV columns).
fn fast_int(s: &[u8]) -> Option<f64> {
    if s.is_empty() || s.len() > 15 {
        return None;
    }
    let (neg, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let mut v: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (b - b'0') as i64;
    }
    Some(if neg { -(v as f64) } else { v as f64 })
}

/// True when the whole string (blanks aside) is a number that makes input text
/// compare numerically. mawk: C `strtod` must consume it all and it must end in a
/// digit or `.` (so "0x10" and "1e5" count, "0x1A", "inf" and "1e" do not).
pub fn looks_numeric(s: &[u8]) -> bool {
    let mut end = s.len();
    while end > 0 && is_space(s[end - 1]) {
        end -= 1;
    }
    let t = &s[..end];
    match t.last() {
        Some(b) if b.is_ascii_digit() || *b == b'.' => {}
        _ => return false,
    }
    let (v, n) = strtod(t);
    // C `strtod` reports ERANGE for these; mawk then keeps the text a string.
    n == t.len() && !out_of_range(t, v)
}

/// True when decimal `text` converts to `v` only by overflowing to infinity
/// or underflowing to zero or a subnormal (C `strtod`'s ERANGE).
pub fn out_of_range(text: &[u8], v: f64) -> bool {
    if v.is_infinite() {
        return true;
    }
    if v != 0.0 && v.abs() >= f64::MIN_POSITIVE {
        return false;
    }
    // Zero or subnormal: out of range unless the digits themselves are zero.
    let t: Vec<u8> = text.iter().copied().filter(|b| !is_space(*b)).collect();
    let body = t
        .strip_prefix(b"-")
        .or_else(|| t.strip_prefix(b"+"))
        .unwrap_or(&t);
    if body.len() > 1 && body[0] == b'0' && matches!(body[1], b'x' | b'X') {
        return false;
    }
    let mantissa = body
        .split(|b| *b == b'e' || *b == b'E')
        .next()
        .unwrap_or(&[]);
    mantissa.iter().any(|b| matches!(b, b'1'..=b'9'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(str_to_num(b"3x"), 3.0);
        assert_eq!(str_to_num(b" -2.5e1z"), -25.0);
        assert_eq!(str_to_num(b"0x1A"), 26.0);
        assert!(looks_numeric(b" 1e3 "));
        assert!(!looks_numeric(b"0x1A"));
        assert!(looks_numeric(b"0x10"));
        assert!(!looks_numeric(b"1e"));
        assert!(!looks_numeric(b"."));
        assert!(looks_numeric(b" 5. "));
        assert_eq!(num_to_str(3.0, b"%.6g"), b"3");
        assert!(!looks_numeric(b"1e400"));
        assert!(!looks_numeric(b"-1e309"));
        assert!(!looks_numeric(b"1e-400"));
        assert!(!looks_numeric(b"4e-320"));
        assert!(looks_numeric(b"0e-500"));
        assert!(looks_numeric(b"1e308"));
    }
}
