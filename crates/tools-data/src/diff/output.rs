//! The output formats: normal (`1c1` with `<`/`>`), unified (`-u`, `@@ -1 +1 @@`)
//! and context (`-c`, `***************`), grouped into hunks as GNU does.

use super::analyze::{Change, Text};

/// Which format to print.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// `diff a b`
    Normal,
    /// `-u` / `-U N`
    Unified,
    /// `-c` / `-C N`
    Context,
    /// `-e`: an ed script
    Ed,
    /// `-f`: a forward ed script
    ForwardEd,
    /// `-n`: an RCS script
    Rcs,
    /// `-y`: side by side
    Side,
}

impl Style {
    /// Shows no context lines (hunks group as in the normal format).
    pub fn bare(self) -> bool {
        matches!(
            self,
            Style::Normal | Style::Ed | Style::ForwardEd | Style::Rcs
        )
    }
}

/// Settings and state shared by the hunks of one file pair.
pub struct Fmt {
    /// Lines of context.
    pub context: usize,
    /// `-T`: a tab after the line marker.
    pub tab: bool,
    /// `-p`/`-F RE`: show the last line matching this before each hunk.
    pub show_function: Option<regex::bytes::Regex>,
    /// Where the previous function search started (GNU searches each line once).
    last_search: usize,
    /// The line found last time, if any.
    last_match: Option<usize>,
}

impl Fmt {
    /// Settings for a new file pair.
    pub fn new(context: usize, tab: bool, show_function: Option<regex::bytes::Regex>) -> Fmt {
        Fmt {
            context,
            tab,
            show_function,
            last_search: 0,
            last_match: None,
        }
    }

    /// Appends ` FUNCTION` (the last line before `first0` matching the `-F`
    /// pattern, `^[[:alpha:]$_]` for `-p`, trimmed to 40 bytes), as GNU does.
    fn function(&mut self, out: &mut Vec<u8>, a: &Text<'_>, first0: isize) {
        let Some(re) = &self.show_function else {
            return;
        };
        let start = first0.max(0) as usize;
        let last = self.last_search;
        self.last_search = start;
        let mut found = None;
        let mut i = start;
        while i > last {
            i -= 1;
            if re.is_match(a.lines[i]) {
                found = Some(i);
                self.last_match = Some(i);
                break;
            }
        }
        let Some(k) = found.or(self.last_match) else {
            return;
        };
        let l = a.lines[k];
        let ws = |c: u8| matches!(c, b' ' | b'\t' | 11 | 12 | b'\r');
        let i = l.iter().take_while(|c| ws(**c)).count();
        let mut j = (i + 40).min(l.len());
        while j > i && ws(l[j - 1]) {
            j -= 1;
        }
        out.push(b' ');
        out.extend_from_slice(&l[i..j]);
    }
}

/// A change plus whether `-B` may hide it.
#[derive(Clone, Copy, Debug)]
pub struct Marked {
    /// The change.
    pub c: Change,
    /// Every line of it is blank (only set under `-B`).
    pub ignore: bool,
}

/// Marks ignorable changes: every line of them is blank under `-B`
/// (`skip_ws` when `-b`/`-w` are also given) or matches an `-I` pattern.
pub fn mark(
    a: &Text<'_>,
    b: &Text<'_>,
    script: &[Change],
    blank_lines: bool,
    skip_ws: bool,
    ignore: &[regex::bytes::Regex],
) -> Vec<Marked> {
    let trivial = |l: &[u8]| {
        (blank_lines
            && if skip_ws {
                l.iter()
                    .all(|b| matches!(b, b' ' | b'\t' | 11 | 12 | b'\r'))
            } else {
                l.is_empty()
            })
            || ignore.iter().any(|r| r.is_match(l))
    };
    let any = blank_lines || !ignore.is_empty();
    script
        .iter()
        .map(|c| Marked {
            c: *c,
            ignore: any
                && a.lines[c.line0..c.line0 + c.deleted]
                    .iter()
                    .all(|l| trivial(l))
                && b.lines[c.line1..c.line1 + c.inserted]
                    .iter()
                    .all(|l| trivial(l)),
        })
        .collect()
}

/// Splits the script into hunks: changes closer than `2 * context + 1` lines (or
/// `context` when the next change is ignorable) share a hunk.
pub fn hunks(script: &[Marked], context: usize, style: Style) -> Vec<&[Marked]> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < script.len() {
        let mut end = start;
        if !style.bare() {
            loop {
                let cur = &script[end].c;
                let top0 = cur.line0 + cur.deleted;
                let Some(next) = script.get(end + 1) else {
                    break;
                };
                let thresh = if next.ignore {
                    context
                } else {
                    2 * context + 1
                };
                if next.c.line0 - top0 < thresh {
                    end += 1;
                } else {
                    break;
                }
            }
        }
        out.push(&script[start..=end]);
        start = end + 1;
    }
    out
}

/// A hunk's extent; `None` when all of it is ignorable.
struct Extent {
    first0: isize,
    last0: isize,
    first1: isize,
    last1: isize,
    old: bool,
    new: bool,
}

fn analyze(h: &[Marked]) -> Option<Extent> {
    let (first, last) = (h.first()?.c, h.last()?.c);
    if h.iter().all(|m| m.ignore) {
        return None;
    }
    Some(Extent {
        first0: first.line0 as isize,
        last0: last.line0 as isize + last.deleted as isize - 1,
        first1: first.line1 as isize,
        last1: last.line1 as isize + last.inserted as isize - 1,
        old: h.iter().any(|m| m.c.deleted > 0),
        new: h.iter().any(|m| m.c.inserted > 0),
    })
}

/// True if the hunk produces output.
pub fn visible(h: &[Marked]) -> bool {
    analyze(h).is_some()
}

/// Writes one line with `prefix`, adding GNU's note when it has no newline.
fn line(out: &mut Vec<u8>, tab: bool, prefix: &[u8], t: &Text<'_>, i: usize) {
    match (tab, prefix) {
        // -T: a tab instead of the space after the marker (or as the marker).
        (true, [m, b' ']) => out.extend_from_slice(&[*m, b'\t']),
        (true, b" ") => out.push(b'\t'),
        (true, [m]) => out.extend_from_slice(&[*m, b'\t']),
        _ => out.extend_from_slice(prefix),
    }
    out.extend_from_slice(t.lines[i]);
    out.push(b'\n');
    if t.incomplete(i) {
        out.extend_from_slice(b"\\ No newline at end of file\n");
    }
}

fn normal_range(a: isize, b: isize) -> String {
    // 1-based; an empty range names the line before it.
    if a < b {
        format!("{},{}", a + 1, b + 1)
    } else {
        format!("{}", b + 1)
    }
}

/// Prints a hunk in the normal format.
pub fn normal(out: &mut Vec<u8>, a: &Text<'_>, b: &Text<'_>, h: &[Marked], tab: bool) {
    let Some(e) = analyze(h) else { return };
    let letter = match (e.old, e.new) {
        (true, true) => 'c',
        (true, false) => 'd',
        _ => 'a',
    };
    let head = format!(
        "{}{letter}{}\n",
        normal_range(e.first0, e.last0),
        normal_range(e.first1, e.last1)
    );
    out.extend_from_slice(head.as_bytes());
    if e.old {
        for i in e.first0..=e.last0 {
            line(out, tab, b"< ", a, i as usize);
        }
    }
    if e.old && e.new {
        out.extend_from_slice(b"---\n");
    }
    if e.new {
        for i in e.first1..=e.last1 {
            line(out, tab, b"> ", b, i as usize);
        }
    }
}

/// Widens an extent by the context, clamped to the files.
fn widen(e: &mut Extent, context: usize, n0: usize, n1: usize) {
    let c = context as isize;
    e.first0 = (e.first0 - c).max(0);
    e.first1 = (e.first1 - c).max(0);
    e.last0 = (e.last0 + c).min(n0 as isize - 1);
    e.last1 = (e.last1 + c).min(n1 as isize - 1);
}

fn unified_range(a: isize, b: isize) -> String {
    let (ta, tb) = (a + 1, b + 1);
    if tb < ta {
        format!("{tb},0")
    } else if tb == ta {
        format!("{tb}")
    } else {
        format!("{ta},{}", tb - ta + 1)
    }
}

/// Prints a hunk in the unified format.
pub fn unified(out: &mut Vec<u8>, a: &Text<'_>, b: &Text<'_>, h: &[Marked], f: &mut Fmt) {
    let (context, tab) = (f.context, f.tab);
    let Some(mut e) = analyze(h) else { return };
    widen(&mut e, context, a.lines.len(), b.lines.len());
    let head = format!(
        "@@ -{} +{} @@",
        unified_range(e.first0, e.last0),
        unified_range(e.first1, e.last1)
    );
    out.extend_from_slice(head.as_bytes());
    f.function(out, a, e.first0);
    out.push(b'\n');
    let (mut i, mut j) = (e.first0, e.first1);
    let mut next = h.iter().peekable();
    while i <= e.last0 || j <= e.last1 {
        match next.peek() {
            Some(m) if i >= m.c.line0 as isize => {
                for _ in 0..m.c.deleted {
                    line(out, tab, b"-", a, i as usize);
                    i += 1;
                }
                for _ in 0..m.c.inserted {
                    line(out, tab, b"+", b, j as usize);
                    j += 1;
                }
                next.next();
            }
            _ => {
                line(out, tab, b" ", a, i as usize);
                i += 1;
                j += 1;
            }
        }
    }
}

fn context_range(a: isize, b: isize) -> String {
    let (ta, tb) = (a + 1, b + 1);
    if tb <= ta {
        format!("{tb}")
    } else {
        format!("{ta},{tb}")
    }
}

/// Prints a hunk in the context format.
pub fn context(out: &mut Vec<u8>, a: &Text<'_>, b: &Text<'_>, h: &[Marked], f: &mut Fmt) {
    let (context, tab) = (f.context, f.tab);
    let Some(mut e) = analyze(h) else { return };
    widen(&mut e, context, a.lines.len(), b.lines.len());
    out.extend_from_slice(b"***************");
    f.function(out, a, e.first0);
    let head = format!("\n*** {} ****\n", context_range(e.first0, e.last0));
    out.extend_from_slice(head.as_bytes());
    if e.old {
        let mut k = 0;
        for i in e.first0..=e.last0 {
            let i = i as usize;
            while k < h.len() && h[k].c.line0 + h[k].c.deleted <= i {
                k += 1;
            }
            let prefix: &[u8] = match h.get(k) {
                Some(m) if m.c.line0 <= i => {
                    if m.c.inserted > 0 {
                        b"! "
                    } else {
                        b"- "
                    }
                }
                _ => b"  ",
            };
            line(out, tab, prefix, a, i);
        }
    }
    out.extend_from_slice(format!("--- {} ----\n", context_range(e.first1, e.last1)).as_bytes());
    if e.new {
        let mut k = 0;
        for j in e.first1..=e.last1 {
            let j = j as usize;
            while k < h.len() && h[k].c.line1 + h[k].c.inserted <= j {
                k += 1;
            }
            let prefix: &[u8] = match h.get(k) {
                Some(m) if m.c.line1 <= j => {
                    if m.c.deleted > 0 {
                        b"! "
                    } else {
                        b"+ "
                    }
                }
                _ => b"  ",
            };
            line(out, tab, prefix, b, j);
        }
    }
}
