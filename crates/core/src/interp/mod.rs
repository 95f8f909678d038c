//! The interpreter: walks the syntax tree, expanding words, wiring streams and
//! dispatching each simple command (function, builtin, utility), with labels on
//! every value and limits on everything that can grow.

pub(crate) mod arith;
mod assign;
pub(crate) mod cond;
pub(crate) mod expand;
mod named_fd;
pub(crate) mod pattern;
pub(crate) mod redirect;
pub(crate) mod simple;
pub(crate) mod vars;

mod compound;
pub(crate) use compound::SHELL_STACK;

use crate::error::{ErrorCode, Refusal};
use crate::io::{Input, Output, Sink, SinkKind, Source, SourceKind};
use crate::limits::Limits;
use safesh_label::Label;
use safesh_syntax::ast;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;
pub(crate) use vars::{Value, Var, Vars};

/// A hash map with a fast (non-cryptographic) hasher, for interpreter lookups.
pub(crate) type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// How execution leaves the normal sequence.
#[derive(Debug)]
pub(crate) enum Stop {
    /// `break N` (levels still to unwind).
    Break(u32),
    /// `continue N`.
    Continue(u32),
    /// `return` from a function or sourced file.
    Return,
    /// `exit` (or `set -e`): leave the current (sub)shell with the last status.
    Exit,
    /// An expansion or assignment error (`$((1/0))`, a readonly variable, a bad
    /// substitution): like bash, abandon the current top-level command and go on
    /// with the next one (a subshell exits); `$?` is 1.
    Abort,
    /// A refusal or a limit: stop the whole script.
    Refused(Box<Refusal>),
}

impl From<Refusal> for Stop {
    fn from(r: Refusal) -> Self {
        Stop::Refused(Box::new(r))
    }
}

/// Result of executing a piece of the tree.
pub(crate) type Exec = Result<(), Stop>;

/// A cancellation scope: the request's deadline, or a `timeout` wrapper's.
#[derive(Debug)]
pub struct Cancel {
    flag: AtomicBool,
    deadline: Option<Instant>,
    parent: Option<Arc<Cancel>>,
    /// Set from outside the request (a client cancelling, a job killed).
    interrupt: Option<Arc<AtomicBool>>,
}

impl Cancel {
    /// A root scope with an optional deadline.
    pub fn root(deadline: Option<Instant>) -> Arc<Cancel> {
        Cancel::root_with(deadline, None)
    }

    /// A root scope that also ends when `interrupt` is set.
    pub fn root_with(deadline: Option<Instant>, interrupt: Option<Arc<AtomicBool>>) -> Arc<Cancel> {
        Arc::new(Cancel {
            flag: AtomicBool::new(false),
            deadline,
            parent: None,
            interrupt,
        })
    }

    /// A child scope that also ends at `deadline`.
    pub fn child(parent: &Arc<Cancel>, deadline: Instant) -> Arc<Cancel> {
        Arc::new(Cancel {
            flag: AtomicBool::new(false),
            deadline: Some(deadline),
            parent: Some(parent.clone()),
            interrupt: None,
        })
    }

    /// True if this scope itself (not a parent) has expired.
    pub fn expired_here(&self) -> bool {
        self.flag.load(Ordering::Relaxed)
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self
                .interrupt
                .as_ref()
                .is_some_and(|i| i.load(Ordering::Relaxed))
    }

    /// True if this scope or any parent has expired.
    pub fn is_cancelled(&self) -> bool {
        self.expired_here() || self.parent.as_ref().is_some_and(|p| p.is_cancelled())
    }

    /// Time left before the nearest deadline of this scope or a parent, if any.
    pub fn remaining(&self) -> Option<std::time::Duration> {
        let here = self
            .deadline
            .map(|d| d.saturating_duration_since(Instant::now()));
        let up = self.parent.as_ref().and_then(|p| p.remaining());
        match (here, up) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// True if the expiry comes from a parent scope.
    pub fn parent_cancelled(&self) -> bool {
        self.parent.as_ref().is_some_and(|p| p.is_cancelled())
    }
}

/// The contents of `m` when `take`, else an empty map.
fn take_if<V>(take: bool, m: &Mutex<FastMap<String, V>>) -> FastMap<String, V> {
    if take {
        std::mem::take(&mut *crate::io::lock(m))
    } else {
        FastMap::default()
    }
}

/// The deadline `ms` from now (none for 0).
fn deadline_in(ms: u64) -> Option<Instant> {
    (ms > 0).then(|| Instant::now() + std::time::Duration::from_millis(ms))
}

/// State shared by a shell and all its subshells, pipeline stages and jobs.
pub(crate) struct Shared {
    pub limits: Limits,
    pub commands: AtomicU64,
    pub loop_iterations: AtomicU64,
    /// Pipeline stages and background jobs running now.
    pub live_threads: AtomicU64,
    pub word_cache: Mutex<FastMap<String, Arc<Vec<safesh_syntax::WordPieceWithSource>>>>,
    pub script_cache: Mutex<FastMap<String, safesh_syntax::Script>>,
    pub next_job: AtomicU64,
    pub pid: u32,
    /// The first refusal raised by any stage, so a pipeline stops as a whole.
    pub refusal: Mutex<Option<Refusal>>,
    /// When set, nothing outside these directories may be changed.
    pub write_roots: Option<Vec<PathBuf>>,
    /// The policy every command is decided by (`None`: a library session without
    /// one; every face of safesh sets it).
    pub policy: Option<Arc<safesh_policy::Policy>>,
    /// `force`: this request overrides nudges.
    pub force: bool,
    /// The session's private temp dir (`<(…)` files go there).
    pub temp_dir: Option<PathBuf>,
    /// Labels of `<(…)` temporary files, so reading them keeps the producer's label.
    pub temp_labels: Mutex<HashMap<PathBuf, Label>>,
    /// The request's output allowance (`limits.output_bytes`), when set.
    pub output_budget: Mutex<Option<Arc<crate::io::OutputBudget>>>,
    /// Keeps the session's temp dir alive while a request or a detached job uses it.
    pub temp_keep: Option<Arc<crate::session::TempDirGuard>>,
    /// Information-flow control (with the policy): rules, audit, file labels.
    pub flow: Option<Arc<crate::flow::Flow>>,
    /// This request's own time limit (`timeout_ms`), replacing `limits.script_timeout_ms`.
    pub request_timeout_ms: Option<u64>,
    /// Notes for the caller about what safesh changed for this request (a
    /// variable it did not pass to a program, protected files an external
    /// program wrote and safesh reverted): the result's `warnings`.
    pub warnings: Mutex<Vec<String>>,
}

impl Shared {
    /// The next request's (or a detached job's) shared state: fresh counters, the
    /// same policy, roots and temp dir; the caches move over when `take_caches`.
    pub(crate) fn successor(&self, take_caches: bool, request_timeout_ms: Option<u64>) -> Shared {
        Shared {
            limits: self.limits,
            commands: AtomicU64::new(0),
            loop_iterations: AtomicU64::new(0),
            live_threads: AtomicU64::new(0),
            word_cache: Mutex::new(take_if(take_caches, &self.word_cache)),
            script_cache: Mutex::new(take_if(take_caches, &self.script_cache)),
            next_job: AtomicU64::new(self.next_job.load(Ordering::Relaxed)),
            pid: self.pid,
            refusal: Mutex::new(None),
            write_roots: self.write_roots.clone(),
            policy: self.policy.clone(),
            force: self.force,
            temp_dir: self.temp_dir.clone(),
            temp_labels: Mutex::new(HashMap::new()),
            output_budget: Mutex::new(None),
            temp_keep: self.temp_keep.clone(),
            flow: self.flow.clone(),
            request_timeout_ms,
            warnings: Mutex::new(Vec::new()),
        }
    }

    /// The time limit in force (ms; 0: none).
    pub fn timeout_ms(&self) -> u64 {
        self.request_timeout_ms
            .unwrap_or(self.limits.script_timeout_ms)
    }
}

/// A reserved thread slot; dropping it releases the slot.
pub(crate) struct ThreadSlot(Arc<Shared>);

impl Drop for ThreadSlot {
    fn drop(&mut self) {
        self.0.live_threads.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A background job (`cmd &`).
pub(crate) struct Job {
    pub id: u64,
    pub handle: Option<std::thread::JoinHandle<i32>>,
    /// Handed to the session's background sink: `wait` may still join it, but the
    /// end of the script does not.
    pub detached: bool,
    /// Started by a subshell that has ended without waiting for it (as bash's
    /// subshells do): `wait` does not see it (not a child of this shell), but the
    /// end of the script joins it, since a job is a thread of this process.
    pub orphan: bool,
}

/// Shell options (`set -e`, …).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Options {
    pub errexit: bool,
    pub nounset: bool,
    pub pipefail: bool,
    pub noglob: bool,
    pub noclobber: bool,
    pub xtrace: bool,
    /// `set -n`: read commands without running them.
    pub noexec: bool,
    /// `set -E`: functions, subshells and `$(…)` inherit the ERR trap.
    pub errtrace: bool,
    /// `set -T`: functions, subshells and `$(…)` inherit the DEBUG trap.
    pub functrace: bool,
}

/// The file descriptors of the running code.
#[derive(Clone)]
pub(crate) enum Fd {
    In(Input),
    Out(Output),
}

/// One shell: variables, functions, fds, options. Cloned for subshells and
/// pipeline stages; `shared` stays shared.
#[derive(Clone)]
pub(crate) struct Shell {
    pub vars: Vars,
    pub funcs: FastMap<String, Arc<ast::FunctionDefinition>>,
    /// The label of each function's definition (the PC where it was defined, e.g.
    /// under `eval` of secret text): its body runs and prints (`declare -f`) with it.
    pub func_labels: FastMap<String, Label>,
    pub positional: Vec<String>,
    pub positional_label: Label,
    pub arg0: String,
    pub cwd: PathBuf,
    /// The label of the words that chose `cwd` (`cd` arguments, the PC): `pwd`
    /// and `$PWD` print it with the labels of the path's names.
    pub cwd_label: Label,
    pub opts: Options,
    pub last_status: i32,
    pub status_label: Label,
    /// Everything the current command's words were made of (variables read while
    /// expanding them, the expanded words): what a diagnostic or a refusal about
    /// it may quote, so its text carries this label (see [`Shell::diag`]).
    pub diag_label: Label,
    pub pc: Label,
    /// What the arithmetic being evaluated has read so far (variables, expanded
    /// text): the label of its result.
    pub arith_label: Label,
    /// The script came as one string (`-c`, MCP, JSON-RPC), not read from a
    /// file or stdin: bash then leaves the shell where it would abandon only
    /// the line (an arithmetic error in an array subscript).
    pub script_is_string: bool,
    pub fds: HashMap<i32, Fd>,
    pub traps: HashMap<String, (String, Label)>,
    /// In a subshell that has not set a trap yet: the traps of the shell it
    /// came from, which `trap -p` shows (`saved=$(trap -p)`, as in bash).
    pub parent_traps: Option<HashMap<String, (String, Label)>>,
    /// The label of the script text being run: the agent's for the script, the
    /// text's own for `eval`, `source`, trap handlers and functions defined by
    /// them. Literal words get it, so code made of data prints data's label.
    pub code_label: Label,
    pub shared: Arc<Shared>,
    pub cancel: Arc<Cancel>,
    /// The session's interrupt flag: every request's root scope watches it.
    pub interrupt: Option<Arc<AtomicBool>>,
    pub call_depth: u64,
    pub subst_depth: u64,
    pub loop_depth: u32,
    /// >0 while running a condition (`if`, `while`, `&&` left side, `!`): `set -e` is off.
    pub errexit_suppressed: u32,
    /// How many of those are a `!` that began while `set -e` was off: bash keeps
    /// `set -e` on for them when it is turned on inside (`f() { set -e; false; }; ! f`
    /// exits), though the ERR trap stays quiet.
    pub bang_lenient: u32,
    pub jobs: Arc<Mutex<Vec<Job>>>,
    pub last_bg: Option<u64>,
    pub in_trap: bool,
    pub line: usize,
    /// Added to the lines of the text running (`eval`'s text starts at the line
    /// where the eval command ends, a trap's at the line that triggered it).
    pub line_offset: usize,
    /// The ERR trap does not run here (a function or subshell without `set -E`).
    pub err_trap_off: bool,
    /// The DEBUG trap does not run here (a function or subshell without `set -T`).
    pub debug_trap_off: bool,
    /// `umask`'s value (shown and set; not applied to the process).
    pub umask: u32,
    /// The options to restore when the running function returns (`local -`).
    pub local_opts: Option<Options>,
    /// Functions made readonly (`readonly -f`).
    pub readonly_funcs: std::collections::BTreeSet<String>,
    /// The last line of the simple command running (with the offset).
    pub cmd_end_line: usize,
    pub last_subst_status: Option<i32>,
    pub source_depth: u32,
    /// The server session the context store's `session` scope belongs to.
    pub context_session: Option<Arc<str>>,
    pub getopts_pos: usize,
    pub dir_stack: Vec<String>,
    /// Set by `exec` without a command: keep the redirections it was given.
    pub keep_redirects: bool,
    /// Aliases: name → (text, label of the words that defined it).
    pub aliases: std::collections::BTreeMap<String, (String, Label)>,
    /// Aliases being expanded now (an alias is not expanded inside itself).
    pub alias_active: Vec<String>,
    /// `N>&M-` moves made by the redirections being applied: (N, M).
    pub fd_moves: Vec<(i32, i32)>,
    /// The command under the redirections runs outside the shell (a utility or
    /// program): bash restores every descriptor after it.
    pub redirect_outside: bool,
    /// The last compound command's own redirections failed (`{ …; } < missing`):
    /// then `set -e` applies to it, unlike a status from inside it.
    pub(crate) compound_redirect_failed: bool,
    /// True in `( … )`, `$( … )`, pipeline stages and jobs.
    pub in_subshell: bool,
    /// `shopt` options.
    pub shopt: Shopt,
    /// Temporary files of `<(…)` for the command being run.
    pub temp_files: Vec<PathBuf>,
    /// Told the host pid of every sandboxed program this shell starts.
    pub on_start: Option<safesh_sandbox::StartHook>,
    /// Takes over top-level background jobs (the faces); `None`: the script waits
    /// for them at its end (the CLI).
    pub background: Option<Arc<dyn crate::session::BackgroundSink>>,
    /// A channel to the human for approvals (the faces that have one); `None`:
    /// a command that needs one is refused with `APPROVAL_REQUIRED`.
    pub approver: Option<Arc<dyn crate::approval::ApprovalChannel>>,
    /// A running spec's `allowed_commands` (checked at every dispatch, before
    /// the policy; it only narrows).
    pub gate: Option<Arc<dyn crate::command_gate::CommandGate>>,
}

/// `shopt` options safesh implements.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Shopt {
    pub nullglob: bool,
    pub dotglob: bool,
    pub failglob: bool,
    pub lastpipe: bool,
    pub nocaseglob: bool,
    /// `case`, `[[ == != =~ ]]` and `${x/p/r}` ignore case.
    pub nocasematch: bool,
    pub globstar: bool,
    /// `$(…)` keeps `set -e`.
    pub inherit_errexit: bool,
    /// Aliases are expanded.
    pub expand_aliases: bool,
}

impl Shell {
    /// A new top-level shell.
    pub fn new(
        cwd: PathBuf,
        env: impl IntoIterator<Item = (String, String)>,
        limits: Limits,
    ) -> Self {
        let root = Cancel::root(deadline_in(limits.script_timeout_ms));
        let mut vars = Vars::default();
        for (k, v) in env {
            let mut var = Var::scalar(v, Label::from_env(k.as_str()));
            var.exported = true;
            vars.insert(&k, var);
        }
        let mut fds = HashMap::new();
        fds.insert(
            0,
            Fd::In(Source::new(SourceKind::Stdin, Label::user_input())),
        );
        fds.insert(1, Fd::Out(Sink::new(SinkKind::Stdout)));
        fds.insert(2, Fd::Out(Sink::new(SinkKind::Stderr)));
        let mut sh = Shell {
            vars,
            funcs: FastMap::default(),
            func_labels: FastMap::default(),
            positional: Vec::new(),
            positional_label: Label::agent(),
            arg0: "safesh".to_string(),
            cwd: cwd.clone(),
            opts: Options::default(),
            last_status: 0,
            status_label: Label::empty(),
            diag_label: Label::empty(),
            pc: Label::empty(),
            arith_label: Label::empty(),
            script_is_string: true,
            fds,
            traps: HashMap::new(),
            parent_traps: None,
            code_label: Label::agent(),
            shared: Arc::new(Shared {
                limits,
                commands: AtomicU64::new(0),
                loop_iterations: AtomicU64::new(0),
                live_threads: AtomicU64::new(0),
                word_cache: Mutex::new(FastMap::default()),
                script_cache: Mutex::new(FastMap::default()),
                next_job: AtomicU64::new(1),
                pid: std::process::id(),
                refusal: Mutex::new(None),
                write_roots: None,
                policy: None,
                force: false,
                temp_dir: None,
                temp_labels: Mutex::new(HashMap::new()),
                output_budget: Mutex::new(None),
                temp_keep: None,
                flow: None,
                request_timeout_ms: None,
                warnings: Mutex::new(Vec::new()),
            }),
            cancel: root,
            interrupt: None,
            call_depth: 0,
            subst_depth: 0,
            loop_depth: 0,
            errexit_suppressed: 0,
            bang_lenient: 0,
            jobs: Arc::new(Mutex::new(Vec::new())),
            last_bg: None,
            in_trap: false,
            line: 0,
            last_subst_status: None,
            source_depth: 0,
            context_session: None,
            getopts_pos: 0,
            dir_stack: Vec::new(),
            cwd_label: Label::empty(),
            readonly_funcs: std::collections::BTreeSet::new(),
            local_opts: None,
            umask: 0o022,
            debug_trap_off: false,
            err_trap_off: false,
            line_offset: 0,
            cmd_end_line: 0,
            keep_redirects: false,
            aliases: std::collections::BTreeMap::new(),
            alias_active: Vec::new(),
            fd_moves: Vec::new(),
            redirect_outside: false,
            compound_redirect_failed: false,
            in_subshell: false,
            shopt: Shopt::default(),
            temp_files: Vec::new(),
            on_start: None,
            background: None,
            approver: None,
            gate: None,
        };
        if sh.vars.get("BASH_VERSINFO").is_none() {
            let info = ["5", "2", "15", "1", "release", "x86_64-pc-linux-gnu"];
            let items = info
                .iter()
                .enumerate()
                .map(|(i, v)| (i as i64, v.to_string()))
                .collect();
            let _ = sh.vars.set_array("BASH_VERSINFO", items, Label::agent());
        }
        let pwd = safesh_utils::word_bytes::word_from_path(&cwd).into_owned();
        let _ = sh.vars.set("PWD", pwd, Label::agent());
        if let Some(v) = sh.vars.get_mut("PWD") {
            v.exported = true;
        }
        for (k, v) in [
            ("IFS", " \t\n"),
            ("OPTIND", "1"),
            ("BASH_VERSION", "5.2.15(1)-release"),
        ] {
            if sh.vars.get(k).is_none() {
                let _ = sh.vars.set(k, v.to_string(), Label::agent());
            }
        }
        sh
    }

    /// Prepares for a new exec request: fresh counters and deadline
    /// (`timeout_ms` replaces `limits.script_timeout_ms` for this request).
    pub fn reset_request(&mut self, timeout_ms: Option<u64>) {
        self.shared = Arc::new(self.shared.successor(true, timeout_ms));
        if let Some(flow) = &self.shared.flow {
            flow.new_request();
        }
        self.cancel = Cancel::root_with(
            deadline_in(self.shared.timeout_ms()),
            self.interrupt.clone(),
        );
        self.call_depth = 0;
        self.subst_depth = 0;
        self.loop_depth = 0;
        self.errexit_suppressed = 0;
        self.bang_lenient = 0;
    }

    /// A copy of this shell for a background job that outlives the request: its own
    /// counters and output budget, no deadline (like a face's job, it runs until it
    /// ends or is stopped), stopped by `interrupt` instead of the request's.
    pub fn detached(&self, interrupt: Arc<AtomicBool>) -> Shell {
        let mut s = self.subshell();
        s.shared = Arc::new(self.shared.successor(false, Some(0)));
        s.cancel = Cancel::root_with(deadline_in(s.shared.timeout_ms()), Some(interrupt.clone()));
        s.interrupt = Some(interrupt);
        s.background = None;
        s
    }

    /// A subshell: a copy with its own jobs list.
    pub fn subshell(&self) -> Shell {
        let mut s = self.clone();
        s.in_subshell = true;
        s.jobs = Arc::new(Mutex::new(Vec::new()));
        s.parent_traps = Some(self.traps.clone());
        s.traps.remove("EXIT");
        // Without `set -E` the ERR trap is not run in a subshell; without
        // `set -T` neither is the DEBUG trap.
        s.err_trap_off |= !self.opts.errtrace;
        s.debug_trap_off |= !self.opts.functrace;
        s
    }

    /// Sets `$?` (with the label of what produced it).
    pub fn set_status(&mut self, status: i32) {
        self.last_status = status;
    }

    /// Checks cancellation and raises the request's timeout.
    pub fn check_cancel(&self) -> Exec {
        if self.cancel.is_cancelled() {
            return Err(self.timeout_refusal().into());
        }
        Ok(())
    }

    /// The refusal for an expired scope: `TIMEOUT` for a time limit, the
    /// cancellation refusal when the request was interrupted from outside.
    pub fn timeout_refusal(&self) -> Refusal {
        if self
            .interrupt
            .as_ref()
            .is_some_and(|i| i.load(Ordering::SeqCst))
        {
            return crate::session::cancelled_refusal();
        }
        let rule = if self.shared.request_timeout_ms.is_some() {
            "timeout_ms"
        } else {
            "limits.script_timeout_ms"
        };
        Refusal::new(
            ErrorCode::Timeout,
            format!("the script ran longer than {} ms", self.shared.timeout_ms()),
        )
        .rule(rule)
        .suggest("run long work as a background job, or split the script")
    }

    /// Counts one simple command against the limit (and checks the output budget).
    pub fn count_command(&self) -> Exec {
        if let Some(b) = crate::io::lock(&self.shared.output_budget).as_ref()
            && b.exceeded()
        {
            return Err(Refusal::limit("output in bytes", b.limit(), "output_bytes").into());
        }
        // A file size limit hit by a builtin's write (`echo` in a loop into a
        // redirected file) stops the script at its next command.
        {
            let mut slot = crate::io::lock(&self.shared.refusal);
            if slot
                .as_ref()
                .is_some_and(|r| r.details.rule.as_deref() == Some("limits.file_size_mb"))
                && let Some(r) = slot.take()
            {
                return Err(r.into());
            }
        }
        let n = self.shared.commands.fetch_add(1, Ordering::Relaxed) + 1;
        if n > self.shared.limits.commands {
            return Err(Refusal::limit(
                "the number of commands",
                self.shared.limits.commands,
                "commands",
            )
            .into());
        }
        self.check_cancel()
    }

    /// Reserves a thread for a pipeline stage or job; the guard releases it.
    pub fn reserve_thread(&self) -> Result<ThreadSlot, Stop> {
        let n = self.shared.live_threads.fetch_add(1, Ordering::Relaxed) + 1;
        let slot = ThreadSlot(self.shared.clone());
        if n > self.shared.limits.processes {
            return Err(Refusal::limit(
                "pipeline stages and background jobs running at once",
                self.shared.limits.processes,
                "processes",
            )
            .into());
        }
        Ok(slot)
    }

    /// Counts one loop iteration against the limit.
    pub fn count_iteration(&self) -> Exec {
        let n = self.shared.loop_iterations.fetch_add(1, Ordering::Relaxed) + 1;
        if n > self.shared.limits.loop_iterations {
            return Err(Refusal::limit(
                "loop iterations",
                self.shared.limits.loop_iterations,
                "loop_iterations",
            )
            .into());
        }
        self.check_cancel()
    }

    /// Checks a string against the size limit.
    pub fn check_size(&self, len: usize) -> Exec {
        if len as u64 > self.shared.limits.string_bytes {
            return Err(Refusal::limit(
                "a string's size in bytes",
                self.shared.limits.string_bytes,
                "string_bytes",
            )
            .into());
        }
        Ok(())
    }

    /// The output on fd `n`: a sink whose writes fail with EBADF when `n` is
    /// closed (`>&-`), as a write to a closed descriptor does in bash.
    pub fn out_fd(&self, n: i32) -> Output {
        match self.fds.get(&n) {
            Some(Fd::Out(o)) => o.clone(),
            _ => Sink::new(SinkKind::Closed),
        }
    }

    /// The input on fd `n`: a source whose reads fail with EBADF when `n` is
    /// closed (`<&-`), as a read of a closed descriptor does in bash.
    pub fn in_fd(&self, n: i32) -> Input {
        match self.fds.get(&n) {
            Some(Fd::In(i)) => i.clone(),
            _ => Source::closed(),
        }
    }

    /// Writes a diagnostic to fd 2 (`safesh: line N: msg`).
    pub fn diag(&self, msg: impl std::fmt::Display) {
        let text = if self.line > 0 {
            format!("safesh: line {}: {msg}\n", self.line)
        } else {
            format!("safesh: {msg}\n")
        };
        // Words in messages (a file name) go out as the bytes they stand for.
        let _ = self.out_fd(2).write_chunk(
            &safesh_utils::word_bytes::word_to_bytes(&text),
            &self.message_label(),
        );
    }

    /// The label of a message about the current command: the words it quotes
    /// ([`Shell::diag_label`]) and the PC (that the message was written at all).
    pub fn message_label(&self) -> Label {
        Label::agent().join(&self.pc).join(&self.diag_label)
    }

    /// Reports an expansion or assignment error and abandons the current command
    /// (see [`Stop::Abort`]); `$?` becomes 1.
    pub fn abort(&mut self, msg: impl std::fmt::Display) -> Stop {
        self.diag(msg);
        self.last_status = 1;
        Stop::Abort
    }

    /// Writes bytes to fd 1 with `label`.
    pub fn write_out(&self, data: &[u8], label: &Label) -> std::io::Result<()> {
        self.out_fd(1).write_chunk(data, label)
    }

    /// A scalar variable's value ("" when unset).
    pub fn var_str(&self, name: &str) -> String {
        self.vars
            .get(name)
            .map(|v| v.as_str().to_string())
            .unwrap_or_default()
    }

    /// Parses `text` within this request's budget: `[limits] script_bytes`, and
    /// the deadline and cancellation of the current scope, polled while parsing
    /// and checking (a stopped parse is `TIMEOUT`, or the cancellation refusal).
    pub fn parse_budgeted(&self, text: &str) -> Result<safesh_syntax::Script, Refusal> {
        let cancel = self.cancel.clone();
        let stop = move || cancel.is_cancelled();
        let budget = safesh_syntax::Budget {
            max_bytes: usize::try_from(self.shared.limits.script_bytes).unwrap_or(usize::MAX),
            cancelled: &stop,
        };
        safesh_syntax::parse_with(text, &budget).map_err(|e| match e {
            safesh_syntax::ParseError::Cancelled => self.timeout_refusal(),
            e => Refusal::from(e),
        })
    }

    /// Parses (with caching) a script given at run time (`eval`, `source`, `$(…)`).
    pub fn parse_cached(&self, text: &str) -> Result<safesh_syntax::Script, Refusal> {
        if let Some(s) = crate::io::lock(&self.shared.script_cache).get(text) {
            return Ok(s.clone());
        }
        let script = self.parse_budgeted(text)?;
        let mut cache = crate::io::lock(&self.shared.script_cache);
        if cache.len() > 4096 {
            cache.clear();
        }
        cache.insert(text.to_string(), script.clone());
        Ok(script)
    }

    /// Runs a whole program at top level: an [`Stop::Abort`] ends only the complete
    /// command it happened in.
    pub fn run_program_top(&mut self, program: &ast::Program) -> Exec {
        for cc in &program.complete_commands {
            match self.run_list(cc) {
                Err(Stop::Abort) => self.last_status = 1,
                other => other?,
            }
        }
        Ok(())
    }

    /// Runs a whole program.
    pub fn run_program(&mut self, program: &ast::Program) -> Exec {
        for cc in &program.complete_commands {
            self.run_list(cc)?;
        }
        Ok(())
    }

    /// Runs the EXIT trap, once.
    pub fn run_exit_trap(&mut self) -> Result<(), Refusal> {
        if let Some((handler, label)) = self.traps.remove("EXIT") {
            let status = self.last_status;
            self.in_trap = true;
            match self.run_text_labeled(&handler, &label) {
                Err(Stop::Refused(r)) => return Err(*r),
                Err(Stop::Exit) => {}
                _ => self.last_status = status,
            }
            self.in_trap = false;
        }
        Ok(())
    }

    /// Runs `text` built from data labeled `label` (a trap handler, a `declare`
    /// list parsed again): what it does and prints carries the label through the
    /// PC, and its literal words carry it too ([`Shell::code_label`]).
    pub(crate) fn run_text_labeled(&mut self, text: &str, label: &Label) -> Exec {
        let saved_pc = self.pc.clone();
        self.pc.join_assign(label);
        let saved_code = self.code_label.clone();
        self.code_label.join_assign(label);
        let r = self.run_text(text);
        self.pc = saved_pc;
        self.code_label = saved_code;
        r
    }

    /// Runs the DEBUG trap before a command (`line`: where the command starts,
    /// for `$LINENO`; the current line when `None`). `$?` is left as it was
    /// unless the handler ends the script (`exit`, `set -e`).
    pub(crate) fn debug_trap(&mut self, line: Option<usize>) -> Exec {
        if self.in_trap || self.debug_trap_off || self.traps.is_empty() {
            return Ok(());
        }
        let Some((handler, label)) = self.traps.get("DEBUG").cloned() else {
            return Ok(());
        };
        if let Some(l) = line {
            self.line = l + self.line_offset;
        }
        let status = self.last_status;
        let (line, end) = (self.line, self.cmd_end_line);
        self.in_trap = true;
        let saved_offset = std::mem::replace(&mut self.line_offset, line.saturating_sub(1));
        let r = self.run_text_labeled(&handler, &label);
        self.line_offset = saved_offset;
        (self.line, self.cmd_end_line) = (line, end);
        self.in_trap = false;
        self.after_trap(r, status)
    }

    /// A trap handler's end: `$?` is put back to `status` unless the handler
    /// ends the script (a `return` in it only ends the handler).
    fn after_trap(&mut self, r: Exec, status: i32) -> Exec {
        match r {
            Ok(()) | Err(Stop::Return) => {
                self.last_status = status;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Runs the RETURN trap (a sourced file or a traced function returns);
    /// `$?` is left as it was unless the handler ends the script.
    pub(crate) fn return_trap(&mut self) -> Exec {
        if self.in_trap || self.traps.is_empty() {
            return Ok(());
        }
        let Some((handler, label)) = self.traps.get("RETURN").cloned() else {
            return Ok(());
        };
        let status = self.last_status;
        self.in_trap = true;
        let r = self.run_text_labeled(&handler, &label);
        self.in_trap = false;
        self.after_trap(r, status)
    }

    /// Parses and runs `text` in this shell (eval, traps).
    pub fn run_text(&mut self, text: &str) -> Exec {
        let script = self.parse_cached(text)?;
        self.precheck(&script.program)?;
        self.run_program(&script.program)
    }

    /// Lets go of the jobs handed to the background sink: the script's end does
    /// not wait for them (`wait` inside the script still could).
    pub fn forget_detached(&mut self) {
        crate::io::lock(&self.jobs).retain(|j| !j.detached);
    }

    /// Takes over the jobs `sub` (a subshell that has ended) left running, as
    /// orphans (see [`Job::orphan`]). A subshell does not wait for its jobs: with
    /// `(printf a > fifo &); cat fifo` the job needs the reader started after it.
    pub(crate) fn adopt_orphans(&mut self, sub: &Shell) {
        let jobs: Vec<Job> = std::mem::take(&mut *crate::io::lock(&sub.jobs));
        if jobs.is_empty() {
            return;
        }
        crate::io::lock(&self.jobs).extend(jobs.into_iter().map(|mut j| {
            j.orphan = true;
            j
        }));
    }

    /// Waits for this shell's own background jobs (`wait`): orphans stay.
    pub fn wait_own(&mut self) {
        let jobs: Vec<Job> = std::mem::take(&mut *crate::io::lock(&self.jobs));
        let (orphans, own): (Vec<Job>, Vec<Job>) = jobs.into_iter().partition(|j| j.orphan);
        crate::io::lock(&self.jobs).extend(orphans);
        for mut j in own {
            if let Some(h) = j.handle.take() {
                self.last_status = h.join().unwrap_or(1);
            }
        }
    }

    /// Waits for every background job of this shell, orphans included.
    pub fn wait_all(&mut self) {
        let jobs: Vec<Job> = std::mem::take(&mut *crate::io::lock(&self.jobs));
        for mut j in jobs {
            if let Some(h) = j.handle.take() {
                self.last_status = h.join().unwrap_or(1);
            }
        }
    }
}
