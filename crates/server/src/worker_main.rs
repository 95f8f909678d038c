//! The worker's side of the isolation model (`safesh __worker`, see
//! `worker.rs`): the frames a worker is made for — sessionless requests of one
//! owner, each in a fresh session (`worker_fresh.rs`), or a long-lived shell
//! session or job (`worker_session.rs`) — until its input ends.
//!
//! Before anything runs, the protocol pipes are moved off fds 0 and 1 (to
//! private close-on-exec descriptors; 0 reads `/dev/null`, 1 goes to stderr),
//! so nothing the request does can write a frame or read the parent's; core
//! dumps are off, and with `[limits] memory_mb` the address space is bounded
//! (soft `RLIMIT_AS`: the sandbox gives each external program back the hard
//! limit and its own memory limit).

use crate::settings::Settings;
use crate::worker::{FromWorker, Question, ToWorker, answer_of};
use safesh_core::{ApprovalAnswer, ApprovalChannel, ApprovalQuestion};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Address space the worker needs beyond the memory limit itself: thread
/// stacks (64 MiB reserved per interpreter thread), allocator arenas, code.
pub const WORKER_HEADROOM_MB: u64 = 4096;

/// How often a wait for the human looks at the request's cancellation.
const POLL: Duration = Duration::from_millis(50);

/// Moves `fd` to a new close-on-exec descriptor and puts `with` in its place.
fn take_fd(fd: i32, with: i32) -> std::io::Result<OwnedFd> {
    // SAFETY: fcntl/dup2 on descriptors this process owns; the new fd is owned
    // by the returned OwnedFd and nothing else.
    unsafe {
        let new = libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3);
        if new < 0 || libc::dup2(with, fd) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(new))
    }
}

fn set_limit(resource: libc::__rlimit_resource_t, soft: u64) {
    let mut cur = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid pointers to an rlimit for this process.
    unsafe {
        if libc::getrlimit(resource, &raw mut cur) == 0 {
            cur.rlim_cur = soft.min(cur.rlim_max);
            libc::setrlimit(resource, &raw const cur);
        }
    }
}

/// The frames out, shared by the result and the approval questions.
pub(crate) type Out = Arc<Mutex<File>>;

/// Interrupts a worker's running request, repeatedly for a while (the session
/// clears an interrupt that lands just before its request starts), until the
/// request is no longer marked cancelled. `parts` gives the worker's
/// cancelled flag and the running request's interrupter.
pub(crate) fn cancel_repeatedly<S: Send + Sync + 'static>(
    shared: &Arc<S>,
    parts: fn(
        &S,
    ) -> (
        &std::sync::atomic::AtomicBool,
        &Mutex<Option<safesh_core::Interrupter>>,
    ),
) {
    let shared = shared.clone();
    let _ = std::thread::Builder::new()
        .name("safesh-worker-cancel".into())
        .spawn(move || {
            for _ in 0..50 {
                let (cancelled, current) = parts(&shared);
                if !cancelled.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                if let Some(i) = crate::shape::lock(current).as_ref() {
                    i.interrupt();
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
}

pub(crate) fn write_frame(out: &Out, frame: &FromWorker) -> bool {
    let Ok(mut line) = serde_json::to_vec(frame) else {
        return false;
    };
    line.push(b'\n');
    let mut f = out.lock().unwrap_or_else(|p| p.into_inner());
    f.write_all(&line).and_then(|()| f.flush()).is_ok()
}

/// Approvals asked through the parent (which has the channel to the human).
pub(crate) struct ParentChannel {
    pub(crate) out: Out,
    pub(crate) answers: Mutex<Receiver<(String, String)>>,
}

impl ApprovalChannel for ParentChannel {
    fn name(&self) -> &str {
        "approval prompt of the server"
    }

    fn ask(&self, question: &ApprovalQuestion, stop: &dyn Fn() -> bool) -> ApprovalAnswer {
        let q = Question::from_core(question);
        if !write_frame(&self.out, &FromWorker::Ask { question: q }) {
            return ApprovalAnswer::Unanswered;
        }
        let rx = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            if stop() {
                return ApprovalAnswer::Unanswered;
            }
            match rx.recv_timeout(POLL) {
                // An answer to an earlier question we stopped waiting for: skip it.
                Ok((id, a)) if id == question.id => return answer_of(&a),
                Ok(_) | Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return ApprovalAnswer::Unanswered,
            }
        }
    }
}

/// Serves the parent's requests on fds 0/1; returns the exit status.
pub fn serve(settings: Settings) -> i32 {
    // A session's worker saves its project again and again: journals pay.
    safesh_core::keep_checkpoint_journals();
    let fail = |msg: String| {
        let _ = writeln!(std::io::stderr(), "safesh: worker: {msg}");
        2
    };
    let (input, output) = match (take_fd(0, devnull()), take_fd(1, 2)) {
        (Ok(i), Ok(o)) => (File::from(i), File::from(o)),
        _ => return fail("cannot move the protocol pipes".into()),
    };
    set_limit(libc::RLIMIT_CORE, 0);
    if let Some(mb) = settings.policy.config().limits.memory_mb {
        let bytes = mb
            .saturating_add(WORKER_HEADROOM_MB)
            .saturating_mul(1 << 20);
        set_limit(libc::RLIMIT_AS, bytes);
    }
    // Ready before the request comes: the parent starts a spare ahead of time.
    let session = settings.new_session_on(None, &[], true);
    let out: Out = Arc::new(Mutex::new(output));
    let ready = FromWorker::Ready {
        temp_dir: session.temp_dir().map(std::path::Path::to_path_buf),
    };
    if !write_frame(&out, &ready) {
        return 0; // The server is gone.
    }
    let mut input = BufReader::new(input);
    let mut first = String::new();
    match input.read_line(&mut first) {
        // A spare the server no longer needs: end quietly (the session's temp
        // dir goes with it).
        Ok(0) => return 0,
        Ok(_) => {}
        Err(e) => return fail(format!("no request: {e}")),
    }
    match serde_json::from_str::<ToWorker>(&first) {
        // Sessionless requests of one owner, each in a fresh session (worker_fresh.rs).
        Ok(ToWorker::Exec {
            params,
            ask,
            conn,
            piped,
            pipe_stdout,
        }) => crate::worker_fresh::serve(
            session,
            settings,
            crate::worker_fresh::Request {
                params,
                ask,
                conn,
                piped,
                pipe_stdout,
            },
            input,
            out,
        ),
        // A long-lived worker: a shell session or a job (worker_session.rs).
        Ok(ToWorker::Open {
            cwd,
            env,
            conn,
            session: sid,
        }) => crate::worker_session::serve(
            session,
            settings,
            crate::worker_session::Place {
                cwd,
                env,
                conn,
                session: sid,
            },
            input,
            out,
        ),
        _ => fail("the first frame is not a request".into()),
    }
}

fn devnull() -> i32 {
    // SAFETY: open(2) of a constant path; the fd is leaked on purpose (it stays
    // fd 0's source for the life of the process).
    unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) }
}
