//! jq 1.6's date builtins, as its C code does them: through the C library's
//! `gmtime_r`, `localtime_r`, `timegm`, `strftime` and `strptime` (so formats,
//! normalisation and parsing are glibc's), with jq's checks and messages.

use crate::engine::Jq;
use crate::val::{Val, err};
use jaq_core::ValR;
use jaq_core::native::{Fun, bome, run, v};
use std::ffi::{CString, c_char, c_int, c_long};

/// C's `struct tm` (glibc's layout).
#[repr(C)]
struct Tm {
    tm_sec: c_int,
    tm_min: c_int,
    tm_hour: c_int,
    tm_mday: c_int,
    tm_mon: c_int,
    tm_year: c_int,
    tm_wday: c_int,
    tm_yday: c_int,
    tm_isdst: c_int,
    tm_gmtoff: c_long,
    tm_zone: *const c_char,
}

// glibc's layout on 64-bit Linux: nine ints, a long and a pointer.
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Tm>() == 56);

impl Tm {
    /// All zero (jq `memset`s it), `tm_zone` null.
    fn zero() -> Self {
        Tm {
            tm_sec: 0,
            tm_min: 0,
            tm_hour: 0,
            tm_mday: 0,
            tm_mon: 0,
            tm_year: 0,
            tm_wday: 0,
            tm_yday: 0,
            tm_isdst: 0,
            tm_gmtoff: 0,
            tm_zone: std::ptr::null(),
        }
    }
}

// `time_t` is a `long` on the platforms safesh runs on (64-bit Linux).
unsafe extern "C" {
    fn gmtime_r(t: *const c_long, tm: *mut Tm) -> *mut Tm;
    fn localtime_r(t: *const c_long, tm: *mut Tm) -> *mut Tm;
    fn timegm(tm: *mut Tm) -> c_long;
    fn strftime(s: *mut c_char, max: usize, fmt: *const c_char, tm: *const Tm) -> usize;
    fn strptime(s: *const c_char, fmt: *const c_char, tm: *mut Tm) -> *mut c_char;
}

/// A C string of `s` up to its first NUL, as jq hands its strings to C.
fn c_string(s: &str) -> CString {
    let bytes = s.as_bytes();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    CString::new(&bytes[..end]).unwrap_or_default()
}

/// jq's `tm2jv`.
fn tm_to_val(tm: &Tm) -> Vec<Val> {
    [
        tm.tm_year + 1900,
        tm.tm_mon,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_wday,
        tm.tm_yday,
    ]
    .iter()
    .map(|&n| Val::Num(f64::from(n)))
    .collect()
}

/// jq's `jv2tm`: the first eight elements, all numbers, as C `int`s.
fn val_to_tm(a: &[Val]) -> Option<Tm> {
    let mut f = [0 as c_int; 8];
    for (i, slot) in f.iter_mut().enumerate() {
        match a.get(i) {
            Some(Val::Num(n)) => *slot = *n as c_int,
            _ => return None,
        }
    }
    let mut tm = Tm::zero();
    tm.tm_year = f[0].wrapping_sub(1900);
    tm.tm_mon = f[1];
    tm.tm_mday = f[2];
    tm.tm_hour = f[3];
    tm.tm_min = f[4];
    tm.tm_sec = f[5];
    tm.tm_wday = f[6];
    tm.tm_yday = f[7];
    Some(tm)
}

/// `gmtime` (`local`: `localtime`): seconds since the epoch, broken down, the
/// fraction of a second added to the seconds as jq does (`(time_t)x`
/// truncates, then `x - floor(x)` is added).
fn broken_down(v: &Val, local: bool) -> ValR<Val> {
    let Val::Num(fsecs) = *v else {
        return Err(err(if local {
            "localtime() requires numeric inputs"
        } else {
            "gmtime() requires numeric inputs"
        }));
    };
    let secs = fsecs as c_long;
    let mut tm = Tm::zero();
    // SAFETY: both pointers are valid for the call.
    let ok = unsafe {
        if local {
            !localtime_r(&secs, &mut tm).is_null()
        } else {
            !gmtime_r(&secs, &mut tm).is_null()
        }
    };
    if !ok {
        return Err(err(if local {
            "error converting number of seconds since epoch to datetime"
        } else {
            "errror converting number of seconds since epoch to datetime"
        }));
    }
    let mut out = tm_to_val(&tm);
    out[5] = Val::Num(f64::from(tm.tm_sec) + (fsecs - fsecs.floor()));
    Ok(Val::from_iter(out))
}

fn mktime_(v: &Val) -> ValR<Val> {
    let Val::Arr(a) = v else {
        return Err(err("mktime requires array inputs"));
    };
    let bad = || err("mktime requires parsed datetime inputs");
    if a.len() < 6 {
        return Err(bad());
    }
    let mut tm = val_to_tm(a).ok_or_else(bad)?;
    // SAFETY: `tm` is a valid struct tm.
    let t = unsafe { timegm(&mut tm) };
    if t == -1 {
        return Err(err("invalid gmtime representation"));
    }
    Ok(Val::Num(t as f64))
}

/// `strftime` (`local`: `strflocaltime`).
fn format(v: &Val, fmt: &Val, local: bool) -> ValR<Val> {
    let name = if local { "strflocaltime" } else { "strftime" };
    let parsed = || err(format!("{name}/1 requires parsed datetime inputs"));
    let a = match v {
        Val::Num(_) => broken_down(v, local)?,
        Val::Arr(_) => v.clone(),
        _ => return Err(parsed()),
    };
    let Val::Str(f) = fmt else {
        return Err(err(format!("{name}/1 requires a string format")));
    };
    let Val::Arr(a) = &a else {
        return Err(parsed());
    };
    let tm = val_to_tm(a).ok_or_else(parsed)?;
    let cfmt = c_string(f);
    // jq's buffer: the format's length plus 100; a longer result is a failure.
    let size = cfmt.as_bytes().len() + 100;
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` holds `size` bytes; `cfmt` and `tm` are valid.
    let n = unsafe { strftime(buf.as_mut_ptr().cast(), size, cfmt.as_ptr(), &tm) };
    if n == 0 || n > size {
        return Err(err(format!("{name}/1: unknown system failure")));
    }
    buf.truncate(n);
    Ok(Val::from(String::from_utf8_lossy(&buf).into_owned()))
}

/// jq's `set_tm_wday` (Gauss's algorithm, wrong in Jan–Feb 1900 and 2100 as
/// jq's is).
fn set_tm_wday(tm: &mut Tm) {
    let century = (1900 + tm.tm_year) / 100;
    let mut year = (1900 + tm.tm_year) % 100;
    if tm.tm_mon < 2 {
        year -= 1;
    }
    let mut mon = tm.tm_mon - 1;
    if mon < 1 {
        mon += 12;
    }
    let mut wday = (tm.tm_mday
        + (2.6 * f64::from(mon) - 0.2).floor() as c_int
        + year
        + (f64::from(year) / 4.0).floor() as c_int
        + (f64::from(century) / 4.0).floor() as c_int
        - 2 * century)
        % 7;
    if wday < 0 {
        wday += 7;
    }
    tm.tm_wday = wday;
}

/// jq's `set_tm_yday`.
fn set_tm_yday(tm: &mut Tm) {
    const D: [c_int; 12] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334];
    let mut mon = tm.tm_mon;
    let year = 1900 + tm.tm_year;
    let leap = tm.tm_mon > 1 && ((year % 4 == 0 && year % 100 != 0) || year % 400 == 0);
    if mon < 0 {
        mon = -mon;
    }
    if mon > 11 {
        mon %= 12;
    }
    tm.tm_yday = D[mon as usize] + c_int::from(leap) + tm.tm_mday - 1;
}

fn strptime_(v: &Val, fmt: &Val) -> ValR<Val> {
    let (Val::Str(input), Val::Str(f)) = (v, fmt) else {
        return Err(err("strptime/1 requires string inputs and arguments"));
    };
    let (cin, cfmt) = (c_string(input), c_string(f));
    let mut tm = Tm::zero();
    // Sentinels: whether strptime set the day of the week and of the year.
    tm.tm_wday = 8;
    tm.tm_yday = 367;
    // SAFETY: both strings are NUL-terminated; `tm` is valid.
    let end = unsafe { strptime(cin.as_ptr(), cfmt.as_ptr(), &mut tm) };
    let rest = if end.is_null() {
        None
    } else {
        // `end` points into `cin`.
        let at = (end as usize).wrapping_sub(cin.as_ptr() as usize);
        cin.as_bytes().get(at..)
    };
    let rest = match rest {
        Some(r)
            if r.first()
                .is_none_or(|c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')) =>
        {
            r
        }
        _ => {
            return Err(err(format!(
                "date \"{}\" does not match format \"{}\"",
                cin.to_string_lossy(),
                cfmt.to_string_lossy()
            )));
        }
    };
    if tm.tm_wday == 8 && tm.tm_mday != 0 && (0..=11).contains(&tm.tm_mon) {
        set_tm_wday(&mut tm);
    }
    if tm.tm_yday == 367 && tm.tm_mday != 0 && (0..=11).contains(&tm.tm_mon) {
        set_tm_yday(&mut tm);
    }
    let mut out = tm_to_val(&tm);
    if !rest.is_empty() {
        out.push(Val::from(String::from_utf8_lossy(rest).into_owned()));
    }
    Ok(Val::from_iter(out))
}

type NativeDef = (&'static str, Box<[jaq_core::Bind]>, jaq_core::RunPtr<Jq>);

/// The date natives, under jq's names (they replace jaq's).
pub fn funs() -> impl Iterator<Item = Fun<Jq>> {
    let fs: [NativeDef; 6] = [
        ("gmtime", v(0), |cv| bome(broken_down(&cv.1, false))),
        ("localtime", v(0), |cv| bome(broken_down(&cv.1, true))),
        ("mktime", v(0), |cv| bome(mktime_(&cv.1))),
        ("strftime", v(1), |mut cv| {
            let f = cv.0.pop_var();
            bome(format(&cv.1, &f, false))
        }),
        ("strflocaltime", v(1), |mut cv| {
            let f = cv.0.pop_var();
            bome(format(&cv.1, &f, true))
        }),
        ("strptime", v(1), |mut cv| {
            let f = cv.0.pop_var();
            bome(strptime_(&cv.1, &f))
        }),
    ];
    fs.into_iter().map(run::<Jq>)
}
