//! Tokenizing a long script in chunks, so the tokenizer (a third of the parse)
//! also stops at the deadline.
//!
//! The text is cut after a newline character into chunks of about
//! [`CHUNK_BYTES`]; each chunk is tokenized alone by brush-parser's tokenizer and
//! its tokens are moved to their place in the whole text (line and character index
//! shifted; a chunk starts at column 1). A cut is kept only when its chunk
//! tokenizes without error and its last token is the newline operator ending
//! exactly at the cut: then the tokenizer was at the top level there (not in a
//! quote, a here-document, a substitution or a line continuation, which would
//! fail with "unterminated …" or swallow the newline), its state was the fresh one
//! a new chunk starts with, and the tokens are the whole text's. Otherwise the
//! chunk grows to a later newline (twice as long, so the work stays linear).

use crate::budget::Budget;
use crate::error::ParseError;
use brush_parser::{SourcePosition, SourceSpan, Token};
use std::sync::Arc;

/// The size a chunk grows to before a cut is tried.
pub(crate) const CHUNK_BYTES: usize = 64 * 1024;

/// The tokens of `source`, tokenized in chunks of at least `chunk` bytes; the
/// error when the tokenizer fails past a cut, `Ok(None)` when it fails before
/// any cut (the caller then reports the error the usual way).
pub(crate) fn tokenize(
    source: &str,
    budget: &Budget<'_>,
    chunk: usize,
) -> Result<Option<Vec<Token>>, ParseError> {
    let options = crate::options().tokenizer_options();
    let mut out = Vec::new();
    // Where the current chunk starts: byte offset, character index, line.
    let mut start = 0;
    let mut base = SourcePosition {
        index: 0,
        line: 1,
        column: 1,
    };
    let mut min_len = chunk;
    while start < source.len() {
        budget.check()?;
        let rest = &source[start..];
        let Some(end) = cut_after(rest, min_len) else {
            break;
        };
        let piece = &rest[..end];
        match brush_parser::uncached_tokenize_str(piece, &options) {
            Ok(tokens) if ends_at_newline(&tokens, piece) => {
                out.extend(tokens.into_iter().map(|t| shifted(t, &base)));
                base.index += piece.chars().count();
                base.line += piece.matches('\n').count();
                start += end;
                min_len = chunk;
            }
            _ => min_len = end.saturating_mul(2),
        }
    }
    if start < source.len() {
        budget.check()?;
        let tail = &source[start..];
        match brush_parser::uncached_tokenize_str(tail, &options) {
            Ok(tokens) => out.extend(tokens.into_iter().map(|t| shifted(t, &base))),
            // The tokenizer starts the tail in the state it has at the cut (the
            // top level), so the tail's error is the whole text's, moved to its
            // place: no need to tokenize everything again to report it.
            Err(_) if start > 0 => {
                return match crate::parse_program(tail) {
                    Err(e) => Err(moved_error(e, base.line)),
                    Ok(_) => Ok(None),
                };
            }
            Err(_) => return Ok(None),
        }
    }
    Ok(Some(out))
}

/// An error found in a tail that starts at `line`, moved to its place in the whole
/// text: its position, and the `line,column` pairs brush puts in the message of an
/// unterminated here-document.
fn moved_error(e: ParseError, line: usize) -> ParseError {
    let mut e = e.at(crate::Position { line, column: 1 });
    if let ParseError::Syntax { message, .. } = &mut e {
        const AT: &str = "found at: [";
        if let Some(i) = message.find(AT) {
            let from = i + AT.len();
            if let Some(len) = message[from..].find(']') {
                let moved: Vec<String> = message[from..from + len]
                    .split(", ")
                    .map(|pair| match pair.split_once(',') {
                        Some((l, c)) => match l.parse::<usize>() {
                            Ok(l) => format!("{},{c}", l + line - 1),
                            Err(_) => pair.to_string(),
                        },
                        None => pair.to_string(),
                    })
                    .collect();
                message.replace_range(from..from + len, &moved.join(", "));
            }
        }
    }
    e
}

/// The byte offset just after the first newline at or past `min_len` bytes of
/// `text`, if one comes before its end.
fn cut_after(text: &str, min_len: usize) -> Option<usize> {
    let from = text.get(min_len..)?;
    let nl = from.find('\n')?;
    let end = min_len + nl + 1;
    (end < text.len()).then_some(end)
}

/// The chunk's last token is the newline operator at its last character.
fn ends_at_newline(tokens: &[Token], piece: &str) -> bool {
    match tokens.last() {
        Some(Token::Operator(op, loc)) => {
            op == "\n" && loc.start.index + 1 == piece.chars().count()
        }
        _ => false,
    }
}

/// `t` moved from its chunk to the whole text, the chunk starting at `base`.
fn shifted(t: Token, base: &SourcePosition) -> Token {
    let at = |p: &SourcePosition| {
        Arc::new(SourcePosition {
            index: p.index + base.index,
            line: p.line + base.line - 1,
            column: p.column,
        })
    };
    match t {
        Token::Operator(s, loc) => Token::Operator(
            s,
            SourceSpan {
                start: at(&loc.start),
                end: at(&loc.end),
            },
        ),
        Token::Word(s, loc) => Token::Word(
            s,
            SourceSpan {
                start: at(&loc.start),
                end: at(&loc.end),
            },
        ),
    }
}
