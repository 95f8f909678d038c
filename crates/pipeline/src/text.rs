//! The annotated text form of a pipeline (agsh's agent-facing syntax), accepted
//! as `pipeline {text}`:
//!
//! ```text
//! fs:list ./src ?intent="get the sources"
//!   | grep '\.rs$' ?intent="keep Rust files" ?verify="not_empty contains:.rs"
//!   | wc -l ?verify="output is a single number"
//! ```
//!
//! Steps are separated by a `|` outside quotes (`||` is bash's "or" and stays in
//! its step); data flows from each step to the next as in the JSON form. A word
//! starting with `?NAME=` outside quotes is an annotation of its step: `intent`,
//! `verify`, `on_error` (stop | skip | retry), `retries` and `checkpoint_before`
//! (true | false). Its value is a double- or single-quoted string or a bare
//! word. Everything else is the step's bash script, as written.
//!
//! `?verify` holds assertions in the short form (`not_empty contains:.rs
//! count_gte:3`, split on spaces); when its first word is not an assertion type
//! the whole text is an `llm_judge` criterion (the seed's "output contains only
//! .go files"). Turning the words into assertions is the caller's (the server
//! uses `safesh_verify::parse_short`): this crate only finds them.

use std::fmt;

/// One step of the text form.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TextStep {
    /// The step's bash script (annotations removed, trimmed).
    pub script: String,
    /// `?intent`.
    pub intent: Option<String>,
    /// `?verify`, as written.
    pub verify: Option<String>,
    /// `?on_error`.
    pub on_error: Option<crate::OnError>,
    /// `?retries`.
    pub retries: Option<u32>,
    /// `?checkpoint_before`.
    pub checkpoint_before: bool,
    /// Where the step starts in the text (byte offset).
    pub offset: usize,
}

/// A text form that cannot be read, with where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong and what is accepted.
    pub message: String,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pipeline text, line {} column {}: {}",
            self.line, self.column, self.message
        )
    }
}

impl std::error::Error for TextError {}

/// The annotations a step may carry.
pub const ANNOTATIONS: &[&str] = &[
    "intent",
    "verify",
    "on_error",
    "retries",
    "checkpoint_before",
];

fn error_at(text: &str, offset: usize, message: impl Into<String>) -> TextError {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    TextError {
        line,
        column,
        message: message.into(),
    }
}

/// Parses the text form into its steps.
pub fn parse_text(text: &str) -> Result<Vec<TextStep>, TextError> {
    let mut steps = Vec::new();
    let mut step = TextStep::default();
    let mut script = String::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    // Whether the previous character ends a word (so `?` starts one).
    let mut at_word_start = true;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\\' => {
                let end = next_char_end(text, i + 1);
                script.push_str(&text[i..end]);
                i = end;
                at_word_start = false;
            }
            b'\'' | b'"' => {
                let end = quoted_end(text, i)?;
                script.push_str(&text[i..end]);
                i = end;
                at_word_start = false;
            }
            b'|' if bytes.get(i + 1) == Some(&b'|') => {
                script.push_str("||");
                i += 2;
                at_word_start = true;
            }
            b'|' if i > 0 && bytes[i - 1] == b'>' => {
                // `>|` is a redirection, not a step boundary.
                script.push('|');
                i += 1;
                at_word_start = true;
            }
            b'|' => {
                finish(text, &mut steps, &mut step, &mut script, i)?;
                step.offset = i + 1;
                i += 1;
                at_word_start = true;
            }
            b'?' if at_word_start && annotation_name(text, i + 1).is_some() => {
                let (name, after_eq) = annotation_name(text, i + 1).unwrap_or_default();
                let (value, end) = annotation_value(text, after_eq)?;
                annotate(text, &mut step, name, value, i)?;
                i = end;
                at_word_start = true;
            }
            b'#' if at_word_start => {
                // A comment runs to the end of the line (it could hide a `|`).
                let end = text[i..].find('\n').map_or(text.len(), |n| i + n);
                i = end;
            }
            _ => {
                let end = next_char_end(text, i);
                script.push_str(&text[i..end]);
                at_word_start = c.is_ascii_whitespace() || matches!(c, b';' | b'&' | b'(');
                i = end;
            }
        }
    }
    finish(text, &mut steps, &mut step, &mut script, text.len())?;
    Ok(steps)
}

fn next_char_end(text: &str, i: usize) -> usize {
    let mut end = (i + 1).min(text.len());
    while end < text.len() && !text.is_char_boundary(end) {
        end += 1;
    }
    end
}

/// The end (exclusive) of the quoted string starting at `start`.
fn quoted_end(text: &str, start: usize) -> Result<usize, TextError> {
    let bytes = text.as_bytes();
    let q = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if q == b'"' => i += 2,
            c if c == q => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Err(error_at(
        text,
        start,
        format!(
            "unterminated {} quote",
            if q == b'"' { "double" } else { "single" }
        ),
    ))
}

/// `NAME=` at `i`: the name and the offset after `=`.
fn annotation_name(text: &str, i: usize) -> Option<(&str, usize)> {
    let rest = text.get(i..)?;
    let len = rest
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    (len > 0 && rest.as_bytes().get(len) == Some(&b'=')).then(|| (&rest[..len], i + len + 1))
}

/// The value at `i` (quoted or a bare word) and the offset after it.
fn annotation_value(text: &str, i: usize) -> Result<(String, usize), TextError> {
    let bytes = text.as_bytes();
    match bytes.get(i) {
        Some(b'"') => {
            let end = quoted_end(text, i)?;
            let inner = &text[i + 1..end - 1];
            Ok((unescape_double(inner), end))
        }
        Some(b'\'') => {
            let end = quoted_end(text, i)?;
            Ok((text[i + 1..end - 1].to_string(), end))
        }
        Some(c) if !c.is_ascii_whitespace() && *c != b'|' => {
            let end = text[i..]
                .find(|c: char| c.is_ascii_whitespace() || c == '|')
                .map_or(text.len(), |n| i + n);
            Ok((text[i..end].to_string(), end))
        }
        _ => Err(error_at(
            text,
            i,
            "an annotation needs a value: ?NAME=\"…\" or ?NAME=word",
        )),
    }
}

fn unescape_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n @ ('"' | '\\' | '$' | '`')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn annotate(
    text: &str,
    step: &mut TextStep,
    name: &str,
    value: String,
    at: usize,
) -> Result<(), TextError> {
    let err = |m: String| error_at(text, at, m);
    let dup = |set: bool| {
        if set {
            Err(err(format!("?{name} is given twice in this step")))
        } else {
            Ok(())
        }
    };
    match name {
        "intent" => {
            dup(step.intent.is_some())?;
            step.intent = Some(value);
        }
        "verify" => {
            dup(step.verify.is_some())?;
            if value.trim().is_empty() {
                return Err(err("?verify is empty".into()));
            }
            step.verify = Some(value);
        }
        "on_error" => {
            dup(step.on_error.is_some())?;
            step.on_error = Some(match value.as_str() {
                "stop" => crate::OnError::Stop,
                "skip" => crate::OnError::Skip,
                "retry" => crate::OnError::Retry,
                other => {
                    return Err(err(format!(
                        "?on_error={other:?}: one of stop, skip, retry"
                    )));
                }
            });
        }
        "retries" => {
            dup(step.retries.is_some())?;
            step.retries =
                Some(value.parse().map_err(|_| {
                    err(format!("?retries={value:?}: a whole number of extra runs"))
                })?);
        }
        "checkpoint_before" => {
            step.checkpoint_before = match value.as_str() {
                "true" => true,
                "false" => false,
                other => return Err(err(format!("?checkpoint_before={other:?}: true or false"))),
            };
        }
        other => {
            return Err(err(format!(
                "unknown annotation ?{other} (annotations: {})",
                ANNOTATIONS.join(", ")
            )));
        }
    }
    Ok(())
}

fn finish(
    text: &str,
    steps: &mut Vec<TextStep>,
    step: &mut TextStep,
    script: &mut String,
    at: usize,
) -> Result<(), TextError> {
    let body = script.trim();
    if body.is_empty() {
        let what = if steps.is_empty() && at == text.len() {
            "the pipeline text has no step"
        } else {
            "empty step (nothing to run between two `|`)"
        };
        return Err(error_at(text, at.min(text.len()), what));
    }
    let mut done = std::mem::take(step);
    done.script = body.to_string();
    steps.push(done);
    script.clear();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_example_parses_into_annotated_steps() {
        let t = "files:list ./src \n  ?intent=\"get all Go source files\"\n  | filter --type=go \n  ?intent=\"keep only Go files\"\n  ?verify=\"output contains only .go files\"\n  | analyze:complexity";
        let s = parse_text(t).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].script, "files:list ./src");
        assert_eq!(s[0].intent.as_deref(), Some("get all Go source files"));
        assert_eq!(s[1].script, "filter --type=go");
        assert_eq!(
            s[1].verify.as_deref(),
            Some("output contains only .go files")
        );
        assert_eq!(s[2].script, "analyze:complexity");
        assert_eq!(s[2].intent, None);
    }

    #[test]
    fn quotes_or_and_comments_keep_their_bars() {
        let s = parse_text(
            "grep 'a|b' x || echo \"c|d\" ?on_error=skip ?retries=2 | cat >| out # a|b\n",
        )
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].script, "grep 'a|b' x || echo \"c|d\"");
        assert_eq!(s[0].on_error, Some(crate::OnError::Skip));
        assert_eq!(s[0].retries, Some(2));
        assert_eq!(s[1].script, "cat >| out");
        // `?` inside a word is a glob, not an annotation.
        let s = parse_text("ls a?b=c ?checkpoint_before=true").unwrap();
        assert_eq!(s[0].script, "ls a?b=c");
        assert!(s[0].checkpoint_before);
        let s = parse_text("echo \"?intent=x\" ?intent='it is'").unwrap();
        assert_eq!(s[0].script, "echo \"?intent=x\"");
        assert_eq!(s[0].intent.as_deref(), Some("it is"));
    }

    #[test]
    fn errors_say_where_and_what() {
        let e = parse_text("echo a |\n  | wc -l").unwrap_err();
        assert_eq!((e.line, e.column), (2, 3), "{e}");
        assert!(e.message.contains("empty step"), "{e}");
        let e = parse_text("echo 'a").unwrap_err();
        assert_eq!((e.line, e.column), (1, 6));
        assert!(e.message.contains("unterminated single quote"));
        let e = parse_text("echo a ?intnet=\"x\"").unwrap_err();
        assert!(e.message.contains("unknown annotation ?intnet"), "{e}");
        assert_eq!(e.column, 8);
        let e = parse_text("echo a ?on_error=never").unwrap_err();
        assert!(e.message.contains("stop, skip, retry"), "{e}");
        let e = parse_text("echo a ?intent= | wc").unwrap_err();
        assert!(e.message.contains("needs a value"), "{e}");
        assert!(parse_text("  ").unwrap_err().message.contains("no step"));
        let e = parse_text("echo a ?intent=x ?intent=y").unwrap_err();
        assert!(e.message.contains("twice"), "{e}");
        assert!(
            e.to_string()
                .starts_with("pipeline text, line 1 column 18:"),
            "{e}"
        );
    }
}
