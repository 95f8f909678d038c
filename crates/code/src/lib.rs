//! Code mode: agents run TypeScript/JavaScript in an embedded engine (QuickJS,
//! through `rquickjs`), with safesh's stdlib, under the same walls and labels as
//! bash.
//!
//! ```text
//! source ─ strip types (TS; positions kept) ─ QuickJS module ─┐
//!   stdlib (safesh:fs, safesh:text, safesh:shell, …, fetch, console)
//!     └─ one host function ─ HostState ─ Session::code_exec ─ the interpreter
//!          (a bash command per call: cat, >, cp, mv, rm, curl, the program…)
//! ```
//!
//! The engine has no authority of its own: every file, program, network and
//! output access is a host call, run through the session as the bash command of
//! the same meaning (`safesh_core::code_host`). Labels are tracked coarsely but
//! soundly (see `host.rs`): what the script read joins everything it writes,
//! sends, prints or runs as code; its string literals are the agent's words.

mod engine;
mod host;
mod literals;
mod strip;

pub use literals::Literals;

use safesh_core::error::{ErrorCode, Refusal};
use safesh_core::{ExecOutcome, OutputTarget, Session};
use safesh_label::Label;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// The language of a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Language {
    /// TypeScript: types are stripped before the run (a type error is not an error).
    #[default]
    TypeScript,
    /// JavaScript, run as it is.
    JavaScript,
}

impl Language {
    /// `typescript`/`ts` or `javascript`/`js`.
    pub fn parse(name: &str) -> Option<Language> {
        match name.to_ascii_lowercase().as_str() {
            "typescript" | "ts" => Some(Language::TypeScript),
            "javascript" | "js" => Some(Language::JavaScript),
            _ => None,
        }
    }

    /// The language a file name says (`.js`, `.mjs`: JavaScript; else TypeScript).
    pub fn of_file(name: &str) -> Language {
        if name.ends_with(".js") || name.ends_with(".mjs") || name.ends_with(".cjs") {
            Language::JavaScript
        } else {
            Language::TypeScript
        }
    }
}

/// One code request.
#[derive(Debug, Clone, Default)]
pub struct CodeRequest {
    /// The source text.
    pub source: String,
    /// Its language.
    pub language: Language,
    /// The module name stack traces and errors use (`main.ts`, a file name).
    pub name: String,
    /// The time limit in ms (`None`: `[limits] script_timeout_ms`, else 120 s; `Some(0)`: none).
    pub timeout_ms: Option<u64>,
    /// The request's input (`$session.input`).
    pub input: Option<String>,
    /// `$session.vars` as JSON text (`None`: `{}`) and its label.
    pub vars: Option<(String, Label)>,
}

/// What a run gives back: the session (to keep), the outcome (as `exec`'s),
/// and `$session.vars` to keep.
pub struct CodeRun {
    /// The session the host commands ran in.
    pub session: Session,
    /// The result, shaped like an exec's.
    pub outcome: ExecOutcome,
    /// `$session.vars` after the run (JSON text) and its label.
    pub vars: (String, Label),
    /// The session could not be given back (the engine panicked): `session`
    /// is a policy-less stand-in that faces must drop, never keep.
    pub session_lost: bool,
}

/// Default memory limit when the config sets no `[limits] memory_mb`.
const DEFAULT_MEMORY_MB: u64 = 512;
/// The engine's stack limit (deep recursion → `LIMIT_EXCEEDED`).
const STACK_BYTES: usize = 8 * 1024 * 1024;
/// The engine thread's stack: room for the limit plus the host commands run
/// on the same thread.
const THREAD_STACK: usize = 96 * 1024 * 1024;
/// Default time limit (ms) when the config has none.
const DEFAULT_TIMEOUT_MS: u64 = 120_000;

/// Runs `req` in `session`; printed output goes to `target` (as `exec`'s).
pub fn run(session: Session, req: CodeRequest, target: OutputTarget) -> CodeRun {
    let started = Instant::now();
    let config_limits = session.policy().map(|p| p.config().limits.clone());
    let memory_mb = config_limits
        .as_ref()
        .and_then(|l| l.memory_mb)
        .unwrap_or(DEFAULT_MEMORY_MB);
    let timeout_ms = req.timeout_ms.unwrap_or_else(|| {
        config_limits
            .as_ref()
            .and_then(|l| l.script_timeout_ms)
            .unwrap_or(DEFAULT_TIMEOUT_MS)
    });
    let string_bytes = config_limits
        .as_ref()
        .and_then(|l| l.string_bytes)
        .unwrap_or(64 * 1024 * 1024);
    let deadline = (timeout_ms > 0).then(|| started + Duration::from_millis(timeout_ms));
    let vars = req
        .vars
        .clone()
        .unwrap_or_else(|| ("{}".into(), Label::agent()));
    let name = if req.name.is_empty() {
        match req.language {
            Language::TypeScript => "main.ts".to_string(),
            Language::JavaScript => "main.js".to_string(),
        }
    } else {
        req.name.clone()
    };
    let js = match req.language {
        Language::TypeScript => strip::strip_types(&req.source),
        Language::JavaScript => Ok(req.source.clone()),
    };
    let js = match js {
        Ok(js) => js,
        Err(r) => return refused(session, target, r, vars, started),
    };
    let limits = engine::EngineLimits {
        memory_bytes: (memory_mb.saturating_mul(1024 * 1024)).min(usize::MAX as u64) as usize,
        stack_bytes: STACK_BYTES,
        deadline,
        cancelled: session.interrupter(),
    };
    let state = HostStateInit {
        session,
        literals: Literals::scan(&js),
        target,
        deadline,
        vars,
        capture_cap: string_bytes,
    };
    let worker = std::thread::Builder::new()
        .name("safesh-code".into())
        .stack_size(THREAD_STACK)
        .spawn(move || {
            run_on_this_thread(state, &name, &js, req.input.as_deref(), &limits, started)
        });
    match worker {
        Ok(h) => match h.join() {
            Ok(run) => run,
            // The session went with the thread: nothing to give back but a fresh one.
            Err(_) => lost_session("internal error: the code engine panicked", started),
        },
        Err(e) => lost_session(&format!("cannot start the code engine: {e}"), started),
    }
}

struct HostStateInit {
    session: Session,
    literals: Literals,
    target: OutputTarget,
    deadline: Option<Instant>,
    vars: (String, Label),
    capture_cap: u64,
}

fn run_on_this_thread(
    init: HostStateInit,
    name: &str,
    js: &str,
    input: Option<&str>,
    limits: &engine::EngineLimits,
    started: Instant,
) -> CodeRun {
    let state = Rc::new(RefCell::new(host::HostState {
        session: init.session,
        acc: Label::agent(),
        literals: init.literals,
        target: init.target,
        printed: Default::default(),
        pending: Vec::new(),
        pending_bytes: 0,
        deadline: init.deadline,
        fatal: None,
        warnings: Vec::new(),
        vars: init.vars,
        vars_read: false,
        capture_cap: init.capture_cap,
        readers: Default::default(),
    }));
    // The input is the user's (stdin): reading it is reading user input.
    if input.is_some() {
        state.borrow_mut().acc.join_assign(&Label::user_input());
    }
    let ending = engine::run(state.clone(), name, js, input, limits);
    let mut st = match Rc::try_unwrap(state) {
        Ok(cell) => cell.into_inner(),
        Err(_) => return lost_session("internal error: the code engine kept its host", started),
    };
    // Whatever printed before the end is written first.
    let _ = st.flush();
    let (exit_code, error) = match ending {
        engine::Ending::Done => (0, None),
        engine::Ending::Parse(r) => {
            let text = safesh_core::session::refusal_text(&r);
            let _ = print_now(&mut st, &text, Label::agent());
            (r.status(), Some(r))
        }
        engine::Ending::Stopped(r) => {
            let text = safesh_core::session::refusal_text(&r);
            let _ = print_now(&mut st, &text, Label::agent());
            (r.status(), Some(r))
        }
        engine::Ending::Uncaught { text, refusal } => {
            let label = Label::agent().join(&st.acc);
            // A refusal ends with its code and suggestion, as bash's does.
            let text = match &refusal {
                Some(r) => format!("{text}{}", safesh_core::session::refusal_text(r)),
                None => text,
            };
            let _ = print_now(&mut st, &text, label);
            match refusal {
                Some(r) => (r.status(), Some(r)),
                None => (1, None),
            }
        }
    };
    let (exit_code, error) = match st.fatal.take() {
        Some(r) => (r.status(), Some(r)),
        None => (exit_code, error),
    };
    let p = std::mem::take(&mut st.printed);
    let outcome = ExecOutcome {
        exit_code,
        stdout: p.stdout,
        stderr: p.stderr,
        stdout_total: p.stdout_total,
        stderr_total: p.stderr_total,
        truncated: p.truncated,
        label: p.label,
        // The status says whether the code threw: it depends on all it read.
        status_label: Label::agent().join(&st.acc),
        error_label: if error.is_some() {
            Label::agent().join(&st.acc)
        } else {
            Label::empty()
        },
        warnings: std::mem::take(&mut st.warnings),
        error,
        duration_ms: started.elapsed().as_millis() as u64,
    };
    CodeRun {
        session: st.session,
        outcome,
        vars: st.vars,
        session_lost: false,
    }
}

/// Prints a final message on stderr with `label`.
fn print_now(st: &mut host::HostState, text: &str, label: Label) -> Result<(), Refusal> {
    st.pending.push((true, text.to_string(), label));
    st.flush()
}

/// The outcome of a request refused before the engine ran (a parse error).
fn refused(
    session: Session,
    target: OutputTarget,
    r: Refusal,
    vars: (String, Label),
    started: Instant,
) -> CodeRun {
    let mut st = host::HostState {
        session,
        acc: Label::agent(),
        literals: Literals::default(),
        target,
        printed: Default::default(),
        pending: Vec::new(),
        pending_bytes: 0,
        deadline: None,
        fatal: None,
        warnings: Vec::new(),
        vars,
        vars_read: false,
        capture_cap: 1 << 20,
        readers: Default::default(),
    };
    let text = safesh_core::session::refusal_text(&r);
    let _ = print_now(&mut st, &text, Label::agent());
    let p = std::mem::take(&mut st.printed);
    CodeRun {
        outcome: ExecOutcome {
            exit_code: r.status(),
            stdout: p.stdout,
            stderr: p.stderr,
            stdout_total: p.stdout_total,
            stderr_total: p.stderr_total,
            truncated: p.truncated,
            label: p.label,
            status_label: Label::empty(),
            error_label: Label::agent(),
            warnings: Vec::new(),
            error: Some(r),
            duration_ms: started.elapsed().as_millis() as u64,
        },
        session: st.session,
        vars: st.vars,
        session_lost: false,
    }
}

/// When the session could not be given back (a panic): a library session with
/// no policy, and the failure as the outcome. Faces drop such a session.
fn lost_session(msg: &str, started: Instant) -> CodeRun {
    let r = Refusal::new(ErrorCode::ExecutionError, msg);
    CodeRun {
        session: Session::new(safesh_core::SessionOptions {
            env: Vec::new(),
            ..Default::default()
        }),
        outcome: ExecOutcome {
            exit_code: r.status(),
            stdout: Vec::new(),
            stderr: format!("safesh: {msg}\n").into_bytes(),
            stdout_total: 0,
            stderr_total: 0,
            truncated: false,
            label: Label::agent(),
            status_label: Label::empty(),
            error_label: Label::agent(),
            warnings: Vec::new(),
            error: Some(r),
            duration_ms: started.elapsed().as_millis() as u64,
        },
        vars: ("{}".into(), Label::agent()),
        session_lost: true,
    }
}

/// `PARSE_ERROR` at `line:column` of the user's source.
pub(crate) fn parse_error(message: &str, at: Option<(usize, usize)>) -> Refusal {
    parse_error_in(message, None, at)
}

/// `PARSE_ERROR` at `line:column` of `file` (a module the source imports;
/// `None`: the source itself).
pub(crate) fn parse_error_in(
    message: &str,
    file: Option<&str>,
    at: Option<(usize, usize)>,
) -> Refusal {
    let place = match (file, at) {
        (Some(f), Some((l, c))) => Some(format!("in {f}, line {l}, column {c}")),
        (None, Some((l, c))) => Some(format!("line {l}, column {c}")),
        (Some(f), None) => Some(format!("in {f}")),
        (None, None) => None,
    };
    let mut r = Refusal::new(
        ErrorCode::ParseError,
        match &place {
            Some(p) => format!("{message} ({p})"),
            None => message.to_string(),
        },
    )
    .suggest("fix the syntax; nothing was run");
    r.details.location = place.map(|p| p.trim_start_matches("in ").to_string());
    r
}
