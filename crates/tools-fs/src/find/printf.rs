//! `find -printf` directives and escapes.

use super::Node;
use crate::common::{group_name, mode_string, type_char, user_name};
use crate::strftime;
use std::os::unix::fs::MetadataExt;

/// The `%f` name: the last component, trailing slashes kept (gnulib base_name).
pub fn base_with_slashes(p: &[u8]) -> &[u8] {
    let mut end = p.len();
    while end > 0 && p.get(end - 1) == Some(&b'/') {
        end -= 1;
    }
    if end == 0 {
        return if p.is_empty() { p } else { b"/" };
    }
    let start = p
        .get(..end)
        .and_then(|s| s.iter().rposition(|&c| c == b'/'))
        .map_or(0, |i| i + 1);
    p.get(start..).unwrap_or(p)
}

fn time_of(n: &Node, which: u8) -> (i64, i64) {
    let m = &n.meta;
    match which {
        b'A' | b'a' => (m.atime(), m.atime_nsec()),
        b'C' | b'c' => (m.ctime(), m.ctime_nsec()),
        _ => (m.mtime(), m.mtime_nsec()),
    }
}

fn zoned(t: (i64, i64), tz: &jiff::tz::TimeZone) -> jiff::Zoned {
    jiff::Timestamp::new(t.0, t.1 as i32)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .to_zoned(tz.clone())
}

fn time_directive(n: &Node, which: u8, k: u8, tz: &jiff::tz::TimeZone) -> Vec<u8> {
    let t = time_of(n, which);
    let frac = format!("{:09}0", t.1);
    let z = zoned(t, tz);
    match k {
        b'@' => format!("{}.{frac}", t.0).into_bytes(),
        b'S' => format!("{:02}.{frac}", z.second()).into_bytes(),
        b'T' => {
            let mut v = strftime::format("%H:%M:%S", &z);
            v.extend_from_slice(format!(".{frac}").as_bytes());
            v
        }
        b'+' => {
            let mut v = strftime::format("%Y-%m-%d+%H:%M:%S", &z);
            v.extend_from_slice(format!(".{frac}").as_bytes());
            v
        }
        _ => strftime::format(&format!("%{}", k as char), &z),
    }
}

/// Expands a `-printf` format for one node.
pub fn expand(fmt: &[u8], n: &Node, tz: &jiff::tz::TimeZone) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(&c) = fmt.get(i) {
        i += 1;
        if c == b'\\' {
            let Some(&e) = fmt.get(i) else {
                out.push(b'\\');
                break;
            };
            i += 1;
            match e {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'a' => out.push(7),
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'v' => out.push(11),
                b'\\' => out.push(b'\\'),
                b'c' => return (out, true),
                b'0'..=b'7' => {
                    let mut v = u32::from(e - b'0');
                    let mut k = 0;
                    while k < 2 {
                        match fmt.get(i) {
                            Some(&d @ b'0'..=b'7') => {
                                v = v * 8 + u32::from(d - b'0');
                                i += 1;
                                k += 1;
                            }
                            _ => break,
                        }
                    }
                    out.push((v & 0xff) as u8);
                }
                other => {
                    out.push(b'\\');
                    out.push(other);
                }
            }
            continue;
        }
        if c != b'%' {
            out.push(c);
            continue;
        }
        let spec_start = i;
        while matches!(fmt.get(i), Some(b'-' | b'+' | b' ' | b'#' | b'0')) {
            i += 1;
        }
        while matches!(fmt.get(i), Some(b'0'..=b'9')) {
            i += 1;
        }
        if fmt.get(i) == Some(&b'.') {
            i += 1;
            while matches!(fmt.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
        }
        let spec = String::from_utf8_lossy(fmt.get(spec_start..i).unwrap_or(b"")).into_owned();
        let Some(&d) = fmt.get(i) else {
            out.push(b'%');
            out.extend_from_slice(spec.as_bytes());
            break;
        };
        i += 1;
        let m = &n.meta;
        let (text, numeric): (Vec<u8>, bool) = match d {
            b'%' => (b"%".to_vec(), false),
            b'p' => (n.path.clone(), false),
            b'f' => (base_with_slashes(&n.path).to_vec(), false),
            b'h' => match n.path.iter().rposition(|&c| c == b'/') {
                Some(k) => (n.path.get(..k).unwrap_or(b"").to_vec(), false),
                None => (b".".to_vec(), false),
            },
            b'P' => {
                let rest = n.path.get(n.start.len()..).unwrap_or(b"");
                (rest.strip_prefix(b"/").unwrap_or(rest).to_vec(), false)
            }
            b'H' => (n.start.clone(), false),
            b'd' => (n.depth.to_string().into_bytes(), true),
            b's' => (m.len().to_string().into_bytes(), true),
            b'k' => ((m.blocks().div_ceil(2)).to_string().into_bytes(), true),
            b'b' => (m.blocks().to_string().into_bytes(), true),
            b'm' => (format!("{:o}", m.mode() & 0o7777).into_bytes(), true),
            b'M' => (mode_string(m.mode()).into_bytes(), false),
            b'y' => (vec![find_type(m.mode())], false),
            b'Y' => {
                let c = if m.file_type().is_symlink() {
                    match &n.target {
                        Some(Ok(t)) => find_type(t.mode()),
                        Some(Err(e)) if e.raw_os_error() == Some(libc::ELOOP) => b'L',
                        _ => b'N',
                    }
                } else {
                    find_type(m.mode())
                };
                (vec![c], false)
            }
            b'l' => {
                let t = if m.file_type().is_symlink() {
                    n.link.clone().unwrap_or_default()
                } else {
                    Vec::new()
                };
                (t, false)
            }
            b'i' => (m.ino().to_string().into_bytes(), true),
            b'n' => (m.nlink().to_string().into_bytes(), true),
            b'u' => (user_name(m.uid()).into_bytes(), false),
            b'g' => (group_name(m.gid()).into_bytes(), false),
            b'U' => (m.uid().to_string().into_bytes(), true),
            b'G' => (m.gid().to_string().into_bytes(), true),
            b'D' => (m.dev().to_string().into_bytes(), true),
            b't' | b'a' | b'c' => {
                let t = time_of(n, d);
                let z = zoned(t, tz);
                let mut v = strftime::format("%a %b %e %H:%M:%S", &z);
                v.extend_from_slice(format!(".{:09}0 ", t.1).as_bytes());
                v.extend(strftime::format("%Y", &z));
                (v, false)
            }
            b'T' | b'A' | b'C' => {
                let Some(&k) = fmt.get(i) else {
                    break;
                };
                i += 1;
                (time_directive(n, d, k, tz), false)
            }
            _ => {
                // Unknown directives print as themselves, like GNU (which also warns).
                let mut v = b"%".to_vec();
                v.extend_from_slice(spec.as_bytes());
                v.push(d);
                (v, false)
            }
        };
        out.extend(pad(&spec, text, numeric));
    }
    (out, false)
}

fn find_type(mode: u32) -> u8 {
    match type_char(mode) {
        '-' => b'f',
        c => c as u8,
    }
}

/// Applies a printf-style `[-0][width][.prec]` spec to a field.
fn pad(spec: &str, mut text: Vec<u8>, numeric: bool) -> Vec<u8> {
    if spec.is_empty() {
        return text;
    }
    let left = spec.contains('-');
    let flags_end = spec
        .find(|c: char| !matches!(c, '-' | '+' | ' ' | '#' | '0'))
        .unwrap_or(spec.len());
    let zero = numeric && spec.get(..flags_end).is_some_and(|f| f.contains('0')) && !left;
    let rest = spec.get(flags_end..).unwrap_or("");
    let (w, prec) = match rest.split_once('.') {
        Some((w, p)) => (w, Some(p.parse::<usize>().unwrap_or(0))),
        None => (rest, None),
    };
    if let Some(p) = prec
        && !numeric
    {
        text.truncate(p);
    }
    let width: usize = w.parse().unwrap_or(0);
    if text.len() >= width {
        return text;
    }
    let fill = width - text.len();
    let mut out = Vec::with_capacity(width);
    if left {
        out.extend_from_slice(&text);
        out.extend(std::iter::repeat_n(b' ', fill));
    } else {
        out.extend(std::iter::repeat_n(if zero { b'0' } else { b' ' }, fill));
        out.extend_from_slice(&text);
    }
    out
}
