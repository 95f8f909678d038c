//! The pre-run pass: before a script (or `eval`/`source`/trap text) runs, every
//! command whose words are fixed in the text is decided by the policy, with the
//! exact expansion the interpreter will give it (quotes, escapes, `$'…'`, braces,
//! `~`). One refusal stops the whole script before anything runs. Commands whose
//! name or arguments come from run-time expansion are decided when reached (the
//! same decision, in `dispatch`). `safesh check` shows this pass's result.

use crate::error::Refusal;
use crate::interp::Shell;
use crate::interp::simple::Resolved;
use safesh_policy::{Decision, Kind, Policy, Request, Resolver};
use safesh_syntax::WordPiece;
use safesh_syntax::ast::{self, Command, CompoundCommand};
use std::collections::HashSet;
use std::path::Path;

/// How the pre-run pass judged one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed.
    Allow,
    /// Decided only when reached (its words come from run-time expansion).
    RunTime,
    /// No such command (127 when run, not a refusal).
    NotFound,
    /// Refused.
    Refuse(Refusal),
}

/// One command seen by the pre-run pass.
#[derive(Clone, Debug)]
pub struct Checked {
    /// 1-based line in the text checked (nested text: the line of the outer word).
    pub line: usize,
    /// The command as written.
    pub text: String,
    /// The expanded argv, when it is fixed in the text.
    pub argv: Option<Vec<String>>,
    /// The program an external name resolves to.
    pub program: Option<String>,
    /// The verdict.
    pub verdict: Verdict,
}

impl Shell {
    /// Decides every fixed command of `program`; the first refusal, if any.
    pub(crate) fn precheck(&self, program: &ast::Program) -> Result<(), Refusal> {
        if self.shared.policy.is_none() {
            return Ok(());
        }
        let found = self.check_program(program, true);
        match found.into_iter().find_map(|c| match c.verdict {
            Verdict::Refuse(r) => Some(r),
            _ => None,
        }) {
            Some(r) => {
                // Decided from the text before anything ran: the agent's words.
                self.audit_refusal(r.details.command.clone().unwrap_or_default(), &r);
                Err(r)
            }
            None => Ok(()),
        }
    }

    /// Walks `program` and decides each command it can (for `safesh check`).
    pub(crate) fn check_program(
        &self,
        program: &ast::Program,
        stop_at_first: bool,
    ) -> Vec<Checked> {
        self.check_program_with_writes(program, stop_at_first).0
    }

    /// [`Self::check_program`], plus the targets of its output redirections
    /// (`> f`, `>> f`, `&> f`: the words as written), for the risk of a script.
    pub(crate) fn check_program_with_writes(
        &self,
        program: &ast::Program,
        stop_at_first: bool,
    ) -> (Vec<Checked>, Vec<String>) {
        let Some(policy) = self.shared.policy.clone() else {
            return (Vec::new(), Vec::new());
        };
        let mut functions = HashSet::new();
        collect_functions(program, &mut functions);
        let mut w = Walker {
            shell: self.subshell(),
            policy: &policy,
            functions,
            out: Vec::new(),
            refused: false,
            timed_out: false,
            stop_at_first,
            depth: 0,
            line_base: 0,
            cwd_known: !changes_directory(program),
            writes: Vec::new(),
        };
        w.program(program);
        (w.out, w.writes)
    }

    /// What a name resolves to, for the policy (externals through the trusted PATH).
    pub(crate) fn policy_kind(&self, policy: &Policy, name: &str, skip_functions: bool) -> Kind {
        match self.resolve(name, skip_functions) {
            Resolved::Function(_) => Kind::Function,
            Resolved::Builtin => Kind::Builtin,
            Resolved::Utility(_) | Resolved::Platform(_) => Kind::Utility,
            Resolved::NotFound => match policy.resolve_program(name, &self.cwd) {
                Some(p) => Kind::External(p),
                None => Kind::NotFound,
            },
        }
    }
}

/// The interpreter's answers to the policy's questions about inner commands.
pub(crate) struct ShellResolver<'a> {
    pub shell: &'a Shell,
    pub policy: &'a Policy,
    /// Names defined as functions anywhere in the text being checked.
    pub functions: Option<&'a HashSet<String>>,
}

impl Resolver for ShellResolver<'_> {
    fn kind(&self, name: &str) -> Kind {
        if self.functions.is_some_and(|f| f.contains(name)) {
            return Kind::Function;
        }
        self.shell.policy_kind(self.policy, name, false)
    }

    fn check_utility(&self, argv: &[String]) -> Option<Refusal> {
        let name = argv.first()?;
        let args = &argv[1..];
        let escape = match name.rsplit('/').next()? {
            "awk" | "mawk" | "gawk" | "nawk" => safesh_tools_awk::shell_escape(args),
            "sed" => safesh_tools_regex::sed::shell_escape(args),
            _ => None,
        }?;
        Some(crate::host::shell_string_refusal(&escape))
    }

    fn check_script(&self, text: &str) -> Option<Refusal> {
        let script = match self.shell.parse_cached(text) {
            Ok(s) => s,
            Err(_) => return None, // reported when it runs
        };
        self.shell.precheck(&script.program).err()
    }
}

struct Walker<'p> {
    shell: Shell,
    policy: &'p Policy,
    functions: HashSet<String>,
    out: Vec<Checked>,
    /// A refusal is in `out`.
    refused: bool,
    /// The deadline passed (or the request was cancelled) during the walk.
    timed_out: bool,
    stop_at_first: bool,
    depth: usize,
    line_base: usize,
    /// False when the text changes directory somewhere: relative paths are then
    /// decided at run time.
    cwd_known: bool,
    /// Targets of output redirections, as written (risk: `crate::risk`).
    writes: Vec<String>,
}

/// Nested text (`$(…)` inside `$(…)`) is walked at most this deep.
const MAX_DEPTH: usize = 32;

fn collect_functions(p: &ast::Program, out: &mut HashSet<String>) {
    fn list(l: &ast::CompoundList, out: &mut HashSet<String>) {
        for item in &l.0 {
            let mut pipes = vec![&item.0.first];
            for ao in &item.0.additional {
                match ao {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => pipes.push(p),
                }
            }
            for p in pipes {
                for c in &p.seq {
                    command(c, out);
                }
            }
        }
    }
    fn command(c: &Command, out: &mut HashSet<String>) {
        match c {
            Command::Function(f) => {
                out.insert(f.fname.value.clone());
                compound(&f.body.0, out);
            }
            Command::Compound(cc, _) => compound(cc, out),
            _ => {}
        }
    }
    fn compound(c: &CompoundCommand, out: &mut HashSet<String>) {
        match c {
            CompoundCommand::BraceGroup(b) => list(&b.list, out),
            CompoundCommand::Subshell(s) => list(&s.list, out),
            CompoundCommand::ForClause(f) => list(&f.body.list, out),
            CompoundCommand::ArithmeticForClause(f) => list(&f.body.list, out),
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                list(&w.0, out);
                list(&w.1.list, out);
            }
            CompoundCommand::IfClause(i) => {
                list(&i.condition, out);
                list(&i.then, out);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        list(c, out);
                    }
                    list(&e.body, out);
                }
            }
            CompoundCommand::CaseClause(c) => {
                for item in &c.cases {
                    if let Some(cmd) = &item.cmd {
                        list(cmd, out);
                    }
                }
            }
            _ => {}
        }
    }
    for cc in &p.complete_commands {
        list(cc, out);
    }
}

impl Walker<'_> {
    /// True when the walk should stop: a refusal was found and only the first one
    /// is wanted. A flag, not a scan of `out`: scanning made the walk quadratic in
    /// the number of commands (issue 15 item 8).
    fn done(&self) -> bool {
        self.timed_out || (self.stop_at_first && self.refused)
    }

    /// True (and the timeout recorded as a refusal, once) when the request's
    /// deadline passed or it was cancelled: the walk stops there.
    fn out_of_time(&mut self, line: usize) -> bool {
        if self.timed_out {
            return true;
        }
        if !self.shell.cancel.is_cancelled() {
            return false;
        }
        self.timed_out = true;
        let r = self.shell.timeout_refusal();
        self.push(Checked {
            line,
            text: String::new(),
            argv: None,
            program: None,
            verdict: Verdict::Refuse(r),
        });
        true
    }

    /// Records one command's verdict.
    fn push(&mut self, c: Checked) {
        if matches!(c.verdict, Verdict::Refuse(_)) {
            self.refused = true;
        } else if self.stop_at_first {
            // The pre-run pass wants only the refusal: no copy of every command.
            return;
        }
        self.out.push(c);
    }

    fn program(&mut self, p: &ast::Program) {
        for cc in &p.complete_commands {
            self.list(cc);
        }
    }

    fn list(&mut self, l: &ast::CompoundList) {
        for item in &l.0 {
            self.pipeline(&item.0.first);
            for ao in &item.0.additional {
                match ao {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p),
                }
            }
        }
    }

    fn pipeline(&mut self, p: &ast::Pipeline) {
        for c in &p.seq {
            if self.done() || self.out_of_time(self.line_base + 1) {
                return;
            }
            self.command(c);
        }
    }

    fn command(&mut self, c: &Command) {
        match c {
            Command::Simple(s) => self.simple(s),
            Command::Compound(cc, redirects) => {
                self.compound(cc);
                for r in redirects.iter().flat_map(|l| l.0.iter()) {
                    self.redirect(r, 0);
                }
            }
            Command::Function(f) => {
                self.compound(&f.body.0);
                for r in f.body.1.iter().flat_map(|l| l.0.iter()) {
                    self.redirect(r, 0);
                }
            }
            Command::ExtendedTest(t, _) => self.test_expr(&t.expr),
        }
    }

    fn test_expr(&mut self, e: &ast::ExtendedTestExpr) {
        use ast::ExtendedTestExpr as E;
        match e {
            E::And(a, b) | E::Or(a, b) => {
                self.test_expr(a);
                self.test_expr(b);
            }
            E::Not(a) | E::Parenthesized(a) => self.test_expr(a),
            E::UnaryTest(_, w) => self.nested_in_word(w),
            E::BinaryTest(_, a, b) => {
                self.nested_in_word(a);
                self.nested_in_word(b);
            }
        }
    }

    fn compound(&mut self, c: &CompoundCommand) {
        match c {
            CompoundCommand::BraceGroup(b) => self.list(&b.list),
            CompoundCommand::Subshell(s) => self.list(&s.list),
            CompoundCommand::ForClause(f) => {
                for w in f.values.iter().flatten() {
                    self.nested_in_word(w);
                }
                self.list(&f.body.list);
            }
            CompoundCommand::ArithmeticForClause(f) => self.list(&f.body.list),
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                self.list(&w.0);
                self.list(&w.1.list);
            }
            CompoundCommand::IfClause(i) => {
                self.list(&i.condition);
                self.list(&i.then);
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.list(c);
                    }
                    self.list(&e.body);
                }
            }
            CompoundCommand::CaseClause(c) => {
                self.nested_in_word(&c.value);
                for item in &c.cases {
                    if let Some(cmd) = &item.cmd {
                        self.list(cmd);
                    }
                }
            }
            CompoundCommand::Arithmetic(_) | CompoundCommand::Coprocess(_) => {}
        }
    }

    fn line_of(&self, w: &ast::Word) -> usize {
        self.line_base + w.loc.as_ref().map(|l| l.start.line).unwrap_or(1)
    }

    fn simple(&mut self, s: &ast::SimpleCommand) {
        use ast::CommandPrefixOrSuffixItem as I;
        let mut words: Vec<&ast::Word> = Vec::new();
        let mut redirects: Vec<&ast::IoRedirect> = Vec::new();
        let mut dynamic = false;
        for item in s.prefix.iter().flat_map(|p| p.0.iter()) {
            match item {
                I::Word(w) => words.push(w),
                I::IoRedirect(r) => redirects.push(r),
                I::AssignmentWord(a, whole) => {
                    // The value's word has no position of its own: the
                    // assignment's line is its line.
                    let saved = self.line_base;
                    self.line_base = self.line_of(whole).saturating_sub(1);
                    match &a.value {
                        ast::AssignmentValue::Scalar(v) => self.nested_in_word(&unplaced(v)),
                        ast::AssignmentValue::Array(items) => {
                            for (_, v) in items {
                                self.nested_in_word(&unplaced(v));
                            }
                        }
                    }
                    self.line_base = saved;
                }
                I::ProcessSubstitution(_, sub) => {
                    self.list(&sub.list);
                    dynamic = true;
                }
            }
        }
        if let Some(w) = &s.word_or_name {
            words.push(w);
        }
        for item in s.suffix.iter().flat_map(|p| p.0.iter()) {
            match item {
                I::Word(w) | I::AssignmentWord(_, w) => words.push(w),
                I::IoRedirect(r) => redirects.push(r),
                I::ProcessSubstitution(_, sub) => {
                    self.list(&sub.list);
                    dynamic = true;
                }
            }
        }
        for w in &words {
            self.nested_in_word(w);
        }
        let line = words
            .first()
            .map(|w| self.line_of(w))
            .unwrap_or(self.line_base + 1);
        for r in &redirects {
            self.redirect(r, line);
        }
        let Some(first) = words.first() else { return };
        let text = words
            .iter()
            .map(|w| w.value.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        // The name alone fixed: decide what can be decided on the name.
        if !is_static(&first.value) {
            self.push(Checked {
                line,
                text,
                argv: None,
                program: None,
                verdict: Verdict::RunTime,
            });
            return;
        }
        let all_static = !dynamic && words.iter().all(|w| is_static(&w.value));
        let mut argv: Vec<String> = Vec::new();
        let take = if all_static { words.len() } else { 1 };
        for w in &words[..take] {
            match self.shell.expand_word_fields(w) {
                Ok(fields) => argv.extend(fields.into_iter().map(|f| f.text)),
                Err(_) => {
                    self.push(Checked {
                        line,
                        text,
                        argv: None,
                        program: None,
                        verdict: Verdict::RunTime,
                    });
                    return;
                }
            }
        }
        if argv.is_empty() {
            return;
        }
        let kind = if self.functions.contains(&argv[0]) {
            Kind::Function
        } else {
            self.shell.policy_kind(self.policy, &argv[0], false)
        };
        let program = match &kind {
            Kind::External(p) => Some(p.display().to_string()),
            _ => None,
        };
        let resolver = ShellResolver {
            shell: &self.shell,
            policy: self.policy,
            functions: Some(&self.functions),
        };
        let cwd = self.shell.cwd.clone();
        let decision = if all_static {
            self.policy.decide(
                &Request {
                    argv: &argv,
                    cwd: &cwd,
                    kind: kind.clone(),
                    force: self.shell.shared.force,
                    cwd_known: self.cwd_known,
                },
                &resolver,
            )
        } else {
            // Only the name is fixed: refusals that depend on the name alone.
            match self.policy.decide(
                &Request {
                    argv: &argv[..1],
                    cwd: &cwd,
                    kind: kind.clone(),
                    force: self.shell.shared.force,
                    cwd_known: self.cwd_known,
                },
                &resolver,
            ) {
                Decision::Refuse(r) if name_only(&r) => Decision::Refuse(r),
                Decision::NotFound => Decision::NotFound,
                _ => {
                    self.push(Checked {
                        line,
                        text,
                        argv: None,
                        program,
                        verdict: Verdict::RunTime,
                    });
                    return;
                }
            }
        };
        let verdict = match decision {
            Decision::Allow if all_static && matches!(kind, Kind::Utility) => {
                match self.shell.network_precheck(self.policy, &argv) {
                    Some(mut r) => {
                        r.details.location = Some(format!("line {line}"));
                        Verdict::Refuse(r)
                    }
                    None => Verdict::Allow,
                }
            }
            Decision::Allow => Verdict::Allow,
            Decision::NotFound => Verdict::NotFound,
            Decision::Refuse(mut r) => {
                if r.details.location.is_none() {
                    r.details.location = Some(format!("line {line}"));
                }
                Verdict::Refuse(r)
            }
        };
        // Text this command would run as shell code (eval/trap/flock -c) was
        // decided through the resolver; the walk of `$(…)` happened above.
        self.push(Checked {
            line,
            text,
            argv: all_static.then_some(argv),
            program,
            verdict,
        });
    }

    fn redirect(&mut self, r: &ast::IoRedirect, line: usize) {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        let (word, write) = match r {
            R::File(_, kind, T::Filename(w)) => (w, !matches!(kind, K::Read)),
            R::File(_, _, T::ProcessSubstitution(_, sub)) => {
                self.list(&sub.list);
                return;
            }
            R::OutputAndError(w, _) => (w, true),
            R::HereString(_, w) => {
                self.nested_in_word(w);
                return;
            }
            R::HereDocument(_, doc) => {
                if doc.requires_expansion
                    && let Ok(pieces) = safesh_syntax::parse_heredoc(&doc.doc.value)
                {
                    self.nested_in_pieces(&pieces);
                }
                return;
            }
            _ => return,
        };
        self.nested_in_word(word);
        if write && !word.value.starts_with("/dev/") {
            self.writes.push(word.value.clone());
        }
        if !is_static(&word.value) {
            return;
        }
        let Ok(fields) = self.shell.expand_word_fields(word) else {
            return;
        };
        let [field] = fields.as_slice() else { return };
        if !self.cwd_known && !field.text.starts_with('/') {
            return;
        }
        let cwd = self.shell.cwd.clone();
        let path = Path::new(&field.text);
        let result = if write {
            // `2> /`: fails when it runs, as a directory ("Is a directory").
            if self.shell.above_a_root(&cwd.join(path)) {
                return;
            }
            self.policy.check_write(&cwd, path)
        } else {
            self.policy.check_read(&cwd, path)
        };
        if let Err(mut refusal) = result {
            let line = if line == 0 { self.line_of(word) } else { line };
            refusal.details.location = Some(format!("line {line}"));
            self.push(Checked {
                line,
                text: format!("{} {}", if write { ">" } else { "<" }, word.value),
                argv: None,
                program: None,
                verdict: Verdict::Refuse(refusal),
            });
        }
    }

    /// Walks the commands inside a word's `$(…)` and backquotes.
    fn nested_in_word(&mut self, w: &ast::Word) {
        if !w.value.contains('$') && !w.value.contains('`') {
            return;
        }
        if let Ok(pieces) = safesh_syntax::parse_word(&w.value) {
            let saved = self.line_base;
            self.line_base = self.line_of(w).saturating_sub(1);
            self.nested_in_pieces(&pieces);
            self.line_base = saved;
        }
    }

    fn nested_in_pieces(&mut self, pieces: &[safesh_syntax::WordPieceWithSource]) {
        for p in pieces {
            match &p.piece {
                WordPiece::CommandSubstitution(text) => self.nested_text(text),
                WordPiece::BackquotedCommandSubstitution(text) => {
                    self.nested_text(&safesh_syntax::unescape_backquoted(text));
                }
                WordPiece::DoubleQuotedSequence(inner)
                | WordPiece::GettextDoubleQuotedSequence(inner) => self.nested_in_pieces(inner),
                _ => {}
            }
        }
    }

    fn nested_text(&mut self, text: &str) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        let Ok(script) = self.shell.parse_cached(text) else {
            return;
        };
        self.depth += 1;
        collect_functions(&script.program, &mut self.functions);
        self.program(&script.program);
        self.depth -= 1;
    }
}

/// Whether the text may change the working directory (`cd`, `pushd`, `popd`,
/// anywhere, even inside strings: erring this way only defers decisions).
fn changes_directory(program: &ast::Program) -> bool {
    let text = program.to_string();
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| matches!(w, "cd" | "pushd" | "popd"))
}

/// A refusal that holds whatever the arguments turn out to be.
fn name_only(r: &Refusal) -> bool {
    use crate::error::ErrorCode as C;
    matches!(r.code, C::Blocked | C::CommandNotWhitelisted | C::Nudge)
        && !r.details.rule.as_deref().is_some_and(|x| {
            x.ends_with(".allow") || x.starts_with("nudge.git") || x == "nudge.long-sleep"
        })
}

/// True if the word's expansion is fixed by its text: no parameter, command or
/// arithmetic expansion, and no unquoted glob characters.
fn is_static(raw: &str) -> bool {
    if raw.contains('$') && !only_ansi_c_dollars(raw) {
        return false;
    }
    if raw.contains('`') {
        return false;
    }
    // Unquoted glob characters depend on the file system at run time.
    let mut quote: Option<char> = None;
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\\') => {
                chars.next();
            }
            (Some('"'), '\\') => {
                chars.next();
            }
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '*' | '?' | '[') => return false,
            (None, '@' | '+' | '!') if chars.peek() == Some(&'(') => return false,
            _ => {}
        }
    }
    true
}

/// `$'…'` (ANSI-C quoting) is the only `$` a fixed word may hold.
fn only_ansi_c_dollars(raw: &str) -> bool {
    let b = raw.as_bytes();
    let mut quote: Option<u8> = None;
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match (quote, c) {
            (None, b'\\') | (Some(b'"'), b'\\') => i += 1,
            (None, b'$') if b.get(i + 1) == Some(&b'\'') => {
                // skip to the closing quote, honouring backslash escapes
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            (None | Some(b'"'), b'$') => return false,
            (None, b'\'' | b'"') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            _ => {}
        }
        i += 1;
    }
    true
}

/// `w` without a position, so [`Walker::line_of`] gives the enclosing line
/// (only words that can hold commands are copied).
fn unplaced(w: &ast::Word) -> std::borrow::Cow<'_, ast::Word> {
    if !w.value.contains('$') && !w.value.contains('`') {
        return std::borrow::Cow::Borrowed(w);
    }
    std::borrow::Cow::Owned(ast::Word {
        value: w.value.clone(),
        loc: None,
    })
}
