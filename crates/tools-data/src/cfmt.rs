//! C `printf` conversions (`%d %x %e %f %g %a %s ...`) formatted exactly as glibc
//! does, shared by `printf` and `seq -f`.

use crate::ld::{self, Ld};

/// One parsed conversion specification, e.g. `%-08.3f`.
#[derive(Clone, Debug, Default)]
pub struct Conv {
    /// `-`: left-justify.
    pub minus: bool,
    /// `+`: always print a sign.
    pub plus: bool,
    /// ` `: a space where the sign of a non-negative number would be.
    pub space: bool,
    /// `0`: pad numbers with zeros.
    pub zero: bool,
    /// `#`: the alternate form.
    pub alt: bool,
    /// Minimum field width.
    pub width: Option<usize>,
    /// Precision.
    pub prec: Option<usize>,
    /// The conversion character.
    pub conv: u8,
}

/// Pads `body` to the field width. `numeric_prefix` is how many leading bytes of
/// `body` are sign or radix prefix (zeros go after them when zero-padding).
fn pad(c: &Conv, body: Vec<u8>, zero_ok: bool, prefix_len: usize) -> Vec<u8> {
    let w = c.width.unwrap_or(0);
    if body.len() >= w {
        return body;
    }
    let fill = w - body.len();
    let mut out = Vec::with_capacity(w);
    if c.minus {
        out.extend_from_slice(&body);
        out.resize(w, b' ');
    } else if c.zero && zero_ok {
        let p = prefix_len.min(body.len());
        out.extend_from_slice(&body[..p]);
        out.resize(p + fill, b'0');
        out.extend_from_slice(&body[p..]);
    } else {
        out.resize(fill, b' ');
        out.extend_from_slice(&body);
    }
    out
}

/// Formats a string operand (`%s`): precision truncates.
pub fn fmt_str(c: &Conv, s: &[u8]) -> Vec<u8> {
    let s = match c.prec {
        Some(p) if p < s.len() => &s[..p],
        _ => s,
    };
    pad(c, s.to_vec(), false, 0)
}

fn sign_prefix(c: &Conv, neg: bool) -> &'static [u8] {
    if neg {
        b"-"
    } else if c.plus {
        b"+"
    } else if c.space {
        b" "
    } else {
        b""
    }
}

/// Applies an integer precision (minimum digits) to `digits`.
fn int_prec(c: &Conv, digits: String, is_zero: bool) -> String {
    match c.prec {
        Some(0) if is_zero => String::new(),
        Some(p) if p > digits.len() => format!("{}{digits}", "0".repeat(p - digits.len())),
        _ => digits,
    }
}

/// Formats a signed integer (`%d`, `%i`).
pub fn fmt_signed(c: &Conv, v: i64) -> Vec<u8> {
    let digits = int_prec(c, v.unsigned_abs().to_string(), v == 0);
    let sign = sign_prefix(c, v < 0);
    let mut body = sign.to_vec();
    body.extend_from_slice(digits.as_bytes());
    pad(c, body, c.prec.is_none(), sign.len())
}

/// Formats an unsigned integer (`%u %o %x %X`).
pub fn fmt_unsigned(c: &Conv, v: u64) -> Vec<u8> {
    let raw = match c.conv {
        b'o' => format!("{v:o}"),
        b'x' => format!("{v:x}"),
        b'X' => format!("{v:X}"),
        _ => v.to_string(),
    };
    let mut digits = int_prec(c, raw, v == 0);
    let mut prefix = "";
    if c.alt {
        match c.conv {
            b'o' if !digits.starts_with('0') => digits.insert(0, '0'),
            b'x' if v != 0 => prefix = "0x",
            b'X' if v != 0 => prefix = "0X",
            _ => {}
        }
    }
    let mut body = prefix.as_bytes().to_vec();
    body.extend_from_slice(digits.as_bytes());
    pad(c, body, c.prec.is_none(), prefix.len())
}

fn exp_suffix(e: i32, upper: bool) -> String {
    let sign = if e < 0 { '-' } else { '+' };
    let ch = if upper { 'E' } else { 'e' };
    format!("{ch}{sign}{:02}", e.unsigned_abs())
}

/// Strips trailing zeros (and a trailing point) of a fraction, as `%g` does.
fn strip_zeros(s: &mut String) {
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
}

/// The hexadecimal form of `%a` as glibc prints an x86 `long double`: the
/// leading hex digit holds the explicit integer bit, so 1 is `0x8p-3`.
fn hex_float(mant: u64, exp: i32, prec: Option<usize>, upper: bool) -> String {
    // mant has its integer bit at bit 63; printed as one 4-bit leading digit.
    let mut exp = if mant == 0 { 0 } else { exp + 60 };
    let mut lead = (mant >> 60) as u32;
    let mut frac = mant << 4; // 60 fraction bits, left-aligned
    let mut nd = 15usize;
    if let Some(p) = prec
        && p < nd
    {
        // Round to p hex digits, ties to even.
        let drop = 64 - p * 4;
        let full = ((lead as u128) << 64) | frac as u128;
        let unit = 1u128 << drop;
        let rem = full & (unit - 1);
        let mut kept = full >> drop;
        let half = unit >> 1;
        if rem > half || (rem == half && kept & 1 == 1) {
            kept += 1;
        }
        let full = kept << drop;
        lead = (full >> 64) as u32;
        frac = full as u64;
        if lead >= 16 {
            // 0x10 * 2^e == 0x1 * 2^(e+4)
            lead = 1;
            frac = 0;
            exp += 4;
        }
        nd = p;
    }
    let mut digits = String::new();
    for i in 0..nd {
        let d = (frac >> (60 - 4 * i)) & 0xf;
        digits.push(char::from_digit(d as u32, 16).unwrap_or('0'));
    }
    match prec {
        None => {
            while digits.ends_with('0') {
                digits.pop();
            }
        }
        Some(p) => {
            while digits.len() < p {
                digits.push('0');
            }
        }
    }
    let mut s = format!("0x{}", char::from_digit(lead, 16).unwrap_or('0'));
    if !digits.is_empty() {
        s.push('.');
        s.push_str(&digits);
    }
    s.push_str(&format!(
        "p{}{}",
        if exp < 0 { '-' } else { '+' },
        exp.unsigned_abs()
    ));
    if upper { s.to_uppercase() } else { s }
}

/// Formats a floating-point number (`%e %E %f %F %g %G %a %A`) given as a `double`.
pub fn fmt_float(c: &Conv, v: f64) -> Vec<u8> {
    fmt_ld(c, Ld::from_f64(v))
}

/// Formats a `long double` (`%e %E %f %F %g %G %a %A`) exactly as glibc does.
pub fn fmt_ld(c: &Conv, v: Ld) -> Vec<u8> {
    let upper = c.conv.is_ascii_uppercase();
    let sign = sign_prefix(c, v.is_neg());
    let (mant, exp) = match v {
        Ld::Finite { mant, exp, .. } => (mant, exp),
        Ld::Inf(_) | Ld::Nan(_) => {
            let t = if matches!(v, Ld::Nan(_)) {
                "nan"
            } else {
                "inf"
            };
            let t = if upper {
                t.to_uppercase()
            } else {
                t.to_string()
            };
            let mut body = sign.to_vec();
            body.extend_from_slice(t.as_bytes());
            return pad(c, body, false, 0);
        }
    };
    let text = match c.conv.to_ascii_lowercase() {
        b'f' => {
            let mut s = ld::fixed(mant, exp, c.prec.unwrap_or(6));
            if c.alt && !s.contains('.') {
                s.push('.');
            }
            s
        }
        b'e' => {
            let (mut m, e) = ld::sci(mant, exp, c.prec.unwrap_or(6));
            if c.alt && !m.contains('.') {
                m.push('.');
            }
            m + &exp_suffix(e, upper)
        }
        b'g' => {
            let p = match c.prec.unwrap_or(6) {
                0 => 1,
                p => p,
            };
            let (mut m, x) = ld::sci(mant, exp, p - 1);
            let mut s = if x < -4 || x >= p as i32 {
                if !c.alt {
                    strip_zeros(&mut m);
                } else if !m.contains('.') {
                    m.push('.');
                }
                m + &exp_suffix(x, upper)
            } else {
                let fp = (p as i32 - 1 - x).max(0) as usize;
                let mut s = ld::fixed(mant, exp, fp);
                if !c.alt {
                    strip_zeros(&mut s);
                } else if !s.contains('.') {
                    s.push('.');
                }
                s
            };
            if upper {
                s = s.to_uppercase();
            }
            s
        }
        _ => {
            let mut s = hex_float(mant, exp, c.prec, upper);
            if c.alt
                && !s.contains('.')
                && let Some(pos) = s.find(['p', 'P'])
            {
                s.insert(pos, '.');
            }
            let mut body = sign.to_vec();
            body.extend_from_slice(s.as_bytes());
            return pad(c, body, true, sign.len() + 2);
        }
    };
    let mut body = sign.to_vec();
    body.extend_from_slice(text.as_bytes());
    pad(c, body, true, sign.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(ch: u8, prec: Option<usize>) -> Conv {
        Conv {
            conv: ch,
            prec,
            ..Conv::default()
        }
    }

    #[test]
    fn floats_like_glibc() {
        let f = |ch, p, v| String::from_utf8(fmt_float(&conv(ch, p), v)).unwrap();
        assert_eq!(f(b'g', None, 100000.0), "100000");
        assert_eq!(f(b'g', None, 1e6), "1e+06");
        assert_eq!(f(b'g', None, 0.0001), "0.0001");
        assert_eq!(f(b'e', None, 1234.5), "1.234500e+03");
        assert_eq!(f(b'a', None, 1.0), "0x8p-3");
        assert_eq!(f(b'a', None, -2.5), "-0xap-2");
        assert_eq!(f(b'a', None, 0.0), "0x0p+0");
        assert_eq!(f(b'A', None, 255.0), "0XF.FP+4");
    }
}
