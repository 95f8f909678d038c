//! `{{param}}` and `{{date}}` interpolation. Where a value lands decides how it
//! is written, so that it is only ever data:
//!
//! - in a **script**, every placeholder becomes ONE single-quoted shell word
//!   (`'it'\''s'`); a placeholder where quoting cannot hold (inside quotes,
//!   backquotes, a comment, after `$`, or in a script with a here-document) is an
//!   error, not a guess;
//! - in an **argument** word, the value's text stays inside that one argument (a
//!   list spreads into several arguments only when the word is the placeholder
//!   alone);
//! - in **text** (intent, output path, expected values), the plain text.

use crate::params::Params;
use serde_json::Value;

/// One `{{…}}` found in a text: byte range and the name inside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placeholder {
    pub start: usize,
    pub end: usize,
    pub name: String,
}

/// Every placeholder of `s`; an unterminated `{{` or a bad name is an error.
pub(crate) fn placeholders(s: &str) -> Result<Vec<Placeholder>, String> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = s[from..].find("{{") {
        let start = from + i;
        let Some(j) = s[start + 2..].find("}}") else {
            return Err(format!("unterminated {{{{ at byte {start}"));
        };
        let end = start + 2 + j + 2;
        let name = s[start + 2..end - 2].trim().to_string();
        if !is_name(&name) {
            return Err(format!(
                "{:?} is not a param name (letters, digits and _, not starting with a digit)",
                &s[start..end]
            ));
        }
        out.push(Placeholder { start, end, name });
        from = end;
    }
    Ok(out)
}

/// A param name: `[A-Za-z_][A-Za-z0-9_]*`.
pub(crate) fn is_name(s: &str) -> bool {
    let mut c = s.chars();
    c.next()
        .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
        && c.all(|x| x.is_ascii_alphanumeric() || x == '_')
}

/// `s` as one single-quoted shell word: `'…'`, each `'` written `'\''`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Today's date in UTC, `%Y-%m-%d`.
pub fn today_utc() -> String {
    jiff::Timestamp::now().strftime("%Y-%m-%d").to_string()
}

/// A value's text: strings as they are, lists joined with `,`, JSON otherwise.
pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(a) => a.iter().map(text_of).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

fn lookup(params: &Params, name: &str) -> Result<Value, String> {
    params
        .get(name)
        .ok_or_else(|| format!("unknown param {{{{{name}}}}} (declare it under params:)"))
}

/// Interpolates plain text.
pub(crate) fn text(s: &str, params: &Params) -> Result<String, String> {
    let mut out = String::new();
    let mut at = 0;
    for p in placeholders(s)? {
        out.push_str(&s[at..p.start]);
        out.push_str(&text_of(&lookup(params, &p.name)?));
        at = p.end;
    }
    out.push_str(&s[at..]);
    Ok(out)
}

/// Interpolates one argument word: the placeholder alone with a list value
/// spreads into one argument per element; otherwise one argument.
pub(crate) fn arg(s: &str, params: &Params) -> Result<Vec<String>, String> {
    let ps = placeholders(s)?;
    if let [p] = ps.as_slice()
        && p.start == 0
        && p.end == s.len()
        && let Value::Array(items) = lookup(params, &p.name)?
    {
        return Ok(items.iter().map(text_of).collect());
    }
    Ok(vec![text(s, params)?])
}

/// Interpolates a JSON value (object args): a string that is exactly one
/// placeholder takes the param's typed value; other strings are text.
pub(crate) fn json(v: &Value, params: &Params) -> Result<Value, String> {
    Ok(match v {
        Value::String(s) => {
            let ps = placeholders(s)?;
            match ps.as_slice() {
                [p] if p.start == 0 && p.end == s.len() => lookup(params, &p.name)?,
                _ => Value::String(text(s, params)?),
            }
        }
        Value::Array(a) => Value::Array(
            a.iter()
                .map(|x| json(x, params))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, x)| Ok((k.clone(), json(x, params)?)))
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

/// Interpolates a bash script: each placeholder becomes single-quoted words.
pub(crate) fn script(s: &str, params: &Params) -> Result<String, String> {
    let ps = placeholders(s)?;
    if ps.is_empty() {
        return Ok(s.to_string());
    }
    let contexts = contexts(s);
    let mut out = String::new();
    let mut at = 0;
    for p in ps {
        if let Some(why) = contexts.refusal_at(p.start) {
            return Err(format!(
                "{{{{{}}}}} {why}: a value is substituted as one single-quoted word, so write the placeholder unquoted where a word may stand (e.g. printf '%s\\n' {{{{{}}}}})",
                p.name, p.name
            ));
        }
        out.push_str(&s[at..p.start]);
        match lookup(params, &p.name)? {
            Value::Array(items) => {
                let words: Vec<String> = items.iter().map(|x| shell_quote(&text_of(x))).collect();
                out.push_str(&if words.is_empty() {
                    "''".to_string()
                } else {
                    words.join(" ")
                });
            }
            v => out.push_str(&shell_quote(&text_of(&v))),
        }
        at = p.end;
    }
    out.push_str(&s[at..]);
    Ok(out)
}

/// Where in a script quoting by single quotes would not hold.
struct Contexts {
    /// (start, end, why) byte ranges.
    bad: Vec<(usize, usize, &'static str)>,
    /// From here on, a here-document may be open.
    heredoc_from: Option<usize>,
    /// Bytes preceded directly by `$`.
    dollar_before: Vec<usize>,
}

impl Contexts {
    fn refusal_at(&self, at: usize) -> Option<&'static str> {
        if let Some((_, _, why)) = self.bad.iter().find(|(s, e, _)| *s <= at && at < *e) {
            return Some(why);
        }
        if self.heredoc_from.is_some_and(|h| at >= h) {
            return Some("follows a here-document (its body is not parsed as words)");
        }
        if self.dollar_before.contains(&at) {
            return Some("follows `$` (it would be read as $'…' with escapes)");
        }
        None
    }
}

/// A small bash lexer: quotes, backquotes, comments, `$`, here-documents.
fn contexts(s: &str) -> Contexts {
    let b = s.as_bytes();
    let mut bad = Vec::new();
    let mut heredoc_from = None;
    let mut dollar_before = Vec::new();
    let mut i = 0;
    // Whether the previous byte ends a word (a `#` then starts a comment).
    let mut word_start = true;
    while i < b.len() {
        let c = b[i];
        match c {
            b'\\' => {
                i += 2;
                word_start = false;
                continue;
            }
            b'\'' => {
                let end = find_from(b, i + 1, |x| x == b'\'').map_or(b.len(), |e| e + 1);
                bad.push((i, end, "is inside single quotes"));
                i = end;
                word_start = false;
                continue;
            }
            b'"' => {
                let end = closing_double(b, i + 1);
                bad.push((i, end, "is inside double quotes"));
                i = end;
                word_start = false;
                continue;
            }
            b'`' => {
                let end = find_escaped(b, i + 1, b'`');
                bad.push((i, end, "is inside backquotes"));
                i = end;
                word_start = false;
                continue;
            }
            b'#' if word_start => {
                let end = find_from(b, i, |x| x == b'\n').unwrap_or(b.len());
                bad.push((i, end, "is inside a comment"));
                i = end;
                continue;
            }
            b'$' => {
                if i + 1 < b.len() && b[i + 1] == b'\'' {
                    // $'…': backslash escapes inside.
                    let end = find_escaped(b, i + 2, b'\'');
                    bad.push((i, end, "is inside $'…' quotes"));
                    i = end;
                    word_start = false;
                    continue;
                }
                dollar_before.push(i + 1);
            }
            b'<' if b.get(i + 1) == Some(&b'<') && b.get(i + 2) != Some(&b'<') => {
                heredoc_from.get_or_insert(i);
                i += 2;
                word_start = false;
                continue;
            }
            b'<' if b.get(i + 1) == Some(&b'<') => {
                // A here-string `<<<`: a word follows.
                i += 3;
                word_start = true;
                continue;
            }
            _ => {}
        }
        word_start = matches!(c, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b')');
        i += 1;
    }
    Contexts {
        bad,
        heredoc_from,
        dollar_before,
    }
}

fn find_from(b: &[u8], from: usize, f: impl Fn(u8) -> bool) -> Option<usize> {
    b.iter().skip(from).position(|&x| f(x)).map(|p| p + from)
}

/// The end (exclusive) of a span closed by `close`, skipping backslash escapes.
fn find_escaped(b: &[u8], mut i: usize, close: u8) -> usize {
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
            continue;
        }
        if b[i] == close {
            return i + 1;
        }
        i += 1;
    }
    b.len()
}

/// The end of a double-quoted string (escapes skipped; nested `$(…)` counted
/// conservatively as part of the string).
fn closing_double(b: &[u8], i: usize) -> usize {
    find_escaped(b, i, b'"')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ParamDef;
    use serde_json::json;
    use std::collections::BTreeMap;

    fn params(v: Value) -> Params {
        let defs: Vec<ParamDef> = v
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, x)| ParamDef {
                name: k.clone(),
                kind: match x {
                    Value::Array(_) => "string[]".into(),
                    Value::Number(_) => "integer".into(),
                    _ => "string".into(),
                },
                default: Some(x.clone()),
                description: None,
            })
            .collect();
        Params::resolve(&defs, &BTreeMap::new(), "2026-11-27").unwrap()
    }

    #[test]
    fn scripts_get_single_quoted_words() {
        let p = params(json!({"x": "it's", "l": ["a b", "c"], "n": 7}));
        assert_eq!(
            script("echo {{x}} {{ n }}", &p).unwrap(),
            "echo 'it'\\''s' '7'"
        );
        assert_eq!(script("ls {{l}}", &p).unwrap(), "ls 'a b' 'c'");
        assert_eq!(
            script("f --date={{date}}", &p).unwrap(),
            "f --date='2026-11-27'"
        );
    }

    #[test]
    fn placeholders_where_quoting_cannot_hold_are_refused() {
        let p = params(json!({"x": "v"}));
        for bad in [
            "echo \"{{x}}\"",
            "echo '{{x}}'",
            "echo `echo {{x}}`",
            "echo hi # {{x}}",
            "echo ${{x}}",
            "echo $'{{x}}'",
            "cat <<EOF\n{{x}}\nEOF\n",
        ] {
            assert!(script(bad, &p).is_err(), "{bad:?}");
        }
        // Neighbours that stay fine.
        assert!(script("echo a#{{x}}", &p).is_ok());
        assert!(script("cat <<< {{x}}", &p).is_ok());
        assert!(script("echo \"a\" {{x}} 'b' # c", &p).is_ok());
        assert!(script("echo $(echo {{x}})", &p).is_ok());
    }

    #[test]
    fn args_and_json() {
        let p = params(json!({"l": ["a", "b"], "n": 3, "s": "x y"}));
        assert_eq!(arg("{{l}}", &p).unwrap(), ["a", "b"]);
        assert_eq!(arg("--repos={{l}}", &p).unwrap(), ["--repos=a,b"]);
        assert_eq!(arg("{{s}}", &p).unwrap(), ["x y"]);
        assert_eq!(
            json(&json!({"n": "{{n}}", "t": "n={{n}}"}), &p).unwrap(),
            json!({"n": 3, "t": "n=3"})
        );
        assert!(text("{{nope}}", &p).unwrap_err().contains("unknown param"));
        assert!(placeholders("{{7_days_ago}}").is_err());
        assert!(placeholders("{{x").is_err());
    }
}
