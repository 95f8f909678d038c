//! jq 1.6's math builtins: the C library's functions (jq calls them, so the
//! results are glibc's to the last bit), with jq's `number required` error.

use crate::engine::Jq;
use crate::val::{Val, desc};
use jaq_core::native::{Fun, bome, run, v};
use jaq_core::{Error, ValR};
use std::ffi::{c_int, c_long};

// The C math library (glibc's libm, which jq 1.6 uses). Pure functions of
// their arguments; the out-parameters are written before they return.
#[link(name = "m")]
unsafe extern "C" {
    fn acos(x: f64) -> f64;
    fn acosh(x: f64) -> f64;
    fn asin(x: f64) -> f64;
    fn asinh(x: f64) -> f64;
    fn atan(x: f64) -> f64;
    fn atanh(x: f64) -> f64;
    // `cbrtf64` is glibc's other name for `cbrt`: Rust's compiler_builtins
    // defines its own `cbrt`, which the linker would take (not to the last bit).
    #[link_name = "cbrtf64"]
    fn cbrt(x: f64) -> f64;
    fn ceil(x: f64) -> f64;
    fn cos(x: f64) -> f64;
    fn cosh(x: f64) -> f64;
    fn erf(x: f64) -> f64;
    fn erfc(x: f64) -> f64;
    fn exp(x: f64) -> f64;
    fn exp10(x: f64) -> f64;
    fn exp2(x: f64) -> f64;
    fn expm1(x: f64) -> f64;
    fn fabs(x: f64) -> f64;
    fn floor(x: f64) -> f64;
    fn gamma(x: f64) -> f64;
    fn j0(x: f64) -> f64;
    fn j1(x: f64) -> f64;
    fn lgamma(x: f64) -> f64;
    fn log(x: f64) -> f64;
    fn log10(x: f64) -> f64;
    fn log1p(x: f64) -> f64;
    fn log2(x: f64) -> f64;
    fn logb(x: f64) -> f64;
    fn nearbyint(x: f64) -> f64;
    fn rint(x: f64) -> f64;
    fn round(x: f64) -> f64;
    fn significand(x: f64) -> f64;
    fn sin(x: f64) -> f64;
    fn sinh(x: f64) -> f64;
    fn sqrt(x: f64) -> f64;
    fn tan(x: f64) -> f64;
    fn tanh(x: f64) -> f64;
    fn tgamma(x: f64) -> f64;
    fn trunc(x: f64) -> f64;
    fn y0(x: f64) -> f64;
    fn y1(x: f64) -> f64;
    fn atan2(x: f64, y: f64) -> f64;
    fn copysign(x: f64, y: f64) -> f64;
    fn drem(x: f64, y: f64) -> f64;
    fn fdim(x: f64, y: f64) -> f64;
    fn fmax(x: f64, y: f64) -> f64;
    fn fmin(x: f64, y: f64) -> f64;
    fn fmod(x: f64, y: f64) -> f64;
    fn hypot(x: f64, y: f64) -> f64;
    fn nextafter(x: f64, y: f64) -> f64;
    fn pow(x: f64, y: f64) -> f64;
    fn remainder(x: f64, y: f64) -> f64;
    fn scalb(x: f64, y: f64) -> f64;
    fn ldexp(x: f64, e: c_int) -> f64;
    fn scalbln(x: f64, e: c_long) -> f64;
    fn jn(n: c_int, x: f64) -> f64;
    fn yn(n: c_int, x: f64) -> f64;
    fn fma(x: f64, y: f64, z: f64) -> f64;
    fn frexp(x: f64, e: *mut c_int) -> f64;
    fn modf(x: f64, i: *mut f64) -> f64;
    fn lgamma_r(x: f64, sign: *mut c_int) -> f64;
}

/// jq 1.6's error for a math function's non-number argument.
fn number(v: &Val) -> Result<f64, Error<Val>> {
    match v {
        Val::Num(n) => Ok(*n),
        _ => Err(crate::val::err(format!("{} number required", desc(v)))),
    }
}

fn f1(v: &Val, f: unsafe extern "C" fn(f64) -> f64) -> ValR<Val> {
    let x = number(v)?;
    // SAFETY: a libm function of one double.
    Ok(Val::Num(unsafe { f(x) }))
}

/// Arguments of the two- and three-argument functions, checked in order.
fn args<const N: usize>(vs: [Val; N]) -> Result<[f64; N], Error<Val>> {
    let mut out = [0.0; N];
    for (o, v) in out.iter_mut().zip(&vs) {
        *o = number(v)?;
    }
    Ok(out)
}

fn f2(a: Val, b: Val, f: unsafe extern "C" fn(f64, f64) -> f64) -> ValR<Val> {
    let [x, y] = args([a, b])?;
    // SAFETY: a libm function of two doubles.
    Ok(Val::Num(unsafe { f(x, y) }))
}

/// `frexp`: `[mantissa, exponent]`.
fn frexp_(v: &Val) -> ValR<Val> {
    let x = number(v)?;
    let mut e: c_int = 0;
    // SAFETY: `e` is a valid place for the exponent.
    let m = unsafe { frexp(x, &mut e) };
    Ok(Val::from_iter([Val::Num(m), Val::Num(f64::from(e))]))
}

/// `modf`: `[fractional part, integral part]`.
fn modf_(v: &Val) -> ValR<Val> {
    let x = number(v)?;
    let mut i = 0.0;
    // SAFETY: `i` is a valid place for the integral part.
    let f = unsafe { modf(x, &mut i) };
    Ok(Val::from_iter([Val::Num(f), Val::Num(i)]))
}

/// `lgamma_r`: `[lgamma, sign of gamma]`.
fn lgamma_r_(v: &Val) -> ValR<Val> {
    let x = number(v)?;
    let mut sign: c_int = 0;
    // SAFETY: `sign` is a valid place for the sign.
    let l = unsafe { lgamma_r(x, &mut sign) };
    Ok(Val::from_iter([Val::Num(l), Val::Num(f64::from(sign))]))
}

/// A native of one number (the input).
macro_rules! dd {
    ($name:ident) => {
        (stringify!($name), v(0), |cv| bome(f1(&cv.1, $name)))
    };
}

/// A native of two numbers (the arguments; the input is ignored, as in jq).
macro_rules! ddd {
    ($name:expr, $f:expr) => {
        ($name, v(2), |mut cv| {
            let b = cv.0.pop_var();
            let a = cv.0.pop_var();
            bome(f2(a, b, $f))
        })
    };
}

// jq converts the second argument of `ldexp`/`scalbln` and the first of
// `jn`/`yn` to an integer as C does (truncation); nexttoward's `long double`
// holds any double exactly, so nextafter gives the same result.
unsafe extern "C" fn ldexp_d(x: f64, e: f64) -> f64 {
    // SAFETY: libm's ldexp.
    unsafe { ldexp(x, e as c_int) }
}
unsafe extern "C" fn scalbln_d(x: f64, e: f64) -> f64 {
    // SAFETY: libm's scalbln.
    unsafe { scalbln(x, e as c_long) }
}
unsafe extern "C" fn jn_d(n: f64, x: f64) -> f64 {
    // SAFETY: libm's jn.
    unsafe { jn(n as c_int, x) }
}
unsafe extern "C" fn yn_d(n: f64, x: f64) -> f64 {
    // SAFETY: libm's yn.
    unsafe { yn(n as c_int, x) }
}

type NativeDef = (&'static str, Box<[jaq_core::Bind]>, jaq_core::RunPtr<Jq>);

/// The math natives, under jq's names (they replace jaq's).
pub fn funs() -> impl Iterator<Item = Fun<Jq>> {
    let one: [NativeDef; 40] = [
        dd!(acos),
        dd!(acosh),
        dd!(asin),
        dd!(asinh),
        dd!(atan),
        dd!(atanh),
        dd!(cbrt),
        dd!(ceil),
        dd!(cos),
        dd!(cosh),
        dd!(erf),
        dd!(erfc),
        dd!(exp),
        dd!(exp10),
        dd!(exp2),
        dd!(expm1),
        dd!(fabs),
        dd!(floor),
        dd!(gamma),
        dd!(j0),
        dd!(j1),
        dd!(lgamma),
        dd!(log),
        dd!(log10),
        dd!(log1p),
        dd!(log2),
        dd!(logb),
        dd!(nearbyint),
        dd!(rint),
        dd!(round),
        dd!(significand),
        dd!(sin),
        dd!(sinh),
        dd!(sqrt),
        dd!(tan),
        dd!(tanh),
        dd!(tgamma),
        dd!(trunc),
        dd!(y0),
        dd!(y1),
    ];
    let two: [NativeDef; 17] = [
        ddd!("atan2", atan2),
        ddd!("copysign", copysign),
        ddd!("drem", drem),
        ddd!("fdim", fdim),
        ddd!("fmax", fmax),
        ddd!("fmin", fmin),
        ddd!("fmod", fmod),
        ddd!("hypot", hypot),
        ddd!("nextafter", nextafter),
        ddd!("nexttoward", nextafter),
        ddd!("pow", pow),
        ddd!("remainder", remainder),
        ddd!("scalb", scalb),
        ddd!("ldexp", ldexp_d),
        ddd!("scalbln", scalbln_d),
        ddd!("jn", jn_d),
        ddd!("yn", yn_d),
    ];
    let other: [NativeDef; 4] = [
        ("frexp", v(0), |cv| bome(frexp_(&cv.1))),
        ("modf", v(0), |cv| bome(modf_(&cv.1))),
        ("lgamma_r", v(0), |cv| bome(lgamma_r_(&cv.1))),
        ("fma", v(3), |mut cv| {
            let c = cv.0.pop_var();
            let b = cv.0.pop_var();
            let a = cv.0.pop_var();
            bome(args([a, b, c]).map(|[x, y, z]| {
                // SAFETY: libm's fma.
                Val::Num(unsafe { fma(x, y, z) })
            }))
        }),
    ];
    one.into_iter().chain(two).chain(other).map(run::<Jq>)
}
