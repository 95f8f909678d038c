//! The task runner on the agent faces: JSON-RPC `task.run {name, args?,
//! session?}` / `task.list` and the MCP tools `task_run` / `task_list`.
//!
//! A task is a script like any other: every script of its plan
//! ([`safesh_tasks::plan`]) runs through [`Server::exec_with`], the entry point
//! of `execute` (policy, sandbox, labels, worker processes). Tasks come only
//! from the applied config layers, so a task defined only in an untrusted
//! project `safesh.toml` does not exist here (the error says so).

use crate::Server;
use crate::envelope;
use crate::error::ServerError;
use crate::exec::ExecParams;
use safesh_core::{ApprovalChannel, Interrupter};
use safesh_tasks::{Leaf, Plan, TaskDef};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// Parameters of `task.run` / `task_run`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskRunParams {
    /// A task name, or an xrun list of names (`"[lint, [-s, test, build]]"`).
    pub name: String,
    /// The task's arguments (`$@` of every script it runs).
    #[serde(default)]
    pub args: Vec<String>,
    /// Run in this session (its cwd, variables and labels); parallel scripts
    /// of one session then take turns.
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
    /// Per-script timeout, bounded by the config's maximum.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// Parameters of `task.list` (none but an optional session, for symmetry).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskListParams {}

/// A task's progress: `done` of `total` scripts, and what just happened.
pub struct Progress {
    /// Scripts finished.
    pub done: u64,
    /// Scripts in the plan.
    pub total: u64,
    /// `started build` / `build: exit 0`.
    pub message: String,
}

/// How a task run reports progress.
pub type OnProgress<'a> = &'a (dyn Fn(Progress) + Sync);

/// What a task's kind is, on one word.
fn kind(def: &TaskDef) -> &'static str {
    match def {
        TaskDef::Script(_) => "script",
        TaskDef::Cmd(_) => "cmd",
        TaskDef::Serial(_) => "serial",
        TaskDef::Parallel(_) => "parallel",
        TaskDef::Xrun(_) => "xrun",
    }
}

/// One script's run, in list order.
struct LeafRun {
    task: String,
    result: Value,
    passed: bool,
}

/// Runs a plan's scripts through the server.
struct TaskRunner<'a> {
    server: &'a Server,
    base: ExecParams,
    on_start: &'a (dyn Fn(Interrupter) + Sync),
    approver: Option<Arc<dyn ApprovalChannel>>,
    progress: OnProgress<'a>,
    total: u64,
    done: Mutex<u64>,
}

impl TaskRunner<'_> {
    /// Runs `plan`; the runs of its scripts in list order (a serial list stops
    /// at its first failure; a parallel one runs every item).
    fn plan(&self, plan: &Plan) -> Vec<LeafRun> {
        match plan {
            Plan::Leaf(leaf) => vec![self.leaf(leaf)],
            Plan::Serial(items) => {
                let mut out = Vec::new();
                for item in items {
                    let runs = self.plan(item);
                    let failed = runs.iter().any(|r| !r.passed);
                    out.extend(runs);
                    if failed {
                        break;
                    }
                }
                out
            }
            Plan::Parallel(items) => std::thread::scope(|s| {
                let handles: Vec<_> = items
                    .iter()
                    .map(|item| {
                        std::thread::Builder::new()
                            .stack_size(crate::settings::SHELL_STACK)
                            .spawn_scoped(s, move || self.plan(item))
                    })
                    .collect();
                handles
                    .into_iter()
                    .flat_map(|h| match h.map(|h| h.join()) {
                        Ok(Ok(runs)) => runs,
                        _ => vec![LeafRun {
                            task: "?".into(),
                            result: json!({"error": {"code": "EXECUTION_ERROR", "message": "a task thread failed"}}),
                            passed: false,
                        }],
                    })
                    .collect()
            }),
        }
    }

    fn leaf(&self, leaf: &Leaf) -> LeafRun {
        (self.progress)(Progress {
            done: *crate::shape::lock(&self.done),
            total: self.total,
            message: format!("started {}", leaf.task),
        });
        let mut p = self.base.clone();
        // `$@` are the task's arguments, set as the script's first words.
        let mut script = String::new();
        if !leaf.args.is_empty() {
            let words: Vec<String> = leaf.args.iter().map(|a| safesh_tasks::quote(a)).collect();
            script.push_str(&format!("set -- {}\n", words.join(" ")));
        }
        script.push_str(&leaf.script);
        p.script = Some(script);
        p.intent = Some(json!({"task": leaf.task}));
        let result = match self
            .server
            .exec_with(&p, self.on_start, self.approver.clone())
        {
            Ok(v) => v,
            Err(e) => json!({"exit_code": 2, "error": e.to_json()}),
        };
        let passed = envelope::succeeded(&result);
        let done = {
            let mut d = crate::shape::lock(&self.done);
            *d += 1;
            *d
        };
        (self.progress)(Progress {
            done,
            total: self.total,
            message: format!("{}: exit {}", leaf.task, result["exit_code"]),
        });
        LeafRun {
            task: leaf.task.clone(),
            result,
            passed,
        }
    }
}

impl Server {
    /// `task.list`: `{tasks: [{name, kind, description, origin}], ignored: [the
    /// config files not applied (untrusted): their tasks are not loaded]}`.
    pub fn task_list(&self) -> Value {
        let config = self.settings.policy.config();
        let tasks: Vec<Value> = config
            .tasks
            .values()
            .map(|t| {
                json!({
                    "name": t.name,
                    "kind": kind(&t.def),
                    "description": t.description,
                    "origin": t.origin,
                })
            })
            .collect();
        json!({"tasks": tasks, "ignored": ignored(config)})
    }

    /// `task.run`: runs a task's plan; `{task, passed, exit_code, failed,
    /// runs: [{task, passed, result}], provenance, meta, payload}` (the exit
    /// code is the first failure's, in list order).
    pub fn task_run(
        &self,
        p: &TaskRunParams,
        conn: &str,
        face: Option<&'static str>,
        on_start: &(dyn Fn(Interrupter) + Sync),
        approver: Option<Arc<dyn ApprovalChannel>>,
        progress: OnProgress<'_>,
    ) -> Result<Value, ServerError> {
        let config = self.settings.policy.config();
        let planned = if p.name.trim_start().starts_with('[') {
            safesh_tasks::plan_xrun(&config.tasks, &p.name, &p.args)
        } else {
            safesh_tasks::plan(&config.tasks, &p.name, &p.args)
        };
        let plan = planned.map_err(|e| {
            let mut msg = e.to_string();
            let ignored = ignored(config);
            if !ignored.is_empty() {
                msg.push_str(&format!(
                    " ({} not trusted, so its tasks are not loaded; a human runs `safesh trust`)",
                    ignored.join(", ")
                ));
            }
            ServerError::BadParams(msg)
        })?;
        if let Some(id) = &p.session {
            self.sessions.get(id, conn)?;
        }
        let runner = TaskRunner {
            server: self,
            base: ExecParams {
                session: p.session.clone(),
                timeout_ms: p.timeout_ms,
                conn: conn.to_string(),
                face,
                ..ExecParams::default()
            },
            on_start,
            approver,
            progress,
            total: plan.leaves().len() as u64,
            done: Mutex::new(0),
        };
        let runs = runner.plan(&plan);
        let failed: Vec<&str> = runs
            .iter()
            .filter(|r| !r.passed)
            .map(|r| r.task.as_str())
            .collect();
        let exit_code =
            runs.iter()
                .find(|r| !r.passed)
                .map_or(json!(0), |r| match &r.result["exit_code"] {
                    Value::Number(n) if n.as_i64() != Some(0) => Value::Number(n.clone()),
                    _ => json!(1),
                });
        let provenance: Vec<Value> = runs
            .iter()
            .flat_map(|r| {
                r.result["provenance"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .collect();
        let last = runs.last().map(|r| &r.result);
        Ok(json!({
            "task": p.name,
            "passed": failed.is_empty(),
            "exit_code": exit_code,
            "failed": failed,
            "runs": runs.iter().map(|r| json!({"task": r.task, "passed": r.passed, "result": r.result})).collect::<Vec<_>>(),
            "provenance": provenance,
            "meta": last.map_or_else(|| envelope::empty_meta(&p.name), |v| v["meta"].clone()),
            "payload": last.map_or(Value::Null, |v| v["payload"].clone()),
        }))
    }
}

/// The config files that were found but not applied (untrusted).
fn ignored(config: &safesh_policy::config::Config) -> Vec<String> {
    config
        .sources
        .iter()
        .filter(|s| !s.applied)
        .map(|s| s.path.display().to_string())
        .collect()
}

/// Routes a JSON-RPC method of this face (`None`: not one of them).
pub fn rpc(
    server: &Server,
    method: &str,
    p: Value,
    conn: &str,
    on_start: &(dyn Fn(Interrupter) + Sync),
) -> Option<Result<Value, ServerError>> {
    let p = if p.is_null() { json!({}) } else { p };
    let bad = |e: serde_json::Error| ServerError::BadParams(e.to_string());
    Some(match method {
        "task.list" => serde_json::from_value::<TaskListParams>(p)
            .map_err(bad)
            .map(|_| server.task_list()),
        "task.run" => serde_json::from_value::<TaskRunParams>(p)
            .map_err(bad)
            .and_then(|t| server.task_run(&t, conn, None, on_start, None, &|_| {})),
        _ => return None,
    })
}

/// `task_run`'s input schema.
pub fn run_input() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "A task name from task_list, or an xrun list of names: \"[lint, [-s, test, build]]\" (a list runs in parallel; -s makes it serial)."},
            "args": {"type": "array", "items": {"type": "string"}, "description": "The task's arguments ($@ of its scripts)."},
            "session": {"type": "string", "description": "Run in this session (cwd, variables); parallel scripts then take turns."},
            "timeout_ms": {"type": "integer", "minimum": 1, "description": "Per-script timeout (capped by the server's maximum)."}
        },
        "required": ["name"]
    })
}

/// `task_run`'s output schema.
pub fn run_output() -> Value {
    let mut v = json!({
        "type": "object",
        "properties": {
            "task": {"type": "string"},
            "passed": {"type": "boolean"},
            "exit_code": {"type": "integer", "description": "The first failure's status in list order (0: all passed)."},
            "failed": {"type": "array", "items": {"type": "string"}, "description": "The tasks that failed."},
            "runs": {"type": "array", "items": {"type": "object", "properties": {"task": {"type": "string"}, "passed": {"type": "boolean"}, "result": crate::schemas::result_output()}}}
        },
        "required": ["task", "passed", "exit_code", "failed", "runs", "provenance"]
    });
    crate::schemas::add_envelope(&mut v, true);
    v
}

/// `task_list`'s output schema.
pub fn list_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tasks": {"type": "array", "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "kind": {"type": "string"},
                "description": {"type": ["string", "null"]}, "origin": {"type": "string"}}}},
            "ignored": {"type": "array", "items": {"type": "string"}, "description": "Config files not trusted: their tasks are not loaded."}
        },
        "required": ["tasks"]
    })
}
