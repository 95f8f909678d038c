//! `safesh mcp`: the MCP server, over stdio (default) or streamable HTTP.
//!
//! Tools (DESIGN "Contracts"): `exec`, `run`, `session_start`, `session_end`,
//! `session_update`, `job_start`, `job_list`, `job_output`, `job_kill`,
//! `job_follow`. Results carry `structuredContent` (matching each tool's
//! `outputSchema`) plus a readable text part; a refusal is an `isError` result
//! carrying the refusal object. A client's `notifications/cancelled` stops the
//! running command; with a `progressToken`, long commands send progress.

use crate::Server;
use crate::error::ServerError;
use crate::exec::ExecParams;
use crate::owner::Owned;
use crate::schemas as sc;
use crate::service::{
    JobKillParams, JobListParams, JobOutputParams, JobStartParams, SessionEndParams,
    SessionStartParams, SessionUpdateParams,
};
use crate::shape::lock;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ErrorData, ServerHandler, ServiceExt};
use safesh_core::Interrupter;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The MCP handler: one per connection, all sharing one [`Server`].
#[derive(Clone)]
pub struct SafeshMcp {
    server: Arc<Server>,
    tools: Arc<Vec<Tool>>,
    /// This client when it is not an HTTP transport session (stdio).
    conn: Arc<str>,
}

fn obj(v: Value) -> Arc<serde_json::Map<String, Value>> {
    match v {
        Value::Object(m) => Arc::new(m),
        _ => Arc::new(serde_json::Map::new()),
    }
}

fn tool(name: &'static str, description: &'static str, input: Value, output: Value) -> Tool {
    Tool::new(name, description, obj(input)).with_raw_output_schema(obj(output))
}

/// The tools, with schemas and descriptions written for models.
pub fn tools() -> Vec<Tool> {
    vec![
        tool(
            "exec",
            "Run a bash script in safesh, a safe shell. Use it like a normal bash tool: pipes, redirections, loops, functions, here-docs. Common utilities (cat, grep, sed, awk, jq, sort, find, head, tail, wc, …) run in-process; other programs must be allowed by the policy. Output is capped (first and last KiB kept, `log_path` holds all of it). A refused command returns isError with `error.code`, `error.details.allowed` and `error.suggestion`: change the command as suggested instead of retrying it. Pass `session` to keep cwd, variables and functions between calls. A top-level `cmd &` becomes a background job: the call returns without waiting for it, and it shows in job_list (read it with job_output/job_follow, stop it with job_kill; it is killed when its session ends). `wait` in the same script still waits for it. If the script is stopped, `stopped` says why: `timeout` (timeout_ms passed, code TIMEOUT) or `cancelled` (you cancelled the request).",
            sc::exec_input(),
            sc::result_output(),
        ),
        tool(
            "run",
            "Run one program from an argv, with no shell parsing at all (no globs, quotes or variables): `command` plus `args`, each argument passed exactly. Same options and result as `exec`. Prefer it when arguments contain shell-special characters.",
            sc::run_input(),
            sc::result_output(),
        ),
        tool(
            "session_start",
            "Start a persistent shell session; returns its id. Pass the id as `session` to exec/run/job_start: the working directory, environment, shell variables and functions persist between calls. Sessions end after 30 minutes idle.",
            sc::session_start_input(false),
            sc::session_output(),
        ),
        tool(
            "session_end",
            "End a session: stops its running command, kills its background jobs and removes its temp files.",
            sc::session_end_input(),
            sc::session_end_output(),
        ),
        tool(
            "session_update",
            "Change a session's working directory and/or set environment variables.",
            sc::session_start_input(true),
            sc::session_output(),
        ),
        tool(
            "job_start",
            "Start a long-running script (or argv) in the background; returns a job_id at once (and `pid`: the host pid of the external program it runs in its sandbox, null with in_process=true while it only runs in-process commands). Read its output with job_output (poll) or job_follow (wait until it ends); stop it with job_kill. Jobs have no time limit.",
            sc::job_start_input(),
            sc::job_info_output(),
        ),
        tool(
            "job_list",
            "List background jobs (from job_start and from `cmd &` in exec scripts): id, pid, status (running/exited/killed), runtime, exit code, command.",
            sc::empty_input(),
            sc::job_list_output(),
        ),
        tool(
            "job_output",
            "Read a background job's new output since a byte offset (start with since=0, then pass next_offset). Does not wait.",
            sc::job_output_input(false),
            sc::job_output_output(),
        ),
        tool(
            "job_kill",
            "Stop a background job (signal TERM by default; KILL, INT, HUP… are accepted). Returns the job's final status.",
            sc::job_kill_input(),
            sc::job_info_output(),
        ),
        tool(
            "job_follow",
            "Wait for a background job to finish and return its output since `since` (capped like exec). Streams new output as progress notifications while it runs, if the client asked for progress.",
            sc::job_output_input(true),
            sc::job_follow_output(),
        ),
    ]
    .into_iter()
    .chain(crate::context_face::tools())
    .chain(crate::checkpoint_face::tools())
    .chain(crate::commands::tools())
    .chain(runtime_tools::tools())
    .chain(project_tools::tools())
    .chain(std::iter::once(crate::code_face::tool()))
    .collect()
}

/// A readable text for an exec-style result.
fn exec_text(v: &Value) -> String {
    let mut out = String::new();
    for k in ["output", "stdout", "stderr"] {
        if let Some(s) = v.get(k).and_then(Value::as_str) {
            if v.get("stdout").is_some() && v.get("stderr").is_some() {
                out.push_str(&format!("[{k}]\n"));
            }
            out.push_str(s);
            if !s.is_empty() && !s.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        let code = e["code"].as_str().unwrap_or("ERROR");
        // The shell already printed `safesh: CODE: message` into the output.
        let printed = out.contains(&format!("safesh: {code}: "));
        if !printed {
            out.push_str(&format!(
                "REFUSED {}: {}\n",
                e["code"].as_str().unwrap_or("ERROR"),
                e["message"].as_str().unwrap_or("")
            ));
        }
        if let Some(a) = e["details"]["allowed"].as_array().filter(|a| !a.is_empty()) {
            let list: Vec<&str> = a.iter().filter_map(Value::as_str).collect();
            out.push_str(&format!("allowed: {}\n", list.join(", ")));
        }
        if let Some(s) = e["suggestion"].as_str().filter(|_| !printed) {
            out.push_str(&format!("suggestion: {s}\n"));
        }
    }
    out.push_str(&format!("[exit {}", v["exit_code"]));
    if v["truncated"] == json!(true) {
        out.push_str(&format!("; truncated, {} bytes in all", v["total_bytes"]));
        if let Some(p) = v["log_path"].as_str() {
            out.push_str(&format!("; full output: {p}"));
        }
    }
    out.push(']');
    if let Some(w) = v["warnings"].as_array().filter(|w| !w.is_empty()) {
        let list: Vec<&str> = w.iter().filter_map(Value::as_str).collect();
        out.push_str(&format!("\nwarnings: {}", list.join("; ")));
    }
    out
}

fn result(v: Value, text: String, is_error: bool) -> CallToolResponse {
    let mut r = if is_error {
        CallToolResult::error(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::success(vec![ContentBlock::text(text)])
    };
    r.structured_content = Some(v);
    r.into()
}

fn server_error(e: &ServerError) -> CallToolResponse {
    let v = json!({"error": e.to_json()});
    result(v, format!("{}: {e}", e.code()), true)
}

fn parse<T: DeserializeOwned + Owned>(args: &Value, conn: &str) -> Result<T, ServerError> {
    let mut t: T =
        serde_json::from_value(args.clone()).map_err(|e| ServerError::BadParams(e.to_string()))?;
    t.set_conn(conn);
    Ok(t)
}

/// The connection of an MCP-over-HTTP transport session (`Mcp-Session-Id`).
pub fn http_conn(session_id: &str) -> String {
    format!("mcp-{session_id}")
}

fn json_result(r: Result<Value, ServerError>) -> CallToolResponse {
    match r {
        Ok(v) => {
            let text = v.to_string();
            result(v, text, false)
        }
        Err(e) => server_error(&e),
    }
}

impl SafeshMcp {
    /// A handler over `server`.
    pub fn new(server: Arc<Server>) -> SafeshMcp {
        SafeshMcp {
            server,
            tools: Arc::new(tools()),
            conn: crate::ids::short("c").into(),
        }
    }

    /// The caller's connection: its HTTP transport session (rmcp routed the
    /// request by that header, so it is the session's own), else this handler's.
    fn conn_of(&self, ctx: &RequestContext<RoleServer>) -> String {
        ctx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.headers.get("mcp-session-id"))
            .and_then(|v| v.to_str().ok())
            .map_or_else(|| self.conn.to_string(), http_conn)
    }

    /// Runs an exec ([`Server::exec_async`]: on the runtime when its
    /// connection's idle worker can take it, else in a blocking thread);
    /// interrupts it on cancellation and sends progress (once a second) when
    /// the client gave a progress token.
    async fn exec(
        &self,
        p: ExecParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Value, ServerError> {
        let slot: Arc<Mutex<Option<Interrupter>>> = Arc::new(Mutex::new(None));
        let server = self.server.clone();
        let s2 = slot.clone();
        // A client that can show its human a form answers approvals as they come up.
        let approver = elicit::ElicitationApprover::for_peer(&ctx.peer)
            .map(|a| Arc::new(a) as Arc<dyn safesh_core::ApprovalChannel>);
        let on_start = Arc::new(move |i| *lock(&s2) = Some(i));
        let task = server.exec_async(p, on_start, approver);
        let mut task = std::pin::pin!(task);
        let token = ctx.meta.get_progress_token();
        let started = Instant::now();
        let mut tick = tokio::time::interval_at(
            tokio::time::Instant::now() + Duration::from_secs(1),
            Duration::from_secs(1),
        );
        let mut cancelled = false;
        let mut again = tokio::time::interval(Duration::from_millis(20));
        loop {
            tokio::select! {
                r = &mut task => return r,
                _ = ctx.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    if let Some(i) = lock(&slot).as_ref() { i.interrupt(); }
                }
                _ = again.tick(), if cancelled => {
                    // Until the request ends: an interrupt before it started is cleared.
                    if let Some(i) = lock(&slot).as_ref() { i.interrupt(); }
                }
                _ = tick.tick(), if token.is_some() => {
                    if let Some(t) = &token {
                        let secs = started.elapsed().as_secs();
                        let _ = ctx.peer.notify_progress(
                            ProgressNotificationParam::new(t.clone(), secs as f64)
                                .with_message(format!("running for {secs} s")),
                        ).await;
                    }
                }
            }
        }
    }

    /// `job_follow`: progress notifications with new output, then the final result.
    async fn follow(
        &self,
        p: JobOutputParams,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Value, ServerError> {
        let job = self.server.job_of(&p)?;
        let token = ctx.meta.get_progress_token();
        let since = p.since.unwrap_or(0);
        let max_ms = self
            .server
            .settings
            .clamp_timeout(p.timeout_ms.unwrap_or(self.server.settings.max_timeout_ms));
        let deadline = Instant::now() + Duration::from_millis(max_ms);
        let mut offset = since;
        loop {
            let j = job.clone();
            let o = offset;
            let ended = tokio::select! {
                r = tokio::task::spawn_blocking(move || {
                    j.wait_output(o, Duration::from_millis(500));
                    j.output(o, 4096)
                }) => r.map_err(|e| ServerError::Io(std::io::Error::other(e.to_string())))?,
                _ = ctx.ct.cancelled() => break,
            };
            let next = ended["next_offset"].as_u64().unwrap_or(offset);
            if next > offset {
                if let Some(t) = &token {
                    let _ = ctx
                        .peer
                        .notify_progress(
                            ProgressNotificationParam::new(t.clone(), next as f64)
                                .with_message(ended["data"].as_str().unwrap_or("").to_string()),
                        )
                        .await;
                }
                offset = next;
            }
            let running = ended["status"] == json!("running");
            if (!running && ended["more"] != json!(true)) || Instant::now() >= deadline {
                break;
            }
        }
        let cap = self.server.settings.cap;
        let j = job.clone();
        tokio::task::spawn_blocking(move || j.final_result(since, cap))
            .await
            .map_err(|e| ServerError::Io(std::io::Error::other(e.to_string())))
    }

    async fn dispatch(
        &self,
        name: &str,
        args: Value,
        ctx: &RequestContext<RoleServer>,
    ) -> Option<CallToolResponse> {
        let s = &self.server;
        let conn = self.conn_of(ctx);
        let conn = conn.as_str();
        Some(match name {
            "exec" | "run" => {
                let mut p: ExecParams = match parse(&args, conn) {
                    Ok(p) => p,
                    Err(e) => return Some(server_error(&e)),
                };
                let problem = if name == "exec" {
                    p.command = None;
                    p.args = None;
                    p.script
                        .is_none()
                        .then_some("`exec` needs `script` (a bash script); use `run` for an argv")
                } else {
                    p.script = None;
                    p.command
                        .is_none()
                        .then_some("`run` needs `command` (a program name) and optional `args`")
                };
                if let Some(msg) = problem {
                    return Some(server_error(&ServerError::BadParams(msg.into())));
                }
                p.face = Some("mcp");
                match self.exec(p, ctx).await {
                    Ok(v) => {
                        let is_error = !v["error"].is_null();
                        let text = exec_text(&v);
                        result(v, text, is_error)
                    }
                    Err(e) => server_error(&e),
                }
            }
            "session_start" => json_result(
                parse::<SessionStartParams>(&args, conn).and_then(|p| s.session_start(p)),
            ),
            "session_end" => {
                json_result(parse::<SessionEndParams>(&args, conn).and_then(|p| s.session_end(p)))
            }
            "session_update" => json_result(
                parse::<SessionUpdateParams>(&args, conn).and_then(|p| s.session_update(p)),
            ),
            "job_start" => {
                let approver = elicit::ElicitationApprover::for_peer(&ctx.peer)
                    .map(|a| Arc::new(a) as Arc<dyn safesh_core::ApprovalChannel>);
                json_result(
                    parse::<JobStartParams>(&args, conn)
                        .and_then(|p| s.job_start_with(p, approver)),
                )
            }
            "job_list" => json_result(parse::<JobListParams>(&args, conn).map(|p| s.job_list(p))),
            "job_output" => {
                json_result(parse::<JobOutputParams>(&args, conn).and_then(|p| s.job_output(p)))
            }
            "job_kill" => {
                let server = s.clone();
                let r = match parse::<JobKillParams>(&args, conn) {
                    Ok(p) => tokio::task::spawn_blocking(move || server.job_kill(p))
                        .await
                        .unwrap_or_else(|e| {
                            Err(ServerError::Io(std::io::Error::other(e.to_string())))
                        }),
                    Err(e) => Err(e),
                };
                json_result(r)
            }
            "job_follow" => match parse::<JobOutputParams>(&args, conn) {
                Ok(p) => match self.follow(p, ctx).await {
                    Ok(v) => {
                        let text = exec_text(&v);
                        result(v, text, false)
                    }
                    Err(e) => server_error(&e),
                },
                Err(e) => server_error(&e),
            },
            "commands_list" => json_result(
                serde_json::from_value(args)
                    .map_err(|e| ServerError::BadParams(e.to_string()))
                    .map(|p| s.commands_list(p)),
            ),
            "commands_describe" => json_result(
                serde_json::from_value(args)
                    .map_err(|e| ServerError::BadParams(e.to_string()))
                    .and_then(|p| s.commands_describe(p)),
            ),
            "pipeline" | "task_run" | "task_list" => {
                let approver = elicit::ElicitationApprover::for_peer(&ctx.peer)
                    .map(|a| Arc::new(a) as Arc<dyn safesh_core::ApprovalChannel>);
                runtime_tools::dispatch(s, name, &args, conn, ctx, approver).await?
            }
            n if n.starts_with("project_") => {
                let approver = elicit::ElicitationApprover::for_peer(&ctx.peer)
                    .map(|a| Arc::new(a) as Arc<dyn safesh_core::ApprovalChannel>);
                project_tools::dispatch(s, name, &args, conn, ctx, approver).await?
            }
            "code" => match crate::code_face::mcp(s.clone(), args, conn.to_string()).await {
                Ok(v) => {
                    let is_error = !v["error"].is_null();
                    let text = exec_text(&v);
                    result(v, text, is_error)
                }
                Err(e) => server_error(&e),
            },
            n if n.starts_with("checkpoint_") => json_result(
                crate::checkpoint_face::mcp(s.clone(), name, args, conn.to_string()).await?,
            ),
            _ => json_result(
                crate::context_face::mcp(s.clone(), name, args, conn.to_string()).await?,
            ),
        })
    }
}

impl ServerHandler for SafeshMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("safesh", env!("CARGO_PKG_VERSION")))
            .with_instructions(self.server.instructions())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items((*self.tools).clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        match self.dispatch(&request.name, args, &context).await {
            Some(r) => Ok(r),
            None => Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?}; tools: exec, run, session_start, session_end, session_update, job_start, job_list, job_output, job_kill, job_follow, context_get, context_set, context_delete, context_list, history, checkpoint_save, checkpoint_restore, checkpoint_list, checkpoint_diff, checkpoint_delete, pipeline, task_run, task_list, commands_list, commands_describe, code",
                    request.name
                ),
                None,
            )),
        }
    }
}

/// Serves MCP on this process's stdin/stdout until the client disconnects, then
/// stops everything that still runs. Returns the exit status.
pub async fn serve_stdio(server: Arc<Server>) -> i32 {
    let handler = SafeshMcp::new(server.clone());
    let (input, output, writer) = stdio::transport();
    let status = match handler.serve((input, output)).await {
        Ok(running) => match running.waiting().await {
            Ok(_) => 0,
            Err(e) => {
                eprintln!("safesh mcp: {e}");
                1
            }
        },
        Err(e) => {
            eprintln!("safesh mcp: {e}");
            1
        }
    };
    // Every reply rmcp wrote reaches the client before the process ends.
    let _ = tokio::time::timeout(Duration::from_secs(5), writer).await;
    let s = server.clone();
    let _ = tokio::task::spawn_blocking(move || s.shutdown()).await;
    status
}

pub mod elicit;
pub mod http;
pub mod http_sessions;
pub mod project_tools;
pub mod runtime_tools;
pub mod stdio;

/// `safesh mcp`: serves stdio, or HTTP when `http` names an address (with the
/// token from `token_file`, else a new one printed on stderr). Blocks until the
/// client goes away; returns the exit status. Its threads have
/// [`crate::settings::SHELL_STACK`] of stack, so the server's settings may set
/// `on_calling_thread`.
pub fn run(server: Arc<Server>, http: Option<&str>, token_file: Option<&std::path::Path>) -> i32 {
    use std::io::Write;
    let fail = |msg: String| {
        let _ = writeln!(std::io::stderr(), "safesh: mcp: {msg}");
        2
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Blocking threads run scripts on their own stack (Settings::on_calling_thread).
        .thread_stack_size(crate::settings::SHELL_STACK)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => return fail(format!("cannot start the runtime: {e}")),
    };
    let status = rt.block_on(async move {
        let Some(addr) = http else {
            return serve_stdio(server).await;
        };
        let addr = match http::parse_addr(addr) {
            Ok(a) => a,
            Err(e) => return fail(format!("--http: {e}")),
        };
        let (token, from) = match http::load_token(token_file) {
            Ok(t) => t,
            Err(e) => return fail(format!("token file: {e}")),
        };
        let listener = match tokio::net::TcpListener::bind(addr).await {
            Ok(l) => l,
            Err(e) => return fail(format!("cannot listen on {addr}: {e}")),
        };
        let bound = listener.local_addr().unwrap_or(addr);
        let mut err = std::io::stderr();
        let _ = writeln!(err, "safesh mcp: listening on http://{bound}/mcp");
        match from {
            Some(p) => {
                let _ = writeln!(err, "safesh mcp: bearer token in {}", p.display());
            }
            None => {
                let _ = writeln!(err, "safesh mcp: bearer token: {token}");
            }
        }
        match http::serve(server.clone(), listener, token).await {
            Ok(()) => 0,
            Err(e) => {
                let _ = writeln!(err, "safesh mcp: {e}");
                1
            }
        }
    });
    // A command still running in a blocking thread must not keep the process alive.
    rt.shutdown_timeout(Duration::from_secs(1));
    status
}
