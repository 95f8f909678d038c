//! Script formats: `-e` (an ed script, last change first), `-f` (forward ed:
//! the letter first, first change first) and `-n` (RCS), plus the input and
//! output transformations `--strip-trailing-cr` and `-t` (expand tabs).

use super::analyze::Text;
use super::output::Marked;

/// One hunk's lines, 0-based and inclusive (`first > last` when empty).
struct Span {
    first0: usize,
    last0: isize,
    first1: usize,
    last1: isize,
    old: bool,
    new: bool,
}

fn span(h: &[Marked]) -> Option<Span> {
    if h.iter().all(|m| m.ignore) {
        return None;
    }
    let (first, last) = (h.first()?.c, h.last()?.c);
    Some(Span {
        first0: first.line0,
        last0: last.line0 as isize + last.deleted as isize - 1,
        first1: first.line1,
        last1: last.line1 as isize + last.inserted as isize - 1,
        old: h.iter().any(|m| m.c.deleted > 0),
        new: h.iter().any(|m| m.c.inserted > 0),
    })
}

/// `N` or `N,M` (1-based); an empty range names the line before it.
fn range(sep: char, first: usize, last: isize) -> String {
    if (first as isize) < last {
        format!("{}{sep}{}", first + 1, last + 1)
    } else {
        format!("{}", last + 1)
    }
}

fn letter(s: &Span) -> char {
    match (s.old, s.new) {
        (true, true) => 'c',
        (true, false) => 'd',
        _ => 'a',
    }
}

/// The new lines of an ed hunk: a line that is just `.` would end the
/// insertion, so GNU writes `..`, ends it, strips the extra dot with `s/.//`
/// and goes on appending.
fn ed_lines(out: &mut Vec<u8>, b: &Text<'_>, s: &Span) {
    let mut inserting = true;
    for i in s.first1..=(s.last1.max(0) as usize) {
        if (i as isize) > s.last1 {
            break;
        }
        if !inserting {
            out.extend_from_slice(b"a\n");
            inserting = true;
        }
        let l = b.lines[i];
        if l == b"." {
            out.extend_from_slice(b"..\n.\ns/.//\n");
            inserting = false;
        } else {
            out.extend_from_slice(l);
            out.push(b'\n');
        }
    }
    if inserting {
        out.extend_from_slice(b".\n");
    }
}

/// `-e`: an ed script, hunks from the last to the first.
pub fn ed(out: &mut Vec<u8>, b: &Text<'_>, groups: &[&[Marked]]) {
    for h in groups.iter().rev() {
        let Some(s) = span(h) else { continue };
        let head = format!("{}{}\n", range(',', s.first0, s.last0), letter(&s));
        out.extend_from_slice(head.as_bytes());
        if s.new {
            ed_lines(out, b, &s);
        }
    }
}

/// `-f`: the letter before the range (`c2`, `d3 5`), first hunk first; GNU
/// writes the new lines as they are (a lone `.` is not escaped).
pub fn forward_ed(out: &mut Vec<u8>, b: &Text<'_>, groups: &[&[Marked]]) {
    for h in groups {
        let Some(s) = span(h) else { continue };
        let head = format!("{}{}\n", letter(&s), range(' ', s.first0, s.last0));
        out.extend_from_slice(head.as_bytes());
        if s.new {
            for i in s.first1..=(s.last1.max(0) as usize) {
                if (i as isize) <= s.last1 {
                    out.extend_from_slice(b.lines[i]);
                    out.push(b'\n');
                }
            }
            out.extend_from_slice(b".\n");
        }
    }
}

/// `-n`: RCS, `dFIRST COUNT` then `aAFTER COUNT` with the new lines.
pub fn rcs(out: &mut Vec<u8>, b: &Text<'_>, groups: &[&[Marked]]) {
    for h in groups {
        let Some(s) = span(h) else { continue };
        let deleted = (s.last0 + 1 - s.first0 as isize).max(0);
        if s.old {
            out.extend_from_slice(format!("d{} {deleted}\n", s.first0 + 1).as_bytes());
        }
        if s.new {
            let inserted = (s.last1 + 1 - s.first1 as isize).max(0);
            out.extend_from_slice(format!("a{} {inserted}\n", s.last0 + 1).as_bytes());
            for i in s.first1..s.first1 + inserted as usize {
                out.extend_from_slice(b.lines[i]);
                if !b.incomplete(i) {
                    out.push(b'\n');
                }
            }
        }
    }
}

/// `--strip-trailing-cr`: every `\r\n` becomes `\n` before comparing.
pub fn strip_cr(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len());
    let mut rest = data;
    while let Some(i) = memchr::memchr(b'\n', rest) {
        let line = &rest[..i];
        out.extend_from_slice(line.strip_suffix(b"\r").unwrap_or(line));
        out.push(b'\n');
        rest = &rest[i + 1..];
    }
    out.extend_from_slice(rest);
    out
}

/// `-t`: tabs in each line become spaces to the next multiple of 8, counted
/// from the start of the line's text (not of the output line).
pub fn expand_tabs(data: &[u8]) -> Vec<u8> {
    if memchr::memchr(b'\t', data).is_none() {
        return data.to_vec();
    }
    let mut out = Vec::with_capacity(data.len() + data.len() / 4);
    let mut col = 0usize;
    for &c in data {
        match c {
            b'\t' => {
                let n = 8 - col % 8;
                out.extend(std::iter::repeat_n(b' ', n));
                col += n;
            }
            b'\n' => {
                out.push(c);
                col = 0;
            }
            // A backspace moves back a column; GNU drops one at column 0.
            b'\x08' => {
                if col > 0 {
                    out.push(c);
                    col -= 1;
                }
            }
            _ => {
                out.push(c);
                col += 1;
            }
        }
    }
    out
}
