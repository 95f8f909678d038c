//! The server's side of a long-lived worker process (see `worker.rs` for the
//! model): a shell session's interpreter, or one background job, living in a
//! `safesh __worker` process of its own.
//!
//! A [`Remote`] is the handle: it sends frames to the worker and one reader
//! thread takes every frame the worker writes. Replies to a request (`result`,
//! `ask`, `updated`, `reply`) go to the request waiting for them; job frames
//! (`job_start`, `job_out`, `job_pid`, `job_end`) feed the server's job table
//! directly, so a job started inside the worker is listed, followed and killed
//! like any other. When the worker dies the reader records why (the session is
//! *lost*: the next request gets [`ServerError::SessionLost`]), ends the jobs
//! it ran and removes its temp dir; the server goes on.
//!
//! Dropping the last handle closes the worker's input: it stops whatever it
//! still runs and exits (killed if it does not within [`EXIT_GRACE`]). A worker
//! with running jobs and no session (a `job.start` job, a sessionless request
//! that started `cmd &`) keeps its own handle until its last job has ended.

use crate::error::ServerError;
use crate::exec::ExecParams;
use crate::jobs::Jobs;
use crate::settings::Settings;
use crate::shape::lock;
use crate::worker::{FromWorker, ToWorker, Workers, answer_word, describe, failed, send};
use safesh_core::session::{BackgroundEnd, BackgroundHooks};
use safesh_core::{ApprovalAnswer, ApprovalChannel, ErrorCode, Interrupter, Refusal, StreamKind};
use safesh_label::Label;
use serde_json::Value;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// After the handle is dropped, how long the worker has to exit by itself.
const EXIT_GRACE: Duration = Duration::from_secs(3);
/// After the request's deadline, how long the worker has to answer.
const GRACE: Duration = Duration::from_secs(5);
/// How often a waiting request looks at cancellation and its deadline.
const TICK: Duration = Duration::from_millis(50);
/// After a job was first told to stop, when its worker process is killed.
const KILL_AFTER: Duration = Duration::from_millis(1500);

/// What the reader thread and the handle share.
struct Inner {
    stdin: Mutex<Option<ChildStdin>>,
    child: Mutex<Option<Child>>,
    pid: u32,
    /// Why the worker is gone (`None` while it lives).
    lost: Mutex<Option<String>>,
    /// Replies to the request in flight.
    replies: Mutex<Receiver<FromWorker>>,
    /// A request is waiting for replies (else an `ask` is answered "unanswered").
    busy: AtomicBool,
    /// The jobs this worker runs, by the worker's id for them.
    hooks: Mutex<HashMap<String, BackgroundHooks>>,
    /// The handle kept alive by its own running jobs (no session holds it).
    keep: Mutex<Option<Arc<Remote>>>,
    jobs: Arc<Jobs>,
    session: Option<String>,
    owner: String,
}

/// A worker process holding a session's interpreter or a job.
pub struct Remote {
    inner: Arc<Inner>,
    /// The session's cwd as last reported (for jobs started from it).
    cwd: Mutex<PathBuf>,
    /// Stops the running request (the session is ending).
    stop: Interrupter,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("pid", &self.inner.pid)
            .finish()
    }
}

impl Inner {
    fn send(&self, frame: &ToWorker) -> bool {
        match lock(&self.stdin).as_mut() {
            Some(s) => send(s, frame).is_ok(),
            None => false,
        }
    }

    fn kill(&self) {
        if let Some(c) = lock(&self.child).as_mut() {
            let _ = c.kill();
        }
    }

    fn lost(&self) -> Option<String> {
        lock(&self.lost).clone()
    }
}

impl Remote {
    /// Starts a worker for a session (`session`) or a job of connection `conn`
    /// with `cwd` and `env`; its jobs go to `jobs` under `owner`.
    pub fn open(
        workers: &Workers,
        jobs: Arc<Jobs>,
        conn: &str,
        session: Option<String>,
        cwd: Option<PathBuf>,
        env: Vec<(String, String)>,
    ) -> Result<Arc<Remote>, ServerError> {
        let owner = crate::owner::scope(conn, session.as_deref());
        let mut child = workers.take().map_err(ServerError::Io)?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ServerError::Io(std::io::Error::other("worker pipes")));
        };
        let open = ToWorker::Open {
            cwd: cwd.clone(),
            env,
            conn: conn.to_string(),
            session: session.clone(),
        };
        if let Err(e) = send(&mut stdin, &open) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ServerError::Io(e));
        }
        let (tx, rx) = channel();
        let inner = Arc::new(Inner {
            stdin: Mutex::new(Some(stdin)),
            pid: child.id(),
            child: Mutex::new(Some(child)),
            lost: Mutex::new(None),
            replies: Mutex::new(rx),
            busy: AtomicBool::new(false),
            hooks: Mutex::new(HashMap::new()),
            keep: Mutex::new(None),
            jobs,
            session,
            owner,
        });
        let remote = Arc::new(Remote {
            inner: inner.clone(),
            cwd: Mutex::new(cwd.unwrap_or_default()),
            stop: Interrupter::detached(),
        });
        let weak = Arc::downgrade(&remote);
        std::thread::Builder::new()
            .name("safesh-worker-read".into())
            .spawn(move || read(&inner, stdout, &tx, &weak))
            .map_err(ServerError::Io)?;
        // Its cwd as the worker made it (the policy's base dir without one).
        if let Ok(FromWorker::Updated { cwd }) = remote.call(&ToWorker::Update {
            cwd: None,
            env: Vec::new(),
        }) {
            *lock(&remote.cwd) = cwd;
        }
        Ok(remote)
    }

    /// What stops the session's running request (it is ending).
    pub fn stopper_of_requests(&self) -> Interrupter {
        self.stop.clone()
    }

    /// Why the worker is gone, if it is.
    pub fn lost(&self) -> Option<String> {
        self.inner.lost()
    }

    /// The session's cwd as last reported.
    pub fn cwd(&self) -> PathBuf {
        lock(&self.cwd).clone()
    }

    /// Sends `frame` and waits for its one reply (no deadline: `update` and
    /// `checkpoint` do no script work).
    fn call(&self, frame: &ToWorker) -> Result<FromWorker, ServerError> {
        let lost = |why: Option<String>| {
            ServerError::SessionLost(
                self.inner.session.clone().unwrap_or_default(),
                why.unwrap_or_else(|| "its worker process is gone".into()),
            )
        };
        if let Some(why) = self.lost() {
            return Err(lost(Some(why)));
        }
        let rx = lock(&self.inner.replies);
        if !self.inner.send(frame) {
            return Err(lost(self.lost()));
        }
        loop {
            match rx.recv() {
                Ok(FromWorker::Ask { question }) => {
                    self.inner.send(&ToWorker::Answer {
                        id: question.id,
                        answer: answer_word(ApprovalAnswer::Unanswered).into(),
                    });
                }
                Ok(reply) => return Ok(reply),
                Err(_) => return Err(lost(self.lost())),
            }
        }
    }

    /// Changes the session's cwd and environment; its cwd after.
    pub fn update(
        &self,
        cwd: Option<PathBuf>,
        env: Vec<(String, String)>,
    ) -> Result<PathBuf, ServerError> {
        match self.call(&ToWorker::Update { cwd, env })? {
            FromWorker::Updated { cwd } => {
                *lock(&self.cwd) = cwd.clone();
                Ok(cwd)
            }
            _ => Err(ServerError::Io(std::io::Error::other(
                "the worker answered update with another frame",
            ))),
        }
    }

    /// A checkpoint operation in the session.
    pub fn checkpoint(&self, op: &str, params: Value) -> Result<Value, ServerError> {
        match self.call(&ToWorker::Checkpoint {
            op: op.to_string(),
            params,
        })? {
            FromWorker::Reply { ok: Some(v), .. } => Ok(v),
            FromWorker::Reply {
                refused: Some(r), ..
            } => Err(ServerError::Refused(Box::new(r))),
            FromWorker::Reply { invalid, .. } => Err(ServerError::BadParams(
                invalid.unwrap_or_else(|| "checkpoint failed".into()),
            )),
            _ => Err(ServerError::Io(std::io::Error::other(
                "the worker answered checkpoint with another frame",
            ))),
        }
    }

    /// Runs one request in the worker (blocking) and returns its shaped
    /// result. Past its deadline (plus a grace) the worker is killed and the
    /// session is lost; a worker that dies gives a result saying so.
    pub fn exec(
        &self,
        p: &ExecParams,
        settings: &Settings,
        on_start: &dyn Fn(Interrupter),
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<Value, ServerError> {
        let frame = ToWorker::Exec {
            params: Box::new(p.clone()),
            ask: approver.is_some(),
            conn: p.conn.clone(),
            piped: p.piped.clone(),
            pipe_stdout: p.pipe_stdout,
        };
        self.request(&frame, p, settings, on_start, approver)
    }

    /// Runs one `code` request in the worker's session (blocking): its shaped
    /// result and `$session.vars` after it. Deadline and death as for
    /// [`Remote::exec`] (the session is lost, the server goes on).
    pub fn code(
        &self,
        p: &crate::code_face::CodeParams,
        vars: Option<(String, Label)>,
        face: &'static str,
        settings: &Settings,
    ) -> Result<(Value, Option<(String, Label)>), ServerError> {
        let ep = crate::code_face::exec_params(p, face);
        let frame = ToWorker::Code {
            params: Box::new(p.clone()),
            vars,
            face: face.to_string(),
        };
        let mut v = self.request(&frame, &ep, settings, &|_| {}, None)?;
        let vars = v
            .as_object_mut()
            .and_then(|o| o.remove(crate::code_face::VARS_RESULT_KEY))
            .and_then(|x| serde_json::from_value(x).ok());
        Ok((v, vars))
    }

    /// Sends a request frame (`exec`, `code`) and waits for its result,
    /// answering its approval questions; `p` bounds the wait and shapes the
    /// result of a worker that died or overran.
    fn request(
        &self,
        frame: &ToWorker,
        p: &ExecParams,
        settings: &Settings,
        on_start: &dyn Fn(Interrupter),
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<Value, ServerError> {
        let inner = &self.inner;
        if let Some(why) = self.lost() {
            return Err(ServerError::SessionLost(
                inner.session.clone().unwrap_or_default(),
                why,
            ));
        }
        let interrupter = Interrupter::detached();
        on_start(interrupter.clone());
        let rx = lock(&inner.replies);
        // Replies a request that gave up (a killed worker) left behind.
        while rx.try_recv().is_ok() {}
        inner.busy.store(true, Ordering::SeqCst);
        let _idle = Idle(&inner.busy);
        if !inner.send(frame) {
            return Ok(self.died(p, settings, &rx));
        }
        let timeout_ms = p
            .timeout_ms
            .map(|t| settings.clamp_timeout(t))
            .unwrap_or(settings.limits.script_timeout_ms);
        let soft = (timeout_ms > 0).then(|| Instant::now() + Duration::from_millis(timeout_ms));
        let hard = soft.map(|s| s + GRACE);
        let mut cancelled = false;
        loop {
            if (interrupter.is_interrupted() || self.stop.is_interrupted()) && !cancelled {
                cancelled = true;
                inner.send(&ToWorker::Cancel);
            }
            if hard.is_some_and(|h| Instant::now() >= h) {
                inner.kill();
                // The reader records the death; wait for it to say so.
                while rx.recv_timeout(TICK * 20).is_ok() {}
                return Ok(failed(
                    p,
                    settings,
                    ErrorCode::Timeout,
                    format!(
                        "the request did not stop at its deadline ({timeout_ms} ms); the session's \
                         worker process was killed and the session is lost (start a new one)"
                    ),
                    124,
                ));
            }
            match rx.recv_timeout(TICK) {
                Ok(FromWorker::Result { result }) => return Ok(result),
                Ok(FromWorker::Updated { cwd }) => *lock(&self.cwd) = cwd,
                Ok(FromWorker::Ask { question }) => {
                    let stop = || {
                        interrupter.is_interrupted()
                            || soft.is_some_and(|s| Instant::now() >= s)
                            || inner.lost().is_some()
                    };
                    let a = match &approver {
                        Some(ch) => ch.ask(&question.to_core(), &stop),
                        None => ApprovalAnswer::Unanswered,
                    };
                    inner.send(&ToWorker::Answer {
                        id: question.id,
                        answer: answer_word(a).to_string(),
                    });
                }
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(self.died(p, settings, &rx)),
            }
        }
    }

    /// The result of a request whose worker died under it.
    fn died(&self, p: &ExecParams, settings: &Settings, rx: &Receiver<FromWorker>) -> Value {
        // The reader sets `lost` before it drops the channel.
        while rx.recv_timeout(TICK * 20).is_ok() {}
        let why = self
            .lost()
            .unwrap_or_else(|| "the request's worker process is gone".into());
        let exit = exit_of(&why);
        let msg = match &self.inner.session {
            Some(id) => format!("{why}; session {id} is lost (start a new one with session_start)"),
            None => why,
        };
        failed(p, settings, ErrorCode::ExecutionError, msg, exit)
    }

    /// Runs `job` (already listed) in this worker: `script` with `force`,
    /// asking `approver` for its approvals. The worker lives until the job and
    /// the jobs it started have ended.
    pub fn start_job(
        self: &Arc<Self>,
        job: &Arc<crate::jobs::Job>,
        script: String,
        force: bool,
        approver: Option<Arc<dyn ApprovalChannel>>,
    ) -> Result<(), ServerError> {
        let id = "job".to_string();
        lock(&self.inner.hooks).insert(id.clone(), job.hooks());
        job.set_stop(self.stopper(&id));
        self.linger();
        let frame = ToWorker::Job {
            id,
            script,
            force,
            ask: approver.is_some(),
        };
        if approver.is_some() {
            // Its questions come while no request waits: a thread answers them.
            let me = Arc::downgrade(self);
            let _ = std::thread::Builder::new()
                .name("safesh-job-ask".into())
                .spawn(move || ask_loop(&me, approver));
        }
        if !self.inner.send(&frame) {
            return Err(ServerError::Io(std::io::Error::other(
                "the job's worker process is gone",
            )));
        }
        Ok(())
    }

    /// Keeps this handle alive while the worker runs jobs (no session holds it).
    pub fn linger(self: &Arc<Self>) {
        let hooks = lock(&self.inner.hooks);
        if !hooks.is_empty() {
            *lock(&self.inner.keep) = Some(self.clone());
        }
    }

    /// What stops the worker's job `id`: a frame, then (if it has not ended
    /// after [`KILL_AFTER`]) the whole worker process.
    fn stopper(self: &Arc<Self>, id: &str) -> crate::jobs::StopFn {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let id = id.to_string();
        let first: Mutex<Option<Instant>> = Mutex::new(None);
        Arc::new(move || {
            let Some(inner) = weak.upgrade() else { return };
            let mut f = lock(&first);
            match *f {
                None => {
                    *f = Some(Instant::now());
                    inner.send(&ToWorker::KillJob { id: id.clone() });
                }
                Some(t) if t.elapsed() >= KILL_AFTER => inner.kill(),
                Some(_) => {}
            }
        })
    }
}

/// Answers the questions of a job's worker through `approver` until it is gone.
fn ask_loop(me: &Weak<Remote>, approver: Option<Arc<dyn ApprovalChannel>>) {
    loop {
        let Some(r) = me.upgrade() else { return };
        let rx = lock(&r.inner.replies);
        r.inner.busy.store(true, Ordering::SeqCst);
        match rx.recv_timeout(TICK * 4) {
            Ok(FromWorker::Ask { question }) => {
                let inner = r.inner.clone();
                let stop = move || inner.lost().is_some();
                let a = match &approver {
                    Some(ch) => ch.ask(&question.to_core(), &stop),
                    None => ApprovalAnswer::Unanswered,
                };
                r.inner.send(&ToWorker::Answer {
                    id: question.id,
                    answer: answer_word(a).to_string(),
                });
            }
            Ok(_) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if lock(&r.inner.hooks).is_empty() {
            return;
        }
    }
}

/// Clears the busy flag on drop.
struct Idle<'a>(&'a AtomicBool);

impl Drop for Idle<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

impl Drop for Remote {
    fn drop(&mut self) {
        // End of input: the worker stops what it runs and exits.
        drop(lock(&self.inner.stdin).take());
        let inner = self.inner.clone();
        let _ = std::thread::Builder::new()
            .name("safesh-worker-end".into())
            .spawn(move || {
                let until = Instant::now() + EXIT_GRACE;
                while Instant::now() < until {
                    if inner.lost().is_some() {
                        return;
                    }
                    std::thread::sleep(TICK);
                }
                inner.kill();
            });
    }
}

/// The exit status a death message stands for (128 + signal).
fn exit_of(why: &str) -> i32 {
    why.split("signal ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse::<i32>().ok())
        .map_or(1, |n| 128 + n)
}

/// The reader thread: every frame the worker writes, until it is gone.
fn read(inner: &Arc<Inner>, stdout: ChildStdout, tx: &Sender<FromWorker>, me: &Weak<Remote>) {
    let mut reader = BufReader::new(stdout);
    let mut temp_dir: Option<PathBuf> = None;
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let Ok(frame) = serde_json::from_str::<FromWorker>(&line) else {
            // Not a frame of ours: the worker is broken; end it.
            inner.kill();
            break;
        };
        match frame {
            FromWorker::Ready { temp_dir: t } => temp_dir = t,
            FromWorker::JobStart { id, command } => {
                let stop = me.upgrade().map(|r| r.stopper(&id));
                let started = match stop {
                    Some(stop) => {
                        inner
                            .jobs
                            .adopt(&command, inner.session.clone(), inner.owner.clone(), stop)
                    }
                    None => Err(Refusal::new(
                        ErrorCode::ExecutionError,
                        "the session is ending",
                    )),
                };
                let error = match started {
                    Ok(hooks) => {
                        lock(&inner.hooks).insert(id.clone(), hooks);
                        None
                    }
                    Err(r) => Some(r),
                };
                inner.send(&ToWorker::JobAck { id, error });
            }
            FromWorker::JobOut {
                id,
                text,
                bytes,
                label,
            } => {
                let data = text.map(String::into_bytes).or(bytes).unwrap_or_default();
                let out = lock(&inner.hooks).get(&id).map(|h| h.output.clone());
                if let Some(out) = out {
                    let _ = out.write(StreamKind::Stdout, &data, &label);
                }
            }
            FromWorker::JobPid { id, pid } => {
                let hook = lock(&inner.hooks).get(&id).and_then(|h| h.on_start.clone());
                if let Some(hook) = hook {
                    hook(pid);
                }
            }
            FromWorker::JobEnd {
                id,
                exit_code,
                error,
                label,
                error_label,
            } => {
                let hooks = lock(&inner.hooks).remove(&id);
                if let Some(h) = hooks {
                    (h.finished)(BackgroundEnd {
                        exit_code,
                        error,
                        label,
                        error_label,
                    });
                }
                let hooks = lock(&inner.hooks);
                if hooks.is_empty() {
                    // Its last job ended: a handle no session holds goes.
                    let keep = lock(&inner.keep).take();
                    drop(hooks);
                    drop(keep);
                }
            }
            FromWorker::Ask { question } if !inner.busy.load(Ordering::SeqCst) => {
                inner.send(&ToWorker::Answer {
                    id: question.id,
                    answer: answer_word(ApprovalAnswer::Unanswered).into(),
                });
            }
            other => {
                let _ = tx.send(other);
            }
        }
    }
    let child = lock(&inner.child).take();
    let why = match child {
        Some(mut c) => describe(&mut c).0,
        None => "the worker process is gone".into(),
    };
    let why = why.replace(
        "the request's worker process",
        "the session's worker process",
    );
    *lock(&inner.lost) = Some(why.clone());
    crate::worker::remove_temp_dirs(temp_dir, inner.pid);
    // Its jobs end with it.
    let hooks: Vec<BackgroundHooks> = lock(&inner.hooks).drain().map(|(_, h)| h).collect();
    for h in hooks {
        (h.finished)(BackgroundEnd {
            exit_code: exit_of(&why),
            error: Some(
                Refusal::new(ErrorCode::ExecutionError, why.clone())
                    .rule("worker")
                    .suggest("the server is fine; start the job again"),
            ),
            label: Label::empty(),
            error_label: Label::empty(),
        });
    }
    drop(lock(&inner.keep).take());
}
