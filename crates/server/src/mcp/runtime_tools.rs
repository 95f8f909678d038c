//! The MCP tools of the agent runtime: `pipeline`, `task_run` and
//! `task_list`. Long ones run in a blocking thread; a client's cancellation
//! interrupts every command they started; with a `progressToken`, `task_run`
//! sends a progress notification as each script starts and ends (progress:
//! events so far, total: two per script) and `pipeline` one per second.

use super::{result, server_error};
use crate::Server;
use crate::error::ServerError;
use crate::pipeline_face::PipelineParams;
use crate::shape::lock;
use crate::task_face::{Progress, TaskListParams, TaskRunParams};
use rmcp::model::{
    CallToolResponse, NumberOrString, ProgressNotificationParam, ProgressToken, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use safesh_core::{ApprovalChannel, Interrupter};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The tools of this module.
pub fn tools() -> Vec<Tool> {
    vec![
        super::tool(
            "pipeline",
            "Run steps in order where data flows: each step's stdin is the previous step's full stdout (it keeps its label: a secret read in one step cannot be sent out by the next), unless the step sets `input`. Steps are {script} or {command, args}, with intent, verify, tags, on_error (stop | skip | retry with `retries`) and checkpoint_before. `checkpoint_before: true` saves the write roots first; a step that then fails with on_error stop rolls them back (`rolled_back: true`, `checkpoint`). Returns {passed, completed, steps: [each step's result], provenance, meta, payload}.",
            crate::pipeline_face::input_schema(),
            crate::pipeline_face::output_schema(),
        ),
        super::tool(
            "task_run",
            "Run a task from the project's [tasks] (see task_list), or an xrun list of task names. Every script of the task goes through the same policy and sandbox as exec. Returns {passed, exit_code, failed, runs: [{task, passed, result}]}. Sends progress notifications as scripts start and end when you pass a progressToken.",
            crate::task_face::run_input(),
            crate::task_face::run_output(),
        ),
        super::tool(
            "task_list",
            "The project's tasks ([tasks] in a trusted safesh.toml or the user's config): name, kind, description. Tasks of an untrusted safesh.toml are not loaded (`ignored` names the file).",
            json!({"type": "object", "properties": {}}),
            crate::task_face::list_output(),
        ),
    ]
}

/// What a blocking tool reports as it goes.
type Report = (String, Option<f64>);

/// Runs `work` in a blocking thread. Interrupts everything it started when the
/// client cancels; forwards its progress (or, with `tick`, a note per second)
/// when the client gave a progress token.
pub(super) async fn blocking<F>(
    ctx: &RequestContext<RoleServer>,
    tick: bool,
    work: F,
) -> Result<Value, ServerError>
where
    F: FnOnce(
            &(dyn Fn(Interrupter) + Sync),
            &(dyn Fn(Report) + Sync),
        ) -> Result<Value, ServerError>
        + Send
        + 'static,
{
    let started: Arc<Mutex<Vec<Interrupter>>> = Arc::new(Mutex::new(Vec::new()));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Report>();
    let s2 = started.clone();
    let mut task = tokio::task::spawn_blocking(move || {
        let on_start = move |i: Interrupter| lock(&s2).push(i);
        let progress = move |r: Report| {
            let _ = tx.send(r);
        };
        work(&on_start, &progress)
    });
    let token = ctx.meta.get_progress_token();
    let begun = Instant::now();
    let mut ticks = tokio::time::interval_at(
        tokio::time::Instant::now() + Duration::from_secs(1),
        Duration::from_secs(1),
    );
    let mut events = 0u64;
    let mut cancelled = false;
    let mut again = tokio::time::interval(Duration::from_millis(20));
    let notify = |events: u64, (message, total): Report| {
        let n = ProgressNotificationParam::new(
            token
                .clone()
                .unwrap_or(ProgressToken(NumberOrString::Number(0))),
            events as f64,
        )
        .with_message(message);
        match total {
            Some(total) => n.with_total(total),
            None => n,
        }
    };
    loop {
        tokio::select! {
            r = &mut task => {
                // What the work reported just before it ended goes out first.
                while let Ok(report) = rx.try_recv() {
                    events += 1;
                    if token.is_some() {
                        let _ = ctx.peer.notify_progress(notify(events, report)).await;
                    }
                }
                return r.map_err(|e| ServerError::Io(std::io::Error::other(e.to_string())))?;
            }
            _ = ctx.ct.cancelled(), if !cancelled => {
                cancelled = true;
                for i in lock(&started).iter() { i.interrupt(); }
            }
            _ = again.tick(), if cancelled => {
                // Until the work ends: what starts after the cancel stops too.
                for i in lock(&started).iter() { i.interrupt(); }
            }
            Some(report) = rx.recv() => {
                events += 1;
                if token.is_some() {
                    let _ = ctx.peer.notify_progress(notify(events, report)).await;
                }
            }
            _ = ticks.tick(), if tick && token.is_some() => {
                if let Some(t) = &token {
                    let secs = begun.elapsed().as_secs();
                    let _ = ctx.peer.notify_progress(
                        ProgressNotificationParam::new(t.clone(), secs as f64)
                            .with_message(format!("running for {secs} s")),
                    ).await;
                }
            }
        }
    }
}

/// A readable text for a pipeline or task result: one line per step or script.
fn summary(v: &Value, items: &str, name: &str) -> String {
    let mut out = String::new();
    for item in v[items].as_array().into_iter().flatten() {
        let r = if item.get("result").is_some() {
            &item["result"]
        } else {
            item
        };
        let who = item
            .get(name)
            .map_or_else(String::new, |n| n.to_string().trim_matches('"').to_string());
        out.push_str(&format!("[{items} {who}] "));
        out.push_str(&super::exec_text(r));
        out.push('\n');
    }
    out.push_str(&format!("passed: {}", v["passed"]));
    if v["rolled_back"] == json!(true) {
        out.push_str(&format!("; rolled back to checkpoint {}", v["checkpoint"]));
    }
    out
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
    let parse_err = |e: serde_json::Error| ServerError::BadParams(e.to_string());
    let conn_s = conn.to_string();
    let s = server.clone();
    let r = match name {
        "pipeline" => {
            let pp: PipelineParams = match serde_json::from_value(args.clone()) {
                Ok(p) => p,
                Err(e) => return Some(server_error(&parse_err(e))),
            };
            blocking(ctx, true, move |on_start, _| {
                s.pipeline(&pp, &conn_s, Some("mcp"), on_start, approver)
            })
            .await
            .map(|v| (summary(&v, "steps", "step"), v))
        }
        "task_run" => {
            let p: TaskRunParams = match serde_json::from_value(args.clone()) {
                Ok(p) => p,
                Err(e) => return Some(server_error(&parse_err(e))),
            };
            blocking(ctx, false, move |on_start, report| {
                let progress = |p: Progress| report((p.message, Some((p.total * 2) as f64)));
                s.task_run(&p, &conn_s, Some("mcp"), on_start, approver, &progress)
            })
            .await
            .map(|v| (summary(&v, "runs", "task"), v))
        }
        "task_list" => serde_json::from_value::<TaskListParams>(args.clone())
            .map_err(parse_err)
            .map(|_| {
                let v = server.task_list();
                (v.to_string(), v)
            }),
        _ => return None,
    };
    Some(match r {
        Ok((text, v)) => {
            let failed = v["passed"] == json!(false);
            result(v, text, failed)
        }
        Err(e) => server_error(&e),
    })
}
