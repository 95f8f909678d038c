//! A session: one shell whose state (cwd, variables, functions) lives across exec
//! requests, and the one entry point every face uses: [`Session::exec`].

use crate::error::Refusal;
use crate::interp::{Fd, Shell, Stop};
use crate::io::{Sink, SinkKind, Source};
use crate::limits::Limits;
use safesh_label::Label;
use std::path::PathBuf;
use std::time::Instant;

/// How a session is created.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The working directory.
    pub cwd: PathBuf,
    /// The environment, imported as exported variables.
    pub env: Vec<(String, String)>,
    /// Interpreter limits.
    pub limits: Limits,
    /// `$0`.
    pub arg0: String,
    /// `$1…`.
    pub args: Vec<String>,
    /// When set, nothing outside these directories may be changed.
    pub write_roots: Option<Vec<PathBuf>>,
    /// Run scripts on the calling thread instead of a dedicated 64 MiB-stack thread.
    /// Only for callers that made sure their own stack is that large (the CLI raises
    /// the main thread's stack limit); it saves a thread per request.
    pub on_calling_thread: bool,
    /// The policy every command is decided by. Every face of safesh sets one; a
    /// library session without one runs only builtins and utilities, unchecked.
    pub policy: Option<safesh_policy::Policy>,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            // OS strings: a variable that is not UTF-8 must not panic; its
            // value's bad bytes are escaped (safesh_utils::word_bytes), so an
            // external program gets them back as they were.
            env: std::env::vars_os()
                .map(|(k, v)| {
                    (
                        k.to_string_lossy().into_owned(),
                        safesh_utils::word_bytes::word_from_os(&v).into_owned(),
                    )
                })
                .collect(),
            limits: Limits::default(),
            arg0: "safesh".into(),
            args: Vec::new(),
            write_roots: None,
            on_calling_thread: false,
            policy: None,
        }
    }
}

/// The reusable parts of a finished fresh session: its policy (with its temp dir
/// as a write root) and its temp dir, empty.
pub struct Reusable {
    policy: std::sync::Arc<safesh_policy::Policy>,
    temp: std::sync::Arc<TempDirGuard>,
}

/// Where a request's output goes.
#[derive(Clone)]
pub enum OutputTarget {
    /// Stream to this process's stdout and stderr (the CLI).
    Inherit,
    /// Capture stdout and stderr separately, up to `cap` bytes each.
    Separate {
        /// Bytes kept per stream.
        cap: u64,
    },
    /// Capture both into one stream (as a terminal would show them).
    Merged {
        /// Bytes kept.
        cap: u64,
    },
    /// Hand every chunk to a consumer as it is written (jobs, streaming faces);
    /// the outcome's `stdout`/`stderr` stay empty.
    Stream(std::sync::Arc<dyn crate::io::StreamConsumer>),
}

impl std::fmt::Debug for OutputTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OutputTarget::Inherit => f.write_str("Inherit"),
            OutputTarget::Separate { cap } => write!(f, "Separate {{ cap: {cap} }}"),
            OutputTarget::Merged { cap } => write!(f, "Merged {{ cap: {cap} }}"),
            OutputTarget::Stream(_) => f.write_str("Stream"),
        }
    }
}

/// Where a request's stdin comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSource {
    /// This process's stdin.
    Inherit,
    /// These bytes.
    Bytes(Vec<u8>),
    /// These bytes, with the label they already have (a pipeline step's
    /// input: the previous step's stdout keeps what it was made of).
    Labeled(Vec<u8>, Label),
    /// Nothing.
    Empty,
}

/// What one exec request produced.
#[derive(Debug, Clone)]
pub struct ExecOutcome {
    /// The exit status.
    pub exit_code: i32,
    /// Captured stdout (or merged output).
    pub stdout: Vec<u8>,
    /// Captured stderr (empty when merged).
    pub stderr: Vec<u8>,
    /// Total bytes offered to stdout (before any cap).
    pub stdout_total: u64,
    /// Total bytes offered to stderr.
    pub stderr_total: u64,
    /// True when a capture cap dropped bytes.
    pub truncated: bool,
    /// The join of the labels of all output.
    pub label: Label,
    /// The label of the exit status: what it was derived from (`exit "$x"`, a
    /// test on a secret). A face shows a secret-derived status as success or
    /// failure only (see `safesh_server::shape::model_exit_code`).
    pub status_label: Label,
    /// The label of the refusal's text: the words of the command it is about,
    /// which its message and details may quote (`cd "$(cat .env)"`). A face
    /// withholds the text when the model may not see it.
    pub error_label: Label,
    /// Notes about what safesh changed for the caller (a variable not passed to
    /// a program, protected files an external program wrote and safesh
    /// reverted): faces add them to the result's `warnings`.
    pub warnings: Vec<String>,
    /// The refusal that stopped the script, if any.
    pub error: Option<Refusal>,
    /// Wall time.
    pub duration_ms: u64,
}

/// Told the host pid of a sandboxed program's pid 1 as soon as it starts.
pub use safesh_sandbox::StartHook;

/// `details.rule` of the refusal a cancelled request ends with.
pub const CANCELLED_RULE: &str = "cancelled";

/// The refusal a request ends with when it was interrupted from outside (a
/// client's cancellation, a killed job, its session ending): `EXECUTION_ERROR`
/// with `details.rule = "cancelled"` — distinct from `TIMEOUT`, a time limit.
pub fn cancelled_refusal() -> Refusal {
    Refusal::new(
        crate::error::ErrorCode::ExecutionError,
        "the request was cancelled before it finished (partial output kept, programs it started killed)",
    )
    .rule(CANCELLED_RULE)
}

/// Takes over a session's top-level background jobs (`cmd &`), so the request
/// returns without waiting for them (see [`Session::set_background_sink`]).
pub trait BackgroundSink: Send + Sync {
    /// A top-level `command &` is about to start; `stop` stops it (and every
    /// program it started). Returns where its output goes and what to call when it
    /// ends, or a refusal (too many jobs…), which stops the script.
    fn start(&self, command: &str, stop: Interrupter) -> Result<BackgroundHooks, Refusal>;
}

/// What a face gives a background job it takes over.
pub struct BackgroundHooks {
    /// Receives everything the job writes (stdout and stderr) as it is written.
    pub output: std::sync::Arc<dyn crate::io::StreamConsumer>,
    /// Told the host pid of every sandboxed program the job starts.
    pub on_start: Option<StartHook>,
    /// Called once, on the job's thread, when it has ended. Never called if the
    /// job could not start: the face should treat dropping it as the end.
    pub finished: Box<dyn FnOnce(BackgroundEnd) + Send>,
}

/// How a background job ended.
#[derive(Debug, Clone)]
pub struct BackgroundEnd {
    /// Its exit status.
    pub exit_code: i32,
    /// The refusal that stopped it, if any (the cancellation refusal when stopped).
    pub error: Option<Refusal>,
    /// The join of the labels of its output.
    pub label: Label,
    /// The label of the refusal's text (see [`ExecOutcome::error_label`]).
    pub error_label: Label,
}

/// Removes a session's private temp dir once neither the session nor a job it
/// started uses it any more.
#[derive(Debug)]
pub struct TempDirGuard(PathBuf);

impl TempDirGuard {
    /// The directory.
    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDirGuard {
    fn drop(&mut self) {
        // Most sessions leave it empty: one `rmdir`, not a directory walk.
        if std::fs::remove_dir(&self.0).is_err() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A shell session.
pub struct Session {
    shell: Shell,
    on_calling_thread: bool,
    /// The private temp dir, removed when the session and its jobs are gone.
    temp_dir: Option<std::sync::Arc<TempDirGuard>>,
    /// Requests override nudges.
    force: bool,
    /// The following requests' own time limit (replacing the limits').
    request_timeout_ms: Option<u64>,
    /// Set to stop the running request (and every program it started).
    interrupt: std::sync::Arc<std::sync::atomic::AtomicBool>,
    /// The last request ended with `exit` (an interactive face then ends).
    pub(crate) exited: bool,
}

/// Stops a session's running request (or a background job) from another thread:
/// a client's cancellation, a killed job. The request ends with the
/// [`cancelled_refusal`]: partial output kept, programs killed.
#[derive(Clone, Debug)]
pub struct Interrupter(pub(crate) std::sync::Arc<std::sync::atomic::AtomicBool>);

impl Interrupter {
    /// A flag of its own, for a face that runs the request elsewhere (a worker
    /// process) and forwards the interruption itself.
    pub fn detached() -> Interrupter {
        Interrupter(std::sync::Arc::new(std::sync::atomic::AtomicBool::new(
            false,
        )))
    }

    /// Stops the request running now (if any).
    pub fn interrupt(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// True once [`Interrupter::interrupt`] was called (and not yet cleared by
    /// the next request of the session).
    pub fn is_interrupted(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Creates a fresh directory only this user can enter, under the system temp dir.
fn make_private_temp_dir() -> Option<std::path::PathBuf> {
    // Canonical already (resolved once per process), and `mkdir` never follows
    // a symlink in the last component: the new dir's path is canonical too.
    crate::tempdir::make_unique_dir(&crate::tempdir::session_parent())
}

/// Secrets in the environment (`GITHUB_TOKEN`, `*_KEY`…) are labeled by the config's
/// classification: usable where their label allows, never shown to the model.
fn label_environment(shell: &mut crate::interp::Shell, flow: &crate::flow::Flow) {
    let names: Vec<String> = shell
        .vars
        .names()
        .filter(|n| flow.env_label(n).is_some())
        .cloned()
        .collect();
    for name in names {
        if let (Some(extra), Some(v)) = (flow.env_label(&name), shell.vars.get_mut(&name)) {
            v.label = v.label.join(&extra);
        }
    }
}

impl Session {
    /// The session's shell (`context.rs`).
    pub(crate) fn shell(&self) -> &Shell {
        &self.shell
    }

    /// The session's shell, to change (`context.rs`).
    pub(crate) fn shell_mut(&mut self) -> &mut Shell {
        &mut self.shell
    }

    /// Creates a session.
    pub fn new(opts: SessionOptions) -> Self {
        let mut shell = Shell::new(opts.cwd, opts.env, opts.limits);
        shell.arg0 = opts.arg0;
        shell.positional = opts.args;
        if let Some(roots) = opts.write_roots
            && let Some(shared) = std::sync::Arc::get_mut(&mut shell.shared)
        {
            shared.write_roots = Some(roots.iter().map(|r| crate::host::normalize(r)).collect());
        }
        let interrupt = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        shell.interrupt = Some(interrupt.clone());
        let mut session = Session {
            shell,
            on_calling_thread: opts.on_calling_thread,
            temp_dir: None,
            force: false,
            request_timeout_ms: None,
            interrupt,
            exited: false,
        };
        if let Some(policy) = opts.policy {
            session.install_policy(policy);
        }
        session
    }

    /// Gives the session `policy` plus a private temp dir: the only writable place
    /// outside the write roots (TMPDIR points at it; mktemp and `<(…)` use it).
    fn install_policy(&mut self, mut policy: safesh_policy::Policy) {
        let temp = make_private_temp_dir().map(|dir| {
            policy.add_canonical_write_root(&dir);
            std::sync::Arc::new(TempDirGuard(dir))
        });
        self.install(std::sync::Arc::new(policy), temp, None);
    }

    /// Gives the session `policy`, `temp` and its flow state: a successor of
    /// `template`'s flow when given (the template's environment is labeled
    /// already), else new (and the environment is labeled now).
    fn install(
        &mut self,
        policy: std::sync::Arc<safesh_policy::Policy>,
        temp: Option<std::sync::Arc<TempDirGuard>>,
        template: Option<&crate::flow::Flow>,
    ) {
        let shell = &mut self.shell;
        if let Some(t) = &temp {
            let text = t.0.to_string_lossy().into_owned();
            let _ = shell.vars.set("TMPDIR", text, Label::agent());
            if let Some(v) = shell.vars.get_mut("TMPDIR") {
                v.exported = true;
            }
        }
        let flow = match template {
            Some(t) => std::sync::Arc::new(t.successor(policy.config())),
            None => {
                let flow = std::sync::Arc::new(crate::flow::Flow::new(policy.config()));
                label_environment(shell, &flow);
                flow
            }
        };
        if let Some(shared) = std::sync::Arc::get_mut(&mut shell.shared) {
            shared.flow = Some(flow);
            shared.policy = Some(policy);
            shared.temp_dir = temp.as_ref().map(|t| t.0.clone());
            shared.temp_keep = temp.clone();
        }
        self.temp_dir = temp;
    }

    /// Ends the session when the process is about to exit (the CLI after its
    /// script): removes the private temp dir and leaves the rest to the OS.
    /// Freeing a session's variables, policy and flow state one by one is a
    /// measurable part of `safesh -c true`, and nothing else would use it.
    pub fn end_for_exit(self) {
        if let Some(t) = &self.temp_dir
            && std::fs::remove_dir(t.path()).is_err()
        {
            let _ = std::fs::remove_dir_all(t.path());
        }
        std::mem::forget(self);
    }

    /// A template for fresh sessions: this session's options prepared once
    /// (environment imported, policy loaded), copied by [`Session::fresh_from`].
    /// Its own temp dir is not shared with the copies.
    pub fn template(opts: SessionOptions) -> Self {
        let policy = opts.policy.clone();
        let mut t = Session::new(SessionOptions {
            policy: None,
            ..opts
        });
        if let Some(p) = policy {
            let flow = std::sync::Arc::new(crate::flow::Flow::new(p.config()));
            label_environment(&mut t.shell, &flow);
            if let Some(shared) = std::sync::Arc::get_mut(&mut t.shell.shared) {
                shared.flow = Some(flow);
                shared.policy = Some(std::sync::Arc::new(p));
            }
        }
        t
    }

    /// A fresh session copied from `template` (nothing of its requests carries
    /// over): with `reuse`'s policy and emptied temp dir when given (see
    /// [`Session::into_reusable`]), else with a new temp dir of its own.
    pub fn fresh_from(template: &Session, reuse: Option<Reusable>) -> Session {
        let mut shell = template.shell.clone();
        let interrupt = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        shell.interrupt = Some(interrupt.clone());
        shell.jobs = Default::default();
        let base = &template.shell.shared;
        shell.shared = std::sync::Arc::new(base.successor(false, None));
        let mut s = Session {
            shell,
            on_calling_thread: template.on_calling_thread,
            temp_dir: None,
            force: false,
            request_timeout_ms: None,
            interrupt,
            exited: false,
        };
        // The template's environment was labeled under the same config (see
        // [`Session::template`]): its copy keeps those labels.
        let flow = base.flow.as_deref().filter(|_| base.policy.is_some());
        match (reuse, base.policy.as_deref()) {
            (Some(r), _) => s.install(r.policy, Some(r.temp), flow),
            (None, Some(p)) => {
                let mut policy = p.clone();
                let temp = make_private_temp_dir().map(|dir| {
                    policy.add_canonical_write_root(&dir);
                    std::sync::Arc::new(TempDirGuard(dir))
                });
                s.install(std::sync::Arc::new(policy), temp, flow);
            }
            (None, None) => {}
        }
        s
    }

    /// This (finished) session's policy and temp dir, for [`Session::fresh_from`],
    /// when nothing else uses the temp dir and it is empty; else `None` (and the
    /// dir is removed as usual).
    pub fn into_reusable(mut self) -> Option<Reusable> {
        let policy = self.shell.shared.policy.clone()?;
        let temp = self.temp_dir.take()?;
        // The shell's own reference goes with it.
        drop(self);
        let temp = std::sync::Arc::try_unwrap(temp).ok()?;
        // Empty is checked by removing it (`rmdir` fails on anything inside; the
        // guard then removes the rest) and making it again under the same name.
        std::fs::remove_dir(&temp.0).ok()?;
        use std::os::unix::fs::DirBuilderExt;
        if std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&temp.0)
            .is_err()
        {
            // Someone else took the name meanwhile: theirs, never removed by us.
            std::mem::forget(temp);
            return None;
        }
        Some(Reusable {
            policy,
            temp: std::sync::Arc::new(temp),
        })
    }

    /// Names the owner directory of spill files and job logs the following
    /// requests may read ([`safesh_policy::Policy::set_state_scope`]); false
    /// when the policy cannot be changed now (then none is readable).
    pub fn set_state_scope(&mut self, scope: Option<String>) -> bool {
        let Some(shared) = std::sync::Arc::get_mut(&mut self.shell.shared) else {
            return false;
        };
        let Some(policy) = shared.policy.as_mut() else {
            return false;
        };
        std::sync::Arc::make_mut(policy).set_state_scope(scope);
        true
    }

    /// Sets the hook told the host pid of every sandboxed program the following
    /// requests start (a face's job reports it as the job's pid).
    pub fn set_on_start(&mut self, hook: Option<StartHook>) {
        self.shell.on_start = hook;
    }

    /// Hands the following requests' top-level background jobs (`cmd &`) to
    /// `sink` instead of waiting for them at the script's end (`None`: wait, as
    /// the CLI does). `$!` and `wait` inside the same script keep working.
    pub fn set_background_sink(&mut self, sink: Option<std::sync::Arc<dyn BackgroundSink>>) {
        self.shell.background = sink;
    }

    /// Gives the following requests (and the jobs they start) a channel to the
    /// human: a command that needs an approval asks there and waits for the
    /// answer instead of being refused. Only for channels the model cannot drive
    /// (safesh's own terminal, MCP elicitation shown by the client).
    pub fn set_approval_channel(
        &mut self,
        channel: Option<std::sync::Arc<dyn crate::approval::ApprovalChannel>>,
    ) {
        self.shell.approver = channel;
    }

    /// Narrows the following requests to what `gate` lets through (a running
    /// spec's `allowed_commands`): every command dispatched is checked before
    /// the policy decides it; `None` lifts it. It can only refuse, never allow.
    pub fn set_command_gate(&mut self, gate: Option<std::sync::Arc<dyn crate::CommandGate>>) {
        self.shell.gate = gate;
    }

    /// Sets the following requests' time limit in ms (`None`: the limits'
    /// `script_timeout_ms`; `Some(0)`: none). Past it a request ends with
    /// `TIMEOUT` (`details.rule = "timeout_ms"`).
    pub fn set_script_timeout_ms(&mut self, ms: Option<u64>) {
        self.request_timeout_ms = ms;
    }

    /// The following requests' own time limit (see [`Session::set_script_timeout_ms`]).
    pub(crate) fn request_timeout(&self) -> Option<u64> {
        self.request_timeout_ms
    }

    /// A handle that stops this session's running request from another thread.
    pub fn interrupter(&self) -> Interrupter {
        Interrupter(self.interrupt.clone())
    }

    /// The session's private temp dir (removed with the session), if it has one.
    pub fn temp_dir(&self) -> Option<&std::path::Path> {
        self.temp_dir.as_deref().map(TempDirGuard::path)
    }

    /// Sets the working directory for the following requests.
    pub fn set_cwd(&mut self, cwd: std::path::PathBuf) {
        let text = safesh_utils::word_bytes::word_from_path(&cwd).into_owned();
        self.shell.cwd = cwd;
        let _ = self.shell.vars.set("PWD", text, Label::agent());
    }

    /// Sets (exports) an environment variable for the following requests.
    pub fn set_env(&mut self, name: &str, value: &str) {
        let _ = self
            .shell
            .vars
            .set(name, value.to_string(), Label::user_input());
        if let Some(v) = self.shell.vars.get_mut(name) {
            v.exported = true;
        }
    }

    /// Says whether the scripts this session runs came as one string (`-c`,
    /// MCP, JSON-RPC: the default) or were read from a file or stdin, where
    /// bash goes on after errors it exits on under `-c`.
    pub fn set_script_is_string(&mut self, is_string: bool) {
        self.shell.script_is_string = is_string;
    }

    /// Sets `force` for the following requests: nudges are overridden (nothing else).
    pub fn set_force(&mut self, force: bool) {
        self.force = force;
        self.apply_force();
    }

    fn apply_force(&mut self) {
        if let Some(shared) = std::sync::Arc::get_mut(&mut self.shell.shared) {
            shared.force = self.force;
        }
    }

    /// A checkpoint operation on this session's write roots, as the `checkpoint`
    /// builtin runs it (its words are the agent's: a face's arguments).
    pub fn checkpoint(
        &mut self,
        op: &crate::checkpoints::CheckpointOp,
    ) -> Result<serde_json::Value, crate::checkpoints::CheckpointFailure> {
        self.shell.reset_request(self.request_timeout_ms);
        self.shell.checkpoint_op(op, &Label::agent())
    }

    /// The policy's pre-run verdicts on `script` without running anything
    /// (`safesh check`). A parse error is returned as the refusal it would be.
    pub fn check(&self, script: &str) -> Result<Vec<crate::precheck::Checked>, Refusal> {
        let parsed = self.shell.parse_budgeted(script)?;
        Ok(self.shell.check_program(&parsed.program, false))
    }

    /// The risk of `script` under the session's policy, from the same pre-run
    /// pass as [`Self::check`] (nothing runs). `Err`: it does not parse.
    pub fn assess(&self, script: &str) -> Result<crate::risk::ScriptRisk, Refusal> {
        let parsed = self.shell.parse_budgeted(script)?;
        let (checked, writes) = self.shell.check_program_with_writes(&parsed.program, false);
        Ok(crate::risk::script_risk(checked, writes, &self.shell.cwd))
    }

    /// The session's policy, if it has one.
    pub fn policy(&self) -> Option<&safesh_policy::Policy> {
        self.shell.shared.policy.as_deref()
    }

    /// The session's working directory.
    pub fn cwd(&self) -> &std::path::Path {
        &self.shell.cwd
    }

    /// Parses and runs `script`. A parse error or unsupported construct runs nothing.
    pub fn exec(&mut self, script: &str, input: InputSource, target: OutputTarget) -> ExecOutcome {
        let started = Instant::now();
        let limit = self.shell.shared.limits.output_bytes;
        let budget = (limit > 0).then(|| crate::io::OutputBudget::new(limit));
        let make = |kind: SinkKind| match &budget {
            Some(b) => Sink::with_budget(kind, b.clone()),
            None => Sink::new(kind),
        };
        let (out, err) = match &target {
            OutputTarget::Inherit => (make(SinkKind::Stdout), make(SinkKind::Stderr)),
            OutputTarget::Separate { cap } => (
                make(SinkKind::Capture(
                    std::sync::Mutex::new(Default::default()),
                    *cap,
                )),
                make(SinkKind::Capture(
                    std::sync::Mutex::new(Default::default()),
                    *cap,
                )),
            ),
            OutputTarget::Merged { cap } => {
                let s = make(SinkKind::Capture(
                    std::sync::Mutex::new(Default::default()),
                    *cap,
                ));
                (s.clone(), s)
            }
            OutputTarget::Stream(c) => (
                {
                    // Model-facing output is a sink for known secret values.
                    if let Some(k) = self.shell.known_source() {
                        c.set_known(k);
                    }
                    make(SinkKind::Stream(c.clone(), crate::io::StreamKind::Stdout))
                },
                make(SinkKind::Stream(c.clone(), crate::io::StreamKind::Stderr)),
            ),
        };
        let merged = matches!(target, OutputTarget::Merged { .. });
        // The request's deadline and cancellation start before parsing: every
        // phase (parse, check, pre-run pass, run) is inside them.
        self.interrupt
            .store(false, std::sync::atomic::Ordering::SeqCst);
        self.exited = false;
        self.shell.reset_request(self.request_timeout_ms);
        self.apply_force();
        let script = match self.shell.parse_budgeted(script) {
            Ok(s) => s,
            Err(r) => {
                let text = format!("safesh: {}: {}\n", r.code, r.message);
                // bash stops at a `[[ … ]]` it cannot parse with `$?` as it was.
                let status = (r.details.rule.as_deref()
                    == Some(safesh_policy::verdict::CONDITIONAL_SYNTAX))
                .then_some(self.shell.last_status);
                return refused_up_front(&out, &err, merged, r, &text, started, status);
            }
        };
        if let Err(r) = self.shell.precheck(&script.program) {
            let text = refusal_text(&r);
            return refused_up_front(&out, &err, merged, r, &text, started, None);
        }
        self.shell.fds.insert(1, Fd::Out(out.clone()));
        self.shell.fds.insert(2, Fd::Out(err.clone()));
        let stdin = match input {
            InputSource::Inherit => {
                Source::process_stdin(Label::user_input(), self.shell.cancel.clone())
            }
            InputSource::Bytes(b) => Source::bytes(b, Label::user_input()),
            InputSource::Labeled(b, label) => Source::bytes(b, label),
            InputSource::Empty => Source::empty(),
        };
        self.shell.fds.insert(0, Fd::In(stdin));
        *crate::io::lock(&self.shell.shared.output_budget) = budget.clone();
        let shell = &mut self.shell;
        let program = script.program.clone();
        let on_calling_thread = self.on_calling_thread;
        let exited = &mut self.exited;
        let result = if on_calling_thread {
            run_top(shell, &program, exited)
        } else {
            std::thread::scope(|s| {
                let h = std::thread::Builder::new()
                    .stack_size(crate::interp::SHELL_STACK)
                    .spawn_scoped(s, move || run_top(shell, &program, exited));
                match h {
                    Ok(h) => h.join().unwrap_or_else(|_| {
                        Some(Refusal::new(
                            crate::error::ErrorCode::ExecutionError,
                            "internal error: the interpreter panicked",
                        ))
                    }),
                    Err(e) => Some(Refusal::new(
                        crate::error::ErrorCode::ExecutionError,
                        format!("cannot start the interpreter: {e}"),
                    )),
                }
            })
        };
        let status = self.shell.last_status;
        if let Some(r) = &result {
            let text = refusal_text(r);
            let _ = err.write_unmetered(text.as_bytes(), &self.shell.message_label());
        }
        let code = result.as_ref().map(|r| r.status()).unwrap_or(status);
        // Detach this request's sinks so captured data is not held by the session.
        self.shell
            .fds
            .insert(1, Fd::Out(Sink::new(SinkKind::Stdout)));
        self.shell
            .fds
            .insert(2, Fd::Out(Sink::new(SinkKind::Stderr)));
        self.shell.fds.insert(0, Fd::In(Source::empty()));
        let status_label = if result.is_some() {
            Label::empty()
        } else {
            self.shell.status_label.join(&self.shell.pc)
        };
        let error_label = if result.is_some() {
            self.shell.message_label()
        } else {
            Label::empty()
        };
        let mut o = finish(&out, &err, merged, (code, status_label), result, started);
        o.error_label = error_label;
        o.warnings = std::mem::take(&mut *crate::io::lock(&self.shell.shared.warnings));
        o
    }
}

/// Runs a program at top level: exit, traps, background jobs, refusals.
fn run_top(
    shell: &mut Shell,
    program: &safesh_syntax::ast::Program,
    exited: &mut bool,
) -> Option<Refusal> {
    let r = shell.run_program_top(program);
    *exited = matches!(r, Err(Stop::Exit));
    let mut refusal = match r {
        Err(Stop::Refused(r)) => Some(*r),
        _ => None,
    };
    if refusal.is_none()
        && let Err(r) = shell.run_exit_trap()
    {
        refusal = Some(r);
    }
    shell.forget_detached();
    shell.wait_all_keep_status();
    if refusal.is_none() {
        refusal = crate::io::lock(&shell.shared.refusal).take();
    }
    if refusal.is_none() {
        // The last command may have spent the output budget with nothing after it.
        if let Some(b) = crate::io::lock(&shell.shared.output_budget).as_ref()
            && b.exceeded()
        {
            refusal = Some(Refusal::limit("output in bytes", b.limit(), "output_bytes"));
        }
    }
    refusal
}

/// A refusal as the CLI prints it: `safesh: CODE: message` and the suggestion.
pub fn refusal_text(r: &Refusal) -> String {
    let r = &shown_refusal(r.clone());
    match &r.suggestion {
        Some(s) => format!("safesh: {}: {}\nsuggestion: {s}\n", r.code, r.message),
        None => format!("safesh: {}: {}\n", r.code, r.message),
    }
}

/// A refusal as a reader sees it: a word's escaped bytes (a file name that is
/// not UTF-8) spelled `\xNN` in the message, suggestion and details, not as the private
/// code points that hold them (safesh_utils::word_bytes).
fn shown_refusal(mut r: Refusal) -> Refusal {
    use safesh_utils::word_bytes::shown;
    if let std::borrow::Cow::Owned(m) = shown(&r.message) {
        r.message = m;
    }
    for field in [
        &mut r.suggestion,
        &mut r.details.path,
        &mut r.details.command,
        &mut r.details.flag,
    ] {
        if let Some(std::borrow::Cow::Owned(s)) = field.as_deref().map(shown) {
            *field = Some(s);
        }
    }
    r
}

/// The outcome of a script refused before anything ran (its text is the agent's):
/// `text` on stderr, the refusal's status.
fn refused_up_front(
    out: &crate::io::Output,
    err: &crate::io::Output,
    merged: bool,
    r: Refusal,
    text: &str,
    started: Instant,
    status: Option<i32>,
) -> ExecOutcome {
    let _ = err.write_chunk(text.as_bytes(), &Label::agent());
    finish(
        out,
        err,
        merged,
        (status.unwrap_or(r.status()), Label::empty()),
        Some(r),
        started,
    )
}

fn finish(
    out: &crate::io::Output,
    err: &crate::io::Output,
    merged: bool,
    (exit_code, status_label): (i32, Label),
    error: Option<Refusal>,
    started: Instant,
) -> ExecOutcome {
    let o = out.take_captured();
    let (e, label) = if merged {
        (Default::default(), o.label.clone())
    } else {
        let e = err.take_captured();
        let l = o.label.join(&e.label).join(&out.label()).join(&err.label());
        (e, l)
    };
    let label = if merged {
        label.join(&out.label())
    } else {
        label
    };
    ExecOutcome {
        exit_code,
        truncated: o.overflowed || e.overflowed,
        stdout: o.data,
        stderr: e.data,
        stdout_total: o.total,
        stderr_total: e.total,
        label,
        status_label,
        error_label: Label::empty(),
        warnings: Vec::new(),
        error: error.map(shown_refusal),
        duration_ms: started.elapsed().as_millis() as u64,
    }
}
