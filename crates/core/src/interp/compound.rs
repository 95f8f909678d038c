//! Lists, and-or lists, pipelines and compound commands.

use super::{Exec, Fd, Job, Shell, Stop};
use crate::error::Refusal;
use crate::io::{self, Source};
use safesh_label::Label;
use safesh_syntax::ast::{self, Command, CompoundCommand};
use std::sync::Arc;

/// Stack size for threads running shell code (deep recursion stays bounded by
/// `limits.call_depth`, not by the default 2 MiB stack).
pub(crate) const SHELL_STACK: usize = 64 * 1024 * 1024;

/// True for a command that, alone in a pipeline, sets `PIPESTATUS` itself:
/// bash leaves it to the commands inside `{ }`, `if`, loops and `case`.
fn sets_pipestatus(cmd: &Command) -> bool {
    match cmd {
        Command::Simple(_) | Command::Function(_) | Command::ExtendedTest(..) => true,
        Command::Compound(c, _) => matches!(
            c,
            CompoundCommand::Subshell(_) | CompoundCommand::Arithmetic(_)
        ),
    }
}

/// What a loop body asked for.
enum LoopCtl {
    Next,
    Break,
}

impl Shell {
    /// Runs a list of and-or lists.
    pub(crate) fn run_list(&mut self, list: &ast::CompoundList) -> Exec {
        for item in &list.0 {
            // `set -n`: nothing runs any more (not even `set +n`).
            if self.opts.noexec {
                return Ok(());
            }
            match item.1 {
                ast::SeparatorOperator::Sequence => self.run_and_or(&item.0)?,
                ast::SeparatorOperator::Async => self.run_async(&item.0)?,
            }
        }
        Ok(())
    }

    fn run_async(&mut self, ao: &ast::AndOrList) -> Exec {
        // A top-level job of a face's session becomes the face's job; inside a
        // subshell (or without a sink) the enclosing (sub)shell waits for it.
        if !self.in_subshell
            && let Some(sink) = self.background.clone()
        {
            return self.run_detached(ao, sink.as_ref());
        }
        let mut sub = self.subshell();
        sub.fds.insert(0, Fd::In(Source::empty()));
        let ao = ao.clone();
        let slot = self.reserve_thread()?;
        let id = self
            .shared
            .next_job
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let handle = std::thread::Builder::new()
            .stack_size(SHELL_STACK)
            .spawn(move || {
                let _slot = slot;
                let r = sub.run_and_or(&ao);
                match r {
                    Err(Stop::Refused(refusal)) => {
                        sub.diag(format!("{}: {}", refusal.code, refusal.message));
                        let mut slot = io::lock(&sub.shared.refusal);
                        if slot.is_none() {
                            *slot = Some((*refusal).clone());
                        }
                        refusal.status()
                    }
                    _ => {
                        let _ = sub.run_exit_trap();
                        sub.wait_all();
                        sub.last_status
                    }
                }
            })
            .map_err(|e| {
                Refusal::new(
                    crate::error::ErrorCode::ExecutionError,
                    format!("cannot start a background job: {e}"),
                )
            })?;
        io::lock(&self.jobs).push(Job {
            id,
            handle: Some(handle),
            detached: false,
            orphan: false,
        });
        self.last_bg = Some(id);
        self.set_status(0);
        Ok(())
    }

    /// Starts `ao &` as a job handed to the session's background sink: its own
    /// output, stop handle and deadline; the script goes on without it.
    fn run_detached(
        &mut self,
        ao: &ast::AndOrList,
        sink: &dyn crate::session::BackgroundSink,
    ) -> Exec {
        let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
        // The list as one line (the syntax tree prints compound commands over lines).
        let command = ao
            .to_string()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        let hooks = sink.start(&command, crate::session::Interrupter(flag.clone()))?;
        let mut sub = self.detached(flag);
        let out = io::Sink::new(io::SinkKind::Stream(
            hooks.output.clone(),
            io::StreamKind::Stdout,
        ));
        let err = io::Sink::new(io::SinkKind::Stream(
            hooks.output.clone(),
            io::StreamKind::Stderr,
        ));
        sub.fds.insert(0, Fd::In(Source::empty()));
        sub.fds.insert(1, Fd::Out(out.clone()));
        sub.fds.insert(2, Fd::Out(err.clone()));
        sub.on_start = hooks.on_start.clone();
        let finished = hooks.finished;
        let ao = ao.clone();
        let id = self
            .shared
            .next_job
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let slot = sub.reserve_thread()?;
        let spawned = std::thread::Builder::new()
            .name(format!("safesh-bg-{id}"))
            .stack_size(SHELL_STACK)
            .spawn(move || {
                let _slot = slot;
                let r = sub.run_and_or(&ao);
                let mut error = match r {
                    Err(Stop::Refused(refusal)) => Some(*refusal),
                    _ => sub.run_exit_trap().err(),
                };
                sub.wait_all_keep_status();
                if error.is_none() {
                    error = io::lock(&sub.shared.refusal).take();
                }
                let status = error.as_ref().map_or(sub.last_status, |r| r.status());
                if let Some(r) = &error {
                    let text = crate::session::refusal_text(r);
                    let _ = err.write_unmetered(text.as_bytes(), &sub.message_label());
                }
                let label = out.label().join(&err.label());
                let message_label = sub.message_label();
                drop(sub);
                finished(crate::session::BackgroundEnd {
                    exit_code: status,
                    error,
                    label,
                    error_label: message_label,
                });
                status
            });
        let handle = match spawned {
            Ok(h) => h,
            Err(e) => {
                return Err(Refusal::new(
                    crate::error::ErrorCode::ExecutionError,
                    format!("cannot start a background job: {e}"),
                )
                .into());
            }
        };
        io::lock(&self.jobs).push(Job {
            id,
            handle: Some(handle),
            detached: true,
            orphan: false,
        });
        self.last_bg = Some(id);
        self.set_status(0);
        Ok(())
    }

    /// Runs `a && b || c`.
    pub(crate) fn run_and_or(&mut self, ao: &ast::AndOrList) -> Exec {
        let n = ao.additional.len();
        // Every pipeline but the last is a condition: `set -e` does not apply to it.
        if n > 0 {
            self.errexit_suppressed += 1;
        }
        let first = self.run_pipeline_checked(&ao.first, n == 0);
        if n > 0 {
            self.errexit_suppressed -= 1;
        }
        first?;
        if n == 0 {
            return Ok(());
        }
        // `a && b`: whether b runs depends on a (implicit flow), for this list only.
        let saved_pc = self.pc.clone();
        let r = self.run_and_or_rest(ao);
        self.pc = saved_pc;
        r
    }

    fn run_and_or_rest(&mut self, ao: &ast::AndOrList) -> Exec {
        let n = ao.additional.len();
        self.pc.join_assign(&self.status_label);
        for (i, next) in ao.additional.iter().enumerate() {
            let last = i + 1 == n;
            let (run, p) = match next {
                ast::AndOr::And(p) => (self.last_status == 0, p),
                ast::AndOr::Or(p) => (self.last_status != 0, p),
            };
            if run {
                if !last {
                    self.errexit_suppressed += 1;
                }
                let r = self.run_pipeline_checked(p, last);
                if !last {
                    self.errexit_suppressed -= 1;
                }
                r?;
                self.pc.join_assign(&self.status_label);
            }
        }
        Ok(())
    }

    /// Runs a pipeline, then applies `set -e` and the ERR trap when it failed.
    fn run_pipeline_checked(&mut self, p: &ast::Pipeline, may_exit: bool) -> Exec {
        self.run_pipeline(p)?;
        // A lone `{ }`, `if`, loop or `case` is judged by the commands inside it:
        // `{ false && true; }` ends with status 1 yet `set -e` goes on (bash).
        // Its own redirections failing still counts (`{ …; } < missing`).
        let judged_inside = matches!(
            p.seq.as_slice(),
            [Command::Compound(c, _)]
                if !matches!(c, CompoundCommand::Subshell(_) | CompoundCommand::Arithmetic(_))
        ) && !self.compound_redirect_failed;
        let failed = self.last_status != 0 && !p.bang && may_exit && !judged_inside;
        if failed
            && self.errexit_suppressed == 0
            && !self.in_trap
            && !self.err_trap_off
            && let Some((handler, label)) = self.traps.get("ERR").cloned()
        {
            let status = self.last_status;
            self.in_trap = true;
            // The handler's lines count from the line of the failed command.
            let (line, end) = (self.line, self.cmd_end_line);
            let saved_offset = std::mem::replace(&mut self.line_offset, line.saturating_sub(1));
            let r = self.run_text_labeled(&handler, &label);
            self.line_offset = saved_offset;
            (self.line, self.cmd_end_line) = (line, end);
            self.in_trap = false;
            r?;
            self.last_status = status;
        }
        if failed && self.errexit_suppressed == self.bang_lenient && self.opts.errexit {
            return Err(Stop::Exit);
        }
        Ok(())
    }

    /// Runs a pipeline: one command in this shell, or several stages concurrently,
    /// each in a subshell, joined by labeled pipes.
    pub(crate) fn run_pipeline(&mut self, p: &ast::Pipeline) -> Exec {
        let started = std::time::Instant::now();
        let lenient = p.bang && !self.opts.errexit;
        if p.bang {
            self.errexit_suppressed += 1;
        }
        if lenient {
            self.bang_lenient += 1;
        }
        let r = if p.seq.is_empty() {
            // A lone `!` is an empty pipeline: status 0, negated below.
            self.set_status(0);
            Ok(())
        } else if p.seq.len() == 1 {
            let r = self.run_command(&p.seq[0]);
            if r.is_ok() && sets_pipestatus(&p.seq[0]) {
                self.set_pipestatus(&[self.last_status]);
            }
            r
        } else {
            self.run_stages(&p.seq)
        };
        if p.bang {
            self.errexit_suppressed -= 1;
        }
        if lenient {
            self.bang_lenient -= 1;
        }
        r?;
        if p.bang {
            let s = if self.last_status == 0 { 1 } else { 0 };
            self.set_status(s);
        }
        if p.timed.is_some() {
            self.report_time(started);
        }
        Ok(())
    }

    fn run_stages(&mut self, seq: &[Command]) -> Exec {
        let n = seq.len();
        let mut handles = Vec::with_capacity(n.saturating_sub(1));
        let mut next_input = None;
        let mut last_shell = None;
        for (i, cmd) in seq.iter().enumerate() {
            // bash runs the DEBUG trap in the shell before each stage that is a
            // simple command (a stage's own shell does not inherit it).
            if let Command::Simple(s) = cmd {
                self.debug_trap(super::simple::simple_lines(s).map(|l| l.0))?;
            }
            let mut sub = self.subshell();
            if let Some(input) = next_input.take() {
                sub.fds.insert(0, Fd::In(input));
            }
            if i + 1 < n {
                let (w, r) = io::pipe();
                sub.fds.insert(1, Fd::Out(w));
                next_input = Some(r);
                let cmd = cmd.clone();
                let slot = self.reserve_thread()?;
                let spawned =
                    std::thread::Builder::new()
                        .stack_size(SHELL_STACK)
                        .spawn(move || {
                            let _slot = slot;
                            let r = sub.run_command(&cmd);
                            let status = sub.last_status;
                            let refusal = match r {
                                Err(Stop::Refused(refusal)) => Some(*refusal),
                                _ => None,
                            };
                            if refusal.is_none() {
                                let _ = sub.run_exit_trap();
                            } else if let Some(Fd::Out(out)) = sub.fds.get(&1) {
                                // Its reader must not take the refusal for the end
                                // of its data and act on what it has (send it).
                                out.stop_refused();
                            }
                            let label = std::mem::take(&mut sub.status_label);
                            let words = std::mem::take(&mut sub.diag_label);
                            drop(sub);
                            (status, refusal, label, words)
                        });
                match spawned {
                    Ok(h) => handles.push(h),
                    Err(e) => {
                        return Err(Refusal::new(
                            crate::error::ErrorCode::ExecutionError,
                            format!("cannot start a pipeline stage: {e}"),
                        )
                        .into());
                    }
                }
            } else {
                last_shell = Some((sub, cmd));
            }
        }
        let mut statuses = Vec::with_capacity(n);
        let mut refusal = None;
        // The pipeline's status depends on its stages (the last, or any with
        // pipefail): its label is what they read.
        let mut status_label = Label::empty();
        if let Some((mut sub, cmd)) = last_shell {
            let status;
            if self.shopt.lastpipe {
                // `shopt -s lastpipe`: the last stage runs in this shell, so its
                // variable assignments stay.
                let input = sub.fds.get(&0).cloned();
                drop(sub);
                let saved = self.fds.get(&0).cloned();
                if let Some(i) = input {
                    self.fds.insert(0, i);
                }
                let r = self.run_command(cmd);
                status = self.last_status;
                status_label = self.status_label.clone();
                match saved {
                    Some(fd) => {
                        self.fds.insert(0, fd);
                    }
                    None => {
                        self.fds.remove(&0);
                    }
                }
                if let Err(Stop::Refused(r)) = r {
                    refusal = Some(*r);
                }
            } else {
                let r = sub.run_command(cmd);
                status = sub.last_status;
                status_label = std::mem::take(&mut sub.status_label);
                if let Err(Stop::Refused(r)) = r {
                    refusal = Some(*r);
                    self.diag_label.join_assign(&sub.diag_label);
                } else {
                    let _ = sub.run_exit_trap();
                }
                drop(sub);
            }
            for h in handles {
                match h.join() {
                    Ok((s, r, l, words)) => {
                        statuses.push(s);
                        status_label.join_assign(&l);
                        if r.is_some() {
                            self.diag_label.join_assign(&words);
                        }
                        if refusal.is_none() {
                            refusal = r;
                        }
                    }
                    Err(_) => statuses.push(1),
                }
            }
            statuses.push(status);
        }
        if let Some(r) = refusal {
            return Err(r.into());
        }
        self.set_pipestatus(&statuses);
        let status = if self.opts.pipefail {
            statuses
                .iter()
                .rev()
                .copied()
                .find(|s| *s != 0)
                .unwrap_or(0)
        } else {
            statuses.last().copied().unwrap_or(0)
        };
        self.set_status(status);
        self.status_label = status_label;
        Ok(())
    }

    /// Sets `PIPESTATUS` to the statuses of the pipeline that just ended, labeled
    /// like `$?` (what decided them).
    pub(crate) fn set_pipestatus(&mut self, statuses: &[i32]) {
        let items = statuses
            .iter()
            .enumerate()
            .map(|(i, s)| (i as i64, s.to_string()))
            .collect();
        let label = self.status_label.join(&self.pc);
        // Readonly only if the script made it so: then bash keeps it as it is too.
        let _ = self.vars.set_array("PIPESTATUS", items, label);
    }

    /// `for ((init; cond; update))`: the condition's label joins the PC of the body.
    fn arith_for(&mut self, f: &ast::ArithmeticForClauseCommand) -> Exec {
        let line = Some(f.loc.start.line);
        if let Some(init) = &f.initializer {
            self.debug_trap(line)?;
            self.eval_arith_labeled(&init.value)?;
        }
        self.set_status(0);
        loop {
            if let Some(cond) = &f.condition {
                self.debug_trap(line)?;
                let (v, label) = self.eval_arith_labeled(&cond.value)?;
                self.pc.join_assign(&label);
                if v == 0 {
                    break;
                }
            }
            if let LoopCtl::Break = self.loop_body(&f.body.list)? {
                break;
            }
            if let Some(upd) = &f.updater {
                self.debug_trap(line)?;
                self.eval_arith_labeled(&upd.value)?;
            }
        }
        Ok(())
    }

    /// Writes bash's `time` report for work started at `started` to fd 2 (only
    /// real time is known: in-process commands have no separate CPU accounting).
    pub(crate) fn report_time(&self, started: std::time::Instant) {
        let secs = started.elapsed().as_secs_f64();
        let text = format!(
            "\nreal\t{}m{:.3}s\nuser\t0m0.000s\nsys\t0m0.000s\n",
            (secs / 60.0) as u64,
            secs % 60.0
        );
        let _ = self.out_fd(2).write_chunk(text.as_bytes(), &Label::empty());
    }

    /// Runs one command of a pipeline.
    pub(crate) fn run_command(&mut self, cmd: &Command) -> Exec {
        match cmd {
            Command::Simple(s) => self.run_simple(s),
            Command::Compound(c, redirects) => {
                let r = redirects.as_ref();
                let mut ran = false;
                let result = self.with_redirects(r.map(|r| r.0.as_slice()).unwrap_or(&[]), |sh| {
                    ran = true;
                    sh.run_compound(c)
                });
                self.compound_redirect_failed = !ran && result.is_ok();
                result
            }
            Command::Function(f) => {
                let name = f.fname.value.clone();
                if self.readonly_funcs.contains(&name) {
                    self.diag(format!("{name}: readonly function"));
                    self.set_status(1);
                    return Ok(());
                }
                self.func_labels
                    .insert(name.clone(), self.code_label.join(&self.pc));
                self.funcs.insert(name, Arc::new(f.clone()));
                self.set_status(0);
                Ok(())
            }
            Command::ExtendedTest(t, redirects) => {
                self.debug_trap(Some(t.loc.start.line))?;
                let r = redirects.as_ref();
                self.with_redirects(r.map(|r| r.0.as_slice()).unwrap_or(&[]), |sh| {
                    sh.count_command()?;
                    let ok = sh.eval_extended_test(&t.expr)?;
                    sh.set_status(match ok {
                        Some(true) => 0,
                        Some(false) => 1,
                        None => 2,
                    });
                    Ok(())
                })
            }
        }
    }

    fn loop_body(&mut self, body: &ast::CompoundList) -> Result<LoopCtl, Stop> {
        self.count_iteration()?;
        self.loop_depth += 1;
        let r = self.run_list(body);
        self.loop_depth -= 1;
        match r {
            Ok(()) => Ok(LoopCtl::Next),
            Err(Stop::Break(n)) => {
                if n > 1 {
                    Err(Stop::Break(n - 1))
                } else {
                    Ok(LoopCtl::Break)
                }
            }
            Err(Stop::Continue(n)) => {
                if n > 1 {
                    Err(Stop::Continue(n - 1))
                } else {
                    Ok(LoopCtl::Next)
                }
            }
            Err(e) => Err(e),
        }
    }

    /// Runs a condition list with `set -e` off; returns whether it succeeded.
    fn condition(&mut self, list: &ast::CompoundList) -> Result<bool, Stop> {
        self.errexit_suppressed += 1;
        let r = self.run_list(list);
        self.errexit_suppressed -= 1;
        r?;
        // What runs because of this outcome depends on what decided it (implicit
        // flow): the body runs under the condition's label.
        self.pc.join_assign(&self.status_label);
        Ok(self.last_status == 0)
    }

    pub(crate) fn run_compound_pub(&mut self, c: &CompoundCommand) -> Exec {
        self.run_compound(c)
    }

    fn run_compound(&mut self, c: &CompoundCommand) -> Exec {
        // Conditions and loop lists raise the PC for what they control, not for
        // what follows the compound command.
        let scoped = matches!(
            c,
            CompoundCommand::IfClause(_)
                | CompoundCommand::WhileClause(_)
                | CompoundCommand::UntilClause(_)
                | CompoundCommand::ForClause(_)
                | CompoundCommand::CaseClause(_)
        );
        if !scoped {
            return self.run_compound_inner(c);
        }
        let saved = self.pc.clone();
        let r = self.run_compound_inner(c);
        self.pc = saved;
        r
    }

    fn run_compound_inner(&mut self, c: &CompoundCommand) -> Exec {
        match c {
            CompoundCommand::BraceGroup(b) => self.run_list(&b.list),
            CompoundCommand::Subshell(s) => {
                let mut sub = self.subshell();
                // `( break )` in a loop: the subshell has no loop to leave.
                sub.loop_depth = 0;
                let r = sub.run_list(&s.list);
                let r = match r {
                    Err(Stop::Refused(r)) => Err(Stop::Refused(r)),
                    _ => {
                        sub.run_exit_trap()?;
                        Ok(())
                    }
                };
                // Like bash's subshell, it ends without waiting for its jobs.
                self.adopt_orphans(&sub);
                self.set_status(sub.last_status);
                r
            }
            CompoundCommand::IfClause(i) => {
                if self.condition(&i.condition)? {
                    return self.run_list(&i.then);
                }
                for e in i.elses.iter().flatten() {
                    match &e.condition {
                        Some(c) => {
                            if self.condition(c)? {
                                return self.run_list(&e.body);
                            }
                        }
                        None => return self.run_list(&e.body),
                    }
                }
                self.set_status(0);
                Ok(())
            }
            CompoundCommand::ForClause(f) => {
                if !super::vars::valid_name(&f.variable_name) {
                    self.diag(format!("`{}': not a valid identifier", f.variable_name));
                    self.set_status(1);
                    return Ok(());
                }
                let items: Vec<(String, Label)> = match &f.values {
                    Some(words) => {
                        let mut out = Vec::new();
                        for w in words {
                            for field in self.expand_word_fields(w)? {
                                out.push((field.text, field.label));
                            }
                        }
                        out
                    }
                    None => self
                        .positional
                        .iter()
                        .map(|s| (s.clone(), self.positional_label.clone()))
                        .collect(),
                };
                self.set_status(0);
                // How often the body runs depends on the list.
                for (_, label) in &items {
                    self.pc.join_assign(label);
                }
                for (item, label) in items {
                    self.debug_trap(Some(f.loc.start.line))?;
                    self.assign_scalar(&f.variable_name, item, label)?;
                    if let LoopCtl::Break = self.loop_body(&f.body.list)? {
                        break;
                    }
                }
                Ok(())
            }
            CompoundCommand::ArithmeticForClause(f) => {
                // How often the body runs depends on what the condition read.
                let saved_pc = self.pc.clone();
                let r = self.arith_for(f);
                self.pc = saved_pc;
                r
            }
            CompoundCommand::WhileClause(w) | CompoundCommand::UntilClause(w) => {
                let until = matches!(c, CompoundCommand::UntilClause(_));
                let mut status = 0;
                loop {
                    // `break`/`continue` in the condition act on this loop too.
                    self.loop_depth += 1;
                    let ok = self.condition(&w.0);
                    self.loop_depth -= 1;
                    let ok = match ok {
                        Ok(ok) => ok,
                        Err(Stop::Break(n)) if n > 1 => return Err(Stop::Break(n - 1)),
                        Err(Stop::Break(_)) => break,
                        Err(Stop::Continue(n)) if n > 1 => return Err(Stop::Continue(n - 1)),
                        Err(Stop::Continue(_)) => {
                            self.count_iteration()?;
                            continue;
                        }
                        Err(e) => return Err(e),
                    };
                    if ok == until {
                        break;
                    }
                    let r = self.loop_body(&w.1.list)?;
                    status = self.last_status;
                    if let LoopCtl::Break = r {
                        break;
                    }
                }
                self.set_status(status);
                Ok(())
            }
            CompoundCommand::CaseClause(cc) => self.run_case(cc),
            CompoundCommand::Arithmetic(a) => {
                self.debug_trap(Some(a.loc.start.line))?;
                self.count_command()?;
                if let Some(script) = self.arith_as_subshells(&a.expr.value) {
                    let mut sub = self.subshell();
                    let r = sub.run_program(&script.program);
                    self.set_status(sub.last_status);
                    return match r {
                        Err(Stop::Refused(r)) => Err(Stop::Refused(r)),
                        _ => Ok(()),
                    };
                }
                match self.eval_arith_labeled(&a.expr.value) {
                    Ok((v, l)) => {
                        self.status_label = l;
                        self.set_status(if v != 0 { 0 } else { 1 });
                    }
                    // An arithmetic error fails `((…))` without leaving the shell.
                    Err(Stop::Exit | Stop::Abort) => self.set_status(1),
                    Err(e) => return Err(e),
                }
                Ok(())
            }
            CompoundCommand::Coprocess(_) => Err(Refusal::new(
                crate::error::ErrorCode::NotSupported,
                "not supported: coproc",
            )
            .into()),
        }
    }

    fn run_case(&mut self, cc: &ast::CaseClauseCommand) -> Exec {
        self.debug_trap(Some(cc.loc.start.line))?;
        let value = self.expand_word_single(&cc.value)?;
        self.pc.join_assign(&value.label);
        self.set_status(0);
        let mut i = 0;
        let mut fall_through = false;
        while i < cc.cases.len() {
            let item = &cc.cases[i];
            let mut matched = fall_through;
            if !matched {
                for p in &item.patterns {
                    let pat = self.expand_pattern(p)?;
                    let icase = self.shopt.nocasematch;
                    if super::pattern::matches(&pat, &value.text, icase, self.utf8_locale()) {
                        matched = true;
                        break;
                    }
                }
            }
            fall_through = false;
            if matched {
                if let Some(cmd) = &item.cmd {
                    self.run_list(cmd)?;
                } else {
                    self.set_status(0);
                }
                match item.post_action {
                    ast::CaseItemPostAction::ExitCase => return Ok(()),
                    ast::CaseItemPostAction::UnconditionallyExecuteNextCaseItem => {
                        fall_through = true;
                    }
                    ast::CaseItemPostAction::ContinueEvaluatingCases => {}
                }
            }
            i += 1;
        }
        Ok(())
    }

    /// `( ( cmd ) )` is parsed as `((cmd))`; when the text is not arithmetic but is
    /// a script, bash runs it as nested subshells, and so do we.
    fn arith_as_subshells(&self, text: &str) -> Option<safesh_syntax::Script> {
        if text.contains(['$', '`']) {
            return None;
        }
        let t = text.trim();
        // Other text that is not arithmetic is an arithmetic error (`(( 2#9 ))`).
        if !safesh_syntax::arith::looks_like_commands(t) {
            return None;
        }
        self.parse_cached(t).ok()
    }

    /// Waits for background jobs without changing `$?`.
    pub(crate) fn wait_all_keep_status(&mut self) {
        let s = self.last_status;
        self.wait_all();
        self.last_status = s;
    }
}
