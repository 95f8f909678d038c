//! Awk regular expressions: POSIX ERE translated for the `regex` crate, with
//! POSIX leftmost-longest match extents where alternation could make them differ.

use regex::bytes::Regex;
use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::{Anchored, Input, MatchKind};
use safesh_utils::posix_regex;
use std::cell::RefCell;
use std::ops::Range;

/// A compiled awk regex.
pub struct AwkRegex {
    re: Regex,
    /// A longest-match DFA, only for patterns where leftmost-first may be shorter.
    longest: Option<(DFA, RefCell<Cache>)>,
    /// A plain literal pattern is searched with memmem (the common `/foo/` case).
    literal: Option<memchr::memmem::Finder<'static>>,
}

impl std::fmt::Debug for AwkRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AwkRegex({})", self.re.as_str())
    }
}

impl AwkRegex {
    /// Compiles an awk (POSIX ERE) pattern.
    pub fn new(pat: &[u8]) -> Result<AwkRegex, String> {
        let tr = translate(pat)?;
        let build = |unicode: bool| {
            regex::bytes::RegexBuilder::new(&tr)
                .unicode(unicode)
                .dot_matches_new_line(true)
                .size_limit(1 << 24)
                .build()
        };
        let (re, unicode) = match build(false) {
            Ok(r) => (r, false),
            Err(_) => (
                build(true).map_err(|e| format!("regular expression compile failed ({e})"))?,
                true,
            ),
        };
        let longest = if tr.contains('|') {
            DFA::builder()
                .configure(DFA::config().match_kind(MatchKind::All))
                .syntax(
                    regex_automata::util::syntax::Config::new()
                        .unicode(unicode)
                        .utf8(false)
                        .dot_matches_new_line(true),
                )
                .thompson(regex_automata::nfa::thompson::Config::new().utf8(false))
                .build(&tr)
                .ok()
                .map(|d| {
                    let c = d.create_cache();
                    (d, RefCell::new(c))
                })
        } else {
            None
        };
        let is_literal = !pat.is_empty() && !pat.iter().any(|b| b"\\^$.[]|()*+?{}".contains(b));
        let literal = is_literal.then(|| memchr::memmem::Finder::new(pat).into_owned());
        Ok(AwkRegex {
            re,
            longest,
            literal,
        })
    }

    /// True if the regex matches anywhere in `h`.
    pub fn is_match(&self, h: &[u8]) -> bool {
        match &self.literal {
            Some(f) => f.find(h).is_some(),
            None => self.re.is_match(h),
        }
    }

    /// The leftmost-longest match starting the search at `pos` (anchors still
    /// refer to the start of `h`).
    pub fn find_at(&self, h: &[u8], pos: usize) -> Option<Range<usize>> {
        if let Some(f) = &self.literal {
            let start = pos + f.find(h.get(pos..)?)?;
            return Some(start..start + f.needle().len());
        }
        let m = self.re.find_at(h, pos)?;
        let mut r = m.range();
        if let Some((dfa, cache)) = &self.longest
            && let Ok(mut cache) = cache.try_borrow_mut()
        {
            let input = Input::new(h).range(r.start..).anchored(Anchored::Yes);
            if let Ok(Some(hm)) = dfa.try_search_fwd(&mut cache, &input)
                && hm.offset() > r.end
            {
                r.end = hm.offset();
            }
        }
        Some(r)
    }

    /// Non-empty matches from `pos` on, left to right (for splitting).
    pub fn next_nonempty(&self, h: &[u8], mut pos: usize) -> Option<Range<usize>> {
        while pos <= h.len() {
            let r = self.find_at(h, pos)?;
            if r.end > r.start {
                return Some(r);
            }
            pos = r.start + 1;
        }
        None
    }
}

/// Rewrites awk regex syntax (escapes, literal braces) then translates POSIX ERE.
fn translate(pat: &[u8]) -> Result<String, String> {
    let mut p = Vec::with_capacity(pat.len() + 8);
    let mut i = 0;
    let mut in_bracket = false;
    while i < pat.len() {
        let c = pat[i];
        if in_bracket {
            if c == b']' && !(p.last() == Some(&b'[') || p.ends_with(b"[^")) {
                in_bracket = false;
            }
            if c == b'['
                && pat.get(i + 1) == Some(&b':')
                && let Some(end) = pat[i + 2..].windows(2).position(|w| w == b":]")
            {
                p.extend_from_slice(&pat[i..i + 2 + end + 2]);
                i += 2 + end + 2;
                continue;
            }
            if c == b'\\' && i + 1 < pat.len() {
                push_escape(&mut p, pat, &mut i, true);
                continue;
            }
            p.push(c);
            i += 1;
            continue;
        }
        // mawk rejects operators with a missing operand (`*a`, `a||b`, `()`).
        let last_op = |ops: &[u8]| match p.last() {
            None => ops.contains(&0),
            Some(l) => ops.contains(l) && !(p.len() >= 2 && p[p.len() - 2] == b'\\'),
        };
        let missing = match c {
            b'*' | b'+' | b'?' => last_op(&[0, b'(', b'|']),
            b'|' => last_op(&[0, b'(', b'|']),
            b')' => last_op(b"(|"),
            _ => false,
        };
        if missing {
            return Err("regular expression compile failed (missing operand)".into());
        }
        if matches!(c, b'*' | b'+') && last_op(b"^") {
            return Err("regular expression compile failed (syntax error ^* or ^+)".into());
        }
        match c {
            b'\\' if i + 1 < pat.len() => push_escape(&mut p, pat, &mut i, false),
            b'[' => {
                in_bracket = true;
                p.push(c);
                i += 1;
            }
            // mawk 1.3.4 (20200120) has no interval expressions: braces are literal.
            b'{' | b'}' => {
                p.push(b'\\');
                p.push(c);
                i += 1;
            }
            _ => {
                p.push(c);
                i += 1;
            }
        }
    }
    if p.last() == Some(&b'|') && !(p.len() >= 2 && p[p.len() - 2] == b'\\') {
        return Err("regular expression compile failed (missing operand)".into());
    }
    // Invalid UTF-8 cannot pass through the translator's &str interface (see DIFFERENCES.md).
    let text = String::from_utf8_lossy(&p).into_owned();
    let mut opts = posix_regex::Options::new(posix_regex::Dialect::Extended);
    opts.target = posix_regex::Target::Bytes;
    posix_regex::translate_with(&text, &opts).map(|t| t.pattern)
}

/// Handles `\x` inside a regex: awk escapes become (quoted) literal bytes.
fn push_escape(p: &mut Vec<u8>, pat: &[u8], i: &mut usize, in_bracket: bool) {
    let n = pat[*i + 1];
    let lit = match n {
        b'n' => Some(b'\n'),
        b't' => Some(b'\t'),
        b'r' => Some(b'\r'),
        b'f' => Some(12),
        b'v' => Some(11),
        b'a' => Some(7),
        b'b' => Some(8),
        b'/' => Some(b'/'),
        b'"' => Some(b'"'),
        b'0'..=b'7' => {
            let mut v: u32 = 0;
            let mut k = 0;
            while k < 3 && matches!(pat.get(*i + 1 + k), Some(b'0'..=b'7')) {
                v = v * 8 + (pat[*i + 1 + k] - b'0') as u32;
                k += 1;
            }
            *i += 1 + k;
            push_literal(p, v as u8, in_bracket);
            return;
        }
        _ => None,
    };
    *i += 2;
    match lit {
        Some(b) => push_literal(p, b, in_bracket),
        None => {
            if in_bracket && n == b'\\' {
                p.extend_from_slice(b"\\\\");
            } else if in_bracket {
                push_literal(p, n, true);
            } else {
                p.push(b'\\');
                p.push(n);
            }
        }
    }
}

/// Appends byte `b` so that it matches literally.
pub fn push_literal(p: &mut Vec<u8>, b: u8, in_bracket: bool) {
    if !b.is_ascii_punctuation() {
        // Letters, digits, blanks, controls and high bytes are literal as they are.
        p.push(b);
    } else {
        if in_bracket && !matches!(b, b'\\' | b']' | b'[' | b'^' | b'-') {
            p.push(b);
        } else {
            p.push(b'\\');
            p.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest() {
        let r = AwkRegex::new(b"a|aa").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.find_at(b"aaa", 0), Some(0..2));
        let r = AwkRegex::new(b"x{2}").unwrap_or_else(|e| panic!("{e}"));
        assert!(r.is_match(b"x{2}"));
    }
}
