//! Simple commands: expansion, assignments, redirections and dispatch to a
//! function, a shell builtin or an in-process utility.

use super::expand::Field;
use super::{Exec, Shell, Stop};
use crate::error::{ErrorCode, Refusal};
use crate::io::{CountOutput, LabelCell, StageReader, StageWriter};
use safesh_label::Label;
use safesh_syntax::ast::{self, CommandPrefixOrSuffixItem as Item};
use std::sync::Arc;

/// What a command name resolves to.
pub(crate) enum Resolved {
    Function(Arc<ast::FunctionDefinition>),
    Builtin,
    Utility(safesh_utils::UtilFn),
    /// A platform command (`fs:read`, `github:pr:list`): after utilities,
    /// before external programs.
    Platform(&'static dyn safesh_platform::PlatformCommand),
    NotFound,
}

/// A word of a simple command, or a `<(…)` in its place.
enum WordItem<'a> {
    /// A word; whether it looks like `name=value`; whether it is `name=(…)`.
    Word(&'a ast::Word, bool, bool),
    ProcSub(&'a ast::SubshellCommand),
}

/// Builtins whose `NAME=value` arguments are assignments (no splitting or globbing).
const DECLARATION: &[&str] = &["export", "local", "declare", "typeset", "readonly"];

impl Shell {
    /// Runs one simple command.
    pub(crate) fn run_simple(&mut self, s: &ast::SimpleCommand) -> Exec {
        self.count_command()?;
        self.diag_label = Label::empty();
        if let Some((line, end)) = simple_lines(s) {
            self.line = line + self.line_offset;
            self.cmd_end_line = end + self.line_offset;
        }
        if self.shopt.expand_aliases
            && !self.aliases.is_empty()
            && let Some(text) = self.alias_text(s)
        {
            return text;
        }
        self.debug_trap(None)?;
        let mut assigns: Vec<&ast::Assignment> = Vec::new();
        let mut redirects: Vec<ast::IoRedirect> = Vec::new();
        let mut words: Vec<WordItem<'_>> = Vec::new();
        // `{fd}>file`: the word names the redirection after it.
        let mut named = Vec::new();
        // (Rare: a Vec, and nothing is hashed for a command without them.)
        let mut skip: Vec<(usize, usize)> = Vec::new();
        let lists = [
            s.prefix.as_ref().map(|p| p.0.as_slice()),
            s.suffix.as_ref().map(|p| p.0.as_slice()),
        ];
        for (list, items) in lists.into_iter().enumerate() {
            for (i, n) in items.map(super::named_fd::find).unwrap_or_default() {
                skip.push((list, i));
                skip.push((list, i + 1));
                named.push(n);
            }
        }
        for (i, item) in s.prefix.iter().flat_map(|p| p.0.iter()).enumerate() {
            if skip.contains(&(0, i)) {
                continue;
            }
            match item {
                Item::AssignmentWord(a, _) => assigns.push(a),
                Item::IoRedirect(r) => redirects.push(r.clone()),
                Item::Word(w) => words.push(WordItem::Word(w, false, false)),
                Item::ProcessSubstitution(_, sub) => words.push(WordItem::ProcSub(sub)),
            }
        }
        if let Some(w) = &s.word_or_name {
            words.push(WordItem::Word(w, false, false));
        }
        for (i, item) in s.suffix.iter().flat_map(|p| p.0.iter()).enumerate() {
            if skip.contains(&(1, i)) {
                continue;
            }
            match item {
                Item::AssignmentWord(a, w) => words.push(WordItem::Word(
                    w,
                    true,
                    matches!(a.value, ast::AssignmentValue::Array(_)),
                )),
                Item::IoRedirect(r) => redirects.push(r.clone()),
                Item::Word(w) => words.push(WordItem::Word(w, false, false)),
                Item::ProcessSubstitution(_, sub) => words.push(WordItem::ProcSub(sub)),
            }
        }
        self.last_subst_status = None;
        let mut argv: Vec<Field> = Vec::with_capacity(words.len());
        let temps_before = self.temp_files.len();
        // A declaration command is spelled in the script (`export x=$v`); one
        // that comes from an expansion (`$e x=$v`) is an ordinary command
        // whose arguments are split, as in bash.
        let written = match words.first() {
            Some(WordItem::Word(w, _, _)) => {
                DECLARATION.contains(&w.value.as_str())
                    || matches!(w.value.as_str(), "command" | "builtin")
            }
            _ => false,
        };
        for item in &words {
            match item {
                WordItem::Word(w, assignment_like, array) => {
                    let declaration = written
                        && argv
                            .first()
                            .is_some_and(|f| DECLARATION.contains(&f.text.as_str()));
                    if *array && declaration {
                        // `declare a=('' "$x")`: the builtin runs the list as an
                        // array assignment, which expands each element once;
                        // expanding it here first would drop empty elements and
                        // expand what `$x` holds a second time.
                        argv.push(Field {
                            text: w.value.clone(),
                            label: self.code_label.clone(),
                        });
                    } else if *assignment_like && declaration {
                        argv.push(self.expand_declaration_word(w)?);
                    } else {
                        argv.extend(self.expand_word_fields_as(w, *assignment_like)?);
                    }
                }
                WordItem::ProcSub(sub) => argv.push(self.process_substitution(sub)?),
            }
        }
        for f in &argv {
            self.diag_label.join_assign(&f.label);
        }
        let last_arg = argv.last().cloned();
        if !named.is_empty() && self.apply_named_redirects(&named)?.is_err() {
            self.set_status(1);
            self.remove_temp_files(temps_before);
            return Ok(());
        }
        let r = self.run_expanded(argv, assigns, redirects);
        self.remove_temp_files(temps_before);
        // `$_`: the last argument of the command that just ran.
        if let Some(f) = last_arg {
            let _ = self.vars.set("_", f.text, f.label);
        }
        // A pipeline stage whose reader is gone (`f | head -1`) ends as SIGPIPE
        // would end it, instead of writing on into a closed pipe.
        if r.is_ok() && self.last_status == 141 && self.in_subshell && self.out_fd(1).reader_gone()
        {
            return Err(Stop::Exit);
        }
        // A command that stopped early because the request's time ran out (an
        // in-process utility sees the deadline and returns) ends the script with
        // TIMEOUT on every face, not with the utility's own status.
        if r.is_ok() && self.cancel.is_cancelled() {
            return Err(self.timeout_refusal().into());
        }
        r
    }

    /// Runs a simple command whose words are expanded.
    fn run_expanded(
        &mut self,
        argv: Vec<Field>,
        assigns: Vec<&ast::Assignment>,
        redirects: Vec<ast::IoRedirect>,
    ) -> Exec {
        if argv.is_empty() {
            // Assignments only (redirections still happen: `> file` creates it).
            return self.with_redirects(&redirects, |sh| {
                for a in &assigns {
                    sh.assign(a)?;
                }
                let status = sh.last_subst_status.unwrap_or(0);
                sh.set_status(status);
                Ok(())
            });
        }
        if self.opts.xtrace {
            let line: Vec<&str> = argv.iter().map(|f| f.text.as_str()).collect();
            self.diag(format!("+ {}", line.join(" ")));
        }
        if !redirects.is_empty() {
            self.redirect_outside = argv.first().is_some_and(|a| {
                !matches!(
                    self.resolve(&a.text, false),
                    Resolved::Builtin | Resolved::Function(_)
                )
            });
        }
        self.with_redirects(&redirects, |sh| {
            if assigns.is_empty() {
                return sh.dispatch(argv, false);
            }
            // `VAR=x cmd`: the variables hold for this command only (`unset`
            // inside a function shows the displaced value again).
            let mut pushed = 0;
            let mut r = Ok(());
            for a in &assigns {
                let name = match &a.name {
                    ast::AssignmentName::VariableName(n) => n.clone(),
                    ast::AssignmentName::ArrayElementName(n, _) => n.clone(),
                };
                sh.vars.push_temp(&name, sh.vars.get(&name).cloned());
                pushed += 1;
                r = match &a.value {
                    // `B=(b c) cmd`: a binding for a command is a string; bash
                    // gives it the list's text, each element expanded.
                    ast::AssignmentValue::Array(items) => {
                        sh.list_as_text(items).and_then(|(text, label)| {
                            sh.assign_scalar(&name, text, label.join(&sh.pc))
                        })
                    }
                    ast::AssignmentValue::Scalar(_) => sh.assign(a),
                };
                if r.is_err() {
                    break;
                }
                if let Some(v) = sh.vars.get_mut(&name) {
                    v.exported = true;
                }
            }
            if r.is_ok() {
                r = sh.dispatch(argv, false);
            }
            sh.vars.pop_temps(pushed);
            r
        })
    }

    /// `ll -a` where `ll` is an alias: runs the alias's text and the rest of the
    /// command as written (an alias ending in a blank expands the next word
    /// too). `None` when the command's first word is no alias (or one being
    /// expanded, or the command holds a here-document, whose text is not kept).
    fn alias_text(&mut self, s: &ast::SimpleCommand) -> Option<Exec> {
        if s.prefix.is_some() {
            return None;
        }
        let first = &s.word_or_name.as_ref()?.value;
        if self.alias_active.contains(first) {
            return None;
        }
        let (mut text, mut label) = self.aliases.get(first)?.clone();
        let items: &[ast::CommandPrefixOrSuffixItem] =
            s.suffix.as_ref().map(|x| x.0.as_slice()).unwrap_or(&[]);
        if items.iter().any(|i| {
            matches!(
                i,
                ast::CommandPrefixOrSuffixItem::IoRedirect(ast::IoRedirect::HereDocument(..))
            )
        }) {
            return None;
        }
        let mut names = vec![first.clone()];
        let mut rest = items.iter().map(ToString::to_string).peekable();
        while text.ends_with([' ', '\t'])
            && let Some(next) = rest.peek()
            && !names.contains(next)
            && let Some((more, l)) = self.aliases.get(next).cloned()
        {
            names.push(next.clone());
            text.push_str(&more);
            label.join_assign(&l);
            rest.next();
        }
        for r in rest {
            text.push(' ');
            text.push_str(&r);
        }
        let depth = self.alias_active.len();
        self.alias_active.extend(names);
        let label = label.join(&self.code_label);
        let r = crate::builtins::run_alias(self, text, label);
        self.alias_active.truncate(depth);
        Some(r)
    }

    /// The text bash gives an array list bound for one command (`B=(a "$x")
    /// cmd`): `(a 1)`, each element expanded, joined by spaces.
    fn list_as_text(
        &mut self,
        items: &[(Option<ast::Word>, ast::Word)],
    ) -> Result<(String, Label), Stop> {
        let mut parts = Vec::with_capacity(items.len());
        let mut label = Label::empty();
        for (key, value) in items {
            let v = self.expand_word_single(value)?;
            label.join_assign(&v.label);
            parts.push(match key {
                Some(k) => format!("[{}]={}", k.value, v.text),
                None => v.text,
            });
        }
        Ok((format!("({})", parts.join(" ")), label))
    }

    /// `<(cmd)`: runs `cmd` in a subshell, keeps its output in a temporary file
    /// (labeled with what produced it) and stands for that file's path. Unlike bash
    /// the command finishes before the reader starts (output bounded by
    /// `limits.string_bytes`).
    pub(crate) fn process_substitution(
        &mut self,
        sub: &ast::SubshellCommand,
    ) -> Result<Field, Stop> {
        let sink = crate::io::Sink::capture(self.shared.limits.string_bytes.saturating_add(1));
        let mut shell = self.subshell();
        shell.fds.insert(1, super::Fd::Out(sink.clone()));
        match shell.run_list(&sub.list) {
            Err(Stop::Refused(r)) => return Err(Stop::Refused(r)),
            _ => shell.wait_all_keep_status(),
        }
        drop(shell);
        let captured = sink.take_captured();
        if captured.overflowed {
            return Err(Refusal::limit(
                "the output of a process substitution in bytes",
                self.shared.limits.string_bytes,
                "string_bytes",
            )
            .into());
        }
        let n = self
            .shared
            .next_job
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = self
            .shared
            .temp_dir
            .clone()
            .unwrap_or_else(std::env::temp_dir);
        let path = dir.join(format!("safesh-psub-{}-{n}", self.shared.pid));
        if let Err(e) = std::fs::write(&path, &captured.data) {
            return Err(Refusal::new(
                ErrorCode::ExecutionError,
                format!("cannot create a temporary file for <(…): {e}"),
            )
            .into());
        }
        let text = path.to_string_lossy().into_owned();
        crate::io::lock(&self.shared.temp_labels).insert(path.clone(), captured.label.clone());
        self.temp_files.push(path);
        Ok(Field {
            text,
            label: captured.label,
        })
    }

    /// Removes temporary files made since `keep` (after the command that used them).
    pub(crate) fn remove_temp_files(&mut self, keep: usize) {
        if self.temp_files.len() <= keep {
            return;
        }
        for p in self.temp_files.drain(keep..) {
            let _ = std::fs::remove_file(&p);
            crate::io::lock(&self.shared.temp_labels).remove(&p);
        }
    }

    /// Resolves a command name: function, builtin, utility.
    pub(crate) fn resolve(&self, name: &str, skip_functions: bool) -> Resolved {
        if name.contains('/') {
            return self.resolve_path(name);
        }
        if !skip_functions && let Some(f) = self.funcs.get(name) {
            return Resolved::Function(f.clone());
        }
        if crate::builtins::is_builtin(name) {
            return Resolved::Builtin;
        }
        if let Some(f) = crate::registry::lookup(name) {
            return Resolved::Utility(f);
        }
        if let Some(c) = safesh_platform::get(name) {
            return Resolved::Platform(c);
        }
        Resolved::NotFound
    }

    /// Resolves `name` as `execvp` would find it for a program that runs
    /// another (`env NAME`, `nice`, `timeout`, `xargs`, `find -exec`, `exec`):
    /// never a function, and of the builtins only those that are programs
    /// too ([`crate::builtins::is_program`]); `printf` is coreutils' program,
    /// not bash's builtin.
    pub(crate) fn resolve_program(&self, name: &str) -> Resolved {
        if name.contains('/') {
            return self.resolve_path(name);
        }
        if crate::builtins::is_builtin(name) {
            if name == "printf" {
                return crate::registry::lookup(name).map_or(Resolved::NotFound, Resolved::Utility);
            }
            if !crate::builtins::is_program(name) {
                return Resolved::NotFound;
            }
        }
        self.resolve(name, true)
    }

    /// True when a program run by another program would find `name`
    /// ([`Shell::resolve_program`]): in-process, on the trusted PATH, or
    /// (with a slash) an existing file. Whether it may run is the policy's
    /// decision when it does.
    pub(crate) fn program_exists(&self, name: &str) -> bool {
        if name.contains('/') {
            return self
                .cwd
                .join(safesh_utils::word_bytes::word_to_path(name))
                .exists();
        }
        !matches!(self.resolve_program(name), Resolved::NotFound)
            || self
                .shared
                .policy
                .as_ref()
                .is_some_and(|p| p.resolve_program(name, &self.cwd).is_some())
    }

    /// Runs a command line as a program run by another program
    /// ([`Shell::resolve_program`]). `pwd` is coreutils' there: physical
    /// unless `-L` is given.
    pub(crate) fn dispatch_program(&mut self, mut argv: Vec<Field>) -> Exec {
        let Some(first) = argv.first() else {
            self.set_status(0);
            return Ok(());
        };
        let name = first.text.clone();
        let resolved = self.resolve_program(&name);
        if name == "pwd" && matches!(resolved, Resolved::Builtin) {
            let label = first.label.clone();
            argv.insert(
                1,
                Field {
                    text: "-P".into(),
                    label,
                },
            );
        }
        self.dispatch_resolved(argv, name, resolved)
    }

    /// A command named by path: a system program that safesh has in-process
    /// (`/usr/bin/grep`, `/bin/true`) runs in-process; anything else is external.
    fn resolve_path(&self, name: &str) -> Resolved {
        let path = std::path::Path::new(name);
        let (Some(dir), Some(base)) = (path.parent(), path.file_name().and_then(|b| b.to_str()))
        else {
            return Resolved::NotFound;
        };
        let system_dir = matches!(
            dir.to_str(),
            Some("/bin" | "/usr/bin" | "/usr/local/bin" | "/sbin" | "/usr/sbin")
        );
        if !system_dir || !path.is_file() {
            return Resolved::NotFound;
        }
        // A path rule naming this program asks for the real program (sandboxed),
        // not safesh's in-process equivalent.
        if let Some(policy) = &self.shared.policy
            && policy
                .config()
                .rules_for_path(path)
                .iter()
                .any(|r| r.allow.is_some())
        {
            return Resolved::NotFound;
        }
        if matches!(base, "true" | "false" | "test" | "[" | "kill")
            && crate::builtins::is_builtin(base)
        {
            return Resolved::Builtin;
        }
        match crate::registry::lookup(base) {
            Some(f) => Resolved::Utility(f),
            None => Resolved::NotFound,
        }
    }

    /// Runs an expanded command line.
    pub(crate) fn dispatch(&mut self, argv: Vec<Field>, skip_functions: bool) -> Exec {
        let Some(first) = argv.first() else {
            self.set_status(0);
            return Ok(());
        };
        let name = first.text.clone();
        let resolved = self.resolve(&name, skip_functions);
        self.dispatch_resolved(argv, name, resolved)
    }

    /// Runs `argv`, whose name resolved to `resolved`: the spec gate and the
    /// policy first, then the function, builtin, utility or program.
    fn dispatch_resolved(&mut self, argv: Vec<Field>, name: String, resolved: Resolved) -> Exec {
        // A running spec's allowed_commands: checked first (a function's body
        // is checked command by command when it runs).
        if let Some(gate) = &self.gate
            && !matches!(resolved, Resolved::Function(_))
            && let Some(mut r) = gate.check(&name)
        {
            if r.details.location.is_none() && self.line > 0 {
                r.details.location = Some(format!("line {}", self.line));
            }
            let r = crate::flow::withhold_secrets(r, &argv);
            self.audit_refusal(crate::flow::command_text(&argv), &r);
            return Err(Stop::Refused(Box::new(r)));
        }
        if let Some(policy) = self.shared.policy.clone()
            && !matches!(resolved, Resolved::Function(_))
            && let Some(program) = self
                .decide(&policy, &argv, &resolved)
                .map_err(|e| match e {
                    Stop::Refused(r) => {
                        let r = crate::flow::withhold_secrets(*r, &argv);
                        self.audit_refusal(crate::flow::command_text(&argv), &r);
                        Stop::Refused(Box::new(r))
                    }
                    other => other,
                })?
        {
            self.commit_command(&argv)?;
            return self.run_external(&policy, &program, &argv);
        }
        if !matches!(resolved, Resolved::Function(_)) {
            self.commit_command(&argv)?;
        }
        match resolved {
            Resolved::Function(f) => self.call_function(&f, &argv),
            Resolved::Builtin => {
                let mut argv = argv;
                if let Some(base) = name.rsplit('/').next().filter(|_| name.contains('/')) {
                    argv[0].text = base.to_string();
                }
                let label = argv.iter().fold(self.pc.clone(), |l, a| l.join(&a.label));
                // What the builtin ran inside (`eval`, `source`) sets it too.
                self.status_label = Label::empty();
                let r = crate::builtins::run(self, &argv);
                self.status_label = self.status_label.join(&label);
                r
            }
            Resolved::Utility(f) => {
                let label = argv.iter().fold(self.pc.clone(), |l, a| l.join(&a.label));
                let words = argv.iter().map(|f| f.label.clone()).collect();
                let args: Vec<String> = argv.into_iter().map(|f| f.text).collect();
                self.run_utility(f, args, label, words)
            }
            Resolved::Platform(c) => self.run_platform(c, argv),
            Resolved::NotFound => {
                if name.contains('/') {
                    let path = self.cwd.join(safesh_utils::word_bytes::word_to_path(&name));
                    if path.is_dir() {
                        self.diag(format!("{name}: Is a directory"));
                        self.set_status(126);
                        return Ok(());
                    }
                    if !path.exists() {
                        self.diag(format!("{name}: No such file or directory"));
                        self.set_status(127);
                        return Ok(());
                    }
                    use std::os::unix::fs::PermissionsExt;
                    let executable =
                        std::fs::metadata(&path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
                    if !executable {
                        self.diag(format!("{name}: Permission denied"));
                        self.set_status(126);
                        return Ok(());
                    }
                }
                self.diag(format!("{name}: command not found"));
                self.set_status(127);
                Ok(())
            }
        }
    }

    /// The policy's verdict on a command about to run: a refusal stops the script
    /// (status 126); an allowed external program is returned to be run (sandboxed).
    fn decide(
        &mut self,
        policy: &safesh_policy::Policy,
        argv: &[Field],
        resolved: &Resolved,
    ) -> Result<Option<std::path::PathBuf>, Stop> {
        use safesh_policy::{Decision, Kind, Request};
        let texts: Vec<String> = argv.iter().map(|f| f.text.clone()).collect();
        let kind = match resolved {
            Resolved::Function(_) => Kind::Function,
            Resolved::Builtin => Kind::Builtin,
            Resolved::Utility(_) | Resolved::Platform(_) => Kind::Utility,
            Resolved::NotFound => match policy.resolve_program(&texts[0], &self.cwd) {
                Some(p) => Kind::External(p),
                None => Kind::NotFound,
            },
        };
        let resolver = crate::precheck::ShellResolver {
            shell: self,
            policy,
            functions: None,
        };
        let request = Request {
            argv: &texts,
            cwd: &self.cwd,
            kind: kind.clone(),
            force: self.shared.force,
            cwd_known: true,
        };
        match policy.decide(&request, &resolver) {
            Decision::Refuse(mut r) => {
                if r.details.location.is_none() && self.line > 0 {
                    r.details.location = Some(format!("line {}", self.line));
                }
                Err(r.into())
            }
            Decision::Allow => Ok(match kind {
                Kind::External(p) => Some(p),
                _ => None,
            }),
            Decision::NotFound => Ok(None),
        }
    }

    /// Calls a shell function with `argv` as its positional parameters.
    pub(crate) fn call_function(&mut self, f: &ast::FunctionDefinition, argv: &[Field]) -> Exec {
        if self.call_depth >= self.shared.limits.call_depth {
            return Err(Refusal::limit(
                "function call depth",
                self.shared.limits.call_depth,
                "call_depth",
            )
            .into());
        }
        self.call_depth += 1;
        // A function's lines are its own (where it was defined).
        let saved_offset = std::mem::replace(&mut self.line_offset, 0);
        let saved_lines = (self.line, self.cmd_end_line);
        // Without `set -E` a function does not run the ERR trap.
        let saved_err_off = self.err_trap_off;
        self.err_trap_off |= !self.opts.errtrace;
        let saved_local_opts = self.local_opts.take();
        let saved_debug_off = self.debug_trap_off;
        self.debug_trap_off |= !self.opts.functrace;
        let saved_pos = std::mem::replace(
            &mut self.positional,
            argv.iter().skip(1).map(|f| f.text.clone()).collect(),
        );
        let label = argv
            .iter()
            .skip(1)
            .fold(Label::empty(), |l, a| l.join(&a.label));
        let saved_label = std::mem::replace(&mut self.positional_label, label);
        // A body defined from labeled text (`eval "f(){ echo $x; }"`) runs with
        // that label on the PC, like the `eval` that defined it.
        let saved_pc = self.pc.clone();
        if let Some(l) = self.func_labels.get(f.fname.value.as_str()) {
            self.pc.join_assign(l);
        }
        self.vars.push_frame();
        // BASH_LINENO: the lines the active functions were called from.
        self.vars.make_local("BASH_LINENO");
        let mut lines = match self.vars.get("BASH_LINENO").map(|v| v.value.clone()) {
            Some(super::Value::Array(a)) => a.into_values().collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        lines.insert(0, saved_lines.0.to_string());
        let _ = self.vars.set_array(
            "BASH_LINENO",
            lines
                .into_iter()
                .enumerate()
                .map(|(i, s)| (i as i64, s))
                .collect(),
            Label::agent(),
        );
        // FUNCNAME lists the active functions, innermost first.
        let name = f.fname.value.clone();
        self.vars.make_local("FUNCNAME");
        let mut stack = match self.vars.get("FUNCNAME").map(|v| v.value.clone()) {
            Some(super::Value::Array(a)) => a.into_values().collect::<Vec<_>>(),
            _ => Vec::new(),
        };
        stack.insert(0, name);
        let _ = self.vars.set_array(
            "FUNCNAME",
            stack
                .into_iter()
                .enumerate()
                .map(|(i, s)| (i as i64, s))
                .collect(),
            Label::agent(),
        );
        let redirects = f.body.1.as_ref().map(|r| r.0.clone()).unwrap_or_default();
        // Its literals carry the label of the text that defined it.
        let code = self
            .func_labels
            .get(&f.fname.value)
            .cloned()
            .unwrap_or_else(Label::agent);
        let saved_code = std::mem::replace(&mut self.code_label, code);
        // A function body sees no loop of its caller: `break` there only warns.
        let saved_loops = std::mem::replace(&mut self.loop_depth, 0);
        let r = self.with_redirects(&redirects, |sh| sh.run_compound_pub(&f.body.0));
        // The RETURN trap runs as a traced function returns (`set -T`).
        let r = match r {
            Ok(()) | Err(Stop::Return) if self.opts.functrace => {
                let status = self.last_status;
                self.return_trap().map(|()| self.last_status = status)
            }
            other => other,
        };
        self.loop_depth = saved_loops;
        self.code_label = saved_code;
        self.vars.pop_frame();
        self.pc = saved_pc;
        self.positional = saved_pos;
        self.positional_label = saved_label;
        self.line_offset = saved_offset;
        // `$LINENO` after the call is the caller's line again.
        (self.line, self.cmd_end_line) = saved_lines;
        self.err_trap_off = saved_err_off;
        self.debug_trap_off = saved_debug_off;
        if let Some(o) = std::mem::replace(&mut self.local_opts, saved_local_opts) {
            self.opts = o;
        }
        self.call_depth -= 1;
        match r {
            Err(Stop::Return) => Ok(()),
            other => other,
        }
    }

    /// Runs an in-process utility on this shell's fds.
    pub(crate) fn run_utility(
        &mut self,
        f: safesh_utils::UtilFn,
        argv: Vec<String>,
        label: Label,
        word_labels: Vec<Label>,
    ) -> Exec {
        let mut label = label;
        if argv.first().map(String::as_str) == Some("mv") {
            // `mv` never reads the files it moves: their labels go with them.
            for a in argv.iter().skip(1).filter(|a| !a.starts_with('-')) {
                let p = self.cwd.join(a);
                if p.is_file() {
                    label = label.join(&self.file_label(&p));
                }
            }
        }
        let cell = LabelCell::new(label);
        let env = self.vars.environment();
        let mut changed = Vec::new();
        let mut reply_changed = Vec::new();
        let status = {
            let mut stdin = StageReader::new(self.in_fd(0), cell.clone());
            let count = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let mut stdout =
                StageWriter::new(self.out_fd(1), cell.clone()).count_output(CountOutput {
                    declared: count.clone(),
                    words: cell.get(),
                });
            let mut stderr = StageWriter::unbuffered(self.out_fd(2), cell.clone());
            let mut host = crate::host::ShellHost::new(self, cell.clone())
                .with_count_flag(count)
                .removing(matches!(
                    argv.first().map(String::as_str),
                    Some("rm" | "rmdir" | "unlink" | "shred")
                ));
            if matches!(argv.first().map(String::as_str), Some("xargs" | "find")) {
                host = host.with_own_words(&argv);
            }
            host = host.with_word_labels(&argv, word_labels, &self.pc);
            let changed = &mut changed;
            let reply_changed = &mut reply_changed;
            let mut ctx = safesh_utils::UtilCtx {
                argv,
                cwd: self.cwd.clone(),
                env: safesh_utils::Env::new(&env, &host),
                stdin: &mut stdin,
                stdout: &mut stdout,
                stderr: &mut stderr,
                host: &host,
            };
            let r = f(&mut ctx);
            use std::io::Write;
            let _ = stdout.flush();
            let _ = stderr.flush();
            *changed = host.take_changed();
            *reply_changed = host.take_reply_changed();
            r
        };
        if let Err(r) = self.record_changed(&changed, &cell.get()) {
            return Err(r.into());
        }
        for (path, label) in reply_changed {
            if let Err(r) = self.record_changed(std::slice::from_ref(&path), &label) {
                return Err(r.into());
            }
        }
        match status {
            Ok(s) => {
                self.status_label = cell.get();
                self.set_status(s);
                // A refusal the host raised inside the utility (a path outside the
                // roots) stops the script like any other.
                let raised = crate::io::lock(&self.shared.refusal).take();
                if let Some(r) = raised {
                    self.set_status(r.status());
                    return Err(r.into());
                }
                Ok(())
            }
            Err(interrupt) => Err(crate::host::refusal_of(interrupt).into()),
        }
    }

    /// After a utility ran: every regular file it changed now holds data labeled
    /// at most `label` (a file's label only goes up).
    fn record_changed(
        &self,
        changed: &[std::path::PathBuf],
        label: &Label,
    ) -> Result<(), crate::error::Refusal> {
        let Some(flow) = &self.shared.flow else {
            return Ok(());
        };
        for p in changed {
            let p = crate::host::normalize(&self.cwd.join(p));
            if p.is_file() {
                flow.record_write(&p, label, true)?;
            }
        }
        Ok(())
    }
}

pub(crate) fn simple_lines(s: &ast::SimpleCommand) -> Option<(usize, usize)> {
    use safesh_syntax::ast::SourceLocation;
    s.location().map(|l| (l.start.line, l.end.line))
}
