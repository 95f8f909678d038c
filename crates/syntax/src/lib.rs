//! Parsing for safesh.
//!
//! A script is parsed whole, with [`brush_parser`], before any of it runs; then every
//! word, command substitution and arithmetic expression inside it is parsed too
//! ([`check`]), so a syntax error anywhere — or a construct safesh does not
//! implement — is reported up front with its line and column, and nothing runs.

pub mod arith;
mod budget;
mod check;
mod nesting;
mod open_quote;
mod prepass;
mod split;
mod tokens;
pub use check::{unescape_backquoted, unescape_backquoted_in_dquotes};
mod error;

pub use brush_parser::ast;
pub use brush_parser::word::{self, WordPiece, WordPieceWithSource};
pub use budget::{Budget, DEFAULT_MAX_SCRIPT_BYTES};
pub use error::{ParseError, Position};
pub use nesting::MAX_NESTING;

use std::sync::Arc;

thread_local! {
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f`, turning a panic inside it into `Err` without printing the panic
/// message: brush-parser panics on some inputs (e.g. huge numbers) and those are
/// parse errors for us, not crashes. Other panics still print through the previous
/// hook.
pub fn catch_quietly<R>(f: impl FnOnce() -> R) -> Result<R, Panicked> {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !QUIET.with(std::cell::Cell::get) {
                previous(info);
            }
        }));
    });
    let was = QUIET.with(|q| q.replace(true));
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was));
    r.map_err(|_| Panicked)
}

/// A parser panicked (see [`catch_quietly`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panicked;

/// A space inside `${…}` that the pre-pass holds for brush-parser (whose
/// tokenizer turns a run of blanks there into one space); see [`restore_blanks`].
pub const HELD_SPACE: char = '\u{10FF7E}';
/// A tab held the same way.
pub const HELD_TAB: char = '\u{10FF7D}';

/// Gives back the blanks the pre-pass held inside `${…}` (every word is parsed
/// through [`parse_word`], which does this; printed function bodies too).
pub fn restore_blanks(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains([HELD_SPACE, HELD_TAB]) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(
        text.chars()
            .map(|c| match c {
                HELD_SPACE => ' ',
                HELD_TAB => '\t',
                c => c,
            })
            .collect(),
    )
}

/// True when `text` ends inside a here-document whose end line has not come
/// (the interactive shell asks for more lines; a script takes the rest as its
/// body, as bash does).
pub fn heredoc_open(text: &str) -> bool {
    let text = if text.ends_with('\n') {
        std::borrow::Cow::Borrowed(text)
    } else {
        std::borrow::Cow::Owned(format!("{text}\n"))
    };
    prepass::heredoc_open(&text)
}

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
        enable_extended_globbing: true,
        posix_mode: false,
        sh_mode: false,
        tilde_expansion_at_word_start: true,
        tilde_expansion_after_colon: false,
        parser_impl: brush_parser::ParserImpl::Peg,
    }
}

/// Parses `source` as a whole script and checks everything inside it, with the
/// default [`Budget`] (size limit, never cancelled).
pub fn parse(source: &str) -> Result<Script, ParseError> {
    parse_with(source, &Budget::default())
}

/// Parses `source` as a whole script and checks everything inside it, within
/// `budget`: a script over its size is refused before any work, and every phase
/// (nesting scan, parse, deep check) stops with [`ParseError::Cancelled`] soon
/// after the budget says so. Time and memory grow linearly with the script.
pub fn parse_with(source: &str, budget: &Budget<'_>) -> Result<Script, ParseError> {
    budget.check_size(source.len())?;
    budget.check()?;
    // A here-document may end at the very end of the text; the tokenizer wants a newline.
    let owned;
    let source = if source.ends_with('\n') {
        source
    } else {
        owned = format!("{source}\n");
        owned.as_str()
    };
    nesting::check(source, budget)?;
    let patched = patch_empty_for_condition(source);
    let (rewritten, cond) = prepass::rewrite(&patched);
    if let Some(e) = cond {
        return Err(cond_error(&patched, &rewritten, &e, budget));
    }
    let patched = rewritten;
    let program = parse_top(&patched, budget)?;
    check::Checker::new(budget).program(&program)?;
    Ok(Script {
        program: Arc::new(program),
        source: Arc::from(source),
    })
}

/// The error for a `[[ … ]]` bash does not parse: a syntax error brush-parser
/// finds before that command is reported instead (bash stops at the first).
fn cond_error(
    source: &str,
    rewritten: &str,
    e: &prepass::CondError,
    budget: &Budget<'_>,
) -> ParseError {
    let position_of = |at: usize| {
        let before = source.get(..at).unwrap_or(source);
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        Position { line, column }
    };
    let cmd = position_of(e.cmd);
    match parse_top(rewritten, budget) {
        Err(ParseError::Syntax { position, message })
            if (position.line, position.column) < (cmd.line, cmd.column) =>
        {
            ParseError::Syntax { position, message }
        }
        Err(ParseError::Cancelled) => ParseError::Cancelled,
        _ => ParseError::Conditional {
            position: position_of(e.at),
            message: e.message.clone(),
        },
    }
}

/// brush-parser rejects an empty condition in `for ((init; ; step))`; bash treats it
/// as true. Rewrite it to `1` before parsing (same meaning, same line numbers).
fn patch_empty_for_condition(source: &str) -> std::borrow::Cow<'_, str> {
    static FOR_EMPTY: std::sync::LazyLock<Option<regex_lite_like::Pattern>> =
        std::sync::LazyLock::new(regex_lite_like::Pattern::new);
    match FOR_EMPTY.as_ref() {
        Some(p) if source.contains("for") && source.contains(";;") => p.rewrite(source),
        _ => std::borrow::Cow::Borrowed(source),
    }
}

/// A tiny matcher for `for ((INIT;;`, without pulling a regex engine into this crate.
mod regex_lite_like {
    use std::borrow::Cow;

    pub(crate) struct Pattern;

    impl Pattern {
        pub(crate) fn new() -> Option<Pattern> {
            Some(Pattern)
        }

        pub(crate) fn rewrite<'a>(&self, s: &'a str) -> Cow<'a, str> {
            let mut out = String::with_capacity(s.len() + 4);
            let mut rest = s;
            let mut changed = false;
            while let Some(i) = rest.find("for") {
                let (head, tail) = rest.split_at(i + 3);
                out.push_str(head);
                rest = tail;
                let after = rest.trim_start();
                if !after.starts_with("((") {
                    continue;
                }
                let skipped = rest.len() - after.len();
                // INIT runs to the first `;`; the condition is empty when the next
                // non-blank character is another `;`.
                let body = &after[2..];
                let Some(semi) = body.find(';') else { continue };
                if body[..semi].contains(')') {
                    continue;
                }
                let cond = &body[semi + 1..];
                let cond_trim = cond.trim_start_matches([' ', '\t']);
                if cond_trim.starts_with(';') {
                    out.push_str(&rest[..skipped + 2 + semi + 1]);
                    out.push('1');
                    rest = &rest[skipped + 2 + semi + 1..];
                    changed = true;
                }
            }
            if !changed {
                return Cow::Borrowed(s);
            }
            out.push_str(rest);
            Cow::Owned(out)
        }
    }
}

/// Parses a whole script without the deep check, in pieces (see [`split`]) so the
/// budget is honoured while brush-parser works.
fn parse_top(source: &str, budget: &Budget<'_>) -> Result<ast::Program, ParseError> {
    match catch_quietly(|| split::parse(source, budget)) {
        Ok(Some(r)) => r,
        // The tokenizer failed: the usual path reports where.
        Ok(None) => parse_program(source),
        Err(_) => Err(panicked()),
    }
}

/// The error for a parser panic.
fn panicked() -> ParseError {
    ParseError::Syntax {
        position: Position { line: 1, column: 1 },
        message: "the parser could not handle this input (a number too large?)".into(),
    }
}

/// Parses without the deep check (used by the checker for nested substitutions).
pub(crate) fn parse_program(source: &str) -> Result<ast::Program, ParseError> {
    let run = || {
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(source), &options());
        parser.parse_program()
    };
    // brush-parser may panic on pathological input (e.g. huge numbers); that is a
    // parse error for us, never a crash.
    match catch_quietly(run) {
        Ok(r) => r.map_err(|e| error::from_brush(e, source)),
        Err(_) => Err(panicked()),
    }
}

/// Parses one word into its expansion pieces.
pub fn parse_word(raw: &str) -> Result<Vec<WordPieceWithSource>, ParseError> {
    let raw = &*restore_blanks(raw);
    match catch_quietly(|| word::parse(raw, &options())) {
        Ok(r) => r.map_err(|e| ParseError::word(raw, &e)),
        Err(_) => Err(ParseError::Syntax {
            position: Position::default(),
            message: format!("the parser could not handle the word `{raw}`"),
        }),
    }
}

/// Parses a here-document body (quotes are literal) into expansion pieces.
pub fn parse_heredoc(raw: &str) -> Result<Vec<WordPieceWithSource>, ParseError> {
    match catch_quietly(|| word::parse_heredoc(raw, &options())) {
        Ok(r) => r.map_err(|e| ParseError::word(raw, &e)),
        Err(_) => Err(ParseError::Syntax {
            position: Position::default(),
            message: "the parser could not handle a here-document".into(),
        }),
    }
}
