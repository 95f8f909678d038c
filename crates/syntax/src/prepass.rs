//! A lexical pre-pass that rewrites constructs brush-parser gets wrong into
//! equivalent text it gets right, before the script is parsed:
//!
//! * `#` inside `$(( … ))` (and `(( … ))`, `$[ … ]`): brush-parser's tokenizer takes it as the start of a
//!   comment and drops the rest of the line, so `$(( 1 # c ⏎ ))` silently became
//!   `1`. For bash the `#` is just text that the arithmetic then rejects (status 1,
//!   "invalid arithmetic operator"). The pass escapes it (`\#`) so it reaches the
//!   arithmetic evaluator, which fails the same way at run time.
//! * A here-document delimiter holding `$(…)`, `${…}` or `$((…))` (`<<$(cmd)`):
//!   bash takes the delimiter literally (no expansion), brush-parser strips the
//!   `$(`. The pass renames the delimiter and its end line to a plain word that
//!   does not occur in the script (quoted when the original was quoted, so the
//!   body is expanded or not exactly as before).
//! * A `case` pattern without its optional `(` inside `$( … )`: the pattern's `)`
//!   closed the substitution. The pass inserts the optional `(`, which bash
//!   accepts with the same meaning.
//! * `for NAME in ;` (an empty list): brush-parser reads it as `for NAME;`, a loop
//!   over `"$@"`. The pass adds a word that expands to nothing.
//!
//! * A reserved word after an assignment (`FOO=1 for`): a command name for bash;
//!   it gets a backslash.
//! * A run of blanks inside `${…}`: brush-parser's tokenizer makes it one space;
//!   it is held as placeholder characters that [`crate::parse_word`] gives back.
//! * A here-document without its end line: bash takes the rest of the text as
//!   its body; the end line is added at the end.
//! * `[[ … ]]` is read with bash's grammar ([`cond`]): its syntax errors are
//!   reported, and operands spelled like operators are escaped.
//!
//! Rewrites never add or remove a newline before the end of the text, so line
//! numbers stay true. Here-document
//! bodies, quotes and comments are skipped: nothing in them is rewritten.

use std::borrow::Cow;

mod cond;
pub(crate) use cond::CondError;

/// One change to the source: replace `start..end` by `text`.
struct Edit {
    start: usize,
    end: usize,
    text: String,
}

/// What ends a command list being scanned.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Until {
    Eof,
    /// The `)` of a `$(`.
    CloseParen,
}

/// Where a `case` being scanned is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum CaseState {
    /// After `case`: the subject word, then `in`.
    Subject { seen_subject: bool },
    /// Where a pattern list (or `esac`) comes next.
    Pattern,
    /// Inside the commands of one clause.
    Body,
}

/// A here-document whose body starts at the next newline.
struct PendingHeredoc {
    /// The delimiter as written (`$(echo)`, `"E"`, …).
    raw_start: usize,
    raw_end: usize,
    strip_tabs: bool,
}

struct Scan<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: usize,
    edits: Vec<Edit>,
    heredocs: Vec<PendingHeredoc>,
    /// Counter for fresh delimiter names.
    fresh: usize,
    /// The first `[[ … ]]` bash would not parse.
    cond_error: Option<CondError>,
    /// A here-document's end line is missing (the text ends in its body).
    heredoc_open: bool,
}

/// Rewrites `source` (see the module docs); borrowed when nothing changes. The
/// error is the first `[[ … ]]` that bash would not parse (see [`cond`]).
pub(crate) fn rewrite(source: &str) -> (Cow<'_, str>, Option<CondError>) {
    // Cheap exit: none of the constructs can occur without these.
    let maybe = source.contains("((")
        || source.contains("$[")
        || source.contains("<<")
        || source.contains("case")
        || source.contains("for")
        || source.contains("[[")
        || source.contains("${");
    if !maybe {
        return (Cow::Borrowed(source), None);
    }
    let mut scan = Scan::new(source);
    scan.commands(Until::Eof, false);
    let cond_error = scan.cond_error.take();
    if scan.edits.is_empty() {
        return (Cow::Borrowed(source), cond_error);
    }
    let mut edits = scan.edits;
    edits.sort_by_key(|e| e.start);
    let mut out = String::with_capacity(source.len() + edits.len() * 4);
    let mut at = 0;
    for e in edits {
        if e.start < at {
            // Overlapping edits cannot happen by construction; keep the first.
            continue;
        }
        out.push_str(&source[at..e.start]);
        out.push_str(&e.text);
        at = e.end;
    }
    out.push_str(&source[at..]);
    (Cow::Owned(out), cond_error)
}

/// True when `source` ends inside a here-document's body (its end line never
/// comes): a script takes the rest as the body, a line typed at a prompt goes
/// on.
pub(crate) fn heredoc_open(source: &str) -> bool {
    if !source.contains("<<") {
        return false;
    }
    let mut scan = Scan::new(source);
    scan.commands(Until::Eof, false);
    scan.heredoc_open
}

/// A quoted or expanded word after `case` is its subject.
fn mark_subject(cases: &mut [CaseState]) {
    if let Some(CaseState::Subject { seen_subject }) = cases.last_mut() {
        *seen_subject = true;
    }
}

/// Characters that end an unquoted word.
fn is_word_end(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')'
    )
}

/// True when `word` starts an assignment (`NAME=`, `NAME+=`, `NAME[…]=`).
fn is_assignment_start(word: &str) -> bool {
    let name_len = word
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    if name_len == 0 || word.as_bytes()[0].is_ascii_digit() {
        return false;
    }
    let mut rest = &word[name_len..];
    if rest.starts_with('[') {
        match rest.find(']') {
            Some(i) => rest = &rest[i + 1..],
            None => return false,
        }
    }
    rest.starts_with('=') || rest.starts_with("+=")
}

/// Reserved words that are plain command names after an assignment
/// (`FOO=bar for` runs a command called `for`).
fn reserved_after_assignment(word: &str) -> bool {
    matches!(
        word,
        "if" | "then"
            | "else"
            | "elif"
            | "fi"
            | "do"
            | "done"
            | "case"
            | "esac"
            | "while"
            | "until"
            | "for"
            | "select"
            | "function"
            | "{"
            | "}"
            | "!"
            | "[["
            | "]]"
            | "in"
    )
}

/// Reserved words after which a command (and so `case`/`esac`) may start.
fn keeps_command_start(word: &str) -> bool {
    matches!(
        word,
        "then" | "do" | "else" | "elif" | "if" | "while" | "until" | "!" | "{" | "time"
    )
}

impl<'a> Scan<'a> {
    /// A scan of `source` from its start.
    fn new(source: &'a str) -> Self {
        Scan {
            src: source,
            bytes: source.as_bytes(),
            pos: 0,
            edits: Vec::new(),
            heredocs: Vec::new(),
            fresh: 0,
            cond_error: None,
            heredoc_open: false,
        }
    }

    /// True when the text before `at` is a function's header (`name()` or
    /// `function name`), blanks and newlines between: what starts at `at` is
    /// the body.
    fn after_function_header(&self, at: usize) -> bool {
        let before = &self.bytes[..at];
        let end = before
            .iter()
            .rposition(|b| !b" \t\n".contains(b))
            .map_or(0, |i| i + 1);
        let head = &before[..end];
        let is_name = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':');
        if let Some(rest) = head.strip_suffix(b")") {
            let rest = rest.trim_ascii_end();
            return rest
                .strip_suffix(b"(")
                .and_then(|r| r.trim_ascii_end().last())
                .is_some_and(is_name);
        }
        // `function name`: the name, blanks, then the keyword at a word start.
        let name_start = head.iter().rposition(|b| !is_name(b)).map_or(0, |i| i + 1);
        if name_start == head.len() {
            return false;
        }
        let keyword = head[..name_start].trim_ascii_end();
        // The keyword itself at a command start, not an argument `function`.
        keyword.strip_suffix(b"function").is_some_and(|k| {
            let k = &k[..k
                .iter()
                .rposition(|b| !matches!(b, b' ' | b'\t'))
                .map_or(0, |i| i + 1)];
            k.last().is_none_or(|b| b"\n;&|(){}".contains(b))
                || [&b"then"[..], b"do", b"else"].iter().any(|w| {
                    k.strip_suffix(*w)
                        .is_some_and(|r| r.last().is_none_or(u8::is_ascii_whitespace))
                })
        })
    }

    fn peek(&self, off: usize) -> Option<u8> {
        self.bytes.get(self.pos + off).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        self.bytes[self.pos..].starts_with(s.as_bytes())
    }

    /// Scans a command list until `until`; `in_subst` is true inside `$( )`
    /// (where `case` patterns get their `(`). Returns with `pos` after the closer.
    fn commands(&mut self, until: Until, in_subst: bool) {
        let mut parens: usize = 0;
        let mut cases: Vec<CaseState> = Vec::new();
        let mut cmd_start = true;
        while let Some(b) = self.peek(0) {
            // A pattern is due: `(` optional, then up to the unnested `)`.
            if let Some(CaseState::Pattern) = cases.last() {
                if matches!(b, b' ' | b'\t' | b'\n') {
                    if b == b'\n' {
                        self.newline();
                    } else {
                        self.pos += 1;
                    }
                    continue;
                }
                if b == b'#' {
                    self.skip_comment();
                    continue;
                }
                if self.word_at_pos() == "esac" {
                    cases.pop();
                    self.pos += 4;
                    cmd_start = false;
                    continue;
                }
                if b == b'(' {
                    self.pos += 1;
                } else if in_subst {
                    self.edits.push(Edit {
                        start: self.pos,
                        end: self.pos,
                        text: "(".into(),
                    });
                }
                self.pattern();
                if let Some(top) = cases.last_mut() {
                    *top = CaseState::Body;
                }
                cmd_start = true;
                continue;
            }
            match b {
                b'\\' => {
                    self.pos += 2;
                    cmd_start = false;
                }
                b'\'' => {
                    self.single_quote();
                    cmd_start = false;
                    mark_subject(&mut cases);
                }
                b'"' => {
                    self.pos += 1;
                    self.double_quote();
                    cmd_start = false;
                    mark_subject(&mut cases);
                }
                b'`' => {
                    self.backquote();
                    cmd_start = false;
                }
                b'$' => {
                    self.dollar();
                    cmd_start = false;
                    mark_subject(&mut cases);
                }
                b'#' if cmd_start || self.after_blank() => self.skip_comment(),
                b'\n' => {
                    self.newline();
                    cmd_start = true;
                }
                b' ' | b'\t' => self.pos += 1,
                // An arithmetic command `(( … ))`.
                b'(' if cmd_start && self.starts_with("((") => {
                    self.pos += 2;
                    self.arithmetic();
                    cmd_start = false;
                }
                b'(' => {
                    parens += 1;
                    self.pos += 1;
                    cmd_start = true;
                }
                b')' => {
                    // `name()`: the function's body (a compound command) follows.
                    let empty_parens = self.pos > 0 && self.bytes[self.pos - 1] == b'(';
                    self.pos += 1;
                    if parens == 0 {
                        if until == Until::CloseParen {
                            return;
                        }
                    } else {
                        parens -= 1;
                    }
                    cmd_start = empty_parens;
                }
                b';' => {
                    let clause_end = self.starts_with(";;") || self.starts_with(";&");
                    if clause_end {
                        if let Some(top @ CaseState::Body) = cases.last_mut() {
                            *top = CaseState::Pattern;
                        }
                        self.pos += if self.starts_with(";;&") { 3 } else { 2 };
                    } else {
                        self.pos += 1;
                    }
                    cmd_start = true;
                }
                b'&' | b'|' => {
                    self.pos += 1;
                    cmd_start = true;
                }
                b'<' if self.starts_with("<<") && !self.starts_with("<<<") => {
                    self.heredoc_operator();
                    cmd_start = false;
                }
                // A here-string: its `<<` is no here-document.
                b'<' if self.starts_with("<<<") => {
                    self.pos += 3;
                    cmd_start = false;
                }
                b'<' | b'>' => {
                    self.pos += 1;
                    cmd_start = false;
                }
                _ => {
                    let word = self.word_at_pos();
                    if word.is_empty() {
                        // Non-ASCII or other text: part of a word.
                        self.pos += self.src[self.pos..]
                            .chars()
                            .next()
                            .map_or(1, char::len_utf8);
                        cmd_start = false;
                        continue;
                    }
                    let len = word.len();
                    match cases.last_mut() {
                        Some(CaseState::Subject { seen_subject }) => {
                            if *seen_subject && word == "in" {
                                if let Some(top) = cases.last_mut() {
                                    *top = CaseState::Pattern;
                                }
                            } else {
                                *seen_subject = true;
                            }
                            self.pos += len;
                            continue;
                        }
                        Some(CaseState::Body) if cmd_start && word == "esac" => {
                            cases.pop();
                            self.pos += len;
                            cmd_start = false;
                            continue;
                        }
                        _ => {}
                    }
                    if cmd_start && is_assignment_start(word) {
                        self.assignment_prefix();
                        cmd_start = false;
                        continue;
                    }
                    // Not only at a command start (a function body's `{ for`):
                    // the word added expands to nothing, so even an argument
                    // `for x in` is unchanged.
                    if word == "for" {
                        self.empty_for_list(len);
                    }
                    if word == "[["
                        && self.bytes.get(self.pos + 2).is_none_or(|&b| is_word_end(b))
                        && (cmd_start || self.after_function_header(self.pos))
                    {
                        let start = self.pos;
                        let body = self.after_function_header(start);
                        if let Some(e) = self.cond_command() {
                            self.cond_error = Some(e);
                            // The first error is bash's: stop scanning.
                            self.pos = self.bytes.len();
                        } else if body {
                            // `f() [[ … ]]`: brush-parser takes only a group as
                            // the body there; the braces change nothing.
                            self.edits.push(Edit {
                                start,
                                end: start,
                                text: "{ ".into(),
                            });
                            self.edits.push(Edit {
                                start: self.pos,
                                end: self.pos,
                                text: "; }".into(),
                            });
                        }
                        cmd_start = false;
                        continue;
                    }
                    if cmd_start && word == "case" {
                        cases.push(CaseState::Subject {
                            seen_subject: false,
                        });
                        self.pos += len;
                        cmd_start = false;
                        continue;
                    }
                    self.pos += len;
                    cmd_start = cmd_start && keeps_command_start(word);
                }
            }
        }
    }

    /// At an assignment word in command position: steps over it and any that
    /// follow; a reserved word after them is a command name for bash, so it gets a
    /// backslash (brush-parser would take it for the keyword).
    fn assignment_prefix(&mut self) {
        loop {
            while let Some(b) = self.peek(0) {
                if self.skip_nested(b) {
                    continue;
                }
                if is_word_end(b) {
                    break;
                }
                self.pos += 1;
            }
            if !matches!(self.peek(0), Some(b' ' | b'\t')) {
                // The end of the command, or an array's `(`: the scan goes on.
                return;
            }
            while matches!(self.peek(0), Some(b' ' | b'\t')) {
                self.pos += 1;
            }
            let w = self.word_at_pos();
            if is_assignment_start(w) {
                continue;
            }
            let ends = self
                .bytes
                .get(self.pos + w.len())
                .is_none_or(|&b| is_word_end(b));
            if ends && reserved_after_assignment(w) {
                self.edits.push(Edit {
                    start: self.pos,
                    end: self.pos,
                    text: "\\".into(),
                });
                self.pos += w.len();
            }
            return;
        }
    }

    /// The run of plain word characters at `pos` (ASCII letters, digits, `_`, and
    /// the punctuation that cannot change the scan), up to a special character.
    fn word_at_pos(&self) -> &'a str {
        let start = self.pos;
        let mut end = start;
        while let Some(&b) = self.bytes.get(end) {
            if b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'_' | b'-'
                        | b'+'
                        | b'='
                        | b'.'
                        | b','
                        | b'/'
                        | b':'
                        | b'@'
                        | b'%'
                        | b'!'
                        | b'{'
                        | b'}'
                        | b'['
                        | b']'
                        | b'*'
                        | b'?'
                        | b'^'
                        | b'~'
                )
            {
                end += 1;
            } else {
                break;
            }
        }
        &self.src[start..end]
    }

    /// At `for` (`len` bytes): when it reads `for NAME in` with nothing before the
    /// `;` or newline, brush-parser takes the empty list for no list at all and
    /// loops over `"$@"`; bash loops zero times. Adds a word that always expands to
    /// no fields (`:+` of anything is empty, and `set -u` never looks at it).
    fn empty_for_list(&mut self, len: usize) {
        let rest = &self.bytes[self.pos + len..];
        let blanks = |from: usize| {
            from + rest[from..]
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t'))
                .count()
        };
        let name_start = blanks(0);
        if name_start == 0 {
            return;
        }
        let name_end = name_start
            + rest[name_start..]
                .iter()
                .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
                .count();
        if name_end == name_start {
            return;
        }
        let in_start = blanks(name_end);
        if in_start == name_end || !rest[in_start..].starts_with(b"in") {
            return;
        }
        let after_in = in_start + 2;
        let end = blanks(after_in);
        if matches!(rest.get(end), Some(b';' | b'\n')) {
            let at = self.pos + len + after_in;
            self.edits.push(Edit {
                start: at,
                end: at,
                text: " ${_safesh_no_words:+}".into(),
            });
        }
    }

    /// True when the character before `pos` is a blank or an operator character,
    /// so a `#` at `pos` starts a comment.
    fn after_blank(&self) -> bool {
        self.pos == 0 || is_word_end(self.bytes[self.pos - 1])
    }

    fn skip_comment(&mut self) {
        while let Some(b) = self.peek(0) {
            if b == b'\n' {
                return;
            }
            self.pos += 1;
        }
    }

    fn single_quote(&mut self) {
        self.pos += 1;
        while let Some(b) = self.peek(0) {
            self.pos += 1;
            if b == b'\'' {
                return;
            }
        }
    }

    /// `$'…'`, with backslash escapes.
    fn ansi_c_quote(&mut self) {
        self.pos += 2;
        while let Some(b) = self.peek(0) {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'\'' => return,
                _ => {}
            }
        }
    }

    /// Inside `"…"` (after the opening quote) up to and past the closing one.
    fn double_quote(&mut self) {
        while let Some(b) = self.peek(0) {
            match b {
                b'\\' => self.pos += 2,
                b'"' => {
                    self.pos += 1;
                    return;
                }
                b'`' => self.backquote(),
                b'$' => {
                    if self.peek(1) == Some(b'\'') {
                        // Not ANSI-C inside double quotes.
                        self.pos += 1;
                    } else {
                        self.dollar();
                    }
                }
                _ => self.pos += 1,
            }
        }
    }

    /// A backquoted substitution is opaque: its text is re-parsed later.
    fn backquote(&mut self) {
        self.pos += 1;
        while let Some(b) = self.peek(0) {
            self.pos += 1;
            match b {
                b'\\' => self.pos += 1,
                b'`' => return,
                _ => {}
            }
        }
    }

    /// At a `$`: `$((`, `$(`, `${`, `$'`, or a plain `$`.
    fn dollar(&mut self) {
        if self.starts_with("$((") {
            self.pos += 3;
            self.arithmetic();
        } else if self.starts_with("$(") {
            self.pos += 2;
            self.commands(Until::CloseParen, true);
        } else if self.starts_with("${") {
            self.pos += 2;
            self.braced();
        } else if self.starts_with("$[") {
            self.pos += 2;
            self.arithmetic_until(b'[', b']', 1);
        } else if self.starts_with("$'") {
            self.ansi_c_quote();
        } else {
            self.pos += 1;
        }
    }

    /// Steps over a quoted or substituted part starting at `b` (an escape,
    /// quotes, a backquote, `$…`); false when `b` starts none of them.
    fn skip_nested(&mut self, b: u8) -> bool {
        match b {
            b'\\' => self.pos += 2,
            b'\'' => self.single_quote(),
            b'"' => {
                self.pos += 1;
                self.double_quote();
            }
            b'`' => self.backquote(),
            b'$' => self.dollar(),
            _ => return false,
        }
        true
    }

    /// Inside `${…}` up to and past its `}`. A run of blanks other than one space
    /// is held as placeholders (brush-parser's tokenizer makes it one space):
    /// [`crate::restore_blanks`] gives it back where the word is parsed.
    fn braced(&mut self) {
        let mut depth: usize = 0;
        while let Some(b) = self.peek(0) {
            if self.skip_nested(b) {
                continue;
            }
            match b {
                b' ' | b'\t' => {
                    let start = self.pos;
                    while matches!(self.peek(0), Some(b' ' | b'\t')) {
                        self.pos += 1;
                    }
                    let run = &self.src[start..self.pos];
                    if run != " " {
                        self.edits.push(Edit {
                            start,
                            end: self.pos,
                            text: run
                                .chars()
                                .map(|c| {
                                    if c == '\t' {
                                        crate::HELD_TAB
                                    } else {
                                        crate::HELD_SPACE
                                    }
                                })
                                .collect(),
                        });
                    }
                }
                b'{' => {
                    depth += 1;
                    self.pos += 1;
                }
                b'}' => {
                    self.pos += 1;
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                _ => self.pos += 1,
            }
        }
    }

    /// Inside `$((` up to and past the matching `))`; escapes a `#` the tokenizer
    /// would take as a comment.
    fn arithmetic(&mut self) {
        self.arithmetic_until(b'(', b')', 2);
    }

    /// Inside an arithmetic text opened `depth` times by `open` (`$((`, `((`:
    /// two `(`; `$[`: one `[`), up to and past the matching `close`.
    fn arithmetic_until(&mut self, open: u8, close: u8, mut depth: usize) {
        while let Some(b) = self.peek(0) {
            if self.skip_nested(b) {
                continue;
            }
            match b {
                _ if b == open => {
                    depth += 1;
                    self.pos += 1;
                }
                _ if b == close => {
                    self.pos += 1;
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                b'#' if self.after_blank() => {
                    self.edits.push(Edit {
                        start: self.pos,
                        end: self.pos,
                        text: "\\".into(),
                    });
                    self.pos += 1;
                }
                b'\n' => self.newline(),
                _ => self.pos += 1,
            }
        }
    }

    /// A case pattern list after its optional `(`: up to and past the unnested `)`.
    fn pattern(&mut self) {
        let mut depth: usize = 0;
        while let Some(b) = self.peek(0) {
            if self.skip_nested(b) {
                continue;
            }
            match b {
                b'(' => {
                    depth += 1;
                    self.pos += 1;
                }
                b')' => {
                    self.pos += 1;
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                b'\n' => self.newline(),
                _ => self.pos += 1,
            }
        }
    }

    /// At `<<` or `<<-`: note the delimiter; its body starts at the next newline.
    fn heredoc_operator(&mut self) {
        self.pos += 2;
        let strip_tabs = self.peek(0) == Some(b'-');
        if strip_tabs {
            self.pos += 1;
        }
        while matches!(self.peek(0), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        let raw_start = self.pos;
        // The delimiter word: quotes and `$(…)`/`${…}` nest; it ends at a blank
        // or an operator character outside them.
        while let Some(b) = self.peek(0) {
            match b {
                b'\\' => self.pos += 2,
                b'\'' => self.single_quote(),
                b'"' => {
                    self.pos += 1;
                    self.double_quote();
                }
                b'`' => self.backquote(),
                b'$' if matches!(self.peek(1), Some(b'(' | b'{')) => {
                    // Skip the balanced group without rewriting inside it.
                    let before = self.edits.len();
                    self.dollar();
                    self.edits.truncate(before);
                }
                _ if is_word_end(b) => break,
                _ => self.pos += 1,
            }
        }
        let raw_end = self.pos.min(self.bytes.len());
        self.pos = raw_end;
        if raw_end > raw_start {
            self.heredocs.push(PendingHeredoc {
                raw_start,
                raw_end,
                strip_tabs,
            });
        }
    }

    /// At a newline: step over it, then over the bodies of pending here-documents.
    fn newline(&mut self) {
        self.pos += 1;
        let pending = std::mem::take(&mut self.heredocs);
        for doc in pending {
            self.heredoc_body(&doc);
        }
    }

    /// Skips one here-document body and its end line; renames a delimiter that
    /// brush-parser would misread (see the module docs).
    fn heredoc_body(&mut self, doc: &PendingHeredoc) {
        let raw = &self.src[doc.raw_start..doc.raw_end];
        let quoted = raw.contains(['\'', '"', '\\']);
        let delim = if quoted {
            unquote(raw)
        } else {
            raw.to_string()
        };
        let misread = raw.contains("$(") || raw.contains("${");
        while self.pos < self.bytes.len() {
            let line_start = self.pos;
            let line_end = self.src[line_start..]
                .find('\n')
                .map_or(self.bytes.len(), |i| line_start + i);
            let line = &self.src[line_start..line_end];
            let content = if doc.strip_tabs {
                line.trim_start_matches('\t')
            } else {
                line
            };
            self.pos = (line_end + 1).min(self.bytes.len());
            // An unquoted body expands `$(…)`: its case patterns need their
            // `(` as anywhere else (`$(case a in a) …;; esac)`).
            if !quoted && content != delim && line.contains("$(") {
                let mut i = line_start;
                let mut past_line = false;
                while let Some(off) = self.src[i..line_end].find("$(") {
                    let at = i + off;
                    if at > line_start && self.bytes[at - 1] == b'\\' {
                        i = at + 2;
                        continue;
                    }
                    self.pos = at;
                    self.dollar();
                    if self.pos > line_end {
                        // The substitution goes on past this line: go on after it.
                        past_line = true;
                        break;
                    }
                    i = self.pos.max(at + 2);
                }
                if !past_line {
                    self.pos = (line_end + 1).min(self.bytes.len());
                }
                continue;
            }
            if content == delim {
                if misread {
                    let name = self.fresh_name();
                    let at = line_end - content.len();
                    self.edits.push(Edit {
                        start: at,
                        end: line_end,
                        text: name.clone(),
                    });
                    self.edits.push(Edit {
                        start: doc.raw_start,
                        end: doc.raw_end,
                        text: if quoted { format!("'{name}'") } else { name },
                    });
                }
                return;
            }
        }
        // No end line: bash takes the rest of the text as the body (with a
        // warning); brush-parser wants the end line, so it is added.
        self.heredoc_open = true;
        if !misread && !delim.is_empty() && !delim.contains('\n') {
            let end = self.bytes.len();
            let newline = if self.src.ends_with('\n') { "" } else { "\n" };
            self.edits.push(Edit {
                start: end,
                end,
                text: format!("{newline}{delim}\n"),
            });
        }
    }

    /// A delimiter name that occurs nowhere in the script.
    fn fresh_name(&mut self) -> String {
        loop {
            self.fresh += 1;
            let name = format!("SAFESH_HEREDOC_END_{}", self.fresh);
            if !self.src.contains(&name) {
                return name;
            }
        }
    }
}

/// Quote removal for a here-document delimiter (bash does no expansion there).
fn unquote(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '\\') | (Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    out.push(n);
                }
            }
            (_, c) => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    fn rewrite(s: &str) -> std::borrow::Cow<'_, str> {
        super::rewrite(s).0
    }

    #[test]
    fn escapes_a_hash_inside_arithmetic() {
        assert_eq!(rewrite("echo $(( 1 # c\n))\n"), "echo $(( 1 \\# c\n))\n");
        // Bases, `$#` and `${#x}` are not comments and stay as they are.
        let s = "echo $((16#ff + $# + ${#x}))\n";
        assert_eq!(rewrite(s), s);
        // The arithmetic command and `$[ ]` too.
        assert_eq!(
            rewrite("(( 1 # c\n)); echo $[ 2 # d\n]\n"),
            "(( 1 \\# c\n)); echo $[ 2 \\# d\n]\n"
        );
        // A comment after the arithmetic stays a comment.
        let s = "echo $((1)) # note ))\n";
        assert_eq!(rewrite(s), s);
    }

    #[test]
    fn adds_case_parens_in_substitutions_of_unquoted_heredoc_bodies() {
        assert_eq!(
            rewrite("cat <<E\n$(case a in a) echo A;; esac)\nE\n"),
            "cat <<E\n$(case a in (a) echo A;; esac)\nE\n"
        );
        // A quoted body is text.
        let s = "cat <<'E'\n$(case a in a) echo A;; esac)\nE\n";
        assert_eq!(rewrite(s), s);
    }

    #[test]
    fn gives_an_empty_for_list_a_word_that_expands_to_nothing() {
        assert_eq!(
            rewrite("for x in ; do echo $x; done\n"),
            "for x in ${_safesh_no_words:+} ; do echo $x; done\n"
        );
        assert_eq!(
            rewrite("f() { for x in\ndo :; done; }\n"),
            "f() { for x in ${_safesh_no_words:+}\ndo :; done; }\n"
        );
        // A list, or no `in` at all, stays as written.
        for s in [
            "for x in a b; do :; done\n",
            "for x; do :; done\n",
            "for x do :; done\n",
        ] {
            assert_eq!(rewrite(s), s);
        }
    }

    #[test]
    fn adds_the_optional_paren_to_case_patterns_in_substitutions() {
        assert_eq!(
            rewrite("x=$(case a in a) echo y;; b|c) :;; esac)\n"),
            "x=$(case a in (a) echo y;; (b|c) :;; esac)\n"
        );
        // Outside a substitution nothing changes.
        let s = "case a in a) echo y;; esac\n";
        assert_eq!(rewrite(s), s);
        // Patterns that already have `(` and nested cases.
        assert_eq!(
            rewrite("$(case a in (a) case b in b) :;; esac;; esac)\n"),
            "$(case a in (a) case b in (b) :;; esac;; esac)\n"
        );
    }

    #[test]
    fn renames_a_substitution_shaped_heredoc_delimiter() {
        assert_eq!(
            rewrite("cat <<$(echo)\nbody\n$(echo)\necho after\n"),
            "cat <<SAFESH_HEREDOC_END_1\nbody\nSAFESH_HEREDOC_END_1\necho after\n"
        );
        assert_eq!(
            rewrite("cat <<\"${x}\"\nbody $x\n${x}\n"),
            "cat <<'SAFESH_HEREDOC_END_1'\nbody $x\nSAFESH_HEREDOC_END_1\n"
        );
    }

    #[test]
    fn ends_a_heredoc_left_open_and_leaves_here_strings_alone() {
        assert_eq!(rewrite("cat <<E\nabc\n"), "cat <<E\nabc\nE\n");
        assert_eq!(rewrite("cat <<'E' x\n$a\n"), "cat <<'E' x\n$a\nE\n");
        let s = "cat <<<\"here\"\necho x\n";
        assert_eq!(rewrite(s), s);
    }

    #[test]
    fn leaves_heredoc_bodies_and_quotes_alone() {
        let s = "cat <<'E'\n$(( 1 # c ))\n$(case a in a) :;; esac)\nE\necho '$(( 1 # c ))'\n";
        assert_eq!(rewrite(s), s);
    }
}
