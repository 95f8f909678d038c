//! The orderings behind sort's key types: numeric (`-n`), general numeric (`-g`),
//! human sizes (`-h`), month names (`-M`) and version strings (`-V`), each a
//! transcription of the GNU coreutils / gnulib algorithm for the C locale.

use std::cmp::Ordering;

/// Blanks as GNU sort defines them: `isblank` plus newline.
pub fn is_blank(b: u8) -> bool {
    b == b' ' || b == b'\t' || b == b'\n'
}

fn skip_blanks(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|b| is_blank(**b)).count();
    &s[n..]
}

/// A parsed `-n` number: sign, integer digits without leading zeros, fraction
/// digits without trailing zeros.
struct Num<'a> {
    neg: bool,
    int: &'a [u8],
    frac: &'a [u8],
}

fn parse_num(s: &[u8]) -> Num<'_> {
    let (neg, s) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let nd = s.iter().take_while(|b| b.is_ascii_digit()).count();
    let int = &s[..nd];
    let int = &int[int.iter().take_while(|b| **b == b'0').count()..];
    let rest = &s[nd..];
    let frac: &[u8] = match rest.split_first() {
        Some((b'.', f)) => {
            let fd = f.iter().take_while(|b| b.is_ascii_digit()).count();
            let f = &f[..fd];
            let keep = f.len() - f.iter().rev().take_while(|b| **b == b'0').count();
            &f[..keep]
        }
        _ => &[],
    };
    Num { neg, int, frac }
}

fn magnitude(a: &Num<'_>, b: &Num<'_>) -> Ordering {
    a.int
        .len()
        .cmp(&b.int.len())
        .then_with(|| a.int.cmp(b.int))
        .then_with(|| a.frac.cmp(b.frac))
}

/// [`integer_key`] of a key that is not a plain integer.
pub const NOT_INTEGER: i64 = i64::MIN;

/// The value `-n` sees in `key` when it is an integer of at most 18 digits
/// (after blanks, an optional `-`; a `.` must not start a fraction), so that
/// two such keys compare as integers exactly as [`numeric`] compares them;
/// [`NOT_INTEGER`] otherwise. A key with no digits is zero, as in [`numeric`].
pub fn integer_key(key: &[u8]) -> i64 {
    let s = skip_blanks(key);
    let (neg, s) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let nd = s.iter().take_while(|b| b.is_ascii_digit()).count();
    let digits = &s[..nd];
    let digits = &digits[digits.iter().take_while(|b| **b == b'0').count()..];
    if digits.len() > 18 {
        return NOT_INTEGER;
    }
    if s.get(nd) == Some(&b'.') && s.get(nd + 1).is_some_and(u8::is_ascii_digit) {
        return NOT_INTEGER;
    }
    let v = digits
        .iter()
        .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
    if neg { -v } else { v }
}

/// `-n`: compares leading decimal numbers (after blanks); non-numbers are zero.
pub fn numeric(a: &[u8], b: &[u8]) -> Ordering {
    let (a, b) = (parse_num(skip_blanks(a)), parse_num(skip_blanks(b)));
    numeric_parsed(&a, &b)
}

fn numeric_parsed(a: &Num<'_>, b: &Num<'_>) -> Ordering {
    let az = a.int.is_empty() && a.frac.is_empty();
    let bz = b.int.is_empty() && b.frac.is_empty();
    let sa: i8 = if az {
        0
    } else if a.neg {
        -1
    } else {
        1
    };
    let sb: i8 = if bz {
        0
    } else if b.neg {
        -1
    } else {
        1
    };
    if sa != sb {
        return sa.cmp(&sb);
    }
    match sa {
        0 => Ordering::Equal,
        1 => magnitude(a, b),
        _ => magnitude(b, a),
    }
}

/// The SI order of a human-readable number's suffix; 0 for none or for a zero value.
fn unit_order(s: &[u8]) -> i32 {
    let (neg, mut p) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    let mut max_digit = b'0' - 1;
    let mut ch;
    loop {
        loop {
            ch = p.first().copied().unwrap_or(0);
            p = p.get(1..).unwrap_or(&[]);
            if !ch.is_ascii_digit() {
                break;
            }
            max_digit = max_digit.max(ch);
        }
        if ch != b'.' {
            break;
        }
    }
    let order = match ch {
        b'K' | b'k' => 1,
        b'M' => 2,
        b'G' => 3,
        b'T' => 4,
        b'P' => 5,
        b'E' => 6,
        b'Z' => 7,
        b'Y' => 8,
        // coreutils 9.1 does not know R and Q yet.
        _ => 0,
    };
    if max_digit <= b'0' {
        return 0;
    }
    if neg { -order } else { order }
}

/// `-h`: compares by sign and SI suffix first, then by value.
pub fn human(a: &[u8], b: &[u8]) -> Ordering {
    let (a, b) = (skip_blanks(a), skip_blanks(b));
    unit_order(a)
        .cmp(&unit_order(b))
        .then_with(|| numeric_parsed(&parse_num(a), &parse_num(b)))
}

/// Parses the longest floating-point prefix like `strtod` (after white space),
/// or `None` when there is no number.
pub fn strtod(s: &[u8]) -> Option<f64> {
    let ws = s
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .count();
    let s = &s[ws..];
    let mut i = 0;
    if matches!(s.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let neg = s.first() == Some(&b'-');
    let rest = &s[i..];
    let lower: Vec<u8> = rest.iter().take(8).map(u8::to_ascii_lowercase).collect();
    if lower.starts_with(b"inf") {
        return Some(if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    if lower.starts_with(b"nan") {
        return Some(f64::NAN);
    }
    if lower.starts_with(b"0x")
        && let Some(v) = hex_float(&rest[2..])
    {
        return Some(if neg { -v } else { v });
    }
    let digits = |from: usize| s[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let int = digits(i);
    let mut j = i + int;
    let mut frac = 0;
    if s.get(j) == Some(&b'.') {
        frac = digits(j + 1);
        if int > 0 || frac > 0 {
            j += 1 + frac;
        }
    }
    if int == 0 && frac == 0 {
        return None;
    }
    if matches!(s.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(s.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let ed = digits(k);
        if ed > 0 {
            j = k + ed;
        }
    }
    std::str::from_utf8(&s[..j]).ok()?.parse::<f64>().ok()
}

/// Parses the hex digits (optional fraction and `p` exponent) after `0x`.
fn hex_float(s: &[u8]) -> Option<f64> {
    let hex = |b: &u8| b.is_ascii_hexdigit();
    let val = |b: u8| f64::from((b as char).to_digit(16).unwrap_or(0));
    let int = s.iter().take_while(|b| hex(b)).count();
    let mut v = 0.0;
    for &b in &s[..int] {
        v = v * 16.0 + val(b);
    }
    let mut j = int;
    let mut frac = 0;
    if s.get(j) == Some(&b'.') {
        frac = s[j + 1..].iter().take_while(|b| hex(b)).count();
        let mut scale = 1.0 / 16.0;
        for &b in &s[j + 1..j + 1 + frac] {
            v += val(b) * scale;
            scale /= 16.0;
        }
        j += 1 + frac;
    }
    if int == 0 && frac == 0 {
        return None;
    }
    if matches!(s.get(j), Some(b'p' | b'P')) {
        let mut k = j + 1;
        let eneg = s.get(k) == Some(&b'-');
        if matches!(s.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        let ed = s[k..].iter().take_while(|b| b.is_ascii_digit()).count();
        if ed > 0 {
            let e: i32 = std::str::from_utf8(&s[k..k + ed])
                .ok()?
                .parse()
                .unwrap_or(i32::MAX);
            v *= 2f64.powi(if eneg { -e } else { e });
        }
    }
    Some(v)
}

/// `-g`: non-numbers first, then NaNs, then numbers in order.
pub fn general(a: &[u8], b: &[u8]) -> Ordering {
    match (strtod(a), strtod(b)) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some(x), Some(y)) => match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Less,
            (false, true) => Ordering::Greater,
            _ => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        },
    }
}

const MONTHS: [&[u8; 3]; 12] = [
    b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV", b"DEC",
];

/// The month number (1–12) a key starts with after blanks, or 0.
fn month_of(s: &[u8]) -> usize {
    let s = skip_blanks(s);
    let Some(p) = s.get(..3) else { return 0 };
    MONTHS
        .iter()
        .position(|m| {
            p.iter()
                .zip(m.iter())
                .all(|(a, b)| a.to_ascii_uppercase() == *b)
        })
        .map_or(0, |i| i + 1)
}

/// `-M`: unknown < JAN < ... < DEC.
pub fn month(a: &[u8], b: &[u8]) -> Ordering {
    month_of(a).cmp(&month_of(b))
}

/// Length of `s` without its file suffix `(\.[A-Za-z~][A-Za-z0-9~]*)*$`.
fn file_prefixlen(s: &[u8]) -> usize {
    let n = s.len();
    let mut prefixlen = 0;
    let mut i = 0;
    loop {
        if i == n {
            return prefixlen;
        }
        i += 1;
        prefixlen = i;
        while i + 1 < n && s[i] == b'.' && (s[i + 1].is_ascii_alphabetic() || s[i + 1] == b'~') {
            i += 2;
            while i < n && (s[i].is_ascii_alphanumeric() || s[i] == b'~') {
                i += 1;
            }
        }
    }
}

fn order(s: &[u8], pos: usize) -> i32 {
    let Some(&c) = s.get(pos) else { return -1 };
    if c.is_ascii_digit() {
        0
    } else if c.is_ascii_alphabetic() {
        i32::from(c)
    } else if c == b'~' {
        -2
    } else {
        i32::from(c) + 256
    }
}

fn verrevcmp(s1: &[u8], s2: &[u8]) -> i32 {
    let (l1, l2) = (s1.len(), s2.len());
    let (mut p1, mut p2) = (0, 0);
    let digit = |s: &[u8], p: usize| s.get(p).is_some_and(u8::is_ascii_digit);
    while p1 < l1 || p2 < l2 {
        let mut first_diff = 0i32;
        while (p1 < l1 && !digit(s1, p1)) || (p2 < l2 && !digit(s2, p2)) {
            let c1 = order(s1, p1);
            let c2 = order(s2, p2);
            if c1 != c2 {
                return c1 - c2;
            }
            p1 += 1;
            p2 += 1;
        }
        while p1 < l1 && s1[p1] == b'0' {
            p1 += 1;
        }
        while p2 < l2 && s2[p2] == b'0' {
            p2 += 1;
        }
        while digit(s1, p1) && digit(s2, p2) {
            if first_diff == 0 {
                first_diff = i32::from(s1[p1]) - i32::from(s2[p2]);
            }
            p1 += 1;
            p2 += 1;
        }
        if digit(s1, p1) {
            return 1;
        }
        if digit(s2, p2) {
            return -1;
        }
        if first_diff != 0 {
            return first_diff;
        }
    }
    0
}

/// `-V`: gnulib's filevercmp.
pub fn version(a: &[u8], b: &[u8]) -> Ordering {
    if a.is_empty() || b.is_empty() {
        return a.is_empty().cmp(&b.is_empty()).reverse();
    }
    if a[0] == b'.' {
        if b[0] != b'.' {
            return Ordering::Less;
        }
        let (adot, bdot) = (a.len() == 1, b.len() == 1);
        if adot || bdot {
            return bdot.cmp(&adot);
        }
        let (add, bdd) = (a == b"..", b == b"..");
        if add || bdd {
            return bdd.cmp(&add);
        }
    } else if b[0] == b'.' {
        return Ordering::Greater;
    }
    let (ap, bp) = (file_prefixlen(a), file_prefixlen(b));
    let one_pass = ap == a.len() && bp == b.len();
    let mut r = verrevcmp(&a[..ap], &b[..bp]);
    if r == 0 && !one_pass {
        r = verrevcmp(a, b);
    }
    r.cmp(&0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn numbers() {
        assert_eq!(numeric(b"10", b"9"), Greater);
        assert_eq!(numeric(b"-0", b"0"), Equal);
        assert_eq!(numeric(b"-1", b"-2"), Greater);
        assert_eq!(numeric(b"1.50", b"1.5"), Equal);
        assert_eq!(numeric(b" 3", b"abc"), Greater);
        assert_eq!(human(b"1K", b"900"), Greater);
        assert_eq!(human(b"0K", b"1"), Less);
        assert_eq!(general(b"1e3", b"999"), Greater);
        assert_eq!(general(b"x", b"nan"), Less);
    }

    #[test]
    fn versions() {
        assert_eq!(version(b"a2", b"a10"), Less);
        assert_eq!(version(b"1.0~rc1", b"1.0"), Less);
        assert_eq!(version(b"foo.tar.gz", b"foo1.tar.gz"), Less);
        assert_eq!(month(b" feb", b"JAN"), Greater);
    }
}
