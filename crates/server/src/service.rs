//! The operations every face offers (exec, sessions, jobs, history), on one
//! shared [`Server`]. MCP and JSON-RPC are thin protocol layers over it.

use crate::error::ServerError;
use crate::exec::{ExecParams, quote_argv};
use crate::jobs::{Adopter, Jobs, signal_name};
use crate::sessions::Sessions;
use crate::settings::Settings;
use crate::shape::lock;
use safesh_core::session::BackgroundSink;
use safesh_core::{ApprovalChannel, Interrupter};
use safesh_policy::config::{Allow, Network};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Executes remembered for `history`.
const HISTORY: usize = 200;

/// `session_start` parameters.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct SessionStartParams {
    /// Working directory (default: the server's).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Environment variables to set.
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
    /// The connection that sent it (set by the face, never from JSON).
    #[serde(skip)]
    pub conn: String,
}

/// `session_end` parameters.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct SessionEndParams {
    /// The session.
    #[serde(alias = "session_id")]
    pub session: String,
    /// The connection that sent it (set by the face, never from JSON).
    #[serde(skip)]
    pub conn: String,
}

/// `session_update` parameters.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct SessionUpdateParams {
    /// The session.
    #[serde(alias = "session_id")]
    pub session: String,
    /// New working directory.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Environment variables to set.
    #[serde(default)]
    pub env: Option<BTreeMap<String, String>>,
    /// The connection that sent it (set by the face, never from JSON).
    #[serde(skip)]
    pub conn: String,
}

/// `job_start` parameters.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct JobStartParams {
    /// A bash script.
    #[serde(default)]
    pub script: Option<String>,
    /// A program (argv face).
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// Copy cwd and env from this session (the job is killed when it ends).
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
    /// Run despite a nudge (advisories only, as for `exec`).
    #[serde(default)]
    pub force: Option<bool>,
    /// The connection that sent it (set by the face, never from JSON).
    #[serde(skip)]
    pub conn: String,
}

/// `job_list` parameters.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct JobListParams {
    /// List this session's jobs (none: the connection's own, started without one).
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
    /// The connection that sent it (set by the face, never from JSON).
    #[serde(skip)]
    pub conn: String,
}

/// `job_output` / `job_follow` parameters.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct JobOutputParams {
    /// The job.
    pub job_id: String,
    /// The session the job belongs to (none: started without one).
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
    /// The connection that sent it (set by the face, never from JSON).
    #[serde(skip)]
    pub conn: String,
    /// Byte offset to read from (the previous call's `next_offset`).
    #[serde(default, alias = "offset")]
    pub since: Option<u64>,
    /// Most bytes to return (default: the output cap).
    #[serde(default)]
    pub max_bytes: Option<u64>,
    /// `job_follow`: longest wait in ms (default: the config's maximum timeout).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// `job_kill` parameters.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct JobKillParams {
    /// The job.
    pub job_id: String,
    /// Signal name (TERM by default).
    #[serde(default)]
    pub signal: Option<String>,
    /// The session the job belongs to (none: started without one).
    #[serde(default, alias = "session_id")]
    pub session: Option<String>,
    /// The connection that sent it (set by the face, never from JSON).
    #[serde(skip)]
    pub conn: String,
}

/// The shared state of one server: settings, sessions, jobs, history.
pub struct Server {
    /// Settings.
    pub settings: Arc<Settings>,
    /// Named sessions.
    pub sessions: Sessions,
    /// Background jobs (also those a script starts with `cmd &`).
    pub jobs: Arc<Jobs>,
    history: Mutex<VecDeque<Value>>,
    pub(crate) fresh: Arc<crate::pool::Pool>,
    /// Worker processes for sessionless requests (`Settings::worker`).
    workers: Option<crate::worker::Workers>,
    /// The model-facing redaction of `context.*` values (`context_face.rs`).
    pub(crate) context_redaction: std::sync::OnceLock<Option<Arc<crate::shape::Redaction>>>,
    /// Plans made on this server and the plan approvals (`project_face.rs`).
    pub(crate) projects: crate::project_face::Projects,
}

fn env_vec(env: Option<BTreeMap<String, String>>) -> Result<Vec<(String, String)>, ServerError> {
    let v: Vec<(String, String)> = env.unwrap_or_default().into_iter().collect();
    for (k, _) in &v {
        let ok = !k.is_empty()
            && !k.starts_with(|c: char| c.is_ascii_digit())
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ok {
            return Err(ServerError::BadParams(format!(
                "invalid environment variable name {k:?}"
            )));
        }
    }
    Ok(v)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Drop for Server {
    fn drop(&mut self) {
        // Remove the ready sessions' temp dirs now, not whenever the refill
        // thread lets go of the pool (the process may be gone by then).
        self.fresh.shutdown();
    }
}

impl Server {
    /// A server with these settings.
    pub fn new(settings: Settings) -> Arc<Server> {
        // It saves the same projects again and again: journals pay.
        safesh_core::keep_checkpoint_journals();
        let settings = Arc::new(settings);
        let jobs = Arc::new(Jobs::new(settings.clone()));
        let j = jobs.clone();
        // An expired session's jobs end with it, as with session_end.
        let st = settings.clone();
        let on_expire: crate::sessions::OnExpire = Arc::new(move |id: &str| {
            j.stop_session(id);
            crate::context_face::end_session(&st, id);
        });
        Arc::new(Server {
            sessions: Sessions::with_on_expire(settings.clone(), Some(on_expire)),
            jobs,
            fresh: crate::pool::Pool::new(settings.clone()),
            workers: settings
                .worker
                .clone()
                .map(|w| crate::worker::Workers::new(w, settings.max_sessions)),
            settings,
            history: Mutex::new(VecDeque::new()),
            context_redaction: Default::default(),
            projects: Default::default(),
        })
    }

    /// Runs one exec request (blocking). `on_start` gets the interrupter of the
    /// session it runs in, before the script starts.
    pub fn exec(
        &self,
        p: &ExecParams,
        on_start: &dyn Fn(Interrupter),
    ) -> Result<Value, ServerError> {
        self.exec_with(p, on_start, None)
    }

    /// [`Server::exec`] with a channel to the human: a command that needs an
    /// approval asks there (and waits) instead of being refused.
    pub fn exec_with(
        &self,
        p: &ExecParams,
        on_start: &dyn Fn(Interrupter),
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<Value, ServerError> {
        let script = p.script_text()?;
        // Bad assertions are refused before anything runs.
        crate::verify_face::check(p)?;
        let adopter = |session: Option<String>| -> Arc<dyn BackgroundSink> {
            Arc::new(Adopter {
                jobs: self.jobs.clone(),
                owner: crate::owner::scope(&p.conn, session.as_deref()),
                session,
            })
        };
        let mut v = match &p.session {
            Some(id) => {
                let entry = self.sessions.get(id, &p.conn)?;
                let mut guard = lock(&entry.session);
                let v = match (&entry.remote, guard.as_mut()) {
                    // The session's interpreter is in its worker process.
                    (Some(r), _) => r.exec(p, &self.settings, on_start, approver)?,
                    (None, Some(s)) => {
                        s.set_background_sink(Some(adopter(Some(id.clone()))));
                        s.set_approval_channel(approver);
                        let v = crate::exec::run(s, &script, p, &self.settings, on_start);
                        entry.remember_cwd(s.cwd());
                        v
                    }
                    (None, None) => return Err(ServerError::UnknownSession(id.clone())),
                };
                drop(guard);
                entry.touch();
                v
            }
            None if self.workers.is_some() && crate::worker::eligible(&script) => {
                let workers = self.workers.as_ref();
                match workers
                    .map(|w| crate::worker::exec(w, p, &self.settings, on_start, approver.clone()))
                {
                    Some(Ok(v)) => v,
                    Some(Err(e)) => crate::worker::unstarted(p, &self.settings, &e),
                    None => self.exec_here(&script, p, on_start, approver),
                }
            }
            // It starts a background job: a worker that lives as long as its jobs.
            None if self.workers.is_some() => {
                match self.open_remote(&p.conn, None, None, Vec::new()) {
                    Ok(r) => {
                        let v = r.exec(p, &self.settings, on_start, approver)?;
                        r.linger();
                        v
                    }
                    Err(e) => crate::worker::unstarted(p, &self.settings, &e),
                }
            }
            None => self.exec_here(&script, p, on_start, approver),
        };
        if let Some(id) = &p.session {
            v["session"] = json!(id);
        }
        self.remember(p, &script, &v);
        Ok(v)
    }

    /// [`Server::exec_with`] for a caller on the async runtime (the MCP faces).
    /// A sessionless request that its connection's idle worker can take now
    /// runs without a blocking thread (`worker_async.rs`: the round trip awaits
    /// the worker's pipes); any other in a blocking thread, as before.
    /// `on_start` gets the interrupter of the request (a second one if it moves
    /// to the blocking path).
    pub async fn exec_async(
        self: &Arc<Self>,
        p: ExecParams,
        on_start: Arc<dyn Fn(Interrupter) + Send + Sync>,
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<Value, ServerError> {
        let p = Arc::new(p);
        if p.session.is_none() && self.workers.is_some() {
            let script = p.script_text()?;
            crate::verify_face::check(&p)?;
            if crate::worker::eligible(&script) {
                let interrupter = Interrupter::detached();
                on_start(interrupter.clone());
                let ran = crate::worker_async::exec(self, &p, &interrupter, approver.clone());
                if let Some(v) = ran.await {
                    self.remember(&p, &script, &v);
                    return Ok(v);
                }
            }
        }
        let p = Arc::try_unwrap(p).unwrap_or_else(|a| (*a).clone());
        let server = self.clone();
        tokio::task::spawn_blocking(move || server.exec_with(&p, &*on_start, approver))
            .await
            .map_err(|e| ServerError::Io(std::io::Error::other(e.to_string())))?
    }

    /// The worker processes, when requests run in them.
    pub(crate) fn workers(&self) -> Option<&crate::worker::Workers> {
        self.workers.as_ref()
    }

    /// Records a finished exec in the history of its connection.
    fn remember(&self, p: &ExecParams, script: &str, v: &Value) {
        let mut h = lock(&self.history);
        h.push_back(json!({
            "conn": p.conn,
            "time_unix_ms": now_ms(),
            "session": p.session,
            "command": script,
            "intent": p.intent,
            "exit_code": v["exit_code"],
            "error": v["error"].get("code").cloned().unwrap_or(Value::Null),
            "duration_ms": v["duration_ms"],
        }));
        while h.len() > HISTORY {
            h.pop_front();
        }
    }

    /// Ends the idle worker processes kept for connection `conn`'s sessionless
    /// requests (the connection went away).
    pub(crate) fn end_workers(&self, conn: &str) {
        if let Some(w) = &self.workers {
            w.end_owner(conn);
        }
    }

    /// Whether requests run in worker processes.
    pub(crate) fn has_workers(&self) -> bool {
        self.workers.is_some()
    }

    /// A long-lived worker process for connection `conn` (a session's or a job's).
    pub(crate) fn open_remote(
        &self,
        conn: &str,
        session: Option<String>,
        cwd: Option<std::path::PathBuf>,
        env: Vec<(String, String)>,
    ) -> Result<Arc<crate::worker_remote::Remote>, ServerError> {
        let w = self
            .workers
            .as_ref()
            .ok_or_else(|| ServerError::Config("no worker processes".into()))?;
        crate::worker_remote::Remote::open(w, self.jobs.clone(), conn, session, cwd, env)
    }

    /// A sessionless request on a ready session of this process.
    fn exec_here(
        &self,
        script: &str,
        p: &ExecParams,
        on_start: &dyn Fn(Interrupter),
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Value {
        let mut s = self.fresh.take_for(&crate::owner::scope(&p.conn, None));
        s.set_background_sink(Some(Arc::new(Adopter {
            jobs: self.jobs.clone(),
            owner: crate::owner::scope(&p.conn, None),
            session: None,
        })));
        s.set_approval_channel(approver);
        let v = crate::exec::run(&mut s, script, p, &self.settings, on_start);
        s.set_approval_channel(None);
        self.fresh.give_back(s);
        v
    }

    /// Recent executes of connection `conn`, newest last; only those of
    /// `session` when given.
    pub fn history(&self, conn: &str, session: Option<&str>, limit: usize) -> Value {
        let h = lock(&self.history);
        let mut items: Vec<Value> = h
            .iter()
            .filter(|e| e["conn"].as_str() == Some(conn))
            .filter(|e| session.is_none_or(|s| e["session"].as_str() == Some(s)))
            .cloned()
            .map(|mut e| {
                if let Some(o) = e.as_object_mut() {
                    o.remove("conn");
                }
                e
            })
            .collect();
        let skip = items.len().saturating_sub(limit);
        items.drain(..skip);
        json!({"entries": items})
    }

    /// Starts a session: `{session, cwd}`.
    pub fn session_start(&self, p: SessionStartParams) -> Result<Value, ServerError> {
        let env = env_vec(p.env)?;
        let conn = p.conn.clone();
        let open = |id: &str, cwd, env| self.open_remote(&conn, Some(id.to_string()), cwd, env);
        let remote: Option<&crate::sessions::OpenRemote<'_>> = if self.workers.is_some() {
            Some(&open as &crate::sessions::OpenRemote<'_>)
        } else {
            None
        };
        let e = self
            .sessions
            .start_with(&p.conn, p.cwd.as_deref(), env, remote)?;
        let (cwd, _) = e.snapshot();
        Ok(
            json!({"session": e.id, "cwd": cwd.to_string_lossy(), "idle_timeout_ms": self.settings.idle.as_millis() as u64}),
        )
    }

    /// Ends a session and kills its jobs: `{session, ended: true}`.
    pub fn session_end(&self, p: SessionEndParams) -> Result<Value, ServerError> {
        self.sessions.end(&p.session, &p.conn)?;
        self.jobs.kill_session(&p.session);
        self.end_context_session(&p.session);
        Ok(json!({"session": p.session, "ended": true}))
    }

    /// Changes a session's cwd and env: `{session, cwd}`.
    pub fn session_update(&self, p: SessionUpdateParams) -> Result<Value, ServerError> {
        let env = env_vec(p.env)?;
        let cwd = self
            .sessions
            .update(&p.session, &p.conn, p.cwd.as_deref(), env)?;
        Ok(json!({"session": p.session, "cwd": cwd.to_string_lossy()}))
    }

    /// Starts a background job: `{job_id, pid, in_process, status, command, log_path}`.
    pub fn job_start(&self, p: JobStartParams) -> Result<Value, ServerError> {
        self.job_start_with(p, None)
    }

    /// [`Server::job_start`] with a channel to the human for the job's approvals.
    pub fn job_start_with(
        &self,
        p: JobStartParams,
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<Value, ServerError> {
        let ep = ExecParams {
            script: p.script.clone(),
            command: p.command.clone(),
            args: p.args.clone().map(crate::exec::ExecArgs::from),
            ..ExecParams::default()
        };
        let script = ep.script_text()?;
        let shown = match (&p.script, &p.command) {
            (Some(s), _) => s.clone(),
            _ => {
                let mut argv: Vec<String> = p.command.iter().cloned().collect();
                argv.extend(p.args.iter().flatten().cloned());
                quote_argv(&argv)
            }
        };
        let (cwd, env) = match &p.session {
            Some(id) => {
                let e = self.sessions.get(id, &p.conn)?;
                let (c, env) = e.snapshot();
                (Some(c), env)
            }
            None => (None, Vec::new()),
        };
        let owner = crate::owner::scope(&p.conn, p.session.as_deref());
        if self.workers.is_some() {
            // The job runs in a worker process of its own.
            let job = self.jobs.create(shown, p.session.clone(), owner)?;
            let started = self
                .open_remote(&p.conn, p.session.clone(), cwd, env)
                .and_then(|r| r.start_job(&job, script, p.force.unwrap_or(false), approver));
            if let Err(e) = started {
                job.end(Some((
                    126,
                    Some(safesh_core::Refusal::new(
                        safesh_core::ErrorCode::ExecutionError,
                        format!("cannot start the job's worker process: {e}"),
                    )),
                    safesh_label::Label::empty(),
                    safesh_label::Label::empty(),
                )));
                return Err(e);
            }
            return Ok(job.info());
        }
        let job = self.jobs.start(
            script,
            shown,
            p.session.clone(),
            cwd,
            env,
            crate::jobs::JobOptions {
                approver,
                force: p.force.unwrap_or(false),
                owner,
            },
        )?;
        Ok(job.info())
    }

    /// The jobs of the caller's scope (its session, else its connection):
    /// `{jobs: […]}`.
    pub fn job_list(&self, p: JobListParams) -> Value {
        let owner = crate::owner::scope(&p.conn, p.session.as_deref());
        json!({"jobs": self.jobs.list(&owner)})
    }

    /// The job `p.job_id` of the caller's scope.
    pub fn job_of(&self, p: &JobOutputParams) -> Result<Arc<crate::jobs::Job>, ServerError> {
        let owner = crate::owner::scope(&p.conn, p.session.as_deref());
        self.jobs.get(&p.job_id, &owner)
    }

    /// A job's output since an offset (does not wait).
    pub fn job_output(&self, p: JobOutputParams) -> Result<Value, ServerError> {
        let job = self.job_of(&p)?;
        let max = p
            .max_bytes
            .map_or(self.settings.cap, |m| m.clamp(1, 1 << 20) as usize);
        Ok(job.output(p.since.unwrap_or(0), max))
    }

    /// Kills a job: its info after it ended.
    pub fn job_kill(&self, p: JobKillParams) -> Result<Value, ServerError> {
        let owner = crate::owner::scope(&p.conn, p.session.as_deref());
        let job = self.jobs.get(&p.job_id, &owner)?;
        let sig = signal_name(p.signal.as_deref().unwrap_or("TERM"))?;
        job.kill(&sig, Duration::from_secs(5));
        Ok(job.info())
    }

    /// Waits for a job to end (at most `timeout_ms`, bounded by the config) and
    /// returns everything since `since`, shaped.
    pub fn job_follow(&self, p: JobOutputParams) -> Result<Value, ServerError> {
        let job = self.job_of(&p)?;
        let ms = self
            .settings
            .clamp_timeout(p.timeout_ms.unwrap_or(self.settings.max_timeout_ms));
        let ended = job.wait(Duration::from_millis(ms));
        let mut v = job.final_result(p.since.unwrap_or(0), self.settings.cap);
        if !ended {
            v["warnings"] = json!([format!(
                "the job is still running after {ms} ms; follow again from next_offset"
            )]);
        }
        Ok(v)
    }

    /// Stops everything: running requests, sessions and jobs.
    pub fn shutdown(&self) {
        self.fresh.shutdown();
        if let Some(w) = &self.workers {
            w.shutdown();
        }
        self.sessions.shutdown();
        self.jobs.shutdown();
    }

    /// A summary of the active policy for a model (the MCP server's instructions).
    pub fn instructions(&self) -> String {
        let c = self.settings.policy.config();
        let paths = |v: &[safesh_policy::config::PathEntry]| {
            v.iter()
                .map(|p| p.path.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut externals: Vec<String> = c
            .commands
            .iter()
            .filter_map(|r| match &r.allow {
                Some(Allow::All) => Some(r.key.clone()),
                Some(Allow::Subcommands(s)) => Some(format!("{} ({})", r.key, s.join(", "))),
                _ => None,
            })
            .collect();
        externals.sort();
        let network = match &c.sandbox.network {
            Network::Off => "off (no network for programs)".to_string(),
            Network::On => "on".to_string(),
            Network::Hosts(h) => format!("only these hosts: {}", h.join(", ")),
        };
        format!(
            "safesh is a safe shell. Send bash scripts to `exec` (or an argv to `run`): \
safesh parses them itself, runs common utilities in-process (cat, grep, sed, awk, jq, sort, \
find, head, tail, wc, cut, xargs, … GNU-compatible) and decides every command by policy \
before anything runs. A refusal comes back as an error result with `code`, \
`details.allowed` and a `suggestion`: follow it instead of retrying the same command.\n\
Readable roots: {read}. Writable roots: {write} (plus a private temp dir, $TMPDIR).\n\
External programs allowed: {ext}.\n\
Network: {network}.\n\
Output is capped at {cap} bytes (first and last KiB kept; `log_path` names a file with \
everything). Use session_start for state (cwd, variables, functions) across calls, and \
job_start / job_output / job_follow / job_kill for long-running commands. \
timeout_ms is capped at {max} ms.",
            read = paths(&c.sandbox.read),
            write = paths(&c.sandbox.write),
            ext = if externals.is_empty() {
                "none (in-process utilities only)".to_string()
            } else {
                externals.join("; ")
            },
            cap = self.settings.cap,
            max = self.settings.max_timeout_ms,
        )
    }
}
