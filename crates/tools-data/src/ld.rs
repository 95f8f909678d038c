//! x87 80-bit `long double` values, which bash's `printf` uses for floating-point
//! conversions: exact parsing (decimal and hex, rounded to a 64-bit mantissa, ties
//! to even) and exact decimal formatting, so `printf '%.1f' 0.15` prints `0.2` as
//! bash does rather than the `0.1` a `double` would give.

use std::cmp::Ordering;

/// A `long double`: `mant * 2^exp` with the mantissa's top bit set (or zero).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Ld {
    /// A finite value.
    Finite {
        /// Sign.
        neg: bool,
        /// Mantissa; 0 for zero, else bit 63 is set.
        mant: u64,
        /// Binary exponent of the mantissa's lowest bit.
        exp: i32,
    },
    /// Infinity.
    Inf(bool),
    /// Not a number (with its sign bit).
    Nan(bool),
}

/// Unsigned big integer, little-endian 32-bit limbs.
#[derive(Clone, Debug, Default)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big(vec![v as u32, (v >> 32) as u32]);
        b.trim();
        b
    }
    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }
    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }
    fn mul_add_small(&mut self, m: u32, a: u32) {
        let mut carry = a as u64;
        for limb in self.0.iter_mut() {
            let v = *limb as u64 * m as u64 + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }
    fn bit_len(&self) -> usize {
        match self.0.last() {
            Some(&top) => self.0.len() * 32 - top.leading_zeros() as usize,
            None => 0,
        }
    }
    fn bit(&self, i: usize) -> bool {
        self.0.get(i / 32).is_some_and(|l| (l >> (i % 32)) & 1 == 1)
    }
    fn any_below(&self, i: usize) -> bool {
        let (w, b) = (i / 32, i % 32);
        self.0.iter().take(w).any(|l| *l != 0)
            || self.0.get(w).is_some_and(|l| l & ((1u32 << b) - 1) != 0)
    }
    fn shl(&self, n: usize) -> Big {
        let (w, b) = (n / 32, n % 32);
        let mut out = vec![0u32; w];
        let mut carry = 0u32;
        for &l in &self.0 {
            if b == 0 {
                out.push(l);
            } else {
                out.push((l << b) | carry);
                carry = l >> (32 - b);
            }
        }
        if carry != 0 {
            out.push(carry);
        }
        let mut r = Big(out);
        r.trim();
        r
    }
    fn shr(&self, n: usize) -> Big {
        let (w, b) = (n / 32, n % 32);
        let src = self.0.get(w..).unwrap_or(&[]);
        let mut out = Vec::with_capacity(src.len());
        for k in 0..src.len() {
            let lo = src[k] >> b;
            let hi = if b > 0 {
                src.get(k + 1).map_or(0, |h| h << (32 - b))
            } else {
                0
            };
            out.push(lo | hi);
        }
        let mut r = Big(out);
        r.trim();
        r
    }
    /// Keeps only the low `n` bits.
    fn truncate_bits(&mut self, n: usize) {
        let (w, b) = (n / 32, n % 32);
        if self.0.len() > w {
            self.0.truncate(w + 1);
            if let Some(l) = self.0.get_mut(w) {
                *l &= if b == 0 { 0 } else { (1u32 << b) - 1 };
            }
        }
        self.trim();
    }
    fn low_u64(&self) -> u64 {
        self.0.first().copied().unwrap_or(0) as u64
            | (self.0.get(1).copied().unwrap_or(0) as u64) << 32
    }
    fn cmp(&self, o: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&o.0.len())
            .then_with(|| self.0.iter().rev().cmp(o.0.iter().rev()))
    }
    fn sub_assign(&mut self, o: &Big) {
        let mut borrow = 0i64;
        for (k, limb) in self.0.iter_mut().enumerate() {
            let v = *limb as i64 - o.0.get(k).copied().unwrap_or(0) as i64 - borrow;
            borrow = (v < 0) as i64;
            *limb = v.rem_euclid(1 << 32) as u32;
        }
        self.trim();
    }
    /// Quotient and remainder, by binary long division.
    fn divmod(&self, d: &Big) -> (Big, Big) {
        let mut q = Big(vec![0; self.0.len()]);
        let mut r = Big::default();
        for i in (0..self.bit_len()).rev() {
            r = r.shl(1);
            if self.bit(i) {
                if r.0.is_empty() {
                    r.0.push(1);
                } else {
                    r.0[0] |= 1;
                }
            }
            if r.cmp(d) != Ordering::Less {
                r.sub_assign(d);
                q.0[i / 32] |= 1 << (i % 32);
            }
        }
        q.trim();
        (q, r)
    }
    /// Divides by a small number in place, returning the remainder.
    fn div_small(&mut self, d: u32) -> u32 {
        let mut rem = 0u64;
        for limb in self.0.iter_mut().rev() {
            let cur = (rem << 32) | *limb as u64;
            *limb = (cur / d as u64) as u32;
            rem = cur % d as u64;
        }
        self.trim();
        rem as u32
    }
    fn to_decimal(&self) -> Vec<u8> {
        if self.is_zero() {
            return Vec::new();
        }
        let mut n = self.clone();
        let mut out = Vec::new();
        while !n.is_zero() {
            let r = n.div_small(1_000_000_000);
            let chunk = format!("{r:09}");
            out.extend(chunk.bytes().rev());
        }
        while out.last() == Some(&b'0') {
            out.pop();
        }
        out.reverse();
        out
    }
}

/// Rounds `n * 2^b2` (plus a nonzero tail when `sticky`) to a 64-bit mantissa.
fn normalize(neg: bool, n: &Big, b2: i64, sticky: bool) -> Ld {
    let len = n.bit_len();
    if len == 0 {
        return Ld::Finite {
            neg,
            mant: 0,
            exp: 0,
        };
    }
    let (mant, exp) = if len <= 64 {
        (n.low_u64() << (64 - len), b2 - (64 - len as i64))
    } else {
        let sh = len - 64;
        let mut mant = n.shr(sh).low_u64();
        let mut exp = b2 + sh as i64;
        let half = n.bit(sh - 1);
        let lower = sticky || n.any_below(sh - 1);
        if half && (lower || mant & 1 == 1) {
            mant = mant.wrapping_add(1);
            if mant == 0 {
                mant = 1 << 63;
                exp += 1;
            }
        }
        (mant, exp)
    };
    // Beyond the long double range: overflow to infinity, underflow to zero.
    if exp + 64 > 16384 {
        return Ld::Inf(neg);
    }
    if exp + 64 < -16445 {
        return Ld::Finite {
            neg,
            mant: 0,
            exp: 0,
        };
    }
    Ld::Finite {
        neg,
        mant,
        exp: exp as i32,
    }
}

impl Ld {
    /// The exact `long double` of a `double`.
    pub fn from_f64(v: f64) -> Ld {
        let neg = v.is_sign_negative();
        if v.is_nan() {
            return Ld::Nan(neg);
        }
        if v.is_infinite() {
            return Ld::Inf(neg);
        }
        let bits = v.to_bits();
        let e = ((bits >> 52) & 0x7ff) as i64;
        let f = bits & ((1u64 << 52) - 1);
        let (n, b2) = if e == 0 {
            (f, -1074)
        } else {
            (f | 1 << 52, e - 1075)
        };
        normalize(neg, &Big::from_u64(n), b2, false)
    }

    /// Builds a value from decimal digits and a power of ten.
    fn from_decimal(neg: bool, digits: &[u8], exp10: i64) -> Option<Ld> {
        let digits: Vec<u8> = digits.iter().copied().skip_while(|d| *d == b'0').collect();
        if digits.is_empty() {
            return Some(Ld::Finite {
                neg,
                mant: 0,
                exp: 0,
            });
        }
        let magnitude = digits.len() as i64 + exp10;
        if magnitude > 4934 {
            return Some(Ld::Inf(neg));
        }
        if magnitude < -4952 {
            return Some(Ld::Finite {
                neg,
                mant: 0,
                exp: 0,
            });
        }
        if digits.len() > 6000 || exp10.abs() > 6000 {
            return None;
        }
        let mut n = Big::default();
        for d in &digits {
            n.mul_add_small(10, (d - b'0') as u32);
        }
        if exp10 >= 0 {
            for _ in 0..exp10 {
                n.mul_add_small(10, 0);
            }
            return Some(normalize(neg, &n, 0, false));
        }
        let mut p = Big::from_u64(1);
        for _ in 0..-exp10 {
            p.mul_add_small(10, 0);
        }
        let s = (p.bit_len() + 66).saturating_sub(n.bit_len());
        let (q, r) = n.shl(s).divmod(&p);
        Some(normalize(neg, &q, -(s as i64), !r.is_zero()))
    }

    /// Parses the longest prefix of `t` that `strtold` accepts; returns its length.
    pub fn parse_prefix(t: &[u8]) -> Option<(usize, Ld)> {
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
        if lower.starts_with(b"infinity") {
            return Some((i + 8, Ld::Inf(neg)));
        }
        if lower.starts_with(b"inf") {
            return Some((i + 3, Ld::Inf(neg)));
        }
        if lower.starts_with(b"nan") {
            return Some((i + 3, Ld::Nan(neg)));
        }
        if lower.starts_with(b"0x")
            && let Some((n, v)) = parse_hex(neg, &rest[2..])
        {
            return Some((i + 2 + n, v));
        }
        let int_len = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let mut j = int_len;
        let mut digits: Vec<u8> = rest[..int_len].to_vec();
        let mut frac_len = 0;
        if rest.get(j) == Some(&b'.') {
            frac_len = rest[j + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if int_len + frac_len > 0 {
                digits.extend_from_slice(&rest[j + 1..j + 1 + frac_len]);
                j += 1 + frac_len;
            }
        }
        if int_len + frac_len == 0 {
            return None;
        }
        let mut exp10: i64 = -(frac_len as i64);
        if matches!(rest.get(j), Some(b'e' | b'E')) {
            let mut k = j + 1;
            let eneg = match rest.get(k) {
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
            let ed = rest
                .get(k..)
                .unwrap_or(&[])
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count();
            if ed > 0 {
                let e: i64 = std::str::from_utf8(&rest[k..k + ed])
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(i64::MAX / 4)
                    .min(1 << 40);
                exp10 += if eneg { -e } else { e };
                j = k + ed;
            }
        }
        let v = match Ld::from_decimal(neg, &digits, exp10) {
            Some(v) => v,
            // Absurdly long input: fall back to the double parse.
            None => {
                let text = std::str::from_utf8(&rest[..j]).ok()?;
                let text = text.strip_suffix('.').unwrap_or(text);
                let text = if text.starts_with('.') {
                    format!("0{text}")
                } else {
                    text.to_string()
                };
                let v: f64 = text.parse().ok()?;
                Ld::from_f64(if neg { -v } else { v })
            }
        };
        Some((i + j, v))
    }

    /// The sign.
    pub fn is_neg(&self) -> bool {
        match *self {
            Ld::Finite { neg, .. } | Ld::Inf(neg) | Ld::Nan(neg) => neg,
        }
    }
}

/// Reads hex digits after `0x` (`1.8p3`), exactly.
fn parse_hex(neg: bool, s: &[u8]) -> Option<(usize, Ld)> {
    let mut n = Big::default();
    let mut i = 0;
    let mut any = false;
    let mut b2: i64 = 0;
    while let Some(d) = s.get(i).and_then(|&b| (b as char).to_digit(16)) {
        n.mul_add_small(16, d);
        i += 1;
        any = true;
    }
    if s.get(i) == Some(&b'.') {
        let mut k = i + 1;
        while let Some(d) = s.get(k).and_then(|&b| (b as char).to_digit(16)) {
            n.mul_add_small(16, d);
            b2 -= 4;
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
        let mut e: i64 = 0;
        while let Some(d) = s.get(k).and_then(|&b| (b as char).to_digit(10)) {
            e = (e * 10 + d as i64).min(1 << 40);
            k += 1;
        }
        if k > start {
            b2 += if eneg { -e } else { e };
            i = k;
        }
    }
    Some((i, normalize(neg, &n, b2, false)))
}

/// The decimal digits of a finite non-negative value, produced on demand.
struct Digits {
    /// Integer part digits (empty for zero).
    int: Vec<u8>,
    pos: usize,
    /// Fraction numerator over 2^e.
    frac: Big,
    e: usize,
}

impl Digits {
    fn new(mant: u64, exp: i32) -> Digits {
        let m = Big::from_u64(mant);
        if exp >= 0 {
            return Digits {
                int: m.shl(exp as usize).to_decimal(),
                pos: 0,
                frac: Big::default(),
                e: 0,
            };
        }
        let e = (-exp) as usize;
        let mut frac = m.clone();
        frac.truncate_bits(e);
        Digits {
            int: m.shr(e).to_decimal(),
            pos: 0,
            frac,
            e,
        }
    }

    /// The next digit (integer digits first, then fraction digits).
    fn next(&mut self) -> u8 {
        if let Some(&d) = self.int.get(self.pos) {
            self.pos += 1;
            return d - b'0';
        }
        if self.frac.is_zero() {
            return 0;
        }
        self.frac.mul_add_small(10, 0);
        let d = self.frac.shr(self.e).low_u64() as u8;
        self.frac.truncate_bits(self.e);
        d
    }

    /// True if anything nonzero remains after the digits taken so far.
    fn rest_nonzero(&self) -> bool {
        self.int
            .get(self.pos..)
            .is_some_and(|r| r.iter().any(|d| *d != b'0'))
            || !self.frac.is_zero()
    }

    /// Compares the remainder after the taken digits with half a unit of the last.
    fn rest_vs_half(&mut self) -> Ordering {
        let d = self.next();
        match d.cmp(&5) {
            Ordering::Equal if self.rest_nonzero() => Ordering::Greater,
            o => o,
        }
    }
}

/// Rounds the digit string (ties to even); returns true when it carried out
/// (999 -> 000, the caller adds a leading 1).
fn round_digits(ds: &mut [u8], dir: Ordering) -> bool {
    let last_odd = ds.last().is_some_and(|d| d % 2 == 1);
    let up = dir == Ordering::Greater || (dir == Ordering::Equal && last_odd);
    if !up {
        return false;
    }
    for d in ds.iter_mut().rev() {
        if *d == 9 {
            *d = 0;
        } else {
            *d += 1;
            return false;
        }
    }
    true
}

fn text(ds: &[u8]) -> String {
    ds.iter().map(|d| (b'0' + d) as char).collect()
}

/// `%.{prec}f` of a finite non-negative value.
pub fn fixed(mant: u64, exp: i32, prec: usize) -> String {
    let mut g = Digits::new(mant, exp);
    let nint = g.int.len();
    let mut ds: Vec<u8> = Vec::with_capacity(nint + prec + 1);
    for _ in 0..nint + prec {
        ds.push(g.next());
    }
    if nint == 0 {
        ds.insert(0, 0);
    }
    let dir = g.rest_vs_half();
    if round_digits(&mut ds, dir) {
        ds.insert(0, 1);
    }
    let split = ds.len() - prec;
    let mut s = text(&ds[..split]);
    if prec > 0 {
        s.push('.');
        s.push_str(&text(&ds[split..]));
    }
    s
}

/// `%.{prec}e` of a finite non-negative value: mantissa digits and exponent.
pub fn sci(mant: u64, exp: i32, prec: usize) -> (String, i32) {
    if mant == 0 {
        let m = if prec > 0 {
            format!("0.{}", "0".repeat(prec))
        } else {
            "0".into()
        };
        return (m, 0);
    }
    let mut g = Digits::new(mant, exp);
    let mut x: i32 = g.int.len() as i32 - 1;
    let mut first = g.next();
    if g.int.is_empty() {
        // Skip the fraction's leading zeros.
        while first == 0 {
            first = g.next();
            x -= 1;
        }
    }
    let mut ds = vec![first];
    for _ in 0..prec {
        ds.push(g.next());
    }
    let dir = g.rest_vs_half();
    if round_digits(&mut ds, dir) {
        ds.insert(0, 1);
        ds.pop();
        x += 1;
    }
    let mut s = text(&ds[..1]);
    if prec > 0 {
        s.push('.');
        s.push_str(&text(&ds[1..]));
    }
    (s, x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ld(s: &str) -> (u64, i32) {
        match Ld::parse_prefix(s.as_bytes()) {
            Some((_, Ld::Finite { mant, exp, .. })) => (mant, exp),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parses_like_strtold() {
        assert_eq!(ld("1"), (1 << 63, -63));
        assert_eq!(ld("0.1"), (0xcccccccccccccccd, -67));
        assert_eq!(ld("0x1.8p1"), (0xc000000000000000, -62));
    }

    #[test]
    fn formats_exactly() {
        let (m, e) = ld("0.15");
        assert_eq!(fixed(m, e, 1), "0.2");
        let (m, e) = ld("2.5e-7");
        assert_eq!(sci(m, e, 0), ("3".to_string(), -7));
        let (m, e) = ld("999.96");
        assert_eq!(fixed(m, e, 1), "1000.0");
        assert_eq!(sci(m, e, 2), ("1.00".to_string(), 3));
        let (m, e) = ld("0.000123");
        assert_eq!(sci(m, e, 3), ("1.230".to_string(), -4));
        assert_eq!(fixed(m, e, 2), "0.00");
        let (m, e) = ld("12345678901234567890");
        assert_eq!(fixed(m, e, 0), "12345678901234567890");
    }
}
