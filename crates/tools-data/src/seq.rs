//! `seq`: FIRST [INCREMENT] LAST with GNU's choice of output format (precision
//! taken from the operands, `-w` equal width, `-f` a float format, `-s` separator).

use crate::cfmt::{Conv, fmt_float};
use crate::num::float_prefix;
use crate::out::Out;
use safesh_utils::{UtilCtx, UtilResult};

/// An operand with the layout GNU derives from its spelling.
#[derive(Clone, Copy, Debug)]
struct Operand {
    value: f64,
    width: i64,
    /// Digits after the point; `None` when not exact (hex, exponent forms, inf).
    precision: Option<i64>,
}

fn parse_operand(arg: &str) -> Option<Operand> {
    let t = arg.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (n, value) = float_prefix(t.as_bytes())?;
    if n != t.len() {
        return None;
    }
    let s = t.trim_start_matches('+');
    let mut width = s.len() as i64;
    let mut precision = None;
    if !s.contains(['x', 'X']) && value.is_finite() {
        let dot = s.find('.');
        let mut prec = match dot {
            None => 0,
            Some(d) => {
                let frac = s[d + 1..].find(['e', 'E']).unwrap_or(s.len() - d - 1) as i64;
                let before_digit = d > 0 && s.as_bytes()[d - 1].is_ascii_digit();
                width += if frac == 0 {
                    -1
                } else if before_digit {
                    0
                } else {
                    1
                };
                frac
            }
        };
        if let Some(e) = s.find(['e', 'E']) {
            let exponent: i64 = s[e + 1..].parse().unwrap_or(0);
            width -= (s.len() - e) as i64;
            if exponent < 0 {
                match dot {
                    Some(d) if e == d + 1 => width += 1,
                    Some(_) => {}
                    None => width += 1,
                }
                prec += -exponent;
                width += -exponent;
            } else {
                if dot.is_some() && prec == 0 && exponent != 0 {
                    width -= 1;
                }
                let shift = prec.min(exponent);
                prec -= shift;
                width += exponent - shift;
            }
        }
        precision = Some(prec);
    }
    Some(Operand {
        value,
        width,
        precision,
    })
}

/// A user format split around its single float directive.
struct Format {
    prefix: Vec<u8>,
    conv: Conv,
    suffix: Vec<u8>,
}

/// Unescapes `%%` in literal parts.
fn literal(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < s.len() {
        out.push(s[i]);
        i += if s[i] == b'%' && s.get(i + 1) == Some(&b'%') {
            2
        } else {
            1
        };
    }
    out
}

fn parse_format(f: &str) -> Result<Format, String> {
    let b = f.as_bytes();
    let find_pct = |mut i: usize| {
        while i < b.len() {
            if b[i] == b'%' {
                if b.get(i + 1) == Some(&b'%') {
                    i += 2;
                    continue;
                }
                return Some(i);
            }
            i += 1;
        }
        None
    };
    let Some(start) = find_pct(0) else {
        return Err(format!("format '{f}' has no % directive"));
    };
    let mut i = start + 1;
    let mut c = Conv::default();
    while let Some(&x) = b.get(i) {
        match x {
            b'-' => c.minus = true,
            b'+' => c.plus = true,
            b' ' => c.space = true,
            b'0' => c.zero = true,
            b'#' => c.alt = true,
            b'\'' => {}
            _ => break,
        }
        i += 1;
    }
    let n = b[i..].iter().take_while(|d| d.is_ascii_digit()).count();
    if n > 0 {
        c.width = f[i..i + n].parse().ok();
        i += n;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let n = b[i..].iter().take_while(|d| d.is_ascii_digit()).count();
        c.prec = Some(f[i..i + n].parse().unwrap_or(0));
        i += n;
    }
    match b.get(i) {
        Some(&x) if b"aAeEfFgG".contains(&x) => c.conv = x,
        Some(&x) => {
            return Err(format!("format '{f}' has unknown %{} directive", x as char));
        }
        None => return Err(format!("format '{f}' ends in %")),
    }
    i += 1;
    if find_pct(i).is_some() {
        return Err(format!("format '{f}' has too many % directives"));
    }
    Ok(Format {
        prefix: literal(&b[..start]),
        conv: c,
        suffix: literal(&b[i..]),
    })
}

fn fail(ctx: &mut UtilCtx<'_>, msg: &str) -> UtilResult {
    ctx.warn(msg);
    ctx.warn("Try 'seq --help' for more information.");
    Ok(1)
}

/// Runs `seq`.
pub fn seq(ctx: &mut UtilCtx<'_>) -> UtilResult {
    let args: Vec<String> = ctx.args().to_vec();
    let mut format: Option<String> = None;
    let mut sep = "\n".to_string();
    let mut equal = false;
    let mut i = 0;
    // Options come first; a dash followed by a digit or '.' is a negative number.
    while let Some(a) = args.get(i) {
        let bytes = a.as_bytes();
        if bytes.first() != Some(&b'-') || a == "-" {
            break;
        }
        if bytes
            .get(1)
            .is_some_and(|c| *c == b'.' || c.is_ascii_digit())
        {
            break;
        }
        i += 1;
        if a == "--" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let names = ["format", "separator", "equal-width"];
            let matches: Vec<&str> = names
                .iter()
                .copied()
                .filter(|n| n.starts_with(name))
                .collect();
            let [full] = matches[..] else {
                return fail(ctx, &format!("unrecognized option '{a}'"));
            };
            if full == "equal-width" {
                equal = true;
                continue;
            }
            let v = match inline {
                Some(v) => v,
                None => match args.get(i) {
                    Some(v) => {
                        i += 1;
                        v.clone()
                    }
                    None => return fail(ctx, &format!("option '--{full}' requires an argument")),
                },
            };
            if full == "format" {
                format = Some(v)
            } else {
                sep = v
            }
            continue;
        }
        for (k, ch) in a[1..].char_indices() {
            match ch {
                'w' => equal = true,
                'f' | 's' => {
                    let rest = &a[1 + k + 1..];
                    let v = if !rest.is_empty() {
                        rest.to_string()
                    } else if let Some(v) = args.get(i) {
                        i += 1;
                        v.clone()
                    } else {
                        return fail(ctx, &format!("option requires an argument -- '{ch}'"));
                    };
                    if ch == 'f' {
                        format = Some(v)
                    } else {
                        sep = v
                    }
                    break;
                }
                _ => return fail(ctx, &format!("invalid option -- '{ch}'")),
            }
        }
    }
    let ops = &args[i..];
    if ops.is_empty() {
        return fail(ctx, "missing operand");
    }
    if ops.len() > 3 {
        return fail(ctx, &format!("extra operand '{}'", ops[3]));
    }
    let mut parsed = Vec::new();
    for o in ops {
        match parse_operand(o) {
            Some(p) if p.value.is_nan() => {
                return fail(ctx, &format!("invalid 'not-a-number' argument: '{o}'"));
            }
            Some(p) => parsed.push(p),
            None => return fail(ctx, &format!("invalid floating point argument: '{o}'")),
        }
    }
    let one = Operand {
        value: 1.0,
        width: 1,
        precision: Some(0),
    };
    let (first, step, last) = match parsed[..] {
        [l] => (one, one, l),
        [f, l] => (f, one, l),
        [f, s, l] => (f, s, l),
        _ => return Ok(1),
    };
    if step.value == 0.0 {
        return fail(ctx, &format!("invalid Zero increment value: '{}'", ops[1]));
    }
    // GNU's exact path for plain non-negative integers: no rounding, any size.
    let digits = |o: &String| !o.is_empty() && o.bytes().all(|b| b.is_ascii_digit());
    if format.is_none() && !equal && ops.iter().all(digits) {
        let step_text = if ops.len() == 3 { ops[1].as_str() } else { "1" };
        let first_text = if ops.len() == 1 { "1" } else { ops[0].as_str() };
        let last_text = ops[ops.len() - 1].as_str();
        return Ok(seq_integers(ctx, first_text, step_text, last_text, &sep));
    }
    let fmt = match (&format, equal) {
        (Some(_), true) => {
            return fail(
                ctx,
                "format string may not be specified when printing equal width strings",
            );
        }
        (Some(f), false) => match parse_format(f) {
            Ok(f) => f,
            Err(e) => {
                ctx.warn(e);
                return Ok(1);
            }
        },
        (None, _) => default_format(first, step, last, equal),
    };
    let mut out = Out::new(ctx);
    let render = |x: f64| {
        let mut s = fmt.prefix.clone();
        s.extend_from_slice(&fmt_float(&fmt.conv, x));
        s.extend_from_slice(&fmt.suffix);
        s
    };
    let core = |x: f64| fmt_float(&fmt.conv, x);
    let (a, d, z) = (first.value, step.value, last.value);
    let beyond = |x: f64| if d < 0.0 { x < z } else { z < x };
    if beyond(a) {
        return Ok(out.finish());
    }
    let mut x = a;
    let mut n: f64 = 1.0;
    let mut count: u64 = 0;
    loop {
        if !out.write(&render(x)) {
            break;
        }
        let x0 = x;
        x = a + n * d;
        n += 1.0;
        if beyond(x) {
            // GNU prints one more number when rounding put it just past LAST but
            // it prints as LAST (and differently from the previous one).
            let xs = core(x);
            let xv = std::str::from_utf8(&xs)
                .ok()
                .and_then(|s| float_prefix(s.trim().as_bytes()));
            let extra = matches!(xv, Some((_, v)) if v == z) && core(x0) != xs;
            if !extra {
                break;
            }
        }
        out.write(sep.as_bytes());
        count += 1;
        if count.is_multiple_of(4096) && out.ctx().host.cancelled() {
            out.flush();
            return Ok(130);
        }
        if x0 == x {
            // The increment vanished in rounding; GNU would loop forever.
            break;
        }
    }
    out.write(b"\n");
    Ok(out.finish())
}

fn default_format(first: Operand, step: Operand, last: Operand, equal: bool) -> Format {
    let mut conv = Conv {
        conv: b'g',
        ..Conv::default()
    };
    let prec = match (first.precision, step.precision) {
        (Some(a), Some(b)) => Some(a.max(b)),
        _ => None,
    };
    if let (Some(prec), Some(lp)) = (prec, last.precision) {
        conv.conv = b'f';
        conv.prec = Some(prec as usize);
        if equal {
            let fp = first.precision.unwrap_or(0);
            let mut fw = first.width + (prec - fp);
            let mut lw = last.width + (prec - lp);
            if lp > 0 && prec == 0 {
                lw -= 1;
            }
            if lp == 0 && prec > 0 {
                lw += 1;
            }
            if fp == 0 && prec > 0 {
                fw += 1;
            }
            conv.zero = true;
            conv.width = Some(fw.max(lw).max(0) as usize);
        }
    }
    Format {
        prefix: Vec::new(),
        conv,
        suffix: Vec::new(),
    }
}

/// Decimal digits without leading zeros.
fn trim_zeros(s: &str) -> Vec<u8> {
    let t = s.trim_start_matches('0');
    if t.is_empty() {
        b"0".to_vec()
    } else {
        t.as_bytes().to_vec()
    }
}

fn dec_cmp(a: &[u8], b: &[u8]) -> std::cmp::Ordering {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b))
}

/// `a += b` on decimal digit strings.
fn dec_add(a: &mut Vec<u8>, b: &[u8]) {
    let mut out = Vec::with_capacity(a.len().max(b.len()) + 1);
    let (mut i, mut j, mut carry) = (a.len(), b.len(), 0u8);
    while i > 0 || j > 0 || carry > 0 {
        let mut d = carry;
        if i > 0 {
            i -= 1;
            d += a[i] - b'0';
        }
        if j > 0 {
            j -= 1;
            d += b[j] - b'0';
        }
        out.push(b'0' + d % 10);
        carry = d / 10;
    }
    out.reverse();
    *a = out;
}

/// Counts from `first` to `last` by `step`, all non-negative decimal integers.
fn seq_integers(ctx: &mut UtilCtx<'_>, first: &str, step: &str, last: &str, sep: &str) -> i32 {
    let (mut x, step, last) = (trim_zeros(first), trim_zeros(step), trim_zeros(last));
    let mut out = Out::new(ctx);
    let mut printed = false;
    let mut count: u64 = 0;
    while dec_cmp(&x, &last) != std::cmp::Ordering::Greater {
        if printed {
            out.write(sep.as_bytes());
        }
        if !out.write(&x) {
            break;
        }
        printed = true;
        dec_add(&mut x, &step);
        count += 1;
        if count.is_multiple_of(4096) && out.ctx().host.cancelled() {
            out.flush();
            return 130;
        }
    }
    if printed {
        out.write(b"\n");
    }
    out.finish()
}
