//! `safesh rpc`: JSON-RPC 2.0 over stdin/stdout, one JSON object (or batch array)
//! per line. Refusals are part of the `execute` result (`error`); JSON-RPC errors
//! are for protocol problems only.
//!
//! Requests are served in order. When stdin ends, the requests already read are
//! served and the server exits; when the client goes away (stdout closed), the
//! running command is stopped and the server exits at once.

use crate::Server;
use crate::error::ServerError;
use crate::exec::ExecParams;
use crate::owner::Owned;
use crate::service::{
    JobKillParams, JobListParams, JobOutputParams, JobStartParams, SessionEndParams,
    SessionStartParams, SessionUpdateParams,
};
use crate::shape::lock;
use crate::wire::{Frame, read_frames};
use safesh_core::Interrupter;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Longest request line accepted (bytes): the limit every face shares; a longer
/// line gets -32700 and is skipped, never buffered.
pub const MAX_LINE: usize = crate::wire::MAX_REQUEST_BYTES;

pub use crate::wire::{INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR};

/// A JSON-RPC error.
#[derive(Debug)]
pub struct RpcError {
    /// The code.
    pub code: i64,
    /// What went wrong.
    pub message: String,
    /// More, for programs.
    pub data: Option<Value>,
}

impl RpcError {
    fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    fn to_json(&self) -> Value {
        let mut e = json!({"code": self.code, "message": self.message});
        if let Some(d) = &self.data {
            e["data"] = d.clone();
        }
        e
    }
}

impl From<ServerError> for RpcError {
    fn from(e: ServerError) -> RpcError {
        RpcError {
            code: e.rpc_code(),
            message: e.to_string(),
            data: Some(json!({"code": e.code()})),
        }
    }
}

/// One JSON-RPC endpoint over a [`Server`]; remembers the running request's
/// interrupter so a vanished client can stop it.
pub struct Rpc {
    server: Arc<Server>,
    current: Arc<Mutex<Option<Interrupter>>>,
    /// This client: what it starts is its own (see [`crate::owner`]).
    conn: String,
}

fn params<T: DeserializeOwned>(p: Value) -> Result<T, RpcError> {
    let p = if p.is_null() { json!({}) } else { p };
    if !p.is_object() {
        return Err(RpcError::new(INVALID_PARAMS, "params must be an object"));
    }
    serde_json::from_value(p)
        .map_err(|e| RpcError::new(INVALID_PARAMS, format!("invalid params: {e}")))
}

fn id_ok(id: &Value) -> bool {
    id.is_string() || id.is_number() || id.is_null()
}

impl Rpc {
    /// An endpoint over `server`.
    pub fn new(server: Arc<Server>) -> Rpc {
        Rpc {
            server,
            current: Arc::new(Mutex::new(None)),
            conn: crate::ids::short("c"),
        }
    }

    /// Stops the running request and everything the server runs.
    pub fn stop_all(&self) {
        if let Some(i) = lock(&self.current).as_ref() {
            i.interrupt();
        }
        self.server.shutdown();
    }

    /// Handles one line of input; returns the response line, if any.
    pub fn handle_line(&self, line: &str) -> Option<String> {
        self.handle_bytes(line.as_bytes())
    }

    /// Handles one line of raw input (not UTF-8, a NUL byte, not JSON: -32700
    /// with id null); returns the response line, if any.
    pub fn handle_bytes(&self, line: &[u8]) -> Option<String> {
        let msg: Value = match crate::wire::parse_line(line) {
            Ok(Some(v)) => v,
            Ok(None) => return None,
            Err(reply) => return Some(reply.to_string()),
        };
        match msg {
            Value::Array(items) => {
                if items.is_empty() {
                    return Some(
                        error_response(
                            Value::Null,
                            &RpcError::new(INVALID_REQUEST, "invalid request: empty batch"),
                        )
                        .to_string(),
                    );
                }
                let out: Vec<Value> = items
                    .into_iter()
                    .filter_map(|m| self.handle_message(m))
                    .collect();
                if out.is_empty() {
                    None
                } else {
                    Some(Value::Array(out).to_string())
                }
            }
            m => self.handle_message(m).map(|v| v.to_string()),
        }
    }

    /// Handles one request object; `None` for a notification.
    pub fn handle_message(&self, msg: Value) -> Option<Value> {
        let Value::Object(obj) = msg else {
            return Some(error_response(
                Value::Null,
                &RpcError::new(INVALID_REQUEST, "invalid request: not an object"),
            ));
        };
        let id = obj.get("id").cloned();
        let reply_id = id.clone().filter(id_ok).unwrap_or(Value::Null);
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Some(error_response(
                reply_id,
                &RpcError::new(
                    INVALID_REQUEST,
                    "invalid request: \"jsonrpc\" must be \"2.0\"",
                ),
            ));
        }
        if id.as_ref().is_some_and(|i| !id_ok(i)) {
            return Some(error_response(
                Value::Null,
                &RpcError::new(
                    INVALID_REQUEST,
                    "invalid request: id must be a string, a number or null",
                ),
            ));
        }
        let Some(method) = obj.get("method").and_then(Value::as_str) else {
            return Some(error_response(
                reply_id,
                &RpcError::new(
                    INVALID_REQUEST,
                    "invalid request: \"method\" must be a string",
                ),
            ));
        };
        let p = obj.get("params").cloned().unwrap_or(Value::Null);
        if !(p.is_null() || p.is_object() || p.is_array()) {
            return Some(error_response(
                reply_id,
                &RpcError::new(
                    INVALID_REQUEST,
                    "invalid request: \"params\" must be an object",
                ),
            ));
        }
        let r = self.call(method, p);
        // A notification (no id) gets no reply, whatever happened.
        id.as_ref()?;
        Some(match r {
            Ok(v) => json!({"jsonrpc": "2.0", "id": reply_id, "result": v}),
            Err(e) => error_response(reply_id, &e),
        })
    }

    fn exec(&self, p: &ExecParams) -> Result<Value, RpcError> {
        let cur = self.current.clone();
        let v = self.server.exec(p, &move |i| *lock(&cur) = Some(i))?;
        *lock(&self.current) = None;
        Ok(v)
    }

    /// The params of a request, owned by this connection.
    fn owned<T: DeserializeOwned + Owned>(&self, p: Value) -> Result<T, RpcError> {
        let mut t: T = params(p)?;
        t.set_conn(&self.conn);
        Ok(t)
    }

    /// Calls one method.
    pub fn call(&self, method: &str, p: Value) -> Result<Value, RpcError> {
        let s = &self.server;
        match method {
            "execute" => self.exec(&self.owned::<ExecParams>(p)?),
            "pipeline" => {
                let pp: crate::pipeline_face::PipelineParams = params(p)?;
                let cur = self.current.clone();
                let v = s.pipeline(&pp, &self.conn, None, &move |i| *lock(&cur) = Some(i), None);
                *lock(&self.current) = None;
                Ok(v?)
            }
            m @ ("task.run" | "task.list") => {
                let cur = self.current.clone();
                let on_start = move |i| *lock(&cur) = Some(i);
                let r = crate::task_face::rpc(s, m, p, &self.conn, &on_start);
                *lock(&self.current) = None;
                Ok(r.unwrap_or_else(|| Err(ServerError::BadParams(format!("no method {m}"))))?)
            }
            "commands.list" => Ok(s.commands_list(params(p)?)),
            "commands.describe" => Ok(s.commands_describe(params(p)?)?),
            "session.start" => Ok(s.session_start(self.owned::<SessionStartParams>(p)?)?),
            "session.end" => Ok(s.session_end(self.owned::<SessionEndParams>(p)?)?),
            "session.update" => Ok(s.session_update(self.owned::<SessionUpdateParams>(p)?)?),
            "job.start" => Ok(s.job_start(self.owned::<JobStartParams>(p)?)?),
            "job.list" => Ok(s.job_list(self.owned::<JobListParams>(p)?)),
            "job.output" => Ok(s.job_output(self.owned::<JobOutputParams>(p)?)?),
            "job.kill" => Ok(s.job_kill(self.owned::<JobKillParams>(p)?)?),
            "job.follow" => Ok(s.job_follow(self.owned::<JobOutputParams>(p)?)?),
            m if let Some(r) = crate::context_face::rpc(s, m, p.clone(), &self.conn) => Ok(r?),
            m if let Some(r) = crate::checkpoint_face::rpc(s, m, p.clone(), &self.conn) => Ok(r?),
            m if let Some(r) = crate::code_face::rpc(s, m, p.clone(), &self.conn) => Ok(r?),
            m if let Some(op) = m
                .strip_prefix("project.")
                .filter(|op| crate::project_face::OPS.contains(op)) =>
            {
                let pp: crate::project_face::ProjectParams = params(p)?;
                let cur = self.current.clone();
                let v = s.project(
                    op,
                    pp,
                    &self.conn,
                    None,
                    &move |i| *lock(&cur) = Some(i),
                    None,
                );
                *lock(&self.current) = None;
                Ok(v?)
            }
            m => Err(RpcError::new(
                METHOD_NOT_FOUND,
                format!(
                    "unknown method {m:?}; methods: execute, pipeline, commands.list, commands.describe, history, context.get|set|delete|list, checkpoint.save|restore|list|diff|delete, task.run|list, project.load|validate|plan|approve|reject|run|init, session.start|end|update, job.start|list|output|kill|follow"
                ),
            )),
        }
    }
}

fn error_response(id: Value, e: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": e.to_json()})
}

/// True once the reader of fd 1 has gone away (poll reports an error or hang-up).
fn stdout_gone() -> bool {
    let mut fds = libc::pollfd {
        fd: 1,
        events: 0,
        revents: 0,
    };
    // SAFETY: poll reads and writes only the one pollfd we pass, with a zero timeout.
    let n = unsafe { libc::poll(&mut fds, 1, 0) };
    n > 0 && (fds.revents & (libc::POLLERR | libc::POLLHUP)) != 0
}

/// Serves JSON-RPC on this process's stdin/stdout until stdin ends or the client
/// goes away. Returns the exit status.
///
/// One thread reads a request, answers it and reads the next: requests are
/// served in order anyway, and a reader thread handing each line to a serving
/// thread cost a second wake-up per request (`context.set`/`get` round trips
/// spent more in that hand-off than in the store). Stdin is read through
/// [`std::io::Stdin`] without holding its lock between reads.
pub fn serve_stdio(server: Arc<Server>) -> i32 {
    let rpc = Arc::new(Rpc::new(server));
    let gone = Arc::new(AtomicBool::new(false));
    {
        let rpc = rpc.clone();
        let gone = gone.clone();
        let _ = std::thread::Builder::new()
            .name("safesh-rpc-watch".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    if stdout_gone() {
                        gone.store(true, Ordering::SeqCst);
                        rpc.stop_all();
                        // Whatever is still running gets a moment to stop, then we go.
                        std::thread::sleep(std::time::Duration::from_secs(3));
                        std::process::exit(1);
                    }
                }
            });
    }
    // Requests run on a thread with the interpreter's stack (the settings may
    // set `on_calling_thread`).
    let worker = {
        let rpc = rpc.clone();
        std::thread::Builder::new()
            .name("safesh-rpc".into())
            .stack_size(crate::settings::SHELL_STACK)
            .spawn(move || {
                let input = std::io::BufReader::new(std::io::stdin());
                serve_frames(&rpc, input, &mut std::io::stdout().lock(), &gone)
            })
    };
    let status = match worker {
        Ok(h) => h.join().unwrap_or(1),
        Err(_) => 1,
    };
    rpc.stop_all();
    status
}

/// Reads requests from `input` and answers each on `out` before reading the
/// next, until `input` ends (0) or `out` or the client is gone (1).
fn serve_frames(rpc: &Rpc, input: impl BufRead, out: &mut dyn Write, gone: &AtomicBool) -> i32 {
    let mut status = 0;
    read_frames(input, MAX_LINE, |frame| {
        if gone.load(Ordering::SeqCst) {
            status = 1;
            return false;
        }
        let reply = match frame {
            Frame::Line(t) => rpc.handle_bytes(&t),
            Frame::TooLong(n) => Some(crate::wire::too_long(n).to_string()),
        };
        if let Some(r) = reply
            && (writeln!(out, "{r}").is_err() || out.flush().is_err())
        {
            status = 1;
            return false;
        }
        true
    });
    status
}

/// Serves JSON-RPC from any reader to any writer (tests, embedding).
pub fn serve<R: BufRead + Send + 'static>(
    server: Arc<Server>,
    input: R,
    out: &mut dyn Write,
) -> i32 {
    let rpc = Rpc::new(server);
    let status = serve_frames(&rpc, input, out, &AtomicBool::new(false));
    rpc.stop_all();
    status
}
