//! One exec request in a session: input, output mode, per-request timeout,
//! `force`, shaping, and agsh's intent + verify assertions.

use crate::error::ServerError;
use crate::settings::Settings;
use crate::shape::{Capture, OutputMode, ShapeConfig};
use safesh_core::session::CANCELLED_RULE;
use safesh_core::{ErrorCode, InputSource, Interrupter, OutputTarget, Session};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

/// The parameters of `exec`/`run` (MCP) and `execute` (JSON-RPC). Serialized
/// only to hand a request to a worker process (`worker.rs`).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
pub struct ExecParams {
    /// A bash script.
    #[serde(default)]
    pub script: Option<String>,
    /// A program name (`run`, `execute`): run from argv, no parsing.
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments: an argv list, or for a platform command a JSON object
    /// of named arguments.
    #[serde(default)]
    pub args: Option<ExecArgs>,
    /// The session to run in (none: a fresh session).
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
    /// Per-request timeout, bounded by the config's maximum.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// Bytes for stdin.
    #[serde(default)]
    pub input: Option<String>,
    /// Which output to return.
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    /// Override nudges (nothing else).
    #[serde(default)]
    pub force: Option<bool>,
    /// agsh's declared goal of the step, echoed back.
    #[serde(default)]
    pub intent: Option<Value>,
    /// Assertions checked after the run against the redacted result
    /// (`{type, target, expected, message}`, see [`safesh_verify`]).
    #[serde(default)]
    pub verify: Option<Vec<safesh_verify::Assertion>>,
    /// Tags echoed in the result's envelope (`meta.tags`).
    #[serde(default)]
    pub tags: Option<std::collections::BTreeMap<String, String>>,
    /// Globs of the only commands this request may dispatch (a running spec's
    /// `allowed_commands`): checked at every dispatch before the policy; it
    /// only narrows, never widens (`project_face.rs`).
    #[serde(default)]
    pub allowed_commands: Option<Vec<String>>,
    /// Stdin handed over by the server with its label (a pipeline step's: the
    /// previous step's raw stdout). Set by the server, never from the client's
    /// JSON; crosses to a worker beside the params (`worker.rs`). `input` wins.
    #[serde(skip)]
    pub piped: Option<crate::piped::Piped>,
    /// Keep the raw stdout, up to this many bytes, for the next pipeline step
    /// (returned under [`crate::piped::RESULT_KEY`]). Set by the server only.
    #[serde(skip)]
    pub pipe_stdout: Option<usize>,
    /// The connection that sent it, set by the face (never from the client's
    /// JSON): what it may use and own (see [`crate::owner`]).
    #[serde(skip)]
    pub conn: String,
    /// The face the request came through, for its history entry (set by the
    /// face, never by the client; `None`: JSON-RPC).
    #[serde(skip)]
    pub face: Option<&'static str>,
}

/// `execute`'s `args`: an argv array, or a JSON object of named arguments,
/// accepted only for platform commands (`github:pr:list`; agsh's shape).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(untagged)]
pub enum ExecArgs {
    /// Arguments passed exactly as given.
    List(Vec<String>),
    /// Named arguments of a platform command (`{"repo": "o/r"}`).
    Object(serde_json::Map<String, Value>),
}

impl ExecArgs {
    /// No arguments at all.
    pub fn is_empty(&self) -> bool {
        match self {
            ExecArgs::List(l) => l.is_empty(),
            ExecArgs::Object(o) => o.is_empty(),
        }
    }

    /// The words for `command`: the list, or the object turned into words
    /// (platform commands only; anything else is a bad request).
    pub fn words(&self, command: &str) -> Result<Vec<String>, ServerError> {
        match self {
            ExecArgs::List(l) => Ok(l.clone()),
            ExecArgs::Object(o) => crate::commands::object_args(command, o),
        }
    }
}

impl From<Vec<String>> for ExecArgs {
    fn from(v: Vec<String>) -> Self {
        ExecArgs::List(v)
    }
}

/// Quotes an argv so the interpreter sees exactly these words as one simple command.
pub fn quote_argv(argv: &[String]) -> String {
    argv.iter()
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ")
}

impl ExecParams {
    /// The script to run: `script`, or `command` + `args` quoted as one command.
    pub fn script_text(&self) -> Result<String, ServerError> {
        match (&self.script, &self.command) {
            (Some(_), Some(_)) => Err(ServerError::BadParams(
                "give either `script` or `command` (+ `args`), not both".into(),
            )),
            (Some(s), None) => {
                if self.args.as_ref().is_some_and(|a| !a.is_empty()) {
                    return Err(ServerError::BadParams(
                        "`args` goes with `command`, not with `script`".into(),
                    ));
                }
                Ok(s.clone())
            }
            (None, Some(c)) => {
                if c.is_empty() {
                    return Err(ServerError::BadParams("`command` is empty".into()));
                }
                let mut argv = vec![c.clone()];
                if let Some(a) = &self.args {
                    argv.extend(a.words(c)?);
                }
                Ok(quote_argv(&argv))
            }
            (None, None) => Err(ServerError::BadParams(
                "missing `script` (a bash script) or `command` (a program, with `args`)".into(),
            )),
        }
    }
}

/// Runs `script` in `session` and returns the shaped result object.
/// `on_start` receives the session's interrupter before the script starts (to
/// stop it on a client's cancellation).
pub fn run(
    session: &mut Session,
    script: &str,
    p: &ExecParams,
    settings: &Settings,
    on_start: &dyn Fn(Interrupter),
) -> Value {
    let started = std::time::SystemTime::now();
    let capture = match p.pipe_stdout {
        Some(limit) => Arc::new(capture_of(p, settings).with_tap(limit)),
        None => capture(p, settings),
    };
    session.set_force(p.force.unwrap_or(false));
    session.set_command_gate(crate::project_face::gate_of(p.allowed_commands.as_deref()));
    let input = match (&p.input, &p.piped) {
        (Some(s), _) => InputSource::Bytes(s.clone().into_bytes()),
        (None, Some(piped)) => InputSource::Labeled(piped.bytes.clone(), piped.label.clone()),
        (None, None) => InputSource::Empty,
    };
    on_start(session.interrupter());
    // The core stops the request at its deadline with TIMEOUT (rule `timeout_ms`);
    // without one, the config's script limit applies.
    session.set_script_timeout_ms(p.timeout_ms.map(|t| settings.clamp_timeout(t)));
    crate::context_face::begin(session, p);
    let outcome = session.exec(script, input, OutputTarget::Stream(capture.clone()));
    let mut v = capture.result(&outcome);
    if let Some(e) = &outcome.error {
        // Say plainly whether a time limit or the client stopped it.
        let stopped = match e.code {
            ErrorCode::Timeout => Some("timeout"),
            _ if e.details.rule.as_deref() == Some(CANCELLED_RULE) => Some("cancelled"),
            _ => None,
        };
        if let Some(why) = stopped {
            v["stopped"] = json!(why);
            v["error"]["details"]["reason"] = json!(why);
            if why == "timeout" && e.details.rule.as_deref() == Some("timeout_ms") {
                v["error"]["suggestion"] = json!(format!(
                    "raise timeout_ms (at most {} ms), or run it as a background job (job_start) and poll job_output",
                    settings.max_timeout_ms
                ));
            }
        }
    }
    if let Some(intent) = &p.intent {
        v["intent"] = intent.clone();
    }
    crate::envelope::attach(&mut v, p, script, started, &capture.facts());
    // Verified on the envelope the model sees (its payload too), before the
    // history entry (which records it) ends the request's step scope.
    let verification = crate::verify_face::apply(&mut v, p, session, settings, &outcome.label);
    crate::context_face::record_verified(
        session,
        script,
        p,
        &outcome,
        verification
            .as_ref()
            .map(crate::verify_face::history_summary),
    );
    if let Some(piped) = capture.take_tap() {
        v[crate::piped::RESULT_KEY] = serde_json::to_value(piped).unwrap_or(Value::Null);
    }
    v
}

/// Where a request's output goes: shaped as `p` asks, under `settings`.
pub fn capture(p: &ExecParams, settings: &Settings) -> Arc<Capture> {
    Arc::new(capture_of(p, settings))
}

/// The capture of [`capture`], not yet shared (a pipeline step adds its tap).
fn capture_of(p: &ExecParams, settings: &Settings) -> Capture {
    Capture::new(
        p.output_mode.unwrap_or_default(),
        ShapeConfig {
            cap: settings.cap,
            // The scope's own directory (crate::owner): not another's to read.
            spill_dir: crate::owner::scoped(
                &settings.spill_dir(),
                &crate::owner::scope(&p.conn, p.session.as_deref()),
            ),
            retention: settings.spill_retention,
        },
    )
    .with_spill_limits(crate::spill::SpillLimits::of(settings))
    .with_shared_redaction(settings.redaction())
}
