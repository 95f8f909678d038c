//! The isolation model: a request runs in a worker process, so a failure no code
//! can catch (an allocation abort, a stack overflow, a hang that ignores the
//! deadline) costs that request, never the server, and the kernel binds what
//! in-process work may take (the worker's `RLIMIT_AS` from `[limits]
//! memory_mb`; the parent kills it past the request's deadline).
//!
//! The worker is the same binary re-executed in a hidden mode ([`WorkerSpawn`];
//! `safesh __worker`, see `worker_main.rs`). They speak JSON lines over the
//! worker's stdin and stdout (one object per line; `serde_json` never writes a
//! raw newline inside one):
//!
//! ```text
//! parent → worker   {"type":"exec","params":{…ExecParams…},"ask":true,"conn":"…"}   a request
//!                   {"type":"cancel"}                                     the client cancelled
//!                   {"type":"answer","id":"…","answer":"granted|denied|unanswered"}
//! worker → parent   {"type":"ready","temp_dir":"…"}                       first: its session's $TMPDIR
//!                   {"type":"ask","question":{…}}                         an approval to ask
//!                   {"type":"result","result":{…the contract's Result…}}  the request's end
//! ```
//!
//! The worker shapes the result itself (cap, spill file, labels, redaction), so
//! the parent forwards it untouched. This module runs sessionless `exec`/`run`
//! (MCP) and `execute` (JSON-RPC) requests whose script starts no background
//! job. After a result the worker waits for another `exec` frame: the server
//! keeps it for the same owner (the request's connection) and sends it that
//! owner's next sessionless request, which runs in a fresh session
//! (`worker_fresh.rs`); the end of its input ends it. From the async runtime
//! (the MCP faces), a request its owner's idle worker can take goes there
//! without a blocking thread (`worker_async.rs`, over `worker_pipes.rs`); the
//! conversation after the request is `worker_converse.rs`. Shell sessions,
//! `job.start` jobs and requests that start `cmd &` run in long-lived workers
//! (first frame `open`, see `worker_remote.rs` and `worker_session.rs`), which
//! report their jobs to the server's job table.

use crate::error::ServerError;
use crate::exec::ExecParams;
use crate::settings::Settings;
use crate::worker_converse::{Ended, converse};
use crate::worker_pipes::Pipes;
use safesh_core::{
    ApprovalAnswer, ApprovalChannel, ApprovalQuestion, ErrorCode, ExecOutcome, Interrupter, Refusal,
};
use safesh_label::Label;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, UNIX_EPOCH};

/// How a server starts a worker: `program args…` (the safesh binary with
/// `--config FILE __worker`), in the server's cwd and environment.
#[derive(Clone, Debug)]
pub struct WorkerSpawn {
    /// The executable (the running safesh binary).
    pub program: PathBuf,
    /// Its arguments, ending with the hidden mode's name.
    pub args: Vec<OsString>,
}

/// After the request's own deadline, how long the worker has to answer before it
/// is killed (the core stops at the deadline; this is for work that does not).
pub(crate) const GRACE: Duration = Duration::from_secs(5);
/// How often the parent looks at cancellation and the deadline while it waits.
pub(crate) const TICK: Duration = Duration::from_millis(50);

/// An approval question on the wire.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Question {
    pub(crate) id: String,
    pub(crate) commit_point: String,
    pub(crate) action: String,
    pub(crate) target: String,
    pub(crate) reason: String,
    pub(crate) rule: String,
    pub(crate) expires_ms: u64,
}

impl Question {
    pub(crate) fn from_core(q: &ApprovalQuestion) -> Question {
        Question {
            id: q.id.clone(),
            commit_point: q.commit_point.clone(),
            action: q.action.clone(),
            target: q.target.clone(),
            reason: q.reason.clone(),
            rule: q.rule.clone(),
            expires_ms: q
                .expires
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
        }
    }

    pub(crate) fn to_core(&self) -> ApprovalQuestion {
        ApprovalQuestion {
            id: self.id.clone(),
            commit_point: self.commit_point.clone(),
            action: self.action.clone(),
            target: self.target.clone(),
            reason: self.reason.clone(),
            rule: self.rule.clone(),
            expires: UNIX_EPOCH + Duration::from_millis(self.expires_ms),
        }
    }
}

/// Parent → worker.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum ToWorker {
    /// The request (first line, once); `ask`: the parent has a channel to the human.
    /// `conn`: the connection that sent it (never read from the client; the
    /// worker's spill files go to that connection's directory).
    Exec {
        params: Box<ExecParams>,
        ask: bool,
        #[serde(default)]
        conn: String,
        /// A pipeline step's stdin (not part of the client's params).
        #[serde(default)]
        piped: Option<crate::piped::Piped>,
        /// Keep the raw stdout for the next step, up to this many bytes.
        #[serde(default)]
        pipe_stdout: Option<usize>,
    },
    /// Stop the request.
    Cancel,
    /// The human's answer to question `id`.
    Answer { id: String, answer: String },
    /// First frame of a long-lived worker (a shell session, a job): its place
    /// and owner. Later frames: `exec`, `update`, `job`, `checkpoint`, `kill_job`.
    Open {
        cwd: Option<PathBuf>,
        env: Vec<(String, String)>,
        conn: String,
        session: Option<String>,
    },
    /// Change the session's cwd and environment (`session.update`).
    Update {
        cwd: Option<PathBuf>,
        env: Vec<(String, String)>,
    },
    /// Run `script` as background job `id` (`job.start`), streaming its output.
    Job {
        id: String,
        script: String,
        force: bool,
        ask: bool,
    },
    /// A checkpoint operation in the session (`checkpoint.*`).
    Checkpoint { op: String, params: Value },
    /// Stop background job `id` of this worker.
    KillJob { id: String },
    /// The server's answer to `job_start`: `error` when it refused the job.
    JobAck { id: String, error: Option<Refusal> },
    /// Run a `code` request in the session (`code_face.rs`); `vars` is its
    /// `$session.vars` (JSON text and label). Answered by `result`, which
    /// carries the vars after the run under `code_vars`.
    Code {
        params: Box<crate::code_face::CodeParams>,
        vars: Option<(String, Label)>,
        face: String,
    },
}

/// Worker → parent.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum FromWorker {
    /// The worker's session is made; its temp dir, removed by the server if the
    /// worker dies without a result (it cannot clean up after an abort).
    Ready { temp_dir: Option<PathBuf> },
    /// Ask the human.
    Ask { question: Question },
    /// The shaped result (last line).
    Result { result: Value },
    /// The session's cwd after an `update`.
    Updated { cwd: PathBuf },
    /// A checkpoint operation's answer: a value, a usage error, or a refusal.
    Reply {
        ok: Option<Value>,
        invalid: Option<String>,
        refused: Option<Refusal>,
    },
    /// A background job (`cmd &`) is starting; the server answers `job_ack`.
    JobStart { id: String, command: String },
    /// Output of job `id` (`text` when UTF-8, else `bytes`) and its label.
    JobOut {
        id: String,
        text: Option<String>,
        bytes: Option<Vec<u8>>,
        label: Label,
    },
    /// Job `id` started a sandboxed program: its host pid.
    JobPid { id: String, pid: u32 },
    /// Job `id` ended.
    JobEnd {
        id: String,
        exit_code: i32,
        error: Option<Refusal>,
        label: Label,
        error_label: Label,
    },
}

pub(crate) fn answer_word(a: ApprovalAnswer) -> &'static str {
    match a {
        ApprovalAnswer::Granted => "granted",
        ApprovalAnswer::Denied => "denied",
        ApprovalAnswer::Unanswered => "unanswered",
    }
}

pub(crate) fn answer_of(word: &str) -> ApprovalAnswer {
    match word {
        "granted" => ApprovalAnswer::Granted,
        "denied" => ApprovalAnswer::Denied,
        _ => ApprovalAnswer::Unanswered,
    }
}

/// True when `script` may run in a worker: it starts no background job. A text
/// check, on the safe side: any `&` that is not part of `&&`, `>&`, `<&` or
/// `&>` keeps the request in the server (a quoted `&` too).
pub fn eligible(script: &str) -> bool {
    let b = script.as_bytes();
    (0..b.len()).filter(|&i| b[i] == b'&').all(|i| {
        let prev = i.checked_sub(1).map(|j| b[j]);
        let next = b.get(i + 1).copied();
        matches!(prev, Some(b'&' | b'>' | b'<')) || matches!(next, Some(b'&' | b'>'))
    })
}

pub(crate) fn send(stdin: &mut ChildStdin, frame: &ToWorker) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(frame).map_err(std::io::Error::other)?;
    line.push(b'\n');
    stdin.write_all(&line)?;
    stdin.flush()
}

/// Waits up to `d` for `fd` to be readable.
pub(crate) fn readable(fd: i32, d: Duration) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, its count, a bounded timeout.
    let n = unsafe { libc::poll(&raw mut p, 1, d.as_millis() as libc::c_int) };
    n > 0
}

/// The result of a request no worker process could be started for: it did
/// not run. Never run in the server instead — isolation a request could switch
/// off by exhausting processes or memory would be no isolation.
pub(crate) fn unstarted(p: &ExecParams, settings: &Settings, why: &ServerError) -> Value {
    let mut v = failed(
        p,
        settings,
        ErrorCode::ExecutionError,
        format!("no worker process could be started for the request ({why}); it did not run"),
        1,
    );
    v["error"]["suggestion"] = serde_json::json!(
        "retry when fewer requests or jobs are running; if it persists, ask the human to check \
         the machine's process and memory limits"
    );
    v
}

/// The result of a request its worker could not finish: the contract's Result
/// with `error` saying what happened to the worker (nothing of the server).
pub(crate) fn failed(
    p: &ExecParams,
    settings: &Settings,
    code: ErrorCode,
    msg: String,
    exit: i32,
) -> Value {
    let capture = crate::exec::capture(p, settings);
    let error = Refusal::new(code, msg)
        .rule(if code == ErrorCode::Timeout {
            "timeout_ms"
        } else {
            "worker"
        })
        .suggest(
            "the server is fine and answers the next request; make the command smaller \
             (less memory, less output, fewer steps) or split it",
        );
    let outcome = ExecOutcome {
        exit_code: exit,
        stdout: Vec::new(),
        stderr: Vec::new(),
        stdout_total: 0,
        stderr_total: 0,
        truncated: false,
        label: Label::empty(),
        status_label: Label::empty(),
        error_label: Label::empty(),
        warnings: Vec::new(),
        error: Some(error),
        duration_ms: 0,
    };
    let mut v = capture.result(&outcome);
    if code == ErrorCode::Timeout {
        v["stopped"] = serde_json::json!("timeout");
    }
    v
}

/// What ended a worker that gave no result.
pub(crate) fn describe(child: &mut Child) -> (String, i32) {
    match child.wait() {
        Ok(st) => match st.signal() {
            Some(sig) => {
                let why = match sig {
                    libc::SIGABRT => {
                        " (SIGABRT: most often an allocation that failed, e.g. past [limits] memory_mb)"
                    }
                    libc::SIGSEGV => " (SIGSEGV: most often a stack overflow)",
                    libc::SIGKILL => " (SIGKILL)",
                    _ => "",
                };
                (
                    format!("the request's worker process was killed by signal {sig}{why}"),
                    128 + sig,
                )
            }
            None => (
                format!(
                    "the request's worker process exited with status {} without a result",
                    st.code().unwrap_or(-1)
                ),
                st.code().unwrap_or(1),
            ),
        },
        Err(e) => (format!("the request's worker process was lost: {e}"), 1),
    }
}

fn start(spawn: &WorkerSpawn) -> std::io::Result<Child> {
    let mut cmd = Command::new(&spawn.program);
    cmd.args(&spawn.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    // SAFETY: prctl is async-signal-safe; it only sets this process's own flag.
    unsafe {
        cmd.pre_exec(|| {
            // The worker ends with the server (with the thread that started it:
            // a spare whose thread ended is found dead and replaced).
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// Requests a reused worker serves before it is retired (a fresh process
/// bounds what a long life may accumulate: allocator fragmentation, leaks).
const MAX_SERVED: u32 = 10_000;

/// A worker that answered a request of its owner and waits for the next one
/// (`worker_fresh.rs`: each runs in a fresh session).
#[derive(Debug)]
pub(crate) struct Held {
    pub(crate) child: Child,
    /// Its stdin and stdout (non-blocking: driven from a blocking thread or
    /// from the async runtime, `worker_async.rs`).
    pub(crate) pipes: Pipes,
    /// The temp dir of its first session (its later ones are its siblings,
    /// named after its pid too): removed if it dies without cleaning up.
    pub(crate) temp_dir: Option<PathBuf>,
    served: u32,
    idle_since: Instant,
}

impl Held {
    fn new(mut child: Child) -> std::io::Result<Held> {
        let pipes = match (child.stdin.take(), child.stdout.take()) {
            (Some(stdin), Some(stdout)) => Pipes::new(stdin, stdout),
            _ => Err(std::io::Error::other("worker pipes")),
        };
        match pipes {
            Ok(pipes) => Ok(Held {
                child,
                pipes,
                temp_dir: None,
                served: 0,
                idle_since: Instant::now(),
            }),
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                Err(e)
            }
        }
    }

    /// Ends it: the end of its input makes it exit and remove its temp dirs;
    /// reaped off the caller's path.
    pub(crate) fn retire(self) {
        let Held {
            mut child, pipes, ..
        } = self;
        drop(pipes);
        let _ = std::thread::Builder::new()
            .name("safesh-worker-reap".into())
            .spawn(move || child.wait());
    }
}

/// A server's workers: one spare is started ahead, so a request finds a worker
/// that has loaded the policy and made its session already (the start-up runs
/// while the client thinks, not while it waits).
///
/// A worker that answered a sessionless request is kept for its owner (the
/// request's connection: an MCP-over-HTTP transport session, a JSON-RPC
/// connection) and serves that owner's next sessionless request in a fresh
/// session — never another owner's. At most `max` are kept in all; the one
/// idle longest goes first. An owner's are ended with it ([`Workers::end_owner`]).
///
/// Workers are started by one thread that lives as long as this value: the
/// kernel's parent-death signal follows the *thread* that forked, and a pool
/// thread of the runtime may end while its worker still waits as the spare.
#[derive(Debug)]
pub struct Workers {
    starter: Mutex<Sender<SyncSender<std::io::Result<Child>>>>,
    spare: Mutex<Option<Child>>,
    /// Requests in workers now, and the most allowed at once (more wait).
    busy: Mutex<usize>,
    freed: Condvar,
    max: usize,
    /// Idle workers by owner, kept for its next sessionless request.
    held: Mutex<HashMap<String, Vec<Held>>>,
}

/// One request's place among the running workers; freed on drop.
pub(crate) struct Place<'a>(&'a Workers);

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

impl Workers {
    /// Workers started as `spawn` says, at most `max` running requests at once
    /// (a process each: a flood of requests waits instead of forking without
    /// bound) and at most `max` kept idle; the first spare starts now.
    pub fn new(spawn: WorkerSpawn, max: usize) -> Workers {
        let (tx, rx) = channel::<SyncSender<std::io::Result<Child>>>();
        let _ = std::thread::Builder::new()
            .name("safesh-workers".into())
            .spawn(move || {
                for reply in rx {
                    let _ = reply.send(start(&spawn));
                }
            });
        let w = Workers {
            starter: Mutex::new(tx),
            spare: Mutex::new(None),
            busy: Mutex::new(0),
            freed: Condvar::new(),
            max: max.max(1),
            held: Mutex::new(HashMap::new()),
        };
        // The first request finds one ready too.
        *w.spare.lock().unwrap_or_else(|p| p.into_inner()) = w.start().ok();
        w
    }

    /// A new worker, started by the starter thread.
    fn start(&self) -> std::io::Result<Child> {
        let (tx, rx) = sync_channel(1);
        let gone = || std::io::Error::other("the worker starter thread is gone");
        self.starter
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(tx)
            .map_err(|_| gone())?;
        rx.recv().map_err(|_| gone())?
    }

    /// Takes a place for one more running request if one is free now (no
    /// wait); the taker gives it back with [`Workers::release`].
    pub(crate) fn try_reserve(&self) -> bool {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        if *busy >= self.max {
            return false;
        }
        *busy += 1;
        true
    }

    /// Gives back a place taken by [`Workers::try_reserve`] (or a [`Place`]).
    pub(crate) fn release(&self) {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        *busy = busy.saturating_sub(1);
        self.freed.notify_one();
    }

    /// A place for one more running request; waits for one, `None` when `stop`
    /// turns true first.
    pub(crate) fn place(&self, stop: &dyn Fn() -> bool) -> Option<Place<'_>> {
        let mut busy = self.busy.lock().unwrap_or_else(|p| p.into_inner());
        while *busy >= self.max {
            if stop() {
                return None;
            }
            busy = self
                .freed
                .wait_timeout(busy, TICK)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *busy += 1;
        Some(Place(self))
    }

    /// A ready worker (the spare if it is alive, else a new one); starts the next spare.
    pub(crate) fn take(&self) -> std::io::Result<Child> {
        let mut slot = self.spare.lock().unwrap_or_else(|p| p.into_inner());
        let spare = slot.take().and_then(|mut c| match c.try_wait() {
            Ok(None) => Some(c),
            _ => {
                let _ = c.wait();
                None
            }
        });
        let child = match spare {
            Some(c) => c,
            None => self.start()?,
        };
        *slot = self.start().ok();
        Ok(child)
    }

    /// A worker for a sessionless request of `owner`: one it has used before and
    /// that is alive, else a new one (`reused` says which).
    fn take_for(&self, owner: &str) -> std::io::Result<(Held, bool)> {
        match self.take_kept(owner) {
            Some(h) => Ok((h, true)),
            None => Ok((Held::new(self.take()?)?, false)),
        }
    }

    /// A worker `owner` has used before and that is alive, if one is idle.
    pub(crate) fn take_kept(&self, owner: &str) -> Option<Held> {
        loop {
            let mut h = lock(&self.held).get_mut(owner).and_then(Vec::pop)?;
            if matches!(h.child.try_wait(), Ok(None)) {
                return Some(h);
            }
            // It died while idle (killed from outside): clean up after it.
            let _ = h.child.wait();
            remove_temp_dirs(h.temp_dir.take(), h.child.id());
        }
    }

    /// Keeps `h` for `owner`'s next request, within the limit (the worker idle
    /// longest is retired to make room); retires it when it has served enough.
    pub(crate) fn put_back(&self, owner: &str, mut h: Held) {
        h.served += 1;
        if h.served >= MAX_SERVED {
            h.retire();
            return;
        }
        h.idle_since = Instant::now();
        let evicted = {
            let mut held = lock(&self.held);
            held.entry(owner.to_string()).or_default().push(h);
            let total: usize = held.values().map(Vec::len).sum();
            if total > self.max {
                oldest(&mut held)
            } else {
                None
            }
        };
        if let Some(e) = evicted {
            e.retire();
        }
    }

    /// Ends the idle workers kept for `owner` (its connection went away).
    pub fn end_owner(&self, owner: &str) {
        let gone = lock(&self.held).remove(owner).unwrap_or_default();
        for h in gone {
            h.retire();
        }
    }

    /// Idle workers kept now (all owners).
    pub fn held(&self) -> usize {
        lock(&self.held).values().map(Vec::len).sum()
    }

    /// Ends the spare and the idle workers (the server is stopping): the end of
    /// its input makes each exit and remove its session's temp dir; killed if
    /// it does not.
    pub fn shutdown(&self) {
        let mut children: Vec<Child> = Vec::new();
        if let Some(mut c) = lock(&self.spare).take() {
            drop(c.stdin.take());
            children.push(c);
        }
        let held: Vec<Held> = lock(&self.held).drain().flat_map(|(_, v)| v).collect();
        for h in held {
            let Held { child, pipes, .. } = h;
            drop(pipes);
            children.push(child);
        }
        let until = Instant::now() + Duration::from_secs(2);
        for mut c in children {
            while matches!(c.try_wait(), Ok(None)) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// Takes out the worker idle longest (any owner).
fn oldest(held: &mut HashMap<String, Vec<Held>>) -> Option<Held> {
    let (owner, i) = held
        .iter()
        .flat_map(|(o, v)| v.iter().enumerate().map(move |(i, h)| (o, i, h.idle_since)))
        .min_by_key(|&(_, _, t)| t)
        .map(|(o, i, _)| (o.clone(), i))?;
    let v = held.get_mut(&owner)?;
    let h = v.remove(i);
    if v.is_empty() {
        held.remove(&owner);
    }
    Some(h)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Removes the temp dir of worker `pid`, which died without cleaning up: only a
/// directory named as the core names a session's temp dir for that pid
/// (`safesh-PID-…`), never whatever path a frame said.
pub(crate) fn remove_temp_dir(dir: Option<PathBuf>, pid: u32) {
    let Some(dir) = dir else { return };
    let named = dir
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(&format!("safesh-{pid}-")));
    let plain = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
    if named && plain {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// Removes every temp dir of worker `pid` beside `dir` (a reused worker makes
/// one per session it could not reuse), as [`remove_temp_dir`] does for one.
/// A worker makes them in a directory of its own (`use_process_temp_dir`):
/// then that directory goes, with everything in it.
pub(crate) fn remove_temp_dirs(dir: Option<PathBuf>, pid: u32) {
    let Some(parent) = dir.as_deref().and_then(std::path::Path::parent) else {
        return;
    };
    let prefix = format!("safesh-{pid}-");
    if parent
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with(&prefix))
    {
        remove_temp_dir(Some(parent.to_path_buf()), pid);
        return;
    }
    if let Ok(entries) = std::fs::read_dir(parent) {
        for e in entries.flatten() {
            if e.file_name()
                .to_str()
                .is_some_and(|n| n.starts_with(&prefix))
            {
                remove_temp_dir(Some(e.path()), pid);
            }
        }
    }
}

/// Runs one sessionless request in a worker process (blocking): one its owner
/// has used before when one is idle. `Err` only when no worker could be started
/// (the caller runs it in-process then).
pub fn exec(
    workers: &Workers,
    p: &ExecParams,
    settings: &Settings,
    on_start: &dyn Fn(Interrupter),
    approver: Option<Arc<dyn ApprovalChannel>>,
) -> Result<Value, ServerError> {
    let interrupter = Interrupter::detached();
    on_start(interrupter.clone());
    let Some(_place) = workers.place(&|| interrupter.is_interrupted()) else {
        return Ok(failed(
            p,
            settings,
            ErrorCode::ExecutionError,
            "the request was cancelled while it waited for a worker".into(),
            130,
        ));
    };
    let line = exec_line(p, approver.is_some()).map_err(ServerError::Io)?;
    // A kept worker may have died since it was checked: then a new one.
    let mut w = loop {
        let (mut w, reused) = workers.take_for(&p.conn).map_err(ServerError::Io)?;
        match w.pipes.send_line(&line) {
            Ok(()) => break w,
            Err(_) if reused => {
                let _ = w.child.kill();
                let _ = w.child.wait();
                remove_temp_dirs(w.temp_dir.take(), w.child.id());
            }
            Err(e) => {
                let _ = w.child.kill();
                let _ = w.child.wait();
                return Err(ServerError::Io(e));
            }
        }
    };
    let timeout_ms = timeout_of(p, settings);
    let ended = converse(&mut w, timeout_ms, &interrupter, approver.as_ref());
    Ok(finish(workers, p, settings, w, ended))
}

/// The request's frame to its worker.
pub(crate) fn exec_line(p: &ExecParams, ask: bool) -> std::io::Result<Vec<u8>> {
    crate::worker_pipes::line_of(&ToWorker::Exec {
        params: Box::new(p.clone()),
        ask,
        conn: p.conn.clone(),
        piped: p.piped.clone(),
        pipe_stdout: p.pipe_stdout,
    })
}

/// The request's deadline, as the settings bound it (0: none).
pub(crate) fn timeout_of(p: &ExecParams, settings: &Settings) -> u64 {
    p.timeout_ms
        .map(|t| settings.clamp_timeout(t))
        .unwrap_or(settings.limits.script_timeout_ms)
}

/// The request's result once its worker is done with it: the worker kept for
/// the owner, retired, or killed and cleaned up after. Blocks on a dead or
/// killed worker's exit (the async path calls it in a blocking thread then).
pub(crate) fn finish(
    workers: &Workers,
    p: &ExecParams,
    settings: &Settings,
    mut w: Held,
    ended: Ended,
) -> Value {
    match ended {
        Ended::Result(v, reusable) => {
            if reusable {
                workers.put_back(&p.conn, w);
            } else {
                w.retire();
            }
            v
        }
        Ended::Timeout(ms) => {
            let _ = w.child.kill();
            let _ = w.child.wait();
            remove_temp_dirs(w.temp_dir.take(), w.child.id());
            failed(
                p,
                settings,
                ErrorCode::Timeout,
                format!(
                    "the request did not stop at its deadline ({ms} ms); its worker process was killed"
                ),
                124,
            )
        }
        Ended::Died => {
            let Held {
                mut child,
                pipes,
                temp_dir,
                ..
            } = w;
            drop(pipes);
            let (msg, exit) = describe(&mut child);
            remove_temp_dirs(temp_dir, child.id());
            failed(p, settings, ErrorCode::ExecutionError, msg, exit)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(t: std::time::SystemTime) -> u64 {
        t.duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0)
    }

    #[test]
    fn only_scripts_without_a_background_job_go_to_a_worker() {
        for s in [
            "echo a && echo b",
            "ls 2>&1 | wc -l",
            "cat <&3",
            "echo x &> f",
            "true",
        ] {
            assert!(eligible(s), "{s}");
        }
        for s in ["sleep 5 &", "a & b", "echo 'a&b'", "x|&y"] {
            assert!(!eligible(s), "{s}");
        }
    }

    #[test]
    fn requests_past_the_worker_limit_wait_for_a_place() {
        // `cat` stands in for the worker: only the places are exercised.
        let w = Workers::new(
            WorkerSpawn {
                program: "/bin/cat".into(),
                args: Vec::new(),
            },
            1,
        );
        let first = w.place(&|| false);
        assert!(first.is_some());
        assert!(
            w.place(&|| true).is_none(),
            "a second place while one is busy"
        );
        drop(first);
        assert!(w.place(&|| true).is_some(), "the place was not freed");
    }

    #[test]
    fn frames_round_trip() {
        let q = ApprovalQuestion {
            id: "abcd2345".into(),
            commit_point: "destructive".into(),
            action: "rm x".into(),
            target: "x".into(),
            reason: "r".into(),
            rule: "rule".into(),
            expires: UNIX_EPOCH + Duration::from_secs(1_000_000),
        };
        let f = FromWorker::Ask {
            question: Question::from_core(&q),
        };
        let line = serde_json::to_string(&f).unwrap_or_default();
        assert!(!line.contains('\n'));
        match serde_json::from_str::<FromWorker>(&line) {
            Ok(FromWorker::Ask { question }) => {
                let back = question.to_core();
                assert_eq!(back, q);
                assert_eq!(secs(back.expires), 1_000_000);
            }
            other => panic!("{other:?}"),
        }
        for a in [
            ApprovalAnswer::Granted,
            ApprovalAnswer::Denied,
            ApprovalAnswer::Unanswered,
        ] {
            assert_eq!(answer_of(answer_word(a)), a);
        }
    }
}
