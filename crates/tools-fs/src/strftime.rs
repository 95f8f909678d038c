//! GNU `date +FORMAT` conversions (C locale), with GNU's `- _ 0 ^ #` flags and
//! field widths, over a `jiff` zoned time.

use jiff::Zoned;

const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// The zone abbreviation (`UTC`, `CET`) in effect at `z`.
pub fn abbrev(z: &Zoned) -> String {
    z.time_zone()
        .to_offset_info(z.timestamp())
        .abbreviation()
        .to_string()
}

fn offset(z: &Zoned, colons: usize) -> String {
    let s = z.offset().seconds();
    let sign = if s < 0 { '-' } else { '+' };
    let a = s.unsigned_abs();
    let (h, m, sec) = (a / 3600, (a / 60) % 60, a % 60);
    match colons {
        0 => format!("{sign}{h:02}{m:02}"),
        1 => format!("{sign}{h:02}:{m:02}"),
        2 => format!("{sign}{h:02}:{m:02}:{sec:02}"),
        _ => {
            if sec != 0 {
                format!("{sign}{h:02}:{m:02}:{sec:02}")
            } else if m != 0 {
                format!("{sign}{h:02}:{m:02}")
            } else {
                format!("{sign}{h:02}")
            }
        }
    }
}

/// Week number of the year with weeks starting on `first` (0 Sunday, 1 Monday).
fn week_number(z: &Zoned, first: i32) -> i32 {
    let yday = i32::from(z.day_of_year()) - 1;
    let wday = i32::from(z.weekday().to_sunday_zero_offset());
    (yday + 7 - (wday - first).rem_euclid(7)) / 7
}

/// The widest field width `fmt` asks for (`%999Y` → 999): the caller refuses a
/// format wider than its limit before formatting anything.
pub fn widest_field(fmt: &str) -> usize {
    let b = fmt.as_bytes();
    let mut widest = 0usize;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        while i < b.len() && matches!(b[i], b'-' | b'_' | b'0' | b'+' | b'^' | b'#') {
            i += 1;
        }
        let mut w = 0usize;
        while i < b.len() && b[i].is_ascii_digit() {
            w = w
                .saturating_mul(10)
                .saturating_add(usize::from(b[i] - b'0'));
            i += 1;
        }
        widest = widest.max(w);
        i += 1;
    }
    widest
}

/// Formats `z` according to `fmt`.
pub fn format(fmt: &str, z: &Zoned) -> Vec<u8> {
    let mut out = Vec::new();
    let b = fmt.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b.get(i).copied().unwrap_or(0);
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let mut pad: Option<u8> = None;
        let mut upper = false;
        let mut swap = false;
        while let Some(&f) = b.get(i) {
            match f {
                b'-' | b'_' | b'0' | b'+' => pad = Some(f),
                b'^' => upper = true,
                b'#' => swap = true,
                _ => break,
            }
            i += 1;
        }
        let mut width: Option<usize> = None;
        while let Some(&d) = b.get(i) {
            if !d.is_ascii_digit() {
                break;
            }
            width = Some(
                width
                    .unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(usize::from(d - b'0')),
            );
            i += 1;
        }
        let mut colons = 0;
        while b.get(i) == Some(&b':') {
            colons += 1;
            i += 1;
        }
        let Some(&conv) = b.get(i) else {
            out.extend_from_slice(b.get(start..).unwrap_or(b""));
            break;
        };
        i += 1;
        if colons > 0 && conv != b'z' {
            out.extend_from_slice(b.get(start..i).unwrap_or(b""));
            continue;
        }
        // (text, is numeric, default pad char, default width)
        let num = |v: i64, w: usize| (v.to_string(), true, b'0', w);
        let sp = |v: i64, w: usize| (v.to_string(), true, b' ', w);
        let txt = |s: String| (s, false, b' ', 0usize);
        let hour12 = {
            let h = i64::from(z.hour()) % 12;
            if h == 0 { 12 } else { h }
        };
        let (text, numeric, defpad, defw) = match conv {
            b'a' => txt(DAYS
                .get(z.weekday().to_sunday_zero_offset() as usize)
                .map_or("", |d| &d[..3])
                .to_string()),
            b'A' => txt(DAYS
                .get(z.weekday().to_sunday_zero_offset() as usize)
                .copied()
                .unwrap_or("")
                .to_string()),
            b'b' | b'h' => txt(MONTHS
                .get(z.month() as usize - 1)
                .map_or("", |m| &m[..3])
                .to_string()),
            b'B' => txt(MONTHS
                .get(z.month() as usize - 1)
                .copied()
                .unwrap_or("")
                .to_string()),
            b'c' => txt(String::from_utf8_lossy(&format("%a %b %e %H:%M:%S %Y", z)).into_owned()),
            b'C' => num(i64::from(z.year()).div_euclid(100), 2),
            b'd' => num(z.day().into(), 2),
            b'D' => txt(String::from_utf8_lossy(&format("%m/%d/%y", z)).into_owned()),
            b'e' => sp(z.day().into(), 2),
            b'F' => txt(String::from_utf8_lossy(&format("%+4Y-%m-%d", z)).into_owned()),
            b'g' => num(
                i64::from(z.date().iso_week_date().year()).rem_euclid(100),
                2,
            ),
            b'G' => num(z.date().iso_week_date().year().into(), 4),
            b'H' => num(z.hour().into(), 2),
            b'I' => num(hour12, 2),
            b'j' => num(z.day_of_year().into(), 3),
            b'k' => sp(z.hour().into(), 2),
            b'l' => sp(hour12, 2),
            b'm' => num(z.month().into(), 2),
            b'M' => num(z.minute().into(), 2),
            b'n' => txt("\n".into()),
            b't' => txt("\t".into()),
            b'N' => {
                let ns = format!("{:09}", z.subsec_nanosecond());
                let w = width.unwrap_or(9).clamp(1, 9);
                width = None;
                txt(ns.get(..w).unwrap_or(&ns).to_string())
            }
            b'p' => txt(if z.hour() < 12 { "AM" } else { "PM" }.into()),
            b'P' => txt(if z.hour() < 12 { "am" } else { "pm" }.into()),
            b'q' => num(((z.month() - 1) / 3 + 1).into(), 1),
            b'r' => txt(String::from_utf8_lossy(&format("%I:%M:%S %p", z)).into_owned()),
            b'R' => txt(String::from_utf8_lossy(&format("%H:%M", z)).into_owned()),
            b's' => num(z.timestamp().as_second(), 1),
            b'S' => num(z.second().into(), 2),
            b'T' => txt(String::from_utf8_lossy(&format("%H:%M:%S", z)).into_owned()),
            b'u' => num(z.weekday().to_monday_one_offset().into(), 1),
            b'U' => num(week_number(z, 0).into(), 2),
            b'V' => num(z.date().iso_week_date().week().into(), 2),
            b'w' => num(z.weekday().to_sunday_zero_offset().into(), 1),
            b'W' => num(week_number(z, 1).into(), 2),
            b'x' => txt(String::from_utf8_lossy(&format("%m/%d/%y", z)).into_owned()),
            b'X' => txt(String::from_utf8_lossy(&format("%H:%M:%S", z)).into_owned()),
            b'y' => num(i64::from(z.year()).rem_euclid(100), 2),
            b'Y' => num(z.year().into(), 1),
            b'z' => {
                let s = offset(z, colons);
                (s, true, b'0', 0)
            }
            b'Z' => txt(abbrev(z)),
            b'%' => txt("%".into()),
            _ => {
                out.extend_from_slice(b.get(start..i).unwrap_or(b""));
                continue;
            }
        };
        let mut text = text;
        if upper || (swap && matches!(conv, b'a' | b'A' | b'b' | b'B' | b'h' | b'p')) {
            text = text.to_uppercase();
        } else if swap && conv == b'Z' {
            text = text.to_lowercase();
        }
        let w = width.unwrap_or(defw);
        let padc = match pad {
            Some(b'_') => b' ',
            Some(b'0') | Some(b'+') => b'0',
            Some(b'-') => 0,
            _ => defpad,
        };
        if padc == 0 || text.len() >= w {
            if numeric && padc == 0 {
                // `-` removes padding from numbers; leading zeros of the value itself stay.
                out.extend_from_slice(text.as_bytes());
            } else {
                out.extend_from_slice(text.as_bytes());
            }
        } else {
            let fill = w - text.len();
            if numeric && (text.starts_with('-') || text.starts_with('+')) && padc == b'0' {
                let (sign, rest) = text.split_at(1);
                out.extend_from_slice(sign.as_bytes());
                out.extend(std::iter::repeat_n(b'0', fill));
                out.extend_from_slice(rest.as_bytes());
            } else {
                out.extend(std::iter::repeat_n(padc, fill));
                out.extend_from_slice(text.as_bytes());
            }
        }
    }
    out
}
