//! `printf`-style formatting with C semantics (as mawk passes formats to libc).

use crate::value::Value;

/// Largest width/precision honoured (mawk crashes on huge ones).
const MAX_WIDTH: usize = 1 << 20;

/// Parsed flags of one conversion.
#[derive(Default, Clone, Copy)]
struct Spec {
    minus: bool,
    plus: bool,
    space: bool,
    alt: bool,
    zero: bool,
    width: usize,
    prec: Option<usize>,
}

/// Formats one number with a numeric format such as OFMT/CONVFMT (`%.6g`).
pub fn format_number(fmt: &[u8], n: f64) -> Vec<u8> {
    match sprintf(fmt, &[Value::Num(n)], b"%.6g") {
        Ok(v) => v,
        Err(_) => format_float(
            n,
            Spec {
                prec: Some(6),
                ..Spec::default()
            },
            b'g',
        ),
    }
}

/// Formats `args` according to `fmt`; `convfmt` converts numbers for `%s`.
/// Errors (too few arguments) carry mawk's message.
pub fn sprintf(fmt: &[u8], args: &[Value], convfmt: &[u8]) -> Result<Vec<u8>, (Vec<u8>, String)> {
    let mut partial = Vec::new();
    sprintf_into(fmt, args, convfmt, &mut partial)
        .map(|_| partial.clone())
        .map_err(|m| (partial, m))
}

fn sprintf_into(
    fmt: &[u8],
    args: &[Value],
    convfmt: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    let mut i = 0;
    let next = std::cell::Cell::new(0usize);
    let nconv = std::cell::Cell::new(0usize);
    let take = |_: &[u8]| -> Result<Value, String> {
        let v = args.get(next.get()).cloned();
        next.set(next.get() + 1);
        v.ok_or_else(|| {
            format!(
                "not enough arguments passed to printf(\"{}\")",
                String::from_utf8_lossy(fmt)
            )
        })
    };
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        if fmt.get(i) == Some(&b'%') {
            out.push(b'%');
            i += 1;
            continue;
        }
        let _ = start;
        nconv.set(nconv.get() + 1);
        if next.get() >= args.len() {
            return Err(format!(
                "not enough arguments passed to printf(\"{}\")",
                String::from_utf8_lossy(fmt)
            ));
        }
        let improper = || {
            format!(
                "improper conversion(number {}) in printf(\"{}\")",
                nconv.get(),
                String::from_utf8_lossy(fmt)
            )
        };
        let mut sp = Spec::default();
        while let Some(&f) = fmt.get(i) {
            match f {
                b'-' => sp.minus = true,
                b'+' => sp.plus = true,
                b' ' => sp.space = true,
                b'#' => sp.alt = true,
                b'0' => sp.zero = true,
                _ => break,
            }
            i += 1;
        }
        if fmt.get(i) == Some(&b'*') {
            i += 1;
            let w = take(out)?.num() as i64;
            if w < 0 {
                sp.minus = true;
            }
            sp.width = (w.unsigned_abs() as usize).min(MAX_WIDTH);
        } else {
            while let Some(d) = fmt.get(i).filter(|b| b.is_ascii_digit()) {
                sp.width = sp
                    .width
                    .saturating_mul(10)
                    .saturating_add((d - b'0') as usize);
                sp.width = sp.width.min(MAX_WIDTH);
                i += 1;
            }
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            if fmt.get(i) == Some(&b'*') {
                i += 1;
                let p = take(out)?.num() as i64;
                sp.prec = if p < 0 {
                    None
                } else {
                    Some((p as usize).min(MAX_WIDTH))
                };
            } else {
                let mut p = 0usize;
                while let Some(d) = fmt.get(i).filter(|b| b.is_ascii_digit()) {
                    p = p.saturating_mul(10).saturating_add((d - b'0') as usize);
                    i += 1;
                }
                sp.prec = Some(p.min(MAX_WIDTH));
            }
        }
        // mawk accepts one `h` or `l`, and only on integer conversions.
        let modifier = matches!(fmt.get(i), Some(b'h' | b'l'));
        if modifier {
            i += 1;
        }
        let Some(&conv) = fmt.get(i) else {
            return Err(improper());
        };
        i += 1;
        if modifier && !matches!(conv, b'd' | b'i' | b'o' | b'x' | b'X' | b'u') {
            return Err(improper());
        }
        let body = match conv {
            b'd' | b'i' => {
                let v = take(out)?.num();
                format_signed(d_to_l(v), sp)
            }
            b'o' | b'x' | b'X' | b'u' => {
                let v = take(out)?.num();
                format_unsigned(d_to_ul(v), sp, conv)
            }
            b'e' | b'E' | b'f' | b'g' | b'G' => {
                let v = take(out)?.num();
                format_float(v, sp, conv)
            }
            b'c' => {
                let v = take(out)?;
                let ch = match &v {
                    Value::Num(n) => vec![d_to_l(*n) as u8],
                    Value::Uninit => vec![0],
                    // Input that looks numeric is a number to mawk's `%c`:
                    // a field "65" prints `A`.
                    Value::StrNum(s) if crate::value::looks_numeric(s) => {
                        vec![d_to_l(v.num()) as u8]
                    }
                    Value::Str(s) | Value::StrNum(s) => vec![s.first().copied().unwrap_or(0)],
                };
                pad(ch, Spec { zero: false, ..sp })
            }
            b's' => {
                let v = take(out)?;
                let mut s = v.to_bytes(convfmt).to_vec();
                // mawk prints one more blank for an empty string under the
                // space flag (`% s` of "" is " ", `% 3s` four blanks); not
                // for a string the precision empties.
                let extra = sp.space && s.is_empty();
                if let Some(p) = sp.prec {
                    s.truncate(p);
                }
                let mut body = pad(s, Spec { zero: false, ..sp });
                if extra {
                    body.push(b' ');
                }
                body
            }
            _ => return Err(improper()),
        };
        out.extend_from_slice(&body);
    }
    Ok(())
}

/// mawk's double to int conversion (clamped to +-INT_MAX, as mawk 1.3.4 does).
fn d_to_l(d: f64) -> i64 {
    const MAX: f64 = i32::MAX as f64;
    // NaN fails both comparisons and ends up as -INT_MAX, as in mawk.
    if d >= MAX {
        MAX as i64
    } else if d > -MAX {
        d as i64
    } else {
        -MAX as i64
    }
}

/// mawk's double to unsigned conversion (clamped to UINT_MAX; negatives become 0).
fn d_to_ul(d: f64) -> u64 {
    const MAX: f64 = u32::MAX as f64;
    if d >= MAX {
        MAX as u64
    } else if d > 0.0 {
        d as u64
    } else {
        0
    }
}

fn pad(body: Vec<u8>, sp: Spec) -> Vec<u8> {
    if body.len() >= sp.width {
        return body;
    }
    let n = sp.width - body.len();
    let mut out = Vec::with_capacity(sp.width);
    if sp.minus {
        out.extend_from_slice(&body);
        out.resize(sp.width, b' ');
    } else {
        out.resize(n, b' ');
        out.extend_from_slice(&body);
    }
    out
}

/// Pads a number: `sign`+`prefix` then digits; zero padding goes between them.
fn pad_num(sign: &[u8], digits: &[u8], sp: Spec, zero_ok: bool) -> Vec<u8> {
    let len = sign.len() + digits.len();
    let mut out = Vec::with_capacity(sp.width.max(len));
    if len >= sp.width {
        out.extend_from_slice(sign);
        out.extend_from_slice(digits);
    } else if sp.minus {
        out.extend_from_slice(sign);
        out.extend_from_slice(digits);
        out.resize(sp.width, b' ');
    } else if sp.zero && zero_ok {
        out.extend_from_slice(sign);
        out.resize(sp.width - digits.len(), b'0');
        out.extend_from_slice(digits);
    } else {
        out.resize(sp.width - len, b' ');
        out.extend_from_slice(sign);
        out.extend_from_slice(digits);
    }
    out
}

fn with_precision(mut digits: Vec<u8>, prec: Option<usize>, zero: bool) -> Vec<u8> {
    if let Some(p) = prec {
        if p == 0 && zero {
            return Vec::new();
        }
        if digits.len() < p {
            let mut d = vec![b'0'; p - digits.len()];
            d.append(&mut digits);
            return d;
        }
    }
    digits
}

fn format_signed(v: i64, sp: Spec) -> Vec<u8> {
    let sign: &[u8] = if v < 0 {
        b"-"
    } else if sp.plus {
        b"+"
    } else if sp.space {
        b" "
    } else {
        b""
    };
    let digits = with_precision(v.unsigned_abs().to_string().into_bytes(), sp.prec, v == 0);
    pad_num(sign, &digits, sp, sp.prec.is_none())
}

fn format_unsigned(v: u64, sp: Spec, conv: u8) -> Vec<u8> {
    let raw = match conv {
        b'o' => format!("{v:o}"),
        b'x' => format!("{v:x}"),
        b'X' => format!("{v:X}"),
        _ => v.to_string(),
    };
    let mut digits = with_precision(raw.into_bytes(), sp.prec, v == 0);
    let mut prefix: &[u8] = b"";
    if sp.alt {
        match conv {
            b'o' if digits.first() != Some(&b'0') => digits.insert(0, b'0'),
            b'x' if v != 0 => prefix = b"0x",
            b'X' if v != 0 => prefix = b"0X",
            _ => {}
        }
    }
    pad_num(prefix, &digits, sp, sp.prec.is_none())
}

/// `%e` body of a non-negative finite number, C style exponent (`e+05`).
fn exp_form(v: f64, prec: usize, upper: bool, alt: bool) -> Vec<u8> {
    let s = format!("{v:.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut out = mant.as_bytes().to_vec();
    if alt && prec == 0 {
        out.push(b'.');
    }
    out.push(if upper { b'E' } else { b'e' });
    out.push(if exp < 0 { b'-' } else { b'+' });
    let a = exp.unsigned_abs();
    if a < 10 {
        out.push(b'0');
    }
    out.extend_from_slice(a.to_string().as_bytes());
    out
}

fn format_float(v: f64, sp: Spec, conv: u8) -> Vec<u8> {
    let upper = conv.is_ascii_uppercase();
    let neg = v.is_sign_negative();
    let sign: &[u8] = if neg {
        b"-"
    } else if sp.plus {
        b"+"
    } else if sp.space {
        b" "
    } else {
        b""
    };
    let a = v.abs();
    if !a.is_finite() {
        let body: &[u8] = match (a.is_nan(), upper) {
            (true, false) => b"nan",
            (true, true) => b"NAN",
            (false, false) => b"inf",
            (false, true) => b"INF",
        };
        return pad_num(sign, body, sp, false);
    }
    let prec = sp.prec.unwrap_or(6);
    let body = match conv.to_ascii_lowercase() {
        b'f' => {
            let mut s = format!("{a:.prec$}").into_bytes();
            if sp.alt && prec == 0 {
                s.push(b'.');
            }
            s
        }
        b'e' => exp_form(a, prec, upper, sp.alt),
        _ => {
            let p = if prec == 0 { 1 } else { prec };
            let x = if a == 0.0 {
                0
            } else {
                let e = exp_form(a, p - 1, false, false);
                let pos = e.iter().rposition(|&b| b == b'e').unwrap_or(0);
                std::str::from_utf8(&e[pos + 1..])
                    .ok()
                    .and_then(|t| t.parse::<i32>().ok())
                    .unwrap_or(0)
            };
            let mut s = if x < p as i32 && x >= -4 {
                let fp = (p as i32 - 1 - x) as usize;
                format!("{a:.fp$}").into_bytes()
            } else {
                // `#` keeps the point even with one digit: `1.e+08`.
                exp_form(a, p - 1, upper, sp.alt)
            };
            if !sp.alt {
                strip_zeros(&mut s);
            } else if !s.contains(&b'.') {
                s.push(b'.');
            }
            s
        }
    };
    pad_num(sign, &body, sp, true)
}

/// Removes trailing zeros of the fraction (and a bare '.') for `%g`.
fn strip_zeros(s: &mut Vec<u8>) {
    let epos = s.iter().position(|&b| b == b'e' || b == b'E');
    let (mant_end, exp) = match epos {
        Some(p) => (p, s[p..].to_vec()),
        None => (s.len(), Vec::new()),
    };
    if !s[..mant_end].contains(&b'.') {
        return;
    }
    let mut end = mant_end;
    while end > 0 && s[end - 1] == b'0' {
        end -= 1;
    }
    if end > 0 && s[end - 1] == b'.' {
        end -= 1;
    }
    s.truncate(end);
    s.extend_from_slice(&exp);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, args: &[Value]) -> String {
        String::from_utf8_lossy(&sprintf(fmt.as_bytes(), args, b"%.6g").unwrap_or_default())
            .into_owned()
    }

    #[test]
    fn basics() {
        assert_eq!(f("%.6g", &[Value::Num(1234567.5)]), "1.23457e+06");
        assert_eq!(f("%g", &[Value::Num(0.0001)]), "0.0001");
        assert_eq!(
            f("%05d|%-3d|", &[Value::Num(-5.0), Value::Num(1.0)]),
            "-0005|1  |"
        );
        assert_eq!(f("%.3e", &[Value::Num(0.0)]), "0.000e+00");
        assert_eq!(f("%#x", &[Value::Num(255.0)]), "0xff");
    }
}
