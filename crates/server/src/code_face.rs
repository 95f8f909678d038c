//! The code face (issue 20): JSON-RPC `code` and the MCP tool `code`
//! `{source, language, session, timeout_ms, input, output_mode}` run
//! TypeScript/JavaScript through `safesh_code` in a session (a named one, or a
//! fresh one), and return the same result object as `exec` (shaped by
//! `shape.rs`: cap, spill, labels, redaction). `$session.vars` is the session's
//! `session` context scope, key [`VARS_KEY`], with its label.

use crate::error::ServerError;
use crate::exec::ExecParams;
use crate::service::Server;
use crate::shape::{OutputMode, lock};
use safesh_context::{NewValue, Scope};
use safesh_core::context as cx;
use safesh_label::Label;
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// The context key `$session.vars` is kept under (scope `session`).
pub const VARS_KEY: &str = "code.vars";

/// The parameters of `code`.
#[derive(Clone, Debug, Deserialize)]
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
    pub fn code(&self, p: CodeParams, face: &'static str) -> Result<Value, ServerError> {
        let language = match p.language.as_deref() {
            None => safesh_code::Language::TypeScript,
            Some(l) => safesh_code::Language::parse(l).ok_or_else(|| {
                ServerError::BadParams(format!("unknown language {l:?}: typescript or javascript"))
            })?,
        };
        let ep = ExecParams {
            session: p.session.clone(),
            output_mode: p.output_mode,
            conn: p.conn.clone(),
            face: Some(face),
            ..Default::default()
        };
        let capture = crate::exec::capture(&ep, &self.settings);
        let request = |vars| safesh_code::CodeRequest {
            source: p.source.clone(),
            language,
            name: String::new(),
            timeout_ms: p.timeout_ms.map(|t| self.settings.clamp_timeout(t)),
            input: p.input.clone(),
            vars,
        };
        let target = safesh_core::OutputTarget::Stream(capture.clone());
        let outcome = match &p.session {
            Some(id) => {
                let entry = self.sessions.get(id, &p.conn)?;
                // Requests in one session queue, code included.
                let mut guard = lock(&entry.session);
                let vars = self.load_vars(id);
                // The session's interpreter is in this process, or (the isolation
                // model) in its worker: then the code runs in a session of the same
                // owner, cwd and environment here (its `$session.vars` live in the
                // context store, so they persist either way).
                let (session, local) = match guard.take() {
                    Some(s) => (s, true),
                    None => {
                        let mut s = self.fresh.take_for(&crate::owner::scope(&p.conn, Some(id)));
                        let (cwd, env) = entry.snapshot();
                        s.set_cwd(cwd);
                        for (k, v) in &env {
                            s.set_env(k, v);
                        }
                        (s, false)
                    }
                };
                let mut session = session;
                session.set_force(p.force.unwrap_or(false));
                crate::context_face::begin(&mut session, &ep);
                let run = safesh_code::run(session, request(vars), target);
                crate::context_face::record(&run.session, &p.source, &ep, &run.outcome);
                if local {
                    entry.remember_cwd(run.session.cwd());
                    *guard = Some(run.session);
                } else {
                    self.fresh.give_back(run.session);
                }
                drop(guard);
                entry.touch();
                self.store_vars(id, &run.vars)?;
                run.outcome
            }
            None => {
                let mut session = self.fresh.take_for(&crate::owner::scope(&p.conn, None));
                session.set_force(p.force.unwrap_or(false));
                crate::context_face::begin(&mut session, &ep);
                let run = safesh_code::run(session, request(None), target);
                crate::context_face::record(&run.session, &p.source, &ep, &run.outcome);
                self.fresh.give_back(run.session);
                run.outcome
            }
        };
        let mut v = capture.result(&outcome);
        if let Some(id) = &p.session {
            v["session"] = json!(id);
        }
        if let Some(e) = &outcome.error
            && e.code == safesh_core::ErrorCode::Timeout
        {
            v["stopped"] = json!("timeout");
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

/// Stands in for a session while code runs in it (the lock is held throughout).
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
