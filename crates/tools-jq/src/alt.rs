//! Destructuring alternatives (`E as P1 ?// P2 ?// P3 | BODY`, jq 1.6), which
//! jaq's grammar lacks, rewritten before compiling into what they mean:
//!
//! ```text
//! E as $__altN | null as $v1 | … | null as $vK
//!   | try ($__altN as P1 | BODY) catch (try ($__altN as P2 | BODY) catch ($__altN as P3 | BODY))
//! ```
//!
//! Every variable of every pattern is bound (null unless its pattern binds it);
//! an error while binding a pattern or running the body with it moves on to
//! the next alternative, and the last alternative's error is the result. The
//! rewrite works on tokens (strings, interpolations and comments are skipped
//! whole), so `?//` inside a string is left alone.

/// How many `?//` groups one program may have (each rewrite copies its body).
const MAX_GROUPS: usize = 32;

/// The rewritten program, or `None` when it has no `?//` (or one this cannot
/// place, which then fails to compile as before).
pub fn rewrite(code: &str) -> Option<String> {
    let mut text = code.to_string();
    let mut changed = false;
    for n in 0..MAX_GROUPS {
        let toks = tokens(&text)?;
        let Some(q) = toks.iter().position(|t| t.kind == Kind::AltOp) else {
            return changed.then_some(text);
        };
        text = rewrite_at(&text, &toks, q, n)?;
        changed = true;
    }
    None
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Kind {
    /// `?//`
    AltOp,
    /// A word: keyword or name.
    Word,
    /// `$name`
    Var,
    /// A string literal (with any interpolations), a number, other punctuation.
    Other,
    Open,
    Close,
    Pipe,
    Semi,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Tok {
    pub(crate) kind: Kind,
    pub(crate) start: usize,
    pub(crate) end: usize,
}

/// Two spellings of jq 1.6 that jaq's grammar lacks, rewritten on tokens:
/// a number literal that starts with a dot (`.5` becomes `0.5`), and an
/// object pattern entry `$name: pattern` (bind `$name` to `.name` and
/// destructure it), which becomes `$name, "name": pattern`. `None` when
/// there is neither.
pub(crate) fn lexical(s: &str) -> Option<String> {
    let toks = tokens(s)?;
    let b = s.as_bytes();
    let mut out = String::new();
    let mut last = 0;
    // Depths at which a pattern (after `as` or `?//`) is open.
    let mut patterns: Vec<i32> = Vec::new();
    let mut depth = 0i32;
    for (k, t) in toks.iter().enumerate() {
        let text = word(s, t);
        match t.kind {
            Kind::Open => depth += 1,
            Kind::Close => {
                depth -= 1;
                while patterns.last().is_some_and(|&d| d > depth) {
                    patterns.pop();
                }
            }
            Kind::Word if text == "as" => patterns.push(depth),
            Kind::AltOp => patterns.push(depth),
            Kind::Pipe => {
                while patterns.last().is_some_and(|&d| d >= depth) {
                    patterns.pop();
                }
            }
            _ => {}
        }
        let prev_joins = k > 0 && toks[k - 1].end == t.start && {
            let p = toks[k - 1];
            matches!(p.kind, Kind::Word | Kind::Var | Kind::Close)
                || b[p.end - 1].is_ascii_alphanumeric()
                || matches!(b[p.end - 1], b'.' | b'"' | b'_')
        };
        if t.kind == Kind::Other
            && text == "."
            && b.get(t.end).is_some_and(u8::is_ascii_digit)
            && !prev_joins
        {
            out.push_str(&s[last..t.start]);
            out.push('0');
            last = t.start;
        }
        // The lexer keeps a `:` right after a variable name in its token
        // (for `$d::d`): `$b:` and `$b :` are both an entry with a pattern.
        let (name, glued) = match text.strip_suffix(':') {
            Some(n) if !n.ends_with(':') => (n, true),
            _ => (text, false),
        };
        if !patterns.is_empty()
            && t.kind == Kind::Var
            && (glued || toks.get(k + 1).is_some_and(|n| word(s, n) == ":"))
            && k > 0
            && matches!(word(s, &toks[k - 1]), "{" | ",")
        {
            let at = t.start + name.len();
            out.push_str(&s[last..at]);
            out.push_str(&format!(", \"{}\"", &name[1..]));
            last = at;
        }
    }
    (last > 0).then(|| {
        out.push_str(&s[last..]);
        out
    })
}

/// The tokens of `s` (strings, interpolations and comments whole).
pub(crate) fn tokens(s: &str) -> Option<Vec<Tok>> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        let kind = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' => {
                i = string_end(b, i)?;
                Kind::Other
            }
            b'?' if b[i..].starts_with(b"?//") => {
                i += 3;
                Kind::AltOp
            }
            b'$' => {
                i += 1;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b':')
                {
                    i += 1;
                }
                Kind::Var
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b':')
                {
                    i += 1;
                }
                Kind::Word
            }
            b'(' | b'[' | b'{' => {
                i += 1;
                Kind::Open
            }
            b')' | b']' | b'}' => {
                i += 1;
                Kind::Close
            }
            b'|' if b.get(i + 1) != Some(&b'=') => {
                i += 1;
                Kind::Pipe
            }
            b';' => {
                i += 1;
                Kind::Semi
            }
            _ => {
                // One character of anything else (operators, digits, `.`).
                i += s[i..].chars().next().map_or(1, char::len_utf8);
                Kind::Other
            }
        };
        out.push(Tok {
            kind,
            start,
            end: i,
        });
    }
    Some(out)
}

/// The index just past the string literal starting at `b[i] == '"'`,
/// interpolations (`\( … )`, which may hold strings) included.
fn string_end(b: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    while i < b.len() {
        match b[i] {
            b'"' => return Some(i + 1),
            b'\\' if b.get(i + 1) == Some(&b'(') => {
                i += 2;
                let mut depth = 1usize;
                while depth > 0 {
                    match *b.get(i)? {
                        b'"' => i = string_end(b, i)?,
                        b'(' => {
                            depth += 1;
                            i += 1;
                        }
                        b')' => {
                            depth -= 1;
                            i += 1;
                        }
                        _ => i += 1,
                    }
                }
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    None
}

fn word<'a>(s: &'a str, t: &Tok) -> &'a str {
    &s[t.start..t.end]
}

fn rewrite_at(s: &str, toks: &[Tok], q: usize, n: usize) -> Option<String> {
    // Back from the first `?//` to the `as` that starts the first pattern.
    let mut depth = 0i32;
    let mut k = q;
    let as_idx = loop {
        k = k.checked_sub(1)?;
        let t = &toks[k];
        match t.kind {
            Kind::Close => depth += 1,
            Kind::Open => depth -= 1,
            Kind::Word if depth == 0 && word(s, t) == "as" => break k,
            Kind::Pipe | Kind::Semi | Kind::AltOp if depth == 0 => return None,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    };
    // The patterns: `?//`-separated, up to the `|` at depth 0.
    let mut pats: Vec<(usize, usize)> = Vec::new();
    let mut from = as_idx + 1;
    let mut depth = 0i32;
    let mut k = as_idx + 1;
    let pipe = loop {
        let t = toks.get(k)?;
        match t.kind {
            Kind::Open => depth += 1,
            Kind::Close => depth -= 1,
            Kind::AltOp if depth == 0 => {
                pats.push((from, k));
                from = k + 1;
            }
            Kind::Pipe if depth == 0 => {
                pats.push((from, k));
                break k;
            }
            Kind::Semi if depth == 0 => return None,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
        k += 1;
    };
    if pats.len() < 2 || pats.iter().any(|(a, b)| a >= b) {
        return None;
    }
    // The body: to the end of the enclosing term.
    let body_start = pipe + 1;
    let mut depth = 0i32;
    let mut defs = 0usize;
    let mut tries = 0usize;
    let mut k = body_start;
    let body_end = loop {
        let Some(t) = toks.get(k) else {
            break toks.len();
        };
        let w = if t.kind == Kind::Word { word(s, t) } else { "" };
        match t.kind {
            Kind::Open => depth += 1,
            Kind::Close if depth == 0 => break k,
            Kind::Close => depth -= 1,
            Kind::Semi if depth == 0 && defs == 0 => break k,
            Kind::Semi if depth == 0 => defs -= 1,
            Kind::Word if w == "def" && depth == 0 => defs += 1,
            Kind::Word if w == "if" => depth += 1,
            Kind::Word if w == "end" && depth == 0 => break k,
            Kind::Word if w == "end" => depth -= 1,
            Kind::Word if w == "try" => tries += 1,
            Kind::Word if w == "catch" && tries > 0 => tries -= 1,
            Kind::Word if depth == 0 && matches!(w, "then" | "elif" | "else" | "catch") => {
                break k;
            }
            _ => {}
        }
        k += 1;
    };
    let span = |a: usize, b: usize| -> &str {
        if a >= b {
            return "";
        }
        &s[toks[a].start..toks[b - 1].end]
    };
    let body = span(body_start, body_end);
    // Variables bound anywhere in the patterns (not those used inside `(…)` keys).
    let mut vars: Vec<&str> = Vec::new();
    for &(a, b) in &pats {
        let mut paren = 0i32;
        for t in &toks[a..b] {
            match t.kind {
                Kind::Open if word(s, t) == "(" => paren += 1,
                Kind::Close if word(s, t) == ")" => paren -= 1,
                Kind::Var if paren == 0 => {
                    let v = word(s, t);
                    if !vars.contains(&v) {
                        vars.push(v);
                    }
                }
                _ => {}
            }
        }
    }
    let alt = format!("$__alt{n}");
    let mut chain = String::new();
    let last = pats.len() - 1;
    for (i, &(a, b)) in pats.iter().enumerate() {
        let arm = format!("({alt} as {} | {body})", span(a, b));
        if i == last {
            chain.push_str(&arm);
        } else {
            chain.push_str(&format!("try {arm} catch ("));
        }
    }
    chain.push_str(&")".repeat(last));
    let nulls: String = vars.iter().map(|v| format!("null as {v} | ")).collect();
    let head = &s[..toks[as_idx].start];
    let tail = match toks.get(body_end) {
        Some(t) => &s[t.start..],
        None => "",
    };
    Some(format!("{head}as {alt} | {nulls}{chain} {tail}"))
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn rewrites_alternatives_only() {
        assert_eq!(rewrite(". as [$a] | $a"), None);
        assert_eq!(rewrite("\"?//\" | ."), None);
        let r = rewrite(".[] as [$a] ?// $a | $a").unwrap_or_default();
        assert!(
            r.contains("try ($__alt0 as [$a] | $a) catch (($__alt0 as $a | $a))"),
            "{r}"
        );
        let r = rewrite("[.[] as {a: $x} ?// [$x, $y] | [$x, $y]], 1").unwrap_or_default();
        assert!(r.contains("null as $x | null as $y"), "{r}");
        assert!(r.ends_with("] , 1") || r.ends_with("], 1"), "{r}");
    }
}
