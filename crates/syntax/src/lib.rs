//! Parsing for safesh.
//!
//! A script is parsed whole, with [`brush_parser`], before any of it runs; then every
//! word, command substitution and arithmetic expression inside it is parsed too
//! ([`check`]), so a syntax error anywhere — or a construct safesh does not
//! implement — is reported up front with its line and column, and nothing runs.

mod check;
mod nesting;
pub use check::unescape_backquoted;
mod error;

pub use brush_parser::ast;
pub use brush_parser::word::{self, WordPiece, WordPieceWithSource};
pub use error::{ParseError, Position};
pub use nesting::MAX_NESTING;

use std::sync::Arc;

/// A parsed and checked script.
#[derive(Debug, Clone)]
pub struct Script {
    /// The program's syntax tree.
    pub program: Arc<ast::Program>,
    /// The source text it came from.
    pub source: Arc<str>,
}

/// The parser options safesh uses everywhere (bash mode, no extglob).
pub fn options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions {
        enable_extended_globbing: false,
        posix_mode: false,
        sh_mode: false,
        tilde_expansion_at_word_start: true,
        tilde_expansion_after_colon: false,
        parser_impl: brush_parser::ParserImpl::Peg,
    }
}

/// Parses `source` as a whole script and checks everything inside it.
pub fn parse(source: &str) -> Result<Script, ParseError> {
    // A here-document may end at the very end of the text; the tokenizer wants a newline.
    let owned;
    let source = if source.ends_with('\n') {
        source
    } else {
        owned = format!("{source}\n");
        owned.as_str()
    };
    nesting::check(source)?;
    let program = parse_program(source)?;
    check::program(&program)?;
    Ok(Script {
        program: Arc::new(program),
        source: Arc::from(source),
    })
}

/// Parses without the deep check (used by the checker for nested substitutions).
pub(crate) fn parse_program(source: &str) -> Result<ast::Program, ParseError> {
    let run = || {
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(source), &options());
        parser.parse_program()
    };
    // brush-parser may panic on pathological input (e.g. huge numbers); that is a
    // parse error for us, never a crash.
    match std::panic::catch_unwind(run) {
        Ok(r) => r.map_err(|e| error::from_brush(e, source)),
        Err(_) => Err(ParseError::Syntax {
            position: Position::default(),
            message: "the parser could not handle this input".into(),
        }),
    }
}

/// Parses one word into its expansion pieces.
pub fn parse_word(raw: &str) -> Result<Vec<WordPieceWithSource>, ParseError> {
    match std::panic::catch_unwind(|| word::parse(raw, &options())) {
        Ok(r) => r.map_err(|e| ParseError::word(raw, &e)),
        Err(_) => Err(ParseError::Syntax {
            position: Position::default(),
            message: format!("the parser could not handle the word `{raw}`"),
        }),
    }
}

/// Parses a here-document body (quotes are literal) into expansion pieces.
pub fn parse_heredoc(raw: &str) -> Result<Vec<WordPieceWithSource>, ParseError> {
    match std::panic::catch_unwind(|| word::parse_heredoc(raw, &options())) {
        Ok(r) => r.map_err(|e| ParseError::word(raw, &e)),
        Err(_) => Err(ParseError::Syntax {
            position: Position::default(),
            message: "the parser could not handle a here-document".into(),
        }),
    }
}
