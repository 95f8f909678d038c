//! `od -t f`: floats of 4, 8 and 16 (x87 `long double`) bytes, printed as
//! GNU od prints them.

/// A float element as GNU od prints it (`ftoastr`): `%g` at the smallest
/// precision, from the type's `DIG` (1 below its smallest normal value), that
/// reads back as the same value.
pub(crate) fn float_text(size: usize, bytes: &[u8]) -> String {
    use crate::cfmt::{Conv, fmt_ld};
    use crate::ld::Ld;
    let mut b = [0u8; 16];
    let n = bytes.len().min(16);
    b[..n].copy_from_slice(&bytes[..n]);
    let g = |v: Ld, prec: usize| {
        let c = Conv {
            conv: b'g',
            prec: Some(prec),
            ..Conv::default()
        };
        String::from_utf8_lossy(&fmt_ld(&c, v)).into_owned()
    };
    let shortest = |v: Ld, tiny: bool, dig: usize, bound: usize, same: &dyn Fn(&str) -> bool| {
        let mut prec = if tiny { 1 } else { dig };
        loop {
            let s = g(v, prec);
            if prec >= bound || same(&s) {
                return s;
            }
            prec += 1;
        }
    };
    match size {
        4 => {
            let x = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            let tiny = x.abs() < f32::MIN_POSITIVE;
            let v = Ld::from_f64(f64::from(x));
            shortest(v, tiny, 6, 9, &|s| {
                s.parse::<f32>()
                    .is_ok_and(|y| y == x || (x.is_nan() && y.is_nan()))
            })
        }
        8 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[..8]);
            let x = f64::from_le_bytes(a);
            let tiny = x.abs() < f64::MIN_POSITIVE;
            shortest(Ld::from_f64(x), tiny, 15, 17, &|s| {
                s.parse::<f64>()
                    .is_ok_and(|y| y == x || (x.is_nan() && y.is_nan()))
            })
        }
        _ => {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[..8]);
            let mant = u64::from_le_bytes(a);
            let se = u16::from_le_bytes([b[8], b[9]]);
            let neg = se & 0x8000 != 0;
            let e = i32::from(se & 0x7fff);
            // Outside exponent 0 the x87 needs the explicit integer bit:
            // without it (unnormals, pseudo-infinities, pseudo-NaNs) glibc
            // prints the value as a NaN.
            let v = if e != 0 && mant >> 63 == 0 {
                Ld::Nan(neg)
            } else if e == 0x7fff {
                if mant << 1 == 0 {
                    Ld::Inf(neg)
                } else {
                    Ld::Nan(neg)
                }
            } else if mant == 0 {
                Ld::Finite {
                    neg,
                    mant: 0,
                    exp: 0,
                }
            } else {
                // Denormals (and the x87's unnormals) have the top bit clear.
                let shift = mant.leading_zeros();
                let exp = e.max(1) - 16383 - 63 - shift as i32;
                Ld::Finite {
                    neg,
                    mant: mant << shift,
                    exp,
                }
            };
            // LDBL_MIN is 2^-16382: a value below it has exponent field 0.
            let tiny = e == 0;
            shortest(v, tiny, 18, 21, &|s| match Ld::parse_prefix(s.as_bytes()) {
                // A denormal reads back as a multiple of 2^-16445 (what
                // strtold rounds to), which `Ld` keeps at full precision.
                Some((_, y)) if e == 0 => denormal_units(y) == Some(mant),
                Some((_, y)) => y == v,
                None => false,
            })
        }
    }
}

/// `y` in units of the smallest x87 denormal (2^-16445), rounded to even:
/// the mantissa a `long double` denormal would hold.
fn denormal_units(y: crate::ld::Ld) -> Option<u64> {
    let crate::ld::Ld::Finite { mant, exp, .. } = y else {
        return None;
    };
    let shift = -16445 - i64::from(exp);
    if shift <= 0 {
        return mant
            .checked_shl(u32::try_from(-shift).ok()?)
            .filter(|m| m >> -shift == mant);
    }
    if shift > 64 {
        return Some(0);
    }
    let wide = u128::from(mant);
    let q = wide >> shift;
    let rem = wide & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let up = rem > half || (rem == half && q & 1 == 1);
    u64::try_from(q + u128::from(up)).ok()
}
