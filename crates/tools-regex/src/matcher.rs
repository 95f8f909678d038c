//! A compiled POSIX pattern with GNU match semantics: leftmost-longest overall
//! match, C-locale byte semantics, and a back-tracking fallback for patterns with
//! back-references.
//!
//! The fast engine pairs a leftmost-first `regex::bytes::Regex` (which finds where
//! the leftmost match starts: leftmost-first and leftmost-longest agree on that)
//! with a `regex_automata` meta regex in `MatchKind::All` mode, which, anchored at
//! that start, reports the longest match and its groups. Patterns with
//! back-references run on `fancy_regex` over the haystack decoded as Latin-1, so
//! every byte is one character and C-locale semantics survive a `&str` engine.

use regex_automata::util::syntax;
use regex_automata::{Anchored, Input, MatchKind, meta};
use safesh_utils::posix_regex::{self, Dialect, Options, Target};

/// How the pattern text is to be read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Syntax {
    /// POSIX basic.
    Basic,
    /// POSIX extended.
    Extended,
    /// A fixed string (`grep -F`).
    Fixed,
}

/// Compilation settings.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Pattern syntax.
    pub syntax: Syntax,
    /// Ignore case.
    pub icase: bool,
    /// Whole-buffer search over records ended by this byte (grep).
    pub record_sep: Option<u8>,
    /// sed's `M` flag.
    pub multiline: bool,
    /// sed's character escapes in the pattern.
    pub sed_escapes: bool,
    /// grep -w: the match must be preceded and followed by non-word characters.
    pub word: bool,
    /// grep -x: the match must be a whole record.
    pub line: bool,
}

impl Config {
    /// Settings for `syntax` with everything else off.
    pub fn new(syntax: Syntax) -> Config {
        Config {
            syntax,
            icase: false,
            record_sep: None,
            multiline: false,
            sed_escapes: false,
            word: false,
            line: false,
        }
    }
}

enum Engine {
    Fast {
        first: regex::bytes::Regex,
        all: meta::Regex,
    },
    Fancy(Box<fancy_regex::Regex>),
}

/// A compiled pattern.
pub struct Matcher {
    engine: Engine,
    groups: usize,
}

/// Capture spans (group 0 first), reused between searches.
pub type Spans = Vec<Option<(usize, usize)>>;

const SIZE_LIMIT: usize = 256 << 20;

impl Matcher {
    /// Compiles one pattern (or, for grep, several joined by newlines into alternatives).
    pub fn new(patterns: &[&str], cfg: &Config) -> Result<Matcher, String> {
        let mut parts = Vec::with_capacity(patterns.len());
        let mut backrefs = false;
        let mut groups = 0;
        for p in patterns {
            let t = translate_one(p, cfg, Target::Bytes)?;
            backrefs |= t.backrefs;
            groups += t.groups;
            parts.push(t.pattern);
        }
        if backrefs {
            // Groups of later patterns would be renumbered by joining, so only a
            // single pattern can use the fallback; joined ones get the same treatment
            // each with their own numbering via alternation (rare).
            // Each pattern's `\N` names its own groups: shift them past the
            // groups of the patterns joined before it (`-e 'a\(b\)' -e 'b\(c\)\1'`).
            let mut fparts = Vec::with_capacity(patterns.len());
            let mut before = 0;
            for p in patterns {
                let t = translate_one(p, cfg, Target::Latin1)?;
                fparts.push(shift_backrefs(&t.pattern, before));
                before += t.groups;
            }
            let joined = join(&fparts);
            let re = fancy_regex::RegexBuilder::new(&joined)
                .delegate_size_limit(SIZE_LIMIT)
                .build()
                .map_err(|e| e.to_string())?;
            return Ok(Matcher {
                engine: Engine::Fancy(Box::new(re)),
                groups,
            });
        }
        let joined = join(&parts);
        let term = cfg.record_sep.unwrap_or(b'\n');
        let first = regex::bytes::RegexBuilder::new(&joined)
            .line_terminator(term)
            .size_limit(SIZE_LIMIT)
            .dfa_size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| compile_error(&e.to_string()))?;
        let all = meta::Regex::builder()
            .configure(
                meta::Config::new()
                    .match_kind(MatchKind::All)
                    .nfa_size_limit(Some(SIZE_LIMIT)),
            )
            .syntax(syntax::Config::new().utf8(false).line_terminator(term))
            .build(&joined)
            .map_err(|e| compile_error(&e.to_string()))?;
        Ok(Matcher {
            engine: Engine::Fast { first, all },
            groups,
        })
    }

    /// Compiles Perl-style patterns (`grep -P`) with `fancy_regex`, which covers
    /// the common PCRE syntax (look-around, back-references, lazy operators).
    pub fn perl(patterns: &[&str], cfg: &Config) -> Result<Matcher, String> {
        let mut parts = Vec::with_capacity(patterns.len());
        for p in patterns {
            // Byte semantics: the pattern's bytes become Latin-1 chars, like the haystack.
            let body = latin1(p.as_bytes());
            let wrapped = if cfg.line {
                format!("^(?:{body})$")
            } else if cfg.word {
                format!("(?<![0-9A-Za-z_])(?:{body})(?![0-9A-Za-z_])")
            } else {
                body
            };
            parts.push(wrapped);
        }
        let mut joined = join(&parts);
        if cfg.icase {
            joined = format!("(?i){joined}");
        }
        let re = fancy_regex::RegexBuilder::new(&joined)
            .delegate_size_limit(SIZE_LIMIT)
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Matcher {
            engine: Engine::Fancy(Box::new(re)),
            groups: 0,
        })
    }

    /// Number of capture groups (not counting the whole match).
    pub fn groups(&self) -> usize {
        self.groups
    }

    /// True when the fast (whole-buffer) engine is in use.
    pub fn is_fast(&self) -> bool {
        matches!(self.engine, Engine::Fast { .. })
    }

    /// True if the pattern matches somewhere in `hay`.
    pub fn is_match(&self, hay: &[u8]) -> bool {
        match &self.engine {
            Engine::Fast { first, .. } => first.is_match(hay),
            Engine::Fancy(re) => re.is_match(&latin1(hay)).unwrap_or(false),
        }
    }

    /// Where the leftmost match at or after `start` begins and ends (any match
    /// length; cheaper than [`Matcher::find_at`]).
    pub fn find_first_at(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        match &self.engine {
            Engine::Fast { first, .. } => first.find_at(hay, start).map(|m| (m.start(), m.end())),
            Engine::Fancy(_) => self.find_at(hay, start),
        }
    }

    /// The leftmost-longest match at or after `start`.
    pub fn find_at(&self, hay: &[u8], start: usize) -> Option<(usize, usize)> {
        match &self.engine {
            Engine::Fast { first, all } => {
                let m = first.find_at(hay, start)?;
                let input = Input::new(hay).range(m.start()..).anchored(Anchored::Yes);
                let end = all.search(&input).map_or(m.end(), |l| l.end().max(m.end()));
                Some((m.start(), end))
            }
            Engine::Fancy(re) => {
                let s = latin1(hay);
                let pos = to_utf8_offset(hay, start);
                let m = re.find_from_pos(&s, pos).ok()??;
                Some((
                    from_utf8_offset(&s, m.start()),
                    from_utf8_offset(&s, m.end()),
                ))
            }
        }
    }

    /// The leftmost-longest match at or after `start` with its groups, into `spans`.
    pub fn captures_at(&self, hay: &[u8], start: usize, spans: &mut Spans) -> bool {
        spans.clear();
        match &self.engine {
            Engine::Fast { first, all } => {
                let Some(m) = first.find_at(hay, start) else {
                    return false;
                };
                let input = Input::new(hay).range(m.start()..).anchored(Anchored::Yes);
                let mut caps = all.create_captures();
                all.search_captures(&input, &mut caps);
                if caps.is_match() {
                    for i in 0..caps.group_len() {
                        spans.push(caps.get_group(i).map(|s| (s.start, s.end)));
                    }
                } else {
                    spans.push(Some((m.start(), m.end())));
                }
                true
            }
            Engine::Fancy(re) => {
                let s = latin1(hay);
                let pos = to_utf8_offset(hay, start);
                let Ok(Some(c)) = re.captures_from_pos(&s, pos) else {
                    return false;
                };
                for i in 0..c.len() {
                    spans.push(c.get(i).map(|g| {
                        (
                            from_utf8_offset(&s, g.start()),
                            from_utf8_offset(&s, g.end()),
                        )
                    }));
                }
                true
            }
        }
    }
}

/// Adds `by` to every back-reference (`\N`) of a translated pattern.
fn shift_backrefs(pattern: &str, by: usize) -> String {
    if by == 0 {
        return pattern.to_string();
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some(d @ '1'..='9') => {
                chars.next();
                let n = d as usize - '0' as usize + by;
                out.push_str(&format!("\\k<{n}>"));
            }
            Some(other) => {
                chars.next();
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn join(parts: &[String]) -> String {
    if parts.len() == 1 {
        return parts.first().cloned().unwrap_or_default();
    }
    let mut s = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            s.push('|');
        }
        s.push_str("(?:");
        s.push_str(p);
        s.push(')');
    }
    s
}

fn translate_one(p: &str, cfg: &Config, target: Target) -> Result<posix_regex::Translated, String> {
    let mut t = match cfg.syntax {
        Syntax::Fixed => {
            let mut body = String::new();
            for b in p.bytes() {
                if b.is_ascii_alphanumeric() {
                    body.push(b as char);
                } else if target == Target::Bytes {
                    body.push_str(&format!("\\x{b:02X}"));
                } else {
                    body.push_str(&format!("\\x{{{b:X}}}"));
                }
            }
            let prefix = match (cfg.icase, target) {
                (true, Target::Bytes) => "(?i-u)",
                (false, Target::Bytes) => "(?-u)",
                (true, _) => "(?i)",
                (false, _) => "",
            };
            posix_regex::Translated {
                pattern: format!("{prefix}{body}"),
                backrefs: false,
                groups: 0,
            }
        }
        Syntax::Basic | Syntax::Extended => {
            let mut o = Options::new(if cfg.syntax == Syntax::Basic {
                Dialect::Basic
            } else {
                Dialect::Extended
            });
            o.icase = cfg.icase;
            o.target = target;
            o.record_sep = cfg.record_sep;
            o.multiline = cfg.multiline;
            o.sed_escapes = cfg.sed_escapes;
            posix_regex::translate_with(p, &o)?
        }
    };
    // Flags must stay in front; wrap the body only.
    let (flags, body) = split_flags(&t.pattern);
    let wrapped = if cfg.line {
        let (a, z) = if cfg.record_sep.is_some() {
            ("(?m:^)", "(?m:$)")
        } else {
            ("^", "$")
        };
        Some(format!("{flags}{a}(?:{body}){z}"))
    } else if cfg.word {
        if target == Target::Latin1 {
            Some(format!(
                "{flags}(?<![0-9A-Za-z_])(?:{body})(?![0-9A-Za-z_])"
            ))
        } else {
            Some(format!(
                "{flags}(?-u:\\b{{start-half}})(?:{body})(?-u:\\b{{end-half}})"
            ))
        }
    } else {
        None
    };
    if let Some(w) = wrapped {
        t.pattern = w;
    }
    Ok(t)
}

/// Splits a leading `(?flags)` group from a translated pattern.
fn split_flags(p: &str) -> (&str, &str) {
    for f in ["(?i-u)", "(?-u)", "(?i)"] {
        if let Some(rest) = p.strip_prefix(f) {
            return (f, rest);
        }
    }
    ("", p)
}

fn compile_error(msg: &str) -> String {
    if msg.contains("exceeds size limit") {
        "regular expression too big".into()
    } else {
        msg.lines().last().unwrap_or(msg).trim().to_string()
    }
}

/// Decodes bytes as Latin-1 (each byte one char).
fn latin1(hay: &[u8]) -> String {
    hay.iter().map(|&b| b as char).collect()
}

fn to_utf8_offset(hay: &[u8], i: usize) -> usize {
    let i = i.min(hay.len());
    i + hay
        .get(..i)
        .map_or(0, |h| h.iter().filter(|&&b| b >= 0x80).count())
}

fn from_utf8_offset(s: &str, i: usize) -> usize {
    s.get(..i).map_or(0, |p| p.chars().count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, syn: Syntax) -> Matcher {
        Matcher::new(&[p], &Config::new(syn)).unwrap()
    }

    #[test]
    fn leftmost_longest() {
        assert_eq!(
            m("a|ab", Syntax::Extended).find_at(b"xabcd", 0),
            Some((1, 3))
        );
        assert_eq!(m("a*", Syntax::Basic).find_at(b"baaa", 0), Some((0, 0)));
        assert_eq!(
            m("a*(ab)?b", Syntax::Extended).find_at(b"aabb", 0),
            Some((0, 4))
        );
    }

    #[test]
    fn backrefs_fallback() {
        let r = m(r"\(.\)\1", Syntax::Basic);
        assert!(!r.is_fast());
        assert_eq!(r.find_at("xé\u{e9}yy".as_bytes(), 0), Some((5, 7)));
        let mut sp = Vec::new();
        assert!(r.captures_at(b"abba", 0, &mut sp));
        assert_eq!(sp, vec![Some((1, 3)), Some((1, 2))]);
    }

    #[test]
    fn word_and_line() {
        let mut c = Config::new(Syntax::Basic);
        c.word = true;
        let r = Matcher::new(&["foo"], &c).unwrap();
        assert!(!r.is_match(b"foobar"));
        assert!(r.is_match(b"a foo."));
        c.word = false;
        c.line = true;
        let r = Matcher::new(&["foo", "bar"], &c).unwrap();
        assert!(r.is_match(b"bar"));
        assert!(!r.is_match(b"bar "));
    }
}
