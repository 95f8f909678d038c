//! Numeric arguments as bash's `printf` reads them (`strtoimax`/`strtold` with
//! base prefixes, `'c` character codes) and as `seq` reads them.

use crate::ld::Ld;

/// A problem with a numeric argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumErr {
    /// No digits at all (`x: invalid number`; coreutils: `expected a numeric value`).
    Invalid,
    /// Digits, then something else (`1a: invalid number`; coreutils: `value not
    /// completely converted`).
    Trailing,
    /// A `0x` without hex digits (`0x: invalid hex number`).
    InvalidHex,
    /// Out of range (a warning only; the value is clamped).
    Range,
}

fn skip_space(s: &[u8]) -> &[u8] {
    let n = s
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | 11 | 12 | b'\r'))
        .count();
    &s[n..]
}

/// The code of the character after a leading quote (`'a` → 97), if `s` is one.
fn char_const(s: &[u8]) -> Option<u8> {
    match s.first() {
        Some(b'\'' | b'"') => Some(s.get(1).copied().unwrap_or(0)),
        _ => None,
    }
}

/// Parses an integer like `strtoumax(s, 0)`: returns sign, magnitude (saturated),
/// and the error, if any.
fn parse_mag(s: &[u8]) -> (bool, u128, Option<NumErr>) {
    if s.is_empty() {
        return (false, 0, None);
    }
    if let Some(c) = char_const(s) {
        return (false, c as u128, None);
    }
    let t = skip_space(s);
    let (neg, t) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, t, hex) = if (t.starts_with(b"0x") || t.starts_with(b"0X"))
        && t.get(2).is_some_and(|b| b.is_ascii_hexdigit())
    {
        (16, &t[2..], true)
    } else if t.starts_with(b"0x") || t.starts_with(b"0X") {
        // "0x" alone: strtol reads the 0 and stops at the x.
        return (neg, 0, Some(NumErr::InvalidHex));
    } else if t.first() == Some(&b'0') {
        (8, t, false)
    } else {
        (10, t, false)
    };
    let _ = hex;
    let mut v: u128 = 0;
    let mut n = 0;
    let mut over = false;
    for &b in t {
        let Some(d) = (b as char).to_digit(radix) else {
            break;
        };
        v = v * radix as u128 + d as u128;
        if v > u64::MAX as u128 * 2 {
            over = true;
            v = u64::MAX as u128 * 2;
        }
        n += 1;
    }
    let err = if n == 0 {
        Some(NumErr::Invalid)
    } else if n < t.len() {
        Some(NumErr::Trailing)
    } else if over {
        Some(NumErr::Range)
    } else {
        None
    };
    (neg, v, err)
}

/// Reads a signed integer for `%d %i` (clamped to the `i64` range).
pub fn parse_signed(s: &str) -> (i64, Option<NumErr>) {
    let (neg, mag, err) = parse_mag(s.as_bytes());
    let (v, range) = if neg {
        if mag > i64::MAX as u128 + 1 {
            (i64::MIN, true)
        } else {
            ((mag as i128).wrapping_neg() as i64, false)
        }
    } else if mag > i64::MAX as u128 {
        (i64::MAX, true)
    } else {
        (mag as i64, false)
    };
    (v, err.or(range.then_some(NumErr::Range)))
}

/// Reads an unsigned integer for `%u %o %x %X` (negative values wrap, as strtoumax).
pub fn parse_unsigned(s: &str) -> (u64, Option<NumErr>) {
    let (neg, mag, err) = parse_mag(s.as_bytes());
    if mag > u64::MAX as u128 {
        return (u64::MAX, err.or(Some(NumErr::Range)));
    }
    let m = mag as u64;
    (if neg { m.wrapping_neg() } else { m }, err)
}

/// The longest prefix of `t` that `strtod` reads as a number, and its value.
pub fn float_prefix(t: &[u8]) -> Option<(usize, f64)> {
    let mut i = 0;
    let neg = match t.first() {
        Some(b'-') => {
            i = 1;
            true
        }
        Some(b'+') => {
            i = 1;
            false
        }
        _ => false,
    };
    let rest = &t[i..];
    let lower: Vec<u8> = rest
        .iter()
        .take(8)
        .map(|b| b.to_ascii_lowercase())
        .collect();
    // Negation (not multiplication) so that `-nan` keeps its sign bit.
    let sign = |v: f64| if neg { -v } else { v };
    if lower.starts_with(b"infinity") {
        return Some((i + 8, sign(f64::INFINITY)));
    }
    if lower.starts_with(b"inf") {
        return Some((i + 3, sign(f64::INFINITY)));
    }
    if lower.starts_with(b"nan") {
        return Some((i + 3, sign(f64::NAN)));
    }
    if lower.starts_with(b"0x")
        && rest.len() > 2
        && let Some((n, v)) = hex_float(&rest[2..])
    {
        return Some((i + 2 + n, sign(v)));
    }
    let mut j = 0;
    let int_digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    j += int_digits;
    let mut frac_digits = 0;
    if rest.get(j) == Some(&b'.') {
        frac_digits = rest[j + 1..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if int_digits + frac_digits > 0 {
            j += 1 + frac_digits;
        }
    }
    if int_digits + frac_digits == 0 {
        return None;
    }
    if matches!(rest.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(rest.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let ed = rest[k.min(rest.len())..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        if ed > 0 {
            j = k + ed;
        }
    }
    let text = std::str::from_utf8(&rest[..j]).ok()?;
    let text = text.strip_suffix('.').unwrap_or(text);
    let text = if text.starts_with('.') {
        format!("0{text}")
    } else {
        text.to_string()
    };
    let v: f64 = text.parse().ok()?;
    Some((i + j, sign(v)))
}

/// Reads the digits of a hex float after `0x` (`1.8p3`).
fn hex_float(s: &[u8]) -> Option<(usize, f64)> {
    let mut i = 0;
    let mut v = 0f64;
    let mut any = false;
    while let Some(d) = s.get(i).and_then(|&b| (b as char).to_digit(16)) {
        v = v * 16.0 + d as f64;
        i += 1;
        any = true;
    }
    let mut scale = 0i32;
    if s.get(i) == Some(&b'.') {
        let mut k = i + 1;
        while let Some(d) = s.get(k).and_then(|&b| (b as char).to_digit(16)) {
            v = v * 16.0 + d as f64;
            scale -= 4;
            k += 1;
            any = true;
        }
        if any {
            i = k;
        }
    }
    if !any {
        return None;
    }
    if matches!(s.get(i), Some(b'p' | b'P')) {
        let mut k = i + 1;
        let eneg = match s.get(k) {
            Some(b'-') => {
                k += 1;
                true
            }
            Some(b'+') => {
                k += 1;
                false
            }
            _ => false,
        };
        let start = k;
        let mut e = 0i32;
        while let Some(d) = s.get(k).and_then(|&b| (b as char).to_digit(10)) {
            e = e.saturating_mul(10).saturating_add(d as i32);
            k += 1;
        }
        if k > start {
            scale += if eneg { -e } else { e };
            i = k;
        }
    }
    Some((i, v * 2f64.powi(scale)))
}

/// Reads a floating-point argument for `%e %f %g %a`, as `strtold` would.
pub fn parse_float(s: &str) -> (Ld, Option<NumErr>) {
    let zero = Ld::from_f64(0.0);
    let b = s.as_bytes();
    if b.is_empty() {
        return (zero, None);
    }
    if let Some(c) = char_const(b) {
        return (Ld::from_f64(c as f64), None);
    }
    let t = skip_space(b);
    match Ld::parse_prefix(t) {
        Some((n, v)) if n == t.len() => (v, None),
        Some((_, v)) => (v, Some(NumErr::Trailing)),
        None => (zero, Some(NumErr::Invalid)),
    }
}
