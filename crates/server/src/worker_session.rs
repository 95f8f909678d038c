//! The worker's side of a long-lived worker (`worker_remote.rs` is the
//! server's): after `open`, it holds one shell session — variables, functions,
//! cwd persist across its `exec` frames — and runs `update`, `checkpoint` and
//! `job` frames in it, one at a time, on the interpreter thread.
//!
//! Background jobs (`cmd &` in a request, or the `job` frame's script) run in
//! this process; their output, pids and ends go to the server as frames, and
//! the server's job table lists, follows and kills them (`kill_job`). The end
//! of input (the server dropped the session, or died) stops everything.

use crate::exec::ExecParams;
use crate::settings::Settings;
use crate::shape::{Redaction, lock};
use crate::worker::{FromWorker, ToWorker};
use crate::worker_main::{Out, ParentChannel, write_frame};
use safesh_core::session::{BackgroundHooks, BackgroundSink};
use safesh_core::{
    ApprovalChannel, ErrorCode, InputSource, Interrupter, OutputTarget, Refusal, Session,
    StreamConsumer, StreamKind,
};
use safesh_label::Label;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a `cmd &` waits for the server to list it.
const ACK_WAIT: Duration = Duration::from_secs(10);

/// Work for the interpreter thread.
enum Work {
    Exec(Box<ExecParams>, bool),
    Update(Option<PathBuf>, Vec<(String, String)>),
    Job(String, String, bool, bool),
    Checkpoint(String, serde_json::Value),
    Code(
        Box<crate::code_face::CodeParams>,
        Option<(String, Label)>,
        String,
    ),
}

/// What the input thread and the interpreter thread share.
struct Shared {
    out: Out,
    /// The running request's interrupter.
    current: Mutex<Option<Interrupter>>,
    /// The running request was cancelled (also before it started).
    cancelled: AtomicBool,
    /// Running background jobs by id: what stops them.
    jobs: Mutex<HashMap<String, Interrupter>>,
    /// `cmd &` waiting for the server's answer, by id.
    acks: Mutex<HashMap<String, SyncSender<Option<Refusal>>>>,
    next: AtomicU64,
    redaction: Option<Redaction>,
}

/// Where a long-lived worker's session starts, and whose it is (`open`).
pub(crate) struct Place {
    pub(crate) cwd: Option<PathBuf>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) conn: String,
    pub(crate) session: Option<String>,
}

/// Serves a long-lived worker: `session` made ready, `open`'s place applied.
pub(crate) fn serve(
    mut session: Session,
    settings: Settings,
    open: Place,
    input: BufReader<File>,
    out: Out,
) -> i32 {
    let Place {
        cwd,
        env,
        conn,
        session: sid,
    } = open;
    let scope = crate::owner::scope(&conn, sid.as_deref());
    session.set_state_scope(Some(crate::owner::scope_dir(&scope)));
    if let Some(c) = cwd {
        session.set_cwd(c);
    }
    for (k, v) in &env {
        session.set_env(k, v);
    }
    let shared = Arc::new(Shared {
        out,
        current: Mutex::new(None),
        cancelled: AtomicBool::new(false),
        jobs: Mutex::new(HashMap::new()),
        acks: Mutex::new(HashMap::new()),
        next: AtomicU64::new(0),
        redaction: Redaction::from_config(settings.policy.config()),
    });
    let (work_tx, work_rx) = channel();
    let (answer_tx, answer_rx) = channel();
    {
        let shared = shared.clone();
        let _ = std::thread::Builder::new()
            .name("safesh-worker-in".into())
            .spawn(move || listen(input, &shared, &work_tx, &answer_tx));
    }
    let channel: Arc<dyn ApprovalChannel> = Arc::new(ParentChannel {
        out: shared.out.clone(),
        answers: Mutex::new(answer_rx),
    });
    let run = {
        let shared = shared.clone();
        move || work(session, &settings, &conn, sid, &shared, &work_rx, &channel)
    };
    let code = match std::thread::Builder::new()
        .name("safesh-worker".into())
        .stack_size(crate::settings::SHELL_STACK)
        .spawn(run)
    {
        Ok(h) => h.join().unwrap_or(1),
        Err(_) => 2,
    };
    // The input ended: stop the jobs still running, give them a moment to
    // report their end, then go.
    for _ in 0..100 {
        let running: Vec<Interrupter> = lock(&shared.jobs).values().cloned().collect();
        if running.is_empty() {
            break;
        }
        for i in running {
            i.interrupt();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    code
}

/// The input thread: frames from the server until its end.
fn listen(
    input: BufReader<File>,
    shared: &Arc<Shared>,
    work: &Sender<Work>,
    answers: &Sender<(String, String)>,
) {
    for line in input.lines() {
        let Ok(line) = line else { break };
        let Ok(frame) = serde_json::from_str::<ToWorker>(&line) else {
            continue;
        };
        let w = match frame {
            ToWorker::Exec {
                mut params,
                ask,
                piped,
                pipe_stdout,
                ..
            } => {
                // In order: a cancel after this frame is this request's.
                shared.cancelled.store(false, Ordering::SeqCst);
                // A pipeline step's input and tap cross beside the params
                // (they are `serde(skip)` there: a client cannot set them).
                params.piped = piped;
                params.pipe_stdout = pipe_stdout;
                Work::Exec(params, ask)
            }
            ToWorker::Update { cwd, env } => Work::Update(cwd, env),
            ToWorker::Job {
                id,
                script,
                force,
                ask,
            } => Work::Job(id, script, force, ask),
            ToWorker::Checkpoint { op, params } => Work::Checkpoint(op, params),
            ToWorker::Cancel => {
                shared.cancelled.store(true, Ordering::SeqCst);
                cancel_current(shared);
                continue;
            }
            ToWorker::Answer { id, answer } => {
                let _ = answers.send((id, answer));
                continue;
            }
            ToWorker::KillJob { id } => {
                let stop = lock(&shared.jobs).get(&id).cloned();
                if let Some(i) = stop {
                    // Repeated: an interrupt that lands as the job starts a
                    // command is cleared by it.
                    let _ = std::thread::Builder::new()
                        .name("safesh-worker-kill".into())
                        .spawn({
                            let shared = shared.clone();
                            move || {
                                for _ in 0..250 {
                                    if !lock(&shared.jobs).contains_key(&id) {
                                        return;
                                    }
                                    i.interrupt();
                                    std::thread::sleep(Duration::from_millis(20));
                                }
                            }
                        });
                }
                continue;
            }
            ToWorker::JobAck { id, error } => {
                if let Some(tx) = lock(&shared.acks).remove(&id) {
                    let _ = tx.send(error);
                }
                continue;
            }
            ToWorker::Open { .. } => continue,
            ToWorker::Code { params, vars, face } => {
                shared.cancelled.store(false, Ordering::SeqCst);
                Work::Code(params, vars, face)
            }
        };
        if work.send(w).is_err() {
            break;
        }
    }
    // The server is gone or dropped the session: stop the request.
    shared.cancelled.store(true, Ordering::SeqCst);
    cancel_current(shared);
}

/// Interrupts the running request ([`crate::worker_main::cancel_repeatedly`]).
fn cancel_current(shared: &Arc<Shared>) {
    crate::worker_main::cancel_repeatedly(shared, |s| (&s.cancelled, &s.current));
}

/// The interpreter thread: one piece of work at a time.
fn work(
    mut s: Session,
    settings: &Settings,
    conn: &str,
    sid: Option<String>,
    shared: &Arc<Shared>,
    rx: &Receiver<Work>,
    channel: &Arc<dyn ApprovalChannel>,
) -> i32 {
    s.set_background_sink(Some(Arc::new(FrameAdopter(shared.clone()))));
    for w in rx {
        match w {
            Work::Exec(mut p, ask) => {
                p.conn = conn.to_string();
                p.session.clone_from(&sid);
                s.set_approval_channel(ask.then(|| channel.clone()));
                let v = match p.script_text() {
                    Ok(script) => {
                        let on_start = |i: Interrupter| {
                            if shared.cancelled.load(Ordering::SeqCst) {
                                i.interrupt();
                            }
                            *lock(&shared.current) = Some(i);
                        };
                        crate::exec::run(&mut s, &script, &p, settings, &on_start)
                    }
                    Err(e) => serde_json::json!({"error": e.to_json()}),
                };
                *lock(&shared.current) = None;
                s.set_approval_channel(None);
                let cwd = s.cwd().to_path_buf();
                write_frame(&shared.out, &FromWorker::Updated { cwd });
                if !write_frame(&shared.out, &FromWorker::Result { result: v }) {
                    return 1;
                }
            }
            Work::Update(cwd, env) => {
                if let Some(c) = cwd {
                    s.set_cwd(c);
                }
                for (k, v) in &env {
                    s.set_env(k, v);
                }
                let cwd = s.cwd().to_path_buf();
                write_frame(&shared.out, &FromWorker::Updated { cwd });
            }
            Work::Checkpoint(op, params) => {
                // Its `session` context scope is saved and restored with it.
                s.set_context_session(sid.as_deref());
                let reply = checkpoint(&mut s, &op, params);
                write_frame(&shared.out, &reply);
            }
            Work::Code(mut p, vars, face) => {
                p.conn = conn.to_string();
                p.session.clone_from(&sid);
                let i = s.interrupter();
                if shared.cancelled.load(Ordering::SeqCst) {
                    i.interrupt();
                }
                *lock(&shared.current) = Some(i);
                let face = crate::code_face::face_of(&face);
                let (back, mut v, vars) = crate::code_face::run_in(s, &p, vars, face, settings);
                *lock(&shared.current) = None;
                if let (Some(o), Some(vars)) = (v.as_object_mut(), vars) {
                    o.insert(
                        crate::code_face::VARS_RESULT_KEY.into(),
                        serde_json::to_value(vars).unwrap_or_default(),
                    );
                }
                let Some(back) = back else {
                    // The engine lost the session: answer, then end the worker
                    // (the server reports the session lost from now on).
                    write_frame(&shared.out, &FromWorker::Result { result: v });
                    return 1;
                };
                s = back;
                let cwd = s.cwd().to_path_buf();
                write_frame(&shared.out, &FromWorker::Updated { cwd });
                if !write_frame(&shared.out, &FromWorker::Result { result: v }) {
                    return 1;
                }
            }
            Work::Job(id, script, force, ask) => {
                run_job(
                    &mut s,
                    shared,
                    &id,
                    &script,
                    force,
                    ask.then(|| channel.clone()),
                );
            }
        }
    }
    0
}

fn checkpoint(s: &mut Session, op: &str, params: serde_json::Value) -> FromWorker {
    let reply = |ok, invalid, refused| FromWorker::Reply {
        ok,
        invalid,
        refused,
    };
    let p = match serde_json::from_value::<crate::checkpoint_face::CheckpointParams>(params) {
        Ok(p) => p,
        Err(e) => return reply(None, Some(e.to_string()), None),
    };
    let op = match crate::checkpoint_face::op_of(op, &p) {
        Ok(op) => op,
        Err(e) => return reply(None, Some(e.to_string()), None),
    };
    match s.checkpoint(&op) {
        Ok(v) => reply(Some(v), None, None),
        Err(safesh_core::CheckpointFailure::Invalid(m)) => reply(None, Some(m), None),
        Err(safesh_core::CheckpointFailure::Refused(r)) => reply(None, None, Some(*r)),
    }
}

/// Runs the `job` frame's script as job `id`, streaming it to the server.
fn run_job(
    s: &mut Session,
    shared: &Arc<Shared>,
    id: &str,
    script: &str,
    force: bool,
    approver: Option<Arc<dyn ApprovalChannel>>,
) {
    lock(&shared.jobs).insert(id.to_string(), s.interrupter());
    s.set_on_start(Some(pid_hook(shared, id)));
    s.set_approval_channel(approver);
    s.set_force(force);
    // No time limit of its own: a job runs until it ends or is killed.
    s.set_script_timeout_ms(Some(0));
    let sink = Arc::new(FrameSink::new(shared.clone(), id));
    let o = s.exec(script, InputSource::Empty, OutputTarget::Stream(sink));
    lock(&shared.jobs).remove(id);
    write_frame(
        &shared.out,
        &FromWorker::JobEnd {
            id: id.to_string(),
            exit_code: o.exit_code,
            error: o.error,
            label: o.label,
            error_label: o.error_label,
        },
    );
}

fn pid_hook(shared: &Arc<Shared>, id: &str) -> safesh_core::session::StartHook {
    let (shared, id) = (shared.clone(), id.to_string());
    Arc::new(move |pid| {
        write_frame(
            &shared.out,
            &FromWorker::JobPid {
                id: id.clone(),
                pid,
            },
        );
    })
}

/// A job's output, as frames (a known secret value in it raises its label
/// here, where the session's known values are).
struct FrameSink {
    shared: Arc<Shared>,
    id: String,
    known: Mutex<Option<(safesh_core::KnownSource, safesh_flow::HoldBack)>>,
}

impl FrameSink {
    fn new(shared: Arc<Shared>, id: &str) -> FrameSink {
        FrameSink {
            shared,
            id: id.to_string(),
            known: Mutex::new(None),
        }
    }
}

impl StreamConsumer for FrameSink {
    fn write(&self, _kind: StreamKind, data: &[u8], label: &Label) -> std::io::Result<()> {
        let found = match (&self.shared.redaction, &mut *lock(&self.known)) {
            (Some(_), Some((source, hold))) => {
                let k = source.get();
                let f = hold.check(&k, data).label;
                hold.release(&k, data);
                f
            }
            _ => None,
        };
        let label = match found {
            Some(f) => label.join(&f),
            None => label.clone(),
        };
        let (text, bytes) = match std::str::from_utf8(data) {
            Ok(t) => (Some(t.to_string()), None),
            Err(_) => (None, Some(data.to_vec())),
        };
        let frame = FromWorker::JobOut {
            id: self.id.clone(),
            text,
            bytes,
            label,
        };
        if write_frame(&self.shared.out, &frame) {
            Ok(())
        } else {
            Err(std::io::Error::other("the server is gone"))
        }
    }

    fn set_known(&self, known: safesh_core::KnownSource) {
        *lock(&self.known) = Some((known, safesh_flow::HoldBack::default()));
    }
}

/// The session's background sink: a `cmd &` is listed by the server first
/// (which may refuse it: too many jobs), then streams to it.
struct FrameAdopter(Arc<Shared>);

impl BackgroundSink for FrameAdopter {
    fn start(&self, command: &str, stop: Interrupter) -> Result<BackgroundHooks, Refusal> {
        let shared = &self.0;
        let id = format!("b{}", shared.next.fetch_add(1, Ordering::SeqCst));
        let (tx, rx) = sync_channel(1);
        lock(&shared.acks).insert(id.clone(), tx);
        let asked = write_frame(
            &shared.out,
            &FromWorker::JobStart {
                id: id.clone(),
                command: command.to_string(),
            },
        );
        let answer = if asked {
            rx.recv_timeout(ACK_WAIT).ok()
        } else {
            None
        };
        lock(&shared.acks).remove(&id);
        match answer {
            Some(None) => {}
            Some(Some(refusal)) => return Err(refusal),
            None => {
                return Err(Refusal::new(
                    ErrorCode::ExecutionError,
                    "the server did not take the background job",
                )
                .rule("jobs"));
            }
        }
        lock(&shared.jobs).insert(id.clone(), stop);
        let e = Ender {
            shared: shared.clone(),
            id: id.clone(),
            done: AtomicBool::new(false),
        };
        Ok(BackgroundHooks {
            output: Arc::new(FrameSink::new(shared.clone(), &id)),
            on_start: Some(pid_hook(shared, &id)),
            finished: Box::new(move |b: safesh_core::session::BackgroundEnd| {
                e.end(b.exit_code, b.error, b.label, b.error_label);
            }),
        })
    }
}

/// Sends a job's end once (also when the core drops its hooks unused).
struct Ender {
    shared: Arc<Shared>,
    id: String,
    done: AtomicBool,
}

impl Ender {
    fn end(&self, exit_code: i32, error: Option<Refusal>, label: Label, error_label: Label) {
        if self.done.swap(true, Ordering::SeqCst) {
            return;
        }
        lock(&self.shared.jobs).remove(&self.id);
        write_frame(
            &self.shared.out,
            &FromWorker::JobEnd {
                id: self.id.clone(),
                exit_code,
                error,
                label,
                error_label,
            },
        );
    }
}

impl Drop for Ender {
    fn drop(&mut self) {
        self.end(
            126,
            Some(Refusal::new(
                ErrorCode::ExecutionError,
                "the background job could not start",
            )),
            Label::empty(),
            Label::empty(),
        );
    }
}
