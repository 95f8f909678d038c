//! The context store and the persistent history on the agent faces: JSON-RPC
//! `context.get|set|delete|list` and `history`, MCP tools `context_get`,
//! `context_set`, `context_delete`, `context_list` and `history`, and the
//! history entry of every exec. A value the model may not see (its label) is
//! redacted like any output.

use crate::Server;
use crate::error::ServerError;
use crate::exec::ExecParams;
use crate::shape::{Redaction, model_label_json};
use rmcp::model::Tool;
use safesh_context::{ContextError, HistoryLog, HistoryQuery, Item, NewValue, Scope};
use safesh_core::Session;
use safesh_core::context::{self as cx, HistoryRecord};
use safesh_label::Label;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Before an exec: its `session` scope is the request's session. After it:
/// its history entry (and the end of its step).
pub fn begin(session: &mut Session, p: &ExecParams) {
    session.set_context_session(p.session.as_deref());
}

/// Appends the history entry of an exec that just ran.
pub fn record(session: &Session, script: &str, p: &ExecParams, o: &safesh_core::ExecOutcome) {
    record_verified(session, script, p, o, None);
}

/// Appends the history entry of an exec that just ran, with its verification
/// summary (`{passed, results: [{type, passed}]}`).
pub fn record_verified(
    session: &Session,
    script: &str,
    p: &ExecParams,
    o: &safesh_core::ExecOutcome,
    verification: Option<Value>,
) {
    session.record_history(HistoryRecord {
        face: p.face.unwrap_or("json-rpc"),
        script,
        intent: p.intent.clone(),
        outcome: o,
        verification,
    });
}

/// Parameters of `context.*`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextParams {
    /// `project`, `session`, `step` or `history`.
    pub scope: String,
    /// The key (get, set, delete).
    #[serde(default)]
    pub key: Option<String>,
    /// The value (set): any JSON.
    #[serde(default)]
    pub value: Option<Value>,
    /// Tags (set).
    #[serde(default)]
    pub tags: Option<BTreeMap<String, String>>,
    /// Only keys starting with this (list).
    #[serde(default)]
    pub prefix: Option<String>,
    /// The session whose `session`/`step` scope is meant.
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
}

/// Parameters of `history`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistoryParams {
    /// Only this session's entries.
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
    /// Only entries at or after this time (ms since the Unix epoch).
    #[serde(default)]
    pub since: Option<u64>,
    /// At most this many (the newest), default 20.
    #[serde(default)]
    pub limit: Option<usize>,
}

fn context_error(e: ContextError) -> ServerError {
    if e.is_request_error() && !matches!(e, ContextError::LimitExceeded { .. }) {
        ServerError::BadParams(e.to_string())
    } else {
        ServerError::Refused(Box::new(cx::store_refusal(&e)))
    }
}

fn need_key(p: &ContextParams) -> Result<&str, ServerError> {
    p.key
        .as_deref()
        .ok_or_else(|| ServerError::BadParams("missing `key`".into()))
}

/// An item as the model sees it: a value it may not see is replaced by the
/// redaction placeholder (and so is a key chosen by such data).
fn item_json(item: &Item, redaction: Option<&Redaction>, with_value: bool) -> Value {
    let hidden = redaction.is_some_and(|r| r.hides(&item.label));
    let key_hidden = redaction.is_some_and(|r| r.hides(&item.key_label));
    let mut v = json!({
        "key": if key_hidden { Value::Null } else { json!(item.key) },
        "label": model_label_json(&item.label, redaction),
        "tags": item.tags,
        "updated_unix_ms": item.updated_unix_ms,
    });
    if with_value {
        v["value"] = match redaction.filter(|_| hidden) {
            Some(r) => json!(
                r.placeholder(&item.label, 1)
                    .unwrap_or_else(|| "[redacted]".into())
            ),
            None => item.value.clone(),
        };
    }
    if hidden {
        v["redacted"] = json!(true);
    }
    v
}

impl Server {
    /// `context.get|set|delete|list` (`op`: the part after `context.`).
    pub fn context(&self, op: &str, p: ContextParams, conn: &str) -> Result<Value, ServerError> {
        let config = self.settings.policy.config();
        // A session of another connection is not this caller's (crate::owner).
        if let Some(id) = &p.session {
            self.sessions.get(id, conn)?;
        }
        let scope = Scope::parse(&p.scope).map_err(context_error)?;
        let owners = cx::owners(config, p.session.as_deref());
        let owner = owners.owner(scope).map_err(context_error)?.to_string();
        let store = cx::store(config).map_err(|r| ServerError::Refused(Box::new(r)))?;
        let redaction = self.context_redaction();
        let base = json!({"scope": scope.as_str()});
        match op {
            "get" => {
                let key = need_key(&p)?;
                let item = store.get(scope, &owner, key).map_err(context_error)?;
                let mut v = match item {
                    Some(i) => item_json(&i, redaction.as_deref(), true),
                    None => json!({"key": key, "value": null}),
                };
                v["scope"] = base["scope"].clone();
                v["found"] = json!(!v["value"].is_null() || v["redacted"] == json!(true));
                Ok(v)
            }
            "set" => {
                let key = need_key(&p)?;
                let value = p
                    .value
                    .as_ref()
                    .ok_or_else(|| ServerError::BadParams("missing `value`".into()))?;
                if scope == Scope::Step {
                    cx::mark_step(&owner);
                }
                // The model wrote it: the agent's label, like its script text.
                let label = Label::agent();
                let new = NewValue {
                    value,
                    label: &label,
                    key_label: &label,
                    tags: &p.tags.clone().unwrap_or_default(),
                };
                store
                    .set(scope, &owner, key, new, cx::limits(config))
                    .map_err(context_error)?;
                Ok(json!({"scope": scope.as_str(), "key": key, "stored": true}))
            }
            "delete" => {
                let key = need_key(&p)?;
                let deleted = store.delete(scope, &owner, key).map_err(context_error)?;
                Ok(json!({"scope": scope.as_str(), "key": key, "deleted": deleted}))
            }
            "list" => {
                let items = store
                    .list(scope, &owner, p.prefix.as_deref())
                    .map_err(context_error)?;
                let items: Vec<Value> = items
                    .iter()
                    .map(|i| item_json(i, redaction.as_deref(), false))
                    .collect();
                Ok(json!({"scope": scope.as_str(), "items": items}))
            }
            _ => Err(ServerError::BadParams(format!(
                "unknown method context.{op}; context methods: get, set, delete, list"
            ))),
        }
    }

    /// The model-facing redaction of this server's config, built once (a
    /// classifier per request would cost more than the store's lookup).
    fn context_redaction(&self) -> Option<Arc<Redaction>> {
        self.context_redaction
            .get_or_init(|| Redaction::from_config(self.settings.policy.config()).map(Arc::new))
            .clone()
    }

    /// `history`: the persistent history (`{entries: [...]}`, oldest first);
    /// with `[history] persist = false`, this process's executes only.
    pub fn history_entries(&self, p: HistoryParams, conn: &str) -> Result<Value, ServerError> {
        let config = self.settings.policy.config();
        if let Some(id) = &p.session {
            self.sessions.get(id, conn)?;
        }
        // Where the sessions write it (the config's state dir, as the CLI's).
        let (true, Some(dir)) = (cx::history_config(config).persist, &config.state_dir) else {
            return Ok(self.history(conn, p.session.as_deref(), p.limit.unwrap_or(20)));
        };
        let q = HistoryQuery {
            session: p.session,
            since: p.since,
            limit: p.limit,
        };
        let entries = HistoryLog::new(dir).read(&q).map_err(context_error)?;
        Ok(json!({"entries": entries}))
    }

    /// A session ended: its `session` and `step` values go with it.
    pub fn end_context_session(&self, id: &str) {
        end_session(&self.settings, id);
    }
}

/// A session ended (or expired): deletes its `session` and `step` values.
pub fn end_session(settings: &crate::Settings, id: &str) {
    if let Ok(store) = cx::store(settings.policy.config()) {
        let _ = store.end_session(id);
    }
}

/// Routes a JSON-RPC method of this face (`None`: not one of them).
pub fn rpc(
    server: &Server,
    method: &str,
    p: Value,
    conn: &str,
) -> Option<Result<Value, ServerError>> {
    let p = if p.is_null() { json!({}) } else { p };
    let bad = |e: serde_json::Error| ServerError::BadParams(e.to_string());
    Some(match method {
        "history" => serde_json::from_value(p)
            .map_err(bad)
            .and_then(|h| server.history_entries(h, conn)),
        m => {
            let op = m.strip_prefix("context.")?;
            serde_json::from_value(p)
                .map_err(bad)
                .and_then(|c| server.context(op, c, conn))
        }
    })
}

/// Runs an MCP tool of this face in a blocking thread (`None`: not one of them).
pub async fn mcp(
    server: Arc<Server>,
    name: &str,
    args: Value,
    conn: String,
) -> Option<Result<Value, ServerError>> {
    let method = match name {
        "history" => "history".to_string(),
        n => format!("context.{}", n.strip_prefix("context_")?),
    };
    let r = tokio::task::spawn_blocking(move || rpc(&server, &method, args, &conn)).await;
    match r {
        Ok(r) => r,
        Err(e) => Some(Err(ServerError::Io(std::io::Error::other(e.to_string())))),
    }
}

fn obj(v: Value) -> Arc<serde_json::Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(serde_json::Map::new()),
    }
}

fn scope_schema() -> Value {
    json!({"type": "string", "enum": ["project", "session", "step", "history"],
        "description": "project: this project, kept across processes; session: this session (pass `session`), deleted when it ends; step: this request only; history: read-only"})
}

fn tool(name: &'static str, description: &'static str, props: Value, required: &[&str]) -> Tool {
    let input = json!({"type": "object", "properties": props, "required": required});
    Tool::new(name, description, obj(input)).with_raw_output_schema(obj(json!({"type": "object"})))
}

/// The MCP tools of this face.
pub fn tools() -> Vec<Tool> {
    let session = json!({"type": "string", "description": "the session id (for the session and step scopes)"});
    let key =
        json!({"type": "string", "description": "the key (1–256 bytes, no control characters)"});
    vec![
        tool(
            "context_get",
            "Read a value from the shared context store. A value made from secret data comes back redacted (and stays secret when a script reads it with `context get`).",
            json!({"scope": scope_schema(), "key": key, "session": session}),
            &["scope", "key"],
        ),
        tool(
            "context_set",
            "Store a JSON value in the context store, for later calls and scripts (`context get SCOPE KEY` in a script). Limits: [context] max_value_bytes and max_keys (LIMIT_EXCEEDED).",
            json!({"scope": scope_schema(), "key": key, "value": {"description": "any JSON value"},
                "tags": {"type": "object", "additionalProperties": {"type": "string"}}, "session": session}),
            &["scope", "key", "value"],
        ),
        tool(
            "context_delete",
            "Delete a key from the context store (`deleted` says whether it was set).",
            json!({"scope": scope_schema(), "key": key, "session": session}),
            &["scope", "key"],
        ),
        tool(
            "context_list",
            "List the keys of a context scope (with labels and tags, no values).",
            json!({"scope": scope_schema(), "prefix": {"type": "string"}, "session": session}),
            &["scope"],
        ),
        tool(
            "history",
            "The persistent history of scripts run through safesh (every face), oldest first: time, face, session, command (secrets withheld), intent, exit code, duration, label summary.",
            json!({"session": session, "since": {"type": "integer", "description": "ms since the Unix epoch"},
                "limit": {"type": "integer", "minimum": 1}}),
            &[],
        ),
    ]
}
