//! `[[ … ]]` read as bash's parser reads it (parse.y `cond_term`), before
//! brush-parser sees it.
//!
//! brush-parser's `[[` grammar differs from bash's both ways: it accepts texts
//! bash rejects (`[[ a $op b ]]`, `[[ ]]`, `[[ a 3< b ]]`) and rejects texts bash
//! accepts (`[[ -f -f ]]`: the operand of `-f` is the word `-f`). This pass reads
//! the command's tokens with bash's grammar:
//!
//! * a text bash rejects is a [`CondError`] (bash's message, where the `[[`
//!   starts); the caller reports it as a syntax error;
//! * an operand spelled like an operator (`-f`, `==`, `!`, `-eq`, …) gets a
//!   backslash in front (`\-f`), so brush-parser takes it for the plain word it
//!   is; quote removal gives back the same text.
//!
//! When the scan meets something it does not model (the end of the text before
//! `]]`), it has no opinion: nothing is changed and brush-parser decides.

use super::{Edit, Scan, is_word_end};

/// A `[[ … ]]` that bash does not parse.
pub(crate) struct CondError {
    /// Byte offset of the `[[`.
    pub(crate) cmd: usize,
    /// Byte offset of the token bash stopped at.
    pub(crate) at: usize,
    /// bash's message.
    pub(crate) message: String,
}

/// One token inside `[[ … ]]`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tok {
    /// A word, `start..end` in the source.
    Word(usize, usize),
    /// `]]`
    End(usize),
    AndAnd(usize),
    OrOr(usize),
    Open(usize),
    Close(usize),
    /// `<` or `>`
    Less(usize),
    /// Any other operator (`;`, `&`, `|`, `>>`, …).
    OtherOp(usize),
    Newline(usize),
    Eof,
}

impl Tok {
    fn at(self, eof: usize) -> usize {
        match self {
            Tok::Word(s, _)
            | Tok::End(s)
            | Tok::AndAnd(s)
            | Tok::OrOr(s)
            | Tok::Open(s)
            | Tok::Close(s)
            | Tok::Less(s)
            | Tok::OtherOp(s)
            | Tok::Newline(s) => s,
            Tok::Eof => eof,
        }
    }
}

/// How the next word is read: a pattern (after `==`, `!=`, `=`) or a regular
/// expression (after `=~`) keeps `(…)` groups, a regex also `|` and blanks
/// inside parentheses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Plain,
    Regex,
}

/// The scan stops: a syntax error, or no opinion (end of text).
enum Stop {
    Error(CondError),
    NoOpinion,
}

type R<T> = Result<T, Stop>;

/// bash's `test_unop`: the one-letter unary operators of `[[`.
fn unary_op(w: &str) -> bool {
    let b = w.as_bytes();
    b.len() == 2 && b[0] == b'-' && b"abcdefghknoprstuvwxzGLOSNR".contains(&b[1])
}

/// bash's `test_binop` (and `=~`).
fn binary_op(w: &str) -> bool {
    matches!(
        w,
        "=" | "=="
            | "!="
            | "=~"
            | "!~"
            | "<"
            | ">"
            | "-nt"
            | "-ot"
            | "-ef"
            | "-eq"
            | "-ne"
            | "-lt"
            | "-le"
            | "-gt"
            | "-ge"
    )
}

/// Words brush-parser's `[[` grammar takes as operators wherever they are.
fn brush_special(w: &str) -> bool {
    w == "!" || unary_op(w) || binary_op(w)
}

struct Cond<'s, 'a> {
    scan: &'s mut Scan<'a>,
    /// The token after the last term (bash's `cond_token`).
    tok: Tok,
    /// Operand words to escape for brush-parser.
    escapes: Vec<usize>,
}

impl Scan<'_> {
    /// At `[[` in command position (`pos` on its first `[`): reads the command to
    /// its `]]`. Returns the error bash would report; on success the operands that
    /// look like operators are escaped, and `pos` is after `]]`.
    pub(super) fn cond_command(&mut self) -> Option<CondError> {
        let start = self.pos;
        self.pos += 2;
        let heredocs = self.heredocs.len();
        let edits = self.edits.len();
        let mut c = Cond {
            scan: self,
            tok: Tok::Eof,
            escapes: Vec::new(),
        };
        let result = c.command();
        let escapes = std::mem::take(&mut c.escapes);
        match result {
            Ok(()) => {
                for at in escapes {
                    self.edits.push(Edit {
                        start: at,
                        end: at,
                        text: "\\".into(),
                    });
                }
                None
            }
            Err(Stop::Error(mut e)) => {
                e.cmd = start;
                Some(e)
            }
            Err(Stop::NoOpinion) => {
                // Scan the text again the ordinary way.
                self.edits.truncate(edits);
                self.heredocs.truncate(heredocs);
                self.pos = start + 2;
                None
            }
        }
    }
}

impl Cond<'_, '_> {
    fn err<T>(&self, tok: Tok, message: &str) -> R<T> {
        if tok == Tok::Eof {
            return Err(Stop::NoOpinion);
        }
        Err(Stop::Error(CondError {
            cmd: 0,
            at: tok.at(self.scan.bytes.len()),
            message: message.to_string(),
        }))
    }

    fn text(&self, s: usize, e: usize) -> &str {
        self.scan.src.get(s..e).unwrap_or("")
    }

    fn command(&mut self) -> R<()> {
        self.or()?;
        match self.tok {
            Tok::End(_) => Ok(()),
            t => self.err(t, "syntax error in conditional expression"),
        }
    }

    fn or(&mut self) -> R<()> {
        self.and()?;
        if let Tok::OrOr(_) = self.tok {
            self.or()?;
        }
        Ok(())
    }

    fn and(&mut self) -> R<()> {
        self.term()?;
        if let Tok::AndAnd(_) = self.tok {
            self.and()?;
        }
        Ok(())
    }

    fn term(&mut self) -> R<()> {
        let tok = self.skip_newlines(Mode::Plain)?;
        match tok {
            Tok::End(_) => self.err(tok, "unexpected token `]]'"),
            Tok::Open(_) => {
                self.or()?;
                if !matches!(self.tok, Tok::Close(_)) {
                    return self.err(self.tok, "expected `)'");
                }
                self.tok = self.skip_newlines(Mode::Plain)?;
                Ok(())
            }
            Tok::Word(s, e) if self.text(s, e) == "!" => self.term(),
            Tok::Word(s, e) if unary_op(self.text(s, e)) => {
                let arg = self.next(Mode::Plain)?;
                let Tok::Word(s, e) = arg else {
                    return self.err(arg, "unexpected argument to conditional unary operator");
                };
                self.operand(s, e);
                self.tok = self.skip_newlines(Mode::Plain)?;
                Ok(())
            }
            Tok::Word(ls, le) => {
                let op = self.next(Mode::Plain)?;
                let mode = match op {
                    Tok::Word(s, e) if self.text(s, e) == "=~" => Mode::Regex,
                    Tok::Word(s, e) if binary_op(self.text(s, e)) => Mode::Plain,
                    Tok::Less(_) => Mode::Plain,
                    Tok::End(_) | Tok::AndAnd(_) | Tok::OrOr(_) | Tok::Close(_) => {
                        // `[[ x ]]` is `[[ -n x ]]`.
                        self.operand(ls, le);
                        self.tok = op;
                        return Ok(());
                    }
                    t => return self.err(t, "conditional binary operator expected"),
                };
                self.operand(ls, le);
                let rhs = self.next(mode)?;
                let Tok::Word(s, e) = rhs else {
                    return self.err(rhs, "unexpected argument to conditional binary operator");
                };
                if mode == Mode::Plain {
                    self.operand(s, e);
                }
                self.tok = self.skip_newlines(Mode::Plain)?;
                Ok(())
            }
            t => self.err(t, "unexpected token in conditional command"),
        }
    }

    /// An operand word: escaped when brush-parser would read it as an operator.
    fn operand(&mut self, s: usize, e: usize) {
        if brush_special(self.text(s, e)) {
            self.escapes.push(s);
        }
    }

    fn skip_newlines(&mut self, mode: Mode) -> R<Tok> {
        loop {
            match self.next(mode)? {
                Tok::Newline(_) => {}
                t => return Ok(t),
            }
        }
    }

    /// Reads the next token.
    fn next(&mut self, mode: Mode) -> R<Tok> {
        let sc = &mut *self.scan;
        loop {
            match sc.peek(0) {
                Some(b' ' | b'\t') => sc.pos += 1,
                Some(b'\\') if sc.peek(1) == Some(b'\n') => sc.pos += 2,
                Some(b'#') => sc.skip_comment(),
                _ => break,
            }
        }
        let at = sc.pos;
        let Some(b) = sc.peek(0) else {
            return Ok(Tok::Eof);
        };
        let b1 = sc.peek(1);
        let tok = match b {
            b'\n' => {
                sc.newline();
                return Ok(Tok::Newline(at));
            }
            b'&' if b1 == Some(b'&') => Tok::AndAnd(at),
            b'|' if b1 == Some(b'|') => Tok::OrOr(at),
            // A process substitution: not modelled.
            b'<' | b'>' if b1 == Some(b'(') => return Err(Stop::NoOpinion),
            b'(' if mode == Mode::Plain => Tok::Open(at),
            b')' => Tok::Close(at),
            b'<' | b'>' if !matches!(b1, Some(b'<' | b'>' | b'&' | b'|')) => Tok::Less(at),
            b';' | b'&' | b'|' | b'<' | b'>' => {
                // An operator bash rejects here; its length does not matter.
                sc.pos += 1;
                return Ok(Tok::OtherOp(at));
            }
            _ => return self.word(mode),
        };
        let sc = &mut *self.scan;
        sc.pos += match tok {
            Tok::AndAnd(_) | Tok::OrOr(_) => 2,
            _ => 1,
        };
        Ok(tok)
    }

    /// A word at `pos`; `]]` alone is the end of the command.
    fn word(&mut self, mode: Mode) -> R<Tok> {
        let sc = &mut *self.scan;
        let start = sc.pos;
        let mut depth: usize = 0;
        while let Some(b) = sc.peek(0) {
            if sc.skip_nested(b) {
                continue;
            }
            let prev = if sc.pos > start {
                sc.bytes.get(sc.pos - 1).copied()
            } else {
                None
            };
            match b {
                // An extended glob group `@(…)`, or a group of a regex.
                b'(' if mode == Mode::Regex
                    || matches!(prev, Some(b'@' | b'!' | b'*' | b'+' | b'?'))
                    || depth > 0 =>
                {
                    depth += 1;
                    sc.pos += 1;
                }
                b')' if depth > 0 => {
                    depth -= 1;
                    sc.pos += 1;
                }
                b'|' if depth > 0 || mode == Mode::Regex => sc.pos += 1,
                b'\n' if depth > 0 => return Err(Stop::NoOpinion),
                b' ' | b'\t' | b'<' | b'>' | b';' | b'&' if depth > 0 => sc.pos += 1,
                _ if is_word_end(b) => break,
                _ => sc.pos += 1,
            }
        }
        if depth > 0 {
            return Err(Stop::NoOpinion);
        }
        let end = sc.pos.min(sc.bytes.len());
        if end == start {
            return Err(Stop::NoOpinion);
        }
        if &sc.src[start..end] == "]]" {
            return Ok(Tok::End(start));
        }
        Ok(Tok::Word(start, end))
    }
}
