//! Parse errors with positions and what was expected.

use std::fmt;

/// A line and column (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1.
    pub column: usize,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// Why a script cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// The text is not valid shell syntax.
    #[error("syntax error at {position}: {message}")]
    Syntax {
        /// Where the parser stopped.
        position: Position,
        /// What went wrong and what was expected.
        message: String,
    },
    /// A `[[ … ]]` that bash does not parse. bash stops the script there without
    /// changing `$?` (the status is the last command's, not 2).
    #[error("syntax error at {position}: {message}")]
    Conditional {
        /// Where bash's parser stopped.
        position: Position,
        /// bash's message.
        message: String,
    },
    /// Nesting deeper than safesh parses (a recursion bound, not a syntax error).
    #[error("the script nests deeper than {limit} levels (at {position})")]
    TooDeep {
        /// The bound.
        limit: usize,
        /// Where the bound was passed.
        position: Position,
    },
    /// The script is longer than the configured limit (`[limits] script_bytes`).
    #[error("the script is {size} bytes, more than the limit of {limit} bytes")]
    TooLarge {
        /// The script's size.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// The parse was stopped: the request's deadline passed or it was cancelled.
    #[error("parsing stopped: the request's time ran out or it was cancelled")]
    Cancelled,
    /// Valid syntax that safesh does not implement.
    #[error("not supported: {what} (at {position})")]
    NotSupported {
        /// The construct.
        what: String,
        /// Where it is.
        position: Position,
    },
}

impl ParseError {
    /// The stable refusal code for this error.
    pub fn code(&self) -> &'static str {
        match self {
            ParseError::Syntax { .. } | ParseError::Conditional { .. } => "PARSE_ERROR",
            ParseError::NotSupported { .. } => "NOT_SUPPORTED",
            ParseError::TooDeep { .. } | ParseError::TooLarge { .. } => "LIMIT_EXCEEDED",
            ParseError::Cancelled => "TIMEOUT",
        }
    }

    pub(crate) fn word(raw: &str, e: &brush_parser::WordParseError) -> Self {
        ParseError::Syntax {
            position: Position::default(),
            message: format!("{e} in `{raw}`"),
        }
    }

    /// Shifts a position found inside a nested text (a substitution) by where that
    /// text starts, so errors point into the whole script.
    pub fn at(mut self, base: Position) -> Self {
        let pos = match &mut self {
            ParseError::Syntax { position, .. }
            | ParseError::Conditional { position, .. }
            | ParseError::NotSupported { position, .. }
            | ParseError::TooDeep { position, .. } => position,
            ParseError::TooLarge { .. } | ParseError::Cancelled => return self,
        };
        if pos.line == 0 {
            *pos = base;
        } else if pos.line == 1 {
            pos.line = base.line;
            pos.column += base.column.saturating_sub(1);
        } else {
            pos.line += base.line.saturating_sub(1);
        }
        self
    }
}

pub(crate) fn from_brush(e: brush_parser::ParseError, source: &str) -> ParseError {
    use brush_parser::ParseError as B;
    match e {
        B::ParsingNear(p) => {
            let position = Position {
                line: p.line,
                column: p.column,
            };
            let token = token_at(source, p.index);
            let message = match token {
                Some(t) => format!("unexpected `{t}`{}", expected_hint(source, p.index)),
                None => format!("unexpected token{}", expected_hint(source, p.index)),
            };
            ParseError::Syntax { position, message }
        }
        B::ParsingAtEndOfInput => {
            let (line, column) = end_position(source);
            ParseError::Syntax {
                position: Position { line, column },
                message: format!(
                    "unexpected end of input{}",
                    expected_hint(source, source.len())
                ),
            }
        }
        B::Tokenizing { inner, position } => {
            let position = position
                .map(|p| Position {
                    line: p.line,
                    column: p.column,
                })
                .unwrap_or_else(|| {
                    let (line, column) = end_position(source);
                    Position { line, column }
                });
            let text = inner.to_string();
            let quote = if text.contains("unterminated single quote") {
                Some(crate::open_quote::Quote::Single)
            } else if text.contains("unterminated double quote") {
                Some(crate::open_quote::Quote::Double)
            } else if text.contains("unterminated backquote") {
                Some(crate::open_quote::Quote::Back)
            } else {
                None
            };
            // Point at the quote that never closed, not at the end of the input.
            let position = quote
                .and_then(|q| crate::open_quote::find(source, q))
                .map_or(position, |(line, column)| Position { line, column });
            let message = if text.contains("unterminated single quote") {
                "unterminated single quote: expected a closing `'`".to_string()
            } else if text.contains("unterminated double quote") {
                "unterminated double quote: expected a closing `\"`".to_string()
            } else if text.contains("unterminated backquote") {
                "unterminated backquote: expected a closing '`'".to_string()
            } else if text.contains("unterminated command substitution") {
                "unterminated command substitution: expected a closing `)`".to_string()
            } else if text.contains("here") {
                format!("{text}: expected the here-document's end marker")
            } else {
                text
            };
            ParseError::Syntax { position, message }
        }
    }
}

fn end_position(source: &str) -> (usize, usize) {
    let line = source.lines().count().max(1);
    let column = source.lines().last().map(|l| l.len() + 1).unwrap_or(1);
    (line, column)
}

fn token_at(source: &str, index: usize) -> Option<String> {
    let rest = source.get(index..)?;
    let t: String = rest
        .trim_start_matches([' ', '\t'])
        .chars()
        .take_while(|c| !c.is_whitespace())
        .take(20)
        .collect();
    if t.is_empty() {
        if rest.starts_with('\n') {
            Some("newline".into())
        } else {
            None
        }
    } else {
        Some(t)
    }
}

/// Names the closer the parser was waiting for, from the keywords still open
/// before `index` (a cheap scan; good enough to say "expected `fi`").
fn expected_hint(source: &str, index: usize) -> String {
    let upto = source.get(..index).unwrap_or(source);
    // Uncached: brush's cache would keep the tokens of every failed prefix.
    let options = crate::options().tokenizer_options();
    let Ok(tokens) = brush_parser::uncached_tokenize_str(upto, &options) else {
        return String::new();
    };
    let mut stack: Vec<(&'static str, &'static str)> = Vec::new();
    for t in &tokens {
        let brush_parser::Token::Word(w, _) = t else {
            if let brush_parser::Token::Operator(op, _) = t {
                match op.as_str() {
                    "(" => stack.push(("(", ")")),
                    ")" if stack.last().map(|s| s.1) == Some(")") => {
                        stack.pop();
                    }
                    _ => {}
                }
            }
            continue;
        };
        match w.as_str() {
            "if" => stack.push(("if", "fi")),
            "fi" => pop_to(&mut stack, "fi"),
            "do" => stack.push(("do", "done")),
            "done" => pop_to(&mut stack, "done"),
            "case" => stack.push(("case", "esac")),
            "esac" => pop_to(&mut stack, "esac"),
            "{" => stack.push(("{", "}")),
            "}" => pop_to(&mut stack, "}"),
            "then" if stack.last().map(|s| s.0) == Some("if") => {}
            _ => {}
        }
    }
    match stack.last() {
        Some((open, close)) => format!(": expected `{close}` to close `{open}`"),
        None => String::new(),
    }
}

fn pop_to(stack: &mut Vec<(&'static str, &'static str)>, close: &str) {
    if let Some(i) = stack.iter().rposition(|s| s.1 == close) {
        stack.truncate(i);
    }
}
