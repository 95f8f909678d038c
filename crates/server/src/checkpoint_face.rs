//! `checkpoint.save|restore|list|diff|delete` (JSON-RPC) and the MCP tools
//! `checkpoint_save` etc.: [`safesh_core::Session::checkpoint`] in the caller's
//! session (or a fresh one of the caller's connection), under the same policy,
//! labels and destructive commit point as the `checkpoint` builtin.

use crate::Server;
use crate::error::ServerError;
use rmcp::model::Tool;
use safesh_core::{CheckpointFailure, CheckpointOp};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;

/// Parameters of every checkpoint method (each uses what it needs).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointParams {
    /// The checkpoint (save: optional; restore, delete: required).
    #[serde(default)]
    pub name: Option<String>,
    /// diff: the first checkpoint.
    #[serde(default)]
    pub a: Option<String>,
    /// diff: the second (absent: the tree now).
    #[serde(default)]
    pub b: Option<String>,
    /// Run in this session (its policy and labels); absent: a fresh one.
    #[serde(default)]
    pub session: Option<String>,
}

pub(crate) fn op_of(op: &str, p: &CheckpointParams) -> Result<CheckpointOp, ServerError> {
    let need = |v: &Option<String>, what: &str| {
        v.clone()
            .ok_or_else(|| ServerError::BadParams(format!("checkpoint.{op} needs `{what}`")))
    };
    Ok(match op {
        "save" => CheckpointOp::Save(p.name.clone()),
        "restore" => CheckpointOp::Restore(need(&p.name, "name")?),
        "list" => CheckpointOp::List,
        "diff" => CheckpointOp::Diff(need(&p.a, "a")?, p.b.clone()),
        "delete" => CheckpointOp::Delete(need(&p.name, "name")?),
        other => {
            return Err(ServerError::BadParams(format!(
                "no method checkpoint.{other} (save, restore, list, diff, delete)"
            )));
        }
    })
}

impl Server {
    /// One checkpoint operation for connection `conn`.
    pub fn checkpoint(
        &self,
        op: &str,
        p: CheckpointParams,
        conn: &str,
    ) -> Result<Value, ServerError> {
        let op_name = op;
        let op = op_of(op, &p)?;
        let r = match &p.session {
            Some(id) => {
                let entry = self.sessions.get(id, conn)?;
                let mut guard = crate::shape::lock(&entry.session);
                match (&entry.remote, guard.as_mut()) {
                    // The session's interpreter is in its worker process.
                    (Some(r), _) => {
                        let params = serde_json::json!({"name": p.name, "a": p.a, "b": p.b});
                        return r.checkpoint(op_name, params);
                    }
                    (None, Some(s)) => {
                        // Its `session` context scope is saved and restored with it.
                        s.set_context_session(Some(id));
                        s.checkpoint(&op)
                    }
                    (None, None) => return Err(ServerError::UnknownSession(id.clone())),
                }
            }
            None => {
                let mut s = self.fresh.take_for(&crate::owner::scope(conn, None));
                s.set_context_session(None);
                let r = s.checkpoint(&op);
                self.fresh.give_back(s);
                r
            }
        };
        r.map_err(|e| match e {
            CheckpointFailure::Invalid(m) => ServerError::BadParams(m),
            CheckpointFailure::Refused(r) => ServerError::Refused(r),
        })
    }
}

/// Routes a JSON-RPC method of this face (`None`: not one of them).
pub fn rpc(
    server: &Server,
    method: &str,
    p: Value,
    conn: &str,
) -> Option<Result<Value, ServerError>> {
    let op = method.strip_prefix("checkpoint.")?;
    let p = if p.is_null() { json!({}) } else { p };
    Some(
        serde_json::from_value(p)
            .map_err(|e| ServerError::BadParams(e.to_string()))
            .and_then(|c| server.checkpoint(op, c, conn)),
    )
}

/// Runs an MCP tool of this face in a blocking thread (`None`: not one of them).
pub async fn mcp(
    server: Arc<Server>,
    name: &str,
    args: Value,
    conn: String,
) -> Option<Result<Value, ServerError>> {
    let method = format!("checkpoint.{}", name.strip_prefix("checkpoint_")?);
    let r = tokio::task::spawn_blocking(move || rpc(&server, &method, args, &conn)).await;
    match r {
        Ok(r) => r,
        Err(e) => Some(Err(ServerError::Io(std::io::Error::other(e.to_string())))),
    }
}

fn tool(name: &'static str, description: &'static str, props: Value, required: &[&str]) -> Tool {
    let input = json!({"type": "object", "properties": props, "required": required});
    let obj = |v: Value| match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(serde_json::Map::new()),
    };
    Tool::new(name, description, obj(input)).with_raw_output_schema(obj(json!({"type": "object"})))
}

/// The MCP tools of this face.
pub fn tools() -> Vec<Tool> {
    let session =
        json!({"type": "string", "description": "run in this session (its cwd and labels)"});
    let name = json!({"type": "string", "description": "a checkpoint name: letters, digits, . _ - (not a path)"});
    vec![
        tool(
            "checkpoint_save",
            "Save the project's write roots (content-addressed; unchanged files cost nothing). Excludes [checkpoints] exclude, safesh.toml and protected paths.",
            json!({"name": name, "session": session}),
            &[],
        ),
        tool(
            "checkpoint_restore",
            "Put the write roots back exactly as a checkpoint saw them (files created since are removed). A destructive write: audited, and asks a human when the name comes from untrusted data.",
            json!({"name": name, "session": session}),
            &["name"],
        ),
        tool(
            "checkpoint_list",
            "The project's checkpoints, oldest first: name, time saved, files and bytes.",
            json!({"session": session}),
            &[],
        ),
        tool(
            "checkpoint_diff",
            "Paths added, removed and modified from checkpoint `a` to `b` (or to now).",
            json!({"a": name, "b": name, "session": session}),
            &["a"],
        ),
        tool(
            "checkpoint_delete",
            "Remove a checkpoint (its contents go when no other checkpoint uses them).",
            json!({"name": name, "session": session}),
            &["name"],
        ),
    ]
}
