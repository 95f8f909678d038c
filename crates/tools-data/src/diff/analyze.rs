//! The comparison itself, following GNU diffutils' analyze.c so that hunks come
//! out exactly as GNU's: identical prefix/suffix trimming (keeping a horizon of
//! context lines), equivalence classes, `discard_confusing_lines`, Myers' O(ND)
//! middle-snake divide and conquer (`compareseq`/`diag`, with the "too expensive"
//! cut-off) and `shift_boundaries`.

use std::collections::HashMap;

/// One change: `deleted` lines of file 0 at `line0` replaced by `inserted`
/// lines of file 1 at `line1` (0-based line numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Change {
    /// First changed line in file 0.
    pub line0: usize,
    /// First changed line in file 1.
    pub line1: usize,
    /// Lines deleted from file 0.
    pub deleted: usize,
    /// Lines inserted from file 1.
    pub inserted: usize,
}

/// A file split into lines.
pub struct Text<'a> {
    /// Lines without their newline.
    pub lines: Vec<&'a [u8]>,
    /// True when the last line has no newline.
    pub missing_newline: bool,
}

impl<'a> Text<'a> {
    /// Splits `data` into lines.
    pub fn new(data: &'a [u8]) -> Text<'a> {
        let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
        let missing_newline = match lines.last() {
            Some(&[]) => {
                lines.pop();
                false
            }
            Some(_) => true,
            None => false,
        };
        Text {
            lines,
            missing_newline,
        }
    }

    /// True if line `i` is the incomplete last line.
    pub fn incomplete(&self, i: usize) -> bool {
        self.missing_newline && i + 1 == self.lines.len()
    }
}

/// How lines are compared.
#[derive(Clone, Copy, Debug, Default)]
pub struct LineCmp {
    /// `-i`
    pub ignore_case: bool,
    /// `-w`
    pub ignore_all_space: bool,
    /// `-b`
    pub ignore_space_change: bool,
    /// An ed script is the output (`-e`, `-f`): it cannot express a missing
    /// final newline, so GNU compares an incomplete last line as complete.
    pub newline_blind: bool,
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 11 | 12 | b'\r')
}

impl LineCmp {
    /// The comparison key of a line: equal keys mean equal lines.
    fn key(&self, line: &[u8], incomplete: bool) -> Vec<u8> {
        let mut k = Vec::with_capacity(line.len() + 1);
        // An incomplete last line only ever equals the other file's incomplete line.
        k.push((incomplete && !self.newline_blind) as u8);
        if self.ignore_all_space {
            k.extend(line.iter().copied().filter(|b| !is_space(*b)));
        } else if self.ignore_space_change {
            let mut i = 0;
            while i < line.len() {
                if is_space(line[i]) {
                    let run = line[i..].iter().take_while(|b| is_space(**b)).count();
                    i += run;
                    if i < line.len() {
                        k.push(b' ');
                    }
                } else {
                    k.push(line[i]);
                    i += 1;
                }
            }
        } else {
            k.extend_from_slice(line);
        }
        if self.ignore_case {
            k.make_ascii_lowercase();
        }
        k
    }
}

/// The result of comparing two texts.
pub fn compare(
    a: &Text<'_>,
    b: &Text<'_>,
    cmp: &LineCmp,
    horizon: usize,
    minimal: bool,
) -> Vec<Change> {
    let (n0, n1) = (a.lines.len(), b.lines.len());
    // Identical prefix (byte-equal lines with the same newline status).
    let blind = cmp.newline_blind;
    let same = |i: usize, j: usize| {
        a.lines[i] == b.lines[j] && (blind || a.incomplete(i) == b.incomplete(j))
    };
    let mut pre = 0;
    while pre < n0 && pre < n1 && same(pre, pre) {
        pre += 1;
    }
    pre -= pre.min(horizon);
    let mut suf = 0;
    if blind || a.missing_newline == b.missing_newline {
        while suf < n0 - pre && suf < n1 - pre && same(n0 - 1 - suf, n1 - 1 - suf) {
            suf += 1;
        }
        suf -= suf.min(horizon);
    }
    let (len0, len1) = (n0 - pre - suf, n1 - pre - suf);
    // Equivalence classes over the body lines; real classes start at 1.
    let mut classes: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut equivs = [Vec::with_capacity(len0), Vec::with_capacity(len1)];
    for (f, t) in [a, b].iter().enumerate() {
        for i in pre..pre + [len0, len1][f] {
            let next = classes.len() + 1;
            let id = *classes
                .entry(cmp.key(t.lines[i], t.incomplete(i)))
                .or_insert(next);
            equivs[f].push(id);
        }
    }
    let nclasses = classes.len() + 1;
    drop(classes);
    // changed[f][i + 1] for body line i; index 0 and len + 1 are sentinels.
    let mut changed = [vec![false; len0 + 2], vec![false; len1 + 2]];
    let (undiscarded, realindex) =
        discard_confusing_lines(&equivs, nclasses, &mut changed, minimal);
    let mut ctx = Ctx {
        xv: &undiscarded[0],
        yv: &undiscarded[1],
        fd: Vec::new(),
        bd: Vec::new(),
        off: undiscarded[1].len() as isize + 1,
        too_expensive: 0,
    };
    let total = undiscarded[0].len() + undiscarded[1].len() + 3;
    ctx.fd = vec![0; total];
    ctx.bd = vec![0; total];
    let mut diags = total;
    let mut te: usize = 1;
    while diags != 0 {
        te <<= 1;
        diags >>= 2;
    }
    ctx.too_expensive = te.max(4096) as isize;
    let mut notes = Notes {
        changed: &mut changed,
        realindex: &realindex,
    };
    compareseq(
        &mut ctx,
        0,
        undiscarded[0].len() as isize,
        0,
        undiscarded[1].len() as isize,
        minimal,
        &mut notes,
    );
    shift_boundaries(&equivs, &mut changed);
    build_script(&changed, len0, len1, pre)
}

/// Marks lines that cannot match as changed up front and returns the remaining
/// lines (their classes and real indexes), as GNU's `discard_confusing_lines`.
fn discard_confusing_lines(
    equivs: &[Vec<usize>; 2],
    nclasses: usize,
    changed: &mut [Vec<bool>; 2],
    minimal: bool,
) -> ([Vec<usize>; 2], [Vec<usize>; 2]) {
    let mut counts = [vec![0usize; nclasses], vec![0usize; nclasses]];
    for f in 0..2 {
        for &e in &equivs[f] {
            counts[f][e] += 1;
        }
    }
    let mut discarded = [vec![0u8; equivs[0].len()], vec![0u8; equivs[1].len()]];
    for f in 0..2 {
        let end = equivs[f].len();
        let other = &counts[1 - f];
        let mut many = 5usize;
        let mut tem = end / 64;
        loop {
            tem >>= 2;
            if tem == 0 {
                break;
            }
            many *= 2;
        }
        for i in 0..end {
            let e = equivs[f][i];
            if e == 0 {
                continue;
            }
            let nmatch = other[e];
            if nmatch == 0 {
                discarded[f][i] = 1;
            } else if nmatch > many {
                discarded[f][i] = 2;
            }
        }
    }
    for disc in discarded.iter_mut() {
        let end = disc.len();
        let mut i = 0;
        while i < end {
            if disc[i] == 2 {
                disc[i] = 0;
            } else if disc[i] != 0 {
                // A run of discardable lines starting with a definite one.
                let mut provisional = 0usize;
                let mut j = i;
                while j < end && disc[j] != 0 {
                    if disc[j] == 2 {
                        provisional += 1;
                    }
                    j += 1;
                }
                while j > i && disc[j - 1] == 2 {
                    j -= 1;
                    disc[j] = 0;
                    provisional -= 1;
                }
                let length = j - i;
                if provisional * 4 > length {
                    while j > i {
                        j -= 1;
                        if disc[j] == 2 {
                            disc[j] = 0;
                        }
                    }
                } else {
                    let mut minimum = 1usize;
                    let mut tem = length >> 2;
                    loop {
                        tem >>= 2;
                        if tem == 0 {
                            break;
                        }
                        minimum <<= 1;
                    }
                    minimum += 1;
                    // Cancel subruns of MINIMUM or more provisionals.
                    let mut consec = 0usize;
                    let mut jj: isize = 0;
                    while (jj as usize) < length {
                        let k = i + jj as usize;
                        if disc[k] != 2 {
                            consec = 0;
                        } else {
                            consec += 1;
                            if minimum == consec {
                                jj -= consec as isize;
                            } else if minimum < consec {
                                disc[k] = 0;
                            }
                        }
                        jj += 1;
                    }
                    // From the start of the run until 3 definite ones in a row.
                    let mut consec = 0;
                    for j in 0..length {
                        if j >= 8 && disc[i + j] == 1 {
                            break;
                        }
                        if disc[i + j] == 2 {
                            consec = 0;
                            disc[i + j] = 0;
                        } else if disc[i + j] == 0 {
                            consec = 0;
                        } else {
                            consec += 1;
                        }
                        if consec == 3 {
                            break;
                        }
                    }
                    i += length - 1;
                    // Same from the end.
                    let mut consec = 0;
                    for j in 0..length {
                        if j >= 8 && disc[i - j] == 1 {
                            break;
                        }
                        if disc[i - j] == 2 {
                            consec = 0;
                            disc[i - j] = 0;
                        } else if disc[i - j] == 0 {
                            consec = 0;
                        } else {
                            consec += 1;
                        }
                        if consec == 3 {
                            break;
                        }
                    }
                }
            }
            i += 1;
        }
    }
    let mut und = [Vec::new(), Vec::new()];
    let mut real = [Vec::new(), Vec::new()];
    for (f, eq) in equivs.iter().enumerate() {
        for (i, &e) in eq.iter().enumerate() {
            if minimal || discarded[f][i] == 0 {
                und[f].push(e);
                real[f].push(i);
            } else {
                changed[f][i + 1] = true;
            }
        }
    }
    (und, real)
}

struct Ctx<'v> {
    xv: &'v [usize],
    yv: &'v [usize],
    fd: Vec<isize>,
    bd: Vec<isize>,
    /// Index offset so that diagonal `d` lives at `d + off`.
    off: isize,
    too_expensive: isize,
}

struct Notes<'c> {
    changed: &'c mut [Vec<bool>; 2],
    realindex: &'c [Vec<usize>; 2],
}

struct Partition {
    xmid: isize,
    ymid: isize,
    lo_minimal: bool,
    hi_minimal: bool,
}

impl Ctx<'_> {
    fn eq(&self, x: isize, y: isize) -> bool {
        self.xv[x as usize] == self.yv[y as usize]
    }
    fn f(&self, d: isize) -> isize {
        self.fd[(d + self.off) as usize]
    }
    fn b(&self, d: isize) -> isize {
        self.bd[(d + self.off) as usize]
    }
    fn set_f(&mut self, d: isize, v: isize) {
        let i = (d + self.off) as usize;
        self.fd[i] = v;
    }
    fn set_b(&mut self, d: isize, v: isize) {
        let i = (d + self.off) as usize;
        self.bd[i] = v;
    }
}

/// Finds the midpoint of the shortest edit script between x[xoff..xlim] and
/// y[yoff..ylim] (GNU's `diag`).
fn diag(
    c: &mut Ctx<'_>,
    xoff: isize,
    xlim: isize,
    yoff: isize,
    ylim: isize,
    find_minimal: bool,
) -> Partition {
    let dmin = xoff - ylim;
    let dmax = xlim - yoff;
    let fmid = xoff - yoff;
    let bmid = xlim - ylim;
    let (mut fmin, mut fmax, mut bmin, mut bmax) = (fmid, fmid, bmid, bmid);
    let odd = (fmid - bmid) & 1 != 0;
    c.set_f(fmid, xoff);
    c.set_b(bmid, xlim);
    let mut cost: isize = 1;
    loop {
        if fmin > dmin {
            fmin -= 1;
            c.set_f(fmin - 1, -1);
        } else {
            fmin += 1;
        }
        if fmax < dmax {
            fmax += 1;
            c.set_f(fmax + 1, -1);
        } else {
            fmax -= 1;
        }
        let mut d = fmax;
        while d >= fmin {
            let tlo = c.f(d - 1);
            let thi = c.f(d + 1);
            let x0 = if tlo < thi { thi } else { tlo + 1 };
            let mut x = x0;
            let mut y = x0 - d;
            while x < xlim && y < ylim && c.eq(x, y) {
                x += 1;
                y += 1;
            }
            c.set_f(d, x);
            if odd && bmin <= d && d <= bmax && c.b(d) <= x {
                return Partition {
                    xmid: x,
                    ymid: y,
                    lo_minimal: true,
                    hi_minimal: true,
                };
            }
            d -= 2;
        }
        if bmin > dmin {
            bmin -= 1;
            c.set_b(bmin - 1, isize::MAX);
        } else {
            bmin += 1;
        }
        if bmax < dmax {
            bmax += 1;
            c.set_b(bmax + 1, isize::MAX);
        } else {
            bmax -= 1;
        }
        let mut d = bmax;
        while d >= bmin {
            let tlo = c.b(d - 1);
            let thi = c.b(d + 1);
            let x0 = if tlo < thi { tlo } else { thi - 1 };
            let mut x = x0;
            let mut y = x0 - d;
            while xoff < x && yoff < y && c.eq(x - 1, y - 1) {
                x -= 1;
                y -= 1;
            }
            c.set_b(d, x);
            if !odd && fmin <= d && d <= fmax && x <= c.f(d) {
                return Partition {
                    xmid: x,
                    ymid: y,
                    lo_minimal: true,
                    hi_minimal: true,
                };
            }
            d -= 2;
        }
        if !find_minimal && cost >= c.too_expensive {
            // Give up on the optimum: take the furthest-reaching diagonal.
            let (mut fxybest, mut fxbest) = (-1isize, 0isize);
            let mut d = fmax;
            while d >= fmin {
                let mut x = c.f(d).min(xlim);
                let mut y = x - d;
                if ylim < y {
                    x = ylim + d;
                    y = ylim;
                }
                if fxybest < x + y {
                    fxybest = x + y;
                    fxbest = x;
                }
                d -= 2;
            }
            let (mut bxybest, mut bxbest) = (isize::MAX, 0isize);
            let mut d = bmax;
            while d >= bmin {
                let mut x = xoff.max(c.b(d));
                let mut y = x - d;
                if y < yoff {
                    x = yoff + d;
                    y = yoff;
                }
                if x + y < bxybest {
                    bxybest = x + y;
                    bxbest = x;
                }
                d -= 2;
            }
            return if (xlim + ylim) - bxybest < fxybest - (xoff + yoff) {
                Partition {
                    xmid: fxbest,
                    ymid: fxybest - fxbest,
                    lo_minimal: true,
                    hi_minimal: false,
                }
            } else {
                Partition {
                    xmid: bxbest,
                    ymid: bxybest - bxbest,
                    lo_minimal: false,
                    hi_minimal: true,
                }
            };
        }
        cost += 1;
    }
}

/// GNU's `compareseq`: marks the changed lines of x[xoff..xlim] / y[yoff..ylim].
#[allow(clippy::too_many_arguments)]
fn compareseq(
    c: &mut Ctx<'_>,
    mut xoff: isize,
    mut xlim: isize,
    mut yoff: isize,
    mut ylim: isize,
    find_minimal: bool,
    notes: &mut Notes<'_>,
) {
    while xoff < xlim && yoff < ylim && c.eq(xoff, yoff) {
        xoff += 1;
        yoff += 1;
    }
    while xoff < xlim && yoff < ylim && c.eq(xlim - 1, ylim - 1) {
        xlim -= 1;
        ylim -= 1;
    }
    if xoff == xlim {
        for y in yoff..ylim {
            let r = notes.realindex[1][y as usize];
            notes.changed[1][r + 1] = true;
        }
    } else if yoff == ylim {
        for x in xoff..xlim {
            let r = notes.realindex[0][x as usize];
            notes.changed[0][r + 1] = true;
        }
    } else {
        let p = diag(c, xoff, xlim, yoff, ylim, find_minimal);
        compareseq(c, xoff, p.xmid, yoff, p.ymid, p.lo_minimal, notes);
        compareseq(c, p.xmid, xlim, p.ymid, ylim, p.hi_minimal, notes);
    }
}

/// Slides runs of changes to where GNU puts them (as far down as possible, then
/// back up to line up with a run in the other file).
fn shift_boundaries(equivs: &[Vec<usize>; 2], changed: &mut [Vec<bool>; 2]) {
    for (f, eq) in equivs.iter().enumerate() {
        let (a, b) = changed.split_at_mut(1);
        let (ch, other) = if f == 0 {
            (&mut a[0], &b[0])
        } else {
            (&mut b[0], &a[0])
        };
        let i_end = eq.len() as isize;
        // Accessors with the sentinel offset (index -1 and i_end are false).
        let c = |v: &Vec<bool>, i: isize| v[(i + 1) as usize];
        let mut i: isize = 0;
        let mut j: isize = 0;
        loop {
            while i < i_end && !c(ch, i) {
                while c(other, j) {
                    j += 1;
                }
                j += 1;
                i += 1;
            }
            if i == i_end {
                break;
            }
            let mut start = i;
            i += 1;
            while c(ch, i) {
                i += 1;
            }
            while c(other, j) {
                j += 1;
            }
            let mut corresponding;
            loop {
                let runlength = i - start;
                while start > 0 && eq[(start - 1) as usize] == eq[(i - 1) as usize] {
                    start -= 1;
                    ch[(start + 1) as usize] = true;
                    i -= 1;
                    ch[(i + 1) as usize] = false;
                    while c(ch, start - 1) {
                        start -= 1;
                    }
                    j -= 1;
                    while c(other, j) {
                        j -= 1;
                    }
                }
                corresponding = if c(other, j - 1) { i } else { i_end };
                while i != i_end && eq[start as usize] == eq[i as usize] {
                    ch[(start + 1) as usize] = false;
                    start += 1;
                    ch[(i + 1) as usize] = true;
                    i += 1;
                    while c(ch, i) {
                        i += 1;
                    }
                    j += 1;
                    while c(other, j) {
                        j += 1;
                        corresponding = i;
                    }
                }
                if runlength == i - start {
                    break;
                }
            }
            while corresponding < i {
                start -= 1;
                ch[(start + 1) as usize] = true;
                i -= 1;
                ch[(i + 1) as usize] = false;
                j -= 1;
                while c(other, j) {
                    j -= 1;
                }
            }
        }
    }
}

fn build_script(changed: &[Vec<bool>; 2], len0: usize, len1: usize, pre: usize) -> Vec<Change> {
    let c0 = |i: usize| changed[0][i + 1];
    let c1 = |i: usize| changed[1][i + 1];
    let mut out = Vec::new();
    let (mut i0, mut i1) = (0usize, 0usize);
    while i0 < len0 || i1 < len1 {
        if c0(i0) || c1(i1) {
            let (l0, l1) = (i0, i1);
            while c0(i0) {
                i0 += 1;
            }
            while c1(i1) {
                i1 += 1;
            }
            out.push(Change {
                line0: l0 + pre,
                line1: l1 + pre,
                deleted: i0 - l0,
                inserted: i1 - l1,
            });
        }
        i0 += 1;
        i1 += 1;
    }
    out
}
