//! Word expansion: braces, tilde, parameters, command substitution, arithmetic,
//! field splitting, pathname expansion and quote removal — each result labeled with
//! the join of everything it was made from.

mod operand;

use super::{Exec, Shell, Stop, Value};
use crate::error::Refusal;
use crate::io::{Sink, lock};
use safesh_label::Label;
use safesh_syntax::ast;
use safesh_syntax::word::{
    BraceExpressionMember, BraceExpressionOrText, Parameter, ParameterExpr, ParameterTestType,
    ParameterTransformOp, SpecialParameter, SubstringMatchKind, TildeExpr, WordPiece,
    WordPieceWithSource,
};
use std::sync::Arc;

/// The most unmatched `{` in one word that brace expansion is attempted on.
const MAX_UNMATCHED_BRACES: usize = 6;

/// Counts `{` without a closing `}` (outside quotes and escapes).
fn unmatched_braces(raw: &str) -> usize {
    let mut open = 0usize;
    let mut unmatched_closes_ignored = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in raw.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (_, '\\') if quote != Some('\'') => escaped = true,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, '{') => open += 1,
            (None, '}') => {
                if open > 0 {
                    open -= 1;
                } else {
                    unmatched_closes_ignored += 1;
                }
            }
            _ => {}
        }
    }
    let _ = unmatched_closes_ignored;
    open
}

/// One expanded word.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Field {
    pub text: String,
    pub label: Label,
}

/// A field being built: its text, the same text as a glob pattern (quoted
/// characters escaped), whether an unquoted glob character occurs, and whether it
/// must survive even when empty (it had quotes).
#[derive(Default, Clone)]
struct FieldBuf {
    text: String,
    pattern: String,
    regex: String,
    glob: bool,
    keep: bool,
    label: Label,
}

impl FieldBuf {
    fn push_quoted(&mut self, s: &str) {
        if s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b' ' || b == b'_')
        {
            // Nothing to escape: the common case.
            self.regex.push_str(s);
            self.pattern.push_str(s);
            self.text.push_str(s);
            return;
        }
        self.regex.push_str(&regex::escape(s));
        for c in s.chars() {
            // `&` too: in a `${x/p/rep}` replacement a quoted `&` is literal;
            // `(`, `)`, `|`: a quoted `*'()'` is no extglob `*(…)`; `-`, `!`,
            // `^`: in a bracket (`[C\-D]`) a quoted one is a member, not a
            // range or a negation.
            if matches!(
                c,
                '*' | '?' | '[' | ']' | '\\' | '&' | '(' | ')' | '|' | '-' | '!' | '^'
            ) {
                self.pattern.push('\\');
            }
            self.pattern.push(c);
        }
        self.text.push_str(s);
    }

    fn push_unquoted_char(&mut self, c: char) {
        if matches!(c, '*' | '?' | '[' | '(') {
            self.glob = true;
        }
        self.pattern.push(c);
        self.regex.push(c);
        self.text.push(c);
    }
}

/// Accumulates fields while a word is expanded.
struct Acc {
    fields: Vec<FieldBuf>,
    cur: FieldBuf,
    pending_break: bool,
    ifs: String,
    /// IFS as bytes, when each byte is a delimiter of its own (the C locale and
    /// an IFS with a multibyte character, as in bash).
    ifs_bytes: Option<Vec<u8>>,
    split: bool,
    /// Where a `~` after an unquoted `:` (or the first `=`) also expands, as in
    /// assignments.
    tildes: TildeMode,
    /// The word of a `${x:-word}` inside double quotes: quotes in it are literal
    /// text and `~` is not expanded.
    in_dquote: bool,
    /// The word of an unquoted `${x:-word}` being expanded in place: its
    /// unquoted text is split like an expansion's result.
    operand: bool,
}

/// Which `~` of a word's unquoted text are tilde prefixes besides the first.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TildeMode {
    /// Only a word's leading `~` (the parser finds it).
    Leading,
    /// An assignment's value: also after each unquoted `:`.
    Colons,
    /// A word that looks like `name=value` (an argument of `declare`, `echo`):
    /// also after the first `=` and after each `:`.
    AssignmentWord,
}

impl Acc {
    fn new(ifs: String, split: bool) -> Self {
        Acc {
            fields: Vec::new(),
            cur: FieldBuf::default(),
            pending_break: false,
            ifs,
            ifs_bytes: None,
            split,
            tildes: TildeMode::Leading,
            in_dquote: false,
            operand: false,
        }
    }

    fn finish(&mut self) {
        let f = std::mem::take(&mut self.cur);
        self.fields.push(f);
        self.pending_break = false;
    }

    fn apply_pending(&mut self) {
        if self.pending_break {
            self.finish();
        }
    }

    fn quoted(&mut self, s: &str, label: &Label) {
        self.apply_pending();
        self.cur.keep = true;
        self.cur.push_quoted(s);
        self.cur.label.join_assign(label);
    }

    /// Literal unquoted text from the script (globs active, no splitting).
    fn literal(&mut self, s: &str, label: &Label) {
        self.apply_pending();
        self.cur.text.reserve(s.len());
        self.cur.pattern.reserve(s.len());
        self.cur.regex.reserve(s.len());
        for c in s.chars() {
            self.cur.push_unquoted_char(c);
        }
        self.cur.label.join_assign(label);
    }

    /// The result of an unquoted expansion: split on IFS, globs active.
    fn unquoted(&mut self, s: &str, label: &Label) {
        if !self.split {
            self.apply_pending();
            for c in s.chars() {
                self.cur.push_unquoted_char(c);
            }
            self.cur.label.join_assign(label);
            return;
        }
        if let Some(ifs) = self.ifs_bytes.take() {
            self.unquoted_bytes(s, label, &ifs);
            self.ifs_bytes = Some(ifs);
            return;
        }
        for c in s.chars() {
            if self.ifs.contains(c) {
                self.delimiter(matches!(c, ' ' | '\t' | '\n'), label);
            } else {
                self.apply_pending();
                self.cur.push_unquoted_char(c);
                self.cur.label.join_assign(label);
            }
        }
    }

    /// An IFS delimiter: a blank ends the field at the next text; any other
    /// ends it now, even an empty one.
    fn delimiter(&mut self, blank: bool, label: &Label) {
        if blank {
            if !self.cur.text.is_empty() || self.cur.keep {
                self.pending_break = true;
            }
        } else {
            self.cur.label.join_assign(label);
            self.cur.keep = true;
            self.finish();
        }
    }

    /// [`Acc::unquoted`] in the C locale with a multibyte IFS: every byte of IFS
    /// delimits (bash), and the bytes between delimiters are the fields' text.
    fn unquoted_bytes(&mut self, s: &str, label: &Label, ifs: &[u8]) {
        let bytes = safesh_utils::word_bytes::word_to_bytes(s);
        let mut run: Vec<u8> = Vec::new();
        let flush = |acc: &mut Acc, run: &mut Vec<u8>| {
            if run.is_empty() {
                return;
            }
            acc.apply_pending();
            for c in safesh_utils::word_bytes::word_from_bytes(run).chars() {
                acc.cur.push_unquoted_char(c);
            }
            acc.cur.label.join_assign(label);
            run.clear();
        };
        for &b in bytes.iter() {
            if !ifs.contains(&b) {
                run.push(b);
                continue;
            }
            flush(self, &mut run);
            self.delimiter(matches!(b, b' ' | b'\t' | b'\n'), label);
        }
        flush(self, &mut run);
    }

    /// Ends the current field unconditionally (between "$@" elements).
    fn hard_break(&mut self) {
        self.pending_break = false;
        self.cur.keep = true;
        let f = std::mem::take(&mut self.cur);
        self.fields.push(f);
    }

    fn done(mut self) -> Vec<FieldBuf> {
        let cur = std::mem::take(&mut self.cur);
        self.fields.push(cur);
        self.fields
            .into_iter()
            .filter(|f| f.keep || !f.text.is_empty())
            .collect()
    }
}

/// A parameter's value before operators apply.
enum PV {
    Unset,
    One(String),
    Many(Vec<String>, bool),
}

impl Shell {
    fn words_cached(&self, raw: &str) -> Result<Arc<Vec<WordPieceWithSource>>, Stop> {
        if let Some(p) = lock(&self.shared.word_cache).get(raw) {
            return Ok(p.clone());
        }
        let pieces = safesh_syntax::parse_word(raw).map_err(Refusal::from)?;
        let pieces = Arc::new(join_dollar_brace(pieces));
        let mut cache = lock(&self.shared.word_cache);
        if cache.len() > 65536 {
            cache.clear();
        }
        cache.insert(raw.to_string(), pieces.clone());
        Ok(pieces)
    }

    /// Expands a word into fields (brace, split, glob).
    pub(crate) fn expand_word_fields(&mut self, w: &ast::Word) -> Result<Vec<Field>, Stop> {
        self.expand_word_fields_as(w, false)
    }

    /// [`Shell::expand_word_fields`]; `assignment_like`: the word has the form
    /// `name=value` (then `~` after `=` and `:` expands too, as in bash).
    pub(crate) fn expand_word_fields_as(
        &mut self,
        w: &ast::Word,
        assignment_like: bool,
    ) -> Result<Vec<Field>, Stop> {
        let mut out = Vec::new();
        for raw in self.brace_expand(&w.value)? {
            let pieces = self.words_cached(&raw)?;
            let ifs = self.ifs();
            let ifs_bytes = (!ifs.is_ascii() && !self.utf8_locale())
                .then(|| safesh_utils::word_bytes::word_to_bytes(&ifs).into_owned());
            let mut acc = Acc::new(ifs, true);
            acc.ifs_bytes = ifs_bytes;
            if assignment_like {
                acc.tildes = TildeMode::AssignmentWord;
            }
            self.expand_pieces(&pieces, &mut acc, false)?;
            for f in acc.done() {
                self.check_size(f.text.len())?;
                if f.glob && !self.opts.noglob && super::pattern::has_glob(&f.pattern) {
                    // A set GLOBIGNORE also turns on dotglob (bash).
                    let ignore = self.var_str("GLOBIGNORE");
                    let opts = super::pattern::GlobOptions {
                        dotglob: self.shopt.dotglob || !ignore.is_empty(),
                        nocase: self.shopt.nocaseglob,
                        globstar: self.shopt.globstar,
                        utf8: self.utf8_locale(),
                    };
                    // Listing a directory outside the read roots is refused, like
                    // reading it (a pattern must not leak names from there).
                    let mut refused = None;
                    let matches = super::pattern::glob(
                        &self.cwd,
                        &f.pattern,
                        opts,
                        &mut |d| match self.check_read_path(d) {
                            Ok(()) => true,
                            Err(r) => {
                                refused.get_or_insert(r);
                                false
                            }
                        },
                        &mut |p| self.check_read_path(p).is_ok(),
                    );
                    if let Some(r) = refused {
                        return Err(r.into());
                    }
                    let mut matches = matches;
                    if !ignore.is_empty() {
                        let utf8 = self.utf8_locale();
                        matches.retain(|m| {
                            let base = m.rsplit('/').next().unwrap_or(m);
                            base != "."
                                && base != ".."
                                && !ignore
                                    .split(':')
                                    .filter(|p| !p.is_empty())
                                    .any(|p| super::pattern::matches(p, m, false, utf8))
                        });
                    }
                    if matches.is_empty() && self.shopt.failglob {
                        let stop = self.abort(format!("no match: {}", f.text));
                        // Unlike other expansion errors, it ends a `set -e` shell.
                        return Err(if self.opts.errexit { Stop::Exit } else { stop });
                    }
                    if matches.is_empty() && self.shopt.nullglob {
                        continue;
                    }
                    if !matches.is_empty() {
                        // A match is names read from the disk: each carries the
                        // labels of the names it is made of (`touch "$(cat .env)"`
                        // then `echo *`). Looked up only when some name is labeled.
                        let names = self.names();
                        for m in matches {
                            let label = match &names {
                                Some(n) => f.label.join(&self.match_names_label(n, &m)),
                                None => f.label.clone(),
                            };
                            out.push(Field { text: m, label });
                        }
                        continue;
                    }
                }
                out.push(Field {
                    text: f.text,
                    label: f.label,
                });
            }
        }
        Ok(out)
    }

    /// The join of the name labels of the components of the glob match `m`
    /// (relative to the cwd or absolute), from the names the directory holds.
    fn match_names_label(&self, names: &crate::names::NameMap, m: &str) -> Label {
        let full = self.cwd.join(m);
        let depth = std::path::Path::new(m).components().count();
        full.ancestors()
            .take(depth)
            .filter_map(|p| crate::names::entry_label(names, p))
            .fold(Label::empty(), |a, l| a.join(&l))
    }

    /// Expands a word to exactly one string (no brace expansion, splitting or globbing):
    /// assignments, `case` subjects, redirection targets, here-strings.
    pub(crate) fn expand_word_single(&mut self, w: &ast::Word) -> Result<Field, Stop> {
        self.expand_raw_single(&w.value)
    }

    /// An assignment's value (`x=~/a:~/b`: `~` after `:` expands too).
    pub(crate) fn expand_assigned_value(&mut self, w: &ast::Word) -> Result<Field, Stop> {
        self.expand_raw_single_as(&w.value, TildeMode::Colons, false)
    }

    /// A declaration builtin's `name=value` argument (`declare d=~/x:~/y`).
    pub(crate) fn expand_declaration_word(&mut self, w: &ast::Word) -> Result<Field, Stop> {
        self.expand_raw_single_as(&w.value, TildeMode::AssignmentWord, false)
    }

    /// [`Shell::expand_word_single`] on raw word text.
    pub(crate) fn expand_raw_single(&mut self, raw: &str) -> Result<Field, Stop> {
        self.expand_raw_single_as(raw, TildeMode::Leading, false)
    }

    /// The word of `${x:-word}` (and `:=`, `:+`, `:?`): inside double quotes
    /// (`in_dquote`) its quotes stay literal and `~` does not expand.
    fn expand_operand(&mut self, raw: &str, in_dquote: bool) -> Result<Field, Stop> {
        self.expand_raw_single_as(raw, TildeMode::Leading, in_dquote)
    }

    fn expand_raw_single_as(
        &mut self,
        raw: &str,
        tildes: TildeMode,
        in_dquote: bool,
    ) -> Result<Field, Stop> {
        let pieces = self.words_cached(raw)?;
        let mut acc = Acc::new(String::new(), false);
        acc.tildes = tildes;
        acc.in_dquote = in_dquote;
        self.expand_pieces(&pieces, &mut acc, false)?;
        let mut text = String::new();
        let mut label = Label::empty();
        for (i, f) in acc.done().into_iter().enumerate() {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(&f.text);
            label.join_assign(&f.label);
        }
        self.check_size(text.len())?;
        Ok(Field { text, label })
    }

    /// Expands a word as a pattern: quoted characters are escaped.
    pub(crate) fn expand_pattern(&mut self, w: &ast::Word) -> Result<String, Stop> {
        self.expand_raw_pattern(&w.value)
    }

    /// [`Shell::expand_raw_pattern`] with the label of what it read.
    fn expand_raw_pattern_labeled(&mut self, raw: &str) -> Result<Field, Stop> {
        let pieces = self.words_cached(raw)?;
        let mut acc = Acc::new(String::new(), false);
        self.expand_pieces(&pieces, &mut acc, false)?;
        let mut text = String::new();
        let mut label = Label::empty();
        for (i, f) in acc.done().into_iter().enumerate() {
            if i > 0 {
                text.push(' ');
            }
            text.push_str(&f.pattern);
            label.join_assign(&f.label);
        }
        Ok(Field { text, label })
    }

    pub(crate) fn expand_raw_pattern(&mut self, raw: &str) -> Result<String, Stop> {
        let pieces = self.words_cached(raw)?;
        let mut acc = Acc::new(String::new(), false);
        self.expand_pieces(&pieces, &mut acc, false)?;
        let mut pat = String::new();
        for (i, f) in acc.done().into_iter().enumerate() {
            if i > 0 {
                pat.push(' ');
            }
            pat.push_str(&f.pattern);
        }
        Ok(pat)
    }

    /// Expands a word as a regular expression: quoted parts match literally.
    pub(crate) fn expand_regex(&mut self, w: &ast::Word) -> Result<(String, Label), Stop> {
        let pieces = self.words_cached(&w.value)?;
        let mut acc = Acc::new(String::new(), false);
        self.expand_pieces(&pieces, &mut acc, false)?;
        let mut re = String::new();
        let mut label = Label::empty();
        for f in acc.done() {
            re.push_str(&f.regex);
            label.join_assign(&f.label);
        }
        Ok((re, label))
    }

    /// Expands a here-document body (no splitting; quotes are literal).
    pub(crate) fn expand_heredoc(&mut self, raw: &str) -> Result<Field, Stop> {
        let joined = join_continued_lines(raw);
        let pieces = safesh_syntax::parse_heredoc(&joined).map_err(Refusal::from)?;
        let mut acc = Acc::new(String::new(), false);
        self.expand_pieces(&pieces, &mut acc, true)?;
        let mut text = String::new();
        let mut label = Label::empty();
        for f in acc.done() {
            text.push_str(&f.text);
            label.join_assign(&f.label);
        }
        Ok(Field { text, label })
    }

    /// True when the locale variables name UTF-8 (then lengths count characters,
    /// otherwise bytes, as bash does in the C locale).
    pub(crate) fn utf8_locale(&self) -> bool {
        for name in ["LC_ALL", "LC_CTYPE", "LANG"] {
            let v = self.var_str(name);
            if !v.is_empty() {
                let v = v.to_ascii_lowercase();
                return v.contains("utf-8") || v.contains("utf8");
            }
        }
        false
    }

    /// True when IFS is set and empty (no field splitting).
    fn ifs_is_empty(&self) -> bool {
        self.vars.get("IFS").is_some_and(|v| v.as_str().is_empty())
    }

    /// What `"$*"` and `"${a[*]}"` put between items: IFS's first character,
    /// or in the C locale its first byte (bash's `ü` in IFS joins with `\xc3`).
    fn ifs_join_separator(&self) -> String {
        let ifs = self.ifs();
        let Some(first) = ifs.chars().next() else {
            return String::new();
        };
        if first.is_ascii() || self.utf8_locale() {
            return first.to_string();
        }
        let mut bytes = [0u8; 4];
        match first.encode_utf8(&mut bytes).as_bytes().first() {
            Some(&b) => safesh_utils::word_bytes::escape_byte(b).to_string(),
            None => String::new(),
        }
    }

    pub(crate) fn ifs(&self) -> String {
        match self.vars.get("IFS") {
            Some(v) => v.as_str().to_string(),
            None => " \t\n".to_string(),
        }
    }

    fn brace_expand(&self, raw: &str) -> Result<Vec<String>, Stop> {
        if !raw.contains('{') {
            return Ok(vec![raw.to_string()]);
        }
        // brush-parser's brace grammar backtracks exponentially in the number of
        // unmatched `{`; beyond a few a word is left unexpanded rather than hang.
        if unmatched_braces(raw) > MAX_UNMATCHED_BRACES {
            return Ok(vec![raw.to_string()]);
        }
        let parsed = safesh_syntax::catch_quietly(|| {
            safesh_syntax::word::parse_brace_expansions(raw, &safesh_syntax::options())
        });
        let Ok(Ok(Some(pieces))) = parsed else {
            return Ok(vec![raw.to_string()]);
        };
        let limit = self.shared.limits.brace_expansion;
        let mut widths = sequence_widths(raw).into_iter();
        let out = brace_product(&pieces, limit, &mut widths)?;
        Ok(out)
    }

    fn expand_pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        acc: &mut Acc,
        heredoc: bool,
    ) -> Exec {
        let agent = self.code_label.clone();
        for (i, p) in pieces.iter().enumerate() {
            match &p.piece {
                WordPiece::Text(t) if acc.operand && !heredoc && !has_unparsed_brace(t) => {
                    acc.unquoted(t, &agent);
                }
                WordPiece::Text(t) if !heredoc && has_unparsed_brace(t) => {
                    self.expand_unparsed_braces(t, acc, &agent)?;
                }
                WordPiece::Text(t) => {
                    if heredoc {
                        acc.quoted(t, &agent);
                    } else if acc.tildes != TildeMode::Leading && !acc.in_dquote {
                        let first = i == 0;
                        let last = i + 1 == pieces.len();
                        self.text_with_tildes(t, acc, first, last, &agent);
                    } else {
                        acc.literal(t, &agent);
                    }
                }
                WordPiece::SingleQuotedText(t) if acc.in_dquote => {
                    // In `"${u:-'…'}"` the quotes are text and what is between
                    // them is double-quoted: `$var` there expands (bash).
                    acc.quoted("'", &agent);
                    if t.contains(['$', '`', '\\']) && !t.contains('"') {
                        let pieces = self.words_cached(&format!("\"{t}\""))?;
                        for p in pieces.iter() {
                            if let WordPiece::DoubleQuotedSequence(inner) = &p.piece {
                                self.expand_quoted(inner, acc)?;
                            }
                        }
                    } else {
                        acc.quoted(t, &agent);
                    }
                    acc.quoted("'", &agent);
                }
                WordPiece::TildeExpansion(t) if acc.in_dquote => acc.quoted(&tilde_text(t), &agent),
                WordPiece::SingleQuotedText(t) => acc.quoted(t, &agent),
                WordPiece::AnsiCQuotedText(t) => {
                    let utf8 = self.utf8_locale();
                    acc.quoted(&ansi_c_unescape(t, utf8), &agent)
                }
                WordPiece::EscapeSequence(e) => {
                    let rest: String = e.chars().skip(1).collect();
                    if rest == "\n" {
                        continue;
                    }
                    if heredoc && !matches!(rest.as_str(), "$" | "`" | "\\") {
                        acc.quoted(e, &agent);
                    } else {
                        acc.quoted(&rest, &agent);
                    }
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    acc.apply_pending();
                    acc.cur.keep = true;
                    self.expand_quoted(inner, acc)?;
                }
                WordPiece::TildeExpansion(t) => {
                    let (s, l) = self.tilde(t);
                    acc.quoted(&s, &l);
                }
                WordPiece::ParameterExpansion(e) => {
                    let in_place = if heredoc || acc.in_dquote {
                        None
                    } else {
                        self.expand_operand_in_place(e, acc)?
                    };
                    let (pv, label) = match in_place {
                        Some(v) => v,
                        None => self.param_expr(e, heredoc || acc.in_dquote)?,
                    };
                    match pv {
                        PV::Unset => {}
                        PV::One(s) => {
                            if heredoc {
                                acc.quoted(&s, &label)
                            } else {
                                acc.unquoted(&s, &label)
                            }
                        }
                        PV::Many(items, concat) => {
                            if heredoc || (concat && !acc.split) {
                                let sep = self.ifs_join_separator();
                                let sep = if heredoc && !concat {
                                    " ".to_string()
                                } else {
                                    sep
                                };
                                acc.quoted(&items.join(&sep), &label);
                            } else if !acc.split {
                                acc.unquoted(&items.join(" "), &label);
                            } else {
                                for (i, it) in items.iter().enumerate() {
                                    if i > 0 {
                                        acc.pending_break =
                                            !acc.cur.text.is_empty() || acc.cur.keep;
                                        acc.apply_pending();
                                    }
                                    acc.unquoted(it, &label);
                                }
                            }
                        }
                    }
                }
                WordPiece::CommandSubstitution(text) => {
                    let f = self.command_substitution(text)?;
                    if heredoc {
                        acc.quoted(&f.text, &f.label)
                    } else {
                        acc.unquoted(&f.text, &f.label)
                    }
                }
                WordPiece::BackquotedCommandSubstitution(text) => {
                    let text = safesh_syntax::unescape_backquoted(text);
                    let f = self.command_substitution(&text)?;
                    if heredoc {
                        acc.quoted(&f.text, &f.label)
                    } else {
                        acc.unquoted(&f.text, &f.label)
                    }
                }
                WordPiece::ArithmeticExpression(e) => {
                    let (v, l) = self.eval_arith_labeled(&e.value)?;
                    let l = agent.join(&l);
                    if heredoc {
                        acc.quoted(&v.to_string(), &l)
                    } else {
                        acc.unquoted(&v.to_string(), &l)
                    }
                }
            }
        }
        Ok(())
    }

    /// `${NAME~}` and `${NAME~~}` (toggle the case of the first or every
    /// letter), which brush-parser leaves as literal text: the text around
    /// them stays literal, each one expands to its toggled value (split and
    /// globbed outside double quotes, as any `${…}`).
    fn expand_unparsed_braces(&mut self, t: &str, acc: &mut Acc, agent: &Label) -> Exec {
        let utf8 = self.utf8_locale();
        let mut rest = t;
        while let Some(k) = rest.find("${") {
            acc.literal(&rest[..k], agent);
            let (param, all, after) = match unparsed_at(&rest[k..]) {
                Unparsed::CaseToggle(name, all, after) => {
                    let param = match name.parse::<u32>() {
                        Ok(n) => Parameter::Positional(n),
                        Err(_) => Parameter::Named(name.to_string()),
                    };
                    (param, Some(all), after)
                }
                Unparsed::LastJob(after) => (
                    Parameter::Special(SpecialParameter::LastBackgroundProcessId),
                    None,
                    after,
                ),
                Unparsed::Bad(form) => {
                    return Err(self.abort(format!("{form}: bad substitution")));
                }
            };
            let (pv, label) = self.param_value(&param, false)?;
            let value = match (pv, all) {
                (PV::One(v), Some(all)) => toggle_case(&v, all, utf8),
                (PV::One(v), None) => v,
                _ => String::new(),
            };
            if acc.in_dquote {
                acc.quoted(&value, &label);
            } else {
                acc.unquoted(&value, &label);
            }
            rest = after;
        }
        acc.literal(rest, agent);
        Ok(())
    }

    /// Pieces inside double quotes: no splitting or globbing; "$@" still makes fields.
    fn expand_quoted(&mut self, pieces: &[WordPieceWithSource], acc: &mut Acc) -> Exec {
        let agent = self.code_label.clone();
        for p in pieces {
            match &p.piece {
                WordPiece::Text(t) if has_unparsed_brace(t) => {
                    self.expand_unparsed_braces(t, acc, &agent)?;
                }
                WordPiece::Text(t) | WordPiece::SingleQuotedText(t) => acc.quoted(t, &agent),
                WordPiece::AnsiCQuotedText(t) => acc.quoted(t, &agent),
                WordPiece::EscapeSequence(e) => {
                    let rest: String = e.chars().skip(1).collect();
                    if rest == "\n" {
                        continue;
                    }
                    if matches!(rest.as_str(), "$" | "`" | "\"" | "\\") {
                        acc.quoted(&rest, &agent)
                    } else {
                        acc.quoted(e, &agent)
                    }
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => {
                    self.expand_quoted(inner, acc)?
                }
                WordPiece::TildeExpansion(t) => {
                    let (s, l) = self.tilde(t);
                    acc.quoted(&s, &l)
                }
                WordPiece::ParameterExpansion(e) => {
                    let (pv, label) = match self.expand_quoted_operand_in_place(e, acc)? {
                        Some(v) => v,
                        None => self.param_expr(e, true)?,
                    };
                    match pv {
                        PV::Unset => {}
                        PV::One(s) => acc.quoted(&s, &label),
                        PV::Many(items, concat) => {
                            if concat {
                                let sep = self.ifs_join_separator();
                                acc.quoted(&items.join(&sep), &label);
                            } else {
                                for (i, it) in items.iter().enumerate() {
                                    if i > 0 {
                                        acc.hard_break();
                                    }
                                    acc.quoted(it, &label);
                                }
                                if items.is_empty() && acc.cur.text.is_empty() {
                                    acc.cur.keep = false;
                                }
                            }
                        }
                    }
                }
                WordPiece::CommandSubstitution(text) => {
                    let f = self.command_substitution(text)?;
                    acc.quoted(&f.text, &f.label)
                }
                WordPiece::BackquotedCommandSubstitution(text) => {
                    let text = safesh_syntax::unescape_backquoted_in_dquotes(text);
                    let f = self.command_substitution(&text)?;
                    acc.quoted(&f.text, &f.label)
                }
                WordPiece::ArithmeticExpression(e) => {
                    let (v, l) = self.eval_arith_labeled(&e.value)?;
                    acc.quoted(&v.to_string(), &agent.join(&l))
                }
            }
        }
        Ok(())
    }

    /// A tilde prefix's text, with the label of the variable it reads (`~+` after
    /// `cd` into a directory named from a secret is `$PWD`, and as secret).
    fn tilde(&self, t: &TildeExpr) -> (String, Label) {
        let code = &self.code_label;
        let var = |name: &str| match self.vars.get(name) {
            Some(v) => (v.as_str().to_string(), code.join(&v.label)),
            None => (String::new(), code.clone()),
        };
        match t {
            TildeExpr::Home => var("HOME"),
            TildeExpr::WorkingDir | TildeExpr::OldWorkingDir => {
                let name = if matches!(t, TildeExpr::WorkingDir) {
                    "PWD"
                } else {
                    "OLDPWD"
                };
                match self.vars.get(name) {
                    Some(v) => (v.as_str().to_string(), code.join(&v.label)),
                    // Unset: the prefix stays as written.
                    None => (tilde_text(t), code.clone()),
                }
            }
            TildeExpr::UserHome(u) => (home_of(u).unwrap_or_else(|| format!("~{u}")), code.clone()),
            _ => ("~".to_string(), code.clone()),
        }
    }

    /// `${x@a}` (the attribute letters) and `${x@A}` (a statement recreating
    /// the variable) of a named variable; `None` when there is nothing to show.
    fn describe_var(
        &self,
        parameter: &Parameter,
        pv: &PV,
        op: &ParameterTransformOp,
    ) -> Option<String> {
        let (name, whole) = match parameter {
            Parameter::Named(n) => (n.as_str(), false),
            Parameter::NamedWithAllIndices { name, .. } => (name.as_str(), true),
            Parameter::NamedWithIndex { name, .. } => (name.as_str(), false),
            _ => return None,
        };
        let var = self.vars.get(name)?;
        let mut flags = String::new();
        match &var.value {
            Value::Array(_) => flags.push('a'),
            Value::Assoc(_) => flags.push('A'),
            Value::Str(_) => {}
        }
        for (on, c) in [
            (var.attrs.integer, 'i'),
            (var.attrs.lower, 'l'),
            (var.attrs.nameref, 'n'),
            (var.readonly, 'r'),
            (var.attrs.upper, 'u'),
            (var.exported, 'x'),
        ] {
            if on {
                flags.push(c);
            }
        }
        if matches!(op, ParameterTransformOp::ToAttributeFlags) {
            return Some(flags);
        }
        let value = match (&var.value, whole) {
            (Value::Array(a), true) => {
                let items: Vec<String> = a
                    .iter()
                    .map(|(k, v)| format!("[{k}]={}", dq_quote(v)))
                    .collect();
                format!("({})", items.join(" "))
            }
            (Value::Assoc(a), true) => {
                let items: String = a
                    .iter()
                    .map(|(k, v)| {
                        let k = crate::builtins::shown_key(k, self.utf8_locale());
                        format!("[{k}]={} ", dq_quote(v))
                    })
                    .collect();
                format!("({items})")
            }
            _ => match pv {
                PV::One(s) => quote_for_reuse(s),
                _ => return None,
            },
        };
        Some(if flags.is_empty() {
            format!("{name}={value}")
        } else {
            format!("declare -{flags} {name}={value}")
        })
    }

    /// Unquoted text of an assignment (or `name=value` word): a `~` right after
    /// an unquoted `:` (or the first `=` of such a word) starts a tilde prefix
    /// when it runs to a `/`, a `:` or the end of the word.
    fn text_with_tildes(&self, t: &str, acc: &mut Acc, first: bool, last: bool, agent: &Label) {
        let eq_at = (first && acc.tildes == TildeMode::AssignmentWord)
            .then(|| {
                let name_len = t
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    .count();
                let rest = &t[name_len..];
                let op = if rest.starts_with("+=") { 2 } else { 1 };
                (name_len > 0 && (rest.starts_with('=') || rest.starts_with("+=")))
                    .then_some(name_len + op)
            })
            .flatten();
        let mut lit_start = 0;
        let mut i = 0;
        let bytes = t.as_bytes();
        while i < bytes.len() {
            let starts_prefix =
                bytes[i] == b'~' && i > 0 && (bytes[i - 1] == b':' || Some(i) == eq_at);
            if !starts_prefix {
                i += 1;
                continue;
            }
            let end = t[i + 1..]
                .find(['/', ':'])
                .map(|k| i + 1 + k)
                .unwrap_or(t.len());
            if end == t.len() && !last {
                // `a:~$x`: the prefix would run into an expansion: not a tilde.
                i += 1;
                continue;
            }
            let Some(expr) = tilde_expr(&t[i + 1..end]) else {
                i += 1;
                continue;
            };
            acc.literal(&t[lit_start..i], agent);
            let (s, l) = self.tilde(&expr);
            acc.quoted(&s, &l);
            lit_start = end;
            i = end;
        }
        acc.literal(&t[lit_start..], agent);
    }

    /// Runs `$(…)` in a subshell and captures its output (trailing newlines removed).
    pub(crate) fn command_substitution(&mut self, text: &str) -> Result<Field, Stop> {
        if self.subst_depth >= self.shared.limits.substitution_depth {
            return Err(Refusal::limit(
                "command substitution depth",
                self.shared.limits.substitution_depth,
                "substitution_depth",
            )
            .into());
        }
        let mut script = self.parse_cached(text)?;
        if only_reads_a_file(&script.program) {
            // bash's `$(< file)`: the file's contents, as `cat < file` gives them.
            script = self.parse_cached(&format!("command cat {text}"))?;
        }
        let mut sub = self.subshell();
        sub.subst_depth += 1;
        // Without `shopt -s inherit_errexit` (off in bash's default mode), `set -e`
        // does not reach into `$(…)`: `x=$(false; echo sub)` gives `sub`.
        sub.opts.errexit = self.opts.errexit && self.shopt.inherit_errexit;
        sub.loop_depth = 0;
        let sink = Sink::capture(self.shared.limits.string_bytes.saturating_add(1));
        sub.fds.insert(1, super::Fd::Out(sink.clone()));
        let r = sub.run_program(&script.program);
        match r {
            Err(Stop::Refused(r)) => {
                // The refusal may quote what the substitution read.
                self.diag_label.join_assign(&sub.diag_label);
                return Err(Stop::Refused(r));
            }
            _ => {
                sub.run_exit_trap()?;
                sub.wait_all_keep_status();
            }
        }
        let status = sub.last_status;
        let status_label = std::mem::take(&mut sub.status_label);
        drop(sub);
        let mut captured = sink.take_captured();
        // Printing nothing says something about what was read: an empty result
        // carries the label of the commands that decided it.
        if captured.data.iter().all(|b| *b == b'\n') {
            captured.label = captured.label.join(&status_label);
        }
        if captured.overflowed {
            return Err(Refusal::limit(
                "the output of a command substitution in bytes",
                self.shared.limits.string_bytes,
                "string_bytes",
            )
            .into());
        }
        self.set_status(status);
        self.last_subst_status = Some(status);
        let mut data = captured.data;
        while data.last() == Some(&b'\n') {
            data.pop();
        }
        data.retain(|b| *b != 0);
        Ok(Field {
            text: safesh_utils::word_bytes::word_from_vec(data),
            label: captured.label,
        })
    }

    fn positional_pv(&self) -> Vec<String> {
        self.positional.clone()
    }

    /// The raw value of a parameter and its label.
    fn param_value(&mut self, p: &Parameter, indirect: bool) -> Result<(PV, Label), Stop> {
        let (pv, label) = self.param_value_direct(p)?;
        // A message about this command may quote what it read.
        self.diag_label.join_assign(&label);
        if !indirect {
            return Ok((pv, label));
        }
        // `${!ref}` of a nameref is the name it refers to (bash inverts it).
        if let Parameter::Named(n) = p
            && let Some(v) = self.vars.get(n)
            && v.attrs.nameref
        {
            return Ok((PV::One(v.as_str().to_string()), v.label.clone()));
        }
        let name = match pv {
            PV::One(s) => s,
            PV::Many(items, _) => items.join(" "),
            // bash: `${!n}` of an unset `n` is an expansion error; of an array
            // without element 0 it is empty.
            PV::Unset => {
                let declared = matches!(p, Parameter::Named(n) if self.vars.get(n).is_some());
                if !declared {
                    return Err(self.abort(format!("{p}: invalid indirect expansion")));
                }
                return Ok((PV::Unset, label));
            }
        };
        let param = match safesh_syntax::word::parse_parameter(&name, &safesh_syntax::options()) {
            Ok(param) if !name.is_empty() => param,
            _ => return Err(self.abort(format!("{name}: invalid variable name"))),
        };
        let (pv, l2) = self.param_value_direct(&param)?;
        self.diag_label.join_assign(&l2);
        Ok((pv, label.join(&l2)))
    }

    fn param_value_direct(&mut self, p: &Parameter) -> Result<(PV, Label), Stop> {
        Ok(match p {
            Parameter::Positional(0) => (PV::One(self.arg0.clone()), Label::agent()),
            Parameter::Positional(n) => match self.positional.get(*n as usize - 1) {
                Some(s) => (PV::One(s.clone()), self.positional_label.clone()),
                None => (PV::Unset, Label::empty()),
            },
            Parameter::Special(s) => match s {
                SpecialParameter::AllPositionalParameters { concatenate } => (
                    PV::Many(self.positional_pv(), *concatenate),
                    self.positional_label.clone(),
                ),
                SpecialParameter::PositionalParameterCount => {
                    (PV::One(self.positional.len().to_string()), Label::agent())
                }
                SpecialParameter::LastExitStatus => (
                    PV::One(self.last_status.to_string()),
                    self.status_label.clone(),
                ),
                SpecialParameter::CurrentOptionFlags => {
                    let mut f = String::new();
                    if self.opts.errexit {
                        f.push('e');
                    }
                    if self.opts.noglob {
                        f.push('f');
                    }
                    f.push('h');
                    if self.opts.nounset {
                        f.push('u');
                    }
                    if self.opts.xtrace {
                        f.push('x');
                    }
                    f.push('B');
                    if self.opts.errtrace {
                        f.push('E');
                    }
                    if self.opts.functrace {
                        f.push('T');
                    }
                    f.push('c');
                    (PV::One(f), Label::agent())
                }
                SpecialParameter::ProcessId => {
                    (PV::One(self.shared.pid.to_string()), Label::agent())
                }
                SpecialParameter::LastBackgroundProcessId => match self.last_bg {
                    Some(id) => (
                        PV::One(job_pid(self.shared.pid, id).to_string()),
                        Label::agent(),
                    ),
                    None => (PV::Unset, Label::empty()),
                },
                SpecialParameter::ShellName => (PV::One(self.arg0.clone()), Label::agent()),
            },
            Parameter::Named(name) => self.named_value(name),
            Parameter::NamedWithIndex { name, index } => {
                let name = &self.vars.resolve(name).to_string();
                // The element chosen depends on the index: its label joins.
                let mut label;
                let value = match self.vars.get(name) {
                    None => {
                        label = Label::empty();
                        None
                    }
                    Some(v) => {
                        label = v.label.clone();
                        match v.value.clone() {
                            Value::Str(s) => {
                                let (i, l) = self.eval_subscript_labeled(index)?;
                                label.join_assign(&l);
                                (i == 0).then_some(s)
                            }
                            Value::Array(a) => {
                                let (mut i, l) = self.eval_subscript_labeled(index)?;
                                label.join_assign(&l);
                                if i < 0 {
                                    let max = a.keys().next_back().copied().unwrap_or(-1);
                                    i += max + 1;
                                }
                                a.get(&i).cloned()
                            }
                            Value::Assoc(a) => {
                                let key = self.expand_raw_single(index)?;
                                label.join_assign(&key.label);
                                a.get(&key.text).cloned()
                            }
                        }
                    }
                };
                match value {
                    Some(s) => (PV::One(s), label),
                    None => (PV::Unset, label),
                }
            }
            Parameter::NamedWithAllIndices { name, concatenate } => {
                match self.vars.get(self.vars.resolve(name)) {
                    None => (PV::Many(Vec::new(), *concatenate), Label::empty()),
                    Some(v) => {
                        let items = match &v.value {
                            Value::Str(s) => vec![s.clone()],
                            Value::Array(a) => a.values().cloned().collect(),
                            Value::Assoc(a) => a.values().cloned().collect(),
                        };
                        (PV::Many(items, *concatenate), v.label.clone())
                    }
                }
            }
        })
    }

    fn named_value(&mut self, name: &str) -> (PV, Label) {
        let (resolved, via) = self.vars.resolve_labeled(name);
        let (resolved, via) = (resolved.to_string(), via);
        // A nameref to an element or all of an array (`declare -n r='a[2]'`).
        if resolved != name
            && resolved.contains('[')
            && let Ok(param) =
                safesh_syntax::word::parse_parameter(&resolved, &safesh_syntax::options())
            && !matches!(param, Parameter::Named(_))
            && let Ok((pv, l)) = self.param_value_direct(&param)
        {
            return (pv, l.join(&via));
        }
        let name = resolved.as_str();
        match name {
            "RANDOM" => {
                let mut x = self.shared.pid as u64
                    ^ std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map(|d| d.as_nanos() as u64)
                        .unwrap_or(0);
                x ^= x >> 13;
                return (PV::One(((x % 32768) as i64).to_string()), Label::agent());
            }
            "LINENO" => return (PV::One(self.line.to_string()), Label::agent()),
            "SECONDS" => return (PV::One("0".into()), Label::agent()),
            "BASHPID" => return (PV::One(self.shared.pid.to_string()), Label::agent()),
            "SHELLOPTS" => {
                let opts = crate::builtins::shellopts(self);
                return (PV::One(opts), Label::agent());
            }
            _ => {}
        }
        match self.vars.get(name) {
            // `$a` is `${a[0]}`: unset when the array has no element 0
            // (`local -a a`, `a=([1]=x)`), so `${a-d}` and `set -u` see that.
            Some(v) if !has_element_zero(&v.value) => (PV::Unset, v.label.join(&via)),
            // A nameref without a target (`declare -n r`) is unset (bash).
            Some(v) if v.attrs.nameref && v.as_str().is_empty() => (PV::Unset, v.label.join(&via)),
            Some(v) => (PV::One(v.as_str().to_string()), v.label.join(&via)),
            None => (PV::Unset, via),
        }
    }

    fn unbound(&self, p: &Parameter) -> Stop {
        let name = match p {
            Parameter::Positional(n) => n.to_string(),
            Parameter::Named(n) => n.clone(),
            Parameter::NamedWithIndex { name, index } => format!("{name}[{index}]"),
            other => other.to_string(),
        };
        self.diag(format!("{name}: unbound variable"));
        Stop::Exit
    }

    /// `set -u` stops a non-interactive bash with status 127 (1 under `set -e`
    /// or in a subshell).
    fn unbound_exit(&mut self, p: &Parameter) -> Stop {
        let s = self.unbound(p);
        self.last_status = if self.opts.errexit || self.in_subshell {
            1
        } else {
            127
        };
        s
    }

    /// [`Shell::param_value`] for an operator that transforms the value
    /// (`${x#p}`, `${x/p/r}`, `${x:1}`, `${x^}`, `${x@Q}`): under `set -u` an
    /// unset parameter is an error there, as for a plain `$x`.
    fn param_value_set(&mut self, p: &Parameter, indirect: bool) -> Result<(PV, Label), Stop> {
        let (pv, label) = self.param_value(p, indirect)?;
        if matches!(pv, PV::Unset) && self.opts.nounset {
            return Err(self.unbound_exit(p));
        }
        Ok((pv, label))
    }

    /// Evaluates a parameter expression.
    /// `quoted`: the expansion is inside double quotes (or a here-document).
    fn param_expr(&mut self, e: &ParameterExpr, quoted: bool) -> Result<(PV, Label), Stop> {
        use ParameterExpr as P;
        match e {
            P::Parameter {
                parameter,
                indirect,
            } => {
                let (pv, label) = self.param_value(parameter, *indirect)?;
                if matches!(pv, PV::Unset) && self.opts.nounset {
                    return Err(self.unbound_exit(parameter));
                }
                Ok((pv, label))
            }
            P::UseDefaultValues {
                parameter,
                indirect,
                test_type,
                default_value,
            } => {
                let (pv, label) = self.param_value(parameter, *indirect)?;
                if is_missing(&pv, test_type) {
                    let f = self.expand_operand(default_value.as_deref().unwrap_or(""), quoted)?;
                    Ok((PV::One(f.text), f.label))
                } else {
                    Ok((pv, label))
                }
            }
            P::AssignDefaultValues {
                parameter,
                indirect,
                test_type,
                default_value,
            } => {
                let (pv, label) = self.param_value(parameter, *indirect)?;
                if is_missing(&pv, test_type) {
                    let f = self.expand_operand(default_value.as_deref().unwrap_or(""), quoted)?;
                    // `${!ref:=v}` assigns to the variable ref names.
                    let target;
                    let parameter = if *indirect {
                        let (name, _) = self.param_value(parameter, false)?;
                        let name = match name {
                            PV::One(s) => s,
                            _ => String::new(),
                        };
                        target =
                            safesh_syntax::word::parse_parameter(&name, &safesh_syntax::options())
                                .map_err(|_| {
                                    self.abort(format!("{name}: invalid variable name"))
                                })?;
                        &target
                    } else {
                        parameter
                    };
                    match parameter {
                        Parameter::Named(n) => {
                            self.assign_scalar(n, f.text.clone(), f.label.clone())?
                        }
                        Parameter::NamedWithIndex { name, index } => {
                            self.assign_element(name, index, f.text.clone(), f.label.clone())?;
                        }
                        _ => {
                            return Err(
                                self.abort(format!("{parameter}: cannot assign in this way"))
                            );
                        }
                    }
                    Ok((PV::One(f.text), f.label))
                } else {
                    Ok((pv, label))
                }
            }
            P::IndicateErrorIfNullOrUnset {
                parameter: Parameter::Special(SpecialParameter::PositionalParameterCount),
                indirect: false,
                test_type: ParameterTestType::Unset,
                error_message,
            } if error_message.as_deref().is_none_or(str::is_empty) => {
                // `${#?}` is the length of `$?` in bash (the parser reads it as
                // `$#` with an empty `?` test, which could never fail).
                let status = Parameter::Special(SpecialParameter::LastExitStatus);
                let (pv, label) = self.param_value(&status, false)?;
                let n = match pv {
                    PV::One(s) => s.len(),
                    _ => 0,
                };
                Ok((PV::One(n.to_string()), label))
            }
            P::IndicateErrorIfNullOrUnset {
                parameter,
                indirect,
                test_type,
                error_message,
            } => {
                let (pv, label) = self.param_value(parameter, *indirect)?;
                if is_missing(&pv, test_type) {
                    let msg = match error_message.as_deref().filter(|m| !m.is_empty()) {
                        Some(m) => self.expand_operand(m, quoted)?.text,
                        None if matches!(test_type, ParameterTestType::UnsetOrNull) => {
                            "parameter null or not set".to_string()
                        }
                        None => "parameter not set".to_string(),
                    };
                    let name = match parameter {
                        Parameter::Named(n) => n.clone(),
                        Parameter::Positional(n) => n.to_string(),
                        other => other.to_string(),
                    };
                    self.diag(format!("{name}: {msg}"));
                    self.last_status = if self.in_subshell { 1 } else { 127 };
                    return Err(Stop::Exit);
                }
                Ok((pv, label))
            }
            P::UseAlternativeValue {
                parameter,
                indirect,
                test_type,
                alternative_value,
            } => {
                let (pv, _) = self.param_value(parameter, *indirect)?;
                if is_missing(&pv, test_type) {
                    Ok((PV::One(String::new()), Label::empty()))
                } else {
                    let f =
                        self.expand_operand(alternative_value.as_deref().unwrap_or(""), quoted)?;
                    Ok((PV::One(f.text), f.label))
                }
            }
            P::ParameterLength {
                parameter,
                indirect,
            } => {
                let (pv, label) = self.param_value(parameter, *indirect)?;
                let n = match (&pv, parameter) {
                    (PV::Many(items, _), _) => items.len(),
                    (PV::One(s), _) => {
                        if self.utf8_locale() {
                            s.chars().count()
                        } else {
                            // Bytes, counting an escaped byte as the one it is.
                            safesh_utils::word_bytes::word_to_bytes(s).len()
                        }
                    }
                    (PV::Unset, _) => {
                        if self.opts.nounset {
                            return Err(self.unbound_exit(parameter));
                        }
                        0
                    }
                };
                Ok((PV::One(n.to_string()), label))
            }
            P::RemoveSmallestSuffixPattern {
                parameter,
                indirect,
                pattern,
            }
            | P::RemoveLargestSuffixPattern {
                parameter,
                indirect,
                pattern,
            }
            | P::RemoveSmallestPrefixPattern {
                parameter,
                indirect,
                pattern,
            }
            | P::RemoveLargestPrefixPattern {
                parameter,
                indirect,
                pattern,
            } => {
                let (pv, label) = self.param_value_set(parameter, *indirect)?;
                let pat = self.expand_raw_pattern(pattern.as_deref().unwrap_or(""))?;
                let (suffix, largest) = match e {
                    P::RemoveSmallestSuffixPattern { .. } => (true, false),
                    P::RemoveLargestSuffixPattern { .. } => (true, true),
                    P::RemoveSmallestPrefixPattern { .. } => (false, false),
                    _ => (false, true),
                };
                let utf8 = self.utf8_locale();
                let f = |s: &str| super::pattern::remove_affix(s, &pat, suffix, largest, utf8);
                Ok((map_pv(pv, f), label))
            }
            P::Substring {
                parameter,
                indirect,
                offset,
                length,
            } => {
                let (pv, label) = self.param_value_set(parameter, *indirect)?;
                // `${x:}` is an error; `${x::2}` takes from offset 0.
                if offset.value.trim().is_empty() && length.is_none() {
                    return Err(self.abort(format!("${{{parameter}:}}: bad substitution")));
                }
                // Which part is taken depends on the offset and length.
                let (off, off_label) = if offset.value.trim().is_empty() {
                    (0, Label::empty())
                } else {
                    self.eval_arith_labeled(&offset.value)?
                };
                let mut label = label.join(&off_label);
                let len = match length {
                    Some(l) => {
                        let (n, l) = self.eval_arith_labeled(&l.value)?;
                        label.join_assign(&l);
                        Some(n)
                    }
                    None => None,
                };
                // `${a[@]:off:len}` of an indexed array counts indices, not
                // elements: a sparse array's gaps take no room.
                let keys: Option<Vec<i64>> = match parameter {
                    Parameter::NamedWithAllIndices { name, .. } => {
                        match self.vars.get(self.vars.resolve(name)).map(|v| &v.value) {
                            Some(Value::Array(a)) => Some(a.keys().copied().collect()),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                match (pv, keys) {
                    (PV::Many(items, concat), Some(keys)) => {
                        let first = if off < 0 {
                            keys.last().map_or(0, |k| k + 1) + off
                        } else {
                            off
                        };
                        if first < 0 {
                            return Ok((PV::Many(Vec::new(), concat), label));
                        }
                        let take = match len {
                            Some(l) if l < 0 => {
                                return Err(self.abort(format!("{l}: substring expression < 0")));
                            }
                            Some(l) => usize::try_from(l).unwrap_or(usize::MAX),
                            None => usize::MAX,
                        };
                        let v: Vec<String> = keys
                            .iter()
                            .zip(items)
                            .filter(|(k, _)| **k >= first)
                            .map(|(_, v)| v)
                            .take(take)
                            .collect();
                        Ok((PV::Many(v, concat), label))
                    }
                    (PV::Many(items, concat), None) => {
                        // Positional parameters count from $1 as index 1 ($0 is index 0).
                        let is_positional = matches!(parameter, Parameter::Special(_));
                        let mut all: Vec<String> = if is_positional {
                            std::iter::once(self.arg0.clone()).chain(items).collect()
                        } else {
                            items
                        };
                        let n = all.len() as i64;
                        let mut start = if off < 0 { n + off } else { off };
                        if is_positional && off == 0 {
                            start = 0;
                        }
                        if start < 0 || start > n {
                            return Ok((PV::Many(Vec::new(), concat), label));
                        }
                        let end = match len {
                            Some(l) if l < 0 => {
                                return Err(self.abort(format!("{l}: substring expression < 0")));
                            }
                            Some(l) => (start + l).min(n),
                            None => n,
                        };
                        let v: Vec<String> =
                            all.drain(start as usize..end.max(start) as usize).collect();
                        Ok((PV::Many(v, concat), label))
                    }
                    (PV::Unset, _) => Ok((PV::One(String::new()), label)),
                    (PV::One(s), _) => {
                        // (In the C locale the offsets count bytes, as in bash.)
                        let utf8 = self.utf8_locale();
                        let s = if utf8 {
                            s
                        } else {
                            super::pattern::bytewise(&s).into_owned()
                        };
                        let chars: Vec<char> = s.chars().collect();
                        let n = chars.len() as i64;
                        let start = if off < 0 { n + off } else { off };
                        if start < 0 || start > n {
                            return Ok((PV::One(String::new()), label));
                        }
                        let end = match len {
                            Some(l) if l < 0 => n + l,
                            Some(l) => (start + l).min(n),
                            None => n,
                        };
                        if end < start {
                            return Err(self
                                .abort(format!("{}: substring expression < 0", len.unwrap_or(0))));
                        }
                        let part: String = chars[start as usize..end as usize].iter().collect();
                        let part = if utf8 {
                            part
                        } else {
                            super::pattern::whole(&part)
                        };
                        Ok((PV::One(part), label))
                    }
                }
            }
            P::Transform {
                parameter,
                indirect,
                op,
            } => {
                let (pv, label) = self.param_value_set(parameter, *indirect)?;
                if let ParameterTransformOp::ToAssignmentLogic
                | ParameterTransformOp::ToAttributeFlags = op
                {
                    let text = self.describe_var(parameter, &pv, op);
                    return Ok((text.map_or(PV::Unset, PV::One), label));
                }
                let utf8 = self.utf8_locale();
                let f = |s: &str| match op {
                    ParameterTransformOp::ToUpperCase if !utf8 => s.to_ascii_uppercase(),
                    ParameterTransformOp::ToLowerCase if !utf8 => s.to_ascii_lowercase(),
                    ParameterTransformOp::ToUpperCase => s.to_uppercase(),
                    ParameterTransformOp::ToLowerCase => s.to_lowercase(),
                    ParameterTransformOp::CapitalizeInitial => {
                        let mut c = s.chars();
                        match c.next() {
                            Some(f) => f.to_uppercase().chain(c).collect(),
                            None => String::new(),
                        }
                    }
                    ParameterTransformOp::Quoted
                    | ParameterTransformOp::PossiblyQuoteWithArraysExpanded { .. } => {
                        quote_for_reuse(s)
                    }
                    ParameterTransformOp::ExpandEscapeSequences => ansi_c_unescape(s, true),
                    _ => s.to_string(),
                };
                Ok((map_pv(pv, f), label))
            }
            P::UppercaseFirstChar {
                parameter,
                indirect,
                pattern,
            }
            | P::UppercasePattern {
                parameter,
                indirect,
                pattern,
            }
            | P::LowercaseFirstChar {
                parameter,
                indirect,
                pattern,
            }
            | P::LowercasePattern {
                parameter,
                indirect,
                pattern,
            } => {
                let (pv, label) = self.param_value_set(parameter, *indirect)?;
                let pat = match pattern {
                    Some(p) if !p.is_empty() => Some(self.expand_raw_pattern(p)?),
                    _ => None,
                };
                let upper = matches!(e, P::UppercaseFirstChar { .. } | P::UppercasePattern { .. });
                let all = matches!(e, P::UppercasePattern { .. } | P::LowercasePattern { .. });
                // In the C locale only ASCII letters have a case (`é` stays).
                let utf8 = self.utf8_locale();
                let f = |s: &str| {
                    let mut out = String::with_capacity(s.len());
                    for (i, c) in s.chars().enumerate() {
                        let applies = (all || i == 0)
                            && (utf8 || c.is_ascii())
                            && pat.as_deref().is_none_or(|p| {
                                super::pattern::matches(p, &c.to_string(), false, utf8)
                            });
                        if applies {
                            if upper {
                                out.extend(c.to_uppercase());
                            } else {
                                out.extend(c.to_lowercase());
                            }
                        } else {
                            out.push(c);
                        }
                    }
                    out
                };
                Ok((map_pv(pv, f), label))
            }
            P::ReplaceSubstring {
                parameter,
                indirect,
                pattern,
                replacement,
                match_kind,
            } => {
                let (pv, label) = self.param_value_set(parameter, *indirect)?;
                let pat = self.expand_raw_pattern(pattern)?;
                // As a pattern: its quoted characters (a quoted `&`) come escaped.
                let rep = match replacement {
                    Some(r) => self.expand_raw_pattern_labeled(r)?,
                    None => Field {
                        text: String::new(),
                        label: Label::empty(),
                    },
                };
                let (rep, rep_label) = (Replacement::parse(&rep.text), rep.label);
                let kind = match match_kind {
                    SubstringMatchKind::Prefix => super::pattern::Replace::Prefix,
                    SubstringMatchKind::Suffix => super::pattern::Replace::Suffix,
                    SubstringMatchKind::FirstOccurrence => super::pattern::Replace::First,
                    SubstringMatchKind::Anywhere => super::pattern::Replace::All,
                };
                let utf8 = self.utf8_locale();
                // `shopt -s nocasematch` holds for `${x/p/r}` too (bash 5.2).
                let icase = self.shopt.nocasematch;
                let f = |s: &str| {
                    super::pattern::replace(s, &pat, &|m| rep.render(m), kind, (icase, utf8))
                };
                Ok((map_pv(pv, f), label.join(&rep_label)))
            }
            P::VariableNames {
                prefix,
                concatenate,
            } => {
                // The names listed carry their name labels (a name built from
                // secret data is secret).
                let mut label = Label::agent().join(self.vars.listing_label());
                let mut names: Vec<String> = Vec::new();
                for (n, v) in self.vars.iter() {
                    if n.starts_with(prefix.as_str()) {
                        label.join_assign(&v.name_label);
                        names.push(n.clone());
                    }
                }
                names.sort();
                // bash: unquoted `${!p*}` with an empty IFS is one word, the
                // names run together.
                if *concatenate && !quoted && self.ifs_is_empty() {
                    return Ok((PV::One(names.concat()), label));
                }
                Ok((PV::Many(names, *concatenate), label))
            }
            P::MemberKeys {
                variable_name,
                concatenate,
            } => {
                // An array's label covers its keys (see `Var::label`).
                let (keys, label) = match self.vars.get(variable_name) {
                    None => (Vec::new(), Label::agent()),
                    Some(v) => (
                        match &v.value {
                            Value::Str(_) => vec!["0".to_string()],
                            Value::Array(a) => a.keys().map(|k| k.to_string()).collect(),
                            Value::Assoc(a) => a.keys().cloned().collect(),
                        },
                        v.label.join(&Label::agent()),
                    ),
                };
                // bash: unquoted `${!a[*]}` with an empty IFS is one word, the
                // keys joined by spaces.
                if *concatenate && !quoted && self.ifs_is_empty() {
                    return Ok((PV::One(keys.join(" ")), label));
                }
                Ok((PV::Many(keys, *concatenate), label))
            }
        }
    }
}

/// True for a scalar, or an array holding element 0 (key `0`).
fn has_element_zero(v: &Value) -> bool {
    match v {
        Value::Str(_) => true,
        Value::Array(a) => a.contains_key(&0),
        Value::Assoc(a) => a.contains_key("0"),
    }
}

fn is_missing(pv: &PV, t: &ParameterTestType) -> bool {
    match pv {
        PV::Unset => true,
        PV::One(s) => matches!(t, ParameterTestType::UnsetOrNull) && s.is_empty(),
        PV::Many(items, _) => {
            items.is_empty()
                || (matches!(t, ParameterTestType::UnsetOrNull)
                    && items.iter().all(|s| s.is_empty())
                    && items.len() <= 1)
        }
    }
}

fn map_pv(pv: PV, f: impl Fn(&str) -> String) -> PV {
    match pv {
        PV::Unset => PV::One(f("")),
        PV::One(s) => PV::One(f(&s)),
        PV::Many(items, c) => PV::Many(items.iter().map(|s| f(s)).collect(), c),
    }
}

/// A tilde prefix as written (`~`, `~user`, `~+`, `~-`).
fn tilde_text(t: &TildeExpr) -> String {
    match t {
        TildeExpr::Home => "~".to_string(),
        TildeExpr::UserHome(u) => format!("~{u}"),
        TildeExpr::WorkingDir => "~+".to_string(),
        TildeExpr::OldWorkingDir => "~-".to_string(),
        TildeExpr::NthDirFromTopOfDirStack { n, plus_used } => {
            format!("~{}{n}", if *plus_used { "+" } else { "" })
        }
        TildeExpr::NthDirFromBottomOfDirStack { n } => format!("~-{n}"),
    }
}

/// The tilde prefix spelled by the text after a `~` (up to `/`, `:` or the end).
fn tilde_expr(prefix: &str) -> Option<TildeExpr> {
    match prefix {
        "" => Some(TildeExpr::Home),
        "+" => Some(TildeExpr::WorkingDir),
        "-" => Some(TildeExpr::OldWorkingDir),
        user if user
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-')) =>
        {
            Some(TildeExpr::UserHome(user.to_string()))
        }
        _ => None,
    }
}

/// The replacement of `${x/pat/rep}` (bash 5.2's `patsub_replacement`): an
/// unquoted `&` stands for the matched text; quoted or `\&`, it is literal.
struct Replacement {
    parts: Vec<RepPart>,
}

enum RepPart {
    Text(String),
    Match,
}

impl Replacement {
    /// From the replacement expanded as a pattern (quoted characters escaped).
    fn parse(pattern_form: &str) -> Replacement {
        let mut parts = Vec::new();
        let mut text = String::new();
        let mut chars = pattern_form.chars();
        while let Some(c) = chars.next() {
            match c {
                // The escapes the pattern form adds, and `\&`; any other
                // backslash is the replacement's own text.
                '\\' => match chars.next() {
                    Some(
                        n
                        @ ('&' | '\\' | '*' | '?' | '[' | ']' | '(' | ')' | '|' | '-' | '!' | '^'),
                    ) => text.push(n),
                    Some(n) => {
                        text.push('\\');
                        text.push(n);
                    }
                    None => text.push('\\'),
                },
                '&' => {
                    parts.push(RepPart::Text(std::mem::take(&mut text)));
                    parts.push(RepPart::Match);
                }
                c => text.push(c),
            }
        }
        parts.push(RepPart::Text(text));
        Replacement { parts }
    }

    fn render(&self, matched: &str) -> String {
        let mut out = String::new();
        for p in &self.parts {
            match p {
                RepPart::Text(t) => out.push_str(t),
                RepPart::Match => out.push_str(matched),
            }
        }
        out
    }
}

/// Removes backslash-newline pairs (line continuations in an unquoted here-document).
fn join_continued_lines(raw: &str) -> std::borrow::Cow<'_, str> {
    if !raw.contains("\\\n") {
        return std::borrow::Cow::Borrowed(raw);
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('\n') => {
                    chars.next();
                }
                Some('\\') => {
                    out.push('\\');
                    out.push('\\');
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The fake process id shown for background job `id` (`$!`).
pub(crate) fn job_pid(pid: u32, id: u64) -> u64 {
    pid as u64 * 1000 + id
}

fn home_of(user: &str) -> Option<String> {
    let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&user)).then(|| f.get(5).map(|s| s.to_string()))?
    })
}

/// `"s"` with `\`, `"`, `$` and `` ` `` escaped (bash's `declare -p` values).
fn dq_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '\\' | '"' | '$' | '`') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Quotes `s` as bash's `${x@Q}` does: `'…'`, or `$'…'` when it holds control
/// characters (which single quotes would carry invisibly).
pub(crate) fn quote_for_reuse(s: &str) -> String {
    if !s.chars().any(|c| c.is_control()) {
        return shell_quote(s);
    }
    dollar_quote(s, |c, out| {
        if c.is_control() {
            out.push_str(&format!("\\{:03o}", c as u32));
        } else {
            out.push(c);
        }
    })
}

/// `s` as `$'…'`, with bash's named escapes (`\n`, `\t`, `\E`, …, `\\`, `\'`);
/// `other` writes every other character (escaped in octal where the caller
/// wants it).
pub(crate) fn dollar_quote(s: &str, other: impl Fn(char, &mut String)) -> String {
    let mut out = String::from("$'");
    for c in s.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0b' => out.push_str("\\v"),
            '\x0c' => out.push_str("\\f"),
            '\x1b' => out.push_str("\\E"),
            '\'' => out.push_str("\\'"),
            '\\' => out.push_str("\\\\"),
            c => other(c, &mut out),
        }
    }
    out.push('\'');
    out
}

/// Quotes `s` for reuse as shell input (`${x@Q}`, `printf %q`-like).
pub(crate) fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Expands the backslash escapes of `$'…'`. Outside a UTF-8 locale, `\u`/`\U`
/// escapes of non-ASCII characters stay as written (bash cannot encode them).
pub(crate) fn ansi_c_unescape(s: &str, utf8: bool) -> String {
    let mut out = Vec::with_capacity(s.len());
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        i += 1;
        let c = b[i];
        i += 1;
        match c {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(7),
            b'b' => out.push(8),
            b'e' | b'E' => out.push(27),
            b'f' => out.push(12),
            b'v' => out.push(11),
            b'\\' => out.push(b'\\'),
            b'\'' => out.push(b'\''),
            b'"' => out.push(b'"'),
            b'?' => out.push(b'?'),
            b'0'..=b'7' => {
                let mut v = (c - b'0') as u32;
                let mut k = 0;
                while k < 2 && i < b.len() && (b'0'..=b'7').contains(&b[i]) {
                    v = v * 8 + (b[i] - b'0') as u32;
                    i += 1;
                    k += 1;
                }
                out.push(v as u8);
            }
            b'x' => {
                let mut v = 0u32;
                let mut k = 0;
                while k < 2 && i < b.len() && b[i].is_ascii_hexdigit() {
                    v = v * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                if k == 0 {
                    out.extend_from_slice(b"\\x");
                } else {
                    out.push(v as u8);
                }
            }
            b'u' | b'U' => {
                let max = if c == b'u' { 4 } else { 8 };
                let mut v = 0u32;
                let mut k = 0;
                while k < max && i < b.len() && b[i].is_ascii_hexdigit() {
                    v = v * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
                    i += 1;
                    k += 1;
                }
                if k == 0 {
                    out.push(b'\\');
                    out.push(c);
                } else if !utf8 && v > 0x7f {
                    let text = if c == b'u' {
                        format!("\\u{v:04X}")
                    } else {
                        format!("\\U{v:08X}")
                    };
                    out.extend_from_slice(text.as_bytes());
                } else if let Some(ch) = char::from_u32(v) {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                }
            }
            b'c' => {
                if i < b.len() {
                    // `\c?` is DEL; otherwise the control character of the letter.
                    out.push(if b[i] == b'?' { 0x7f } else { b[i] & 0x1f });
                    i += 1;
                }
            }
            other => {
                out.push(b'\\');
                out.push(other);
            }
        }
    }
    // The string ends at a NUL byte (`$'a\0b'` is `a`), as in bash.
    if let Some(nul) = out.iter().position(|b| *b == 0) {
        out.truncate(nul);
    }
    // Bytes that are not UTF-8 (`$'\xff'`) are escaped as file names are.
    safesh_utils::word_bytes::word_from_vec(out)
}

/// Expands parsed brace expressions into word texts, bounded by `limit`.
fn brace_product(
    pieces: &[BraceExpressionOrText],
    limit: u64,
    widths: &mut std::vec::IntoIter<Option<usize>>,
) -> Result<Vec<String>, Stop> {
    let mut acc = vec![String::new()];
    for p in pieces {
        let alts: Vec<String> = match p {
            BraceExpressionOrText::Text(t) => vec![t.clone()],
            BraceExpressionOrText::Expr(members) => {
                let mut alts = Vec::new();
                for m in members {
                    match m {
                        BraceExpressionMember::NumberSequence {
                            start,
                            end,
                            increment,
                        } => {
                            // In i128: the distance between two i64 can pass i64::MAX.
                            let count = (i128::from(*end) - i128::from(*start)).unsigned_abs()
                                / u128::from(increment.unsigned_abs().max(1))
                                + 1;
                            let count = u64::try_from(count).unwrap_or(u64::MAX);
                            if count > limit {
                                return Err(Refusal::limit(
                                    "a brace expansion's size",
                                    limit,
                                    "brace_expansion",
                                )
                                .into());
                            }
                            let width = widths.next().flatten();
                            alts.extend(number_sequence(*start, *end, *increment, &width));
                        }
                        BraceExpressionMember::CharSequence {
                            start,
                            end,
                            increment,
                        } => {
                            let (s, e) = (*start as i64, *end as i64);
                            let step = increment.unsigned_abs().max(1) as i64;
                            let mut v = s;
                            loop {
                                if let Some(c) = char::from_u32(v as u32) {
                                    alts.push(c.to_string());
                                }
                                if v == e {
                                    break;
                                }
                                if s <= e {
                                    v += step;
                                    if v > e {
                                        break;
                                    }
                                } else {
                                    v -= step;
                                    if v < e {
                                        break;
                                    }
                                }
                            }
                        }
                        BraceExpressionMember::Child(children) => {
                            alts.extend(brace_product(children, limit, widths)?);
                        }
                    }
                }
                alts
            }
        };
        if (acc.len() as u64).saturating_mul(alts.len() as u64) > limit {
            return Err(
                Refusal::limit("a brace expansion's size", limit, "brace_expansion").into(),
            );
        }
        let mut next = Vec::with_capacity(acc.len() * alts.len());
        for a in &acc {
            for b in &alts {
                next.push(format!("{a}{b}"));
            }
        }
        acc = next;
    }
    Ok(acc)
}

/// The zero-padding width of each `{a..b}` sequence in `raw`, in order: `{01..10}`
/// pads to the widest operand when one is written with a leading zero.
fn sequence_widths(raw: &str) -> Vec<Option<usize>> {
    static SEQ: std::sync::LazyLock<Option<regex::Regex>> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\{([-+]?\d+)\.\.([-+]?\d+)(?:\.\.[-+]?\d+)?\}").ok()
    });
    let Some(re) = SEQ.as_ref() else {
        return Vec::new();
    };
    re.captures_iter(raw)
        .map(|c| {
            let a = c.get(1).map(|m| m.as_str()).unwrap_or("");
            let b = c.get(2).map(|m| m.as_str()).unwrap_or("");
            let padded = |s: &str| {
                let d = s.trim_start_matches(['-', '+']);
                d.len() > 1 && d.starts_with('0')
            };
            (padded(a) || padded(b)).then(|| a.len().max(b.len()))
        })
        .collect()
}

fn number_sequence(start: i64, end: i64, inc: i64, width: &Option<usize>) -> Vec<String> {
    let step = inc.unsigned_abs().max(1) as i64;
    let mut out = Vec::new();
    let mut v = start;
    loop {
        out.push(match width {
            Some(w) => format!("{v:0w$}", w = *w),
            None => v.to_string(),
        });
        // Checked: a range ending near i64::MAX must stop, not wrap around.
        let next = if start <= end {
            v.checked_add(step).filter(|n| *n <= end)
        } else {
            v.checked_sub(step).filter(|n| *n >= end)
        };
        match next {
            Some(n) => v = n,
            None => break,
        }
    }
    out
}

/// True for a command substitution that is a single input redirection and nothing
/// else (`$(< file)`): bash reads the file for it.
fn only_reads_a_file(program: &safesh_syntax::ast::Program) -> bool {
    use safesh_syntax::ast::{
        Command, CommandPrefixOrSuffixItem as Item, IoFileRedirectKind, IoFileRedirectTarget,
        IoRedirect,
    };
    let [list] = program.complete_commands.as_slice() else {
        return false;
    };
    let [item] = list.0.as_slice() else {
        return false;
    };
    let and_or = &item.0;
    if !and_or.additional.is_empty() || and_or.first.bang || and_or.first.timed.is_some() {
        return false;
    }
    let [Command::Simple(simple)] = and_or.first.seq.as_slice() else {
        return false;
    };
    if simple.word_or_name.is_some() {
        return false;
    }
    let mut items = simple
        .prefix
        .iter()
        .flat_map(|p| p.0.iter())
        .chain(simple.suffix.iter().flat_map(|p| p.0.iter()));
    let first_reads = matches!(
        items.next(),
        Some(Item::IoRedirect(IoRedirect::File(
            None | Some(0),
            IoFileRedirectKind::Read,
            IoFileRedirectTarget::Filename(_)
        )))
    );
    // Only the one redirection: `$(< f 2>/dev/null)` is a plain empty command in bash.
    first_reads && items.next().is_none()
}

/// True when `t` holds a `${…}` form brush-parser left as text (see
/// [`join_dollar_brace`]): `${NAME~}`, `${!}`, or a bad substitution.
fn has_unparsed_brace(t: &str) -> bool {
    t.contains("${")
}

/// What a `${…}` form brush-parser left as text is, at the start of `s`.
enum Unparsed<'a> {
    /// `${NAME~}` / `${NAME~~}` (`true`: every letter): NAME, then the rest.
    CaseToggle(&'a str, bool, &'a str),
    /// `${!}`: `$!`; then the rest.
    LastJob(&'a str),
    /// Anything else (`${#x:1}`, `${a[0][0]}`): bash's "bad substitution";
    /// the form as written.
    Bad(&'a str),
}

/// Reads the unparsed form at the start of `s` (which starts with `${`).
fn unparsed_at(s: &str) -> Unparsed<'_> {
    let body = &s[2..];
    if let Some(after) = body.strip_prefix("!}") {
        return Unparsed::LastJob(after);
    }
    let name_len = body
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(body.len());
    let name = &body[..name_len];
    let valid = !name.is_empty()
        && (name.bytes().all(|b| b.is_ascii_digit()) || !name.as_bytes()[0].is_ascii_digit());
    let tail = &body[name_len..];
    if valid {
        if let Some(after) = tail.strip_prefix("~~}") {
            return Unparsed::CaseToggle(name, true, after);
        }
        if let Some(after) = tail.strip_prefix("~}") {
            return Unparsed::CaseToggle(name, false, after);
        }
    }
    // Up to the `}` that closes it (nested braces counted).
    let mut depth = 0usize;
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return Unparsed::Bad(&s[..=i]);
                }
            }
            _ => {}
        }
    }
    Unparsed::Bad(s)
}

/// Toggles the case of the first letter (or every one, `all`); in the C
/// locale only ASCII letters change, as in bash.
fn toggle_case(s: &str, all: bool, utf8: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        if (i > 0 && !all) || !(utf8 || c.is_ascii()) {
            out.push(c);
        } else if c.is_uppercase() {
            out.extend(c.to_lowercase());
        } else if c.is_lowercase() {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// brush-parser leaves a `${…}` form it does not know (`${x~}`) as the text
/// `$` followed by the text `{x~}`: joined here so that
/// [`Shell::expand_unparsed_braces`] sees the whole form.
fn join_dollar_brace(pieces: Vec<WordPieceWithSource>) -> Vec<WordPieceWithSource> {
    let mut out: Vec<WordPieceWithSource> = Vec::with_capacity(pieces.len());
    for mut p in pieces {
        if let WordPiece::DoubleQuotedSequence(inner) = &mut p.piece {
            *inner = join_dollar_brace(std::mem::take(inner));
        }
        if let (Some(prev), WordPiece::Text(t)) = (out.last_mut(), &p.piece)
            && matches!(&prev.piece, WordPiece::Text(d) if d.ends_with('$'))
            && t.starts_with('{')
            && let WordPiece::Text(d) = &mut prev.piece
        {
            d.push_str(t);
            prev.end_index = p.end_index;
            continue;
        }
        out.push(p);
    }
    out
}
