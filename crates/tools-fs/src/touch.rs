//! `touch`: create files and set their access and modification times.

use crate::common::{quote, usage};
use crate::date::parse_date;
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult, WriteMode};
use std::os::unix::fs::MetadataExt;

const SPEC: Spec = Spec {
    flags: "acfhm",
    valued: "drt",
    long: &[
        ("no-create", false, "c"),
        ("date", true, "d"),
        ("reference", true, "r"),
        ("no-dereference", false, "h"),
        ("time", true, "time"),
    ],
    stop_at_operand: false,
};

/// Parses `touch -t [[CC]YY]MMDDhhmm[.ss]` in the local zone.
fn parse_stamp(s: &str, tz: &jiff::tz::TimeZone) -> Option<(i64, i64)> {
    let (main, secs) = match s.split_once('.') {
        Some((m, ss)) if ss.len() == 2 => (m, ss.parse::<i8>().ok()?),
        Some(_) => return None,
        None => (s, 0),
    };
    if !main.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let now = jiff::Timestamp::now().to_zoned(tz.clone());
    let (year, rest) = match main.len() {
        8 => (now.year(), main),
        10 => {
            let yy: i16 = main.get(..2)?.parse().ok()?;
            (if yy < 69 { 2000 + yy } else { 1900 + yy }, main.get(2..)?)
        }
        12 => (main.get(..4)?.parse().ok()?, main.get(4..)?),
        _ => return None,
    };
    let num = |a: usize| -> Option<i8> { rest.get(a..a + 2)?.parse().ok() };
    let dt = jiff::civil::DateTime::new(year, num(0)?, num(2)?, num(4)?, num(6)?, secs, 0).ok()?;
    let z = dt.to_zoned(tz.clone()).ok()?;
    Some((z.timestamp().as_second(), 0))
}

/// The `utimensat` times for `atime` and `mtime` (`None`: left as it is).
fn times(atime: Option<(i64, i64)>, mtime: Option<(i64, i64)>) -> [libc::timespec; 2] {
    let ts = |t: Option<(i64, i64)>| match t {
        Some((s, ns)) => libc::timespec {
            tv_sec: s as libc::time_t,
            tv_nsec: ns as libc::c_long,
        },
        None => libc::timespec {
            tv_sec: 0,
            tv_nsec: libc::UTIME_OMIT,
        },
    };
    [ts(atime), ts(mtime)]
}

/// Runs `touch`.
pub fn touch(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    let p = match parse(ctx.args(), &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    if p.operands.is_empty() {
        return Ok(usage(ctx, "missing file operand", 1));
    }
    let tz = crate::common::local_tz(ctx);
    let now = jiff::Timestamp::now();
    let mut when = (now.as_second(), i64::from(now.subsec_nanosecond()));
    let mut ref_times = None;
    if let Some(r) = p.value("r") {
        match ctx.check_read(r).and_then(|r| ctx.stat(r, true)) {
            Ok(m) => ref_times = Some(((m.atime(), m.atime_nsec()), (m.mtime(), m.mtime_nsec()))),
            Err(e) => {
                ctx.warn_io(format_args!("failed to get attributes of {}", quote(r)), &e);
                return Ok(1);
            }
        }
    }
    if let Some(d) = p.value("d") {
        match parse_date(d, &tz, now) {
            Some(t) => when = (t.as_second(), i64::from(t.subsec_nanosecond())),
            None => {
                ctx.warn(format_args!("invalid date format {}", quote(d)));
                return Ok(1);
            }
        }
    }
    if let Some(t) = p.value("t") {
        match parse_stamp(t, &tz) {
            Some(w) => when = w,
            None => {
                ctx.warn(format_args!("invalid date format {}", quote(t)));
                return Ok(1);
            }
        }
    }
    let (mut a_on, mut m_on) = (p.has("a"), p.has("m"));
    match p.value("time") {
        Some("atime" | "access" | "use") => a_on = true,
        Some("mtime" | "modify") => m_on = true,
        _ => {}
    }
    if !a_on && !m_on {
        a_on = true;
        m_on = true;
    }
    let (at, mt) = match ref_times {
        Some((a, m)) => (a, m),
        None => (when, when),
    };
    let nocreate = p.has("c");
    let nofollow = p.has("h");
    let mut status = 0;
    for name in &p.operands {
        // The entry touched is the one checked (resolved once, no symlink
        // followed by name; `-h` stops at a final symlink).
        let mut full = match ctx.resolve_write(name, !nofollow) {
            Ok(f) => f,
            Err(e) => {
                ctx.warn_io(format_args!("cannot touch {}", quote(name)), &e);
                status = 1;
                continue;
            }
        };
        if !full.exists() {
            if nocreate {
                continue;
            }
            if let Err(e) = ctx
                .create(name, WriteMode::Append)
                .and_then(|_| ctx.resolve_write(name, !nofollow))
                .map(|e| full = e)
            {
                ctx.warn_io(format_args!("cannot touch {}", quote(name)), &e);
                status = 1;
                continue;
            }
        }
        let r = full.set_times(times(a_on.then_some(at), m_on.then_some(mt)));
        if let Err(e) = r {
            ctx.warn_io(format_args!("setting times of {}", quote(name)), &e);
            status = 1;
        }
    }
    Ok(status)
}
