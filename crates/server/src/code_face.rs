//! The code face (issue 20): JSON-RPC `code` and the MCP tool `code`
//! `{source, language, session, timeout_ms, input, output_mode}` run
//! TypeScript/JavaScript through `safesh_code` in a session (a named one, or a
//! fresh one), and return the same result object as `exec` (shaped by
//! `shape.rs`: cap, spill, labels, redaction). `$session.vars` is the session's
//! `session` context scope, key [`VARS_KEY`], with its label.

use crate::error::ServerError;
use crate::exec::ExecParams;
use crate::service::Server;
use crate::settings::Settings;
use crate::shape::{OutputMode, lock};
use safesh_context::{NewValue, Scope};
use safesh_core::Session;
use safesh_core::context as cx;
use safesh_label::Label;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::Arc;

/// The context key `$session.vars` is kept under (scope `session`).
pub const VARS_KEY: &str = "code.vars";

/// The parameters of `code`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CodeParams {
    /// The source text.
    pub source: String,
    /// `typescript` (default) or `javascript`.
    #[serde(default)]
    pub language: Option<String>,
    /// The session to run in (none: a fresh session).
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
    /// Per-request timeout, bounded by the config's maximum.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// `$session.input`.
    #[serde(default)]
    pub input: Option<String>,
    /// Which output to return.
    #[serde(default)]
    pub output_mode: Option<OutputMode>,
    /// Override nudges (nothing else).
    #[serde(default)]
    pub force: Option<bool>,
    /// The connection that sent it (set by the face).
    #[serde(skip)]
    pub conn: String,
}

impl Server {
    /// Runs one `code` request; the result object of `exec`.
    ///
    /// Where `exec` would run: in the session's worker process when its
    /// interpreter lives there (the `code` frame, `worker_session.rs`), in a
    /// worker of its own when sessionless (so an engine abort or an allocation
    /// past `[limits] memory_mb` costs that request, never the server), and in
    /// this process only when the server has no worker processes at all (a
    /// worker that cannot start fails the request).
    pub fn code(&self, p: CodeParams, face: &'static str) -> Result<Value, ServerError> {
        language_of(&p)?;
        let mut v = match &p.session {
            Some(id) => {
                let entry = self.sessions.get(id, &p.conn)?;
                // Requests in one session queue, code included.
                let mut guard = lock(&entry.session);
                let vars = self.load_vars(id);
                let (v, vars) = match (&entry.remote, guard.take()) {
                    (Some(r), _) => r.code(&p, vars, face, &self.settings)?,
                    (None, Some(session)) => {
                        let (back, v, vars) = run_in(session, &p, vars, face, &self.settings);
                        // A lost session (the engine panicked) is not kept:
                        // the next request says the session is unknown.
                        if let Some(s) = back {
                            entry.remember_cwd(s.cwd());
                            *guard = Some(s);
                        }
                        (v, vars)
                    }
                    (None, None) => return Err(ServerError::UnknownSession(id.clone())),
                };
                drop(guard);
                entry.touch();
                if let Some(vars) = &vars {
                    self.store_vars(id, vars)?;
                }
                v
            }
            // Without worker processes (the CLI's in-process server): here.
            None if !self.has_workers() => {
                let session = self.fresh.take_for(&crate::owner::scope(&p.conn, None));
                let (back, v, _) = run_in(session, &p, None, face, &self.settings);
                if let Some(s) = back {
                    self.fresh.give_back(s);
                }
                v
            }
            None => match self.open_remote(&p.conn, None, None, Vec::new()) {
                Ok(r) => {
                    let (v, _) = r.code(&p, None, face, &self.settings)?;
                    // A `cmd &` the code started keeps its worker alive.
                    r.linger();
                    v
                }
                // None could start: the code does not run (never here instead).
                Err(e) => crate::worker::unstarted(&exec_params(&p, face), &self.settings, &e),
            },
        };
        if let Some(id) = &p.session {
            v["session"] = json!(id);
        }
        Ok(v)
    }

    /// `$session.vars` of session `id` from the context store (`None`: `{}`).
    fn load_vars(&self, id: &str) -> Option<(String, Label)> {
        let config = self.settings.policy.config();
        let owners = cx::owners(config, Some(id));
        let owner = owners.owner(Scope::Session).ok()?.to_string();
        let store = cx::store(config).ok()?;
        let item = store.get(Scope::Session, &owner, VARS_KEY).ok()??;
        Some((item.value.to_string(), item.label))
    }

    /// Keeps `$session.vars` of session `id` with its label.
    fn store_vars(&self, id: &str, vars: &(String, Label)) -> Result<(), ServerError> {
        let Ok(value) = serde_json::from_str::<Value>(&vars.0) else {
            return Ok(());
        };
        if value == json!({}) && self.load_vars(id).is_none() {
            return Ok(());
        }
        let config = self.settings.policy.config();
        let owners = cx::owners(config, Some(id));
        let owner = owners
            .owner(Scope::Session)
            .map_err(|e| ServerError::BadParams(e.to_string()))?
            .to_string();
        let store = cx::store(config).map_err(|r| ServerError::Refused(Box::new(r)))?;
        let tags = std::collections::BTreeMap::new();
        let new = NewValue {
            value: &value,
            label: &vars.1,
            key_label: &Label::agent(),
            tags: &tags,
        };
        store
            .set(Scope::Session, &owner, VARS_KEY, new, cx::limits(config))
            .map_err(|e| ServerError::BadParams(e.to_string()))
    }
}

/// The request's language (`typescript` when none is given).
fn language_of(p: &CodeParams) -> Result<safesh_code::Language, ServerError> {
    match p.language.as_deref() {
        None => Ok(safesh_code::Language::TypeScript),
        Some(l) => safesh_code::Language::parse(l).ok_or_else(|| {
            ServerError::BadParams(format!("unknown language {l:?}: typescript or javascript"))
        }),
    }
}

/// The [`ExecParams`] a code request shapes its result and bounds its wait by.
pub(crate) fn exec_params(p: &CodeParams, face: &'static str) -> ExecParams {
    ExecParams {
        session: p.session.clone(),
        output_mode: p.output_mode,
        timeout_ms: p.timeout_ms,
        conn: p.conn.clone(),
        face: Some(face),
        ..Default::default()
    }
}

/// The face name a worker frame carries back to a `&'static str`.
pub(crate) fn face_of(name: &str) -> &'static str {
    match name {
        "mcp" => "mcp",
        "cli" => "cli",
        _ => "json-rpc",
    }
}

/// Runs `p` in `session` (here, or in a worker process: the same code): the
/// shaped result, `$session.vars` after it, and the session to keep (`None`
/// when the engine lost it).
pub(crate) fn run_in(
    mut session: Session,
    p: &CodeParams,
    vars: Option<(String, Label)>,
    face: &'static str,
    settings: &Settings,
) -> (Option<Session>, Value, Option<(String, Label)>) {
    let language = match language_of(p) {
        Ok(l) => l,
        Err(e) => return (Some(session), json!({"error": e.to_json()}), None),
    };
    let ep = exec_params(p, face);
    let capture = crate::exec::capture(&ep, settings);
    let request = safesh_code::CodeRequest {
        source: p.source.clone(),
        language,
        name: String::new(),
        timeout_ms: p.timeout_ms.map(|t| settings.clamp_timeout(t)),
        input: p.input.clone(),
        vars,
    };
    let target = safesh_core::OutputTarget::Stream(capture.clone());
    session.set_force(p.force.unwrap_or(false));
    crate::context_face::begin(&mut session, &ep);
    let run = safesh_code::run(session, request, target);
    crate::context_face::record(&run.session, &p.source, &ep, &run.outcome);
    let mut v = capture.result(&run.outcome);
    if let Some(e) = &run.outcome.error
        && e.code == safesh_core::ErrorCode::Timeout
    {
        v["stopped"] = json!("timeout");
    }
    let back = (!run.session_lost).then_some(run.session);
    (back, v, Some(run.vars))
}

/// The key a worker's code result carries `$session.vars` under (taken out
/// by the server before the result is returned).
pub(crate) const VARS_RESULT_KEY: &str = "code_vars";

/// Routes the JSON-RPC method `code` (`None`: not this face's).
pub fn rpc(
    server: &Server,
    method: &str,
    p: Value,
    conn: &str,
) -> Option<Result<Value, ServerError>> {
    if method != "code" {
        return None;
    }
    Some(
        serde_json::from_value::<CodeParams>(p)
            .map_err(|e| ServerError::BadParams(e.to_string()))
            .and_then(|mut c| {
                c.conn = conn.to_string();
                server.code(c, "json-rpc")
            }),
    )
}

/// Runs the MCP tool `code` in a blocking thread.
pub async fn mcp(server: Arc<Server>, args: Value, conn: String) -> Result<Value, ServerError> {
    let mut p: CodeParams =
        serde_json::from_value(args).map_err(|e| ServerError::BadParams(e.to_string()))?;
    p.conn = conn;
    tokio::task::spawn_blocking(move || server.code(p, "mcp"))
        .await
        .map_err(|e| ServerError::Io(std::io::Error::other(e.to_string())))?
}

/// The MCP tool `code`.
pub fn tool() -> rmcp::model::Tool {
    let input = json!({
        "type": "object",
        "properties": {
            "source": {"type": "string", "description": "TypeScript or JavaScript (an ES module; top-level await). Globals: fs, text, $, fetch, console, $session; imports: safesh:fs, safesh:text, safesh:shell, safesh:stdlib, safesh/streams"},
            "language": {"type": "string", "enum": ["typescript", "javascript"], "description": "default typescript (types are stripped, not checked)"},
            "session": {"type": "string", "description": "run in this session (its cwd, env, labels and $session.vars)"},
            "timeout_ms": {"type": "integer", "minimum": 0, "description": "stop after this many ms (TIMEOUT)"},
            "input": {"type": "string", "description": "text given to the code as $session.input"},
            "output_mode": {"type": "string", "enum": ["merged", "stdout", "stderr", "separate"]}
        },
        "required": ["source"]
    });
    let obj = |v: Value| match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(serde_json::Map::new()),
    };
    rmcp::model::Tool::new(
        "code",
        "Run TypeScript/JavaScript with safesh's stdlib (fs, text, $ for programs and bash, fetch) under the same policy, sandbox and labels as exec. Returns exec's result: stdout is what console.log printed; exit_code 1 on an uncaught exception.",
        obj(input),
    )
    .with_raw_output_schema(obj(json!({"type": "object"})))
}
