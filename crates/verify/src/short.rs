//! The short text form of the `verify` builtin and of `?verify="…"`:
//! `TYPE[@TARGET][:EXPECTED]`, one assertion per word.
//!
//! ```text
//! not_empty                     contains:.rs            count_gte:3
//! matches_regex:^v\d+           json_schema:{"type":"array"}
//! contains@stderr:warning       exit_code:0             llm_judge:lists Rust files
//! file_exists:out/report.md     file_contains:out/report.md:## Summary
//! not_empty@payload.items       count_gte@context.session.files:2
//! ```
//!
//! `file_exists:PATH` and `file_contains:PATH:TEXT` name the file first (a path
//! holding `:` cannot be written this way; use the JSON form).

use crate::assertion::{Assertion, Checked, Kind};
use serde_json::Value;
use thiserror::Error;

/// A word of the short form that is not an assertion.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("verify: assertion {} ({word:?}): {message}", index + 1)]
pub struct ShortFormError {
    /// The word's index (0-based).
    pub index: usize,
    /// The word.
    pub word: String,
    /// What is wrong.
    pub message: String,
}

/// Parses each word into an assertion, validated as [`crate::validate`] does.
pub fn parse_short<S: AsRef<str>>(words: &[S]) -> Result<Vec<Assertion>, ShortFormError> {
    words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let w = w.as_ref();
            let err = |message: String| ShortFormError {
                index: i,
                word: w.to_string(),
                message,
            };
            let a = parse_word(w).map_err(err)?;
            Checked::new(i, &a).map_err(|e| err(format!("{}: {}", e.field, e.message)))?;
            Ok(a)
        })
        .collect()
}

fn parse_word(w: &str) -> Result<Assertion, String> {
    let end = w.find([':', '@']).unwrap_or(w.len());
    let name = &w[..end];
    let kind = Kind::parse(name).ok_or_else(|| {
        format!(
            "unknown assertion type {name:?} (types: {}; form TYPE[@TARGET][:EXPECTED])",
            Kind::ALL.map(Kind::name).join(", ")
        )
    })?;
    let mut rest = &w[end..];
    let mut target = None;
    if let Some(t) = rest.strip_prefix('@') {
        // A file target keeps its own `file:` prefix.
        let (body, skip) = match t.strip_prefix("file:") {
            Some(b) => (b, "file:".len()),
            None => (t, 0),
        };
        let cut = body.find(':').map_or(t.len(), |i| i + skip);
        target = Some(t[..cut].to_string());
        rest = &t[cut..];
    }
    let expected = rest.strip_prefix(':');
    if !rest.is_empty() && expected.is_none() {
        return Err(format!("expected `:` after the type in {w:?}"));
    }
    let mut a = Assertion::new(kind.name(), None);
    a.target = target;
    match (kind, expected) {
        (Kind::FileExists, Some(p)) if a.target.is_none() => a.target = Some(format!("file:{p}")),
        (Kind::FileContains, Some(e)) if a.target.is_none() => {
            let (p, text) = e
                .split_once(':')
                .ok_or("file_contains:PATH:TEXT names the file, then the text")?;
            a.target = Some(format!("file:{p}"));
            a.expected = Some(Value::String(text.to_string()));
        }
        (Kind::CountGte | Kind::ExitCode, Some(e)) => {
            let n: i64 = e
                .trim()
                .parse()
                .map_err(|_| format!("{kind} takes an integer, not {e:?}"))?;
            a.expected = Some(Value::from(n));
        }
        (Kind::JsonSchema, Some(e)) => {
            a.expected = Some(
                serde_json::from_str(e).map_err(|err| format!("the schema is not JSON: {err}"))?,
            );
        }
        (Kind::NotEmpty, Some(e)) => {
            return Err(format!("not_empty takes no value (got {e:?})"));
        }
        (_, Some(e)) => a.expected = Some(Value::String(e.to_string())),
        (_, None) => {}
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn one(w: &str) -> Assertion {
        parse_short(&[w]).unwrap().remove(0)
    }

    #[test]
    fn the_forms() {
        let a = parse_short(&["not_empty", "contains:.rs", "count_gte:3"]).unwrap();
        assert_eq!(a[0].kind, "not_empty");
        assert_eq!(a[1].expected, Some(json!(".rs")));
        assert_eq!(a[2].expected, Some(json!(3)));
        assert_eq!(one("matches_regex:^a:b$").expected, Some(json!("^a:b$")));
        let s = one(r#"json_schema:{"type":"array"}"#);
        assert_eq!(s.expected, Some(json!({"type": "array"})));
        let s = one("contains@stderr:warning: x");
        assert_eq!(s.target.as_deref(), Some("stderr"));
        assert_eq!(s.expected, Some(json!("warning: x")));
        let s = one("file_contains:out/r.md:## Sum");
        assert_eq!(s.target.as_deref(), Some("file:out/r.md"));
        assert_eq!(s.expected, Some(json!("## Sum")));
        assert_eq!(
            one("file_exists:a.txt").target.as_deref(),
            Some("file:a.txt")
        );
        let s = one("contains@file:a.txt:hi");
        assert_eq!(s.target.as_deref(), Some("file:a.txt"));
        assert_eq!(s.expected, Some(json!("hi")));
        assert_eq!(
            one("not_empty@payload.items").target.as_deref(),
            Some("payload.items")
        );
        assert_eq!(one("llm_judge").expected, None);
        assert_eq!(one("exit_code:2").expected, Some(json!(2)));
    }

    #[test]
    fn bad_words_name_the_word_and_the_problem() {
        let e = parse_short(&["not_empty", "contain:.rs"]).unwrap_err();
        assert_eq!(e.index, 1);
        assert!(
            e.to_string().contains("assertion 2 (\"contain:.rs\")"),
            "{e}"
        );
        assert!(e.message.contains("unknown assertion type"), "{e}");
        assert!(
            parse_short(&["count_gte:many"])
                .unwrap_err()
                .message
                .contains("integer")
        );
        assert!(
            parse_short(&["matches_regex:(a"])
                .unwrap_err()
                .message
                .contains("bad regex")
        );
        assert!(
            parse_short(&["json_schema:{"])
                .unwrap_err()
                .message
                .contains("not JSON")
        );
        assert!(
            parse_short(&["contains"])
                .unwrap_err()
                .message
                .contains("needs `expected`")
        );
        assert!(
            parse_short(&["contains:"])
                .unwrap_err()
                .message
                .contains("empty")
        );
        assert!(parse_short(&["not_empty:x"]).is_err());
        assert!(
            parse_short(&["contains@nowhere:x"])
                .unwrap_err()
                .message
                .contains("unknown target")
        );
        assert!(parse_short(&["file_contains:nocolon"]).is_err());
    }
}
