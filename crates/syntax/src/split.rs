//! Parsing a long script in pieces, so the parse can be stopped (deadline, cancel):
//! brush-parser cannot be interrupted inside one call.
//!
//! The whole text is tokenized by brush-parser's own tokenizer (quotes,
//! here-documents, line continuations and substitutions are its business, and
//! every token keeps its absolute line and column), in chunks
//! ([`crate::tokens`]). The token list is then cut at newline tokens that look
//! like the top level and each piece goes to [`brush_parser::parse_tokens`];
//! between pieces the [`Budget`] is checked.
//!
//! Faithful by construction: brush's grammar is `program = linebreak
//! complete_command (newline_list complete_command)* linebreak`, so at a top-level
//! newline the program is exactly the concatenation of the two pieces' programs.
//! A cut that is not at the top level leaves an open construct (`if` without
//! `fi`, `&&` without its right side, `f()` without a body, an open `(`…) and the
//! first piece does not parse; then that cut is dropped and the piece grows to a
//! later cut (at least twice as long, so failed attempts cost O(n) in all). The
//! scan below only proposes cuts where no construct looks open, and never after a
//! word that could take a body on the next line (`coproc`, `function f`, `time`,
//! `!`, reserved words), so failed attempts are rare. A script shorter than
//! [`PIECE_TOKENS`] tokens is parsed in one call, exactly as before.

use crate::budget::Budget;
use crate::error::ParseError;
use brush_parser::{Token, ast};

/// The fewest tokens in a piece: below this the per-call overhead is not worth it.
/// It is also the granularity at which a parse notices its deadline.
pub(crate) const PIECE_TOKENS: usize = 2048;

/// Tokenizes `source` and parses it in pieces; `None` when the tokenizer fails
/// (the caller then parses the usual way, which reports the error with its
/// position).
pub(crate) fn parse(source: &str, budget: &Budget<'_>) -> Option<Result<ast::Program, ParseError>> {
    parse_in_pieces(source, budget, PIECE_TOKENS, crate::tokens::CHUNK_BYTES)
}

/// [`parse`] with pieces of at least `piece` tokens, tokenized in chunks of at
/// least `chunk` bytes.
fn parse_in_pieces(
    source: &str,
    budget: &Budget<'_>,
    piece: usize,
    chunk: usize,
) -> Option<Result<ast::Program, ParseError>> {
    let tokens = match crate::tokens::tokenize(source, budget, chunk) {
        Ok(Some(t)) => t,
        Ok(None) => return None,
        Err(e) => return Some(Err(e)),
    };
    Some(parse_tokens(&tokens, source, budget, piece))
}

/// Parses `tokens` in pieces of at least `piece` tokens, cut at [`cuts`].
fn parse_tokens(
    tokens: &[Token],
    source: &str,
    budget: &Budget<'_>,
    piece: usize,
) -> Result<ast::Program, ParseError> {
    let options = crate::options();
    let cuts = if tokens.len() > piece {
        cuts(tokens)
    } else {
        Vec::new()
    };
    let mut program = ast::Program {
        complete_commands: Vec::new(),
    };
    let mut start = 0;
    let mut min_len = piece;
    for cut in cuts {
        if cut - start < min_len {
            continue;
        }
        budget.check()?;
        match brush_parser::parse_tokens(&tokens[start..cut], &options) {
            Ok(parsed) => {
                program.complete_commands.extend(parsed.complete_commands);
                start = cut + 1;
                min_len = piece;
            }
            // Not a top-level cut after all: try a later one, twice as far.
            Err(_) => min_len = (cut - start).saturating_mul(2),
        }
    }
    budget.check()?;
    let rest = brush_parser::parse_tokens(&tokens[start..], &options)
        .map_err(|e| crate::error::from_brush(e, source))?;
    program.complete_commands.extend(rest.complete_commands);
    Ok(program)
}

/// Words after which a newline does not end the command (a body may follow), or
/// that open a construct.
fn holds_next_line(w: &str) -> bool {
    matches!(
        w,
        "coproc"
            | "function"
            | "time"
            | "!"
            | "if"
            | "then"
            | "else"
            | "elif"
            | "while"
            | "until"
            | "for"
            | "select"
            | "in"
            | "do"
            | "case"
            | "{"
            | "[["
    )
}

/// Newline tokens where the scan sees no open construct: candidate cuts.
fn cuts(tokens: &[Token]) -> Vec<usize> {
    let mut out = Vec::new();
    // Open `(` (a case pattern's lone `)` does not close one), and reserved words
    // in command position that open a construct.
    let mut parens: usize = 0;
    let mut words: usize = 0;
    let mut command_position = true;
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Token::Operator(op, _) => {
                match op.as_str() {
                    "(" => parens += 1,
                    ")" => parens = parens.saturating_sub(1),
                    "\n" if parens == 0 && words == 0 && i > 0 && !continues(tokens, i) => {
                        out.push(i)
                    }
                    _ => {}
                }
                command_position = true;
            }
            Token::Word(w, _) => {
                if command_position {
                    match w.as_str() {
                        "if" | "case" | "do" | "{" | "[[" => words += 1,
                        "fi" | "esac" | "done" | "}" => words = words.saturating_sub(1),
                        _ => {}
                    }
                }
                if w == "]]" {
                    words = words.saturating_sub(1);
                }
                // After these a command may start; after any other word it may not.
                command_position = matches!(
                    w.as_str(),
                    "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "{" | "!" | "time"
                );
            }
        }
    }
    out
}

/// True when the token before the newline at `i` leaves the command open.
fn continues(tokens: &[Token], i: usize) -> bool {
    let word = |k: usize| match tokens.get(k) {
        Some(Token::Word(w, _)) => Some(w.as_str()),
        _ => None,
    };
    let Some(prev) = i.checked_sub(1).and_then(|k| tokens.get(k)) else {
        return false;
    };
    match prev {
        // `f()` takes its body on the next line; `(cmd)` ends there.
        Token::Operator(op, _) if op == ")" => {
            matches!(i.checked_sub(2).and_then(|k| tokens.get(k)), Some(Token::Operator(o, _)) if o == "(")
        }
        Token::Operator(op, _) => !matches!(op.as_str(), ";" | "&" | "\n"),
        Token::Word(w, _) => {
            holds_next_line(w)
                || i.checked_sub(2)
                    .and_then(word)
                    .is_some_and(|w| matches!(w, "coproc" | "function" | "for" | "select" | "case"))
        }
    }
}

#[cfg(test)]
mod tests;
