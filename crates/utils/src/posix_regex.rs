//! Translation of POSIX regular expressions (BRE and ERE, as GNU grep/sed and awk
//! read them) into the syntax of the `regex` crate.
//!
//! The translator walks the pattern once, emitting an equivalent `regex` pattern:
//! POSIX operators become `regex` operators, everything POSIX treats as literal is
//! emitted as an escaped literal, and bracket expressions are computed into explicit
//! sets (C locale: ranges are code ranges, classes are ASCII). Back-references
//! (`\1`..`\9`) cannot be expressed in the `regex` crate; they are emitted in the
//! syntax `fancy-regex` accepts and flagged in [`Translated::backrefs`] so callers can
//! pick a fallback engine.

use std::fmt::Write as _;

/// Which POSIX dialect a pattern is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Basic regular expressions (grep, sed without -E): `\(` `\)` `\{` `\}` `\|` `\+` `\?` are operators.
    Basic,
    /// Extended regular expressions (grep -E, sed -E, awk).
    Extended,
}

/// Which engine and haystack type the translated pattern is meant for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// `regex::Regex` or `regex::bytes::Regex` in Unicode mode: the pattern is
    /// read as characters; classes and word boundaries stay ASCII (C locale).
    Unicode,
    /// `regex::bytes::Regex` with C-locale byte semantics: the pattern's bytes are
    /// its units (`.` matches any byte, `[é]` is a set of two bytes); the output
    /// starts with `(?-u)`.
    Bytes,
    /// `fancy_regex::Regex` over a haystack decoded as Latin-1 (each byte one char
    /// U+0000..U+00FF): byte semantics on a `&str` engine, for back-references.
    Latin1,
}

/// Everything that shapes a translation.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// BRE or ERE.
    pub dialect: Dialect,
    /// Ignore case (ASCII in the byte targets).
    pub icase: bool,
    /// The engine the pattern is for.
    pub target: Target,
    /// The haystack holds many records ended by this byte (grep searching a whole
    /// buffer): nothing may match it, and `^` `$` `` \` `` `\'` anchor at records.
    /// The caller must set the engine's line terminator to the same byte.
    pub record_sep: Option<u8>,
    /// sed's `M` flag: `^`/`$` also match around newlines.
    pub multiline: bool,
    /// sed's escapes: `\n` `\t` `\r` `\f` `\v` `\a` `\dNNN` `\oNNN` `\xHH` `\cX` are characters.
    pub sed_escapes: bool,
}

impl Options {
    /// Options for `dialect` with everything else off and the Unicode target.
    pub fn new(dialect: Dialect) -> Options {
        Options {
            dialect,
            icase: false,
            target: Target::Unicode,
            record_sep: None,
            multiline: false,
            sed_escapes: false,
        }
    }
}

/// The result of a translation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Translated {
    /// The pattern in `regex` syntax (`fancy-regex` syntax when `backrefs`).
    pub pattern: String,
    /// True when the pattern uses back-references: the `regex` crate cannot run it.
    pub backrefs: bool,
    /// Number of capture groups.
    pub groups: usize,
}

/// Translates `pattern` from `dialect` into `regex` crate syntax. Errors carry a
/// GNU-like message (e.g. `Unmatched ( or \(`). A pattern with back-references
/// translates to `fancy-regex` syntax, which the `regex` crate rejects; use
/// [`translate_with`] to learn whether that is the case.
pub fn translate(pattern: &str, dialect: Dialect) -> Result<String, String> {
    translate_with(pattern, &Options::new(dialect)).map(|t| t.pattern)
}

/// Translates `pattern` under `opts`.
pub fn translate_with(pattern: &str, opts: &Options) -> Result<Translated, String> {
    let units: Vec<u32> = match opts.target {
        Target::Unicode => pattern.chars().map(|c| c as u32).collect(),
        Target::Bytes | Target::Latin1 => pattern.bytes().map(u32::from).collect(),
    };
    let mut t = Translator {
        opts,
        u: &units,
        i: 0,
        out: String::with_capacity(pattern.len() * 2 + 8),
        open: Vec::new(),
        closed: 0,
        groups: 0,
        last: None,
        backrefs: false,
    };
    t.run()?;
    let mut prefix = String::new();
    match (opts.icase, opts.target) {
        (true, Target::Bytes) => prefix.push_str("(?i-u)"),
        (false, Target::Bytes) => prefix.push_str("(?-u)"),
        (true, _) => prefix.push_str("(?i)"),
        (false, _) => {}
    }
    prefix.push_str(&t.out);
    Ok(Translated {
        pattern: prefix,
        backrefs: t.backrefs,
        groups: t.groups,
    })
}

/// The last atom emitted: where it starts in `out`, and whether a quantifier
/// already applies to it (a second one must wrap it in a group, or `regex` would
/// read `+?` as a lazy operator).
#[derive(Clone, Copy)]
struct Atom {
    start: usize,
    quantified: bool,
}

struct Translator<'a> {
    opts: &'a Options,
    u: &'a [u32],
    i: usize,
    out: String,
    /// Output positions of the open groups (for the "last atom" after `)`).
    open: Vec<usize>,
    /// Number of groups closed so far (back-references may only name those).
    closed: usize,
    groups: usize,
    last: Option<Atom>,
    backrefs: bool,
}

const WORD: &[(u32, u32)] = &[(0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A)];
const SPACE: &[(u32, u32)] = &[(0x09, 0x0D), (0x20, 0x20)];

impl Translator<'_> {
    fn peek(&self, k: usize) -> Option<u32> {
        self.u.get(self.i + k).copied()
    }

    fn ere(&self) -> bool {
        self.opts.dialect == Dialect::Extended
    }

    fn max_unit(&self) -> u32 {
        match self.opts.target {
            Target::Unicode => 0x10FFFF,
            Target::Bytes | Target::Latin1 => 0xFF,
        }
    }

    fn run(&mut self) -> Result<(), String> {
        while let Some(c) = self.peek(0) {
            self.i += 1;
            if c == u32::from(b'\\') {
                self.escape()?;
                continue;
            }
            match char::from_u32(c).unwrap_or('\u{0}') {
                '[' => {
                    let set = self.bracket()?;
                    self.atom_set(&set);
                }
                '.' => {
                    let mut set = vec![(0, self.max_unit())];
                    if let Some(sep) = self.opts.record_sep {
                        set = subtract(&set, u32::from(sep));
                    }
                    self.atom_set(&set);
                }
                '*' => self.quantifier("*", c)?,
                '^' => {
                    if self.ere() {
                        // GNU (dfa) lets an ERE operator repeat the anchor: `^*a`
                        // is `(^)*a`.
                        let start = self.out.len();
                        self.anchor_start();
                        self.out.insert_str(start, "(?:");
                        self.out.push(')');
                        self.last = Some(Atom {
                            start,
                            quantified: false,
                        });
                    } else if self.at_expr_start() {
                        self.anchor_start();
                    } else {
                        self.literal(c);
                    }
                }
                '$' => {
                    if self.ere() || self.at_expr_end() {
                        self.anchor_end();
                    } else {
                        self.literal(c);
                    }
                }
                '+' if self.ere() => self.quantifier("+", c)?,
                '?' if self.ere() => self.quantifier("?", c)?,
                '{' if self.ere() => {
                    if self.last.is_some() {
                        if let Some(q) = self.interval(false)? {
                            self.apply(&q);
                        } else {
                            self.literal(c);
                        }
                    } else {
                        self.literal(c);
                    }
                }
                '(' if self.ere() => self.open_group(),
                ')' if self.ere() => {
                    if self.open.is_empty() {
                        self.literal(c);
                    } else {
                        self.close_group();
                    }
                }
                '|' if self.ere() => self.alternation(),
                _ => self.literal(c),
            }
        }
        if !self.open.is_empty() {
            return Err("Unmatched ( or \\(".into());
        }
        Ok(())
    }

    /// True when the `^` just read starts an expression (BRE: pattern start, after `\(` or `\|`).
    fn at_expr_start(&self) -> bool {
        let p = self.i - 1;
        if p == 0 {
            return true;
        }
        let bs = u32::from(b'\\');
        p >= 2
            && self.u.get(p - 2) == Some(&bs)
            && matches!(self.u.get(p - 1), Some(&c) if c == u32::from(b'(') || c == u32::from(b'|'))
            && !self.escaped_at(p - 2)
    }

    /// True when the backslash at `p` is itself escaped.
    fn escaped_at(&self, p: usize) -> bool {
        let mut n = 0;
        let mut q = p;
        while q > 0 && self.u.get(q - 1) == Some(&u32::from(b'\\')) {
            n += 1;
            q -= 1;
        }
        n % 2 == 1
    }

    /// True when the `$` just read ends an expression (BRE: pattern end, before `\)` or `\|`).
    fn at_expr_end(&self) -> bool {
        match (self.peek(0), self.peek(1)) {
            (None, _) => true,
            (Some(b), Some(c)) if b == u32::from(b'\\') => {
                c == u32::from(b')') || c == u32::from(b'|')
            }
            _ => false,
        }
    }

    fn escape(&mut self) -> Result<(), String> {
        let Some(c) = self.peek(0) else {
            return Err("Trailing backslash".into());
        };
        self.i += 1;
        let ch = char::from_u32(c).unwrap_or('\u{0}');
        let bre = !self.ere();
        match ch {
            '(' if bre => self.open_group(),
            ')' if bre => {
                if self.open.is_empty() {
                    return Err("Unmatched ) or \\)".into());
                }
                self.close_group();
            }
            '|' if bre => self.alternation(),
            '{' if bre => {
                if self.last.is_some() {
                    match self.interval(true)? {
                        Some(q) => self.apply(&q),
                        None => return Err("Invalid content of \\{\\}".into()),
                    }
                } else {
                    self.literal(c);
                }
            }
            '+' if bre => self.quantifier("+", c)?,
            '?' if bre => self.quantifier("?", c)?,
            '1'..='9' => {
                let n = c - u32::from(b'0');
                if n as usize > self.closed {
                    return Err("Invalid back reference".into());
                }
                self.backrefs = true;
                let start = self.out.len();
                let _ = write!(self.out, "\\{n}");
                self.last = Some(Atom {
                    start,
                    quantified: false,
                });
            }
            'w' => self.atom_set(WORD),
            'W' => {
                let s = self.complement(WORD);
                self.atom_set(&s);
            }
            's' => {
                let mut s = SPACE.to_vec();
                if let Some(sep) = self.opts.record_sep {
                    s = subtract(&s, u32::from(sep));
                }
                self.atom_set(&s);
            }
            'S' => {
                let s = self.complement(SPACE);
                self.atom_set(&s);
            }
            'b' => self.assertion(
                r"(?-u:\b)",
                r"(?:(?<=[0-9A-Za-z_])(?![0-9A-Za-z_])|(?<![0-9A-Za-z_])(?=[0-9A-Za-z_]))",
            ),
            'B' => {
                let unicode = if self.opts.target == Target::Unicode {
                    r"\B"
                } else {
                    r"(?-u:\B)"
                };
                self.assertion(
                    unicode,
                    r"(?:(?<=[0-9A-Za-z_])(?=[0-9A-Za-z_])|(?<![0-9A-Za-z_])(?![0-9A-Za-z_]))",
                );
            }
            '<' => self.assertion(r"(?-u:\b{start})", r"(?<![0-9A-Za-z_])(?=[0-9A-Za-z_])"),
            '>' => self.assertion(r"(?-u:\b{end})", r"(?<=[0-9A-Za-z_])(?![0-9A-Za-z_])"),
            '`' => {
                if self.opts.record_sep.is_some() {
                    self.push_anchor("(?m:^)");
                } else {
                    self.push_anchor(r"\A");
                }
            }
            '\'' => {
                if self.opts.record_sep.is_some() {
                    self.push_anchor("(?m:$)");
                } else {
                    self.push_anchor(r"\z");
                }
            }
            _ if self.opts.sed_escapes => {
                if let Some(v) = self.sed_escape(ch) {
                    self.literal(v);
                } else {
                    self.literal(c);
                }
            }
            _ => self.literal(c),
        }
        Ok(())
    }

    /// GNU sed's character escapes (the escape letter has been consumed).
    fn sed_escape(&mut self, ch: char) -> Option<u32> {
        let v = match ch {
            'n' => 10,
            't' => 9,
            'r' => 13,
            'f' => 12,
            'v' => 11,
            'a' => 7,
            'c' => {
                let x = self.peek(0)?;
                self.i += 1;
                let up = char::from_u32(x).unwrap_or('\0').to_ascii_uppercase() as u32;
                up ^ 0x40
            }
            'd' => self.number(10, 3)?,
            'o' => self.number(8, 3)?,
            'x' => self.number(16, 2)?,
            _ => return None,
        };
        Some(v)
    }

    fn number(&mut self, radix: u32, max: usize) -> Option<u32> {
        let mut v = 0u32;
        let mut n = 0;
        while n < max {
            let Some(d) = self
                .peek(0)
                .and_then(char::from_u32)
                .and_then(|c| c.to_digit(radix))
            else {
                break;
            };
            v = v * radix + d;
            self.i += 1;
            n += 1;
        }
        (n > 0).then_some(v & 0xFF)
    }

    fn assertion(&mut self, native: &str, lookaround: &str) {
        let s = if self.opts.target == Target::Latin1 {
            lookaround
        } else {
            native
        };
        self.push_anchor(s);
    }

    fn push_anchor(&mut self, s: &str) {
        self.out.push_str(s);
        self.last = None;
    }

    fn anchor_start(&mut self) {
        if self.opts.multiline || self.opts.record_sep.is_some() {
            self.push_anchor("(?m:^)");
        } else {
            self.push_anchor("^");
        }
    }

    fn anchor_end(&mut self) {
        if self.opts.multiline || self.opts.record_sep.is_some() {
            self.push_anchor("(?m:$)");
        } else {
            self.push_anchor("$");
        }
    }

    fn open_group(&mut self) {
        self.open.push(self.out.len());
        self.groups += 1;
        self.out.push('(');
        self.last = None;
    }

    fn close_group(&mut self) {
        let start = self.open.pop().unwrap_or(0);
        self.out.push(')');
        self.closed += 1;
        self.last = Some(Atom {
            start,
            quantified: false,
        });
    }

    fn alternation(&mut self) {
        self.out.push('|');
        self.last = None;
    }

    /// `*`, `+` or `?` (`c` is the operator character, used when it is literal).
    fn quantifier(&mut self, q: &str, c: u32) -> Result<(), String> {
        if self.last.is_some() {
            self.apply(q);
        } else if !self.ere() {
            // BRE: an operator with nothing to repeat is an ordinary character.
            self.literal(c);
        }
        // ERE: GNU ignores it.
        Ok(())
    }

    fn apply(&mut self, q: &str) {
        let Some(mut atom) = self.last else {
            return;
        };
        if atom.quantified {
            self.out.insert_str(atom.start, "(?:");
            self.out.push(')');
        }
        self.out.push_str(q);
        atom.quantified = true;
        self.last = Some(atom);
    }

    /// Reads `n}`, `n,}`, `,m}`, `n,m}` (with `\}` in BRE) after the opening brace.
    /// `Ok(None)` when the content is not an interval (ERE: the brace is literal;
    /// the position is restored).
    fn interval(&mut self, bre: bool) -> Result<Option<String>, String> {
        let save = self.i;
        let lo = self.digits();
        let mut hi = lo;
        let comma = self.peek(0) == Some(u32::from(b','));
        if comma {
            self.i += 1;
            hi = self.digits();
        }
        let closed = if bre {
            if self.peek(0) == Some(u32::from(b'\\')) && self.peek(1) == Some(u32::from(b'}')) {
                self.i += 2;
                true
            } else {
                false
            }
        } else if self.peek(0) == Some(u32::from(b'}')) {
            self.i += 1;
            true
        } else {
            false
        };
        if !closed || (lo.is_none() && !comma) {
            if bre {
                if self.i >= self.u.len() {
                    return Err("Unmatched \\{".into());
                }
                return Err("Invalid content of \\{\\}".into());
            }
            self.i = save;
            return Ok(None);
        }
        let lo_v = lo.unwrap_or(0);
        if let Some(h) = hi
            && h < lo_v
        {
            return Err("Invalid content of \\{\\}".into());
        }
        if lo_v > 32767 || hi.is_some_and(|h| h > 32767) {
            return Err("Regular expression too big".into());
        }
        Ok(Some(match (comma, hi) {
            (false, _) => format!("{{{lo_v}}}"),
            (true, None) => format!("{{{lo_v},}}"),
            (true, Some(h)) => format!("{{{lo_v},{h}}}"),
        }))
    }

    fn digits(&mut self) -> Option<u32> {
        let mut v: Option<u32> = None;
        while let Some(d) = self
            .peek(0)
            .and_then(char::from_u32)
            .and_then(|c| c.to_digit(10))
        {
            v = Some(v.unwrap_or(0).saturating_mul(10).saturating_add(d));
            self.i += 1;
        }
        v
    }

    fn literal(&mut self, c: u32) {
        let start = self.out.len();
        if let Some(sep) = self.opts.record_sep
            && c == u32::from(sep)
        {
            // A literal record separator can never match inside a record.
            self.out.push_str("[a&&b]");
        } else {
            push_unit(&mut self.out, c, self.opts.target, false);
        }
        self.last = Some(Atom {
            start,
            quantified: false,
        });
    }

    fn atom_set(&mut self, set: &[(u32, u32)]) {
        let start = self.out.len();
        let set = match self.opts.record_sep {
            Some(sep) => subtract(set, u32::from(sep)),
            None => set.to_vec(),
        };
        emit_set(&mut self.out, &set, self.opts.target);
        self.last = Some(Atom {
            start,
            quantified: false,
        });
    }

    fn complement(&self, set: &[(u32, u32)]) -> Vec<(u32, u32)> {
        complement(set, self.max_unit())
    }

    /// Parses a bracket expression (after `[`) into a set of units.
    fn bracket(&mut self) -> Result<Vec<(u32, u32)>, String> {
        const UNMATCHED: &str = "Unmatched [, [^, [:, [., or [=";
        let mut negate = false;
        if self.peek(0) == Some(u32::from(b'^')) {
            negate = true;
            self.i += 1;
        }
        let mut set: Vec<(u32, u32)> = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek(0) else {
                return Err(UNMATCHED.into());
            };
            if c == u32::from(b']') && !first {
                self.i += 1;
                break;
            }
            first = false;
            // One element: a class, an equivalence class, a collating symbol or a unit.
            let lo = if c == u32::from(b'[')
                && matches!(self.peek(1), Some(k) if k == u32::from(b':') || k == u32::from(b'=') || k == u32::from(b'.'))
            {
                let kind = self.peek(1).unwrap_or(0);
                self.i += 2;
                let start = self.i;
                loop {
                    match (self.peek(0), self.peek(1)) {
                        (Some(a), Some(b)) if a == kind && b == u32::from(b']') => break,
                        (Some(_), _) => self.i += 1,
                        (None, _) => return Err(UNMATCHED.into()),
                    }
                }
                let name: String = self.u[start..self.i]
                    .iter()
                    .filter_map(|&x| char::from_u32(x))
                    .collect();
                self.i += 2;
                if kind == u32::from(b':') {
                    let Some(cls) = class(&name) else {
                        return Err("Invalid character class name".into());
                    };
                    set.extend_from_slice(cls);
                    // A class cannot start a range.
                    if self.peek(0) == Some(u32::from(b'-'))
                        && matches!(self.peek(1), Some(k) if k != u32::from(b']'))
                    {
                        return Err("Invalid range end".into());
                    }
                    continue;
                }
                let mut chars = name.chars();
                match (chars.next(), chars.next()) {
                    (Some(ch), None) => ch as u32,
                    _ if kind == u32::from(b'.') => {
                        return Err("Invalid collation character".into());
                    }
                    _ => return Err("Invalid collation character".into()),
                }
            } else {
                self.i += 1;
                c
            };
            // A range?
            if self.peek(0) == Some(u32::from(b'-'))
                && matches!(self.peek(1), Some(k) if k != u32::from(b']'))
            {
                self.i += 1;
                let Some(mut hi) = self.peek(0) else {
                    return Err(UNMATCHED.into());
                };
                self.i += 1;
                if hi == u32::from(b'[') && self.peek(0) == Some(u32::from(b'.')) {
                    let start = self.i + 1;
                    self.i = start;
                    while !(self.peek(0) == Some(u32::from(b'.'))
                        && self.peek(1) == Some(u32::from(b']')))
                    {
                        if self.peek(0).is_none() {
                            return Err(UNMATCHED.into());
                        }
                        self.i += 1;
                    }
                    let sym = &self.u[start..self.i];
                    self.i += 2;
                    match sym {
                        [one] => hi = *one,
                        _ => return Err("Invalid collation character".into()),
                    }
                }
                if hi < lo {
                    return Err("Invalid range end".into());
                }
                set.push((lo, hi));
            } else {
                set.push((lo, lo));
            }
        }
        let set = normalize(set);
        Ok(if negate {
            complement(&set, self.max_unit())
        } else {
            set
        })
    }
}

/// The ASCII members of a POSIX character class (C locale).
fn class(name: &str) -> Option<&'static [(u32, u32)]> {
    Some(match name {
        "alpha" => &[(0x41, 0x5A), (0x61, 0x7A)],
        "digit" => &[(0x30, 0x39)],
        "alnum" => &[(0x30, 0x39), (0x41, 0x5A), (0x61, 0x7A)],
        "upper" => &[(0x41, 0x5A)],
        "lower" => &[(0x61, 0x7A)],
        "space" => SPACE,
        "blank" => &[(0x09, 0x09), (0x20, 0x20)],
        "punct" => &[(0x21, 0x2F), (0x3A, 0x40), (0x5B, 0x60), (0x7B, 0x7E)],
        "print" => &[(0x20, 0x7E)],
        "graph" => &[(0x21, 0x7E)],
        "cntrl" => &[(0x00, 0x1F), (0x7F, 0x7F)],
        "xdigit" => &[(0x30, 0x39), (0x41, 0x46), (0x61, 0x66)],
        _ => return None,
    })
}

/// Sorts and merges ranges.
fn normalize(mut set: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    set.sort_unstable();
    let mut out: Vec<(u32, u32)> = Vec::with_capacity(set.len());
    for (lo, hi) in set {
        match out.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => out.push((lo, hi)),
        }
    }
    out
}

fn complement(set: &[(u32, u32)], max: u32) -> Vec<(u32, u32)> {
    let set = normalize(set.to_vec());
    let mut out = Vec::new();
    let mut next = 0u32;
    for (lo, hi) in set {
        if lo > next {
            out.push((next, lo - 1));
        }
        next = hi.saturating_add(1);
    }
    if next <= max {
        out.push((next, max));
    }
    out
}

fn subtract(set: &[(u32, u32)], x: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::with_capacity(set.len() + 1);
    for &(lo, hi) in set {
        if x < lo || x > hi {
            out.push((lo, hi));
            continue;
        }
        if lo < x {
            out.push((lo, x - 1));
        }
        if x < hi {
            out.push((x + 1, hi));
        }
    }
    out
}

/// Writes one unit as a literal (outside or inside a class).
fn push_unit(out: &mut String, c: u32, target: Target, in_class: bool) {
    let ascii_plain = c < 0x80 && (c as u8).is_ascii_alphanumeric();
    if ascii_plain || (!in_class && (c == u32::from(b' ') || c == u32::from(b'_'))) {
        out.push(char::from_u32(c).unwrap_or('?'));
    } else if target == Target::Bytes {
        let _ = write!(out, "\\x{c:02X}");
    } else {
        let _ = write!(out, "\\x{{{c:X}}}");
    }
}

/// Writes a set as a class (empty sets never match).
fn emit_set(out: &mut String, set: &[(u32, u32)], target: Target) {
    if set.is_empty() {
        out.push_str("[a&&b]");
        return;
    }
    out.push('[');
    for &(lo, hi) in set {
        if target == Target::Unicode && lo <= 0xD7FF && hi >= 0xE000 {
            // Surrogates are not characters: split around them.
            emit_range(out, lo, 0xD7FF, target);
            emit_range(out, 0xE000, hi, target);
        } else if target == Target::Unicode && (0xD800..=0xDFFF).contains(&lo) {
            if hi >= 0xE000 {
                emit_range(out, 0xE000, hi, target);
            }
        } else if target == Target::Unicode && (0xD800..=0xDFFF).contains(&hi) {
            if lo < 0xD800 {
                emit_range(out, lo, 0xD7FF, target);
            }
        } else {
            emit_range(out, lo, hi, target);
        }
    }
    out.push(']');
}

fn emit_range(out: &mut String, lo: u32, hi: u32, target: Target) {
    push_unit(out, lo, target, true);
    if hi > lo {
        out.push('-');
        push_unit(out, hi, target, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bre(p: &str) -> regex::Regex {
        regex::Regex::new(&translate(p, Dialect::Basic).unwrap()).unwrap()
    }

    fn ere(p: &str) -> regex::Regex {
        regex::Regex::new(&translate(p, Dialect::Extended).unwrap()).unwrap()
    }

    fn bytes(p: &str, d: Dialect) -> regex::bytes::Regex {
        let mut o = Options::new(d);
        o.target = Target::Bytes;
        regex::bytes::Regex::new(&translate_with(p, &o).unwrap().pattern).unwrap()
    }

    fn found<'h>(r: &regex::Regex, h: &'h str) -> Option<&'h str> {
        r.find(h).map(|m| m.as_str())
    }

    #[test]
    fn bre_operators() {
        assert_eq!(found(&bre(r"\(ab\)\{2\}"), "xababy"), Some("abab"));
        assert_eq!(found(&bre(r"a\|b"), "xb"), Some("b"));
        assert_eq!(found(&bre(r"a\+"), "baaa"), Some("aaa"));
        assert_eq!(found(&bre(r"ba\?"), "bb"), Some("b"));
        assert_eq!(found(&bre("a+?"), "a+?"), Some("a+?"));
        assert_eq!(found(&bre("a{1}"), "a{1}"), Some("a{1}"));
        assert_eq!(found(&bre(r"a\{,2\}x"), "aaax"), Some("aax"));
        assert_eq!(found(&bre(r"a\{2,\}"), "aaaa"), Some("aaaa"));
        assert_eq!(found(&bre("(a|b)"), "(a|b)"), Some("(a|b)"));
    }

    #[test]
    fn bre_star_and_anchors() {
        assert_eq!(found(&bre("*a"), "x*a"), Some("*a"));
        assert_eq!(found(&bre("^*a"), "*a"), Some("*a"));
        assert_eq!(found(&bre("^*a"), "x*a"), None);
        assert_eq!(found(&bre(r"\(*a\)"), "*a"), Some("*a"));
        assert_eq!(found(&bre("a^b"), "a^b"), Some("a^b"));
        assert_eq!(found(&bre("a$b"), "a$b"), Some("a$b"));
        assert_eq!(found(&bre(r"\(^a\)"), "ab"), Some("a"));
        assert_eq!(found(&bre(r"x\|^a"), "ab"), Some("a"));
        assert_eq!(found(&bre(r"a$\|x"), "ba"), Some("a"));
        assert_eq!(found(&bre("a$"), "ab"), None);
        assert_eq!(found(&bre(r"\{1\}"), "{1}"), Some("{1}"));
    }

    #[test]
    fn ere_operators() {
        assert_eq!(found(&ere("(ab){2}"), "xababy"), Some("abab"));
        assert_eq!(found(&ere("a{1"), "a{1"), Some("a{1"));
        assert_eq!(found(&ere("a{1,x}"), "a{1,x}"), Some("a{1,x}"));
        assert_eq!(found(&ere("a{2}{2}"), "aaaaa"), Some("aaaa"));
        assert_eq!(found(&ere("a+?"), "aaa"), Some("aaa"));
        assert_eq!(found(&ere("*b"), "ab"), Some("b"));
        assert_eq!(found(&ere("a)"), "a)"), Some("a)"));
        assert_eq!(found(&ere(r"\(a\)"), "(a)"), Some("(a)"));
        assert_eq!(found(&ere("a|+b"), "b"), Some("b"));
        assert_eq!(found(&ere("a^b"), "a^b"), None);
        assert_eq!(found(&ere("^*a"), "ba"), Some("a"));
        assert_eq!(found(&ere("^a"), "ba"), None);
        assert_eq!(found(&ere("(|a)b"), "ab"), Some("ab"));
    }

    #[test]
    fn brackets() {
        assert_eq!(found(&bre("[]a]*"), "]a]b"), Some("]a]"));
        assert_eq!(found(&bre("[^]a]"), "a]b"), Some("b"));
        assert_eq!(found(&bre(r"[\]"), r"a\b"), Some("\\"));
        assert_eq!(found(&bre("[[:alpha:]]*"), "abC1"), Some("abC"));
        assert_eq!(found(&bre("[[:digit:][:space:]]*"), "1 2a"), Some("1 2"));
        assert_eq!(found(&bre("[a-]*"), "a-a-b"), Some("a-a-"));
        assert_eq!(found(&bre("[[.-.]]"), "x-"), Some("-"));
        assert_eq!(found(&bre("[[=a=]]"), "ba"), Some("a"));
        assert_eq!(found(&bre("[.^$*]*"), ".^$*x"), Some(".^$*"));
        assert_eq!(found(&bre("[^a]"), "a\n"), Some("\n"));
        assert_eq!(
            translate("[[:alpha:]-z]", Dialect::Basic).unwrap_err(),
            "Invalid range end"
        );
        assert_eq!(found(&bre("[[:digit:]-]*"), "1-2x"), Some("1-2"));
        assert_eq!(
            translate("[b-a]", Dialect::Basic).unwrap_err(),
            "Invalid range end"
        );
        assert_eq!(
            translate("[[:foo:]]", Dialect::Basic).unwrap_err(),
            "Invalid character class name"
        );
        assert!(
            translate("[a", Dialect::Basic)
                .unwrap_err()
                .starts_with("Unmatched [")
        );
        assert!(translate("[", Dialect::Extended).is_err());
    }

    #[test]
    fn gnu_escapes() {
        assert_eq!(found(&bre(r"\<a"), "ba a"), Some("a"));
        assert_eq!(bre(r"\<a").find("ba a").map(|m| m.start()), Some(3));
        assert_eq!(bre(r"a\>").find("ab a").map(|m| m.start()), Some(3));
        assert_eq!(bre(r"\ba").find("ba a").map(|m| m.start()), Some(3));
        assert_eq!(bre(r"\Ba").find("ba a").map(|m| m.start()), Some(1));
        assert_eq!(found(&bre(r"\w*"), "ab_1-"), Some("ab_1"));
        assert_eq!(found(&bre(r"\W"), "ab-"), Some("-"));
        assert_eq!(found(&bre(r"\s\S"), "a b"), Some(" b"));
        assert_eq!(found(&bre(r"\`a"), "aa"), Some("a"));
        assert_eq!(found(&bre(r"a\'"), "ab"), None);
        assert_eq!(found(&bre(r"a\.b"), "axb a.b"), Some("a.b"));
        assert_eq!(found(&bre(r"\y"), "y"), Some("y"));
    }

    #[test]
    fn regex_specials_are_literal() {
        for p in ["a#b", "a&b", "a~b", "a-b", "x]y", "a}b", "é"] {
            assert_eq!(found(&bre(p), p), Some(p), "{p}");
            assert_eq!(found(&ere(p), p), Some(p), "{p}");
        }
        assert_eq!(found(&ere(r"\{"), "{"), Some("{"));
    }

    #[test]
    fn errors() {
        assert_eq!(
            translate(r"\(a", Dialect::Basic).unwrap_err(),
            "Unmatched ( or \\("
        );
        assert_eq!(
            translate(r"a\)", Dialect::Basic).unwrap_err(),
            "Unmatched ) or \\)"
        );
        assert_eq!(
            translate("(a", Dialect::Extended).unwrap_err(),
            "Unmatched ( or \\("
        );
        assert_eq!(
            translate("a\\", Dialect::Basic).unwrap_err(),
            "Trailing backslash"
        );
        assert_eq!(
            translate(r"a\{2,1\}", Dialect::Basic).unwrap_err(),
            "Invalid content of \\{\\}"
        );
        assert_eq!(
            translate("a{2,1}", Dialect::Extended).unwrap_err(),
            "Invalid content of \\{\\}"
        );
        assert_eq!(
            translate(r"a\{1", Dialect::Basic).unwrap_err(),
            "Unmatched \\{"
        );
        assert_eq!(
            translate(r"\1", Dialect::Basic).unwrap_err(),
            "Invalid back reference"
        );
    }

    #[test]
    fn backrefs_are_flagged() {
        let t = translate_with(r"\(a\)\1", &Options::new(Dialect::Basic)).unwrap();
        assert!(t.backrefs);
        assert_eq!(t.groups, 1);
        let t = translate_with(r"(a)", &Options::new(Dialect::Extended)).unwrap();
        assert!(!t.backrefs);
    }

    #[test]
    fn byte_target() {
        let r = bytes(".", Dialect::Basic);
        assert_eq!(r.find(b"\xff").map(|m| m.len()), Some(1));
        let r = bytes("[é]", Dialect::Basic);
        assert_eq!(r.find(b"x\xa9").map(|m| m.start()), Some(1));
        let r = bytes("é", Dialect::Basic);
        assert!(r.is_match("é".as_bytes()));
        let r = bytes("[^a]", Dialect::Extended);
        assert!(r.is_match(b"\x80"));
        let mut o = Options::new(Dialect::Basic);
        o.target = Target::Bytes;
        o.icase = true;
        let r = regex::bytes::Regex::new(&translate_with("[a-c]x", &o).unwrap().pattern).unwrap();
        assert!(r.is_match(b"BX"));
    }

    #[test]
    fn record_mode() {
        let mut o = Options::new(Dialect::Basic);
        o.target = Target::Bytes;
        o.record_sep = Some(b'\n');
        let r = regex::bytes::Regex::new(&translate_with("^a.*b$", &o).unwrap().pattern).unwrap();
        assert!(!r.is_match(b"a\nb"));
        assert!(r.is_match(b"x\naxb\ny"));
        let r = regex::bytes::Regex::new(&translate_with("[^x]", &o).unwrap().pattern).unwrap();
        assert!(!r.is_match(b"\n"));
    }

    #[test]
    fn sed_escapes() {
        let mut o = Options::new(Dialect::Basic);
        o.sed_escapes = true;
        let r = regex::Regex::new(&translate_with(r"a\nb\t\x41", &o).unwrap().pattern).unwrap();
        assert!(r.is_match("a\nb\tA"));
        let r = regex::Regex::new(&translate_with(r"\x5e", &o).unwrap().pattern).unwrap();
        assert!(r.is_match("^"));
    }

    #[test]
    fn multiline_flag() {
        let mut o = Options::new(Dialect::Basic);
        o.multiline = true;
        let r = regex::Regex::new(&translate_with("^b$", &o).unwrap().pattern).unwrap();
        assert!(r.is_match("a\nb\nc"));
        let r = regex::Regex::new(&translate_with(r"\`b", &o).unwrap().pattern).unwrap();
        assert!(!r.is_match("a\nb"));
    }
}
