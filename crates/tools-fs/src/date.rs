//! `date`: print (never set) the date, in the shell's `TZ`, with `+FORMAT`,
//! `-d` for the common date forms, `-u`, `-I`, `-R`, `--rfc-3339` and `-r FILE`.

use crate::common::{local_tz, quote, usage};
use crate::strftime;
use jiff::tz::TimeZone;
use jiff::{Span, Timestamp, Zoned};
use safesh_utils::args::{Spec, parse};
use safesh_utils::{UtilCtx, UtilResult};
use std::os::unix::fs::MetadataExt;

const SPEC: Spec = Spec {
    flags: "uRI",
    valued: "dfr",
    long: &[
        ("date", true, "d"),
        ("file", true, "f"),
        ("reference", true, "r"),
        ("utc", false, "u"),
        ("universal", false, "u"),
        ("rfc-email", false, "R"),
        ("rfc-2822", false, "R"),
        ("iso-8601", false, "I"),
        ("rfc-3339", true, "rfc-3339"),
        ("debug", false, "debug"),
    ],
    stop_at_operand: false,
};

fn month_num(s: &str) -> Option<i8> {
    const M: [&str; 12] = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ];
    let p = s.get(..3)?;
    M.iter().position(|m| *m == p).map(|i| i as i8 + 1)
}

fn weekday_num(w: &str) -> Option<i64> {
    const D: [&str; 7] = ["sun", "mon", "tue", "wed", "thu", "fri", "sat"];
    let full = [
        "sunday",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
    ];
    let i = D.iter().position(|d| w.starts_with(d))?;
    let ok =
        w.len() == 3 || full.get(i).is_some_and(|f| *f == w) || (w.len() == 4 && w.ends_with('.'));
    ok.then_some(i as i64)
}

/// 12-hour clock to 24-hour (`12am` is 0, `12pm` is 12).
fn ampm(h: i8, pm: bool) -> Option<i8> {
    if !(1..=12).contains(&h) {
        return None;
    }
    Some(match (h, pm) {
        (12, false) => 0,
        (12, true) => 12,
        (h, true) => h + 12,
        (h, false) => h,
    })
}

fn parse_time(t: &str) -> Option<(i8, i8, i8, i32)> {
    let parts: Vec<&str> = t.split(':').collect();
    let n = |s: &str| -> Option<i8> {
        if s.is_empty() || s.len() > 2 || !s.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        s.parse().ok()
    };
    match parts.as_slice() {
        [h, m] => Some((n(h)?, n(m)?, 0, 0)),
        [h, m, s] => {
            let (sec, frac) = match s.split_once(['.', ',']) {
                Some((a, f)) => (a, f),
                None => (*s, ""),
            };
            let mut ns = 0i32;
            if !frac.is_empty() {
                if !frac.bytes().all(|c| c.is_ascii_digit()) {
                    return None;
                }
                let f9: String = frac.chars().chain(std::iter::repeat('0')).take(9).collect();
                ns = f9.parse().ok()?;
            }
            Some((n(h)?, n(m)?, n(sec)?, ns))
        }
        _ => None,
    }
}

fn parse_offset(s: &str) -> Option<i32> {
    let (sign, rest) = match s.as_bytes().first() {
        Some(b'+') => (1, &s[1..]),
        Some(b'-') => (-1, &s[1..]),
        _ => return None,
    };
    let digits: String = rest.chars().filter(|c| *c != ':').collect();
    if digits.is_empty()
        || !digits.bytes().all(|c| c.is_ascii_digit())
        || rest.contains(':') && rest.len() != 5
    {
        return None;
    }
    let (h, m) = match digits.len() {
        1 | 2 => (digits.parse::<i32>().ok()?, 0),
        4 => (
            digits.get(..2)?.parse::<i32>().ok()?,
            digits.get(2..)?.parse::<i32>().ok()?,
        ),
        _ => return None,
    };
    Some(sign * (h * 3600 + m * 60))
}

/// Parses the common `date -d` forms: `@EPOCH`, `now`, `today`, `yesterday`,
/// `tomorrow`, ISO dates with optional times and zones, `Mon DD [YYYY]`, and
/// relative items (`3 days ago`, `+2 hours`, `next week`). `None` when invalid.
pub fn parse_date(s: &str, tz: &TimeZone, now: Timestamp) -> Option<Timestamp> {
    let s = s.trim();
    if let Some(e) = s.strip_prefix('@') {
        let e = e.trim();
        let (int, frac) = e.split_once('.').unwrap_or((e, ""));
        let secs: i64 = int.parse().ok()?;
        let f9: String = frac.chars().chain(std::iter::repeat('0')).take(9).collect();
        let mut ns: i32 = if frac.is_empty() { 0 } else { f9.parse().ok()? };
        if secs < 0 || int.starts_with('-') {
            ns = -ns;
        }
        return Timestamp::new(secs, ns).ok();
    }
    let lower = s.to_ascii_lowercase();
    let mut toks: Vec<String> = Vec::new();
    for w in lower.split_whitespace() {
        // ISO "2024-01-15T10:30:00" splits into date and time.
        if let Some((d, t)) = w.split_once('t')
            && d.len() == 10
            && d.bytes().filter(|c| *c == b'-').count() == 2
        {
            toks.push(d.to_string());
            toks.push(t.to_string());
        } else {
            toks.push(w.to_string());
        }
    }
    let nowz = now.to_zoned(tz.clone());
    let mut date: Option<jiff::civil::Date> = None;
    let mut time: Option<(i8, i8, i8, i32)> = None;
    let mut zone: Option<i32> = None;
    // A weekday name and its ordinal (0 bare, 1 next, -1 last).
    let mut weekday: Option<(i64, i64)> = None;
    // Relative years, months, days (calendar, GNU-style overflow) and seconds.
    let mut rel = [0i64; 4];
    let mut i = 0;
    let unit = |w: &str| -> Option<(usize, i64)> {
        let w = if w.len() > 3 {
            w.strip_suffix('s').unwrap_or(w)
        } else {
            w
        };
        Some(match w {
            "sec" | "second" => (3, 1),
            "min" | "minute" => (3, 60),
            "hour" => (3, 3600),
            "day" => (2, 1),
            "week" => (2, 7),
            "fortnight" => (2, 14),
            "month" => (1, 1),
            "year" => (0, 1),
            _ => return None,
        })
    };
    let add = |rel: [i64; 4], u: (usize, i64), n: i64| -> Option<[i64; 4]> {
        let mut r = rel;
        let slot = r.get_mut(u.0)?;
        *slot = slot.checked_add(n.checked_mul(u.1)?)?;
        Some(r)
    };
    // Index of the token holding a clock time: a signed number right after it
    // is a zone offset ("10:30 +2 hours" is 10:30 at UTC+2, plus an hour).
    let mut time_tok: Option<usize> = None;
    while let Some(t) = toks.get(i).cloned() {
        i += 1;
        match t.as_str() {
            "now" | "today" => continue,
            "yesterday" => {
                rel = add(rel, (2, 1), -1)?;
                continue;
            }
            "tomorrow" => {
                rel = add(rel, (2, 1), 1)?;
                continue;
            }
            "utc" | "gmt" | "z" | "ut" => {
                zone = Some(0);
                continue;
            }
            "ago" => {
                rel = rel.map(|v| -v);
                continue;
            }
            "next" | "last" | "this" => {
                let ord = match t.as_str() {
                    "next" => 1,
                    "last" => -1,
                    _ => 0,
                };
                let w = toks.get(i)?;
                i += 1;
                if let Some(d) = weekday_num(w) {
                    weekday = Some((d, ord));
                } else {
                    rel = add(rel, unit(w)?, ord)?;
                }
                continue;
            }
            "am" | "a.m." | "pm" | "p.m." => {
                let (h, m, sec, ns) = time?;
                time = Some((ampm(h, t.starts_with('p'))?, m, sec, ns));
                continue;
            }
            _ => {}
        }
        if let Some(u) = unit(&t) {
            rel = add(rel, u, 1)?;
            continue;
        }
        if let Some(d) = weekday_num(t.trim_end_matches(',')) {
            weekday = Some((d, 0));
            continue;
        }
        // "3pm", "10:30am".
        if let Some(body) = t.strip_suffix("am").or_else(|| t.strip_suffix("pm"))
            && body.as_bytes().first().is_some_and(u8::is_ascii_digit)
        {
            let (h, m, sec, ns) = if body.contains(':') {
                parse_time(body)?
            } else {
                (body.parse().ok()?, 0, 0, 0)
            };
            time = Some((ampm(h, t.ends_with("pm"))?, m, sec, ns));
            continue;
        }
        // ISO date.
        let parts: Vec<&str> = t.split('-').collect();
        if parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
        {
            let y: i16 = parts.first()?.parse().ok()?;
            let m: i8 = parts.get(1)?.parse().ok()?;
            let d: i8 = parts.get(2)?.parse().ok()?;
            date = Some(jiff::civil::Date::new(y, m, d).ok()?);
            continue;
        }
        // US style 01/15/2024.
        let parts: Vec<&str> = t.split('/').collect();
        if parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
        {
            let m: i8 = parts.first()?.parse().ok()?;
            let d: i8 = parts.get(1)?.parse().ok()?;
            let y: i16 = parts.get(2)?.parse().ok()?;
            date = Some(jiff::civil::Date::new(y, m, d).ok()?);
            continue;
        }
        // Time, perhaps with an attached zone offset or "z".
        if t.contains(':') && t.as_bytes().first().is_some_and(u8::is_ascii_digit) {
            let (tpart, zpart) = match t.find(['+', '-', 'z']) {
                Some(k) => (&t[..k], Some(&t[k..])),
                None => (t.as_str(), None),
            };
            time = Some(parse_time(tpart)?);
            time_tok = Some(i - 1);
            if let Some(zp) = zpart {
                zone = Some(if zp == "z" { 0 } else { parse_offset(zp)? });
            }
            continue;
        }
        if let Some(m) = month_num(&t) {
            let d: i8 = toks.get(i)?.trim_end_matches(',').parse().ok()?;
            i += 1;
            let mut y = nowz.year();
            if let Some(ys) = toks.get(i)
                && ys.len() == 4
                && let Ok(v) = ys.parse::<i16>()
            {
                y = v;
                i += 1;
            }
            date = Some(jiff::civil::Date::new(y, m, d).ok()?);
            continue;
        }
        // Numbers: "+3 days", "3 days", "-1 week"; an offset after a time.
        if (t.starts_with('+') || t.starts_with('-'))
            && time_tok.is_some_and(|k| k + 2 == i)
            && zone.is_none()
        {
            zone = Some(parse_offset(&t)?);
            continue;
        }
        let n: i64 = t.strip_prefix('+').unwrap_or(&t).parse().ok()?;
        let next_is_unit = toks.get(i).and_then(|w| unit(w)).is_some();
        if !next_is_unit && t.bytes().all(|c| c.is_ascii_digit()) {
            // "15 Jan [2024]".
            if let Some(m) = toks.get(i).and_then(|w| month_num(w)) {
                i += 1;
                let mut y = nowz.year();
                if let Some(ys) = toks.get(i)
                    && let Ok(v) = ys.parse::<i16>()
                {
                    y = v;
                    i += 1;
                }
                date = Some(jiff::civil::Date::new(y, m, i8::try_from(n).ok()?).ok()?);
                continue;
            }
            // GNU's bare numbers: a year after a date, YYYYMMDD, or HHMM / HH.
            let digits = t.len();
            if date.is_some() && time.is_none() && digits == 4 && rel == [0; 4] {
                let d = date?;
                date =
                    Some(jiff::civil::Date::new(i16::try_from(n).ok()?, d.month(), d.day()).ok()?);
            } else if digits > 4 {
                let y = i16::try_from(n / 10000).ok()?;
                date =
                    Some(jiff::civil::Date::new(y, ((n / 100) % 100) as i8, (n % 100) as i8).ok()?);
            } else if digits <= 2 {
                time = Some((i8::try_from(n).ok()?, 0, 0, 0));
                time_tok = Some(i - 1);
            } else {
                time = Some((i8::try_from(n / 100).ok()?, (n % 100) as i8, 0, 0));
                time_tok = Some(i - 1);
            }
            continue;
        }
        let u = unit(toks.get(i)?)?;
        i += 1;
        let mut n = n;
        if toks.get(i).map(String::as_str) == Some("ago") {
            n = -n;
            i += 1;
        }
        rel = add(rel, u, n)?;
    }
    if toks.is_empty() {
        // GNU: an empty date is the start of today.
        date = Some(nowz.date());
    }
    let base_date = date.unwrap_or_else(|| nowz.date());
    let z = if date.is_none() && time.is_none() && zone.is_none() && weekday.is_none() {
        nowz.clone()
    } else {
        let (h, m, sec, ns) = time.unwrap_or((0, 0, 0, 0));
        let dt = base_date.to_datetime(jiff::civil::Time::new(h, m, sec, ns).ok()?);
        match zone {
            Some(off) => dt
                .to_zoned(TimeZone::fixed(jiff::tz::Offset::from_seconds(off).ok()?))
                .ok()?
                .with_time_zone(tz.clone()),
            None => dt.to_zoned(tz.clone()).ok()?,
        }
    };
    let z = match weekday {
        // GNU: move to the named day (today counts unless "next"/"last").
        Some((dn, ord)) => {
            let wd = i64::from(z.weekday().to_sunday_zero_offset());
            let same = i64::from(wd == dn);
            let delta = (dn - wd + 7) % 7 + 7 * (ord - i64::from(ord > 0) * (1 - same));
            z.checked_add(Span::new().try_days(delta).ok()?).ok()?
        }
        None => z,
    };
    let [ry, rm, rd, rs] = rel;
    let z = if ry != 0 || rm != 0 || rd != 0 {
        // Like mktime on a broken-down time: Jan 31 + 1 month is Mar 2 (or 3).
        let dt = z.datetime();
        let months = i64::from(dt.year()) * 12 + i64::from(dt.month()) - 1 + ry * 12 + rm;
        let year = i16::try_from(months.div_euclid(12)).ok()?;
        let month = i8::try_from(months.rem_euclid(12) + 1).ok()?;
        let first = jiff::civil::Date::new(year, month, 1).ok()?;
        let day = first
            .checked_add(Span::new().try_days(i64::from(dt.day()) - 1 + rd).ok()?)
            .ok()?;
        day.to_datetime(dt.time()).to_zoned(tz.clone()).ok()?
    } else {
        z
    };
    let z = z.checked_add(Span::new().try_seconds(rs).ok()?).ok()?;
    Some(z.timestamp())
}

/// Runs `date`.
pub fn date(ctx: &mut UtilCtx<'_>) -> UtilResult {
    if let Some(st) = crate::common::meta_option(ctx, false) {
        return Ok(st);
    }
    // `-I` takes an optional attached value, which the shared parser cannot express.
    let mut args = Vec::new();
    let mut iso: Option<String> = None;
    for a in ctx.args() {
        if let Some(v) = a.strip_prefix("--iso-8601=") {
            iso = Some(v.to_string());
        } else if let Some(v) = a
            .strip_prefix("-I")
            .filter(|v| !v.is_empty() && !v.starts_with('-'))
        {
            iso = Some(v.to_string());
        } else {
            args.push(a.clone());
        }
    }
    let p = match parse(&args, &SPEC) {
        Ok(p) => p,
        Err(e) => return Ok(usage(ctx, &e, 1)),
    };
    if p.has("I") && iso.is_none() {
        iso = Some("date".into());
    }
    let tz = if p.has("u") {
        TimeZone::UTC
    } else {
        local_tz(ctx)
    };
    let now = Timestamp::now();
    let mut fmt: Option<String> = None;
    for op in &p.operands {
        if let Some(f) = op.strip_prefix('+') {
            if fmt.is_some() {
                return Ok(usage(ctx, &format!("extra operand {}", quote(op)), 1));
            }
            fmt = Some(f.to_string());
        } else {
            // Setting the clock is not something a sandboxed shell does.
            return Ok(usage(ctx, &format!("invalid date {}", quote(op)), 1));
        }
    }
    if let Some(f) = &fmt {
        let max = ctx.host.max_field_bytes();
        if strftime::widest_field(f) > max {
            ctx.warn(format_args!(
                "{}: a field width is over the limit of {max} bytes ([limits] string_bytes)",
                quote(f)
            ));
            return Ok(1);
        }
    }
    let mut times = Vec::new();
    if let Some(d) = p.value("d") {
        match parse_date(d, &tz, now) {
            Some(t) => times.push(t),
            None => {
                ctx.warn(format_args!("invalid date {}", quote(d)));
                return Ok(1);
            }
        }
    } else if let Some(r) = p.value("r") {
        match ctx.check_read(r).and_then(|r| ctx.stat(r, true)) {
            Ok(m) => times.push(Timestamp::new(m.mtime(), m.mtime_nsec() as i32).unwrap_or(now)),
            Err(e) => {
                ctx.warn_io(r, &e);
                return Ok(1);
            }
        }
    } else if let Some(f) = p.value("f") {
        let data = match ctx.read_file(f) {
            Ok(d) => d,
            Err(e) => {
                ctx.warn_io(f, &e);
                return Ok(1);
            }
        };
        let mut status = 0;
        let mut out = Vec::new();
        for line in String::from_utf8_lossy(&data).lines() {
            match parse_date(line, &tz, now) {
                Some(t) => {
                    out.extend(render(
                        &p,
                        iso.as_deref(),
                        fmt.as_deref(),
                        &t.to_zoned(tz.clone()),
                    ));
                    out.push(b'\n');
                }
                None => {
                    ctx.warn(format_args!("invalid date {}", quote(line)));
                    status = 1;
                }
            }
        }
        if let Err(e) = ctx.stdout.write_all(&out) {
            return Ok(ctx.write_failed(&e));
        }
        return Ok(status);
    } else {
        times.push(now);
    }
    let mut out = Vec::new();
    for t in times {
        out.extend(render(
            &p,
            iso.as_deref(),
            fmt.as_deref(),
            &t.to_zoned(tz.clone()),
        ));
        out.push(b'\n');
    }
    if let Err(e) = ctx.stdout.write_all(&out) {
        return Ok(ctx.write_failed(&e));
    }
    Ok(0)
}

fn render(
    p: &safesh_utils::args::Parsed,
    iso: Option<&str>,
    fmt: Option<&str>,
    z: &Zoned,
) -> Vec<u8> {
    let f = if let Some(f) = fmt {
        f.to_string()
    } else if let Some(i) = iso {
        match i {
            "hours" => "%Y-%m-%dT%H%:z",
            "minutes" => "%Y-%m-%dT%H:%M%:z",
            "seconds" => "%Y-%m-%dT%H:%M:%S%:z",
            "ns" => "%Y-%m-%dT%H:%M:%S,%N%:z",
            _ => "%Y-%m-%d",
        }
        .to_string()
    } else if let Some(r) = p.value("rfc-3339") {
        match r {
            "date" => "%Y-%m-%d",
            "ns" => "%Y-%m-%d %H:%M:%S.%N%:z",
            _ => "%Y-%m-%d %H:%M:%S%:z",
        }
        .to_string()
    } else if p.has("R") {
        "%a, %d %b %Y %H:%M:%S %z".to_string()
    } else {
        "%a %b %e %H:%M:%S %Z %Y".to_string()
    };
    strftime::format(&f, z)
}
