//! The worker's side of sessionless requests (`worker.rs` is the server's):
//! a worker serves one owner's `exec` frames one after another, **each in a
//! fresh session** (nothing of one request — variables, functions, cwd,
//! environment, traps, known values — is seen by the next), until its input
//! ends.
//!
//! The owner is the connection of the first request (an MCP-over-HTTP
//! transport session, a JSON-RPC connection): the server hands a reused worker
//! only that owner's requests, and the worker checks it too — a request of
//! another owner ends the worker with an error result, never runs there. So
//! what a request leaves in the process (allocator state, a file in the
//! project) is reachable at most by later requests of the same owner, which
//! could reach it anyway.
//!
//! The first request runs in the session the worker made before it was asked
//! (the spare is ready ahead of time); later ones in sessions copied from a
//! template made once, after the first result is out (off the request's path).

use crate::exec::ExecParams;
use crate::pool::Pool;
use crate::settings::Settings;
use crate::shape::lock;
use crate::worker::{FromWorker, ToWorker};
use crate::worker_main::{Out, ParentChannel, write_frame};
use safesh_core::{ApprovalChannel, ErrorCode, Interrupter, Session};
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

/// One sessionless request as it arrived.
pub(crate) struct Request {
    pub(crate) params: Box<ExecParams>,
    pub(crate) ask: bool,
    pub(crate) conn: String,
    pub(crate) piped: Option<crate::piped::Piped>,
    pub(crate) pipe_stdout: Option<usize>,
}

/// What the input thread and the interpreter thread share.
struct Shared {
    out: Out,
    /// The running request's interrupter.
    current: Mutex<Option<Interrupter>>,
    /// The running request was cancelled (also before it started).
    cancelled: AtomicBool,
}

/// Serves sessionless requests: `first` in `session`, then every later `exec`
/// frame in a fresh session, until the end of input. Returns the exit status.
pub(crate) fn serve(
    session: Session,
    settings: Settings,
    first: Request,
    input: BufReader<File>,
    out: Out,
) -> i32 {
    let shared = Arc::new(Shared {
        out,
        current: Mutex::new(None),
        cancelled: AtomicBool::new(false),
    });
    let (work_tx, work_rx) = channel();
    let (answer_tx, answer_rx) = channel();
    let owner = first.conn.clone();
    if work_tx.send(first).is_err() {
        return 2;
    }
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
    let run = move || work(session, settings, &owner, &shared, &work_rx, &channel);
    // The interpreter runs on a thread with its stack (as in the server).
    match std::thread::Builder::new()
        .name("safesh-worker".into())
        .stack_size(crate::settings::SHELL_STACK)
        .spawn(run)
    {
        Ok(h) => h.join().unwrap_or(1),
        Err(_) => 2,
    }
}

/// The input thread: requests, cancellations and answers until the end of
/// input, which cancels the running request.
fn listen(
    input: BufReader<File>,
    shared: &Arc<Shared>,
    work: &Sender<Request>,
    answers: &Sender<(String, String)>,
) {
    for line in input.lines() {
        let Ok(line) = line else { break };
        match serde_json::from_str::<ToWorker>(&line) {
            Ok(ToWorker::Exec {
                params,
                ask,
                conn,
                piped,
                pipe_stdout,
            }) => {
                // In order: a cancel after this frame is this request's.
                shared.cancelled.store(false, Ordering::SeqCst);
                let r = Request {
                    params,
                    ask,
                    conn,
                    piped,
                    pipe_stdout,
                };
                if work.send(r).is_err() {
                    break;
                }
            }
            Ok(ToWorker::Cancel) => {
                shared.cancelled.store(true, Ordering::SeqCst);
                cancel_current(shared);
            }
            Ok(ToWorker::Answer { id, answer }) => {
                let _ = answers.send((id, answer));
            }
            _ => {}
        }
    }
    shared.cancelled.store(true, Ordering::SeqCst);
    cancel_current(shared);
}

/// Interrupts the running request ([`crate::worker_main::cancel_repeatedly`]).
fn cancel_current(shared: &Arc<Shared>) {
    crate::worker_main::cancel_repeatedly(shared, |s| (&s.cancelled, &s.current));
}

/// The interpreter thread: one request at a time, each in a fresh session.
fn work(
    first: Session,
    settings: Settings,
    owner: &str,
    shared: &Arc<Shared>,
    rx: &Receiver<Request>,
    channel: &Arc<dyn ApprovalChannel>,
) -> i32 {
    let settings = Arc::new(settings);
    // The request's owner, as in the server (crate::owner): its spill files go
    // to the connection's directory, and its commands may read only those.
    let scope = crate::owner::scope(owner, None);
    let mut next = Some(first);
    let mut pool: Option<Arc<Pool>> = None;
    for r in rx {
        if r.conn != owner {
            // The server never sends this; a worker is one owner's.
            let v = crate::worker::failed(
                &r.params,
                &settings,
                ErrorCode::ExecutionError,
                "a worker process serves one connection's requests only".into(),
                1,
            );
            write_frame(&shared.out, &FromWorker::Result { result: v });
            return 2;
        }
        let mut s = match next.take() {
            Some(mut s) => {
                s.set_state_scope(Some(crate::owner::scope_dir(&scope)));
                s
            }
            None => pool
                .get_or_insert_with(|| Pool::for_worker(settings.clone()))
                .take_for(&scope),
        };
        let mut p = r.params;
        p.conn = r.conn;
        p.piped = r.piped;
        p.pipe_stdout = r.pipe_stdout;
        s.set_approval_channel(r.ask.then(|| channel.clone()));
        let v = match p.script_text() {
            Ok(script) => {
                let on_start = |i: Interrupter| {
                    // A cancel that came before the script started still counts.
                    if shared.cancelled.load(Ordering::SeqCst) {
                        i.interrupt();
                    }
                    *lock(&shared.current) = Some(i);
                };
                crate::exec::run(&mut s, &script, &p, &settings, &on_start)
            }
            Err(e) => serde_json::json!({"error": e.to_json()}),
        };
        *lock(&shared.current) = None;
        if !write_frame(&shared.out, &FromWorker::Result { result: v }) {
            return 1;
        }
        s.set_approval_channel(None);
        // Off the request's path: the session's parts go back for the next one,
        // and the template is made before the next request comes.
        let pool = pool.get_or_insert_with(|| Pool::for_worker(settings.clone()));
        pool.give_back(s);
    }
    0
}
