//! The MCP tools of project specs: `project_load`, `project_validate`,
//! `project_plan`, `project_approve`, `project_reject`, `project_run`,
//! `project_init` — the same [`Server::project`] as JSON-RPC `project.*`. A
//! plan approval asks the human by elicitation when the client offers it;
//! the model's own connection can never approve.

use super::{result, server_error};
use crate::Server;
use crate::error::ServerError;
use crate::project_face::ProjectParams;
use rmcp::model::{CallToolResponse, Tool};
use rmcp::service::{RequestContext, RoleServer};
use safesh_core::ApprovalChannel;
use serde_json::{Value, json};
use std::sync::Arc;

fn input(required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The spec file (project.agsh.yaml)."},
            "spec": {"type": "string", "description": "The spec's YAML text instead of a file."},
            "params": {"type": "object", "description": "Param values by name."},
            "steps": {"type": "array", "items": {"type": "object"}, "description": "Your own steps ({command, args} or {script}, with intent, verify, checkpoint_before); they replace the spec's."},
            "hash": {"type": "string", "description": "The plan's hash (from project_plan)."},
            "feedback": {"type": "string", "description": "Why the plan is rejected."},
            "template": {"type": "string", "description": "code-review, weekly-report, deploy-pipeline, research, or the user's own."},
            "dir": {"type": "string"},
            "force": {"type": "boolean"},
            "session": {"type": "string"}
        },
        "required": required,
    })
}

fn output() -> Value {
    json!({"type": "object"})
}

/// The tools of this module.
pub fn tools() -> Vec<Tool> {
    vec![
        super::tool(
            "project_validate",
            "Check a project spec (project.agsh.yaml) without running anything: {valid, spec} or {valid: false, error} with file, line, column and the field.",
            input(&[]),
            output(),
        ),
        super::tool(
            "project_load",
            "Load a project spec: returns it, and puts its goal, constraints and guidelines in the context's project scope.",
            input(&[]),
            output(),
        ),
        super::tool(
            "project_plan",
            "Plan a spec (its steps, or yours in `steps`): each step's exact script, risk under the real policy (read-only, write, network, destructive, refused), verify, checkpoint_before, a risk summary and the hash an approval binds to. A step outside allowed_commands or refused by the policy is refused here, before anything runs. Runs nothing.",
            input(&[]),
            output(),
        ),
        super::tool(
            "project_approve",
            "Ask the human to approve plan `hash` (only a human can: by elicitation when your client offers it, else the result has approved: false and an approval_id the human grants with `safesh approve ID`). Single use; an edited plan needs a new approval.",
            input(&["hash"]),
            output(),
        ),
        super::tool(
            "project_reject",
            "Reject plan `hash` with `feedback`: it will not run; plan again.",
            input(&["hash"]),
            output(),
        ),
        super::tool(
            "project_run",
            "Run plan `hash` (or a spec by path/spec + params): approval per [spec] approval_mode, the steps as a pipeline (policy, sandbox, verify, checkpoints, rollback) with allowed_commands enforced at every dispatch, the output file, success_criteria (a failure rolls back). Returns the report {passed, ran, pipeline: {steps}, success_criteria, output, error}.",
            input(&[]),
            output(),
        ),
        super::tool(
            "project_init",
            "Write project.agsh.yaml from a template (only that file).",
            input(&["template"]),
            output(),
        ),
    ]
}

/// Runs one tool of this module (`None`: not one of them).
pub async fn dispatch(
    server: &Arc<Server>,
    name: &str,
    args: &Value,
    conn: &str,
    ctx: &RequestContext<RoleServer>,
    approver: Option<Arc<dyn ApprovalChannel>>,
) -> Option<CallToolResponse> {
    let op = name.strip_prefix("project_")?.to_string();
    let p: ProjectParams = match serde_json::from_value(args.clone()) {
        Ok(p) => p,
        Err(e) => return Some(server_error(&ServerError::BadParams(e.to_string()))),
    };
    let conn_s = conn.to_string();
    let s = server.clone();
    let r = super::runtime_tools::blocking(ctx, true, move |on_start, _| {
        s.project(&op, p, &conn_s, Some("mcp"), on_start, approver)
    })
    .await;
    Some(match r {
        Ok(v) => {
            let failed = v["passed"] == json!(false)
                || v["valid"] == json!(false)
                || v["approved"] == json!(false)
                || v["planned"] == json!(false);
            let text = serde_json::to_string_pretty(&v).unwrap_or_default();
            result(v, text, failed)
        }
        Err(e) => server_error(&e),
    })
}
