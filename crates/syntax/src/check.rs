//! The deep check: every word, substitution and arithmetic expression in a program
//! is parsed now, and constructs safesh does not implement are refused, so that
//! nothing in a script runs unless all of it can.

use crate::ast::{self, Command, CompoundCommand};
use crate::budget::Budget;
use crate::error::{ParseError, Position};
use brush_parser::word::{ParameterExpr, ParameterTransformOp, TildeExpr, WordPiece};

type Result<T = ()> = std::result::Result<T, ParseError>;

/// The deep check of one script, within a parse [`Budget`].
pub(crate) struct Checker<'b> {
    budget: &'b Budget<'b>,
}

impl<'b> Checker<'b> {
    /// A checker that polls `budget` once per command.
    pub(crate) fn new(budget: &'b Budget<'b>) -> Self {
        Checker { budget }
    }
}

impl Checker<'_> {
    /// Checks a whole program.
    pub(crate) fn program(&self, p: &ast::Program) -> Result {
        for cc in &p.complete_commands {
            self.compound_list(cc)?;
        }
        Ok(())
    }

    fn compound_list(&self, list: &ast::CompoundList) -> Result {
        for item in &list.0 {
            // Once per command: the check of a long script stops at its deadline.
            self.budget.check()?;
            self.pipeline(&item.0.first)?;
            for ao in &item.0.additional {
                match ao {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p)?,
                }
            }
        }
        Ok(())
    }

    fn pipeline(&self, p: &ast::Pipeline) -> Result {
        for c in &p.seq {
            self.command(c)?;
        }
        Ok(())
    }

    fn command(&self, c: &Command) -> Result {
        match c {
            Command::Simple(s) => {
                if let Some(prefix) = &s.prefix {
                    for item in &prefix.0 {
                        self.prefix_item(item)?;
                    }
                }
                if let Some(w) = &s.word_or_name {
                    self.word(w)?;
                }
                if let Some(suffix) = &s.suffix {
                    for item in &suffix.0 {
                        self.prefix_item(item)?;
                    }
                }
                Ok(())
            }
            Command::Compound(cc, redirects) => {
                self.compound(cc)?;
                self.redirect_list(redirects.as_ref())
            }
            Command::Function(f) => {
                self.word(&f.fname)?;
                self.compound(&f.body.0)?;
                self.redirect_list(f.body.1.as_ref())
            }
            Command::ExtendedTest(t, redirects) => {
                self.test_expr(&t.expr)?;
                self.redirect_list(redirects.as_ref())
            }
        }
    }

    fn test_expr(&self, e: &ast::ExtendedTestExpr) -> Result {
        use ast::ExtendedTestExpr as E;
        match e {
            E::And(a, b) | E::Or(a, b) => {
                self.test_expr(a)?;
                self.test_expr(b)
            }
            E::Not(a) | E::Parenthesized(a) => self.test_expr(a),
            E::UnaryTest(_, w) => self.word(w),
            E::BinaryTest(_, a, b) => {
                self.word(a)?;
                self.word(b)
            }
        }
    }

    fn compound(&self, c: &CompoundCommand) -> Result {
        match c {
            CompoundCommand::Arithmetic(a) => {
                self.arith_text(&a.expr.value, Some(&a.loc))?;
                // `( ( cmd ) )` reads as `((…))`; like bash, fall back to nested
                // subshells (checked here as a program). Text that is neither fails
                // when it runs, as in bash.
                if crate::arith::looks_like_commands(&a.expr.value)
                    && let Ok(p) = crate::parse_program(&a.expr.value)
                {
                    return self.program(&p);
                }
                Ok(())
            }
            CompoundCommand::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater]
                    .into_iter()
                    .flatten()
                {
                    self.arith_text(&e.value, Some(&f.loc))?;
                }
                self.compound_list(&f.body.list)
            }
            CompoundCommand::BraceGroup(b) => self.compound_list(&b.list),
            CompoundCommand::Subshell(s) => self.compound_list(&s.list),
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.word(w)?;
                }
                self.compound_list(&f.body.list)
            }
            CompoundCommand::CaseClause(c) => {
                self.word(&c.value)?;
                for item in &c.cases {
                    for p in &item.patterns {
                        self.word(p)?;
                    }
                    if let Some(cmd) = &item.cmd {
                        self.compound_list(cmd)?;
                    }
                }
                Ok(())
            }
            CompoundCommand::IfClause(i) => {
                self.compound_list(&i.condition)?;
                self.compound_list(&i.then)?;
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.compound_list(c)?;
                    }
                    self.compound_list(&e.body)?;
                }
                Ok(())
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.compound_list(&w.0)?;
                self.compound_list(&w.1.list)
            }
            CompoundCommand::Coprocess(c) => Err(not_supported("coproc", Some(&c.loc))),
        }
    }

    fn prefix_item(&self, item: &ast::CommandPrefixOrSuffixItem) -> Result {
        use ast::CommandPrefixOrSuffixItem as I;
        match item {
            I::IoRedirect(r) => self.redirect(r),
            I::Word(w) => self.word(w),
            I::AssignmentWord(a, w) => {
                match &a.value {
                    ast::AssignmentValue::Scalar(v) => self.word(v)?,
                    ast::AssignmentValue::Array(items) => {
                        for (k, v) in items {
                            if let Some(k) = k {
                                self.word(k)?;
                            }
                            self.word(v)?;
                        }
                    }
                }
                let _ = w;
                Ok(())
            }
            I::ProcessSubstitution(kind, s) => self.process_substitution(kind, s),
        }
    }

    /// `<(cmd)` is supported (its output becomes a temporary file); `>(cmd)` is not.
    fn process_substitution(
        &self,
        kind: &ast::ProcessSubstitutionKind,
        s: &ast::SubshellCommand,
    ) -> Result {
        match kind {
            ast::ProcessSubstitutionKind::Read => self.compound_list(&s.list),
            ast::ProcessSubstitutionKind::Write => Err(not_supported(
                "output process substitution >(…); write to a temporary file, then run the command on it",
                Some(&s.loc),
            )),
        }
    }

    fn redirect_list(&self, r: Option<&ast::RedirectList>) -> Result {
        for r in r.iter().flat_map(|l| l.0.iter()) {
            self.redirect(r)?;
        }
        Ok(())
    }

    fn redirect(&self, r: &ast::IoRedirect) -> Result {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        match r {
            R::File(_, kind, target) => {
                if matches!(kind, K::ReadAndWrite) {
                    return Err(not_supported("the <> redirection", None));
                }
                match target {
                    T::Filename(w) | T::Duplicate(w) => self.word(w),
                    T::Fd(_) => Ok(()),
                    T::ProcessSubstitution(kind, s) => self.process_substitution(kind, s),
                }
            }
            R::HereDocument(_, doc) => {
                if doc.requires_expansion {
                    let pieces = crate::parse_heredoc(&doc.doc.value)
                        .map_err(|e| e.at(word_pos(&doc.doc)))?;
                    self.pieces_check(&pieces, word_pos(&doc.doc))
                } else {
                    Ok(())
                }
            }
            R::HereString(_, w) => self.word(w),
            R::OutputAndError(w, _) => self.word(w),
        }
    }

    /// Checks one word: its pieces, and recursively any text nested in them.
    fn word(&self, w: &ast::Word) -> Result {
        let base = word_pos(w);
        let pieces = crate::parse_word(&w.value).map_err(|e| e.at(base))?;
        self.pieces_check(&pieces, base)
    }

    fn raw_word(&self, text: &str, base: Position) -> Result {
        let pieces = crate::parse_word(text).map_err(|e| e.at(base))?;
        self.pieces_check(&pieces, base)
    }

    fn pieces_check(
        &self,
        pieces: &[brush_parser::word::WordPieceWithSource],
        base: Position,
    ) -> Result {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(_)
                | WordPiece::SingleQuotedText(_)
                | WordPiece::AnsiCQuotedText(_)
                | WordPiece::EscapeSequence(_) => {}
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.pieces_check(inner, base)?
                }
                WordPiece::TildeExpansion(t) => match t {
                    TildeExpr::Home | TildeExpr::WorkingDir | TildeExpr::OldWorkingDir => {}
                    TildeExpr::UserHome(_) => {}
                    _ => return Err(not_supported_at("the directory stack (~N)", base)),
                },
                WordPiece::ParameterExpansion(e) => self.param_expr(e, base)?,
                WordPiece::CommandSubstitution(text) => self.substitution(text, base)?,
                WordPiece::BackquotedCommandSubstitution(text) => {
                    self.substitution(&unescape_backquoted(text), base)?
                }
                WordPiece::ArithmeticExpression(e) => {
                    self.arith_text(&e.value, None).map_err(|e| e.at(base))?
                }
            }
        }
        Ok(())
    }

    fn substitution(&self, text: &str, base: Position) -> Result {
        let program = crate::parse_program(text).map_err(|e| e.at(base))?;
        self.program_at(&program, base)
    }

    fn program_at(&self, p: &ast::Program, base: Position) -> Result {
        self.program(p).map_err(|e| e.at(base))
    }

    fn param_expr(&self, e: &ParameterExpr, base: Position) -> Result {
        use ParameterExpr as P;
        let texts: Vec<&str> = match e {
            P::UseDefaultValues { default_value, .. }
            | P::AssignDefaultValues { default_value, .. } => {
                default_value.iter().map(String::as_str).collect()
            }
            P::IndicateErrorIfNullOrUnset { error_message, .. } => {
                error_message.iter().map(String::as_str).collect()
            }
            P::UseAlternativeValue {
                alternative_value, ..
            } => alternative_value.iter().map(String::as_str).collect(),
            P::RemoveSmallestSuffixPattern { pattern, .. }
            | P::RemoveLargestSuffixPattern { pattern, .. }
            | P::RemoveSmallestPrefixPattern { pattern, .. }
            | P::RemoveLargestPrefixPattern { pattern, .. }
            | P::UppercaseFirstChar { pattern, .. }
            | P::UppercasePattern { pattern, .. }
            | P::LowercaseFirstChar { pattern, .. }
            | P::LowercasePattern { pattern, .. } => pattern.iter().map(String::as_str).collect(),
            P::ReplaceSubstring {
                pattern,
                replacement,
                ..
            } => std::iter::once(pattern.as_str())
                .chain(replacement.iter().map(String::as_str))
                .collect(),
            P::Substring { offset, length, .. } => {
                self.arith_text(&offset.value, None)
                    .map_err(|e| e.at(base))?;
                if let Some(l) = length {
                    self.arith_text(&l.value, None).map_err(|e| e.at(base))?;
                }
                Vec::new()
            }
            P::Transform { op, .. } => {
                if !matches!(
                    op,
                    ParameterTransformOp::ToUpperCase
                        | ParameterTransformOp::ToLowerCase
                        | ParameterTransformOp::Quoted
                        | ParameterTransformOp::CapitalizeInitial
                        | ParameterTransformOp::ExpandEscapeSequences
                        | ParameterTransformOp::ToAssignmentLogic
                        | ParameterTransformOp::ToAttributeFlags
                        | ParameterTransformOp::PossiblyQuoteWithArraysExpanded { .. }
                ) {
                    return Err(not_supported_at(
                        "this ${var@…} transformation (supported: @U @L @u @Q @E @A @a @K @k)",
                        base,
                    ));
                }
                Vec::new()
            }
            _ => Vec::new(),
        };
        for t in texts {
            self.raw_word(t, base)?;
        }
        Ok(())
    }

    /// Checks an arithmetic expression's expansions. Its own syntax is checked
    /// when it is evaluated: as in bash, `$((08))` fails at its line (status 1),
    /// it does not stop the script from starting.
    fn arith_text(&self, text: &str, loc: Option<&brush_parser::SourceSpan>) -> Result {
        let base = loc.map(|l| pos(&l.start)).unwrap_or_default();
        let pieces = crate::parse_heredoc(text).map_err(|e| e.at(base))?;
        self.pieces_check(&pieces, base)
    }
}

fn not_supported(what: impl Into<String>, loc: Option<&brush_parser::SourceSpan>) -> ParseError {
    ParseError::NotSupported {
        what: what.into(),
        position: loc.map(|l| pos(&l.start)).unwrap_or_default(),
    }
}

fn pos(p: &brush_parser::SourcePosition) -> Position {
    Position {
        line: p.line,
        column: p.column,
    }
}

fn word_pos(w: &ast::Word) -> Position {
    w.loc.as_ref().map(|l| pos(&l.start)).unwrap_or_default()
}

fn not_supported_at(what: &str, position: Position) -> ParseError {
    ParseError::NotSupported {
        what: what.to_string(),
        position,
    }
}

/// The text inside backquotes, with the backslash escapes bash removes first.
pub fn unescape_backquoted(text: &str) -> String {
    unescape_backquoted_in(text, false)
}

/// [`unescape_backquoted`] for backquotes inside double quotes, where `\"`
/// loses its backslash too.
pub fn unescape_backquoted_in_dquotes(text: &str) -> String {
    unescape_backquoted_in(text, true)
}

fn unescape_backquoted_in(text: &str, dquoted: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some(&n) if n == '$' || n == '`' || n == '\\' || (dquoted && n == '"') => {
                    out.push(n);
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}
