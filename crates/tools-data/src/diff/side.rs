//! `-y` (side by side, GNU's `side.c`): each line pair in two columns of
//! `-W` (130) total width with a gutter mark: ` ` common, `|` changed (`/`
//! or `\` when only one side ends with a newline), `<` only left, `>` only
//! right; `--suppress-common-lines` drops the common ones. Columns are
//! padded with tabs unless `-t`, and cut where a column is full, exactly as
//! GNU counts columns (tabs, backspaces, carriage returns, and characters
//! that take no column).

use super::analyze::Text;
use super::output::Marked;

const TAB: usize = 8;
const GUTTER_MIN: usize = 3;

/// Column geometry and settings.
pub struct Side {
    half: usize,
    col2: usize,
    expand_tabs: bool,
    suppress_common: bool,
    utf8: bool,
}

impl Side {
    /// The layout for a total `width`.
    pub fn new(width: usize, expand_tabs: bool, suppress_common: bool, utf8: bool) -> Side {
        let t = if expand_tabs { 1 } else { TAB };
        let off = (width + t + GUTTER_MIN) / (2 * t) * t;
        let half = off
            .saturating_sub(GUTTER_MIN)
            .min(width.saturating_sub(off));
        Side {
            half,
            col2: if half > 0 { off } else { width },
            expand_tabs,
            suppress_common,
            utf8,
        }
    }

    /// Pads from column `from` to `to` (tabs first unless `-t`).
    fn tab_from_to(&self, out: &mut Vec<u8>, mut from: usize, to: usize) -> usize {
        if !self.expand_tabs {
            let mut tab = from + TAB - from % TAB;
            while tab <= to {
                out.push(b'\t');
                from = tab;
                tab += TAB;
            }
        }
        while from < to {
            out.push(b' ');
            from += 1;
        }
        to
    }

    /// Writes as much of `line` as fits in `bound` columns, tab stops counted
    /// from `indent`; returns the column reached.
    fn half_line(&self, out: &mut Vec<u8>, line: &[u8], indent: usize, bound: usize) -> usize {
        let (mut inp, mut outp) = (0usize, 0usize);
        let mut i = 0;
        while i < line.len() {
            let c = line[i];
            i += 1;
            match c {
                b'\t' => {
                    let spaces = TAB - (inp + indent) % TAB;
                    if inp == outp {
                        let mut stop = outp + spaces;
                        if self.expand_tabs {
                            stop = stop.min(bound);
                            while outp < stop {
                                out.push(b' ');
                                outp += 1;
                            }
                        } else if stop < bound {
                            outp = stop;
                            out.push(c);
                        }
                    }
                    inp += spaces;
                }
                b'\r' => {
                    out.push(c);
                    self.tab_from_to(out, 0, indent);
                    inp = 0;
                    outp = 0;
                }
                0x08 => {
                    if inp != 0 {
                        inp -= 1;
                        if inp < bound {
                            if outp <= inp {
                                while outp < inp {
                                    out.push(b' ');
                                    outp += 1;
                                }
                            } else {
                                outp = inp;
                                out.push(c);
                            }
                        }
                    }
                }
                0x20..=0x7e => {
                    if inp < bound {
                        outp = inp + 1;
                        out.push(c);
                    }
                    inp += 1;
                }
                // A control character: printed, no column (wcwidth < 0).
                0x01..=0x1f | 0x7f if c != 0x0c && c != 0x0b => {
                    if inp <= bound {
                        outp = inp;
                        out.push(c);
                    }
                }
                _ => {
                    // A UTF-8 character takes a column in a UTF-8 locale;
                    // anything else (NUL, \f, \v, a byte that is no
                    // character) is printed without one.
                    let len = if self.utf8 && c >= 0xc0 {
                        utf8_len(&line[i - 1..])
                    } else {
                        0
                    };
                    if len > 0 {
                        inp += 1;
                        if inp <= bound {
                            outp = inp;
                            out.extend_from_slice(&line[i - 1..i - 1 + len]);
                        }
                        i += len - 1;
                    } else if inp < bound {
                        out.push(c);
                    }
                }
            }
        }
        outp
    }

    /// One output line: `left` and `right` are (text, ends with a newline).
    fn line(
        &self,
        out: &mut Vec<u8>,
        left: Option<(&[u8], bool)>,
        sep: u8,
        right: Option<(&[u8], bool)>,
    ) {
        let mut col = 0;
        let mut newline = false;
        if let Some((l, nl)) = left {
            newline |= nl;
            col = self.half_line(out, l, 0, self.half);
        }
        if sep != b' ' {
            col = self.tab_from_to(out, col, (self.half + self.col2 - 1) / 2) + 1;
            let mut sep = sep;
            if sep == b'|' && right.is_some_and(|(_, rnl)| newline != rnl) {
                sep = if newline { b'/' } else { b'\\' };
            }
            out.push(sep);
        }
        if let Some((r, nl)) = right {
            newline |= nl;
            if !r.is_empty() {
                col = self.tab_from_to(out, col, self.col2);
                self.half_line(out, r, col, self.half);
            }
        }
        if newline {
            out.push(b'\n');
        }
    }

    /// The whole comparison, hunk by hunk (ignorable hunks show as common).
    pub fn write(&self, out: &mut Vec<u8>, a: &Text<'_>, b: &Text<'_>, script: &[Marked]) {
        fn side<'t>(t: &Text<'t>, i: usize) -> (&'t [u8], bool) {
            (t.lines[i], !t.incomplete(i))
        }
        let (mut n0, mut n1) = (0usize, 0usize);
        let common = |out: &mut Vec<u8>, n0: &mut usize, n1: &mut usize, l0: usize, l1: usize| {
            if !self.suppress_common {
                let (mut i, mut j) = (*n0, *n1);
                while i < l0 && j < l1 {
                    self.line(out, Some(side(a, i)), b' ', Some(side(b, j)));
                    i += 1;
                    j += 1;
                }
                while j < l1 {
                    self.line(out, None, b')', Some(side(b, j)));
                    j += 1;
                }
                while i < l0 {
                    self.line(out, Some(side(a, i)), b'(', None);
                    i += 1;
                }
            }
            *n0 = l0;
            *n1 = l1;
        };
        for m in script.iter().filter(|m| !m.ignore) {
            let c = m.c;
            common(out, &mut n0, &mut n1, c.line0, c.line1);
            let (mut i, mut j) = (c.line0, c.line1);
            let (e0, e1) = (c.line0 + c.deleted, c.line1 + c.inserted);
            if c.deleted > 0 && c.inserted > 0 {
                while i < e0 && j < e1 {
                    self.line(out, Some(side(a, i)), b'|', Some(side(b, j)));
                    i += 1;
                    j += 1;
                }
            }
            // GNU shows the right side's surplus first.
            while j < e1 {
                self.line(out, None, b'>', Some(side(b, j)));
                j += 1;
            }
            while i < e0 {
                self.line(out, Some(side(a, i)), b'<', None);
                i += 1;
            }
            n0 = e0;
            n1 = e1;
        }
        common(out, &mut n0, &mut n1, a.lines.len(), b.lines.len());
    }
}

/// The length of the valid UTF-8 character at the start of `s`, or 0.
fn utf8_len(s: &[u8]) -> usize {
    let n = match s.first() {
        Some(0xc2..=0xdf) => 2,
        Some(0xe0..=0xef) => 3,
        Some(0xf0..=0xf4) => 4,
        _ => return 0,
    };
    match s.get(..n).map(std::str::from_utf8) {
        Some(Ok(_)) => n,
        _ => 0,
    }
}
