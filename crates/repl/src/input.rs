//! Is the text typed so far a whole script, the start of one, or wrong? Decided
//! by our own parser (`safesh_syntax`), the one every script goes through: an
//! error at the end of the input (an open `if`/`for`/`while`/`{`/`(`, a quote,
//! a here-document, a trailing `|` or `&&`) means "keep reading"; any other
//! error is shown before Enter and refused as `PARSE_ERROR` after it.

use safesh_syntax::ParseError;

/// What the parser says about the text typed so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// A script: run it.
    Complete,
    /// Valid so far, but open: read another line.
    Incomplete,
    /// Wrong wherever it goes from here.
    Invalid {
        /// 1-based line of the error in the text (0: no position).
        line: usize,
        /// 1-based column.
        column: usize,
        /// The refusal code (`PARSE_ERROR`, `NOT_SUPPORTED`, `LIMIT_EXCEEDED`).
        code: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// Classifies `text` (the lines typed so far, joined by `\n`).
pub fn classify(text: &str) -> Shape {
    if text.trim().is_empty() {
        return Shape::Complete;
    }
    if ends_with_continuation(text) || safesh_syntax::heredoc_open(text) {
        return Shape::Incomplete;
    }
    let err = match safesh_syntax::parse(text) {
        Ok(_) => return Shape::Complete,
        Err(e) => e,
    };
    if is_incomplete(&err) {
        return Shape::Incomplete;
    }
    let code = err.code();
    match err {
        ParseError::Syntax { position, message }
        | ParseError::Conditional { position, message } => Shape::Invalid {
            line: position.line,
            column: position.column,
            code,
            message,
        },
        ParseError::NotSupported { what, position } => Shape::Invalid {
            line: position.line,
            column: position.column,
            code,
            message: format!("not supported: {what}"),
        },
        ParseError::TooDeep { position, .. } => Shape::Invalid {
            line: position.line,
            column: position.column,
            code,
            message: err_text(code),
        },
        other => Shape::Invalid {
            line: 0,
            column: 0,
            code,
            message: other.to_string(),
        },
    }
}

fn err_text(code: &str) -> String {
    format!("{code}: nested too deeply")
}

/// True when the parser stopped because the input ended, not because of a wrong
/// token: the text may still become a script.
fn is_incomplete(err: &ParseError) -> bool {
    let ParseError::Syntax { message, .. } = err else {
        return false;
    };
    message.starts_with("unexpected end of input")
        || message.starts_with("unterminated ")
        || message.contains("here-document")
        || message.contains("here document")
}

/// A line ending in an unquoted, unescaped backslash continues on the next.
fn ends_with_continuation(text: &str) -> bool {
    let trailing = text.bytes().rev().take_while(|b| *b == b'\\').count();
    trailing % 2 == 1
}

#[cfg(test)]
mod tests {
    use super::{Shape, classify};

    fn incomplete(t: &str) -> bool {
        classify(t) == Shape::Incomplete
    }

    #[test]
    fn whole_scripts_are_complete() {
        for t in [
            "echo hi",
            "for i in 1 2; do echo $i; done",
            "",
            "a | b && c",
            "x=1",
        ] {
            assert_eq!(classify(t), Shape::Complete, "{t}");
        }
    }

    #[test]
    fn open_constructs_are_incomplete() {
        for t in [
            "if true; then",
            "for i in 1 2; do",
            "while true",
            "echo 'abc",
            "echo \"abc",
            "{ echo a",
            "( echo a",
            "echo a |",
            "echo a &&",
            "cat <<EOF\nline",
            "echo a \\",
            "f() {",
            "case x in",
        ] {
            assert!(incomplete(t), "{t:?}: {:?}", classify(t));
        }
    }

    #[test]
    fn wrong_tokens_are_invalid() {
        for t in ["echo )", "if true; then fi", "done", "echo a ;; b"] {
            assert!(
                matches!(
                    classify(t),
                    Shape::Invalid {
                        code: "PARSE_ERROR",
                        ..
                    }
                ),
                "{t:?}: {:?}",
                classify(t)
            );
        }
    }
}
