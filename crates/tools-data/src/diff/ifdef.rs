//! Line and group formats (`--old-line-format`, `--changed-group-format`, …):
//! GNU's "if-then-else" output, which walks both files once and writes every
//! run of common lines and every change through a format. Group formats
//! understand `%<`, `%>`, `%=`, `%%`, `%c'C'` and line numbers
//! (`%[-0 width]{d,o,x,X}{e,f,l,m,n,E,F,L,M,N}`); line formats `%l`, `%L`,
//! `%%`, `%c'C'` and `%[…]{d,o,x,X}n`.

use super::analyze::{Change, Text};

/// The formats of one run; unset ones have GNU's defaults.
#[derive(Clone, Debug)]
pub struct Formats {
    pub old_line: Vec<u8>,
    pub new_line: Vec<u8>,
    pub unchanged_line: Vec<u8>,
    pub old_group: Vec<u8>,
    pub new_group: Vec<u8>,
    pub changed_group: Vec<u8>,
    pub unchanged_group: Vec<u8>,
}

impl Default for Formats {
    fn default() -> Formats {
        Formats {
            old_line: b"%l\n".to_vec(),
            new_line: b"%l\n".to_vec(),
            unchanged_line: b"%l\n".to_vec(),
            old_group: b"%<".to_vec(),
            new_group: b"%>".to_vec(),
            changed_group: b"%<%>".to_vec(),
            unchanged_group: b"%=".to_vec(),
        }
    }
}

impl Formats {
    /// The formats the options give, None when there are none.
    pub fn from_opts(opts: &[safesh_utils::args::Opt]) -> Option<Formats> {
        // Any line or group format selects the if-then-else output; the last
        // value of each option counts, `--line-format` sets all three line formats.
        let mut formats: Option<Formats> = None;
        let (mut old_group_set, mut new_group_set, mut changed_group_set) = (false, false, false);
        for o in opts {
            let Some(v) = o.value.as_deref() else {
                continue;
            };
            let name = o.name.as_str();
            if !name.ends_with("-format") {
                continue;
            }
            let v = safesh_utils::word_bytes::word_to_bytes(v).into_owned();
            let f = formats.get_or_insert_with(Formats::default);
            match name {
                "old-line-format" => f.old_line = v,
                "new-line-format" => f.new_line = v,
                "unchanged-line-format" => f.unchanged_line = v,
                "line-format" => {
                    f.old_line.clone_from(&v);
                    f.new_line.clone_from(&v);
                    f.unchanged_line = v;
                }
                "old-group-format" => {
                    f.old_group = v;
                    old_group_set = true;
                }
                "new-group-format" => {
                    f.new_group = v;
                    new_group_set = true;
                }
                "changed-group-format" => {
                    f.changed_group = v;
                    changed_group_set = true;
                }
                _ => f.unchanged_group = v,
            }
        }
        // GNU: an old or new group format not given is the changed one, if given.
        if let Some(f) = &mut formats
            && changed_group_set
        {
            if !old_group_set {
                f.old_group.clone_from(&f.changed_group);
            }
            if !new_group_set {
                f.new_group.clone_from(&f.changed_group);
            }
        }
        formats
    }
}

/// A group: 0-based half-open line ranges in both files.
struct Group {
    a: (usize, usize),
    b: (usize, usize),
}

/// Writes the whole comparison through the formats.
pub fn write(out: &mut Vec<u8>, a: &Text<'_>, b: &Text<'_>, script: &[Change], f: &Formats) {
    let (mut p0, mut p1) = (0, 0);
    for c in script {
        if c.line0 > p0 || c.line1 > p1 {
            let g = Group {
                a: (p0, c.line0),
                b: (p1, c.line1),
            };
            group(out, a, b, &g, &f.unchanged_group, f);
        }
        let g = Group {
            a: (c.line0, c.line0 + c.deleted),
            b: (c.line1, c.line1 + c.inserted),
        };
        let fmt = match (c.deleted > 0, c.inserted > 0) {
            (true, true) => &f.changed_group,
            (true, false) => &f.old_group,
            _ => &f.new_group,
        };
        group(out, a, b, &g, fmt, f);
        p0 = c.line0 + c.deleted;
        p1 = c.line1 + c.inserted;
    }
    if p0 < a.lines.len() || p1 < b.lines.len() {
        let g = Group {
            a: (p0, a.lines.len()),
            b: (p1, b.lines.len()),
        };
        group(out, a, b, &g, &f.unchanged_group, f);
    }
}

/// A `%c'C'` (or `%c'\OOO'`) at `fmt[i..]` (just after `%c`): the byte and
/// the length consumed, or None when malformed.
fn char_spec(fmt: &[u8]) -> Option<(u8, usize)> {
    if fmt.first() != Some(&b'\'') {
        return None;
    }
    match fmt.get(1)? {
        b'\\' => {
            let digits: Vec<u8> = fmt[2..]
                .iter()
                .take(3)
                .take_while(|d| (b'0'..=b'7').contains(d))
                .copied()
                .collect();
            let v = digits.iter().fold(0u32, |v, d| v * 8 + u32::from(d - b'0'));
            let end = 2 + digits.len();
            // Only octal escapes: anything else leaves the spec as text.
            if digits.is_empty() || fmt.get(end) != Some(&b'\'') {
                return None;
            }
            Some(((v & 0xff) as u8, end + 1))
        }
        &c => (fmt.get(2) == Some(&b'\'')).then_some((c, 3)),
    }
}

/// A line-number conversion: `%[-0][width]{d,o,x,X}`.
struct NumSpec {
    conv: u8,
    width: usize,
    minus: bool,
    zero: bool,
}

/// A numeric spec followed by a letter from `letters`, at `fmt` (just after
/// the `%`): the spec, the letter and the length consumed.
fn number_spec(fmt: &[u8], letters: &[u8]) -> Option<(NumSpec, u8, usize)> {
    let mut i = 0;
    let (mut minus, mut zero) = (false, false);
    while let Some(&c) = fmt.get(i) {
        match c {
            b'-' => minus = true,
            b'0' => zero = true,
            b' ' | b'+' | b'#' | b'\'' => {}
            _ => break,
        }
        i += 1;
    }
    let w0 = i;
    while fmt.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    // A field wider than a line could hold is refused rather than allocated.
    let width: usize = std::str::from_utf8(&fmt[w0..i]).ok()?.parse().unwrap_or(0);
    if width > 4096 {
        return None;
    }
    if fmt.get(i) == Some(&b'.') {
        i += 1;
        while fmt.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
    }
    let conv = *fmt.get(i)?;
    if !matches!(conv, b'd' | b'o' | b'x' | b'X') {
        return None;
    }
    let letter = *fmt.get(i + 1)?;
    if !letters.contains(&letter) {
        return None;
    }
    Some((
        NumSpec {
            conv,
            width,
            minus,
            zero,
        },
        letter,
        i + 2,
    ))
}

/// Formats `n` by `spec`.
fn number(spec: &NumSpec, n: i64) -> Vec<u8> {
    let digits = match spec.conv {
        b'o' => format!("{n:o}"),
        b'x' => format!("{n:x}"),
        b'X' => format!("{n:X}"),
        _ => n.to_string(),
    };
    let width = spec.width;
    let s = if spec.minus {
        format!("{digits:<width$}")
    } else if spec.zero {
        format!("{digits:0>width$}")
    } else {
        format!("{digits:>width$}")
    };
    s.into_bytes()
}

fn group(out: &mut Vec<u8>, a: &Text<'_>, b: &Text<'_>, g: &Group, fmt: &[u8], f: &Formats) {
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        let rest = &fmt[i + 1..];
        match rest.first() {
            Some(b'<') => {
                for k in g.a.0..g.a.1 {
                    line(out, a, k, &f.old_line);
                }
                i += 2;
            }
            Some(b'>') => {
                for k in g.b.0..g.b.1 {
                    line(out, b, k, &f.new_line);
                }
                i += 2;
            }
            Some(b'=') => {
                for k in g.a.0..g.a.1 {
                    line(out, a, k, &f.unchanged_line);
                }
                i += 2;
            }
            Some(b'%' | b'c') => i += literal(out, rest),
            _ => match number_spec(rest, b"efmlnEFLMN") {
                Some((spec, letter, n)) => {
                    // Lower case letters count in the old file, upper in the new.
                    let r = if letter.is_ascii_uppercase() {
                        g.b
                    } else {
                        g.a
                    };
                    let (first, end) = (r.0 as i64, r.1 as i64);
                    let v = match letter.to_ascii_lowercase() {
                        b'e' => first,
                        b'f' => first + 1,
                        b'l' => end,
                        b'm' => end + 1,
                        _ => end - first,
                    };
                    out.extend_from_slice(&number(&spec, v));
                    i += 1 + n;
                }
                None => {
                    out.push(b'%');
                    i += 1;
                }
            },
        }
    }
}

/// `%%` and `%c'C'` (`rest` follows the `%`), shared by group and line
/// formats: writes the character and returns how far to advance; a `%c`
/// without a valid character is a literal `%`.
fn literal(out: &mut Vec<u8>, rest: &[u8]) -> usize {
    if rest.first() == Some(&b'c')
        && let Some((ch, n)) = char_spec(&rest[1..])
    {
        out.push(ch);
        return 2 + n;
    }
    out.push(b'%');
    if rest.first() == Some(&b'%') { 2 } else { 1 }
}

fn line(out: &mut Vec<u8>, t: &Text<'_>, k: usize, fmt: &[u8]) {
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        if c != b'%' {
            out.push(c);
            i += 1;
            continue;
        }
        let rest = &fmt[i + 1..];
        match rest.first() {
            Some(b'l') => {
                out.extend_from_slice(t.lines[k]);
                i += 2;
            }
            Some(b'L') => {
                out.extend_from_slice(t.lines[k]);
                if !t.incomplete(k) {
                    out.push(b'\n');
                }
                i += 2;
            }
            Some(b'%' | b'c') => i += literal(out, rest),
            _ => match number_spec(rest, b"n") {
                Some((spec, _, n)) => {
                    out.extend_from_slice(&number(&spec, k as i64 + 1));
                    i += 1 + n;
                }
                None => {
                    out.push(b'%');
                    i += 1;
                }
            },
        }
    }
}
