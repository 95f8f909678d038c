//! The line editor's helper: highlighting, the parse-error hint, completion. It
//! sees the lines of an open construct typed before (`pending`), so an error
//! or a completion is judged on the whole text.

use crate::complete::{self, Names};
use crate::highlight;
use crate::input::{Shape, classify};
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::Rc;

/// What the helper reads; the REPL loop writes it between lines.
#[derive(Debug, Default)]
pub struct State {
    /// Names to complete.
    pub names: Names,
    /// Lines of an open construct typed so far (each ending in `\n`).
    pub pending: String,
}

/// The rustyline helper of the REPL.
pub struct ReplHelper {
    state: Rc<RefCell<State>>,
    colour: bool,
}

impl ReplHelper {
    /// A helper reading `state`; `colour`: paint with ANSI sequences.
    pub fn new(state: Rc<RefCell<State>>, colour: bool) -> Self {
        ReplHelper { state, colour }
    }

    /// The parse error in `line` (typed after the pending lines), if any: its
    /// byte offset in `line` (when it is on this line) and its text.
    fn error(&self, line: &str) -> Option<(Option<usize>, String)> {
        let state = self.state.borrow();
        let text = format!("{}{line}", state.pending);
        match classify(&text) {
            Shape::Invalid {
                line: l,
                column,
                code,
                message,
            } => {
                let this_line = state.pending.matches('\n').count() + 1;
                let at = (l == this_line && column > 0).then(|| {
                    // Columns count characters.
                    line.char_indices()
                        .nth(column - 1)
                        .map_or(line.len(), |(i, _)| i)
                });
                Some((at, format!("{code}: {message}")))
            }
            _ => None,
        }
    }
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let state = self.state.borrow();
        let (start, found) = complete::complete(&state.names, line, pos);
        Ok((
            start,
            found
                .into_iter()
                .map(|c| Pair {
                    display: c.display,
                    replacement: c.replacement,
                })
                .collect(),
        ))
    }
}

impl Hinter for ReplHelper {
    type Hint = String;

    /// A parse error is said after the text, before Enter is pressed.
    fn hint(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> Option<String> {
        if pos < line.len() || line.trim().is_empty() {
            return None;
        }
        self.error(line).map(|(_, msg)| format!("   <- {msg}"))
    }
}

impl Highlighter for ReplHelper {
    fn highlight<'l>(&self, line: &'l str, _pos: usize) -> Cow<'l, str> {
        if !self.colour {
            return Cow::Borrowed(line);
        }
        let at = self.error(line).and_then(|(at, _)| at);
        Cow::Owned(highlight::paint(line, at))
    }

    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        default: bool,
    ) -> Cow<'b, str> {
        if !self.colour || !default {
            return Cow::Borrowed(prompt);
        }
        Cow::Owned(crate::prompt::paint(prompt))
    }

    fn highlight_hint<'h>(&self, hint: &'h str) -> Cow<'h, str> {
        if !self.colour {
            return Cow::Borrowed(hint);
        }
        Cow::Owned(format!("\x1b[31m{hint}\x1b[0m"))
    }

    fn highlight_char(&self, _line: &str, _pos: usize, _kind: CmdKind) -> bool {
        // Every key can change what a word is (a quote opens, a keyword ends).
        self.colour
    }
}

impl Validator for ReplHelper {}

impl Helper for ReplHelper {}
